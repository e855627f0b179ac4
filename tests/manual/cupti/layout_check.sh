#!/usr/bin/env bash
# Compiles crates/cupti-trace/layout_check.c (as C++: cupti_profiler_host.h includes <string>) against the CUDA toolkit's CUPTI and NVTX headers and
# compares what it prints with crates/cupti-trace/layout.expected (the injection library's constants).
# Exit 0 when they agree. Run from the repository root (or from the copy of it) on a machine with CUDA.
set -euo pipefail
crate="${CRATE:-crates/cupti-trace}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
inc="$cuda/targets/x86_64-linux/include"
[ -d "$inc" ] || inc="$cuda/include"
bin=$(mktemp /tmp/layout_check.XXXXXX)
g++ -x c++ -o "$bin" "$crate/layout_check.c" -I"$inc" -I"$cuda/extras/CUPTI/include" -I"$cuda/include" -ldl
if "$bin" | diff -u "$crate/layout.expected" -; then
  echo "layout: the injection library's constants match the CUPTI and NVTX headers"
else
  echo "layout: MISMATCH (above: - the library's constants, + the headers)"; exit 1
fi
