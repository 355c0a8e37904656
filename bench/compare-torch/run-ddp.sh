#!/usr/bin/env bash
# run-ddp.sh: data-parallel training against one process and against Debian's PyTorch DDP, and
# the engine's allreduce against Open MPI's own, with the ratios as key=value lines.
#
# Workloads (one OpenBLAS / torch thread per rank, OMP_WAIT_POLICY=PASSIVE, on this machine):
# - the MLP 784-512-512-10 step on a global batch of 256 (bench/bench-ddp mlp; ddp.py for
#   torch): one process without DDP, then 2 ranks under `mpirun --oversubscribe -np 2` (torch:
#   2 processes, gloo backend, init_method env:// with MASTER_ADDR=127.0.0.1);
# - gs_dist_all_reduce of the MLP's 669,706 f32 (bench-ddp allreduce) against a plain
#   MPI_Allreduce program on the same buffer (bench/bench-mpi-allreduce), 2 ranks.
# Rounds alternate the order (engine first, then torch first, ...) so a change in the
# machine's load hits both; each figure is the median over rounds.
#
# Prints: ddp_speedup_w2_over_w1 (samples/s with 2 ranks over 1 process; target >= 1.7),
# beside it ddp_speedup_ceiling_no_comm (the same with the allreduce skipped: 2 ranks each
# training their half batch at once, `bench-ddp mlp --no-allreduce`, what 2 ranks reach at best
# on this machine) and each step's phases for 1 process, 2 ranks and the ceiling
# (ddp_phase_ms_{w1,w2,nocomm}_{forward,backward,hook,wait,optimizer}: hook = DDP's gradient
# hooks inside backward, wait = waiting for the allreduces at backward's end),
# ddp_step_ratio_vs_torch (the engine's 2-rank step over torch's; target <= 0.5),
# allreduce_bandwidth_vs_mpi (the engine's allreduce bandwidth over MPI_Allreduce's; target
# >= 0.9), and the times they come from.
# Usage: bench/compare-torch/run-ddp.sh [ROUNDS]   (default 3; builds build/ incrementally)
# Both sides construct DDP with gradient_as_bucket_view=True (GS_BENCH_BUCKET_VIEW=0: the
# default, False, on both), so neither copies the averages back into the gradients.
set -euo pipefail
rounds_default=3
export GS_BENCH_BUCKET_VIEW=${GS_BENCH_BUCKET_VIEW:-1}
target=bench/bench-ddp
export OPENBLAS_NUM_THREADS=1 # one thread per rank (compare-common.sh keeps it)
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"
ninja -C "$build" -j "$GS_JOBS" bench/bench-mpi-allreduce >/dev/null
command -v mpirun >/dev/null || gs_die "mpirun is missing: apt-get install openmpi-bin (scripts/setup-deps.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { mpirun --oversubscribe -np "$@"; }
echo "# $(mpirun --version | head -n 1); gradient_as_bucket_view=$GS_BENCH_BUCKET_VIEW on both sides"
# The last KEY=number line of OUTPUT, or stop naming what is missing.
need() {
  local v
  v=$(value "$1" "$2")
  [ -n "$v" ] || gs_die "no $1= line in:"$'\n'"$2"
  echo "$v"
}
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = op == "<=" ? v <= t : v >= t; print (ok ? "met" : "missed") }'; }

port=$((29500 + RANDOM % 400))
phases=(forward backward hook wait optimizer)
declare -A phase # [run,phase] -> the rounds' figures, space-separated
keep_phases() {
  local p
  for p in "${phases[@]}"; do phase[$1,$p]+=" $(need "ddp_${p}_ms" "$2")"; done
}
w1() {
  local out
  out=$("$build/bench/bench-ddp" mlp) || gs_die "bench-ddp mlp (1 process) failed"
  w1_ms+=("$(need ddp_step_ms "$out")")
  keep_phases w1 "$out"
}
w2() {
  local out
  out=$(mpi 2 "$build/bench/bench-ddp" mlp) || gs_die "bench-ddp mlp (2 ranks) failed"
  w2_ms+=("$(need ddp_step_ms "$out")")
  w2_wait+=("$(need ddp_wait_ms "$out")")
  w2_backward+=("$(need ddp_backward_ms "$out")")
  keep_phases w2 "$out"
}
nocomm() {
  local out
  out=$(mpi 2 "$build/bench/bench-ddp" mlp --no-allreduce) ||
    gs_die "bench-ddp mlp --no-allreduce (2 ranks) failed"
  nocomm_ms+=("$(need ddp_step_ms "$out")")
  keep_phases nocomm "$out"
}
engine() { # the three in turn, the order reversed every other round
  if ((r % 2)); then w1; w2; nocomm; else nocomm; w2; w1; fi
}
torch() {
  local out r pids=()
  out=$("$python" bench/compare-torch/ddp.py) || gs_die "ddp.py (1 process) failed"
  torch_w1_ms+=("$(need torch_ddp_step_ms "$out")")
  port=$((port + 1))
  for r in 1 0; do
    RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$python" bench/compare-torch/ddp.py >"$tmp/torch-$r.out" &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || gs_die "ddp.py (2 ranks) failed"; done
  torch_w2_ms+=("$(need torch_ddp_step_ms "$(cat "$tmp/torch-0.out")")")
}
allreduce() {
  local out
  out=$(mpi 2 "$build/bench/bench-ddp" allreduce) || gs_die "bench-ddp allreduce failed"
  ar_gbps+=("$(need allreduce_gbps "$out")")
  out=$(mpi 2 "$build/bench/bench-mpi-allreduce") || gs_die "bench-mpi-allreduce failed"
  mpi_gbps+=("$(need mpi_allreduce_gbps "$out")")
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
w1_ms=() w2_ms=() nocomm_ms=() w2_wait=() w2_backward=() torch_w1_ms=() torch_w2_ms=() ar_gbps=() mpi_gbps=()
for r in $(seq "$rounds"); do
  if ((r % 2)); then engine; torch; allreduce; else torch; engine; allreduce; fi
  echo "# round $r: engine ${w1_ms[-1]} ms (1 process), ${w2_ms[-1]} ms (2 ranks, of which ${w2_wait[-1]} ms waiting), ${nocomm_ms[-1]} ms (2 ranks, no allreduce); torch ${torch_w1_ms[-1]} ms, ${torch_w2_ms[-1]} ms; allreduce ${ar_gbps[-1]} GB/s, MPI ${mpi_gbps[-1]} GB/s"
done

m_w1=$(median "${w1_ms[@]}") m_w2=$(median "${w2_ms[@]}")
m_t1=$(median "${torch_w1_ms[@]}") m_t2=$(median "${torch_w2_ms[@]}")
m_ar=$(median "${ar_gbps[@]}") m_mpi=$(median "${mpi_gbps[@]}")
speedup=$(ratio "$m_w1" "$m_w2")      # same global batch: samples/s ratio = step time ratio
m_nocomm=$(median "${nocomm_ms[@]}")
ceiling=$(ratio "$m_w1" "$m_nocomm")
vs_torch=$(ratio "$m_w2" "$m_t2")
bandwidth=$(ratio "$m_ar" "$m_mpi")
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# torch's own DDP speedup: $(ratio "$m_t1" "$m_t2") (its 1-process step $m_t1 ms)"
echo "# targets: ddp_speedup_w2_over_w1 >= 1.7 $(verdict "$speedup" 1.7 '>='), ddp_step_ratio_vs_torch <= 0.5 $(verdict "$vs_torch" 0.5 '<='), allreduce_bandwidth_vs_mpi >= 0.9 $(verdict "$bandwidth" 0.9 '>=')"
echo "ddp_step_ms_w1=$m_w1"
echo "ddp_step_ms_w2=$m_w2"
echo "ddp_step_ms_nocomm=$m_nocomm"
for run in w1 w2 nocomm; do
  for p in "${phases[@]}"; do
    # shellcheck disable=SC2086 # the rounds' figures, one word each
    echo "ddp_phase_ms_${run}_$p=$(median ${phase[$run,$p]})"
  done
done
echo "ddp_wait_ms_w2=$(median "${w2_wait[@]}")"
echo "ddp_backward_ms_w2=$(median "${w2_backward[@]}")"
echo "torch_ddp_step_ms_w1=$m_t1"
echo "torch_ddp_step_ms_w2=$m_t2"
echo "allreduce_gbps=$m_ar"
echo "mpi_allreduce_gbps=$m_mpi"
echo "ddp_speedup_w2_over_w1=$speedup"
echo "ddp_speedup_ceiling_no_comm=$ceiling"
echo "ddp_step_ratio_vs_torch=$vs_torch"
echo "allreduce_bandwidth_vs_mpi=$bandwidth"
