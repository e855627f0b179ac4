#!/usr/bin/env bash
# The CUPTI timing source measured on a GPU (docs/performance.md, "Profiling cost on a GPU"): cost of the trace
# against the unprofiled run (median of 3), a sampled run timed by the trace against one timed by ncu,
# side by side, and a small sampled-with-trace capture kept as a fixture. Results go to $OUT.
#   BIN=path/to/profile-run (libcupti_trace.so beside it) tests/manual/cupti/perf_session.sh [STEPS]
# PARTS picks what runs (default: cost sampled small); sampled1 is the sampled pair with one deep
# sample per key (pipeline.ncu.sampling.adaptive=false) instead of ncu/sampled's adaptive samples.
set -uo pipefail
bin="$(realpath "${BIN:?set BIN to profile-run}")"
steps="${1:-30}"
out="${OUT:-.}"
work="${WORK:-/tmp/perf-session}"
here="$(cd "$(dirname "$0")" && pwd)"
gpt2="$here/../ncu/gpt2_step.py"
mkdir -p "$work"
export PYTHONUNBUFFERED=1
now() { date +%s.%N; }
since() { python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$1"; }
# timed LABEL CMD...: wall seconds of one run, appended to $out/times.tsv
timed() {
  local label="$1"; shift
  local t0; t0=$(now)
  "$@" >"$work/$label.out" 2>&1
  local rc=$?
  local s; s=$(since "$t0")
  printf '%s\t%s\t%s\n' "$label" "$rc" "$s" | tee -a "$out/times.tsv"
}
inc='regions.include=[train_step]'
parts=" ${PARTS:-cost sampled small} "
if [[ $parts == *" cost "* ]]; then
  for i in 1 2 3; do
    timed "unprofiled-$i" python3 "$gpt2" 4 "$steps"
    timed "trace-$i" "$bin" -q --config ncu/trace "$inc" output.root="$work/trace-$i" -- python3 "$gpt2" 4 "$steps"
  done
fi
if [[ $parts == *" sampled "* ]]; then
  timed sampled-trace "$bin" -q --config ncu/sampled pipeline.ncu.timing=trace "$inc" \
    output.root="$work/sampled-trace" -- python3 "$gpt2" 4 "$steps"
  timed sampled-ncu "$bin" -q --config ncu/sampled "$inc" output.root="$work/sampled-ncu" -- python3 "$gpt2" 4 "$steps"
fi
if [[ $parts == *" sampled1 "* ]]; then
  one='pipeline.ncu.sampling.adaptive=false'
  timed sampled1-trace "$bin" -q --config ncu/sampled pipeline.ncu.timing=trace "$one" "$inc" \
    output.root="$work/sampled1-trace" -- python3 "$gpt2" 4 "$steps"
  timed sampled1-ncu "$bin" -q --config ncu/sampled "$one" "$inc" output.root="$work/sampled1-ncu" \
    -- python3 "$gpt2" 4 "$steps"
fi
if [[ $parts == *" small "* ]]; then
  # A small capture for CI: the sampled fixture's workload, timed by the trace.
  timed small "$bin" -q --config ncu/sampled pipeline.ncu.timing=trace "$inc" output.root="$work/small" \
    -- python3 "$here/../ncu/train_step.py" 2 3
  small=$(ls -d "$work/small"/*/ | head -1)
  tar czf "$out/small.tar.gz" -C "$small" trace command.txt run.json 2>/dev/null
fi
for d in trace-1 sampled-trace sampled-ncu sampled1-trace sampled1-ncu small; do
  r=$(ls -d "$work/$d"/*/ 2>/dev/null | head -1)
  [ -n "$r" ] || continue
  cp "$r/report.json" "$out/$d.report.json" 2>/dev/null
  cp "$r/command.txt" "$out/$d.command.txt" 2>/dev/null
  cp "$r/run.json" "$out/$d.run.json" 2>/dev/null
  tail -5 "$work/$d.out"
done
ls -la "$out"
