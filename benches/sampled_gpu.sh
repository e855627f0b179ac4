#!/usr/bin/env bash
# Sampled profiling against full kernel replay, side by side on the GPU machine (docs/performance.md,
# "Sampled profiling"). Each pair profiles the same regions of the same workload with the same preset,
# once with every kernel replayed in full and once sampled (`--config ncu/sampled`: a timing pass over
# every kernel, a deep pass once per distinct launch, and the join). Wall time is the whole
# profile-run command: both ncu runs, reading and rendering included. Every run's report.json and
# command lines land in $OUT/sampled-<pair>.tar.gz for benches/sampled_accuracy.py.
#   BIN=path/to/profile-run benches/sampled_gpu.sh PAIR...
# Pairs (each fits one 10-minute command; run them in separate calls if needed):
#   steps3    Hugging Face GPT-2, 4 layers, 3 training steps, default preset (SpeedOfLight, LaunchStats)
#   steps1    the same, 1 step
#   setfull   --set full (ncu/full) on train_step/forward of GPT-2, 2 layers, 2 steps
#   intervals GPT-2, 4 layers, 3 steps, default preset: full kernel replay, then sampled timed by ncu's
#             timing pass and sampled timed by the trace (libcupti_trace.so beside BIN); whole run
#             directories (report files, traces) land in $OUT/sampled-intervals.tar.gz, so that
#             benches/sampled_accuracy.py --intervals can measure how often full replay lies inside
#             each run's 95% intervals, and later builds can re-render them
#   adaptive  the same workload sampled with adaptive deep samples (ncu/sampled's default: a top-up
#             pass for the keys whose in-place or timing-pass durations vary), timed by the trace and
#             by ncu's timing pass; whole run directories in $OUT/sampled-adaptive.tar.gz
#   speedup   GPT-2, 4 layers, $STEPS training steps (default 30), one deep sample per key: a sampled run
#             timed by the trace against one timed by ncu's timing pass, after one unprofiled warm-up
#             run, in the order trace, ncu, ncu, trace (neither side always runs first on a cold
#             machine); prints each run's passes from run.json and the ratio of the two medians
#   fixture   train_step.py (2 layers, 3 steps): the small sampled capture and its full twin kept as
#             test fixtures (report files without SASS), and the `report RUN_DIR` re-render timed
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work=$(mktemp -d /tmp/sampled.XXXXXX)
# Everything printed also lands in $OUT as it happens: a command cut off by its time limit still
# leaves the runs it finished.
mkdir -p "$out"
exec > >(tee -a "$out/sampled_gpu.log") 2>&1
gpt2=tests/manual/ncu/gpt2_step.py
log() { echo; echo "=== $*"; }

# One profile-run command, timed: prints `name wall_s exit`.
timed() {
  local name=$1; shift
  local s e rc
  s=$(date +%s%N)
  "$bin" -q output.root="$work/$name" output.run_name=run "$@" >"$work/$name.log" 2>&1
  rc=$?
  e=$(date +%s%N)
  printf '%-22s %8.1f s  exit %s\n' "$name" "$(( (e - s) / 1000000 ))e-3" "$rc"
  tail -n 3 "$work/$name.log" | sed 's/^/    /'
}

pair() {
  local name=$1 config=$2; shift 2
  timed "$name-full" --config "$config" "$@"
  timed "$name-sampled" --config "$config" --config ncu/sampled "$@"
  tar czf "$out/sampled-$name.tar.gz" -C "$work" \
    $(cd "$work" && ls -d "$name"-*/run/report.json "$name"-*/run/command.txt "$name"-*/run/run.json 2>/dev/null)
}

log "host: $(nvidia-smi --query-gpu=name --format=csv,noheader), $(ncu --version | tail -1)"
for what in "$@"; do
  case "$what" in
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
