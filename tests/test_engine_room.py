"The engine-room rule (scripts/check_engine_room.py) holds on the package, and it catches what it is meant to catch."
import subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import check_engine_room as rule

def test_rule_holds_on_the_package():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_engine_room.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "engine-room rule holds" in r.stdout

@pytest.mark.parametrize("src, what", [
    ("import torch\ntorch._foreach_add_([], 1)\n", "torch._foreach_add_"),
    ("import torch\nf = torch.ops.aten.tanh_backward\n", "torch.ops.aten.tanh_backward"),
    ("from torch.optim.rmsprop import _multi_tensor_rmsprop\n", "_multi_tensor_rmsprop"),
    ("from numba.core import types\n", "numba.core"),
    ("from numba.extending import intrinsic\n", "intrinsic"),
    ("def f(k, sig): return k.overloads[sig].entry_point\n", ".overloads"),
    ("def f(m): return m._forward_hooks\n", "._forward_hooks"),
    ("import torch._dynamo\n", "import torch._dynamo"),
])
def test_rule_catches(tmp_path, src, what):
    (tmp_path / "loomnb" / "algos").mkdir(parents=True)
    (tmp_path / "loomnb" / "algos" / "bad.py").write_text(src)
    (tmp_path / "loomnb" / "fast").mkdir()
    (tmp_path / "loomnb" / "fast" / "ok.py").write_text(src)        # the engine room may
    found, problems = rule.check(tmp_path)
    assert list(found) == ["loomnb/algos/bad.py"] and what in " ".join(found["loomnb/algos/bad.py"])
    assert any("loomnb/algos/bad.py touches" in p for p in problems)

def test_public_numba_and_torch_pass(tmp_path):
    (tmp_path / "loomnb").mkdir()
    (tmp_path / "loomnb" / "good.py").write_text("import torch\nfrom numba import njit\nfrom numba.extending import overload\n"
                                                "x = torch.nn.functional.relu(torch.zeros(2))\ndef __getattr__(n): return n\n")
    found, _ = rule.check(tmp_path)
    assert found == {}

def test_stale_pending_entry_fails(tmp_path):
    (tmp_path / "loomnb").mkdir()
    _, problems = rule.check(tmp_path)
    assert all("no longer needs its PENDING entry" in p for p in problems) and len(problems) == len(rule.PENDING)
