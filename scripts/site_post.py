"""Finish a built site (_docs/) so that a local copy works as the published one does, with no network at view time.

* KaTeX: the pages' CDN addresses for KaTeX point at a copy in `site_libs/katex/` (from `scripts/vendor_katex.sh`,
  npm's `katex` package), so maths renders offline and from file://.
* Cross-references: nbdev writes links to documented names as `SITE_URL/algos.ppo.html#ppoconfig`; they become
  relative links to the page that documents the name (`40_algos.ppo.html#ppoconfig` in the offline build).
* Search from file://: browsers refuse `fetch("search.json")` there, so the index is also written as `search.js`
  and the search script loads it with a `<script>` tag when the page is a file.
* The pages' tables of contents list public names only (no `_Private.method` entries).
Usage: python scripts/site_post.py [SITE=_docs] [KATEX_DIST]   (KATEX_DIST: default, what vendor_katex.sh prints)
"""
import json, re, shutil, subprocess, sys
from pathlib import Path
import yaml

ROOT = Path(__file__).resolve().parents[1]
KATEX_CDN = re.compile(r"https://cdn\.jsdelivr\.net/npm/katex@[^/\"']+/dist")
TOC_PRIVATE = re.compile(r'<li><a href="#[^"]*"[^>]*>(?:<code>)?(?:[A-Za-z0-9]\w*\.)?_[^<]*(?:</code>)?</a></li>')
# smalldocs' search index loader, as smalldocs 0.5.x writes it, and the same that also works from file://
FETCH_INDEX = 'const r = await fetch(offset + "search.json");\n      index = await r.json();'
LOAD_INDEX = ('index = location.protocol === "file:"\n'
              '        ? await new Promise((ok) => { const s = document.createElement("script"); s.src = offset + "search.js";\n'
              '            s.onload = () => ok(window.smalldocsSearchIndex || []); s.onerror = () => ok([]); document.head.appendChild(s); })\n'
              '        : await (await fetch(offset + "search.json")).json();')

def site_url() -> str:
    "The published address of the site, from nbs/nbdev.yml"
    return yaml.safe_load((ROOT / "nbs" / "nbdev.yml").read_text())["website"]["site-url"].rstrip("/")

def page_names(site: Path) -> dict:
    "Each page's published name (nbdev's: number prefixes dropped) -> its path in `site`"
    names = {}
    for p in sorted(site.rglob("*.html")):
        rel = p.relative_to(site)
        if rel.parts[0] == "site_libs": continue
        names[rel.as_posix()] = rel.as_posix()
        short = "/".join(re.sub(r"^\d+[a-z]*_", "", part) for part in rel.parts)
        names.setdefault(short, rel.as_posix())
    return names

class Anchors:
    "The element ids of each page of a site, read once"
    def __init__(self, site: Path): self.site, self.ids = site, {}
    def __call__(self, page: str) -> set:
        if page not in self.ids:
            self.ids[page] = set(re.findall(r'\bid="([^"]+)"', (self.site / page).read_text(encoding="utf-8")))
        return self.ids[page]

def best_anchor(frag: str, ids: set) -> str:
    "`#cls.method` when the page documents it, else `#cls` (a method without its own entry), else the page's top"
    name = frag.lstrip("#")
    while name:
        if name in ids: return "#" + name
        name = name.rpartition(".")[0]
    return ""

def relink(html: str, depth: int, names: dict, url: str, anchors=None) -> str:
    "Point the links into the published site at the pages of this one, relative to a page `depth` folders down"
    up = "../" * depth
    def sub(m):
        path, frag = m.group(2), m.group(3) or ""
        target = names.get(path or "index.html")
        if target is None: return m.group(0)
        if frag and anchors is not None: frag = best_anchor(frag, anchors(target))
        return f'{m.group(1)}"{up}{target}{frag}"'
    return re.sub(r'(href=)"' + re.escape(url) + r'/?([^"#]*?)(#[^"]*)?"', sub, html)

def public_toc(html: str) -> str:
    "Drop the table of contents' entries for private names (`_Controls.start`, `Foo._bar`)"
    i = html.find('id="TOC"')
    if i < 0: return html
    j = html.find("</nav>", i)
    return html[:i] + TOC_PRIVATE.sub("", html[i:j]) + html[j:]

def vendor_katex(site: Path, dist: Path):
    "Copy KaTeX's scripts, style and woff2 fonts into `site/site_libs/katex`"
    dest = site / "site_libs" / "katex"
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "contrib").mkdir(parents=True)
    (dest / "fonts").mkdir()
    for f in ["katex.min.js", "katex.min.css"]: shutil.copy2(dist / f, dest / f)
    shutil.copy2(dist / "contrib" / "auto-render.min.js", dest / "contrib")
    for f in (dist / "fonts").glob("*.woff2"): shutil.copy2(f, dest / "fonts")
    lic = dist.parent / "LICENSE"
    if lic.exists(): shutil.copy2(lic, dest / "LICENSE")

def search_from_files(site: Path):
    "Write search.js beside search.json, and let the search script load it from file://"
    idx = site / "search.json"
    if not idx.exists(): return
    (site / "search.js").write_text("window.smalldocsSearchIndex = " + idx.read_text(encoding="utf-8") + ";\n", encoding="utf-8")
    js = site / "site_libs" / "smalldocs.js"
    if not js.exists(): return  # Quarto's own search: served over HTTP only
    src = js.read_text(encoding="utf-8")
    if LOAD_INDEX in src: return
    if FETCH_INDEX not in src: sys.exit("site_post: smalldocs.js no longer loads search.json as expected; update FETCH_INDEX")
    js.write_text(src.replace(FETCH_INDEX, LOAD_INDEX), encoding="utf-8")

def main(site="_docs", dist=None):
    site = Path(site)
    if dist is None: dist = subprocess.run(["bash", str(ROOT / "scripts" / "vendor_katex.sh")], check=True,
                                           capture_output=True, text=True).stdout.strip().splitlines()[-1]
    vendor_katex(site, ROOT / dist)
    names, url, anchors = page_names(site), site_url(), Anchors(site)
    n_links = 0
    for p in site.rglob("*.html"):
        rel = p.relative_to(site)
        if rel.parts[0] == "site_libs": continue
        depth = len(rel.parts) - 1
        html = p.read_text(encoding="utf-8")
        new = KATEX_CDN.sub("../" * depth + "site_libs/katex", html)
        new = relink(new, depth, names, url, anchors)
        new = public_toc(new)
        n_links += html.count(url + "/") - new.count(url + "/")
        if new != html: p.write_text(new, encoding="utf-8")
    search_from_files(site)
    print(f"site_post: KaTeX in site_libs/katex, {n_links} links made relative, search.js written")

if __name__ == "__main__": main(*sys.argv[1:])
