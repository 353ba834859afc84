"""PPO with the Nature-CNN policy on pixels: loomnb vs SB3's PPO CnnPolicy, on the same env and hyperparameters.

Usage:  python bench/bench_pixels.py [--seeds 3] [--steps 6144]     (about 2-4 minutes)
        python bench/bench_pixels.py --minatar Breakout,SpaceInvaders [--seeds 3] [--steps 40960]   (about 10 minutes)
        python bench/bench_pixels.py --channels-last [--seeds 3] [--steps 1024]   (the engine room's row, about 3 minutes)
Env: loomnb's PixelIdentity-v0 (uint8 1x36x36 images, 4 cells, 8 steps per episode; random play returns 2, best 8),
given to SB3 through loomnb.envs.interop.SB3VecEnv, so both sides step the same env. Hyperparameters on both sides:
8 envs x 16 steps, minibatch 64, 4 epochs, Adam 1e-3 (eps 1e-5), clip 0.2 (no value clipping), GAE 0.95, gamma 0.99,
no entropy bonus, grad clip 0.5, no annealing; the Nature CNN shared by policy and value (SB3's CnnPolicy default).
Score: mean return of 20 deterministic evaluation episodes after training; speed: env-steps/s of the whole training run.
Torch threads 1. Prints a markdown table.

--minatar: PPO on MinAtar games (loomnb.envs.minatar.make_minatar: uint8 {0, 1} frames (C, 10, 10), sticky actions
0.1), loomnb's automatic MinAtar net against SB3's PPO CnnPolicy given the same net as its features extractor
(one 3x3 conv with 16 filters, 128 ReLU units, shared by policy and value, net_arch=[], normalize_images=False), both
on the same loomnb env (SB3 through SB3VecEnv). Hyperparameters on both sides: 8 envs x 64 steps, minibatch 256,
4 epochs, Adam 1e-3 (eps 1e-5), clip 0.2 (no value clipping), GAE 0.95, gamma 0.99, entropy 0.01, grad clip 0.5,
no annealing. Score: 20 deterministic evaluation episodes (capped at 10,000 steps) on seed 1000 + seed.
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

MHP = dict(n_envs=8, n_steps=64, batch_size=256, n_epochs=4, learning_rate=1e-3, clip_eps=0.2, gae_lambda=0.95, gamma=0.99, ent_coef=0.01)

def _eval_sb3(m, env, n=20):
    obs, _ = env.reset(); rets, ret = [], 0.0
    while len(rets) < n:
        obs, r, te, tr, info = env.step(m.predict(obs, deterministic=True)[0]); ret += float(r[0])
        if info["done"][0]: rets.append(ret); ret = 0.0
    return float(np.mean(rets))

def minatar_loomnb(game, seed, steps):
    from loomnb.envs.minatar import make_minatar
    tr = Trainer("ppo", make_minatar(game, 8, seed=seed), seed=seed, config=dict(**MHP, anneal_lr=False, clip_vloss=False, adam_eps=1e-5))
    assert type(tr.algo.policy.encoder).__name__ == "MinAtarCNN"
    t0 = time.perf_counter(); tr.train(steps); sps = steps / (time.perf_counter() - t0)
    return evaluate(tr, make_minatar(game, 1, seed=1_000 + seed, max_episode_steps=10_000), n_episodes=20, seed=1_000 + seed).mean, sps

def minatar_sb3(game, seed, steps):
    import torch.nn as nn
    from stable_baselines3 import PPO
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from loomnb.envs.minatar import make_minatar
    class MinAtarNet(BaseFeaturesExtractor):   # Young & Tian 2019, as loomnb.agents.cnn.MinAtarCNN (SB3's default init)
        def __init__(self, space, features_dim=128):
            super().__init__(space, features_dim); c, h, w = space.shape
            self.net = nn.Sequential(nn.Conv2d(c, 16, 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * (h - 2) * (w - 2), features_dim), nn.ReLU())
        def forward(self, x): return self.net(x)
    m = PPO("CnnPolicy", SB3VecEnv(make_minatar(game, 8, seed=seed)), n_steps=64, batch_size=256, n_epochs=4, learning_rate=1e-3,
            clip_range=0.2, gae_lambda=0.95, gamma=0.99, ent_coef=0.01, max_grad_norm=0.5, seed=seed, device="cpu",
            policy_kwargs=dict(features_extractor_class=MinAtarNet, net_arch=[], normalize_images=False))
    t0 = time.perf_counter(); m.learn(steps); sps = steps / (time.perf_counter() - t0)
    return _eval_sb3(m, make_minatar(game, 1, seed=1_000 + seed, max_episode_steps=10_000)), sps

def main_minatar(games, seeds, steps):
    for game in games:
        res = {"SB3 PPO CnnPolicy (MinAtar net)": [], "loomnb PPO (MinAtarCNN)": []}
        for seed in range(seeds):   # interleaved
            res["SB3 PPO CnnPolicy (MinAtar net)"].append(minatar_sb3(game, seed, steps))
            res["loomnb PPO (MinAtarCNN)"].append(minatar_loomnb(game, seed, steps))
            print(f"# {game} seed {seed}: " + ", ".join(f"{k} {v[-1][0]:.2f} @ {v[-1][1]:.0f}/s" for k, v in res.items()), flush=True)
        print(f"\n{game}, {steps} env-steps per run\n\n| side | eval return per seed | mean | env-steps/s per seed | mean env-steps/s |\n|---|---|---|---|---|")
        for k, v in res.items():
            r, s = [x[0] for x in v], [x[1] for x in v]
            print(f"| {k} | {', '.join(f'{x:.2f}' for x in r)} | {np.mean(r):.2f} | {', '.join(f'{x:.0f}' for x in s)} | {np.mean(s):.0f} |")
        b = {k: np.mean([x[1] for x in v]) for k, v in res.items()}
        print(f"\nspeed ratio loomnb / SB3 (mean of seeds): {b['loomnb PPO (MinAtarCNN)'] / b['SB3 PPO CnnPolicy (MinAtar net)']:.2f}x", flush=True)

def channels_last_row(seed, steps, fast):
    "PPO on 4x84x84 stacked PixelIdentity frames, the engine room's channels-last convolutions on or put back to NCHW."
    from loomnb.envs.wrappers import FrameStack
    tr = Trainer("ppo", FrameStack(make("PixelIdentity-v0", num_envs=8, seed=seed, size=84), 4), seed=seed,
                 config=dict(**HP, ent_coef=0.0, anneal_lr=False, clip_vloss=False, adam_eps=1e-5))
    w = tr.algo.policy.encoder.convs[0].weight
    assert w.is_contiguous(memory_format=torch.channels_last)   # the fast path applied
    if not fast: tr.algo.policy.to(memory_format=torch.contiguous_format)   # before any optimizer state exists
    t0 = time.perf_counter(); tr.train(steps); return steps / (time.perf_counter() - t0)

def main_channels_last(seeds, steps):
    res = {"plain (NCHW)": [], "channels-last (engine room)": []}
    for seed in range(seeds):   # interleaved
        res["plain (NCHW)"].append(channels_last_row(seed, steps, False)); res["channels-last (engine room)"].append(channels_last_row(seed, steps, True))
    print(f"| PPO, 4x84x84 frames, {steps} env-steps | env-steps/s per seed | mean |\n|---|---|---|")
    for k, v in res.items(): print(f"| {k} | {', '.join(f'{x:.1f}' for x in v)} | {np.mean(v):.1f} |")
    print(f"\nspeed-up of the fast path: {np.mean(res['channels-last (engine room)']) / np.mean(res['plain (NCHW)']):.2f}x "
          f"(per seed: {', '.join(f'{f / p:.2f}' for p, f in zip(res['plain (NCHW)'], res['channels-last (engine room)']))})")

def main():
    p = argparse.ArgumentParser(); p.add_argument("--seeds", type=int, default=3); p.add_argument("--steps", type=int, default=None)
    p.add_argument("--minatar", default=None, help="comma-separated MinAtar games, e.g. Breakout,SpaceInvaders")
    p.add_argument("--channels-last", action="store_true", help="the engine room's channels-last row (4x84x84 frames)")
    a = p.parse_args(); torch.set_num_threads(1); warnings.simplefilter("ignore")
    if a.channels_last: return main_channels_last(a.seeds, a.steps or 1024)
    if a.minatar: return main_minatar(a.minatar.split(","), a.seeds, a.steps or 40_960)
    a.steps = a.steps or 6144
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
