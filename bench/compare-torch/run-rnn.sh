#!/usr/bin/env bash
# run-rnn.sh: the packed LSTM and GRU training step (bench/bench-rnn vs rnn.py: input 64,
# hidden 128, batch 32, lengths uniform in 5..50, enforce_sorted=False, h_n -> Linear(128, 10)
# -> cross_entropy -> backward -> SGD lr 0.01), packed and padded, against Debian's PyTorch,
# with the same settings and alternating rounds as run.sh; each side's result is the median
# over rounds, of the wall time and of the CPU time per step (on a loaded machine the wall time
# counts the wait for a core). Targets: step ratio <= 0.5 (packed and padded), peak RSS <= 64 MiB.
# Usage: bench/compare-torch/run-rnn.sh [ROUNDS]   (default 3; builds GS_BUILD_DIR, default
# build/, incrementally)
set -euo pipefail
rounds_default=3 target=bench/bench-rnn
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"

for mode in lstm gru; do
  for layout in packed padded; do
    key=${mode}_${layout}
    engine=() torch=() rss=() engine_cpu=() torch_cpu=()
    for r in $(seq "$rounds"); do
      run_engine() { local o; o=$("$build"/bench/bench-rnn "$mode" "$layout") || gs_die "bench-rnn failed"
                     engine+=("$(value "${key}_step_ms" "$o")"); rss+=("$(value "${key}_peak_rss_mib" "$o")")
                     engine_cpu+=("$(value "${key}_step_cpu_ms" "$o")"); }
      run_torch() { local o; o=$("$python" bench/compare-torch/rnn.py "$mode" "$layout") || gs_die "rnn.py failed"
                    torch+=("$(value "torch_${key}_step_ms" "$o")")
                    torch_cpu+=("$(value "torch_${key}_step_cpu_ms" "$o")"); }
      if ((r % 2)); then run_engine; run_torch; else run_torch; run_engine; fi
      echo "# round $r: $key step engine ${engine[-1]} ms (CPU ${engine_cpu[-1]}), torch ${torch[-1]} ms (CPU ${torch_cpu[-1]})"
    done
    e=$(median "${engine[@]}") t=$(median "${torch[@]}")
    echo "${key}_step_ms=$e"
    echo "torch_${key}_step_ms=$t"
    echo "${key}_step_ratio=$(ratio "$e" "$t")"
    ec=$(median "${engine_cpu[@]}") tc=$(median "${torch_cpu[@]}")
    echo "${key}_step_cpu_ms=$ec"
    echo "torch_${key}_step_cpu_ms=$tc"
    echo "${key}_step_cpu_ratio=$(ratio "$ec" "$tc")"
    echo "${key}_peak_rss_mib=$(median "${rss[@]}")"
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
