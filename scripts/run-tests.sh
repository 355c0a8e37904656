#!/usr/bin/env bash
# run-tests.sh: the whole test suite, from a fresh Debian 12 machine or an existing checkout.
# Installs missing packages, then
#   1. builds build/ (the normal configuration) and runs every test in it;
#   2. builds build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer (any report is
#      fatal, leaks included) and runs the engine, example, CLI, inspector, widget and graph tests
#      in it. Leaks of fontconfig and Graphviz's plugin loader, and only those, are
#      suppressed (tests/lsan.supp);
#   3. builds every test that runs threads (the DataLoader's prefetch thread and workers,
#      scopes and handles on two threads, recording while another thread flushes the log, the
#      inspector's source workers, the graph's layout worker) in build-tsan/ with
#      ThreadSanitizer and runs them.
# The widget tests (suite inspector-ui) run under `xvfb-run -a` with GSK_RENDERER=cairo and
# GTK_A11Y=none (set in tests/inspector/app/meson.build), in English and once in Chinese.
# Every run always happens; the exit status is non-zero if either failed. Reruns are
# incremental. Results: testlog.json in build/, build-asan/ and build-tsan/ meson-logs/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$GS_ROOT"

bash scripts/setup-deps.sh

# A run that fails before meson test writes its log must not leave the previous run's
# results behind for .ci/run to read.
rm -f build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
  build-asan/meson-logs/testlog-distributed.json \
  build-tsan/meson-logs/testlog.json

status=0

gs_say "normal build (build/)"
gs_configure build
if ninja -C build -j "$GS_JOBS"; then
  gs_say "tests (build/)"
  meson test -C build --no-rebuild --print-errorlogs --num-processes "$GS_JOBS" || status=1
else
  gs_say "build/ did not compile"
  status=1
fi

gs_say "sanitizer build (build-asan/: address, undefined; every report fatal)"
gs_configure build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all
if ninja -C build-asan -j "$GS_JOBS"; then
  gs_say "engine, example, CLI, inspector, widget and graph tests under the sanitizers (build-asan/)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  LSAN_OPTIONS=suppressions="$GS_ROOT/tests/lsan.supp":print_suppressions=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --no-rebuild --print-errorlogs --num-processes "$GS_JOBS" \
      --suite engine --suite examples --suite cli --suite inspector --suite inspector-ui \
      --suite graph || status=1
  # The distributed layer's C tests (2 MPI ranks) too, with leak detection off: Open MPI's own
  # allocations are never freed. Their results go to testlog-distributed.json.
  gs_say "distributed tests under the sanitizers, without leak detection (build-asan/)"
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 1 \
      --logbase testlog-distributed dist-parity dist-parity-cpu-avx2 dist-parity-cpu-none \
      dist-parity-mpi dist-unused dist-shapes dist-empty \
      dist-drift dist-hang dist-kill dist-ddp-hang dist-ddp-kill dist-sampler || status=1
else
  gs_say "build-asan/ did not compile"
  status=1
fi

gs_say "thread sanitizer (build-tsan/: the tests that run threads)"
gs_configure build-tsan -Db_sanitize=thread -Db_lundef=false
# Every test that starts threads (keep this list whole as threaded code is added): the engine's
# handles, scopes, recorder and its flight recorder's applier thread (with the CLI and the
# translations its test reads stats in), DataLoader (prefetch thread, worker processes), the trace
# model fed by two recording threads, a file loaded with the life index on a thread of its own
# (trace-model-load-parallel), the file source's worker (it reads cli-workload's log) and the
# optimizers' passes shared with a helper thread (split-run, optim-fused-2-threads).
# tests/common/tsan-glib.c makes GLib's locks visible to TSan. Not yet here:
# source-listen and source-spawn (TSan reports races inside uninstrumented GLib: an eventfd
# made on the worker and written by the main loop, g_strconcat on a string from another
# thread; no frame of ours) and graph (the same inside fontconfig under Graphviz): they need
# suppressions narrow enough not to hide our own code called from GLib.
tsan_tests=(handles scope trace flight-recorder loader loader-workers trace-model-feed
  trace-model-load-parallel source-file split-run optim-fused-2-threads)
# Their executables (ninja targets: each test's folder mirrors the source tree) and the
# workload whose log source-file reads.
tsan_targets=(tests/engine/core/test-handles tests/engine/scope/test-scope
  tests/engine/trace/test-trace tests/engine/trace/test-flight-recorder inspector/gradscope
  po/zh_CN/LC_MESSAGES/gradscope.mo tests/engine/data/test-loader tests/engine/data/test-loader-workers
  tests/inspector/model/test-trace-model-feed tests/inspector/model/test-trace-model-load-parallel
  tests/inspector/source/test-source-file
  tests/inspector/cli/cli-workload tests/engine/base/test-split-run
  tests/engine/optim/test-optim-fused)
if ninja -C build-tsan -j "$GS_JOBS" "${tsan_targets[@]}"; then
  TSAN_OPTIONS=halt_on_error=1 \
    meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes "$GS_JOBS" \
      "${tsan_tests[@]}" || status=1
else
  gs_say "build-tsan/ did not compile"
  status=1
fi

if [ "$status" -ne 0 ]; then
  gs_say "FAILED (see the logs above and */meson-logs/testlog.txt)"
else
  gs_say "all tests passed"
fi
exit "$status"
