"""Offline RL bench: BC, TD3+BC, IQL and CQL on loomnb's own Pendulum (or MountainCarContinuous, --env) datasets, normalised score with a 95% bootstrap CI
over seeds, gradient steps/s and peak RSS per run; d3rlpy side by side on the same files and the same budget.

Usage:  python bench/bench_offline.py [--data DIR] [--steps 5000] [--seeds 5] [--datasets medium-replay,medium,expert]
                                      [--algos bc,td3bc,iql,cql] [--eval-episodes 10] [--d3rlpy] [--out bench/results/offline.json]
                                      [--override cql.actor_learning_rate=1e-3 ...]   (loomnb config fields, per algorithm)
        python bench/bench_offline.py --speed 3 --steps 500 --hidden 64 --algos cql   (steps/s only: loomnb, LOOMNB_FAST=0
                                      and d3rlpy interleaved, 3 rounds, no evaluation; writes bench/results/offline_speed.json)
Data:   DIR/<env name>/<kind>-v0 (Minari format; DIR/pendulum/... by default). Missing datasets are made first with
        loomnb.workflow.offline_data.generate_datasets(ENV, DIR, seed=0, n_steps=10_000) (SAC, a few minutes).
d3rlpy: --d3rlpy makes its own virtualenv (--d3rlpy-venv, default /tmp/loomnb_d3rlpy_venv) with d3rlpy and the gymnasium
        it pins, never touching loomnb's; torch and the other shared dependencies are read from this interpreter's
        site-packages through a .pth file placed after the venv's own. d3rlpy reads the same HDF5 files (h5py) and is
        evaluated by loomnb's evaluator on the same env and seeds, so only the learner differs; it trains on exactly the
        files' transitions (`d3rlpy_columns`, checked against d3rlpy's own count in every run).
Every run is its own subprocess with one torch thread (peak RSS of that process; steps/s of the training calls only).
Same hyperparameters on both sides where the libraries share them: batch 256, hidden (256, 256), gamma 0.99, the
algorithm defaults of loomnb (TD3+BC alpha 2.5 with state normalisation; IQL expectile 0.7, temperature 3; CQL alpha 5,
10 action samples; BC lr 1e-3). d3rlpy's IQL (expectile, temperature, max weight), CQL (alpha, action samples, learning
rates), TD3+BC (alpha, learning rate, policy delay, tau, target noise, state standardisation) and every algorithm's reward
scaler follow loomnb's config of the run, --override included: loomnb's
`reward_scale` "returns_range" / "returns_range_length" is d3rlpy's ReturnBasedRewardScaler with multiplier 1000 / the
mean episode length, a number its MultiplyRewardScaler.
"""
import argparse, json, os, subprocess, sys, time, resource
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from peer_venv import peer_python


def eval_seed(seed: int) -> int:
    "Reset seed of run `seed`'s evaluation: the evaluator seeds its env i with this + i (8 envs), so runs 100 apart get disjoint starts (10,000 + seed shared 7 of 8 starts between seeds s and s + 1)."
    return 10_000 + 100 * seed


def child_loomnb(algo, path, seed, steps, eval_episodes, hidden):
    import torch
    torch.set_num_threads(1)
    from loomnb.buffers.datasets import load_dataset, normalized_score
    from loomnb.eval import evaluate
    from loomnb.train.learner import get_algorithm
    import importlib
    importlib.import_module(f"loomnb.algos.{algo}")   # (an install that predates the algorithm's entry point)
    ds = load_dataset(path)
    over = {k.split(".", 1)[1]: json.loads(v) for k, v in (o.split("=", 1) for o in json.loads(os.environ.get("LOOMNB_BENCH_OVERRIDES", "[]")))
            if k.split(".", 1)[0] == algo}
    a = get_algorithm(algo)(dataset=ds, seed=seed, hidden=hidden, **over)
    a.train(n_gradient_steps=10)                     # warm-up (not timed)
    t = time.perf_counter(); m = a.train(n_gradient_steps=steps - 10); dt = time.perf_counter() - t
    if eval_episodes == 0: return dict(ret=float("nan"), score=float("nan"), steps_per_s=(steps - 10) / dt, metrics=m)   # (--speed)
    r = evaluate(a, ds.env_id, n_episodes=eval_episodes, seed=eval_seed(seed))
    return dict(ret=r.mean, score=float(normalized_score(r.mean, ds.ref_min_score, ds.ref_max_score)),
                steps_per_s=(steps - 10) / dt, metrics=m)


def d3rlpy_columns(path):
    """The Minari dataset at `path` as d3rlpy MDPDataset columns holding exactly its transitions, the episode lengths, the metadata.
    d3rlpy makes step t of an episode from observations t and t + 1 and drops an unterminated episode's last step (no
    next observation), so a truncated episode keeps its final observation as one more row (action and reward 0, never
    part of a transition) which carries the timeout; a terminated episode's rows are its steps (d3rlpy's terminal
    next state is zeros, never read)."""
    import numpy as np, h5py
    meta = json.loads((Path(path) / "data" / "metadata.json").read_text())
    cols, lengths = {k: [] for k in ("observations", "actions", "rewards", "terminals", "timeouts")}, []
    with h5py.File(Path(path) / "data" / "main_data.hdf5", "r") as f:
        for i in range(meta["total_episodes"]):
            g = f[f"episode_{i}"]
            o, a, r = g["observations"][()], g["actions"][()], g["rewards"][()]
            te, n = np.asarray(g["terminations"][()], bool), len(a)
            lengths.append(n)
            if te[-1]: o, tr = o[:-1], np.zeros(n, bool)
            else:
                a, r, te = np.concatenate([a, np.zeros_like(a[:1])]), np.append(r, 0.0).astype(r.dtype), np.zeros(n + 1, bool)
                tr = np.zeros(n + 1, bool); tr[-1] = True
            for k, v in zip(cols, (o, a, r, te, tr)): cols[k].append(v)
    return {k: np.concatenate(v) for k, v in cols.items()}, lengths, meta


def d3rlpy_algo(algo, path, seed, hidden):
    "d3rlpy's learner of `algo` built on the HDF5 dataset at `path` with loomnb's settings of this run (LOOMNB_BENCH_CONFIG), and the dataset."
    import numpy as np, h5py, d3rlpy
    c, lengths, meta = d3rlpy_columns(path)
    ds = d3rlpy.dataset.MDPDataset(c["observations"], c["actions"], c["rewards"], c["terminals"], c["timeouts"],
                                   action_space=d3rlpy.constants.ActionSpace.CONTINUOUS)
    n = sum(e.transition_count for e in ds.episodes)
    if n != meta["total_steps"]: raise RuntimeError(f"d3rlpy's dataset holds {n} transitions, the files {meta['total_steps']}")
    d3rlpy.seed(seed)
    enc = d3rlpy.models.VectorEncoderFactory([hidden, hidden])
    common = dict(batch_size=256, gamma=0.99, actor_encoder_factory=enc, critic_encoder_factory=enc)
    lo = np.asarray(json.loads(meta["action_space"])["low"], np.float32); hi = np.asarray(json.loads(meta["action_space"])["high"], np.float32)
    scaler = d3rlpy.preprocessing.MinMaxActionScaler(minimum=lo, maximum=hi)
    lc = json.loads(os.environ.get("LOOMNB_BENCH_CONFIG", "{}"))   # loomnb's config of this algorithm (defaults + --override)
    rs = lc.get("reward_scale", 1.0)   # loomnb's reward_scale as d3rlpy's reward scaler (the same factor from the same episodes)
    if rs == 1.0: rscale = {}
    elif rs == "returns_range": rscale = dict(reward_scaler=d3rlpy.preprocessing.ReturnBasedRewardScaler(multiplier=1000.0))
    elif rs == "returns_range_length":
        rscale = dict(reward_scaler=d3rlpy.preprocessing.ReturnBasedRewardScaler(multiplier=float(np.mean(lengths))))
    else: rscale = dict(reward_scaler=d3rlpy.preprocessing.MultiplyRewardScaler(float(rs)))
    common = {**common, **rscale}
    if algo == "bc": cfg = d3rlpy.algos.BCConfig(batch_size=256, learning_rate=1e-3, encoder_factory=enc, action_scaler=scaler)
    elif algo == "td3bc":
        lr = lc.get("learning_rate", 3e-4)   # loomnb's one learning rate: d3rlpy's actor and critic rates
        obs_scaler = dict(observation_scaler=d3rlpy.preprocessing.StandardObservationScaler()) if lc.get("normalize_states", True) else {}
        cfg = d3rlpy.algos.TD3PlusBCConfig(alpha=lc.get("alpha", 2.5), actor_learning_rate=lr, critic_learning_rate=lr, tau=lc.get("tau", 0.005),
                                           update_actor_interval=lc.get("policy_delay", 2), target_smoothing_sigma=lc.get("target_noise", 0.2),
                                           target_smoothing_clip=lc.get("noise_clip", 0.5), n_critics=lc.get("n_critics", 2),
                                           action_scaler=scaler, **obs_scaler, **common)
    elif algo == "iql": cfg = d3rlpy.algos.IQLConfig(expectile=lc.get("expectile", 0.7), weight_temp=lc.get("temperature", 3.0),
                                                    max_weight=lc.get("max_weight", 100.0), action_scaler=scaler, **common)
    elif algo == "cql":
        alr = lc.get("actor_learning_rate", 1e-4)   # loomnb's: actor and temperature (critics: learning_rate); fixed weight cql_alpha
        cfg = d3rlpy.algos.CQLConfig(conservative_weight=lc.get("cql_alpha", 5.0), n_action_samples=lc.get("cql_n_actions", 10), actor_learning_rate=alr,
                                     critic_learning_rate=lc.get("learning_rate", 3e-4), temp_learning_rate=alr, initial_alpha=1.0,
                                     alpha_learning_rate=0.0, action_scaler=scaler, **common)
    else: raise ValueError(algo)
    a = cfg.create(device="cpu:0")
    a.build_with_dataset(ds)
    return a, ds, meta


def child_d3rlpy(algo, path, seed, steps, eval_episodes, hidden):
    import torch, d3rlpy
    torch.set_num_threads(1)
    a, ds, meta = d3rlpy_algo(algo, path, seed, hidden)
    a.fit(ds, n_steps=10, n_steps_per_epoch=10, show_progress=False, save_interval=10**9, experiment_name="warm", with_timestamp=True, logger_adapter=d3rlpy.logging.NoopAdapterFactory())
    t = time.perf_counter()
    a.fit(ds, n_steps=steps - 10, n_steps_per_epoch=steps - 10, show_progress=False, save_interval=10**9, logger_adapter=d3rlpy.logging.NoopAdapterFactory())
    dt = time.perf_counter() - t
    return dict(policy=a, steps_per_s=(steps - 10) / dt, meta=meta)


def main_child(args):
    algo, lib, path, seed, steps, ep, hidden = args.child
    seed, steps, ep, hidden = int(seed), int(steps), int(ep), int(hidden)
    if lib == "loomnb": out = child_loomnb(algo, path, seed, steps, ep, hidden)
    else:
        out = child_d3rlpy(algo, path, seed, steps, ep, hidden)
        pol, meta = out.pop("policy"), out.pop("meta")
        out["actions_file"] = None
        # evaluation with loomnb's evaluator runs in loomnb's interpreter: serve actions over a pipe
        out["policy_pipe"] = True
        print(json.dumps({"ready": True, **out}), flush=True)
        import numpy as np
        for line in sys.stdin:
            obs = np.asarray(json.loads(line), np.float32)
            print(json.dumps(np.asarray(pol.predict(obs)).tolist()), flush=True)
        return
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out), flush=True)


OVERRIDES = []   # --override ALGO.FIELD=JSON, for loomnb's side

def run_loomnb(algo, path, seed, steps, ep, hidden, fast=True):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT),
           "LOOMNB_BENCH_OVERRIDES": json.dumps(OVERRIDES), "LOOMNB_FAST": "1" if fast else "0"}
    p = subprocess.run([sys.executable, __file__, "--child", algo, "loomnb", str(path), str(seed), str(steps), str(ep), str(hidden)],
                       capture_output=True, text=True, env=env)
    if p.returncode: raise RuntimeError(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def loomnb_config(algo) -> dict:
    "loomnb's config of `algo` with this run's --override fields (d3rlpy's IQL and reward scaler follow it)."
    import importlib
    from loomnb.train.learner import get_algorithm
    importlib.import_module(f"loomnb.algos.{algo}")
    over = {k.split(".", 1)[1]: json.loads(v) for k, v in (o.split("=", 1) for o in OVERRIDES) if k.split(".", 1)[0] == algo}
    return get_algorithm(algo).config_cls.from_dict(over).to_dict()


D3RLPY_PINS = ["d3rlpy==2.8.1", "gymnasium==1.0.0", "gym>=0.26", "gym-notices", "structlog", "colorama", "dataclasses-json",
               "marshmallow", "typing-inspect", "mypy-extensions", "scikit-learn", "joblib", "threadpoolctl", "narwhals"]


def make_d3rlpy_venv(venv: Path) -> Path:
    "d3rlpy and the gymnasium it pins, no-deps; torch, numpy, h5py... read from this interpreter's site-packages."
    return Path(peer_python(venv, D3RLPY_PINS, share_site=True,
                            ready="import d3rlpy, gymnasium, numpy, h5py; assert gymnasium.__version__ == '1.0.0'"))


def run_d3rlpy(py, algo, path, seed, steps, ep, hidden):
    import numpy as np
    from loomnb.buffers.datasets import load_dataset, normalized_score
    from loomnb.eval import evaluate
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": "", "LOOMNB_BENCH_CONFIG": json.dumps(loomnb_config(algo))}
    p = subprocess.Popen([str(py), __file__, "--child", algo, "d3rlpy", str(path), str(seed), str(steps), str(ep), str(hidden)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd="/tmp")
    while True:
        line = p.stdout.readline()
        if not line: raise RuntimeError(p.stderr.read()[-3000:])
        if line.startswith("{"): out = json.loads(line); break
    def pol(obs):
        p.stdin.write(json.dumps(np.asarray(obs).tolist()) + "\n"); p.stdin.flush()
        return np.asarray(json.loads(p.stdout.readline()), np.float32)
    ds = load_dataset(path)
    r = evaluate(pol, ds.env_id, n_episodes=ep, seed=eval_seed(seed)) if ep else None   # (--speed: no evaluation)
    pid = p.pid
    rss = _peak_rss_mb(pid)
    p.stdin.close(); p.wait()
    if r is None: return dict(ret=float("nan"), score=float("nan"), steps_per_s=out["steps_per_s"], peak_rss_mb=rss)
    return dict(ret=r.mean, score=float(normalized_score(r.mean, ds.ref_min_score, ds.ref_max_score)),
                steps_per_s=out["steps_per_s"], peak_rss_mb=rss)


def _peak_rss_mb(pid):
    try:
        for l in Path(f"/proc/{pid}/status").read_text().splitlines():
            if l.startswith("VmHWM:"): return int(l.split()[1]) / 1024
    except OSError: return float("nan")


def cql_fast_ab(path, hidden, reps, steps):
    "Interleaved A/B in one process of CQL's gradient steps/s with the engine room's step and with `cql_step` (built with the fast paths off)."
    import statistics, torch
    torch.set_num_threads(1)
    from loomnb.buffers.datasets import load_dataset
    from loomnb.algos.cql import CQL
    from loomnb.fast import fast_paths
    ds = load_dataset(path)
    with fast_paths(False): plain = CQL(dataset=ds, hidden=hidden, seed=0)   # autograd step, torch's Adam
    algos = {"engine room": CQL(dataset=ds, hidden=hidden, seed=0), "autograd": plain}
    assert algos["engine room"]._fast is not None, "fast paths are off (LOOMNB_FAST=0)"
    for a in algos.values(): a.train(10)
    res = {k: [] for k in algos}
    for _ in range(reps):
        for k, a in algos.items():
            t = time.perf_counter(); a.train(steps); res[k].append(steps / (time.perf_counter() - t))
    med = {k: statistics.median(v) for k, v in res.items()}
    print(json.dumps({"median_steps_per_s": med, "ratio": med["engine room"] / med["autograd"], "reps": reps, "steps": steps,
                      "loadavg": os.getloadavg()}))


def speed(data, algos, reps, steps, hidden, venv, out):
    "Gradient steps/s only: per algorithm, REPS rounds of loomnb (engine room), loomnb with LOOMNB_FAST=0 and d3rlpy, interleaved."
    import statistics
    path = Path(data) / "pendulum" / "expert-v0"
    py = make_d3rlpy_venv(Path(venv))
    runs = {"loomnb": lambda a, s: run_loomnb(a, path, s, steps, 0, hidden),
            "loomnb LOOMNB_FAST=0": lambda a, s: run_loomnb(a, path, s, steps, 0, hidden, fast=False),
            "d3rlpy": lambda a, s: run_d3rlpy(py, a, path, s, steps, 0, hidden)}
    load0, res, rows = os.getloadavg(), {}, []
    for algo in algos:
        sp = {k: [] for k in runs}
        for rep in range(reps):
            for lib, f in runs.items():
                sp[lib].append(f(algo, rep)["steps_per_s"])
                print(algo, lib, rep, round(sp[lib][-1], 1), "load", os.getloadavg()[0], flush=True)
        med = {k: statistics.median(v) for k, v in sp.items()}
        res[algo] = dict(steps_per_s=sp, median=med)
        rows.append(f"| {algo} | {med['loomnb']:.1f} ({', '.join(f'{v:.1f}' for v in sp['loomnb'])}) | "
                    f"{med['loomnb LOOMNB_FAST=0']:.1f} ({', '.join(f'{v:.1f}' for v in sp['loomnb LOOMNB_FAST=0'])}) | "
                    f"{med['d3rlpy']:.1f} ({', '.join(f'{v:.1f}' for v in sp['d3rlpy'])}) | {med['loomnb'] / med['d3rlpy']:.2f}x | "
                    f"{med['loomnb'] / med['loomnb LOOMNB_FAST=0']:.2f}x |")
    meta = dict(command=" ".join(sys.argv), steps=steps, reps=reps, hidden=hidden, time=time.strftime("%Y-%m-%d %H:%M:%S"),
                loadavg_start=load0, loadavg_end=os.getloadavg())
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(dict(meta=meta, results=res), indent=1))
    print(f"load average {load0[0]:.1f} at the start, {meta['loadavg_end'][0]:.1f} at the end")
    print("| algo | loomnb steps/s, median (runs) | LOOMNB_FAST=0 | d3rlpy | loomnb / d3rlpy | engine room / plain |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cql-fast-ab", type=int, default=0, metavar="REPS", help="only the CQL step A/B (engine room vs autograd, one process): REPS interleaved rounds of 30 steps")
    ap.add_argument("--speed", type=int, default=0, metavar="REPS", help="gradient steps/s only (expert data, no evaluation): "
                    "REPS interleaved rounds of loomnb, loomnb with LOOMNB_FAST=0 and d3rlpy per algorithm, --steps each")
    ap.add_argument("--child", nargs=7)
    ap.add_argument("--data", default="/tmp/loomnb_offline_data")
    ap.add_argument("--env", default="Pendulum-v1", help="env of the datasets: DIR/<env name>/<kind>-v0 (Pendulum-v1, MountainCarContinuous-v0)")
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=0, help="first seed (runs seeds seed0 .. seed0 + seeds - 1)")
    ap.add_argument("--datasets", default="medium-replay,medium,expert")
    ap.add_argument("--algos", default="bc,td3bc,iql,cql")
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--override", action="append", default=[], help="loomnb config field of one algorithm, ALGO.FIELD=JSON (repeatable)")
    ap.add_argument("--d3rlpy", action="store_true")
    ap.add_argument("--libs", default=None, help="libraries to run, loomnb,d3rlpy (default: loomnb, and d3rlpy with --d3rlpy)")
    ap.add_argument("--d3rlpy-venv", default="/tmp/loomnb_d3rlpy_venv")
    ap.add_argument("--out", default=str(HERE / "results" / "offline.json"))
    args = ap.parse_args()
    if args.child: return main_child(args)
    if args.cql_fast_ab: return cql_fast_ab(Path(args.data) / "pendulum" / "expert-v0", args.hidden, args.cql_fast_ab, 30)
    OVERRIDES[:] = args.override
    if args.speed:
        return speed(args.data, args.algos.split(","), args.speed, args.steps, args.hidden, args.d3rlpy_venv,
                     args.out if args.out != str(HERE / "results" / "offline.json") else str(HERE / "results" / "offline_speed.json"))
    import numpy as np
    from loomnb.eval.stats import stratified_bootstrap_ci, aggregate_mean
    data = Path(args.data)
    kinds = args.datasets.split(",")
    name = args.env.split("-v")[0].lower()
    if any(not (data / name / f"{k}-v0").exists() for k in kinds):
        from loomnb.workflow.offline_data import generate_datasets
        missing = tuple(k for k in kinds if not (data / name / f"{k}-v0").exists())
        print("making datasets", missing, flush=True)
        generate_datasets(args.env, data, seed=0, n_steps=10_000, kinds=missing)
    libs = args.libs.split(",") if args.libs else ["loomnb"] + (["d3rlpy"] if args.d3rlpy else [])
    if not set(libs) <= {"loomnb", "d3rlpy"}: raise SystemExit(f"--libs: expected loomnb and/or d3rlpy, got {args.libs!r}")
    py = make_d3rlpy_venv(Path(args.d3rlpy_venv)) if "d3rlpy" in libs else None
    rows, results = [], {}
    for kind in kinds:
        path = data / name / f"{kind}-v0"
        for algo in args.algos.split(","):
            for lib in libs:
                runs = []
                for seed in range(args.seed0, args.seed0 + args.seeds):
                    r = run_loomnb(algo, path, seed, args.steps, args.eval_episodes, args.hidden) if lib == "loomnb" else \
                        run_d3rlpy(py, algo, path, seed, args.steps, args.eval_episodes, args.hidden)
                    runs.append(r)
                    print(kind, algo, lib, seed, {k: round(v, 2) for k, v in r.items() if isinstance(v, float)}, flush=True)
                s = np.array([r["score"] for r in runs])
                lo, hi = stratified_bootstrap_ci(s, aggregate_mean, 2000, 0.95, 0) if len(s) > 1 else (s.mean(), s.mean())
                res = dict(dataset=kind, algo=algo, lib=lib, score=float(s.mean()), ci=(float(lo), float(hi)),
                           ret=float(np.mean([r["ret"] for r in runs])), steps_per_s=float(np.median([r["steps_per_s"] for r in runs])),
                           peak_rss_mb=float(max(r["peak_rss_mb"] for r in runs)), scores=s.tolist())
                results[f"{kind}/{algo}/{lib}"] = res
                rows.append(f"| {kind} | {algo} | {lib} | {res['score']:.1f} [{lo:.1f}, {hi:.1f}] | {res['ret']:.0f} | {res['steps_per_s']:.0f} | {res['peak_rss_mb']:.0f} |")
    meta = dict(command=" ".join(sys.argv), env=args.env, steps=args.steps, seeds=args.seeds, eval_episodes=args.eval_episodes, hidden=args.hidden,
                time=time.strftime("%Y-%m-%d %H:%M:%S"), cpu_count=os.cpu_count())
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(dict(meta=meta, results=results), indent=1))
    print("| dataset | algo | lib | normalised score [95% CI] | return | grad steps/s | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
