#!/usr/bin/env bash
# Memory and time of `profile-run report` on a Neuron summary-json with many subgraphs (issue 35: a
# 222 MB summary of 200,000 subgraphs aborted at 8 GB; the bar is 1 GB under `ulimit -v` 4 GB). Writes
# the summary (about 1.1 KB per subgraph, the metrics and version string `view --output-format
# summary-json` prints), then reads it under `ulimit -v` three ways: report.json only, report.md and
# report.json (the default), and a one-subgraph file (`report.outputs=[json]`, the floor). Past the
# eighth, subgraphs are rows of one table, not scopes (docs/neuron.md, "Many subgraphs").
# docs/performance.md has the results.
#
#   benches/neuron_summary.sh                # 200000 subgraphs, ulimit -v 4 GiB
#   benches/neuron_summary.sh 20000 8G       # chosen subgraph count and limit
#   benches/neuron_summary.sh --smoke        # CI: 200 subgraphs, every step runs
#
# Environment: BIN (profile-run, default target/release/profile-run, built when missing); BENCH_DIR
# (scratch, default a fresh dir under /dev/shm where it exists; removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
subgraphs=${1:-200000}
limit=${2:-4G}
((smoke)) && subgraphs=200
bin=${BIN:-target/release/profile-run}
[[ -x $bin ]] || cargo build --release --quiet --bin profile-run
scratch=/tmp
[[ -d /dev/shm && -w /dev/shm ]] && scratch=/dev/shm
work=${BENCH_DIR:-$(mktemp -d "$scratch/profile-run-neuron.XXXXXX")}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# summary FILE N: N subgraphs, each the 29 metrics of a real summary and the tools' version.
summary() {
  awk -v n="$2" 'BEGIN {
    split("total_time total_active_time model_flops hardware_flops transpose_flops mm_arithmetic_intensity " \
          "peak_flops_bandwidth_ratio mfu_estimated_percent hfu_estimated_percent mbu_estimated_percent " \
          "tensor_engine_active_time_percent vector_engine_active_time_percent scalar_engine_active_time_percent " \
          "gpsimd_engine_active_time_percent sync_engine_active_time_percent dma_active_time_percent " \
          "dma_transfer_count dma_transfer_average_bytes dma_transfer_total_bytes weight_size_bytes " \
          "weight_queue_bytes hbm_read_bytes hbm_write_bytes spill_save_bytes spill_reload_bytes " \
          "sbuf_read_bytes sbuf_write_bytes cc_op_count cc_op_active_time", names, " ")
    srand(7)
    print "2026-11-22 23:40:11 INFO  neuron-explorer view: " n " subgraphs"
    print "{"
    for (i = 0; i < n; i++) {
      printf "  \"n_%016x\": {\n", i
      for (k = 1; k <= 29; k++) printf "    \"%s\": %.6f,\n", names[k], rand()
      printf "    \"sw_version\": \"2.29.18.0%%kaena-tools/2.29@d5fe7ba\"\n  }%s\n", (i + 1 < n ? "," : "")
    }
    print "}"
  }' >"$1"
}

# run NAME ARGS…: profile-run under the limit; prints "wall s | peak RSS MiB | exit".
run() {
  local name=$1; shift
  rm -rf "$work/out-$name"
  set +e
  (ulimit -v "$(numfmt --from=iec "$limit" | awk '{ print int($1 / 1024) }')"
   /usr/bin/time -f '%e %M' -o "$work/time-$name" "$bin" report "$@" --out "$work/out-$name" -q \
     >/dev/null 2>"$work/err-$name")
  local rc=$?
  set -e
  local wall rss
  read -r wall rss <"$work/time-$name" 2>/dev/null || { wall=n/a; rss=0; }
  [[ $rc == 0 ]] || { head -c 300 "$work/err-$name" | tail -n 2 >&2; }
  echo "$wall | $((rss / 1024)) | $rc"
}

summary "$work/one.json" 1
summary "$work/many.json" "$subgraphs"
mib=$(awk -v b="$(stat -c %s "$work/many.json")" 'BEGIN { printf "%.0f", b / 1048576 }')

echo "## Neuron summary-json: $subgraphs subgraphs ($mib MiB), ulimit -v $limit, $(nproc) cores"
echo
echo "| input | outputs | wall s | peak RSS MiB | exit |"
echo "|---|---|---|---|---|"
echo "| 1 subgraph | json | $(run floor "$work/one.json" 'report.outputs=[json]') |"
echo "| $subgraphs subgraphs | json | $(run json "$work/many.json" 'report.outputs=[json]') |"
echo "| $subgraphs subgraphs | md, json | $(run default "$work/many.json") |"
