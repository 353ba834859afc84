"bench/bench_offline.py hands d3rlpy exactly the dataset's transitions (truncated episodes keep their last step)."
import os, subprocess, sys, json
import numpy as np
import pytest
from gymnasium import spaces
from loomnb.buffers.offline import OfflineDatasetBuffer
from loomnb.buffers.datasets import write_dataset, load_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench_offline

D3RLPY_VENV = os.environ.get("LOOMNB_D3RLPY_VENV", "/tmp/loomnb_d3rlpy_venv")   # the bench's default; made here when missing

def _dataset(path):
    "Three episodes: truncated (4 steps), terminated (3), truncated mid-run (2): every kind of episode end."
    rng = np.random.default_rng(0)
    ends = [(4, "tr"), (3, "te"), (2, "tr")]
    obs, act, rew, nxt, te, tr = [], [], [], [], [], []
    for n, how in ends:
        o = rng.normal(size=(n + 1, 3)).astype(np.float32)
        obs.append(o[:-1]); nxt.append(o[1:]); act.append(rng.uniform(-2, 2, (n, 1)).astype(np.float32))
        rew.append(rng.normal(size=n).astype(np.float32))
        te.append(np.r_[np.zeros(n - 1, bool), how == "te"]); tr.append(np.r_[np.zeros(n - 1, bool), how == "tr"])
    ds = OfflineDatasetBuffer(*(np.concatenate(x) for x in (obs, act, rew, nxt, te, tr)))
    write_dataset(ds, path, spaces.Box(-2.0, 2.0, (1,), np.float32), spaces.Box(-np.inf, np.inf, (3,), np.float32), "Pendulum-v1", -1000.0, -100.0)
    return load_dataset(path)

def _d3rlpy_rule(c):
    "Transitions d3rlpy builds from MDPDataset columns (BasicTransitionPicker): episodes end at terminal or timeout; an unterminated one drops its last row."
    out, start = [], 0
    ends = np.flatnonzero(c["terminals"] | c["timeouts"])
    for e in ends:
        term = bool(c["terminals"][e])
        for t in range(start, e + 1 if term else e):
            nxt = np.zeros_like(c["observations"][t]) if term and t == e else c["observations"][t + 1]
            out.append((c["observations"][t], c["actions"][t], c["rewards"][t], nxt, float(term and t == e)))
        start = e + 1
    return out

def test_d3rlpy_columns_hold_every_transition(tmp_path):
    ds = _dataset(tmp_path / "d")
    c, lengths, meta = bench_offline.d3rlpy_columns(tmp_path / "d")
    assert lengths == [4, 3, 2] and meta["total_steps"] == 9
    got = _d3rlpy_rule(c)
    assert len(got) == ds.size == 9
    for i, (o, a, r, n, term) in enumerate(got):
        assert np.array_equal(o, ds.obs[i]) and np.array_equal(a, ds.actions[i]) and r == ds.rewards[i]
        assert term == float(ds.terminated[i])
        if not term: assert np.array_equal(n, ds.next_obs[i])   # (a terminal's next state is never read)

def _d3rlpy_python():
    "The bench's d3rlpy venv (pure-Python pins, --no-deps, beside this interpreter's torch), made as the bench makes it."
    from pathlib import Path
    try: return str(bench_offline.make_d3rlpy_venv(Path(D3RLPY_VENV)))
    except Exception as e: pytest.skip(f"could not make the d3rlpy venv at {D3RLPY_VENV} (no package index?): {e}")

def test_d3rlpy_itself_sees_every_transition(tmp_path):
    "d3rlpy's own MDPDataset and transition picker on those columns give the dataset's transitions, next states included."
    D3RLPY_PY = _d3rlpy_python()
    ds = _dataset(tmp_path / "d")
    code = f"""
import sys, json, numpy as np, d3rlpy
sys.path.insert(0, {os.path.join(ROOT, 'bench')!r})
import bench_offline
c, _, _ = bench_offline.d3rlpy_columns({str(tmp_path / 'd')!r})
m = d3rlpy.dataset.MDPDataset(c["observations"], c["actions"], c["rewards"], c["terminals"], c["timeouts"], action_space=d3rlpy.constants.ActionSpace.CONTINUOUS)
p = d3rlpy.dataset.BasicTransitionPicker()
out = [p(e, i) for e in m.episodes for i in range(e.transition_count)]
print(json.dumps([[t.observation.tolist(), t.action.tolist(), float(t.reward[0]), t.next_observation.tolist(), float(t.terminal)] for t in out]))
"""
    r = subprocess.run([D3RLPY_PY, "-c", code], capture_output=True, text=True, cwd="/tmp", env={**os.environ, "PYTHONPATH": ""}, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(got) == ds.size == 9
    for i, (o, a, rew, n, term) in enumerate(got):
        np.testing.assert_allclose(o, ds.obs[i], rtol=1e-6); np.testing.assert_allclose(a, ds.actions[i], rtol=1e-6)
        np.testing.assert_allclose(rew, ds.rewards[i], rtol=1e-6); assert term == float(ds.terminated[i])
        if not term: np.testing.assert_allclose(n, ds.next_obs[i], rtol=1e-6)
