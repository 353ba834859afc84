"""Which Deep Sea Treasure treasures one linear WEAVE run reaches during training, per tenth of its budget.

    python bench/weave_dst_trace.py --w 0.25 --seed 100 --explore 3 --explore-end 0.5      # concave map, 60k steps
    python bench/weave_dst_trace.py --w 0.25 --seed 100 --sil sil_coef=1                   # with self-imitation

The settings of bench_weave.py's linear concave group (BASE, entropy 0.3), optionally with the VisitBonus component
(--explore C: weight C annealed linearly to 0 by --explore-end of the run) and WEAVE's self-imitation (--sil). Prints, per tenth of training, how often each
treasure value ended an episode, then the greedy policy's discounted (treasure, time) return.
"""
import argparse, os, sys
from collections import Counter
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_weave as B


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--w", type=float, default=0.25); p.add_argument("--seed", type=int, default=100)
    p.add_argument("--map", default="concave"); p.add_argument("--steps", type=int, default=60_000)
    p.add_argument("--ent", type=float, default=0.3)
    p.add_argument("--explore", type=float, default=0.0); p.add_argument("--explore-end", type=float, default=0.5)
    p.add_argument("--sil", default="", help="self-imitation settings, e.g. sil_coef=1,sil_buffer=64")
    a = p.parse_args()
    import time, torch; torch.set_num_threads(1); t0 = time.perf_counter()
    from loomnb.train.learner import Trainer
    from loomnb.algos.weave import vector_returns
    from loomnb.envs.wrappers import VecEnvWrapper
    hits, t = {}, [0]

    class Trace(VecEnvWrapper):   # counts the treasure that ends each episode
        def step(self, actions):
            o, r, te, tr, info = self.env.step(actions); t[0] += self.num_envs
            for x in info["reward_vector"][te, 0]: hits.setdefault(min(9, t[0] * 10 // a.steps), Counter())[round(float(x), 1)] += 1
            return o, r, te, tr, info

    cfg, make = B.dst_setup(a.map, dict(beta=(a.w, 1 - a.w), ent_coef=a.ent, **B.sil_settings(a.sil)), a.explore, a.explore_end)
    tr = Trainer("weave", env=Trace(make(B.BASE["n_envs"])), config=cfg, seed=a.seed)
    tr.train(a.steps)
    print("| tenth of training | episodes ending at each treasure (value: count) |\n|---|---|")
    for k in sorted(hits): print(f"| {k} | {', '.join(f'{v:g}: {n}' for v, n in sorted(hits[k].items()))} |")
    print("greedy point", np.round(vector_returns(tr.algo, make(1))[0][:2], 2).tolist(), f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
