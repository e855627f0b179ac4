"""One GEMM kernel, two problem sizes, two regions: the launch key cannot tell them apart.

Each layer multiplies an activation of M rows by a weight into the same M x N output in two regions:
`attn` with an inner dimension of K_ATTN, `mlp` with K_MLP. cuBLAS picks the same kernel (same mangled
name, grid and block: the grid follows the output tiles) for both, yet `mlp` does K_MLP / K_ATTN times
the work per launch. A sampled run that carries one deep sample of the key to both regions is wrong in
both; each region must come within 3% of full replay. Ranges: train_step/forward/layer{i}/{attn,mlp}.
Usage: python3 same_key_two_sizes.py [LAYERS] [STEPS] [K_ATTN] [K_MLP]
"""
import sys

import torch
import torch.cuda.nvtx as nvtx

layers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
k_attn = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
k_mlp = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
m = n = 4096
torch.manual_seed(0)
dtype = torch.bfloat16
x_attn = torch.randn(m, k_attn, device="cuda", dtype=dtype)
x_mlp = torch.randn(m, k_mlp, device="cuda", dtype=dtype)
w_attn = [torch.randn(k_attn, n, device="cuda", dtype=dtype) / k_attn**0.5 for _ in range(layers)]
w_mlp = [torch.randn(k_mlp, n, device="cuda", dtype=dtype) / k_mlp**0.5 for _ in range(layers)]


def step(mark):
    push = nvtx.range_push if mark else (lambda name: None)
    pop = nvtx.range_pop if mark else (lambda: None)
    push("train_step")
    push("forward")
    total = torch.zeros(m, n, device="cuda", dtype=dtype)
    for i in range(layers):
        push(f"layer{i}")
        push("attn")
        total += torch.relu(x_attn @ w_attn[i])
        pop()
        push("mlp")
        total += torch.relu(x_mlp @ w_mlp[i])
        pop()
        pop()
    pop()
    pop()
    return total


step(mark=False)  # warm-up outside every range: cuBLAS picks and loads its kernels here
torch.cuda.synchronize()
for _ in range(steps):
    out = step(mark=True)
torch.cuda.synchronize()
print("checksum", float(out.float().sum()))
