"""PPO with the Nature-CNN policy on pixels: loomnb vs SB3's PPO CnnPolicy, on the same env and hyperparameters.

Usage:  python bench/bench_pixels.py [--seeds 3] [--steps 6144]     (about 2-4 minutes)
Env: loomnb's PixelIdentity-v0 (uint8 1x36x36 images, 4 cells, 8 steps per episode; random play returns 2, best 8),
given to SB3 through loomnb.envs.interop.SB3VecEnv, so both sides step the same env. Hyperparameters on both sides:
8 envs x 16 steps, minibatch 64, 4 epochs, Adam 1e-3 (eps 1e-5), clip 0.2 (no value clipping), GAE 0.95, gamma 0.99,
no entropy bonus, grad clip 0.5, no annealing; the Nature CNN shared by policy and value (SB3's CnnPolicy default).
Score: mean return of 20 deterministic evaluation episodes after training; speed: env-steps/s of the whole training run.
Torch threads 1. Prints a markdown table.
"""
import argparse, time, warnings
import numpy as np, torch
from loomnb.envs.registry import make
from loomnb.envs.interop import SB3VecEnv
from loomnb.train.learner import Trainer
from loomnb.eval import evaluate
import loomnb.algos.ppo

HP = dict(n_envs=8, n_steps=16, batch_size=64, n_epochs=4, learning_rate=1e-3, clip_eps=0.2, gae_lambda=0.95, gamma=0.99)

def run_loomnb(seed, steps):
    tr = Trainer("ppo", env="PixelIdentity-v0", seed=seed, config=dict(**HP, ent_coef=0.0, anneal_lr=False, clip_vloss=False, adam_eps=1e-5))
    t0 = time.perf_counter(); tr.train(steps); sps = steps / (time.perf_counter() - t0)
    return evaluate(tr, "PixelIdentity-v0", n_episodes=20, seed=1_000 + seed).mean, sps

def run_sb3(seed, steps):
    from stable_baselines3 import PPO
    m = PPO("CnnPolicy", SB3VecEnv(make("PixelIdentity-v0", num_envs=8)), n_steps=16, batch_size=64, n_epochs=4, learning_rate=1e-3,
            clip_range=0.2, gae_lambda=0.95, gamma=0.99, ent_coef=0.0, max_grad_norm=0.5, seed=seed, device="cpu")
    t0 = time.perf_counter(); m.learn(steps); sps = steps / (time.perf_counter() - t0)
    env = make("PixelIdentity-v0", num_envs=1, seed=1_000 + seed); obs, _ = env.reset(); rets, ret = [], 0.0
    while len(rets) < 20:
        obs, r, te, tr, info = env.step(m.predict(obs, deterministic=True)[0]); ret += float(r[0])
        if info["done"][0]: rets.append(ret); ret = 0.0
    return float(np.mean(rets)), sps

def main():
    p = argparse.ArgumentParser(); p.add_argument("--seeds", type=int, default=3); p.add_argument("--steps", type=int, default=6144)
    a = p.parse_args(); torch.set_num_threads(1); warnings.simplefilter("ignore")
    res = {"SB3 PPO CnnPolicy": [], "loomnb PPO (CNN)": []}
    for seed in range(a.seeds):   # interleaved
        res["SB3 PPO CnnPolicy"].append(run_sb3(seed, a.steps)); res["loomnb PPO (CNN)"].append(run_loomnb(seed, a.steps))
    print(f"| side | eval return per seed (of 8) | mean | env-steps/s per seed | best env-steps/s |\n|---|---|---|---|---|")
    for k, v in res.items():
        r, s = [x[0] for x in v], [x[1] for x in v]
        print(f"| {k} | {', '.join(f'{x:.2f}' for x in r)} | {np.mean(r):.2f} | {', '.join(f'{x:.0f}' for x in s)} | {max(s):.0f} |")
    b = {k: max(x[1] for x in v) for k, v in res.items()}
    print(f"\nspeed ratio loomnb / SB3 (best of seeds): {b['loomnb PPO (CNN)'] / b['SB3 PPO CnnPolicy']:.2f}x")

if __name__ == "__main__": main()
