#!/usr/bin/env bash
# ncu/distributed on every GPU of the machine: one profile-run around torchrun with real ncu (no NCCL
# kernel may be profiled, the job must not hang), then the same composed with ncu/sampled timed by the
# trace. Prints exit codes, wall times and the NCCL kernels found in each report (none expected).
#   tests/manual/ncu/distributed_check.sh   (profile-run in .bin/)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
B=.bin/profile-run; W=/tmp/dc; mkdir -p $W
n=$(nvidia-smi -L | wc -l); echo "GPUs: $n"; ncu --version | tail -1
s=$(date +%s); timeout 300 $B -q --config conf/ncu/distributed.yaml 'regions.include=[train_step]' output.root=$W output.run_name=dist -- torchrun --nproc_per_node $n tests/manual/ncu/ddp_step.py > $W/dist.out 2>&1; echo "distributed rc=$? $(( $(date +%s)-s )) s"; tail -n 3 $W/dist.out
s=$(date +%s); timeout 400 $B -q --config conf/ncu/distributed.yaml --config ncu/sampled pipeline.ncu.timing=trace 'regions.include=[train_step]' output.root=$W output.run_name=ds -- torchrun --nproc_per_node $n tests/manual/ncu/ddp_step.py > $W/ds.out 2>&1; echo "distributed+sampled rc=$? $(( $(date +%s)-s )) s"; tail -n 3 $W/ds.out
for r in dist ds; do python3 - $W/$r/report.json <<'PY'
import json,sys
r=json.load(open(sys.argv[1]))
names=set()
for s in r["scopes"]:
    for g in s["regions"]:
        for k in g.get("kernels",[]): names.add(k.get("name",""))
print(sys.argv[1], "scopes", [s["label"] for s in r["scopes"]], "kernels", len(names), "nccl kernels:", sorted(n for n in names if "nccl" in n.lower())[:5])
print("sampling", {k: r["sampling"][k] for k in ("deep_results","measured_results","estimated_results","unmatched_results")} if r.get("sampling") else None)
PY
done
grep -h "nccl" $W/dist/*.log 2>/dev/null | head -3
cp $W/*.out $W/dist/report.json $OUT/ 2>/dev/null; cp $W/ds/report.json $OUT/ds.report.json
