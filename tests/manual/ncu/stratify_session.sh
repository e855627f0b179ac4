#!/usr/bin/env bash
# Captures of tests/manual/ncu/same_key_two_sizes.py (one GEMM launch key, two problem sizes in two
# regions) for the stratified launch keys: a sampled run (the in-place trace and ncu's deep pass) and
# ncu's full replay, the reference each region must come within 3% of. Run from the repository root on
# a machine with a GPU, ncu, PyTorch and the injection library beside profile-run:
#   BIN=path/to/profile-run tests/manual/ncu/stratify_session.sh
# Run directories land in $OUT/stratify.tar.gz (report files included, without SASS).
set -uo pipefail
export PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work="${WORK:-/tmp/stratify}"
workload=tests/manual/ncu/same_key_two_sizes.py
args=(4 3 1024 4096)
mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
run() {
  local name=$1; shift
  local s; s=$(date +%s)
  "$bin" -q output.root="$work" output.run_name="$name" regions.include='[train_step]' \
    'pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]' "$@" -- python3 "$workload" "${args[@]}" \
    >"$work/$name.out" 2>&1
  echo "$name: exit $? in $(( $(date +%s) - s )) s"; tail -n 4 "$work/$name.out"
}
s=$(date +%s); python3 "$workload" "${args[@]}"; echo "unprofiled: $(( $(date +%s) - s )) s"
run sampled -c ncu/sampled pipeline.ncu.sampling.launch_count=2
run full -c ncu/default
tar czf "$out/stratify.tar.gz" -C "$work" .
ls -la "$out"
