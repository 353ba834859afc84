#!/usr/bin/env bash
# Build the documentation site into _docs/ from the EXECUTED notebooks in _exec/, so pages show their outputs and plots.
# _exec/ is written by scripts/execute_nbs.py (the notebook step of scripts/test.sh); run alone, this script executes
# only the notebooks whose executed copy is missing or older than the source (LOOMNB_DOCS_FRESH=1: all of them).
# With Quarto installed (and LOOMNB_DOCS_OFFLINE unset) the site is nbdev's own `nbdev-docs --path _exec`; without it
# (Quarto cannot be installed on every machine) the same processed notebooks are rendered offline by smalldocs.
# Either way scripts/site_post.py then vendors KaTeX (npm), makes cross-references relative and enables file:// search.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
rm -rf nbs/tutorials   # the staging copy older versions of this script made
python scripts/execute_nbs.py $([ -n "${LOOMNB_DOCS_FRESH:-}" ] || echo --stale)
bash scripts/vendor_katex.sh >/dev/null
python scripts/sidebar.py _exec >/dev/null
if command -v quarto >/dev/null 2>&1 && [ -z "${LOOMNB_DOCS_OFFLINE:-}" ]; then
  echo "docs: building with Quarto (nbdev-docs --path _exec)"
  nbdev-docs --path _exec
else
  echo "docs: Quarto not found, building offline with nbdev-proc-nbs + smalldocs"
  rm -rf _proc
  nbdev-proc-nbs --path _exec >/dev/null 2>&1 || { echo "nbdev-proc-nbs failed"; nbdev-proc-nbs --path _exec; exit 1; }
  cp _exec/sidebar.yml _proc/
  smalldocs render --quiet _proc 2>&1 | grep -vE "ignored|not supported|nbdev-only|output-file is not read" || true
  test -f _proc/_docs/index.html || { echo "docs: smalldocs wrote no index.html"; exit 1; }
  rm -rf _docs && mv _proc/_docs _docs
fi
python scripts/site_post.py _docs
echo "docs: site in _docs/ ($(find _docs -name '*.html' | wc -l) pages) in $((SECONDS - t0)) s"
