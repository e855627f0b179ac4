#!/usr/bin/env bash
# One workload in process and under ncu's full replay, compared (deep_compare.py): the traced-only run,
# the run with in-process counters (PROFILE_RUN_DEEP_METRICS=$METRICS), and
# `ncu --clock-control none --cache-control none --nvtx --metrics $METRICS --kernel-name-base mangled`.
#   BIN=dir-with-libcupti_trace.so-and-deep_compare.py NAME=decode METRICS=a,b tests/manual/ncu/deep_workload.sh python3 kv_decode.py 1 64 4
set -uo pipefail
bin="$(realpath "${BIN:-$(dirname "$0")}")"; lib="$bin/libcupti_trace.so"
name="${NAME:?set NAME}"; metrics="${METRICS:?set METRICS}"
w="${WORK:-/tmp/deep}/$name"; rm -rf "$w"; mkdir -p "$w/t" "$w/a"
export PYTHONUNBUFFERED=1
# The fixtures and docs/ncu-notes.md's tables were taken with each stratum's first launch left as
# warm-up; FIRST=1 profiles from the first, as profile-run does by default.
export PROFILE_RUN_DEEP_FIRST="${FIRST:-0}"
secs() { python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$1"; }
inject() { env PROFILE_RUN_TRACE_DIR="$1" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" "${@:2}"; }
t0=$(date +%s.%N); inject "$w/t" "$@" > "$w/t.out" 2>&1; echo "$name traced: exit $? $(secs $t0) s"
t0=$(date +%s.%N); inject "$w/a" env PROFILE_RUN_DEEP_METRICS="$metrics" "$@" > "$w/a.out" 2>&1
echo "$name in process: exit $? $(secs $t0) s"; tail -2 "$w/a.out"
t0=$(date +%s.%N)
timeout 420 ncu --clock-control none --cache-control none --nvtx --metrics "$metrics" --kernel-name-base mangled -f -o "$w/ncu" "$@" > "$w/ncu.out" 2>&1
echo "$name ncu: exit $? $(secs $t0) s, $(grep -c '==PROF== Profiling' "$w/ncu.out") results"
ncu --import "$w/ncu.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled > "$w/ncu.csv" 2>/dev/null
python3 "$bin/deep_compare.py" "$w"/a/cupti.*.trace "$w/ncu.csv" --json "$w/compare.json" | grep -v "^  \|^region\|^ \{10\}" | head -20
python3 "$bin/deep_compare.py" "$w"/a/cupti.*.trace "$w/ncu.csv" | sed -n '/^per region/,$p'
