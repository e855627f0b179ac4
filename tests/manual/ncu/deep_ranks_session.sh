#!/usr/bin/env bash
# The deep pass on one rank per group against the deep pass on every rank (docs/running.md, "Deep
# metrics on one rank per group"), on every GPU of one host: Hugging Face GPT-2
# (tests/manual/ncu/gpt2_step.py) under torchrun with DDP and with FSDP, one profile-run
# --config ncu/distributed --config ncu/sampled around torchrun (timing: trace, clock control none as
# the preset sets it), once with pipeline.ncu.sampling.deep_ranks=signature and once with
# deep_ranks=all. Writes into $OUT:
#   deep_ranks.tsv       label, exit code, wall seconds of each run (and of an unprofiled run);
#   deep_values.tsv      per mode, scope and region: each deep metric under signature and under all,
#                        side by side, with the relative difference;
#   deep_ranks.txt       each run's deep_ranks record (run.json), --devices and sampling.ranks;
#   runs.tar.gz          the run directories (report.md, report.json, run.json, logs; traces kept).
# Progress lines go to stdout as it goes.
# With deep_ranks=all the ranks take turns (one launch of the job per rank), so `all` costs about
# world size times one rank's deep pass: on 4 × H200 at LAYERS=4 STEPS=3 one mode takes about 400 s,
# so run one mode per 10-minute command.
#   BIN=path/to/profile-run (libcupti_trace.so beside it) [MODES="ddp fsdp"] [LAYERS=4 STEPS=3] \
#     tests/manual/ncu/deep_ranks_session.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="$(realpath "${BIN:?set BIN to profile-run}")"
out="$(realpath "${OUT:-.}")"
work="${WORK:-/tmp/deep-ranks-session}"
here="$(cd "$(dirname "$0")" && pwd)"
n=$(nvidia-smi -L | wc -l)
layers="${LAYERS:-4}" steps="${STEPS:-3}"
rm -rf "$work"
mkdir -p "$work" "$out"
: > "$out/deep_ranks.tsv"
port=29700
now() { date +%s.%N; }
# timed LABEL CMD...: one run's wall seconds, appended to $out/deep_ranks.tsv
timed() {
  local label="$1"; shift
  echo "--- $(date -u +%H:%M:%S) $label: starting"
  local t0; t0=$(now)
  timeout 580 "$@" >"$work/$label.out" 2>&1
  local rc=$?
  local s; s=$(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$t0")
  printf '%s\t%s\t%s\n' "$label" "$rc" "$s" | tee -a "$out/deep_ranks.tsv"
  [ "$rc" = 0 ] || tail -5 "$work/$label.out"
}
echo "=== $n GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
for mode in ${MODES:-ddp fsdp}; do
  export MODE=$mode STEPS=$steps STRAGGLE=
  args=("$here/gpt2_step.py" "$layers" "$steps")
  port=$((port + 1))
  timed "gpt2-$mode-unprofiled" torchrun --nproc_per_node "$n" --master_port "$port" "${args[@]}"
  for deep in signature all; do
    port=$((port + 1))
    timed "gpt2-$mode-$deep" "$bin" -q --config ncu/distributed --config ncu/sampled \
      pipeline.ncu.timing=trace pipeline.ncu.ncu_cli.clock_control=none \
      "pipeline.ncu.sampling.deep_ranks=$deep" 'regions.include=[train_step]' \
      'report.outputs=[md, json]' output.root="$work/runs" output.run_name="gpt2-$mode-$deep" \
      -- torchrun --nproc_per_node "$n" --master_port "$port" "${args[@]}"
  done
done
echo "--- $(date -u +%H:%M:%S) comparing deep values"
python3 - "$work/runs" "$out" <<'PY'
import json, os, sys
runs, out = sys.argv[1], sys.argv[2]
def load(name, file):
    path = os.path.join(runs, name, file)
    return json.load(open(path)) if os.path.exists(path) else None
rows, notes = [], []
modes = sorted({d.rsplit("-", 1)[0] for d in os.listdir(runs)})
for mode in modes:
    one, every = load(f"{mode}-signature", "report.json"), load(f"{mode}-all", "report.json")
    for deep in ("signature", "all"):
        record = load(f"{mode}-{deep}", "run.json") or {}
        report = load(f"{mode}-{deep}", "report.json") or {}
        command = (record.get("deep_pass") or {}).get("command", [])
        devices = command[command.index("--devices") + 1] if "--devices" in command else "(all)"
        notes.append(f"{mode}-{deep}: deep_ranks {json.dumps(record.get('deep_ranks'))}; --devices {devices}")
        for r in (report.get("sampling") or {}).get("ranks", []):
            notes.append(f"  rank {r['rank']}: deep pass {'ran' if r['deep_rank'] else 'unprofiled'}, "
                         f"on itself {r['on_itself_share']:.3f}, from another rank {r['on_another_rank_share']:.3f}, "
                         f"none {r['none_share']:.3f}")
    if not one or not every:
        notes.append(f"{mode}: a report is missing, no comparison")
        continue
    deep_metrics = one["sampling"]["deep_metrics"]
    def regions(report):
        # Scopes by rank (their process ids differ between the two runs).
        return {(s["label"] if s.get("rank") in (None, "") else f"rank {s['rank']}", r["path"]): r
                for s in report["scopes"] for r in s["regions"]}
    a, b = regions(one), regions(every)
    for key in sorted(set(a) & set(b)):
        for metric in deep_metrics:
            x = (a[key]["inclusive"].get(metric) or {}).get("value")
            y = (b[key]["inclusive"].get(metric) or {}).get("value")
            if x is None and y is None:
                continue
            diff = "" if x is None or y is None or y == 0 else f"{(x - y) / abs(y):+.4f}"
            rows.append((mode, key[0], key[1], metric, x, y, diff))
with open(os.path.join(out, "deep_values.tsv"), "w") as f:
    f.write("mode\tscope\tregion\tmetric\tsignature\tall\trelative difference\n")
    for row in rows:
        f.write("\t".join("" if v is None else str(v) for v in row) + "\n")
with open(os.path.join(out, "deep_ranks.txt"), "w") as f:
    f.write("\n".join(notes) + "\n")
print("\n".join(notes))
print(f"{len(rows)} deep values side by side in deep_values.tsv")
PY
echo "--- $(date -u +%H:%M:%S) packing"
tar czf "$out/runs.tar.gz" -C "$work" runs $(cd "$work" && ls *.out) 2>/dev/null
echo "=== done"
