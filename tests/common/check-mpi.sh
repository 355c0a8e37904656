#!/bin/sh
# check-mpi.sh: runs a program as 2 MPI ranks on this machine (as root too, oversubscribing
# the cores) and checks how the job ends: it must exit with 0 (WANT ok) or non-zero (WANT
# fail), within MAX_SECONDS, and its output (both streams, both ranks) must contain TEXT
# ("" for anything).
# Usage: check-mpi.sh ok|fail MAX_SECONDS TEXT -- PROGRAM [ARG...]
set -u
want=$1 max=$2 text=$3
shift 3
[ "${1:-}" = "--" ] && shift
command -v mpirun >/dev/null 2>&1 || { echo "FAIL: mpirun not found (scripts/setup-deps.sh)"; exit 1; }
out=$(mktemp "${TMPDIR:-/tmp}/check-mpi.XXXXXX")
trap 'rm -f "$out"' EXIT
start=$(date +%s)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  timeout -k 5 $((max + 30)) mpirun --oversubscribe -np 2 "$@" >"$out" 2>&1
got=$?
took=$(( $(date +%s) - start ))
sed 's/^/out: /' "$out"
echo "exit status $got after ${took} s"
if [ "$want" = ok ] && [ "$got" -ne 0 ]; then echo "FAIL: wanted success"; exit 1; fi
if [ "$want" = fail ] && { [ "$got" -eq 0 ] || [ "$got" -eq 124 ]; }; then
  echo "FAIL: wanted the job to stop by itself with a non-zero status"; exit 1
fi
if [ "$took" -gt "$max" ]; then echo "FAIL: took ${took} s, more than $max"; exit 1; fi
if [ -n "$text" ] && ! grep -qF -- "$text" "$out"; then echo "FAIL: output lacks: $text"; exit 1; fi
echo "ok"
