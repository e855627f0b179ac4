#!/usr/bin/env bash
# Manual acceptance test on a real GPU with Nsight Compute: profiles manual_nvtx_regions.py with the
# default preset and checks report.json (regions A, A/A1, B; metrics populated; nothing from outside
# the ranges; A's inclusive time = its self time + A/A1 within 1%). Then re-renders the same capture
# with kernel selections and a different metric group and checks those too.
#
# Usage: tests/manual/ncu/run_manual.sh [path/to/profile-run] [output root]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-profile-run}"
root="${2:-profile-output/manual}"
python="${PYTHON:-python3}"

report_md=$("$bin" --config ncu/default regions.include='[A, B]' output.root="$root" \
  -- "$python" "$here/manual_nvtx_regions.py")
run_dir="$(dirname "$report_md")"
echo "run directory: $run_dir"
"$python" "$here/check_manual_report.py" "$run_dir/report.json" \
  --expect-metric sm__throughput.avg.pct_of_peak_sustained_elapsed --expect-metric launch__grid_size

# Kernel selection on the same capture: include only GEMMs, then everything but GEMMs.
"$bin" report "$run_dir" --out "$run_dir/gemm-only" 'report.kernels.include=["*gemm*", "*Kernel2*"]' >/dev/null
"$bin" report "$run_dir" --out "$run_dir/no-gemm" 'report.kernels.exclude=["*gemm*", "*Kernel2*"]' >/dev/null
# A different metric group: launch statistics only.
"$bin" report "$run_dir" --out "$run_dir/launch-only" 'report.sections=[time, launch]' >/dev/null
"$python" - "$run_dir" <<'PY'
import json, sys
d = sys.argv[1]
full = json.load(open(f"{d}/report.json"))
gemm = json.load(open(f"{d}/gemm-only/report.json"))
rest = json.load(open(f"{d}/no-gemm/report.json"))
launch = json.load(open(f"{d}/launch-only/report.json"))
def regions(r): return {x["path"]: x for x in r["scopes"][0]["regions"]}
f, g, n = regions(full), regions(gemm), regions(rest)
ok = True
for path in ("A", "A/A1", "B"):
    total = f[path]["kernel_count"]
    split = g[path]["kernel_count"] + n[path]["kernel_count"]
    good = total == split
    ok &= good
    print(("ok   " if good else "FAIL ") + f"{path}: include-only {g[path]['kernel_count']} + exclude {n[path]['kernel_count']} = {total}")
good = g["A/A1"]["kernel_count"] > 0 and g["B"]["kernel_count"] == 0
ok &= good
print(("ok   " if good else "FAIL ") + "GEMMs only in A/A1, none in B")
names = [m["name"] for m in launch["metrics"]]
good = names[0] == "gpu__time_duration.sum" and all(m["group"] in ("time", "launch") for m in launch["metrics"])
ok &= good
print(("ok   " if good else "FAIL ") + f"metric group change: {names}")
sys.exit(0 if ok else 1)
PY
echo "manual test passed: $report_md"
