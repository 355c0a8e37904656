#!/usr/bin/env bash
# run-demo.sh: the main job, from a fresh Debian 12 machine or an existing checkout: installs
# missing packages, builds build/ incrementally and runs the engine tour
# (examples/tensor-tour), whose last lines are machine-readable (live_tensors=0, ...).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$GS_ROOT"

bash scripts/setup-deps.sh
gs_configure build
ninja -C build -j "$GS_JOBS" examples/tensor-tour
gs_say "running examples/tensor-tour"
exec ./build/examples/tensor-tour "$@"
