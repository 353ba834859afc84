"""Benchmark loomnb.ops kernels against rlox (and a memory-copy floor), in one process, alternating, median of repeats.

Usage:  python bench/bench_ops.py [--repeats 15] [--only gae,vtrace,grpo,kl,small,stats]
Times are wall time, median over repeats, and, in brackets, the ratio of the best repeats (less sensitive to other load
on a shared machine). The CPU columns give CPU time per call: the calling thread's for the single-threaded loomnb kernels and the copy, the
whole process's (all threads) for rlox, which runs some kernels on a thread pool; other jobs on a shared machine disturb
CPU time far less than wall time.
The copy floor is np.copyto of a buffer half the size of the bytes the GAE kernel reads plus writes (so the copy itself
reads and writes exactly that many bytes).
Needs:  pip install rlox   (the `bench` extra)
Layouts: loomnb is time-major [T, N]; rlox's batched GAE wants flat env-major arrays, so it is timed on its own layout
(the transpose is prepared outside the timed region). rlox.compute_vtrace is 1-D only: it is timed on the whole
env-major rollout flattened into one array (one call, the most favourable setting for it; it ignores episode ends).
"""
import argparse, platform, statistics, time, os
import numpy as np
import numba
from loomnb.ops.returns import gae, gae_kernel
from loomnb.ops._shared import random_rollout
from loomnb.ops.vtrace import vtrace, vtrace_kernel
from loomnb.ops.llm import group_advantages, token_kl
from loomnb.ops.stats import RunningMeanStd

try: import rlox
except ImportError: rlox = None

NOTES = []

def _per_call(f, budget=0.02, clock=time.perf_counter):
    "Seconds per call of `f` (wall time by default), from a loop sized to take about `budget` seconds."
    n = 1
    while True:
        t0 = clock()
        for _ in range(n): f()
        t = clock() - t0
        if t >= budget: return t / n
        n = n * 2 if t < budget / 8 else int(n * budget / t) + 1

def _per_call_wall_cpu(f, cpu_clock, budget=0.02):
    "(wall, CPU) seconds per call of `f`, both from one loop sized to take about `budget` seconds of wall time."
    n = 1
    while True:
        t0, c0 = time.perf_counter(), cpu_clock()
        for _ in range(n): f()
        t, c = time.perf_counter() - t0, cpu_clock() - c0
        if t >= budget: return t / n, c / n
        n = n * 2 if t < budget / 8 else int(n * budget / t) + 1

def compare(fns, repeats, threaded=("rlox",)):
    """Per-call seconds of each named function, alternating between them within every repeat: (median wall, best wall,
    median CPU, best CPU). CPU is the calling thread's CPU time for single-threaded functions (loomnb, the copy) and the
    whole process's CPU time for the functions named in `threaded` (rlox runs some kernels on a thread pool, and is
    charged for every core it keeps busy). A short pause after each function lets a peer's worker threads go idle, so
    their spinning is not counted against the next function. CPU time is far less disturbed than wall time by other
    jobs on a shared machine."""
    for f in fns.values(): f()  # warm up / compile
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            times[k].append(_per_call_wall_cpu(f, time.process_time if k in threaded else time.thread_time))
            time.sleep(0.005)
    return {k: (statistics.median(w for w, _ in v), min(w for w, _ in v), statistics.median(c for _, c in v), min(c for _, c in v))
            for k, v in times.items()}

def _fmt(s): return f"{s * 1e6:9.1f}"
def _load(): return " ".join(f"{x:.2f}" for x in os.getloadavg())

def bench_gae(rows, repeats):
    for T, N in ((2048, 8), (2048, 64), (128, 1024)):
        for dt in (np.float32, np.float64):
            r, v, te, tr, fv, lv = random_rollout(np.random.default_rng(0), T, N, dt, 0.01, 0.01)
            done = (te | tr)
            isz = np.dtype(dt).itemsize
            moved = T * N * (5 * isz + 2)  # read r, v, final_values, term, trunc; write adv, ret
            src, dst = np.ones(moved // 2, np.uint8), np.empty(moved // 2, np.uint8)  # a copy moves 2x its size
            fns = {"loomnb": lambda: gae(r, v, te, tr, fv, lv, 0.99, 0.95),
                   "copy floor": lambda: np.copyto(dst, src)}
            if rlox is not None:
                em = [np.ascontiguousarray(x.T).reshape(-1) for x in (r, v, done.astype(dt))]
                if dt == np.float32: fns["rlox"] = lambda: rlox.compute_gae_batched_f32(em[0], em[1], em[2], lv, T, 0.99, 0.95)
                else: fns["rlox"] = lambda: rlox.compute_gae_batched(em[0], em[1], em[2], lv, T, 0.99, 0.95)
            m = compare(fns, repeats)
            rows.append((f"GAE [{T}, {N}] {np.dtype(dt).name}", m["loomnb"], m.get("rlox"), m["copy floor"],
                         "rlox.compute_gae_batched" + ("_f32" if dt == np.float32 else "")))

def bench_vtrace(rows, repeats):
    for T, N in ((1024, 64), (128, 1024)):
        dt = np.float32
        r, v, te, tr, fv, lv = random_rollout(np.random.default_rng(1), T, N, dt, 0.01, 0.01)
        rng = np.random.default_rng(2)
        bl, tl = (rng.normal(-1, 0.3, (T, N)).astype(dt) for _ in range(2))
        fns = {"loomnb": lambda: vtrace(bl, tl, r, v, te, tr, fv, lv, 0.99, 1.0, 1.0)}
        if rlox is not None:
            em = [np.ascontiguousarray(x.T).reshape(-1).astype(dt) for x in (tl - bl, r, v, te | tr)]
            fns["rlox"] = lambda: rlox.compute_vtrace(em[0], em[1], em[2], em[3], float(lv[0]), 0.99, 1.0, 1.0)
        m = compare(fns, repeats)
        rows.append((f"V-trace [{T}, {N}] float32", m["loomnb"], m.get("rlox"), None, "rlox.compute_vtrace (flat)"))

def bench_grpo(rows, repeats):
    for B, G in ((64, 8), (1024, 16)):
        r = np.random.default_rng(3).normal(size=B * G)
        fns = {"loomnb": lambda: group_advantages(r, G)}
        if rlox is not None: fns["rlox"] = lambda: rlox.compute_batch_group_advantages(r, G)
        m = compare(fns, repeats)
        rows.append((f"GRPO advantages {B}x{G} float64", m["loomnb"], m.get("rlox"), None, "rlox.compute_batch_group_advantages"))

def bench_kl(rows, repeats):
    for B, T in ((8, 512), (64, 2048)):
        rng = np.random.default_rng(4)
        lp, rp = (rng.normal(-2, 0.5, (B, T)).astype(np.float32) for _ in range(2))
        flp, frp = lp.reshape(-1), rp.reshape(-1)
        fns = {"loomnb": lambda: token_kl(lp, rp, None, "k3", "sum")}
        if rlox is not None: fns["rlox"] = lambda: rlox.compute_batch_token_kl_schulman_f32(flp, frp, T)
        m = compare(fns, repeats)
        rows.append((f"token KL k3 [{B}, {T}] float32", m["loomnb"], m.get("rlox"), None, "rlox.compute_batch_token_kl_schulman_f32"))

def bench_small(rows, repeats):
    r, v, te, tr, fv, lv = random_rollout(np.random.default_rng(5), 128, 1, np.float32)
    oa, orr = np.empty_like(r), np.empty_like(r)
    r64, v64, d64 = r[:, 0].astype(np.float64), v[:, 0].astype(np.float64), (te | tr)[:, 0].astype(np.float64)
    fns = {"loomnb": lambda: gae(r, v, te, tr, fv, lv, 0.99, 0.95),
           "raw kernel": lambda: gae_kernel(r, v, te, tr, fv, lv, 0.99, 0.95, oa, orr)}
    if rlox is not None: fns["rlox"] = lambda: rlox.compute_gae(r64, v64, d64, 0.0, 0.99, 0.95)
    r1 = [np.ascontiguousarray(x[:, 0]) for x in (r, v, te, tr, fv)]
    fns["loomnb [T]"] = lambda: gae(r1[0], r1[1], r1[2], r1[3], r1[4], 0.0, 0.99, 0.95)
    m = compare(fns, repeats)
    rows.append(("GAE small T=128, N=1 (wrapper)", m["loomnb"], m.get("rlox"), None, "rlox.compute_gae (1-D)"))
    rows.append(("GAE small [T=128] trajectory (wrapper)", m["loomnb [T]"], m.get("rlox"), None, "rlox.compute_gae (1-D)"))
    rows.append(("GAE small T=128, N=1 (raw gae_kernel)", m["raw kernel"], m.get("rlox"), None, "rlox.compute_gae (1-D)"))
    # 1-D V-trace (T = 1024), rlox's own 1-D call; the plain twin is the [T, N] kernel on a [T, 1] view
    g, T = np.random.default_rng(7), 1024
    vr, vv, fvv = g.random(T, dtype=np.float32), g.random(T, dtype=np.float32), np.zeros(T, np.float32)
    bl, tl = (g.normal(-1, 0.3, T).astype(np.float32) for _ in range(2))
    vte, vtr = g.random(T) < 0.01, np.zeros(T, bool)
    lr, dn = tl - bl, vte.astype(np.float32)
    k2 = [x.reshape(T, 1) for x in (bl, tl, vr, vv, vte, vtr, fvv)]; lv1 = np.full(1, 0.5, np.float32)
    ov, op = np.empty((T, 1), np.float32), np.empty((T, 1), np.float32)
    fvt = {"loomnb": lambda: vtrace(bl, tl, vr, vv, vte, vtr, fvv, 0.5, 0.99, 1.0, 1.0),
          "plain twin": lambda: vtrace_kernel(*k2, lv1, 0.99, 1.0, 1.0, ov, op)}
    if rlox is not None: fvt["rlox"] = lambda: rlox.compute_vtrace(lr, vr, vv, dn, 0.5, 0.99, 1.0, 1.0)
    m = compare(fvt, repeats)
    rows.append(("V-trace small [T=1024] float32 (wrapper)", m["loomnb"], m.get("rlox"), None, "rlox.compute_vtrace (1-D)"))
    rows.append(("V-trace small [T=1024] float32 (plain twin: vtrace_kernel on [T, 1])", m["plain twin"], m.get("rlox"), None,
                 "rlox.compute_vtrace (1-D)"))
    # loomnb is single-threaded: its thread CPU time is its own cost, much less disturbed by other load than wall time
    cpu = {k: min(_per_call(fns[k], clock=time.thread_time) for _ in range(repeats)) for k in ("loomnb", "loomnb [T]", "raw kernel")}
    NOTES.append("GAE small-input CPU time per call (thread time, best of {} repeats): wrapper [128, 1] {:.2f} us, "
                 "wrapper [128] {:.2f} us, raw gae_kernel {:.2f} us".format(repeats, *(cpu[k] * 1e6 for k in cpu)))

def bench_stats(rows, repeats):
    for B, D in ((64, 17), (4096, 64)):
        x = np.random.default_rng(6).normal(size=(B, D))
        ours, flat = RunningMeanStd((D,)), x.reshape(-1)
        fns = {"loomnb": lambda: ours.update(x)}
        if rlox is not None:
            theirs = rlox.RunningStatsVec(D)
            fns["rlox"] = lambda: theirs.batch_update(flat, B)
        m = compare(fns, repeats)
        rows.append((f"RunningMeanStd.update [{B}, {D}] float64", m["loomnb"], m.get("rlox"), None, "rlox.RunningStatsVec.batch_update"))

BENCHES = dict(gae=bench_gae, vtrace=bench_vtrace, grpo=bench_grpo, kl=bench_kl, small=bench_small, stats=bench_stats)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--only", default=",".join(BENCHES))
    a = p.parse_args()
    rows, load0 = [], _load()
    for k in a.only.split(","): BENCHES[k](rows, a.repeats)
    print(f"numpy {np.__version__}, numba {numba.__version__}, rlox {getattr(rlox, '__version__', 'n/a')}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus; median of {a.repeats} alternating repeats")
    print(f"load average before: {load0}, after: {_load()}")
    print("| case | loomnb (us) | peer (us) | peer / loomnb (best) | loomnb CPU (us) | peer CPU (us) | peer / loomnb CPU (best) "
          "| copy floor (us) | loomnb / floor (best) | floor CPU (us) | loomnb / floor CPU (best) | peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    r2 = lambda a, b: f"{a[0] / b[0]:.2f}x ({a[1] / b[1]:.2f}x)"
    for name, ours, peer, floor, pname in rows:
        pw = f"{_fmt(peer[0])} | {r2(peer, ours)}" if peer else "n/a | n/a"
        pc = f"{_fmt(peer[2])} | {r2(peer[2:], ours[2:])}" if peer else "n/a | n/a"
        fl = f"{_fmt(floor[0])} | {r2(ours, floor)} | {_fmt(floor[2])} | {r2(ours[2:], floor[2:])}" if floor else " | | | "
        print(f"| {name} | {_fmt(ours[0])} | {pw} | {_fmt(ours[2])} | {pc} | {fl} | {pname} |")
    for note in NOTES: print("\n" + note)

if __name__ == "__main__": main()
