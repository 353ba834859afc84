"""Execute every notebook of nbs/ and tutorials/ once, as `nbdev-test` does, and keep the executed copies for the docs.

Each notebook runs in a fresh execnb shell from its own folder, skipping the cells flagged by `tst_flags` in
pyproject.toml (`notest slow cuda`; `#| fastpath` cells are skipped too when LOOMNB_FAST=0). Skipped cells keep
their committed outputs (the `#| slow` results come from the bench/papermill runs). A notebook that raises fails
the run, as under `nbdev-test`. The executed copies go to OUT (default `_exec/`), laid out as the site is: nbs/
at its root, tutorials/ under `tutorials/`, with nbs/'s other files (yml, css, images) copied beside them, so that
`nbdev-proc-nbs --path _exec` and `nbdev-docs --path _exec` render executed pages.

Usage: python scripts/execute_nbs.py [--n-workers 2] [--out _exec] [--timing] [--stale] [PATTERN ...]
  PATTERN: only notebooks whose path (relative to the project) matches one of these regexes; the rest of OUT is kept.
  --stale: only notebooks whose executed copy is missing or older than the source (what `make docs` uses).
"""
import argparse, os, re, shutil, sys, time, traceback
from pathlib import Path
from fastcore.basics import str2bool
from fastcore.nbio import write_nb
from fastcore.parallel import parallel
from fastcore.xtras import working_directory
from execnb.shell import CaptureShell
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.process import NBProcessor
from nbdev.test import nb_test_cells

ROOT = Path(__file__).resolve().parents[1]

def skip_flags(cfg) -> list:
    "The cell flags the test run leaves out: `tst_flags`, plus `fastpath` when the engine room is off"
    flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags)
    return flags + (["fastpath"] if os.environ.get("LOOMNB_FAST") == "0" else [])

def _algorithm_registry():
    """The algorithm registry and a copy of it: a notebook's exported cells register the classes they define, and the
    workers run many notebooks, so each notebook is given back the package's registry (a later `get_algorithm` then
    finds the package's classes, not an earlier notebook's copies)."""
    try:
        from loomnb.train import registry
        return registry.ALGORITHMS, dict(registry.ALGORITHMS)
    except Exception: return None, None

def execute_nb(src: Path, dest: Path, flags: list, basepath: Path, cell_timeout: int = 600):
    "Run `src` as `nbdev-test` would and write the executed notebook to `dest`; returns (ok, seconds)"
    if str(basepath) not in sys.path: sys.path.insert(0, str(basepath))
    algos, saved = _algorithm_registry()
    prev = os.environ.get("IN_TEST")
    os.environ["IN_TEST"] = "1"
    t0 = time.time()
    try:
        nb = NBProcessor(src, rm_directives=False, process=True).nb
        run = {c.idx_ for c in nb_test_cells(src, flags)}
        k = CaptureShell(src, profile=bool(get_config(src.parent).exec_profile))
        try:
            with working_directory(src.parent):
                k.run_all(nb, exc_stop=True, preproc=lambda c: c.idx_ not in run, cell_timeout=cell_timeout)
        except BaseException:
            sys.__stderr__.write((k.prettytb(fname=src) or traceback.format_exc()) + "\n")
            dest.unlink(missing_ok=True)
            return False, time.time() - t0
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_nb(nb, dest)
        return True, time.time() - t0
    finally:
        if algos is not None: algos.clear(); algos.update(saved)
        if prev is None: os.environ.pop("IN_TEST", None)
        else: os.environ["IN_TEST"] = prev

def test_nb_fresh_registry(f, **kwargs):
    "nbdev's `test_nb`, with the algorithm registry given back afterwards (see `_algorithm_registry`)."
    from nbdev.test import test_nb
    algos, saved = _algorithm_registry()
    try: return test_nb(f, **kwargs)
    finally:
        if algos is not None: algos.clear(); algos.update(saved)

def _run_one(pair, flags, basepath, cell_timeout):
    src, dest = pair
    return execute_nb(src, dest, flags, basepath, cell_timeout)

def notebooks(cfg, out: Path) -> list:
    "(source, executed copy) for every notebook `nbdev-test nbs/` and `nbdev-test tutorials` would run"
    nbs = Path(cfg.nbs_path).absolute()
    pairs = []
    for root, dest in [(nbs, out), (ROOT / "tutorials", out / "tutorials")]:
        if not root.exists(): continue
        for f in sorted(nbglob(root, as_path=True)):
            f = Path(f).absolute()
            if (f.parent / ".notest").exists() or f.is_relative_to(nbs / "tutorials"): continue
            pairs.append((f, dest / f.relative_to(root)))
    return pairs

def mirror_files(cfg, out: Path):
    "Copy nbs/'s other files (quarto/nbdev yml, css, images) and tutorials/'s into `out`, as the site needs them"
    nbs = Path(cfg.nbs_path).absolute()
    for root, dest in [(nbs, out), (ROOT / "tutorials", out / "tutorials")]:
        if not root.exists(): continue
        for f in root.rglob("*"):
            rel = f.relative_to(root)
            if (f.is_dir() or f.suffix == ".ipynb" or rel.parts[0] in ("tutorials", "sidebar.yml")
                or any(p.startswith((".", "_")) and p not in ("_quarto.yml",) for p in rel.parts)): continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest / rel)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("patterns", nargs="*", help="regexes on the notebook path relative to the project")
    ap.add_argument("--out", default="_exec")
    ap.add_argument("--n-workers", type=int, default=2)
    ap.add_argument("--timing", action="store_true", help="list each notebook's seconds, slowest first")
    ap.add_argument("--stale", action="store_true", help="only notebooks whose executed copy is missing or older")
    ap.add_argument("--cell-timeout", type=int, default=600)
    a = ap.parse_args(argv)
    os.chdir(ROOT)
    cfg = get_config()
    out = (ROOT / a.out).absolute()
    pairs = notebooks(cfg, out)
    if not a.patterns and out.exists():  # executed copies of notebooks that are gone
        for f in set(out.rglob("*.ipynb")) - {d for _, d in pairs}: f.unlink()
    if a.patterns: pairs = [p for p in pairs if any(re.search(r, str(p[0].relative_to(ROOT))) for r in a.patterns)]
    if a.stale: pairs = [(s, d) for s, d in pairs if not d.exists() or d.stat().st_mtime < s.stat().st_mtime]
    mirror_files(cfg, out)
    if not pairs: return print(f"execute_nbs: nothing to run; executed notebooks in {a.out}/")
    flags = skip_flags(cfg)
    t0 = time.time()
    with working_directory(cfg.nbs_path):
        n = 0 if len(pairs) == 1 else min(a.n_workers, len(pairs))
        res = parallel(_run_one, pairs, flags=flags, basepath=cfg.config_path, cell_timeout=a.cell_timeout,
                       n_workers=n, pause=0.01)
    failed = [s for (s, _), (ok, _) in zip(pairs, res) if not ok]
    if a.timing:
        for (s, _), (ok, dt) in sorted(zip(pairs, res), key=lambda o: -o[1][1]):
            print(f"{s.relative_to(ROOT)}: {int(dt)} secs{'' if ok else ' FAILED'}")
    if failed:
        sys.stderr.write("\nnbdev Tests Failed On The Following Notebooks:\n" + "=" * 50 + "\n\t"
                         + "\n\t".join(str(f.relative_to(ROOT)) for f in failed) + "\n")
        sys.exit(1)
    print(f"Success. {len(pairs)} notebooks executed in {time.time() - t0:.0f} s (skipping {' '.join(flags)}); "
          f"executed copies in {a.out}/")

if __name__ == "__main__":
    # run from the importable module, not __main__: each execnb shell replaces `__main__`, and the pool's workers
    # find the function to call by its module's name
    import execute_nbs
    execute_nbs.main()
