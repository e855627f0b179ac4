#!/usr/bin/env bash
# Probe: do concurrent ncu instances on different GPUs (or the same GPU) serialize each other's
# profiled kernels, and does `--devices` restrict profiling to one process's GPU under a launcher?
# Seen on 2 x H200, ncu 2025.3.1 (docs/performance.md, "Sampled runs"): one
# instance 16.1 s, two on two GPUs 29.7 s, two on one GPU 30.0 s; with 8 s unprofiled first, 23.3 s
# against 37.7 s: the unprofiled parts overlap, the profiled kernels take turns, whatever TMPDIR.
# Per-kernel values were the same alone and side by side. `--devices 1` kept device 1's 40 of 80.
# Writes timings and ncu's help into $OUT (default ./probe-out). Needs 2 GPUs, nvcc and ncu.
set -u
OUT=${OUT:-probe-out}; mkdir -p "$OUT"; cd "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ncu --version > version.txt 2>&1; ncu --help > help.txt 2>&1
cat > k.cu <<'CU'
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];
}
int main(int argc, char** argv) {
  // argv: device, seconds to sleep on the host after CUDA starts (a workload's unprofiled part).
  cudaSetDevice(argc > 1 ? atoi(argv[1]) : 0); cudaFree(0); sleep(argc > 2 ? atoi(argv[2]) : 0);
  int n = 1 << 24; float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
  for (int i = 0; i < 40; i++) saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  cudaDeviceSynchronize(); printf("done\n"); return 0;
}
CU
nvcc -O2 -o k k.cu 2> nvcc.log || { echo "nvcc failed" >> progress.txt; exit 1; }
P="ncu --clock-control none --section SpeedOfLight --section LaunchStats -f"
now() { date +%s.%N; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$(now)"; }
s=$(now); $P -o alone ./k 0 > alone.log 2>&1
echo "alone: $(since $s)" >> progress.txt
s=$(now)
$P -o g0 ./k 0 > g0.log 2>&1 & $P -o g1 ./k 1 > g1.log 2>&1 & wait
echo "two GPUs at once: $(since $s)" >> progress.txt
ls -la /tmp/ | grep -i nsight >> progress.txt
s=$(now)
$P -o s0 ./k 0 > s0.log 2>&1 & $P -o s1 ./k 0 > s1.log 2>&1 & wait
echo "same GPU at once: $(since $s)" >> progress.txt
s=$(now); $P -o a8 ./k 0 8 > a8.log 2>&1; echo "alone, 8 s unprofiled first: $(since $s)" >> progress.txt
s=$(now)
TMPDIR=$PWD $P -o h0 ./k 0 8 > h0.log 2>&1 & TMPDIR=/var/tmp $P -o h1 ./k 1 8 > h1.log 2>&1 & wait
echo "two GPUs at once, 8 s unprofiled first, own TMPDIRs: $(since $s)" >> progress.txt
$P --target-processes all --devices 1 -o dev1 bash -c './k 0 & ./k 1; wait' > dev1.log 2>&1
echo "devices 1 results: $(ncu --import dev1.ncu-rep --csv --page raw --metrics device__attribute_display_name 2>/dev/null | tail -n +3 | wc -l)" >> progress.txt
for r in alone g0 g1 s0 s1 a8 h0 h1 dev1; do
  ncu --import $r.ncu-rep --csv --page raw --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed > $r.csv 2>&1
done
rm -f *.ncu-rep k k.cu nvcc.log *.log
mkdir -p keep && mv *.csv help.txt version.txt keep/ 2>/dev/null; tar czf probe.tgz keep progress.txt && rm -rf keep
