#!/usr/bin/env bash
# The injection library's trace writer on a GPU, without profile-run: one process and a 2-rank DDP
# job (rank 1 slow) write their traces with the library in .bin2/, kept in $OUT/v2.tar.gz, to be read
# here by `profile-run report` (format version 2, each trace ending with its `end` line).
#   tests/manual/cupti/v2_check.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
L=$(realpath .bin2/libcupti_trace.so); T=/tmp/v2; mkdir -p $T/one $T/ddp
env PROFILE_RUN_TRACE_DIR=$T/one CUDA_INJECTION64_PATH=$L NVTX_INJECTION64_PATH=$L python3 tests/manual/ncu/train_step.py 2 3 > $T/one.out 2>&1; echo "one rc=$?"
env PROFILE_RUN_TRACE_DIR=$T/ddp CUDA_INJECTION64_PATH=$L NVTX_INJECTION64_PATH=$L STRAGGLE=1 STEPS=4 torchrun --nproc_per_node 2 tests/manual/ncu/straggle_step.py > $T/ddp.out 2>&1; echo "ddp rc=$?"
ls -la $T/one $T/ddp; for f in $T/one/* $T/ddp/*; do echo "$f: $(head -c 60 $f | head -1) ... $(tail -n 1 $f)"; done
tail -n 3 $T/one.out $T/ddp.out
cd $T && tar czf $OUT/v2.tar.gz one ddp
