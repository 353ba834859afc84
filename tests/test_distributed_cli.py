"`loomnb train --nproc 2` starts torchrun and trains data-parallel; rank 0 saves the checkpoint."
import os, subprocess, sys
from pathlib import Path
import torch
from conftest import ROOT
import pytest
pytestmark = pytest.mark.exclusive   # runs alone under two pytest workers (conftest.py)

def test_cli_train_nproc_2(tmp_path):
    ckpt = tmp_path / "ddp.pt"
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled",
           "LOOMNB_REGISTRY": str(tmp_path / "reg.sqlite")}
    r = subprocess.run([sys.executable, "-m", "loomnb", "train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "2048",
                        "--seed", "3", "--nproc", "2", "--save", str(ckpt), "--no-registry", "--torch-threads", "1"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert ckpt.exists()
    assert r.stdout.count("loomnb train: done.") == 1, r.stdout  # only rank 0 reports
    from loomnb.train.learner import load_checkpoint
    d = load_checkpoint(ckpt)
    assert d is not None

def test_cli_nproc_rejects_bad_value(tmp_path):
    r = subprocess.run([sys.executable, "-m", "loomnb", "train", "--algo", "ppo", "--env", "CartPole-v1", "--nproc", "two"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--nproc" in r.stderr
