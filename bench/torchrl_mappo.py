"""TorchRL's MAPPO recipe on mpe2's simple_spread_v3 (run by bench_marl.py --torchrl inside its own venv).

Follows TorchRL's multi-agent PPO tutorial (tutorials/sphinx-tutorials/multiagent_ppo.py): `PettingZooWrapper` copies
in a `SerialEnv`, a shared-parameter `MultiAgentMLP` actor (decentralised) and a centralised `MultiAgentMLP` critic
(on all agents' observations), `ClipPPOLoss` with GAE. Prints one JSON line per iteration: frames, wall seconds,
mean per-agent return of the episodes that ended.
"""
import argparse, json, time
import torch
from torch import nn
from tensordict.nn import TensorDictModule
from tensordict.nn.distributions import NormalParamExtractor
from torchrl.collectors import Collector as SyncDataCollector
from torchrl.data.replay_buffers import ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.data.replay_buffers.storages import LazyTensorStorage
from torchrl.envs import RewardSum, TransformedEnv, SerialEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MultiAgentMLP, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators
from mpe2 import simple_spread_v3

p = argparse.ArgumentParser()
p.add_argument("--frames", type=int, default=100_000); p.add_argument("--n-envs", type=int, default=32)
p.add_argument("--n-steps", type=int, default=25); p.add_argument("--epochs", type=int, default=10)
p.add_argument("--minibatch", type=int, default=400); p.add_argument("--lr", type=float, default=7e-4)
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
torch.manual_seed(a.seed); torch.set_num_threads(1)

def make():
    return PettingZooWrapper(env=simple_spread_v3.parallel_env(N=3, max_cycles=25, local_ratio=0.5, continuous_actions=False),
                             return_state=True, categorical_actions=True, seed=a.seed)
env = TransformedEnv(SerialEnv(a.n_envs, make), RewardSum(in_keys=[("agent", "reward")], out_keys=[("agent", "episode_reward")]))
n_agents, n_obs, n_act = 3, 18, 5
actor_net = MultiAgentMLP(n_agent_inputs=n_obs, n_agent_outputs=n_act, n_agents=n_agents, centralised=False, share_params=True,
                          depth=2, num_cells=64, activation_class=nn.ReLU)
policy_module = TensorDictModule(actor_net, in_keys=[("agent", "observation")], out_keys=[("agent", "logits")])
policy = ProbabilisticActor(module=policy_module, spec=env.full_action_spec_unbatched if hasattr(env, "full_action_spec_unbatched") else env.action_spec,
                            in_keys=[("agent", "logits")], out_keys=[("agent", "action")],
                            distribution_class=torch.distributions.Categorical, return_log_prob=True,
                            log_prob_key=("agent", "sample_log_prob"))
critic_net = MultiAgentMLP(n_agent_inputs=n_obs, n_agent_outputs=1, n_agents=n_agents, centralised=True, share_params=True,
                           depth=2, num_cells=64, activation_class=nn.ReLU)
critic = TensorDictModule(critic_net, in_keys=[("agent", "observation")], out_keys=[("agent", "state_value")])
frames_per_batch = a.n_envs * a.n_steps
collector = SyncDataCollector(env, policy, frames_per_batch=frames_per_batch, total_frames=a.frames, device="cpu")
rb = ReplayBuffer(storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(), batch_size=a.minibatch)
loss_module = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01, normalize_advantage=True)
loss_module.set_keys(reward=("agent", "reward"), action=("agent", "action"), sample_log_prob=("agent", "sample_log_prob"),
                     value=("agent", "state_value"), done=("agent", "done"), terminated=("agent", "terminated"))
loss_module.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
opt = torch.optim.Adam(loss_module.parameters(), a.lr, eps=1e-5)
t0, frames = time.perf_counter(), 0
for td in collector:
    with torch.no_grad():
        loss_module.value_estimator(td, params=loss_module.critic_network_params, target_params=loss_module.target_critic_network_params)
    data = td.reshape(-1); rb.extend(data)
    for _ in range(a.epochs):
        for _ in range(frames_per_batch // a.minibatch):
            s = rb.sample()
            l = loss_module(s)
            loss = l["loss_objective"] + l["loss_critic"] + l["loss_entropy"]
            loss.backward(); torch.nn.utils.clip_grad_norm_(loss_module.parameters(), 10.0); opt.step(); opt.zero_grad()
    collector.update_policy_weights_()
    frames += td.numel()
    done = td.get(("next", "agent", "done"))
    ep = td.get(("next", "agent", "episode_reward"))[done]
    print(json.dumps({"frames": frames, "wall": time.perf_counter() - t0, "ret": float(ep.mean()) if ep.numel() else None}), flush=True)
