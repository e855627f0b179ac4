#!/usr/bin/env python3
"""The Python half of benches/imported.sh: makes the benchmark's Kineto traces from a committed one,
runs HTA's per-annotation kernel breakdown, and compares it with profile-run's report.json.

  imported_hta.py make SRC OUT FACTOR   # SRC's steps FACTOR times over, as plain JSON in OUT
  imported_hta.py hta DIR OUT           # HTA: GPU kernel time (ns) per leaf GPU annotation -> OUT
  imported_hta.py leaves TRACE OUT      # the same attribution as HTA's, in plain Python -> OUT
  imported_hta.py ours REPORT OUT       # profile-run: self GPU time (ns) per leaf region -> OUT
  imported_hta.py compare A B           # the two agree within 0.1 % on every annotation?

`make` gives every CPU `user_annotation` the `gpu_user_annotation` Kineto writes when CUPTI's
range tracking is on (the span of the kernels it launched, on each stream they ran on), because
HTA attributes kernels only to GPU-side annotations and the committed traces predate them. Each
copy is shifted past the previous one's end, with fresh correlation and external ids. Where two
annotations cover the same kernels of a stream, only the inner one is written (equal spans leave the
leaf to chance in both tools).
"""

import gzip
import json
import sys
from collections import defaultdict


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def gpu_annotations(events):
    """One `gpu_user_annotation` per (CPU annotation, stream its kernels ran on)."""
    launches = defaultdict(list)  # (pid, tid) -> [(ts, correlation)]
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                launches[(e["pid"], e["tid"])].append((e["ts"], corr))
    kernels = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels[e["args"]["correlation"]] = e
    spans_of = {}  # (stream, span) -> the CPU annotation it is kept for
    for a in events:
        if a.get("ph") != "X" or a.get("cat") != "user_annotation":
            continue
        spans = {}
        for ts, corr in launches.get((a["pid"], a["tid"]), ()):
            k = kernels.get(corr)
            if k is None or not a["ts"] <= ts < a["ts"] + a["dur"]:
                continue
            key = (k["pid"], k["tid"])
            lo, hi = spans.get(key, (k["ts"], k["ts"] + k["dur"]))
            spans[key] = (min(lo, k["ts"]), max(hi, k["ts"] + k["dur"]))
        for (pid, tid), (lo, hi) in spans.items():
            # Two annotations over the same kernels of a stream give equal spans, and neither tool
            # can tell which is the leaf: only the inner one (it started later on the CPU) is kept.
            key = (pid, tid, lo, hi)
            kept = spans_of.get(key)
            if kept is None or (a["ts"], -a["dur"]) > (kept["ts"], -kept["dur"]):
                spans_of[key] = a
    return [{"ph": "X", "cat": "gpu_user_annotation", "name": a["name"],
             "pid": pid, "tid": tid, "ts": lo, "dur": hi - lo}
            for (pid, tid, lo, hi), a in spans_of.items()]


def make(src, out, factor):
    doc = load(src)
    events = doc["traceEvents"]
    if not any(e.get("cat") == "gpu_user_annotation" for e in events):
        events = events + gpu_annotations(events)
    timed = [e for e in events if "ts" in e]
    first = min(e["ts"] for e in timed)
    last = max(e["ts"] + e.get("dur", 0) for e in timed)
    shift = int(last - first) + 1000
    ids = [e["args"][key] for e in events for key in ("correlation", "External id")
           if isinstance(e.get("args", {}).get(key), int)]
    id_shift = max(ids, default=0) + 1
    with open(out, "w") as f:
        head = {k: v for k, v in doc.items() if k != "traceEvents"}
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        written = 0
        for copy in range(factor):
            for e in events:
                e = dict(e)
                if "ts" in e and e.get("ph") != "M":
                    e["ts"] = e["ts"] + copy * shift
                args = e.get("args")
                if isinstance(args, dict):
                    args = dict(args)
                    for key in ("correlation", "External id"):
                        if isinstance(args.get(key), int) and args[key] > 0:
                            args[key] += copy * id_shift
                    e["args"] = args
                if copy > 0 and e.get("ph") == "M":
                    continue
                f.write((",\n" if written else "") + json.dumps(e))
                written += 1
        f.write("\n]}\n")


def hta(trace_dir, out):
    import logging
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis

    # Every step: by default HTA sets the last ProfilerStep aside, which profile-run does not.
    analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    sums = defaultdict(float)
    for rank in analysis.t.traces:
        df = analysis.get_gpu_kernels_with_user_annotations(rank=rank, shortern_names=False)
        # Kernels only: profile-run's regions time kernels, HTA's breakdown also counts memcpy/memset.
        kernel = analysis.t.symbol_table.get_sym_id_map()["kernel"]
        df = df[(df["cat"] == kernel) & (df["user_annotation"] >= 0)]
        for name, dur in df.groupby("s_user_annotation")["dur"].sum().items():
            sums[name] += float(dur) * 1000.0  # HTA's µs, as ns
    with open(out, "w") as f:
        json.dump(sums, f, indent=1, sort_keys=True)


def leaves(trace, out):
    """HTA's attribution without HTA (for the smoke run): each kernel's time to the shortest GPU
    annotation of its stream that it overlaps."""
    events = load(trace)["traceEvents"]
    spans = defaultdict(list)
    for a in events:
        if a.get("ph") == "X" and a.get("cat") == "gpu_user_annotation":
            spans[(a["pid"], a["tid"])].append(a)
    sums = defaultdict(float)
    for k in events:
        if k.get("ph") != "X" or k.get("cat") != "kernel":
            continue
        over = [a for a in spans[(k["pid"], k["tid"])]
                if a["ts"] < k["ts"] + k["dur"] and k["ts"] < a["ts"] + a["dur"]]
        if over:
            sums[min(over, key=lambda a: a["dur"])["name"]] += k["dur"] * 1000.0
    with open(out, "w") as f:
        json.dump(sums, f, indent=1, sort_keys=True)


def ours(report, out):
    doc = load(report)
    sums = defaultdict(float)
    for scope in doc["scopes"]:
        for region in scope["regions"]:
            own = region["exclusive"]["gpu__time_duration.sum"]["value"] or 0.0
            if own > 0:
                sums[region["segments"][-1]] += own
    with open(out, "w") as f:
        json.dump(sums, f, indent=1, sort_keys=True)


def compare(a_path, b_path):
    a, b = load(a_path), load(b_path)
    worst, worst_name = 0.0, None
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name, 0.0), b.get(name, 0.0)
        off = abs(x - y) / max(abs(y), 1.0)
        if off > worst:
            worst, worst_name = off, name
    total_a, total_b = sum(a.values()), sum(b.values())
    agree = worst <= 1e-3 and set(a) == set(b)
    print(f"{len(a)} {len(b)} {worst * 100:.4f} {'agree' if agree else 'DIFFER'} "
          f"{total_a:.0f} {total_b:.0f} {worst_name or '-'}")
    return 0 if agree else 1


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "make":
        make(rest[0], rest[1], int(rest[2]))
    elif cmd == "hta":
        hta(rest[0], rest[1])
    elif cmd == "leaves":
        leaves(rest[0], rest[1])
    elif cmd == "ours":
        ours(rest[0], rest[1])
    elif cmd == "compare":
        sys.exit(compare(rest[0], rest[1]))
    else:
        sys.exit(f"unknown command {cmd}")
