#!/usr/bin/env bash
# cnn.sh: the small CNN on digits from Python (cnn.py, a PyTorch program) under PyTorch and
# under gradscope.as_torch, alternating which goes first, with the same thread budget
# (compare-common.sh); prints the medians, cnn_step_ratio_vs_torch= (gradscope / torch, the
# issue's target <= 0.5) and both accuracies, which must be equal.
# Usage: bench/compare-torch/cnn.sh [ROUNDS]   (default 3)
set -euo pipefail
rounds_default=3
target=python/gradscope/_gradscope.cpython-311-x86_64-linux-gnu.so
# One thread a side, set before compare-common.sh prints the budget (it defaults to 2).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"
g_ms=() t_ms=()
for ((r = 0; r < rounds; r++)); do
  for side in $([ $((r % 2)) = 0 ] && echo "g t" || echo "t g"); do
    if [ "$side" = g ]; then
      out=$(PYTHONPATH="$build/python" "$python" -m gradscope.as_torch "$here/cnn.py")
      g_ms+=("$(value cnn_step_ms "$out")")
      g_acc=$(value test_accuracy "$out")
    else
      out=$("$python" "$here/cnn.py")
      t_ms+=("$(value cnn_step_ms "$out")")
      t_acc=$(value test_accuracy "$out")
    fi
  done
done
g=$(median "${g_ms[@]}")
t=$(median "${t_ms[@]}")
echo "cnn_step_ms_gradscope=$g"
echo "cnn_step_ms_torch=$t"
echo "cnn_step_ratio_vs_torch=$(ratio "$g" "$t")"
echo "cnn_test_accuracy_gradscope=$g_acc"
echo "cnn_test_accuracy_torch=$t_acc"
