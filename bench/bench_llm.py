"""LLM post-training benchmark: GRPO, DPO and online DPO on loomnb's own character-level transformer (CPU).

Task: additions of 2-digit operands (`loomnb.llm.task.addition_problems(max_digits=2)`, prompts like "47+85="),
reward `math_reward`. Per seed: a supervised warm-up (`sft`) of a fresh 4-layer, 4-head, width-64 `CausalLM`
(~200k parameters) to a deliberately weak model (greedy accuracy >= --sft-target on a validation set), then from that
same start, each in a fresh subprocess with one torch thread:
  * grpo: `GRPO.train_step` on 16 prompts x 8 completions per iteration (minibatches of 32, one pass, kl_coef
    0.05), --grpo-steps iterations;
  * dpo: `DPO.train` on pairs made by `math_preference_pairs` from the start model on the training problems
    (chosen = the answer, rejected = its own wrong sample), with and without the chosen-NLL term (dpo_nll:
    nll_coef 1; dpo+nll=0.5+norm=token+beta=0.1: other settings); the reference log-probabilities are computed once
    (`DPO.reference_logps`, timed apart: `ref_s`) and given to every epoch;
  * online_dpo: `OnlineDPO.train_step` on 16 prompts x 8 candidates per iteration, --odpo-steps iterations
    (online_dpo_nll: the same with the chosen-NLL term, nll_coef=1).
Every run evaluates pass@1 and pass@8 (8 samples at temperature 1 per problem, unbiased estimator) and the greedy
accuracy on 200 held-out problems (disjoint from the training and validation problems) every --eval-every
iterations, and records completions/s and optimizer steps/s (training time only, evaluation excluded, wall and
process CPU time) and the peak RSS of its process (ru_maxrss).

  python bench/bench_llm.py --seeds 3 --json bench/results/llm.json
"""
from __future__ import annotations
import argparse, copy, json, os, resource, subprocess, sys, tempfile, time
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from loomnb.llm.model import CharTokenizer, CausalLM
from loomnb.llm.task import MathTask, addition_problems, evaluate, sft
from loomnb.llm.grpo import GRPO
from loomnb.llm.dpo import DPO, OnlineDPO, math_preference_pairs
if os.environ.get("LOOMNB_BENCH_PLAIN_ROWS") == "1":   # bench_llm_prefix.py --pass-only: the shared-prefix pass off, every other fast path on
    import loomnb.llm.grpo as _grpo, loomnb.llm.dpo as _dpo
    _grpo.make_token_logps = _dpo.make_pair_logps = lambda model: None

MAX_NEW = 4  # up to 3 answer digits and eos (--max-digits 2; max_digits + 2 in general)
DIGITS = (1, 2)  # (min_digits, max_digits) of the operands, set by --min-digits/--max-digits

def peak_rss_mb() -> float:
    "Peak RSS (MB) of this process image: VmHWM (getrusage's ru_maxrss survives exec, so a child of a big parent reports the parent's)."
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
    except OSError: pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def tasks(seed):
    "Training, validation and held-out test problems (test disjoint from the others; fixed across seeds)."
    lo, hi = DIGITS
    test = MathTask(addition_problems(200, hi, seed=10_000, min_digits=lo))
    seen = set(test.prompts)
    tr = [p for p in addition_problems(3000, hi, seed=100 + seed, min_digits=lo) if f"{p.operands[0]}+{p.operands[1]}=" not in seen]
    return MathTask(tr[:2500]), MathTask(tr[2500:2700]), test

def ev(model, tok, test):
    return evaluate(model, tok, test, n=8, k=8, max_new_tokens=MAX_NEW, seed=1)

def run_sft(a, seed, path):
    tok = CharTokenizer(); train, val, test = tasks(seed)
    torch.manual_seed(seed); m = CausalLM(tok.vocab_size, seed=seed)
    t0 = time.perf_counter(); r = sft(m, tok, train, val, target_accuracy=a.sft_target, max_steps=4000, seed=seed)
    torch.save(m.state_dict(), path)
    return {"sft_steps": r["steps"], "sft_val_greedy": r["accuracy"], "sft_s": time.perf_counter() - t0, "start": ev(m, tok, test)}

GRPO_KEYS = {"lr": "grpo_lr", "kl": "kl_coef", "g": "grpo_group", "iters": "grpo_iters"}

def grpo_variant(a, algo):
    "`a` with the overrides of a GRPO variant's name: grpo+lr=3e-4+kl=0.02+g=16 (g: group size, 128 completions per iteration kept)."
    a = copy.copy(a)
    for kv in algo.split("+")[1:]:
        k, v = kv.split("=")
        if k not in GRPO_KEYS: sys.exit(f"bench_llm: unknown GRPO override {k!r} in {algo!r}; one of {sorted(GRPO_KEYS)}")
        setattr(a, GRPO_KEYS[k], (int if k in ("g", "iters") else float)(v))
    return a

DPO_KEYS = {"nll": "nll_coef", "norm": "nll_norm", "beta": "beta"}

def dpo_variant(algo) -> dict:
    "DPO settings of a name: dpo (plain), dpo_nll (nll_coef 1, per-sequence NLL), dpo+nll=1+norm=token+beta=0.1 (overrides)."
    kw = {"nll_coef": 1.0 if algo == "dpo_nll" else 0.0, "nll_norm": "sequence", "beta": 0.1}
    for kv in algo.split("+")[1:]:
        k, v = kv.split("=")
        if k not in DPO_KEYS: sys.exit(f"bench_llm: unknown DPO override {k!r} in {algo!r}; one of {sorted(DPO_KEYS)}")
        kw[DPO_KEYS[k]] = v if k == "norm" else float(v)
    return kw

def run_algo(a, seed, algo, path):
    if algo.startswith("grpo+"): a, algo = grpo_variant(a, algo), "grpo"
    tok = CharTokenizer(); train, val, test = tasks(seed)
    base = CausalLM(tok.vocab_size); base.load_state_dict(torch.load(path, weights_only=True))
    pol, ref = copy.deepcopy(base), copy.deepcopy(base)
    curve, train_s, cpu_s, comps, opt_steps = [], 0.0, 0.0, 0, 0
    def point(it):
        e = ev(pol, tok, test); curve.append({"iter": it, "train_s": train_s, **e})
    point(0)
    if algo in ("grpo", "online_dpo", "online_dpo_nll"):
        if algo == "grpo":
            alg = GRPO(pol, ref, train.reward_fn, group_size=a.grpo_group, kl_coef=a.kl_coef, max_new_tokens=MAX_NEW, learning_rate=a.grpo_lr,
                       batch_size=32, num_iterations=a.grpo_iters, seed=seed)
            steps = a.grpo_steps
        else:
            alg = OnlineDPO(pol, ref, train.reward_fn, beta=0.1, num_candidates=8, max_new_tokens=MAX_NEW, learning_rate=a.odpo_nll_lr if algo == "online_dpo_nll" else a.odpo_lr,
                            seed=seed, nll_coef=1.0 if algo == "online_dpo_nll" else 0.0)
            steps = a.odpo_steps
        rng = np.random.default_rng(seed); kls = []; upd_s = 0.0
        n_prompts = 128 // a.grpo_group if algo == "grpo" else 16   # 128 completions per iteration
        for it in range(1, steps + 1):
            batch = [train.prompts[i] for i in rng.choice(len(train), n_prompts, replace=False)]
            t0, c0 = time.perf_counter(), time.process_time()
            m = alg.train_step(batch)
            train_s += time.perf_counter() - t0; cpu_s += time.process_time() - c0
            comps += 128; opt_steps += int(m.get("train/n_updates", 1 if "train/loss" in m else 0))
            if "rollout/kl_ref" in m: kls.append(m["rollout/kl_ref"])
            upd_s += m.get("time/update", 0.0)
            if it % a.eval_every == 0 or it == steps: point(it)
        extra = {"kl_ref_last": kls[-1] if kls else None, "kl_ref_max": max(kls) if kls else None, "update_s": upd_s, "steps_s": train_s, "steps_cpu_s": cpu_s}
    else:
        kw = dpo_variant(algo)
        t0, c0 = time.perf_counter(), time.process_time()
        pairs = math_preference_pairs(base, tok, train, n=4, max_new_tokens=MAX_NEW, seed=seed)
        pair_s = time.perf_counter() - t0; comps = 4 * len(train)
        alg = DPO(pol, ref, learning_rate=a.dpo_lr, seed=seed, **kw)
        pair_cpu_s = time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        ref_lp = alg.reference_logps(pairs)   # once for all epochs, as DPO.train does when not given them
        ref_s, ref_cpu_s = time.perf_counter() - t0, time.process_time() - c0
        steps_s = steps_cpu_s = 0.0
        for ep in range(1, a.dpo_epochs + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            h = alg.train(pairs, epochs=1, batch_size=32, ref_logps=ref_lp)
            steps_s += time.perf_counter() - t0; steps_cpu_s += time.process_time() - c0; opt_steps += len(h)
            train_s = pair_s + ref_s + steps_s
            point(ep)
        cpu_s = pair_cpu_s + ref_cpu_s + steps_cpu_s
        extra = {"dpo_settings": kw, "last_metrics": h[-1], "pairs": len(pairs), "pair_sampling_s": pair_s, "pair_sampling_cpu_s": pair_cpu_s, "ref_s": ref_s, "ref_cpu_s": ref_cpu_s,
                 "steps_s": steps_s, "steps_cpu_s": steps_cpu_s}
    return {"algo": algo, "seed": seed, "curve": curve, "train_s": train_s, "train_cpu_s": cpu_s, "completions": comps,
            "optimizer_steps": opt_steps, "completions_per_s": comps / train_s, "steps_per_s": opt_steps / train_s,
            "rss_mb": peak_rss_mb(), **extra}

def pack_bench(reps=7):
    "Process CPU time of one GRPO update (128 completions, minibatches of 32) on padded vs packed rows, interleaved, min of `reps`."
    from loomnb.llm.grpo import grpo_rollout, grpo_update
    tok = CharTokenizer(); task = MathTask(addition_problems(100, 2, seed=0)); lm = CausalLM(tok.vocab_size, seed=0)
    res = {False: [], True: []}
    for _ in range(reps):
        for pack in (False, True):
            g = GRPO(lm, copy.deepcopy(lm), task.reward_fn, group_size=8, max_new_tokens=MAX_NEW, batch_size=32, pack=pack, learning_rate=0.0)
            st, _ = grpo_rollout(g, task.prompts[:16])
            c0 = time.process_time(); grpo_update(g, st); res[pack].append(time.process_time() - c0)
    pad, pk = min(res[False]), min(res[True])
    print(f"GRPO update, 128 sequences of {st.lengths().mean():.1f} tokens on average: padded {pad * 1e3:.1f} ms, packed {pk * 1e3:.1f} ms "
          f"(CPU time, min of {reps}); packed/padded = {pk / pad:.2f}")

def sub(args, extra):
    cmd = [sys.executable, os.path.abspath(__file__), *args, *extra]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode: sys.exit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--algos", default="grpo,dpo,dpo_nll,online_dpo,online_dpo_nll")
    p.add_argument("--sft-target", type=float, default=0.2)
    p.add_argument("--grpo-steps", type=int, default=250)
    p.add_argument("--grpo-lr", type=float, default=1e-4)
    p.add_argument("--kl-coef", type=float, default=0.05)
    p.add_argument("--grpo-iters", type=int, default=1)
    p.add_argument("--grpo-group", type=int, default=8, help="GRPO group size; 128 // group prompts per iteration")
    p.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1 (evaluation: 0; selection of settings: 100)")
    p.add_argument("--odpo-nll-lr", type=float, default=5e-4)
    p.add_argument("--odpo-steps", type=int, default=300)
    p.add_argument("--odpo-lr", type=float, default=3e-4)
    p.add_argument("--dpo-epochs", type=int, default=4)
    p.add_argument("--dpo-lr", type=float, default=5e-4)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--min-digits", type=int, default=1, help="operands have at least this many digits (1: from 0)")
    p.add_argument("--max-digits", type=int, default=2, help="operands have at most this many digits")
    p.add_argument("--json", default=None)
    p.add_argument("--summary", default=None, help="print the tables of a JSON written by --json, run nothing")
    p.add_argument("--pack-bench", action="store_true", help="time one GRPO update on padded vs packed rows, run nothing else")
    p.add_argument("--_one", nargs=3, default=None, help=argparse.SUPPRESS)  # seed, algo|sft, checkpoint path
    a = p.parse_args()
    torch.set_num_threads(1)
    global MAX_NEW, DIGITS
    DIGITS, MAX_NEW = (a.min_digits, a.max_digits), a.max_digits + 2
    if a.pack_bench: return pack_bench()
    if a.summary:
        with open(a.summary) as f: summary(json.load(f))
        return
    if a._one:
        seed, what, path = int(a._one[0]), a._one[1], a._one[2]
        print(json.dumps(run_sft(a, seed, path) if what == "sft" else run_algo(a, seed, what, path))); return
    fwd = [f"--sft-target={a.sft_target}", f"--grpo-steps={a.grpo_steps}", f"--grpo-lr={a.grpo_lr}", f"--kl-coef={a.kl_coef}", f"--grpo-iters={a.grpo_iters}", f"--grpo-group={a.grpo_group}", f"--odpo-nll-lr={a.odpo_nll_lr}",
           f"--odpo-steps={a.odpo_steps}", f"--odpo-lr={a.odpo_lr}", f"--dpo-epochs={a.dpo_epochs}", f"--dpo-lr={a.dpo_lr}", f"--eval-every={a.eval_every}",
           f"--min-digits={a.min_digits}", f"--max-digits={a.max_digits}"]
    res = {"args": vars(a) | {"_one": None}, "load_start": os.getloadavg(), "seeds": []}
    algos = a.algos.split(",")
    with tempfile.TemporaryDirectory() as d:
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            ck = os.path.join(d, f"sft{seed}.pt")
            s = sub(["--_one", str(seed), "sft", ck], fwd); s["runs"] = {}
            print(f"seed {seed}: SFT {s['sft_steps']} steps, {s['sft_s']:.1f} s, start {s['start']}", flush=True)
            for algo in algos[seed % len(algos):] + algos[:seed % len(algos)]:  # rotated order: load drift hits all alike
                r = sub(["--_one", str(seed), algo, ck], fwd); s["runs"][algo] = r
                print(f"  {algo}: {r['curve'][-1]} | {r['completions_per_s']:.0f} completions/s, {r['steps_per_s']:.1f} opt steps/s, "
                      f"{r['train_s']:.1f} s, rss {r['rss_mb']:.0f} MB", flush=True)
            res["seeds"].append(s); res["load_end"] = os.getloadavg()
            if a.json:   # after every seed: a stopped run keeps the seeds it finished
                with open(a.json, "w") as f: json.dump(res, f, indent=1)
    summary(res)

def ms(v) -> str:
    "mean ± sample sd of a list of per-seed figures (both bench_llm scripts' tables)"
    v = np.array(v, float); return f"{v.mean():.3f} ± {v.std(ddof=1) if len(v) > 1 else 0:.3f}"

def mci(v) -> str:
    "mean [95% t-interval of the mean over seeds] of a list of per-seed figures, in points (x100)"
    from scipy import stats
    v = 100 * np.array(v, float); m = v.mean()
    if len(v) < 2: return f"{m:+.1f}"
    h = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return f"{m:+.1f} [{m - h:+.1f}, {m + h:+.1f}]"

def load_line(res) -> str:
    "The machine's load over the run and the seed count: the first words of every summary."
    return f"\nload {res['load_start'][0]:.1f} -> {res['load_end'][0]:.1f}; mean ± sd over {len(res['seeds'])} seeds"

def summary(res):
    algos = list(res["seeds"][0]["runs"])
    print(f"{load_line(res)}, held-out additions of {res['args'].get('min_digits', 1)}-{res['args'].get('max_digits', 2)} digit operands")
    print("| algo | pass@1 start | pass@1 end | Δ pass@1 | pass@8 start | pass@8 end | greedy end | train s | completions/s (per CPU s) | opt steps/s (per CPU s) | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for al in algos:
        rs = [s["runs"][al] for s in res["seeds"]]
        c0, c1 = [r["curve"][0] for r in rs], [r["curve"][-1] for r in rs]
        print(f"| {al} | {ms([c['pass@1'] for c in c0])} | {ms([c['pass@1'] for c in c1])} | {ms([b['pass@1'] - x['pass@1'] for x, b in zip(c0, c1)])} | "
              f"{ms([c['pass@8'] for c in c0])} | {ms([c['pass@8'] for c in c1])} | {ms([c['greedy'] for c in c1])} | {ms([r['train_s'] for r in rs])} | "
              f"{np.mean([r['completions_per_s'] for r in rs]):.0f} ({np.mean([r['completions'] / r['train_cpu_s'] for r in rs]):.0f}) | "
              f"{np.mean([r['steps_per_s'] for r in rs]):.1f} ({np.mean([r['optimizer_steps'] / r['train_cpu_s'] for r in rs]):.1f}) | {np.mean([r['rss_mb'] for r in rs]):.0f} |")
    for al in algos:
        rs = [s["runs"][al] for s in res["seeds"]]
        its = [c["iter"] for c in rs[0]["curve"]]
        kl = [r["kl_ref_last"] for r in rs if r.get("kl_ref_last") is not None]
        if kl: print(f"{al}: per-token k3 KL to the reference at the end {np.mean(kl):.3f} (max over the run {np.mean([r['kl_ref_max'] for r in rs]):.3f}), seed mean")
        print(f"{al} curve (iter: pass@1 / pass@8, seed mean): " + ", ".join(
            f"{it}: {np.mean([r['curve'][j]['pass@1'] for r in rs]):.3f}/{np.mean([r['curve'][j]['pass@8'] for r in rs]):.3f}" for j, it in enumerate(its)))

if __name__ == "__main__": main()
