"""The training dashboard in a real JupyterLab, driven by headless Chromium through Playwright.

A notebook server is started on loopback, the dashboard cell runs in a real kernel and its widgets render in the page.
The test clicks Start, Pause, Apply (a new learning rate typed into the widget), Resume, Stop, Continue (the run
continues), then re-runs the cell while training: the run the cell started before stops, and no `loomnb-train` thread
is left. Each check reads the kernel's state through a probe cell run in the same page.
"""
import json, os, re, secrets, socket, subprocess, sys, time
from pathlib import Path
import pytest
from conftest import ROOT, IN_CI, need_binary

def _need(mod: str):
    try: return __import__(mod)
    except ImportError:
        if IN_CI: pytest.fail(f"{mod} is required in CI (make test installs the dev extra)")
        pytest.skip(f"{mod} not installed (pip install -e '.[dev]')")

CELLS = [
    "import threading\nfrom loomnb.train.learner import Trainer\nfrom loomnb.workflow.widgets import TrainingDashboard",
    ('tr = Trainer("ppo", env="CartPole-v1", seed=0, config=dict(n_envs=4, n_steps=32, batch_size=64, n_epochs=2, '
     'anneal_lr=False, learning_rate=1e-3))\n'
     'dash = TrainingDashboard(tr, total_timesteps=10_000_000, redraw_every=0.2)\ndash'),
    ('import json\nprint("PROBE" + json.dumps(dict(step=tr.state.global_step, status=dash.ctl.status, lr=tr.config.learning_rate, '
     'threads=sum(t.name == "loomnb-train" and t.is_alive() for t in threading.enumerate()), '
     'controllers=[d.ctl.status for d in [dash] + ([old] if "old" in globals() else [])])) + "END")'),
    "old = dash",
]

def _notebook(path: Path):
    cells = [{"cell_type": "code", "id": f"cell{i}", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
             for i, s in enumerate(CELLS)]
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}))

def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@pytest.fixture
def lab(tmp_path):
    _need("jupyterlab")
    port, token = _free_port(), secrets.token_hex(16)
    _notebook(tmp_path / "dash.ipynb")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_THREADING_LAYER": "workqueue",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
                             f"--LabApp.workspaces_dir={tmp_path / 'ws'}", f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
                             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                             "--ServerApp.port_retries=0", "--LabApp.extension_manager=readonly"]
                            + (["--allow-root"] if os.geteuid() == 0 else []), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None: raise AssertionError(f"jupyter lab exited: {(tmp_path / 'lab.log').read_text()[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1): break
            except OSError: time.sleep(0.5)
        else: raise AssertionError("jupyter lab did not listen within 120 s")
        yield f"http://127.0.0.1:{port}/lab/tree/dash.ipynb?token={token}", tmp_path
    finally:
        proc.terminate()
        try: proc.wait(20)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()

def test_dashboard_in_jupyterlab(lab):
    chromium = need_binary("chromium")
    _need("playwright")
    from playwright.sync_api import sync_playwright
    url, folder = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(url)
        page.wait_for_selector(".jp-Notebook .jp-Cell")
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=180_000)
        cells = page.locator(".jp-Notebook .jp-Cell")

        def prompt(i: int) -> str: return cells.nth(i).locator(".jp-InputPrompt").inner_text()

        def run(i: int, timeout: float=120, tries: int=1):
            "Run cell i (Ctrl+Enter keeps it selected) and wait until it has finished (a new execution count)."
            before = prompt(i)
            for _ in range(tries):
                cells.nth(i).locator(".jp-InputArea-editor").click()
                page.keyboard.press("Control+Enter")
                t0 = time.monotonic()
                while time.monotonic() - t0 < timeout:
                    now = prompt(i)
                    if re.search(r"\[\d+\]", now) and now != before: return
                    time.sleep(0.2)
            raise AssertionError(f"cell {i} did not finish (prompt {prompt(i)!r}): {cells.nth(i).inner_text()[-2000:]}")

        def probe() -> dict:
            run(2)
            txt = cells.nth(2).locator(".jp-OutputArea").inner_text()
            return json.loads(re.search(r"PROBE(.*?)END", txt, re.S).group(1))

        def until(pred, what: str, timeout=120):
            t0 = time.monotonic()
            while time.monotonic() - t0 < timeout:
                s = probe()
                if pred(s): return s
                time.sleep(1)
            raise AssertionError(f"{what}: last probe {s}")

        def button(name: str, cell: int=1):
            return cells.nth(cell).locator(".jp-OutputArea button", has_text=re.compile(f"^{name}$"))

        run(0, timeout=60, tries=3)   # the first run also waits for the kernel to connect
        run(1)
        button("Start").wait_for()
        assert probe()["status"] == "idle"
        button("Start").click()
        s = until(lambda s: s["status"] == "running" and s["step"] >= 3 * 128, "training did not start")
        assert s["threads"] == 1
        button("Pause").click()
        s = until(lambda s: s["status"] == "paused", "did not pause")
        time.sleep(3); frozen = probe()["step"]; time.sleep(2)
        assert probe()["step"] == frozen                                  # paused: no env step is taken
        lr = cells.nth(1).locator(".jp-OutputArea .widget-text", has_text="learning_rate").locator("input")
        lr.fill("0.0005"); lr.press("Enter")
        button("Apply").click()
        cells.nth(1).locator(".jp-OutputArea", has_text="queued").wait_for()
        button("Resume").click()
        s = until(lambda s: s["step"] > frozen and s["lr"] == 0.0005, "the new learning rate did not reach training")
        cells.nth(1).locator(".jp-OutputArea", has_text="applied at step").wait_for()   # the dashboard says where it took effect
        button("Stop").click()
        s = until(lambda s: s["status"] == "stopped" and s["threads"] == 0, "Stop left a thread")
        stopped_at = s["step"]
        button("Continue").click()                                       # after Stop, Start reads Continue: the same run goes on
        s = until(lambda s: s["status"] == "running" and s["step"] > stopped_at, "Continue after Stop did not continue")
        page.screenshot(path=str(folder / "dashboard_running.png"), full_page=True)
        run(3)                                                           # keep a handle on this dashboard
        run(1)                                                           # re-run the cell while it trains
        cells.nth(1).locator(".jp-OutputArea", has_text="stopped the run this cell started before").wait_for()
        s = until(lambda s: s["threads"] == 0, "re-running the cell orphaned the training thread")
        assert s["status"] == "idle" and s["controllers"] == ["idle", "stopped"] and s["step"] == 0
        button("Start").click()
        until(lambda s: s["status"] == "running" and s["threads"] == 1, "the new dashboard did not start")
        button("Stop").click()
        s = until(lambda s: s["status"] == "stopped" and s["threads"] == 0, "Stop left a thread")
        page.screenshot(path=str(folder / "dashboard_stopped.png"), full_page=True)
        browser.close()
