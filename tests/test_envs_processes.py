"""Env properties that need fresh processes: spec hashes and seeded trajectories identical across interpreters
(different PYTHONHASHSEED), LoomRLGym under `asyncio.run` in a script, and the env bench running end to end."""
import json, os, subprocess, sys
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]

_PROBE = r"""
import json, sys, numpy as np
from loomnb.envs.registry import make
out = {}
for id in ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1", "MountainCarContinuous-v0", "Identity-v0", "Target1D-v0", "Math-v1"]:
    env = make(id, num_envs=3, seed=11)
    obs, _ = env.reset(); rng = np.random.default_rng(0); acc = [obs.tolist()]
    for t in range(60):
        sp = env.single_action_space
        a = rng.integers(sp.start, sp.start + min(sp.n, 3), 3) if hasattr(sp, "n") else rng.uniform(-1, 1, (3, *sp.shape)).astype(np.float32)
        o, r, te, tr, info = env.step(a); acc.append([o.tolist(), r.tolist(), te.tolist(), tr.tolist()])
    out[id] = {"hash": env.spec.hash, "traj": acc}
json.dump(out, sys.stdout)
"""


def _run(code, hashseed):
    env = {**os.environ, "PYTHONHASHSEED": str(hashseed), "WANDB_MODE": "disabled"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_hash_and_trajectories_identical_across_processes():
    a, b = json.loads(_run(_PROBE, 1)), json.loads(_run(_PROBE, 12345))
    assert a.keys() == b.keys()
    for id in a:
        assert a[id]["hash"] == b[id]["hash"], id
        assert a[id]["traj"] == b[id]["traj"], id
    assert len({v["hash"] for v in a.values()}) == len(a)   # every env has its own hash


def test_loomrlgym_in_a_script():
    code = r"""
import asyncio
from loomnb.envs.loomgym import LoomRLGym, EnvironmentType
async def main():
    gym = LoomRLGym(offload=True)
    env = await gym.create_environment(EnvironmentType.MATH, {"difficulty": "intermediate", "max_steps": 50, "seed": 0})
    state = await env.reset()
    next_state, reward, done, info = await env.step(info_answer := 0)
    cp = await gym.create_environment(EnvironmentType.CLASSIC_CONTROL, {"id": "CartPole-v1", "seed": 0})
    await cp.reset(); n, done2 = 0, False
    while not done2: _, _, done2, _ = await cp.step(1); n += 1
    print(state.shape, reward in (0.0, 1.0), done, n > 5, env.text.startswith("What is"))
asyncio.run(main())
"""
    assert _run(code, 0).strip() == "(13,) True False True True"


def test_bench_runs():
    out = _run("import runpy, sys; sys.argv = ['bench_envs.py', '--sizes', '1', '4', '--repeats', '1', '--seconds', '0.01']; "
               "runpy.run_path('bench/bench_envs.py', run_name='__main__')", 0)
    assert "| 4 |" in out and "loomnb copy=False / fastest peer" in out
