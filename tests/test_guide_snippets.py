"""The reference guides' mid-level snippets, run as written with tiny budgets.

Covered (rlox user guide, "Mid-Level: Algorithm API"): the PPO and A2C on-policy snippets, the SAC/TD3/DQN off-policy
snippets, "Multi-Environment Collection" (automatic `n_envs` and a hand-built `OffPolicyCollector` with
`GaussianNoise` and an injected buffer), `predict()`; the LoomOS PPO snippets (`PPOTrainer(PPOConfig(...))`,
`await trainer.train(...)`, LoomOS config names); "RolloutBatch and RolloutCollector" with "Minibatch Iteration";
of the low-level primitives, `pack_sequences` (the one loomnb spells as rlox does); and the trainer-name forms
`PPOTrainer(env=..., config={...}, seed=42)` and `callbacks=[...]` of the "High-Level" section. Budgets are cut to a few thousand
steps; where loomnb spells a call differently the test says so next to it.

Not covered: HybridPPO (Candle), offline RL, GRPO/DPO and `SAC(env_id=gym.make(...))` (a gymnasium env object as
`env_id`), which loomnb does not offer at the algorithm level; the other primitives snippets, written with rlox's
names (`rlox.compute_gae(rewards=..., dones=..., last_value=...)`, `rlox.CartPole(seed=42)`, `rlox.VecEnv(n=64)`,
`rlox.RunningStats`, `VarLenStore.push/get`), which loomnb offers under its own names and signatures
(`loomnb.ops.returns.gae` with separate terminated/truncated, `loomnb.envs.registry.make`, `RunningMeanStd`,
`VarLenStore.append`/`[i]`) and does not claim as rlox's; `ReplayBuffer.sample(batch_size, seed=...)` and
`PrioritizedReplayBuffer.push(..., priority=...)`, which the buffers' own tests cover.
"""
import asyncio, math
import numpy as np
import pytest
import torch

torch.set_num_threads(1)


def sane(metrics, steps):
    "The summary of a finished run: its budget reached and finite numbers."
    assert metrics["total_timesteps"] >= steps
    assert metrics["episodes"] >= 1 and math.isfinite(metrics["mean_reward"])
    return metrics


def test_on_policy_snippets():
    from loomnb.algos import PPO, A2C
    # PPO with custom hyperparameters
    ppo = PPO(
        env_id="CartPole-v1",
        n_envs=8,
        seed=42,
        n_steps=128,
        n_epochs=4,
        clip_eps=0.2,
        learning_rate=2.5e-4,
    )
    metrics = ppo.train(total_timesteps=4_096)
    sane(metrics, 4_096)
    assert metrics["n_updates"] > 0 and (ppo.config.n_envs, ppo.config.n_steps) == (8, 128)

    # A2C: single gradient step per rollout, shorter n_steps
    a2c = A2C(
        env_id="CartPole-v1",
        n_envs=8,
        n_steps=5,
        learning_rate=7e-4,
        gae_lambda=1.0,  # full Monte Carlo returns
    )
    metrics = a2c.train(total_timesteps=2_000)
    sane(metrics, 2_000)
    assert metrics["iterations"] == 50

    # Inference with predict(): a batch of observations (the VecEnv's) and a single one
    obs, _ = ppo.env.reset()
    assert ppo.predict(obs, deterministic=True).shape == (8,)
    assert ppo.trainer.predict(obs[0], deterministic=True).shape == ()


def test_off_policy_snippets():
    from loomnb.algos import SAC, TD3, DQN
    # SAC with automatic entropy tuning
    sac = SAC(
        env_id="Pendulum-v1",
        buffer_size=1_000_000,
        learning_rate=3e-4,
        tau=0.005,
        gamma=0.99,
        auto_entropy=True,
    )
    metrics = sac.train(total_timesteps=400)
    sane(metrics, 400)
    assert metrics["n_updates"] == 145  # one gradient step per env step once the buffer holds a minibatch (256)

    # TD3 with delayed policy updates
    td3 = TD3(
        env_id="Pendulum-v1",
        policy_delay=2,
        target_noise=0.2,
        noise_clip=0.5,
        exploration_noise=0.1,
    )
    sane(td3.train(total_timesteps=400), 400)

    # DQN with Rainbow extensions
    dqn = DQN(
        env_id="CartPole-v1",
        double_dqn=True,
        dueling=True,
        n_step=3,
        prioritized=True,
        alpha=0.6,
        beta_start=0.4,
    )
    sane(dqn.train(total_timesteps=1_000), 1_000)

    # predict(): SAC/TD3 return env-range actions, DQN an int action
    a = sac.predict(np.zeros(3, np.float32), deterministic=True)
    assert a.shape == (1,) and -2.0 <= a[0] <= 2.0
    assert td3.predict(np.zeros(3, np.float32), deterministic=True).shape == (1,)
    assert int(dqn.predict(np.zeros(4, np.float32))) in (0, 1)


def test_multi_env_collection_snippets():
    from loomnb.algos import SAC, TD3, DQN
    from loomnb.train.offpolicy import OffPolicyCollector, GaussianNoise
    from loomnb.buffers.replay import ReplayBuffer
    # Automatic: pass n_envs to any off-policy algorithm (learning_starts cut with the budget)
    sac = SAC(env_id="Pendulum-v1", n_envs=4, learning_starts=200)
    m = sac.train(total_timesteps=400)
    assert sac.env.num_envs == 4 and m["n_updates"] == 37  # vector steps from 256 to 400 env steps, one gradient step each
    td3 = TD3(env_id="Pendulum-v1", n_envs=4, learning_starts=5000)
    dqn = DQN(env_id="CartPole-v1", n_envs=8, learning_starts=1000)
    assert (td3.env.num_envs, dqn.env.num_envs) == (4, 8)

    # Manual: create and inject your own collector.
    # rlox writes ReplayBuffer(1_000_000, obs_dim=3, act_dim=1); loomnb's takes shapes: (capacity, obs_shape, action_shape)
    buf = ReplayBuffer(1_000_000, (3,), (1,))
    collector = OffPolicyCollector(
        env_id="Pendulum-v1",
        n_envs=4,
        buffer=buf,
        exploration=GaussianNoise(sigma=0.1),
    )
    sac = SAC(env_id="Pendulum-v1", buffer=buf, collector=collector)
    m = sac.train(total_timesteps=400)
    assert sac.buffer is buf and len(buf) == 400 and sac.env is collector.env and m["n_updates"] == 37


def test_loomos_ppo_snippets():
    from loomnb.algos import PPOTrainer, PPOConfig
    from loomnb.core import ConfigError

    async def main():
        config = PPOConfig(
            learning_rate=3e-4,
            batch_size=1024,  # LoomOS writes 4096: more than the rollout (n_envs * n_steps = 1024), refused below
            n_epochs=20,
            distributed=True,
            sync_frequency=100,
            log_interval=10
        )
        trainer = PPOTrainer(config)
        return trainer, await trainer.train(total_timesteps=2_048)

    trainer, metrics = asyncio.run(main())
    sane(metrics, 2_048)
    assert trainer.config.run_options == {"distributed": True, "sync_frequency": 100, "log_interval": 10}
    assert trainer.trainer.log_interval == 10

    # Example configuration (LoomOS names); n_steps added so that the rollout holds batch_size=2048
    config = PPOConfig(learning_rate=3e-4, batch_size=2048, n_epochs=10, clip_epsilon=0.2, n_steps=256)
    trainer = PPOTrainer(config)
    assert (trainer.config.clip_eps, trainer.config.to_dict()["clip_eps"]) == (0.2, 0.2)
    assert "clip_epsilon" not in trainer.config.to_dict()
    # as written (batch_size larger than the default rollout of 8 x 128), the config is refused with the reason
    with pytest.raises(ConfigError, match="batch_size=4096 is invalid: expected at most n_envs \\* n_steps = 1024"):
        PPOConfig(learning_rate=3e-4, batch_size=4096, n_epochs=20, distributed=True, sync_frequency=100, log_interval=10)


def test_rollout_collector_snippets():
    from loomnb.train.collect import RolloutCollector
    from loomnb.agents.nets import DiscretePolicy  # rlox: from rlox.policies import DiscretePolicy
    collector = RolloutCollector(
        env_id="CartPole-v1",
        n_envs=8,
        seed=0,
        gamma=0.99,
        gae_lambda=0.95,
        normalize_rewards=False,
        normalize_obs=False,
    )

    policy = DiscretePolicy(obs_dim=4, n_actions=2)
    batch = collector.collect(policy, n_steps=128)

    # batch is a RolloutBatch with shape (n_envs * n_steps, ...)
    assert batch.obs.shape == (1024, 4)
    assert batch.actions.shape == (1024,)
    assert batch.advantages.shape == (1024,)
    assert batch.returns.shape == (1024,)
    torch.testing.assert_close(batch.returns, batch.advantages + batch.values)

    # Minibatch iteration, with a loss whose gradient flows into the policy
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    seen = 0
    for epoch in range(4):
        for mb in batch.sample_minibatches(batch_size=256, shuffle=True):
            assert len(mb.obs) == 256
            logp, _ = policy.get_logprob_and_entropy(mb.obs, mb.actions)
            loss = -(logp * mb.advantages).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            seen += len(mb.obs)
    assert seen == 4 * 1024


def test_primitive_pack_sequences_snippet():
    from loomnb.ops.llm import pack_sequences
    packed = pack_sequences(
        sequences=[np.array([1,2,3], dtype=np.uint32),
                   np.array([4,5], dtype=np.uint32)],
        max_length=8,
    )
    assert packed.input_ids.tolist() == [[1, 2, 3, 4, 5, 0, 0, 0]]
    assert packed.segment_ids.tolist() == [[0, 0, 0, 1, 1, -1, -1, -1]]


def test_trainer_names_with_env_config_and_callbacks():
    "The guide's `PPOTrainer(env=..., config={...}, seed=42)` and `callbacks=[...]` forms (High-Level section)."
    from loomnb.algos import PPOTrainer
    from loomnb.train.learner import Callback

    class Count(Callback):
        def __init__(self): self.iterations = 0
        def after_iteration(self, state): self.iterations += 1

    trainer = PPOTrainer(
        env="CartPole-v1",
        config={"n_envs": 16, "n_steps": 256, "learning_rate": 3e-4},
        seed=42,
    )
    assert (trainer.config.n_envs, trainer.config.n_steps, trainer.env.num_envs) == (16, 256, 16)
    count = Count()
    trainer = PPOTrainer(env="CartPole-v1", config={"n_envs": 4, "n_steps": 64}, callbacks=[count], seed=42)
    metrics = trainer.train(total_timesteps=1_024)
    print(f"Mean reward: {metrics['mean_reward']:.1f}")
    assert count.iterations == 4 and metrics["iterations"] == 4
