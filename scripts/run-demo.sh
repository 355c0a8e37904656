#!/usr/bin/env bash
# run-demo.sh: the main job, from a fresh Debian 12 machine or an existing checkout: installs
# missing packages, builds build/ incrementally (engine, CLI, inspector), then trains the
# digits MLP (examples/digits-mlp) and shows it:
#   - with a display ($DISPLAY or $WAYLAND_DISPLAY): LIVE in the inspector, which runs the
#     program itself with tracing pointed back at it (`gradscope-inspector -- PROGRAM`);
#   - without one: records the run to build/digits-mlp.gstrace with `gradscope record` and
#     prints `gradscope stats` of it.
# GS_DEMO_HEADLESS=1 forces the second form.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$GS_ROOT"

bash scripts/setup-deps.sh
gs_configure build
ninja -C build -j "$GS_JOBS"

inspector=build/inspector/app/gradscope-inspector
cli=build/inspector/gradscope
program=build/examples/digits-mlp
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

if [ -z "${GS_DEMO_HEADLESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  gs_say "running examples/digits-mlp live in the inspector"
  exec "$inspector" -- "$program" "$@"
fi

log=build/digits-mlp.gstrace
gs_say "no display: recording examples/digits-mlp to $log"
"$cli" record -o "$log" -- "$program" "$@"
gs_say "gradscope stats $log"
"$cli" stats "$log"
gs_say "open it later with: $inspector $log"
