"`loomnb serve` for real: a server in a subprocess on a loopback port, answering HTTP requests."
import json, os, socket, subprocess, sys, time, urllib.error, urllib.request, warnings
from pathlib import Path
import numpy as np
import pytest

pytest.importorskip("starlette"); pytest.importorskip("uvicorn"); pytest.importorskip("safetensors")
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}

def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def _call(port, path, body=None, raw=None, headers=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r: return r.status, r.read().decode()
    except urllib.error.HTTPError as e: return e.code, e.read().decode()

class Server:
    def __init__(self, *args, env=None):
        self.port = _free_port()
        self.p = subprocess.Popen([sys.executable, "-m", "loomnb", "serve", *args, "--port", str(self.port)], env={**ENV, **(env or {})}, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.time()
        while time.time() - t0 < 120:
            if self.p.poll() is not None: raise AssertionError(f"server exited {self.p.returncode}: {self.p.stderr.read()}")
            try:
                if _call(self.port, "/healthz")[0] == 200: return
            except OSError: pass
            time.sleep(0.2)
        self.close(); raise AssertionError("server did not start within 120 s")
    def call(self, *a, **k): return _call(self.port, *a, **k)
    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
            try: self.p.wait(10)
            except subprocess.TimeoutExpired: self.p.kill(); self.p.wait()
    def __enter__(self): return self
    def __exit__(self, *a): self.close()

@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    with Server("ppo-cartpole", "--registry", str(tmp_path_factory.mktemp("zoo")/"r.sqlite")) as s: yield s

def test_predict_single_and_batched(builtin):
    from loomnb.workflow.zoo import ModelZoo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore"); pol = ModelZoo(Path(builtin.p.args[-3]), builtin=True).load("ppo-cartpole")
    obs = np.random.default_rng(0).uniform(-0.2, 0.2, size=(32, 4)).astype(np.float32)
    code, body = builtin.call("/predict", {"obs": obs[0].tolist()})
    assert code == 200, body
    r = json.loads(body); assert r["action"] == int(pol.predict(obs[0])) and r["name"] == "ppo-cartpole" and r["version"] == 1
    code, body = builtin.call("/predict", {"obs": obs.tolist()})
    assert code == 200 and json.loads(body)["actions"] == pol.predict(obs).tolist()

def test_bad_requests_answer_400_with_the_expected_shape(builtin):
    code, body = builtin.call("/predict", {"obs": [0.1, 0.2, 0.3]})
    assert code == 400 and "[4]" in json.loads(body)["error"], body
    code, body = builtin.call("/predict", {"obs": [[0.1, 0.2, 0.3, 0.4], [0.1]]})
    assert code == 400 and "ragged" in body
    assert builtin.call("/predict", raw=b"{not json")[0] == 400
    assert builtin.call("/predict", {"observation": [0, 0, 0, 0]})[0] == 400
    code, body = builtin.call("/predict", {"obs": [0, 0, 1e9, 0]})   # CartPole's angle bound is finite
    assert code == 400 and "outside the observation space" in body
    assert builtin.call("/predict", {"obs": [0, 0, 0, 0], "version": 7})[0] == 404

def test_healthz_and_metrics(builtin):
    code, body = builtin.call("/healthz")
    h = json.loads(body); assert code == 200 and h["status"] == "ok" and h["obs_shape"] == [4] and h["algorithm"] == "ppo"
    builtin.call("/predict", {"obs": [0, 0, 0, 0]})
    code, text = builtin.call("/metrics")
    assert code == 200 and 'loomnb_serve_requests_total{route="/predict",status="200"}' in text
    assert "loomnb_serve_latency_seconds_bucket" in text and 'loomnb_serve_model_version{name="ppo-cartpole"} 1.0' in text

def test_default_runtime_is_onnx_after_the_parity_check(builtin):
    pytest.importorskip("onnxruntime")
    h = json.loads(builtin.call("/healthz")[1])
    assert h["runtime"] == "onnx" and "parity with torch checked" in h["runtime_reason"], h

def test_version_pinning(tmp_path):
    from loomnb.train.learner import Trainer
    from loomnb.workflow.zoo import ModelZoo, ModelCard
    tr = Trainer("ppo", "CartPole-v1", seed=0, config=dict(n_envs=2, n_steps=16, batch_size=32)); tr.train(32)
    ck = tmp_path/"a.pt"; tr.save(ck)
    tr.train(96); ck2 = tmp_path/"b.pt"; tr.save(ck2)
    zoo = ModelZoo(tmp_path/"r.sqlite", builtin=False)
    zoo.register(ModelCard("pin", "ppo", "CartPole-v1"), ck); zoo.register(ModelCard("pin", "ppo", "CartPole-v1"), ck2, promote=True)
    obs = np.random.default_rng(1).uniform(-0.4, 0.4, size=(64, 4)).astype(np.float32)
    a1, a2 = zoo.load("pin", 1).predict(obs).tolist(), zoo.load("pin", 2).predict(obs).tolist()
    assert a1 != a2   # the two versions act differently on these observations
    with Server("pin", "--version", "1", "--registry", str(zoo.path)) as s:
        assert json.loads(s.call("/healthz")[1])["version"] == 1
        assert json.loads(s.call("/predict", {"obs": obs.tolist()})[1])["actions"] == a1
        r = json.loads(s.call("/predict", {"obs": obs.tolist(), "version": 2})[1]); assert r["actions"] == a2 and r["version"] == 2
        r = json.loads(s.call("/predict", {"obs": obs.tolist()}, headers={"X-Model-Version": "2"})[1]); assert r["version"] == 2

def test_unknown_name_did_you_mean(tmp_path):
    p = subprocess.run([sys.executable, "-m", "loomnb", "serve", "ppo-cartpol", "--registry", str(tmp_path/"r.sqlite")],
                       env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Did you mean 'ppo-cartpole'" in p.stderr, p.stderr
