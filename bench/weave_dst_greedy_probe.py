"""The greedy path of one linear WEAVE run on Deep Sea Treasure, with the mixture's action probabilities at each cell,
and (with self-imitation on) what the memory holds at the end.

    python bench/weave_dst_greedy_probe.py --w 0.5 --seed 100 --explore 3 --sil sil_coef=1      # concave, 60k steps
    [--ent-final 0 --ent-start 0.5]   # the entropy coefficient annealed to 0 over the second half

The settings of bench_weave.py's linear concave group (dst_setup, entropy --ent), one Trainer.train(--steps) call.
"""
import argparse, os, sys, time
from collections import Counter
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_weave as B


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--w", type=float, default=0.5); p.add_argument("--seed", type=int, default=100)
    p.add_argument("--map", default="concave"); p.add_argument("--steps", type=int, default=60_000)
    p.add_argument("--ent", type=float, default=0.3); p.add_argument("--sil", default="")
    p.add_argument("--explore", type=float, default=0.0); p.add_argument("--explore-end", type=float, default=0.5)
    p.add_argument("--ent-final", type=float, default=None); p.add_argument("--ent-start", type=float, default=0.5)
    a = p.parse_args()
    import torch; torch.set_num_threads(1); t0 = time.perf_counter()
    from loomnb.train.learner import Trainer
    from loomnb.algos.weave import WeaveRewards
    cfg, make = B.dst_setup(a.map, dict(beta=(a.w, 1 - a.w), ent_coef=a.ent, **B.sil_settings(a.sil), **({} if a.ent_final is None else dict(ent_coef_final=a.ent_final, ent_anneal_start=a.ent_start))), a.explore, a.explore_end)
    tr = Trainer("weave", env=make(B.BASE["n_envs"]), config=cfg, seed=a.seed); tr.train(a.steps)
    algo, pol = tr.algo, tr.algo.policy
    if getattr(algo, "sil", None) is not None:
        print("memory: treasure of the kept episodes", dict(Counter(round(float(e.vecs[-1, 0]), 1) for e in algo.sil.eps)),
              "lengths", dict(Counter(len(e.vecs) for e in algo.sil.eps)))
    w = WeaveRewards(make(1), cfg); w.fixed = algo.env.beta0[None]; obs, _ = w.reset()
    print("| step | cell (row, col) | p(up, down, left, right) | V | action |\n|---|---|---|---|---|")
    with torch.no_grad():
        for t in range(100):
            x = pol._x(torch.as_tensor(obs, dtype=torch.float32))
            pr = (pol.log_gates(x).exp()[..., None] * pol.heads(x).softmax(-1)).sum(1)[0].numpy()
            act = algo.predict(obs)
            print(f"| {t} | {tuple(int(v) for v in obs[0][:2])} | {', '.join(f'{q:.2f}' for q in pr)} | {float(pol.values(x)[0][0]):.1f} | {int(act[0])} |")
            obs, _, te, trn, info = w.step(act)
            if te[0] or trn[0]: break
    print("episode ends with reward vector", np.round(info["reward_vector"][0], 2).tolist(), f"{time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
