#!/usr/bin/env bash
# `profile-run merge` of many ranks: synthetic rank run directories made from the real per-rank run
# of tests/fixtures/ncu/h200x4-cupti-straggle/ddp-per-rank/ (benches/tools/rank_runs.py: every rank a
# real rank's trace with its own timings, one rank the real straggler) merged under `ulimit -n 64`,
# with wall and CPU time, peak RSS, the most files open at once (sampled from /proc/PID/fd), the size
# of report.json per rank, and whether the Summary names the straggler. docs/performance.md ("Merging
# many ranks") has the results.
#
#   benches/merge.sh                 # 100, 1,000 and 10,000 ranks; bars checked at 10,000
#   benches/merge.sh --smoke         # 20 ranks: every step runs, no bars checked
#   benches/merge.sh 2000 5000       # these rank counts
#   benches/merge.sh --csv [--smoke | COUNTS]   # per-rank CSV-export runs instead (one profile-run
#                                    # per rank under ncu): benches/tools/csv_rank_runs.py makes them
#                                    # from tests/fixtures/ncu/h200x2-2025.3.1; bars: 30 s, 1 GiB, 50 MB
#                                    # of output (report.json, report.md and the scope pages)
#
# Environment: BENCH_DIR (scratch space, default a fresh /tmp dir, removed afterwards), BIN (a prebuilt
# profile-run: nothing is built then).
set -euo pipefail
cd "$(dirname "$0")/.."

counts=(100 1000 10000)
smoke=0
csv=0
if [[ ${1:-} == --csv ]]; then
  csv=1
  shift
fi
if [[ ${1:-} == --smoke ]]; then
  smoke=1
  counts=(20)
elif (($# > 0)); then
  counts=("$@")
fi

work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-merge-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

bin=${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/profile-run}
if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin profile-run; fi
source=tests/fixtures/ncu/h200x4-cupti-straggle/ddp-per-rank

# Bars of issue 31 at 10,000 ranks: seconds, MiB of peak RSS, open files, KB of report.json per rank.
bar_s=30 bar_mib=2048 bar_files=64 bar_kb=16

# Runs the merge under `ulimit -n 64` (opening a 65th file fails it), sampling its open files every
# 10 ms; prints wall s, CPU s (user + system), peak RSS MiB, most open files and the exit code.
measure() {
  local out=$1 ranks=$2
  (
    ulimit -n 64
    exec /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
      "$bin" merge "$ranks" --out "$out" --force >/dev/null 2>"$work/stderr"
  ) &
  local pid=$! most=0 n child
  while kill -0 "$pid" 2>/dev/null; do
    # The merge is /usr/bin/time's child.
    for child in $(cat "/proc/$pid/task/$pid/children" 2>/dev/null); do
      # The child may end between the two reads: a vanished fd folder counts as none open.
      n=$( (ls "/proc/$child/fd" 2>/dev/null || true) | wc -l)
      ((n > most)) && most=$n
    done
    sleep 0.01
  done
  local code=0
  wait "$pid" || code=$?
  read -r wall user sys kb <"$work/time"
  awk -v w="$wall" -v u="$user" -v s="$sys" -v k="$kb" -v f="$most" -v c="$code" \
    'BEGIN { printf "%.1f %.1f %.0f %d %d\n", w, u + s, k / 1024, f, c }'
}

if ((csv)); then
  # Bars of issue 42 at 10,000 ranks: seconds, MiB of peak RSS, open files, MB of output.
  bar_s=30 bar_mib=1024 bar_files=64 bar_mb=50
  echo "## Merging many per-rank CSV exports ($(nproc) cores; ulimit -n 64)"
  echo
  echo "| ranks | generate s | merge s | CPU s | peak RSS MiB | most open files | output MB | report.md KB | bars |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  failed=0
  for n in "${counts[@]}"; do
    runs=$work/csv-ranks-$n
    t0=$(date +%s.%N)
    python3 benches/tools/csv_rank_runs.py tests/fixtures/ncu/h200x2-2025.3.1 "$runs" "$n"
    t1=$(date +%s.%N)
    gen_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    read -r wall cpu mib files code < <(measure "$work/out-$n" "$runs")
    if [[ $code != 0 ]]; then
      echo "merge of $n ranks failed (exit $code):" >&2
      tail -5 "$work/stderr" >&2
      failed=1
      continue
    fi
    out_mb=$(du -sb "$work/out-$n" | awk '{ printf "%.1f", $1 / 1e6 }')
    md_kb=$(awk -v b="$(stat -c %s "$work/out-$n/report.md")" 'BEGIN { printf "%.0f", b / 1024 }')
    scopes=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["scopes"]))' "$work/out-$n/report.json")
    if [[ $scopes != "$n" ]]; then
      echo "merge of $n ranks gave $scopes scopes" >&2
      failed=1
    fi
    verdict=-
    if ((!smoke && n >= 10000)); then
      verdict=$(awk -v w="$wall" -v m="$mib" -v f="$files" -v o="$out_mb" \
        -v bs=$bar_s -v bm=$bar_mib -v bf=$bar_files -v bo=$bar_mb \
        'BEGIN { print (w <= bs && m <= bm && f <= bf && o <= bo) ? "met" : "MISSED" }')
      [[ $verdict == met ]] || failed=1
    fi
    echo "| $n | $gen_s | $wall | $cpu | $mib | $files | $out_mb | $md_kb | $verdict |"
    rm -rf "$runs" "$work/out-$n"
  done
  exit $failed
fi

echo "## Merging many ranks ($(nproc) cores; ulimit -n 64)"
echo
echo "| ranks | generate s | merge s | CPU s | peak RSS MiB | most open files | report.json KB per rank | report.md KB | straggler named | bars |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
failed=0
for n in "${counts[@]}"; do
  straggler=$((n * 3 / 8))
  runs=$work/ranks-$n
  t0=$(date +%s.%N)
  python3 benches/tools/rank_runs.py "$source" "$runs" "$n" "$straggler"
  t1=$(date +%s.%N)
  gen_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  read -r wall cpu mib files code < <(measure "$work/out-$n" "$runs")
  if [[ $code != 0 ]]; then
    echo "merge of $n ranks failed (exit $code):" >&2
    tail -5 "$work/stderr" >&2
    failed=1
    continue
  fi
  json_kb=$(awk -v b="$(stat -c %s "$work/out-$n/report.json")" -v n="$n" 'BEGIN { printf "%.1f", b / 1024 / n }')
  md_kb=$(awk -v b="$(stat -c %s "$work/out-$n/report.md")" 'BEGIN { printf "%.0f", b / 1024 }')
  named=no
  if grep -q "rank $straggler is late" "$work/out-$n/report.md"; then named=yes; fi
  verdict=-
  if ((!smoke && n >= 10000)); then
    verdict=$(awk -v w="$wall" -v m="$mib" -v f="$files" -v k="$json_kb" \
      -v bs=$bar_s -v bm=$bar_mib -v bf=$bar_files -v bk=$bar_kb \
      'BEGIN { print (w <= bs && m <= bm && f <= bf && k <= bk) ? "met" : "MISSED" }')
    [[ $verdict == met ]] || failed=1
  fi
  [[ $named == yes ]] || failed=1
  echo "| $n | $gen_s | $wall | $cpu | $mib | $files | $json_kb | $md_kb | $named | $verdict |"
done
exit $failed
