"""Where a 2-rank PPO run spends its wall time: collection, minibatch compute, waiting for the peer in each exchange.

    python bench/profile_distributed.py [--steps 65536] [--no-ddp]

Starts `torchrun --nproc_per_node 2` on this file. Every rank trains PPO on CartPole-v1 with the bench's per-rank
configuration (8 envs x 128 steps, batch 256, 4 epochs: 16 exchanges per iteration) and timestamps (one monotonic clock
shared by both processes) each collection, each update and, inside `PairExchange.average_sent`, the time spent waiting
for the peer. Rank 0 prints per rank: wall and CPU of collection and update per iteration, the waiting (total, median,
p90, share of the wall), the arrival skew between the ranks at the first exchange of an iteration (after collection)
and at the others (after one minibatch step), and the time of the end-of-iteration stop flag.
"""
import argparse, os, subprocess, sys, time
from bench_distributed import ENV, PPO  # the bench's environment and per-rank PPO configuration

def worker(steps, ddp):
    import numpy as np, torch, torch.distributed as dist
    import loomnb.distributed as D
    import loomnb.distributed.trainer as DT
    torch.set_num_threads(1)
    ev, wait, stop = [], [0.0], [0.0, 0]
    _wait, _avg, _after = D.PairExchange._wait, D.PairExchange.average_sent, DT._SyncStop.after_iteration
    def timed_wait(self, s):
        t = time.perf_counter(); _wait(self, s); wait[0] += time.perf_counter() - t
    def timed_avg(self, n, out=None):
        if n == 1: return _avg(self, n, out)  # the stop flag
        t, wait[0] = time.perf_counter(), 0.0
        r = _avg(self, n, out); ev.append(("x", t, wait[0])); return r
    def timed_after(self, state):
        t = time.perf_counter(); _after(self, state); stop[0] += time.perf_counter() - t; stop[1] += 1
    D.PairExchange._wait, D.PairExchange.average_sent, DT._SyncStop.after_iteration = timed_wait, timed_avg, timed_after
    with D.distributed(timeout_s=120) as info:
        tr = D.DistributedTrainer("ppo", "CartPole-v1", 0, PPO, ddp=ddp); algo = tr.trainer.algo
        def timed(kind, f):
            def g(*a):
                t, c = time.perf_counter(), time.thread_time(); r = f(*a)
                ev.append((kind, t, time.perf_counter() - t, time.thread_time() - c)); return r
            return g
        algo.collect, algo.update = timed("c", algo.collect), timed("u", algo.update)
        res = tr.train(steps)
        both = [None, None]; dist.all_gather_object(both, (ev, stop))
        if info.rank != 0: return
        print(f"2 ranks, {steps} steps: {res['sps']:,.0f} env-steps/s, rank CPU {res['rank_cpu_s'][0]:.2f} / "
              f"{res['rank_cpu_s'][1]:.2f} s, load average {os.getloadavg()[0]:.1f}, exchange {tr.distributed['exchange']}")
        xs = []
        for r, (e, st) in enumerate(both):
            c, u, x = ([a for a in e if a[0] == k] for k in "cux")
            wall = sum(a[2] for a in c) + sum(a[2] for a in u); w = np.array([a[2] for a in x]); xs.append(np.array([a[1] for a in x]))
            print(f"rank {r}: {len(c)} iterations; collect {1e3 * np.median([a[2] for a in c]):.1f} ms wall, "
                  f"{1e3 * np.median([a[3] for a in c]):.1f} ms CPU (median per iteration); update "
                  f"{1e3 * np.median([a[2] for a in u]):.1f} ms wall (sd {1e3 * np.std([a[2] for a in u]):.1f}), "
                  f"{1e3 * np.median([a[3] for a in u]):.1f} ms CPU; waiting in {len(w)} exchanges {1e3 * w.sum():.0f} ms = "
                  f"{100 * w.sum() / wall:.1f}% of the wall (median {1e6 * np.median(w):.0f} us, p90 {1e6 * np.percentile(w, 90):.0f} us); "
                  f"stop flag {1e3 * st[0] / max(st[1], 1):.2f} ms per iteration")
        per_iter = PPO["n_envs"] * PPO["n_steps"] // PPO["batch_size"] * PPO["n_epochs"]  # exchanges (minibatches) per iteration
        sk = np.abs(xs[1] - xs[0]); first = np.zeros(len(sk), bool); first[::per_iter] = True
        print(f"arrival skew |rank1 - rank0|: first exchange of an iteration (after collection) mean {1e6 * sk[first].mean():.0f} us, "
              f"other exchanges mean {1e6 * sk[~first].mean():.0f} us, p90 {1e6 * np.percentile(sk[~first], 90):.0f} us")

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=65536)
    ap.add_argument("--no-ddp", action="store_true")
    a = ap.parse_args()
    if "RANK" in os.environ: return worker(a.steps, not a.no_ddp)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", os.path.abspath(__file__), *sys.argv[1:]]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    print(p.stdout, end="")
    if p.returncode: print(p.stderr[-3000:], file=sys.stderr); sys.exit(p.returncode)

if __name__ == "__main__": main()
