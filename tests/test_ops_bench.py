"Smoke test: bench/bench_ops.py runs end to end and prints its table (timings themselves are not asserted)."
import subprocess, sys
from pathlib import Path

def test_bench_ops_runs():
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "bench_ops.py"), "--repeats", "1", "--only", "small,grpo"],
                         capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr
    assert "| GAE small T=128, N=1 (wrapper) |" in out.stdout and "| GRPO advantages 64x8 float64 |" in out.stdout
    assert "| V-trace small [T=1024] float32 (wrapper) |" in out.stdout
    assert "| V-trace small [T=1024] float32 (plain twin: vtrace_kernel on [T, 1]) |" in out.stdout
