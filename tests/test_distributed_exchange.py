"PairExchange between two real torchrun ranks (gloo, CPU): bit-identical means on both ranks, both transports, DDP and optimiser-hook paths."
import json, os, subprocess, sys, textwrap
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")
ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}

WORKER = textwrap.dedent('''
    import json, sys, torch, torch.distributed as dist
    from loomnb.distributed import distributed, pair_exchange, PairExchange
    out = sys.argv[1]
    with distributed(backend="gloo", device="cpu", timeout_s=60) as info:
        r, res = info.rank, {}
        for transport in ("shm", "p2p"):
            ex = pair_exchange(1000, transport)
            assert isinstance(ex, PairExchange) and ex.transport == transport
            g = torch.Generator().manual_seed(100 + r)
            digests, errs = [], []
            for i in range(300):  # many rounds: the shared-memory slots are reused (double buffering)
                n = [1, 7, 1000, 1500][i % 4]  # 1500 > numel: falls back to isend/irecv on both ranks
                t = torch.randn(n, generator=g) * (10.0 ** (i % 5 - 2))
                m = ex.average(t)
                ref = t.clone(); dist.all_reduce(ref); ref /= 2
                errs.append(float((m - ref).abs().max() / (ref.abs().max() + 1e-30)))
                digests.append(float(m.double().sum()) + float((m * torch.arange(n)).double().sum()))
                assert torch.equal(t, t)  # input untouched
            both = [None, None]; dist.all_gather_object(both, [m.tolist() for m in [ex.average(torch.full((5,), float(r)))]])
            res[transport] = {"digests": digests, "max_rel_err": max(errs), "half": both[0]}
        # rank 1 cannot see rank 0's file (another /dev/shm namespace): both ranks fall back to isend/irecv
        import contextlib, os.path
        from unittest import mock
        with (mock.patch("os.path.exists", lambda p: False) if r == 1 else contextlib.nullcontext()):
            ex = PairExchange(10, "shm")
        res["fallback"] = [ex.transport, ex.average(torch.full((3,), float(r))).tolist()]
        res["auto"] = getattr(pair_exchange(10), "transport", None)
        res["allreduce"] = pair_exchange(10, "allreduce")
        with open(f"{out}/rank{r}.json", "w") as f: json.dump(res, f)
''')

def test_pair_exchange_two_ranks(tmp_path):
    (tmp_path / "w.py").write_text(WORKER)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(tmp_path / "w.py"), str(tmp_path)]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    r0, r1 = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for tr in ("shm", "p2p"):
        assert r0[tr]["digests"] == r1[tr]["digests"], tr      # bit-identical on both ranks, every round
        assert r0[tr]["max_rel_err"] < 1e-6, tr                # the all-reduce's mean up to rounding
        assert r0[tr]["half"] == [[0.5] * 5], tr               # (0 + 1) / 2
    assert r0["auto"] == "shm" and r0["allreduce"] is None
    assert r0["fallback"] == r1["fallback"] == ["p2p", [0.5] * 3]

def test_ppo_and_sac_two_ranks_identical_with_each_exchange(tmp_path):
    from loomnb.distributed import launch
    cfg = {"n_envs": 4, "n_steps": 64, "batch_size": 64, "n_epochs": 2}
    specs = [{"algo": "ppo", "env": "CartPole-v1", "timesteps": 2048, "config": cfg, "exchange": e} for e in ("auto", "p2p", "allreduce")]
    specs += [{"algo": "ppo", "env": "CartPole-v1", "timesteps": 1024, "config": cfg, "ddp": False},  # optimiser hook + shm
              {"algo": "sac", "env": "Pendulum-v1", "timesteps": 500, "config": {"learning_starts": 200, "batch_size": 64, "buffer_size": 2000}}]
    rc = launch(["check", "--specs", json.dumps(specs), "--out", str(tmp_path), "--timeout-s", "120"], 2,
                module="loomnb.distributed", timeout_s=240, env={"GLOO_SOCKET_IFNAME": "lo", "WANDB_MODE": "disabled"})
    assert rc == 0
    r0, r1 = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [x["distributed"]["exchange"] for x in r0[:3]] == [{"policy": "shm"}, {"policy": "p2p"}, {"policy": "allreduce"}]
    assert r0[3]["distributed"]["exchange"] == {"optimizer": "shm"}
    assert set(r0[4]["distributed"]["exchange"].values()) == {"shm"} and r0[4]["n_updates"] > 0
    for x0, x1 in zip(r0, r1):
        assert x0["max_param_diff"] == 0.0 and x0["params_sum"] == x1["params_sum"], x0["distributed"]
        assert min(x0["rank_steps"]) > 0 and len(set(x0["rank_env_seeds"])) == 2
    # the same data and seeds: the exchanges differ from the all-reduce only by rounding, not by what they average
    assert abs(r0[0]["params_sum"] - r0[2]["params_sum"]) < 1e-2 * max(1.0, abs(r0[2]["params_sum"]))
