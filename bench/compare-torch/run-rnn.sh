#!/usr/bin/env bash
# run-rnn.sh: the packed LSTM and GRU training step (bench/bench-rnn vs rnn.py: input 64,
# hidden 128, batch 32, lengths uniform in 5..50, enforce_sorted=False, h_n -> Linear(128, 10)
# -> cross_entropy -> backward -> SGD lr 0.01), packed and padded, against Debian's PyTorch,
# with the same settings and alternating rounds as run.sh; each side's result is the median
# over rounds. Target: packed step ratio <= 0.5, peak RSS <= 64 MiB.
# Usage: bench/compare-torch/run-rnn.sh [ROUNDS]   (default 3; builds GS_BUILD_DIR, default
# build/, incrementally)
set -euo pipefail
rounds_default=3 target=bench/bench-rnn
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"

for mode in lstm gru; do
  for layout in packed padded; do
    key=${mode}_${layout}
    engine=() torch=() rss=()
    for r in $(seq "$rounds"); do
      run_engine() { local o; o=$("$build"/bench/bench-rnn "$mode" "$layout") || gs_die "bench-rnn failed"
                     engine+=("$(value "${key}_step_ms" "$o")"); rss+=("$(value "${key}_peak_rss_mib" "$o")"); }
      run_torch() { local o; o=$("$python" bench/compare-torch/rnn.py "$mode" "$layout") || gs_die "rnn.py failed"
                    torch+=("$(value "torch_${key}_step_ms" "$o")"); }
      if ((r % 2)); then run_engine; run_torch; else run_torch; run_engine; fi
      echo "# round $r: $key step engine ${engine[-1]} ms, torch ${torch[-1]} ms"
    done
    e=$(median "${engine[@]}") t=$(median "${torch[@]}")
    echo "${key}_step_ms=$e"
    echo "torch_${key}_step_ms=$t"
    echo "${key}_step_ratio=$(ratio "$e" "$t")"
    echo "${key}_peak_rss_mib=$(median "${rss[@]}")"
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
