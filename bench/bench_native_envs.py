"""Microseconds per `step()` of every built-in native env at N = 1 and N = 256 (random valid actions, default `copy=True`),
min of `--repeats` timed passes per env, on the process CPU clock (steadier when the machine is shared).

    python bench/bench_native_envs.py                        # all native envs
    python bench/bench_native_envs.py CartPole-v1 Target1D-v0 --repeats 9

For an A/B of two checkouts, alternate runs with PYTHONPATH set to each and take the minimum per row.
"""
from __future__ import annotations
import argparse, json, time, warnings
import numpy as np

warnings.filterwarnings("ignore")
IDS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1", "MountainCarContinuous-v0", "Identity-v0", "Target1D-v0"]


def bench(ids, sizes=(1, 256), repeats=7, seed=0):
    "{'<id> N=<n>': min CPU microseconds per step()}."
    from loomnb.envs.registry import make
    out = {}
    for eid in ids:
        for n in sizes:
            env = make(eid, num_envs=n, seed=seed); env.reset(); sp = env.single_action_space
            rng = np.random.default_rng(seed)
            steps = 20000 if n == 1 else max(200, 512000 // n)
            acts = [rng.integers(0, sp.n, n) if hasattr(sp, "n") else rng.uniform(-1, 1, (n, *sp.shape)).astype(np.float32)
                    for _ in range(steps)]
            for a in acts[:500]: env.step(a)   # warm up
            best = float("inf")
            for _ in range(repeats):
                t0 = time.process_time()
                for a in acts: env.step(a)
                best = min(best, (time.process_time() - t0) / steps * 1e6)
            out[f"{eid} N={n}"] = best
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ids", nargs="*", default=IDS)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    a = ap.parse_args()
    res = bench(a.ids, repeats=a.repeats)
    if a.json: print(json.dumps(res))
    else:
        print("| env, N | us per step() (CPU, min of %d) |\n|---|---|" % a.repeats)
        for k, v in res.items(): print(f"| {k} | {v:.3f} |")
