#!/usr/bin/env bash
# Sampled profiling against full kernel replay, side by side on the GPU machine (docs/performance.md,
# "Sampled profiling"). Each pair profiles the same regions of the same workload with the same preset,
# once with every kernel replayed in full and once sampled (`--config ncu/sampled`: a timing pass over
# every kernel, a deep pass once per distinct launch, and the join). Wall time is the whole
# profile-run command: both ncu runs, reading and rendering included. Every run's report.json and
# command lines land in $OUT/sampled-<pair>.tar.gz for benches/sampled_accuracy.py.
#   BIN=path/to/profile-run benches/sampled_gpu.sh PAIR...
#   benches/sampled_gpu.sh --smoke   # CI: every fast-path pair side by side (`fastpath scopes`) with the
#                                    # fake ncu and a workload that does nothing; no GPU, no bars
# The fast path's figures, side by side in one command (`fastpath` runs three; each writes its wall times
# and the report directories' deep values to stdout and $OUT/summary.txt):
#   defaults  (a) GPT-2, 4 layers, $STEPS steps (default 30): ncu/sampled with its defaults (trace
#             timing where the injection library is beside BIN, adaptive samples in one deep pass as
#             workers) against the same run timed by ncu (pipeline.ncu.timing=ncu), and against the
#             same without adaptive samples: the adaptive run's deep pass against the fixed run's plus
#             its extra results at the fixed run's cost per result (benches/sampled_adaptive_bar.py)
#   replay3   (b) the same defaults at 3 steps against full kernel replay (ncu/default)
#   setfull30 (d) --config ncu/full sampled at $STEPS steps; full replay of the full set is estimated
#             from its measured cost per kernel (two full-set runs profiling the first $FEW and
#             2×$FEW kernels: the difference over $FEW kernels; FEW=0: the sampled run's own deep
#             pass less its first pass, over its deep results) times the kernels the run launched,
#             plus the start-up of the shorter run (FEW=0: the first pass)
#   scopes    (e) the defaults at $STEPS steps with pipeline.ncu.sampling.error_scope=region against
#             error_scope=key, each timed by the trace and by ncu, and region without adaptive
#             samples (the cost bar of benches/sampled_adaptive_bar.py); region's pair first
#   fastpath  (a), (b) and (d), in that order
#   inprocess3  (f) GPT-2, 4 layers, 3 steps, one launch: the workload unprofiled, ncu/sampled with its
#             defaults (deep counters in the traced process; libcupti_trace.so beside BIN) and full
#             kernel replay (ncu/default) with the caches not flushed, as the in-process engine runs;
#             accuracy and intervals by benches/sampled_accuracy.py; run directories in
#             $OUT/sampled-inprocess3.tar.gz
#   inprocess30 (g) the same at $STEPS steps: unprofiled, in process, and ncu/sampled with both passes
#             under ncu (pipeline.ncu.timing=ncu, deep_engine=ncu). Both (f) and (g) print the cost
#             bar: the in-process run against (unprofiled + report.json's sampling.in_process_cost_s)
#             × 1.2
#   inprocess-counts (h) GPT-2, 4 layers, 3 steps, one launch each: in process with
#             sampling.launch_count set to each of $COUNTS (default "1 3": launches 0, 1, 3 … of
#             each stratum profiled), then full kernel replay with the caches not flushed; accuracy
#             and intervals of each against it; run directories in $OUT/sampled-inprocess-counts.tar.gz
#   inprocess-memory (i) GPT-2, 4 layers, 3 steps: each metric set of $SETS (default `dram`: DRAM
#             throughput and bytes alone; `memory`: the memory group, with the L2 and L1 hit rates)
#             in process, then full kernel replay with the caches not flushed collecting the same
#             metrics alone (no sections): how the DRAM figures of both engines move with the
#             metric set beside them; run directories in $OUT/sampled-inprocess-memory.tar.gz
# SETTINGS="key=value ..." adds settings to every run of (a) to (i) (e.g. error_scope=region for (d)).
# Pairs (each fits one 10-minute command; run them in separate calls if needed):
#   steps3    Hugging Face GPT-2, 4 layers, 3 training steps, default preset (SpeedOfLight, LaunchStats)
#   steps1    the same, 1 step
#   setfull   --set full (ncu/full) on train_step/forward of GPT-2, 2 layers, 2 steps
#   intervals GPT-2, 4 layers, 3 steps, default preset: full kernel replay, then sampled timed by ncu's
#             timing pass and sampled timed by the trace (libcupti_trace.so beside BIN); whole run
#             directories (report files, traces) land in $OUT/sampled-intervals.tar.gz, so that
#             benches/sampled_accuracy.py --intervals can measure how often full replay lies inside
#             each run's 95% intervals, and later builds can re-render them
#   adaptive  the same workload sampled with adaptive deep samples (ncu/sampled's default: the deep
#             pass as one ncu worker per sample count), timed by the trace and by ncu's timing pass;
#             whole run directories in $OUT/sampled-adaptive.tar.gz
#   speedup   GPT-2, 4 layers, $STEPS training steps (default 30), one deep sample per key: a sampled run
#             timed by the trace against one timed by ncu's timing pass, after one unprofiled warm-up
#             run, in the order trace, ncu, ncu, trace (neither side always runs first on a cold
#             machine); prints each run's passes from run.json and the ratio of the two medians
#   fixture   train_step.py (2 layers, 3 steps): the small sampled capture and its full twin kept as
#             test fixtures (report files without SASS), and the `report RUN_DIR` re-render timed
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
smoke=0
failed=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; set -- fastpath scopes; fi
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work=$(mktemp -d /tmp/sampled.XXXXXX)
gpt2=tests/manual/ncu/gpt2_step.py
steps=${STEPS:-30}
few=${FEW:-20}
# Settings every run of the fast-path pairs gets (the smoke run's fake ncu).
extra=(${SETTINGS:-})
# The workload of GPT-2 with L layers and S steps (the smoke run's: one that does nothing).
workload() { echo python3 "$gpt2" "$1" "$2"; }
if ((smoke)); then
  bin="${BIN:-target/debug/profile-run}"
  out="${OUT:-$work/out}"
  fixtures=tests/fixtures/ncu/h100-2025.3.1-sampled
  export FAKE_NCU_REPORT="$PWD/$fixtures/train.ncu-rep.gz" FAKE_NCU_DEEP_REPORT="$PWD/$fixtures/train.deep.ncu-rep.gz"
  export CUDA_VISIBLE_DEVICES=0,1
  extra=(pipeline.ncu.executable="$PWD/tests/support/fake-ncu" pipeline.ncu.timing=ncu)
  workload() { echo true; }
  few=2
fi
# Everything printed also lands in $OUT as it happens: a command cut off by its time limit still
# leaves the runs it finished.
mkdir -p "$out"
exec > >(tee -a "$out/sampled_gpu.log") 2>&1
log() { echo; echo "=== $*" | tee -a "$out/summary.txt"; }

# One profile-run command, timed: prints `name wall_s exit`; its wall time is left in $last_wall.
last_wall=0
timed() {
  local name=$1; shift
  local s e rc
  s=$(date +%s%N)
  "$bin" -q output.root="$work/$name" output.run_name=run "$@" >"$work/$name.log" 2>&1
  rc=$?
  e=$(date +%s%N)
  last_wall="$(( (e - s) / 1000000 ))e-3"
  ((rc == 0)) || failed=1
  printf '%-22s %8.1f s  exit %s\n' "$name" "$(( (e - s) / 1000000 ))e-3" "$rc" | tee -a "$out/summary.txt"
  tail -n 3 "$work/$name.log" | sed 's/^/    /'
}

# A run's passes from run.json (first pass, each deep worker, any top-up) and train_step's deep values.
deep_values() {
  python3 - "$work" "$@" <<'PY' | tee -a "$out/summary.txt"
import json, sys
from datetime import datetime
from pathlib import Path

def moment(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

work = Path(sys.argv[1])
for name in sys.argv[2:]:
    run = work / name / "run"
    try:
        record = json.loads((run / "run.json").read_text())
        report = json.loads((run / "report.json").read_text())
    except (OSError, ValueError) as e:
        print(f"  {name}: no run.json/report.json ({e})")
        continue
    start, first = moment(record["started"]), record.get("finished")
    parts = []
    if first and record.get("deep_pass"):
        parts.append(f"first pass {moment(first) - start:.1f} s")
        ends = [w["finished"] for w in record.get("deep_workers") or [record["deep_pass"]] if w.get("finished")]
        if ends:
            parts.append(f"deep pass {max(map(moment, ends)) - moment(first):.1f} s"
                         f" ({len(record.get('deep_workers') or [1])} worker(s))")
    sampling = report.get("sampling") or {}
    for w in sampling.get("deep_workers") or []:
        gpu = w["gpu"] or "the workload's own"
        parts.append(f"{w['source']}: GPU {gpu}, count {w['count']}, {w['results']}/{w['expected_results']} results")
    print(f"  {name}: " + "; ".join(parts) if parts else f"  {name}")
    scope = report.get("aggregate") or report["scopes"][0]
    region = next((r for r in scope["regions"] if r["path"] == "train_step"), None) or scope["regions"][0]
    kernels = scope["total"]["kernel_count"]
    print(f"    kernels {kernels}; deep values of {region['path']}:")
    for metric, value in region["inclusive"].items():
        if isinstance(value.get("value"), (int, float)):
            print(f"      {metric:60s} {value['value']:.6g} {value.get('unit', '')}")
PY
}

pair() {
  local name=$1 config=$2; shift 2
  timed "$name-full" --config "$config" "$@"
  timed "$name-sampled" --config "$config" --config ncu/sampled "$@"
  tar czf "$out/sampled-$name.tar.gz" -C "$work" \
    $(cd "$work" && ls -d "$name"-*/run/report.json "$name"-*/run/command.txt "$name"-*/run/run.json 2>/dev/null)
}

if ((smoke)); then
  log "smoke: the fake ncu, a workload that does nothing (no GPU, no bars)"
else
  log "host: $(nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd, -), $(ncu --version | tail -1)"
fi
pairs=()
for what in "$@"; do
  [[ $what == fastpath ]] && pairs+=(defaults replay3 setfull30) || pairs+=("$what")
done
set -- "${pairs[@]}"
for what in "$@"; do
  case "$what" in
  defaults)
    log "(a) GPT-2 4 layers, $steps steps: ncu/sampled defaults against the same timed by ncu"
    ((smoke)) || python3 "$gpt2" 4 "$steps" >/dev/null 2>&1
    run=(--config ncu/sampled regions.include='[train_step]' "${extra[@]}" -- $(workload 4 "$steps"))
    timed defaults-fast "${run[@]}"
    timed defaults-fixed pipeline.ncu.sampling.adaptive=false "${run[@]}"
    timed defaults-ncu pipeline.ncu.timing=ncu "${run[@]}"
    deep_values defaults-fast defaults-fixed defaults-ncu
    python3 benches/sampled_adaptive_bar.py "$work/defaults-fixed/run" "$work/defaults-fast/run" | tee -a "$out/summary.txt"
    ;;
  scopes)
    log "(e) GPT-2 4 layers, $steps steps: error_scope=region against key, timed by the trace and by ncu"
    ((smoke)) || python3 "$gpt2" 4 "$steps" >/dev/null 2>&1
    run=(--config ncu/sampled regions.include='[train_step]' "${extra[@]}" -- $(workload 4 "$steps"))
    region=pipeline.ncu.sampling.error_scope=region key=pipeline.ncu.sampling.error_scope=key
    timed scopes-region-fast "$region" "${run[@]}"
    timed scopes-region-ncu "$region" pipeline.ncu.timing=ncu "${run[@]}"
    timed scopes-region-fixed "$region" pipeline.ncu.sampling.adaptive=false "${run[@]}"
    python3 benches/sampled_adaptive_bar.py "$work/scopes-region-fixed/run" "$work/scopes-region-fast/run" \
      | tee -a "$out/summary.txt"
    timed scopes-key-fast "$key" "${run[@]}"
    timed scopes-key-ncu "$key" pipeline.ncu.timing=ncu "${run[@]}"
    deep_values scopes-region-fast scopes-region-ncu scopes-region-fixed scopes-key-fast scopes-key-ncu
    ;;
  inprocess3|inprocess30)
    n=3; [[ $what == inprocess30 ]] && n=$steps
    log "(${what/inprocess3/f}) GPT-2 4 layers, $n steps: one launch with in-process deep counters"
    ((smoke)) || python3 "$gpt2" 4 "$n" >/dev/null 2>&1
    s=$(date +%s%N); $(workload 4 "$n") >/dev/null 2>&1; e=$(date +%s%N)
    unprofiled="$(( (e - s) / 1000000 ))e-3"
    printf '%-22s %8.1f s\n' "$what-unprofiled" "$unprofiled" | tee -a "$out/summary.txt"
    run=(regions.include='[train_step]' "${extra[@]}" -- $(workload 4 "$n"))
    timed "$what-inprocess" --config ncu/sampled "${run[@]}"
    # The cost bar: the unprofiled run plus what profiling in place cost (report.json), plus 20%.
    python3 - "$work/$what-inprocess/run/report.json" "$unprofiled" "$last_wall" <<'PY' | tee -a "$out/summary.txt"
import json, sys
try:
    sampling = json.load(open(sys.argv[1])).get("sampling") or {}
except (OSError, ValueError) as e:
    sys.exit(f"  cost bar: no report.json ({e})")
cost, unprofiled, wall = sampling.get("in_process_cost_s"), float(sys.argv[2]), float(sys.argv[3])
if cost is None:
    sys.exit("  cost bar: report.json has no sampling.in_process_cost_s")
bar = (unprofiled + cost) * 1.2
verdict = "met" if wall <= bar else "not met"
print(f"  cost bar: {wall:.1f} s against (unprofiled {unprofiled:.1f} s + profiling {cost:.1f} s"
      f" over {sampling.get('deep_results')} launches) x 1.2 = {bar:.1f} s: {verdict}")
PY
    if [[ $what == inprocess3 ]]; then
      timed "$what-full" --config ncu/default pipeline.ncu.ncu_cli.cache_control=none "${run[@]}"
    else
      timed "$what-full" --config ncu/sampled pipeline.ncu.timing=ncu pipeline.ncu.sampling.deep_engine=ncu "${run[@]}"
    fi
    deep_values "$what-inprocess" "$what-full"
    [[ -f "$work/$what-full/run/report.json" && -f "$work/$what-inprocess/run/report.json" ]] &&
      for how in "" --intervals; do
        python3 benches/sampled_accuracy.py $how "$work/$what-full/run/report.json" "$work/$what-inprocess/run/report.json" \
          | tee -a "$out/summary.txt"
      done
    tar czf "$out/sampled-$what.tar.gz" -C "$work" $(cd "$work" && ls -d "$what"-*/run/report.json "$what"-*/run/run.json "$what"-*/run/command.txt 2>/dev/null)
    ;;
  inprocess-counts)
    log "(h) GPT-2 4 layers, 3 steps, in process: launch_count ${COUNTS:-1 3} against full replay"
    ((smoke)) || python3 "$gpt2" 4 3 >/dev/null 2>&1
    run=(regions.include='[train_step]' "${extra[@]}" -- $(workload 4 3))
    names=()
    for count in ${COUNTS:-1 3}; do
      timed "counts-$count" --config ncu/sampled pipeline.ncu.sampling.launch_count="$count" "${run[@]}"
      names+=("counts-$count")
    done
    timed counts-full --config ncu/default pipeline.ncu.ncu_cli.cache_control=none "${run[@]}"
    deep_values "${names[@]}" counts-full
    for name in "${names[@]}"; do
      [[ -f "$work/counts-full/run/report.json" && -f "$work/$name/run/report.json" ]] || continue
      echo "  $name against counts-full:" | tee -a "$out/summary.txt"
      for how in "" --intervals; do
        python3 benches/sampled_accuracy.py $how "$work/counts-full/run/report.json" "$work/$name/run/report.json" \
          | tee -a "$out/summary.txt"
      done
    done
    tar czf "$out/sampled-$what.tar.gz" -C "$work" $(cd "$work" && ls -d counts-*/run/report.json counts-*/run/run.json counts-*/run/command.txt 2>/dev/null)
    ;;
  inprocess-memory)
    log "(i) GPT-2 4 layers, 3 steps: DRAM alone and the memory group, in process against full replay"
    ((smoke)) || python3 "$gpt2" 4 3 >/dev/null 2>&1
    run=(regions.include='[train_step]' "${extra[@]}" -- $(workload 4 3))
    declare -A set_metrics=(
      [dram]=gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
      [memory]=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed
    )
    for name in ${SETS:-dram}; do
      metrics=${set_metrics[$name]:-}
      [[ -n $metrics ]] || { echo "inprocess-memory: unknown set '$name' in SETS (dram or memory)" >&2; failed=1; continue; }
      settings=('report.sections=[time]' "report.metrics=[$metrics]")
      timed "memory-$name-inprocess" --config ncu/sampled "${settings[@]}" "${run[@]}"
      timed "memory-$name-full" --config ncu/default pipeline.ncu.ncu_cli.cache_control=none \
        'pipeline.ncu.ncu_cli.sections=[]' "pipeline.ncu.ncu_cli.metrics=[gpu__time_duration.sum,$metrics]" \
        "${settings[@]}" "${run[@]}"
      deep_values "memory-$name-inprocess" "memory-$name-full"
      [[ -f "$work/memory-$name-full/run/report.json" && -f "$work/memory-$name-inprocess/run/report.json" ]] &&
        python3 benches/sampled_accuracy.py --all "$work/memory-$name-full/run/report.json" "$work/memory-$name-inprocess/run/report.json" \
          | tee -a "$out/summary.txt"
    done
    tar czf "$out/sampled-$what.tar.gz" -C "$work" $(cd "$work" && ls -d memory-*/run/report.json memory-*/run/run.json memory-*/run/command.txt 2>/dev/null)
    ;;
  replay3)
    log "(b) GPT-2 4 layers, 3 steps: ncu/sampled defaults against full kernel replay"
    ((smoke)) || python3 "$gpt2" 4 3 >/dev/null 2>&1
    timed replay3-fast --config ncu/sampled regions.include='[train_step]' "${extra[@]}" -- $(workload 4 3)
    timed replay3-full --config ncu/default regions.include='[train_step]' "${extra[@]}" -- $(workload 4 3)
    deep_values replay3-fast replay3-full
    [[ -f "$work/replay3-full/run/report.json" && -f "$work/replay3-fast/run/report.json" ]] &&
      for how in "" --intervals; do
        python3 benches/sampled_accuracy.py $how "$work/replay3-full/run/report.json" "$work/replay3-fast/run/report.json" \
          | tee -a "$out/summary.txt"
      done
    ;;
  setfull30)
    log "(d) GPT-2 4 layers, $steps steps, --set full: sampled, and full replay's cost per kernel ($few and $((2 * few)) kernels)"
    ((smoke)) || python3 "$gpt2" 4 "$steps" >/dev/null 2>&1
    timed setfull30-sampled --config ncu/full --config ncu/sampled regions.include='[train_step]' "${extra[@]}" \
      -- $(workload 4 "$steps")
    # FEW=0: no calibration runs; the cost per kernel is the sampled run's own (its deep pass less its
    # first pass, which ran the same workload unprofiled, over the deep results it took).
    if ((few == 0)); then
      deep_values setfull30-sampled
      python3 benches/sampled_adaptive_bar.py --full-set "$work/setfull30-sampled/run" | tee -a "$out/summary.txt"
      continue
    fi
    for n in "$few" "$((2 * few))"; do
      timed "setfull30-first$n" --config ncu/full regions.include='[train_step]' \
        pipeline.ncu.ncu_cli.launch_count="$n" "${extra[@]}" -- $(workload 4 "$steps")
    done
    deep_values setfull30-sampled
    python3 - "$work" "$few" <<'PY' | tee -a "$out/summary.txt"
import json, sys
from datetime import datetime
from pathlib import Path

def wall(run):
    record = json.loads((run / "run.json").read_text())
    at = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
    return at(record["finished"]) - at(record["started"])

work, few = Path(sys.argv[1]), int(sys.argv[2])
try:
    short, long = (wall(work / f"setfull30-first{n}" / "run") for n in (few, 2 * few))
    report = json.loads((work / "setfull30-sampled" / "run" / "report.json").read_text())
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"  full replay estimate: not available ({e})")
scope = report.get("aggregate") or report["scopes"][0]
kernels = scope["total"]["kernel_count"]
per_kernel = (long - short) / few
estimate = short - few * per_kernel + kernels * per_kernel
print(f"  full set per kernel {per_kernel:.2f} s ({few} more kernels: {long:.1f} s against {short:.1f} s);"
      f" {kernels} kernels: full replay about {estimate:.0f} s")
PY
    ;;
  steps3)
    log "GPT-2 4 layers, 3 steps: full kernel replay vs sampled, default preset"
    python3 "$gpt2" 4 3 >/dev/null 2>&1 # warm caches (Python imports, kernels) for both runs alike
    pair steps3 ncu/default regions.include='[train_step]' -- python3 "$gpt2" 4 3
    ;;
  intervals)
    log "GPT-2 4 layers, 3 steps: full kernel replay, sampled (ncu timing), sampled (trace timing)"
    python3 "$gpt2" 4 3 >/dev/null 2>&1
    sass='pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]'
    run=(regions.include='[train_step]' "$sass" -- python3 "$gpt2" 4 3)
    timed intervals-full --config ncu/default "${run[@]}"
    timed intervals-trace --config ncu/sampled pipeline.ncu.timing=trace "${run[@]}"
    timed intervals-ncu --config ncu/sampled "${run[@]}"
    tar czf "$out/sampled-intervals.tar.gz" -C "$work" intervals-full/run intervals-trace/run intervals-ncu/run
    ;;
  adaptive)
    log "GPT-2 4 layers, 3 steps: sampled with adaptive deep samples, trace and ncu timing"
    python3 "$gpt2" 4 3 >/dev/null 2>&1
    sass='pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]'
    run=(regions.include='[train_step]' "$sass" -- python3 "$gpt2" 4 3)
    timed adaptive-trace --config ncu/sampled pipeline.ncu.timing=trace "${run[@]}"
    timed adaptive-ncu --config ncu/sampled "${run[@]}"
    tar czf "$out/sampled-adaptive.tar.gz" -C "$work" adaptive-trace/run adaptive-ncu/run
    ;;
  speedup)
    steps=${STEPS:-30}
    log "GPT-2 4 layers, $steps steps: sampled timed by the trace vs by ncu's timing pass, one deep sample per key"
    python3 "$gpt2" 4 "$steps" >/dev/null 2>&1
    run=(--config ncu/sampled pipeline.ncu.sampling.adaptive=false regions.include='[train_step]'
      -- python3 "$gpt2" 4 "$steps")
    timed speedup-trace-1 pipeline.ncu.timing=trace "${run[@]}"
    timed speedup-ncu-1 "${run[@]}"
    timed speedup-ncu-2 "${run[@]}"
    timed speedup-trace-2 pipeline.ncu.timing=trace "${run[@]}"
    python3 benches/sampled_speedup.py "$work" speedup-trace-1 speedup-trace-2 -- speedup-ncu-1 speedup-ncu-2
    tar czf "$out/sampled-speedup.tar.gz" -C "$work" \
      $(cd "$work" && ls -d speedup-*/run/report.json speedup-*/run/run.json speedup-*/run/command.txt)
    ;;
  steps1)
    log "GPT-2 4 layers, 1 step: full kernel replay vs sampled, default preset"
    pair steps1 ncu/default regions.include='[train_step]' -- python3 "$gpt2" 4 1
    ;;
  setfull)
    log "GPT-2 2 layers, 2 steps, train_step/forward: full kernel replay vs sampled, --set full"
    pair setfull ncu/full regions.include='[train_step/forward]' -- python3 "$gpt2" 2 2
    ;;
  fixture)
    log "fixture: train_step.py 2 layers 3 steps, sampled and full, report files without SASS"
    sass='pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]'
    timed fixture-full regions.include='[train_step]' "$sass" -- python3 tests/manual/ncu/train_step.py 2 3
    timed fixture-sampled --config ncu/sampled regions.include='[train_step]' "$sass" \
      -- python3 tests/manual/ncu/train_step.py 2 3
    s=$(date +%s%N)
    "$bin" report "$work/fixture-sampled/run" --out "$work/fixture-rerender" >/dev/null 2>&1
    e=$(date +%s%N)
    echo "report RUN_DIR of the sampled run: $(( (e - s) / 1000000 )) ms"
    tar czf "$out/sampled-fixture.tar.gz" -C "$work" fixture-full/run fixture-sampled/run
    ;;
  *) echo "unknown pair $what" >&2 ;;
  esac
done
ls -la "$out"
# The smoke run checks that every command ran; the GPU run's figures are for a person to read.
((smoke)) && exit "$failed"
exit 0
