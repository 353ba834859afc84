"""DPO or GRPO with the shared-prefix pass (`loomnb.fast.llm`) against the plain rows, from the same start.

Per seed: the SFT start of `bench_llm.py` (the same recipe and checkpoint), then `bench_llm.py`'s one DPO run
(`math_preference_pairs` from the start, reference log-probabilities once, --dpo-epochs epochs of batch 32), each in a
fresh subprocess with one torch thread, once with LOOMNB_FAST=1 (the shared-prefix pass for the policy's steps and the
reference pass) and once with LOOMNB_FAST=0 (`sequence_logps` on the prompt + completion rows), --repeat times, the
order alternated. Records the optimizer steps' wall and CPU time, the reference pass's, and pass@1 / pass@8 at the end.
With --algo grpo: `bench_llm.py`'s GRPO run (16 prompts x 8 completions per iteration, minibatches of 32) for
--grpo-steps iterations; "steps" is then the whole training (sampling, old and reference log-probabilities, update),
and the update's wall time is recorded beside it (the reference column is the update's wall s).

  python bench/bench_llm_prefix.py --seeds 1 --repeat 3 --min-digits 2 --max-digits 3 --json bench/results/llm_dpo_prefix.json
  python bench/bench_llm_prefix.py --summary bench/results/llm_dpo_prefix.json
  python bench/bench_llm_prefix.py --algo grpo --grpo-steps 30 --repeat 2 --min-digits 1 --max-digits 2 --json bench/results/llm_grpo_prefix.json
  python bench/bench_llm_prefix.py --algo grpo --grpo-steps 60 --repeat 3 --min-digits 1 --max-digits 2 --pass-only --json bench/results/llm_grpo_prefix_pass.json
"""
from __future__ import annotations
import argparse, json, os, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_llm as B

def run(seed, algo, ck, fwd, fast: bool, pass_only: bool=False) -> dict:
    key = "LOOMNB_BENCH_PLAIN_ROWS" if pass_only else "LOOMNB_FAST"   # --pass-only: only the shared-prefix pass is switched
    os.environ[key] = ("0" if fast else "1") if pass_only else ("1" if fast else "0")
    try: r = B.sub(["--_one", str(seed), algo, ck], fwd)
    finally: os.environ.pop(key, None)
    if algo.startswith("grpo"): r |= {"ref_s": r["update_s"], "ref_cpu_s": r["update_s"], "last_metrics": {"train/loss": None}}
    return {k: r[k] for k in ("steps_s", "steps_cpu_s", "ref_s", "ref_cpu_s", "optimizer_steps", "rss_mb")} | {
        "end": r["curve"][-1], "last_loss": r["last_metrics"]["train/loss"], "load_after": os.getloadavg()[0], "time_end": time.time()}

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--algo", default="dpo", help="a DPO variant of bench_llm.py (dpo, dpo+nll=3+norm=token, ...)")
    p.add_argument("--dpo-epochs", type=int, default=4)
    p.add_argument("--grpo-steps", type=int, default=20)
    p.add_argument("--min-digits", type=int, default=2)
    p.add_argument("--max-digits", type=int, default=3)
    p.add_argument("--pass-only", action="store_true", help="the plain runs keep every other fast path (LOOMNB_FAST=1, the pass alone off) instead of LOOMNB_FAST=0")
    p.add_argument("--json", default=None)
    p.add_argument("--summary", default=None)
    a = p.parse_args()
    if a.summary:
        with open(a.summary) as f: return summary(json.load(f))
    n = a.grpo_steps if a.algo.startswith("grpo") else a.dpo_epochs
    fwd = [f"--dpo-epochs={a.dpo_epochs}", f"--grpo-steps={a.grpo_steps}", f"--eval-every={n}", f"--min-digits={a.min_digits}", f"--max-digits={a.max_digits}"]
    res = {"args": vars(a), "load_start": os.getloadavg(), "seeds": []}
    with tempfile.TemporaryDirectory() as d:
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            ck = os.path.join(d, f"sft{seed}.pt")
            s = B.sub(["--_one", str(seed), "sft", ck], fwd[-2:]); s["runs"] = []
            print(f"seed {seed}: SFT {s['sft_steps']} steps, start {s['start']}", flush=True)
            for rep in range(a.repeat):
                for fast in ((True, False) if (seed + rep) % 2 == 0 else (False, True)):
                    r = run(seed, a.algo, ck, fwd, fast, a.pass_only) | {"fast": fast, "rep": rep}
                    s["runs"].append(r)
                    print(f"  rep {rep} {'shared-prefix' if fast else 'plain'}: {r['optimizer_steps']} steps in {r['steps_s']:.1f} s ({r['steps_cpu_s']:.2f} CPU s), "
                          f"reference {r['ref_cpu_s']:.2f} CPU s, end {r['end']}, load {r['load_after']:.2f}", flush=True)
            res["seeds"].append(s); res["load_end"] = os.getloadavg()
            if a.json:
                with open(a.json, "w") as f: json.dump(res, f, indent=1)
    summary(res)

def summary(res):
    print(f"load average {res['load_start'][0]:.2f} at the start, {res['load_end'][0]:.2f} at the end")
    print("| seed | rep | plain steps CPU s (wall) | shared-prefix steps CPU s (wall) | plain / shared, CPU (wall) | reference CPU s plain / shared | pass@1 end plain / shared |")
    print("|---|---|---|---|---|---|---|")
    rc, rw = [], []
    for s in res["seeds"]:
        seed = s["runs"][0].get("seed", res["seeds"].index(s) + res["args"]["first_seed"])
        for rep in sorted({r["rep"] for r in s["runs"]}):
            pl = next(r for r in s["runs"] if r["rep"] == rep and not r["fast"]); fa = next(r for r in s["runs"] if r["rep"] == rep and r["fast"])
            rc.append(pl["steps_cpu_s"] / fa["steps_cpu_s"]); rw.append(pl["steps_s"] / fa["steps_s"])
            print(f"| {seed} | {rep} | {pl['steps_cpu_s']:.2f} ({pl['steps_s']:.1f}) | {fa['steps_cpu_s']:.2f} ({fa['steps_s']:.1f}) | {rc[-1]:.2f} ({rw[-1]:.2f}) | "
                  f"{pl['ref_cpu_s']:.2f} / {fa['ref_cpu_s']:.2f} | {pl['end']['pass@1']:.3f} / {fa['end']['pass@1']:.3f} |")
    print(f"mean plain / shared-prefix: CPU {np.mean(rc):.2f}x (range {min(rc):.2f}-{max(rc):.2f}), wall {np.mean(rw):.2f}x (range {min(rw):.2f}-{max(rw):.2f})")

if __name__ == "__main__": main()
