"""Workflow overheads: what logging, the run registry and papermill cost, so sweeps and training loops can be planned.

1. Logger cost per `log()` call with a typical PPO metrics dict (25 keys): ConsoleLogger (to /dev/null), CSVLogger,
   JSONLLogger, WandbLogger(mode="disabled"), TensorBoardLogger (when installed), MetricsCollector. Median over
   repeats, in microseconds; compare with a PPO iteration (tens of milliseconds) to see the share.
2. Run registry: start + finish of one run (SQLite, provenance incl. `git` calls), median of repeats, in ms.
3. papermill: one execution of tests/data/tiny_run.ipynb (kernel start + 4 cells), and a 4-run sweep with 1 vs 2
   workers (wall time and speedup).

Usage:  python bench/bench_workflow.py [--repeats 5]
Timings are medians; on a shared machine run it twice and compare.
"""
from __future__ import annotations
import argparse, os, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("WANDB_MODE", "disabled"); os.environ.setdefault("WANDB_SILENT", "true")

def metrics_dict():
    keys = ["rollout/ep_return", "rollout/ep_length", "train/policy_loss", "train/value_loss", "train/entropy", "train/approx_kl",
            "train/clipfrac", "train/explained_var", "train/grad_norm", "train/lr", "train/clip_eps", "train/epochs", "train/n_updates",
            "time/sps", "time/total_timesteps", "time/iterations", "time/env_step", "time/inference", "time/gae", "time/update",
            "eval/mean_return", "eval/std_return", "time/elapsed", "rollout/episodes", "train/loss"]
    return {k: 0.1 * i for i, k in enumerate(keys)}

def time_logger(make, n=500, repeats=5):
    m, res = metrics_dict(), []
    for _ in range(repeats):
        lg = make(); t0 = time.perf_counter()
        for s in range(n): lg.log(m, s * 256)
        res.append((time.perf_counter() - t0) / n * 1e6); lg.close()
    return statistics.median(res)

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--repeats", type=int, default=5); a = ap.parse_args()
    from loomnb.train.loggers import ConsoleLogger, CSVLogger, JSONLLogger, WandbLogger, TensorBoardLogger
    from loomnb.workflow.widgets import MetricsCollector
    from loomnb.workflow.runs import RunRegistry
    from loomnb.workflow.runner import run_notebook, run_sweep
    d = Path(tempfile.mkdtemp()); devnull = open(os.devnull, "w")
    rows = [("ConsoleLogger (/dev/null)", lambda: ConsoleLogger(file=devnull)), ("CSVLogger", lambda: CSVLogger(d / "m.csv")),
            ("JSONLLogger", lambda: JSONLLogger(d / "m.jsonl")), ("WandbLogger disabled", lambda: WandbLogger(mode="disabled")),
            ("MetricsCollector", MetricsCollector)]
    try:
        import tensorboard  # noqa: F401
        rows.append(("TensorBoardLogger", lambda: TensorBoardLogger(d / "tb")))
    except ImportError: pass
    print("| logger | us per log() call (25 metrics) |\n|---|---|")
    for name, mk in rows: print(f"| {name} | {time_logger(mk, repeats=a.repeats):.1f} |")
    reg = RunRegistry(d / "reg.sqlite"); ts = []
    for i in range(max(a.repeats, 5)):
        t0 = time.perf_counter(); rid = reg.start(params={"i": i}, seed=i); reg.finish(rid, metrics={"x": 1.0}); ts.append(time.perf_counter() - t0)
    print(f"\nregistry start+finish: median {statistics.median(ts) * 1e3:.1f} ms over {len(ts)} runs")
    tiny = ROOT / "tests/data/tiny_run.ipynb"; ts = []
    for i in range(3):
        t0 = time.perf_counter(); run_notebook(tiny, {"seed": i}, d / "one", reg); ts.append(time.perf_counter() - t0)
    print(f"papermill run of tiny_run.ipynb: median {statistics.median(ts):.2f} s over 3")
    out = {}
    for w in (1, 2):
        t0 = time.perf_counter()
        run_sweep(tiny, grid={"lr": [0.1, 0.2]}, seeds="0-1", out_dir=d / f"sw{w}", workers=w, registry=reg, report=False, resume=False)
        out[w] = time.perf_counter() - t0
    print(f"4-run sweep: 1 worker {out[1]:.1f} s, 2 workers {out[2]:.1f} s, speedup {out[1] / out[2]:.2f}x (nproc={os.cpu_count()})")

if __name__ == "__main__": main()
