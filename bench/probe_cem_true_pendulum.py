"""CEM planning with Pendulum-v1's exact dynamics (no learned model): does a planner setting handle a start at all?

PETS's planner (`loomnb.algos.pets.cem_update`, the same warm start: the previous plan shifted, zeros appended; the std
reset to `std` at every plan) plays 200-step episodes from given starts, scoring candidates with the true Pendulum
dynamics and reward (g = 10, m = l = 1, dt = 0.05, |thdot| <= 8, |u| <= 2). ``corr`` > 0 draws the CEM noise as an
AR(1) process along the horizon (eps_h = corr eps_{h-1} + sqrt(1 - corr^2) n_h: the same marginal std, temporally
correlated candidates); ``beta`` > 0 draws it as PETS's coloured noise (`colored_noise`, power spectrum 1/f^beta along
the horizon, `PETSConfig.noise_beta`); the other keys are `PETSConfig`'s planner fields (H = horizon,
pop = population, el = elites, it = cem_iterations, std = init_std, alpha = cem_alpha).

Usage (starts of the selection probe's envs, seeds 20_000 + s + i for selection seeds s = 100..; never the evaluation starts
of seeds 0-4, `bench_model_based.evaluation_starts()`):
    nice -n 10 python bench/probe_cem_true_pendulum.py "base;corr=0.9;H=40,corr=0.8" --starts "20102,20104,20111,20108,20110"
"""
import argparse, math, os, sys, time
import numpy as np
import torch
from loomnb.algos.pets import cem_update, colored_noise, pendulum_reward
from loomnb.envs.registry import make

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_model_based import _kv, evaluation_starts   # 'key=value,key=value' -> dict ('base': {}); the evaluation starts of seeds 0-4


def norm(th): return ((th + math.pi) % (2 * math.pi)) - math.pi


def objective_from(th0, w0):
    "Candidates [1, pop, H, 1] (normalised) -> their H-step Pendulum returns from (th0, w0) (PETS's known reward)."
    def f(acts):
        u = 2 * acts[..., 0]; th = torch.full(u.shape[:2], th0); w = torch.full(u.shape[:2], w0); R = 0
        for h in range(u.shape[2]):
            R = R + pendulum_reward(torch.stack([torch.cos(th), torch.sin(th), w], -1), u[..., h, None])
            w = (w + (15 * torch.sin(th) + 3 * u[..., h]) * 0.05).clamp(-8, 8); th = th + w * 0.05
        return R
    return f


def cem(obj, mean, pop, el, it, std0, alpha, g, corr, beta):
    std = torch.full_like(mean, std0)
    for _ in range(it):
        eps = colored_noise((mean.shape[0], pop, *mean.shape[1:]), beta, g)   # beta = 0: torch.randn
        for h in range(1, eps.shape[2] if corr else 1):
            eps[:, :, h] = corr * eps[:, :, h - 1] + math.sqrt(1 - corr ** 2) * eps[:, :, h]
        s = (mean[:, None] + std[:, None] * eps).clamp(-1, 1)
        mean, std = cem_update(mean, std, s, obj(s), el, alpha)
    return mean


def episode(th, w, H=25, pop=100, el=10, it=3, std=0.5, alpha=0.1, corr=0.0, beta=0.0, seed=0):
    g = torch.Generator().manual_seed(seed); prev = None; R = 0.0
    for t in range(200):
        mean = torch.zeros(1, H, 1) if prev is None else torch.cat([prev[:, 1:], torch.zeros(1, 1, 1)], 1)
        prev = cem(objective_from(th, w), mean, pop, el, it, std, alpha, g, corr, beta)
        u = 2 * float(prev[0, 0, 0]); R -= norm(th) ** 2 + 0.1 * w ** 2 + 0.001 * u ** 2
        w = min(max(w + (15 * math.sin(th) + 3 * u) * 0.05, -8), 8); th = th + w * 0.05
    return R


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("settings", help="';'-separated planner settings, each 'key=value,key=value' ('base': the defaults), e.g. 'base;corr=0.9'")
    p.add_argument("--starts", default="20102,20104,20111,20108,20110", help="env seeds whose reset states are the starts")
    a = p.parse_args()
    torch.set_num_threads(1)
    seeds = [int(x) for x in a.starts.split(",")]
    if set(seeds) & evaluation_starts(): p.error(f"--starts: {sorted(set(seeds) & evaluation_starts())} are evaluation starts of seeds 0-4")
    starts = []
    for s in seeds:
        env = make("Pendulum-v1", num_envs=1, seed=s); o, _ = env.reset(seed=s); env.close()
        starts.append((float(np.arctan2(o[0, 1], o[0, 0])), float(o[0, 2])))
    print("starts (th, thdot):", [(s, round(th, 2), round(w, 2)) for s, (th, w) in zip(seeds, starts)])
    for kw in map(_kv, a.settings.split(";")):
        t0 = time.time()
        print(kw, [round(episode(*s, **kw)) for s in starts], f"{time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
