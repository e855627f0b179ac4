#!/usr/bin/env bash
# Reading CUPTI traces at the scale of a real job and of the programs that break readers: synthetic
# traces (benches/tools/trace_scenarios.rs, through the gen-cupti-trace example) read by
# `profile-run report -c ncu/trace` under `ulimit -v` (4 GB), with wall time, peak RSS and the outcome
# (read, or refused with its message). docs/performance.md ("Bounded trace reading") has the results.
#
#   benches/trace.sh               # the sizes of docs/performance.md
#   benches/trace.sh --smoke       # tiny traces: every step runs, no bars checked
#
# Environment: BENCH_DIR (scratch space, default a fresh /tmp dir, removed afterwards), VMEM_KB (the
# `ulimit -v` of each run, default 4000000), BIN and GEN (a prebuilt profile-run and gen-cupti-trace,
# for a machine without a Rust toolchain: nothing is built then).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; fi

work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-trace-bench.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# The generator in the dev profile: a release example would rebuild every dependency with the
# dev-dependencies' features, and how fast traces are written is not what is measured.
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=${BIN:-$target/release/profile-run}
gen=${GEN:-$target/debug/examples/gen-cupti-trace}
if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin profile-run; fi
if [[ -z ${GEN:-} ]]; then cargo build --quiet --example gen-cupti-trace; fi
vmem=${VMEM_KB:-4000000}

# scenario, size, bar: seconds and MiB of peak RSS the issue asks for (0: no bar).
if ((smoke)); then
  runs=("kernels 10000 0 0" "never-popped 1000 0 0" "marks 1000 0 0" "marks-ended 1000 0 0"
        "domains 1000 0 0" "domains-popped 1000 0 0" "threads 1000 0 0" "deep 1000 0 0")
else
  runs=("kernels 10000000 60 2048" "never-popped 1000000 2 0" "marks 100000 10 0"
        "marks-ended 100000 10 0" "domains 100000 10 0" "domains-popped 100000 10 0"
        "threads 1000000 10 0" "deep 1000000 0 0")
fi

# Wall seconds, CPU seconds (user + system: about the wall time on an otherwise idle machine, since a
# trace is read on one thread; the bars are checked against it), peak RSS from the kernel's own account (getrusage of the children) and exit
# code; no /usr/bin/time needed.
measure() {
  python3 - "$vmem" "$@" <<'PY'
import resource, subprocess, sys, time
vmem = int(sys.argv[1]) * 1024
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (vmem, vmem))
t0 = time.monotonic()
p = subprocess.run(sys.argv[2:], preexec_fn=limit, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.monotonic() - t0
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime
err = p.stderr.decode(errors="replace").strip().splitlines()
print(f"{wall:.2f} {cpu:.2f} {usage.ru_maxrss // 1024} {p.returncode} {err[-1][:160] if err else ''}")
PY
}

echo "## Reading CUPTI traces ($(nproc) cores, ulimit -v $vmem KB)"
echo
echo "| trace | size | file MiB | generate s | report s | CPU s | peak RSS MiB | exit | outcome | bar |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
failed=0
for run in "${runs[@]}"; do
  read -r name n bar_s bar_mib <<<"$run"
  trace=$work/cupti.1.trace
  t0=$(date +%s.%N)
  "$gen" "$name" "$n" "$trace"
  t1=$(date +%s.%N)
  gen_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  mib=$(awk -v b="$(stat -c %s "$trace")" 'BEGIN { printf "%.0f", b / 1048576 }')
  read -r wall cpu rss code outcome < <(measure "$bin" report -c ncu/trace "$trace" --out "$work/out" --force)
  if [[ $code == 0 ]]; then outcome="read"; fi
  verdict=-
  if ((bar_s > 0)); then
    ok=$(awk -v w="$cpu" -v r="$rss" -v s="$bar_s" -v m="$bar_mib" 'BEGIN { print (w <= s && (m == 0 || r <= m)) ? "met" : "MISSED" }')
    verdict="≤${bar_s} s"
    if ((bar_mib > 0)); then verdict+=", ≤${bar_mib} MiB"; fi
    verdict+=": $ok"
    [[ $ok == met ]] || failed=1
  fi
  echo "| $name | $n | $mib | $gen_s | $wall | $cpu | $rss | $code | ${outcome//|/\\|} | $verdict |"
  rm -f "$trace"
done
((smoke)) || exit "$failed"
