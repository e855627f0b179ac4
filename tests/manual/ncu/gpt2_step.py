"""Hugging Face GPT-2 training steps, built from a config (no weights to download), with NVTX ranges
train_step/{forward/block<N>, backward, optimizer}. Every step launches the same kernels, so a run of
several steps repeats each launch configuration once per step: the case sampled profiling is for.

Usage: python3 gpt2_step.py [LAYERS] [STEPS]   (defaults: 4 layers, 3 steps)
Under torchrun (WORLD_SIZE > 1) each rank trains its own replica, wrapped in DDP (MODE=ddp, the
default) or FSDP (MODE=fsdp), on its own GPU.
"""
import os
import sys

import torch
import torch.cuda.nvtx as nvtx
from transformers import GPT2Config, GPT2LMHeadModel

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
torch.manual_seed(0)
config = GPT2Config(n_layer=layers, n_embd=768, n_head=12, n_positions=256, vocab_size=8192)
distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
if distributed:
    import torch.distributed as dist

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", dist.get_rank())))
model = GPT2LMHeadModel(config).cuda()
blocks = model.transformer.h
if distributed and os.environ.get("MODE", "ddp") == "fsdp":
    from torch.distributed.fsdp import FullyShardedDataParallel

    model = FullyShardedDataParallel(model)
elif distributed:
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
tokens = torch.randint(0, config.vocab_size, (8, 256), device="cuda")

marking = False


def block_ranges(index):
    def push(_module, _args):
        if marking:
            nvtx.range_push(f"block{index}")

    def pop(_module, _args, _output):
        if marking:
            nvtx.range_pop()

    return push, pop


for i, block in enumerate(blocks):
    before, after = block_ranges(i)
    block.register_forward_pre_hook(before)
    block.register_forward_hook(after)


def push(name):
    if marking:
        nvtx.range_push(name)


def pop():
    if marking:
        nvtx.range_pop()


def step():
    push("train_step")
    push("forward")
    loss = model(tokens, labels=tokens).loss
    pop()
    push("backward")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    pop()
    push("optimizer")
    opt.step()
    pop()
    pop()
    return loss


step()  # warm-up outside every range: allocator, cuBLAS handles, autotuning
torch.cuda.synchronize()
marking = True
for _ in range(steps):
    loss = step()
torch.cuda.synchronize()
print("loss", float(loss))
if distributed:
    dist.destroy_process_group()
