#!/usr/bin/env python3
"""Real Neuron profiles: every `neuron-profile view --output-format json` file of a local folder (the public
sweep docs/neuron.md names: 112 NKI matmul micro-benchmarks, profiler 2.27.33) through the release build.

Checks that each file gives exit 0 with its total time, tensor-engine active share and MFU within 1 % of its
own `summary` (seconds and 0-1 fractions there, ns and % in report.json), then times `profile-run report` on
one file of about 250 KB and on the whole folder (one scope per profile, the aggregate and the sweep chart).
The files carry no licence and are never part of the repository; without a folder it says so and exits 0.

    REAL_NEURON_PROFILES_DIR=DIR benches/neuron_real.py      # after cargo build --release
    benches/neuron_real.py DIR [PROFILE_RUN_BINARY]

Environment: RUNS (runs per timing, the median counts; default 5). docs/performance.md has the results.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHECKED = [("total_time", 1e9), ("tensor_engine_active_time_percent", 100.0), ("mfu_estimated_percent", 100.0)]


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("REAL_NEURON_PROFILES_DIR", "")
    if not folder or not os.path.isdir(folder):
        print("no folder of real profiles (REAL_NEURON_PROFILES_DIR or an argument): skipped")
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "target/release/profile-run")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json"))
    runs = int(os.environ.get("RUNS", "5"))
    failures = []
    with tempfile.TemporaryDirectory() as work:
        worst = 0.0
        for n, path in enumerate(files):
            out = os.path.join(work, f"r{n}")
            done = subprocess.run([binary, "report", path, "--out", out], capture_output=True, text=True)
            if done.returncode != 0:
                failures.append(f"{path}: exit {done.returncode}: {done.stderr.strip()}")
                continue
            with open(path) as f:
                summary = json.load(f)["summary"][0]
            with open(os.path.join(out, "report.json")) as f:
                totals = json.load(f)["scopes"][0]["total"]["metrics"]
            for name, factor in CHECKED:
                want, got = summary[name] * factor, totals[name]["value"]
                apart = abs(got - want) / abs(want) if want else abs(got)
                worst = max(worst, apart)
                if apart > 0.01:
                    failures.append(f"{path}: {name} {got} against the summary's {want}")
        print(f"{len(files)} profiles read, {len(files) - len(failures)} with exit 0 and totals within 1 % "
              f"of their summary (largest difference {worst:.2e})")

        def timed(args):
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                subprocess.run([binary, "report", *args, "--out", os.path.join(work, "t"), "--force"],
                               check=True, capture_output=True)
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        one = min(files, key=lambda p: abs(os.path.getsize(p) - 250_000))
        print(f"one profile ({os.path.getsize(one) / 1000:.0f} KB): median {timed([one]):.3f} s over {runs} runs")
        print(f"all {len(files)} (report DIR): median {timed([folder]):.3f} s over {runs} runs")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
