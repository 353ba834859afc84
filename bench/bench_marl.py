"""Multi-agent benchmarks: native simple_spread env-steps/s against mpe2, and MAPPO vs IPPO vs random on simple_spread.

`--envs`: steps/s of all agents stepped once (one env step) with random actions, at N copies: loomnb's native
`SimpleSpreadVecEnv` through its dict API (`step`) and its array API (`step_arrays`), against mpe2's
`simple_spread_v3.parallel_env` wrapped the usual way as a vector env (N copies in one process, `PettingZooVecEnv`).
Rounds alternate between the peers; each cell is the median over `--repeats` rounds of about `--seconds` each.

`--train`: MAPPO, IPPO (loomnb.algos.mappo) and a uniform-random policy on the native simple_spread (N=3 agents,
max_cycles 25, local_ratio 0.5) for `--steps` env steps per seed; each trained policy is then evaluated (sampling, as
in training) on `--eval-episodes` fresh episodes: mean episode return (mean over agents), success (every landmark has
an agent within 0.1 at the last step) and colliding agent pairs per episode, with 95% bootstrap CIs over seeds.
Learning curves (mean return of the last 100 training episodes per iteration) go to the JSON.

    python bench/bench_marl.py --envs                       # N = 1, 64, 1024
    python bench/bench_marl.py --train --steps 200000 --seeds 0 1 2 --json bench/results/marl_train.json
    python bench/bench_marl.py --train --steps 2000000 --seeds 2 --algos mappo --json s2.json   # one run per call
    python bench/bench_marl.py --combine bench/results/marl_train_2m.json s2.json ... --json all.json   # CIs over all seeds

`--torchrl`: wall time and returns of TorchRL's MAPPO recipe (bench/torchrl_mappo.py: `PettingZooWrapper` on mpe2 in a
`SerialEnv`, `MultiAgentMLP`, `ClipPPOLoss` + GAE) against loomnb's MAPPO with the same hyperparameters (32 copies x 25
steps per batch, 10 epochs, minibatch 400, lr 7e-4, clip 0.2, entropy 0.01, shared parameters, no agent id, no value
normalisation or value clipping), one after the other in one run, for `--frames` env steps. TorchRL and its torch go in
a venv this script makes (`--venv`, default $TMPDIR/loomnb_bench_torchrl), never in loomnb's.

    python bench/bench_marl.py --torchrl --frames 24000 --json bench/results/marl_torchrl.json
"""
from __future__ import annotations
import argparse, json, os, platform, sys, time, warnings
import numpy as np

warnings.filterwarnings("ignore")


def _native(n, seed, arrays=False):
    from loomnb.envs.spread import SimpleSpreadVecEnv
    env = SimpleSpreadVecEnv(num_envs=n, seed=seed); env.reset()
    rng = np.random.default_rng(seed)
    acts = [rng.integers(0, 5, (n, 3)) for _ in range(64)]
    if arrays: return lambda i: env.step_arrays(acts[i % 64])
    dicts = [{f"agent_{k}": a[:, k].copy() for k in range(3)} for a in acts]
    return lambda i: env.step(dicts[i % 64])


def _native_arrays(n, seed): return _native(n, seed, arrays=True)


def _mpe2(n, seed):
    from mpe2 import simple_spread_v3
    from loomnb.envs.multiagent import PettingZooVecEnv
    env = PettingZooVecEnv(simple_spread_v3.parallel_env, num_envs=n, seed=seed); env.reset()
    rng = np.random.default_rng(seed)
    dicts = [{f"agent_{k}": rng.integers(0, 5, n) for k in range(3)} for _ in range(64)]
    return lambda i: env.step(dicts[i % 64])


PEERS = {"loomnb native (dict step)": _native, "loomnb native (step_arrays)": _native_arrays, "mpe2 + PettingZooVecEnv": _mpe2}


def bench_envs(sizes, repeats, seconds, seed=0):
    out = {}
    for n in sizes:
        steppers = {k: f(n, seed) for k, f in PEERS.items()}
        for s in steppers.values(): s(0)   # compile / warm up
        rates = {k: [] for k in steppers}
        for r in range(repeats):
            for k, s in steppers.items():
                i, t0 = 0, time.perf_counter()
                while True:
                    s(i); i += 1
                    dt = time.perf_counter() - t0
                    if dt >= seconds and i >= 3: break
                rates[k].append(i * n / dt)
        out[n] = {k: float(np.median(v)) for k, v in rates.items()}
        base = out[n]["mpe2 + PettingZooVecEnv"]
        print(f"N={n:5d}  " + "  ".join(f"{k}: {v:,.0f}/s ({v / base:.0f}x)" for k, v in out[n].items()), flush=True)
    return out


def _ci(x, rng, n=2000):
    x = np.asarray(x, float)
    if len(x) < 2: return [float(x.mean()), float("nan"), float("nan")]
    b = rng.choice(x, (n, len(x))).mean(1)
    return [float(x.mean()), float(np.percentile(b, 2.5)), float(np.percentile(b, 97.5))]


def evaluate(act_fn, episodes, seed):
    "Run `episodes` episodes in parallel copies with `act_fn(obs_dict) -> actions dict` (`loomnb.eval.evaluate_multiagent`); (returns, success, collisions)."
    from loomnb.envs.spread import SimpleSpreadVecEnv
    from loomnb.eval import evaluate_multiagent
    r = evaluate_multiagent(act_fn, SimpleSpreadVecEnv(num_envs=episodes, seed=10_000 + seed), episodes, seed=None)
    return r.returns.mean(1), r.success, r.collisions


def train_one(algo, steps, seed, cfg):
    import torch
    import loomnb.algos.mappo  # registers mappo/ippo and simple_spread_v3
    from loomnb.train.learner import Trainer, Callback
    torch.set_num_threads(1)
    curve = []
    class Curve(Callback):
        def after_iteration(self, s): curve.append((s.global_step, s.mean_reward))
    t0 = time.perf_counter()
    tr = Trainer(algo, env="simple_spread_v3", seed=seed, config=cfg, callbacks=[Curve()], device="cpu")
    tr.train(steps)
    wall = time.perf_counter() - t0
    return tr.algo, curve, wall


def bench_train(steps, seeds, episodes, cfg, algos=("mappo", "ippo", "random")):
    rng = np.random.default_rng(0)
    res, curves = {}, {}
    for name in algos:
        rows = []
        for s in seeds:
            if name == "random":
                g = np.random.default_rng(s)
                act = lambda obs: {k: g.integers(0, 5, len(v)) for k, v in obs.items()}
                curve, wall = [], 0.0
            else:
                algo, curve, wall = train_one(name, steps, s, cfg)
                act = lambda obs, a=algo: a.predict(obs, deterministic=False)
            ret, succ, coll = evaluate(act, episodes, s)
            rows.append((ret.mean(), succ.mean(), coll.mean(), wall)); curves[f"{name}/{s}"] = curve
            print(f"{name} seed {s}: return {ret.mean():.2f}  success {succ.mean():.3f}  collisions {coll.mean():.2f}  wall {wall:.0f} s", flush=True)
        r = np.array(rows)
        res[name] = {"return": _ci(r[:, 0], rng), "success": _ci(r[:, 1], rng), "collisions": _ci(r[:, 2], rng),
                     "wall_s": float(r[:, 3].mean()), "per_seed": r.tolist()}
    return res, curves


def combine(paths):
    "Merge `--train` JSONs of one config and budget (e.g. one per seed; a later file's (policy, seed) replaces an earlier one's)."
    ds = [json.load(open(p)) for p in paths]
    cfg, steps = ds[0]["train_config"], ds[0]["steps"]
    for p, d in zip(paths, ds):
        if d["train_config"] != cfg or d["steps"] != steps: raise ValueError(f"{p}: config {d['train_config']} / {d['steps']} steps differ from {paths[0]}'s")
    rng, rows, curves = np.random.default_rng(0), {}, {}
    for d in ds:
        for k, v in d["train"].items():
            seeds = [int(c.split("/")[1]) for c in d["curves"] if c.startswith(k + "/")]
            for sd, row in zip(seeds, v["per_seed"]): rows.setdefault(k, {})[sd] = row; curves[f"{k}/{sd}"] = d["curves"][f"{k}/{sd}"]
    out = {"machine": [d["machine"] for d in ds], "train_config": cfg, "steps": steps, "sources": list(paths), "curves": curves, "train": {}}
    for k, by_seed in rows.items():
        r = np.array([by_seed[sd] for sd in sorted(by_seed)])
        out["train"][k] = v = {"return": _ci(r[:, 0], rng), "success": _ci(r[:, 1], rng), "collisions": _ci(r[:, 2], rng),
                               "wall_s": float(r[:, 3].mean()), "per_seed": r.tolist(), "seeds": sorted(by_seed)}
        print(f"{k:6s} seeds {sorted(by_seed)}  return {v['return'][0]:.2f} [{v['return'][1]:.2f}, {v['return'][2]:.2f}]  success {v['success'][0]:.3f} "
              f"[{v['success'][1]:.3f}, {v['success'][2]:.3f}]  collisions {v['collisions'][0]:.2f} [{v['collisions'][1]:.2f}, {v['collisions'][2]:.2f}]")
    return out


def _torchrl_venv(path):
    import subprocess
    py = os.path.join(path, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", path], check=True)
    if subprocess.run([py, "-c", "import torchrl, mpe2"], capture_output=True).returncode:
        subprocess.run([py, "-m", "pip", "install", "-q", "torchrl", "pettingzoo==1.27.*", "mpe2"], check=True)
    return py


def bench_torchrl(frames, seed, venv):
    import subprocess
    py = _torchrl_venv(venv)
    ver = subprocess.run([py, "-c", "import torch, torchrl; print(torch.__version__, torchrl.__version__)"], capture_output=True, text=True).stdout.split()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrl_mappo.py")
    t0 = time.perf_counter()
    r = subprocess.run([py, "-W", "ignore", script, "--frames", str(frames), "--seed", str(seed)], capture_output=True, text=True)
    if r.returncode: raise RuntimeError(f"torchrl_mappo.py failed:\n{r.stderr[-3000:]}")
    trl = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    trl_wall = time.perf_counter() - t0
    cfg = {"n_envs": 32, "n_steps": 25, "n_epochs": 10, "batch_size": 400, "learning_rate": 7e-4, "agent_id": False,
           "value_norm": False, "clip_vloss": False}
    import torch
    import loomnb.algos.mappo  # noqa: F401
    from loomnb.train.learner import Trainer, Callback
    torch.set_num_threads(1)
    lc, t1 = [], time.perf_counter()
    class Curve(Callback):
        def after_iteration(self, s): lc.append({"frames": s.global_step, "wall": time.perf_counter() - t1, "ret": s.mean_reward})
    Trainer("mappo", env="simple_spread_v3", seed=seed, config=cfg, callbacks=[Curve()], device="cpu").train(frames)
    out = {"versions": {"torch": ver[0] if ver else None, "torchrl": ver[1] if len(ver) > 1 else None}, "config": cfg,
           "torchrl": trl, "torchrl_process_wall": trl_wall, "loomnb": lc}
    for k in ("torchrl", "loomnb"):
        c = out[k]; last = [x["ret"] for x in c[-5:] if x["ret"] is not None]
        print(f"{k:8s} {c[-1]['frames']} frames in {c[-1]['wall']:.1f} s ({c[-1]['frames'] / c[-1]['wall']:,.0f} frames/s); "
              f"mean return of the last 5 batches {np.mean(last):.2f}", flush=True)
    return out


def plot_curves(src, dst):
    "Learning curves (mean and min-max band over seeds) of a `--train` JSON, as a PNG."
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = json.load(open(src)); fig, ax = plt.subplots(figsize=(6, 3.5))
    for name in ("mappo", "ippo"):
        cs = [np.array([p for p in v if p[1] is not None], float) for k, v in d["curves"].items() if k.startswith(name + "/") and v]
        if not cs: continue
        x = np.linspace(max(c[0, 0] for c in cs), min(c[-1, 0] for c in cs), 200)   # curves logged at different intervals
        y = np.stack([np.interp(x, c[:, 0], c[:, 1]) for c in cs])
        ax.plot(x, y.mean(0), label=f"{name} ({len(cs)} seeds)"); ax.fill_between(x, y.min(0), y.max(0), alpha=0.2)
    r = d["train"]["random"]["return"][0]; ax.axhline(r, color="gray", ls="--", label="random")
    ax.set_xlabel("env steps"); ax.set_ylabel("episode return (mean over agents)"); ax.set_title("simple_spread_v3 (native), N=3")
    ax.legend(); fig.tight_layout(); fig.savefig(dst, dpi=90)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", action="store_true"); p.add_argument("--train", action="store_true")
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--repeats", type=int, default=5); p.add_argument("--seconds", type=float, default=0.5)
    p.add_argument("--steps", type=int, default=200_000); p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--eval-episodes", type=int, default=200)
    p.add_argument("--algos", nargs="+", default=["mappo", "ippo", "random"], choices=["mappo", "ippo", "random"])
    p.add_argument("--config", type=str, default="{}", help="JSON overrides of MAPPOConfig/IPPOConfig")
    p.add_argument("--json", type=str, default=None)
    p.add_argument("--plot", nargs=2, metavar=("JSON", "PNG"), help="plot the curves of a --train JSON")
    p.add_argument("--combine", nargs="+", metavar="JSON", help="merge --train JSONs (one config, one budget) into --json, CIs over all their seeds")
    p.add_argument("--torchrl", action="store_true"); p.add_argument("--frames", type=int, default=24_000)
    p.add_argument("--venv", type=str, default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "loomnb_bench_torchrl"))
    a = p.parse_args(argv)
    if a.plot: return plot_curves(*a.plot)
    if a.combine:
        out = combine(a.combine)
        if a.json:
            with open(a.json, "w") as f: json.dump(out, f, indent=1)
        return out
    out = {"machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
                       "load": os.getloadavg()}}
    if a.envs: out["envs"] = bench_envs(a.sizes, a.repeats, a.seconds)
    if a.train:
        cfg = {"n_envs": 32, "n_steps": 25, "n_epochs": 10, "batch_size": 400, **json.loads(a.config)}
        out["train_config"], out["steps"], out["seeds"] = cfg, a.steps, a.seeds
        out["train"], out["curves"] = bench_train(a.steps, a.seeds, a.eval_episodes, cfg, a.algos)
        for k, v in out["train"].items():
            print(f"{k:6s} return {v['return'][0]:.2f} [{v['return'][1]:.2f}, {v['return'][2]:.2f}]  success {v['success'][0]:.3f} "
                  f"[{v['success'][1]:.3f}, {v['success'][2]:.3f}]  collisions {v['collisions'][0]:.2f} [{v['collisions'][1]:.2f}, {v['collisions'][2]:.2f}]  wall {v['wall_s']:.0f} s")
    if a.torchrl: out["torchrl"] = bench_torchrl(a.frames, 0, a.venv)
    if a.json:
        with open(a.json, "w") as f: json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
