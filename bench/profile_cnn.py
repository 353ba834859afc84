"""Where PPO's time goes with the Nature CNN, and what the candidate speed-ups of the CNN pass are worth on this CPU.

Usage:  python bench/profile_cnn.py [--repeats 3] [--steps 4096] [--frames 36|84]
Part 1 (breakdown): loomnb PPO on PixelIdentity-v0 (1x36x36 uint8; --frames 84: 4x84x84 frames of the same toy) with
bench_pixels.py's hyperparameters; per phase seconds summed over the run, from the Trainer's own metrics
(time/env_step, time/inference, time/gae, time/update), then the update split into uint8->float, forward, loss,
backward, grad clip and Adam step by replaying its minibatches once with timers.
Part 2 (candidates): one minibatch step (forward + backward + Adam) of CnnActorCritic on a [64, C, H, W] uint8 batch,
plain float32 vs channels_last vs bfloat16 autocast vs both, interleaved, --repeats rounds of 50 steps each; median
ms per step. Torch threads 1. Prints markdown tables.
"""
import argparse, time, warnings, statistics
import numpy as np, torch
from gymnasium import spaces
from loomnb.train.learner import Trainer
from loomnb.agents.cnn import CnnActorCritic
from loomnb.envs.registry import make
from loomnb.envs.pixels import ImagePreprocess
from loomnb.envs.wrappers import FrameStack
import loomnb.algos.ppo

HP = dict(n_envs=8, n_steps=16, batch_size=64, n_epochs=4, learning_rate=1e-3, clip_eps=0.2, gae_lambda=0.95, gamma=0.99,
          ent_coef=0.0, anneal_lr=False, clip_vloss=False, adam_eps=1e-5)

def env_for(frames, seed=0):
    if frames == 36: return make("PixelIdentity-v0", num_envs=8, seed=seed)
    return make("PixelIdentity-v0", num_envs=8, seed=seed, size=84)   # 1x84x84; stacked to 4 channels below

def breakdown(steps, frames):
    env = env_for(frames)
    if frames == 84: env = FrameStack(env, 4)
    tr = Trainer("ppo", env, seed=0, config=HP)
    tot = {"time/env_step": 0.0, "time/inference": 0.0, "time/gae": 0.0, "time/update": 0.0}
    # the Trainer returns the last metrics only: run iteration by iteration and add them up
    n_iter = steps // (HP["n_envs"] * HP["n_steps"]); wall = 0.0
    for i in range(n_iter):   # train(total) runs until `total` env-steps: one iteration per call
        t = time.perf_counter(); m = tr.train((i + 1) * HP["n_envs"] * HP["n_steps"]); wall += time.perf_counter() - t
        for k in tot: tot[k] += float(m.get(k, 0.0))
    return tr, tot, wall, n_iter * HP["n_envs"] * HP["n_steps"]

def split_update(tr, reps=4):
    "Replay minibatches of the last rollout with timers around each part of one PPO step."
    pol, opt = tr.algo.policy, tr.algo.optimizer
    obs = torch.as_tensor(np.asarray(tr.algo.buffer.obs).reshape(-1, *tr.algo.buffer.obs_shape))
    acts = torch.as_tensor(np.asarray(tr.algo.buffer.actions).reshape(-1)).long()
    parts = {"uint8->float": 0.0, "forward": 0.0, "loss": 0.0, "backward": 0.0, "clip": 0.0, "adam": 0.0}
    enc = pol.encoder
    for _ in range(reps):
        for i in range(0, len(obs) - 63, 64):
            x, a = obs[i:i + 64], acts[i:i + 64]
            t0 = time.perf_counter(); xf = enc.images(x); t1 = time.perf_counter()
            z = enc.linear(enc.convs(xf)); logits = pol.pi_head(z); v = pol.v_head(z).squeeze(-1); t2 = time.perf_counter()
            lp = logits.log_softmax(-1).gather(-1, a[:, None]).squeeze(-1); loss = -(lp * torch.randn_like(lp)).mean() + 0.5 * v.pow(2).mean()
            t3 = time.perf_counter(); opt.zero_grad(set_to_none=True); loss.backward(); t4 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(list(pol.parameters()), 0.5, foreach=True); t5 = time.perf_counter(); opt.step(); t6 = time.perf_counter()
            for k, d in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)): parts[k] += d
    s = sum(parts.values()); return {k: v / s for k, v in parts.items()}

def candidates(shape, repeats, n=50):
    sp = spaces.Box(0, 255, shape, np.uint8)
    x = torch.randint(0, 256, (64, *shape), dtype=torch.uint8); a = torch.randint(0, 4, (64,))
    def build(cl, bf):
        torch.manual_seed(0); pol = CnnActorCritic(sp, spaces.Discrete(4))
        if cl: pol = pol.to(memory_format=torch.channels_last)
        opt = torch.optim.Adam(pol.parameters(), 1e-3, eps=1e-5)
        xx = x.contiguous(memory_format=torch.channels_last) if cl else x
        def step():
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf):
                lp, ent, v = pol.evaluate(xx, a)
                loss = -(lp.float()).mean() + 0.5 * v.float().pow(2).mean()
            opt.zero_grad(set_to_none=True); loss.backward(); torch.nn.utils.clip_grad_norm_(list(pol.parameters()), 0.5, foreach=True); opt.step()
        return step
    kinds = {"float32 (plain)": (False, False), "channels_last": (True, False), "bfloat16 autocast": (False, True), "channels_last + bfloat16": (True, True)}
    steps = {k: build(*v) for k, v in kinds.items()}
    for s in steps.values(): s(); s()   # warm up (oneDNN primitives)
    ms = {k: [] for k in kinds}
    for _ in range(repeats):   # interleaved
        for k, s in steps.items():
            t = time.perf_counter()
            for _ in range(n): s()
            ms[k].append((time.perf_counter() - t) / n * 1e3)
    return ms

def main():
    p = argparse.ArgumentParser(); p.add_argument("--repeats", type=int, default=3); p.add_argument("--steps", type=int, default=4096)
    p.add_argument("--frames", type=int, default=36, choices=(36, 84))
    a = p.parse_args(); torch.set_num_threads(1); warnings.simplefilter("ignore")
    tr, tot, wall, n = breakdown(a.steps, a.frames)
    print(f"PPO + Nature CNN on PixelIdentity ({'1x36x36' if a.frames == 36 else '4x84x84'}), {n} env-steps, {wall:.1f} s wall, {n / wall:.0f} env-steps/s\n")
    print("| phase | seconds | share of wall |\n|---|---|---|")
    for k, v in tot.items(): print(f"| {k} | {v:.2f} | {v / wall:.0%} |")
    print(f"| other (loop, logging) | {wall - sum(tot.values()):.2f} | {(wall - sum(tot.values())) / wall:.0%} |")
    print("\nUpdate split (replayed minibatches of 64):\n\n| part | share of the update step |\n|---|---|")
    for k, v in split_update(tr).items(): print(f"| {k} | {v:.0%} |")
    shape = (1, 36, 36) if a.frames == 36 else (4, 84, 84)
    ms = candidates(shape, a.repeats)
    base = statistics.median(ms["float32 (plain)"])
    print(f"\nOne minibatch step (64 x {'x'.join(map(str, shape))}, forward + backward + Adam), {a.repeats} interleaved rounds of 50:\n")
    print("| variant | ms per step (rounds) | median | speed-up vs plain |\n|---|---|---|---|")
    for k, v in ms.items(): print(f"| {k} | {', '.join(f'{x:.2f}' for x in v)} | {statistics.median(v):.2f} | {base / statistics.median(v):.2f}x |")

if __name__ == "__main__": main()
