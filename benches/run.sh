#!/usr/bin/env bash
# Throughput and memory of `profile-run report` on synthetic `--page raw` exports, side by side with
# `wc -l` and a pandas baseline (benches/pandas_baseline.py); then the many-regions render time and
# the merge of 64 per-rank exports on one core and on all cores. docs/performance.md has the results.
#
#   benches/run.sh                 # 100M 1G 4G (sizes that fit the free disk), full scenarios
#   benches/run.sh 100M 1G         # chosen sizes
#   benches/run.sh --smoke         # CI: tiny inputs, every step runs, no timing assertions
#
# Environment: MANY_REGIONS / MANY_ROWS (many-regions scenario, default 100000 / 1000000), BENCH_DIR (scratch space, default a fresh /tmp dir, removed afterwards), PYTHON (with
# pandas; default: a venv at /tmp/profile-run-bench-venv, created with pip when missing; the smoke
# run skips pandas when it cannot be had).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
if (($# > 0)); then sizes=("$@"); elif ((smoke)); then sizes=(2M); else sizes=(100M 1G 4G); fi

work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --bin profile-run --example gen-ncu-export --example report-phases
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/profile-run
gen=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/gen-ncu-export
phases=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/report-phases

python=${PYTHON:-}
if [[ -z $python ]]; then
  venv=/tmp/profile-run-bench-venv
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import pandas' 2>/dev/null; then
    if ((smoke)); then
      python3 -c 'import pandas' 2>/dev/null && python=python3
    else
      python3 -m venv "$venv" && "$venv/bin/pip" install -q pandas
    fi
  fi
  [[ -z $python && -x $venv/bin/python ]] && "$venv/bin/python" -c 'import pandas' 2>/dev/null && python=$venv/bin/python
fi

bytes() { numfmt --from=iec "$1"; }

# measure NAME CMD…: runs CMD, sets $wall (s) and $rss (MiB); fails the script if CMD fails.
measure() {
  local name=$1; shift
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/$name.out" 2>"$work/$name.err" \
      || { cat "$work/$name.err" >&2; return 1; }
    read -r wall rss_kb <"$work/time"
    rss=$((rss_kb / 1024))
  else
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$work/$name.out" 2>"$work/$name.err" || { cat "$work/$name.err" >&2; return 1; }
    t1=$(date +%s.%N)
    wall=$(echo "$t1 - $t0" | bc); rss=n/a
  fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "## Throughput ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo
echo "| input | rows | wc -l s | profile-run s | MB/s | vs wc -l | RSS MiB | pandas s | pandas RSS MiB | profile-run speed-up vs pandas |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in "${sizes[@]}"; do
  need=$(($(bytes "$size") * 12 / 10))
  free=$(df --output=avail -B1 "$work" | tail -1)
  if ((free < need)); then echo "| $size | skipped: $((free >> 20)) MiB free, $((need >> 20)) MiB needed |"; continue; fi
  file=$work/export-$size.csv
  "$gen" --size "$size" --processes 8 --regions 300 --depth 4 --kernels 60 --seed 7 --out "$file" 2>/dev/null
  mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.1f", b / 1048576 }')
  cat "$file" >/dev/null # page cache warm for every contender
  measure wc wc -l "$file"; wc_s=$wall; rows=$(($(cut -d' ' -f1 "$work/wc.out") - 2))
  measure pr "$bin" report "$file" --out "$work/out-$size"; pr_s=$wall; pr_rss=$rss
  if [[ -n $python ]]; then
    measure pd "$python" benches/pandas_baseline.py "$file" "$work/pandas-$size.json"; pd_s=$wall; pd_rss=$rss
  else
    pd_s=n/a; pd_rss=n/a
  fi
  echo "| $size | $rows | $wc_s | $pr_s | $(ratio "$mb" "$pr_s") | $(ratio "$wc_s" "$pr_s") | $pr_rss | $pd_s | $pd_rss | $(ratio "$pd_s" "$pr_s") |"
  rm -f "$file"
done

echo
echo "## Many regions: analysis and rendering"
echo
if ((smoke)); then regions=2000; rows=5000; else regions=${MANY_REGIONS:-100000}; rows=${MANY_ROWS:-1000000}; fi
file=$work/many.csv
"$gen" --rows "$rows" --processes 1 --regions "$regions" --depth 5 --kernels 200 --seed 11 --out "$file" 2>/dev/null
measure phases "$phases" "$work/out-many" "$file"
echo "$regions regions requested, $rows results, $(($(stat -c %s "$file") >> 20)) MiB: $(cat "$work/phases.out"), peak RSS ${rss} MiB"
measure many "$bin" report "$file" --out "$work/out-many-cli"
echo "whole \`profile-run report\`: ${wall} s"
rm -f "$file"

echo
echo "## Merging 64 per-rank exports"
echo
if ((smoke)); then per_rank=64K; else per_rank=16M; fi
mkdir -p "$work/ranks"
for rank in $(seq 0 63); do
  "$gen" --size "$per_rank" --processes 1 --first-pid $((10000 + rank)) --regions 300 --depth 4 \
    --kernels 60 --seed "$rank" --out "$work/ranks/rank$rank.csv" 2>/dev/null
done
cat "$work"/ranks/*.csv >/dev/null
echo "| cores | wall s | RSS MiB |"
echo "|---|---|---|"
# The synthetic ranks draw their kernels at random, each from its own seed, so in small exports they
# share few kernels and merge would refuse them as unrelated runs: they are merged regardless.
for cores in 1 $(nproc); do
  measure merge taskset -c "0-$((cores - 1))" "$bin" report "$work"/ranks/rank*.csv --allow-incomparable \
    --out "$work/out-merge-$cores"
  echo "| $cores | $wall | $rss |"
done
rm -rf "$work/ranks"
