"""Same-batch check of loomnb's continuous CQL step against d3rlpy 2.8.1's: d3rlpy's initial weights copied into loomnb's
networks, one minibatch, the same noise (the Gaussian draws of the actor and the uniform proposals fed to both), one step
of each; every loss term, the gradients and the updated weights compared.

Usage:  python bench/probe_cql_d3rlpy.py [--data DIR] [--dataset medium-replay] [--hidden 64] [--override cql.FIELD=JSON ...]
(re-runs itself in the d3rlpy venv of bench_offline.py, with this worktree's loomnb on the path; both libraries in one process).
With loomnb's default backup (a' ~ pi(s')) it runs loomnb twice: with its own target and with the target's noise set to
zero (a' = tanh(mean), d3rlpy's default `soft_q_backup=False` target), so the rest of the step can be compared term by
term; with `--override 'cql.cql_target_action="mean"'` once.
"""
import argparse, copy, json, os, sys
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def _reexec(args):
    from bench_offline import make_d3rlpy_venv
    py = make_d3rlpy_venv(Path(args.d3rlpy_venv))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{HERE}", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LOOMNB_PROBE_CHILD": "1"}
    os.execve(str(py), [str(py), __file__, *sys.argv[1:]], env)


@contextmanager
def fed_noise(gauss: list, unif: list):
    "torch's Gaussian and uniform draws (loomnb: randn_like / rand; d3rlpy: Normal.rsample / Tensor.uniform_) served from the lists in order."
    import torch, torch.distributions.normal as tdn
    g, u = list(gauss), list(unif)
    saved = (torch.randn_like, torch.rand, tdn._standard_normal, torch.Tensor.uniform_)
    def take_g(shape):
        e = g.pop(0)
        if tuple(e.shape) != tuple(shape):   # d3rlpy's sample_n draws [n, B, d]; the lists hold [B * n, d] (row b*n + j)
            n, B, d = shape; e = e.view(B, n, d).transpose(0, 1)
        return e.clone()
    torch.randn_like = lambda x, **k: take_g(x.shape)
    tdn._standard_normal = lambda shape, dtype=None, device=None: take_g(tuple(shape))
    torch.rand = lambda *s, **k: u.pop(0).clone()
    torch.Tensor.uniform_ = lambda self, a=0.0, b=1.0: self.copy_(u.pop(0).view_as(self) * (b - a) + a)
    try: yield g, u
    finally: torch.randn_like, torch.rand, tdn._standard_normal, torch.Tensor.uniform_ = saved


def copy_d3rlpy_into_loomnb(m, lm):
    "d3rlpy's policy, critics and target critics -> loomnb's SquashedGaussianPolicy and EnsembleQNetworks."
    import torch
    with torch.no_grad():
        enc = m.policy._encoder._layers
        lins = [l for l in lm.actor.net if isinstance(l, torch.nn.Linear)]
        for l, src in zip(lins[:2], (enc[0], enc[2])): l.weight.copy_(src.weight); l.bias.copy_(src.bias)
        lins[2].weight.copy_(torch.cat([m.policy._mu.weight, m.policy._logstd.weight])); lins[2].bias.copy_(torch.cat([m.policy._mu.bias, m.policy._logstd.bias]))
        for ens, qs in ((lm.critic, m.q_funcs), (lm.critic_target, m.targ_q_funcs)):
            for k, q in enumerate(qs):
                src = [q._encoder._layers[0], q._encoder._layers[2], q._fc]
                for i, l in enumerate(src): ens.weights[i][k].copy_(l.weight.T); ens.biases[i][k, 0].copy_(l.bias)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/offline_bench/data")
    ap.add_argument("--dataset", default="medium-replay")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--override", action="append", default=[], help="loomnb config field, cql.FIELD=JSON (d3rlpy follows, as in bench_offline)")
    ap.add_argument("--d3rlpy-venv", default="/tmp/loomnb_d3rlpy_venv")
    ap.add_argument("--out", default=None, help="JSON of the compared terms")
    args = ap.parse_args()
    if not os.environ.get("LOOMNB_PROBE_CHILD"): return _reexec(args)
    import numpy as np, torch
    torch.set_num_threads(1)
    import bench_offline as bo
    from d3rlpy.torch_utility import TorchMiniBatch
    from loomnb.buffers.datasets import load_dataset
    from loomnb.fast import fast_paths
    from loomnb.algos.cql import CQL, cql_step, cql_proposals, corrected_q, cql_gap
    path = Path(args.data) / "pendulum" / f"{args.dataset}-v0"
    bo.OVERRIDES[:] = args.override
    lc = bo.loomnb_config("cql"); os.environ["LOOMNB_BENCH_CONFIG"] = json.dumps(lc)
    d3, _, _ = bo.d3rlpy_algo("cql", path, args.seed, args.hidden)
    m = d3.impl._modules
    ds = load_dataset(path)
    over = {k.split(".", 1)[1]: json.loads(v) for k, v in (o.split("=", 1) for o in args.override)}
    with fast_paths(False): lm0 = CQL(dataset=ds, seed=args.seed, hidden=args.hidden, **over)
    copy_d3rlpy_into_loomnb(m, lm0)
    b = lm0._sample(256)
    B, n, d = b.obs.shape[0], lm0.config.cql_n_actions, lm0.act_dim
    gen = torch.Generator().manual_seed(123)
    e_tgt, e_s, e_sn, e_a = (torch.randn(r, d, generator=gen) for r in (B, B * n, B * n, B))
    u01 = torch.rand(B * n, d, generator=gen)

    # d3rlpy's step, its critic and actor gradients captured at their optimizers' steps
    tb = TorchMiniBatch(observations=b.obs, actions=b.actions, rewards=b.rewards[:, None], next_observations=b.next_obs,
                        next_actions=torch.zeros_like(b.actions), returns_to_go=torch.zeros(B, 1), terminals=b.terminated[:, None],
                        intervals=torch.ones(B, 1), device="cpu:0")
    grads = {}
    for name, opt, mod in (("critic", m.critic_optim, m.q_funcs), ("actor", m.actor_optim, m.policy), ("temp", m.temp_optim, m.log_temp)):
        def hook(orig=opt.step, name=name, mod=mod):
            grads[name] = [p.grad.detach().clone() for p in mod.parameters()]; return orig()
        opt.step = hook
    with torch.no_grad():
        y_d3 = b.rewards + b.discounts * (1 - b.terminated) * d3.impl.compute_target(tb).view(-1)
    # d3rlpy draws: conservative term pi(s) [n, B, d], pi(s') [n, B, d], uniform [B n, d], then the actor's [B, d]
    with fed_noise([e_s, e_sn, e_a], [u01]) as (g, u):   # (uniform_(-1, 1) of the U[0, 1) draw: 2 u - 1, as loomnb's rand * 2 - 1)
        met = d3.impl.update(tb, 0)
        assert not g and not u, "d3rlpy used fewer draws than fed"
    d3_after = {"critic": [p.detach().clone() for p in m.q_funcs.parameters()], "actor": [p.detach().clone() for p in m.policy.parameters()]}

    def to_d3_order(lm):
        "loomnb's critic/actor parameters (and their grads) in d3rlpy's parameter order."
        ws = []
        for k in range(lm.critic.n_critics):
            for i in range(len(lm.critic.weights)): ws += [(lm.critic.weights[i], k, "w"), (lm.critic.biases[i], k, "b")]
        lins = [l for l in lm.actor.net if isinstance(l, torch.nn.Linear)]
        return ws, lins

    rows, out = [], {}
    def rel(a, b): a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64); return float((a - b).norm() / max(b.norm(), 1e-12))
    variants = ((("loomnb (a' ~ pi(s'))", e_tgt), ("loomnb, target noise 0 (a' = tanh(mean))", torch.zeros_like(e_tgt)))
                if lc.get("cql_target_action", "sample") == "sample" else (("loomnb, cql_target_action='mean'", None),))
    for label, tgt_noise in variants:
        tg = [] if tgt_noise is None else [tgt_noise]   # (the mean's backup draws nothing)
        lm = copy.deepcopy(lm0)
        c = lm.config
        # the terms, from the same weights and draws as the step below
        with torch.no_grad(), fed_noise(tg + [e_s, e_sn], [u01]):
            from loomnb.algos.td3 import td3_critic_target
            na = lm.actor.sample(b.next_obs)[0] if tg else lm.actor.deterministic(b.next_obs)
            y = td3_critic_target(lm.critic_target(b.next_obs, na), b.rewards, b.terminated, b.discounts)
            s_obs, s_act, log_mu = cql_proposals(b.obs, b.next_obs, lm.actor, n)
            q = lm.critic(b.obs, b.actions)
            gap = cql_gap(q, corrected_q(lm.critic(s_obs, s_act), log_mu), c.cql_temperature)
        with fed_noise(tg + [e_s, e_sn, e_a], [u01]) as (g, u):
            st = cql_step(lm.actor, lm.critic, lm.critic_target, lm.actor_opt, lm.critic_opt, lm.log_alpha, lm.log_cql_alpha,
                          lm.alpha_opt, b, c, lm.target_entropy)
            assert not g and not u
        ws, lins = to_d3_order(lm)
        g_crit = [p.grad[k].reshape(-1) for p, k, kind in ws]
        d_crit = [x.T.reshape(-1) if x.dim() == 2 else x.reshape(-1) for x in grads["critic"]]
        w_crit = [p[k].detach().reshape(-1) for p, k, kind in ws]
        a_crit = [x.T.reshape(-1) if x.dim() == 2 else x.reshape(-1) for x in d3_after["critic"]]
        # actor: loomnb's last layer holds [mu; log-std]; d3rlpy's order is enc0.w, enc0.b, enc2.w, enc2.b, mu.w, mu.b, logstd.w, logstd.b
        def actor_flat(ts):
            W, bb = ts[4], ts[5]
            return [ts[0], ts[1], ts[2], ts[3], W[:d], bb[:d], W[d:], bb[d:]]
        g_act = actor_flat([p.grad for l in lins for p in (l.weight, l.bias)])
        w_act = actor_flat([p.detach() for l in lins for p in (l.weight, l.bias)])
        td_d3 = met["critic_loss"] - met["conservative_loss"]
        gap_d3 = met["conservative_loss"] / (c.cql_alpha) / lm.critic.n_critics + lc.get("cql_target_action_gap", 10.0)   # d3rlpy: w * sum_k (gap_k - threshold)
        td_lm = float(((q - y) ** 2).mean(1).sum())
        r = {"TD target y: rel. difference": rel(y, y_d3),
             "sum_k mean (Q_k - y)^2 (d3rlpy's TD loss)": (td_lm, td_d3),
             "loomnb's TD term in its loss (critic_loss - w sum gap)": float(st[0]) - c.cql_alpha * float(gap.sum()),
             "mean gap over critics (log-sum-exp - Q(s, a))": (float(gap.mean()), gap_d3),
             "critic_loss": (float(st[0]), met["critic_loss"]),
             "actor_loss": (float(st[2]), met["actor_loss"]),
             "critic gradient: rel. difference": rel(torch.cat(g_crit), torch.cat(d_crit)),
             "critic gradient: norm ratio loomnb / d3rlpy": float(torch.cat(g_crit).norm() / torch.cat(d_crit).norm()),
             "critic gradient: cosine": float(torch.nn.functional.cosine_similarity(torch.cat(g_crit), torch.cat(d_crit), 0)),
             "critic weights after the step: max abs difference": float((torch.cat(w_crit) - torch.cat(a_crit)).abs().max()),
             "actor gradient: rel. difference": rel(torch.cat([x.reshape(-1) for x in g_act]), torch.cat([x.reshape(-1) for x in grads["actor"]])),
             "actor weights after the step: max abs difference": float(torch.cat([x.reshape(-1) for x in w_act]).sub(torch.cat([x.reshape(-1) for x in d3_after["actor"]])).abs().max()),
             "temperature gradient (d/d log alpha)": (float(lm.log_alpha.grad), float(grads["temp"][0].reshape(()))),
             "temperature after the step": (float(lm.log_alpha.detach().exp()), float(m.log_temp._parameter.detach().exp().reshape(()))),
             }
        out[label] = r
        print(f"\n## {label} vs d3rlpy 2.8.1 ({args.dataset}, batch {B}, hidden {args.hidden}, {', '.join(args.override) or 'defaults'})")
        for k, v in r.items():
            print(f"| {k} | " + (f"{v[0]:.6g} | {v[1]:.6g} |" if isinstance(v, tuple) else f"{v:.3g} | |"))
    if args.out: Path(args.out).write_text(json.dumps(dict(args=vars(args), results=out), indent=1))


if __name__ == "__main__":
    main()
