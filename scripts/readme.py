"""Write README.md from nbs/index.ipynb without Quarto: markdown cells verbatim, code cells fenced, `#| hide` cells
and directive lines dropped, plain-text outputs kept. `nbdev-readme` does the same where Quarto is installed."""
import sys, nbformat
from pathlib import Path

def render(nb_path: Path) -> str:
    nb, out = nbformat.read(nb_path, as_version=4), []
    for c in nb.cells:
        lines = c.source.splitlines()
        if c.cell_type == "markdown":
            out.append(c.source.strip()); continue
        directives = [l for l in lines if l.startswith("#|")]
        if any(d.replace(" ", "") in ("#|hide", "#|exporti", "#|export") for d in directives): continue
        code = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if not code: continue
        out.append(f"```python\n{code}\n```")
        for o in c.get("outputs", []):
            txt = o.get("text") or o.get("data", {}).get("text/plain")
            if txt: out.append("    " + "".join(txt).strip().replace("\n", "\n    "))
    return "\n\n".join(out) + "\n"

if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    (root/"README.md").write_text("<!-- generated from nbs/index.ipynb by scripts/readme.py: edit the notebook -->\n\n" + render(root/"nbs"/"index.ipynb"))
