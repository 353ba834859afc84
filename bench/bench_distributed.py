"""Throughput of loomnb's data-parallel PPO (1 vs 2 torchrun ranks) and of IMPALA (2 actor processes) vs single-process PPO.

    python bench/bench_distributed.py [--steps 32768] [--repeats 3] [--impala-steps 40000]

Every configuration runs in its own fresh process(es), the configurations alternate within each repeat, and the table
shows medians of env-steps/s over the training time (`sps` of the summary: process start-up excluded for torchrun
ranks). IMPALA "cold" includes its actors' start-up (it happens inside train()); "warm" starts them first.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile
from pathlib import Path

PPO = {"n_envs": 8, "n_steps": 128, "batch_size": 256, "n_epochs": 4}
ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}

def torchrun_ppo(nproc, steps):
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc), "-m",
               "loomnb.distributed", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", str(steps),
               "--config", json.dumps(PPO), "--out", d]
        subprocess.run(cmd, env=ENV, check=True, capture_output=True)
        return json.loads((Path(d) / "rank0.json").read_text())["sps"]

SINGLE = """
import json, sys, torch
from loomnb.learner import Trainer
def main():
    torch.set_num_threads(1)
    algo, steps, cfg, warm = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4] == "1"
    t = Trainer(algo, "CartPole-v1", seed=0, config=cfg)
    if warm: t.algo.start(wait=True)  # IMPALA: actors running before the clock starts
    print(json.dumps(t.train(steps)["sps"]))
if __name__ == "__main__": main()
"""

def single(algo, steps, cfg, warm=False):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f: f.write(SINGLE)
    try:
        out = subprocess.run([sys.executable, f.name, algo, str(steps), json.dumps(cfg), str(int(warm))], env=ENV, check=True,
                             capture_output=True, text=True).stdout
        return float(out.strip().splitlines()[-1])
    finally: os.unlink(f.name)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=32768); ap.add_argument("--impala-steps", type=int, default=40000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    runs = {"ppo, 1 process (Trainer)": lambda: single("ppo", a.steps, PPO),
            "ppo, torchrun 1 rank": lambda: torchrun_ppo(1, a.steps),
            "ppo, torchrun 2 ranks": lambda: torchrun_ppo(2, a.steps),
            "impala, 2 actors + learner (cold)": lambda: single("impala", a.impala_steps, {"n_actors": 2, "n_envs": 8}),
            "impala, 2 actors + learner (warm)": lambda: single("impala", a.impala_steps, {"n_actors": 2, "n_envs": 8}, True)}
    res = {k: [] for k in runs}
    for r in range(a.repeats):
        for k, f in runs.items(): res[k].append(f()); print(f"repeat {r}: {k}: {res[k][-1]:.0f} steps/s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in res.items()}
    base = med["ppo, 1 process (Trainer)"]
    print(f"\nCartPole-v1, {os.cpu_count()} CPUs, medians of {a.repeats} repeats (env-steps/s, global over ranks/actors)\n")
    print("| configuration | steps/s | vs 1-process PPO | vs torchrun 1 rank |\n|---|---:|---:|---:|")
    for k, v in med.items():
        print(f"| {k} | {v:,.0f} | {v / base:.2f}x | {v / med['ppo, torchrun 1 rank']:.2f}x |")

if __name__ == "__main__": main()
