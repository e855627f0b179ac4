#!/usr/bin/env python3
"""Pass times of sampled runs from their run.json, and the ratio of two sides' median wall times.

    benches/sampled_speedup.py WORK FAST_RUN... -- BASELINE_RUN...

WORK holds one directory per run (WORK/NAME/run/run.json). A run's first pass (the trace or ncu's
timing pass) lasts from `started` to `finished`, its deep pass from there to `deep_pass.finished`,
a top-up pass from there to `topup_pass.finished`; wall is the first pass's start to the last pass's
end, so reading and rendering are left out (they cost both sides the same).
"""
import json
import statistics
import sys
from datetime import datetime
from pathlib import Path


def moment(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def passes(run_dir):
    record = json.loads((run_dir / "run.json").read_text())
    marks = [("first", record["finished"])]
    for key in ("deep_pass", "topup_pass"):
        if record.get(key):
            marks.append((key.split("_")[0], record[key]["finished"]))
    times, start = {}, moment(record["started"])
    for name, end in marks:
        times[name] = moment(end) - start
        start = moment(end)
    return times, sum(times.values())


def side(work, names):
    walls = []
    for name in names:
        times, wall = passes(Path(work) / name / "run")
        walls.append(wall)
        shown = ", ".join(f"{k} {v:.1f} s" for k, v in times.items())
        print(f"{name:<20} {wall:7.1f} s  ({shown})")
    return statistics.median(walls)


def main():
    work, rest = sys.argv[1], sys.argv[2:]
    split = rest.index("--")
    fast = side(work, rest[:split])
    base = side(work, rest[split + 1 :])
    print(f"median {fast:.1f} s against {base:.1f} s: {base / fast:.2f}x")


if __name__ == "__main__":
    main()
