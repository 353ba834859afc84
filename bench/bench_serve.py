"""Loopback load test of `loomnb serve` (one uvicorn worker): requests/s and p50/p99 latency, single and batched.

Starts `loomnb serve MODEL` in a subprocess on 127.0.0.1, drives it with C keep-alive HTTP/1.1 connections for a
bounded time per phase, and prints a table. Two load generators: this process (asyncio, closed loop: each connection
sends its next request when the answer arrives) and, where it is installed, `wrk` (C, one thread), which costs the
shared cores less. `GET /healthz` (no model work) with the same generator is the ceiling of HTTP stack plus client.
`--baseline REF` also serves the code of git revision REF (extracted with `git archive`) so that old and new run
interleaved under the same load. Also times the pieces of one /predict in-process.

    python bench/bench_serve.py                       # ppo-cartpole, 3 s per phase, 2 rounds
    python bench/bench_serve.py --baseline c3ed499 --variants onnx,torch,base-onnx,base-torch --json out.json
"""
import argparse, asyncio, json, os, re, shutil, socket, subprocess, sys, tempfile, time, timeit, urllib.request
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
    "Microseconds per step of one /predict, in this process (this checkout's handler)."
    import torch; torch.set_num_threads(1)
    from loomnb.workflow.zoo import ModelZoo
    from loomnb.workflow.serve import check_obs, PredictHandler, loads, dumps
    pol = ModelZoo(Path(tempfile.mkdtemp())/"r.sqlite").load(model)
    obs = np.zeros((batch, *pol.obs_shape), np.float32).tolist() if batch > 1 else [0.0] * int(np.prod(pol.obs_shape))
    raw = json.dumps({"obs": obs}).encode(); body = loads(raw); x, _ = check_obs(body["obs"], pol.observation_space)
    h = {rt: PredictHandler(pol, runtime=rt) for rt in ("torch", "onnx")}
    out = h["torch"].runners[1](x)
    t = {"json_decode": lambda: loads(raw), "check_obs": lambda: check_obs(body["obs"], pol.observation_space),
         "single_fast_path": lambda: h["torch"].single(body["obs"]),
         "torch_forward": lambda: h["torch"].runners[1](x), "onnx_forward": lambda: h["onnx"].runners[1](x),
         "json_encode": lambda: dumps({"actions": out, "name": "x", "version": 1}),
         "handler_torch": lambda: h["torch"](raw), "handler_onnx": lambda: h["onnx"](raw)}
    return {k: min(timeit.repeat(f, number=2000, repeat=5)) / 2000 * 1e6 for k, f in t.items()}

VARIANTS = {"onnx": [], "torch": ["--runtime", "torch"], "torch-starlette": ["--runtime", "torch", "--no-fast-path"],
            "base-onnx": ["--runtime", "onnx"], "base-torch": ["--runtime", "torch"]}   # base-*: the --baseline revision

def extract(ref):
    "The package of git revision `ref` in a fresh folder (served with that folder as cwd and PYTHONPATH)."
    d = Path(tempfile.mkdtemp(prefix="serve-base-"))
    tar = subprocess.run(["git", "archive", ref, "loomnb"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(d)], input=tar, check=True)
    return d

def wrk_phase(port, method, path, body, conns, seconds):
    "The same phase driven by wrk (one thread), parsed from its --latency report."
    script = Path(tempfile.mkdtemp())/"req.lua"
    b = "" if body is None else json.dumps(body)
    script.write_text(f'wrk.method = "{method}"\nwrk.body = [[{b}]]\nwrk.headers["Content-Type"] = "application/json"\n')
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{max(1, round(seconds))}s", "--latency", "-s", str(script), f"http://127.0.0.1:{port}{path}"],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    unit = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    pct = {int(p): float(v) * unit[u] for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)}
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests": int(re.search(r"(\d+) requests in", out).group(1)), "errors": int(errs.group(1)) if errs else 0,
            "req_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), "p50_ms": pct[50], "p99_ms": pct[99], "max_ms": float("nan")}

def run_server(model, variant, seconds, base=None, use_wrk=False):
    "Start one server, run every phase against it, stop it."
    port = free_port()
    code = base if variant.startswith("base-") else ROOT
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    srv = subprocess.Popen([sys.executable, "-m", "loomnb", "serve", model, "--port", str(port), *VARIANTS[variant],
                            "--registry", str(Path(tempfile.mkdtemp())/"r.sqlite")], env=env, cwd=code, stdout=subprocess.DEVNULL)
    try:
        t0 = time.time()
        while True:
            if srv.poll() is not None: raise RuntimeError(f"{variant}: the server exited with {srv.returncode}")
            try: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1); break
            except OSError:
                if time.time() - t0 > 300: raise RuntimeError(f"{variant}: the server did not answer within 300 s")
                time.sleep(0.2)
        shape = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz"))["obs_shape"]
        one = [0.01] * int(np.prod(shape))
        run_phase(port, "POST", "/predict", {"obs": one}, 4, 1.0)   # warm-up
        rows = {}
        for c in (1, 8): rows[("GET /healthz", "python", c, 1)] = run_phase(port, "GET", "/healthz", None, c, seconds)
        for c in (1, 8, 32): rows[("POST /predict single", "python", c, 1)] = run_phase(port, "POST", "/predict", {"obs": one}, c, seconds)
        for b in (8, 64, 256): rows[("POST /predict batch", "python", 8, b)] = run_phase(port, "POST", "/predict", {"obs": [one] * b}, 8, seconds)
        if use_wrk:
            for c in (1, 8): rows[("GET /healthz", "wrk", c, 1)] = wrk_phase(port, "GET", "/healthz", None, c, seconds)
            for c in (1, 4, 8): rows[("POST /predict single", "wrk", c, 1)] = wrk_phase(port, "POST", "/predict", {"obs": one}, c, seconds)
        return rows
    finally:
        srv.terminate(); srv.wait(10)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(); ap.add_argument("--model", default="ppo-cartpole"); ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds over the variants; the best round per row is kept")
    ap.add_argument("--variants", default="onnx,torch,torch-starlette"); ap.add_argument("--json")
    ap.add_argument("--baseline", help="git revision whose server the base-* variants run")
    ap.add_argument("--client", choices=["auto", "python", "both"], default="auto", help="auto/both: add wrk phases where wrk is installed")
    a = ap.parse_args()
    variants = a.variants.split(",")
    if any(v.startswith("base-") for v in variants) and not a.baseline: ap.error("base-* variants need --baseline REF")
    base = extract(a.baseline) if a.baseline else None
    use_wrk = a.client != "python" and shutil.which("wrk") is not None
    best, loads_seen = {v: {} for v in variants}, []
    for _ in range(a.rounds):
        for v in variants:
            loads_seen.append(os.getloadavg()[0])
            for k, r in run_server(a.model, v, a.seconds, base, use_wrk).items():
                if k not in best[v] or r["req_per_s"] > best[v][k]["req_per_s"]: best[v][k] = r
    loads_seen.append(os.getloadavg()[0])
    print(f"loomnb serve {a.model}, one uvicorn worker, loopback; best of {a.rounds} interleaved rounds; baseline {a.baseline}; "
          f"1-min load average {min(loads_seen):.2f} to {max(loads_seen):.2f} during the run, {os.cpu_count()} CPUs")
    print(f"{'variant':16s} {'phase':22s} {'client':6s} {'conns':>5s} {'batch':>5s} {'req/s':>8s} {'obs/s':>9s} {'p50 ms':>7s} {'p99 ms':>7s} {'errors':>6s}")
    for v in variants:
        for (name, cl, c, b), r in best[v].items():
            print(f"{v:16s} {name:22s} {cl:6s} {c:5d} {b:5d} {r['req_per_s']:8.0f} {r['req_per_s'] * b:9.0f} {r['p50_ms']:7.2f} {r['p99_ms']:7.2f} {r['errors']:6d}")
    pc = {b: pieces(a.model, b) for b in (1, 64)}
    for b, p in pc.items(): print(f"in-process pieces of one /predict, batch {b}: " + ", ".join(f"{k} {v:.1f} us" for k, v in p.items()))
    if a.json: Path(a.json).write_text(json.dumps({"load_average": loads_seen, "baseline": a.baseline,
                                                   "rows": [dict(variant=v, phase=n, client=cl, conns=c, batch=b, **r) for v in variants
                                                            for (n, cl, c, b), r in best[v].items()], "pieces": pc}, indent=1))
