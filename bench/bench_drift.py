"""Drift benchmark of the decision engine against Vowpal Wabbit on VW's news-personalisation simulation, and the
throughput / p99 latency of experience writes and samples per memory backend.

Usage:  python bench/bench_drift.py [--seeds 10] [--iterations 5000] [--window 200] [--skip-drift] [--skip-store]
                                    [--store-events 2000] [--plot bench/results/decision_engine_ctr.png]
                                    [--service] [--scenarios 1 2 3] [--only NAME_PART ...]
Needs:  pip install vowpalwabbit (the VW rows are skipped without it); qdrant-client for the Qdrant rows; redis-server
        on PATH for the Redis rows.
Problem (VW's tutorial "Simulating a news personalization scenario using Contextual Bandits"): users Tom and Anna visit
in the morning or the afternoon (uniformly at random), 7 articles (politics, sports, music, food, finance, health,
camping); the user clicks (reward 1, VW cost -1) on exactly one article per (user, time of day), as in the tutorial's
get_cost. Scenario 1: get_cost for --iterations events. Scenario 2: get_cost, then get_cost_new1 (Tom afternoon ->
sports, Anna afternoon -> sports) for another --iterations. Scenario 3: get_cost, then get_cost_new2 (Tom afternoon,
Anna morning and afternoon -> food, an article never clicked before). Every contender sees the same contexts for a seed
(the same generator) and the features VW sees with -q UA: per article, a linear model of [user=Tom, user=Anna,
time=morning, time=afternoon]. VW: --cb_explore_adf -q UA --epsilon 0.2 (the tutorial's learner), pmf sampled with
the seed's generator. loomnb: LinUCB (alpha 1), linear Thompson sampling, the contextual epsilon-greedy
(`contextual_bandit`, constant-step SGD, epsilon 0.2), the ridge epsilon-greedy, and `adaptive_contextual_bandit`
(VW's adaptive normalised invariant update), through predict_sync/update_sync; "+ reset" rows use the library's drift
option (`drift_detector="page_hinkley"`, bandits.drift: a Page-Hinkley test from loomnb.eval.drift on the reward stream
that restarts the weights when it alarms). --service adds rows that run through the decision service
(`ReinforcementLearningFactory`, SQLite memory, online trainer): get_action, then process_feedback with the decision's
logged propensity and offered actions (importance weights 1/(K p) for the adaptive SGD learner) or without them.
CTR (the tutorial's): cumulative clicks / events. Windowed CTR: clicks over the last --window events. Recovery: events
after the change until the windowed CTR is back to >= 90% of its level over the --window events before the change.
"""
import argparse, asyncio, math, os, platform, shutil, tempfile, time
import numpy as np
from loomnb.bandits.algorithms import make_algorithm

USERS, TIMES = ["Tom", "Anna"], ["morning", "afternoon"]
ARTICLES = ["politics", "sports", "music", "food", "finance", "health", "camping"]
LIKES = {  # (user, time) -> the clicked article, per cost function of the tutorial
    "get_cost": {("Tom", "morning"): "politics", ("Tom", "afternoon"): "music", ("Anna", "morning"): "sports", ("Anna", "afternoon"): "politics"},
    "get_cost_new1": {("Tom", "morning"): "politics", ("Tom", "afternoon"): "sports", ("Anna", "morning"): "sports", ("Anna", "afternoon"): "sports"},
    "get_cost_new2": {("Tom", "morning"): "politics", ("Tom", "afternoon"): "food", ("Anna", "morning"): "food", ("Anna", "afternoon"): "food"}}
SCENARIOS = {1: ["get_cost"], 2: ["get_cost", "get_cost_new1"], 3: ["get_cost", "get_cost_new2"]}


def contexts(seed, n):
    "The (user, time) index pairs of a seed: every contender sees the same sequence."
    rng = np.random.default_rng(seed); return rng.integers(0, 2, n), rng.integers(0, 2, n)


def features(u, t):
    x = np.zeros(4); x[u] = 1.0; x[2 + t] = 1.0; return x


def clicks_of(cost_fns, users, times, n_per):
    "click[t, a] of every event and article."
    out = np.zeros((len(users), len(ARTICLES)))
    for t in range(len(users)):
        like = LIKES[cost_fns[min(t // n_per, len(cost_fns) - 1)]][(USERS[users[t]], TIMES[times[t]])]
        out[t, ARTICLES.index(like)] = 1.0
    return out


def run_loomnb(name, importance=None, **params):
    """A loomnb algorithm through predict_sync/update_sync. `importance`: each update weighted by its propensity, as VW's
    default cb_type mtr weights its regression: "scale" multiplies x and r by sqrt(1/p) (which weights a ridge fit by 1/p
    exactly), "weight" passes importance_weight=1/(K p) (the adaptive SGD learner; VW's mtr weight)."""
    def run(users, times, clicks, seed):
        algo = make_algorithm(name, seed=seed, **params); acts = list(range(len(ARTICLES))); w = {}
        X = [features(u, t) for u, t in ((0, 0), (0, 1), (1, 0), (1, 1))]; got = np.empty(len(users))
        for t in range(len(users)):
            x = X[2 * users[t] + times[t]]
            a, meta = algo.predict_sync(w, x, acts); r = clicks[t, a]; got[t] = r
            if importance == "weight": w, _ = algo.update_sync(w, x, a, r, importance_weight=1.0 / (len(acts) * meta["propensity"]))
            else:
                s = 1.0 / math.sqrt(meta["propensity"]) if importance == "scale" else 1.0
                w, _ = algo.update_sync(w, x * s, a, r * s)
        return got
    return run


def run_service(name, weighted=True, **params):
    """A loomnb algorithm through the decision service (`ReinforcementLearningFactory`, SQLite memory in a temporary
    folder, online trainer): get_action, then process_feedback with the decision's logged propensity and offered
    actions (`weighted`; the trainers turn them into importance weights 1/(K p) for an algorithm that takes them) or
    without them."""
    def run(users, times, clicks, seed):
        from prometheus_client import CollectorRegistry
        from loomnb.bandits.service import ReinforcementLearningFactory
        tmp = tempfile.mkdtemp(prefix="loomnb-svc-")
        async def go():
            rl = ReinforcementLearningFactory.create({"default_algorithm": name, "algorithm_parameters": params,
                                                      "memory": {"sqlite_path": f"{tmp}/m.sqlite3"}}, registry=CollectorRegistry(), seed=seed)
            await rl.connect(background=False); acts = list(range(len(ARTICLES))); got = np.empty(len(users))
            X = [features(u, t) for u, t in ((0, 0), (0, 1), (1, 0), (1, 1))]
            try:
                for t in range(len(users)):
                    x = X[2 * users[t] + times[t]]
                    a, meta = await rl.get_action("news", x, acts); r = clicks[t, a]; got[t] = r
                    kw = dict(propensity=meta["propensity"], available_actions=acts) if weighted else {}
                    await rl.process_feedback("news", x, a, r, **kw)
            finally: await rl.close()
            return got
        try: return asyncio.run(go())
        finally: shutil.rmtree(tmp, ignore_errors=True)
    return run


def run_vw(users, times, clicks, seed):
    from vowpalwabbit import pyvw, LabelType
    vw = pyvw.Workspace(f"--cb_explore_adf -q UA --quiet --epsilon 0.2 --random_seed {seed}")
    rng = np.random.default_rng(10_000 + seed); got = np.empty(len(users))
    def text(u, ti, label=None):
        s = f"shared |User user={USERS[u]} time_of_day={TIMES[ti]}\n"
        for i, art in enumerate(ARTICLES):
            s += (f"0:{label[1]}:{label[2]} " if label is not None and label[0] == i else "") + f"|Action article={art}\n"
        return s[:-1]
    for t in range(len(users)):
        pmf = np.asarray(vw.predict(text(users[t], times[t])), np.float64); pmf /= pmf.sum()
        a = int(rng.choice(len(ARTICLES), p=pmf)); r = clicks[t, a]; got[t] = r
        ex = vw.parse(text(users[t], times[t], (a, -r, pmf[a])), LabelType.CONTEXTUAL_BANDIT); vw.learn(ex); vw.finish_example(ex)
    vw.finish(); return got


SERVICE = {"service: eps-greedy 0.2 (adaptive SGD, lr 0.5, logged propensities)":
               run_service("adaptive_contextual_bandit", exploration_rate=0.2, learning_rate=0.5),
           "service: eps-greedy 0.2 (adaptive SGD, lr 0.5, no propensities)":
               run_service("adaptive_contextual_bandit", weighted=False, exploration_rate=0.2, learning_rate=0.5),
           "service: LinUCB (logged propensities)": run_service("linucb", alpha=1.0)}


def contenders(have_vw, service=False, only=None):
    reset = dict(drift_detector="page_hinkley")  # the library's drift option (bandits.drift; delta 0.05, threshold 15, 100 events minimum)
    c = {"loomnb LinUCB": run_loomnb("linucb", alpha=1.0), "loomnb Thompson": run_loomnb("linear_thompson"),
         "loomnb eps-greedy 0.2 (SGD)": run_loomnb("contextual_bandit", exploration_rate=0.2, learning_rate=0.1),
         "loomnb eps-greedy 0.2 (ridge, 1/p weights)": run_loomnb("ridge_epsilon_greedy", importance="scale", exploration_rate=0.2),
         "loomnb eps-greedy 0.2 (adaptive SGD, lr 0.5)": run_loomnb("adaptive_contextual_bandit", exploration_rate=0.2, learning_rate=0.5),
         "loomnb eps-greedy 0.2 (adaptive SGD, lr 0.5, 1/(Kp) weights)": run_loomnb("adaptive_contextual_bandit", importance="weight", exploration_rate=0.2, learning_rate=0.5),
         "loomnb LinUCB + reset": run_loomnb("linucb", alpha=1.0, **reset),
         "loomnb Thompson + reset": run_loomnb("linear_thompson", **reset)}
    if service: c.update(SERVICE)
    if have_vw: c["VW cb_explore_adf eps 0.2"] = run_vw
    if only: c = {k: v for k, v in c.items() if any(o in k for o in only)}
    return c


def windowed(got, window):
    c = np.cumsum(np.concatenate([[0.0], got])); t = np.arange(1, len(got) + 1); lo = np.maximum(t - window, 0)
    return (c[t] - c[lo]) / (t - lo)


def recovery(got, change, window):
    "Events after `change` until the windowed CTR is back to >= 90% of its level just before the change (None if never)."
    w = windowed(got, window); target = 0.9 * w[change - 1]
    hit = np.flatnonzero(w[change + window // 2:] >= target)  # after the window has mostly left the old regime
    return None if hit.size == 0 else int(hit[0] + window // 2 + 1)


def mean_ci(v):
    v = np.asarray(v, np.float64); h = 1.96 * v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else float("nan")
    return v.mean(), h


def drift_bench(args):
    try: import vowpalwabbit; have_vw = True  # noqa: F401
    except ImportError: have_vw = False; print("vowpalwabbit not installed: the VW rows are skipped")
    cs, n, res = contenders(have_vw, args.service, args.only), args.iterations, {}
    for sc, fns in ((k, v) for k, v in SCENARIOS.items() if k in args.scenarios):
        for seed in range(args.seeds):
            users, times = contexts(seed, n * len(fns)); clicks = clicks_of(fns, users, times, n)
            for name, run in cs.items():
                t0 = time.perf_counter(); got = run(users, times, clicks, seed)
                res.setdefault((sc, name), []).append((got, time.perf_counter() - t0))
        print(f"scenario {sc} done", flush=True)
    return cs, res


def drift_tables(cs, res, args):
    n, W, lines = args.iterations, args.window, []
    lines += ["### Scenario 1 (stationary, the tutorial's first run)", "",
              f"| contender | CTR after {n} events (mean ± 95% CI, {args.seeds} seeds) | windowed CTR, last {W} | s/run |", "|---|---|---|---|"]
    for name in cs if 1 in args.scenarios else ():
        r = res[(1, name)]; m, h = mean_ci([g.mean() for g, _ in r])
        lines.append(f"| {name} | {m:.3f} ± {h:.3f} | {np.mean([g[-W:].mean() for g, _ in r]):.3f} | {np.mean([s for _, s in r]):.2f} |")
    for sc, label in ((2, "preferences change (get_cost_new1)"), (3, "new articles win (get_cost_new2)")):
        if sc not in args.scenarios: continue
        lines += ["", f"### Scenario {sc}: after {n} events the {label}", "",
                  f"| contender | windowed CTR before the change | windowed CTR, last {W} | cumulative CTR at {2 * n} | events to recover 90% (median / max) | runs recovered within 1000 |",
                  "|---|---|---|---|---|---|"]
        for name in cs:
            r = res[(sc, name)]; rec = [recovery(g, n, W) for g, _ in r]
            ok = [x for x in rec if x is not None]
            med = f"{int(np.median(ok))} / {max(ok)}" if len(ok) == len(rec) else (f"{int(np.median(ok))} / never ({len(rec) - len(ok)} runs)" if ok else "never")
            lines.append(f"| {name} | {np.mean([windowed(g, W)[n - 1] for g, _ in r]):.3f} | {np.mean([g[-W:].mean() for g, _ in r]):.3f} | "
                         f"{np.mean([g.mean() for g, _ in r]):.3f} | {med} | {sum(x is not None and x <= 1000 for x in rec)}/{len(rec)} |")
    return lines


def drift_curves(cs, res, args, path, step=10):
    "Mean cumulative and windowed CTR curves (every `step` events) as JSON beside the logbook; returns them."
    import json
    out = {"step": step, "seeds": args.seeds, "window": args.window, "change_at": args.iterations, "ceiling": 0.8 + 0.2 / 7, "curves": {}}
    for sc in SCENARIOS:
        for name in cs:
            if name.startswith("service:"): continue  # the service rows repeat their library rows' curves (same selections and updates)
            gs = np.stack([g for g, _ in res[(sc, name)]])
            cum = (np.cumsum(gs, 1) / np.arange(1, gs.shape[1] + 1)).mean(0); win = np.mean([windowed(g, args.window) for g in gs], 0)
            out["curves"].setdefault(str(sc), {})[name] = {"cumulative": np.round(cum[step - 1::step], 4).tolist(),
                                                          "windowed": np.round(win[step - 1::step], 4).tolist()}
    with open(path, "w") as f: json.dump(out, f)
    print("curves:", path); return out


def plot_curves(data):
    "The CTR curves of `drift_curves` (cumulative above, windowed below); returns the figure."
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 3, figsize=(15, 7), sharey=True); step, n = data["step"], data["change_at"]
    for j, (sc, rows) in enumerate(data["curves"].items()):
        for name, c in rows.items():
            t = np.arange(1, len(c["cumulative"]) + 1) * step
            ax[0, j].plot(t, c["cumulative"], label=name); ax[1, j].plot(t, c["windowed"], label=name)
        ax[0, j].set_title(f"scenario {sc}: cumulative CTR"); ax[1, j].set_title(f"scenario {sc}: CTR over the last {data['window']} events")
        for a in ax[:, j]:
            a.axhline(data["ceiling"], color="grey", ls=":", lw=1); a.set_ylim(0, 1); a.set_xlabel("events")
            if sc != "1": a.axvline(n, color="grey", ls="--", lw=1)
    ax[0, 0].legend(fontsize=8, loc="lower right"); ax[0, 0].set_ylabel("CTR"); ax[1, 0].set_ylabel("CTR")
    fig.suptitle(f"VW news personalisation, mean of {data['seeds']} seeds (dotted: the eps=0.2 ceiling 0.829)"); fig.tight_layout()
    return fig


def drift_plot(cs, res, args, path):
    import matplotlib; matplotlib.use("Agg")
    fig = plot_curves(drift_curves(cs, res, args, os.path.splitext(path)[0] + ".json"))
    fig.savefig(path, dpi=90); print("plot:", path)  # the JSON is committed; the PNG is a local copy (bench/results/*.png is ignored)


async def store_backend(name, ms, n, dim=16, batch=32, samples=200):
    from loomnb.bandits.dual_memory import build_memory
    mem = build_memory(ms, {"retries": 0}); await mem.connect()
    rng = np.random.default_rng(0); X = rng.normal(size=(n, dim)); lat = np.empty(n)
    t0 = time.perf_counter()
    for i in range(n):
        t = time.perf_counter(); await mem.store_experience("bench", X[i], int(i % 8), float(X[i, 0]), X[i], propensity=0.125); lat[i] = time.perf_counter() - t
    wall_w = time.perf_counter() - t0; slat = np.empty(samples)
    t0 = time.perf_counter()
    for i in range(samples):
        t = time.perf_counter(); b = await mem.sample_experiences("bench", batch); slat[i] = time.perf_counter() - t
        assert len(b) == batch
    wall_s = time.perf_counter() - t0; sim = None
    if mem.vector is not None:
        q = np.empty(samples)
        for i in range(samples):
            t = time.perf_counter(); await mem.similar_experiences("bench", X[i], batch); q[i] = time.perf_counter() - t
        sim = q
    await mem.close()
    row = f"| {name} | {n / wall_w:,.0f} | {np.percentile(lat, 50) * 1e3:.2f} | {np.percentile(lat, 99) * 1e3:.2f} | {samples / wall_s:,.0f} | {np.percentile(slat, 99) * 1e3:.2f} |"
    return row + (f" {np.percentile(sim, 50) * 1e3:.2f} / {np.percentile(sim, 99) * 1e3:.2f} |" if sim is not None else " - |")


def store_bench(args):
    tmp = tempfile.mkdtemp(prefix="loomnb-store-"); srv = None; rows = []
    try:
        cases = [("SQLite (WAL, NORMAL)", {"sqlite_path": f"{tmp}/a.sqlite3"})]
        if shutil.which("redis-server"):
            from loomnb.bandits.redis_memory import RedisServer
            srv = RedisServer().start(); cases.append(("Redis (localhost TCP)", {"backend": "redis", "redis_url": srv.url}))
        try:
            import qdrant_client  # noqa: F401
            cases.append(("Qdrant local mode (on disk)", {"sqlite_path": f"{tmp}/b.sqlite3", "vector_backend": "qdrant", "qdrant_path": f"{tmp}/q"}))
        except ImportError: print("qdrant-client not installed: the Qdrant row is skipped")
        for name, ms in cases:
            rows.append(asyncio.run(store_backend(name, ms, args.store_events))); print(rows[-1], flush=True)
    finally:
        if srv is not None: srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return ["### Experience store: writes and samples per backend", "",
            f"One `store_experience` at a time ({args.store_events} experiences, 16-dim states), then 200 uniform samples of 32, then "
            "(vector store) 200 similarity queries of 32; through the dual-store memory provider with its guards.", "",
            "| backend | writes/s | write p50 ms | write p99 ms | samples/s (32) | sample p99 ms | similarity p50 / p99 ms |",
            "|---|---|---|---|---|---|---|", *rows]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=10); p.add_argument("--iterations", type=int, default=5000)
    p.add_argument("--window", type=int, default=200); p.add_argument("--store-events", type=int, default=2000)
    p.add_argument("--skip-drift", action="store_true"); p.add_argument("--skip-store", action="store_true")
    p.add_argument("--service", action="store_true", help="add rows that run through the decision service (SQLite memory)")
    p.add_argument("--scenarios", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3])
    p.add_argument("--only", nargs="+", help="keep the contenders whose name contains one of these")
    p.add_argument("--plot", default="bench/results/decision_engine_ctr.png"); p.add_argument("--log", default="bench/results/decision_engine.md")
    args = p.parse_args()
    load0 = os.getloadavg()[0]; t0 = time.time(); out = []
    if not args.skip_drift:
        cs, res = drift_bench(args); out += drift_tables(cs, res, args); out.append("")
        if args.only or len(args.scenarios) < len(SCENARIOS): print("a partial run (--only / --scenarios): the curves are not written")
        else: drift_plot(cs, res, args, args.plot)
    if not args.skip_store: out += store_bench(args)
    import sys
    head = [f"## Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
            f"`python bench/bench_drift.py {' '.join(sys.argv[1:])}`: {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores, load average {load0:.1f} at the start and {os.getloadavg()[0]:.1f} at the end, {time.time() - t0:.0f} s.", ""]
    text = "\n".join(head + out) + "\n"; print(text)
    with open(args.log, "a") as f: f.write(text + "\n")


if __name__ == "__main__":
    main()
