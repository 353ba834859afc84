"""Fresh-process checks of `loomnb.train.learner.lean_numba_runtime` (Numba's NRT from cached object code, no eager numpy.ma or
scipy.linalg import). Each check runs in a new interpreter: what is measured is what a process does at start-up."""
import json, os, subprocess, sys, textwrap
import pytest

def _run(code: str, env: dict | None = None, cwd=None) -> dict:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                       env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])

_TRAIN = """
import json, sys, torch
torch.set_num_threads(1)
from loomnb.train.learner import Trainer
from loomnb.ops._runtime import _LEAN
import loomnb.algos.ppo
tr = Trainer("ppo", env="CartPole-v1", seed=3, config={"n_envs": 4, "n_steps": 32, "batch_size": 64, "n_epochs": 2})
m = tr.train(1024)
print(json.dumps({"lean": _LEAN, "linalg": "scipy.linalg" in sys.modules, "ma": "numpy.ma" in sys.modules,
                  "m": [m["mean_reward"], m["train/value_loss"], m["train/policy_loss"], m["train/approx_kl"]]}))
"""

def test_trainer_lean_runtime_same_numbers():
    first = _run(_TRAIN)                    # compiles and caches the NRT module unless a file exists already
    assert first["lean"]["nrt"] in ("loaded", "compiled, cached"), first["lean"]
    lean = _run(_TRAIN)
    assert lean["lean"]["nrt"] == "loaded", lean["lean"]
    assert lean["lean"]["blas"].startswith("probed")
    assert lean["linalg"] is False          # numba.np.arraymath did not import scipy.linalg
    assert lean["lean"]["typeof"] == "no numpy.ma" and lean["ma"] is False  # Numba's typeof did not import numpy.ma
    plain = _run(_TRAIN, env={"LOOMNB_LEAN_NUMBA": "0"})
    assert plain["lean"] == {}
    assert plain["ma"] is True              # (Numba's own typeof does)
    assert lean["m"] == plain["m"] == first["m"]  # bit-identical training

_KERNELS = """
import json, sys
import numpy as np
from loomnb.train.learner import lean_numba_runtime
st = lean_numba_runtime()
from numba import njit
from numba.typed import List

@njit
def alloc(n):                 # NRT allocation, refcounts and a returned array
    a = np.zeros(n); b = a.copy(); b[0] = 1.0
    return a + b

@njit
def lst(n):                   # typed list: NRT meminfo with a destructor
    l = List()
    for i in range(n): l.append(i * 2)
    return l[n - 1]

@njit
def dot(a, b): return np.dot(a, b)     # BLAS through scipy.linalg.cython_blas

@njit
def solve(a, b): return np.linalg.solve(a, b)   # LAPACK

r = np.random.default_rng(0); A, B = r.standard_normal((5, 5)), r.standard_normal((5, 3))
from numba.core.runtime import rtsys
print(json.dumps({"lean": st, "alloc": alloc(4).tolist(), "lst": lst(5), "dot": bool(np.allclose(dot(A, B), A @ B)),
                  "solve": bool(np.allclose(solve(A, B), np.linalg.solve(A, B))),
                  "have_blas": sys.modules["numba.np.arraymath"]._HAVE_BLAS,
                  "nrt_lib": type(rtsys.library).__name__}))
"""

def test_new_kernels_after_lean_runtime():
    pytest.importorskip("scipy")
    r = _run(_KERNELS)
    assert r["alloc"] == [1.0, 0.0, 0.0, 0.0] and r["lst"] == 8
    assert r["dot"] and r["solve"] and r["have_blas"] is True
    assert r["lean"]["nrt"] in ("loaded", "compiled, cached", "compiled")

_CACHED_DOT = """
import json, sys
import numpy as np
from loomnb.train.learner import lean_numba_runtime
st = lean_numba_runtime()
sys.path.insert(0, ".")
import dotmod
A = np.arange(12.).reshape(3, 4); B = np.arange(8.).reshape(4, 2)
before = "scipy.linalg" in sys.modules
ok = bool(np.allclose(dotmod.kdot(A, B), A @ B))
print(json.dumps({"lean": st, "ok": ok, "linalg_before_call": before, "hits": len(dotmod.kdot.stats.cache_hits)}))
"""

def test_cached_blas_kernel_resolves_blas_lazily(tmp_path):
    "A BLAS kernel loaded from Numba's cache works in a process where scipy.linalg was never imported up front."
    pytest.importorskip("scipy")
    (tmp_path / "dotmod.py").write_text("from numba import njit\nimport numpy as np\n"
                                        "@njit(cache=True)\ndef kdot(a, b): return np.dot(a, b)\n")
    a = _run(_CACHED_DOT, cwd=tmp_path)
    b = _run(_CACHED_DOT, cwd=tmp_path)      # second process: loaded from the cache
    assert a["ok"] and b["ok"] and b["hits"] == 1
    assert b["linalg_before_call"] is False

def test_nrt_stats_uses_numbas_own_path():
    r = _run("""
    import json, numpy as np
    from loomnb.train.learner import lean_numba_runtime
    st = lean_numba_runtime()
    from numba import njit
    from numba.core.runtime import rtsys
    njit(lambda n: np.ones(n).sum())(3)
    print(json.dumps({"lean": st, "alloc": rtsys.get_allocation_stats().alloc}))
    """, env={"NUMBA_NRT_STATS": "1"})
    assert r["lean"]["nrt"] == "numba (NRT_STATS)" and r["alloc"] >= 1
