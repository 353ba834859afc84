"""PPO speed and learning benchmark: loomnb vs Stable-Baselines3 vs rlox.

Each run is a fresh subprocess with one torch thread (so peak RSS is per run); libraries are interleaved per seed
(loomnb, sb3, rlox, then the next seed in a rotated order) so machine-load drift hits all of them alike.

CartPole-v1 with the rl-zoo3 PPO hyperparameters (n_envs 8, n_steps 32, batch 256, gae_lambda 0.8, gamma 0.98,
n_epochs 20, ent_coef 0, linear lr 1e-3, linear clip 0.2), 100k steps budget. Per run it records:
  * solve_s / solve_steps: wall time (from the start of training) and env steps at the first rollout end where
    the mean return of the last 10 finished training episodes is >= 475 (checked at rollout ends for every library);
  * sps: env steps per second over the run;
  * solve_cpu_s / cpu_sps: the same with the process's CPU time (time.process_time, all threads) instead of wall time,
    which other jobs on a shared machine disturb much less;
  * rss_mb: peak resident set size of the run's process (VmHWM from /proc/self/status at the end of the run), with
    its anonymous (private heap) and file-backed (mapped shared libraries) parts at the end, and which heavy runtimes
    the process loaded (torch._dynamo, numba, scipy).
By default a run stops once solved (--full trains the whole budget). rlox has no clip-range schedule: it runs with a
constant clip 0.2 (its lr is annealed).

Acrobot-v1 / Pendulum-v1 (`--env`) use the rl-zoo3 settings (hyperparams/ppo.yml) and report the final deterministic
evaluation return (10 episodes on a fresh env seeded 10000 + seed, so each seed sees other start states) of loomnb
and SB3 with 95% bootstrap CIs over seeds. Acrobot: zoo `normalize: true`
is VecNormalize with its defaults (observations and rewards, gamma 0.99) for both libraries; the default budget is
200k steps instead of the zoo's 1e6 (--timesteps to change). Pendulum: the zoo uses gSDE (use_sde, sde_sample_freq 4);
SB3 runs with it, loomnb has no gSDE and runs its Gaussian policy with a state-independent log-std (--no-sde runs SB3
without gSDE too).

Before the timed runs one short loomnb run fills the Numba kernel cache (cache=True), so every timed loomnb process
loads its kernels instead of compiling them (compiling adds ~40 MB to the peak RSS and several seconds). That run
also writes the object code of Numba's runtime module, which `Trainer` (`loomnb.train.learner.lean_numba_runtime`) then
loads instead of compiling it in every process; `LOOMNB_LEAN_NUMBA=0` in the environment measures without it.

--update-bench times one PPO minibatch step and one A2C step in this process, loomnb's hand-written gradient step
(`hand_grad=True`, the default) against its autograd path, on the same CartPole rollout (process CPU time, median of
repeats); for A2C also the step as `A2C.update` runs it, with the hand-written state kept between updates.

--a2c-run times whole 20k-step A2C CartPole runs with that state kept against rebuilt every update. With --json, both
write their medians (and the load) to that file.

--rss-breakdown prints, per library, VmHWM after each stage (import torch, import the library, build the env, build
the model, train) in fresh subprocesses.

Usage:
    python bench/bench_ppo.py                       # CartPole, 5 seeds, loomnb/sb3/rlox
    python bench/bench_ppo.py --seeds 10 --libs loomnb,sb3
    python bench/bench_ppo.py --env Acrobot-v1 --libs loomnb,sb3 --json bench/results/ppo_acrobot.json
    python bench/bench_ppo.py --env Pendulum-v1 --libs loomnb,sb3 --json bench/results/ppo_pendulum.json
    python bench/bench_ppo.py --rss-breakdown
    python bench/bench_ppo.py --update-bench
    python bench/bench_ppo.py --a2c-run
"""
from __future__ import annotations
import argparse, json, os, resource, subprocess, sys, time

ZOO = {
    "CartPole-v1": dict(n_envs=8, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
                        learning_rate=1e-3, clip_eps=0.2, anneal_lr=True, anneal_clip=True, clip_vloss=False,
                        timesteps=100_000),
    "Acrobot-v1": dict(n_envs=16, n_steps=256, batch_size=64, gae_lambda=0.94, gamma=0.99, n_epochs=4, ent_coef=0.0,
                       learning_rate=3e-4, clip_eps=0.2, anneal_lr=False, anneal_clip=False, clip_vloss=False,
                       normalize_obs=True, normalize_reward=True, timesteps=200_000),
    "Pendulum-v1": dict(n_envs=4, n_steps=1024, batch_size=64, gae_lambda=0.95, gamma=0.9, n_epochs=10, ent_coef=0.0,
                        learning_rate=1e-3, clip_eps=0.2, anneal_lr=False, anneal_clip=False, clip_vloss=False,
                        sb3_use_sde=True, sb3_sde_sample_freq=4, timesteps=100_000),
}
SOLVE = 475.0
EVAL_SEED = 10_000  # final evaluation: 10 episodes on a fresh env seeded EVAL_SEED + training seed (both libraries)


def _status() -> dict:
    "VmHWM, VmRSS, RssAnon and RssFile of this process in MB (from /proc/self/status)."
    out = {}
    with open("/proc/self/status") as f:
        for l in f:
            k = l.split(":")[0]
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile"): out[k] = int(l.split()[1]) / 1024
    return out

def _rss_mb() -> float:
    try: return _status()["VmHWM"]
    except (OSError, KeyError): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

NOT_LOOMNB = ("sb3_use_sde", "sb3_sde_sample_freq", "timesteps")


class _Clock:
    "Wall and process-CPU time from `start()`; records the first time the mean of the last 10 episode returns reaches SOLVE."
    last = None
    def __init__(self): self.start(); self.solve_s = self.solve_steps = self.solve_cpu_s = self.cpu_s = None; _Clock.last = self
    def start(self): self.t0, self.c0 = time.perf_counter(), time.process_time()
    def stop(self) -> float:
        self.cpu_s = time.process_time() - self.c0; return time.perf_counter() - self.t0
    def check(self, returns, steps) -> bool:
        if self.solve_s is None and len(returns) >= 10 and sum(returns[-10:]) / 10 >= SOLVE:
            self.solve_s, self.solve_steps = time.perf_counter() - self.t0, steps
            self.solve_cpu_s = time.process_time() - self.c0
        return self.solve_s is not None


def run_loomnb(env_id, seed, hp, total, stop_at_solve):
    from loomnb.train.learner import Trainer, Callback
    from loomnb.eval import evaluate
    cfg = {k: v for k, v in hp.items() if k not in NOT_LOOMNB}
    clock = _Clock()
    class Solve(Callback):
        def after_rollout(self, s):
            if clock.check(list(s.ep_returns), s.global_step) and stop_at_solve: return False
    tr = Trainer("ppo", env=env_id, seed=seed, config=cfg, callbacks=[Solve()], device="cpu")
    clock.start()
    m = tr.train(total)
    wall = clock.stop()
    ev = float(evaluate(tr, env_id, 10, True, EVAL_SEED + seed).mean) if env_id != "CartPole-v1" else float("nan")
    return dict(solve_s=clock.solve_s, solve_steps=clock.solve_steps, steps=m["total_timesteps"], wall=wall,
                sps=m["total_timesteps"] / wall, eval=ev)


def _linear(v):
    return lambda progress_remaining: progress_remaining * v


def run_sb3(env_id, seed, hp, total, stop_at_solve):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecNormalize
    from stable_baselines3.common.evaluation import evaluate_policy
    env = make_vec_env(env_id, n_envs=hp["n_envs"], seed=seed)
    if hp.get("normalize_obs") or hp.get("normalize_reward"):
        env = VecNormalize(env, norm_obs=bool(hp.get("normalize_obs")), norm_reward=bool(hp.get("normalize_reward")), gamma=hp["gamma"])
    clock, rets = _Clock(), []
    class Solve(BaseCallback):
        def _on_step(self): return True
        def _on_rollout_end(self):
            buf = [e["r"] for e in self.model.ep_info_buffer]
            if clock.check(buf, self.num_timesteps) and stop_at_solve: self.model._stop = True
    cb = Solve()
    class StopCB(BaseCallback):
        def _on_step(self): return not getattr(self.model, "_stop", False)
    from stable_baselines3.common.callbacks import CallbackList
    lr = _linear(hp["learning_rate"]) if hp["anneal_lr"] else hp["learning_rate"]
    clip = _linear(hp["clip_eps"]) if hp["anneal_clip"] else hp["clip_eps"]
    model = PPO("MlpPolicy", env, n_steps=hp["n_steps"], batch_size=hp["batch_size"], gae_lambda=hp["gae_lambda"],
                gamma=hp["gamma"], n_epochs=hp["n_epochs"], ent_coef=hp["ent_coef"], learning_rate=lr, clip_range=clip,
                seed=seed, device="cpu", verbose=0, use_sde=bool(hp.get("sb3_use_sde")),
                sde_sample_freq=hp.get("sb3_sde_sample_freq", -1))
    clock.start()
    model.learn(total, callback=CallbackList([cb, StopCB()]))
    wall = clock.stop()
    ev = float("nan")
    if env_id != "CartPole-v1":
        eval_env = make_vec_env(env_id, n_envs=1, seed=EVAL_SEED + seed)
        if isinstance(env, VecNormalize):  # frozen training statistics, raw rewards
            eval_env = VecNormalize(eval_env, training=False, norm_obs=env.norm_obs, norm_reward=False)
            eval_env.obs_rms = env.obs_rms
        ev = float(evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)[0])
    return dict(solve_s=clock.solve_s, solve_steps=clock.solve_steps, steps=model.num_timesteps, wall=wall,
                sps=model.num_timesteps / wall, eval=ev)


def run_rlox(env_id, seed, hp, total, stop_at_solve):
    from rlox.algorithms import PPO
    from rlox.callbacks import Callback
    clock, holder = _Clock(), {"rollouts": 0}
    class Solve(Callback):
        def on_rollout_end(self, **kw):
            holder["rollouts"] += 1
            clock.check(list(holder["algo"].collector._completed_rewards), holder["rollouts"] * hp["n_envs"] * hp["n_steps"])
        def on_step(self, **kw): return not (clock.solve_s is not None and stop_at_solve)
    algo = PPO(env_id=env_id, n_envs=hp["n_envs"], seed=seed, callbacks=[Solve()], n_steps=hp["n_steps"],
               batch_size=hp["batch_size"], gae_lambda=hp["gae_lambda"], gamma=hp["gamma"], n_epochs=hp["n_epochs"],
               ent_coef=hp["ent_coef"], learning_rate=hp["learning_rate"], clip_eps=hp["clip_eps"],
               anneal_lr=hp["anneal_lr"], clip_vloss=hp["clip_vloss"])
    holder["algo"] = algo
    clock.start()
    algo.train(total)
    wall = clock.stop()
    steps = holder["rollouts"] * hp["n_envs"] * hp["n_steps"]
    return dict(solve_s=clock.solve_s, solve_steps=clock.solve_steps, steps=steps, wall=wall, sps=steps / wall, eval=float("nan"))


RUNNERS = {"loomnb": run_loomnb, "sb3": run_sb3, "rlox": run_rlox}


def worker(lib, env_id, seed, total, stop_at_solve, no_sde=False):
    import torch
    torch.set_num_threads(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    hp = dict(ZOO[env_id])
    if no_sde: hp["sb3_use_sde"] = False
    load0 = os.getloadavg()[0]
    r = RUNNERS[lib](env_id, seed, hp, total, stop_at_solve)
    st, c = _status(), _Clock.last
    r.update(cpu_s=c.cpu_s, solve_cpu_s=c.solve_cpu_s, cpu_sps=r["steps"] / max(c.cpu_s, 1e-9))
    r.update(lib=lib, seed=seed, env=env_id, rss_mb=_rss_mb(), rss_anon_mb=st.get("RssAnon"), rss_file_mb=st.get("RssFile"),
             loaded={m: m in sys.modules for m in ("torch._dynamo", "numba", "scipy", "pandas", "matplotlib", "tensorboard")},
             load_start=load0, load_end=os.getloadavg()[0], timesteps=total, sb3_use_sde=bool(hp.get("sb3_use_sde")) and lib == "sb3")
    print("RESULT " + json.dumps(r), flush=True)


STAGES = {  # (stage name, code) run in order in one fresh process; VmHWM is read after each
    "loomnb": [("import torch", "import torch; torch.set_num_threads(1)"),
               ("import loomnb.train.learner + algos.ppo", "from loomnb.train.learner import Trainer; import loomnb.algos.ppo"),
               ("lean_numba_runtime()", "from loomnb.train.learner import lean_numba_runtime; lean_numba_runtime()"),
               ("build env (first Numba kernel)", "from loomnb.envs.registry import make; make('CartPole-v1', num_envs=8, seed=0).reset(seed=0)"),
               ("build Trainer (policy, optimiser)", "tr = Trainer('ppo', env='CartPole-v1', seed=0, device='cpu', config=CFG)"),
               ("train 30k steps", "tr.train(30_000)")],
    "sb3": [("import torch", "import torch; torch.set_num_threads(1)"),
            ("import stable_baselines3", "from stable_baselines3 import PPO; from stable_baselines3.common.env_util import make_vec_env"),
            ("build env", "env = make_vec_env('CartPole-v1', n_envs=8, seed=0); env.reset()"),
            ("build PPO (policy, optimiser)", "m = PPO('MlpPolicy', env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, "
                                              "ent_coef=0.0, learning_rate=1e-3, seed=0, device='cpu', verbose=0)"),
            ("train 30k steps", "m.learn(30_000)")],
}

def stage_worker(lib):
    "Run the stages of `lib` in this fresh process, printing VmHWM after each."
    os.environ["OMP_NUM_THREADS"] = "1"
    g = {"CFG": {k: v for k, v in ZOO["CartPole-v1"].items() if k not in NOT_LOOMNB}}
    out = []
    for name, code in STAGES[lib]:
        n0 = len(sys.modules); t0 = time.perf_counter(); exec(code, g)
        out.append(dict(stage=name, s=time.perf_counter() - t0, modules=len(sys.modules) - n0, **_status(),
                        dynamo="torch._dynamo" in sys.modules, numba="numba" in sys.modules))
    print("RESULT " + json.dumps(out), flush=True)

def rss_breakdown(libs, repeats=2, json_path=None):
    allruns = {}
    print(f"VmHWM after each stage (MB), fresh process per library, median of {repeats}; load {os.getloadavg()[0]:.1f}")
    for lib in libs:
        runs = []
        for _ in range(repeats):
            p = subprocess.run([sys.executable, __file__, "--stage-worker", lib], capture_output=True, text=True,
                               env={**os.environ, "OMP_NUM_THREADS": "1"})
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode or not line: print(f"[{lib}] FAILED rc={p.returncode}\n{p.stderr[-2000:]}", file=sys.stderr); break
            runs.append(json.loads(line[-1][7:]))
        if not runs: continue
        allruns[lib] = runs
        print(f"\n{lib}:\n{'stage':36s} {'VmHWM':>7s} {'+':>6s} {'anon':>6s} {'file':>6s} {'mods':>5s} {'s':>5s} dynamo numba")
        prev = 0.0
        for i, st in enumerate(runs[0]):
            med = lambda k: _median([r[i][k] for r in runs])
            h = med("VmHWM")
            print(f"{st['stage']:36s} {h:7.1f} {h - prev:+6.1f} {med('RssAnon'):6.1f} {med('RssFile'):6.1f} {st['modules']:5d} "
                  f"{med('s'):5.2f} {str(st['dynamo']):6s} {st['numba']}")
            prev = h
    if json_path:
        with open(json_path, "w") as f: json.dump(dict(load=os.getloadavg()[0], runs=allruns), f, indent=1)


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs: return float("nan")
    n = len(xs); return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def _ci(xs, statistic):
    "Point value and 95% stratified-bootstrap CI (loomnb.eval.stats, 10k replicates) of `statistic` over seeds."
    import numpy as np
    from loomnb.eval.stats import stratified_bootstrap_ci
    xs = np.asarray([x for x in xs if x == x], float)
    if len(xs) == 0: return (float("nan"),) * 3
    lo, hi = stratified_bootstrap_ci(xs, statistic, 10_000, 0.95, 0)
    return float(statistic(xs)), lo, hi


def summarize(results, env, libs):
    "Print the medians table (and, off CartPole, the final-return CIs) of a list of per-run records."
    by = {l: [r for r in results if r["lib"] == l] for l in libs}
    base = by.get("sb3") or []
    total = max((r.get("timesteps") or r["steps"] for r in results), default=0)
    print(f"\n{env}, {max(len(v) for v in by.values())} seeds, budget {total} steps, medians (ratio vs sb3):")
    cp = env == "CartPole-v1"  # the 475 threshold is CartPole's
    print(f"{'lib':8s} " + (f"{'solved':>7s} {'solve_s':>9s} {'ratio':>6s} {'solve_steps':>11s} " if cp else "")
          + f"{'steps/s':>8s} {'ratio':>6s} {'rss_MB':>7s} {'ratio':>6s} {'anon':>6s} {'file':>6s}")
    ms = lambda rs, k: _median([r.get(k) for r in rs])
    for l, rs in by.items():
        if not rs: continue
        row = [ms(rs, "solve_s"), ms(rs, "solve_steps"), ms(rs, "sps"), ms(rs, "rss_mb")]
        b = [ms(base, k) for k in ("solve_s", "solve_steps", "sps", "rss_mb")] if base else [float("nan")] * 4
        solved = sum(r["solve_s"] is not None for r in rs)
        print(f"{l:8s} " + (f"{solved:>3d}/{len(rs):<3d} {row[0]:9.2f} {row[0] / b[0]:6.2f} {row[1]:11.0f} " if cp else "")
              + f"{row[2]:8.0f} {row[2] / b[2]:6.2f} {row[3]:7.0f} {row[3] / b[3]:6.2f} {ms(rs, 'rss_anon_mb'):6.0f} {ms(rs, 'rss_file_mb'):6.0f}")
    if any("cpu_s" in r for r in results):  # process CPU time: less sensitive to other jobs on a shared machine
        print(f"\nprocess CPU time (medians, ratio vs sb3):\n{'lib':8s} " + (f"{'solve_cpu_s':>11s} {'ratio':>6s} " if cp else "")
              + f"{'steps/cpu-s':>11s} {'ratio':>6s}")
        for l, rs in by.items():
            if not rs: continue
            sc, cs = ms(rs, "solve_cpu_s"), ms(rs, "cpu_sps")
            bsc, bcs = (ms(base, "solve_cpu_s"), ms(base, "cpu_sps")) if base else (float("nan"),) * 2
            print(f"{l:8s} " + (f"{sc:11.2f} {sc / bsc:6.2f} " if cp else "") + f"{cs:11.0f} {cs / bcs:6.2f}")
    loads = [x for r in results for x in (r.get("load_start"), r.get("load_end")) if x is not None]
    if loads: print(f"load average during the runs: {min(loads):.1f}-{max(loads):.1f}")
    if env != "CartPole-v1":
        from loomnb.eval.stats import aggregate_mean, interquartile_mean
        print("\nfinal deterministic eval return (10 episodes per seed); mean and IQM over seeds [95% stratified bootstrap CI]:")
        for l, rs in by.items():
            ev = [r["eval"] for r in rs]
            m, lo, hi = _ci(ev, aggregate_mean); q, qlo, qhi = _ci(ev, interquartile_mean)
            sde = " (gSDE)" if any(r.get("sb3_use_sde") for r in rs) else ""
            print(f"{l + sde:14s} mean {m:8.1f} [{lo:.1f}, {hi:.1f}]  IQM {q:8.1f} [{qlo:.1f}, {qhi:.1f}]  "
                  f"per seed {', '.join(f'{x:.1f}' for x in ev)}")


def update_bench(repeats=7, updates=5):
    """CPU time of one PPO minibatch step (CartPole zoo settings: 256 transitions, 20 epochs per rollout) and of one A2C
    step (`FAST_CARTPOLE`: 64 transitions, Adam), the hand-written step (`hand_grad=True`) against autograd, on the same
    real rollout, alternating, median of repeats."""
    import numpy as np, torch
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.algos.ppo import ppo_update
    from loomnb.algos.a2c import a2c_update, FAST_CARTPOLE
    cfg = {k: v for k, v in ZOO["CartPole-v1"].items() if k not in NOT_LOOMNB}
    out = {"load": os.getloadavg()[0]}
    for algo, c0, steps in (("ppo", cfg, 20 * 256), ("a2c", FAST_CARTPOLE, 40 * 64)):
        tr = Trainer(algo, env="CartPole-v1", seed=0, config=c0, device="cpu")
        tr.train(steps)                          # a policy past its initial state, and a full rollout in the buffer
        a = tr.algo
        for g in a.optimizer.param_groups: g["lr"] = 0.0   # time the steps without moving the policy
        calls = updates if algo == "ppo" else 20 * updates   # update calls per repeat
        steps = calls * (a.config.n_epochs if algo == "ppo" else 1)   # gradient steps per repeat
        # A2C: "cached" is what `A2C.update` runs (the engine room's state kept between updates, checked with
        # `ActorCriticGrads.valid`); "hand" rebuilds it every step (`a2c_update` without `step=`)
        modes = (True, False) if algo == "ppo" else (True, "cached", False)
        res = {m: [] for m in modes}
        for r in range(repeats + 1):
            for hand in modes:
                c = a.config.merge(hand_grad=hand is not False)
                t0 = time.process_time()
                for _ in range(calls):
                    if algo == "ppo": ppo_update(a.policy, a.optimizer, a.buffer, c, np.random.default_rng(r), 0.2)
                    elif hand == "cached": a2c_update(a.policy, a.optimizer, a.buffer, c, step=a.step())
                    else: a2c_update(a.policy, a.optimizer, a.buffer, c)
                if r: res[hand].append((time.process_time() - t0) / steps * 1e6)
        h, g = _median(res[True]), _median(res[False])
        print(f"{algo}: per gradient step, CPU us (median of {repeats} repeats); load {os.getloadavg()[0]:.1f}")
        print(f"  hand-written {h:7.0f} us\n  autograd     {g:7.0f} us\n  ratio        {h / g:7.2f}")
        out.update({f"{algo}_hand_us": h, f"{algo}_autograd_us": g})
        if "cached" in res:
            k = _median(res["cached"])
            print(f"  hand-written, state kept (A2C.update) {k:7.0f} us (ratio to autograd {k / g:.2f}, to rebuilt {k / h:.2f})")
            out[f"{algo}_hand_cached_us"] = k
    return out


def a2c_run_bench(steps=20_000, repeats=3):
    """Process CPU time of a whole A2C CartPole run (default config: 8 envs x 5 steps, RMSprop) with the hand-written
    step's state kept between updates (`A2C.update`) against rebuilt every update, alternating, median of repeats."""
    import torch
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.algos.a2c import a2c_step
    res = {True: [], False: []}
    for r in range(repeats + 1):
        for keep in (True, False):
            tr = Trainer("a2c", env="CartPole-v1", seed=0, device="cpu")
            a = tr.algo
            if not keep: a.step = lambda a=a: a2c_step(a.policy, a.optimizer, a.config)
            t0 = time.process_time()
            tr.train(steps)
            if r: res[keep].append(time.process_time() - t0)
    k, b = _median(res[True]), _median(res[False])
    print(f"a2c CartPole {steps} steps, CPU s (median of {repeats} repeats); load {os.getloadavg()[0]:.1f}")
    print(f"  state kept     {k:6.2f} s\n  rebuilt        {b:6.2f} s\n  ratio          {k / b:6.2f}")
    return {"load": os.getloadavg()[0], "a2c_run_kept_s": k, "a2c_run_rebuilt_s": b}


def engine_room_bench(repeats=3, steps=None):
    """The engine room against plain torch, alternating, median of repeats (process CPU time):
    whole CartPole runs of PPO (zoo settings, 20k steps) and A2C (default config, 20k steps) with the fast paths on and
    off (`loomnb.fast.fast_paths`), and one optimizer step of `FusedAdam` / `ForeachRMSprop` against torch's
    `Adam(foreach=True)` / `RMSprop(foreach=True)` on PPO's CartPole networks, and `step_fast` against `opt.step()`."""
    import torch
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.fast import fast_paths
    from loomnb.fast.optim import FusedAdam, ForeachRMSprop
    from loomnb.agents.nets import DiscretePolicy
    cfg = {k: v for k, v in ZOO["CartPole-v1"].items() if k not in NOT_LOOMNB}
    out = {"load": os.getloadavg()[0]}
    for algo, c0, n in (("ppo", cfg, steps or 20_480), ("a2c", {}, steps or 20_000)):
        res = {True: [], False: []}
        for r in range(repeats + 1):
            for fast in (True, False):
                with fast_paths(fast):
                    tr = Trainer(algo, env="CartPole-v1", seed=0, config=c0, device="cpu")
                    t0 = time.process_time(); tr.train(n); dt = time.process_time() - t0
                if r: res[fast].append(dt)
        on, off = _median(res[True]), _median(res[False])
        print(f"{algo} CartPole {n} steps, CPU s (median of {repeats}): fast paths on {on:6.2f}  off {off:6.2f}  "
              f"ratio {on / off:5.2f}  speed-up {off / on:5.2f}x")
        out.update({f"{algo}_run_fast_s": on, f"{algo}_run_plain_s": off})
    pol = DiscretePolicy(4, 2)
    for name, ours, plain in (("adam", lambda ps: FusedAdam(ps, lr=1e-3, eps=1e-5), lambda ps: torch.optim.Adam(ps, lr=1e-3, eps=1e-5, foreach=True)),
                              ("rmsprop", lambda ps: ForeachRMSprop(ps, lr=1e-3, eps=1e-5), lambda ps: torch.optim.RMSprop(ps, lr=1e-3, eps=1e-5, foreach=True))):
        res = {True: [], False: []}
        for r in range(repeats + 1):
            for mine in (True, False):
                ps = [torch.nn.Parameter(p.detach().clone()) for p in pol.parameters()]
                for p in ps: p.grad = torch.randn_like(p)
                o = (ours if mine else plain)(ps); o.step()
                t0 = time.process_time()
                for _ in range(2000): o.step()
                if r: res[mine].append((time.process_time() - t0) / 2000 * 1e6)
        a, b = _median(res[True]), _median(res[False])
        print(f"{name} step on PPO's CartPole networks, CPU us: loomnb {a:6.1f}  torch {b:6.1f}  speed-up {b / a:5.2f}x")
        out.update({f"{name}_step_us": a, f"{name}_torch_step_us": b})
    # step_fast: the same FusedAdam stepped without PyTorch's profiling/hook wrapper, vs opt.step()
    from loomnb.fast.optim import step_fast
    res = {True: [], False: []}
    for r in range(repeats + 1):
        for fast in (True, False):
            ps = [torch.nn.Parameter(p.detach().clone()) for p in pol.parameters()]
            for p in ps: p.grad = torch.randn_like(p)
            o = FusedAdam(ps, lr=1e-3, eps=1e-5); f = step_fast if fast else (lambda o: o.step()); f(o)
            t0 = time.process_time()
            for _ in range(2000): f(o)
            if r: res[fast].append((time.process_time() - t0) / 2000 * 1e6)
    a, b = _median(res[True]), _median(res[False])
    print(f"step_fast vs opt.step() (FusedAdam, PPO's CartPole networks), CPU us: {a:6.1f} vs {b:6.1f}  speed-up {b / a:5.2f}x")
    out.update({"step_fast_us": a, "opt_step_us": b})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="CartPole-v1", choices=sorted(ZOO))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--libs", default="loomnb,sb3,rlox")
    ap.add_argument("--timesteps", type=int, default=None)
    ap.add_argument("--full", action="store_true", help="train the whole budget instead of stopping once solved")
    ap.add_argument("--json", default=None, help="also write all results to this file")
    ap.add_argument("--no-sde", action="store_true", help="run SB3 without gSDE on Pendulum (the zoo uses it)")
    ap.add_argument("--rss-breakdown", action="store_true", help="print VmHWM after each stage (CartPole) and exit")
    ap.add_argument("--update-bench", action="store_true", help="CPU time of one PPO minibatch step and one A2C step, hand-written vs autograd")
    ap.add_argument("--engine-room", action="store_true", help="the fast paths on vs off: whole PPO/A2C runs and optimizer steps")
    ap.add_argument("--a2c-run", action="store_true", help="CPU time of a 20k-step A2C CartPole run, hand-written state kept vs rebuilt")
    ap.add_argument("--worker", nargs=3, metavar=("LIB", "SEED", "TOTAL"), help=argparse.SUPPRESS)
    ap.add_argument("--summarize", default=None, metavar="JSON", help="print the tables of a saved --json file and exit")
    ap.add_argument("--stage-worker", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        lib, seed, total = a.worker
        return worker(lib, a.env, int(seed), int(total), not a.full, a.no_sde)
    if a.stage_worker: return stage_worker(a.stage_worker)
    if a.update_bench or a.a2c_run or a.engine_room:
        out = update_bench() if a.update_bench else a2c_run_bench() if a.a2c_run else engine_room_bench()
        if a.json:
            with open(a.json, "w") as f: json.dump(out, f, indent=1)
        return
    if a.summarize:
        with open(a.summarize) as f: rs = json.load(f)
        return summarize(rs, rs[0]["env"], list(dict.fromkeys(r["lib"] for r in rs)))
    libs = a.libs.split(",")
    for l in libs:
        if l not in RUNNERS: ap.error(f"unknown library {l!r}; choose from {list(RUNNERS)}")
    if a.rss_breakdown: return rss_breakdown([l for l in libs if l in STAGES], json_path=a.json)
    total = a.timesteps or ZOO[a.env]["timesteps"]
    results = []
    if "loomnb" in libs:  # fill the Numba cache first: compiling instead of loading adds ~40 MB peak RSS and seconds
        subprocess.run([sys.executable, __file__, "--env", a.env, "--worker", "loomnb", "0", "2048", "--full"],
                       capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    for seed in range(a.seeds):
        order = libs[seed % len(libs):] + libs[:seed % len(libs)]
        for lib in order:
            cmd = ([sys.executable, __file__, "--env", a.env, "--worker", lib, str(seed), str(total)]
                   + (["--full"] if a.full else []) + (["--no-sde"] if a.no_sde else []))
            p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode or not line:
                print(f"[{lib} seed {seed}] FAILED rc={p.returncode}\n{p.stderr[-2000:]}", file=sys.stderr); continue
            r = json.loads(line[-1][7:]); results.append(r)
            print(f"[{lib:6s} seed {seed}] solve {r['solve_s'] if r['solve_s'] is None else round(r['solve_s'], 2)} s "
                  f"at {r['solve_steps']} steps, {r['sps']:.0f} steps/s, eval {r['eval']:.1f}, rss {r['rss_mb']:.0f} MB "
                  f"(anon {r['rss_anon_mb']:.0f}, file {r['rss_file_mb']:.0f}), load {r['load_start']:.1f}-{r['load_end']:.1f}", flush=True)
            if a.json:  # after every run, so a stopped bench keeps what it measured
                with open(a.json, "w") as f: json.dump(results, f, indent=1)
    summarize(results, a.env, libs)


if __name__ == "__main__":
    main()
