"""Off-policy learning and speed benchmark: loomnb vs Stable-Baselines3 with the rl-zoo3 hyperparameters.

Each run is a fresh subprocess with one torch thread (so peak RSS is per run). Libraries are interleaved per seed
(loomnb, sb3, then the next seed in rotated order) so machine-load drift hits both alike.

Tasks (rl-zoo3 settings, also the issue's targets):
  * dqn: CartPole-v1, 50k steps (zoo: 500). lr 2.3e-3, batch 64, buffer 100k, learning_starts 1000, gamma 0.99,
    target_update_interval 10, train_freq 256, gradient_steps 128, exploration_fraction 0.16, final eps 0.04, [256, 256].
  * sac: Pendulum-v1, 20k steps (zoo: -157). lr 1e-3, otherwise SB3 defaults (batch 256, [256, 256], tau 0.005,
    learning_starts 100, train_freq 1, gradient_steps 1, auto entropy).
  * td3: Pendulum-v1, 20k steps (zoo: -152). gamma 0.98, buffer 200k, learning_starts 10k, Gaussian exploration noise
    0.1, lr 1e-3, [400, 300].
loomnb trains on its native envs (same dynamics as gymnasium's), SB3 on gymnasium's. Mixed-precision variants
(`--libs` names): `loomnb-bf16` is loomnb with `precision="bfloat16"` (hidden-layer products in bfloat16, the output
layers, losses, targets, weights and Adam in float32; sac and td3), `sb3-bf16` is SB3's training inside
`torch.autocast("cpu", dtype=torch.bfloat16)` (every Linear in bfloat16, the same mixed precision as torch applies it). Per run it records the final
deterministic evaluation return (10 episodes, fresh env), env-steps/s over training, and peak RSS. The summary gives,
per library, the IQM of the final returns with a 95% stratified-bootstrap CI over seeds, the median steps/s and its
ratio to SB3's, and the median peak RSS.

Usage:
    python bench/bench_offpolicy.py --algo sac                 # 5 seeds, full zoo budget
    python bench/bench_offpolicy.py --algo dqn --seeds 3
    python bench/bench_offpolicy.py --algo td3 --timesteps 12000 --seeds 2   # shorter (speed only is meaningful)
    python bench/bench_offpolicy.py --algo sac --speed 200 6   # speed only: one process, alternating 200-step chunks
    python bench/bench_offpolicy.py --algo sac --speed 200 6 --libs loomnb,sb3,rlox   # with rlox's SAC (sac only)
    python bench/bench_offpolicy.py --algo sac --libs rlox --seeds 2 --json rlox.json  # rlox's SAC learning runs
    python bench/bench_offpolicy.py --ws-ab 7   # SAC's hand-written step with/without its workspace (faults, CPU)
    python bench/bench_offpolicy.py --algo td3 --speed 300 4 --libs loomnb,sb3,loomnb-bf16,sb3-bf16
    python bench/bench_offpolicy.py --gemm      # float32 vs bfloat16 GEMM rate of TD3's 400x300 layer on this CPU
"""
from __future__ import annotations
import argparse, json, os, resource, subprocess, sys, time

TASKS = {
    "dqn": dict(env="CartPole-v1", timesteps=50_000, zoo=500.0,
                loomnb=dict(learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000, gamma=0.99,
                            target_update_interval=10, train_freq=256, gradient_steps=128, exploration_fraction=0.16,
                            exploration_final_eps=0.04, hidden=[256, 256])),
    "sac": dict(env="Pendulum-v1", timesteps=20_000, zoo=-157.0, loomnb=dict(learning_rate=1e-3)),
    "td3": dict(env="Pendulum-v1", timesteps=20_000, zoo=-152.0,
                loomnb=dict(gamma=0.98, buffer_size=200_000, learning_starts=10_000, exploration_noise=0.1,
                            learning_rate=1e-3, hidden=[400, 300])),
}


def _rss_mb() -> float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bf16(lib) -> tuple[str, bool]:
    "A library name without its -bf16 suffix, and whether it had one."
    return (lib[:-5], True) if lib.endswith("-bf16") else (lib, False)


def _loomnb_trainer(algo, seed, bf16):
    from loomnb.train.learner import Trainer
    t = TASKS[algo]
    if bf16 and algo not in ("sac", "td3"): raise SystemExit(f"loomnb-bf16: precision is a sac/td3 setting, not {algo}'s")
    cfg = {**t["loomnb"], **({"precision": "bfloat16"} if bf16 else {})}
    return Trainer(algo, env=t["env"], seed=seed, config=cfg, device="cpu")


def _sb3_autocast(model):
    "SB3's gradient steps (its `train`) inside torch.autocast to bfloat16; collection stays float32. Returns the model."
    import torch
    fp32_train = model.train
    def train(*a, **k):
        with torch.autocast("cpu", dtype=torch.bfloat16): return fp32_train(*a, **k)
    model.train = train
    return model


def run_loomnb(algo, seed, total, bf16=False):
    from loomnb.eval import evaluate
    t = TASKS[algo]
    tr = _loomnb_trainer(algo, seed, bf16)
    t0, c0 = time.perf_counter(), time.process_time(); tr.train(total)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ev = evaluate(tr, t["env"], n_episodes=10, seed=10_000 + seed)
    return dict(steps=tr.state.global_step, wall=wall, cpu=cpu, sps=tr.state.global_step / wall,
                sps_cpu=tr.state.global_step / cpu, eval=ev.mean)


def run_sb3(algo, seed, total, bf16=False):
    import gymnasium as gym
    from stable_baselines3.common.evaluation import evaluate_policy
    t = TASKS[algo]
    model = _sb3_model(algo, seed)
    if bf16: _sb3_autocast(model)
    t0, c0 = time.perf_counter(), time.process_time(); model.learn(total)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ev_env = gym.make(t["env"]); ev_env.reset(seed=10_000 + seed)
    ev = float(evaluate_policy(model, ev_env, n_eval_episodes=10, deterministic=True)[0])
    return dict(steps=model.num_timesteps, wall=wall, cpu=cpu, sps=model.num_timesteps / wall,
                sps_cpu=model.num_timesteps / cpu, eval=ev)


def run_rlox(algo, seed, total):
    import gymnasium as gym
    import numpy as np
    t = TASKS[algo]
    model = _rlox_model(algo, seed)
    t0, c0 = time.perf_counter(), time.process_time(); model.train(total)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env, rets = gym.make(t["env"]), []   # 10 deterministic episodes, first reset seeded as for SB3's evaluation
    obs, _ = env.reset(seed=10_000 + seed)
    for _ in range(10):
        done, ret = False, 0.0
        while not done:
            obs, r, te, tr, _ = env.step(model.predict(np.asarray(obs, np.float32), deterministic=True))
            ret += float(r); done = te or tr
        rets.append(ret); obs, _ = env.reset()
    return dict(steps=total, wall=wall, cpu=cpu, sps=total / wall, sps_cpu=total / cpu, eval=float(np.mean(rets)))


RUNNERS = {"loomnb": run_loomnb, "sb3": run_sb3, "rlox": run_rlox,
           "loomnb-bf16": lambda *a: run_loomnb(*a, bf16=True), "sb3-bf16": lambda *a: run_sb3(*a, bf16=True)}


def _sb3_model(algo, seed):
    import gymnasium as gym
    import numpy as np
    from stable_baselines3 import DQN, SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise
    env = gym.make(TASKS[algo]["env"])
    if algo == "dqn":
        return DQN("MlpPolicy", env, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000,
                   gamma=0.99, target_update_interval=10, train_freq=256, gradient_steps=128,
                   exploration_fraction=0.16, exploration_final_eps=0.04, policy_kwargs=dict(net_arch=[256, 256]),
                   seed=seed, device="cpu")
    if algo == "sac": return SAC("MlpPolicy", env, learning_rate=1e-3, seed=seed, device="cpu")
    n = env.action_space.shape[0]
    return TD3("MlpPolicy", env, gamma=0.98, buffer_size=200_000, learning_starts=10_000,
               action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)), gradient_steps=1, train_freq=1,
               learning_rate=1e-3, policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu")


def _rlox_model(algo, seed):
    "rlox's SAC with the zoo settings (rlox 1.2 takes one int `hidden`, so TD3's 400x300 has no rlox twin here)."
    if algo != "sac": raise SystemExit(f"--libs rlox: only sac is set up (rlox's `hidden` is one int), not {algo}")
    from rlox.algorithms import SAC
    return SAC("Pendulum-v1", learning_rate=1e-3, learning_starts=100, seed=seed)


def speed(algo, chunk, repeats, seed=0, libs=("loomnb", "sb3")):
    "Steps/s of the libraries in one process: warm up past learning_starts, then alternate equal chunks of training."
    import torch
    torch.set_num_threads(1)
    t = TASKS[algo]
    warm = t["loomnb"].get("learning_starts", 100) + chunk
    if warm < t["loomnb"].get("batch_size", 256):   # loomnb trains only once the buffer holds a batch
        raise SystemExit(f"--speed: {warm} warm-up steps leave loomnb's buffer under one batch; use a larger CHUNK")
    budget = warm + chunk * (repeats + 1)
    run = {}
    for lib in libs:   # each library (and precision variant) its own model, warmed up past learning_starts
        base, bf16 = _bf16(lib)
        if base == "loomnb":
            tr = _loomnb_trainer(algo, seed, bf16)
            tr.state.total_timesteps = budget   # schedules see the same run length in both libraries
            tr.train(warm)
            run[lib] = lambda tr=tr: tr.train(tr.state.global_step + chunk)
        elif base == "sb3":
            model = _sb3_model(algo, seed)
            if bf16: _sb3_autocast(model)
            model.learn(warm, reset_num_timesteps=False)
            model._total_timesteps = budget
            run[lib] = lambda model=model: model.learn(chunk, reset_num_timesteps=False)
        else:
            rl = _rlox_model(algo, seed); rl.train(warm)
            rl.learning_starts = 0   # rlox's train() counts steps from 0 on every call: keep later chunks training
            run[lib] = lambda rl=rl: rl.train(chunk)
    libs = list(libs)
    rates, cpu = {l: [] for l in libs}, {l: [] for l in libs}
    for i in range(repeats):
        for lib in libs[i % len(libs):] + libs[:i % len(libs)]:   # rotated order
            t0, c0 = time.perf_counter(), time.process_time()
            run[lib]()
            rates[lib].append(chunk / (time.perf_counter() - t0)); cpu[lib].append(chunk / (time.process_time() - c0))
    print(f"{algo} on {t['env']}: {repeats} alternating chunks of {chunk} env steps after {warm} warm-up steps "
          f"(load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end)")
    ms, cs = _median(rates["sb3"]), _median(cpu["sb3"])
    for lib in libs:
        m, c = _median(rates[lib]), _median(cpu[lib])
        print(f"  {lib:11s} {m:8.1f} steps/s, {c:8.1f} per CPU-s  (chunks: {', '.join(f'{r:.0f}' for r in rates[lib])})"
              f"  ratio to sb3: {m / ms:.2f} wall, {c / cs:.2f} per CPU-second")


def gemm_rates(repeats=50):
    "GFLOP/s of one [256, 400] x [400, 300] product (TD3's hidden layer at batch 256) in float32 and bfloat16."
    import torch
    torch.set_num_threads(1)
    print(f"CPU capability seen by torch: {torch.backends.cpu.get_cpu_capability()}")
    for dt in (torch.float32, torch.bfloat16):
        a, b = torch.randn(256, 400, dtype=dt), torch.randn(400, 300, dtype=dt)
        o, ts = torch.empty(256, 300, dtype=dt), []
        for _ in range(5):
            for _ in range(3): torch.mm(a, b, out=o)
            t0 = time.perf_counter()
            for _ in range(repeats): torch.mm(a, b, out=o)
            ts.append((time.perf_counter() - t0) / repeats)
        t = _median(ts)
        print(f"  {str(dt):15s} {t * 1e6:7.0f} us per product, {2 * 256 * 400 * 300 / t / 1e9:6.1f} GFLOP/s")


def ws_ab(repeats, steps=100, batch=256, hidden=(256, 256)):
    "SAC's hand-written step with and without its scratch workspace, alternating: minor page faults and CPU time per step."
    import copy
    import numpy as np
    import torch
    from loomnb.algos.sac import SquashedGaussianPolicy, sac_critic_target
    from loomnb.fast.q import hand_grad_layers, sac_step_hand
    from loomnb.train.offpolicy import TorchBatch, make_adam, target_copy
    from loomnb.agents.qnets import EnsembleQNetwork
    torch.set_num_threads(1); torch.manual_seed(0)
    od, ad = 3, 1   # Pendulum's sizes
    A0, C0 = SquashedGaussianPolicy(od, ad, hidden=hidden), EnsembleQNetwork(od, ad, hidden=hidden, n_critics=2)
    setups = {}
    for name, ws in (("no workspace", None), ("workspace", {})):
        A, C = copy.deepcopy(A0), copy.deepcopy(C0); T, la = target_copy(C), torch.zeros((), requires_grad=True)
        setups[name] = (A, C, T, make_adam(list(A.parameters()) + [la], 1e-3), make_adam(list(C.parameters()), 1e-3),
                        la, ws, hand_grad_layers(A, C, T))
    b = TorchBatch(torch.randn(batch, od), torch.rand(batch, ad) * 2 - 1, torch.randn(batch), torch.randn(batch, od),
                   (torch.rand(batch) < 0.2).float(), 0.99, None, np.arange(batch))
    def run(name, n):
        A, C, T, oa, oc, la, ws, lay = setups[name]
        f0, c0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
        for _ in range(n): sac_step_hand(sac_critic_target, A, C, T, oa, oc, la, 0.2, -1.0, b, lay, ws)
        return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / n, (time.process_time() - c0) / n * 1e3
    for name in setups: run(name, 20)   # warm-up
    res = {k: [] for k in setups}
    for r in range(repeats):
        for name in (list(setups) if r % 2 == 0 else list(setups)[::-1]): res[name].append(run(name, steps))
    print(f"sac_step_hand, batch {batch}, hidden {hidden}, {repeats} alternating rounds of {steps} steps "
          f"(load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end)")
    base = _median([c for _, c in res["no workspace"]])
    for k, v in res.items():
        c = _median([c for _, c in v])
        print(f"  {k:12s} {_median([f for f, _ in v]):7.1f} minor faults/step, {c:6.2f} CPU-ms/step "
              f"(rounds: {', '.join(f'{x:.2f}' for _, x in v)})  {base / c:.2f}x")


def worker(lib, algo, seed, total):
    import torch
    torch.set_num_threads(1)
    r = RUNNERS[lib](algo, seed, total)
    r.update(lib=lib, seed=seed, algo=algo, rss_mb=_rss_mb(), load1=os.getloadavg()[0])
    print("RESULT " + json.dumps(r), flush=True)


def _median(xs):
    xs = sorted(x for x in xs if x is not None and x == x)
    if not xs: return float("nan")
    n = len(xs); return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def _iqm_ci(xs):
    import numpy as np
    from loomnb.eval.stats import interquartile_mean, stratified_bootstrap_ci
    x = np.asarray(xs, float)
    if len(x) == 0: return (float("nan"),) * 3
    m = float(interquartile_mean(x))
    if len(x) < 2: return m, m, m
    lo, hi = stratified_bootstrap_ci(x, interquartile_mean, 2000, 0.95, 0)
    return m, float(lo), float(hi)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--algo", default="sac", choices=sorted(TASKS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds are first_seed, ..., first_seed + seeds - 1")
    ap.add_argument("--libs", default="loomnb,sb3")
    ap.add_argument("--timesteps", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write all results to this file")
    ap.add_argument("--speed", nargs=2, type=int, metavar=("CHUNK", "REPEATS"),
                    help="speed only: both libraries in one process, alternating CHUNK-step training chunks")
    ap.add_argument("--ws-ab", type=int, default=None, metavar="REPEATS",
                    help="SAC's hand-written step with and without its workspace: page faults and CPU time per step")
    ap.add_argument("--gemm", action="store_true", help="float32 and bfloat16 GEMM rates of TD3's hidden layer")
    ap.add_argument("--table", default=None, help="print the summary table of a JSON file written by --json")
    ap.add_argument("--worker", nargs=3, metavar=("LIB", "SEED", "TOTAL"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        lib, seed, total = a.worker
        return worker(lib, a.algo, int(seed), int(total))
    if a.ws_ab: return ws_ab(a.ws_ab)
    if a.gemm: return gemm_rates()
    if a.table:
        d = json.load(open(a.table))
        libs = [l for l in RUNNERS if any(r["lib"] == l for r in d["results"])]
        return summary(d["algo"], d["results"], libs, total=d["total"])
    libs = a.libs.split(",")
    for l in libs:
        if l not in RUNNERS: ap.error(f"unknown library {l!r}; choose from {list(RUNNERS)}")
    if a.speed:
        if "sb3" not in libs: ap.error("--speed reports ratios to sb3: include it in --libs")
        return speed(a.algo, *a.speed, libs=libs)
    total = a.timesteps or TASKS[a.algo]["timesteps"]
    results = []
    for seed in range(a.first_seed, a.first_seed + a.seeds):
        order = libs[seed % len(libs):] + libs[:seed % len(libs)]
        for lib in order:
            cmd = [sys.executable, __file__, "--algo", a.algo, "--worker", lib, str(seed), str(total)]
            p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode or not line:
                print(f"[{lib} seed {seed}] FAILED rc={p.returncode}\n{p.stderr[-2000:]}", file=sys.stderr); continue
            r = json.loads(line[-1][7:]); results.append(r)
            print(f"[{lib:6s} seed {seed}] eval {r['eval']:8.1f}, {r['sps']:7.0f} steps/s ({r['sps_cpu']:.0f} per "
                  f"CPU-s), wall {r['wall']:6.1f} s, rss {r['rss_mb']:.0f} MB, load {r['load1']:.2f}", flush=True)
            if a.json:   # written after every run, so an interrupted bench keeps what it finished
                with open(a.json, "w") as f: json.dump(dict(algo=a.algo, total=total, results=results), f, indent=1)
    summary(a.algo, results, libs, a.seeds, total)


def summary(algo, results, libs=("loomnb", "sb3"), seeds=None, total=None):
    "Print the table: IQM return with 95% bootstrap CI, steps/s (wall and per CPU-second) and peak RSS per library."
    task = TASKS[algo]
    by = {l: [r for r in results if r["lib"] == l] for l in libs}
    base = by.get("sb3") or []
    med = lambda rs, k: _median([r.get(k) for r in rs])
    bs, bc, br = med(base, "sps"), med(base, "sps_cpu"), med(base, "rss_mb")
    n = seeds or max(len(v) for v in by.values())
    print(f"\n{algo} on {task['env']}, {n} seeds, {total or task['timesteps']} steps (zoo reference {task['zoo']}):")
    print(f"{'lib':11s} {'IQM return':>11s} {'95% CI':>20s} {'steps/s':>8s} {'vs sb3':>7s} {'/CPU-s':>7s} {'vs sb3':>7s} "
          f"{'rss_MB':>7s} {'vs sb3':>7s} {'load':>5s}")
    for l, rs in by.items():
        if not rs: continue
        m, lo, hi = _iqm_ci([r["eval"] for r in rs])
        s, c, rss, ld = med(rs, "sps"), med(rs, "sps_cpu"), med(rs, "rss_mb"), med(rs, "load1")
        print(f"{l:11s} {m:11.1f} {f'[{lo:.1f}, {hi:.1f}]':>20s} {s:8.0f} {s / bs:7.2f} {c:7.0f} {c / bc:7.2f} "
              f"{rss:7.0f} {rss / br:7.2f} {ld:5.2f}")


if __name__ == "__main__":
    main()
