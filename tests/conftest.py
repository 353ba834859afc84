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
