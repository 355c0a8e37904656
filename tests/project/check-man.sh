#!/usr/bin/env bash
# check-man.sh GRADSCOPE INSPECTOR DOC_DIR: the manual pages (doc/gradscope.1,
# doc/gradscope-inspector.1) render without a groff warning, and say what the programs' --help
# says: every command `gradscope --help` lists has a section in gradscope.1, every long option
# of each command's --help and of `gradscope-inspector --help` appears in its page. They are
# written by hand, so this is what catches a command or option added without its manual.
set -uo pipefail
gradscope=$1 inspector=$2 doc=$3
failed=0
fail() { echo "not ok: $*"; failed=1; }

for page in "$doc/gradscope.1" "$doc/gradscope-inspector.1"; do
  warnings=$(groff -man -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "$(basename "$page") has groff warnings: $warnings"
done

# Long options in a --help text, without --help itself and GApplication's own.
long_options() { grep -o -- '--[a-z][a-z-]*' | grep -vx -- '--help\(-all\|-gapplication\)\?' |
  grep -vx -- '--gapplication-service' | sort -u; }
# How roff spells an option: every '-' as '\-'.
in_page() { grep -qF -- "${1//-/\\-}" "$2"; }

commands=$("$gradscope" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$commands" ] || fail "gradscope --help lists no commands"
checked=0
for command in $commands; do
  grep -q "^\.SS \"${command//-/\\\\-}[ \"]" "$doc/gradscope.1" ||
    fail "gradscope.1 has no section for the command $command"
  for option in $("$gradscope" "$command" --help | long_options); do
    in_page "$option" "$doc/gradscope.1" || fail "gradscope.1 does not mention $command $option"
    checked=$((checked + 1))
  done
done
for option in $("$gradscope" --help | sed -n '/^Options:/,$p' | long_options); do
  in_page "$option" "$doc/gradscope.1" || fail "gradscope.1 does not mention $option"
  checked=$((checked + 1))
done
for option in $("$inspector" --help | long_options); do
  in_page "$option" "$doc/gradscope-inspector.1" ||
    fail "gradscope-inspector.1 does not mention $option"
  checked=$((checked + 1))
done
echo "$(echo "$commands" | wc -w) commands and $checked options checked against the manual pages"
[ "$checked" -gt 0 ] || fail "no option was checked"
exit $failed
