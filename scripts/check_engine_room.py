"""The engine-room rule: outside `loomnb/fast/` and the private `loomnb/ops/_jit.py` / `loomnb/ops/_runtime.py`, no
module touches Numba internals, torch private APIs or `torch.ops.aten`.

Flags, by reading each module's syntax tree (nothing is imported or run):
- an attribute chain from `torch` with a private part (`torch._foreach_add_`, `torch.nn.modules.module._global_...`),
  or `torch.ops.aten`;
- an import of a private torch module or name (`from torch.optim.rmsprop import _multi_tensor_rmsprop`);
- an import from Numba's internals (`numba.core`, `numba.np`, `numba.cpython`, `numba.misc`, `numba.typed`'s
  private modules) or of `numba.extending.intrinsic` (LLVM code generation);
- a dispatcher's compiled-overload table (`.overloads`);
- torch's private hook and parameter tables read on modules, tensors and optimizers (`._forward_hooks`,
  `._optimizer_step_pre_hooks`, `._parameters`, ...).

`PENDING` lists the modules that still hold such code, each with where it is to go; the check fails on any other
module, and on a `PENDING` entry that no longer needs its place (so the list only shrinks).
Usage: `python scripts/check_engine_room.py [ROOT]` (exit 1 on a violation).
"""
from __future__ import annotations
import ast, sys
from pathlib import Path

ALLOWED = ("loomnb/fast/", "loomnb/ops/_jit.py", "loomnb/ops/_runtime.py", "loomnb/_modidx.py")
PENDING = {   # module -> where its speed machinery goes (remove the entry when it has moved)
}
NUMBA_INTERNAL = ("numba.core", "numba.np", "numba.cpython", "numba.misc", "numba.typed.typedobjectutils", "numba.parfors")
TORCH_PRIVATE_ATTRS = {"_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                       "_post_accumulate_grad_hooks", "_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                       "_parameters", "_buffers", "_global_forward_hooks", "_global_forward_pre_hooks",
                       "_global_backward_hooks", "_global_backward_pre_hooks"}

def _chain(node) -> list[str]:
    "`torch.nn.modules.module._x` -> ['torch', 'nn', 'modules', 'module', '_x'] (empty if not a plain name chain)."
    parts = []
    while isinstance(node, ast.Attribute): parts.append(node.attr); node = node.value
    if isinstance(node, ast.Name): parts.append(node.id); return parts[::-1]
    return []

def _private(name: str) -> bool: return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))

def violations(path: Path, text: str) -> list[str]:
    "Every rule violation in one module's source, as 'line: what'."
    out = []
    for n in ast.walk(ast.parse(text, str(path))):
        if isinstance(n, ast.Attribute):
            ch = _chain(n)
            if ch and ch[0] == "torch" and (any(_private(p) for p in ch[1:]) or ch[1:3] == ["ops", "aten"]):
                if n.attr == ch[-1] and len(ch) > 1: out.append(f"{n.lineno}: {'.'.join(ch)}")
            elif n.attr == "overloads": out.append(f"{n.lineno}: .overloads (a Numba dispatcher's compiled table)")
            elif n.attr in TORCH_PRIVATE_ATTRS: out.append(f"{n.lineno}: .{n.attr} (a torch private table)")
        elif isinstance(n, ast.ImportFrom) and n.module:
            mod = n.module
            if mod.split(".")[0] == "torch" and (any(_private(p) for p in mod.split(".")) or any(_private(a.name) for a in n.names)):
                out.append(f"{n.lineno}: from {mod} import {', '.join(a.name for a in n.names)}")
            if mod.startswith(NUMBA_INTERNAL): out.append(f"{n.lineno}: from {mod} import ... (Numba internals)")
            if mod == "numba.extending" and any(a.name == "intrinsic" for a in n.names):
                out.append(f"{n.lineno}: from numba.extending import intrinsic")
        elif isinstance(n, ast.Import):
            for a in n.names:
                if (a.name.split(".")[0] == "torch" and any(_private(p) for p in a.name.split("."))) or a.name.startswith(NUMBA_INTERNAL):
                    out.append(f"{n.lineno}: import {a.name}")
    out = sorted(set(out), key=lambda s: int(s.split(":")[0]))
    return [s for s in out if not any(t != s and t.startswith(s + ".") for t in out)]   # a chain once, at full length

def check(root: Path) -> tuple[dict, list[str]]:
    "Violations per module outside the engine room, and the problems (unlisted modules, stale `PENDING` entries)."
    found, problems = {}, []
    for p in sorted((root / "loomnb").rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(ALLOWED): continue
        v = violations(p, p.read_text())
        if v: found[rel] = v
    for rel, v in found.items():
        if rel not in PENDING: problems.append(f"{rel} touches engine-room internals outside loomnb/fast, ops/_jit, ops/_runtime:\n  " + "\n  ".join(v))
    for rel in PENDING:
        if rel not in found: problems.append(f"{rel} no longer needs its PENDING entry in scripts/check_engine_room.py: remove it")
    return found, problems

if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    found, problems = check(root)
    for rel in PENDING:
        if rel in found: print(f"pending: {rel} ({len(found[rel])} sites): {PENDING[rel]}")
    if problems:
        print("FAIL: engine-room rule\n" + "\n".join(problems)); sys.exit(1)
    print(f"engine-room rule holds ({len(PENDING)} modules pending their move)")
