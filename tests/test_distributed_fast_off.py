"With the engine room switched off (`LOOMNB_FAST=0`) two ranks average through torchrun's plain gloo all-reduce (DDP, or the optimiser hook) and still train in sync."
import json
import pytest

pytestmark = [pytest.mark.exclusive, pytest.mark.filterwarnings("ignore::FutureWarning")]
ENV = {"GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", "LOOMNB_FAST": "0"}

def test_two_ranks_fast_off_use_the_plain_all_reduce_and_learn(tmp_path):
    from loomnb.distributed import launch
    cfg = {"n_envs": 4, "n_steps": 128, "batch_size": 128, "n_epochs": 4, "learning_rate": 2.5e-3}
    specs = [{"algo": "ppo", "env": "CartPole-v1", "timesteps": 12288, "config": cfg, "exchange": "auto"},
             {"algo": "ppo", "env": "CartPole-v1", "timesteps": 1024, "config": cfg, "exchange": "shm"},  # the switch wins
             {"algo": "ppo", "env": "CartPole-v1", "timesteps": 1024, "config": cfg, "ddp": False}]    # optimiser hook
    rc = launch(["check", "--specs", json.dumps(specs), "--out", str(tmp_path), "--timeout-s", "120"], 2,
                module="loomnb.distributed", timeout_s=240, env=ENV)
    assert rc == 0
    r0, r1 = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [x["distributed"]["exchange"] for x in r0] == [{"policy": "allreduce"}, {"policy": "allreduce"}, {"optimizer": "allreduce"}]
    assert r0[0]["distributed"]["ddp"] == ["policy"] and r0[2]["distributed"]["synced_optimizers"] == ["optimizer"]
    for x0, x1 in zip(r0, r1):
        assert x0["max_param_diff"] == 0.0 and x0["params_sum"] == x1["params_sum"], x0["distributed"]
        assert min(x0["rank_steps"]) > 0 and len(set(x0["rank_env_seeds"])) == 2
    assert min(r0[0]["rank_mean_reward"]) > 60, r0[0]["rank_mean_reward"]   # it learns (random play: about 22)
