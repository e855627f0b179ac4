"""Two-GPU data-parallel training step with NCCL all-reduce, marked with NVTX ranges:
train_step/{forward, backward, allreduce, optimizer}. Launch with torchrun --nproc_per_node 2."""
import os

import torch
import torch.cuda.nvtx as nvtx
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
torch.manual_seed(rank)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device="cuda")


def step(mark):
    push = nvtx.range_push if mark else (lambda name: None)
    pop = nvtx.range_pop if mark else (lambda: None)
    push("train_step")
    push("forward")
    loss = model(x).square().mean()
    pop()
    push("backward")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    pop()
    push("allreduce")
    for p in model.parameters():
        dist.all_reduce(p.grad)
    pop()
    push("optimizer")
    opt.step()
    pop()
    pop()
    return loss


step(mark=False)  # warm-up (NCCL communicator set-up) outside every range
torch.cuda.synchronize()
for _ in range(2):
    loss = step(mark=True)
torch.cuda.synchronize()
print(f"rank {rank} loss {float(loss):.4f}")
dist.destroy_process_group()
