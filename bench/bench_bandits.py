"""Benchmark the loomnb decision engine: regret and decisions+updates per second against other bandit libraries, and
service throughput (feedback events/s, p50/p99 latency) with the SQLite and Redis memories.

Usage:  python bench/bench_bandits.py [--rounds 20000] [--seeds 3] [--service-events 5000] [--clients 16] [--also-clients 8] [--only loomnb,...]
        [--all-peers] [--quick] [--skip-algorithms] [--skip-service]     (the default run takes about 1-2 minutes)
        python bench/bench_bandits.py --breakdown     (where a durable SQLite feedback's CPU goes, about 30 s)
Needs:  pip install mabwiser vowpalwabbit contextualbandits river   (rows of missing peers are skipped; the three slow
        ones only run with --all-peers)
        redis-server on PATH for the Redis service row (skipped otherwise)
Problem: synthetic linear contextual bandit, d=16 features (first one constant), K=10 arms, r = beta_a . x + N(0, 0.1^2),
the same for every library (loomnb.bandits.algorithms.linear_problem). One decision then one update per round, one
request at a time (the serving pattern). Regret = cumulative pseudo-regret sum_t max_a beta_a.x_t - beta_{a_t}.x_t.
Every peer is asked for LinUCB with alpha=1 and ridge 1 where it has one (VW: epsilon-greedy cb_explore, its default).
Service rows: get_action then process_feedback through ReinforcementLearningService, either one request at a time
(sequential awaits) or from --clients concurrent tasks (a server with that many requests in flight; group commit then
shares transactions). A "no group" row turns group_commit off under the same concurrency; "feedback only" rows make
the decisions first (not timed) and then send the feedbacks concurrently (also at --also-clients, for the p99).
"""
import argparse, asyncio, platform, shutil, statistics, tempfile, time, os
import numpy as np
from loomnb.bandits.algorithms import linear_problem, make_algorithm


# ---------------------------------------------------------------- contenders: each returns (actions chosen [T], seconds)
def run_loomnb(name, **params):
    def run(X, R, K, seed):
        algo = make_algorithm(name, seed=seed, **params)
        acts, w, out = list(range(K)), {}, np.empty(len(X), np.int64)
        t0 = time.perf_counter()
        for t in range(len(X)):
            a, _ = algo.predict_sync(w, X[t], acts)
            w, _ = algo.update_sync(w, X[t], a, R[t, a])
            out[t] = a
        return out, time.perf_counter() - t0
    return run


def run_numpy_linucb(X, R, K, seed, alpha=1.0, ridge=1.0):
    "Plain NumPy LinUCB (disjoint, Sherman-Morrison), the reference the issue measured (~360 regret, ~83k rounds/s)."
    d = X.shape[1]; A_inv = np.tile(np.eye(d) / ridge, (K, 1, 1)); b = np.zeros((K, d)); theta = np.zeros((K, d))
    out = np.empty(len(X), np.int64); rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for t in range(len(X)):
        x = X[t]
        ucb = theta @ x + alpha * np.sqrt(np.einsum("kij,i,j->k", A_inv, x, x))
        best = np.flatnonzero(ucb == ucb.max()); a = int(best[rng.integers(best.size)]) if best.size > 1 else int(best[0])
        Ax = A_inv[a] @ x; A_inv[a] -= np.outer(Ax, Ax) / (1.0 + x @ Ax); b[a] += R[t, a] * x; theta[a] = A_inv[a] @ b[a]
        out[t] = a
    return out, time.perf_counter() - t0


def run_mabwiser(X, R, K, seed):
    from mabwiser.mab import MAB, LearningPolicy
    mab = MAB(list(range(K)), LearningPolicy.LinUCB(alpha=1.0, l2_lambda=1.0), seed=seed)
    mab.fit([0], [0.0], X[:1] * 0)  # mabwiser needs a fit before predict; one zero-context sample leaves the ridge model unchanged
    out = np.empty(len(X), np.int64)
    t0 = time.perf_counter()
    for t in range(len(X)):
        a = int(mab.predict(X[t:t + 1])); mab.partial_fit([a], [R[t, a]], X[t:t + 1]); out[t] = a
    return out, time.perf_counter() - t0


def run_contextualbandits(X, R, K, seed):
    from contextualbandits.online import LinUCB
    m = LinUCB(nchoices=K, alpha=1.0, lambda_=1.0, fit_intercept=False, random_state=seed + 1)  # it requires a positive seed
    out = np.empty(len(X), np.int64)
    t0 = time.perf_counter()
    for t in range(len(X)):
        a = int(m.predict(X[t:t + 1])[0]); m.partial_fit(X[t:t + 1], np.array([a]), np.array([R[t, a]])); out[t] = a
    return out, time.perf_counter() - t0


def run_river(X, R, K, seed):
    from river import bandit
    pol = bandit.LinUCBDisjoint(alpha=1.0, seed=seed)
    arms = list(range(K)); names = [f"f{i}" for i in range(X.shape[1])]
    out = np.empty(len(X), np.int64)
    t0 = time.perf_counter()
    for t in range(len(X)):
        ctx = dict(zip(names, X[t].tolist()))
        a = int(pol.pull(arms, context=ctx)); pol.update(a, ctx, R[t, a]); out[t] = a
    return out, time.perf_counter() - t0


def run_vw(X, R, K, seed):
    import vowpalwabbit
    vw = vowpalwabbit.Workspace(f"--cb_explore {K} --epsilon 0.05 --quiet --random_seed {seed}")
    rng = np.random.default_rng(seed); out = np.empty(len(X), np.int64)
    t0 = time.perf_counter()
    for t in range(len(X)):
        feats = " ".join(f"f{i}:{v:.6f}" for i, v in enumerate(X[t]))
        pmf = np.asarray(vw.predict(f"| {feats}"), dtype=float); pmf /= pmf.sum()
        a = int(rng.choice(K, p=pmf))
        vw.learn(f"{a + 1}:{-R[t, a]:.6f}:{pmf[a]:.6f} | {feats}"); out[t] = a
    vw.finish()
    return out, time.perf_counter() - t0


CONTENDERS = {
    "loomnb LinUCB": run_loomnb("linucb", alpha=1.0, ridge=1.0),
    "loomnb linear Thompson": run_loomnb("linear_thompson", ridge=1.0),
    "loomnb SGD eps-greedy": run_loomnb("contextual_bandit", learning_rate=0.05, exploration_rate=0.05),
    "NumPy LinUCB (reference)": run_numpy_linucb,
    "MABWiser LinUCB": run_mabwiser,
    "contextualbandits LinUCB": run_contextualbandits,
    "River LinUCBDisjoint": run_river,
    "Vowpal Wabbit cb_explore": run_vw,
}


def bench_algorithms(rounds, seeds, only):
    "Each seed runs every contender in turn (alternating, so load changes hit all alike); regret mean, median speed."
    problems = [linear_problem(rounds, dim=16, n_actions=10, noise=0.1, seed=s) for s in range(seeds)]
    active = {}
    for name, fn in CONTENDERS.items():
        if only and not any(o.lower() in name.lower() for o in only): continue
        try: fn(problems[0][0][:50], problems[0][2][:50], 10, 0)  # import + warm up (kernels compile)
        except ImportError as e: print(f"skip {name}: not installed ({e})"); continue
        except Exception as e: print(f"skip {name}: failed on the warm-up ({type(e).__name__}: {e})"); continue
        active[name] = fn
    regs, speeds, cpu = {k: [] for k in active}, {k: [] for k in active}, {k: [] for k in active}
    for s, (X, mean, R) in enumerate(problems):
        for name, fn in active.items():
            c0 = time.process_time(); acts, dt = fn(X, R, 10, s); cpu[name].append(len(X) / max(time.process_time() - c0, 1e-9))
            regs[name].append(float((mean.max(1) - mean[np.arange(len(X)), acts]).sum())); speeds[name].append(len(X) / dt)
            print(f"  seed {s} {name:28s} regret {regs[name][-1]:8.1f}   {speeds[name][-1]:10,.0f} rounds/s", flush=True)
    return {k: (float(np.mean(regs[k])), float(np.std(regs[k])), statistics.median(speeds[k]), statistics.median(cpu[k])) for k in active}


# ---------------------------------------------------------------- service throughput
async def _service(mem, events, registry, n_actions=10, extra=None, clients=1, server_pid=None, feedback_only=False, off=()):
    """Drive get_action + process_feedback for `events` events. clients=1: one request at a time (sequential awaits);
    clients=C: C concurrent client tasks sharing the events, like a server with C requests in flight. feedback_only:
    the decisions are made first (not timed), then only the feedbacks are sent. off: parts of the feedback path switched
    off after the warm-up ("metrics", "experience rows", "trainer"; see `bench_breakdown`)."""
    from loomnb.bandits.service import ReinforcementLearningFactory
    rl = ReinforcementLearningFactory.create({"default_algorithm": "linucb", "memory": mem, **(extra or {})}, registry=registry, seed=0)
    await rl.connect(background=False)
    X, mean, R = linear_problem(events + 200, 16, n_actions, seed=0); acts = list(range(n_actions))
    for t in range(200):  # warm up: kernels, caches, first blob
        a, m = await rl.get_action("bench", X[t], acts); await rl.process_feedback("bench", X[t], a, float(R[t, a]), X[t], propensity=m["propensity"])
    lat_d, lat_f = np.empty(events), np.empty(events); cpu_f = [0.0]
    g0 = getattr(rl.trainer, "groups_written", 0)

    pre = [await rl.get_action("bench", X[200 + i], acts) for i in range(events)] if feedback_only else None
    async def instant(*a, **k): return 0.0
    if "metrics" in off: rl.metrics.updated = lambda *a, **k: None
    if "experience rows" in off: rl.memory._insert_exps = lambda *a, **k: None
    if "trainer" in off: rl.trainer.process_experience = instant

    async def client(idx):
        for i in idx:
            t = 200 + i
            t0 = time.perf_counter(); a, m = pre[i] if pre else await rl.get_action("bench", X[t], acts); t1 = time.perf_counter(); p1 = time.process_time()
            await rl.process_feedback("bench", X[t], a, float(R[t, a]), X[t], propensity=m["propensity"]); t2 = time.perf_counter()
            if clients == 1: cpu_f[0] += time.process_time() - p1  # (meaningless when the feedbacks of other clients interleave)
            lat_d[i], lat_f[i] = t1 - t0, t2 - t1
    s0 = _proc_cpu(server_pid); c0 = time.process_time(); w0 = time.perf_counter()
    if clients == 1: await client(range(events))
    else: await asyncio.gather(*(client(range(c, events, clients)) for c in range(clients)))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    srv_cpu = _proc_cpu(server_pid) - s0 if server_pid else 0.0
    groups = getattr(rl.trainer, "groups_written", 0) - g0
    await rl.close()  # a batched trainer commits its last batch here (not timed: at most commit_every - 1 events)
    return dict(lat_d=lat_d, lat_f=lat_f, wall=wall, cpu=cpu, cpu_f=cpu_f[0], srv_cpu=srv_cpu, groups=groups)


def _proc_cpu(pid):
    "CPU seconds (user + system) used so far by process `pid` (Linux /proc), 0.0 when unknown."
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError): return 0.0


def noise_floor(seconds=50e-6, n=5000):
    "Latency of a fixed pure-CPU chunk of `seconds` (no I/O): what scheduling alone does to a p99 on this machine now."
    def spin(k):
        j = 0
        while j < k: j += 1
    per = []
    for _ in range(20): t0 = time.perf_counter(); spin(20_000); per.append((time.perf_counter() - t0) / 20_000)
    k = int(seconds / min(per))  # the fastest calibration: the others were interrupted
    lat = np.empty(n)
    for i in range(n):
        t0 = time.perf_counter(); spin(k); lat[i] = time.perf_counter() - t0
    return float(np.median(lat)), float(np.percentile(lat, 99)), float((lat > 1e-3).mean())


def bench_service(events, clients=16, full=True, extra_clients=(8,)):
    from prometheus_client import CollectorRegistry
    rows, tmp = {}, tempfile.mkdtemp()
    sq = lambda f, **kw: {"backend": "sqlite", "sqlite_path": os.path.join(tmp, f), **kw}
    small = [c for c in extra_clients if c != clients]  # feedback-only rows at lower concurrency: lower latency per write cycle
    C = f"{clients} clients"
    backends = [("SQLite online", sq("bench.sqlite3"), None, 1),
                (f"SQLite online, {C}", sq("bench_c.sqlite3"), None, clients),
                *[(f"SQLite online, {c} clients, feedback only", sq(f"bench_cf{c}.sqlite3"), None, c) for c in small],
                (f"SQLite online, {C}, feedback only", sq("bench_cf.sqlite3"), None, clients),
                (f"SQLite online, {C}, no group", sq("bench_cn.sqlite3"), {"group_commit": False}, clients)]
    if full:
        backends += [("SQLite commit_every=16", sq("bench_batched.sqlite3"), {"commit_every": 16}, 1),
                     ("SQLite K=1000", sq("bench_k1000.sqlite3"), None, 1),
                     ("SQLite sync=OFF", sq("bench_off.sqlite3", sqlite_synchronous="OFF"), None, 1)]
    srv = None
    try:
        from loomnb.bandits.redis_memory import RedisServer
        srv = RedisServer().start()
        rd = lambda ns, **kw: {"backend": "redis", "redis_url": srv.url, "weights_namespace": f"{ns}:w", "experience_collection_name": f"{ns}:e", **kw}
        backends += [("Redis online", rd("online"), None, 1), (f"Redis online, {C}", rd("conc"), None, clients),
                     (f"Redis online, {C}, feedback only", rd("concf"), None, clients),
                     (f"Redis online, {C}, no group", rd("concn"), {"group_commit": False}, clients)]
        if full: backends += [("Redis commit_every=16", rd("batched"), {"commit_every": 16}, 1), ("Redis ttl=0.5s", rd("ttl", cache_ttl_seconds=0.5), None, 1)]
    except FileNotFoundError as e: print(f"skip Redis service rows: {e}")
    try:
        for name, mem, extra, cl in backends:
            k = 1000 if "K=1000" in name else 10
            n = min(events, 1000) if k > 10 else events
            o = asyncio.run(_service(mem, n, CollectorRegistry(), k, extra, cl, srv.proc.pid if srv is not None and "Redis" in name else None,
                                     feedback_only="feedback only" in name))
            lat_d, lat_f = o["lat_d"], o["lat_f"]
            # sequential: feedback/s = events / time inside process_feedback; concurrent: whole events (decision + feedback) / wall
            fb_s = n / lat_f.sum() if cl == 1 else n / o["wall"]
            fb_cpu = n / max(o["cpu_f"], 1e-9) if cl == 1 else n / max(o["cpu"] + o["srv_cpu"], 1e-9)
            rows[name] = dict(clients=cl, fb_per_s=fb_s, fb_per_cpu_s=fb_cpu, ev_per_s=n / o["wall"], ev_per_cpu_s=n / max(o["cpu"] + o["srv_cpu"], 1e-9),
                              fb_p50=np.median(lat_f), fb_p99=np.percentile(lat_f, 99), dec_p50=np.median(lat_d), dec_p99=np.percentile(lat_d, 99),
                              cpu_per_event=o["cpu"] / n, srv_cpu_per_event=o["srv_cpu"] / n, groups=o["groups"])
            r = rows[name]
            what = "feedback" if cl == 1 or "feedback only" in name else "events"
            print(f"  {name:46s} {what:8s} {r['fb_per_s']:8,.0f}/s ({r['fb_per_cpu_s']:8,.0f} per CPU-s) | feedback p50 {r['fb_p50']*1e6:5.0f} us p99 {r['fb_p99']*1e6:6.0f} us"
                  f" | decision p50 {r['dec_p50']*1e6:5.0f} us p99 {r['dec_p99']*1e6:6.0f} us | events {r['ev_per_s']:7,.0f}/s"
                  f" | CPU/event: client {r['cpu_per_event']*1e6:4.0f} us" + (f", redis-server {r['srv_cpu_per_event']*1e6:3.0f} us" if r["srv_cpu_per_event"] else "")
                  + (f" | {r['groups']} writes" if r["groups"] else ""), flush=True)
    finally:
        if srv is not None: srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def bench_breakdown(events, clients_list=(16, 1), repeats=4):
    """Where a durable SQLite feedback's CPU goes: the feedback-only service loop (`_service`) with parts switched off
    (metrics, the experience rows, the whole trainer), without the experiences index (`sqlite_experience_index=False`)
    and with an in-memory database (no WAL writes); variants alternate, minimum of `repeats`."""
    from prometheus_client import CollectorRegistry
    tmp = tempfile.mkdtemp()
    variants = [("file", ()), ("file", ("metrics",)), ("file", ("experience rows",)), ("file", ("experience index",)),
                ("file", ("trainer",)), (":memory:", ())]
    for clients in clients_list:
        res = {v: [] for v in variants}
        for r in range(repeats):
            for db, off in variants:
                path = db if db == ":memory:" else os.path.join(tmp, f"b{clients}_{r}_{len(off)}_{off[0] if off else ''}.sqlite3")
                mem = {"backend": "sqlite", "sqlite_path": path, "sqlite_experience_index": "experience index" not in off}
                o = asyncio.run(_service(mem, events, CollectorRegistry(), clients=clients, feedback_only=True, off=off))
                res[(db, off)].append(o["cpu"] / events)
        base = min(res[variants[0]])
        print(f"\n| {clients} client(s), {events} feedbacks | CPU us per feedback (min of {repeats}) | difference to the full path |\n|---|---|---|")
        for (db, off), v in res.items():
            what = "full path, database file" if db == "file" and not off else ("in-memory database (no WAL writes)" if db != "file" else "without " + ", ".join(off))
            print(f"| {what} | {min(v) * 1e6:.1f} | {(base - min(v)) * 1e6:+.1f} |")
    shutil.rmtree(tmp, ignore_errors=True)


SLOW_PEERS = ("MABWiser LinUCB", "contextualbandits LinUCB", "River LinUCBDisjoint")  # 0.4-1.1k rounds/s: minutes per seed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20000); ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--service-events", type=int, default=5000)
    ap.add_argument("--only", default="", help="comma-separated substrings of contender names")
    ap.add_argument("--all-peers", action="store_true", help=f"also run {', '.join(SLOW_PEERS)} (about 5 more minutes)")
    ap.add_argument("--clients", type=int, default=16, help="concurrent client tasks of the concurrent service rows")
    ap.add_argument("--also-clients", default="8", help="comma-separated: more SQLite feedback-only rows at these concurrencies")
    ap.add_argument("--quick", action="store_true", help="service: only the rows the targets name")
    ap.add_argument("--skip-service", action="store_true"); ap.add_argument("--skip-algorithms", action="store_true")
    ap.add_argument("--breakdown", action="store_true", help="only the CPU breakdown of a durable SQLite feedback (16 clients and 1)")
    a = ap.parse_args()
    if a.breakdown:
        print(f"# SQLite feedback CPU breakdown, load avg {os.getloadavg()[0]:.1f}"); bench_breakdown(a.service_events)
        print(f"(load avg {os.getloadavg()[0]:.1f} at the end)"); return
    t_start, load0 = time.perf_counter(), os.getloadavg()[0]
    print(f"# bandits bench: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load avg {load0:.1f}")
    only = [o for o in a.only.split(",") if o]
    if not only and not a.all_peers:
        only = [k for k in CONTENDERS if k not in SLOW_PEERS]
        print(f"(skipping the slow peers {', '.join(SLOW_PEERS)}: --all-peers runs them)")
    targets = []
    if not a.skip_algorithms:
        print(f"## algorithms: d=16, K=10, {a.rounds} rounds, {a.seeds} seeds (regret mean ± sd, median rounds/s)")
        rows = bench_algorithms(a.rounds, a.seeds, only)
        ref = rows.get("NumPy LinUCB (reference)")
        print(f"\n| contender | regret | regret / NumPy ref | rounds/s (wall) | rounds per CPU-s | speed / NumPy ref |\n|---|---|---|---|---|---|")
        for k, (m, sd, sp, cp) in rows.items():
            print(f"| {k} | {m:.1f} ± {sd:.1f} | {m / ref[0]:.2f} | {sp:,.0f} | {cp:,.0f} | {sp / ref[2]:.2f} |" if ref else f"| {k} | {m:.1f} | - | {sp:,.0f} | {cp:,.0f} | - |")
        if "loomnb LinUCB" in rows and ref:
            m, _, sp, cp = rows["loomnb LinUCB"]
            targets.append(f"target: loomnb LinUCB regret <= 1.05 x NumPy ref: {m / ref[0]:.3f} -> {'met' if m <= 1.05 * ref[0] else 'NOT met'}")
            targets.append(f"target: loomnb LinUCB >= 80,000 decisions+updates/s in memory, one at a time: {sp:,.0f}/s wall ({cp:,.0f} per CPU-second) "
                           f"-> {'met' if sp >= 80000 else 'NOT met'}")
    if not a.skip_service:
        print(f"\n## service: LinUCB d=16, K=10 (K=1000 rows: 1000 events), get_action + process_feedback, {a.service_events} events."
              f"\n   1 client: one request at a time, 'feedback/s' = events / time inside process_feedback, CPU = this process inside it."
              f"\n   {a.clients} clients: concurrent tasks, 'events/s' = (decision + feedback) / wall, CPU = this process + redis-server, whole run;"
              f"\n   'feedback only' rows: the decisions are made first (not timed), then the feedbacks are sent: feedbacks / wall.")
        m50, m99, frac = noise_floor()
        print(f"  scheduler noise floor now: a pure-CPU chunk of p50 {m50*1e6:.0f} us has p99 {m99*1e6:.0f} us, {frac:.1%} of runs over 1 ms; load avg {os.getloadavg()[0]:.1f}")
        also = [int(c) for c in a.also_clients.split(",") if c]
        rows = bench_service(a.service_events, a.clients, not a.quick, also)
        C = f"{a.clients} clients"
        for name, need in (("SQLite online", 20000), *[(f"SQLite online, {c} clients, feedback only", 20000) for c in also if c != a.clients],
                           (f"SQLite online, {C}, feedback only", 20000), (f"SQLite online, {C}", 20000),
                           ("SQLite commit_every=16", 20000), ("Redis online", 5000), (f"Redis online, {C}, feedback only", 5000),
                           (f"Redis online, {C}", 5000), ("Redis commit_every=16", 5000)):
            if name in rows:
                r = rows[name]; sq = name.startswith("SQLite")
                ok = r["fb_per_s"] >= need and (r["fb_p99"] < 1e-3 if sq else True)
                what = "feedback/s" if r["clients"] == 1 or "feedback only" in name else "decision+feedback events/s"
                targets.append(f"target: {name:40s} >= {need:,} {what}{' with p99 < 1 ms' if sq else ''}: {r['fb_per_s']:,.0f}/s wall "
                               f"({r['fb_per_cpu_s']:,.0f} per CPU-s), feedback p99 {r['fb_p99']*1e6:,.0f} us -> {'met' if ok else 'NOT met'}")
    print(f"\n## targets (load avg {load0:.1f} at the start, {os.getloadavg()[0]:.1f} now, {time.perf_counter() - t_start:.0f} s;"
          f" every feedback is committed before its call returns except in the commit_every=16 rows)")
    for t in targets: print(t)


if __name__ == "__main__":
    main()
