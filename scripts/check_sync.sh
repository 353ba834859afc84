#!/usr/bin/env bash
# Fail when loomnb/ is not exactly what nbdev-export writes from the notebooks, when a notebook is not clean, or
# when README.md is not what scripts/readme.py writes from nbs/index.ipynb, or when a cell mixes an import with
# other code (scripts/check_import_cells.py). Leaves the regenerated files in place.
set -uo pipefail
cd "$(dirname "$0")/.."
nbdev-export || exit 1
nbdev-clean || exit 1
for d in tutorials papermill_runs; do if compgen -G "$d/*.ipynb" >/dev/null; then nbdev-clean --fname "$d" || exit 1; fi; done
python scripts/readme.py || exit 1
python -W ignore scripts/check_import_cells.py nbs tutorials papermill_runs || exit 1
paths="loomnb nbs tutorials papermill_runs README.md"
if [ -n "$(git status --porcelain --untracked-files=all -- $paths)" ]; then
  echo "FAIL: nbdev-export / nbdev-clean / scripts/readme.py changed these files:"
  git status --short --untracked-files=all -- $paths | head -30
  echo "Edit the notebooks (never loomnb/ by hand), run 'make export', and commit the result."
  exit 1
fi
echo "notebooks, package and README in sync; notebooks clean"
