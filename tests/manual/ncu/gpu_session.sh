#!/usr/bin/env bash
# One batch of real-GPU checks (run from the repo root on a machine with a GPU, ncu and PyTorch).
# Every run directory and log ends up in $OUT/session.tar.gz (or ./gpu-session.tar.gz).
#   BIN=path/to/profile-run tests/manual/ncu/gpu_session.sh [step...]
# Steps: info manual workload train range multiproc ddp oddities overhead (default: the first six).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
here="tests/manual/ncu"
work="${WORK:-/tmp/gpu-session}"
mkdir -p "$work"
steps="${*:-info manual workload train range multiproc}"
log() { echo "=== $*"; }

for step in $steps; do
case "$step" in
info)
  log info
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ncu --version | tail -1
  ncu --help | grep -iE 'lockstep|communicator' || echo "(no lockstep/communicator flags in this ncu)"
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.device_count(), "GPU(s)")'
  ;;
manual)
  log manual
  "$here/run_manual.sh" "$bin" "$work/manual" 2>&1 | tail -40
  ;;
workload)
  log "workload.py with an @ in a range name"
  "$bin" -q regions.include='[LLM@prefill, decode]' output.root="$work/workload" \
    -- python3 tests/fixtures/ncu/h100-2025.3.1/workload.py
  ;;
train)
  log "train_step, process scope (default)"
  "$bin" -q regions.include='[train_step]' output.root="$work/train-process" \
    -- python3 "$here/train_step.py" 4 2
  log "train_step, thread scope"
  "$bin" -q regions.include='[train_step]' pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread \
    output.root="$work/train-thread" -- python3 "$here/train_step.py" 4 2
  ;;
range)
  log "range replay, manual workload (warm-up outside the ranges)"
  "$bin" -q regions.include='[A, B]' pipeline.ncu.ncu_cli.replay_mode=range output.root="$work/range-manual" \
    -- python3 "$here/manual_nvtx_regions.py"
  echo "exit $?"
  log "range replay, parent and child both included"
  "$bin" -q regions.include='[A, A/A1]' pipeline.ncu.ncu_cli.replay_mode=range output.root="$work/range-nested" \
    -- python3 "$here/manual_nvtx_regions.py"
  echo "exit $?"
  log "range replay, PyTorch training step (backward inside the range)"
  "$bin" -q regions.include='[train_step]' pipeline.ncu.ncu_cli.replay_mode=range output.root="$work/range-train" \
    -- python3 "$here/train_step.py" 2 1
  echo "exit $?"
  log "app-range replay, manual workload"
  "$bin" -q regions.include='[B]' pipeline.ncu.ncu_cli.replay_mode=app-range output.root="$work/apprange-manual" \
    -- python3 "$here/manual_nvtx_regions.py"
  echo "exit $?"
  ;;
multiproc)
  log "two processes on one host (one report, a Process ID column per process)"
  "$bin" -q regions.include='[A, B]' output.root="$work/multiproc" \
    -- python3 "$here/two_processes.py"
  echo "exit $?"
  ;;
ddp)
  log "torchrun, one profile-run per rank (NCCL kernels excluded from profiling by the distributed preset)"
  timeout 200 torchrun --nproc_per_node 2 --no-python "$bin" -q --config ncu/distributed \
    regions.include='[train_step]' output.root="$work/ddp-rank" output.run_name=ddp \
    -- python3 "$here/ddp_step.py"
  echo "exit $?"
  "$bin" merge "$work/ddp-rank/ddp" --out "$work/ddp-rank/ddp"
  echo "merge exit $?"
  "$bin" merge "$work/ddp-rank/ddp" --out "$work/ddp-rank/ddp/no-aggregate" report.aggregate=false
  log "one profile-run around torchrun (ncu follows both ranks), distributed preset"
  timeout 200 "$bin" -q --config ncu/distributed regions.include='[train_step]' output.root="$work/ddp-one" \
    -- torchrun --nproc_per_node 2 "$here/ddp_step.py"
  echo "exit $?"
  log "one profile-run around torchrun, default preset (NCCL kernels profiled: expected to stall)"
  timeout 90 "$bin" -q regions.include='[train_step]' output.root="$work/ddp-default" \
    -- torchrun --nproc_per_node 2 "$here/ddp_step.py"
  echo "exit $?"
  ;;
oddities)
  log "start/end ranges overlapping a push/pop range"
  "$bin" -q output.root="$work/start-end" -- python3 "$here/start_end_ranges.py"
  echo "exit $?"
  log "range replay with the first CUDA call inside the range (expected: explained failure, exit 4)"
  "$bin" -q regions.include='[cold_start]' pipeline.ncu.ncu_cli.replay_mode=range output.root="$work/cold-range" \
    -- python3 "$here/first_cuda_call_in_range.py"
  echo "exit $?"
  ;;
overhead)
  log overhead
  t() { local s e rc; s=$(date +%s%N); "$@" >/dev/null 2>&1; rc=$?; e=$(date +%s%N); echo "$(( (e - s) / 1000000 )) ms (exit $rc): $*"; }
  t python3 "$here/train_step.py" 8 5
  t "$bin" -q regions.include='[train_step/forward/layer1]' output.root="$work/ovh-region" -- python3 "$here/train_step.py" 8 5
  t "$bin" -q output.root="$work/ovh-all" -- python3 "$here/train_step.py" 8 5
  t "$bin" -q --config ncu/full regions.include='[train_step/forward/layer1]' output.root="$work/ovh-region-full" -- python3 "$here/train_step.py" 8 5
  ;;
esac
done
dest="${OUT:-.}"
# The .ncu-rep files stay behind (large); exports, logs and reports come back.
tar czf "$dest/session.tar.gz" --exclude='*.ncu-rep' -C "$work" . 2>/dev/null
echo "archived to $dest/session.tar.gz"
