#!/usr/bin/env bash
# What tracing costs on every GPU of one host (docs/performance.md, "Profiling cost on a GPU"): the unprofiled run
# and one profile-run --config ncu/trace around torchrun, interleaved, three times each, for
# Hugging Face GPT-2 (tests/manual/ncu/gpt2_step.py) and the straggle workload without a straggler
# (tests/manual/ncu/straggle_step.py), each with DDP and FSDP. Prints every wall time and the median
# ratio; keeps the last traced run of each in $OUT/runs.tar.gz.
#   BIN=path/to/profile-run (libcupti_trace.so beside it) [WORKLOADS="gpt2 straggle"] [MODES="ddp fsdp"] [REPEATS=3] \
#     [LAYERS=12 STEPS=30] tests/manual/ncu/overhead_session.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="$(realpath "${BIN:?set BIN to profile-run}")"
out="${OUT:-.}"
work="${WORK:-/tmp/overhead-session}"
here="$(cd "$(dirname "$0")" && pwd)"
n=$(nvidia-smi -L | wc -l)
layers="${LAYERS:-12}" steps="${STEPS:-30}" repeats="${REPEATS:-3}"
mkdir -p "$work"
port=29600
now() { date +%s.%N; }
# timed LABEL CMD...: one run's wall seconds, appended to $out/overhead.tsv
timed() {
  local label="$1"; shift
  local t0; t0=$(now)
  timeout 300 "$@" >"$work/$label.out" 2>&1
  local rc=$?
  local s; s=$(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$t0")
  printf '%s\t%s\t%s\n' "$label" "$rc" "$s" | tee -a "$out/overhead.tsv"
}
echo "=== $n GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
for workload in ${WORKLOADS:-gpt2 straggle}; do
  for mode in ${MODES:-ddp fsdp}; do
    export MODE=$mode STEPS=$steps STRAGGLE=
    case $workload in
      gpt2) args=("$here/gpt2_step.py" "$layers" "$steps") ;;
      straggle) args=("$here/straggle_step.py") ;;
    esac
    for i in $(seq "$repeats"); do
      port=$((port + 1))
      timed "$workload-$mode-unprofiled-$i" torchrun --nproc_per_node "$n" --master_port "$port" "${args[@]}"
      port=$((port + 1))
      rm -rf "$work/$workload-$mode"
      timed "$workload-$mode-traced-$i" "$bin" -q --config ncu/trace 'regions.include=[train_step]' \
        'report.outputs=[md, json, trace]' output.root="$work/$workload-$mode" \
        -- torchrun --nproc_per_node "$n" --master_port "$port" "${args[@]}"
    done
  done
done
python3 - "$out/overhead.tsv" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, rc, s = line.split("\t")
    key, kind = label.rsplit("-", 2)[0], label.rsplit("-", 2)[1]
    runs[(key, kind)].append((float(s), rc))
for key in sorted({k for k, _ in runs}):
    u = statistics.median(s for s, _ in runs[(key, "unprofiled")])
    t = statistics.median(s for s, _ in runs[(key, "traced")])
    print(f"{key}: unprofiled {u:.2f} s, traced {t:.2f} s, median ratio {t / u:.3f}")
PY
find "$work" -name report.html -delete
tar czf "$out/runs.tar.gz" -C "$work" --exclude='*.out' . 2>/dev/null
tar czf "$out/logs.tar.gz" -C "$work" $(cd "$work" && ls *.out) 2>/dev/null
