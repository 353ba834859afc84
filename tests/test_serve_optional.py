"The core package, the CLI and the zoo's module import without the `serve` extra; `loomnb serve` then says what to install."
import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = ("starlette", "uvicorn", "fastapi", "onnx", "onnxruntime", "safetensors")
CODE = f"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {BLOCK!r}: raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import importlib.util
importlib.util.find_spec = (lambda f: (lambda name, *a: None if name.split('.')[0] in {BLOCK!r} else f(name, *a)))(importlib.util.find_spec)
import loomnb, loomnb.workflow.cli, loomnb.workflow.zoo, loomnb.workflow.serve, loomnb.workflow.monitor, loomnb.eval.drift, loomnb.bandits.ab
assert not any(m.split('.')[0] in {BLOCK!r} for m in sys.modules), sorted(m for m in sys.modules if m.split('.')[0] in {BLOCK!r})
sys.exit(loomnb.workflow.cli.main(['serve', 'ppo-cartpole']))
"""

def test_imports_without_serve_extra():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-c", CODE], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    assert "pip install 'loomnb[serve]'" in p.stderr and "starlette" in p.stderr, p.stderr
