#!/usr/bin/env bash
# Real-GPU evidence for in-process counters (crates/cupti-trace, PROFILE_RUN_DEEP_METRICS): the layout
# check, pass counts from the host API, then one GEMM of two sizes in two regions (same_key_two_sizes.py)
# (a) traced with counters in process, (b) traced only, (c) unprofiled, (d) under ncu full replay
# (--clock-control none, --cache-control all and none), compared per stratum and region
# (deep_compare.py); a one-pass set's cost in process and under ncu; a CUDA-graph workload with and
# without graph launches profiled; GPT-2 (gpt2_step.py 4 3) traced and in process. Summary and
# traces in $OUT. ncu's captures of the two-size workload are taken from BIN when present there.
#   BIN=dir-with-libcupti_trace.so-and-these-scripts tests/manual/ncu/deep_session.sh (BIN: the script's own dir by default)
set -uo pipefail
bin="$(realpath "${BIN:-$(dirname "$0")}")"
lib="$bin/libcupti_trace.so"
out="${OUT:-.}"
w=/tmp/deep; rm -rf "$w"; mkdir -p "$w"
export PYTHONUNBUFFERED=1
# The fixtures and docs/ncu-notes.md's tables were taken with each stratum's first launch left as
# warm-up; FIRST=1 profiles from the first, as profile-run does by default.
export PROFILE_RUN_DEEP_FIRST="${FIRST:-0}"
log() { echo "=== $* ($(date +%T))"; }
secs() { python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$1"; }
torch_cupti=$(python3 -c 'import nvidia, os, glob; print(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "cu*", "lib", "libcupti.so*")))[0])')
log "torch's libcupti: $torch_cupti"
CRATE="$bin" bash "$bin/layout_check.sh" 2>&1 | tail -40

log "pass counts (host API, GH100)"
sec=/opt/nvidia/nsight-compute/2025.3.1/sections
grep -ho 'Name: "[a-z_0-9.]*"' $sec/SpeedOfLight.section | cut -d'"' -f2 | sort -u > $w/sol.txt
grep -ho 'Name: "[a-z_0-9.]*"' $sec/LaunchStat*.section | cut -d'"' -f2 | sort -u > $w/launch.txt
PROFILE_RUN_LIBCUPTI="$torch_cupti" python3 - "$lib" $w/sol.txt $w/launch.txt > $w/passes.txt 2>&1 <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
f = lib.profile_run_deep_passes
f.restype = ctypes.c_int64
def passes(names):
    return f(b"GH100", ",".join(names).encode())
for path in sys.argv[2:]:
    names = [l.strip() for l in open(path) if l.strip()]
    ok = []
    for n in names:
        p = passes([n])
        print(f"{path.split('/')[-1]} {n} {p}")
        if p > 0:
            ok.append(n)
    print(f"{path.split('/')[-1]} SET {len(ok)}/{len(names)} accepted, passes together {passes(ok) if ok else 0}")
    open(path + ".ok", "w").write(",".join(ok))
four = ["sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active"]
print("issue-four", passes(four))
PY
cat $w/passes.txt
M=$(cat $w/sol.txt.ok)
log "metric set: $M"

wl="$bin/same_key_two_sizes.py"; args="4 4"
env_trace() { echo PROFILE_RUN_TRACE_DIR="$1" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib"; }
t0=$(date +%s.%N); python3 $wl $args > $w/plain.out 2>&1; echo "unprofiled: exit $? $(secs $t0) s"
mkdir -p $w/t; t0=$(date +%s.%N)
env $(env_trace $w/t) python3 $wl $args > $w/t.out 2>&1; echo "traced: exit $? $(secs $t0) s"
mkdir -p $w/a; t0=$(date +%s.%N)
env $(env_trace $w/a) PROFILE_RUN_DEEP_METRICS="$M" PROFILE_RUN_DEEP_DEBUG=1 python3 $wl $args > $w/a.out 2>&1
echo "in-process counters: exit $? $(secs $t0) s"; grep -v "^profile-run deep: " $w/a.out | tail -5; grep "^profile-run deep: " $w/a.out | head -12
ls -la $w/a $w/t
for s in all none; do
  if [ -f "$bin/ncu_$s.csv" ]; then cp "$bin/ncu_$s.csv" $w/; echo "ncu cache-control $s: taken from $bin"; continue; fi
  t0=$(date +%s.%N)
  timeout 300 ncu --clock-control none --cache-control $s --nvtx --metrics "$M" --kernel-name-base mangled -f -o $w/ncu_$s python3 $wl $args > $w/ncu_$s.out 2>&1
  echo "ncu cache-control $s: exit $? $(secs $t0) s, $(grep -c '==PROF== Profiling' $w/ncu_$s.out) results"
  ncu --import $w/ncu_$s.ncu-rep --csv --page raw --print-units base --print-kernel-base mangled > $w/ncu_$s.csv 2>/dev/null
done
for s in all none; do
  log "compare: in-process vs ncu --cache-control $s"
  python3 $bin/deep_compare.py $w/a/cupti.*.trace $w/ncu_$s.csv --json $w/compare_$s.json
done

log "SpeedOfLight and LaunchStatistics together"
PROFILE_RUN_LIBCUPTI="$torch_cupti" python3 -c "
import ctypes, sys
f = ctypes.CDLL(sys.argv[1]).profile_run_deep_passes; f.restype = ctypes.c_int64
names = open(sys.argv[2]).read() + ',' + open(sys.argv[3]).read()
print('SpeedOfLight+LaunchStatistics accepted metrics, passes together:', f(b'GH100', names.encode()))
" "$lib" $w/sol.txt.ok $w/launch.txt.ok

log "one-pass set: cost per profiled kernel"
M1=dram__bytes.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active
mkdir -p $w/one; t0=$(date +%s.%N)
env $(env_trace $w/one) PROFILE_RUN_DEEP_METRICS="$M1" python3 $wl $args > $w/one.out 2>&1
echo "in-process, one-pass set: exit $? $(secs $t0) s, $(grep -c '^profiled' $w/one/cupti.*.trace) profiled"
python3 $bin/deep_compare.py $w/one/cupti.*.trace - | sed -n 1,5p
t0=$(date +%s.%N)
timeout 200 ncu --clock-control none --cache-control none --nvtx --metrics "$M1" -f -o $w/ncu_one python3 $wl $args > $w/ncu_one.out 2>&1
echo "ncu, one-pass set: exit $? $(secs $t0) s, $(grep -c '==PROF== Profiling' $w/ncu_one.out) results"

log "CUDA graphs"
for graphs in 1 0; do
  mkdir -p $w/g$graphs; t0=$(date +%s.%N)
  env $(env_trace $w/g$graphs) PROFILE_RUN_DEEP_METRICS="$M" PROFILE_RUN_DEEP_GRAPHS=$graphs python3 $bin/cuda_graph_step.py 6 > $w/g$graphs.out 2>&1
  echo "graph workload, PROFILE_RUN_DEEP_GRAPHS=$graphs: exit $? $(secs $t0) s"
  python3 $bin/deep_compare.py $w/g$graphs/cupti.*.trace - | sed -n 1,5p
  awk -F'\t' '$1=="profiled" {n[$3]++} END {for (r in n) printf "  profiled launches with %s ranges: %d\n", r, n[r]}' $w/g$graphs/cupti.*.trace
done

if [ -f $bin/gpt2_step.py ]; then
  log "GPT-2, 4 layers, 3 steps: traced, and in process with one sample per stratum"
  mkdir -p $w/gt $w/ga; t0=$(date +%s.%N)
  env $(env_trace $w/gt) python3 $bin/gpt2_step.py 4 3 > $w/gt.out 2>&1; echo "gpt2 traced: exit $? $(secs $t0) s"
  t0=$(date +%s.%N)
  env $(env_trace $w/ga) PROFILE_RUN_DEEP_METRICS="$M" PROFILE_RUN_DEEP_SAMPLES=1 timeout 300 python3 $bin/gpt2_step.py 4 3 > $w/ga.out 2>&1
  echo "gpt2 in process: exit $? $(secs $t0) s"; tail -2 $w/ga.out
  python3 $bin/deep_compare.py $w/ga/cupti.*.trace - | sed -n 1,5p
fi
cd $w && tar czf $out/deep.tgz a t one g0 g1 ga *.json *.out passes.txt sol.txt launch.txt 2>/dev/null; ls -la $out
