#!/usr/bin/env bash
# run-rnn.sh: the packed LSTM and GRU training step (bench/bench-rnn vs rnn.py: input 64,
# hidden 128, batch 32, lengths uniform in 5..50, enforce_sorted=False, h_n -> Linear(128, 10)
# -> cross_entropy -> backward -> SGD lr 0.01), packed and padded, against Debian's PyTorch,
# with the same settings and alternating rounds as run.sh; each side's result is the median
# over rounds. Target: packed step ratio <= 0.5, peak RSS <= 64 MiB.
# Usage: bench/compare-torch/run-rnn.sh [ROUNDS]   (default 3; builds GS_BUILD_DIR, default
# build/, incrementally)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../scripts/common.sh"
cd "$GS_ROOT"
rounds=${1:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || gs_die "run-rnn.sh: expected a positive number of rounds, got '$rounds'"
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || gs_die "python3-torch is missing: apt-get install python3-torch"
build=${GS_BUILD_DIR:-build}
gs_configure "$build"
ninja -C "$build" -j "$GS_JOBS" bench/bench-rnn >/dev/null

export OMP_WAIT_POLICY=PASSIVE
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
export GS_TORCH_THREADS=$OPENBLAS_NUM_THREADS
echo "# thread budget $OPENBLAS_NUM_THREADS per side; torch $("$python" -c 'import torch; print(torch.__version__)'), $rounds alternating rounds"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

value() { sed -n "s/^$1=\([-0-9.eE+]*\).*/\1/p" <<<"$2" | tail -n 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

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
