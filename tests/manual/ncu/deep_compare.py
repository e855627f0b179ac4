"""Compares in-process counters (a cupti-trace trace with `profiled`/`value` records) with ncu's full
replay of the same deterministic workload, per stratum (kernel name, grid, block, NVTX stack of the
launching thread) and per region. Results are matched by launch order: the workload launches the same
kernels in the same order in both runs (checked by name).
Usage: python3 deep_compare.py TRACE NCU_RAW_CSV [--json OUT.json]
Also prints what the trace holds for profiled launches (their kernel records and durations).
"""
import csv
import json
import statistics
import sys
from collections import defaultdict


def read_trace(path):
    t = {"names": [], "kernels": [], "api": {}, "ranges": [], "metrics": [], "profiled": {},
         "values": defaultdict(dict), "errors": [], "sets": []}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        tag = f[0]
        if tag == "name":
            t["names"].append(f[2])
        elif tag == "kernel":
            c, s, e = int(f[1]), int(f[2]), int(f[3])
            t["kernels"].append(dict(corr=c, start=s, end=e, grid=tuple(f[7:10]), block=tuple(f[10:13]),
                                     name=t["names"][int(f[16])]))
        elif tag == "api":
            t["api"][int(f[1])] = (int(f[2]), int(f[3]))
        elif tag == "range" and f[2] == "push-pop":
            t["ranges"].append((int(f[3]), int(f[4]), int(f[5]) if f[5] != "-" else 1 << 62, f[7]))
        elif tag == "metric":
            t["metrics"].append(f[2])
        elif tag == "profiled":
            t["profiled"][int(f[1])] = (int(f[2]), int(f[3]))
        elif tag == "value":
            t["values"][(int(f[1]), int(f[2]))][int(f[3])] = float(f[4])
        elif tag == "deep-error":
            t["errors"].append(f[1])
        elif tag == "deep-set":
            t["sets"].append(f[1:])
    # launch order and thread-scope region of each kernel
    for k in t["kernels"]:
        thread, at = t["api"].get(k["corr"], (None, k["start"]))
        k["launch"] = at
        open_ = [r for r in t["ranges"] if r[0] == thread and r[1] <= at < r[2]]
        open_.sort(key=lambda r: r[1])
        k["region"] = "/".join(r[3] for r in open_)
    t["kernels"].sort(key=lambda k: (k["launch"], k["corr"], k["start"]))
    return t


def read_ncu(path):
    rows = list(csv.reader(open(path)))
    head = rows[0]
    col = {h: i for i, h in enumerate(head)}
    out = []
    for r in rows[2:]:
        if len(r) != len(head):
            continue
        vals = {}
        for h, i in col.items():
            v = r[i].replace(",", "")
            try:
                vals[h] = float(v)
            except ValueError:
                vals[h] = r[i]
        out.append(vals)
    out.sort(key=lambda v: v.get("ID", 0))
    return out


def main():
    trace = read_trace(sys.argv[1])
    ncu = read_ncu(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    ks = trace["kernels"]
    metrics = trace["metrics"]
    print(f"trace: {len(ks)} kernels, {len(trace['profiled'])} profiled launches, sets {trace['sets']}, "
          f"{len(trace['errors'])} deep errors")
    for e in trace["errors"][:10]:
        print("  deep-error:", e)
    by_corr = defaultdict(list)
    for k in ks:
        by_corr[k["corr"]].append(k)
    missing = [c for c in trace["profiled"] if c not in by_corr]
    print(f"profiled launches with no kernel record of that correlation id: {len(missing)} of {len(trace['profiled'])}")
    prof = [k for k in ks if k["corr"] in trace["profiled"]]
    unprof = [k for k in ks if k["corr"] not in trace["profiled"]]
    dur = lambda k: k["end"] - k["start"]
    if prof:
        zero = sum(1 for k in prof if dur(k) <= 0)
        print(f"kernel records of profiled launches: {len(prof)}, with duration <= 0: {zero}; "
              f"first five (start, end): {[(k['start'], k['end']) for k in prof[:5]]}")
    costs = [c for _, c in trace["profiled"].values()]
    if costs:
        print(f"in-process cost per profiled launch: median {statistics.median(costs)/1e6:.1f} ms, "
              f"mean {statistics.mean(costs)/1e6:.1f} ms, n {len(costs)}")
    # strata
    strata = defaultdict(list)
    for i, k in enumerate(ks):
        strata[(k["name"], k["grid"], k["block"], k["region"])].append(i)
    # in-place durations from unprofiled twins
    report = {"strata": [], "regions": {}}
    if ncu is not None:
        print(f"ncu: {len(ncu)} results")
        if len(ncu) != len(ks):
            print(f"  kernel counts differ ({len(ncu)} ncu, {len(ks)} traced): comparing the shorter prefix")
        names_ok = sum(1 for k, n in zip(ks, ncu) if n.get("Kernel Name") == k["name"])
        print(f"  launch order match by mangled name: {names_ok} of {min(len(ks), len(ncu))}")
    print(f"{'region':40} {'kernel':30} {'n':>3} {'prof':>4} " + " ".join(f"{m[:28]:>28}" for m in metrics))
    region_acc = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))  # metric -> [inproc, ncu, weight]
    for key, idx in sorted(strata.items(), key=lambda kv: kv[0][3]):
        name, grid, block, region = key
        got = [trace["values"][(ks[i]["corr"], 0)] for i in idx if ks[i]["corr"] in trace["profiled"]]
        inproc = {m: statistics.mean(g[j] for g in got if j in g) for j, m in enumerate(metrics)
                  if any(j in g for g in got)} if got else {}
        ref = {}
        if ncu is not None:
            rows = [ncu[i] for i in idx if i < len(ncu)]
            for m in metrics:
                vs = [r[m] for r in rows if isinstance(r.get(m), float)]
                if vs:
                    ref[m] = statistics.mean(vs)
            w = sum(r.get("gpu__time_duration.sum", 0.0) for r in rows if isinstance(r.get("gpu__time_duration.sum"), float))
            for m in metrics:
                if m in inproc and m in ref:
                    acc = region_acc[region][m]
                    if m.endswith(".sum"):
                        acc[0] += inproc[m] * len(rows)
                        acc[1] += ref[m] * len(rows)
                    else:
                        acc[0] += inproc[m] * w
                        acc[1] += ref[m] * w
                        acc[2] += w
        row = {"region": region, "kernel": name, "grid": grid, "block": block, "launches": len(idx),
               "profiled": len(got), "in_process": inproc, "ncu": ref}
        report["strata"].append(row)
        cells = []
        for m in metrics:
            a, b = inproc.get(m), ref.get(m)
            cells.append(f"{'-' if a is None else f'{a:.4g}':>13}/{'-' if b is None else f'{b:.4g}':<14}")
        print(f"{region[-40:]:40} {name[:30]:30} {len(idx):>3} {len(got):>4} " + " ".join(cells))
    if ncu is not None:
        print("\nper region (percentages weighted by ncu's gpu__time_duration on both sides, .sum counters summed):")
        worst = {}
        for region, accs in sorted(region_acc.items()):
            parts = []
            out = {}
            for m, (a, b, w) in accs.items():
                if w:
                    a, b = a / w, b / w
                rel = (a - b) / b * 100 if b else 0.0
                pp = a - b
                ok = (abs(pp) <= 0.5) if ("pct" in m and b < 10) else (abs(rel) <= 3)
                out[m] = {"in_process": a, "ncu": b, "rel_pct": rel, "pp": pp, "ok": ok}
                parts.append(f"{m.split('.')[0]}: {a:.4g} vs {b:.4g} ({rel:+.1f}%{'' if ok else ' MISS'})")
                worst[m] = max(worst.get(m, 0.0), abs(rel))
            report["regions"][region or "(none)"] = out
            print(f"  {region or '(none)'}: " + "; ".join(parts))
        print("worst relative difference per metric over regions:", {m: round(v, 2) for m, v in worst.items()})
    if ncu is not None:
        window(trace, ks, ncu, strata)
    if "--json" in sys.argv:
        json.dump(report, open(sys.argv[sys.argv.index("--json") + 1], "w"), indent=1)


def window(trace, ks, ncu, strata):
    """Whether the engines count the same work over different windows: each profiled launch's
    replayed duration against ncu's of the same launch, and its SM throughput against ncu's raw,
    rescaled to ncu's duration, and rescaled to its unprofiled twins' mean in-place duration."""
    metrics = trace["metrics"]
    if "gpu__time_duration.sum" not in metrics:
        return
    at = {m: j for j, m in enumerate(metrics)}
    sm = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
    err = lambda a, b: abs(a / b - 1) * 100
    over, raw, by_ncu, by_twins = [], [], [], []
    for idx in strata.values():
        twins = [ks[i]["end"] - ks[i]["start"] for i in idx
                 if ks[i]["corr"] not in trace["profiled"] and ks[i]["end"] > ks[i]["start"]]
        for i in idx:
            got = trace["values"].get((ks[i]["corr"], 0))
            if got is None or i >= len(ncu) or not isinstance(ncu[i].get("gpu__time_duration.sum"), float):
                continue
            mine, theirs = got.get(at["gpu__time_duration.sum"]), ncu[i]["gpu__time_duration.sum"]
            if not mine or not theirs:
                continue
            over.append(mine - theirs)
            a, b = got.get(at.get(sm, -1)), ncu[i].get(sm)
            if a and isinstance(b, float) and b > 0:
                raw.append(err(a, b))
                by_ncu.append(err(a * mine / theirs, b))
                if twins:
                    by_twins.append(err(a * mine / statistics.mean(twins), b))
    if not over:
        return
    med = statistics.median
    print(f"\nwindow: replayed duration in process minus ncu's, median {med(over):.0f} ns over {len(over)} "
          f"profiled launches")
    if raw:
        print(f"  SM throughput off ncu's, median: {med(raw):.2f}% as measured; {med(by_ncu):.2f}% rescaled to "
              f"ncu's duration; " + (f"{med(by_twins):.2f}% rescaled to the twins' in-place duration"
                                      if by_twins else "no twins"))


if __name__ == "__main__":
    main()
