#!/usr/bin/env bash
# Fetch KaTeX from the npm registry into .cache/katex/ (once), for scripts/site_post.py to copy into the site:
# the pages render their maths with no network at view time. Prints the cached dist/ folder.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${KATEX_VERSION:-0.16.47}"
DEST=".cache/katex/$VERSION"
if [ ! -f "$DEST/dist/katex.min.js" ] || [ ! -f "$DEST/dist/contrib/auto-render.min.js" ]; then
  command -v npm >/dev/null || { echo "vendor_katex: npm is needed to fetch katex@$VERSION (apt-get install npm)" >&2; exit 1; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "katex@$VERSION" --silent >/dev/null)   # npm checks the tarball's integrity
  rm -rf "$DEST" && mkdir -p "$DEST"
  tar -xzf "$tmp"/katex-"$VERSION".tgz -C "$DEST" --strip-components=1 package/dist package/LICENSE
  test -f "$DEST/dist/katex.min.js" || { echo "vendor_katex: katex-$VERSION.tgz has no dist/katex.min.js" >&2; exit 1; }
fi
echo "$DEST/dist"
