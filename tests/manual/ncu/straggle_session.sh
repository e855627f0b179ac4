#!/usr/bin/env bash
# The cross-rank diagnosis on every GPU of one host (docs/running.md, "Many GPUs"): tests/manual/ncu/
# straggle_step.py under torchrun, with one rank made slow on purpose, traced by profile-run
# (--config ncu/trace), by both recipes (one profile-run around torchrun; one per rank, then merge),
# with DDP and FSDP, and as two simulated nodes (merged, and node0 merged alone). Prints wall times
# of each traced run beside the unprofiled one and keeps every run directory in $OUT/runs.tar.gz
# (the CI fixtures come from it).
#   BIN=path/to/profile-run (libcupti_trace.so beside it) tests/manual/ncu/straggle_session.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="$(realpath "${BIN:?set BIN to profile-run}")"
out="${OUT:-.}"
work="${WORK:-/tmp/straggle-session}"
here="$(cd "$(dirname "$0")" && pwd)"
step="$here/straggle_step.py"
n=$(nvidia-smi -L | wc -l)
late=$(( n > 2 ? 2 : n - 1 ))
mkdir -p "$work"
inc='regions.include=[train_step]'
now() { date +%s.%N; }
since() { python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$1"; }
# timed LABEL CMD...: wall seconds of one run, appended to $out/times.tsv
timed() {
  local label="$1"; shift
  local t0; t0=$(now)
  timeout 240 "$@" >"$work/$label.out" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$label" "$rc" "$(since "$t0")" | tee -a "$out/times.tsv"
  tail -3 "$work/$label.out"
}
echo "=== $n GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs); rank $late straggles"
for mode in ddp fsdp; do
  export MODE=$mode
  STRAGGLE=$late timed "$mode-unprofiled" torchrun --nproc_per_node "$n" --master_port 29501 "$step"
  STRAGGLE=$late LOG="$work/$mode-around.delays.jsonl" timed "$mode-around" \
    "$bin" -q --config ncu/trace "$inc" output.root="$work/$mode-around" -- torchrun --nproc_per_node "$n" --master_port 29502 "$step"
done
export MODE=ddp
STRAGGLE= timed ddp-even-unprofiled torchrun --nproc_per_node "$n" --master_port 29503 "$step"
STRAGGLE= LOG="$work/ddp-even.delays.jsonl" timed ddp-even \
  "$bin" -q --config ncu/trace "$inc" output.root="$work/ddp-even" -- torchrun --nproc_per_node "$n" --master_port 29504 "$step"
# One profile-run per rank (each rank's own run directory), then merge.
STRAGGLE=$late LOG="$work/ddp-per-rank.delays.jsonl" timed ddp-per-rank \
  torchrun --nproc_per_node "$n" --master_port 29505 --no-python \
  "$bin" -q --config ncu/trace "$inc" output.root="$work/ddp-per-rank" output.run_name=ddp -- python3 "$step"
timed ddp-per-rank-merge "$bin" -q merge "$work/ddp-per-rank/ddp" --out "$work/ddp-per-rank-merged"
# Two nodes on one host: two torchrun agents with a localhost rendezvous, each under its own
# profile-run with its own output root, each with its own host name where the kernel lets us.
if [ "$n" -ge 2 ]; then
  half=$(( n / 2 ))
  node() {
    local i=$1
    local devs; devs=$(seq -s, $(( i * half )) $(( i * half + half - 1 )))
    CUDA_VISIBLE_DEVICES=$devs STRAGGLE=$(( n - 1 )) LOG="$work/nodes.delays.jsonl" \
      "$bin" -q --config ncu/trace "$inc" output.root="$work/node$i" output.run_name=job -- \
      torchrun --nnodes 2 --node_rank "$i" --nproc_per_node "$half" --master_addr 127.0.0.1 \
      --master_port 29506 "$step" >"$work/node$i.out" 2>&1
  }
  export -f node
  export bin work n half step inc
  t0=$(now)
  for i in 0 1; do
    if unshare --uts true 2>/dev/null; then
      unshare --uts bash -c "hostname node$i; node $i" &
    else
      bash -c "node $i" &
    fi
  done
  wait
  printf 'two-nodes\t-\t%s\n' "$(since "$t0")" | tee -a "$out/times.tsv"
  tail -n 2 "$work/node0.out" "$work/node1.out"
  # The nodes' run directories merged, as from shared storage; node0 alone names the rank it lacks.
  timed two-nodes-merge "$bin" -q merge "$work/node0/job" "$work/node1/job" --out "$work/two-nodes-merged"
  timed node0-alone "$bin" -q merge "$work/node0/job" --out "$work/node0-alone"
fi
for r in "$work"/*/*/report.md "$work"/{ddp-per-rank-merged,two-nodes-merged,node0-alone}/report.md; do
  [ -f "$r" ] && { echo "--- $r"; sed -n '1,25p' "$r"; }
done
find "$work" -name report.html -delete
tar czf "$out/runs.tar.gz" -C "$work" --exclude='*.out' . 2>/dev/null
tar czf "$out/logs.tar.gz" -C "$work" $(cd "$work" && ls *.out) 2>/dev/null
ls -la "$out"
