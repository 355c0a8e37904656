#!/bin/sh
# check-exit.sh: a command that must be refused in a given way: it exits with exactly
# STATUS and its stderr has TEXT. Used instead of meson's should_fail, which also passes on a
# crash, a sanitizer abort or a wrapper (xvfb-run) that never started the program.
# Usage: check-exit.sh STATUS TEXT -- COMMAND [ARG...]
set -u
want=$1 text=$2
shift 2
[ "${1:-}" = "--" ] && shift
err=$(mktemp "${TMPDIR:-/tmp}/check-exit.XXXXXX")
trap 'rm -f "$err"' EXIT
"$@" 2>"$err"
got=$?
sed 's/^/stderr: /' "$err"
if [ "$got" -ne "$want" ]; then
  echo "FAIL: $* exited with $got, wanted $want"
  exit 1
fi
if ! grep -qF -- "$text" "$err"; then
  echo "FAIL: $* exited with $got but stderr lacks: $text"
  exit 1
fi
echo "ok: $* exited with $want saying: $text"
