"""A small MLP training step under torch.autograd.profiler.emit_nvtx(), inside a user range `step`.

emit_nvtx names every operator call (`aten::linear, seq = 3, op_id = 7`) and the backward ranges are
pushed on PyTorch's autograd thread, so under --nvtx-push-pop-scope process each backward kernel's NVTX
cell lists two threads: the main thread's `step` and the autograd thread's own stack.
Usage: python3 emit_nvtx_step.py [STEPS]
"""
import sys

import torch
import torch.cuda.nvtx as nvtx

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")


def step():
    loss = model(x).square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


step()  # warm-up outside every range
torch.cuda.synchronize()
with torch.autograd.profiler.emit_nvtx():
    for _ in range(steps):
        nvtx.range_push("step")
        loss = step()
        nvtx.range_pop()
torch.cuda.synchronize()
print("loss", float(loss))
