"The real redis-server is killed mid-stream and restarted: the KV breaker opens, calls fail fast, it closes after recovery, and every acknowledged feedback survives."
import asyncio, time
import numpy as np
import pytest
import redis.exceptions as rex
from conftest import need_binary
from prometheus_client import CollectorRegistry
pytestmark = pytest.mark.exclusive   # runs alone under two pytest workers (conftest.py)


@pytest.mark.parametrize("vector", [False, True])
def test_redis_outage_mid_stream(vector, tmp_path):
    need_binary("redis-server")
    if vector: pytest.importorskip("qdrant_client")
    from loomnb.bandits.redis_memory import RedisServer
    from loomnb.bandits.resilience import CircuitOpenError
    from loomnb.bandits.service import ReinforcementLearningFactory
    srv = RedisServer(durable=True).start()
    ms = {"backend": "redis", "redis_url": srv.url, "kv_store_connection_name": "main_redis"}
    if vector: ms.update(vector_backend="qdrant", qdrant_path=str(tmp_path / "q"))
    rng = np.random.default_rng(0)
    async def run():
        rl = ReinforcementLearningFactory.create({"default_algorithm": "linucb", "memory": ms, "resilience": {
            "retries": 2, "base_delay": 0.01, "max_delay": 0.05, "failure_threshold": 3, "reset_timeout": 0.3}},
            registry=CollectorRegistry(), seed=0)
        await rl.connect(background=False)
        kv = rl.memory.kv_resilience
        acked, failed, fast, states, t = 0, 0, [], [], 0
        while t < 400 or kv.breaker.state != "closed":
            if t == 120: srv.pause()    # the server dies (SIGKILL) between two feedbacks
            if t == 220: srv.resume()   # and comes back with its append-only file
            x = rng.normal(size=3); t += 1
            t0 = time.perf_counter()
            try:
                a, _ = await rl.get_action("m", x, [0, 1, 2])
                await rl.process_feedback("m", x, a, float(x[a] > 0), x)
                acked += 1
            except CircuitOpenError as e:
                fast.append(time.perf_counter() - t0); assert "KV store 'main_redis' circuit open" in str(e)
            except (ConnectionError, OSError, rex.ConnectionError, rex.TimeoutError): failed += 1
            states.append(kv.breaker.state)
            if kv.breaker.state != "closed" or 120 <= t < 220: await asyncio.sleep(0.005)  # clients keep arriving, paced
            assert t < 3000, (acked, failed, len(fast), states[-5:])
        w = await rl.memory.load_weights("m"); n_exp = await rl.memory.count_experiences("m")
        await rl.close()
        return acked, failed, fast, states, int(w["counts"].sum()), n_exp
    try: acked, failed, fast, states, n_w, n_exp = asyncio.run(run())
    finally: srv.stop()
    assert 1 <= failed <= 6, failed            # retried with backoff, then the breaker opened
    assert len(fast) >= 20 and max(fast) < 0.01, (len(fast), max(fast) if fast else None)  # failing fast while open
    assert "open" in states and states[-1] == "closed"   # and closed again after recovery
    assert acked >= 200                         # learning resumed after the restart
    assert n_w == acked and n_exp == acked      # no acknowledged feedback lost (and none counted twice)
