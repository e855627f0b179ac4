#!/usr/bin/env bash
# Real-GPU evidence for the CUPTI timing source: the layout check, then every tests/manual workload kind
# traced through the injection library (one trace per process) and, beside it, ncu's time-only pass
# over the same workload (kernel counts per region to compare). Everything lands in $OUT/traces.tar.gz.
#   LIB=path/to/libcupti_trace.so [SCOPE=thread] tests/manual/cupti/trace_session.sh [workload...]
# Workloads: gpt2 emit graph domain twoproc (default: all). SCOPE sets ncu's --nvtx-push-pop-scope
# (default process); with thread, the captures are named <workload>.thread.ncu-rep.
set -uo pipefail
lib="$(realpath "${LIB:?set LIB to libcupti_trace.so}")"
out="${OUT:-.}"
work="${WORK:-/tmp/trace-session}"
here="$(cd "$(dirname "$0")" && pwd)"
ncu_dir="$here/../ncu"
mkdir -p "$work"
export PYTHONUNBUFFERED=1
log() { echo "=== $*"; }

CRATE="${CRATE:-crates/cupti-trace}" "$here/layout_check.sh" || echo "layout check failed"
torch_cupti=$(python3 -c 'import nvidia, os, glob; print(next(iter(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "cu*", "lib", "libcupti.so*")))), ""))' 2>/dev/null)
log "torch's libcupti: ${torch_cupti:-none found}"
nvcc -O2 -o "$work/domain_ranges" "$here/domain_ranges.cu" -ldl || echo "nvcc failed"

# traced NAME CMD...: the workload with the injection library; traces in $work/NAME.trace/
traced() {
  local name="$1"; shift
  mkdir -p "$work/$name.trace"
  local t0=$(date +%s.%N)
  PROFILE_RUN_TRACE_DIR="$work/$name.trace" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
    "$@" >"$work/$name.trace.out" 2>&1
  local rc=$?
  echo "$name traced: exit $rc, $(python3 -c "import sys,time; print(f\"{time.time()-float(sys.argv[1]):.1f}\")" "$t0") s"
  tail -3 "$work/$name.trace.out"
  ls -la "$work/$name.trace"
  for f in "$work/$name.trace"/*; do
    [ -f "$f" ] && awk -F'\t' '{n[$1]++} END {for (k in n) printf "  %s %d", k, n[k]; print ""}' "$f"
  done
}
# timed NAME CMD...: ncu's time-only pass over every kernel (push/pop scope $SCOPE, process by
# default), as profile-run's sampled timing pass collects it.
scope="${SCOPE:-process}"
timed() {
  local name="$1"; shift
  [ "$scope" = process ] || name="$name.$scope"
  local t0=$(date +%s.%N)
  ncu --clock-control none --nvtx --nvtx-push-pop-scope "$scope" \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic \
    --import-sass no -f -o "$work/$name" "$@" >"$work/$name.ncu.out" 2>&1
  echo "$name ncu time-only: exit $?, $(python3 -c "import sys,time; print(f\"{time.time()-float(sys.argv[1]):.1f}\")" "$t0") s"
  grep -c '==PROF== Profiling' "$work/$name.ncu.out"
}
unprofiled() {
  local name="$1"; shift
  local t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  echo "$name unprofiled: exit $?, $(python3 -c "import sys,time; print(f\"{time.time()-float(sys.argv[1]):.1f}\")" "$t0") s"
}

for w in ${*:-gpt2 emit graph domain twoproc}; do
  case "$w" in
  gpt2)
    log gpt2; cmd=(python3 "$ncu_dir/gpt2_step.py" 4 3)
    unprofiled gpt2 "${cmd[@]}"; traced gpt2 "${cmd[@]}"
    # NVTX aimed straight at torch's libcupti (the same instance), for comparison
    mkdir -p "$work/gpt2-direct.trace"
    PROFILE_RUN_TRACE_DIR="$work/gpt2-direct.trace" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$torch_cupti" \
      "${cmd[@]}" >"$work/gpt2-direct.out" 2>&1; echo "gpt2 direct: exit $?"
    awk -F'\t' '{n[$1]++} END {for (k in n) printf "  %s %d", k, n[k]; print ""}' "$work/gpt2-direct.trace"/*
    timed gpt2 --nvtx-include 'train_step/' "${cmd[@]}"
    ;;
  emit) log emit; cmd=(python3 "$ncu_dir/emit_nvtx_step.py" 2); traced emit "${cmd[@]}"; timed emit "${cmd[@]}" ;;
  graph) log graph; cmd=(python3 "$here/cuda_graph_step.py" 3); traced graph "${cmd[@]}"; timed graph "${cmd[@]}" ;;
  domain) log domain; cmd=("$work/domain_ranges"); traced domain "${cmd[@]}"; timed domain "${cmd[@]}" ;;
  twoproc) log twoproc; cmd=(python3 "$ncu_dir/two_processes.py"); traced twoproc "${cmd[@]}"; timed twoproc "${cmd[@]}" ;;
  esac
done
tar czf "$out/traces.tar.gz" -C "$work" $(cd "$work" && ls -d *.trace *.ncu-rep *.out 2>/dev/null)
ls -la "$out"
