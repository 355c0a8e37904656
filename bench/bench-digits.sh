#!/usr/bin/env bash
# bench-digits.sh: seconds for the digits example's 30 epochs (examples/digits-mlp, which times
# itself from the parsed data to its final evaluation and prints digits_seconds=). Runs the
# real example, not a copy of it, 5 times and reports the median, with its test accuracy.
# Usage: bench/bench-digits.sh [BUILD_DIR]   (default build; OPENBLAS_* taken from the caller)
set -euo pipefail
build=${1:-build}
exe=$build/examples/digits-mlp
[ -x "$exe" ] || { echo "bench-digits: $exe is not built (meson compile -C $build)" >&2; exit 1; }
runs=5
seconds=()
for _ in $(seq "$runs"); do
  out=$("$exe") || { echo "bench-digits: digits-mlp failed:" >&2; echo "$out" >&2; exit 1; }
  s=$(sed -n 's/^digits_seconds=//p' <<<"$out")
  acc=$(sed -n 's/^test_accuracy=//p' <<<"$out")
  [ -n "$s" ] || { echo "bench-digits: digits-mlp printed no digits_seconds= line" >&2; exit 1; }
  seconds+=("$s")
done
median=$(printf '%s\n' "${seconds[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
echo "# digits-mlp: 30 epochs, median of $runs runs (${seconds[*]} s)"
echo "digits_seconds=$median s"
echo "digits_test_accuracy=$acc"
