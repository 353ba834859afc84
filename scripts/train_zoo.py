"""Train the pretrained policies shipped in loomnb/workflow/pretrained/ (PPO and DQN on CartPole-v1, SAC on Pendulum-v1,
and an early DQN CartPole checkpoint that the online-learning notebook starts from).

Each is trained with loomnb at a fixed seed, evaluated deterministically over 20 episodes (reset seed 123) through the
exported acting module, and written as `card.json` + `weights.safetensors`. About a minute in all on one CPU core.

    python scripts/train_zoo.py            # all
    python scripts/train_zoo.py ppo-cartpole
"""
import dataclasses, sys, tempfile, time, warnings
from pathlib import Path
import torch
from loomnb.train.learner import Trainer
from loomnb.eval import evaluate
from loomnb.algos.ppo import ZOO_CARTPOLE
from loomnb.workflow.zoo import (ModelCard, card_from_checkpoint, write_model, read_card, read_weights, build_policy,
                                 pretrained_dir, CARD)

DQN_CARTPOLE = dict(learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=500, gamma=0.99,
                    target_update_interval=10, train_freq=64, gradient_steps=32, exploration_fraction=0.25,
                    exploration_final_eps=0.04, hidden=[64, 64])
MODELS = {  # name: (algorithm, env id, seed, config, env steps, description)
    "ppo-cartpole": ("ppo", "CartPole-v1", 2, ZOO_CARTPOLE, 50_000, "PPO on CartPole-v1 (rl-zoo hyperparameters), 50k steps"),
    "dqn-cartpole": ("dqn", "CartPole-v1", 0, DQN_CARTPOLE, 20_000, "DQN on CartPole-v1, 20k steps"),
    "dqn-cartpole-early": ("dqn", "CartPole-v1", 1, DQN_CARTPOLE, 6_000,
                           "DQN on CartPole-v1 after 6k steps: an early checkpoint, the starting point of nbs/87a_workflow.online"),
    "sac-pendulum": ("sac", "Pendulum-v1", 0, dict(hidden=[64, 64], learning_starts=500, batch_size=128), 8_000,
                     "SAC on Pendulum-v1, 8k steps"),
}
EVAL_EPISODES, EVAL_SEED = 20, 123

def train_one(name: str):
    algo, env_id, seed, cfg, steps, desc = MODELS[name]
    t0 = time.perf_counter()
    tr = Trainer(algo, env_id, seed=seed, config=cfg); tr.train(steps)
    ck = Path(tempfile.mkdtemp())/"ck.pt"; tr.save(ck)
    card, module = card_from_checkpoint(ck, name, version=1, description=desc)
    out = pretrained_dir()/name
    card = write_model(out, card, module)
    pol = build_policy(card, read_weights(out, card))
    s = evaluate(pol, env_id, n_episodes=EVAL_EPISODES, seed=EVAL_SEED).summary()
    card = dataclasses.replace(card, eval_return=s["mean_return"], eval_ci=(s["ci_low"], s["ci_high"]),
                               eval_episodes=EVAL_EPISODES, eval_seed=EVAL_SEED)
    (out/CARD).write_text(card.to_json())
    print(f"{name}: {time.perf_counter() - t0:.1f} s, eval return {s['mean_return']:.1f} "
          f"(95% CI [{s['ci_low']:.1f}, {s['ci_high']:.1f}]), {(out/'weights.safetensors').stat().st_size} bytes")

if __name__ == "__main__":
    torch.set_num_threads(1); warnings.simplefilter("ignore")
    for n in sys.argv[1:] or list(MODELS): train_one(n)
