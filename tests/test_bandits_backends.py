"The decision-engine service behaves the same on SQLite and on a real redis-server started by the test."
import asyncio
import numpy as np
import pytest
from prometheus_client import CollectorRegistry



@pytest.fixture(params=["sqlite", "redis"])
def memory_settings(request, tmp_path):
    if request.param == "redis": return {"backend": "redis", "redis_url": request.getfixturevalue("redis_url"),
                                         "weights_namespace": f"t:{tmp_path.name}:w", "experience_collection_name": f"t:{tmp_path.name}:e"}
    return {"backend": "sqlite", "sqlite_path": str(tmp_path / "rl.sqlite3")}


def make(settings, **kw):
    from loomnb.bandits.service import ReinforcementLearningFactory
    return ReinforcementLearningFactory.create(settings, **kw)


def test_online_learning_and_metrics(memory_settings):
    from loomnb.bandits.algorithms import linear_problem
    reg = CollectorRegistry()
    async def run():
        rl = make({"default_algorithm": "linucb", "memory": memory_settings}, registry=reg, seed=0)
        await rl.connect(background=False)
        X, mean, R = linear_problem(800, dim=5, n_actions=4, seed=1)
        reg_t = []
        for t in range(len(X)):
            a, meta = await rl.get_action("m", X[t], [0, 1, 2, 3])
            assert 0 < meta["propensity"] <= 1 and "decision_id" in meta
            await rl.process_feedback("m", X[t], a, float(R[t, a]), X[t], propensity=meta["propensity"])
            reg_t.append(mean[t].max() - mean[t, a])
        n = await rl.memory.count_experiences("m")
        await rl.close()
        return np.array(reg_t), n
    regret, n = asyncio.run(run())
    assert regret[-300:].mean() < 0.3 * regret[:100].mean()
    assert n == 800
    assert reg.get_sample_value("ai_rl_model_reward_count", {"model_id": "m"}) == 800
    assert reg.get_sample_value("rl_operations_total", {"algorithm": "linucb", "operation": "update", "status": "success"}) == 800


def test_batch_gate_versions_rollback(memory_settings):
    from loomnb.bandits.algorithms import linear_problem
    async def run():
        rl = make({"default_algorithm": "contextual_bandit", "trainer_type": "batch",
                   "algorithm_parameters": {"learning_rate": 0.05}, "promotion": {"metric": "snips", "margin": 0.05},
                   "memory": {**memory_settings, "max_weight_versions": 2}}, registry=CollectorRegistry(), seed=0)
        await rl.connect(background=False)
        X, mean, R = linear_problem(900, dim=5, n_actions=4, seed=2)
        rng = np.random.default_rng(0)
        for t in range(900):
            a = int(rng.integers(4))
            await rl.process_feedback("b", X[t], a, float(R[t, a]), propensity=0.25, available_actions=[0, 1, 2, 3])
        assert await rl.memory.load_weights("b") is None
        for _ in range(3): assert await rl.trigger_offline_training("b", 300)
        assert [v.version for v in await rl.releases.list_versions("b")] == ["v3", "v2"]  # retention 2
        rl.algorithm.params = rl.algorithm.params.merge(learning_rate=0.95)
        assert not await rl.trigger_offline_training("b", 600)
        assert await rl.releases.current("b") == "v3"
        assert await rl.releases.rollback("b") == "v2"
        v2 = await rl.memory.load_weight_version("b", "v2")
        np.testing.assert_array_equal((await rl.memory.load_weights("b"))["weights"], v2["weights"])
        await rl.close()
    asyncio.run(run())


def corrupt(rl, model_id):
    "Flip one byte of the stored blob behind the memory's back."
    m = rl.memory
    if hasattr(m, "_c"):
        blob = m._c.execute("SELECT blob FROM weights WHERE model_id = ?", (model_id,)).fetchone()[0]
        m._c.execute("UPDATE weights SET blob = ?, rev = rev + 1 WHERE model_id = ?", (blob[:60] + bytes([blob[60] ^ 1]) + blob[61:], model_id))
    else:
        import redis
        c = redis.Redis.from_url(m.url); k = m._k(model_id, "w"); blob = c.get(k)
        c.set(k, blob[:60] + bytes([blob[60] ^ 1]) + blob[61:]); c.incr(m._k(model_id, "rev")); c.close()


def test_corrupt_blob_never_served(memory_settings):
    from loomnb.bandits.core import WeightSchemaError
    reg = CollectorRegistry()
    async def run():
        rl = make({"default_algorithm": "linucb", "memory": memory_settings}, registry=reg, seed=0)
        await rl.connect(background=False)
        for _ in range(5): await rl.process_feedback("c", [1.0, 0.5], 1, 1.0)
        corrupt(rl, "c")
        with pytest.raises(WeightSchemaError): await rl.get_action("c", [1.0, 0.5], [0, 1])      # no snapshot: refuse
        with pytest.raises(WeightSchemaError): await rl.process_feedback("c", [1.0, 0.5], 1, 1.0)  # never trained on
        assert reg.get_sample_value("rl_operations_total", {"algorithm": "linucb", "operation": "predict", "status": "failure"}) == 1
        # with a good snapshot the service falls back to it
        await rl.memory.save_weights("c", rl.algorithm.update_sync({}, [1.0, 0.5], 1, 1.0)[0])
        v = await rl.memory.snapshot_weights("c", await rl.memory.load_weights("c"), None)
        corrupt(rl, "c")
        a, _ = await rl.get_action("c", [1.0, 0.5], [0, 1])
        assert a in (0, 1)
        assert reg.get_sample_value("rl_operations_total", {"algorithm": "linucb", "operation": "predict", "status": "fallback"}) == 1
        assert await rl.releases.rollback("c", v) == v
        await rl.process_feedback("c", [1.0, 0.5], 1, 1.0)
        # a blob from another algorithm (valid checksum, wrong schema) is rejected as well
        from loomnb.bandits.algorithms import EpsilonGreedyBandit
        await rl.memory.save_weights("d", EpsilonGreedyBandit().update_sync({}, [1.0], 0, 1.0)[0])
        rl.memory._cache.clear()
        with pytest.raises(WeightSchemaError): await rl.get_action("d", [1.0, 0.5], [0, 1])
        await rl.close()
    asyncio.run(run())


@pytest.mark.exclusive   # times its fail-fast path: alone under two pytest workers
def test_storage_outage_opens_circuit(tmp_path):
    "A dead Redis: retries with backoff, then the breaker opens and calls fail fast."
    from loomnb.bandits.service import CircuitOpenError
    import socket, time
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]  # nothing listens here
    async def run():
        rl = make({"memory": {"backend": "redis", "redis_url": f"redis://127.0.0.1:{port}/0"},
                   "resilience": {"retries": 2, "base_delay": 0.001, "failure_threshold": 2, "reset_timeout": 60}},
                  registry=CollectorRegistry())
        for _ in range(2):
            with pytest.raises(Exception) as e: await rl.connect(background=False)
            assert not isinstance(e.value, CircuitOpenError)
        t0 = time.perf_counter()
        with pytest.raises(CircuitOpenError): await rl.connect(background=False)
        assert time.perf_counter() - t0 < 0.01
        assert rl.resilience.retries_done == 4
    asyncio.run(run())


def test_redis_lock_provider_excludes(redis_url):
    "The distributed lock serialises holders of one key and the online trainer runs under it."
    import redis.asyncio as aioredis
    from loomnb.bandits.service import RedisLockProvider
    async def run():
        client = aioredis.Redis.from_url(redis_url)
        locks = RedisLockProvider(client, ttl=5.0)
        inside, peak = 0, 0
        async def worker():
            nonlocal inside, peak
            for _ in range(20):
                async with locks.lock("m"):
                    inside += 1; peak = max(peak, inside); await asyncio.sleep(0); inside -= 1
        await asyncio.gather(*(worker() for _ in range(4)))
        assert peak == 1 and not await client.exists("loomnb:ai:rl:lock:m")  # released
        rl = make({"default_algorithm": "epsilon_greedy", "memory": {"backend": "redis", "redis_url": redis_url,
                   "weights_namespace": "t:lock:w", "experience_collection_name": "t:lock:e"}},
                  lock_provider=locks, registry=CollectorRegistry())
        await rl.connect(background=False)
        await asyncio.gather(*(rl.process_feedback("m", [1.0], i % 2, 1.0) for i in range(50)))
        assert int((await rl.memory.load_weights("m"))["counts"].sum()) == 50
        await rl.close(); await client.aclose()
    asyncio.run(run())
