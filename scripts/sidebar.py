"""Write the site's sidebar.yml, grouped by the library's layers (LAYOUT.md), into a docs source folder.

Pages are placed by their module name first (`40_algos.ppo` -> algorithms, `36b_fast.core` -> engine room), then by
their number block (0x core, 1x ops, 2x buffers, 30-35 envs, 36 agents, 37-39 train, 4x algorithms, 5x distributed,
6x eval, 7x-8x workflow, 9x bandits/llm), so a new notebook lands in its layer's section without editing this file.
A page that fits no rule goes in a last "more" section, which tests/test_docs.py reports.
Usage: python scripts/sidebar.py [SRC=_exec]   (SRC holds the notebooks as the site lays them out)
"""
import re, sys
from pathlib import Path
import yaml

# (section title, regex on the notebook's stem without its number prefix), in the order of the layers
SECTIONS = [
    ("core", r"^(core|compat)$"),
    ("ops", r"^ops\b"),
    ("buffers", r"^buffers\b"),
    ("envs", r"^envs\b"),
    ("agents", r"^agents\b"),
    ("engine room", r"^fast\b"),
    ("train", r"^train\b"),
    ("algorithms", r"^algos\b"),
    ("distributed", r"^distributed\b"),
    ("eval", r"^eval\b"),
    ("workflow", r"^(workflow\b|main$)"),
    ("bandits", r"^bandits\b"),
    ("llm", r"^llm\b"),
]
# the number blocks of LAYOUT.md, for stems that name no layer
BLOCKS = [(r"^0", "core"), (r"^1", "ops"), (r"^2", "buffers"), (r"^3[0-5]", "envs"), (r"^36[a]?_", "agents"),
          (r"^36[b-z]", "engine room"), (r"^3[7-9]", "train"), (r"^4", "algorithms"), (r"^5", "distributed"),
          (r"^6", "eval"), (r"^[78]", "workflow"), (r"^9", "bandits")]
FOLDERS = [("explanations", "explanations"), ("tutorials", "tutorials"), ("compat", "deprecated import paths")]
MORE = "more"

def section_of(name: str) -> str:
    "The sidebar section of a top-level notebook file name such as `40_algos.ppo.ipynb`"
    stem = re.sub(r"^\d+[a-z]*_", "", Path(name).stem)
    for title, rx in SECTIONS:
        if re.search(rx, stem): return title
    for rx, title in BLOCKS:
        if re.match(rx, name): return title
    return MORE

def sidebar(src: Path) -> dict:
    "The sidebar of the site whose notebooks are in `src`: index first, then one section per layer, then folders"
    groups = {t: [] for t, _ in SECTIONS}
    groups[MORE] = []
    for f in sorted(src.glob("*.ipynb")):
        if f.name == "index.ipynb" or f.name.startswith(("_", ".")): continue
        groups[section_of(f.name)].append(f.name)
    contents = ["index.ipynb"] if (src / "index.ipynb").exists() else []
    for title, files in groups.items():
        if files: contents.append({"section": title, "contents": files})
    for folder, title in FOLDERS:
        files = sorted(str(p.relative_to(src)) for p in (src / folder).glob("*.ipynb")) if (src / folder).exists() else []
        if files: contents.append({"section": title, "contents": files})
    return {"website": {"sidebar": {"contents": contents}}}

def main(src="_exec"):
    src = Path(src)
    (src / "sidebar.yml").write_text(yaml.safe_dump(sidebar(src), sort_keys=False))
    print(f"sidebar: {src}/sidebar.yml")

if __name__ == "__main__": main(*sys.argv[1:])
