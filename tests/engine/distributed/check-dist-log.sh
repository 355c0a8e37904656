#!/bin/sh
# check-dist-log.sh: one log per rank (format 1.7). Records `test-dist traced` twice as 2 MPI
# ranks with GS_TRACE=DIR/RUN-%r.gstrace (as check-mpi.sh runs mpirun, as root too), then:
# both logs exist and test-dist-log finds rank 0/1, world 2, one run id, the collectives and
# the bucket bytes per step; `gradscope stats` of both prints "ranks: 2" and the slowest rank;
# logs of two runs are refused naming them; diff compares rank by rank; explain prefixes the
# rank or keeps one (--rank); and %r outside mpirun is rank 0.
# Usage: check-dist-log.sh GRADSCOPE TEST_DIST TEST_DIST_LOG
set -u
gradscope=$1 test_dist=$2 test_dist_log=$3
command -v mpirun >/dev/null 2>&1 || { echo "FAIL: mpirun not found (scripts/setup-deps.sh)"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/check-dist-log.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export LC_ALL=C.UTF-8 LANGUAGE=
fail() { echo "FAIL: $*"; exit 1; }

record() { # RUN [MODE]: the run's log name, test-dist's mode (traced)
  GS_TRACE="$dir/$1-%r.gstrace" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 150 \
    mpirun --oversubscribe -np 2 -x GS_TRACE "$test_dist" "${2:-traced}" >"$dir/$1.out" 2>&1 ||
    { sed 's/^/out: /' "$dir/$1.out"; fail "mpirun of test-dist ${2:-traced} failed for run $1"; }
  for r in 0 1; do
    [ -s "$dir/$1-$r.gstrace" ] || fail "GS_TRACE=$1-%r.gstrace wrote no $1-$r.gstrace"
  done
}
record a
record b

# Parameters of test-dist's f64 net: fc1 8x6 + 8, fc2 3x8 + 3 = 83 doubles; 6 steps.
"$test_dist_log" "$dir/a-0.gstrace" "$dir/a-1.gstrace" 6 664 || fail "run a's logs"
"$test_dist_log" "$dir/b-0.gstrace" "$dir/b-1.gstrace" 6 664 || fail "run b's logs"
# With gradient_as_bucket_view backward writes the weights' gradients (6x8 + 8x3 doubles, 576
# bytes) into the buckets itself, and the log says so; explain then says DDP copied only the
# rest. That run has one step more (its gradients outlive DDP).
record v traced-views
"$test_dist_log" "$dir/v-0.gstrace" "$dir/v-1.gstrace" 7 664 576 || fail "run v's logs"
"$gradscope" explain "$dir/v-0.gstrace" "$dir/v-1.gstrace" >"$dir/explain-v" 2>&1 ||
  fail "explain of the bucket-view run failed"
grep -Eq '^rank [01] #[0-9]+ bucket_ready: .* backward wrote (it|them) into bucket [0-9]+ .* itself' \
  "$dir/explain-v" || { grep bucket_ready "$dir/explain-v" | head -3; fail "explain of bucket_ready with views"; }

"$gradscope" stats "$dir/a-1.gstrace" "$dir/a-0.gstrace" >"$dir/stats" 2>&1 ||
  { cat "$dir/stats"; fail "gradscope stats of both ranks failed"; }
cat "$dir/stats"
grep -q '^ranks: 2 ' "$dir/stats" || fail "stats lacks 'ranks: 2'"
grep -Eq '^slowest rank: [01] ' "$dir/stats" || fail "stats names no slowest rank"
# One row per rank, in rank order, with the DDP steps and the bytes allreduced (6 x 664 bytes
# of buckets plus test-dist's own allreduces).
grep -Eq '^ +0 +6 ' "$dir/stats" && grep -Eq '^ +1 +6 ' "$dir/stats" ||
  fail "stats should list ranks 0 and 1 with 6 steps each"

if "$gradscope" stats "$dir/a-0.gstrace" "$dir/b-1.gstrace" >"$dir/mixed" 2>&1; then
  cat "$dir/mixed"; fail "stats accepted the logs of two runs"
fi
cat "$dir/mixed"
grep -q "a-0.gstrace and .*b-1.gstrace are not logs of one run" "$dir/mixed" ||
  fail "the refusal should name both files"
if "$gradscope" stats "$dir/a-0.gstrace" "$dir/b-0.gstrace" "$dir/a-0.gstrace" >/dev/null 2>&1; then
  fail "stats accepted the logs of two runs (three files)"
fi

"$gradscope" diff "$dir/a-0.gstrace" "$dir/a-1.gstrace" "$dir/b-0.gstrace" "$dir/b-1.gstrace" \
  >"$dir/diff" 2>&1
status=$?
[ "$status" -le 0 ] || { cat "$dir/diff"; fail "diff of two runs' ranks exited $status"; }
grep -q '^== rank 0 ==' "$dir/diff" && grep -q '^== rank 1 ==' "$dir/diff" ||
  { cat "$dir/diff"; fail "diff should compare rank by rank"; }

"$gradscope" explain "$dir/a-0.gstrace" "$dir/a-1.gstrace" >"$dir/explain" 2>&1 ||
  fail "explain of both ranks failed"
grep -q '^rank 0 #[0-9]* dist_init: .* as rank 0 of 2' "$dir/explain" &&
  grep -q '^rank 1 #[0-9]* dist_init: .* as rank 1 of 2' "$dir/explain" ||
  fail "explain should prefix each rank's events with its rank"
grep -q '^rank 1 #[0-9]* bucket_ready: .*fc2.bias' "$dir/explain" ||
  fail "bucket_ready should name the parameters by module path"
# Collectives with their bytes, and each rank's waits with how long it waited for the others.
size='[0-9.]+[^)]*(bytes|KiB|MiB)' # the space may be a no-break space
for r in 0 1; do
  grep -Eq "^rank $r #[0-9]+ collective_begin: DDP started the allreduce of bucket [0-9]+ \($size\)" "$dir/explain" &&
    grep -Eq "^rank $r #[0-9]+ collective_end: allreduce #[0-9]+ \($size\) of bucket [0-9]+ finished" "$dir/explain" &&
    grep -Eq "^rank $r #[0-9]+ wait_end: the wait for DDP's bucket allreduces is over after [0-9.]+ ms" "$dir/explain" ||
    fail "explain should give rank $r's allreduces with their bytes and its waits with their time"
done
"$gradscope" explain --rank 1 "$dir/a-0.gstrace" "$dir/a-1.gstrace" >"$dir/explain1" 2>&1 ||
  fail "explain --rank 1 failed"
grep -q '^#[0-9]* dist_init: .* as rank 1 of 2' "$dir/explain1" || fail "explain --rank 1"
! grep -q 'as rank 0 of 2' "$dir/explain1" || fail "explain --rank 1 showed rank 0's events"

# Outside mpirun, %r is rank 0 (the sampler mode runs in one process, without MPI).
GS_TRACE="$dir/solo-%r.gstrace" "$test_dist" sampler >/dev/null 2>&1 ||
  fail "test-dist sampler failed"
[ -s "$dir/solo-0.gstrace" ] || fail "GS_TRACE=solo-%r.gstrace outside mpirun wrote no solo-0"
echo "ok"
