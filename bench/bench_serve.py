"""Loopback load test of `loomnb serve` (one uvicorn worker): requests/s and p50/p99 latency, single and batched.

Starts `loomnb serve MODEL` in a subprocess on 127.0.0.1, drives it from this process with C keep-alive HTTP/1.1
connections (asyncio, closed loop: each connection sends its next request when the answer arrives) for a bounded time
per phase, and prints a table. Also times the pieces of one /predict in-process (JSON decode, observation check, torch
forward, JSON encode) to show where the time goes, and `/healthz` as the ceiling of the HTTP stack itself.

    python bench/bench_serve.py                       # ppo-cartpole, 3 s per phase, 3 variants x 2 rounds
    python bench/bench_serve.py --seconds 5 --model dqn-cartpole --json out.json
"""
import argparse, asyncio, json, os, re, socket, subprocess, sys, tempfile, time, timeit, urllib.request
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_CL = re.compile(rb"content-length: *(\d+)", re.I)

def free_port():
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

async def _conn(port, req, stop_at, lat, errors):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter(); w.write(req)
            head = await r.readuntil(b"\r\n\r\n")
            await r.readexactly(int(_CL.search(head).group(1)))
            lat.append(time.perf_counter() - t0)
            if not head.startswith(b"HTTP/1.1 200"): errors.append(head[:40])
    finally: w.close()

def run_phase(port, method, path, body, conns, seconds):
    b = b"" if body is None else json.dumps(body).encode()
    req = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(b)}\r\n\r\n").encode() + b
    lat, errors = [], []
    async def main():
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(*[_conn(port, req, stop_at, lat, errors) for _ in range(conns)])
    t0 = time.perf_counter(); asyncio.run(main()); wall = time.perf_counter() - t0
    a = np.array(lat) * 1e3
    return {"requests": len(a), "errors": len(errors), "req_per_s": len(a) / wall, "p50_ms": float(np.percentile(a, 50)),
            "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max())}

def pieces(model, batch):
    "Microseconds per step of one /predict, in this process."
    import torch; torch.set_num_threads(1)
    from loomnb.workflow.zoo import ModelZoo
    from loomnb.workflow.serve import check_obs
    pol = ModelZoo(Path(tempfile.mkdtemp())/"r.sqlite").load(model)
    obs = np.zeros((batch, *pol.obs_shape), np.float32).tolist() if batch > 1 else [0.0] * int(np.prod(pol.obs_shape))
    raw = json.dumps({"obs": obs}).encode(); body = json.loads(raw); x, _ = check_obs(body["obs"], pol.observation_space)
    def fwd():
        with torch.inference_mode(): return pol.module(torch.from_numpy(x)).numpy().tolist()
    out = fwd()
    t = {"json_decode": lambda: json.loads(raw), "check_obs": lambda: check_obs(body["obs"], pol.observation_space),
         "torch_forward": fwd, "json_encode": lambda: json.dumps({"actions": out, "name": "x", "version": 1})}
    return {k: min(timeit.repeat(f, number=2000, repeat=5)) / 2000 * 1e6 for k, f in t.items()}

VARIANTS = {"torch": [], "torch-starlette": ["--no-fast-path"], "onnx": ["--runtime", "onnx"]}

def run_server(model, variant, seconds):
    "Start one server, run every phase against it, stop it."
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    srv = subprocess.Popen([sys.executable, "-m", "loomnb", "serve", model, "--port", str(port), *VARIANTS[variant],
                            "--registry", str(Path(tempfile.mkdtemp())/"r.sqlite")], env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1); break
            except OSError: time.sleep(0.1)
        shape = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz"))["obs_shape"]
        one = [0.01] * int(np.prod(shape))
        run_phase(port, "POST", "/predict", {"obs": one}, 4, 1.0)   # warm-up
        rows = {("GET /healthz", 8, 1): run_phase(port, "GET", "/healthz", None, 8, seconds)}
        for c in (1, 8, 32): rows[("POST /predict single", c, 1)] = run_phase(port, "POST", "/predict", {"obs": one}, c, seconds)
        for b in (8, 64, 256): rows[("POST /predict batch", 8, b)] = run_phase(port, "POST", "/predict", {"obs": [one] * b}, 8, seconds)
        return rows
    finally:
        srv.terminate(); srv.wait(10)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(); ap.add_argument("--model", default="ppo-cartpole"); ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds over the variants; the best round per row is kept")
    ap.add_argument("--variants", default="torch,torch-starlette,onnx"); ap.add_argument("--json"); a = ap.parse_args()
    variants = a.variants.split(",")
    best = {v: {} for v in variants}
    for _ in range(a.rounds):
        for v in variants:
            for k, r in run_server(a.model, v, a.seconds).items():
                if k not in best[v] or r["req_per_s"] > best[v][k]["req_per_s"]: best[v][k] = r
    print(f"loomnb serve {a.model}, one uvicorn worker, loopback, client in this process; best of {a.rounds} interleaved rounds; "
          f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    print(f"{'variant':16s} {'phase':22s} {'conns':>5s} {'batch':>5s} {'req/s':>8s} {'obs/s':>9s} {'p50 ms':>7s} {'p99 ms':>7s} {'errors':>6s}")
    for v in variants:
        for (name, c, b), r in best[v].items():
            print(f"{v:16s} {name:22s} {c:5d} {b:5d} {r['req_per_s']:8.0f} {r['req_per_s'] * b:9.0f} {r['p50_ms']:7.2f} {r['p99_ms']:7.2f} {r['errors']:6d}")
    pc = {b: pieces(a.model, b) for b in (1, 64)}
    for b, p in pc.items(): print(f"in-process pieces of one /predict (torch), batch {b}: " + ", ".join(f"{k} {v:.1f} us" for k, v in p.items()))
    if a.json: Path(a.json).write_text(json.dumps({"rows": [dict(variant=v, phase=n, conns=c, batch=b, **r) for v in variants
                                                           for (n, c, b), r in best[v].items()], "pieces": pc}, indent=1))
