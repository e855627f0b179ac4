#!/usr/bin/env bash
# Two profile-run binaries side by side on one synthetic `--page raw` export: wall time and peak RSS
# of `report`, alternating runs so both see the same machine state. Used to show that a change costs
# nothing (docs/performance.md, "The profiler seam").
#
#   benches/compare_bins.sh OLD_BIN NEW_BIN [SIZE] [RUNS]     # SIZE default 1G, RUNS default 5
#   GEN=path/to/gen-ncu-export  (default: target/release/examples/gen-ncu-export)
set -euo pipefail
old=$1 new=$2 size=${3:-1G} runs=${4:-5}
gen=${GEN:-target/release/examples/gen-ncu-export}
work=$(mktemp -d /tmp/compare-bins.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$gen" --size "$size" --processes 8 --regions 300 --depth 4 --kernels 60 --seed 7 \
  --out "$work/export_raw.csv" 2>/dev/null
echo "input: $(du -h "$work/export_raw.csv" | cut -f1) ($size requested), $(nproc) cores"
for i in $(seq 1 "$runs"); do
  for which in old new; do
    bin=${!which}
    out="$work/out-$which-$i"
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" report "$work/export_raw.csv" --out "$out" >/dev/null
    read -r wall rss <"$work/time"
    echo "$which run $i: ${wall} s, $((rss / 1024)) MiB"
    rm -rf "$out"
  done
done
