"""Run one morl-baselines method on MO-Gymnasium's Deep Sea Treasure; print the points it reaches as one JSON line.

Runs in its own virtualenv (made by bench/bench_weave.py --peer): it imports morl-baselines and mo-gymnasium, not loomnb.
Usage: python bench/morl_worker.py JOB.json, where JOB has method ("envelope" or "pql"), map ("convex" or "concave"),
seed, steps, gamma and weights (the preference vectors of loomnb's runs, used to read Envelope's greedy policies).
A point is the discounted vector return (gamma as given) of one greedy episode, 100-step limit, as in bench_weave.py.
"""
import json, sys, time
import numpy as np


def make_env(map_name: str):
    import gymnasium as gym
    import mo_gymnasium as mo_gym
    env_id = {"convex": "deep-sea-treasure-v0", "concave": "deep-sea-treasure-concave-v0"}[map_name]
    return gym.wrappers.TimeLimit(mo_gym.make(env_id), max_episode_steps=100)


def greedy_point(act, env, gamma: float, seed: int) -> list:
    "Discounted vector return of one episode of `act(obs)`."
    obs, _ = env.reset(seed=seed)
    g, disc, done = np.zeros(2), 1.0, False
    while not done:
        obs, r, term, trunc, _ = env.step(act(obs))
        g += disc * np.asarray(r, dtype=float); disc *= gamma; done = term or trunc
    return g.tolist()


def run_envelope(job):
    "Envelope Q-learning with morl-baselines' Minecart example recipe (its only published Envelope settings), gamma of the job."
    import torch
    from morl_baselines.multi_policy.envelope.envelope import Envelope
    env = make_env(job["map"])
    agent = Envelope(env, learning_rate=3e-4, gamma=job["gamma"], batch_size=64, net_arch=[256, 256, 256, 256],
                     buffer_size=int(2e6), initial_epsilon=1.0, final_epsilon=0.05, epsilon_decay_steps=min(50_000, job["steps"] // 2),
                     initial_homotopy_lambda=0.0, final_homotopy_lambda=1.0, homotopy_decay_steps=10_000,
                     learning_starts=100, envelope=True, gradient_updates=1, target_net_update_freq=1000, tau=1,
                     max_grad_norm=0.1, log=False, seed=job["seed"], device="cpu")
    agent.train(total_timesteps=job["steps"], eval_env=None, weight=None, eval_freq=10 ** 12)
    ev = make_env(job["map"])
    pts = []
    for w in job["weights"]:
        wt = torch.tensor(w, dtype=torch.float32)
        pts.append(greedy_point(lambda o: int(agent.eval(np.asarray(o, dtype=np.float32), wt)), ev, job["gamma"], job["seed"]))
    return pts


def run_pql(job):
    "Pareto Q-learning (tabular, learns the set of non-dominated returns); each vector of its front is tracked in the env."
    from morl_baselines.multi_policy.pareto_q_learning.pql import PQL
    env = make_env(job["map"])
    agent = PQL(env, ref_point=np.array([0.0, -50.0]), gamma=job["gamma"], initial_epsilon=1.0,
                epsilon_decay_steps=job["steps"] // 2, final_epsilon=0.1, seed=job["seed"], log=False)
    front = agent.train(total_timesteps=job["steps"], eval_env=make_env(job["map"]), ref_point=np.array([0.0, -50.0]))
    ev = make_env(job["map"])
    return [agent.track_policy(v, ev).tolist() for v in front]


def main():
    with open(sys.argv[1]) as f: job = json.load(f)
    import torch
    torch.set_num_threads(1); torch.manual_seed(job["seed"]); np.random.seed(job["seed"])
    import morl_baselines, mo_gymnasium, gymnasium
    t0 = time.perf_counter()
    pts = {"envelope": run_envelope, "pql": run_pql}[job["method"]](job)
    print(json.dumps({**job, "points": pts, "seconds": time.perf_counter() - t0,
                      "versions": {"morl_baselines": getattr(morl_baselines, "__version__", "?"),
                                   "mo_gymnasium": mo_gymnasium.__version__, "gymnasium": gymnasium.__version__,
                                   "torch": torch.__version__}}))


if __name__ == "__main__":
    main()
