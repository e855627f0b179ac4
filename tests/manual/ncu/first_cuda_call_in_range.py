"""The first CUDA call happens inside an NVTX range: range replay cannot capture it (cuInit inside the
range), which profile-run must explain rather than fail on."""
import torch
import torch.cuda.nvtx as nvtx

nvtx.range_push("cold_start")
x = torch.randn(512, 512, device="cuda")
y = (x @ x).relu()
torch.cuda.synchronize()
nvtx.range_pop()
print("done", float(y.sum()))
