#!/usr/bin/env python3
"""What a sampled run's deep pass cost, from its run directory (run.json, report.json).

  sampled_adaptive_bar.py FIXED_RUN ADAPTIVE_RUN
      Issue 32's bar for adaptive samples in one deep pass: the adaptive run's deep pass may cost
      the fixed run's (one sample per key) plus its extra results at the fixed run's cost per result,
      plus at most 10%. The cost per result is the fixed deep pass less its first pass (the same
      workload run unprofiled: start-up and steps) over the results it took.
  sampled_adaptive_bar.py --full-set RUN
      Full replay of every kernel RUN launched, estimated from RUN's own deep pass: its first pass
      (the workload unprofiled) plus every kernel at the deep pass's cost per result; against RUN's
      whole wall time.
"""
import json
import sys
from datetime import datetime
from pathlib import Path


def moment(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def passes(run):
    """(first pass seconds, deep pass seconds, deep results, kernels, whole seconds) of one run."""
    record = json.loads((run / "run.json").read_text())
    report = json.loads((run / "report.json").read_text())
    start, first_end = moment(record["started"]), moment(record["finished"])
    workers = record.get("deep_workers") or [record["deep_pass"]]
    deep_end = max(moment(w["finished"]) for w in workers if w.get("finished"))
    scope = report.get("aggregate") or report["scopes"][0]
    whole = (run / "report.json").stat().st_mtime - start
    return (first_end - start, deep_end - first_end, report["sampling"]["deep_results"],
            scope["total"]["kernel_count"], whole)


def main(args):
    if args[:1] == ["--full-set"]:
        first, deep, results, kernels, whole = passes(Path(args[1]))
        per_result = (deep - first) / results
        estimate = first + kernels * per_result
        print(f"  full set: deep pass {deep:.1f} s for {results} results, first pass {first:.1f} s: "
              f"{per_result:.2f} s per result; {kernels} kernels: full replay about {estimate:.0f} s "
              f"against {whole:.1f} s sampled ({estimate / whole:.0f}x)")
        return 0
    fixed, adaptive = (passes(Path(a)) for a in args[:2])
    per_result = (fixed[1] - fixed[0]) / fixed[2]
    extra = adaptive[2] - fixed[2]
    allowed = (fixed[1] + extra * per_result) * 1.10
    verdict = "meets" if adaptive[1] <= allowed else "misses"
    print(f"  adaptive deep pass {adaptive[1]:.1f} s ({adaptive[2]} results) against the fixed one's "
          f"{fixed[1]:.1f} s ({fixed[2]} results) + {extra} extra x {per_result:.2f} s, +10% = "
          f"{allowed:.1f} s: {verdict} the bar (whole runs {adaptive[4]:.1f} s and {fixed[4]:.1f} s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, KeyError, IndexError, ZeroDivisionError) as e:
        sys.exit(f"  not available: {e}")
