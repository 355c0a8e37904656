# cli-checks.sh: what the CLI's shell tests share (sourced by test-cli.sh, test-cli-diff.sh and
# test-hostile-logs.sh): ok and FAIL lines with a count of failures, absolute paths, a missing
# tool said the way CI wants it, and a command's exit status checked.

# Absolute paths: the tests work in a temporary directory.
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# A tool a check needs is missing: a failure naming it in CI (CI=true), a skip line elsewhere.
missing_tool() {
  if [ "${CI:-}" = true ]; then fail "$1 is missing (CI=true): $2 cannot run"
  else echo "skipped: no $1: $2 not run"; fi
}
# expect_status WANT DESCRIPTION -- COMMAND...: runs COMMAND (stdout to out, stderr to err).
expect_status() {
  want=$1; what=$2; shift 3
  "$@" >out 2>err
  got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else
    fail "$what: exit $got, wanted $want"; sed 's/^/  stderr: /' err | head -5; fi
}
