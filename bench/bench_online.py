"""The online-learning loop of `loomnb.workflow.online` over several seeds: serve `dqn-cartpole-early` with epsilon=0.1,
log full transitions, fine-tune DQN from the log (the good job: lr 1e-3; the misconfigured job: lr 3e-2), gate each
candidate against the current version on 16 fresh episodes, and count promotions and rejections.

    python bench/bench_online.py --seeds 10            # about 10 s per seed on one core
"""
import argparse, json, os, tempfile, time, warnings
from pathlib import Path
import numpy as np
import torch
from loomnb.workflow.zoo import ModelZoo, pretrained_path
from loomnb.workflow.online import serve_and_log, online_round

def one(seed: int, steps: int, good_lr: float, bad_lr: float) -> dict:
    out = {}
    for job, lr in (("good", good_lr), ("bad", bad_lr)):
        zoo = ModelZoo(Path(tempfile.mkdtemp())/"r.sqlite", builtin=False)
        zoo.add_files(pretrained_path("dqn-cartpole-early"), name="m", promote=True)
        log = serve_and_log(zoo.load("m"), steps=steps, num_envs=8, epsilon=0.1, seed=seed)
        r = online_round(zoo, "m", log, gradient_steps=1_000, learning_rate=lr, seed=seed, gate_seed=10_000 + seed)
        g = r["gate"]; out[job] = {"promoted": r["promoted"], "candidate": g.candidate, "current": g.current, "diff_ci": list(g.diff_ci)}
    return out

if __name__ == "__main__":
    ap = argparse.ArgumentParser(); ap.add_argument("--seeds", type=int, default=10); ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--good-lr", type=float, default=1e-3); ap.add_argument("--bad-lr", type=float, default=3e-2); ap.add_argument("--json")
    a = ap.parse_args(); torch.set_num_threads(1); warnings.simplefilter("ignore")
    t0, loads, rows = time.time(), [os.getloadavg()[0]], []
    for s in range(a.seeds):
        rows.append(one(s, a.steps, a.good_lr, a.bad_lr)); loads.append(os.getloadavg()[0])
        g, b = rows[-1]["good"], rows[-1]["bad"]
        print(f"seed {s}: good {g['current']:.1f} -> {g['candidate']:.1f} CI [{g['diff_ci'][0]:+.1f}, {g['diff_ci'][1]:+.1f}] "
              f"{'promoted' if g['promoted'] else 'rejected'}; bad {b['current']:.1f} -> {b['candidate']:.1f} {'promoted' if b['promoted'] else 'rejected'}", flush=True)
    gp = sum(r["good"]["promoted"] for r in rows); br = sum(not r["bad"]["promoted"] for r in rows)
    gain = np.array([r["good"]["candidate"] - r["good"]["current"] for r in rows])
    print(f"{a.seeds} seeds, {a.steps} vector steps x 8 units logged per round, {time.time() - t0:.0f} s, load average {min(loads):.2f} to {max(loads):.2f}: "
          f"good job promoted {gp}/{a.seeds} (mean gain {gain.mean():+.1f}, min {gain.min():+.1f}), misconfigured job rejected {br}/{a.seeds}")
    if a.json: Path(a.json).write_text(json.dumps({"rows": rows, "load_average": loads}, indent=1))
