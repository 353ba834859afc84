"""PPO with the Nature-CNN policy on pixels: loomnb vs SB3's PPO CnnPolicy, on the same env and hyperparameters.

Usage:  python bench/bench_pixels.py [--seeds 3] [--steps 6144]     (about 2-4 minutes)
        python bench/bench_pixels.py --minatar Breakout,SpaceInvaders [--seeds 3] [--steps 40960]   (about 10 minutes)
        python bench/bench_pixels.py --channels-last [--seeds 3] [--steps 1024]   (the engine room's row, about 3 minutes)
        python bench/bench_pixels.py --minatar-native [Breakout,SpaceInvaders] [--seeds 3] [--steps 40960]   (native vs minatar, about 4 minutes a game)
        python bench/bench_pixels.py --minatar-envs [Breakout,SpaceInvaders]   (env-steps/s of the native games vs minatar at N = 1, 64, 1024)
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

--minatar-native: MinAtar Breakout (default) or Space Invaders, three sides interleaved per seed, the --minatar hyperparameters and net:
loomnb PPO on the native Numba game (MinAtarBreakout-v1, loomnb.envs.minatar_breakout; MinAtarSpaceInvaders-v1,
loomnb.envs.minatar_space_invaders); SB3 PPO CnnPolicy on minatar's Python env as an SB3 user runs it
(make_vec_env("MinAtar/<Game>-v1", 8): DummyVecEnv of minatar's
gymnasium env, channels-last bool frames, the MinAtar net permuting them to channels first); SB3 PPO CnnPolicy on the
native env through loomnb.envs.interop.SB3VecEnv (the algorithm-only gap). Each side is scored on the env it trained
on (20 deterministic episodes capped at 10,000 steps, seed 1000 + seed; the native env equals minatar given the same
random draws).
--minatar-envs: env-steps/s of `step` with random actions: the native game, minatar's Environment (act + state
per copy, the least a vector wrapper does) and loomnb.envs.minatar.make_minatar, at N = 1, 64, 1024 copies.
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

def _minatar_net(channels_last: bool):
    "SB3 features extractor: the MinAtar net (as loomnb.agents.cnn.MinAtarCNN), on channels-first frames or permuting channels-last ones."
    import torch.nn as nn
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    class MinAtarNet(BaseFeaturesExtractor):
        def __init__(self, space, features_dim=128):
            super().__init__(space, features_dim); h, w, c = space.shape if channels_last else (space.shape[1], space.shape[2], space.shape[0])
            self.net = nn.Sequential(nn.Conv2d(c, 16, 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * (h - 2) * (w - 2), features_dim), nn.ReLU())
        def forward(self, x): return self.net(x.permute(0, 3, 1, 2) if channels_last else x)
    return MinAtarNet

def _sb3_ppo(env, seed, channels_last):
    from stable_baselines3 import PPO
    return PPO("CnnPolicy", env, n_steps=64, batch_size=256, n_epochs=4, learning_rate=1e-3, clip_range=0.2, gae_lambda=0.95, gamma=0.99,
               ent_coef=0.01, max_grad_norm=0.5, seed=seed, device="cpu",
               policy_kwargs=dict(features_extractor_class=_minatar_net(channels_last), net_arch=[], normalize_images=False))

def _eval_gym(m, env, seed, n=20, cap=10_000):
    "Mean return of n deterministic episodes of an SB3 model on one gymnasium env (episodes capped at `cap` steps)."
    rets = []
    for k in range(n):
        obs, _ = env.reset(seed=seed + k); ret, done, t = 0.0, False, 0
        while not done and t < cap:
            obs, r, te, tr, _ = env.step(int(m.predict(obs[None], deterministic=True)[0][0])); ret += float(r); done = te or tr; t += 1
        rets.append(ret)
    return float(np.mean(rets))

NATIVE = {"Breakout": "MinAtarBreakout-v1", "SpaceInvaders": "MinAtarSpaceInvaders-v1"}
MINIMAL = {"Breakout": (0, 1, 3), "SpaceInvaders": (0, 1, 3, 5)}

def native_loomnb(game, seed, steps):
    tr = Trainer("ppo", make(NATIVE[game], 8, seed=seed), seed=seed, config=dict(**MHP, anneal_lr=False, clip_vloss=False, adam_eps=1e-5))
    assert type(tr.algo.policy.encoder).__name__ == "MinAtarCNN"
    t0 = time.perf_counter(); tr.train(steps); sps = steps / (time.perf_counter() - t0)
    return evaluate(tr, make(NATIVE[game], 1, seed=1_000 + seed, max_episode_steps=10_000), n_episodes=20, seed=1_000 + seed).mean, sps

def native_sb3_minatar(game, seed, steps):
    import gymnasium as gym, minatar.gym
    from stable_baselines3.common.env_util import make_vec_env
    minatar.gym.register_envs()
    m = _sb3_ppo(make_vec_env(f"MinAtar/{game}-v1", n_envs=8, seed=seed), seed, True)
    t0 = time.perf_counter(); m.learn(steps); sps = steps / (time.perf_counter() - t0)
    return _eval_gym(m, gym.make(f"MinAtar/{game}-v1"), 1_000 + seed), sps

def native_sb3_native(game, seed, steps):
    m = _sb3_ppo(SB3VecEnv(make(NATIVE[game], 8, seed=seed)), seed, False)
    t0 = time.perf_counter(); m.learn(steps); sps = steps / (time.perf_counter() - t0)
    return _eval_sb3(m, make(NATIVE[game], 1, seed=1_000 + seed, max_episode_steps=10_000)), sps

def main_minatar_native(game, seeds, steps):
    sides = {"SB3 PPO CnnPolicy on minatar (DummyVecEnv)": native_sb3_minatar, "SB3 PPO CnnPolicy on the native env (SB3VecEnv)": native_sb3_native,
             "loomnb PPO (MinAtarCNN) on the native env": native_loomnb}
    res = {k: [] for k in sides}
    for seed in range(seeds):   # interleaved
        for k, f in sides.items(): res[k].append(f(game, seed, steps))
        print(f"# seed {seed}: " + ", ".join(f"{k} {v[-1][0]:.2f} @ {v[-1][1]:.0f}/s" for k, v in res.items()), flush=True)
    print(f"\n{game}, {steps} env-steps per run\n\n| side | eval return per seed | mean ± std | env-steps/s per seed | mean env-steps/s |\n|---|---|---|---|---|")
    for k, v in res.items():
        r, s = [x[0] for x in v], [x[1] for x in v]
        print(f"| {k} | {', '.join(f'{x:.2f}' for x in r)} | {np.mean(r):.2f} ± {np.std(r):.2f} | {', '.join(f'{x:.0f}' for x in s)} | {np.mean(s):.0f} |")
    b = {k: np.mean([x[1] for x in v]) for k, v in res.items()}; a, sm, sn = b.values()
    per = [l[1] / m[1] for l, m in zip(res["loomnb PPO (MinAtarCNN) on the native env"], res["SB3 PPO CnnPolicy on minatar (DummyVecEnv)"])]
    print(f"\nloomnb / SB3-on-minatar: {sn / a:.2f}x (per seed {', '.join(f'{x:.2f}' for x in per)}; target 1.5x: {'met' if sn / a >= 1.5 else 'not met'}); "
          f"SB3-on-native / SB3-on-minatar: {sm / a:.2f}x; loomnb / SB3-on-native: {sn / sm:.2f}x", flush=True)

def main_minatar_envs(game, sizes=(1, 64, 1024), budget=1.5):
    "env-steps/s of the native game, minatar's Environment (act + state per copy) and make_minatar, random actions."
    from minatar import Environment
    from loomnb.envs.minatar import make_minatar
    rng = np.random.default_rng(0)
    def rate(step, n):
        step(); k, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < budget: step(); k += 1
        return k * n / (time.perf_counter() - t0)
    mods, amap = {"Breakout": "breakout", "SpaceInvaders": "space_invaders"}, MINIMAL[game]
    print(f"\n{game}\n\n| N copies | native {game} | minatar (act + state) | make_minatar (loomnb wrapper) | native / minatar |\n|---:|---:|---:|---:|---:|")
    for n in sizes:
        nat = make(NATIVE[game], n, seed=0); nat.reset(); acts = [rng.integers(0, len(amap), n) for _ in range(64)]; i = [0]
        def s_nat(): i[0] += 1; nat.step(acts[i[0] % 64])
        games = [Environment(mods[game]) for _ in range(n)]
        for k, g in enumerate(games): g.seed(k); g.reset()
        def s_min():
            for g, a in zip(games, acts[i[0] % 64]):
                _, done = g.act(amap[a]); g.state()
                if done: g.reset()
            i[0] += 1
        wr = make_minatar(game, n, seed=0); wr.reset()
        def s_wr(): i[0] += 1; wr.step(acts[i[0] % 64])
        a, b, c = rate(s_nat, n), rate(s_min, n), rate(s_wr, n)
        print(f"| {n} | {a:,.0f} | {b:,.0f} | {c:,.0f} | {a / b:,.0f}x |", flush=True)

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
    p.add_argument("--minatar-native", nargs="?", const="Breakout", default=None, help="games (Breakout,SpaceInvaders): loomnb PPO on the native env vs SB3 on minatar and on the native env")
    p.add_argument("--minatar-envs", nargs="?", const="Breakout", default=None, help="games: env-steps/s of the native env vs minatar at N = 1, 64, 1024")
    a = p.parse_args(); torch.set_num_threads(1); warnings.simplefilter("ignore")
    if a.minatar_envs: return [main_minatar_envs(g) for g in a.minatar_envs.split(",")]
    if a.minatar_native: return [main_minatar_native(g, a.seeds, a.steps or 40_960) for g in a.minatar_native.split(",")]
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
