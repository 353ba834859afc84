"PairExchange between two real torchrun ranks (gloo, CPU): bit-identical means on both ranks, both transports, PairGradSync, DDP and optimiser-hook paths."
import json, os, subprocess, sys, textwrap
import pytest

pytestmark = [pytest.mark.exclusive, pytest.mark.filterwarnings("ignore::FutureWarning")]
ENV = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}

WORKER = textwrap.dedent('''
    import json, sys, time, torch, torch.distributed as dist, torch.nn as nn
    from loomnb.distributed import distributed, pair_exchange, PairExchange, DDPPolicy, PairGradSync, unwrap
    class Net(nn.Module):
        def __init__(self):
            super().__init__(); self.a, self.b, self.only1, self.never = nn.Linear(3, 8), nn.Linear(8, 2), nn.Linear(3, 2), nn.Linear(3, 1)
        def forward(self, x, use_only1): return self.b(torch.tanh(self.a(x))) + (self.only1(x) if use_only1 else 0)
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
        # PairGradSync (DDPPolicy's two-rank path): averaged at the end of each backward pass
        for transport in ("shm", "p2p"):
            torch.manual_seed(r)  # different initial weights: DDPPolicy must broadcast rank 0's
            pol = DDPPolicy(Net(), exchange=transport); net = unwrap(pol)
            assert isinstance(pol.grad_sync, PairGradSync) and pol.exchange.transport == transport
            ref = Net(); ref.load_state_dict(net.state_dict())
            g = torch.Generator().manual_seed(10 + r)
            xs = [torch.randn(16, 3, generator=g) for _ in range(2)]
            for x in xs: pol(x, r == 1).pow(2).sum().backward()  # two backward passes before one step: accumulated
            for x in xs: ref(x, r == 1).pow(2).sum().backward()  # the same locally, then all-reduced as reference
            err, grads = 0.0, {}
            for (k, p), q in zip(net.named_parameters(), ref.parameters()):
                m = torch.zeros_like(q) if q.grad is None else q.grad.clone(); dist.all_reduce(m); m /= 2  # only1: (0 + g) / 2
                had = torch.tensor([float(q.grad is not None)]); dist.all_reduce(had)
                if had.item() == 0: grads[k] = p.grad is None; continue
                err = max(err, float((p.grad - m).abs().max() / (m.abs().max() + 1e-30))); grads[k] = p.grad.flatten().tolist()
            with torch.no_grad(): pol(xs[0], False)  # no gradient: no exchange (a collective here would hang the test)
            flat = torch.randn(sum(p.numel() for p in net.parameters()), generator=g)  # a gradient computed without autograd
            m = flat.clone(); dist.all_reduce(m); m /= 2
            assert pol.average_grads_(flat) is flat and float((flat - m).abs().max()) < 1e-6
            fl = [None, None]; dist.all_gather_object(fl, flat.tolist()); assert fl[0] == fl[1]
            res["grad_" + transport] = {"grads": grads, "max_rel_err": err, "seq": pol.exchange.seq,
                                        "w0": net.a.weight.flatten().tolist()}
        # a peer that never arrives (as a dead one): the wait gives up within its timeout, naming the peer
        ex, res["dead"] = PairExchange(4, "shm", timeout_s=0.5), None
        if r == 0:
            t0 = time.monotonic()
            try: ex.average(torch.zeros(4))
            except RuntimeError as e: res["dead"] = [str(e), time.monotonic() - t0]
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
    for tr in ("shm", "p2p"):
        g0, g1 = r0["grad_" + tr], r1["grad_" + tr]
        assert g0["w0"] == g1["w0"], tr                            # rank 0's initial weights on both ranks
        assert g0["grads"] == g1["grads"], tr                      # bit-identical averaged gradients
        assert g0["max_rel_err"] < 1e-5, tr                        # the all-reduce's mean up to float32 rounding (summed in another order)
        assert g0["grads"]["never.weight"] is True, tr             # no gradient on any rank: stays None
        assert isinstance(g0["grads"]["only1.weight"], list), tr   # a gradient on rank 1 only: averaged with zeros
    assert r0["grad_shm"]["seq"] == r1["grad_shm"]["seq"] == 3     # one exchange per backward pass (none without gradients)
                                                                    # and one for average_grads_
    msg, waited = r0["dead"]
    assert "rank 1 did not reach" in msg and "within 0.5 s" in msg and 0.5 <= waited < 5, r0["dead"]

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
