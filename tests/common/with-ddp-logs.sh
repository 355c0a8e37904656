#!/bin/sh
# with-ddp-logs.sh: records examples/digits-ddp twice as 2 MPI ranks on this machine (as
# check-mpi.sh runs mpirun, as root too), one log per rank (GS_TRACE=DIR/a-%r.gstrace, then
# DIR/b-%r.gstrace: two runs, two run ids), and runs COMMAND with GS_DDP_LOGS=DIR, so tests of
# the inspector read real ranks' logs. No mpirun is a failure, not a skip: the distributed
# layer is part of the build (scripts/setup-deps.sh installs Open MPI).
# Under AddressSanitizer the ranks record with leak detection off: Open MPI's plugins leak at
# exit from modules already unloaded (LSan names no module to suppress), and these ranks only
# make logs; COMMAND, the test, keeps the caller's ASAN_OPTIONS.
# Usage: with-ddp-logs.sh DIGITS_DDP -- COMMAND [ARG...]
set -u
digits_ddp=$1
shift
[ "${1:-}" = "--" ] && shift
command -v mpirun >/dev/null 2>&1 || { echo "FAIL: mpirun not found (scripts/setup-deps.sh)"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/with-ddp-logs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
rank_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
for run in a b; do
  ASAN_OPTIONS=$rank_asan GS_TRACE="$dir/$run-%r.gstrace" OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 250 \
    mpirun --oversubscribe -np 2 -x GS_TRACE -x OPENBLAS_NUM_THREADS -x ASAN_OPTIONS "$digits_ddp" \
    >"$dir/$run.out" 2>&1 ||
    { sed 's/^/out: /' "$dir/$run.out"; echo "FAIL: mpirun of digits-ddp (run $run) failed"; exit 1; }
  for r in 0 1; do
    [ -s "$dir/$run-$r.gstrace" ] || { echo "FAIL: digits-ddp wrote no $run-$r.gstrace"; exit 1; }
  done
done
GS_DDP_LOGS=$dir "$@"
