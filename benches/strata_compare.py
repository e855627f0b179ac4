#!/usr/bin/env python3
"""A sampled report against full replay of the same regions, as issue-grade bounds read them.

    benches/strata_compare.py SAMPLED_REPORT_JSON FULL (report.json, or a capture and BIN to render it)

Per region of the first scope: kernel counts, each deep metric's relative error against full replay
(percentages under 10% by their difference in percentage points), whether full replay lies inside the
95% interval, and the interval's half-width. Prints the worst region lines and a summary line.
"""
import json
import os
import subprocess
import sys
import tempfile


def load(path, bin_=None):
    if path.endswith(".json"):
        return json.load(open(path))
    out = tempfile.mkdtemp()
    subprocess.run([bin_, "-q", "report", path, "--out", out], check=True)
    return json.load(open(os.path.join(out, "report.json")))


def main():
    sampled = load(sys.argv[1])
    full = load(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "profile-run")
    regions = lambda r: {x["path"]: x for x in r["scopes"][0]["regions"]}
    s_regions, f_regions = regions(sampled), regions(full)
    deep = set(sampled["sampling"]["deep_metrics"])
    worst_rel, worst_pp, counts_equal = 0.0, 0.0, True
    inside = compared = 0
    half_widths, lines = [], []
    for path, region in s_regions.items():
        twin = f_regions.get(path)
        if twin is None:
            lines.append((1e9, f"{path}: not in full replay"))
            continue
        counts_equal &= region["kernel_count"] == twin["kernel_count"]
        for metric, value in region["inclusive"].items():
            if metric not in deep or metric.startswith("serialized__"):
                continue
            f = twin["inclusive"].get(metric, {}).get("value")
            s = value.get("value")
            if not isinstance(f, (int, float)) or not isinstance(s, (int, float)) or f == 0:
                continue
            if value.get("unit") == "%" and abs(f) < 10:
                pp = abs(s - f)
                worst_pp = max(worst_pp, pp)
                lines.append((pp * 10, f"{path} {metric}: {s:.3f} vs {f:.3f} ({pp:.2f} pp)"))
            else:
                rel = abs(s / f - 1) * 100
                worst_rel = max(worst_rel, rel)
                lines.append((rel, f"{path} {metric}: {s:.4g} vs {f:.4g} ({rel:.2f}%)"))
            interval = value.get("interval95")
            if interval:
                compared += 1
                inside += interval[0] <= f <= interval[1]
                if s:
                    half_widths.append((interval[1] - interval[0]) / 2 / abs(s) * 100)
    for _, line in sorted(lines, reverse=True)[:8]:
        print("  " + line)
    half_widths.sort()
    median = half_widths[len(half_widths) // 2] if half_widths else float("nan")
    print(
        f"worst {worst_rel:.2f}% (≥10% values), {worst_pp:.2f} pp (<10%); kernel counts equal: {counts_equal}; "
        f"intervals hold {inside}/{compared}; median half-width {median:.2f}%; "
        f"stratified keys {sampled['sampling'].get('stratified_keys', 0)}, "
        f"deep results {sampled['sampling']['deep_results']}"
    )


main()
