#!/usr/bin/env bash
# Build the documentation site from nbs/ and tutorials/ into _docs/.
# With Quarto installed this is nbdev's own `nbdev-docs`; without it (Quarto cannot be installed on every machine)
# the same processed notebooks are rendered offline by smalldocs.
set -euo pipefail
cd "$(dirname "$0")/.."
# tutorials/ lives outside nbs/ (it exports nothing); stage a copy so both builders see it as a site section.
rm -rf nbs/tutorials && mkdir -p nbs/tutorials && { [ -d tutorials ] && cp -r tutorials/. nbs/tutorials/ || true; }
trap 'rm -rf nbs/tutorials' EXIT
if command -v quarto >/dev/null 2>&1 && [ -z "${LOOMNB_DOCS_OFFLINE:-}" ]; then
  echo "docs: building with Quarto (nbdev-docs)"
  nbdev-docs
else
  echo "docs: Quarto not found, building offline with nbdev-proc-nbs + smalldocs"
  rm -rf _proc
  nbdev-proc-nbs >/dev/null 2>&1 || { echo "nbdev-proc-nbs failed"; nbdev-proc-nbs; exit 1; }
  nbdev-sidebar >/dev/null && cp nbs/sidebar.yml _proc/
  smalldocs render --quiet _proc 2>&1 | grep -vE "ignored|not supported|nbdev-only" || true
  test -f _proc/_docs/index.html || { echo "docs: smalldocs wrote no index.html"; exit 1; }
  rm -rf _docs && mv _proc/_docs _docs
fi
echo "docs: site in _docs/ ($(find _docs -name '*.html' | wc -l) pages)"
