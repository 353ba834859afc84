"A real papermill sweep of papermill_runs/train.ipynb: 2 seeds, 2 workers, a failing run, resume, report; and the `loomnb run` CLI."
import json, os, subprocess, sys
from pathlib import Path
import pandas as pd
import pytest
from conftest import ROOT

os.environ.setdefault("WANDB_MODE", "disabled")
NB = ROOT / "papermill_runs" / "train.ipynb"
TINY = {"total_timesteps": 512, "eval_episodes": 2, "config": {"n_envs": 4, "n_steps": 32, "batch_size": 64, "n_epochs": 2}}

def test_two_seed_sweep_with_failure_and_resume(tmp_path):
    from loomnb.workflow.runner import run_sweep
    from loomnb.workflow.runs import RunRegistry
    reg = RunRegistry(tmp_path / "registry.sqlite")
    res = run_sweep(NB, TINY, grid={"env": ["CartPole-v1", "CartPol-v1"]}, seeds="0-1", out_dir=tmp_path / "sweep",
                    workers=2, registry=reg)
    assert len(res) == 4
    ok, bad = res[res["params.env"] == "CartPole-v1"], res[res["params.env"] == "CartPol-v1"]
    assert ok.status.tolist() == ["completed"] * 2 and bad.status.tolist() == ["failed"] * 2
    assert all("CartPole-v1" in e for e in bad.error)  # the env registry's did-you-mean reaches the traceback
    for _, r in ok.iterrows():
        d = Path(r.out_dir)
        for f in ("checkpoint.pt", "metrics.json", "metrics.csv", "lineage.json", "report.html", "output.ipynb"): assert (d / f).exists(), f
        rec = reg.get(r.run_id)
        assert rec["env_id"] == "CartPole-v1" and rec["env_spec_hash"] and len(rec["checkpoint_sha256"]) == 64
        assert rec["config"]["n_envs"] == 4 and rec["metrics"]["total_timesteps"] == 512
    failed = reg.get(bad.run_id.iloc[0]); assert failed["status"] == "failed" and "CartPol-v1" in failed["traceback"]
    page = (tmp_path / "sweep" / "report.html").read_text()
    assert "Learning curves" in page and "Failed:" in page and page.count("data:image/png;base64,") >= 3
    curves = pd.read_csv(tmp_path / "sweep" / "curves.csv"); assert set(curves["params.seed"]) == {0, 1}
    # resume: completed runs are skipped, failed ones run again
    res2 = run_sweep(NB, TINY, grid={"env": ["CartPole-v1", "CartPol-v1"]}, seeds="0-1", out_dir=tmp_path / "sweep", registry=reg)
    assert res2["skipped"].tolist() == [True, True, False, False]
    assert res2[res2.skipped].run_id.tolist() == ok.run_id.tolist()

def test_unknown_parameter_lists_the_notebooks_parameters(tmp_path):
    from loomnb.workflow.runner import run_sweep
    with pytest.raises(ValueError, match="total_timesteps") as e:
        run_sweep(NB, {"total_timestep": 10}, out_dir=tmp_path)
    assert "Did you mean 'total_timesteps'" in str(e.value)

def test_cli_run(tmp_path):
    bin_ = Path(sys.executable).parent / "loomnb"
    r = subprocess.run([str(bin_), "run", str(NB), "-p", "total_timesteps", "256", "-p", "eval_episodes", "0",
                        "-p", "config", json.dumps(TINY["config"]), "--seeds", "0", "--grid", "lr=1e-3,3e-4",
                        "--out-dir", str(tmp_path / "cli"), "--workers", "2"],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "WANDB_MODE": "disabled"})
    assert r.returncode == 0, r.stdout + r.stderr
    res = pd.read_csv(tmp_path / "cli" / "results.csv")
    assert sorted(res["params.lr"]) == [3e-4, 1e-3] and (res.status == "completed").all()
    lrs = [json.loads((Path(d) / "lineage.json").read_text())["config"]["learning_rate"] for d in res.out_dir]
    assert sorted(lrs) == [3e-4, 1e-3]
    assert (tmp_path / "cli" / "report.ipynb").exists() and (tmp_path / "cli" / "report.html").exists()
