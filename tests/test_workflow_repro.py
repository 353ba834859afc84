"Reproducibility: re-running a recorded CPU run with its recorded parameters reproduces its metrics exactly."
import json, os
from pathlib import Path
import pandas as pd
from conftest import ROOT

os.environ.setdefault("WANDB_MODE", "disabled")
NB = ROOT / "papermill_runs" / "train.ipynb"

def test_rerun_of_recorded_notebook_run_reproduces_metrics(tmp_path):
    from loomnb.workflow.runner import run_notebook, rerun, deterministic_metrics
    from loomnb.workflow.runs import RunRegistry
    reg = RunRegistry(tmp_path / "registry.sqlite")
    params = {"total_timesteps": 1024, "eval_episodes": 3, "seed": 5, "config": {"n_envs": 4, "n_steps": 64, "batch_size": 64, "n_epochs": 3}}
    first = run_notebook(NB, params, tmp_path / "runs", reg)
    assert first["status"] == "completed", first["error"]
    second = rerun(first["run_id"], reg)
    assert second["status"] == "completed" and reg.get(second["run_id"])["parent_id"] == first["run_id"]
    m1, m2 = deterministic_metrics(first["metrics"]), deterministic_metrics(second["metrics"])
    assert len(m1) > 15 and m1 == m2   # exact equality of every non-timing metric, floats included
    c1, c2 = (pd.read_csv(Path(r["out_dir"]) / "metrics.csv") for r in (first, second))
    cols = [c for c in c1.columns if not c.startswith("time/")]
    pd.testing.assert_frame_equal(c1[cols], c2[cols], check_exact=True)   # the whole learning curve, not just the end

def test_rerun_of_recorded_cli_run(tmp_path, monkeypatch):
    from loomnb.workflow.experiment import train_from_config
    from loomnb.workflow.runner import rerun, deterministic_metrics
    from loomnb.workflow.runs import RunRegistry
    monkeypatch.chdir(tmp_path)
    reg = RunRegistry(tmp_path / "registry.sqlite")
    m = train_from_config({"algorithm": "ppo", "env": "CartPole-v1", "total_timesteps": 768, "seed": 2,
                           "config": {"n_envs": 2, "n_steps": 64, "batch_size": 32, "n_epochs": 2}}, registry=reg)
    again = rerun(m["run_id"], reg)
    assert deterministic_metrics(reg.get(m["run_id"])["metrics"]) == deterministic_metrics(again["metrics"])

def test_cli_runs_rerun(tmp_path, monkeypatch, capsys):
    from loomnb.workflow.cli import main, train_from_config
    from loomnb.workflow.runs import RunRegistry
    monkeypatch.chdir(tmp_path)
    reg = RunRegistry(tmp_path / "registry.sqlite")
    m = train_from_config({"algorithm": "ppo", "env": "CartPole-v1", "total_timesteps": 512, "seed": 4,
                           "config": {"n_envs": 2, "n_steps": 64, "batch_size": 32, "n_epochs": 1}}, registry=reg)
    capsys.readouterr()
    assert main(["runs", "--registry", str(reg.path), "rerun", m["run_id"]]) == 0
    assert "metrics reproduced exactly" in capsys.readouterr().out
    assert len(reg.find(status="completed")) == 2

def test_cli_runs_rerun_of_eval_run(tmp_path, monkeypatch, capsys):
    "`loomnb runs rerun` repeats a recorded `loomnb eval` (same checkpoint, env, episodes, seed, sampling): same returns."
    from loomnb.workflow.cli import main
    from loomnb.workflow.runs import RunRegistry
    from loomnb.train.learner import Trainer
    monkeypatch.chdir(tmp_path)
    tr = Trainer("ppo", "CartPole-v1", seed=3, config={"n_envs": 2, "n_steps": 32, "batch_size": 32, "n_epochs": 1})
    tr.train(256); tr.save(tmp_path / "ck.pt"); tr.close()
    reg = RunRegistry(tmp_path / "registry.sqlite")
    for extra in ([], ["--stochastic", "--n-envs", "2"]):
        assert main(["eval", "--checkpoint", str(tmp_path / "ck.pt"), "--episodes", "3", "--seed", "7",
                     "--registry", str(reg.path), *extra]) == 0
        ev = reg.find(kind="eval")[-1]
        assert ev["status"] == "completed" and ev["params"]["episodes"] == 3
        capsys.readouterr()
        assert main(["runs", "--registry", str(reg.path), "rerun", ev["id"]]) == 0
        assert "metrics reproduced exactly" in capsys.readouterr().out
        again = [r for r in reg.find(kind="eval") if r.get("parent_id") == ev["id"]]
        assert len(again) == 1 and again[0]["metrics"]["eval/mean_return"] == ev["metrics"]["eval/mean_return"]
