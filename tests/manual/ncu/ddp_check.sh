#!/usr/bin/env bash
# Both torchrun recipes of docs/running.md on every GPU of the machine, with the binary under test:
# one profile-run per rank then `merge`, and one profile-run around torchrun. Prints the wall time of
# the unprofiled and the profiled runs, the merge time, and report.md's region × rank table.
#   BIN=path/to/profile-run tests/manual/ncu/ddp_check.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
n=$(nvidia-smi -L | wc -l)
work=$(mktemp -d /tmp/ddp-check.XXXXXX)
here=tests/manual/ncu
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
echo "=== $n GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
s=$(date +%s%N); torchrun --nproc_per_node "$n" "$here/ddp_step.py" >/dev/null 2>&1; rc=$?
echo "unprofiled: $(ms "$s") ms (exit $rc)"
s=$(date +%s%N)
timeout 300 torchrun --nproc_per_node "$n" --no-python "$bin" -q --config ncu/distributed \
  regions.include='[train_step]' output.root="$work/ranks" output.run_name=ddp -- python3 "$here/ddp_step.py"
rc=$?; echo "profile-run per rank: $(ms "$s") ms (exit $rc)"
s=$(date +%s%N); "$bin" merge "$work/ranks/ddp" --out "$work/merged" >/dev/null; rc=$?
echo "merge: $(ms "$s") ms (exit $rc)"
sed -n '/^## Regions by scope/,/^## /p' "$work/merged/report.md" | head -20
python3 - "$work/merged/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["scopes"]:
    print(s["label"], {g["path"]: (g["kernel_count"], g["instances"]["count"] if g["instances"] else None) for g in s["regions"]})
print("aggregate", {g["path"]: g["kernel_count"] for g in r["aggregate"]["regions"]} if r["aggregate"] else None)
PY
s=$(date +%s%N)
timeout 300 "$bin" -q --config ncu/distributed regions.include='[train_step]' output.root="$work/one" \
  -- torchrun --nproc_per_node "$n" "$here/ddp_step.py" >/dev/null
rc=$?; echo "one profile-run around torchrun: $(ms "$s") ms (exit $rc)"
python3 -c "
import json,glob; r=json.load(open(glob.glob('$work/one/*/report.json')[0]))
print('scopes', [s['label'] for s in r['scopes']], 'notes', r['notes'][:2])"
rm -rf "$work"
