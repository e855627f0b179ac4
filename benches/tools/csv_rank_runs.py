#!/usr/bin/env python3
"""Synthetic per-rank CSV-export run directories for the merge benchmark (benches/merge.sh --csv),
made from the real per-rank runs of tests/fixtures/ncu/h200x2-2025.3.1 (one profile-run per rank
under ncu, `ddp_rank0` and `ddp_rank1`).

    csv_rank_runs.py SOURCE OUT RANKS

SOURCE is that fixture directory. OUT gets RANKS run directories `rank0 … rank<RANKS-1>`, each with
an `export_raw.csv` and a `run.json`: rank N takes real rank N % 2's export with its own process id
(100000 + N, in the process column and in the push/pop cell), device N % 8 and every kernel's
`gpu__time_duration.sum` scaled by a factor drawn per rank in [0.92, 1.0), so that no two ranks are
byte copies of each other (merge refuses a copy); its `run.json` is the real rank's with the rank and
world size of where it stands.
"""

import csv
import io
import json
import os
import sys

TIME = "gpu__time_duration.sum"


def load(source, rank):
    with open(os.path.join(source, f"ddp_rank{rank}_raw.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    with open(os.path.join(source, f"ddp_rank{rank}.run.json"), encoding="utf-8") as f:
        record = json.load(f)
    return rows, record


def rank_export(rows, pid, device, factor):
    header = rows[0]
    pid_col, dev_col, time_col = (header.index(n) for n in ("Process ID", "Device", TIME))
    push_pop = next(i for i, h in enumerate(header) if "Push/Pop_Range" in h)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    writer.writerow(rows[1])  # units
    for row in rows[2:]:
        row = list(row)
        old = row[pid_col]
        row[pid_col] = str(pid)
        row[dev_col] = str(device)
        row[push_pop] = row[push_pop].replace(old, str(pid), 1)
        row[time_col] = str(int(int(row[time_col].replace(",", "")) * factor))
        writer.writerow(row)
    return out.getvalue()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source, out_dir, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    real = [load(source, r) for r in (0, 1)]
    for rank in range(ranks):
        rows, record = real[rank % 2]
        # A multiplicative hash spreads the factors over [0.92, 1.0) without a random seed to keep.
        factor = 1.0 - 0.08 * ((rank * 2654435761) % 1000) / 1000
        rank_dir = os.path.join(out_dir, f"rank{rank}")
        os.makedirs(rank_dir, exist_ok=True)
        with open(os.path.join(rank_dir, "export_raw.csv"), "w", encoding="utf-8") as f:
            f.write(rank_export(rows, 100000 + rank, rank % 8, factor))
        record = dict(record)
        record["rank"] = {"rank": rank, "source": "RANK", "world_size": ranks}
        with open(os.path.join(rank_dir, "run.json"), "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)


if __name__ == "__main__":
    main()
