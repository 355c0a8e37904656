#!/usr/bin/env bash
# run-bench.sh: builds build/ (incrementally) and runs every benchmark in bench/, printing
# their `name=value unit` result lines. OpenBLAS runs single-threaded unless
# OPENBLAS_NUM_THREADS is set; OPENBLAS_CORETYPE is passed through as it is (it changes
# sgemm's speed by ~1.5x on AVX-512 machines). Both sides of every comparison run in the
# same process, so they always share these settings.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$GS_ROOT"

gs_build_default

export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
status=0
for name in overhead bandwidth interop loader matmul autograd scope trace trace-read model live open symbols timeline \
    graph-layout stops; do
  exe=build/bench/bench-$name
  if [ ! -x "$exe" ]; then
    gs_say "bench-$name is not built in this configuration (see bench/meson.build); skipped"
    continue
  fi
  gs_say "bench-$name"
  "$exe" || { gs_say "bench-$name failed"; status=1; }
done
# The training workloads: the MLP step, against its GEMM floor, its memory over 10,000 steps
# (flat: no growth in RSS or live tensors), and the digits example's 30 epochs.
for cmd in "build/bench/bench-mlp" "build/bench/bench-mlp --floor" \
  "build/bench/bench-mlp --steps 10000" "bench/bench-digits.sh build"; do
  gs_say "$cmd"
  $cmd || { gs_say "$cmd failed"; status=1; }
done
# Unusual shapes (issue 22): every command on each hostile log at full size, 10 s each.
gs_say "bench-hostile-logs.sh"
bench/bench-hostile-logs.sh build/inspector/gradscope build/tests/fuzz/make-hostile-logs 1 10 ||
  { gs_say "bench-hostile-logs.sh failed"; status=1; }
# The inspector's event list needs a display: a virtual one, drawn with cairo.
if [ -x build/bench/bench-event-list ] && command -v xvfb-run >/dev/null 2>&1; then
  gs_say "bench-event-list (under xvfb-run)"
  GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory \
    xvfb-run -a build/bench/bench-event-list || { gs_say "bench-event-list failed"; status=1; }
fi
exit "$status"
