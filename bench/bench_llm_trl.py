"""loomnb vs TRL on the same model, tokenizer, reward, hyperparameters and budget (CPU, one torch thread per run).

Per seed: the supervised warm-up of `bench_llm.py` (a fresh 205k-parameter `CausalLM`, 2-digit additions, SFT to 20%
greedy on validation), then from that one checkpoint, each in a fresh subprocess:
  * loomnb GRPO (`bench_llm.py --_one SEED grpo`: `GRPO.train_step` on 16 prompts x 8 completions, minibatches of 32,
    one pass, kl_coef 0.05, clip 0.2, lr 1e-4) for --grpo-steps iterations;
  * TRL `GRPOTrainer` (`llm_trl_worker.py`, in its own venv) on the same checkpoint: num_generations 8,
    per_device_train_batch_size 32, steps_per_generation 4 (128 completions per generation = 16 prompts x 8),
    num_iterations 1, beta 0.05, epsilon 0.2, loss_type "bnpo" (token mean over the minibatch, loomnb's), scale_rewards
    "group", lr 1e-4 constant, Adam without weight decay, max_grad_norm 1, max_completion_length 4, temperature 1,
    4 x --grpo-steps optimizer steps (the same completions and optimizer steps as loomnb);
  * loomnb DPO (`bench_llm.py --_one SEED dpo`) and TRL `DPOTrainer` on the same pairs (`math_preference_pairs`:
    chosen = the answer, rejected = the start model's wrong sample), beta 0.1, sigmoid loss, lr 5e-4, batch 32,
    reference log-probs computed once, --dpo-epochs epochs. The optimizer steps are timed alone on both sides (TRL:
    `trainer.train()`; its reference pass runs in `DPOTrainer.__init__`), the reference pass apart (`ref_s`).
    `dpo+nll=A+norm=token` adds the chosen-NLL (RPO) term on both sides: loomnb `DPO(nll_coef=A, nll_norm="token")`,
    TRL `loss_type=["sigmoid", "sft"]`, `loss_weights=[1, A]` (TRL 1.x's form of the former `rpo_alpha`; its `sft`
    term is the mean NLL over the batch's chosen tokens, loomnb's "token" norm: `--loss-check` compares one batch's
    loss in both). online_dpo* runs loomnb alone, from the same SFT start.
The model is loomnb's `CausalLM` in both: TRL gets it wrapped as a `transformers` `PreTrainedModel` (backbone + LM
head, attention_mask -> loomnb's segment-id mask) and the char tokenizer as a `PreTrainedTokenizerFast` with the same
ids (the worker checks both). Every trained model is evaluated by loomnb's `evaluate` on the 200 held-out problems.

  python bench/bench_llm_trl.py --seeds 3 --json bench/results/llm_trl.json   # makes bench/.venv-trl on first use
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile, time
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv-trl")
sys.path.insert(0, os.path.dirname(HERE)); sys.path.insert(0, HERE)
import bench_llm as B
from peer_venv import peer_python
from loomnb.llm.model import CausalLM, CharTokenizer
from loomnb.llm.dpo import math_preference_pairs

def trl_python() -> str:
    "The TRL venv's python, made on first use: torch 2.13.0 (the CPU wheel pip finds here), then trl, transformers."
    return peer_python(VENV, ["torch==2.13.0"], ["trl", "transformers", "datasets"])

def run_trl(job: dict) -> dict:
    with tempfile.TemporaryDirectory() as d:
        job = {**job, "tmp": d}; path = os.path.join(d, "job.json")
        with open(path, "w") as f: json.dump(job, f)
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
        out = subprocess.run([trl_python(), os.path.join(HERE, "llm_trl_worker.py"), path], capture_output=True, text=True, env=env)
        if out.returncode: sys.exit("TRL worker failed:\n" + out.stderr[-4000:])
        return json.loads(out.stdout.strip().splitlines()[-1])

def evaluate_state(path, test):
    tok = CharTokenizer(); m = CausalLM(tok.vocab_size); m.load_state_dict(torch.load(path, weights_only=True))
    return B.ev(m, tok, test)

def loss_check(a):
    "One batch's DPO + chosen-NLL loss in loomnb (`DPO._loss`) and in TRL (`DPOTrainer.compute_loss`, no step): the same objective?"
    from loomnb.llm.dpo import DPO, pair_batch
    B.DIGITS, B.MAX_NEW = (a.min_digits, a.max_digits), a.max_digits + 2
    tok = CharTokenizer(); train, _, _ = B.tasks(0); pol, ref = CausalLM(tok.vocab_size, seed=0), CausalLM(tok.vocab_size, seed=1)
    pairs = math_preference_pairs(pol, tok, MathTaskSlice(train, 32), n=2, max_new_tokens=B.MAX_NEW, seed=0)
    out = {}
    with tempfile.TemporaryDirectory() as d:
        ck, rk = os.path.join(d, "pol.pt"), os.path.join(d, "ref.pt"); torch.save(pol.state_dict(), ck); torch.save(ref.state_dict(), rk)
        for w in (0.0, 1.0, 0.3):
            x, m = pair_batch(pairs)
            with torch.no_grad():
                lo = {n: float(DPO(pol, ref, beta=0.1, nll_coef=w, nll_norm=n)._loss(x, m, DPO(pol, ref).reference_logps(pairs))[0]) for n in ("token", "sequence")}
            job = {"algo": "dpo", "seed": 0, "checkpoint": ck, "ref_checkpoint": rk, "out": os.path.join(d, "o.pt"), "loss_check": True, "lr": 5e-4, "batch_size": 32,
                   "beta": 0.1, "sft_weight": w, "epochs": 1,
                   "pairs": [{"prompt": tok.decode(q.prompt_tokens), "chosen": tok.decode(q.chosen_tokens), "rejected": tok.decode(q.rejected_tokens)} for q in pairs]}
            t = run_trl(job)["loss"]
            out[w] = {"trl": t, "loomnb_token": lo["token"], "loomnb_sequence": lo["sequence"]}
            print(f"nll weight {w}: TRL {t:.7f}, loomnb nll_norm='token' {lo['token']:.7f} (diff {lo['token'] - t:+.1e}), nll_norm='sequence' {lo['sequence']:.7f}", flush=True)
    lens = sorted({len(q.chosen_tokens) for q in pairs}); print(f"32 pairs, chosen completions of {lens} tokens")
    return out

class MathTaskSlice:
    "The first `n` problems of a MathTask (prompts, answers, reward_fn, correct), for math_preference_pairs."
    def __init__(self, task, n): self.prompts, self.answers, self.reward_fn, self.correct = task.prompts[:n], task.answers[:n], task.reward_fn, task.correct

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--grpo-steps", type=int, default=60)
    p.add_argument("--dpo-epochs", type=int, default=1)
    p.add_argument("--algos", default="grpo,dpo", help="grpo, dpo, dpo variants of bench_llm (dpo+nll=1+norm=token: TRL loss_type [sigmoid, sft], "
                   "loss_weights [1, 1]); online_dpo* runs loomnb alone")
    p.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    p.add_argument("--min-digits", type=int, default=1, help="operands have at least this many digits (1: from 0)")
    p.add_argument("--max-digits", type=int, default=2, help="operands have at most this many digits")
    p.add_argument("--repeat", type=int, default=1, help="run every algorithm this many times per seed, the libraries' order alternated (timing noise)")
    p.add_argument("--json", default=None)
    p.add_argument("--summary", default=None, help="print the tables of a JSON written by --json, run nothing")
    p.add_argument("--loss-check", action="store_true", help="compare one batch's DPO + NLL loss in both libraries, run nothing else")
    a = p.parse_args()
    if a.loss_check: return loss_check(a)
    if a.summary:
        with open(a.summary) as f: return summary(json.load(f))
    torch.set_num_threads(1); trl_python()
    B.DIGITS, B.MAX_NEW = (a.min_digits, a.max_digits), a.max_digits + 2
    fwd = [f"--grpo-steps={a.grpo_steps}", f"--dpo-epochs={a.dpo_epochs}", f"--eval-every={max(a.grpo_steps, a.dpo_epochs)}",
           f"--min-digits={a.min_digits}", f"--max-digits={a.max_digits}"]
    res = {"args": vars(a), "load_start": os.getloadavg(), "seeds": []}
    with tempfile.TemporaryDirectory() as d:
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            ck = os.path.join(d, f"sft{seed}.pt"); train, val, test = B.tasks(seed)
            s = B.sub(["--_one", str(seed), "sft", ck], fwd[-2:]); s["runs"] = {}
            print(f"seed {seed}: SFT {s['sft_steps']} steps, start {s['start']}", flush=True)
            for rep, algo in ((rep, algo) for rep in range(a.repeat) for algo in a.algos.split(",")):
                order = ("loomnb", "trl") if (seed + rep) % 2 == 0 else ("trl", "loomnb")   # alternated: load drift hits both alike
                if algo.startswith("online_dpo"): order = ("loomnb",)   # no TRL side here
                for lib in order:
                    if lib == "loomnb":
                        r = B.sub(["--_one", str(seed), algo, ck], fwd)
                        if algo.startswith("dpo"):   # the pairs are given to TRL ready-made, and TRL computes its reference log-probs in
                            # DPOTrainer.__init__, outside trainer.train(): the steps alone on both sides, the reference pass apart
                            r |= {"train_s": r["steps_s"], "train_cpu_s": r["steps_cpu_s"]}
                        r = {"train_s": r["train_s"], "train_cpu_s": r["train_cpu_s"], "optimizer_steps": r["optimizer_steps"], "ref_s": r.get("ref_s"), "ref_cpu_s": r.get("ref_cpu_s"),
                             "completions": r["completions"] if algo == "grpo" or algo.startswith("online") else 0, "rss_mb": r["rss_mb"], "end": r["curve"][-1],
                             "curve": r["curve"], "kl_ref_last": r.get("kl_ref_last"), "last_metrics": r.get("last_metrics")}
                    else:
                        out = os.path.join(d, f"trl_{algo}_{seed}.pt")
                        job = {"algo": algo, "seed": seed, "checkpoint": ck, "out": out}
                        if algo == "grpo":
                            job |= {"prompts": train.prompts, "answers": [int(x) for x in train.answers], "lr": 1e-4, "batch_size": 32, "group_size": 8,
                                    "max_new_tokens": B.MAX_NEW, "steps_per_generation": 4, "kl_coef": 0.05, "clip_eps": 0.2, "max_steps": 4 * a.grpo_steps}
                        else:
                            tok = CharTokenizer(); base = CausalLM(tok.vocab_size); base.load_state_dict(torch.load(ck, weights_only=True))
                            pairs = math_preference_pairs(base, tok, train, n=4, max_new_tokens=B.MAX_NEW, seed=seed)
                            kw = B.dpo_variant(algo)
                            if kw["nll_coef"] and kw["nll_norm"] != "token": sys.exit(f"{algo}: TRL's `sft` term averages over the batch's chosen tokens: use norm=token")
                            job |= {"pairs": [{"prompt": tok.decode(q.prompt_tokens), "chosen": tok.decode(q.chosen_tokens), "rejected": tok.decode(q.rejected_tokens)} for q in pairs],
                                    "lr": 5e-4, "batch_size": 32, "beta": kw["beta"], "sft_weight": kw["nll_coef"], "epochs": a.dpo_epochs}
                        r = run_trl(job); r["completions"] = 128 * a.grpo_steps if algo == "grpo" else 0; r["end"] = evaluate_state(out, test)
                    r["load_after"], r["time_end"] = os.getloadavg()[0], time.time()
                    s["runs"][f"{algo}/{lib}" + (f"#{rep}" if rep else "")] = r
                    print(f"  {algo}/{lib}: {r['end']} | {r['optimizer_steps']} opt steps in {r['train_s']:.1f} s "
                          f"({r['optimizer_steps'] / r['train_s']:.1f}/s), rss {r['rss_mb']:.0f} MB", flush=True)
            res["seeds"].append(s); res["load_end"] = os.getloadavg()
            if a.json:   # after every seed: a stopped run keeps the seeds it finished
                with open(a.json, "w") as f: json.dump(res, f, indent=1)
    summary(res)

def summary(res):
    ms = B.ms
    keys = list(res["seeds"][0]["runs"]); start = [s["start"] for s in res["seeds"]]
    print(f"{B.load_line(res)}; SFT start pass@1 {ms([x['pass@1'] for x in start])}, pass@8 {ms([x['pass@8'] for x in start])}")
    print("| algo / library | pass@1 end | pass@8 end | greedy end | train s | completions/s | opt steps/s | opt steps/s per CPU s | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in keys:
        rs = [s["runs"][k] for s in res["seeds"]]
        cps = np.mean([r["completions"] / r["train_s"] for r in rs])
        print(f"| {k} | {ms([r['end']['pass@1'] for r in rs])} | {ms([r['end']['pass@8'] for r in rs])} | {ms([r['end']['greedy'] for r in rs])} | {ms([r['train_s'] for r in rs])} | "
              f"{cps:.0f} | {np.mean([r['optimizer_steps'] / r['train_s'] for r in rs]):.2f} | {np.mean([r['optimizer_steps'] / r['train_cpu_s'] for r in rs]):.2f} | {np.mean([r['rss_mb'] for r in rs]):.0f} |")
    for k in keys:
        rs = [s["runs"][k] for s in res["seeds"]]
        if rs[0].get("ref_s") is not None:
            print(f"{k}: reference pass (once, before the steps; not in train s) {ms([r['ref_s'] for r in rs])} s wall, {ms([r['ref_cpu_s'] for r in rs])} s CPU")
    print("\nΔ from the SFT start, points, mean over seeds [95% t-interval]; per seed in brackets")
    print("| algo / library | Δ pass@1 | Δ pass@8 | per seed Δ pass@1 |")
    print("|---|---|---|---|")
    for k in keys:
        rs = [s["runs"][k] for s in res["seeds"]]
        d1 = [r["end"]["pass@1"] - x["pass@1"] for r, x in zip(rs, start)]; d8 = [r["end"]["pass@8"] - x["pass@8"] for r, x in zip(rs, start)]
        print(f"| {k} | {B.mci(d1)} | {B.mci(d8)} | {', '.join(f'{100 * x:+.1f}' for x in d1)} |")
    for algo in sorted({k.split('/')[0] for k in keys}):
        if f"{algo}/trl" not in keys: continue
        d1 = [s["runs"][f"{algo}/loomnb"]["end"]["pass@1"] - s["runs"][f"{algo}/trl"]["end"]["pass@1"] for s in res["seeds"]]
        print(f"{algo}: pass@1 loomnb - TRL, points: {B.mci(d1)}")
    reps = sorted({int(k.split("#")[1]) if "#" in k else 0 for k in keys})
    for algo in sorted({k.split('/')[0] for k in keys}):
        if f"{algo}/trl" not in keys or len(reps) < 2: continue
        tag = lambda lib, rep: f"{algo}/{lib}" + (f"#{rep}" if rep else "")
        print(f"\n{algo}, every repetition: loomnb / TRL optimizer steps (and completions) per wall s [per CPU s]; pass@1 loomnb, TRL")
        wall, cpu = [], []
        for s_ in res["seeds"]:
            seed = s_.get("seed", res["args"]["first_seed"] + res["seeds"].index(s_))
            for rep in reps:
                L, T = s_["runs"][tag("loomnb", rep)], s_["runs"][tag("trl", rep)]
                wall.append(T["train_s"] / L["train_s"] * L["optimizer_steps"] / T["optimizer_steps"]); cpu.append(T["train_cpu_s"] / L["train_cpu_s"] * L["optimizer_steps"] / T["optimizer_steps"])
                print(f"  seed {seed} rep {rep} ({'loomnb' if (seed + rep) % 2 == 0 else 'TRL'} first): {wall[-1]:.2f} [{cpu[-1]:.2f}]; loomnb {L['train_s']:.1f} s ({L['train_cpu_s']:.1f} CPU s), "
                      f"TRL {T['train_s']:.1f} s ({T['train_cpu_s']:.1f} CPU s); pass@1 {L['end']['pass@1']:.3f}, {T['end']['pass@1']:.3f}; load {L['load_after']:.1f}, {T['load_after']:.1f}")
        print(f"  mean {np.mean(wall):.2f} (range {min(wall):.2f}-{max(wall):.2f}) [CPU {np.mean(cpu):.2f}, range {min(cpu):.2f}-{max(cpu):.2f}]; "
              f"{sum(w >= 1.5 for w in wall)} of {len(wall)} >= 1.5 in wall time")
    for algo in sorted({k.split('/')[0] for k in keys}):
        if f"{algo}/trl" not in keys: continue
        ratio = [s["runs"][f"{algo}/loomnb"]["optimizer_steps"] / s["runs"][f"{algo}/loomnb"]["train_s"] / (s["runs"][f"{algo}/trl"]["optimizer_steps"] / s["runs"][f"{algo}/trl"]["train_s"]) for s in res["seeds"]]
        d1 = [s["runs"][f"{algo}/loomnb"]["end"]["pass@1"] - s["runs"][f"{algo}/trl"]["end"]["pass@1"] for s in res["seeds"]]
        print(f"{algo}: loomnb / TRL optimizer steps per s, per seed: {', '.join(f'{x:.2f}' for x in ratio)}; pass@1 loomnb - TRL per seed: {', '.join(f'{x:+.3f}' for x in d1)}")

if __name__ == "__main__": main()
