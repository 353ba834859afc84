"Smoke test of bench/bench_buffers.py at a tiny capacity, so the benchmark keeps running as the buffers evolve."
import os, subprocess, sys
import pytest

def test_bench_buffers_runs():
    "Runs with whatever peers are installed (rlox and cpprb are in the optional `bench` extra; missing ones print '-')."
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "bench_buffers.py"), "--capacity", "4096", "--repeats", "1"],
                       capture_output=True, text=True, timeout=600, env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    for row in ("uniform sample(256) d=4", "push batch 256 d=17", "prioritized sample(256) d=17", "update_priorities(256) d=4",
                "tree sample(256)+update(256)", "tokens packed(256, 2048)", "mmap sample(256) d=17", "n-step push, 8 envs d=17"):
        assert row in r.stdout, (row, r.stdout)

def test_bench_buffers_push1parts_runs():
    "The single-push breakdown (`--only push1parts`) runs and prints every part for both obs dims."
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "bench_buffers.py"), "--capacity", "4096", "--repeats", "1",
                        "--only", "push1parts"], capture_output=True, text=True, timeout=600, env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    for part in ("push(1) fast path", "method call, 6 args, empty body", "fast-path type checks", "push_one entry point",
                 "push_one through the dispatcher", "empty kernel entry point, same 10 args"):
        assert part in r.stdout, (part, r.stdout)

def test_bench_buffers_pushparts_runs():
    "The push-of-8 breakdown (`--only pushparts`) runs and prints every part for both obs dims."
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "bench_buffers.py"), "--capacity", "4096", "--repeats", "1",
                        "--only", "pushparts"], capture_output=True, text=True, timeout=600, env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    for part in ("push_batch(8)", "dtype/ndim check", "push_rec entry point", "push_rec entry point, with runtime",
                 "empty kernel, 6 arrays, runtime", "empty kernel, 6 arrays, no runtime"):
        assert part in r.stdout, (part, r.stdout)
    assert "d=4 CPU ns" in r.stdout and "d=17 CPU ns" in r.stdout, r.stdout

def test_bench_buffers_small_runs():
    "The single-transition rows (`--only small`) run and print each call next to its plain twin."
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, os.path.join(root, "bench", "bench_buffers.py"), "--capacity", "4096", "--repeats", "1",
                        "--only", "small"], capture_output=True, text=True, timeout=600, env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    for row in ("push single d=4 (ring 10^5)", "push single d=17 (ring 10^5), plain twin (NumPy writes)",
                "prioritized push single + priority d=4 (ring 10^5)",
                "prioritized push single + priority d=17 (ring 10^5), plain twin (push, update_priorities)"):
        assert row in r.stdout, (row, r.stdout)
