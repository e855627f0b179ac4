#!/usr/bin/env bash
# How `profile-run report` scales with cores: one 1 GiB export read with report.threads=1,2,4,…,
# all cores, next to `wc -l` and the pandas baseline, then 64 per-rank exports merged on one core
# and on all of them. For machines with many cores; docs/performance.md has the results.
#
#   benches/cores.sh [SIZE]        # default 1G
#
# Environment: BIN (profile-run), GEN (gen-ncu-export), default target/release/…; PYTHON (with
# pandas; default python3, skipped when it has no pandas); BENCH_DIR (scratch, default a fresh /tmp
# dir, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

size=${1:-1G}
bin=${BIN:-target/release/profile-run}
gen=${GEN:-target/release/examples/gen-ncu-export}
python=${PYTHON:-python3}
"$python" -c 'import pandas' 2>/dev/null || python=
work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-cores.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

cores=$(nproc)
# wall s and peak RSS MiB of a command, as "S MiB".
timed() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
  awk '{ printf "%s %d", $1, $2 / 1024 }' "$work/time"
}

echo "## $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores"
echo
file=$work/export.csv
"$gen" --size "$size" --processes 8 --regions 300 --depth 4 --kernels 60 --seed 7 --out "$file" 2>/dev/null
cat "$file" >/dev/null
echo "input: $size, $(($(wc -l <"$file") - 2)) results"
echo
echo "| command | wall s | peak RSS MiB |"
echo "|---|---|---|"
read -r s m <<<"$(timed wc -l "$file")"; echo "| \`wc -l\` | $s | $m |"
threads=1
while ((threads < cores)); do
  read -r s m <<<"$(timed "$bin" report "$file" --out "$work/out-$threads" report.threads=$threads)"
  echo "| \`profile-run report\`, report.threads=$threads | $s | $m |"
  threads=$((threads * 2))
done
read -r s m <<<"$(timed "$bin" report "$file" --out "$work/out-all")"
echo "| \`profile-run report\`, report.threads=0 ($cores) | $s | $m |"
if [[ -n $python ]]; then
  read -r s m <<<"$(timed "$python" benches/pandas_baseline.py "$file" "$work/pandas.json")"
  echo "| pandas baseline | $s | $m |"
fi
rm -f "$file"

echo
mkdir -p "$work/ranks"
for rank in $(seq 0 63); do
  "$gen" --size 16M --processes 1 --first-pid $((10000 + rank)) --regions 300 --depth 4 \
    --kernels 60 --seed "$rank" --out "$work/ranks/rank$rank.csv" 2>/dev/null
done
cat "$work"/ranks/*.csv >/dev/null
echo "64 per-rank exports of 16 MiB, merged:"
echo
echo "| cores | wall s | peak RSS MiB |"
echo "|---|---|---|"
for n in 1 $cores; do
  read -r s m <<<"$(timed taskset -c "0-$((n - 1))" "$bin" report "$work"/ranks/rank*.csv --out "$work/merge-$n")"
  echo "| $n | $s | $m |"
done
