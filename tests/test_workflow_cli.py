"The `loomnb` command line end to end, in fresh processes: train (flags and YAML), eval, runs list/show, bad input."
import json, os, subprocess, sys
from pathlib import Path
import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "WANDB_MODE": "disabled", "OMP_NUM_THREADS": "1"}
SMALL = ["--set", "n_envs=4", "--set", "n_steps=32", "--set", "batch_size=64", "--set", "n_epochs=2"]

def cli(*args, cwd, module=False):
    cmd = [sys.executable, "-m", "loomnb", *args] if module else [str(BIN / "loomnb"), *args]
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)

def test_train_eval_runs(tmp_path):
    reg = str(tmp_path / "reg.sqlite")
    r = cli("train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "1024", "--save", "model.pt", "--registry", reg,
            "--logger", "csv:metrics.csv", "--json", *SMALL, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    m = json.loads(r.stdout.strip().splitlines()[-1])
    assert m["total_timesteps"] == 1024 and (tmp_path / "model.pt").exists() and (tmp_path / "metrics.csv").exists()
    r = cli("eval", "--checkpoint", "model.pt", "--episodes", "3", "--json", cwd=tmp_path, module=True)  # python -m loomnb
    assert r.returncode == 0, r.stderr
    ev = json.loads(r.stdout.strip().splitlines()[-1])
    assert ev["env"] == "CartPole-v1" and ev["n_episodes"] == 3 and ev["mean_return"] > 0
    r = cli("runs", "--registry", reg, "list", cwd=tmp_path)
    assert r.returncode == 0 and m["run_id"] in r.stdout and "completed" in r.stdout
    r = cli("runs", "--registry", reg, "show", m["run_id"][:6], cwd=tmp_path)
    assert r.returncode == 0
    for field in ("git_commit", "checkpoint_sha256", "env_spec_hash", "versions", "config"): assert field in r.stdout, field

def test_train_from_yaml(tmp_path):
    (tmp_path / "experiment.yaml").write_text(
        "algorithm: ppo\nenv: CartPole-v1\ntotal_timesteps: 512\nseed: 3\n"
        "config:\n  n_envs: 4\n  n_steps: 32\n  batch_size: 64\n  n_epochs: 1\n  learning_rate: 3e-4\n"
        "logger:\n  type: jsonl\n  path: out/metrics.jsonl\n")
    r = cli("train", "--config", "experiment.yaml", "--no-registry", "--json", "--save", "out/m.pt", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(l) for l in (tmp_path / "out/metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["step"] == 512 and rows[-1]["train/lr"] <= 3e-4

def test_bad_input(tmp_path, capsys, monkeypatch):
    "In-process (main returns the exit code): every bad input is one error line naming the problem, exit code 2."
    from loomnb.workflow.cli import main
    monkeypatch.chdir(tmp_path)
    def err(*args):
        rc = main(list(args)); e = capsys.readouterr().err
        assert rc == 2 and "Traceback" not in e, (rc, e)
        return e
    assert "Did you mean 'ppo'" in err("train", "--algo", "ppoo", "--env", "CartPole-v1", "--timesteps", "10", "--no-registry")
    assert "learning_rate" in err("train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "10", "--no-registry", "--set", "lerning_rate=1")
    assert "CartPole" in err("train", "--algo", "ppo", "--env", "CartPol-v1", "--timesteps", "10", "--no-registry")
    assert "--algo and --env" in err("train", "--timesteps", "10")
    assert "missing.pt" in err("eval", "--checkpoint", "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert "junk.pt" in err("eval", "--checkpoint", "junk.pt")
    assert "No run" in err("runs", "--registry", str(tmp_path / "none.sqlite"), "show", "abc")
