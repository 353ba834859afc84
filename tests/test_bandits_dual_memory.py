"One protocol suite for every memory combination: SQLite alone, Redis alone, Redis + Qdrant, SQLite + Qdrant."
import asyncio, time
import numpy as np
import pytest
from prometheus_client import CollectorRegistry

COMBOS = ["sqlite", "redis", "redis+qdrant", "sqlite+qdrant"]



@pytest.fixture(params=COMBOS)
def combo(request, tmp_path):
    "Memory settings of one combination (Qdrant in local mode under tmp_path)."
    kv, _, vec = request.param.partition("+")
    if vec: pytest.importorskip("qdrant_client")
    ms = {"backend": kv, "sqlite_path": str(tmp_path / "rl.sqlite3")}
    if kv == "redis": ms.update(redis_url=request.getfixturevalue("redis_url"), weights_namespace=f"t:{tmp_path.name}:w",
                                experience_collection_name=f"t_{tmp_path.name}_e")
    if vec: ms.update(vector_backend="qdrant", qdrant_path=str(tmp_path / "qdrant"))
    return request.param, ms


def make(settings, **kw):
    from loomnb.bandits.service import ReinforcementLearningFactory
    return ReinforcementLearningFactory.create(settings, registry=CollectorRegistry(), **kw)


def test_weights_versions_rollback(combo):
    name, ms = combo
    from loomnb.bandits.algorithms import make_algorithm
    algo = make_algorithm("linucb", {"seed": 0})
    async def run():
        rl = make({"memory": ms}, seed=0); m = rl.memory
        await rl.connect(background=False)
        assert (m.vector is not None) == ("qdrant" in name)
        assert await m.load_weights("w") is None
        w1 = algo.update_sync({}, [1.0, 0.0], 0, 1.0, None)[0]
        await m.save_weights("w", w1); v1 = await m.snapshot_weights("w", w1, {"n": 1})
        w2 = algo.update_sync(w1, [0.0, 1.0], 1, 0.0, None)[0]
        out = await m.atomic_update("w", lambda w: (algo.update_sync(w, [0.0, 1.0], 1, 0.0, None)[0], "ok"),
                                    experience=dict(state_vector=[0.0, 1.0], action_index=1, reward=0.0))
        assert out == "ok"
        np.testing.assert_array_equal((await m.load_weights("w"))["theta"], w2["theta"])
        v2 = await m.snapshot_weights("w", w2, None)
        assert [v.version for v in await m.list_weight_versions("w")] == [v2, v1] and await m.get_current_version("w") == v2
        assert await m.rollback_weights("w") == v1
        np.testing.assert_array_equal((await m.load_weights("w"))["theta"], w1["theta"])
        await m.save_norm_stats("w", {"count": 3}); assert (await m.load_norm_stats("w"))["count"] == 3
        assert await m.count_experiences("w") == 1
        await rl.close()
    asyncio.run(run())


def test_experiences_uniform_prioritized_age(combo):
    name, ms = combo
    async def run():
        rl = make({"memory": {**ms, "max_experience_age_seconds": 600}}, seed=0); m = rl.memory
        await rl.connect(background=False)
        for i in range(30): await m.store_experience("e", [float(i), 1.0], i % 3, float(i), [float(i), 0.0], propensity=0.25)
        await m.store_experience("e", [99.0, 1.0], 0, 0.0, timestamp=time.time() - 3600)  # stale: never sampled
        await m.store_experience("other", [50.0, 1.0], 0, 0.0)
        assert await m.count_experiences("e") == 31
        b = await m.sample_experiences("e", 600)
        assert len(b) == 600 and all(e.state_vector[0] < 30 for e in b)
        assert len({e.id for e in b}) == 30  # uniform i.i.d. reaches every live experience
        e0 = b[0]; assert e0.reward == e0.state_vector[0] and e0.propensity == 0.25 and e0.next_state_vector[1] == 0.0
        await m.update_priorities("e", [(e.id, 100.0 if e.state_vector[0] == 7 else 0.0) for e in b])
        m.settings.sampling_mode = "prioritized"  # the same store, read in prioritized mode
        if m.vector is not None: m.vector.settings.sampling_mode = "prioritized"
        share = np.mean([e.state_vector[0] == 7 for e in await m.sample_experiences("e", 400)])
        assert share > 0.5, share
        await rl.close()
    asyncio.run(run())


def test_service_online_and_batch(combo):
    name, ms = combo
    from loomnb.bandits.algorithms import linear_problem
    async def run():
        rl = make({"default_algorithm": "linucb", "memory": ms}, seed=0)
        await rl.connect(background=False)
        X, mean, R = linear_problem(300, dim=4, n_actions=3, seed=1)
        reg = []
        for t in range(len(X)):
            a, meta = await rl.get_action("m", X[t], [0, 1, 2])
            await rl.process_feedback("m", X[t], a, float(R[t, a]), X[t], propensity=meta["propensity"])
            reg.append(mean[t].max() - mean[t, a])
        assert await rl.memory.count_experiences("m") == 300
        await rl.close()
        rb = make({"default_algorithm": "linucb", "trainer_type": "batch", "memory": ms, "promotion": {"enabled": False}}, seed=0)
        await rb.connect(background=False)
        for t in range(100): await rb.process_feedback("b", X[t], t % 3, float(R[t, t % 3]), X[t])
        assert await rb.memory.load_weights("b") is None  # batch: stored only
        assert await rb.trigger_offline_training("b", 64) and await rb.memory.get_current_version("b") == "v1"
        await rb.close()
        return np.array(reg)
    reg = asyncio.run(run())
    assert reg[-100:].mean() < 0.5 * reg[:50].mean()


@pytest.mark.parametrize("kv", ["sqlite", "redis"])
def test_vector_bad_input_and_similarity(kv, tmp_path, request):
    "A state of the wrong length and a similarity query of the wrong dimension: clear errors, no weights changed."
    pytest.importorskip("qdrant_client")
    ms = {"backend": kv, "sqlite_path": str(tmp_path / "rl.sqlite3"), "vector_backend": "qdrant",
          "qdrant_path": str(tmp_path / "q"), "experience_collection_name": "exps", "sampling_mode": "similarity"}
    if kv == "redis": ms.update(redis_url=request.getfixturevalue("redis_url"), weights_namespace=f"t:{tmp_path.name}:w")
    async def run():
        rl = make({"default_algorithm": "linucb", "memory": ms}, seed=0)
        await rl.connect(background=False)
        for i in range(20): await rl.process_feedback("m", [1.0, i / 10], i % 2, 1.0, [1.0, i / 10])
        before = await rl.memory.load_weights("m")
        with pytest.raises(ValueError, match="holds 2-dimensional states"): await rl.process_feedback("m", [1.0, 0.5, 0.2], 0, 1.0)
        with pytest.raises(ValueError, match="holds 2-dimensional states"): await rl.memory.sample_experiences("m", 5, [1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="needs `query_state`"): await rl.memory.sample_experiences("m", 5)
        after = await rl.memory.load_weights("m")
        for k, v in before.items():
            if isinstance(v, np.ndarray): np.testing.assert_array_equal(v, after[k])
        assert await rl.memory.count_experiences("m") == 20
        near = await rl.memory.sample_experiences("m", 3, [1.0, 0.72])
        assert [round(e.state_vector[1], 2) for e in near] == [0.7, 0.8, 0.6]
        await rl.close()
    asyncio.run(run())


def test_unreachable_vector_store_names_connection(tmp_path):
    pytest.importorskip("qdrant_client")
    import socket
    from loomnb.bandits.vector_memory import VectorStoreUnavailable
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    async def run():
        rl = make({"memory": {"sqlite_path": str(tmp_path / "a.sqlite3"), "vector_store_connection_name": "prod_qdrant"},
                   "resilience": {"retries": 1, "base_delay": 0.001}}, connection_manager={"prod_qdrant": f"http://127.0.0.1:{port}"})
        with pytest.raises(VectorStoreUnavailable, match=f"'prod_qdrant' \\(http://127.0.0.1:{port}\\) is unreachable"):
            await rl.connect(background=False)
        assert rl.memory.vector_resilience.retries_done == 1 and rl.memory.kv_resilience.breaker.state == "closed"
        await rl.memory.kv.close()
        # the server URL of the settings (`qdrant_url`, server mode), under the default connection name
        rl = make({"memory": {"sqlite_path": str(tmp_path / "b.sqlite3"), "vector_backend": "qdrant", "qdrant_url": f"http://127.0.0.1:{port}"},
                   "resilience": {"retries": 0}})
        with pytest.raises(VectorStoreUnavailable, match=f"vector store connection 'default' \\(http://127.0.0.1:{port}\\) is unreachable"):
            await rl.connect(background=False)
        await rl.memory.kv.close()
    asyncio.run(run())


def test_batch_refuses_non_finite_state(combo):
    "The batch trainer stores nothing for a nan context, on every combination."
    name, ms = combo
    async def run():
        rl = make({"trainer_type": "batch", "memory": ms}, seed=0)
        await rl.connect(background=False)
        await rl.process_feedback("n", [1.0, 2.0], 0, 1.0)
        with pytest.raises(ValueError, match="state_vector"): await rl.process_feedback("n", [1.0, float("nan")], 0, 1.0)
        with pytest.raises(ValueError, match="next_state_vector"): await rl.process_feedback("n", [1.0, 2.0], 0, 1.0, [float("inf"), 0.0])
        n = await rl.memory.count_experiences("n"); await rl.close(); return n
    assert asyncio.run(run()) == 1


@pytest.mark.parametrize("bare_client", [False, True])
def test_factory_takes_built_stores(tmp_path, bare_client):
    "create(settings, lock_provider=..., kv_store=..., vector_store=...) as the document writes it: weights in the given KV store, experiences in the given vector store (a store, or a bare AsyncQdrantClient)."
    pytest.importorskip("qdrant_client")
    from qdrant_client import AsyncQdrantClient
    from loomnb.bandits.sqlite_memory import SQLiteRLMemory
    from loomnb.bandits.vector_memory import QdrantExperienceStore
    from loomnb.bandits.trainers import AsyncioLockProvider
    ms = {"experience_collection_name": "exps", "vector_store_connection_name": "vec"}
    async def run():
        kv, locks = SQLiteRLMemory(ms, path=str(tmp_path / "kv.sqlite3")), AsyncioLockProvider()
        vec = AsyncQdrantClient(path=str(tmp_path / "q")) if bare_client else QdrantExperienceStore({**ms, "qdrant_path": str(tmp_path / "q")})
        rl = make({"default_algorithm": "linucb", "memory": ms}, lock_provider=locks, kv_store=kv, vector_store=vec, seed=0)
        assert rl.memory.kv is kv and rl.trainer.lock_provider is locks and rl.memory.vector.collection == "exps"
        await rl.connect(background=False)
        for i in range(5): await rl.process_feedback("m", [1.0, i / 5], i % 2, 1.0)
        n_vec, n_kv = await rl.memory.vector.count_experiences("m"), await kv.count_experiences("m")
        w = await kv.load_weights("m"); await rl.close()
        return n_vec, n_kv, int(w["counts"].sum())
    assert asyncio.run(run()) == (5, 0, 5)
