#!/usr/bin/env bash
# profile-run against HTA (HolisticTraceAnalysis) on the same PyTorch profiler traces: the largest
# committed Kineto fixture (tests/fixtures/kineto/hta-trace-filter/sampled_rank-0.json.gz) and
# synthetic traces 10× and 100× its size made from it (its steps repeated, shifted in time, with
# fresh correlation ids; written to a scratch directory, never committed). profile-run runs `report`
# on the file; HTA runs its per-annotation kernel breakdown (`get_gpu_kernels_with_user_annotations`,
# the leaf GPU annotation wins). Like is compared with like: profile-run's self GPU time per leaf
# region against HTA's kernel time per annotation, which must agree within 0.1 %. Prints wall time,
# peak RSS, the speed-up and the file size; checks the bars: profile-run ≥10× faster than HTA and its
# peak RSS no larger than the file. docs/performance.md ("Reading other tools' traces") has the figures.
#
#   benches/imported.sh            # 1×, 10×, 100× with HTA, bars checked
#   benches/imported.sh --smoke    # 1× and 2×, no HTA (its attribution in plain Python), no bars
#
# Environment: HTA_PYTHON (a python with HolisticTraceAnalysis installed, default python3), BIN (a
# prebuilt profile-run: nothing is built then), BENCH_DIR (scratch, default a fresh /tmp dir, removed).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; fi

work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-imported-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

target=${CARGO_TARGET_DIR:-$PWD/target}
bin=${BIN:-$target/release/profile-run}
if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin profile-run; fi
hta_python=${HTA_PYTHON:-python3}
helper=$PWD/benches/imported_hta.py
fixture=tests/fixtures/kineto/hta-trace-filter/sampled_rank-0.json.gz

if ((smoke)); then factors=(1 2); else factors=(1 10 100); fi
if ((!smoke)) && ! "$hta_python" -c 'import hta' 2>/dev/null; then
  echo "HTA is not importable by $hta_python: pip install HolisticTraceAnalysis (into a venv), then HTA_PYTHON=/path/to/venv/bin/python" >&2
  exit 2
fi

# Wall seconds, peak RSS in MiB (getrusage of the child) and exit code of one command.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
if p.returncode:
    sys.stderr.write(p.stderr.decode(errors="replace"))
print(f"{wall:.2f} {rss:.1f} {p.returncode}")
PY
}

# The floor every report has, whatever the trace: a report of a Kineto trace with no events.
echo '{"schemaVersion": 1, "traceEvents": []}' >"$work/empty.json"
read -r _ floor_mib _ < <(measure "$bin" report "$work/empty.json" --out "$work/out-empty" --force)

echo "## Reading other tools' traces: profile-run and HTA ($(nproc) cores)"
echo
echo "| trace | file MiB | kernels | profile-run s | profile-run peak MiB | HTA s | HTA peak MiB | speed-up | per-annotation totals | bars |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
failed=0
for factor in "${factors[@]}"; do
  dir=$work/x$factor
  mkdir -p "$dir"
  trace=$dir/rank0.json
  python3 "$helper" make "$fixture" "$trace" "$factor"
  bytes=$(stat -c %s "$trace")
  mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
  # Each stream's own annotations, as HTA attributes them (the default scope, process, lets a kernel
  # see every annotation open in its process).
  read -r ours_s ours_mib ours_code < <(measure "$bin" report "$trace" pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread --out "$work/out$factor" --force)
  if [[ $ours_code != 0 ]]; then echo "profile-run report failed on the ${factor}× trace" >&2; exit 1; fi
  python3 "$helper" ours "$work/out$factor/report.json" "$work/ours$factor.json"
  kernels=$(python3 -c 'import json,sys; print(sum(s["total"]["kernel_count"] for s in json.load(open(sys.argv[1]))["scopes"]))' "$work/out$factor/report.json")
  name="$([[ $factor == 1 ]] && echo "fixture" || echo "${factor}× synthetic")"
  if ((smoke)); then
    # No HTA: its attribution computed in plain Python from the same file must still agree.
    python3 "$helper" leaves "$trace" "$work/leaves$factor.json"
    read -r _ _ worst agree _ _ _ < <(python3 "$helper" compare "$work/ours$factor.json" "$work/leaves$factor.json" || true)
    if [[ $agree != agree ]]; then failed=1; fi
    echo "| $name | $mib | $kernels | $ours_s | $ours_mib | - | - | - | $agree with a plain sum (worst ${worst} %) | - |"
    continue
  fi
  read -r hta_s hta_mib hta_code < <(measure "$hta_python" "$helper" hta "$dir" "$work/hta$factor.json")
  if [[ $hta_code != 0 ]]; then echo "HTA failed on the ${factor}× trace" >&2; exit 1; fi
  read -r _ _ worst agree _ _ _ < <(python3 "$helper" compare "$work/ours$factor.json" "$work/hta$factor.json" || true)
  speedup=$(awk -v a="$hta_s" -v b="$ours_s" 'BEGIN { printf "%.1f", a / b }')
  verdict=$(awk -v s="$speedup" -v r="$ours_mib" -v f="$mib" -v a="$agree" 'BEGIN {
    v = (s >= 10 ? "≥10× met" : "≥10× MISSED") ", " (r <= f ? "RSS ≤ file met" : "RSS ≤ file MISSED")
    if (a != "agree") v = v ", totals DIFFER"
    print v }')
  if [[ $verdict == *MISSED* || $verdict == *DIFFER* ]]; then failed=1; fi
  echo "| $name | $mib | $kernels | $ours_s | $ours_mib | $hta_s | $hta_mib | ${speedup}× | $agree (worst ${worst} %) | $verdict |"
done
echo
echo "A report of a trace with no events peaks at $floor_mib MiB: no file smaller than that meets the memory bar."
if ((smoke)) && ((failed)); then
  echo "profile-run's self time per leaf region differs from a plain sum over the file (see the table)." >&2
  exit 1
elif ((smoke)); then
  echo "Smoke run: no HTA, no bars."
elif ((failed)); then
  echo "A bar was missed or the totals differ (see the table)." >&2
  exit 1
else
  echo "Every bar met; profile-run's self time per leaf region equals HTA's kernel time per annotation within 0.1 % at every size."
fi
