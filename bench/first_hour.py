"""The same 100k-step PPO CartPole run from Python and from the CLI, with one busy background process (min of 3,
interleaved), and 20k steps with 1 vs 2 torch threads under the same load. Usage: `python bench/first_hour.py`."""
import json, subprocess, sys, time

PY = """
import time
from loomnb.train.learner import Trainer
m = Trainer("ppo", env="CartPole-v1", seed=0{extra}).train({steps}, progress=False)
print(m["time_elapsed"], m["mean_reward"])
"""

def python_run(steps=100_000, extra=""):
    out = subprocess.run([sys.executable, "-c", PY.format(steps=steps, extra=extra)], capture_output=True, text=True, check=True).stdout
    t, r = out.strip().splitlines()[-1].split(); return float(t), float(r)

def cli_run(steps=100_000):
    out = subprocess.run([sys.executable, "-m", "loomnb", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", str(steps),
                          "--seed", "0", "--no-registry", "--json"], capture_output=True, text=True, check=True).stdout
    m = json.loads(out.strip().splitlines()[-1]); return m["time_elapsed"], m["mean_reward"]

if __name__ == "__main__":
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        time.sleep(1)
        py, cl = [], []
        for _ in range(3): py.append(python_run()); cl.append(cli_run())
        print("python  train seconds:", [round(t, 2) for t, _ in py], "min", round(min(t for t, _ in py), 2), "returns", [r for _, r in py])
        print("cli     train seconds:", [round(t, 2) for t, _ in cl], "min", round(min(t for t, _ in cl), 2), "returns", [r for _, r in cl])
        print("ratio python/cli (min):", round(min(t for t, _ in py) / min(t for t, _ in cl), 3))
        t1 = min(python_run(20_000, ", torch_threads=1")[0] for _ in range(2))
        t2 = min(python_run(20_000, ", torch_threads=2")[0] for _ in range(2))
        print(f"20k steps under load: 1 torch thread {t1:.2f} s, 2 torch threads {t2:.2f} s")
    finally: busy.kill()
