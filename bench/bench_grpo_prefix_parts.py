"""Where GRPO's shared-prefix pass saves (`loomnb.fast.llm`): one process, one rollout of 16 prompts x 8 completions
(2-digit additions, at most 4 new tokens) from a fresh default `CausalLM`, process CPU seconds (min of --reps) of
  * the rollout's log-probabilities (one no-grad pass over the 128 rows: what the old and the reference passes cost),
  * the update's forward + backward over 4 shuffled minibatches of 32 rows,
on the plain rows (`token_logprobs`) and through the pass (`shared_prefix_token_logps`), with the layouts' shapes.

  python bench/bench_grpo_prefix_parts.py
"""
import argparse, copy, time
import numpy as np
import torch
from loomnb.llm.model import CharTokenizer, CausalLM, token_logprobs
from loomnb.llm.grpo import GRPO, grpo_rollout
from loomnb.llm.task import MathTask, addition_problems
from loomnb.fast.llm import shared_prefix_rows, shared_prefix_token_logps

def best(f, n):
    t = []
    for _ in range(n):
        c0 = time.process_time(); f(); t.append(time.process_time() - c0)
    return min(t)

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args(); torch.set_num_threads(1)
    tok = CharTokenizer(); task = MathTask(addition_problems(200, 2, seed=0)); lm = CausalLM(tok.vocab_size, seed=0)
    g = GRPO(lm, copy.deepcopy(lm), lambda p, c: [0.0] * len(c), group_size=8, max_new_tokens=4, batch_size=32, seed=0)
    st, _ = grpo_rollout(g, task.prompts[:16])
    b = st.padded(np.arange(128)); X, M = torch.from_numpy(b.tokens), torch.from_numpy(b.token_fields["loss_mask"] > 0)
    order = np.random.default_rng(0).permutation(128)
    mbs = [(torch.from_numpy(b.tokens), torch.from_numpy(b.token_fields["loss_mask"] > 0)) for b in (st.padded(order[s:s + 32]) for s in range(0, 128, 32))]
    r = shared_prefix_rows(X, M); r1 = shared_prefix_rows(*mbs[0])
    print(f"rollout: plain {tuple(X.shape)}, shared {tuple(r['tokens'].shape)}; a minibatch: plain {tuple(mbs[0][0].shape)}, shared {tuple(r1['tokens'].shape)}")
    with torch.no_grad():
        pl, fa = best(lambda: token_logprobs(lm, X), a.reps), best(lambda: shared_prefix_token_logps(lm, X, M), a.reps)
    print(f"rollout log-probabilities: plain {pl * 1e3:.1f} ms, shared {fa * 1e3:.1f} ms CPU, {pl / fa:.2f}x")
    pl = best(lambda: [(token_logprobs(lm, x) * m).sum().backward() for x, m in mbs], a.reps)
    fa = best(lambda: [shared_prefix_token_logps(lm, x, m).sum().backward() for x, m in mbs], a.reps)
    lay = best(lambda: [shared_prefix_rows(x, m) for x, m in mbs], a.reps)
    print(f"update, 4 minibatches forward + backward: plain {pl * 1e3:.1f} ms, shared {fa * 1e3:.1f} ms CPU ({lay * 1e3:.1f} ms of it the layout), {pl / fa:.2f}x")

if __name__ == "__main__": main()
