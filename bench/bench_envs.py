"""Env-steps/s of CartPole-v1 with random actions: loomnb's native Numba vector env against its peers.

loomnb runs in its default mode (`copy=True`: outputs a caller still holds are never overwritten) and with
`copy=False` (output slots reused unconditionally). Peers (each skipped with a note when not installed):
rlox.VecEnv, envpool, gymnasium SyncVectorEnv and gymnasium's own vectorised CartPole (`make_vec(..., vectorization_mode="vector_entry_point")`). All peers run in one process,
alternating round by round; each cell is the median over `--repeats` rounds of steps/s measured over about
`--seconds` seconds. Actions are drawn before timing, in each peer's native dtype.

    python bench/bench_envs.py                      # N = 1, 8, 64, 256
    python bench/bench_envs.py --sizes 1 256 --repeats 7 --json bench_envs.json
    RAYON_NUM_THREADS=1 python bench/bench_envs.py  # rlox with one thread (its default is one per core)
    python bench/bench_envs.py --clock cpu          # steps per CPU-second: steadier when the machine is shared
    NUMBA_THREADING_LAYER=workqueue python bench/bench_envs.py --parallel-probe --sizes 64 256 1024 4096
                                                    # serial kernel vs a prange twin (why loomnb's kernels are serial)
"""
from __future__ import annotations
import argparse, json, os, platform, sys, time, warnings
import numpy as np

warnings.filterwarnings("ignore")


def _loomnb(n, seed, copy=True):
    from loomnb.envs.registry import make
    env = make("CartPole-v1", num_envs=n, seed=seed, copy=copy)
    env.reset()
    return env.step, np.int64, env.close


def _loomnb_nocopy(n, seed): return _loomnb(n, seed, copy=False)


def _rlox(n, seed):
    import rlox
    env = rlox.VecEnv(n, seed=seed)
    env.reset_all(seed=seed)
    return env.step_all, np.uint32, lambda: None


def _envpool(n, seed):
    import envpool
    env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=seed)
    env.reset()
    return env.step, np.int32, env.close


def _gym_sync(n, seed):
    import gymnasium as gym
    env = gym.make_vec("CartPole-v1", num_envs=n, vectorization_mode="sync")
    env.reset(seed=seed)
    return env.step, np.int64, env.close


def _gym_vector(n, seed):
    import gymnasium as gym
    env = gym.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
    env.reset(seed=seed)
    return env.step, np.int64, env.close


def parallel_probe(sizes, repeats, seconds, seed=0):
    "Microseconds per kernel call of the serial CartPole step kernel and of its prange twin at each N (checked bit-identical first)."
    import numba
    from loomnb.envs.classic import CartPoleVecEnv
    rows = []
    for n in sizes:
        ser_env, par_env = CartPoleVecEnv(n, seed=seed), CartPoleVecEnv(n, seed=seed)
        ser_env.set_parallel(False); par_env.set_parallel(True); ser_env.reset(); par_env.reset()
        ser, pk = ser_env._ep, par_env._ep   # the compiled entry points `step` calls (the parallel one behind its lock)
        acts = np.random.default_rng(seed).integers(0, 2, (300, n))
        for a in acts:   # bit-identical outputs and states, autoresets included
            assert ser(ser_env._mem, a) == pk(par_env._mem, a)
        a, b = ser_env.get_state(), par_env.get_state()
        assert all(np.array_equal(a[k], b[k]) for k in ("state", "t", "ret", "rng")), f"N={n}: the prange kernel differs from the serial one"
        steps = int(max(50, min(20000, seconds / (n * 40e-9 + 1e-6))))
        acts = np.random.default_rng(seed + 1).integers(0, 2, (steps, n))
        t = {"serial": [], "prange": []}
        for r in range(repeats):
            for name, k, m in (("serial", ser, ser_env._mem), ("prange", pk, par_env._mem)):
                t0 = CLOCK()
                for a in acts: k(m, a)
                t[name].append((CLOCK() - t0) / steps * 1e6)
        rows.append((n, float(np.median(t["serial"])), float(np.median(t["prange"]))))
    print(f"numba threading layer {numba.threading_layer()}, {numba.get_num_threads()} threads; us per kernel call (median of {repeats})")
    print("| N | serial | prange | prange / serial |\n|---|---|---|---|")
    for n, a, b in rows: print(f"| {n} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    return rows


OURS = ("loomnb", "loomnb copy=False")
PEERS = {"loomnb": _loomnb, "loomnb copy=False": _loomnb_nocopy, "rlox.VecEnv": _rlox, "envpool": _envpool, "gym SyncVectorEnv": _gym_sync,
         "gym vector_entry_point": _gym_vector}


CLOCK = time.perf_counter


def time_peer(step, actions):
    "Seconds (wall, or process CPU with --clock cpu) to apply every row of `actions`."
    t0 = CLOCK()
    for a in actions: step(a)
    return max(CLOCK() - t0, 1e-9)


def bench(sizes, repeats, seconds, seed=0):
    "{peer: {N: median steps/s}} plus skipped peers."
    results, skipped = {p: {} for p in PEERS}, {}
    for n in sizes:
        envs = {}
        for name, ctor in PEERS.items():
            try: envs[name] = ctor(n, seed)
            except Exception as e:  # not installed or broken
                skipped[name] = f"{type(e).__name__}: {e}"
        rng = np.random.default_rng(seed)
        # calibrate the number of steps per round from a short warm-up so each round takes about `seconds`
        plan = {}
        for name, (step, dt, _) in envs.items():
            warm = rng.integers(0, 2, (200, n)).astype(dt)
            t = time_peer(step, warm)
            steps = int(max(20, min(200_000, seconds / max(t / 200, 1e-9))))
            plan[name] = rng.integers(0, 2, (steps, n)).astype(dt)
        samples = {name: [] for name in envs}
        for r in range(repeats):
            for name, (step, _, _) in envs.items():      # alternate peers every round
                acts = plan[name]
                samples[name].append(acts.shape[0] * n / time_peer(step, acts))
        for name, (_, _, close) in envs.items():
            results[name][n] = float(np.median(samples[name])); close()
    return {k: v for k, v in results.items() if v}, skipped


def table(results, sizes):
    "Markdown table of M steps/s per peer and N, with each loomnb mode's ratio to the fastest other peer."
    peers, ours = list(results), [o for o in OURS if o in results]
    lines = ["| N | " + " | ".join(peers) + "".join(f" | {o} / fastest peer" for o in ours) + " |", "|---" * (len(peers) + len(ours) + 1) + "|"]
    for n in sizes:
        row = [f"{results[p].get(n, float('nan')) / 1e6:.3f}" for p in peers]
        others = [results[p][n] for p in peers if p not in OURS and n in results[p]]
        ratios = [results[o][n] / max(others) if others and n in results[o] else float("nan") for o in ours]
        lines.append(f"| {n} | " + " | ".join(row) + "".join(f" | {r:.2f}x" for r in ratios) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 64, 256])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3, help="target seconds per peer per round")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: steps per second; cpu: steps per CPU-second of the whole process (all threads), "
                         "steadier on a loaded machine")
    ap.add_argument("--parallel-probe", action="store_true",
                    help="instead of the peer table: time the serial step kernel against a numba prange twin at each N")
    a = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.perf_counter if a.clock == "wall" else time.process_time
    if a.parallel_probe: return parallel_probe(a.sizes, a.repeats, a.seconds)
    res, skipped = bench(a.sizes, a.repeats, a.seconds)
    unit = "M env-steps/s" if a.clock == "wall" else "M env-steps per CPU-second"
    print(f"CartPole-v1, random actions, {unit} (median of {a.repeats} alternating rounds); "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'default')}")
    print(table(res, a.sizes)); print()
    for o in OURS:
        if o in res and 1 in res[o]: print(f"{o} N=1: {1e6 / res[o][1]:.2f} us ({a.clock}) per step() call")
    for k, v in skipped.items(): print(f"skipped {k}: {v}")
    if a.json:
        with open(a.json, "w") as f: json.dump({"results": res, "skipped": skipped, "sizes": a.sizes, "repeats": a.repeats}, f, indent=1)
    return res


if __name__ == "__main__":
    main()
