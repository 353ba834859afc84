"""loomnb TRPO vs sb3-contrib TRPO: final return on CartPole-v1 and Acrobot-v1 at the same budget and hyperparameters.

Usage:  python bench/bench_trpo.py [--seeds 3] [--steps 100000] [--envs CartPole-v1,Acrobot-v1]   (about 10-20 minutes)
Needs:  pip install sb3-contrib
Both sides: 8 envs x 256 steps per update, target KL 0.01, 15 CG steps, damping 0.1, line search 0.8 x 10, critic Adam
1e-3, 10 critic epochs of minibatch 128, GAE 0.95, gamma 0.99, normalised advantages, 64-64 tanh MLPs (sb3-contrib's
defaults, vectorised). Score: mean of 10 deterministic evaluation episodes after training (sb3-contrib on its
DummyVecEnv over gymnasium's env, loomnb on its native env: the same dynamics). Prints per-seed scores, the mean and a
95% t-interval per side, and whether loomnb's mean lies inside sb3-contrib's interval. Torch threads 1.
"""
import argparse, time, warnings, math
import numpy as np, torch
from loomnb.train.learner import Trainer
from loomnb.eval import evaluate
import loomnb.algos.trpo

HP = dict(n_envs=8, n_steps=256, target_kl=0.01, cg_iters=15, cg_damping=0.1, line_search_shrink=0.8, line_search_max_iter=10,
          learning_rate=1e-3, vf_epochs=10, vf_batch_size=128, gae_lambda=0.95, gamma=0.99)
T95 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 8: 2.365, 10: 2.262}

def run_loomnb(env_id, seed, steps):
    tr = Trainer("trpo", env=env_id, seed=seed, config=HP); tr.train(steps)
    return evaluate(tr, env_id, n_episodes=10, seed=10_000 + seed).mean

def run_sb3(env_id, seed, steps):
    from sb3_contrib import TRPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    m = TRPO("MlpPolicy", make_vec_env(env_id, n_envs=8, seed=seed), n_steps=256, batch_size=128, gamma=0.99, gae_lambda=0.95,
             cg_max_steps=15, cg_damping=0.1, line_search_shrinking_factor=0.8, line_search_max_iter=10, n_critic_updates=10,
             learning_rate=1e-3, target_kl=0.01, normalize_advantage=True, seed=seed, device="cpu")
    m.learn(steps)
    return evaluate_policy(m, make_vec_env(env_id, n_envs=1, seed=10_000 + seed), n_eval_episodes=10, deterministic=True)[0]

def ci(xs):
    xs = np.asarray(xs, float); n = len(xs); m = xs.mean()
    h = T95.get(n, 1.96) * xs.std(ddof=1) / math.sqrt(n) if n > 1 else float("nan")
    return m, m - h, m + h

def main():
    p = argparse.ArgumentParser(); p.add_argument("--seeds", type=int, default=3); p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--envs", default="CartPole-v1,Acrobot-v1"); a = p.parse_args()
    torch.set_num_threads(1); warnings.simplefilter("ignore")
    print(f"| env | steps | side | per-seed eval return | mean [95% CI] | wall s/run |\n|---|---|---|---|---|---|")
    for env_id in a.envs.split(","):
        res, wall = {"loomnb": [], "sb3-contrib": []}, {"loomnb": 0.0, "sb3-contrib": 0.0}
        for seed in range(a.seeds):
            for side, f in (("sb3-contrib", run_sb3), ("loomnb", run_loomnb)):
                t0 = time.perf_counter(); res[side].append(float(f(env_id, seed, a.steps))); wall[side] += time.perf_counter() - t0
        for side in ("sb3-contrib", "loomnb"):
            m, lo, hi = ci(res[side])
            print(f"| {env_id} | {a.steps} | {side} | {', '.join(f'{x:.1f}' for x in res[side])} | {m:.1f} [{lo:.1f}, {hi:.1f}] | "
                  f"{wall[side] / a.seeds:.0f} |", flush=True)
        m, (_, lo, hi) = ci(res["loomnb"])[0], ci(res["sb3-contrib"])
        print(f"| {env_id} | | loomnb mean inside sb3-contrib's CI | {lo <= m <= hi} | | |", flush=True)

if __name__ == "__main__": main()
