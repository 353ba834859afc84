"""Benchmark WEAVE on Deep Sea Treasure: hypervolume of the greedy policies trained for several preference vectors.

Usage:  python bench/bench_weave.py [--seeds 3] [--steps 60000] [--cheb-steps 100000] [--workers 2] [--summarise] [--only convex,concave,chebyshev,ablation]
        [--convex-ent 0.1] [--concave-ent 0.3] [--out bench/results/weave_raw.json] [--first-seed 0] [--resume] [--explore C --explore-end 0.5] [--sil sil_coef=1,sil_buffer=64]
        [--ent-final 0 --ent-start 0.5]
Setting: MO-Gymnasium's Deep Sea Treasure maps (native loomnb.envs.mo.DeepSeaTreasureVecEnv, equal step for step to
MO-Gymnasium's), 100-step limit, reward vector (treasure, time). Points are the discounted vector returns of one greedy
episode, gamma = 0.99; hypervolume against the reference point (0, -50) (loomnb.eval.mo.hypervolume). One WEAVE run
per preference vector and seed; per seed, the hypervolume of the set of points its runs reach; IQM over seeds.
  convex   linear beta = (w, 1 - w), w in 0, 0.1, ..., 1       target >= 0.98 * 854.85
  concave  linear beta = (w, 1 - w), w in 0, 0.25, ..., 1      target >= 0.98 * 3391.57 (the best any linear weighting reaches)
  chebyshev concave, u(G) = -max_h beta_h |z_h - G_h|, z = (130, 0), beta = (b, 1 - b), b in 0, .05, .1, .15, .2, .3, .5, 1
           target > 3391.57 (only a non-linear method can) and never above 3688.38 (the full front)
  --explore C: the linear groups train on VisitBonus(DST) (a third component c / sqrt(visits of s'), loomnb.envs.mo)
           with beta = (w, 1 - w, C) annealed linearly to (w, 1 - w, 0) by --explore-end of the run; points are scored
           on (treasure, time) only
  --sil k=v,...: WEAVE's self-imitation settings (WEAVEConfig sil_*) for the convex, concave and chebyshev groups
  --ent-final F --ent-start S: the entropy coefficient of those groups goes linearly from its --*-ent value to F over
           the last 1 - S of the run (WEAVEConfig ent_coef_final, ent_anneal_start)
  ablation convex beta = (0.3, 0.7), 20k steps: linear utility of the greedy return for K=1, J=1, no gating, critic weights
Pendulum: python bench/bench_weave.py --pendulum weave_sac,sac [--pendulum-seeds 0,1,2,3,4] [--budgets 5000,10000,20000]
        [--pendulum-out bench/results/weave_pendulum.json]
  WEAVE's ensemble critics off-policy (loomnb.algos.weave_sac: 5 critics, disagreement weights, kappa = 1) against
  loomnb's SAC on Pendulum-v1, the protocol of bench/bench_model_based.py: learning rate 1e-3 for both, loomnb defaults
  otherwise, one torch thread, evaluation 5 episodes of the deterministic policy after each budget, env i of seed s
  reset with 10_000 + 100 s + i (`start_seed`, as bench_model_based.py), so seeds never share a start (rows record
  it as eval_seed; rows without it were evaluated from 10_000 + s + i, where neighbouring seeds shared 4 of 5 starts).
  Variants: weave_sac, weave_sac_uniform (uniform weights), sac; J=2, uniform, kappa=1 is SAC itself (its notebook).
Peers:  python bench/bench_weave.py --peer pql,envelope [--peer-seeds 5] [--peer-steps pql=60000,envelope=20000] [--peer-maps convex,concave]
        [--peer-out bench/results/weave_peers.json] [--morl-venv bench/.venv-morl]
  morl-baselines 1.3.0 in its own virtualenv (made on first use: torch==2.13.0 first, then morl-baselines, which builds
  pycddlib 2.1.6 from source against libgmp), on MO-Gymnasium's own Deep Sea Treasure (100-step limit), through
  bench/morl_worker.py. Envelope Q-learning (one agent for all preferences) is read out with the same weight vectors as
  loomnb's runs; Pareto Q-learning (tabular) with every vector of its learned front. Same gamma, reference point and HV.
"""
import argparse, json, os, subprocess, sys, tempfile, time
import numpy as np

GAMMA, REF = 0.99, (0.0, -50.0)
HV_FULL = {"convex": 854.85, "concave": 3688.38}
HV_LINEAR = {"convex": 854.85, "concave": 3391.57}
BASE = dict(n_envs=8, n_steps=64, batch_size=256, n_epochs=4, learning_rate=1e-3, obs_scale=0.1, mo_gamma=GAMMA)


def dst_setup(map: str, config: dict, explore: float = 0.0, explore_end: float = 0.5):
    """(WEAVEConfig, make(n) -> env) of one Deep Sea Treasure run. With `explore` > 0 a VisitBonus component is appended
    and its weight annealed linearly to 0 by `explore_end` of the run."""
    from loomnb.algos.weave import WEAVEConfig
    from loomnb.envs.mo import DeepSeaTreasureVecEnv, VisitBonus
    cfg = dict(config)
    if explore:
        b = tuple(cfg["beta"]); cfg.update(beta=b + (explore,), beta_mode="schedule", beta_final=b + (0.0,), schedule_end=explore_end)
    make = lambda n: VisitBonus(DeepSeaTreasureVecEnv(n, map=map)) if explore else DeepSeaTreasureVecEnv(n, map=map)
    return WEAVEConfig(**{**BASE, **cfg}), make


def sil_settings(text: str) -> dict:
    "'sil_coef=1,sil_buffer=64' -> {'sil_coef': 1.0, 'sil_buffer': 64} (integers stay integers)."
    out = {}
    for kv in filter(None, text.split(",")):
        k, v = kv.split("=")
        if not k.startswith("sil_"): sys.exit(f"--sil: {k!r} is not a self-imitation setting (sil_coef, sil_buffer, sil_batch, sil_updates, sil_value_coef)")
        out[k] = int(v) if k in ("sil_buffer", "sil_batch", "sil_updates") else float(v)
    return out


def run_one(job):
    "Train one WEAVE run; returns the job with its greedy discounted vector return."
    import torch
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.algos.weave import vector_returns
    t0 = time.perf_counter()
    cfg, make = dst_setup(job["map"], job["config"], job.get("explore") or 0.0, job.get("explore_end", 0.5))
    tr = Trainer("weave", env=make(BASE["n_envs"]), config=cfg, seed=job["seed"])
    tr.train(job["steps"])
    g = vector_returns(tr.algo, make(1))[0][:2]   # (treasure, time); the bonus component is not scored
    return {**job, "point": g.tolist(), "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0]}


def jobs(args):
    out = []
    for s in range(args.first_seed, args.first_seed + args.seeds):
        if "convex" in args.only:
            out += [dict(group="convex", map="convex", seed=s, steps=args.steps, w=w, config=dict(beta=(w, 1 - w), ent_coef=args.convex_ent))
                    for w in np.round(np.linspace(0, 1, 11), 2).tolist()]
        if "concave" in args.only:
            out += [dict(group="concave", map="concave", seed=s, steps=args.steps, w=w, config=dict(beta=(w, 1 - w), ent_coef=args.concave_ent))
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
    if args.sil:
        for j in out:
            if j["group"] != "ablation": j["config"].update(args.sil); j["sil"] = dict(args.sil)
    if args.ent_final is not None:
        for j in out:
            if j["group"] != "ablation": j["config"].update(ent_coef_final=args.ent_final, ent_anneal_start=args.ent_start); j.update(ent_final=args.ent_final, ent_start=args.ent_start)
    if args.explore:
        for j in out:
            if j["group"] in ("convex", "concave"): j.update(explore=args.explore, explore_end=args.explore_end)
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
        hv_opt = []   # per seed, the hypervolume of the points of its runs at their own optimum only
        for s in seeds:
            P = np.array([r["point"] for r in groups[g] if r["seed"] == s and np.allclose(r["point"], best(r), atol=0.01)]).reshape(-1, 2)
            ok = (P > np.array(REF)).all(1)
            hv_opt.append(hypervolume(P[ok], REF) if ok.any() else 0.0)
        lines.append(f"| {g} | {m} | {len(seeds)} | {iqm(hv):.2f} | {min(hv):.2f} - {max(hv):.2f} | {', '.join(f'{x:.2f}' for x in hv)} | "
                     f"{HV_LINEAR[m]:.2f} | {HV_FULL[m]:.2f} | {sum(opt)}/{len(opt)} | {iqm(hv_opt):.2f} ({', '.join(f'{x:.2f}' for x in hv_opt)}) | {sum(r['seconds'] for r in groups[g] if r['seed'] in seeds):.0f} |")
        for s in seeds:
            pts = sorted((r["w"], tuple(round(float(x), 2) for x in r["point"])) for r in groups[g] if r["seed"] == s)
            lines.append(f"|  | seed {s} points (weight: point) | | | | " + ", ".join(f"{w}: {p}" for w, p in pts) + " | | | | | |")
    if "ablation" in groups:
        lines.append("\n| ablation (convex, beta=(0.3, 0.7), 20k steps) | utility per seed | mean |\n|---|---|---|")
        names = list(dict.fromkeys(r["w"] for r in groups["ablation"]))
        for n in names:
            u = [float(np.dot(r["point"], (0.3, 0.7))) for r in groups["ablation"] if r["w"] == n]
            lines.append(f"| {n} | {', '.join(f'{x:.3f}' for x in u)} | {np.mean(u):.3f} |")
    return "\n".join(["| group | map | seeds | HV IQM | HV min - max | HV per seed | linear bound | full front | runs at their optimum | HV of those runs: IQM (per seed) | run s |", "|---|---|---|---|---|---|---|---|---|---|---|"] + lines)


PEER_WEIGHTS = {"convex": np.round(np.linspace(0, 1, 11), 2).tolist(), "concave": [0.0, 0.25, 0.5, 0.75, 1.0]}


def morl_python(venv: str) -> str:
    "The morl-baselines venv's python, made on first use (torch==2.13.0 first: the CPU wheel here, then morl-baselines)."
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peer_venv import peer_python
    return peer_python(venv, ["torch==2.13.0"], ["morl-baselines==1.3.0"])


def run_peer(job: dict, venv: str) -> dict:
    "One morl-baselines run in its own venv; returns the job with its points."
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "job.json")
        with open(path, "w") as f: json.dump(job, f)
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", WANDB_MODE="disabled")
        out = subprocess.run([morl_python(venv), os.path.join(os.path.dirname(os.path.abspath(__file__)), "morl_worker.py"), path],
                             capture_output=True, text=True, env=env)
        if out.returncode: sys.exit(f"morl-baselines worker failed on {job}:\n" + out.stderr[-4000:])
        return json.loads(out.stdout.strip().splitlines()[-1])


EVAL_BASE, STARTS_PER_SEED = 10_000, 100


def start_seed(s: int) -> int:
    "Reset seed of seed `s`'s Pendulum evaluation envs (env i: start_seed(s) + i): disjoint across seeds for up to 100 episodes."
    return EVAL_BASE + STARTS_PER_SEED * s


PENDULUM = {"sac": ("sac", {"learning_rate": 1e-3}), "weave_sac": ("weave_sac", {"learning_rate": 1e-3}),
            "weave_sac_uniform": ("weave_sac", {"learning_rate": 1e-3, "critic_weights": "uniform"})}


def pendulum(args):
    import torch
    import loomnb.algos.weave_sac   # registers "weave_sac" where the package's entry points are older than the module
    from loomnb.train.learner import Trainer
    from loomnb.eval import evaluate
    torch.set_num_threads(1)
    res = json.load(open(args.pendulum_out)) if args.resume and os.path.exists(args.pendulum_out) else []
    done = {(r["variant"], r["seed"], r["budget"]) for r in res if r.get("eval_seed") == start_seed(r["seed"])}   # rows on the old starts are redone
    budgets = [int(b) for b in args.budgets.split(",")]
    for s in [int(x) for x in args.pendulum_seeds.split(",")]:
        for v in args.pendulum.split(","):
            if all((v, s, b) in done for b in budgets): continue
            algo, cfg = PENDULUM[v]
            t = Trainer(algo, env="Pendulum-v1", seed=s, config=dict(cfg), device="cpu", torch_threads=1)
            for b in budgets:
                t0 = time.perf_counter(); step0 = t.state.global_step; load0 = os.getloadavg()[0]
                t.train(b, progress=False)
                wall = time.perf_counter() - t0
                ev = evaluate(t, "Pendulum-v1", n_episodes=5, seed=start_seed(s))
                r = {"variant": v, "algo": algo, "config": cfg, "seed": s, "budget": b, "eval_seed": start_seed(s), "return": float(np.mean(ev.returns)),
                     "eval_returns": [float(x) for x in ev.returns], "wall_per_1k_s": 1000 * wall / max(b - step0, 1),
                     "load": [load0, os.getloadavg()[0]]}
                res = [x for x in res if (x["variant"], x["seed"], x["budget"], x.get("eval_seed")) != (v, s, b, r["eval_seed"])] + [r]
                json.dump(res, open(args.pendulum_out, "w"), indent=1)
                print(json.dumps(r), flush=True)
    print(summarise_pendulum(res))


def summarise_pendulum(res):
    from loomnb.eval.stats import stratified_bootstrap_ci, interquartile_mean
    starts = lambda r: "10000 + 100 s" if "eval_seed" in r else "10000 + s (shared)"
    out = ["| variant | env steps | evaluation starts | seeds | IQM return [95% CI] | mean | per seed | wall s per 1k env steps (load) |", "|---|---|---|---|---|---|---|---|"]
    for v, b, st in sorted({(r["variant"], r["budget"], starts(r)) for r in res}, key=lambda k: (k[1], k[0], k[2])):
        rs = sorted((r for r in res if (r["variant"], r["budget"], starts(r)) == (v, b, st)), key=lambda r: r["seed"])
        x = np.array([r["return"] for r in rs])
        lo, hi = stratified_bootstrap_ci(x[:, None], seed=0) if len(x) > 1 else (float("nan"),) * 2
        out.append(f"| {v} | {b} | {st} | {len(x)} ({', '.join(str(r['seed']) for r in rs)}) | {interquartile_mean(x):.0f} [{lo:.0f}, {hi:.0f}] | "
                   f"{x.mean():.0f} | {', '.join(f'{y:.0f}' for y in x)} | {np.mean([r['wall_per_1k_s'] for r in rs]):.1f} "
                   f"({min(r['load'][0] for r in rs):.1f}-{max(r['load'][1] for r in rs):.1f}) |")
    return "\n".join(out)


def summarise_peers(res):
    from loomnb.eval.mo import hypervolume
    lines = []
    for key in dict.fromkeys((r["method"], r["map"], r["steps"]) for r in res):
        rs = [r for r in res if (r["method"], r["map"], r["steps"]) == key]
        hv = []
        for r in rs:
            P = np.array(r["points"], float).reshape(-1, 2); ok = (P > np.array(REF)).all(1)
            hv.append(hypervolume(P[ok], REF) if ok.any() else 0.0)
        m = key[1]
        lines.append(f"| {key[0]} (morl-baselines) | {m} | {key[2]} | {len(rs)} | {iqm(hv):.2f} | {min(hv):.2f} - {max(hv):.2f} | "
                     f"{', '.join(f'{x:.2f}' for x in hv)} | {HV_LINEAR[m]:.2f} | {HV_FULL[m]:.2f} | {sum(r['seconds'] for r in rs):.0f} |")
    return "\n".join(["| method | map | env steps per run | seeds | HV IQM | HV min - max | HV per seed | linear bound | full front | run s |",
                      "|---|---|---|---|---|---|---|---|---|---|"] + lines)


def peers(args):
    steps = dict(kv.split("=") for kv in args.peer_steps.split(","))
    J = [dict(method=m, map=mp, seed=s, steps=int(steps[m]), gamma=GAMMA, weights=[[w, 1 - w] for w in PEER_WEIGHTS[mp]])
         for m in args.peer.split(",") for mp in args.peer_maps.split(",") for s in range(args.peer_seeds)]
    res = json.load(open(args.peer_out)) if args.resume and os.path.exists(args.peer_out) else []
    done = {(r["method"], r["map"], r["seed"], r["steps"]) for r in res}
    for j in J:
        if (j["method"], j["map"], j["seed"], j["steps"]) in done: continue
        r = run_peer(j, args.morl_venv); r["load"] = os.getloadavg()[0]; res.append(r)
        json.dump(res, open(args.peer_out, "w"), indent=1)
        print(r["method"], r["map"], r["seed"], f"{r['seconds']:.0f}s", len(r["points"]), "points", flush=True)
    print(f"gamma={GAMMA}, reference point={REF}, versions {res[-1]['versions'] if res else '-'}\n")
    print(summarise_peers(res))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=3); p.add_argument("--steps", type=int, default=60_000)
    p.add_argument("--workers", type=int, default=2); p.add_argument("--cheb-ent", type=float, default=0.1)
    p.add_argument("--convex-ent", type=float, default=0.1); p.add_argument("--concave-ent", type=float, default=0.3)
    p.add_argument("--cheb-steps", type=int, default=100_000); p.add_argument("--summarise", action="store_true")
    p.add_argument("--only", default="convex,concave,chebyshev,ablation"); p.add_argument("--out", default="bench/results/weave_raw.json")
    p.add_argument("--peer", default=None, help="run morl-baselines methods instead: pql, envelope (comma-separated)")
    p.add_argument("--peer-seeds", type=int, default=5); p.add_argument("--peer-maps", default="convex,concave")
    p.add_argument("--peer-steps", default="pql=60000,envelope=20000"); p.add_argument("--peer-out", default="bench/results/weave_peers.json")
    p.add_argument("--morl-venv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv-morl"))
    p.add_argument("--resume", action="store_true", help="keep the runs already in the output file (--out, --peer-out or --pendulum-out)")
    p.add_argument("--first-seed", type=int, default=0, help="DST seeds first-seed .. first-seed + seeds - 1 (selection of settings: 100)")
    p.add_argument("--explore", type=float, default=0.0, help="linear groups: weight c of a VisitBonus component (c / sqrt(visits)), annealed to 0")
    p.add_argument("--explore-end", type=float, default=0.5, help="share of the run at which the bonus weight reaches 0")
    p.add_argument("--sil", default="", help="self-imitation settings, e.g. sil_coef=1,sil_buffer=64 (WEAVEConfig sil_* fields)")
    p.add_argument("--ent-final", type=float, default=None, help="entropy coefficient at the end of the run (WEAVEConfig.ent_coef_final; default: constant)")
    p.add_argument("--ent-start", type=float, default=0.5, help="share of the run after which the entropy coefficient is annealed to --ent-final")
    p.add_argument("--pendulum", default=None, help=f"run Pendulum-v1 variants instead: {', '.join(PENDULUM)} (comma-separated)")
    p.add_argument("--pendulum-seeds", default="0,1,2,3,4"); p.add_argument("--budgets", default="5000,10000,20000")
    p.add_argument("--pendulum-out", default="bench/results/weave_pendulum.json")
    args = p.parse_args(); args.only = args.only.split(","); args.sil = sil_settings(args.sil)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.pendulum:
        if args.summarise: print(summarise_pendulum(json.load(open(args.pendulum_out))))
        else: pendulum(args)
        raise SystemExit
    if args.peer:
        if args.summarise: print(summarise_peers(json.load(open(args.peer_out))))
        else: peers(args)
        raise SystemExit
    if args.summarise:
        print(summarise(json.load(open(args.out)))); raise SystemExit
    J = jobs(args); t0 = time.time()
    res = json.load(open(args.out)) if args.resume and os.path.exists(args.out) else []
    key = lambda j: (j["group"], j["map"], j["seed"], j["w"], j["steps"], j.get("explore"), j.get("explore_end"), json.dumps(j.get("sil"), sort_keys=True), j.get("ent_final"), j.get("ent_start"))
    J = [j for j in J if key(j) not in {key(r) for r in res}]
    if args.workers > 1:
        import multiprocessing as mp
        with mp.get_context("spawn").Pool(args.workers) as pool:
            for r in pool.imap_unordered(run_one, J):
                res.append(r); json.dump(res, open(args.out, "w"), indent=1)   # partial results survive an interruption
                print(r["group"], r["seed"], r["w"], np.round(r["point"], 2), f"{r['seconds']:.0f}s", flush=True)
    else:
        for j in J:
            r = run_one(j); res.append(r); json.dump(res, open(args.out, "w"), indent=1); print(r["group"], r["seed"], r["w"], np.round(r["point"], 2), f"{r['seconds']:.0f}s", flush=True)
    json.dump(res, open(args.out, "w"), indent=1)
    print(f"gamma={GAMMA}, reference point={REF}, {len(J)} runs, {time.time() - t0:.0f} s wall\n")
    print(summarise(res))
