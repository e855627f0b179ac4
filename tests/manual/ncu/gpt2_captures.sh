#!/usr/bin/env bash
# Real GPT-2 captures for the report's readability checks (docs/running.md, "Range replay that fails";
# docs/attribution.md, "Python call stacks"):
#   pystack  Hugging Face GPT-2, 2 layers, 1 training step, default sections, Python call stacks,
#            report file without SASS: a real capture with Speed-Of-Light metrics, ncu's rules and a
#            backward pass launched from the autograd thread (no Python stack there).
#   rangebw  range replay of `train_step/`, a range that holds the backward pass: ncu's exit code and
#            log kept, for the diagnosis of a range-replay capture that ends with no results.
#   BIN=path/to/profile-run tests/manual/ncu/gpt2_captures.sh pystack rangebw
set -uo pipefail
cd "$(dirname "$0")/../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bin="${BIN:-profile-run}"
out="${OUT:-.}"
work=$(mktemp -d /tmp/gpt2cap.XXXXXX)
gpt2=tests/manual/ncu/gpt2_step.py
for what in "$@"; do
  case "$what" in
  pystack)
    s=$(date +%s)
    "$bin" -q output.root="$work/pystack" output.run_name=run regions.include='[train_step]' \
      pipeline.ncu.ncu_cli.call_stack=true 'pipeline.ncu.ncu_cli.call_stack_type=[python]' \
      'pipeline.ncu.ncu_cli.extra_args=[--import-sass, "no"]' -- python3 "$gpt2" 2 1 >"$work/pystack.log" 2>&1
    echo "pystack: exit $? in $(( $(date +%s) - s )) s"; tail -n 3 "$work/pystack.log"
    gzip -9 -c "$work/pystack/run/profile.ncu-rep" >"$out/gpt2_pystack.ncu-rep.gz"
    cp "$work/pystack/run/command.txt" "$out/gpt2_pystack.command.txt" 2>/dev/null
    ;;
  rangebw)
    s=$(date +%s)
    "$bin" output.root="$work/rangebw" output.run_name=run regions.include='[train_step]' \
      pipeline.ncu.ncu_cli.replay_mode=range -- python3 "$gpt2" 2 1 >"$work/rangebw.out" 2>&1
    echo "rangebw: exit $? in $(( $(date +%s) - s )) s"; tail -n 12 "$work/rangebw.out"
    tar czf "$out/gpt2_rangebw.tar.gz" -C "$work" rangebw.out $(cd "$work" && ls rangebw/run/*.log rangebw/run/*.txt rangebw/run/*.json 2>/dev/null)
    ;;
  *) echo "unknown capture $what" >&2 ;;
  esac
done
