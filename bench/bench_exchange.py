"""The engine room's two-rank gradient exchange against the plain gloo all-reduce, per call, on one node.

    python bench/bench_exchange.py [--numel 9220] [--calls 2000] [--blocks 5]

Starts `torchrun --standalone --nproc_per_node 2` on this file (gloo over loopback, one torch thread per rank). Each
rank averages a float32 tensor of `--numel` elements (PPO's CartPole actor-critic gradient plus one flag per
parameter: 9,220) `--calls` times in a row with each method, in alternating blocks (`--blocks` of each): the "shm"
`PairExchange` (`loomnb.distributed.pair_exchange(numel, "shm")`, the default for two ranks on one node), gloo
isend/irecv ("p2p") and `dist.all_reduce` followed by a division (what DDP and `sync_optimizer` do without the
engine room). Rank 0 prints, per method, the median over blocks of the mean wall time per call, the fastest block
(min-of-N: the figure least disturbed by other load), and the CPU time per call of both ranks together.
"""
import argparse, json, os, statistics, subprocess, sys, time

def worker(numel, calls, blocks):
    import torch, torch.distributed as dist
    from loomnb.distributed import distributed, pair_exchange
    torch.set_num_threads(1)
    with distributed(backend="gloo", device="cpu", timeout_s=300) as info:
        t = torch.randn(numel, generator=torch.Generator().manual_seed(info.rank)); out = torch.empty_like(t)
        shm, p2p = pair_exchange(numel, "shm"), pair_exchange(numel, "p2p")
        assert shm.transport == "shm" and p2p.transport == "p2p"
        def allreduce():
            r = t.clone(); dist.all_reduce(r); r /= 2
        runs = {"shm PairExchange": lambda: shm.average(t, out=out), "p2p PairExchange": lambda: p2p.average(t, out=out),
                "gloo all_reduce": allreduce}
        res = {k: [] for k in runs}
        for k, f in runs.items():  # warm-up
            for _ in range(50): f()
        for b in range(blocks):
            for k, f in runs.items():
                dist.barrier(); w, c = time.perf_counter(), time.process_time()
                for _ in range(calls): f()
                res[k].append(((time.perf_counter() - w) / calls, (time.process_time() - c) / calls))
        both = [None, None]; dist.all_gather_object(both, res)
        if info.rank == 0: print("RESULT " + json.dumps(both), flush=True)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--numel", type=int, default=9220); ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--blocks", type=int, default=5); ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    if a.worker: return worker(a.numel, a.calls, a.blocks)
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
    load0 = os.getloadavg()[0]
    p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", __file__, "--worker",
                        "--numel", str(a.numel), "--calls", str(a.calls), "--blocks", str(a.blocks)],
                       env=env, capture_output=True, text=True)
    if p.returncode: sys.exit(f"bench_exchange: torchrun failed ({p.returncode}):\n{p.stderr[-3000:]}")
    r0, r1 = json.loads([l for l in p.stdout.splitlines() if l.startswith("RESULT ")][-1][7:])
    print(f"\n{a.numel} float32 per exchange, 2 ranks, {a.blocks} blocks of {a.calls} calls each, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}\n")
    print("| method | median us/call | fastest block us/call | vs gloo all_reduce (median / fastest) | CPU us/call (both ranks) |\n|---|---:|---:|---:|---:|")
    ref = None
    rows = {}
    for k in r0:
        walls = [max(x[0], y[0]) for x, y in zip(r0[k], r1[k])]; cpu = statistics.median(x[1] + y[1] for x, y in zip(r0[k], r1[k]))
        rows[k] = (statistics.median(walls) * 1e6, min(walls) * 1e6, cpu * 1e6)
    ref = rows["gloo all_reduce"]
    for k, (m, f, c) in rows.items():
        print(f"| {k} | {m:.1f} | {f:.1f} | {ref[0] / m:.2f}x / {ref[1] / f:.2f}x | {c:.1f} |")

if __name__ == "__main__": main()
