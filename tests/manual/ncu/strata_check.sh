#!/usr/bin/env bash
# Sampled runs with ncu/sampled's defaults against ncu's full replay of the same regions, on workloads
# whose launch keys run different work or whose kernels are small: one GEMM key at two problem sizes
# (same_key_two_sizes.py), greedy decoding with a KV cache (kv_decode.py) and a CUDA graph replayed
# beside eager kernels (cuda_graph_step.py). Prints each run's time and benches/strata_compare.py's
# comparison. From the repository root, on a GPU, with libcupti_trace.so beside BIN:
#   BIN=path/to/profile-run tests/manual/ncu/strata_check.sh [inprocess|graph|ncu]...
#   inprocess (default)  deep counters in the traced process (the default engine), against full
#                        replay with the caches not flushed (--cache-control none), as that engine runs
#   graph                the CUDA graph pair of `inprocess` alone
#   fallback             the CUDA graph step with counters that cannot run in process (the workload's
#                        environment names a counter no GPU has), so `deep_engine: auto` has ncu's deep
#                        pass measure instead; against full replay with ncu's default cache control
#   ncu                  the deep pass under ncu (deep_engine=ncu), timed by the trace and by ncu's
#                        timing pass, against full replay with ncu's default cache control (the two-size
#                        GEMM's is the committed tests/fixtures/ncu/h200-2025.3.1-stratify/full.ncu-rep.gz)
# Report files and report.json of every run land in $OUT/strata.tar.gz.
set -uo pipefail
export PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work="${WORK:-/tmp/strata}"
mkdir -p "$work" "$out"
exec > >(tee -a "$out/strata.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
run() {
  local name=$1 include=$2; shift 2
  local s; s=$(date +%s)
  "$bin" -q output.root="$work" output.run_name="$name" regions.include="[$include]" \
    'pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]' "$@" >"$work/$name.out" 2>&1
  echo "$name: exit $? in $(( $(date +%s) - s )) s"; tail -n 3 "$work/$name.out"
}
compare() { echo "$1:"; python3 benches/strata_compare.py "$work/$2/report.json" "${@:3}"; }
gemm=(-- python3 tests/manual/ncu/same_key_two_sizes.py 4 3 1024 4096)
decode=(-- python3 tests/manual/ncu/kv_decode.py 2 128 8)
graph=(-- python3 tests/manual/cupti/cuda_graph_step.py 6)
none=pipeline.ncu.ncu_cli.cache_control=none
for what in "${@:-inprocess}"; do
  case "$what" in
  inprocess)
    run gemm_inprocess train_step -c ncu/sampled "${gemm[@]}"
    run gemm_full_none train_step -c ncu/default "$none" "${gemm[@]}"
    compare "gemm, in process" gemm_inprocess "$work/gemm_full_none/report.json"
    run graph_inprocess step -c ncu/sampled "${graph[@]}"
    run graph_full_none step -c ncu/default "$none" "${graph[@]}"
    compare "graph, in process" graph_inprocess "$work/graph_full_none/report.json"
    run decode_inprocess generate -c ncu/sampled "${decode[@]}"
    run decode_full_none generate -c ncu/default "$none" "${decode[@]}"
    compare "decode, in process" decode_inprocess "$work/decode_full_none/report.json"
    ;;
  graph)
    run graph_inprocess step -c ncu/sampled "${graph[@]}"
    run graph_full_none step -c ncu/default "$none" "${graph[@]}"
    compare "graph, in process" graph_inprocess "$work/graph_full_none/report.json"
    ;;
  fallback)
    run graph_fallback step -c ncu/sampled -- env PROFILE_RUN_DEEP_METRICS=sm__no_such_counter.sum \
      python3 tests/manual/cupti/cuda_graph_step.py 6
    ls "$work/graph_fallback/trace"; cat "$work/graph_fallback/trace/"*.no-counters
    run graph_counted step -c ncu/sampled "${graph[@]}"
    ls "$work/graph_counted/trace"
    run graph_full step -c ncu/default "${graph[@]}"
    compare "graph, counters unavailable" graph_fallback "$work/graph_full/report.json"
    ;;
  ncu)
    full_gemm=tests/fixtures/ncu/h200-2025.3.1-stratify/full.ncu-rep.gz
    deep=pipeline.ncu.sampling.deep_engine=ncu
    run gemm_sampled train_step -c ncu/sampled "$deep" "${gemm[@]}"
    compare "gemm, trace-timed" gemm_sampled "$full_gemm" "$bin"
    run gemm_ncu_timing train_step -c ncu/sampled "$deep" pipeline.ncu.timing=ncu "${gemm[@]}"
    compare "gemm, ncu-timed" gemm_ncu_timing "$full_gemm" "$bin"
    run decode_sampled generate -c ncu/sampled "$deep" "${decode[@]}"
    run decode_full generate -c ncu/default "${decode[@]}"
    compare "decode, trace-timed" decode_sampled "$work/decode_full/report.json"
    ;;
  *) echo "strata_check.sh: unknown set '$what' (inprocess, graph, fallback or ncu)" >&2; exit 2 ;;
  esac
done
tar czf "$out/strata.tar.gz" -C "$work" .
