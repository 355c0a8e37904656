#!/usr/bin/env bash
# run-demo.sh: the main job, from a fresh Debian 12 machine or an existing checkout: installs
# missing packages, builds build/ incrementally (engine, CLI, inspector), then trains the
# digits MLP (examples/digits-mlp) and shows it:
#   - with a display ($DISPLAY or $WAYLAND_DISPLAY): LIVE in the inspector, which runs the
#     program itself with tracing pointed back at it (`gradscope-inspector -- PROGRAM`);
#   - without one: records the run to build/digits-mlp.gstrace with `gradscope record`, prints
#     `gradscope stats` of it, and exports the pictures the inspector would show to
#     build/demo/: the first and the last training step's autograd graph (PNG and SVG) and
#     the memory timeline by scope and by category (PNG), each listed as `demo_*=PATH`.
# GS_DEMO_HEADLESS=1 forces the second form.
# `run-demo.sh --word-language [ARGS]` runs the second demo instead: examples/word-language,
# the character-level LSTM over packed sequences, with GS_TRACE_VALUES=64 (unless set) so the
# log has each packed step's batch size for the graph's labels and the scrubber's sentences.
# `run-demo.sh --ddp` runs examples/digits-ddp as 2 MPI ranks (`mpirun --oversubscribe -np 2`,
# as root too) recording one log per rank (GS_TRACE=build/demo-ddp/digits-ddp-%r.gstrace, %r
# the rank), then opens both logs in the inspector together (with a display: one window, a
# lane per rank) or, headless, prints `gradscope stats` of both and exports to build/demo-ddp/
# each rank's memory timeline and the stacked lanes of both over the shared time axis.
# Other arguments go to the program.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$GS_ROOT"

gs_build_default

inspector=build/inspector/app/gradscope-inspector
cli=build/inspector/gradscope
demo=digits-mlp
if [ "${1:-}" = --word-language ]; then
  shift
  demo=word-language
  export GS_TRACE_VALUES=${GS_TRACE_VALUES:-64}
fi
if [ "${1:-}" = --ddp ]; then
  shift
  demo=digits-ddp
fi
program=build/examples/$demo
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

if [ "$demo" = digits-ddp ]; then
  command -v mpirun >/dev/null || gs_die "mpirun is missing: apt-get install openmpi-bin (scripts/setup-deps.sh)"
  out=build/demo-ddp
  mkdir -p "$out"
  rm -f "$out"/digits-ddp-*.gstrace
  gs_say "training examples/$demo on 2 MPI ranks, one log per rank: $out/digits-ddp-%r.gstrace"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GS_TRACE="$out/digits-ddp-%r.gstrace" \
    mpirun --oversubscribe -np 2 "$program" "$@"
  logs=("$out/digits-ddp-0.gstrace" "$out/digits-ddp-1.gstrace")
  for log in "${logs[@]}"; do
    [ -s "$log" ] || gs_die "$log was not written: this engine does not expand %r in GS_TRACE (one log per rank)"
  done
  if [ -z "${GS_DEMO_HEADLESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
    gs_say "opening both ranks' logs in the inspector"
    exec "$inspector" "${logs[@]}"
  fi
  gs_say "gradscope stats ${logs[*]}"
  "$cli" stats "${logs[@]}"
  for r in 0 1; do
    "$cli" export-timeline "${logs[$r]}" --by scope --width 1400 --height 500 \
      -o "$out/timeline-rank-$r.png"
    echo "demo_ddp_timeline_rank_${r}_png=$out/timeline-rank-$r.png"
  done
  "$cli" export-timeline "${logs[@]}" --width 1400 --height 520 -o "$out/timeline-ranks.png"
  echo "demo_ddp_timeline_ranks_png=$out/timeline-ranks.png"
  gs_say "open the run later with: $inspector ${logs[*]}"
  exit 0
fi

if [ -z "${GS_DEMO_HEADLESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  gs_say "running examples/$demo live in the inspector"
  exec "$inspector" -- "$program" "$@"
fi

log=build/$demo.gstrace
gs_say "no display: recording examples/$demo to $log"
"$cli" record -o "$log" -- "$program" "$@"
gs_say "gradscope stats $log"
"$cli" stats "$log"

out=build/demo
[ "$demo" = digits-mlp ] || out=build/demo-$demo
mkdir -p "$out"
gs_say "exporting pictures to $out/"
"$cli" export-graph "$log" --backward 1 -o "$out/graph-first-step.png"
"$cli" export-graph "$log" -o "$out/graph-last-step.png"   # the last graph built: the last step
"$cli" export-graph "$log" -o "$out/graph-last-step.svg"
"$cli" export-timeline "$log" --by scope --width 1400 --height 500 -o "$out/timeline-by-scope.png"
"$cli" export-timeline "$log" --by category --width 1400 --height 500 \
  -o "$out/timeline-by-category.png"
for f in graph-first-step.png graph-last-step.png graph-last-step.svg timeline-by-scope.png \
         timeline-by-category.png; do
  key=${f%.*}
  echo "demo_${key//-/_}_${f##*.}=$out/$f"
done
gs_say "open the run later with: $inspector $log"
