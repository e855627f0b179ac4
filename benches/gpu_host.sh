#!/usr/bin/env bash
# The measurements that need the GPU machine (ncu installed, 16 quiet cores), in one batch:
#   1. the profiler seam costs nothing: the previous and the new binary on the same 1 GiB export;
#   2. `profile-run report R.ncu-rep` (native reader) against `ncu --import R --csv --page raw`, on a
#      real report file and on copies of its results (thousands of results, hundreds of MB);
#   3. the new binary on real captures: the manual acceptance test, and an emit_nvtx training step
#      with the PyTorch preset, its numbers held against an independent sum of the raw export.
# Binaries are built elsewhere and carried (the GPU machine has no Rust):
#   OLD=… NEW=… GEN_EXPORT=… GEN_REP=… [PHASES_OLD=… PHASES_NEW=…] benches/gpu_host.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
work=$(mktemp -d /tmp/gpu-host.XXXXXX)
log() { echo; echo "=== $*"; }

log "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(ncu --version | tail -1)"

log "1. previous vs new binary, report on a 1 GiB export (5 alternating runs)"
GEN="$GEN_EXPORT" benches/compare_bins.sh "$OLD" "$NEW" 1G 5

if [[ -n ${PHASES_OLD:-} && -n ${PHASES_NEW:-} ]]; then
  log "1b. the same input, analysis and rendering timed apart (report-phases), 3 alternating runs"
  "$GEN_EXPORT" --size 1G --processes 8 --regions 300 --depth 4 --kernels 60 --seed 7 \
    --out "$work/big.csv" 2>/dev/null
  for i in 1 2 3; do
    for which in OLD NEW; do
      bin_var=PHASES_$which; out="$work/phases-$which-$i"; mkdir -p "$out"
      echo "$which $("${!bin_var}" "$out" "$work/big.csv")"; rm -rf "$out"
    done
  done
  rm -f "$work/big.csv"
fi

log "2. report from a .ncu-rep: profile-run (native) vs ncu --import --csv --page raw"
gzip -dc tests/fixtures/ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz >"$work/x1.ncu-rep"
for c in 10 100; do "$GEN_REP" "$work/x1.ncu-rep" "$work/x$c.ncu-rep" "$c" 2>/dev/null; done
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; e=$(date +%s%N); echo "$(( (e - s) / 1000000 ))"; return $rc; }
echo "| input | MB | ncu --import --csv --page raw ms | profile-run report ms | ratio |"
echo "|---|---:|---:|---:|---:|"
for c in 1 10 100; do
  f="$work/x$c.ncu-rep"; mb=$(( $(stat -c %s "$f") / 1048576 ))
  best_ncu=999999999; best_pr=999999999
  for i in 1 2 3; do
    a=$(t ncu --import "$f" --csv --page raw --print-units base); ((a < best_ncu)) && best_ncu=$a
    b=$(t "$NEW" report "$f" --out "$work/out-$c-$i" pipeline.ncu.executable=/nonexistent); ((b < best_pr)) && best_pr=$b
  done
  echo "| x$c | $mb | $best_ncu | $best_pr | $(awk -v a=$best_ncu -v b=$best_pr 'BEGIN{printf "%.0f", a/b}')x |"
done

log "3a. manual acceptance test with the new binary"
tests/manual/ncu/run_manual.sh "$NEW" "$work/manual" 2>&1 | tail -25
log "3b. emit_nvtx training step, PyTorch preset, native report vs an independent sum of the export"
"$NEW" -q --config ncu/pytorch regions.include='[step]' 'pipeline.ncu.export.pages=[raw]' \
  output.root="$work/emit" output.run_name=emit -- python3 tests/manual/ncu/emit_nvtx_step.py 2
echo "exit $?"
python3 - "$work/emit/emit" <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = list(csv.reader(open(f"{d}/export_raw.csv")))
h = rows[0]; t = h.index("gpu__time_duration.sum"); n = [i for i, c in enumerate(h) if "Push/Pop" in c][0]
step = [r for r in rows[2:] if ":step:" in r[n]]
total = sum(float(r[t].replace(",", "")) for r in step)
rep = json.load(open(f"{d}/report.json"))
reg = {r["path"]: r for r in rep["scopes"][0]["regions"]}
got = reg["step"]["inclusive"]["gpu__time_duration.sum"]["value"]
print(f"step: {len(step)} rows, {total:.0f} ns in the CSV; report: {reg['step']['kernel_count']} results, {got:.0f} ns, instances {reg['step']['instances']}")
print("linear regions:", {k: v["kernel_count"] for k, v in reg.items() if "aten::linear" in k})
assert reg["step"]["kernel_count"] == len(step) and abs(got - total) <= 1e-6 * total, "mismatch"
print("emit_nvtx check passed")
PY
rm -rf "$work"
