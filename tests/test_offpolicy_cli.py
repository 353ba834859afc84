"""Off-policy algorithms through the CLI (train, save, eval) and exact resume in a fresh process."""
import json, os, subprocess, sys, textwrap
from pathlib import Path
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "WANDB_MODE": "disabled"}


def _run(args, cwd, timeout=300):
    return subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("algo,env,sets", [
    ("dqn", "CartPole-v1", ["learning_starts=200", "double_dqn=true", "dueling=true", "n_step=3", "prioritized=true"]),
    ("sac", "Pendulum-v1", ["learning_starts=100", "hidden=32", "batch_size=32"]),
    ("ddpg", "MountainCarContinuous-v0", ["learning_starts=100", "hidden=32", "batch_size=32"]),
    ("pets", "Pendulum-v1", ["population=16", "elites=4", "cem_iterations=2", "horizon=4", "model_steps=10",
                             "model_train_freq=100", "hidden=16"]),
    ("dreamer", "Pendulum-v1", ["learning_starts=200", "batch_size=4", "seq_len=8", "horizon=3", "deter=16", "stoch=4",
                                "embed=8", "hidden=16", "train_freq=50"]),
])
def test_cli_train_save_eval(tmp_path, algo, env, sets):
    cmd = [sys.executable, "-m", "loomnb", "train", "--algo", algo, "--env", env, "--timesteps", "600",
           "--save", "model.pt", "--no-registry", "--json"]
    for s in sets: cmd += ["--set", s]
    r = _run(cmd, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "model.pt").is_file()
    ck = torch.load(tmp_path / "model.pt", weights_only=True)
    assert ck["algo"] == algo
    r = _run([sys.executable, "-m", "loomnb", "eval", "--checkpoint", "model.pt", "--episodes", "2"], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("algo", ["sac", "pets"])
def test_cli_rejects_discrete_env(tmp_path, algo):
    r = _run([sys.executable, "-m", "loomnb", "train", "--algo", algo, "--env", "CartPole-v1", "--timesteps", "100",
              "--no-registry"], tmp_path)
    assert r.returncode != 0
    assert "Discrete" in r.stderr and "dqn" in r.stderr and algo.upper() in r.stderr


@pytest.mark.parametrize("algo,sets,name", [("pets", ["horizon=0"], "horizon"), ("dreamer", ["horizon=0"], "horizon"),
                                           ("dreamer", ["learning_starts=100", "seq_len=300", "train_freq=50"], "seq_len=300")])
def test_cli_names_a_bad_model_based_parameter(tmp_path, algo, sets, name):
    cmd = [sys.executable, "-m", "loomnb", "train", "--algo", algo, "--env", "Pendulum-v1", "--timesteps", "300", "--no-registry"]
    for s in sets: cmd += ["--set", s]
    r = _run(cmd, tmp_path)
    assert r.returncode != 0 and name in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("algo,env,cfg", [
    ("sac", "Pendulum-v1", dict(hidden=32, batch_size=32, learning_starts=100, save_replay_buffer=True, n_envs=2)),
    ("dqn", "CartPole-v1", dict(hidden=32, learning_starts=100, train_freq=16, gradient_steps=8, prioritized=True,
                                double_dqn=True, target_update_interval=50, save_replay_buffer=True)),
    # n-step: the transitions still pending in the n-step writer at the save are part of the checkpoint
    ("dqn", "CartPole-v1", dict(hidden=32, learning_starts=100, train_freq=8, gradient_steps=4, n_step=3, n_envs=2,
                                target_update_interval=50, save_replay_buffer=True)),
    # PETS: the model refits on the restored buffer; the planner's generator and warm starts are in the checkpoint
    ("pets", "Pendulum-v1", dict(population=16, elites=4, cem_iterations=2, horizon=4, model_steps=10, model_train_freq=100,
                                 hidden=16, learning_starts=100)),
])
def test_resume_in_fresh_process_equals_uninterrupted(tmp_path, algo, env, cfg):
    common = f"""
        import torch; torch.set_num_threads(1)
        from loomnb.train.learner import Trainer, Callback
        CFG = {cfg!r}
        class SaveAndStop(Callback):
            def after_iteration(self, state):
                if state.global_step >= 400: self.trainer.save("mid.pt"); return False
    """
    steps = 800
    for code in [f't = Trainer({algo!r}, env={env!r}, seed=3, config=CFG); t.train({steps}); t.save("full.pt")',
                 f'Trainer({algo!r}, env={env!r}, seed=3, config=CFG, callbacks=[SaveAndStop()]).train({steps})',
                 't = Trainer.from_checkpoint("mid.pt"); t.train(); t.save("resumed.pt")']:
        r = _run([sys.executable, "-c", textwrap.dedent(common) + code], tmp_path)
        assert r.returncode == 0, r.stderr[-3000:]
    a = torch.load(tmp_path / "full.pt", weights_only=True)
    b = torch.load(tmp_path / "resumed.pt", weights_only=True)
    assert a["train_state"]["global_step"] == b["train_state"]["global_step"] == steps
    for net, sd in a["algo_state"]["nets"].items():
        for k, v in sd.items():
            assert torch.equal(v, b["algo_state"]["nets"][net][k]), (net, k)
