"""Milliseconds per dreamer update, the update of an older revision against today's, interleaved on one trainer.

One `Trainer("dreamer")` (Pendulum-v1, seed 100, defaults) collects its 1 000 random steps; then each variant makes
``--reps`` updates on freshly sampled batches, the variants taking turns, and the medians are printed: the whole
update, its world-model step, and imagination with the actor and critic steps. The variant "before" is
`dreamer_update` of ``--before`` (read with `git show`), run on the same networks and optimizers.

Usage:
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 10 python bench/profile_dreamer_update.py --before 6e01644 --reps 12
"""
from __future__ import annotations
import argparse, dataclasses, json, os, subprocess, sys, time, types
import numpy as np
import torch


def old_update(rev: str):
    "`dreamer_update` of the dreamer module at git revision `rev`."
    src = subprocess.run(["git", "show", f"{rev}:loomnb/algos/dreamer.py"], capture_output=True, text=True, check=True).stdout
    src = src.replace("from ..", "from loomnb.").replace("from .sac", "from loomnb.algos.sac")
    src = "\n".join(l for l in src.splitlines() if not l.startswith("register_algorithm"))
    mod = types.ModuleType("dreamer_before"); sys.modules[mod.__name__] = mod; exec(compile(src, f"{rev}:dreamer.py", "exec"), mod.__dict__)
    return mod.dreamer_update


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default="6e01644"); p.add_argument("--reps", type=int, default=12); p.add_argument("--json", default=None)
    a = p.parse_args()
    torch.set_num_threads(1)
    from loomnb.train.learner import Trainer
    from loomnb.algos.dreamer import dreamer_update, sample_sequences
    t = Trainer("dreamer", env="Pendulum-v1", seed=100, config=dict(learning_starts=1000), device="cpu", torch_threads=1)
    t.train(1000, progress=False)
    al, c, before = t.algo, t.algo.config, old_update(a.before)
    args = (al.wm, al.actor, al.critic, al.slow_critic, al.opts, al.scale)
    V = {f"before ({a.before}: 528 starts, 2 critic passes)": lambda b: before(*args, b, c),
         "one critic pass, 528 starts": lambda b: dreamer_update(*args, b, dataclasses.replace(c, imag_starts=0)),
         "after (one critic pass, 128 starts)": lambda b: dreamer_update(*args, b, c),
         "one critic pass, 256 starts": lambda b: dreamer_update(*args, b, dataclasses.replace(c, imag_starts=256))}
    for f in V.values(): f(sample_sequences(al.buffer, c.batch_size, c.seq_len, al.rng, c.n_envs))   # warm-up
    res, l0 = {k: [] for k in V}, os.getloadavg()[0]
    for _ in range(a.reps):
        for k, f in V.items():
            b = sample_sequences(al.buffer, c.batch_size, c.seq_len, al.rng, c.n_envs)
            t0 = time.perf_counter(); _, (fit, imag) = f(b); res[k].append((time.perf_counter() - t0, fit, imag))
    keys = ("update_ms", "world_model_ms", "imagination_actor_critic_ms")
    out = {k: dict(zip(keys, np.round(np.median(np.array(v) * 1000, 0), 1).tolist())) for k, v in res.items()}
    out["reps"], out["load_start_end"] = a.reps, [l0, os.getloadavg()[0]]
    print(json.dumps(out, indent=1))
    if a.json: json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
