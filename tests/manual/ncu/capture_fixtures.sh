#!/usr/bin/env bash
# Captures the fixtures of tests/fixtures/ncu/h100-real-pytorch/ (real PyTorch runs: several threads in one
# NVTX cell, NCCL's never-popped range, per-call names) and the .ncu-rep report files of
# tests/fixtures/ncu/ncu-rep/. Run from the repository root on a machine with a GPU, ncu and PyTorch:
#   BIN=path/to/profile-run tests/manual/ncu/capture_fixtures.sh
# Run directories land in $OUT/captures.tar.gz (without report files) and the report files in
# $OUT/reports.tar.gz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
here="tests/manual/ncu"
work="${WORK:-/tmp/captures}"
mkdir -p "$work"
log() { echo "=== $*"; }
# --import-sass no: without the kernels' cubins a report file is ~50x smaller (45 MB -> under 1 MB).
run() {
  local name=$1; shift; log "$name: $*"
  "$bin" -q output.root="$work/$name" output.run_name="$name" 'pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]' "$@"
  echo "exit $?"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
python3 -c 'import torch; print("torch", torch.__version__)'

# Issue: several threads in one NVTX cell and per-call names (emit_nvtx), two instances of `step`.
run emit_nvtx regions.include='[step]' -- python3 "$here/emit_nvtx_step.py" 2
# Issue: NCCL's never-popped ncclCommInitRankConfig range beside the user's range (one rank, one GPU).
run nccl_one_rank regions.include='[train_step]' -- torchrun --nproc_per_node 1 "$here/ddp_step.py"
# Report files of every kind of result: kernel replay, range and app-range replay, two processes,
# start/end ranges, Python call stacks with thread ids.
run rep_kernel regions.include='[A, B]' -- python3 "$here/manual_nvtx_regions.py" 256
run rep_range regions.include='[A, B]' pipeline.ncu.ncu_cli.replay_mode=range \
  -- python3 "$here/manual_nvtx_regions.py" 256
run rep_apprange regions.include='[B]' pipeline.ncu.ncu_cli.replay_mode=app-range \
  -- python3 "$here/manual_nvtx_regions.py" 256
run rep_multiproc regions.include='[A, B]' -- python3 "$here/two_processes.py"
run rep_start_end -- python3 "$here/start_end_ranges.py"
run rep_pystack regions.include='[train_step]' pipeline.ncu.ncu_cli.call_stack=true \
  'pipeline.ncu.ncu_cli.call_stack_type=[python]' -- python3 "$here/train_step.py" 2 2

for rep in "$work"/*/*/profile*.ncu-rep; do
  ls -la "$rep"
  s=$(date +%s%N); ncu --import "$rep" --csv --page raw >/dev/null 2>&1; e=$(date +%s%N)
  echo "ncu --import --csv --page raw: $(( (e - s) / 1000000 )) ms for $rep"
done
dest="${OUT:-.}"
tar czf "$dest/captures.tar.gz" --exclude='*.ncu-rep' -C "$work" .
tar czf "$dest/reports.tar.gz" -C "$work" $(cd "$work" && ls */*/profile*.ncu-rep)
ls -la "$dest"
