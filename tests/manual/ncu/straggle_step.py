"""Data-parallel training steps with one rank made slow on purpose, for the cross-rank diagnosis.

NVTX ranges train_step/{forward,backward,optimizer}; the gradients are all-reduced inside backward
(DDP's buckets) or reduce-scattered and gathered (FSDP). Launch with torchrun.

    STRAGGLE=k  rank k does extra GPU work inside `forward` every step (unset: no straggler)
    EXTRA=n     the number of extra 4096² matrix products per step (default 24)
    MODE=ddp|fsdp
    STEPS=n     marked steps after two unmarked warm-up steps (default 10)
    LOG=path    where each rank appends one JSON line: rank, pid, device, host and the extra work's GPU
                time per step measured with CUDA events (the injected delay the diagnosis must find)
"""
import json
import os
import socket

import torch
import torch.cuda.nvtx as nvtx
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
local = int(os.environ.get("LOCAL_RANK", rank))
torch.cuda.set_device(local)
torch.manual_seed(0)
mode = os.environ.get("MODE", "ddp")
straggler = int(os.environ["STRAGGLE"]) if os.environ.get("STRAGGLE", "") != "" else None
extra = int(os.environ.get("EXTRA", "24"))
steps = int(os.environ.get("STEPS", "10"))

layers = []
for _ in range(6):
    layers += [torch.nn.Linear(2048, 2048), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).cuda()
if mode == "fsdp":
    from torch.distributed.fsdp import FullyShardedDataParallel

    model = FullyShardedDataParallel(model)
else:
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(4096, 2048, device="cuda")
a = torch.randn(4096, 4096, device="cuda")
b = torch.randn(4096, 4096, device="cuda") / 64


def slow_down():
    """The injected delay: `extra` matrix products on this rank's compute stream, timed by events."""
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    y = a
    for _ in range(extra):
        y = y @ b
    end.record()
    return begin, end


def step(mark, delays):
    push = nvtx.range_push if mark else (lambda name: None)
    pop = nvtx.range_pop if mark else (lambda: None)
    push("train_step")
    push("forward")
    if rank == straggler:
        delays.append(slow_down())
    loss = model(x).square().mean()
    pop()
    push("backward")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    pop()
    push("optimizer")
    opt.step()
    pop()
    pop()


warm = []
for _ in range(2):
    step(False, warm)
torch.cuda.synchronize()
delays = []
for _ in range(steps):
    step(True, delays)
torch.cuda.synchronize()
record = {
    "rank": rank,
    "pid": os.getpid(),
    "device": torch.cuda.current_device(),
    "host": socket.gethostname(),
    "mode": mode,
    "steps": steps,
    "straggler": straggler,
    "delay_ms": [begin.elapsed_time(end) for begin, end in delays],
}
if os.environ.get("LOG"):
    with open(os.environ["LOG"], "a") as f:
        f.write(json.dumps(record) + "\n")
print(json.dumps(record))
dist.destroy_process_group()
