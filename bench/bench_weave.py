"""Benchmark WEAVE on Deep Sea Treasure: hypervolume of the greedy policies trained for several preference vectors.

Usage:  python bench/bench_weave.py [--seeds 3] [--steps 60000] [--cheb-steps 100000] [--workers 2] [--summarise] [--only convex,concave,chebyshev,ablation]
        [--out bench/results/weave_raw.json]
Setting: MO-Gymnasium's Deep Sea Treasure maps (native loomnb.envs.mo.DeepSeaTreasureVecEnv, equal step for step to
MO-Gymnasium's), 100-step limit, reward vector (treasure, time). Points are the discounted vector returns of one greedy
episode, gamma = 0.99; hypervolume against the reference point (0, -50) (loomnb.eval.mo.hypervolume). One WEAVE run
per preference vector and seed; per seed, the hypervolume of the set of points its runs reach; IQM over seeds.
  convex   linear beta = (w, 1 - w), w in 0, 0.1, ..., 1       target >= 0.98 * 854.85
  concave  linear beta = (w, 1 - w), w in 0, 0.25, ..., 1      target >= 0.98 * 3391.57 (the best any linear weighting reaches)
  chebyshev concave, u(G) = -max_h beta_h |z_h - G_h|, z = (130, 0), beta = (b, 1 - b), b in 0, .05, .1, .15, .2, .3, .5, 1
           target > 3391.57 (only a non-linear method can) and never above 3688.38 (the full front)
  ablation convex beta = (0.3, 0.7), 20k steps: linear utility of the greedy return for K=1, J=1, no gating, critic weights
"""
import argparse, json, os, time
import numpy as np

GAMMA, REF = 0.99, (0.0, -50.0)
HV_FULL = {"convex": 854.85, "concave": 3688.38}
HV_LINEAR = {"convex": 854.85, "concave": 3391.57}
BASE = dict(n_envs=8, n_steps=64, batch_size=256, n_epochs=4, learning_rate=1e-3, obs_scale=0.1, mo_gamma=GAMMA)


def run_one(job):
    "Train one WEAVE run; returns the job with its greedy discounted vector return."
    import torch
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.algos.weave import WEAVEConfig, vector_returns
    from loomnb.envs.mo import DeepSeaTreasureVecEnv
    t0 = time.perf_counter()
    cfg = WEAVEConfig(**{**BASE, **job["config"]})
    tr = Trainer("weave", env=DeepSeaTreasureVecEnv(BASE["n_envs"], map=job["map"]), config=cfg, seed=job["seed"])
    tr.train(job["steps"])
    g = vector_returns(tr.algo, DeepSeaTreasureVecEnv(1, map=job["map"]))[0]
    return {**job, "point": g.tolist(), "seconds": time.perf_counter() - t0}


def jobs(args):
    out = []
    for s in range(args.seeds):
        if "convex" in args.only:
            out += [dict(group="convex", map="convex", seed=s, steps=args.steps, w=w, config=dict(beta=(w, 1 - w), ent_coef=0.1))
                    for w in np.round(np.linspace(0, 1, 11), 2).tolist()]
        if "concave" in args.only:
            out += [dict(group="concave", map="concave", seed=s, steps=args.steps, w=w, config=dict(beta=(w, 1 - w), ent_coef=0.3))
                    for w in (0.0, 0.25, 0.5, 0.75, 1.0)]
        if "chebyshev" in args.only:
            out += [dict(group="chebyshev", map="concave", seed=s, steps=args.cheb_steps, w=b,
                         config=dict(beta=(b, 1 - b), scalarization="chebyshev", utopia=(130.0, 0.0), gamma=1.0, ent_coef=args.cheb_ent))
                    for b in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)]
        if "ablation" in args.only:
            for name, kw in {"WEAVE (K=2, J=3, learned)": {}, "K=1": dict(n_components=1), "J=1": dict(n_critics=1),
                             "no gating": dict(gating=False), "disagreement": dict(critic_weights="disagreement"),
                             "mean": dict(critic_weights="mean")}.items():
                out.append(dict(group="ablation", map="convex", seed=s, steps=20_000, w=name, config=dict(beta=(0.3, 0.7), ent_coef=0.05, **kw)))
    return out


def iqm(x):
    x = np.sort(np.asarray(x, float)); n = len(x); k = n // 4
    return float(x[k:n - k].mean()) if n - 2 * k > 0 else float(x.mean())


def summarise(res):
    from loomnb.eval.mo import hypervolume
    lines, groups = [], {}
    for r in res: groups.setdefault(r["group"], []).append(r)
    for g in ("convex", "concave", "chebyshev"):
        if g not in groups: continue
        full = max(sum(1 for r in groups[g] if r["seed"] == s) for s in {r["seed"] for r in groups[g]})
        seeds = sorted(s for s in {r["seed"] for r in groups[g]} if sum(1 for r in groups[g] if r["seed"] == s) == full)  # complete seeds only
        hv = []
        for s in seeds:
            P = np.array([r["point"] for r in groups[g] if r["seed"] == s])
            ok = (P > np.array(REF)).all(1)
            hv.append(hypervolume(P[ok], REF) if ok.any() else 0.0)
        m = groups[g][0]["map"]
        from loomnb.envs.mo import dst_pareto_front
        F = dst_pareto_front(m, GAMMA)
        def best(r):   # the point the run's own scalarisation prefers on the true front
            b = np.array([r["w"], 1 - r["w"]])
            u = -(b * np.abs(np.array([130.0, 0.0]) - F)).max(1) if g == "chebyshev" else F @ b
            return F[u.argmax()]
        opt = [bool(np.allclose(r["point"], best(r), atol=0.01)) for r in groups[g] if r["seed"] in seeds]
        lines.append(f"| {g} | {m} | {len(seeds)} | {iqm(hv):.2f} | {min(hv):.2f} - {max(hv):.2f} | {', '.join(f'{x:.2f}' for x in hv)} | "
                     f"{HV_LINEAR[m]:.2f} | {HV_FULL[m]:.2f} | {sum(opt)}/{len(opt)} | {sum(r['seconds'] for r in groups[g] if r['seed'] in seeds):.0f} |")
        for s in seeds:
            pts = sorted((r["w"], tuple(round(float(x), 2) for x in r["point"])) for r in groups[g] if r["seed"] == s)
            lines.append(f"|  | seed {s} points (weight: point) | | | | " + ", ".join(f"{w}: {p}" for w, p in pts) + " | | | | |")
    if "ablation" in groups:
        lines.append("\n| ablation (convex, beta=(0.3, 0.7), 20k steps) | utility per seed | mean |\n|---|---|---|")
        names = list(dict.fromkeys(r["w"] for r in groups["ablation"]))
        for n in names:
            u = [float(np.dot(r["point"], (0.3, 0.7))) for r in groups["ablation"] if r["w"] == n]
            lines.append(f"| {n} | {', '.join(f'{x:.3f}' for x in u)} | {np.mean(u):.3f} |")
    return "\n".join(["| group | map | seeds | HV IQM | HV min - max | HV per seed | linear bound | full front | runs at their optimum | run s |", "|---|---|---|---|---|---|---|---|---|---|"] + lines)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=3); p.add_argument("--steps", type=int, default=60_000)
    p.add_argument("--workers", type=int, default=2); p.add_argument("--cheb-ent", type=float, default=0.1)
    p.add_argument("--cheb-steps", type=int, default=100_000); p.add_argument("--summarise", action="store_true")
    p.add_argument("--only", default="convex,concave,chebyshev,ablation"); p.add_argument("--out", default="bench/results/weave_raw.json")
    args = p.parse_args(); args.only = args.only.split(",")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.summarise:
        print(summarise(json.load(open(args.out)))); raise SystemExit
    J = jobs(args); t0 = time.time()
    if args.workers > 1:
        import multiprocessing as mp
        res = []
        with mp.get_context("spawn").Pool(args.workers) as pool:
            for r in pool.imap_unordered(run_one, J):
                res.append(r); json.dump(res, open(args.out, "w"), indent=1)   # partial results survive an interruption
                print(r["group"], r["seed"], r["w"], np.round(r["point"], 2), f"{r['seconds']:.0f}s", flush=True)
    else:
        res = []
        for j in J:
            r = run_one(j); res.append(r); json.dump(res, open(args.out, "w"), indent=1); print(r["group"], r["seed"], r["w"], np.round(r["point"], 2), f"{r['seconds']:.0f}s", flush=True)
    json.dump(res, open(args.out, "w"), indent=1)
    print(f"gamma={GAMMA}, reference point={REF}, {len(J)} runs, {time.time() - t0:.0f} s wall\n")
    print(summarise(res))
