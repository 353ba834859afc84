"Real 2-rank data-parallel training through torchrun (gloo, CPU) and resume with a different world size."
import json, os, sys
import pytest

pytestmark = [pytest.mark.exclusive, pytest.mark.filterwarnings("ignore::FutureWarning")]
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
    from loomnb.train.learner import Trainer
    t = DistributedTrainer.from_checkpoint(out / "ck.pt", info=DistInfo())
    assert t.state.global_step == 4096
    assert t.train(4096 + 512)["total_timesteps"] == 4096 + 512
    assert Trainer.from_checkpoint(out / "ck.pt").state.global_step == 4096  # plain Trainer: rank 0 stream, global count
    # ... and the 1-rank checkpoint on 2 ranks again: rank 0 continues its stream, rank 1 starts a fresh one
    t.save(out / "ck1.pt")
    from loomnb.distributed import launch
    rc = launch(["train", "--resume", str(out / "ck1.pt"), "--timesteps", str(4608 + 1024), "--out", str(out / "r2"),
                 "--timeout-s", "120"], 2, module="loomnb.distributed", timeout_s=240,
                env={"GLOO_SOCKET_IFNAME": "lo", "WANDB_MODE": "disabled"})
    assert rc == 0
    q0, q1 = [json.loads((out / "r2" / f"rank{r}.json").read_text()) for r in range(2)]
    assert q0["total_timesteps"] == 4608 + 1024 and q0["rank_steps"] == [2816, 2816]
    assert q0["max_param_diff"] == 0.0 and q0["params_sum"] == q1["params_sum"]
    assert q0["rank_env_seeds"][1] != q0["rank_env_seeds"][0] and min(q0["rank_episodes"]) > 0

def test_a2c_and_sac_two_ranks_stay_in_sync(tmp_path):
    "A2C goes through DDPPolicy, SAC (actor, critic, temperature) and PPO with ddp=False through the optimiser hooks."
    from loomnb.distributed import launch
    specs = [{"algo": "a2c", "env": "CartPole-v1", "timesteps": 2048, "config": {"n_envs": 4, "n_steps": 16},
              "stop_rank": 1, "stop_iteration": 5},  # a callback stops rank 1 only: both ranks must stop together
             {"algo": "sac", "env": "Pendulum-v1", "timesteps": 600,
              "config": {"learning_starts": 200, "batch_size": 64, "buffer_size": 2000}},
             {"algo": "ppo", "env": "CartPole-v1", "timesteps": 1024, "ddp": False,  # optimiser-hook path for PPO
              "config": {"n_envs": 4, "n_steps": 32, "batch_size": 64, "n_epochs": 2}},
             {"algo": "ppo", "env": "CartPole-v1", "timesteps": 4096, "seed": 3,  # target_kl: the epoch stop is collective
              "config": {"n_envs": 4, "n_steps": 64, "batch_size": 64, "n_epochs": 10, "learning_rate": 3e-3, "anneal_lr": False,
                         "target_kl": 0.004}}]
    rc = launch(["check", "--specs", json.dumps(specs), "--out", str(tmp_path), "--timeout-s", "120"], 2,
                module="loomnb.distributed", timeout_s=240, env={"GLOO_SOCKET_IFNAME": "lo", "WANDB_MODE": "disabled"})
    assert rc == 0
    r0, r1 = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    a2c, sac, ppo_hook, ppo_kl = r0
    assert ppo_hook["distributed"]["ddp"] == [] and ppo_hook["distributed"]["synced_optimizers"] == ["optimizer"]
    assert a2c["distributed"]["ddp"] == ["policy"]
    assert set(sac["distributed"]["synced_optimizers"]) >= {"actor_opt", "critic_opt"}
    for x0, x1 in zip(r0, r1):
        assert x0["max_param_diff"] == 0.0 and x0["params_sum"] == x1["params_sum"], x0["algo"]
        assert min(x0["rank_steps"]) > 0 and len(set(x0["rank_env_seeds"])) == 2
    assert sac["n_updates"] > 0  # gradient steps happened (learning_starts passed on both ranks)
    assert a2c["rank_steps"] == [5 * 64, 5 * 64] and a2c["stop_reason"] == "another rank stopped"
    assert r1[0]["stop_reason"].startswith("StopAt")
    assert ppo_kl["total_timesteps"] == 4096 and ppo_kl["rank_steps"] == [2048, 2048]
    assert 1 <= ppo_kl["train/epochs"] < 10  # the KL stop fired (same epoch on both ranks, or the job would hang)
