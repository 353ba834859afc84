"Importance weights through the decision service: the logged propensity's 1/(K p) reaches the update of an algorithm that takes one (online, group and batched commits, delayed rewards, offline replay from stored experiences); algorithms without it (LinUCB, Thompson) learn exactly as without a propensity."
import asyncio
import numpy as np
import pytest
from prometheus_client import CollectorRegistry
from loomnb.bandits.algorithms import make_algorithm
from loomnb.bandits.service import ReinforcementLearningFactory

ACTS = [0, 1, 2, 3]
X = [np.array([1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0])]


def service(tmp_path, algo, **settings):
    s = {"default_algorithm": algo, "memory": {"sqlite_path": str(tmp_path / f"{algo}.sqlite3")}, **settings}
    return ReinforcementLearningFactory.create(s, registry=CollectorRegistry(), seed=0)


def replay(algo_name, steps, weighted):
    "The weights of `steps` (x, a, r, propensity) applied one by one, with importance weights 1/(K p) when `weighted`."
    algo, w = make_algorithm(algo_name), {}
    for x, a, r, p in steps:
        kw = {"importance_weight": 1.0 / (len(ACTS) * p)} if weighted else {}
        w, _ = algo.update_sync(w, x, a, r, **kw)
    return w


def close(w, ref, keys):
    for k in keys: np.testing.assert_allclose(w[k], ref[k], rtol=0, atol=1e-12, err_msg=k)


STEPS = [(X[0], 1, 1.0, 0.1), (X[1], 1, 0.0, 0.7), (X[2], 2, 1.0, 0.05), (X[0], 1, 1.0, 0.4), (X[1], 3, 0.0, 0.25)]
OFF = (X[2], 2, 0.5, 0.05)
ADA = ("weights", "sq_grad", "norm", "norm_sums", "reward_bounds")


@pytest.mark.parametrize("mode", ["single", "group", "batched"])
def test_online_updates_carry_the_weight(tmp_path, mode):
    extra = {"commit_every": 3} if mode == "batched" else {"group_commit": mode == "group"}
    async def run():
        rl = service(tmp_path, "adaptive_contextual_bandit", **extra); await rl.connect(background=False)
        if mode == "group":  # concurrent feedbacks share writes; applied in arrival order
            await asyncio.gather(*(rl.process_feedback("m", x, a, r, propensity=p, available_actions=ACTS) for x, a, r, p in STEPS))
        else:
            for x, a, r, p in STEPS: await rl.process_feedback("m", x, a, r, propensity=p, available_actions=ACTS)
        await rl.process_feedback("m", X[2], 0, 1.0, propensity=0.5)  # no offered actions logged: weight 1
        await rl.close(); await rl.memory.connect(); w = await rl.memory.load_weights("m"); await rl.memory.close()
        return w
    w = asyncio.run(run())
    ref = replay("adaptive_contextual_bandit", STEPS, True)
    ref, _ = make_algorithm("adaptive_contextual_bandit").update_sync(ref, X[2], 0, 1.0)
    close(w, ref, ADA)
    assert not np.allclose(w["weights"], replay("adaptive_contextual_bandit", STEPS + [(X[2], 0, 1.0, 0.5)], False)["weights"])


def test_delayed_reward_and_offline_replay_carry_the_weight(tmp_path):
    async def run():
        rl = service(tmp_path, "adaptive_contextual_bandit", reward_wait_seconds=30.0)  # pending in the memory backend
        await rl.connect(background=False)
        a, meta = await rl.get_action("m", X[0], ACTS)
        assert await rl.record_reward(meta["decision_id"], 1.0)  # joined by id: the logged propensity and actions travel with it
        w = await rl.memory.load_weights("m"); await rl.close()
        rb = service(tmp_path / "b", "adaptive_contextual_bandit", trainer_type="batch", promotion={"enabled": False})
        (tmp_path / "b").mkdir(); await rb.connect(background=False)
        x, a2, r, p = OFF  # one stored experience: the sampled batch (drawn with replacement) is that one
        await rb.process_feedback("b", x, a2, r, propensity=p, available_actions=ACTS)
        assert await rb.trigger_offline_training("b", batch_size=1)
        wb = await rb.memory.load_weights("b")
        with pytest.raises(ValueError, match="`propensity`"):  # a zero propensity cannot weight an update: refused before storing
            await rb.process_feedback("b", X[0], 1, 1.0, propensity=0.0, available_actions=ACTS)
        n = len({e.id for e in await rb.memory.sample_experiences("b", 50)}); await rb.close()
        return a, meta, w, wb, n
    a, meta, w, wb, n = asyncio.run(run())
    close(w, replay("adaptive_contextual_bandit", [(X[0], a, 1.0, meta["propensity"])], True), ADA)
    assert n == 1  # the refused feedback was not stored
    close(wb, replay("adaptive_contextual_bandit", [OFF], True), ADA)  # replayed with the stored propensity's weight 1/(4 * 0.05)
    assert not np.allclose(wb["weights"], replay("adaptive_contextual_bandit", [OFF], False)["weights"])


@pytest.mark.parametrize("algo", ["linucb", "linear_thompson"])
def test_unweighted_algorithms_unchanged(tmp_path, algo):
    async def run(with_propensity):
        rl = service(tmp_path / str(with_propensity), algo); (tmp_path / str(with_propensity)).mkdir(); await rl.connect(background=False)
        for x, a, r, p in STEPS:
            kw = dict(propensity=p, available_actions=ACTS) if with_propensity else {}
            await rl.process_feedback("m", x, a, r, **kw)
        w = await rl.memory.load_weights("m"); await rl.close(); return w
    w1, w0 = asyncio.run(run(True)), asyncio.run(run(False))
    for k in ("A_inv", "b", "theta", "counts"): np.testing.assert_array_equal(w1[k], w0[k], err_msg=k)
    assert not getattr(make_algorithm(algo), "importance_weighted", False)


def test_drift_wrapper_forwards_the_weight():
    "The drift option's wrapper takes the weight when its base does, and stays unweighted around LinUCB."
    from loomnb.bandits.trainers import update_of
    a = make_algorithm("adaptive_contextual_bandit", drift_detector="page_hinkley")
    u = update_of(a, X[0], 1, 1.0, None, 0.1, ACTS)
    assert type(a).__name__ == "DriftResetBandit" and u[4] == 2.5
    w, _ = a.update_many_sync({}, [u])
    close(w, replay("adaptive_contextual_bandit", [(X[0], 1, 1.0, 0.1)], True), ADA)
    assert len(update_of(make_algorithm("linucb", drift_detector="page_hinkley"), X[0], 1, 1.0, None, 0.1, ACTS)) == 4
