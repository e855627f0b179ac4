"""Start/end ranges (nvtxRangeStart/End) that overlap each other and a push/pop range, plus a range in
a custom NVTX domain: the odd-nesting cases of docs/attribution.md on a real GPU."""
import torch
import torch.cuda.nvtx as nvtx

x = torch.randn(1024, 1024, device="cuda")
(x @ x).relu_()
torch.cuda.synchronize()

epoch = nvtx.range_start("epoch")
nvtx.range_push("step")
for _ in range(3):
    y = x * 2.0
phase = nvtx.range_start("phase")  # overlaps `step` and outlives it
for _ in range(3):
    z = y + 1.0
nvtx.range_pop()
for _ in range(3):
    w = z.relu()
nvtx.range_end(phase)
nvtx.range_end(epoch)
torch.cuda.synchronize()
print("done", float(w.sum()))
