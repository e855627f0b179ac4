"""Checks a report.json made from manual_nvtx_regions.py (kernel replay, default preset).

Usage: python3 check_manual_report.py REPORT.json [--kernels-include PATTERN] [--expect-metric NAME]...
Exits non-zero with the failed checks listed.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--expect-metric", action="append", default=[])
parser.add_argument("--min-kernels", type=int, default=21)
args = parser.parse_args()

report = json.load(open(args.report))
failures = []


def check(cond, message):
    print(("ok   " if cond else "FAIL ") + message)
    if not cond:
        failures.append(message)


time_metric = report["time_metric"]
check(time_metric == "gpu__time_duration.sum", f"time metric is gpu__time_duration.sum ({time_metric})")
for scope in report["scopes"]:
    regions = {r["path"]: r for r in scope["regions"]}
    check({"A", "A/A1", "B"} <= set(regions), f"regions A, A/A1, B present: {sorted(regions)}")
    for path in ("A", "A/A1", "B"):
        r = regions.get(path)
        if not r:
            continue
        check(r["kernel_count"] >= args.min_kernels, f"{path}: {r['kernel_count']} kernels >= {args.min_kernels}")
        for name in [time_metric, *args.expect_metric]:
            v = r["inclusive"].get(name, {}).get("value")
            vals = r["inclusive"].get(name, {}).get("values")
            check(v is not None or bool(vals), f"{path}: metric {name} populated ({v if v is not None else vals})")
    check(scope["outside_regions"]["kernel_count"] == 0,
          f"no kernel from outside the ranges ({scope['outside_regions']['kernel_count']})")
    if "A" in regions and "A/A1" in regions:
        a = regions["A"]["inclusive"][time_metric]["value"]
        a_self = regions["A"]["exclusive"][time_metric]["value"]
        a1 = regions["A/A1"]["inclusive"][time_metric]["value"]
        check(abs(a - (a_self + a1)) <= 0.01 * a, f"A inclusive {a:.0f} within 1% of self {a_self:.0f} + A/A1 {a1:.0f}")
sys.exit(1 if failures else 0)
