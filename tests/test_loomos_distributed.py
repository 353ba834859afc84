"The LoomOS form with distributed=True on two real torchrun ranks (gloo, CPU): identical networks, split budget, own env streams."
import json, os, subprocess, sys, textwrap
import pytest
pytestmark = pytest.mark.exclusive   # runs alone under two pytest workers (conftest.py)

WORKER = textwrap.dedent('''
    import json, sys, torch
    torch.set_num_threads(1)
    from loomnb.distributed import distributed, max_param_diff, unwrap
    from loomnb.algos import PPOTrainer, PPOConfig
    out = sys.argv[1]
    with distributed(timeout_s=120) as info:
        cfg = PPOConfig(n_envs=2, n_steps=32, batch_size=64, n_epochs=2, clip_epsilon=0.2, distributed=True,
                        sync_frequency=2, log_interval=1)
        trainer = PPOTrainer(cfg, seed=7)
        m = trainer.train(total_timesteps=512)
        pol = unwrap(trainer.policy)
        res = {"rank": info.rank, "world_size": m.get("world_size"), "steps": trainer.trainer.state.global_step,
               "episodes": trainer.trainer.state.episodes, "mean_reward": m["mean_reward"],
               "diff": max_param_diff(pol), "psum": float(sum(p.double().sum() for p in pol.parameters())),
               "ddp": trainer._dist_done.get("ddp"), "syncs": sum(type(c).__name__ == "_ParamSync" for c in trainer.trainer.callbacks)}
        with open(f"{out}/rank{info.rank}.json", "w") as f: json.dump(res, f)
''')

def test_ppotrainer_distributed_two_ranks(tmp_path):
    script = tmp_path / "worker.py"; script.write_text(WORKER)
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--max_restarts", "0",
           str(script), str(tmp_path)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    r0, r1 = [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]
    assert r0["world_size"] == r1["world_size"] == 2
    assert r0["steps"] == r1["steps"] == 256                      # the global budget of 512, split over 2 ranks
    assert r0["diff"] == 0.0 and r0["psum"] == r1["psum"]         # one network: gradients averaged, rank 0's broadcast
    assert r0["ddp"] == ["policy"] and r0["syncs"] == r1["syncs"] == 1
    assert r0["mean_reward"] != r1["mean_reward"] or r0["episodes"] != r1["episodes"]  # each rank its own env stream
