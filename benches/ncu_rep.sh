#!/usr/bin/env bash
# Reading .ncu-rep files: profile-run's native reader (benches/tools/ncu_rep_sum.rs) against NVIDIA's
# `ncu_report` Python module (pip package ncu-report), each loading a report and summing
# gpu__time_duration.sum over its results; wall time and peak RSS side by side, the sums compared.
# Inputs: a real fixture (rep_kernel, 111 results), then larger files made from it by
# benches/tools/gen_ncu_rep.rs (its result blocks repeated). A second table puts the whole
# `profile-run report R.ncu-rep` (native reader, region tree, advice, report.md and report.json)
# beside the same `ncu_report` load-and-sum. docs/performance.md has the results.
#
#   benches/ncu_rep.sh              # the fixture, then 10 and 100 copies of its results (~40 MB, ~400 MB)
#   benches/ncu_rep.sh 10 1000      # chosen copy counts
#   benches/ncu_rep.sh --smoke      # CI: the fixture only; skips ncu_report when it is not installed
#
# Environment: PYTHON (with ncu_report; default python3), RUNS (runs per measurement, the fastest
# counts; default 3), BENCH_DIR (scratch space, default a fresh
# /tmp dir, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
if (($# > 0)); then copies=("$@"); elif ((smoke)); then copies=(); else copies=(10 100); fi

work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-ncu-rep.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --bin profile-run --example ncu-rep-sum --example gen-ncu-rep
profile_run=${CARGO_TARGET_DIR:-$PWD/target}/release/profile-run
sum=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/ncu-rep-sum
gen=${CARGO_TARGET_DIR:-$PWD/target}/release/examples/gen-ncu-rep

python=${PYTHON:-python3}
have_ncu_report=1
if ! "$python" -c 'import ncu_report' 2>/dev/null; then
  if ((smoke)); then have_ncu_report=0; else echo "ncu_report missing: $python -m pip install ncu-report" >&2; exit 2; fi
fi

# The same work in Python: load, visit every result, sum the metric.
read -r -d '' py_sum <<'PY' || true
import sys, ncu_report
ctx = ncu_report.load_report(sys.argv[1])
n, total = 0, 0.0
for ri in range(ctx.num_ranges()):
    rng = ctx.range_by_idx(ri)
    for ai in range(rng.num_actions()):
        m = rng.action_by_idx(ai).metric_by_name("gpu__time_duration.sum")
        n += 1
        total += m.value() if m is not None else 0.0
print(f"results={n} sum={total:.0f}")
PY

# measure NAME CMD…: runs CMD $runs times; sets $wall (the fastest run, s, from the clock in ns: GNU
# time's 10 ms steps are too coarse for the small file) and $rss (the largest peak RSS, MiB).
runs=${RUNS:-3}
measure() {
  local name=$1; shift
  local best='' peak=0 t0 t1 s rss_kb
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$work/time" "$@" >"$work/$name.out" 2>"$work/$name.err" \
      || { cat "$work/$name.err" >&2; return 1; }
    t1=$(date +%s%N)
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    if [[ -z $best ]] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$s; fi
    read -r rss_kb <"$work/time"
    ((rss_kb > peak)) && peak=$rss_kb
  done
  wall=$best
  rss=$((peak / 1024))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }

gzip -dc tests/fixtures/ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz >"$work/rep_kernel.ncu-rep"
inputs=("$work/rep_kernel.ncu-rep")
for c in "${copies[@]}"; do
  "$gen" "$work/rep_kernel.ncu-rep" "$work/rep_kernel-x$c.ncu-rep" "$c" 2>/dev/null
  inputs+=("$work/rep_kernel-x$c.ncu-rep")
done

declare -A py_wall py_peak
echo "## Reading .ncu-rep ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo
echo "| input | MB | results | profile-run s | profile-run RSS MiB | ncu_report s | ncu_report RSS MiB | speed-up | sums agree |"
echo "|---|---|---|---|---|---|---|---|---|"
for file in "${inputs[@]}"; do
  mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.0f", b / 1048576 }')
  cat "$file" >/dev/null # page cache warm for both
  measure rs "$sum" "$file"; rs_s=$wall; rs_rss=$rss
  results=$(sed -n 's/^results=\([0-9]*\).*/\1/p' "$work/rs.out")
  if ((have_ncu_report)); then
    measure py "$python" -c "$py_sum" "$file"; py_s=$wall; py_rss=$rss
    rs_total=$(sed -n 's/.*sum=\([0-9.e+]*\).*/\1/p' "$work/rs.out")
    py_total=$(sed -n 's/.*sum=\([0-9.e+]*\).*/\1/p' "$work/py.out")
    agree=$(awk -v a="$rs_total" -v b="$py_total" 'BEGIN { print (a == b) ? "yes" : "NO" }')
    [[ $agree == yes ]] || { echo "sums differ on $file: $rs_total vs $py_total" >&2; exit 1; }
    speedup="$(ratio "$py_s" "$rs_s")x"
    py_wall[$file]=$py_s; py_peak[$file]=$py_rss
  else
    py_s=n/a; py_rss=n/a; speedup=n/a; agree=n/a
  fi
  echo "| $(basename "$file") | $mb | $results | $rs_s | $rs_rss | $py_s | $py_rss | $speedup | $agree |"
done

# The whole report command on the same files: what a user waits for after a capture.
echo
echo "## profile-run report R.ncu-rep against ncu_report load + sum"
echo
echo "| input | MB | results | profile-run report s | RSS MiB | ncu_report s | ncu_report RSS MiB | speed-up |"
echo "|---|---|---|---|---|---|---|---|"
for file in "${inputs[@]}"; do
  mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { printf "%.0f", b / 1048576 }')
  measure report "$profile_run" report "$file" --out "$work/report-out" --force
  [[ -s $work/report-out/report.json ]] || { echo "no report.json for $file" >&2; exit 1; }
  results=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["kernel_selection"]["results_selected"] + r["kernel_selection"]["results_excluded"])' "$work/report-out/report.json" 2>/dev/null || echo "?")
  py_s=${py_wall[$file]:-n/a}; py_rss=${py_peak[$file]:-n/a}
  speedup=n/a
  [[ $py_s != n/a ]] && speedup="$(ratio "$py_s" "$wall")x"
  echo "| $(basename "$file") | $mb | $results | $wall | $rss | $py_s | $py_rss | $speedup |"
done
