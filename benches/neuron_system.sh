#!/usr/bin/env bash
# Memory and time of `profile-run report` on Neuron system profiles at scale (issue 42, item 5), each
# scenario written by `gen-neuron-parquet --scale` (the tests' system-profile generator,
# tests/it/neuron/system_gen.rs) and reported under /usr/bin/time:
#   names N        one worker's N events, each with a name of its own (bar: ≤ 30 s, ≤ 1 GiB)
#   processes N    N processes of one worker each, in one events table (bar: ≤ 30 s, ≤ 1 GiB)
#   name-bytes N   one event named with N bytes: cut at 4096 bytes (bar: ≤ 1 GiB, report.json ≤ 1 MB)
#   footer N       an events table whose forged footer claims N bytes of metadata, the file sparse:
#                  refused (exit 5) before the metadata is read (bar: ≤ 256 MiB)
# docs/performance.md ("Neuron: system profiles at scale") has the results.
#
#   benches/neuron_system.sh             # names 1000000, processes 100000, name-bytes 20000000,
#                                        # footer 3000000000; bars checked
#   benches/neuron_system.sh --smoke     # CI: small sizes, every step runs, no bars checked
#
# Environment: BIN (profile-run, default the release build, built when missing), GEN (the generator,
# likewise); BENCH_DIR (scratch, default a fresh dir under /tmp, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
[[ ${1:-} == --smoke ]] && smoke=1
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=${BIN:-$target/release/profile-run}
gen=${GEN:-$target/release/examples/gen-neuron-parquet}
if [[ -z ${BIN:-} || -z ${GEN:-} ]]; then
  cargo build --release --quiet --bin profile-run --example gen-neuron-parquet
fi
work=${BENCH_DIR:-$(mktemp -d /tmp/profile-run-neuron-system.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

if ((smoke)); then
  scenarios=("names 1000" "processes 100" "name-bytes 100000" "footer 100000000")
else
  scenarios=("names 1000000" "processes 100000" "name-bytes 20000000" "footer 3000000000")
fi

echo "## Neuron system profiles at scale ($(nproc) cores)"
echo
echo "| scenario | input MB | generate s | report s | peak RSS MiB | report.json MB | exit | bars |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
failed=0
for scenario in "${scenarios[@]}"; do
  read -r kind n <<<"$scenario"
  root=$work/$kind
  rm -rf "$root" "$work/out"
  t0=$(date +%s.%N)
  "$gen" --scale "$kind" "$n" "$root" >/dev/null
  t1=$(date +%s.%N)
  gen_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  input_mb=$(du -sm --apparent-size "$root" | cut -f1)
  code=0
  /usr/bin/time -f '%e %M' -o "$work/time" \
    "$bin" report "$root" --out "$work/out" -q >/dev/null 2>"$work/stderr" || code=$?
  # On a non-zero exit, /usr/bin/time writes a line of its own before the figures.
  read -r wall kb < <(tail -1 "$work/time")
  mib=$((kb / 1024))
  json_mb=-
  [[ -f $work/out/report.json ]] && json_mb=$(awk -v b="$(stat -c %s "$work/out/report.json")" 'BEGIN { printf "%.2f", b / 1e6 }')
  expected=0
  [[ $kind == footer ]] && expected=5
  if [[ $code != "$expected" ]]; then
    echo "$kind $n: exit $code, expected $expected:" >&2
    tail -5 "$work/stderr" >&2
    failed=1
  fi
  if [[ $kind == footer ]] && ! grep -q "the footer says the metadata holds $n bytes" "$work/stderr"; then
    echo "$kind $n: the refusal does not name the footer:" >&2
    tail -5 "$work/stderr" >&2
    failed=1
  fi
  verdict=-
  if ((!smoke)); then
    case $kind in
      names | processes) ok=$(awk -v w="$wall" -v m="$mib" 'BEGIN { print (w <= 30 && m <= 1024) }') ;;
      name-bytes) ok=$(awk -v m="$mib" -v j="$json_mb" 'BEGIN { print (m <= 1024 && j <= 1) }') ;;
      footer) ok=$(awk -v m="$mib" 'BEGIN { print (m <= 256) }') ;;
    esac
    verdict=MISSED
    ((ok)) && verdict=met
    [[ $verdict == met ]] || failed=1
  fi
  echo "| $kind $n | $input_mb | $gen_s | $wall | $mib | $json_mb | $code | $verdict |"
done
exit $failed
