"The package follows its layers: every import inside loomnb goes to the same or a lower layer, and no import cycle."
import ast
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
# bottom up; a module may import from its own layer or below (bandits sit beside the RL stack)
# (eval needs only its statistics: it sits below train, whose evaluation callback uses it)
LAYERS = [("core", "compat"), ("ops",), ("envs", "buffers"), ("agents",), ("fast",), ("eval",), ("train",), ("algos", "llm"),
          ("distributed",), ("workflow",), ("bandits",), ("__main__",)]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
SHIMS = {"nets", "qnets", "collect", "loggers", "offpolicy", "eval_stats", "eval_plots", "widgets", "runs", "runner",
         "cli", "learner"}   # the old paths (loomnb.compat): aliases, never imported by the package itself

def _modules():
    for p in sorted((ROOT / "loomnb").rglob("*.py")):
        rel = p.relative_to(ROOT / "loomnb").with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__": parts = parts[:-1]
        if not parts or parts[0] in ("_modidx",) or parts[0] in SHIMS: continue
        yield ".".join(parts), p

def _imports(mod: str, path: Path):
    "Every loomnb module `mod` imports (top level and inside functions), as dotted names."
    pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.ImportFrom):
            if n.level:
                base = pkg[:len(pkg) - (n.level - 1)] if n.level > 1 else pkg
                target = ".".join(base + ([n.module] if n.module else []))
            elif n.module and n.module.startswith("loomnb"): target = n.module[len("loomnb."):] if n.module != "loomnb" else ""
            else: continue
            yield target, n.lineno
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.startswith("loomnb."): yield a.name[len("loomnb."):], n.lineno

def _rank(mod: str) -> int:
    top = mod.split(".")[0]
    if top not in RANK: raise AssertionError(f"loomnb.{mod}: its package {top!r} has no layer in tests/test_layers.py")
    return RANK[top]

def test_no_upward_import():
    bad = []
    for mod, p in _modules():
        for target, line in _imports(mod, p):
            if not target: continue
            if target.split(".")[0] in SHIMS: bad.append(f"loomnb.{mod}:{line} imports the old path loomnb.{target}")
            elif target.split(".")[0] != "bandits" or mod.split(".")[0] != "bandits":
                if _rank(target) > _rank(mod): bad.append(f"loomnb.{mod}:{line} imports loomnb.{target} (a higher layer)")
    assert not bad, "\n".join(bad)

def test_no_import_cycle():
    mods = dict(_modules())
    graph = {m: {t for t, _ in _imports(m, p) if t in mods and t != m} for m, p in mods.items()}
    state, stack = {}, []
    def visit(m):
        state[m] = 1; stack.append(m)
        for t in graph[m]:
            if state.get(t) == 1: raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state: visit(t)
        state[m] = 2; stack.pop()
    for m in graph:
        if m not in state: visit(m)
