#!/usr/bin/env bash
# Sampled runs with the default deep plan (launch_count 1, adaptive samples) against ncu's full replay
# of the same regions, for the workloads whose launch keys run different work: one GEMM key at two
# problem sizes (same_key_two_sizes.py) and greedy decoding with a KV cache (kv_decode.py). Prints
# each run's time and benches/strata_compare.py's comparison. From the repository root, on a GPU:
#   BIN=path/to/profile-run tests/manual/ncu/strata_check.sh
# Report files and report.json of every run land in $OUT/strata.tar.gz.
set -uo pipefail
export PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work="${WORK:-/tmp/strata}"
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
run() {
  local name=$1 include=$2; shift 2
  local s; s=$(date +%s)
  "$bin" -q output.root="$work" output.run_name="$name" regions.include="[$include]" \
    'pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]' "$@" >"$work/$name.out" 2>&1
  echo "$name: exit $? in $(( $(date +%s) - s )) s"; tail -n 3 "$work/$name.out"
}
gemm=(-- python3 tests/manual/ncu/same_key_two_sizes.py 4 3 1024 4096)
decode=(-- python3 tests/manual/ncu/kv_decode.py 2 128 8)
full_gemm=tests/fixtures/ncu/h200-2025.3.1-stratify/full.ncu-rep.gz
run gemm_sampled train_step -c ncu/sampled "${gemm[@]}"
echo "gemm, trace-timed:"; python3 benches/strata_compare.py "$work/gemm_sampled/report.json" "$full_gemm" "$bin"
run gemm_ncu_timing train_step -c ncu/sampled pipeline.ncu.timing=ncu "${gemm[@]}"
echo "gemm, ncu-timed:"; python3 benches/strata_compare.py "$work/gemm_ncu_timing/report.json" "$full_gemm" "$bin"
run decode_sampled generate -c ncu/sampled "${decode[@]}"
run decode_full generate -c ncu/default "${decode[@]}"
echo "decode, trace-timed:"; python3 benches/strata_compare.py "$work/decode_sampled/report.json" "$work/decode_full/report.json"
tar czf "$out/strata.tar.gz" -C "$work" .
