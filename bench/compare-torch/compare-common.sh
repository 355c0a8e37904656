# compare-common.sh: what the training-step comparisons with PyTorch share (sourced by
# run-rnn.sh and run-word-language.sh, after they set rounds_default and target): the rounds
# argument checked, Debian's PyTorch required, the build configured and TARGET built, the same
# thread budget for both sides (OMP_WAIT_POLICY=PASSIVE, OPENBLAS_NUM_THREADS, default 2, as
# GS_TORCH_THREADS for torch), a header with the load, and value / median / ratio helpers.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../scripts/common.sh"
cd "$GS_ROOT"
rounds=${1:-$rounds_default}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || gs_die "$(basename "$0"): expected a positive number of rounds, got '$rounds'"
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || gs_die "python3-torch is missing: apt-get install python3-torch"
build=${GS_BUILD_DIR:-build}
gs_configure "$build"
ninja -C "$build" -j "$GS_JOBS" "$target" >/dev/null

export OMP_WAIT_POLICY=PASSIVE
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
export GS_TORCH_THREADS=$OPENBLAS_NUM_THREADS
echo "# thread budget $OPENBLAS_NUM_THREADS per side; torch $("$python" -c 'import torch; print(torch.__version__)'), $rounds alternating rounds"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

# The last KEY=number line of OUTPUT.
value() { sed -n "s/^$1=\([-0-9.eE+]*\).*/\1/p" <<<"$2" | tail -n 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
