#!/usr/bin/env bash
# The release build on the GPU: a time-only traced run and a trace-timed sampled run of GPT-2 (4 layers,
# 3 steps), printed per region, beside ncu's own time-only pass in process scope read with NVIDIA's
# ncu_report module. Run from the repository root: BIN=path/to/profile-run (libcupti_trace.so beside it).
set -uo pipefail
bin=$(realpath "${BIN:?set BIN to the profile-run binary}")
root=$PWD
export PYTHONUNBUFFERED=1
w=/tmp/chk; mkdir -p $w; cd $w
t0=$(date +%s); $bin -q --config ncu/trace regions.include='[train_step]' output.root=$w/runs -- python3 $root/tests/manual/ncu/gpt2_step.py 4 3; echo "trace rc=$? $(( $(date +%s)-t0 )) s"
t0=$(date +%s); $bin -q --config ncu/sampled pipeline.ncu.timing=trace regions.include='[train_step]' output.root=$w/runs2 -- python3 $root/tests/manual/ncu/gpt2_step.py 4 3; echo "sampled rc=$? $(( $(date +%s)-t0 )) s"
python3 - "$w" <<'PY'
import json, glob, sys
w = sys.argv[1]
for d in ("runs", "runs2"):
    rep = json.load(open(glob.glob(f"{w}/{d}/*/report.json")[0]))
    s = rep["scopes"][0]
    print(d, "time source:", rep["run"]["profiler"].get("settings", {}).get("time_source"), "partial:", rep["run"].get("partial"))
    for r in s["regions"]:
        cov = r.get("coverage")
        print(f"  {r['path']:40s} kernels {r['kernel_count']:6d}  coverage {cov}")
PY
w=/tmp/chk2; mkdir -p $w
ncu --clock-control none --nvtx --nvtx-push-pop-scope process --nvtx-include 'train_step/' --metrics gpu__time_duration.sum -f -o $w/proc python3 $root/tests/manual/ncu/gpt2_step.py 4 3 > $w/ncu.out 2>&1
echo "ncu rc=$? kernels: $(grep -c '==PROF== Profiling' $w/ncu.out)"
export PYTHONPATH=$(ls -d /opt/nvidia/nsight-compute/*/extras/python | head -1):${PYTHONPATH:-}
python3 - $w/proc.ncu-rep <<'PY'
import sys, collections, ncu_report
ctx = ncu_report.load_report(sys.argv[1])
paths = collections.Counter()
for r in range(ctx.num_ranges()):
    rng = ctx.range_by_idx(r)
    for a in range(rng.num_actions()):
        st = rng.action_by_idx(a).nvtx_state()
        best = []
        for d in st.domains():
            names = list(st.domain_by_id(d).push_pop_ranges())
            if len(names) > len(best): best = names
        paths["/".join(best)] += 1
for p in ["train_step", "train_step/forward", "train_step/forward/block0", "train_step/forward/block3", "train_step/backward", "train_step/optimizer"]:
    print(f"ncu_report {p:35s} {sum(v for k, v in paths.items() if k == p or k.startswith(p + '/'))}")
PY
