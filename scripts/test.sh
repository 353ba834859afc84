#!/usr/bin/env bash
# The whole test suite, as CI runs it. Ends with pytest's own summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
export WANDB_MODE=disabled WANDB_SILENT=true GLOO_SOCKET_IFNAME=lo OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export NUMBA_THREADING_LAYER=workqueue PYTHONHASHSEED=0
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
t0=$SECONDS
step() { echo; echo "=== $* ($((SECONDS - t0)) s)"; }

step "notebooks and package in sync, notebooks clean"
bash scripts/check_sync.sh

step "engine-room rule (scripts/check_engine_room.py)"
python scripts/check_engine_room.py

step "notebooks: nbs/ and tutorials/ run once as nbdev-test runs them, executed copies kept in _exec/ for the docs"
python scripts/execute_nbs.py --timing --n-workers 2
step "nbdev-test: the algorithms with the engine room switched off (LOOMNB_FAST=0)"
python scripts/test_fast_off.py

step "docs site, rendered from the executed notebooks in _exec/"
bash scripts/docs.sh

step "pytest tests/"
# Two workers, whole files each: most tests wait on subprocesses and servers. Modules marked `exclusive` (Ray
# clusters, torchrun ranks, timed fail-fast paths) run with the other worker held (tests/conftest.py).
# PYTEST_WORKERS=0 runs everything in one process.
python -m pytest tests -q -rs -p no:cacheprovider --durations=10 -n "${PYTEST_WORKERS:-2}" --dist loadfile
