#!/usr/bin/env python3
"""pandas baseline for benches/run.sh: the same work as `profile-run report` on a `--page raw` export.

Reads the columns the default preset needs (scope columns, NVTX push/pop cell, kernel name, time and
the speed-of-light / launch metrics), groups by (process, device, NVTX stack, kernel), then rolls the
groups up into every region on the stack (inclusive) and writes a JSON summary.
Usage: pandas_baseline.py EXPORT.csv OUT.json
"""
import json
import sys

import pandas as pd

TIME = "gpu__time_duration.sum"
MEANS = [
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
]
MAXES = ["gpc__cycles_elapsed.max"]
SUMS = ["sm__cycles_active.avg"]
NVTX = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
KEYS = ["Process ID", "Host Name", "Device", NVTX, "Kernel Name"]


def stack(cell):
    """`TID  "<dom>:<name>:…"  "…" ` -> ["name", "dom@name", …]."""
    out = []
    for entry in str(cell).split('"')[1::2]:
        fields = entry.split(":")
        dom, name = fields[0], ":".join(fields[1:-6])
        out.append(name if dom == "<default domain>" else f"{dom}@{name}")
    return tuple(out)


def main(path, out):
    wanted = set(KEYS + [TIME] + MEANS + MAXES + SUMS)
    df = pd.read_csv(
        path,
        usecols=lambda c: c in wanted,
        skiprows=[1],
        thousands=",",
        dtype={NVTX: "string", "Kernel Name": "string", "Process ID": "string",
               "Host Name": "string", "Device": "string"},
        keep_default_na=False,
        na_values=["n/a", ""],
    )
    for col in MEANS:
        df[col] = df[col] * df[TIME]
    agg = {TIME: "sum", **{c: "sum" for c in MEANS + SUMS}, **{c: "max" for c in MAXES}}
    groups = df.groupby(KEYS, sort=False, dropna=False).agg(agg)
    groups["count"] = df.groupby(KEYS, sort=False, dropna=False).size()
    regions = {}
    for key, row in groups.iterrows():
        pid, host, dev, cell, _kernel = key
        segments = stack(cell) if isinstance(cell, str) else ()
        for depth in range(1, len(segments) + 1):
            r = regions.setdefault((pid, host, dev, "/".join(segments[:depth])),
                                   {"count": 0, TIME: 0.0, **{c: 0.0 for c in MEANS}})
            r["count"] += int(row["count"])
            r[TIME] += float(row[TIME])
            for c in MEANS:
                r[c] += float(row[c])
    result = []
    for (pid, host, dev, name), r in regions.items():
        t = r[TIME] or 1.0
        result.append({"scope": [pid, host, dev], "region": name, "count": r["count"],
                       "time": r[TIME], **{c: r[c] / t for c in MEANS}})
    with open(out, "w") as f:
        json.dump({"results": len(df), "regions": result}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
