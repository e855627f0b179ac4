"""Greedy decoding with a KV cache: one `prefill` range over the prompt, then one `decode` range per
generated token, both inside `generate`. The attention kernels of `decode` read a cache that grows by
one token each step, so one launch key runs slightly different work every step; prefill's kernels
see the whole prompt at once. GPT-2 architecture with random weights (nothing is downloaded).
Usage: python3 kv_decode.py [LAYERS] [PROMPT] [TOKENS]
"""
import sys

import torch
import torch.cuda.nvtx as nvtx
from transformers import GPT2Config, GPT2LMHeadModel

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
prompt_len = int(sys.argv[2]) if len(sys.argv) > 2 else 128
tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 8
torch.manual_seed(0)
config = GPT2Config(n_layer=layers, n_positions=prompt_len + tokens + 8)
model = GPT2LMHeadModel(config).cuda().eval().half()
prompt = torch.randint(0, config.vocab_size, (1, prompt_len), device="cuda")


@torch.no_grad()
def generate(mark):
    push = nvtx.range_push if mark else (lambda name: None)
    pop = nvtx.range_pop if mark else (lambda: None)
    push("generate")
    push("prefill")
    out = model(prompt, use_cache=True)
    pop()
    past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
    for _ in range(tokens):
        push("decode")
        out = model(token, past_key_values=past, use_cache=True)
        pop()
        past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
    pop()
    return token


generate(mark=False)  # warm-up outside every range
torch.cuda.synchronize()
last = generate(mark=True)
torch.cuda.synchronize()
print("last token", int(last))
