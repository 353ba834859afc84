"""Throughput of loomnb's data-parallel PPO (1 vs 2 torchrun ranks) and of IMPALA (2 actor processes) vs single-process PPO.

    python bench/bench_distributed.py [--steps 32768] [--repeats 3] [--impala-steps 40000] [--only ppo] [--skip exchange]

Every configuration runs in its own fresh process(es), the configurations alternate within each repeat, and the table
shows medians of env-steps/s over the training time (`sps` of the summary: process start-up excluded for torchrun
ranks). PPO runs with its default 16 gradient steps per iteration and with 1 (the gradient exchanges are what costs).
Two-rank rows differ only in how the gradients are averaged (`--exchange`): "shm" is the default for two ranks on one
node (`PairExchange` through shared memory, at the end of each backward pass by `PairGradSync`), "p2p" gloo
isend/irecv the same way, "allreduce" DDP's own gloo all-reduce. The `--no-ddp` row averages in an optimiser pre-step
hook instead (with the default exchange). PPO's default minibatch step is hand-written (no autograd) for the default
networks on the CPU; under `DDPPolicy` it runs on the wrapped policy and averages its flat gradient with
`DDPPolicy.average_grads_` before clipping (the other rows with 2 ranks average autograd's gradients). The
"hand_grad=False" rows run the autograd step on 1 and 2 ranks. Every rank has the same per-rank config as the single process (8 envs, 128 steps,
the same minibatches), so 2 ranks collect twice the env steps per iteration; steps/s = env steps of all ranks / wall.
The side-by-side row runs two independent single-process trainers (half the steps each) started at the same moment:
no exchange at all, so it is what two ranks could reach on this machine at that moment (on a shared or virtualised
2-core machine two busy processes rarely get two full cores).
IMPALA "cold" includes its actors' start-up (it happens inside train()); "warm" starts them first.
The CPU column is the CPU time all processes of a configuration spent training, per 1000 env steps: on a machine shared
with other work, wall-clock ratios say how much CPU the job got, the CPU cost says what the job itself needs
(equal CPU cost with 2 ranks means DDP added no work; the wall-clock speedup then depends on having 2 free cores).
IMPALA's CPU figure includes its actor processes' start-up (imports), since they are measured when they exit.

Ray rows (`--ray`; needs `pip install "loomnb[ray]"`): IMPALA with `backend="ray"` (2 Ray actors on a local Ray
instance of 2 CPUs) against the multiprocessing path, both warm (actors started, and Ray itself, before the clock);
Ray's CPU is not in the CPU column (its actors are children of the raylet, not of the learner). `--ray-learn SEEDS`
trains both backends to `--learn-steps` per seed and reports the deterministic evaluation return (target 475).
`--ray-sweep` times a sweep of 4 short papermill runs (`papermill_runs/train.ipynb`, 512 steps each) as Ray tasks
(1 CPU each, 2 CPUs) against the local pool with 2 workers; Ray's start-up is timed separately. `--ray-fault` kills
one Ray actor process mid-run and prints what the metrics report.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

PPO = {"n_envs": 8, "n_steps": 128, "batch_size": 256, "n_epochs": 4}   # 16 gradient steps (exchanges) per iteration
PPO1 = {"n_envs": 8, "n_steps": 128, "batch_size": 1024, "n_epochs": 1}  # 1 gradient step per iteration
FAILURES = []
ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}

def torchrun_ppo(nproc, steps, cfg=PPO, extra=()):
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc), "-m",
               "loomnb.distributed", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", str(steps),
               "--config", json.dumps(cfg), "--out", d, *extra]
        for attempt in (0, 1, 2):  # up to two retries; failures are counted and printed, never hidden
            p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
            if p.returncode == 0: break
            FAILURES.append(f"torchrun {nproc} ranks {cfg}: rc {p.returncode}")
            print(f"FAILED (attempt {attempt}): {FAILURES[-1]}\n{p.stderr[-3000:]}", file=sys.stderr)
        p.check_returncode()
        r = json.loads((Path(d) / "rank0.json").read_text())
        return r["sps"], 1000 * sum(r["rank_cpu_s"]) / r["total_timesteps"]

SINGLE = """
import json, resource, sys, time, torch
from loomnb.train.learner import Trainer
def _children():
    u = resource.getrusage(resource.RUSAGE_CHILDREN); return u.ru_utime + u.ru_stime
def main():
    torch.set_num_threads(1)
    algo, steps, cfg, warm = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4] == "1"
    t = Trainer(algo, "CartPole-v1", seed=0, config=cfg)
    if warm: t.algo.start(wait=True)  # IMPALA: actors running before the clock starts
    if len(sys.argv) > 5: time.sleep(max(0.0, float(sys.argv[5]) - time.time()))  # side-by-side runs start together
    w0, c0, ch0 = time.time(), time.process_time(), _children()
    s = t.train(steps)  # IMPALA's actors are joined at the end of the budget, so their CPU shows in RUSAGE_CHILDREN
    cpu = time.process_time() - c0 + _children() - ch0
    print(json.dumps([s["sps"], 1000 * cpu / s["total_timesteps"], w0, time.time(), s["total_timesteps"]]))
if __name__ == "__main__": main()
"""

def single(algo, steps, cfg, warm=False):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f: f.write(SINGLE)
    try:
        out = subprocess.run([sys.executable, f.name, algo, str(steps), json.dumps(cfg), str(int(warm))], env=ENV,
                             check=True, capture_output=True, text=True).stdout
        return tuple(json.loads(out.strip().splitlines()[-1])[:2])
    finally: os.unlink(f.name)

def side_by_side(steps, cfg, n=2):
    "n independent single-process runs started together: the no-communication bound of n ranks on this machine."
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f: f.write(SINGLE)
    try:
        go = str(time.time() + 8.0)  # after both have imported torch and built their Trainer
        ps = [subprocess.Popen([sys.executable, f.name, "ppo", str(steps), json.dumps(cfg), "0", go], env=ENV,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
        rs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in ps]
        late = max(r[2] for r in rs) - float(go)
        if late > 0.05: print(f"side_by_side: a run started {late:.2f} s late", file=sys.stderr)
        total = sum(r[4] for r in rs)
        # the same clock as the other rows (the Trainer's training time), over the slower of the two runs
        return total / max(r[4] / r[0] for r in rs), sum(r[1] * r[4] for r in rs) / total
    finally: os.unlink(f.name)

LOAD0 = os.getloadavg()[0]
RAY_ENV = {**ENV, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

LEARN = """
import json, os, signal, sys, time, torch
from loomnb.train.learner import Trainer
from loomnb.train.state import Callback
from loomnb.eval import evaluate
class Kill(Callback):
    def after_update(self, state):
        if state.n_updates == 20: os.kill(self.trainer.algo.actor_pids()[0], signal.SIGKILL)
def main():
    torch.set_num_threads(1)
    backend, steps, seed, kill = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    cfg = dict(n_actors=2, n_envs=8, learning_rate=2e-3, ent_coef=0.0, backend=backend)
    t = Trainer("impala", "CartPole-v1", seed=seed, config=cfg, callbacks=[Kill()] if kill else [])
    w = time.time(); s = t.train(steps); w = time.time() - w
    ev = evaluate(t, "CartPole-v1", 20, seed=10_000 + seed).returns
    print(json.dumps({"eval": float(ev.mean()), "wall": w, "sps": s["sps"], **{k: v for k, v in s.items() if k.startswith("impala/")}}))
if __name__ == "__main__": main()
"""

def learn(backend, steps, seed, kill=False):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f: f.write(LEARN)
    try:
        p = subprocess.run([sys.executable, f.name, backend, str(steps), str(seed), str(int(kill))], env=RAY_ENV,
                           capture_output=True, text=True)
        if p.returncode: print(p.stderr[-3000:], file=sys.stderr); p.check_returncode()
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally: os.unlink(f.name)

SWEEP = """
import json, sys, tempfile, time
from pathlib import Path
from loomnb.workflow.runner import run_sweep
from loomnb.workflow.runs import RunRegistry
backend, nb = sys.argv[1], sys.argv[2]
TINY = {"total_timesteps": 512, "eval_episodes": 2, "config": {"n_envs": 4, "n_steps": 32, "batch_size": 64, "n_epochs": 2}}
with tempfile.TemporaryDirectory() as d:
    start = 0.0
    if backend == "ray":
        from loomnb.train.cluster import ray_connect
        t = time.time(); ray_connect(num_cpus=2); start = time.time() - t
    t = time.time()
    res = run_sweep(nb, TINY, seeds="0-3", out_dir=Path(d) / "s", registry=RunRegistry(Path(d) / "r.sqlite"), workers=2,
                    backend=backend, report=False, progress=False)
    print(json.dumps({"wall": time.time() - t, "start": start, "ok": int((res.status == "completed").sum())}))
"""

def sweep(backend):
    nb = Path(__file__).resolve().parents[1] / "papermill_runs" / "train.ipynb"
    p = subprocess.run([sys.executable, "-c", SWEEP, backend, str(nb)], env=RAY_ENV, capture_output=True, text=True)
    if p.returncode: print(p.stderr[-3000:], file=sys.stderr); p.check_returncode()
    return json.loads(p.stdout.strip().splitlines()[-1])

def retried(what, f, *args):
    "f(*args), retried up to twice (a Ray start that misses its node deadline on a loaded machine); failures counted."
    for attempt in (0, 1, 2):
        try: return f(*args)
        except subprocess.CalledProcessError as e:
            FAILURES.append(f"{what}: rc {e.returncode}"); print(f"FAILED (attempt {attempt}): {FAILURES[-1]}", file=sys.stderr)
            if attempt == 2: raise

def ray_rows(a):
    "The --ray / --ray-learn / --ray-sweep / --ray-fault tables."
    if a.ray:
        ns, cpus = [int(n) for n in a.actors.split(",")], os.cpu_count() or 1
        cfgs = {f"impala {b}, {n} actors (warm)": {"n_actors": n, "n_envs": 8, "backend": b,
                                                   **({"ray_actor_cpus": min(1.0, cpus / n)} if b == "ray" else {})}
                for n in ns for b in ("mp", "ray")}
        res = {k: [] for k in cfgs}
        for r in range(a.repeats):
            for k in res:
                res[k].append(retried(k, single, "impala", a.impala_steps, cfgs[k], True))
                print(f"repeat {r}: {k}: {res[k][-1][0]:.0f} steps/s, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
        mp_ = statistics.median(x[0] for x in res[f"impala mp, {ns[0]} actors (warm)"])
        print(f"\nIMPALA CartPole-v1, {a.impala_steps} steps, medians of {a.repeats}, load at start {LOAD0:.1f}, now {os.getloadavg()[0]:.1f}\n")
        print(f"| configuration | env-steps/s | vs mp with {ns[0]} actors | per repeat |\n|---|---:|---:|---|")
        for k, v in res.items():
            m = statistics.median(x[0] for x in v)
            print(f"| {k} | {m:,.0f} | {m / mp_:.2f}x | {', '.join(f'{x[0]:,.0f}' for x in v)} |")
    if a.ray_learn:
        print(f"\n| backend | seed | eval return (20 episodes) | wall s | steps/s |\n|---|---:|---:|---:|---:|")
        for seed in range(a.ray_learn):
            for b in ("mp", "ray"):
                r = retried(f"learn {b} {seed}", learn, b, a.learn_steps, seed); print(f"| {b} | {seed} | {r['eval']:.1f} | {r['wall']:.1f} | {r['sps']:,.0f} |", flush=True)
    if a.ray_sweep:
        print("\n| sweep of 4 runs (2 at a time) | wall s (runs) | start-up s | completed |\n|---|---:|---:|---:|")
        for r in range(a.repeats):
            for b in ("local", "ray"):
                x = retried(f"sweep {b}", sweep, b); print(f"| {b} (repeat {r}) | {x['wall']:.1f} | {x['start']:.1f} | {x['ok']} |", flush=True)
    if a.ray_fault:
        r = retried("fault", learn, "ray", a.learn_steps, 0, True)
        print(f"\nfault run (actor 0 SIGKILLed after update 20, {a.learn_steps} steps): eval {r['eval']:.1f}, "
              + ", ".join(f"{k} {v}" for k, v in r.items() if k.startswith("impala/")))
    print(f"\nfailed runs (each retried, up to twice): {len(FAILURES)}" + "".join(f"\n  {f}" for f in FAILURES))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=32768); ap.add_argument("--impala-steps", type=int, default=40000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated substrings: run only configurations whose name has one")
    ap.add_argument("--skip", default="", help="comma-separated substrings: leave out configurations whose name has one")
    ap.add_argument("--ray", action="store_true", help="only the IMPALA Ray vs multiprocessing rows")
    ap.add_argument("--actors", default="2", help="--ray: comma-separated actor counts (Ray actors declare min(1, CPUs/n) CPUs)")
    ap.add_argument("--ray-learn", type=int, default=0, dest="ray_learn", help="seeds of the learning comparison")
    ap.add_argument("--learn-steps", type=int, default=200_000, dest="learn_steps")
    ap.add_argument("--ray-sweep", action="store_true", dest="ray_sweep"); ap.add_argument("--ray-fault", action="store_true", dest="ray_fault")
    a = ap.parse_args()
    if a.ray or a.ray_learn or a.ray_sweep or a.ray_fault: return ray_rows(a)
    IMP = {"n_actors": 2, "n_envs": 8}
    runs = {"ppo, 1 process (Trainer)": lambda: single("ppo", a.steps, PPO),
            "ppo, torchrun 1 rank": lambda: torchrun_ppo(1, a.steps),
            "ppo, 2 independent processes side by side (no exchange: the bound)": lambda: side_by_side(a.steps // 2, PPO),
            "ppo, torchrun 2 ranks": lambda: torchrun_ppo(2, a.steps),
            "ppo hand_grad=False, torchrun 1 rank": lambda: torchrun_ppo(1, a.steps, {**PPO, "hand_grad": False}),
            "ppo hand_grad=False, torchrun 2 ranks": lambda: torchrun_ppo(2, a.steps, {**PPO, "hand_grad": False}),
            "ppo, torchrun 2 ranks, --exchange p2p": lambda: torchrun_ppo(2, a.steps, PPO, ["--exchange", "p2p"]),
            "ppo, torchrun 2 ranks, --exchange allreduce": lambda: torchrun_ppo(2, a.steps, PPO, ["--exchange", "allreduce"]),
            "ppo, torchrun 2 ranks, optimiser hook (--no-ddp)": lambda: torchrun_ppo(2, a.steps, PPO, ["--no-ddp"]),
            "ppo 1 minibatch/iter, torchrun 1 rank": lambda: torchrun_ppo(1, a.steps, PPO1),
            "ppo 1 minibatch/iter, torchrun 2 ranks": lambda: torchrun_ppo(2, a.steps, PPO1),
            "impala, 2 actors + learner (cold)": lambda: single("impala", a.impala_steps, IMP),
            "impala, 2 actors + learner (warm)": lambda: single("impala", a.impala_steps, IMP, True)}
    keep = ("ppo, 1 process (Trainer)", "ppo, torchrun 1 rank")  # the baselines of the ratio columns
    if a.only: runs = {k: f for k, f in runs.items() if k in keep or any(o and o in k for o in a.only.split(","))}
    if a.skip: runs = {k: f for k, f in runs.items() if k in keep or not any(o and o in k for o in a.skip.split(","))}
    res = {k: [] for k in runs}
    for r in range(a.repeats):
        for k, f in runs.items():
            res[k].append(f()); print(f"repeat {r}: {k}: {res[k][-1][0]:.0f} steps/s, {res[k][-1][1]:.3f} CPU-s/1k steps, "
                                       f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in res.items()}
    base = med["ppo, 1 process (Trainer)"][0]
    def one_rank(k):  # the 1-rank run of the same per-rank configuration
        k1 = k.split(" rank")[0][:-1] + "1 rank"
        return k1 if k1 in med else None
    for k in [k for k in res if "2 ranks" in k and one_rank(k)]:
        print(f"{k} / {one_rank(k)}, per repeat: " + ", ".join(f"{x[0] / y[0]:.2f}x" for x, y in zip(res[k], res[one_rank(k)])))
    print(f"\nCartPole-v1, {os.cpu_count()} CPUs, load average at the start {LOAD0:.1f}, at the end {os.getloadavg()[0]:.1f}, "
          f"medians of {a.repeats} repeats (env-steps/s, global over ranks/actors)\n")
    print("| configuration | steps/s | vs 1-process PPO | vs torchrun 1 rank (same per-rank config) | CPU-s per 1k steps |\n|---|---:|---:|---:|---:|")
    for k, (v, c) in med.items():
        k1 = one_rank(k) if "torchrun" in k else None
        print(f"| {k} | {v:,.0f} | {v / base:.2f}x | {f'{v / med[k1][0]:.2f}x' if k1 else ''} | {c:.3f} |")
    print(f"\nfailed runs (each retried, up to twice): {len(FAILURES)}" + "".join(f"\n  {f}" for f in FAILURES))

if __name__ == "__main__": main()
