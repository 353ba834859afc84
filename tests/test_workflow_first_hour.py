"What a new user meets first, end to end in fresh processes: tuned defaults and their log line, one-line errors for bad input, a summary at the end of `loomnb train`, `loomnb run` with progress lines and no kernel TCP warnings, and sweep runs in the one registry."
import json, os, subprocess, sys
from pathlib import Path
import pytest
from conftest import ROOT

ENV = {**os.environ, "WANDB_MODE": "disabled", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
TINY = str(ROOT / "tests/data/tiny_run.ipynb")

def cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "loomnb", *args], cwd=cwd, env={**ENV, **(env or {})}, capture_output=True, text=True, timeout=300)

def test_bad_input_one_line(tmp_path, capsys, monkeypatch):
    "Each mistake is one error line that names what the user wrote (exit code 2, no traceback)."
    from loomnb.workflow.cli import main
    monkeypatch.chdir(tmp_path)
    def err(*args):
        rc = main(list(args)); e = capsys.readouterr().err
        assert rc == 2 and "Traceback" not in e and len(e.strip().splitlines()) == 1, (rc, e)
        return e
    assert "--config missing.yaml: no such file" in err("train", "--config", "missing.yaml")
    (tmp_path / "bad.yaml").write_text("algorithm: ppo\nenv: [CartPole\n")
    assert "invalid YAML at line 3, column 1" in err("train", "--config", "bad.yaml")
    (tmp_path / "list.yaml").write_text("- ppo\n")
    assert "expected a mapping" in err("train", "--config", "list.yaml")
    e = err("train", "--algo", "ppo", "--env", "CartPol-v1", "--timesteps", "10", "--no-registry")
    assert "loomnb's registry or gymnasium's" in e and e.count("'CartPole-v1'") == 1
    assert "'bogus' is not a run status" in err("runs", "--registry", str(tmp_path / "r.sqlite"), "list", "--status", "bogus")
    assert "Did you mean 'completed'" in err("runs", "--registry", str(tmp_path / "r.sqlite"), "list", "--status", "complete")
    assert main(["train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "2.5"]) == 2
    assert "--timesteps: expected a whole number, got '2.5'" in capsys.readouterr().err
    assert "batch_size=512 is more than one rollout" in err("train", "--algo", "ppo", "--env", "CartPole-v1", "--timesteps", "64",
                                                            "--n-envs", "1", "--set", "batch_size=512", "--no-registry")

def test_train_summary_eval_errors(tmp_path):
    "1e5-style counts, `algo` in YAML, the tuned log line, the summary table; then eval's checks against the checkpoint."
    (tmp_path / "exp.yaml").write_text("algo: ppo\nenv: CartPole-v1\ntotal_timesteps: 1.0e3\nseed: 1\n")
    r = cli("train", "--config", "exp.yaml", "--timesteps", "1e3", "--n-envs", "1", "--save", "m.pt", "--eval-episodes", "2",
            "--registry", "r.sqlite", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "rl-zoo3's tuned settings" in out and "batch_size 256 -> 32" in out and "stop_reason" not in out
    for row in ("return (last 100 episodes)", "eval return", "95% CI", "steps  ", "steps/s", "checkpoint  ", "m.pt"): assert row in out, row
    reg = json.loads(cli("runs", "--registry", "r.sqlite", "list", "--json", cwd=tmp_path).stdout)
    assert reg[-1]["params"]["tuned_from"]["source"] == "rl-zoo3"
    def err(*args):
        r = cli("eval", "--checkpoint", "m.pt", *args, cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        return r.stderr
    assert "--episodes must be a positive" in err("--episodes", "0")
    assert "this checkpoint was trained on CartPole-v1" in err("--env", "Pendulum-v1")
    assert "holds a 'ppo' run, not 'dqn'" in err("--algo", "dqn")
    r = cli("eval", "--checkpoint", "m.pt", "--episodes", "2", "--registry", "r.sqlite", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = json.loads(cli("runs", "--registry", "r.sqlite", "list", "--json", cwd=tmp_path).stdout)
    assert [x["kind"] for x in runs] == ["train", "eval"] and runs[-1]["status"] == "completed"   # failed evals were never started

def test_runs_show_into_head(tmp_path):
    "`loomnb runs show ID | head -1`: the reader closes the pipe early; no BrokenPipeError traceback, exit 0."
    from loomnb.workflow.runs import RunRegistry
    reg = RunRegistry(tmp_path / "r.sqlite")
    rid = reg.start(params={"x": "y" * 5000}, seed=0, algo="ppo", env="CartPole-v1"); reg.finish(rid, metrics={"m": 1.0})
    sh = f"{sys.executable} -m loomnb runs --registry r.sqlite show {rid} | head -1"
    r = subprocess.run(["bash", "-o", "pipefail", "-c", sh], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert r.stdout.startswith("id:") and "BrokenPipe" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr

def test_run_progress_one_registry(tmp_path):
    "`loomnb run`: a line as each run starts and ends, a compact summary, no kernel TCP warnings; the runs are in the default registry."
    env = {"LOOMNB_REGISTRY": str(tmp_path / "runs/registry.sqlite")}
    r = cli("run", TINY, "-p", "steps", "5", "--grid", "lr=0.1,0.3", "--seeds", "0", "--out-dir", "sweep", "--no-report-notebook",
            cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[1/2] lr=0.1 seed=0: started" in r.stdout and "[2/2] lr=0.3 seed=0: completed in" in r.stdout, r.stdout
    assert "2 runs: 2 completed" in r.stdout and max(map(len, r.stdout.splitlines())) < 160, r.stdout
    assert "without encryption" not in r.stderr, r.stderr
    assert not (tmp_path / "sweep/registry.sqlite").exists()
    ls = json.loads(cli("runs", "list", "--json", cwd=tmp_path, env=env).stdout)
    assert len(ls) == 2 and {x["kind"] for x in ls} == {"notebook"}
    show = cli("runs", "show", ls[0]["id"], cwd=tmp_path, env=env)
    assert show.returncode == 0 and ls[0]["id"] in show.stdout

def test_predict_nan_and_bandit_feedback(tmp_path):
    "In-process: `predict` refuses NaN observations; a bandit refuses a reward given as a string and an action it did not offer, and warns when a delayed reward finds no decision."
    import asyncio, warnings
    import numpy as np
    from loomnb.train.learner import Trainer
    tr = Trainer("ppo", env="CartPole-v1", seed=0, config={"n_envs": 2, "n_steps": 16, "batch_size": 32})
    with pytest.raises(ValueError, match="predict: `obs` holds NaN or inf"): tr.predict(np.array([0.0, np.nan, 0.0, 0.0]))
    from loomnb.bandits.service import ReinforcementLearningFactory
    from prometheus_client import CollectorRegistry
    async def run():
        rl = ReinforcementLearningFactory.create(dict(default_algorithm="linucb", reward_wait_seconds=30.0),
                                                 sqlite_path=tmp_path / "rl.sqlite3", registry=CollectorRegistry(), seed=0)
        await rl.connect(background=False)
        try:
            a, meta = await rl.get_action("m", [0.1, 0.2], [0, 1, 2])
            with pytest.raises(ValueError, match="got the string '1'"): await rl.process_feedback("m", [0.1, 0.2], a, "1")
            with pytest.raises(ValueError, match=r"`action_index`=9 was not offered: `available_actions` is \[0, 1, 2\]"):
                await rl.process_feedback("m", [0.1, 0.2], 9, 1.0, available_actions=[0, 1, 2])
            with pytest.raises(ValueError, match="got the string"): await rl.record_reward(meta["decision_id"], "1")
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                assert await rl.record_reward("no-such-decision", 1.0) is False
            assert any("not waiting (an unknown id" in str(w.message) for w in ws)
            assert await rl.record_reward(meta["decision_id"], 1.0)
        finally: await rl.close()
    asyncio.run(run())
