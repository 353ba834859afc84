"""Model-based RL on Pendulum-v1: PETS (and, where it is built, the dreamer trainer) against loomnb's SAC.

Two parts (each its own command, run one at a time, under `nice`):

* ``--part prediction``: the dynamics models' 1-step and H-step open-loop prediction error on held-out Pendulum
  trajectories. Each model is fitted on ``--fit-steps`` env steps of uniformly random play (seed s) and scored on
  20 fresh random-play episodes (seed 1000 + s), from every 4th step after the first 16: RMSE of the predicted
  observation after 1 and after H steps of the recorded actions, next to the RMSE of predicting "no change". PETS:
  the members' mean, with the update budget a PETS run spends on that much data; dreamer: the world model (default
  sizes) after ``--wm-updates`` sequence updates, given the 16 previous observations (posterior), predicting with the
  prior's means.
* ``--part planning``: the engine room's planning rollout (`loomnb.fast.make_rollout`) against the plain torch
  `ts_rollout`. Two PETS runs of the same seed train ``--plan-steps`` env steps, one with the fast paths on and one
  with them off (wall time and planning time per 1k env steps); then the planner of the fast run is timed on its last
  observation with the fast paths on and off, interleaved (ms of planning per env step).
* ``--part planner``: a cheap probe of planner settings with the model held fixed. For each seed, one PETS run (the
  ``--pets`` settings) trains ``--fit-steps`` env steps (its checkpoint is kept in ``--ckpt-dir`` and reused); then
  each setting of ``--settings`` (``;``-separated, each ``key=value,key=value`` of `PETSConfig`'s planner fields,
  ``base`` for none) plays ``--probe-episodes`` deterministic episodes from the same starts (seed 20_000 + 100 s), the
  warm start cleared and the planner's generator reseeded before each. Records the returns and the planning ms per
  env step (the batched evaluation's, per observation, and ``--plan-reps`` single-observation plans). With
  ``--probe-episodes 0`` it only times: ``--plan-reps`` rounds of one single-observation plan of each setting,
  interleaved (so that the machine's load changes touch every setting alike).
* ``--part returns``: sample efficiency. For each seed, one PETS and one SAC run (rl-zoo3's SAC setting for Pendulum,
  lr 1e-3, the other SB3 defaults) are trained to each budget of ``--budgets`` in turn (the same run continues), and
  at each budget scored by a deterministic evaluation of 5 episodes on a fresh env (seed 10_000 + 100 s: env i of it
  10_000 + 100 s + i, so seeds never share a start; `start_seed`). Records wall
  time per 1k env steps and, for PETS, where it goes (model fit, planning, the rest: env, buffer, loop).

The summary gives, per algorithm and budget, the IQM of the returns with a 95% stratified-bootstrap CI over seeds
(`loomnb.eval.stats`), and the mean of the per-seed means.

Usage:
    nice -n 5 python bench/bench_model_based.py --part prediction --seeds 3
    nice -n 5 python bench/bench_model_based.py --part returns --seeds 3 --budgets 5000,10000
    nice -n 5 python bench/bench_model_based.py --part planning --pets horizon=25
    nice -n 5 python bench/bench_model_based.py --part planner --seeds 3 --first-seed 100 --fit-steps 2000 --pets horizon=25 --settings 'base;horizon=40'
    python bench/bench_model_based.py --summary bench/results/model_based_returns.json [more.json ...]
"""
from __future__ import annotations
import argparse, json, os, sys, time
import numpy as np
import torch

ALGOS = {"pets": {}, "sac": {"learning_rate": 1e-3}, "dreamer": {}}   # config overrides of each (loomnb defaults otherwise)

EVAL_BASE, PROBE_BASE, STARTS_PER_SEED = 10_000, 20_000, 100


def start_seed(s: int, base: int = EVAL_BASE) -> int:
    """The reset seed of seed `s`'s evaluation envs (env i of it is seeded `start_seed(s) + i`, as `evaluate` does).

    Seeds are `STARTS_PER_SEED` apart, so the starts of different seeds are disjoint for up to 100 episodes each (before
    run 6 of the logbook it was `base + s`: seeds 0-4 shared 9 starts). `base`: `EVAL_BASE` for the returns part,
    `PROBE_BASE` for the planner part."""
    return base + STARTS_PER_SEED * s


def evaluation_starts(seeds=range(5), n_episodes: int = 5) -> set[int]:
    "The env seeds of the evaluation episodes of `seeds` (now and before run 6), which selection probes must not use."
    return {start_seed(s) + i for s in seeds for i in range(n_episodes)} | set(range(EVAL_BASE, EVAL_BASE + max(seeds) + n_episodes))


def random_episodes(n_episodes: int, seed: int):
    "Uniformly random play on Pendulum: obs [n, 201, 3] (with the final obs), normalised actions [n, 200, 1], rewards [n, 200]."
    from loomnb.envs.registry import make
    env = make("Pendulum-v1", num_envs=n_episodes, seed=seed)
    o, _ = env.reset(seed=seed); rng = np.random.default_rng(seed)
    O, A, R = [o], [], []
    for t in range(200):
        a = rng.uniform(-1, 1, (n_episodes, 1)).astype(np.float32)
        no, r, te, tr, info = env.step(2 * a)
        O.append(info["final_obs"] if t == 199 else no); A.append(a); R.append(r)
        o = no
    return np.stack(O, 1).astype(np.float32), np.stack(A, 1), np.stack(R, 1).astype(np.float32)


CONTEXT = 16   # observations the world model sees (posterior) before it predicts; PETS starts from the last of them


def heldout_starts(T: int, horizon: int) -> np.ndarray:
    return np.arange(CONTEXT - 1, T - horizon + 1, 4)


def no_change(Oh, starts, horizon):
    return [float(np.sqrt(((Oh[:, starts + k] - Oh[:, starts]) ** 2).mean())) for k in (1, horizon)]


def pets_prediction(seed: int, fit_steps: int, horizon: int) -> dict:
    "PETS's ensemble fitted with the updates a PETS run makes on `fit_steps` steps, scored open loop (members' mean)."
    from loomnb.agents.dynamics import GaussianEnsemble, fit_ensemble
    from loomnb.algos.pets import PETSConfig
    torch.manual_seed(seed)
    c = PETSConfig()
    O, A, R = random_episodes(fit_steps // 200, seed)
    x = torch.from_numpy(np.concatenate([O[:, :-1], A], -1).reshape(-1, 4))
    y = torch.from_numpy(np.concatenate([O[:, 1:] - O[:, :-1], R[..., None]], -1).reshape(-1, 4))
    m = GaussianEnsemble(4, 4, c.n_members, (c.hidden, c.hidden))
    opt = torch.optim.Adam(m.parameters(), c.learning_rate, weight_decay=c.weight_decay)
    t0 = time.perf_counter()
    n_fits = fit_steps // c.model_train_freq   # the fits a PETS run makes on this much data (each on all of it here)
    fit_ensemble(m, opt, x, y, c.model_steps * n_fits, c.batch_size, np.random.default_rng(seed))
    fit_s = time.perf_counter() - t0
    Oh, Ah, _ = random_episodes(20, 1000 + seed)
    starts = heldout_starts(Oh.shape[1] - 1, horizon)
    s = torch.from_numpy(Oh[:, starts]).reshape(-1, 3)          # every start of every held-out episode
    err = {}
    with torch.no_grad():
        for h in range(horizon):
            a = torch.from_numpy(Ah[:, starts + h]).reshape(-1, 1)
            s = s + m(torch.cat([s, a], -1).expand(c.n_members, -1, -1)).mean.mean(0)[:, :3]
            if h + 1 in (1, horizon):
                err[h + 1] = float((s - torch.from_numpy(Oh[:, starts + h + 1]).reshape(-1, 3)).pow(2).mean().sqrt())
    b1, bH = no_change(Oh, starts, horizon)
    return {"model": "pets", "seed": seed, "fit_steps": fit_steps, "updates": c.model_steps * n_fits, "horizon": horizon,
            "rmse_1": err[1], "rmse_H": err[horizon], "no_change_rmse_1": b1, "no_change_rmse_H": bH, "fit_s": fit_s}


def dreamer_prediction(seed: int, fit_steps: int, horizon: int, updates: int) -> dict:
    "The dreamer trainer's world model (default sizes) after `updates` sequence updates on `fit_steps` random steps."
    from loomnb.agents.world import WorldModel
    from loomnb.algos.dreamer import DreamerConfig
    torch.manual_seed(seed); g = np.random.default_rng(seed)
    c = DreamerConfig()
    O, A, R = random_episodes(fit_steps // 200, seed)
    O, A, R = torch.from_numpy(O), torch.from_numpy(A), torch.from_numpy(R)
    wm = WorldModel(3, 1, c.deter, c.stoch, c.hidden, c.embed)
    opt = torch.optim.Adam(wm.parameters(), c.learning_rate)
    L, B = c.seq_len, c.batch_size
    t0 = time.perf_counter()
    for _ in range(updates):
        e, st = g.integers(0, len(O), B), g.integers(0, 200 - L + 1, B)
        ii = st[:, None] + np.arange(L + 1)
        a = torch.cat([torch.zeros(B, 1, 1), A[e[:, None], ii[:, :-1]]], 1)
        loss, _, _ = wm.loss(O[e[:, None], ii], a, R[e[:, None], ii[:, :-1]], torch.zeros(B, L))
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(wm.parameters(), c.grad_clip); opt.step()
    fit_s = time.perf_counter() - t0
    Oh, Ah, _ = random_episodes(20, 1000 + seed)
    starts = heldout_starts(Oh.shape[1] - 1, horizon)
    Oh_t, Ah_t = torch.from_numpy(Oh), torch.from_numpy(Ah)
    ctx = starts[:, None] + np.arange(-CONTEXT + 1, 1)                     # [S, CONTEXT] observation indices
    obs = Oh_t[:, ctx].reshape(-1, CONTEXT, 3)
    acts = torch.zeros(20, len(starts), CONTEXT, 1)
    acts[:, :, 1:] = Ah_t[:, ctx[:, :-1]]                                  # the action before each observation
    err = {}
    with torch.no_grad():
        posts, _ = wm.observe(obs, acts.reshape(-1, CONTEXT, 1))
        s = posts[-1]._replace(z=posts[-1].mu)
        for h in range(horizon):
            s = wm.rssm.img_step(s, Ah_t[:, starts + h].reshape(-1, 1), sample=False)
            if h + 1 in (1, horizon):
                err[h + 1] = float((wm.decode(s) - Oh_t[:, starts + h + 1].reshape(-1, 3)).pow(2).mean().sqrt())
    b1, bH = no_change(Oh, starts, horizon)
    return {"model": "dreamer", "seed": seed, "fit_steps": fit_steps, "updates": updates, "horizon": horizon,
            "rmse_1": err[1], "rmse_H": err[horizon], "no_change_rmse_1": b1, "no_change_rmse_H": bH, "fit_s": fit_s}


def make_trainer(algo: str, seed: int):
    from loomnb.train.learner import Trainer
    return Trainer(algo, env="Pendulum-v1", seed=seed, config=dict(ALGOS[algo]), device="cpu", torch_threads=1)


def returns_part(seeds, budgets, out_path, algos):
    from loomnb.eval import evaluate
    rows = []
    runs = {(a, s): None for s in seeds for a in algos}
    for b in budgets:                      # every seed at the first budget before any goes further
        for s in seeds:
            for a in algos:
                if runs[(a, s)] is None: runs[(a, s)] = make_trainer(a, s)
                t = runs[(a, s)]
                step0 = t.state.global_step
                t0 = time.perf_counter()
                t.train(b, progress=False)
                wall = time.perf_counter() - t0
                ev = evaluate(t, "Pendulum-v1", n_episodes=5, seed=start_seed(s))
                timers = dict(getattr(t.algo, "timers", {}))
                row = {"algo": a, "seed": s, "budget": b, "return": float(np.mean(ev.returns)),
                       "eval_returns": [float(r) for r in ev.returns], "train_wall_s": wall, "steps": b - step0,
                       "wall_per_1k_s": 1000 * wall / max(b - step0, 1), "timers_cum_s": timers,
                       "train_wall_cum_s": t.state.time_elapsed, "load": os.getloadavg()[0], "config": dict(ALGOS[a]),
                       "eval_seed": start_seed(s),
                       "train_ep_returns": [round(float(r), 1) for r in t.state.ep_returns]}
                rows.append(row)
                print(json.dumps(row), flush=True)
                with open(out_path, "w") as f: json.dump(rows, f, indent=1)
    return rows


def _kv(text: str) -> dict:
    "'horizon=35,cem_alpha=0.2,cem_return=best' -> {'horizon': 35, 'cem_alpha': 0.2, 'cem_return': 'best'} ('base' or '' -> {})."
    out = {}
    for kv in filter(None, ("" if text.strip() == "base" else text).split(",")):
        k, v = kv.split("=", 1)
        try: out[k.strip()] = int(v)
        except ValueError:
            try: out[k.strip()] = float(v)
            except ValueError: out[k.strip()] = v.strip()
    return out


def planner_part(seeds, fit_steps, settings, n_episodes, reps, ckpt_dir, out_path):
    "Planner settings scored on fixed starts with the model (and the buffer) of one PETS run per seed held fixed."
    from loomnb.envs.registry import make
    from loomnb.eval import evaluate
    from loomnb.train.learner import Trainer
    rows = []
    for s in seeds:
        ck = os.path.join(ckpt_dir, f"pets_s{s}_{fit_steps}_" + "_".join(f"{k}{v}" for k, v in sorted(ALGOS["pets"].items())) + ".pt")
        if os.path.exists(ck): t = Trainer.from_checkpoint(ck)
        else:
            t = make_trainer("pets", s); t0 = time.perf_counter(); t.train(fit_steps, progress=False)
            print(f"seed {s}: trained {fit_steps} steps in {time.perf_counter() - t0:.0f} s", flush=True)
            os.makedirs(ckpt_dir, exist_ok=True); t.save(ck)
        algo = t.algo; base = {k: getattr(algo.config, k) for k in ("horizon", "population", "elites", "cem_iterations", "cem_alpha", "init_std", "particles", "cem_return", "noise_beta")}
        b = algo.buffer; obs1 = np.asarray(b.next_obs[len(b) - 1], np.float32).reshape(1, -1)
        if n_episodes == 0:   # timing only: `reps` rounds of one single-observation plan of each setting, interleaved
            ms = {text: [] for text in settings}
            for _ in range(reps):
                for text in settings:
                    for k, v in {**base, **_kv(text)}.items(): setattr(algo.config, k, v)
                    algo.warm = {}; t1 = time.perf_counter(); algo.plan(obs1, "bench"); ms[text].append(1000 * (time.perf_counter() - t1))
            for text in settings:
                row = {"seed": s, "fit_steps": fit_steps, "setting": text, "config": {**base, **_kv(text)}, "plan_ms_interleaved_median": float(np.median(ms[text])),
                       "plan_ms_all": ms[text], "load": os.getloadavg()[0]}
                rows.append(row); print(f"| {text} | {row['plan_ms_interleaved_median']:.1f} |", flush=True)
            for k, v in base.items(): setattr(algo.config, k, v)
            if out_path:
                with open(out_path, "w") as f: json.dump(rows, f, indent=1)
            continue
        for text in settings:
            st = {**base, **_kv(text)}
            for k, v in st.items(): setattr(algo.config, k, v)
            algo.config.validate()
            algo.warm = {}; algo.gen.manual_seed(s)
            env = make("Pendulum-v1", num_envs=n_episodes, seed=start_seed(s, PROBE_BASE))
            p0, t0 = algo.timers["planning"], time.perf_counter()
            ev = evaluate(t, env, n_episodes=n_episodes, seed=start_seed(s, PROBE_BASE))
            wall = time.perf_counter() - t0; plan = algo.timers["planning"] - p0; env.close()
            ms1 = []
            for _ in range(reps):
                t1 = time.perf_counter(); algo.plan(obs1, "bench"); ms1.append(1000 * (time.perf_counter() - t1))
            row = {"seed": s, "fit_steps": fit_steps, "setting": text, "config": st, "eval_seed": start_seed(s, PROBE_BASE), "return": float(np.mean(ev.returns)),
                   "eval_returns": [float(r) for r in ev.returns], "eval_wall_s": wall,
                   "plan_ms_per_obs_batched": 1000 * plan / (200 * n_episodes), "plan_ms_single_median": float(np.median(ms1)),
                   "load": os.getloadavg()[0]}
            rows.append(row); print(json.dumps(row), flush=True)
            if out_path:
                with open(out_path, "w") as f: json.dump(rows, f, indent=1)
        for k, v in base.items(): setattr(algo.config, k, v)
    if n_episodes == 0: return rows
    print("| setting | seeds | mean return | per seed | episodes < -200 | plan ms per env step (single obs) | batched ms per obs |")
    print("|---|---|---|---|---|---|---|")
    for text in settings:
        w = [r for r in rows if r["setting"] == text]
        ep = [e for r in w for e in r["eval_returns"]]
        per = ", ".join(f"{r['return']:.0f}" for r in w)
        print(f"| {text} | {len(w)} | {np.mean([r['return'] for r in w]):.0f} | {per} | "
              f"{sum(e < -200 for e in ep)}/{len(ep)} | {np.mean([r['plan_ms_single_median'] for r in w]):.1f} | "
              f"{np.mean([r['plan_ms_per_obs_batched'] for r in w]):.1f} |")
    return rows


def planning_part(seed: int, steps: int, reps: int, out_path: str | None) -> dict:
    "Fast vs plain planning: two training runs of `steps` env steps, then `reps` interleaved plans of each on one obs."
    from loomnb.fast import fast_paths
    rows = {}
    for name, on in (("fast", True), ("plain", False)):
        with fast_paths(on):
            t = make_trainer("pets", seed)
            t0 = time.perf_counter(); t.train(steps, progress=False); wall = time.perf_counter() - t0
        tm = dict(t.algo.timers)
        rows[name] = {"train_wall_s": wall, "wall_per_1k_s": 1000 * wall / steps, "planning_per_1k_s": 1000 * tm["planning"] / steps,
                      "model_fit_per_1k_s": 1000 * tm["model_fit"] / steps, "ep_returns": [float(r) for r in t.state.ep_returns],
                      "load": os.getloadavg()[0]}
        print(name, json.dumps(rows[name]), flush=True)
        if on: trained = t
    b = trained.algo.buffer
    obs = np.asarray(b.next_obs[len(b) - 1], np.float32).reshape(1, -1)   # the run's last observation
    ms = {"fast": [], "plain": []}
    for _ in range(reps):
        for name, on in (("fast", True), ("plain", False)):
            with fast_paths(on):
                t0 = time.perf_counter(); trained.algo.plan(obs, "bench"); ms[name].append(1000 * (time.perf_counter() - t0))
    for name in ms:
        rows[name]["plan_ms_median"] = float(np.median(ms[name])); rows[name]["plan_ms_all"] = ms[name]
    rows["speedup_plan"] = rows["plain"]["plan_ms_median"] / rows["fast"]["plan_ms_median"]
    rows["speedup_train"] = rows["plain"]["wall_per_1k_s"] / rows["fast"]["wall_per_1k_s"]
    rows.update(seed=seed, steps=steps, reps=reps, pets=dict(ALGOS["pets"]), load_end=os.getloadavg()[0])
    print("| planner | plan ms per env step (median of %d) | planning s per 1k env steps (training) | model fit s per 1k | wall s per 1k env steps |" % reps)
    print("|---|---|---|---|---|")
    for name in ("plain", "fast"):
        r = rows[name]
        print(f"| {name} | {r['plan_ms_median']:.1f} | {r['planning_per_1k_s']:.1f} | {r['model_fit_per_1k_s']:.1f} | {r['wall_per_1k_s']:.1f} |")
    print(f"speed-up: planning {rows['speedup_plan']:.2f}x, training wall {rows['speedup_train']:.2f}x")
    if out_path:
        with open(out_path, "w") as f: json.dump(rows, f, indent=1)
    return rows


def label(row) -> str:
    "A row's algo, with the planner's terminal value named ('pets+critic'), so that the variants stay apart in a summary."
    tv = row.get("config", {}).get("terminal_value", "none")
    return row["algo"] if tv == "none" else f"{row['algo']}+{tv}"


def summary(rows):
    from loomnb.eval.stats import stratified_bootstrap_ci, interquartile_mean
    out = []
    rows = [{**r, "algo": label(r)} for r in rows]
    for (a, b) in sorted({(r["algo"], r["budget"]) for r in rows}, key=lambda k: (k[1], k[0])):
        x = np.array([r["return"] for r in rows if r["algo"] == a and r["budget"] == b])
        lo, hi = stratified_bootstrap_ci(x[:, None], seed=0) if len(x) > 1 else (float("nan"),) * 2
        w = [r for r in rows if r["algo"] == a and r["budget"] == b]
        per1k = np.mean([r["train_wall_cum_s"] / r["budget"] * 1000 for r in w])
        tm = [r["timers_cum_s"] for r in w if r["timers_cum_s"]]
        split = ""
        if tm:
            fit = np.mean([t["model_fit"] / r["budget"] * 1000 for t, r in zip(tm, w)])
            if "planning" in tm[0]:
                plan = np.mean([t["planning"] / r["budget"] * 1000 for t, r in zip(tm, w)])
                crit = f", critic {np.mean([t['critic'] / r['budget'] * 1000 for t, r in zip(tm, w)]):.1f} s" if "critic" in tm[0] else ""
                split = f" (model fit {fit:.1f} s, planning {plan:.1f} s incl. the evaluations' planning{crit})"
            else:                       # dreamer: world-model steps, imagination with the actor and critic steps
                imag = np.mean([t["imagination"] / r["budget"] * 1000 for t, r in zip(tm, w)])
                split = f" (world model {fit:.1f} s, imagination + actor-critic {imag:.1f} s)"
        out.append(f"| {a} | {b} | {len(x)} | {interquartile_mean(x):.0f} [{lo:.0f}, {hi:.0f}] | {x.mean():.0f} | "
                   f"{', '.join(f'{v:.0f}' for v in x)} | {per1k:.1f}{split} |")
    head = "| algo | env steps | seeds | IQM return [95% CI] | mean | per seed | wall s per 1k env steps |\n|---|---|---|---|---|---|---|"
    return "\n".join([head, *out])


def paired(rows, a: str, b: str, budget: int) -> str:
    "Episode by episode on the same starts (seed, eval_seed, episode i): `a`'s return minus `b`'s at `budget`."
    rows = [{**r, "algo": label(r)} for r in rows if r["budget"] == budget]
    by = {(r["algo"], r["seed"]): r for r in rows}
    out, d = [f"| seed | {a} | {b} | {a} - {b} |", "|---|---|---|---|"], []
    for s in sorted({r["seed"] for r in rows}):
        ra, rb = by.get((a, s)), by.get((b, s))
        if ra is None or rb is None: continue
        if ra["eval_seed"] != rb["eval_seed"]: raise ValueError(f"seed {s}: different starts ({ra['eval_seed']} vs {rb['eval_seed']})")
        x = np.array(ra["eval_returns"]) - np.array(rb["eval_returns"]); d.extend(x)
        out.append(f"| {s} | {', '.join(f'{v:.0f}' for v in ra['eval_returns'])} | {', '.join(f'{v:.0f}' for v in rb['eval_returns'])} | "
                   f"{', '.join(f'{v:+.0f}' for v in x)} |")
    d = np.array(d)
    out.append(f"episodes: {len(d)}; {a} better by > 10: {(d > 10).sum()}, within 10: {(abs(d) <= 10).sum()}, "
               f"{b} better by > 10: {(d < -10).sum()}; mean difference {d.mean():+.1f}")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=["prediction", "returns", "planning", "planner"])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    p.add_argument("--budgets", default="5000,10000")
    p.add_argument("--algos", default="pets,sac", help=f"comma-separated, of {', '.join(ALGOS)}")
    p.add_argument("--pets", action="append", default=[], metavar="KEY=VALUE", help="PETS config override (repeatable), e.g. horizon=25 or cem_alpha=0.2")
    p.add_argument("--dreamer", action="append", default=[], metavar="KEY=VALUE", help="dreamer config override (repeatable), e.g. train_freq=10")
    p.add_argument("--fit-steps", type=int, default=5000)
    p.add_argument("--horizon", type=int, default=15)
    p.add_argument("--wm-updates", type=int, default=300, help="dreamer world-model updates in the prediction part")
    p.add_argument("--settings", default="base", help="planner part: ';'-separated planner settings, e.g. 'base;horizon=40;horizon=40,cem_iterations=5'")
    p.add_argument("--probe-episodes", type=int, default=10, help="planner part: episodes per setting and seed (0: interleaved timing only)")
    p.add_argument("--ckpt-dir", default="/tmp/loomnb_pets_probe", help="planner part: where the fitted runs are kept")
    p.add_argument("--json", default=None)
    p.add_argument("--summary", nargs="+", default=None, help="print the table of one or more returns JSONs (rows joined)")
    p.add_argument("--paired", nargs=3, default=None, metavar=("A", "B", "BUDGET"), help="with --summary: A's minus B's return on each start at BUDGET (labels as in the summary, e.g. pets+critic sac 5000)")
    p.add_argument("--plan-steps", type=int, default=1000, help="env steps of each training run in the planning part")
    p.add_argument("--plan-reps", type=int, default=30, help="interleaved timed plans in the planning part")
    a = p.parse_args()
    torch.set_num_threads(1)
    for kv in a.pets: ALGOS["pets"].update(_kv(kv))
    for kv in a.dreamer: ALGOS["dreamer"].update(_kv(kv))
    if a.summary:
        rows = [r for f in a.summary for r in json.load(open(f))]
        print(summary(rows))
        if a.paired: print(paired(rows, a.paired[0], a.paired[1], int(a.paired[2])))
        return
    seeds = list(range(a.first_seed, a.first_seed + a.seeds))
    if a.part == "prediction":
        rows = []
        for s in seeds:
            for r in (pets_prediction(s, a.fit_steps, a.horizon), dreamer_prediction(s, a.fit_steps, a.horizon, a.wm_updates)):
                rows.append(r); print(json.dumps(r), flush=True)
        print(f"load {os.getloadavg()}")
        k = ["rmse_1", "rmse_H", "no_change_rmse_1", "no_change_rmse_H", "fit_s"]
        for mname in ("pets", "dreamer"):
            print(mname, "mean over seeds:", {x: round(float(np.mean([r[x] for r in rows if r["model"] == mname])), 4) for x in k})
        if a.json: json.dump(rows, open(a.json, "w"), indent=1)
    elif a.part == "planner":
        planner_part(seeds, a.fit_steps, a.settings.split(";"), a.probe_episodes, a.plan_reps, a.ckpt_dir, a.json)
    elif a.part == "planning":
        planning_part(a.first_seed, a.plan_steps, a.plan_reps, a.json)
    elif a.part == "returns":
        out = a.json or "bench/results/model_based_returns.json"
        rows = returns_part(seeds, [int(b) for b in a.budgets.split(",")], out, a.algos.split(","))
        print(summary(rows)); print(f"load {os.getloadavg()}")
    else: p.error("give --part or --summary")


if __name__ == "__main__":
    main()
