"Foundation checks that notebook cells cannot do well: nbdev round trips on a clone, tag survival, fresh processes."
import json, os, shutil, subprocess, sys, textwrap
from pathlib import Path
import nbformat, pytest
from conftest import ROOT, need_binary

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}

def run(cmd, cwd, check=True, **kw):
    r = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, shell=isinstance(cmd, str), **kw)
    if check and r.returncode != 0: raise AssertionError(f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r

@pytest.fixture
def clone(tmp_path):
    "A clone of the committed project plus the working tree's notebooks/package/scripts, in sync."
    dst = tmp_path / "repo"
    run(["git", "clone", "-q", str(ROOT), str(dst)], cwd=tmp_path)
    for p in ["nbs", "loomnb", "scripts", "tutorials", "papermill_runs", "pyproject.toml", "README.md", ".gitignore"]:
        src = ROOT / p
        if src.is_dir(): shutil.copytree(src, dst / p, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "tutorials"))
        elif src.exists(): shutil.copy2(src, dst / p)
    run("git add -A && git -c user.email=t@t -c user.name=t commit -qm sync --allow-empty", cwd=dst)
    return dst

def test_check_sync_passes_on_a_synced_tree(clone):
    r = run(["bash", "scripts/check_sync.sh"], cwd=clone, check=False)
    assert r.returncode == 0, r.stdout + r.stderr

def test_check_sync_fails_when_package_edited_by_hand(clone):
    with open(clone / "loomnb" / "core.py", "a") as f: f.write("\nHAND_EDIT = 1\n")
    run("git add -A && git -c user.email=t@t -c user.name=t commit -qm hand-edit", cwd=clone)
    r = run(["bash", "scripts/check_sync.sh"], cwd=clone, check=False)
    assert r.returncode != 0 and "loomnb/core.py" in r.stdout

def test_check_sync_fails_when_notebook_not_exported(clone):
    nb_path = clone / "nbs" / "00_core.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("#| export") and "def did_you_mean" in c.source)
    cell.source += "\n\ndef _not_exported_yet(): return 1\n"
    nbformat.write(nb, nb_path)
    run("nbdev-clean", cwd=clone)
    run("git add -A && git -c user.email=t@t -c user.name=t commit -qm edit", cwd=clone)
    r = run(["bash", "scripts/check_sync.sh"], cwd=clone, check=False)
    assert r.returncode != 0 and "loomnb/core.py" in r.stdout

def test_check_sync_fails_when_notebook_not_clean(clone):
    nb_path = clone / "nbs" / "00_core.ipynb"
    d = json.loads(nb_path.read_text())
    d["cells"][1]["execution_count"] = 42
    d["cells"][1]["metadata"]["collapsed"] = True
    nb_path.write_text(json.dumps(d, indent=1))
    run("git add -A && git -c user.email=t@t -c user.name=t commit -qm dirty", cwd=clone)
    r = run(["bash", "scripts/check_sync.sh"], cwd=clone, check=False)
    assert r.returncode != 0 and "nbs/00_core.ipynb" in r.stdout

def test_nbdev_clean_keeps_papermill_parameters_tag(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"], "collapsed": True, "scrolled": True}),
                                         nbformat.v4.new_code_cell("print(x)")])
    nb.cells[0].execution_count = 3
    p = tmp_path / "tagged.ipynb"; nbformat.write(nb, p)
    run(["nbdev-clean", "--fname", str(p)], cwd=ROOT)
    cleaned = nbformat.read(p, as_version=4)
    assert cleaned.cells[0].metadata.get("tags") == ["parameters"]
    assert "collapsed" not in cleaned.cells[0].metadata and cleaned.cells[0].execution_count is None

def test_papermill_run_notebooks_have_one_parameters_cell():
    nbs = sorted((ROOT / "papermill_runs").glob("*.ipynb"))
    for p in nbs:
        nb = nbformat.read(p, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{p.name}: expected one cell tagged 'parameters', found {len(tagged)}"

SEED_SCRIPT = textwrap.dedent("""
    import random, numpy as np, torch, numba
    from loomnb.core import seed_everything
    @numba.njit
    def nb_draw(): return np.random.random()
    seed_everything(123)
    print(repr((random.random(), float(np.random.rand()), float(torch.rand(1)), nb_draw())))
""")

def test_seed_everything_reproducible_across_processes():
    outs = [run([sys.executable, "-c", SEED_SCRIPT], cwd=ROOT).stdout for _ in range(2)]
    assert outs[0] == outs[1] and outs[0].strip()

def test_config_docments_and_errors(tmp_path, monkeypatch):
    (tmp_path / "mycfg.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from loomnb.core import Config
        @dataclass
        class MyConfig(Config):
            learning_rate: float = 3e-4  # Adam step size
            gamma: float = 0.99          # Discount factor
            def validate(self): self.check_range("gamma", 0, 1)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    from mycfg import MyConfig
    from loomnb.core import ConfigError
    assert MyConfig.describe() == {"learning_rate": "Adam step size", "gamma": "Discount factor"}
    with pytest.raises(ConfigError, match=r"MyConfig.gamma=2.0 is invalid: expected a value in \[0, 1\]"): MyConfig(gamma=2.0)
    with pytest.raises(ConfigError, match="Did you mean 'gamma'"): MyConfig.from_dict({"gamma_": 0.9})

def test_setup_is_up_to_date_after_install():
    "The second `make` reuses .venv: the recorded pyproject.toml hash matches, so nothing is reinstalled."
    if not (ROOT / ".venv" / ".loomnb-installed").exists(): pytest.skip("not installed through make")
    r = run(["bash", "scripts/setup.sh", "--check"], cwd=ROOT, check=False)
    assert r.returncode == 0, "make would reinstall although pyproject.toml did not change"

def test_wheel_contains_every_module(tmp_path):
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)], cwd=ROOT)
    import zipfile
    whl = next(tmp_path.glob("loomnb-*.whl"))
    names = set(zipfile.ZipFile(whl).namelist())
    mods = {str(p.relative_to(ROOT)) for p in (ROOT / "loomnb").rglob("*.py") if "__pycache__" not in p.parts}
    assert mods <= names, sorted(mods - names)
    assert any(n.endswith("entry_points.txt") for n in names)
