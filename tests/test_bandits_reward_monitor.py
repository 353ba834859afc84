"The post-deploy reward monitor rolls a bad promotion back within 20 rewards in 20/20 seeded runs, and never rolls back an equally good one."
import asyncio, warnings
import numpy as np
import pytest
from prometheus_client import CollectorRegistry
from loomnb.bandits.service import ReinforcementLearningFactory
from loomnb.bandits.algorithms import linear_problem, make_algorithm

from loomnb.bandits.service import ReinforcementLearningFactory
from loomnb.bandits.algorithms import linear_problem, make_algorithm

async def monitor_run(seed: int, bad: bool = True, after: int = 300):
    "Promote a bad (or an equally good) version after a baseline; when does the monitor roll it back?"
    rl = ReinforcementLearningFactory.create({"default_algorithm": "linucb", "trainer_type": "batch", "promotion": {"enabled": False},
                                             "monitor": {"enabled": True}, "memory": {"sqlite_path": ":memory:"}},
                                            registry=CollectorRegistry(), seed=seed)
    await rl.connect(background=False)
    X, mean, R = linear_problem(300 + 200 + after + 100, dim=4, n_actions=4, seed=seed)
    acts = np.random.default_rng(seed).integers(0, 4, 300)
    for t in range(300): await rl.process_feedback("m", X[t], int(acts[t]), float(R[t, acts[t]]))
    assert await rl.trigger_offline_training("m", 300)
    v1 = await rl.releases.current("m"); w1 = await rl.memory.load_weights("m")
    async def serve(t):
        a, _ = await rl.get_action("m", X[t], [0, 1, 2, 3]); await rl.process_feedback("m", X[t], a, float(R[t, a])); return float(R[t, a])
    for t in range(300, 500): await serve(t)
    algo = make_algorithm("linucb", {"seed": seed}); w = {}
    for t in range(300): w, _ = algo.update_sync(w, X[t], int(acts[t]), -float(R[t, acts[t]]), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        await rl.releases.promote("m", w if bad else w1)
        at, t = None, 500
        while t < 500 + after and at is None:
            await serve(t); t += 1
            if rl.monitor.rollbacks: at = t - 500
        post = [await serve(u) for u in range(t, t + 100)] if at is not None else []
    out = at, await rl.releases.current("m"), float(np.mean(post)) if post else None, v1, rl.monitor.rollbacks
    await rl.close(); return out


@pytest.mark.parametrize("seed", range(20))
def test_bad_promotion_rolled_back(seed):
    at, cur, post, v1, recs = asyncio.run(monitor_run(seed))
    assert at is not None and at <= 20, at            # the stated bound: within 20 rewards of the promotion
    assert cur == v1 and len(recs) == 1 and recs[0].to_version == v1 and "CUSUM alarm" in recs[0].reason
    ok_at, _, _, _, ok_recs = asyncio.run(monitor_run(seed, bad=False))
    assert ok_at is None and not ok_recs               # an equally good promotion is kept (300 rewards watched)


def test_rollback_metric_and_trace():
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from loomnb.bandits.service import ReinforcementLearningFactory
    exp = InMemorySpanExporter(); prov = TracerProvider(); prov.add_span_processor(SimpleSpanProcessor(exp))
    reg = CollectorRegistry()
    async def run():
        rl = ReinforcementLearningFactory.create({"trainer_type": "batch", "promotion": {"enabled": False},
                                                 "monitor": {"enabled": True, "min_baseline_events": 20}, "memory": {"sqlite_path": ":memory:"}},
                                                registry=reg, seed=0, tracer_provider=prov)
        await rl.connect(background=False)
        for i in range(40): await rl.process_feedback("m", [1.0], i % 2, 1.0 if i % 2 == 0 else 0.0)
        await rl.trigger_offline_training("m", 40)   # v1
        for _ in range(40): await rl.process_feedback("m", [1.0], 0, 1.0 if np.random.rand() < 0.9 else 0.0)
        await rl.releases.promote("m", await rl.memory.load_weights("m"))   # v2
        with pytest.warns(RuntimeWarning, match="rolled back v2 -> v1"):
            for _ in range(60): await rl.process_feedback("m", [1.0], 0, 0.0)
        cur = await rl.releases.current("m"); await rl.close(); return cur
    assert asyncio.run(run()) == "v1"
    assert reg.get_sample_value("ai_rl_model_auto_rollbacks_total", {"model_id": "m", "reason": "reward_drop"}) == 1
    rb = [s for s in exp.get_finished_spans() if s.name == "rl.rollback"]
    assert len(rb) == 1 and rb[0].attributes["rl.reason"] == "reward_drop" and rb[0].attributes["rl.version"] == "v2"
