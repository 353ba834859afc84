"Real 2-rank data-parallel training through torchrun (gloo, CPU) and resume with a different world size."
import json, os, sys
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
CFG = {"n_envs": 4, "n_steps": 64, "batch_size": 128, "n_epochs": 2}

def _launch(tmp_path, algo, timesteps, cfg, nproc=2):
    from loomnb.distributed import launch
    out = tmp_path / algo
    rc = launch(["train", "--algo", algo, "--env", "CartPole-v1", "--timesteps", str(timesteps), "--config", json.dumps(cfg),
                 "--out", str(out), "--save", str(out / "ck.pt"), "--timeout-s", "120"],
                nproc, module="loomnb.distributed", timeout_s=240,
                env={"GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"})
    assert rc == 0, f"torchrun exited with {rc}"
    return out, [json.loads((out / f"rank{r}.json").read_text()) for r in range(nproc)]

def test_ppo_two_ranks_identical_params_and_both_contribute(tmp_path):
    out, res = _launch(tmp_path, "ppo", 4096, CFG)
    r0, r1 = res
    assert r0["distributed"]["ddp"] == ["policy"]
    assert r0["max_param_diff"] == 0.0 and r1["max_param_diff"] == 0.0   # identical after training
    assert r0["params_sum"] == r1["params_sum"]
    assert r0["rank_steps"] == [2048, 2048] and min(r0["rank_episodes"]) > 0  # both ranks stepped their envs
    assert len(set(r0["rank_env_seeds"])) == 2                             # ... with different seeds
    assert r0["rank_mean_reward"][0] != r0["rank_mean_reward"][1]           # ... and saw different episodes
    assert r0["total_timesteps"] == 4096
    # resume the 2-rank job in one process (world size 1): rank 0's stream, global step counter kept
    from loomnb.distributed import DistributedTrainer, DistInfo
    from loomnb.learner import Trainer
    t = DistributedTrainer.from_checkpoint(out / "ck.pt", info=DistInfo())
    assert t.state.global_step == 4096
    assert t.train(4096 + 512)["total_timesteps"] == 4096 + 512
    assert Trainer.from_checkpoint(out / "ck.pt").state.global_step == 4096  # plain Trainer: rank 0 stream, global count
