import os, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = bool(os.environ.get("CI"))
os.environ.setdefault("WANDB_MODE", "disabled")

def need_binary(name: str) -> str:
    "Path of a system binary; skip when missing on a user's machine, fail under CI (where `make test` installs it)."
    path = shutil.which(name)
    if path is None:
        if IN_CI: pytest.fail(f"{name} is required in CI (make test installs it) but was not found on PATH")
        pytest.skip(f"{name} not installed (make test installs it)")
    return path

@pytest.fixture
def root(): return ROOT

@pytest.fixture(scope="module")
def redis_url():
    "A throwaway redis-server for one test module (`loomnb.bandits.redis_memory.RedisServer`); its URL."
    need_binary("redis-server")
    from loomnb.bandits.redis_memory import RedisServer
    srv = RedisServer().start()
    yield srv.url
    srv.stop()
    assert srv.proc is None


# Two pytest workers (pytest-xdist, whole files each) share the two cores. A module marked `exclusive` (a Ray cluster,
# torchrun ranks, tests that time a fail-fast path) runs with the other worker held between its tests: every test
# takes a shared lock on one file per run, and an exclusive module takes it exclusively from its first test's setup
# (module fixtures included) to its last test's teardown. Without xdist nothing is locked.
import fcntl
_lock = {"fd": None, "mode": None}

def _lock_to(mode):
    if _lock["mode"] == mode: return
    if _lock["fd"] is None:
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"loomnb-tests-{os.environ['PYTEST_XDIST_TESTRUNUID']}.lock"
        _lock["fd"] = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(_lock["fd"], fcntl.LOCK_UN)
    if mode is not None: fcntl.flock(_lock["fd"], fcntl.LOCK_EX if mode == "ex" else fcntl.LOCK_SH)
    _lock["mode"] = mode

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if "PYTEST_XDIST_TESTRUNUID" not in os.environ:
        yield; return
    excl = item.get_closest_marker("exclusive") is not None
    _lock_to("ex" if excl else "sh")
    try: yield
    finally:
        if not (excl and nextitem is not None and nextitem.module is item.module): _lock_to(None)

# The longest files start first, so that neither worker is left alone with one of them at the end.
LONG_FIRST = ("test_dashboard_browser.py", "test_workflow_sweep.py", "test_workflow_first_hour.py", "test_offpolicy_cli.py")

def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.name, len(LONG_FIRST)))   # stable: the rest keep their order
