"Real multi-process checks of loomnb.distributed: torchrun + gloo on CPU, failure handling, NCCL on GPU machines."
import json, os, subprocess, sys, time
from pathlib import Path
import pytest
import torch

pytestmark = [pytest.mark.exclusive, pytest.mark.filterwarnings("ignore::FutureWarning")]

def _env(**extra):
    e = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled", **extra}
    return e

def _torchrun(nproc, *args, timeout=120, **env):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
           "-m", "loomnb.distributed", *args]
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=_env(**env), capture_output=True, text=True, timeout=timeout)
    return r, time.monotonic() - t0

def test_torchrun_two_ranks_gloo(tmp_path):
    r, _ = _torchrun(2, "smoke", "--steps", "15", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    res = [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]
    for i, x in enumerate(res):
        assert (x["rank"], x["world_size"], x["backend"]) == (i, 2, "gloo")
        assert x["init_diff"] == 0.0 and x["final_diff"] == 0.0   # rank 0's weights broadcast, kept identical
        assert x["grad_averaged"]                                  # applied gradient != local gradient
    assert res[0]["data_sum"] != res[1]["data_sum"]                # each rank trained on its own data

def test_failing_rank_ends_job_with_clear_error(tmp_path):
    r, dt = _torchrun(2, "smoke", "--steps", "200", "--fail-rank", "1", "--timeout-s", "30", timeout=90)
    assert r.returncode != 0
    assert "deliberate failure on rank 1" in r.stderr
    assert "[loomnb.distributed] rank 1/2" in r.stderr
    assert dt < 60, f"job took {dt:.1f}s to fail"

def test_spawn_failure_raises_naming_rank():
    from loomnb.distributed import spawn, ddp_smoke
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="rank 1 of 2 failed"):
        spawn(ddp_smoke, 2, (200, 0, 1), timeout_s=60)
    assert time.monotonic() - t0 < 60

@pytest.mark.cuda
def test_nccl_path(tmp_path):
    if not torch.cuda.is_available(): pytest.skip("no CUDA device")
    if not torch.distributed.is_nccl_available(): pytest.skip("torch build without NCCL")
    n = min(2, torch.cuda.device_count())  # NCCL needs one device per rank
    r, _ = _torchrun(n, "smoke", "--steps", "15", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    for i in range(n):
        x = json.loads((tmp_path / f"rank{i}.json").read_text())
        assert x["backend"] == "nccl" and x["final_diff"] == 0.0
        if n > 1: assert x["grad_averaged"]

def test_two_node_recipe_of_the_docs_trains_ppo_on_loopback(tmp_path):
    """The multi-node recipe of the scaling page, as written there: one `torchrun --nnodes 2` per "node" with the
    same c10d rendezvous endpoint (here 127.0.0.1), one rank each, running `loomnb.distributed train` on PPO."""
    from loomnb.distributed import free_port, DistributedTrainer, sync_report
    torchrun = [str(Path(sys.executable).with_name("torchrun"))]
    if not Path(torchrun[0]).exists(): torchrun = [sys.executable, "-m", "torch.distributed.run"]
    cmd = [*torchrun, "--nnodes", "2", "--nproc_per_node", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint",
           f"127.0.0.1:{free_port()}", "--rdzv_id", "ppo-1", "-m", "loomnb.distributed", "train", "--algo", "ppo",
           "--env", "CartPole-v1", "--timesteps", "8192", "--out", str(tmp_path)]
    procs = [subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try: outs = [p.communicate(timeout=150) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None: p.kill()
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    res = [json.loads((tmp_path / f"rank{i}.json").read_text()) for i in range(2)]
    assert sorted(x["node_rank"] for x in res) == [0, 1] and all(x["nnodes"] == 2 and x["world_size"] == 2 for x in res)
    assert all(x["max_param_diff"] == 0.0 for x in res) and res[0]["params_sum"] == res[1]["params_sum"]  # identical nets
    assert res[0]["rank_steps"] == [4096, 4096] and len(set(res[0]["rank_env_seeds"])) == 2             # both collected
    # both contributed to the gradients: rank 0 alone (its seed, its env seed, its half of the steps) ends elsewhere
    torch.set_num_threads(1)
    alone = DistributedTrainer("ppo", "CartPole-v1", 0)
    p0 = sync_report(alone)["params_sum"]
    s = alone.train(4096)
    assert s["rank_env_seeds"][0] == res[0]["rank_env_seeds"][0] and s["rank_steps"] == [4096]
    p1 = sync_report(alone)["params_sum"]
    assert abs(p1 - p0) > 1e-6 and abs(p1 - res[0]["params_sum"]) > 1e-6
