#!/usr/bin/env bash
# run.sh: the engine against Debian's PyTorch on the same workloads, run alternately, with the
# ratios as key=value lines. Workloads: the MLP step (bench/bench-mlp vs mlp.py: 784-512-512-10,
# batch 128, SGD momentum; median of 200 steps after 20 warm-up; peak RSS) and the digits
# example's 30 epochs (examples/digits-mlp vs digits.py, whose defaults are the example's recipe).
#
# Both sides get the same settings: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_NUM_THREADS (default 2)
# and OPENBLAS_CORETYPE exactly as the caller has them (unset stays unset), and a budget of
# that many threads: OpenBLAS's threads for the engine (its elementwise ops are
# single-threaded), torch.set_num_threads plus the same OpenBLAS for torch (Debian's torch
# runs its matrix products on that OpenBLAS). Rounds alternate which side goes first
# (engine, torch, torch, engine, ...) so a change in the machine's load hits both; each
# side's result is the median over rounds.
#
# Installs python3-torch with apt-get when /usr/bin/python3 cannot import torch (needs root).
# Usage: bench/compare-torch/run.sh [ROUNDS]   (default 5; builds build/ incrementally)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../scripts/common.sh"
cd "$GS_ROOT"
rounds=${1:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || gs_die "run.sh: expected a positive number of rounds, got '$rounds'"
python=/usr/bin/python3 # Debian's python3-torch is installed for the system Python

if ! "$python" -c 'import torch' 2>/dev/null; then
  [ "$(id -u)" = 0 ] || gs_die "python3-torch is missing and installing it needs root: apt-get install python3-torch"
  gs_say "installing python3-torch"
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch >/dev/null ||
    gs_die "apt-get install python3-torch failed"
fi

gs_configure build
ninja -C build -j "$GS_JOBS" bench/bench-mlp examples/digits-mlp >/dev/null

export OMP_WAIT_POLICY=PASSIVE
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
threads=$OPENBLAS_NUM_THREADS
export GS_TORCH_THREADS=$threads # read by mlp.py and digits.py
echo "# thread budget $threads per side: engine OpenBLAS $threads; torch set_num_threads($threads) + OpenBLAS $threads"
echo "# OMP_WAIT_POLICY=$OMP_WAIT_POLICY OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}"
echo "# torch $("$python" -c 'import torch; print(torch.__version__)'), $rounds alternating rounds"
# Other work on the machine moves both sides' times (most with OpenBLAS threads, which spin
# while they wait): the load average says how much to trust one run.
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

# value KEY TEXT: the number after KEY= at the start of a line of TEXT or after a space (the
# last one; fails if there is none).
value() {
  local v
  v=$(sed -n "s/^\(.* \)\{0,1\}$1=\([-0-9.eE+]*\).*/\2/p" <<<"$2" | tail -n 1)
  [ -n "$v" ] || gs_die "no $1= line in:"$'\n'"$2"
  echo "$v"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

engine_mlp() {
  local out
  out=$(build/bench/bench-mlp) || gs_die "bench-mlp failed"
  mlp_ms+=("$(value mlp_step_ms "$out")")
  mlp_rss+=("$(value mlp_peak_rss_mib "$out")")
}
torch_mlp() {
  local out
  out=$("$python" bench/compare-torch/mlp.py) || gs_die "mlp.py failed"
  torch_mlp_ms+=("$(value torch_mlp_step_ms "$out")")
  torch_mlp_rss+=("$(value torch_mlp_peak_rss_mib "$out")")
}
engine_digits() {
  local out
  out=$(build/examples/digits-mlp) || gs_die "digits-mlp failed"
  digits_s+=("$(value digits_seconds "$out")")
  digits_acc=$(value test_accuracy "$out")
}
torch_digits() {
  local out
  out=$("$python" bench/compare-torch/digits.py) || gs_die "digits.py failed"
  torch_digits_s+=("$(value digits_seconds "$out")")
  torch_digits_acc=$(value test_accuracy "$out")
}

mlp_ms=() mlp_rss=() torch_mlp_ms=() torch_mlp_rss=() digits_s=() torch_digits_s=()
for r in $(seq "$rounds"); do
  if ((r % 2)); then engine_mlp; torch_mlp; else torch_mlp; engine_mlp; fi
  echo "# round $r: mlp step engine ${mlp_ms[-1]} ms, torch ${torch_mlp_ms[-1]} ms"
done
for r in $(seq "$rounds"); do
  if ((r % 2)); then engine_digits; torch_digits; else torch_digits; engine_digits; fi
  echo "# round $r: digits engine ${digits_s[-1]} s, torch ${torch_digits_s[-1]} s"
done

m_engine=$(median "${mlp_ms[@]}") m_torch=$(median "${torch_mlp_ms[@]}")
d_engine=$(median "${digits_s[@]}") d_torch=$(median "${torch_digits_s[@]}")
rss=$(median "${mlp_rss[@]}") torch_rss=$(median "${torch_mlp_rss[@]}")
mlp_ratio=$(ratio "$m_engine" "$m_torch") digits_ratio=$(ratio "$d_engine" "$d_torch")
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
minimum() { printf '%s\n' "$@" | sort -g | head -n 1; }
echo "# fastest round of each side: mlp engine $(minimum "${mlp_ms[@]}") ms, torch $(minimum "${torch_mlp_ms[@]}") ms;" \
  "digits engine $(minimum "${digits_s[@]}") s, torch $(minimum "${torch_digits_s[@]}") s"
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "met" : "missed") }'; }
echo "# targets: mlp_step_ratio <= 0.9 $(verdict "$mlp_ratio" 0.9), digits_time_ratio <= 0.3 $(verdict "$digits_ratio" 0.3), mlp_rss_mib <= 64 $(verdict "$rss" 64)"
echo "# digits test accuracy: engine $digits_acc, torch $torch_digits_acc"
echo "mlp_step_ms=$m_engine"
echo "torch_mlp_step_ms=$m_torch"
echo "mlp_step_ratio=$mlp_ratio"
echo "digits_seconds=$d_engine"
echo "torch_digits_seconds=$d_torch"
echo "digits_time_ratio=$digits_ratio"
echo "mlp_rss_mib=$rss"
echo "torch_mlp_rss_mib=$torch_rss"
echo "compare_threads=$threads"
