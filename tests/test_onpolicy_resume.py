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


CFGS = {"ppo": CFG, "a2c": dict(n_envs=4, n_steps=16)}


def test_resume_in_fresh_process_equals_uninterrupted(tmp_path):
    # process 1: the uninterrupted runs, then the same runs stopped after 3 iterations and saved
    first = _py(f"""
        import torch; torch.set_num_threads(1)
        from loomnb.train.learner import Trainer, Callback
        class SaveAndStop(Callback):
            def __init__(self, path): self.path = path
            def after_iteration(self, state):
                if state.iteration == 3: self.trainer.save(self.path); return False
        for algo, cfg in {CFGS!r}.items():
            t = Trainer(algo, env="CartPole-v1", seed=7, config=cfg); t.train(2048); t.save(algo + "_full.pt")
            Trainer(algo, env="CartPole-v1", seed=7, config=cfg, callbacks=[SaveAndStop(algo + "_mid.pt")]).train(2048)
    """, tmp_path)
    assert first.returncode == 0, first.stderr
    # process 2: resume from the checkpoints and finish
    second = _py(f"""
        import torch; torch.set_num_threads(1)
        from loomnb.train.learner import Trainer
        for algo in {list(CFGS)!r}:
            t = Trainer.from_checkpoint(algo + "_mid.pt"); t.train(); t.save(algo + "_resumed.pt")
    """, tmp_path)
    assert second.returncode == 0, second.stderr
    for algo in CFGS:
        a = torch.load(tmp_path / f"{algo}_full.pt", weights_only=True)
        b = torch.load(tmp_path / f"{algo}_resumed.pt", weights_only=True)
        assert a["algo"] == b["algo"] == algo
        for k, v in a["algo_state"]["policy"].items(): assert torch.equal(v, b["algo_state"]["policy"][k]), (algo, k)
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


WEAVE_CFGS = {  # the states WEAVE keeps between iterations: preference draws, Chebyshev's running returns, self-imitation
    "preference_sil": dict(beta_mode="preference", sil_coef=1.0, sil_buffer=8),
    "chebyshev_sil": dict(beta=(0.5, 0.5), scalarization="chebyshev", utopia=(125.0, 0.0), sil_coef=1.0, sil_buffer=8),
}


@pytest.mark.parametrize("name", list(WEAVE_CFGS))
def test_weave_resume_in_fresh_process_equals_uninterrupted(tmp_path, name):
    cfg = dict(n_envs=4, n_steps=64, batch_size=64, n_epochs=2, **WEAVE_CFGS[name])
    head = f"""
        import torch; torch.set_num_threads(1)
        from loomnb.train.learner import Trainer, Callback
        from loomnb.algos.weave import WEAVEConfig
        from loomnb.envs.mo import DeepSeaTreasureVecEnv
        mk = lambda: DeepSeaTreasureVecEnv(4, map="concave")
        cfg = {cfg!r}
    """
    first = _py(head + """
        class SaveAndStop(Callback):
            def after_iteration(self, state):
                if state.iteration == 3: self.trainer.save("mid.pt"); return False
        t = Trainer("weave", env=mk(), seed=7, config=WEAVEConfig(**cfg)); t.train(2048); t.save("full.pt")
        Trainer("weave", env=mk(), seed=7, config=WEAVEConfig(**cfg), callbacks=[SaveAndStop()]).train(2048)
    """, tmp_path)
    assert first.returncode == 0, first.stderr
    second = _py(head + """
        t = Trainer.from_checkpoint("mid.pt", env=mk()); t.train(); t.save("resumed.pt")
    """, tmp_path)
    assert second.returncode == 0, second.stderr
    a = torch.load(tmp_path / "full.pt", weights_only=True)
    b = torch.load(tmp_path / "resumed.pt", weights_only=True)
    for k, v in a["algo_state"]["policy"].items(): assert torch.equal(v, b["algo_state"]["policy"][k]), (name, k)
    assert a["train_state"]["ep_returns"] == b["train_state"]["ep_returns"]
    assert len(a["algo_state"]["sil"]["episodes"]) == len(b["algo_state"]["sil"]["episodes"]) > 0
