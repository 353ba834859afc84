"""SB3 on loomnb's envs: what a Stable-Baselines3 user gains by changing only the env.

Usage:  python bench/bench_interop.py [--repeats 3] [--steps 20000] [--env-steps 200000]     (about 2-3 minutes)
Rows (interleaved A/B, min over --repeats, one process, torch threads 1):
  1. SB3 PPO (rl-zoo CartPole config, n_envs=8, n_steps=32, batch 256, 20 epochs) for --steps env-steps:
     loomnb CartPole-v1 through `loomnb.envs.interop.SB3VecEnv` vs gymnasium CartPole-v1 in SB3's DummyVecEnv.
  2. The same with n_epochs=1 (collection-heavy: where the env's cost shows).
  3. The VecEnvs alone: step_async/step_wait with random actions, --env-steps env-steps, n_envs=8 and 64.
Writes a markdown table to stdout; paste it into bench/results/interop.md.
"""
import argparse, time, warnings, platform
import numpy as np, torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from loomnb.envs.registry import make
from loomnb.envs.interop import SB3VecEnv

ZOO = dict(n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, ent_coef=0.0, learning_rate=1e-3, clip_range=0.2)

def venv(kind, n, seed=0):
    if kind == "loomnb": return SB3VecEnv(make("CartPole-v1", num_envs=n))
    return make_vec_env("CartPole-v1", n_envs=n, seed=seed)

def ppo_sps(kind, steps, epochs):
    m = PPO("MlpPolicy", venv(kind, 8), n_epochs=epochs, seed=0, device="cpu", **ZOO)
    t0 = time.perf_counter(); m.learn(steps); dt = time.perf_counter() - t0
    return steps / dt

def env_sps(kind, n, steps):
    e = venv(kind, n); e.seed(0); e.reset(); rng = np.random.default_rng(0)
    acts = rng.integers(0, 2, (steps // n, n))
    t0 = time.perf_counter()
    for a in acts: e.step_async(a); e.step_wait()
    return len(acts) * n / (time.perf_counter() - t0)

def main():
    p = argparse.ArgumentParser(); p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=20000); p.add_argument("--env-steps", type=int, default=200000)
    a = p.parse_args()
    torch.set_num_threads(1); warnings.simplefilter("ignore")
    rows = [(f"SB3 PPO, 20 epochs, {a.steps} steps", lambda k: ppo_sps(k, a.steps, 20)),
            (f"SB3 PPO, 1 epoch, {a.steps} steps", lambda k: ppo_sps(k, a.steps, 1)),
            ("VecEnv step, n_envs=8", lambda k: env_sps(k, 8, a.env_steps)),
            ("VecEnv step, n_envs=64", lambda k: env_sps(k, 64, a.env_steps))]
    env_sps("loomnb", 8, 800)   # compile/load the kernel once before timing
    print(f"{platform.processor() or platform.machine()}, torch threads 1, min-of-{a.repeats} interleaved\n")
    print("| row | SB3 DummyVecEnv (gymnasium CartPole) env-steps/s | SB3VecEnv (loomnb CartPole) env-steps/s | speed-up |")
    print("|---|---|---|---|")
    for name, f in rows:
        best = {"gym": 0.0, "loomnb": 0.0}
        for _ in range(a.repeats):
            for k in ("gym", "loomnb"): best[k] = max(best[k], f(k))   # min time = max rate
        print(f"| {name} | {best['gym']:,.0f} | {best['loomnb']:,.0f} | {best['loomnb'] / best['gym']:.2f}x |", flush=True)

if __name__ == "__main__": main()
