"""Training faults: a NaN/inf in observations, rewards, losses, gradients or parameters stops training naming the tensor
and the step (or is skipped with `nan_guard=True`) and the last good checkpoint is kept; a full disk during a checkpoint
leaves the previous file intact with a loomnb error; a DDP rank killed with SIGKILL mid-step ends the job in bounded
time with a message naming the rank."""
import os, re, subprocess, sys, time
from dataclasses import dataclass
from pathlib import Path
import numpy as np
import pytest
import torch
from gymnasium import spaces

from loomnb.core import Config
from loomnb.train.learner import Algorithm, Trainer, NonFiniteError, CheckpointError, load_checkpoint, register_algorithm
from loomnb.train.callbacks import Checkpoint
from loomnb.envs.registry import make
from loomnb.envs.wrappers import VecEnvWrapper

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
PPO = dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1)


class PoisonObs(VecEnvWrapper):
    "Native CartPole whose observations (or rewards) turn NaN/inf at env step `at`."
    def __init__(self, env, at, what="obs", value=np.nan):
        super().__init__(env); self.at, self.what, self.value, self.t = at, what, value, 0
    def step(self, actions):
        obs, rew, te, tr, info = self.env.step(actions); self.t += 1
        if self.t == self.at:
            obs, rew = obs.copy(), rew.copy()
            if self.what == "obs": obs[1, 2] = self.value
            else: rew[0] = self.value
        return obs, rew, te, tr, info


@pytest.mark.parametrize("what,value", [("obs", np.nan), ("obs", np.inf), ("rew", np.nan)])
def test_nonfinite_observation_or_reward_stops_training(what, value):
    env = PoisonObs(make("CartPole-v1", num_envs=2, seed=0), at=40, what=what, value=value)
    tr = Trainer("ppo", env=env, config=PPO)
    with pytest.raises(NonFiniteError) as ei: tr.train(2000)
    msg = str(ei.value)
    assert ("`observations` of env copy 1" if what == "obs" else "`rewards` of env copy 0") in msg, msg
    assert "at step 80" in msg, msg   # the 40th vector step of 2 copies: the error names the env step it happened at


@dataclass
class _LinConfig(Config):
    n_envs: int = 1        # Parallel environments
    mode: str = "none"     # What turns non-finite at update `at`: none, loss, grad, param
    at: int = 3            # The update that goes bad (1-based)

class _Lin(Algorithm):
    "A linear regressor trained by SGD on a fixed target; `mode` makes one update produce a NaN/inf."
    config_cls = _LinConfig
    def __init__(self, env, config, device="cpu", policy=None):
        super().__init__(env, config, device); torch.manual_seed(0)
        self.net = torch.nn.Linear(3, 1); self.opt = torch.optim.Adam(self.net.parameters(), lr=0.05); self.k = 0
        self.x = torch.randn(16, 3); self.y = self.x @ torch.tensor([1.0, -2.0, 0.5]); env.reset(seed=0)
    def collect(self, state, on_step=None):
        self.env.step(np.zeros(self.env.num_envs, np.int64)); state.global_step += 10; return {}
    def update(self, state):
        self.k += 1; bad = self.k == self.config.at
        loss = (self.net(self.x).squeeze(-1) - self.y).pow(2).mean()
        if bad and self.config.mode == "loss": loss = loss * float("nan")
        self.opt.zero_grad(); loss.backward()
        if bad and self.config.mode == "grad": self.net.weight.grad[0, 1] = float("inf")
        self.opt.step()
        if bad and self.config.mode == "param":
            with torch.no_grad(): self.net.bias[0] = float("nan")
        state.n_updates += 1
        return {"train/loss": float(loss.detach())}
    def predict(self, obs, deterministic=True): return np.zeros(len(obs), np.int64)
    def state_dict(self): return {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "k": self.k}
    def load_state_dict(self, d): self.net.load_state_dict(d["net"]); self.opt.load_state_dict(d["opt"]); self.k = d["k"]

register_algorithm("lin_faults", _Lin)

EXPECT = {"loss": "the loss `train/loss` is nan", "grad": "the gradient of `net.weight` holds NaN/inf",
          "param": "the parameter `net.bias` holds NaN/inf"}

@pytest.mark.parametrize("mode", ["loss", "grad", "param"])
def test_nonfinite_update_stops_and_keeps_last_good_checkpoint(mode, tmp_path):
    ck = Checkpoint(tmp_path, save_freq=10)
    tr = Trainer("lin_faults", env=make("CartPole-v1", num_envs=1, seed=0), config=dict(mode=mode, at=3), callbacks=[ck])
    with pytest.raises(NonFiniteError) as ei: tr.train(100)
    msg = str(ei.value)
    assert EXPECT[mode] in msg and "at step 30 (iteration 2)" in msg, msg
    assert [p.name for p in ck.saved] == ["checkpoint_10.pt", "checkpoint_20.pt"]   # nothing written after the bad update
    last = load_checkpoint(ck.saved[-1])
    assert all(torch.isfinite(v).all() for v in last["algo_state"]["net"].values())
    with pytest.raises(NonFiniteError, match="was not written"): tr.save(tmp_path / "after.pt")   # save refuses the poisoned model
    assert not (tmp_path / "after.pt").exists()
    resumed = Trainer.from_checkpoint(ck.saved[-1])   # the last good checkpoint resumes
    assert resumed.state.global_step == 20

@pytest.mark.parametrize("mode", ["loss", "grad", "param"])
def test_nan_guard_skips_the_bad_update_and_reports_it(mode):
    tr = Trainer("lin_faults", env=make("CartPole-v1", num_envs=1, seed=0), config=dict(mode=mode, at=3), nan_guard=True)
    with pytest.warns(RuntimeWarning, match="nan_guard: skipped an update"):
        res = tr.train(60)
    assert res["total_timesteps"] == 60 and res["train/nan_skipped"] == 1
    assert tr.nan_skips == [{"step": 30, "iteration": 2, "what": EXPECT[mode]}]
    assert all(torch.isfinite(p).all() for p in tr.algo.net.parameters())
    assert all(torch.isfinite(v).all() for s in tr.algo.opt.state.values() for v in s.values() if torch.is_tensor(v))
    good = Trainer("lin_faults", env=make("CartPole-v1", num_envs=1, seed=0), config=dict(mode="none"))
    good.train(50)   # a skipped update leaves the model as a run without it (5 good updates each)
    for p, q in zip(tr.algo.net.parameters(), good.algo.net.parameters()): torch.testing.assert_close(p, q)

@pytest.mark.exclusive   # starts ranks: alone under two pytest workers
def test_distributed_trainer_passes_nan_guard():
    from loomnb.distributed import DistributedTrainer
    dt = DistributedTrainer("lin_faults", "CartPole-v1", config=dict(mode="grad", at=2), nan_guard=True)
    with pytest.warns(RuntimeWarning, match="nan_guard"): dt.train(40)
    assert [s["what"] for s in dt.trainer.nan_skips] == [EXPECT["grad"]]

def test_ppo_poisoned_parameter_stops_with_its_name():
    from loomnb.train.learner import Callback
    class Poison(Callback):
        def before_update(self, state):
            if state.iteration == 1:
                with torch.no_grad(): next(self.trainer.algo.policy.parameters()).view(-1)[0] = float("inf")
    tr = Trainer("ppo", env="CartPole-v1", config=PPO, callbacks=[Poison()])
    with pytest.raises(NonFiniteError, match=r"(loss|gradient|parameter) .* at step 64 \(iteration 1\)"): tr.train(1000)


_FULL_DISK = r'''
import os, resource, signal, sys
from pathlib import Path
from loomnb.train.learner import Trainer, CheckpointError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit then fails with EFBIG, like ENOSPC on a full disk
p = Path(sys.argv[1])
tr = Trainer("ppo", env="CartPole-v1", config=dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1))
tr.train(32); tr.save(p); good = p.read_bytes()
tr.train(64)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
try: tr.save(p); print("SAVED")
except CheckpointError as e: print("ERROR", e)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
print("INTACT", p.read_bytes() == good, sorted(x.name for x in p.parent.iterdir()))
r = Trainer.from_checkpoint(p); print("RESUMED", r.state.global_step)
'''

def test_full_disk_during_checkpoint_keeps_previous(tmp_path):
    p = tmp_path / "ck" / "model.pt"
    r = subprocess.run([sys.executable, "-c", _FULL_DISK, str(p)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"})
    out = r.stdout
    assert r.returncode == 0, (out, r.stderr[-3000:])
    assert "ERROR Trainer.save: writing" in out and "the previous checkpoint at that path, if any, is unchanged" in out, out
    assert "INTACT True ['model.pt']" in out, out   # the old bytes, no temp file left behind
    assert "RESUMED 32" in out, out


def _torchrun(*args, timeout=120):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "loomnb.distributed", *args]
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - t0

@pytest.mark.exclusive   # starts ranks: alone under two pytest workers
def test_ddp_rank_killed_mid_step_ends_job_naming_rank(tmp_path):
    "Rank 1 SIGKILLs itself between its forward pass and its gradient all-reduce: rank 0 must not hang."
    r, dt = _torchrun("smoke", "--steps", "200", "--kill-rank", "1", "--timeout-s", "30", timeout=120)
    assert r.returncode != 0
    err = r.stderr
    assert re.search(r"Root Cause.*rank\s*: 1 \(local_rank: 1\)\s*exitcode\s*: -9 .*\(SIGKILL\)", err, re.S), err[-3000:]
    assert dt < 60, f"the job took {dt:.1f}s to end"

@pytest.mark.exclusive   # starts ranks: alone under two pytest workers
def test_spawned_rank_killed_names_rank():
    from loomnb.distributed import spawn, ddp_smoke
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"rank 1 of 2 exited with code -9"):
        spawn(ddp_smoke, 2, (200, 0, -1, 1), timeout_s=60)
    assert time.monotonic() - t0 < 60
