"""Benchmark loomnb replay buffers and segment trees against rlox and cpprb, in one process, alternating, median of repeats.

Usage:  python bench/bench_buffers.py [--repeats 7] [--capacity 1000000] [--dims 4,17] [--only uniform,per,nstep,tree,tokens,mmap,small] [--markdown]
        python bench/bench_buffers.py --only small --repeats 21   # the single-transition calls alone (capacity 10^5)
        python bench/bench_buffers.py --only pushparts      # where the time of a push of 8 goes (not in the default set)
        python bench/bench_buffers.py --only push1parts     # where the time of a single push goes (not in the default set)
Needs:  pip install rlox cpprb   (the `bench` extra)

Every buffer is first filled to `capacity` transitions (so sampling touches the whole ring), prioritized buffers get the
same random priorities. Per operation the peers are timed alternately within every repeat (each timing is a loop of
about 20 ms), and the table reports the median per-call wall time and the peer/loomnb ratios (> 1: loomnb is faster)
of wall time and of this thread's CPU time (`time.thread_time`: less sensitive to other processes on a loaded machine).
update_priorities is timed twice: with the same TD errors on every call, and with new ones on every call ("new TD").
Layouts and calls per peer:
  loomnb  ReplayBuffer(cap, (d,), (a,)) .push / .push_batch (float32 arrays, bool flags) / .sample(256, rng)
          PrioritizedReplayBuffer: .sample(256, rng) (data + IS weights) / .update_priorities(idx, td)
  rlox    ReplayBuffer(cap, d, a) .push / .push_batch(flat arrays, uint8 flags) / .sample(256, seed)
          PrioritizedReplayBuffer(cap, d, a): .sample(256, seed) / .update_priorities(uint64 idx, f64 priorities)
  cpprb   ReplayBuffer / PrioritizedReplayBuffer(cap, env_dict) .add(...) / .sample(256[, beta]) / .update_priorities
"nstep" times one env step through an n-step writer (n = 3, gamma 0.99, d = 17, 6-dim actions): loomnb's NStepWriter.push for one
env (unbatched arrays) against cpprb's ReplayBuffer(Nstep=...).add of one step (rlox has no n-step buffer), and for 8 envs
(cpprb's n-step buffer takes a single env stream).
"small" times the single-transition calls on buffers of min(capacity, 10^5): ReplayBuffer.push (loomnb, rlox, cpprb), and
PrioritizedReplayBuffer.push with a priority (loomnb push(..., priority=p), rlox push(..., priority=p)), each next to its
plain twin in loomnb ("plain twin" rows: the single push without its compiled fast path, i.e. the checked NumPy
writes `push` falls back to; for the prioritized push the route before the fused call, push then update_priorities of
the slot).
"pushparts" splits a loomnb push of 8 (d=4 and 17, capacity 10^6, the ring walked as in "uniform"): the whole `push_batch`,
its dtype/ndim check alone, the call of push_rec's compiled entry point alone, the same entry point of push_rec compiled
with the Numba runtime (as before it was compiled without), and Numba's per-array unboxing cost: an empty kernel of six
float32 arrays with and without the runtime. rlox's push_batch of 8 is the reference row; "loomnb us" there is CPU time.
"tree" compares the bare loomnb segment trees (stratified sample of 256 indices with IS weights, then 256 priority updates
of the sum and min trees) with cpprb's PrioritizedReplayBuffer sample(256)+update_priorities(256), which also gathers data.
"""
import argparse, gc, os, platform, statistics, tempfile, time
import numpy as np
from loomnb.buffers.replay import ReplayBuffer
from loomnb.buffers.prioritized import PrioritizedReplayBuffer, per_sample, per_update
from loomnb.buffers.tokens import VarLenStore
from loomnb.buffers.mmap import MmapReplayBuffer
from loomnb.buffers.nstep import NStepWriter
from loomnb.ops.segment_tree import SumTree, MinTree

try: import rlox
except ImportError: rlox = None
try: import cpprb
except ImportError: cpprb = None

B = 256

def _ver(name):
    from importlib.metadata import version, PackageNotFoundError
    try: return version(name)
    except PackageNotFoundError: return None

def _per_call(f, budget=0.02):
    "(wall, thread CPU) seconds per call of `f`, from a loop sized to take about `budget` seconds of wall time."
    n = 1
    while True:
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n): f()
        t, c = time.perf_counter() - t0, time.thread_time() - c0
        if t >= budget: return t / n, c / n
        n = n * 2 if t < budget / 8 else int(n * budget / t) + 1

def compare(fns, repeats):
    "Median (wall, CPU) seconds per call of each named function, alternating between them within every repeat."
    for f in fns.values(): f()
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items(): times[k].append(_per_call(f))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}

def _data(n, d, a, seed=0):
    g = np.random.default_rng(seed)
    return (g.random((n, d), dtype=np.float32), g.random((n, a), dtype=np.float32), g.random(n, dtype=np.float32),
            g.random((n, d), dtype=np.float32), np.zeros(n, bool), np.zeros(n, bool))

def _fill(cap, d, a, ours, rl, cp, rl_single=False, rl_flag=np.uint8):
    "Fill every buffer with `cap` transitions in chunks."
    chunk = 100_000
    for s in range(0, cap, chunk):
        n = min(chunk, cap - s)
        o, act, r, no, te, tr = _data(n, d, a, seed=s)
        if ours is not None: ours.push_batch(o, act, r, no, te, tr)
        if cp is not None: cp.add(obs=o, act=act, rew=r, next_obs=no, done=te.astype(np.float32))
        if rl is not None:
            if rl_single:
                for i in range(n): rl.push(o[i], act[i], float(r[i]), False, False, no[i])
            else: rl.push_batch(o.ravel(), no.ravel(), act.ravel(), r, te.astype(rl_flag), tr.astype(rl_flag))

def _env_dict(d, a): return {"obs": {"shape": d}, "act": {"shape": a}, "rew": {}, "next_obs": {"shape": d}, "done": {}}

def bench_uniform(rows, cap, d, a, repeats):
    ours = ReplayBuffer(cap, (d,), (a,))
    rl = rlox.ReplayBuffer(cap, d, a) if rlox else None
    cp = cpprb.ReplayBuffer(cap, _env_dict(d, a)) if cpprb else None
    _fill(cap, d, a, ours, rl, cp)
    rng, seed = np.random.default_rng(0), [0]
    def rl_sample(): seed[0] += 1; rl.sample(B, seed[0])
    fns = {"loomnb": lambda: ours.sample(B, rng)}
    if rl: fns["rlox"] = rl_sample
    if cp: fns["cpprb"] = lambda: cp.sample(B)
    rows.append((f"uniform sample({B}) d={d}", compare(fns, repeats), "rlox >= 1.5x"))
    o, act, r, no, te, tr = _data(B, d, a, seed=1)
    o1, a1, no1 = o[0], act[0], no[0]
    fns = {"loomnb": lambda: ours.push(o1, a1, 0.5, no1, False, False)}
    if rl: fns["rlox"] = lambda: rl.push(o1, a1, 0.5, False, False, no1)
    if cp: fns["cpprb"] = lambda: cp.add(obs=o1, act=a1, rew=0.5, next_obs=no1, done=0.0)
    rows.append((f"push single d={d}", compare(fns, repeats), ""))
    for n in (8, 256):
        ob, ab, rb, nb, teb, trb = o[:n], act[:n], r[:n], no[:n], te[:n], tr[:n]
        teu, tru, obf, nbf, abf, ted = teb.astype(np.uint8), trb.astype(np.uint8), ob.ravel(), nb.ravel(), ab.ravel(), teb.astype(np.float32)
        fns = {"loomnb": lambda: ours.push_batch(ob, ab, rb, nb, teb, trb)}
        if rl: fns["rlox"] = lambda: rl.push_batch(obf, nbf, abf, rb, teu, tru)
        if cp: fns["cpprb"] = lambda: cp.add(obs=ob, act=ab, rew=rb, next_obs=nb, done=ted)
        rows.append((f"push batch {n} d={d}", compare(fns, repeats), "within 2x of rlox"))
    del ours, rl, cp; gc.collect()

def bench_per(rows, cap, d, a, repeats):
    ours = PrioritizedReplayBuffer(cap, (d,), (a,), alpha=0.6, beta=0.4)
    rl = rlox.PrioritizedReplayBuffer(cap, d, a, alpha=0.6, beta=0.4) if rlox else None
    cp = cpprb.PrioritizedReplayBuffer(cap, _env_dict(d, a), alpha=0.6) if cpprb else None
    _fill(cap, d, a, ours, rl, cp, rl_single=True)
    pri = np.random.default_rng(2).random(cap) + 0.01
    for s in range(0, cap, 100_000):
        ii = np.arange(s, min(s + 100_000, cap))
        ours.update_priorities(ii, priorities=pri[ii])
        if rl: rl.update_priorities(ii.astype(np.uint64), pri[ii])
        if cp: cp.update_priorities(ii, pri[ii])
    rng, seed, got = np.random.default_rng(0), [0], {}
    def o_s(): got["o"] = ours.sample(B, rng).indices
    def r_s(): seed[0] += 1; got["r"] = rl.sample(B, seed[0])["indices"]
    def c_s(): got["c"] = cp.sample(B, beta=0.4)["indexes"]
    fns = {"loomnb": o_s}
    if rl: fns["rlox"] = r_s
    if cp: fns["cpprb"] = c_s
    rows.append((f"prioritized sample({B}) d={d}", compare(fns, repeats), "both >= 3x"))
    td = np.random.default_rng(3).random(B) + 0.01
    fns = {"loomnb": lambda: ours.update_priorities(got["o"], td)}
    if rl: fns["rlox"] = lambda: rl.update_priorities(got["r"], td)
    if cp: fns["cpprb"] = lambda: cp.update_priorities(got["c"], td)
    rows.append((f"update_priorities({B}) d={d}", compare(fns, repeats), "cpprb >= 1x"))
    # the same indices with new TD errors on every call (64 arrays in turn): cpprb's trees stop walking up at a node
    # that did not change, so the repeated update above (same values every call) skips most of its tree work
    tds, k = [np.random.default_rng(10 + i).random(B) + 0.01 for i in range(64)], {"o": 0, "r": 0, "c": 0}
    def nxt(p): k[p] = (k[p] + 1) % 64; return tds[k[p]]
    fns = {"loomnb": lambda: ours.update_priorities(got["o"], nxt("o"))}
    if rl: fns["rlox"] = lambda: rl.update_priorities(got["r"], nxt("r"))
    if cp: fns["cpprb"] = lambda: cp.update_priorities(got["c"], nxt("c"))
    rows.append((f"update_priorities({B}) new TD d={d}", compare(fns, repeats), "cpprb >= 1x"))
    del ours, rl, cp; gc.collect()

def bench_tree(rows, cap, repeats):
    st, mt = SumTree(cap), MinTree(cap)
    pri = np.random.default_rng(2).random(cap) + 0.01
    st.update(np.arange(cap), pri ** 0.6); mt.update(np.arange(cap), pri ** 0.6)
    rng, idx, w = np.random.default_rng(0), np.empty(B, np.int64), np.empty(B)
    td = np.random.default_rng(3).random(B) + 0.01
    def tree():
        per_sample(st.tree, mt.tree, st.offsets, rng.random(B), idx, w); np.power(w, -0.4, out=w)
        per_update(st.tree, mt.tree, st.offsets, idx, td, cap, 0.6, 1e-6, True)
    fns = {"loomnb": tree}
    if cpprb:
        cp = cpprb.PrioritizedReplayBuffer(cap, _env_dict(4, 1), alpha=0.6)
        _fill(cap, 4, 1, None, None, cp)
        for s in range(0, cap, 100_000):
            ii = np.arange(s, min(s + 100_000, cap)); cp.update_priorities(ii, pri[ii])
        def cp_su():
            b = cp.sample(B, beta=0.4); cp.update_priorities(b["indexes"], td)
        fns["cpprb"] = cp_su
    rows.append((f"tree sample({B})+update({B})", compare(fns, repeats), "cpprb >= 5x"))

def bench_tokens(rows, repeats):
    g = np.random.default_rng(0)
    lens = g.integers(1, 513, 4096)
    st = VarLenStore(token_fields=("logp", "loss_mask"), seq_fields=("reward",))
    st.extend([g.integers(0, 32000, l) for l in lens], logp=[np.zeros(l) for l in lens], loss_mask=[np.ones(l) for l in lens],
              reward=np.zeros(len(lens)))
    rng = np.random.default_rng(1)
    rows.append(("tokens padded(256 of 1-512)", compare({"loomnb": lambda: st.padded(st.sample(B, rng))}, repeats), ""))
    rows.append(("tokens packed(256, 2048)", compare({"loomnb": lambda: st.packed(st.sample(B, rng), 2048)}, repeats), ""))

def bench_mmap(rows, cap, d, a, repeats):
    tmp = tempfile.mkdtemp()
    hot = min(10_000, cap // 2)
    ours = MmapReplayBuffer(cap, (d,), (a,), path=os.path.join(tmp, "ours.rb"), hot_capacity=hot)
    rl = rlox.MmapReplayBuffer(hot, cap, d, a, os.path.join(tmp, "rlox.bin")) if rlox else None
    _fill(cap, d, a, ours, rl, None, rl_flag=np.float32)     # rlox's mmap buffer takes float32 flags
    o, act, r, no, te, tr = _data(B, d, a, seed=1)
    teu, tru = te.astype(np.float32), tr.astype(np.float32)
    rng, seed = np.random.default_rng(0), [0]
    def rl_sample(): seed[0] += 1; rl.sample(B, seed[0])
    fns = {"loomnb": lambda: ours.sample(B, rng)}
    if rl: fns["rlox"] = rl_sample
    rows.append((f"mmap sample({B}) d={d}", compare(fns, repeats), ""))
    fns = {"loomnb": lambda: ours.push_batch(o, act, r, no, te, tr)}
    if rl: fns["rlox"] = lambda: rl.push_batch(o.ravel(), no.ravel(), act.ravel(), r, teu, tru)
    rows.append((f"mmap push batch {B} d={d}", compare(fns, repeats), ""))
    ours.close()
    if rl: rl.close()

def bench_nstep(rows, cap, repeats, n=3, d=17, a=6):
    g = np.random.default_rng(0)
    for N in (1, 8):
        buf = ReplayBuffer(cap, (d,), (a,), store_discounts=True)
        w = NStepWriter(buf, n, 0.99, N)
        o, act, r = g.random((N, d), dtype=np.float32), g.random((N, a), dtype=np.float32), g.random(N, dtype=np.float32)
        te, tr = np.zeros(N, bool), np.zeros(N, bool)
        if N == 1: fns = {"loomnb": lambda: w.push(o[0], act[0], float(r[0]), o[0], False, False)}
        else: fns = {"loomnb": lambda: w.push(o, act, r, o, te, tr)}
        if cpprb and N == 1:
            cp = cpprb.ReplayBuffer(cap, _env_dict(d, a), Nstep={"size": n, "gamma": 0.99, "rew": "rew", "next": "next_obs"})
            fns["cpprb"] = lambda: cp.add(obs=o[0], act=act[0], rew=float(r[0]), next_obs=o[0], done=0.0)
        rows.append((f"n-step push, {N} env{'s' * (N > 1)} d={d}", compare(fns, repeats), ""))

def bench_small(rows, cap, d, a, repeats):
    cap = min(cap, 100_000)
    g = np.random.default_rng(4)
    o1, a1, no1 = g.random(d, dtype=np.float32), g.random(a, dtype=np.float32), g.random(d, dtype=np.float32)
    ours = ReplayBuffer(cap, (d,), (a,))
    rl = rlox.ReplayBuffer(cap, d, a) if rlox else None
    cp = cpprb.ReplayBuffer(cap, _env_dict(d, a)) if cpprb else None
    fns = {"loomnb": lambda: ours.push(o1, a1, 0.5, no1, False, False)}
    if rl is not None: fns["rlox"] = lambda: rl.push(o1, a1, 0.5, False, False, no1)
    if cp is not None: fns["cpprb"] = lambda: cp.add(obs=o1, act=a1, rew=0.5, next_obs=no1, done=0.0)
    rows.append((f"push single d={d} (ring 10^5)", compare(fns, repeats), "rlox >= 1x"))
    rows.append((f"push single d={d} (ring 10^5), plain twin (NumPy writes)",
                 compare({"loomnb": lambda: ours._push_one(o1, a1, 0.5, no1, False, False)}, repeats), ""))
    per = PrioritizedReplayBuffer(cap, (d,), (a,), alpha=0.6, beta=0.4)
    rlp = rlox.PrioritizedReplayBuffer(cap, d, a, alpha=0.6, beta=0.4) if rlox else None
    fns = {"loomnb": lambda: per.push(o1, a1, 0.5, no1, False, False, priority=1.5)}
    if rlp is not None: fns["rlox"] = lambda: rlp.push(o1, a1, 0.5, False, False, no1, priority=1.5)
    rows.append((f"prioritized push single + priority d={d} (ring 10^5)", compare(fns, repeats), "rlox >= 1x"))
    one, pv = np.empty(1, np.int64), np.full(1, 1.5)
    def twin():
        one[0] = per.pos; ReplayBuffer.push(per, o1, a1, 0.5, no1, False, False)
        per.update_priorities(one, priorities=pv)
    rows.append((f"prioritized push single + priority d={d} (ring 10^5), plain twin (push, update_priorities)",
                 compare({"loomnb": twin}, repeats), ""))
    del ours, rl, cp, per, rlp; gc.collect()

def bench_pushparts(cap, d, a, repeats):
    from numba import njit, types
    from loomnb.buffers import replay as R
    ours = ReplayBuffer(cap, (d,), (a,))
    rl = rlox.ReplayBuffer(cap, d, a) if rlox else None
    _fill(cap, d, a, ours, rl, None)
    o, act, r, no, te, tr = _data(8, d, a, seed=1)
    ours.push_batch(o, act, r, no, te, tr)
    ep, rec, offs, p = ours._push_eps[0], ours._rec, ours._push_offs, [0]
    nrt = njit(R.push_rec.py_func)                       # the same kernel with the Numba runtime (not cached)
    A2 = types.Array(types.float32, 2, "A"); B1 = types.Array(types.bool_, 1, "A")
    sig = (types.int64, A2, A2, A2, types.Array(types.float32, 1, "A"), B1, B1, types.Array(types.uint8, 2, "C"),
           types.Array(types.int64, 1, "C"))
    nrt.compile(sig); ep_nrt = nrt.overloads[sig].entry_point
    def key(): (o.dtype, no.dtype, act.dtype, r.dtype, te.dtype, tr.dtype, o.ndim, no.ndim, act.ndim, r.ndim, te.ndim, tr.ndim)
    def kern(): p[0] = ep(p[0], o, no, act, r, te, tr, rec, offs)
    def kern_nrt(): p[0] = ep_nrt(p[0], o, no, act, r, te, tr, rec, offs)
    e6 = [njit(lambda a, b, c, d_, e, f: 0, _nrt=flag) for flag in (True, False)]
    sig6 = (types.Array(types.float32, 2, "A"),) * 6
    for f in e6: f.compile(sig6)
    u6, x = [f.overloads[sig6].entry_point for f in e6], o
    fns = {"push_batch(8)": lambda: ours.push_batch(o, act, r, no, te, tr), "dtype/ndim check": key,
           "push_rec entry point": kern, "push_rec entry point, with runtime": kern_nrt,
           "empty kernel, 6 arrays, runtime": lambda: u6[0](x, x, x, x, x, x),
           "empty kernel, 6 arrays, no runtime": lambda: u6[1](x, x, x, x, x, x)}
    if rl:
        obf, nbf, abf, teu, tru = o.ravel(), no.ravel(), act.ravel(), te.astype(np.uint8), tr.astype(np.uint8)
        fns["rlox push_batch(8)"] = lambda: rl.push_batch(obf, nbf, abf, r, teu, tru)
    return compare(fns, repeats)

def bench_push1parts(cap, d, a, repeats):
    "Where the time of a single push goes (the fast path of `ReplayBuffer.push`), next to rlox's push."
    from numba import njit
    from loomnb.buffers import replay as R
    from loomnb.ops._jit import entry_point
    cap = min(cap, 100_000)
    ours = ReplayBuffer(cap, (d,), (a,))
    g = np.random.default_rng(4)
    o1, a1, no1 = g.random(d, dtype=np.float32), g.random(a, dtype=np.float32), g.random(d, dtype=np.float32)
    ours.push(o1, a1, 0.5, no1, False, False)
    f = ours._push1
    ep, odt, adt, acts, rec, A, offs = f[:7]
    RT, FT = R.REWARD_TYPES, R.FLAG_TYPES
    def checks():
        return (o1.dtype is odt and no1.dtype is odt and o1.ndim == 1 and no1.ndim == 1 and type(0.5) in RT
                and type(False) in FT and type(False) in FT and a1.dtype is adt and a1.ndim == 1)
    class Bare:
        def push(self, obs, action, reward, next_obs, terminated, truncated, discount=None): pass
    bare, p = Bare(), [0]
    def kern(): p[0] = ep(p[0], o1, no1, a1, 0.5, False, False, rec, A, offs)
    def disp(): p[0] = R.push_one(p[0], o1, no1, a1, 0.5, False, False, rec, A, offs)
    empty = njit(lambda pos, o, no, a, r, te, tr, rec, A, offs: 0, _nrt=False)
    esig = R.PUSH1_SIGS[(odt, adt, 2)]
    eep = entry_point(empty, esig)
    fns = {"push(1) fast path": lambda: ours.push(o1, a1, 0.5, no1, False, False),
           "method call, 6 args, empty body": lambda: bare.push(o1, a1, 0.5, no1, False, False),
           "fast-path type checks": checks, "push_one entry point": kern, "push_one through the dispatcher": disp,
           "empty kernel entry point, same 10 args": lambda: eep(0, o1, no1, a1, 0.5, False, False, rec, A, offs),
           "lambda, empty": lambda: None}
    if rlox:
        rl = rlox.ReplayBuffer(cap, d, a)
        fns["rlox push"] = lambda: rl.push(o1, a1, 0.5, False, False, no1)
    return compare(fns, repeats)

def parts_table(parts, markdown):
    "One row per part, wall and CPU nanoseconds per call for each obs_dim."
    dims = list(parts)
    head = ["part"] + [f"d={d} {k} ns" for d in dims for k in ("wall", "CPU")]
    lines = [[k] + [f"{parts[d][k][i] * 1e9:.0f}" for d in dims for i in (0, 1)] for k in parts[dims[0]]]
    if markdown:
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(l) + " |" for l in lines])
    w = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    return "\n".join("  ".join(str(x).ljust(k) for x, k in zip(r, w)) for r in [head] + lines)

def table(rows, markdown):
    peers = ["loomnb", "rlox", "cpprb"]
    head = ["operation", "loomnb us", "rlox us", "cpprb us", "rlox/loomnb", "cpprb/loomnb", "rlox/loomnb cpu",
            "cpprb/loomnb cpu", "target"]
    lines = []
    for name, m, target in rows:
        us = [f"{m[p][0] * 1e6:.1f}" if p in m else "-" for p in peers]
        ratio = [f"{m[p][i] / m['loomnb'][i]:.2f}" if p in m else "-" for i in (0, 1) for p in peers[1:]]
        lines.append([name, *us, *ratio, target])
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(l) + " |" for l in lines]
    else:
        w = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
        out = ["  ".join(str(x).ljust(k) for x, k in zip(r, w)) for r in [head] + lines]
    return "\n".join(out)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--capacity", type=int, default=1_000_000)
    ap.add_argument("--dims", default="4,17")
    ap.add_argument("--only", default="uniform,per,nstep,tree,tokens,mmap,small")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    only, dims = set(args.only.split(",")), [int(x) for x in args.dims.split(",")]
    act = {4: 1, 17: 6}
    rows, load0 = [], f"{os.getloadavg()[0]:.1f}"
    for d in dims:
        if "uniform" in only: bench_uniform(rows, args.capacity, d, act.get(d, 1), args.repeats)
        if "per" in only: bench_per(rows, args.capacity, d, act.get(d, 1), args.repeats)
        if "small" in only: bench_small(rows, args.capacity, d, act.get(d, 1), args.repeats)
    parts = {d: bench_pushparts(args.capacity, d, act.get(d, 1), args.repeats) for d in dims} if "pushparts" in only else {}
    if "push1parts" in only: parts = {d: bench_push1parts(args.capacity, d, act.get(d, 1), args.repeats) for d in dims}
    if "nstep" in only: bench_nstep(rows, args.capacity, args.repeats)
    if "tree" in only: bench_tree(rows, args.capacity, args.repeats)
    if "tokens" in only: bench_tokens(rows, args.repeats)
    if "mmap" in only: bench_mmap(rows, args.capacity, 17, 6, args.repeats)
    print(f"# capacity {args.capacity}, batch {B}, median of {args.repeats} repeats; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f} (before: {load0}); rlox {_ver('rlox')}, cpprb {_ver('cpprb')}")
    if rows: print(table(rows, args.markdown))
    if parts: print(parts_table(parts, args.markdown))
