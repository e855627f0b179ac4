#!/usr/bin/env python3
"""A sampled run's report.json held against the full run's, region by region (docs/performance.md).

For every region of the aggregate (or the only scope): the time, and every other metric of the full
run with a numeric value, as the relative deviation of the sampled value from the full one. Prints a
Markdown table (one row per region: time deviation, largest metric deviation and its metric, coverage)
and exits 1 when a region misses the bar: a metric more than --bar percent off (the time metric is
compared apart, since it differs between any two runs), or any unmatched time.

    benches/sampled_accuracy.py FULL/report.json SAMPLED/report.json [--bar 5] [--all]

With --intervals it measures the sampled run's 95% intervals instead (docs/attribution.md,
"Intervals"): over every (region, metric) pair with an `interval95` whose full value exists, how often
the full value lies inside, the median half-width and median deviation (relative), and the misses;
exits 1 below --coverage percent (default 90).
"""
import argparse
import json
import sys


def scope_of(report):
    return report["aggregate"] or report["scopes"][0]


def intervals(full, sampled, bar):
    full_regions = {r["path"]: r for r in scope_of(full)["regions"]}
    inside, widths, devs, misses = 0, [], [], []
    for region in scope_of(sampled)["regions"]:
        twin = full_regions.get(region["path"])
        if twin is None:
            continue
        for name, value in region["inclusive"].items():
            interval = value.get("interval95")
            # A trace-timed run keeps the deep pass's own duration as serialized__<time metric>,
            # which full replay measured as the time metric itself.
            full_name = name[len("serialized__"):] if name.startswith("serialized__") else name
            ref = twin["inclusive"].get(full_name, {}).get("value")
            mine = value.get("value")
            if interval is None or ref is None or mine in (None, 0):
                continue
            lo, hi = interval
            if lo <= ref <= hi:
                inside += 1
            else:
                misses.append(f"{region['path']} {name}: full {ref:.6g} not in [{lo:.6g}, {hi:.6g}]")
            widths.append(100.0 * (hi - lo) / 2 / abs(mine))
            devs.append(100.0 * abs(mine / ref - 1.0) if ref else 0.0)
    n = len(widths)
    if n == 0:
        print("no interval to compare")
        return 1
    median = lambda v: sorted(v)[len(v) // 2]
    print(f"{inside} of {n} (region, metric) pairs inside ({100 * inside / n:.1f}%); median half-width "
          f"{median(widths):.2f}%, median deviation {median(devs):.2f}%, largest {max(devs):.2f}%")
    for m in misses:
        print("  miss:", m)
    return 0 if 100 * inside >= bar * n else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("full")
    ap.add_argument("sampled")
    ap.add_argument("--bar", type=float, default=5.0, help="largest relative deviation allowed, in percent")
    ap.add_argument("--all", action="store_true", help="print every metric of every region")
    ap.add_argument("--intervals", action="store_true", help="measure the 95%% intervals' coverage")
    ap.add_argument("--coverage", type=float, default=90.0, help="with --intervals: the bar, in percent")
    args = ap.parse_args()
    full = json.load(open(args.full))
    sampled = json.load(open(args.sampled))
    if args.intervals:
        return intervals(full, sampled, args.coverage)
    time_metric = full["time_metric"]
    full_regions = {r["path"]: r for r in scope_of(full)["regions"]}
    rows, failed = [], []
    for region in scope_of(sampled)["regions"]:
        twin = full_regions.get(region["path"])
        if twin is None:
            failed.append(f"{region['path']}: not in the full run")
            continue
        worst = (0.0, "-")
        time_dev = None
        for name, value in region["inclusive"].items():
            # A trace-timed run keeps the deep pass's own duration as serialized__<time metric>,
            # which full replay measured as the time metric itself.
            full_name = name[len("serialized__"):] if name.startswith("serialized__") else name
            ref = twin["inclusive"].get(full_name, {}).get("value")
            mine = value.get("value")
            if ref in (None, 0) or mine is None:
                continue
            dev = 100.0 * (mine / ref - 1.0)
            if args.all:
                print(f"  {region['path']:40} {name:70} {mine:14.6g} {ref:14.6g} {dev:+7.2f}%")
            if name == time_metric:
                time_dev = dev
            elif abs(dev) > abs(worst[0]):
                worst = (dev, name)
        coverage = region.get("coverage") or {}
        unmatched = coverage.get("unmatched_time_share", 0.0)
        rows.append((region["path"], region["kernel_count"], twin["kernel_count"], time_dev, worst,
                     coverage.get("measured_time_share"), coverage.get("estimated_time_share"), unmatched))
        if abs(worst[0]) > args.bar:
            failed.append(f"{region['path']}: {worst[1]} {worst[0]:+.2f}%")
        if unmatched > 0:
            failed.append(f"{region['path']}: {100 * unmatched:.2f}% of the time unmatched")
    print("| region | results (sampled / full) | time Δ | largest metric Δ | metric | measured | estimated | unmatched |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    pct = lambda v: "—" if v is None else f"{100 * v:.1f}%"
    for path, n, m, time_dev, (dev, name), measured, estimated, unmatched in rows:
        tdev = "—" if time_dev is None else f"{time_dev:+.2f}%"
        print(f"| `{path}` | {n} / {m} | {tdev} | {dev:+.2f}% | `{name}` | {pct(measured)} | {pct(estimated)} | {pct(unmatched)} |")
    if failed:
        print("\nmisses the bar:\n  " + "\n  ".join(failed))
        return 1
    print(f"\nevery region within {args.bar}% on every metric, no unmatched time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
