#!/bin/sh
# missing-tool.sh: the test meson registers in place of tests it could not register because a
# tool was not found at configure time, so that a missing tool is never silent. In CI
# (CI=true, as CI systems set it) it fails, naming the tool; elsewhere it is a skip (exit 77)
# that says what did not run.
# Usage: missing-tool.sh TOOL WHAT-DID-NOT-RUN
if [ "${CI:-}" = true ]; then
  echo "FAIL: $1 is missing (CI=true): $2 cannot run; install it (scripts/setup-deps.sh)"
  exit 1
fi
echo "skipped: no $1: $2 not run"
exit 77
