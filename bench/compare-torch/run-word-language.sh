#!/usr/bin/env bash
# run-word-language.sh: examples/word-language against the same recipe in PyTorch
# (word_language.py: the same words, one-hot characters, LSTM 128, Linear(128, 5), Adam 3e-3,
# batches of 32, 4 epochs), with the settings and alternating rounds of run.sh. Prints each
# side's test accuracy and training seconds (wall and CPU, all threads) per round, then the
# medians, word_language_time_ratio (wall, engine / torch; target <= 0.5),
# word_language_cpu_ratio (CPU time: on a loaded machine the wall time measures the
# neighbours and how many threads each side has to compete with) and word_language_accuracy_gap
# (torch - engine; target <= 0.02, with the engine's accuracy >= 0.85).
# Usage: bench/compare-torch/run-word-language.sh [ROUNDS]   (default 1; a torch round takes
# minutes on two shared cores; builds GS_BUILD_DIR, default build/, incrementally)
set -euo pipefail
rounds_default=1 target=examples/word-language
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"

e_acc=() e_sec=() e_cpu=() t_acc=() t_sec=() t_cpu=()
run_engine() { local o; o=$("$build"/examples/word-language) || gs_die "word-language failed: $o"
               e_acc+=("$(value test_accuracy "$o")"); e_sec+=("$(value train_seconds "$o")")
               e_cpu+=("$(value train_cpu_seconds "$o")"); }
run_torch() { local o; o=$("$python" bench/compare-torch/word_language.py) || gs_die "word_language.py failed"
              t_acc+=("$(value test_accuracy "$o")"); t_sec+=("$(value train_seconds "$o")")
              t_cpu+=("$(value train_cpu_seconds "$o")"); }
for r in $(seq "$rounds"); do
  if ((r % 2)); then run_engine; run_torch; else run_torch; run_engine; fi
  echo "# round $r: engine accuracy ${e_acc[-1]} in ${e_sec[-1]} s (CPU ${e_cpu[-1]} s), torch accuracy ${t_acc[-1]} in ${t_sec[-1]} s (CPU ${t_cpu[-1]} s)"
done
ea=$(median "${e_acc[@]}") es=$(median "${e_sec[@]}") ta=$(median "${t_acc[@]}") ts=$(median "${t_sec[@]}")
ec=$(median "${e_cpu[@]}") tc=$(median "${t_cpu[@]}")
echo "word_language_test_accuracy=$ea"
echo "torch_word_language_test_accuracy=$ta"
echo "word_language_train_seconds=$es"
echo "torch_word_language_train_seconds=$ts"
echo "word_language_time_ratio=$(ratio "$es" "$ts")"
echo "word_language_train_cpu_seconds=$ec"
echo "torch_word_language_train_cpu_seconds=$tc"
echo "word_language_cpu_ratio=$(ratio "$ec" "$tc")"
echo "word_language_accuracy_gap=$(awk -v a="$ea" -v b="$ta" 'BEGIN { printf "%.4f", b - a }')"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
