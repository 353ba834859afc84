"""Writes are atomic: a process killed with SIGKILL in the middle of `Trainer.save` or of a buffer save, again and again
at random moments, never leaves a damaged file: the previous file always loads, and a new file is complete or absent."""
import os, random, signal, sys, time
from pathlib import Path
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

def _kill_while_writing(write, tmp: Path, kills: int, seed: int):
    "Fork a child that calls `write(k, i)` for i = 1, 2, ... without pause (k: the kill number); SIGKILL it at random moments."
    rng = random.Random(seed); leftovers = 0
    for k in range(kills):
        pid = os.fork()
        if pid == 0:   # child: write forever, never return into pytest
            try:
                i = 0
                while True: i += 1; write(k, i)
            finally: os._exit(1)
        time.sleep(rng.uniform(0.02, 0.25))
        os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
        leftovers += sum(p.name.endswith(".tmp") for p in tmp.iterdir())   # counted before any load can tidy them
        yield
        for p in tmp.iterdir():
            if p.name.endswith(".tmp"): p.unlink()
    assert leftovers > 0, "no kill landed inside a write: the test did not exercise the window it is about"

def test_sigkill_during_trainer_save(tmp_path):
    from loomnb.train.learner import Trainer, load_checkpoint
    t = Trainer("ppo", env="CartPole-v1", seed=0, config=dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1, hidden=[256, 256]))
    t.train(32)
    old = tmp_path / "model.pt"; t.save(old); steps = [load_checkpoint(old)["train_state"]["global_step"]]
    def write(k, i):
        t.state.global_step = 1000 * (k + 1) + i; t.save(old)
        t.save(tmp_path / f"new{i}.pt")
    for _ in _kill_while_writing(write, tmp_path, kills=12, seed=0):
        ck = load_checkpoint(old)                          # the previous file (or a complete newer one) always loads
        assert ck["train_state"]["global_step"] >= steps[-1]; steps.append(ck["train_state"]["global_step"])
        for p in tmp_path.glob("new*.pt"): load_checkpoint(p); p.unlink()   # a new file is complete when it exists
    assert Trainer.from_checkpoint(old).state.global_step == steps[-1]
    assert steps[-1] > 1000   # some saves did complete between the kills

def test_sigkill_during_buffer_save(tmp_path):
    from loomnb.buffers.replay import ReplayBuffer
    b = ReplayBuffer(20_000, (32,), (), np.float32, np.int64, seed=0)
    o = np.random.default_rng(0).standard_normal((20_000, 32)).astype(np.float32)
    b.push_batch(o, np.zeros(20_000, np.int64), np.ones(20_000, np.float32), o, np.zeros(20_000, bool), np.zeros(20_000, bool))
    old = tmp_path / "replay.npz"; b.save(old); sizes = [ReplayBuffer.load(old).size]
    b.push(o[0], 1, 0.0, o[0], False, False)   # compile the single push here, so a child writes at once (a cold cache compiles for seconds)
    def write(k, i):
        b.push(o[i % 100], 1, float(i), o[i % 100], False, False); b.save(old)
        b.save(tmp_path / f"new{i}.npz")
    for _ in _kill_while_writing(write, tmp_path, kills=10, seed=1):
        r = ReplayBuffer.load(old); assert r.size == 20_000
        np.testing.assert_array_equal(r.obs[100:], o[100:])   # rows the child never rewrote are intact
        for p in tmp_path.glob("new*.npz"): ReplayBuffer.load(p); p.unlink()
