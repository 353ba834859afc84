"""Peer libraries in virtualenvs of their own, made on first use, so their pins (gymnasium 1.0, old transformers...)
never reach loomnb's environment.

    py = peer_python("bench/.venv-morl", ["torch==2.13.0"], ["morl-baselines==1.3.0"])

Each later argument is one `pip install` call (torch==2.13.0 first: the CPU wheel on this machine, before a package that
would pull a CUDA build). `ready` is Python code that exits 0 when the venv is usable; without it the venv is usable once
its python exists. `share_site=True` installs with `--no-deps` and appends this interpreter's site-packages after the
venv's own (a .pth file), for a peer that needs only a few pins of its own beside loomnb's torch, numpy and h5py.
"""
from __future__ import annotations
import os, subprocess, sys


def _site(py: str) -> str:
    return subprocess.run([py, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True, check=True).stdout.strip()


def _share_site(py: str):
    shared = [p for p in sys.path if p.rstrip("/").endswith("site-packages")]   # a venv layered on another: all of them
    with open(os.path.join(_site(py), "zz_loomnb_shared.pth"), "w") as f: f.write("".join(p + "\n" for p in shared))


def peer_python(venv, *installs: list[str], ready: str | None = None, share_site: bool = False) -> str:
    "The peer venv's python, made (python -m venv, then one pip install per list in `installs`) when it is not usable yet."
    venv = os.fspath(venv); py = os.path.join(venv, "bin", "python")
    usable = lambda: ready is None or subprocess.run([py, "-c", ready], capture_output=True).returncode == 0
    if os.path.exists(py):
        if usable(): return py
        if share_site:   # made before, but the shared packages are not visible (moved interpreter): rewrite the .pth
            _share_site(py)
            if usable(): return py
    else:
        subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv], check=True)
    for pkgs in installs:
        subprocess.run([py, "-m", "pip", "install", "-q", *(["--no-deps"] if share_site else []), *pkgs], check=True)
    if share_site: _share_site(py)
    if not usable(): raise RuntimeError(f"the peer venv {venv} was made but `{ready}` still fails in it")
    return py
