"""Resume works for every env kind: checkpoints record the full env id (namespace included) and its make-kwargs, and
an env whose state cannot be saved as plain data (MuJoCo here, as Box2D or Atari) restarts its episodes with a warning
and keeps training instead of crashing."""
import warnings
import numpy as np
import pytest
from loomnb.envs.registry import make
from loomnb.train.learner import Trainer, env_record, env_from_record, load_checkpoint

_ON = dict(n_envs=2, n_steps=16, batch_size=32, n_epochs=1)

def _resume_warnings(path):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = Trainer.from_checkpoint(path)
    return t, [str(x.message) for x in w if "restart" in str(x.message)]

def test_kwargs_come_back(tmp_path):
    "A gymnasium env made with non-default kwargs is made again with them (it used to come back with the defaults)."
    t = Trainer("ppo", env=make("Pendulum-v1", num_envs=2, seed=0, backend="gymnasium", g=4.0), seed=0, config=_ON); t.train(32)
    t.save(tmp_path / "p.pt")
    r, msgs = _resume_warnings(tmp_path / "p.pt")
    assert r.env.spec.kwargs == {"g": 4.0} and r.env._vec.envs[0].unwrapped.g == 4.0 and msgs == []
    assert r.train(64)["total_timesteps"] == 64

def test_namespaced_id_comes_back():
    "`ALE/Pong-v5` keeps its namespace in the record, so the checkpoint's env can be found again."
    pytest.importorskip("ale_py")
    e = make("ALE/Pong-v5", num_envs=1, seed=0, frameskip=2)
    rec = env_record(e); assert rec["id"] == "ALE/Pong-v5" and rec["kwargs"] == {"frameskip": 2}
    again = env_from_record(rec, seed=0); assert again.spec.id == "ALE/Pong-v5" and again.spec.hash == e.spec.hash
    e.close(); again.close()

def test_mujoco_resume_restarts_episodes(tmp_path):
    "A MuJoCo env holds MjModel/MjData: resume warns, restarts its episodes and trains on (no bare AssertionError)."
    pytest.importorskip("mujoco")
    t = Trainer("ppo", env="InvertedPendulum-v5", seed=0, config=_ON); t.train(32); t.save(tmp_path / "m.pt")
    assert "MjModel" in load_checkpoint(tmp_path / "m.pt")["env"]["state"]["restart"]
    r, msgs = _resume_warnings(tmp_path / "m.pt")
    assert msgs and "episodes restart" in msgs[0]
    assert r.train(96)["total_timesteps"] == 96
    (r2, _), (r3, _) = _resume_warnings(tmp_path / "m.pt"), _resume_warnings(tmp_path / "m.pt")
    np.testing.assert_array_equal(r2.algo.collector.obs, r3.algo.collector.obs)   # reproducible: the saved generators are used

def test_async_env_resume_restarts_episodes(tmp_path):
    "An async gymnasium vector env has no get_state: resume restarts its episodes with a warning instead of crashing."
    t = Trainer("ppo", env=make("CartPole-v1", num_envs=2, seed=0, backend="gymnasium", vectorization_mode="async"), seed=0, config=_ON)
    t.train(32); t.save(tmp_path / "a.pt"); t.close()
    env = make("CartPole-v1", num_envs=2, seed=0, backend="gymnasium", vectorization_mode="async")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always"); r = Trainer.from_checkpoint(tmp_path / "a.pt", env=env)
    assert any("no state of this env" in str(x.message) for x in w)
    assert r.train(64)["total_timesteps"] == 64; r.close()
