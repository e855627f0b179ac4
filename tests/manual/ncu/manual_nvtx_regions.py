"""Manual acceptance workload: three named NVTX ranges, `A`, `A1` nested in `A`, and `B`.

Each region launches more than 20 kernels; warm-up and some kernels run outside every range, so a
correct region report contains only the ranges' kernels. Run it through run_manual.sh on a GPU.
"""
import sys

import torch
import torch.cuda.nvtx as nvtx

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
x = torch.randn(n, n, device="cuda")
w = torch.randn(n, n, device="cuda")

# Warm-up outside every range: CUDA context, allocator, cuBLAS handle.
for _ in range(3):
    (x @ w).relu_()
torch.cuda.synchronize()

nvtx.range_push("A")
for _ in range(12):  # 24 elementwise kernels directly in A
    y = x * 1.01 + 0.5
nvtx.range_push("A1")
for _ in range(11):  # 22 kernels (GEMM + ReLU) in A/A1
    z = torch.relu(x @ w)
nvtx.range_pop()
for _ in range(2):  # 4 more kernels in A after its child closed
    y = y * 0.99 + 0.1
nvtx.range_pop()

nvtx.range_push("B")
for _ in range(25):  # 50 kernels (reduction + add) in B
    s = x.sum(dim=0) + 1.0
nvtx.range_pop()

# Kernels outside every range.
for _ in range(5):
    q = x - 1.0
torch.cuda.synchronize()
print("done", float(y.sum()), float(z.sum()), float(s.sum()), float(q.sum()))
