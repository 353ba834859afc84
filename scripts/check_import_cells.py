"""Flag notebook cells that the docs build would execute by surprise.

`nbdev-proc-nbs` (and `nbdev-docs`) execute every exported cell and every cell that contains an import anywhere in it,
so an import inside a test or example cell makes the docs build run that whole cell (slow, and it fails when the cell
needs earlier unexported state). Imports belong in the imports cells; this check lists the cells that mix an import with
other code outside exported cells (function definitions, optional imports in try/except that set a flag, and
calls on a name the cell imports, such as `torch.set_num_threads(1)`, are fine). Notebooks without exports or `show_doc` are skipped, as the docs build does. Usage: `python scripts/check_import_cells.py [notebook or folder ...]`.
"""
import ast, sys
from pathlib import Path
from nbdev.process import NBProcessor

def _root(node):
    while isinstance(node, (ast.Attribute, ast.Call)): node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None

def _harmless(stmt, imported):
    "Imports, function definitions, optional imports (try/except setting flags), and calls on an imported name."
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)): return True
    if isinstance(stmt, ast.Assign): return isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, ast.Try):
        return all(_harmless(s, imported) for s in stmt.body + [s for h in stmt.handlers for s in h.body])
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _root(stmt.value) in imported

def offending_cells(path):
    "(cell index, first line) of each unexported code cell that has an import and other code."
    nb = NBProcessor(path).nb
    exported = any(c.cell_type == "code" and c.directives_.keys() & {"export", "exports"} for c in nb.cells)
    if not exported and "show_doc(" not in "".join(c.source for c in nb.cells if c.cell_type == "code"): return
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip(): continue
        if cell.directives_.keys() & {"export", "exports", "exporti", "exec_doc"}: continue
        trees = cell.parsed_()
        if not trees or "nbdev_export()" in cell.source: continue   # (the docs build skips these cells,
        if str(cell.directives_.get("eval", "")).strip().lower() == "false": continue   # and `#| eval: false` ones)
        imports = [n for t in trees for n in ast.walk(t) if isinstance(n, (ast.Import, ast.ImportFrom))]
        imported = {(a.asname or a.name).split(".")[0] for n in imports for a in n.names}
        if imports and not all(_harmless(t, imported) for t in trees):
            yield i, next(l for l in cell.source.splitlines() if l.strip() and not l.startswith("#|"))

def main(args):
    paths = [Path(a) for a in args] or [Path("nbs")]
    nbs = sorted(p for a in paths for p in ([a] if a.suffix == ".ipynb" else a.glob("*.ipynb")))
    bad = [(nb, i, line) for nb in nbs for i, line in offending_cells(nb)]
    for nb, i, line in bad: print(f"{nb}: cell {i} mixes an import with other code (the docs build executes it): {line[:80]}")
    if bad: print("Move these imports into the notebook's imports cell."); return 1
    print(f"{len(nbs)} notebooks: no cell mixes an import with other code"); return 0

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
