"""Why loomnb's SGD epsilon-greedy learned more slowly than Vowpal Wabbit on VW's news simulation: an ablation of VW's
default update (adaptive, normalised, importance-invariant squared-loss SGD with the prediction clipped to the labels
seen, importance weights 1/(K p) as cb_type mtr) on the stationary scenario of bench_drift.py, one part off at a time.

Usage:  python bench/bench_vw_update.py [--seeds 10] [--iterations 5000] [--log bench/results/decision_engine.md]
The update with every part on is loomnb.bandits.adaptive.adaptive_sgd_step (checked against it at the start); the
ablated variants switch one part off. Selection: epsilon-greedy (epsilon 0.2, ties at random), the seed's generator.
"""
import argparse, math, os, platform, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_drift as B
from loomnb.bandits.adaptive import adaptive_sgd_step

K = len(B.ARTICLES)


def step(w, G, N, S, bounds, x, y, weight, eta, invariant=True, normalized=True, adaptive=True, clip=True):
    "adaptive_sgd_step with switches (all on: the same step)."
    raw = float(w @ x)
    bounds[0], bounds[1] = min(bounds[0], y), max(bounds[1], y)
    p = min(max(raw, bounds[0]), bounds[1]) if clip else raw
    nz = x != 0.0
    if p == y or weight == 0.0 or not nz.any(): return y - raw
    ax = np.abs(x)
    if normalized:
        grow = nz & (ax > N); old = grow & (N > 0.0); w[old] *= (N[old] / ax[old]) ** (1 if adaptive else 2); N[grow] = ax[grow]
    xz = x[nz]
    if adaptive: G[nz] += weight * 4.0 * (p - y) ** 2 * xz * xz
    rate = (1.0 / np.sqrt(G[nz]) if adaptive else np.ones(xz.size))
    m = 1.0
    if normalized:
        rate = rate / (N[nz] if adaptive else N[nz] ** 2)
        xn = xz / N[nz]; S[0] += weight * float(xn @ xn); S[1] += weight
        m = math.sqrt(S[1] / S[0]) if adaptive else S[1] / S[0]
    q = m * float(rate @ (xz * xz)); s = eta * weight
    u = (y - p) * -math.expm1(-2.0 * s * q) / q if invariant and s * q >= 1e-6 else 2.0 * (y - p) * s
    w[nz] += (m * u) * rate * xz
    return y - raw


def check_against_library():
    rng = np.random.default_rng(0)
    a = [np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(2), np.zeros(2)]; b = [v.copy() for v in a]
    for _ in range(200):
        x = rng.normal(size=3) * [1.0, 10.0, 0.1]; y = float(rng.normal()); h = float(rng.exponential())
        t1 = step(*a, x, y, h, 0.5); t2 = adaptive_sgd_step(*b, x, y, h, 0.5)
        assert abs(t1 - t2) < 1e-9 and all(np.allclose(u, v) for u, v in zip(a, b))


def run(users, times, clicks, seed, eta=0.5, weighted=True, **switches):
    rng = np.random.default_rng(seed); d = 4
    W, G, N, S, R = np.zeros((K, d)), np.zeros((K, d)), np.zeros((K, d)), np.zeros((K, 2)), np.zeros((K, 2))
    X = [B.features(u, t) for u, t in ((0, 0), (0, 1), (1, 0), (1, 1))]; got = np.empty(len(users))
    for t in range(len(users)):
        x = X[2 * users[t] + times[t]]; q = W @ x
        best = q >= q.max() - 1e-12 * max(1.0, abs(q.max())); p = 0.2 / K + 0.8 * best / best.sum()
        a = int(rng.choice(K, p=p)); r = clicks[t, a]; got[t] = r
        step(W[a], G[a], N[a], S[a], R[a], x, r, 1.0 / (K * p[a]) if weighted else 1.0, eta, **switches)
    return got


VARIANTS = [("every part on, learning rate 0.5 (VW's -l), importance weights 1/(K p)", {}),
            ("without importance weights", dict(weighted=False)), ("without the invariant step", dict(invariant=False)),
            ("without normalisation", dict(normalized=False)), ("without the adaptive rate", dict(adaptive=False)),
            ("without clipping the prediction", dict(clip=False)), ("learning rate 0.1", dict(eta=0.1)),
            ("learning rate 1.0", dict(eta=1.0)),
            ("none of them: constant-step SGD, step 0.1 (contextual_bandit's)", dict(weighted=False, invariant=False, normalized=False, adaptive=False, clip=False, eta=0.05))]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=10); p.add_argument("--iterations", type=int, default=5000)
    p.add_argument("--log", default="bench/results/decision_engine.md"); args = p.parse_args()
    check_against_library(); load0 = os.getloadavg()[0]; t0 = time.time(); n = args.iterations
    rows = [f"| VW's update on the news simulation (epsilon 0.2) | cumulative CTR after {n} events (mean ± 95% CI, {args.seeds} seeds) |", "|---|---|"]
    for name, kw in VARIANTS:
        v = []
        for seed in range(args.seeds):
            users, times = B.contexts(seed, n); clicks = B.clicks_of(["get_cost"], users, times, n); v.append(run(users, times, clicks, seed, **kw).mean())
        m, h = B.mean_ci(v); rows.append(f"| {name} | {m:.3f} ± {h:.3f} |"); print(rows[-1], flush=True)
    head = [f"## Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: ablation of VW's update", "",
            f"`python bench/bench_vw_update.py {' '.join(sys.argv[1:])}`: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"load average {load0:.1f} at the start and {os.getloadavg()[0]:.1f} at the end, {time.time() - t0:.0f} s.", ""]
    text = "\n".join(head + rows) + "\n"; print(text)
    with open(args.log, "a") as f: f.write(text + "\n")


if __name__ == "__main__":
    main()
