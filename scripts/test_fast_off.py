"""Run the algorithm notebooks with the engine room switched off (`LOOMNB_FAST=0`): every cell runs as under
`nbdev-test` except those flagged `#| fastpath` (tests of the engine room's own steps, meaningless without it), so
every learns-quickly check must pass on the plain torch code. Usage: `python scripts/test_fast_off.py [REGEX]`."""
import os, re, sys, time
os.environ["LOOMNB_FAST"] = "0"
from pathlib import Path
from fastcore.parallel import parallel
from nbdev.config import get_config
from nbdev.test import test_nb
from nbdev.test import read_nb
sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_nbs import test_nb_fresh_registry   # importable by the workers (a function of __main__ is not)

def main(pattern=r"^((4\d[a-z]?|51)_algos|9[6-8][ab]?_llm)\..*\.ipynb$"):   # the LLM notebooks too (their SFT and updates use the engine room's Adam)
    cfg = get_config()
    skip = cfg.tst_flags.split() + ["fastpath"]
    files = sorted(f for f in Path(cfg.nbs_path).glob("*.ipynb") if re.match(pattern, f.name))
    if not files: sys.exit(f"test_fast_off: no notebook matches {pattern!r}")
    n_flagged = sum(any(c.source.startswith("#| fastpath") for c in read_nb(f).cells) for f in files)
    os.chdir(cfg.nbs_path)
    t0 = time.time()
    res = parallel(test_nb_fresh_registry, files, skip_flags=skip, force_flags=[], n_workers=min(2, len(files)), basepath=cfg.config_path, pause=0.01)
    for f, (ok, dt) in zip(files, res): print(f"{f.name}: {'ok' if ok else 'FAILED'} ({dt:.0f} s)")
    if not all(ok for ok, _ in res): sys.exit(1)
    print(f"fast paths off: {len(files)} notebooks passed in {time.time() - t0:.0f} s ({n_flagged} with `#| fastpath` cells skipped)")

if __name__ == "__main__": main(*sys.argv[1:])
