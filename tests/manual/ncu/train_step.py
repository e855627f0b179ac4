"""A small training loop with ranges nested three deep: train_step/{forward/layerN, backward, optimizer}.

Backward kernels run on PyTorch's autograd thread, which is what nvtx.push_pop_scope=process is for.
Usage: python3 train_step.py [LAYERS] [STEPS]
"""
import sys

import torch
import torch.cuda.nvtx as nvtx

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.manual_seed(0)
model = torch.nn.ModuleList([torch.nn.Linear(512, 512) for _ in range(layers)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device="cuda")
target = torch.randn(256, 512, device="cuda")


def step(mark):
    push = nvtx.range_push if mark else (lambda name: None)
    pop = nvtx.range_pop if mark else (lambda: None)
    push("train_step")
    push("forward")
    h = x
    for i, layer in enumerate(model):
        push(f"layer{i}")
        h = torch.relu(layer(h))
        pop()
    loss = torch.nn.functional.mse_loss(h, target)
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


step(mark=False)  # warm-up outside every range
torch.cuda.synchronize()
for _ in range(steps):
    loss = step(mark=True)
torch.cuda.synchronize()
print("loss", float(loss))
