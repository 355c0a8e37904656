#!/usr/bin/env bash
# python-side.sh: the Python side of the comparison with PyTorch: python-side.py (one small op,
# import cost, 10^6 tensors created and dropped) and the digits example in Python
# (examples/python/digits.py) against digits.py here, alternating which goes first, as
# key=value lines. Same thread settings as run.sh: OMP_WAIT_POLICY=PASSIVE, one OpenBLAS
# thread and one torch thread unless the caller sets OPENBLAS_NUM_THREADS.
# Usage: bench/compare-torch/python-side.sh [BUILD_DIR] [ROUNDS]   (defaults: build, 3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
rounds=${2:-3}
python=/usr/bin/python3
export PYTHONPATH="$build/python" OMP_WAIT_POLICY=PASSIVE
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
"$python" -c 'import gradscope' || { echo "python-side.sh: cannot import gradscope from $build/python" >&2; exit 1; }
"$python" "$here/python-side.py"
csv="$root/data/digits.csv.gz"
g_times=() t_times=()
for ((r = 0; r < rounds; r++)); do
  for side in $([ $((r % 2)) = 0 ] && echo "g t" || echo "t g"); do
    if [ "$side" = g ]; then
      out=$("$python" "$root/examples/python/digits.py" "$csv")
      g_times+=("$(sed -n 's/^digits_seconds=//p' <<<"$out")")
      g_acc=$(sed -n 's/^test_accuracy=//p' <<<"$out")
    else
      out=$("$python" "$here/digits.py")
      t_times+=("$(sed -n 's/^digits_seconds=//p' <<<"$out")")
      t_acc=$(sed -n 's/.*test_accuracy=\([0-9.]*\).*/\1/p' <<<"$out")
    fi
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
g=$(median "${g_times[@]}")
t=$(median "${t_times[@]}")
echo "py_digits_gradscope_seconds=$g"
echo "py_digits_torch_seconds=$t"
echo "py_digits_ratio=$(awk -v g="$g" -v t="$t" 'BEGIN {printf "%.3f", g / t}')"
echo "py_digits_gradscope_test_accuracy=$g_acc"
echo "py_digits_torch_test_accuracy=$t_acc"
