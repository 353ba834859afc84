"The decision service with the drift option: the detector rides in the stored weights of each backend, restarts the model after a change, and never without one."
import asyncio
import numpy as np
import pytest
from prometheus_client import CollectorRegistry


@pytest.fixture(params=["sqlite", "redis"])
def memory(request, tmp_path):
    if request.param == "sqlite": return {"sqlite_path": str(tmp_path / "m.sqlite3")}
    return {"backend": "redis", "redis_url": request.getfixturevalue("redis_url")}


def serve(memory, model_id, change, n=900, seed=0):
    "Arm 0 pays until `change`, then arm 1; feedback through the service. Returns the rewards and the stored weights."
    from loomnb.bandits.service import ReinforcementLearningFactory
    settings = {"default_algorithm": "linucb", "memory": memory,
                "algorithm_parameters": {"drift_detector": "page_hinkley", "drift_min_samples": 50}}
    async def run():
        rl = ReinforcementLearningFactory.create(settings, registry=CollectorRegistry(), seed=seed)
        await rl.connect(background=False); rng = np.random.default_rng(seed); got = []
        for t in range(n):
            a, meta = await rl.get_action(model_id, [1.0], [0, 1])
            r = float(rng.random() < (0.9 if a == (0 if t < change else 1) else 0.1)); got.append(r)
            await rl.process_feedback(model_id, [1.0], a, r, propensity=meta["propensity"])
        w = await rl.memory.load_weights(model_id); await rl.close()
        return np.array(got), w, rl.algorithm
    return asyncio.run(run())


def test_drift_option_through_the_service(memory):
    got, w, algo = serve(memory, "news", change=400)
    assert type(algo).__name__ == "DriftResetBandit" and w["drift"].shape == (8,)
    _, resets = algo.detector(w)
    assert resets >= 1 and got[600:].mean() > 0.8, (resets, got[600:].mean())  # restarted, and back on the paying arm
    _, w, algo = serve(memory, "calm", change=10**9)
    assert algo.detector(w)[1] == 0  # a stationary stream: no restart
