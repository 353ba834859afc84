"The docs site really renders: headless Chromium loads the built pages, shows executed outputs, plots and maths, fits 1280 px."
import html, json, os, re, subprocess, tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit
import pytest
import yaml
from conftest import ROOT, need_binary

DOCS = ROOT / "_docs"
SHOTS = DOCS / "_screenshots"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,900"]

@pytest.fixture(scope="module")
def site():
    if not (DOCS / "index.html").exists():
        subprocess.run(["bash", "scripts/docs.sh"], cwd=ROOT, check=True, capture_output=True)
    return DOCS

def page(site: Path, name: str) -> Path:
    "A page by its notebook name, as the offline build (`40_algos.ppo.html`) or Quarto (`algos.ppo.html`) names it"
    folder, stem = (name.rsplit("/", 1) if "/" in name else ("", name))
    short = re.sub(r"^\d+[a-z]*_", "", stem)
    for cand in (site / folder / f"{stem}.html", site / folder / f"{short}.html"):
        if cand.exists(): return cand
    raise AssertionError(f"no page for {name} in {site}")

def chromium_run(chromium, *args, timeout=120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as prof:
        return subprocess.run([chromium, *FLAGS, f"--user-data-dir={prof}", *args], capture_output=True, text=True, timeout=timeout)

def dump_dom(chromium, p: Path, budget=5000) -> str:
    r = chromium_run(chromium, f"--virtual-time-budget={budget}", "--dump-dom", p.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout

def text_of(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom)))

# Runs in the page once it has loaded (KaTeX included): measures it and writes the findings into the DOM as JSON.
PROBE = r"""<script>
window.addEventListener("load", () => setTimeout(async () => {
  const main = document.querySelector("main") || document.body, r = {};
  r.katex = document.querySelectorAll(".katex").length;
  r.katex_errors = document.querySelectorAll(".katex-error").length;
  const outs = [...main.querySelectorAll(".cell-output")];
  r.text_outputs = outs.filter((o) => !o.querySelector("img") && o.innerText.trim().length > 0 && !o.closest(".cell-output-markdown") ).length;
  r.images = [...main.querySelectorAll(".cell-output img")].filter((i) => i.complete && i.naturalWidth > 50).length;
  const box = main.getBoundingClientRect();
  r.main_width = box.width;
  r.too_wide = [...main.querySelectorAll("pre, table, div.sourceCode, .cell-output img")].filter((e) => e.offsetParent !== null)
    .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > box.right + 1)
    .map((e) => `${e.tagName}.${e.className}: ${e.scrollWidth}/${e.clientWidth} px, right ${Math.round(e.getBoundingClientRect().right)} > ${Math.round(box.right)}: ${(e.innerText || "").slice(0, 80)}`);
  r.text = main.innerText;
  const input = document.querySelector(".smalldocs-search input, #quarto-search input");
  if (input && window.PROBE_QUERY) {
    input.value = window.PROBE_QUERY; input.dispatchEvent(new Event("input", { bubbles: true }));
    await new Promise((ok) => setTimeout(ok, 1500));
    r.search_hits = [...document.querySelectorAll(".search-result")].map((a) => a.getAttribute("href"));
  }
  const out = document.createElement("script"); out.type = "application/json"; out.id = "probe-result";
  out.textContent = JSON.stringify(r).replace(/</g, "\\u003c"); document.body.appendChild(out);
}, 500));
</script>"""

def probe(chromium, p: Path, query: str = "") -> dict:
    "Load a copy of page `p` (beside it, so its relative links hold) with PROBE added; return what PROBE found"
    tmp = p.with_name(f"_probe_{p.name}")
    q = f"<script>window.PROBE_QUERY = {json.dumps(query)};</script>" if query else ""
    tmp.write_text(p.read_text(encoding="utf-8").replace("</body>", q + PROBE + "</body>"), encoding="utf-8")
    try: dom = dump_dom(chromium, tmp, budget=8000)
    finally: tmp.unlink()
    m = re.search(r'<script type="application/json" id="probe-result">(.*?)</script>', dom, re.S)
    assert m, f"the probe did not run on {p.name}"
    return json.loads(m.group(1))

def test_index_page_renders(site):
    chromium = need_binary("chromium")
    txt = text_of(dump_dom(chromium, site / "index.html"))
    assert "loomnb" in txt and "make test" in txt and "Quick start" in txt

def test_api_page_renders_signatures(site):
    chromium = need_binary("chromium")
    p = next(p for p in site.glob("*.html") if p.name in ("00_core.html", "core.html"))
    txt = text_of(dump_dom(chromium, p))
    # a documented function's rendered signature and its docments
    assert re.search(r"seed_everything \( seed: int , # Non-negative integer seed", txt), txt[:2000]
    assert "Seed Python, NumPy, torch (CPU and CUDA) and Numba from one integer." in txt
    assert "ConfigError" in txt and "merge" in txt

# page, needs a rendered image, needs rendered maths
PAGES = [("index", False, False), ("40_algos.ppo", True, True), ("tutorials/00_quickstart", True, False),
         ("91_bandits.algorithms", False, False)]

@pytest.mark.parametrize("name,image,maths", PAGES)
def test_page_shows_outputs_maths_and_fits(site, name, image, maths):
    chromium = need_binary("chromium")
    p = page(site, name)
    r = probe(chromium, p)
    assert r["text_outputs"] >= 1, f"{p.name}: no executed text output under any cell"
    if image: assert r["images"] >= 1, f"{p.name}: no rendered image (matplotlib figure) under any cell"
    raw = [m for m in re.findall(r".{0,40}(?:\\\(|\\\[|\$\$).{0,40}", r["text"])]
    assert not raw, f"{p.name}: maths left as source: {raw[:3]}"
    assert r["katex_errors"] == 0, f"{p.name}: {r['katex_errors']} KaTeX errors"
    had_maths = bool(re.search(r"\\\(|\\\[", p.read_text(encoding="utf-8")))
    if maths or had_maths: assert r["katex"] > 0, f"{p.name}: maths in the page but no KaTeX element rendered"
    assert not r["too_wide"], f"{p.name} at 1280 px (content {r['main_width']:.0f} px): " + "\n".join(r["too_wide"][:5])
    SHOTS.mkdir(exist_ok=True)
    shot = SHOTS / (name.replace("/", "_") + ".png")
    chromium_run(chromium, "--virtual-time-budget=5000", f"--screenshot={shot}", p.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000

def test_search_works_from_file(site):
    chromium = need_binary("chromium")
    if not (site / "site_libs" / "smalldocs.js").exists(): pytest.skip("Quarto's search is served over HTTP only")
    hits = probe(chromium, site / "index.html", query="PPOConfig").get("search_hits")
    assert hits, "typing in the search box found nothing from file://"
    assert any("ppo" in h.lower() for h in hits), hits

def test_maths_needs_no_network(site):
    pages = [p for p in site.rglob("*.html") if "site_libs" not in p.parts]
    cdn = [p.name for p in pages if re.search(r"(src|href)=\"https?://[^\"]*(katex|mathjax)", p.read_text(encoding="utf-8"))]
    assert not cdn, f"pages loading maths from the network: {cdn[:5]}"
    assert (site / "site_libs" / "katex" / "katex.min.js").exists()

def _links(p: Path):
    for m in re.finditer(r'\b(?:href|src)="([^"]+)"', p.read_text(encoding="utf-8")):
        yield html.unescape(m.group(1))

def test_every_internal_link_resolves(site):
    url = yaml.safe_load((ROOT / "nbs" / "nbdev.yml").read_text())["website"]["site-url"].rstrip("/")
    pages = [p for p in site.rglob("*.html") if "site_libs" not in p.parts]
    ids, broken, checked = {}, [], 0
    def ids_of(t: Path):
        if t not in ids: ids[t] = set(re.findall(r'\bid="([^"]+)"', t.read_text(encoding="utf-8")))
        return ids[t]
    for p in pages:
        for link in _links(p):
            if link.startswith(url):
                broken.append(f"{p.name}: {link} (an absolute link into the published site)"); continue
            u = urlsplit(link)
            if u.scheme or link.startswith("//"): continue
            target = (p.parent / unquote(u.path)).resolve() if u.path else p
            if target.is_dir(): target = target / "index.html"
            checked += 1
            if not target.exists(): broken.append(f"{p.relative_to(site)}: {link} (no such file)")
            elif u.fragment and target.suffix == ".html" and unquote(u.fragment) not in ids_of(target):
                broken.append(f"{p.relative_to(site)}: {link} (no such anchor)")
    assert checked > 1000, checked
    assert not broken, f"{len(broken)} broken links of {checked}:\n" + "\n".join(broken[:20])

def test_sidebar_follows_the_layers(site):
    dom = (site / "index.html").read_text(encoding="utf-8")
    nav = dom[dom.find('id="quarto-sidebar"'):]
    nav = nav[:nav.find("</nav>")]
    titles = [html.unescape(t).strip() for t in re.findall(r'class="menu-text">([^<]+)</span>', nav)]
    layers = ["core", "ops", "buffers", "envs", "agents", "engine room", "train", "algorithms", "distributed",
              "eval", "workflow", "bandits", "llm", "explanations", "tutorials"]
    pos = [titles.index(t) if t in titles else -1 for t in layers]
    assert -1 not in pos, f"sections missing: {[t for t, i in zip(layers, pos) if i < 0]}"
    assert pos == sorted(pos), "sections out of layer order"
    assert "more" not in titles, "a page fits no layer in scripts/sidebar.py"

def test_screenshot_is_not_blank(site, tmp_path):
    chromium = need_binary("chromium")
    shot = tmp_path / "index.png"
    chromium_run(chromium, f"--screenshot={shot}", (site / "index.html").as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000

def test_tables_of_contents_list_public_names_only(site):
    private = []
    for p in site.rglob("*.html"):
        if "site_libs" in p.parts: continue
        s = p.read_text(encoding="utf-8")
        i = s.find('id="TOC"')
        if i < 0: continue
        names = [html.unescape(t) for t in re.findall(r">([^<>]+)</a>", s[i:s.find("</nav>", i)])]
        private += [f"{p.name}: {n}" for n in names if re.match(r"^(\w+\.)?_\w", n)]
    assert not private, private[:10]
