"""A small MLP forward captured as a CUDA graph and replayed inside NVTX ranges `step/graph`, beside
eager kernels in `step/eager`: each node kernel of a replayed graph belongs to the ranges open when
the graph was launched.
Usage: python3 cuda_graph_step.py [STEPS]
"""
import sys

import torch
import torch.cuda.nvtx as nvtx

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()
x = torch.randn(64, 512, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(x)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(graph):
    y = model(x)
torch.cuda.synchronize()
for _ in range(steps):
    nvtx.range_push("step")
    nvtx.range_push("graph")
    graph.replay()
    nvtx.range_pop()
    nvtx.range_push("eager")
    z = (y * 2.0).relu()
    nvtx.range_pop()
    nvtx.range_pop()
torch.cuda.synchronize()
print("done", float(z.sum()))
