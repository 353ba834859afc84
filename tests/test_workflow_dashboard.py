"The training dashboard driven headless against real PPO training: start, pause, change hyperparameters, resume, stop."
import time
from pathlib import Path
import numpy as np
import pytest

def test_dashboard_controls_real_training(tmp_path):
    from loomnb.train.learner import Trainer
    from loomnb.workflow.widgets import TrainingDashboard, HTMLReport
    tr = Trainer("ppo", env="CartPole-v1", seed=0, config=dict(n_envs=4, n_steps=32, batch_size=64, n_epochs=2, anneal_lr=False,
                                                               learning_rate=1e-3, ent_coef=0.0, clip_eps=0.2))
    dash = TrainingDashboard(tr, total_timesteps=10_000_000, checkpoint_path=tmp_path / "final.pt", redraw_every=0.1)
    ctl = dash.ctl
    dash.start_btn.click()
    assert ctl.wait_until(lambda c: len(c.collector) >= 3, timeout=120)
    # pause: the step counter stops moving (at most the iteration in flight completes)
    dash.pause_btn.click(); assert ctl.status == "paused"
    # the iteration in flight (its rollout and update) finishes, then the loop parks before the next rollout
    deadline, last = time.monotonic() + 60, -1
    while time.monotonic() < deadline and tr.state.global_step != last:
        last = tr.state.global_step; time.sleep(0.5)
    frozen = tr.state.global_step; time.sleep(1.0)
    assert tr.state.global_step == frozen and ctl._thread.is_alive()
    # new hyperparameters typed in while paused reach the next update
    dash.inputs["learning_rate"].value = 3e-4; dash.inputs["ent_coef"].value = 0.02; dash.inputs["clip_eps"].value = 0.1
    dash.apply_btn.click(); assert "queued" in dash.message.value
    n = len(ctl.collector)
    dash.resume_btn.click()
    assert ctl.wait_until(lambda c: len(c.collector) >= n + 2, timeout=120) and tr.state.global_step > frozen
    dash.stop_btn.click(); assert ctl.wait(120)
    lr = ctl.collector.series("train/lr")[1]; clip = ctl.collector.series("train/clip_eps")[1]
    assert lr[:n].tolist() == [1e-3] * n and lr[n] == 3e-4 and lr[-1] == 3e-4   # changed exactly at the next update
    assert clip[n] == 0.1 and tr.config.ent_coef == 0.02
    assert ctl.applied[0]["iteration"] == n and ctl.status == "stopped" and tr.state.stop_reason == "stopped from the dashboard"
    assert tr.state.global_step < 10_000_000 and (tmp_path / "final.pt").exists()
    resumed = Trainer.from_checkpoint(tmp_path / "final.pt")
    assert resumed.state.global_step == tr.state.global_step and resumed.config.learning_rate == 3e-4
    assert dash.curve.format == "svg+xml" and b"<svg" in bytes(dash.curve.value) and dash.progress.description == "stopped"
    page = HTMLReport(ctl.collector).save(tmp_path / "report.html").read_text()
    assert "data:image/png;base64," in page and "train/lr" in page
