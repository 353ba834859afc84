"""On-policy checkpoints resume exactly across processes, and the PPO bench script runs end to end."""
import json, os, subprocess, sys, textwrap
from pathlib import Path
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
CFG = dict(n_envs=4, n_steps=64, batch_size=64, n_epochs=2)


def _py(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_resume_in_fresh_process_equals_uninterrupted(tmp_path, algo):
    cfg = CFG if algo == "ppo" else dict(n_envs=4, n_steps=16)
    common = f"""
        import torch; torch.set_num_threads(1)
        from loomnb.learner import Trainer, Callback
        CFG = {cfg!r}
        class SaveAndStop(Callback):
            def after_iteration(self, state):
                if state.iteration == 3: self.trainer.save("mid.pt"); return False
    """
    full = _py(common + f"""
        t = Trainer({algo!r}, env="CartPole-v1", seed=7, config=CFG); t.train(2048); t.save("full.pt")
    """, tmp_path)
    assert full.returncode == 0, full.stderr
    first = _py(common + f"""
        Trainer({algo!r}, env="CartPole-v1", seed=7, config=CFG, callbacks=[SaveAndStop()]).train(2048)
    """, tmp_path)
    assert first.returncode == 0, first.stderr
    second = _py(common + """
        t = Trainer.from_checkpoint("mid.pt"); t.train(); t.save("resumed.pt")
    """, tmp_path)
    assert second.returncode == 0, second.stderr
    a = torch.load(tmp_path / "full.pt", weights_only=True)
    b = torch.load(tmp_path / "resumed.pt", weights_only=True)
    for k, v in a["algo_state"]["policy"].items(): assert torch.equal(v, b["algo_state"]["policy"][k]), k
    assert a["train_state"]["ep_returns"] == b["train_state"]["ep_returns"]
    assert a["train_state"]["global_step"] == b["train_state"]["global_step"] == 2048


def test_bench_ppo_script_runs(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_ppo.py"), "--seeds", "1", "--libs", "loomnb",
                        "--timesteps", "2048", "--json", str(out)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r[0]["lib"] == "loomnb" and r[0]["steps"] == 2048 and r[0]["sps"] > 0 and r[0]["rss_mb"] > 0
    assert "loomnb" in p.stdout
