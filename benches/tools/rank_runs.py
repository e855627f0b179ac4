#!/usr/bin/env python3
"""Synthetic rank run directories for the merge benchmark (benches/merge.sh), made from real ones.

    rank_runs.py SOURCE OUT RANKS STRAGGLER

SOURCE is a directory of real per-rank run directories (`rank<N>/` with `run.json`, `config.yaml`,
`command.txt` and `trace/cupti.<pid>.trace.gz`, as one profile-run per rank under torchrun leaves
them; tests/fixtures/ncu/h200x4-cupti-straggle/ddp-per-rank/ by default in merge.sh), whose
`run.json` of rank STRAGGLER's source records the straggler. OUT gets RANKS run directories
`rank0 … rank<RANKS-1>`: rank STRAGGLER copies the real straggler's trace, every other rank one of the
real other ranks' traces in turn, with its compute kernels shortened by up to 8 % (a factor drawn per
rank) so that no two ranks time alike, while collectives keep their real starts and ends, as ranks
that wait for the same straggler do. Each rank has its own process id and a `run.json` whose rank
and world size say where it stands.
"""

import gzip
import json
import os
import shutil
import sys


def load(rank_dir):
    """A real rank's run: its record, its trace's lines and the names of its collectives."""
    trace_dir = os.path.join(rank_dir, "trace")
    [trace] = [f for f in os.listdir(trace_dir) if f.endswith(".trace.gz")]
    with gzip.open(os.path.join(trace_dir, trace), "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    collectives = set()
    for line in lines:
        if line.startswith("name\t"):
            _, index, name = line.split("\t", 2)
            if "nccl" in name.lower():
                collectives.add(index)
    with open(os.path.join(rank_dir, "run.json"), encoding="utf-8") as f:
        record = json.load(f)
    return {"dir": rank_dir, "lines": lines, "collectives": collectives, "record": record}


def rank_trace(source, pid, factor):
    """`source`'s trace as process `pid`, compute kernels shortened by `factor`."""
    out = []
    for line in source["lines"]:
        if line.startswith("kernel\t"):
            fields = line.split("\t")
            if fields[-1] not in source["collectives"]:
                start, end = int(fields[2]), int(fields[3])
                fields[3] = str(start + int((end - start) * factor))
                line = "\t".join(fields)
        elif line.startswith("process\t"):
            fields = line.split("\t")
            fields[1] = str(pid)
            line = "\t".join(fields)
        out.append(line)
    return "\n".join(out)


def write_rank(out_dir, rank, world, source, factor):
    rank_dir = os.path.join(out_dir, f"rank{rank}")
    os.makedirs(os.path.join(rank_dir, "trace"), exist_ok=True)
    pid = 100000 + rank
    text = rank_trace(source, pid, factor)
    with gzip.open(os.path.join(rank_dir, "trace", f"cupti.{pid}.trace.gz"), "wt",
                   encoding="utf-8", compresslevel=1) as f:
        f.write(text)
    record = dict(source["record"])
    record["rank"] = {"rank": rank, "source": "RANK", "world_size": world}
    with open(os.path.join(rank_dir, "run.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2)
    for name in ("config.yaml", "command.txt"):
        shutil.copyfile(os.path.join(source["dir"], name), os.path.join(rank_dir, name))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    source_dir, out_dir, ranks, straggler = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    runs = sorted(
        (os.path.join(source_dir, d) for d in os.listdir(source_dir) if d.startswith("rank")),
        key=lambda d: int(os.path.basename(d)[len("rank"):]),
    )
    real = [load(d) for d in runs]
    [slow] = [r for r in real if r["record"]["rank"]["rank"] == real_straggler(source_dir)]
    even = [r for r in real if r is not slow]
    for rank in range(ranks):
        if rank == straggler:
            write_rank(out_dir, rank, ranks, slow, 1.0)
            continue
        # A multiplicative hash spreads the factors over [0.92, 1.0) without a random seed to keep.
        factor = 1.0 - 0.08 * ((rank * 2654435761) % 1000) / 1000
        write_rank(out_dir, rank, ranks, even[rank % len(even)], factor)


def real_straggler(source_dir):
    """The straggler the real run recorded (`delays.jsonl`: the rank with injected delays)."""
    with open(os.path.join(source_dir, "delays.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["delay_ms"]:
                return row["rank"]
    sys.exit(f"{source_dir}/delays.jsonl names no rank with injected delays")


if __name__ == "__main__":
    main()
