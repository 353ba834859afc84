"""TRL side of `bench/bench_llm_trl.py`: runs in the bench's own venv (`bench/.venv-trl`: torch, trl, transformers), never in
loomnb's. loomnb's `CausalLM` (imported from this checkout; it needs only torch) is wrapped as a `transformers`
`PreTrainedModel` with `GenerationMixin`, the char tokenizer as a `PreTrainedTokenizerFast` with the same ids, and
TRL's `GRPOTrainer` or `DPOTrainer` trains it. Reads one JSON job (argv[1]), writes the trained `CausalLM` state dict
to the job's `out` path and prints one JSON line: timings (training only), optimizer steps and peak RSS.
"""
from __future__ import annotations
import json, os, re, resource, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch
from transformers import AutoConfig, AutoModelForCausalLM, GenerationMixin, PreTrainedModel, PretrainedConfig, PreTrainedTokenizerFast
from transformers.modeling_outputs import BaseModelOutput, CausalLMOutput
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from loomnb.llm.model import CausalLM, CharTokenizer   # torch only: no loomnb dependency is needed here

class LoomLMConfig(PretrainedConfig):
    model_type = "loomnb_causal_lm"
    def __init__(self, vocab_size=27, context_length=32, d_model=64, n_layers=4, n_heads=4, **kw):
        self.vocab_size, self.context_length, self.d_model, self.n_layers, self.n_heads = vocab_size, context_length, d_model, n_layers, n_heads
        self.num_hidden_layers, self.hidden_size, self.num_attention_heads, self.max_position_embeddings = n_layers, d_model, n_heads, context_length
        kw.setdefault("use_cache", False)
        super().__init__(**kw)
        if getattr(self, "auto_map", None) is None: self.auto_map = {}   # TRL reads it to find the class (then AutoModelForCausalLM)

class LoomLMBackbone(torch.nn.Module):
    "The body of loomnb's CausalLM (its own modules, its forward up to the final norm), masks from attention_mask."
    def __init__(self, lm: CausalLM):
        super().__init__()
        self.tok_emb, self.pos_emb, self.blocks, self.ln_f = lm.tok_emb, lm.pos_emb, lm.blocks, lm.ln_f
    def forward(self, input_ids, attention_mask=None, **kw):
        mask, pos = None, torch.arange(input_ids.shape[1], device=input_ids.device)
        if attention_mask is not None and not bool(attention_mask.all()):   # padded: CausalLM's segment-id path (pads see only pads)
            m = attention_mask.long(); pos = (m.cumsum(-1) - 1).clamp_min(0); mask = (m[:, :, None] == m[:, None, :]).tril()[:, None]
        x = self.tok_emb(input_ids) + self.pos_emb(pos)
        for blk in self.blocks: x, _ = blk(x, None, mask)
        return BaseModelOutput(last_hidden_state=self.ln_f(x))

class LoomLMForCausalLM(PreTrainedModel, GenerationMixin):
    "loomnb's CausalLM behind the transformers interface (backbone `model` + `lm_head`, as TRL's fused LM head expects)."
    config_class = LoomLMConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    def __init__(self, config):
        super().__init__(config)
        c = config
        lm = CausalLM(c.vocab_size, c.context_length, c.d_model, c.n_layers, c.n_heads)
        self.model, self.lm_head = LoomLMBackbone(lm), lm.head
        self.post_init()
    def _init_weights(self, module): pass   # the weights come from the loomnb checkpoint
    def get_input_embeddings(self): return self.model.tok_emb
    def get_output_embeddings(self): return self.lm_head
    def forward(self, input_ids, attention_mask=None, logits_to_keep=0, **kw):
        h = self.model(input_ids, attention_mask).last_hidden_state
        if logits_to_keep: h = h[:, -logits_to_keep:]
        return CausalLMOutput(logits=self.lm_head(h))
    def prepare_inputs_for_generation(self, input_ids, attention_mask=None, **kw):
        return {"input_ids": input_ids, "attention_mask": attention_mask}
    def load_causal_lm(self, sd: dict):
        "Load a CausalLM state dict."
        self.load_state_dict({("lm_head." + k[5:] if k.startswith("head.") else "model." + k): v for k, v in sd.items()})
    def causal_lm_state(self) -> dict:
        "This model's weights as a CausalLM state dict."
        return {("head." + k[8:] if k.startswith("lm_head.") else k[6:]): v for k, v in self.state_dict().items()}

AutoConfig.register(LoomLMConfig.model_type, LoomLMConfig)   # TRL builds its reference model from the saved folder
AutoModelForCausalLM.register(LoomLMConfig, LoomLMForCausalLM)

def hf_tokenizer(tok: CharTokenizer) -> PreTrainedTokenizerFast:
    "A character-level fast tokenizer with CharTokenizer's ids (0 pad, 1 eos, then the alphabet)."
    vocab = {"<pad>": 0, "<eos>": 1, **{c: i + 2 for i, c in enumerate(tok.chars)}}
    t = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    t.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    t.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=t, pad_token="<pad>", eos_token="<eos>")

_NUM = re.compile(r"-?\d+(?:\.\d+)?")
def math_reward(answer: int, completion: str) -> float:
    "loomnb's math_reward rule (the last number of the completion equals the answer), without loomnb's dependencies."
    found = _NUM.findall(completion)
    return 1.0 if found and float(found[-1]) == answer else 0.0

def peak_rss_mb() -> float:
    "Peak RSS (MB) of this process image: VmHWM (getrusage's ru_maxrss survives exec, so a child of a big parent reports the parent's)."
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
    except OSError: pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def main():
    job = json.load(open(sys.argv[1]))
    torch.set_num_threads(1); torch.manual_seed(job["seed"])
    from datasets import Dataset
    tok = CharTokenizer(); htok = hf_tokenizer(tok)
    assert htok("47+85=", add_special_tokens=False)["input_ids"] == tok.encode("47+85="), "tokenizer ids differ"
    assert htok("132<eos>", add_special_tokens=False)["input_ids"] == tok.encode("132", eos=True), "eos id differs"
    start = torch.load(job["checkpoint"], weights_only=True)
    model = LoomLMForCausalLM(LoomLMConfig(tok.vocab_size)); model.load_causal_lm(start)
    folder = os.path.join(job["tmp"], "start"); model.save_pretrained(folder)   # (safetensors)
    model = AutoModelForCausalLM.from_pretrained(folder)
    lm = CausalLM(tok.vocab_size); lm.load_state_dict(model.causal_lm_state())
    x = torch.tensor([tok.encode("47+85=13"), tok.encode("3+4=7") + [0, 0, 0]])
    with torch.no_grad():   # the wrapper computes loomnb's logits: unpadded, and right-padded on the real tokens
        assert torch.allclose(model(x[:1]).logits, lm(x[:1]), atol=1e-5)
        assert torch.allclose(model(x, attention_mask=(x > 0).long()).logits[1, :5], lm(x[1:, :5])[0], atol=1e-5)
    common = dict(output_dir=job["tmp"], report_to="none", save_strategy="no", logging_steps=10**9, use_cpu=True, seed=job["seed"],
                  learning_rate=job["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0, max_grad_norm=1.0,
                  per_device_train_batch_size=job["batch_size"], dataloader_num_workers=0, disable_tqdm=True, bf16=False, gradient_checkpointing=False)
    extra = {}
    if job["algo"] == "grpo":
        from trl import GRPOConfig, GRPOTrainer
        answers = dict(zip(job["prompts"], job["answers"]))
        def reward(prompts, completions, **kw): return [math_reward(answers[p], c) for p, c in zip(prompts, completions)]
        cfg = GRPOConfig(**common, num_generations=job["group_size"], max_completion_length=job["max_new_tokens"], steps_per_generation=job["steps_per_generation"],
                         beta=job["kl_coef"], epsilon=job["clip_eps"], num_iterations=1, loss_type="bnpo", scale_rewards="group", temperature=1.0,
                         top_k=0, top_p=1.0, max_steps=job["max_steps"], mask_truncated_completions=False, shuffle_dataset=True)
        trainer = GRPOTrainer(model=model, reward_funcs=reward, args=cfg, train_dataset=Dataset.from_dict({"prompt": job["prompts"]}), processing_class=htok)
    else:
        from trl import DPOConfig, DPOTrainer
        w = job.get("sft_weight", 0.0)   # the RPO term: TRL 1.x's `sft` loss (the chosen tokens' NLL, mean over the batch's chosen tokens)
        losses = dict(loss_type=["sigmoid", "sft"], loss_weights=[1.0, w]) if w else dict(loss_type=["sigmoid"])
        cfg = DPOConfig(**common, beta=job["beta"], **losses, num_train_epochs=job["epochs"], precompute_ref_log_probs=True, max_length=None)
        ds = Dataset.from_dict({k: [p[k] for p in job["pairs"]] for k in ("prompt", "chosen", "rejected")})
        pre, ref_t = DPOTrainer._precompute_ref_logps, []   # runs in __init__ (outside train()): timed apart
        def timed(self, *a, **kw):
            t, c = time.perf_counter(), time.process_time(); out = pre(self, *a, **kw)
            ref_t.append((time.perf_counter() - t, time.process_time() - c)); return out
        DPOTrainer._precompute_ref_logps = timed
        ref = None
        if job.get("ref_checkpoint"):   # a reference other than the start model (the loss check)
            ref = LoomLMForCausalLM(LoomLMConfig(tok.vocab_size)); ref.load_causal_lm(torch.load(job["ref_checkpoint"], weights_only=True))
        trainer = DPOTrainer(model=model, ref_model=ref, args=cfg, train_dataset=ds, processing_class=htok)
        DPOTrainer._precompute_ref_logps = pre
        extra["ref_s"], extra["ref_cpu_s"] = sum(t for t, _ in ref_t), sum(c for _, c in ref_t)
    if job.get("loss_check"):   # the loss of the first `batch_size` pairs, no step: the objective compared with loomnb's
        batch = trainer.data_collator([trainer.train_dataset[i] for i in range(job["batch_size"])])
        model.train()
        with torch.no_grad(): loss = trainer.compute_loss(model, batch)
        print(json.dumps({"loss": float(loss)})); return
    t0, c0 = time.perf_counter(), time.process_time()
    trainer.train()
    train_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    torch.save(model.causal_lm_state(), job["out"])
    print(json.dumps({"train_s": train_s, "train_cpu_s": cpu_s, "optimizer_steps": int(trainer.state.global_step),
                      "rss_mb": peak_rss_mb(), **extra,
                      "versions": {m: __import__(m).__version__ for m in ("trl", "transformers", "torch")}}))

if __name__ == "__main__": main()
