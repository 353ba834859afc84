#!/usr/bin/env bash
# Create .venv and install loomnb into it, only when needed: the install is recorded with the sha256 of
# pyproject.toml (content, not mtime: nbdev rewrites the file without changing it), so the second run is instant.
# --check: exit 0 when .venv is up to date, 1 when an install would run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
STAMP=.venv/.loomnb-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ -x .venv/bin/python ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
[ "${1:-}" = "--check" ] && exit 1
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), f"loomnb needs Python 3.11+, found {sys.version.split()[0]}"'
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
echo "setup: installing loomnb into .venv (torch first, then the package with its dev extra)"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"   # the local CPU wheel on these machines, the CUDA build elsewhere
.venv/bin/python -m pip install -q -e ".[dev]"
echo "$want" > "$STAMP"
