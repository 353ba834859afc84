"""Cost of loomnb's input and NaN checks on the hot paths, min-of-N on the CPU clock (robust on a shared machine).

    python bench/bench_input_checks.py              # env step (valid actions), the Trainer's step check, the update check
    python bench/bench_input_checks.py --only env   # just `env.step`: run it with PYTHONPATH at two checkouts to compare

Rows: `env.step` of native envs with valid actions (their kernels scan the batch for out-of-range / NaN / inf actions
before moving any copy); the same step through the Trainer's `FiniteEnv` (observation/reward check); and
`first_nonfinite` after an update (one fused parameter norm) for PPO and SAC.
"""
import argparse, time
import numpy as np

def per_call(f, n):
    t0 = time.process_time()
    for _ in range(n): f()
    return (time.process_time() - t0) / n

def best(f, n=2000, rounds=25): return min(per_call(f, n) for _ in range(rounds))

def env_rows(guard):
    from loomnb.envs.registry import make
    if guard: from loomnb.train.nonfinite import FiniteEnv
    for id, n in (("CartPole-v1", 8), ("CartPole-v1", 64), ("Pendulum-v1", 8), ("Pendulum-v1", 64)):
        env = make(id, num_envs=n, seed=0); env.reset(seed=0)
        a = np.zeros(n, np.int64) if id.startswith("Cart") else np.zeros((n, 1), np.float32)
        for _ in range(2000): env.step(a)
        row = f"{id:<12} N={n:<3} env.step {best(lambda: env.step(a)) * 1e9:7.0f} ns"
        if guard:
            g = FiniteEnv(env); raw, chk = [], []
            for _ in range(25):   # interleaved
                raw.append(per_call(lambda: env.step(a), 2000)); chk.append(per_call(lambda: g.step(a), 2000))
            row += f" | checked {min(chk) * 1e9:7.0f} ns (+{(min(chk) - min(raw)) * 1e9:.0f} ns)"
        print(row, flush=True)

def update_rows():
    import torch
    from loomnb.train.learner import Trainer
    from loomnb.train.nonfinite import first_nonfinite
    torch.set_num_threads(1)
    for algo, env, cfg in (("ppo", "CartPole-v1", dict(n_envs=8, n_steps=64, batch_size=128)), ("sac", "Pendulum-v1", dict(learning_starts=10))):
        tr = Trainer(algo, env=env, config=cfg); tr.train(600)
        n = sum(p.numel() for m in vars(tr.algo).values() if isinstance(m, torch.nn.Module) for p in m.parameters())
        print(f"{algo}: update check {best(lambda: first_nonfinite(tr.algo, {}), 200, 9) * 1e6:6.1f} us ({n} parameters)", flush=True)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["env", "all"], default="all")
    a = ap.parse_args()
    env_rows(guard=a.only == "all")
    if a.only == "all": update_rows()
