#!/usr/bin/env bash
# check-po.sh SRCDIR BUILDDIR: fails if any language in LINGUAS misses a translation. A fresh
# template is extracted from the sources in POTFILES (the options meson's glib preset uses),
# merged into a copy of each .po, and msgfmt counts what is untranslated or fuzzy; it also
# checks format strings (msgfmt --check), so a translation cannot drop or reorder a %s.
set -euo pipefail
src=$1
build=$2
root=$(cd "$src/.." && pwd)
work="$build/check-po"
mkdir -p "$work"

xgettext --package-name=gradscope --from-code=UTF-8 --add-comments \
  --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
  --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
  --keyword=ngettext:1,2 \
  --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format \
  --flag=g_dngettext:2:pass-c-format --flag=g_strdup_printf:1:c-format \
  --flag=g_string_printf:2:c-format --flag=g_string_append_printf:2:c-format \
  --flag=g_error_new:3:c-format --flag=g_set_error:4:c-format \
  -D "$root" -f "$src/POTFILES" -o "$work/gradscope.pot"

status=0
# Every source that marks strings must be listed, or its strings never reach translators.
cd "$root"
# (Sources sit in folders of folders: inspector/model/index/, inspector/app/capture/...)
for f in $(grep -rl --include='*.c' -E '\b(N?C?_|ngettext)\(' inspector 2>/dev/null | sort) \
         $(grep -rl --include='*.ui' 'translatable="yes"' inspector 2>/dev/null | sort); do
  if ! grep -qxF "$f" "$src/POTFILES"; then
    echo "po/POTFILES does not list $f, which has translatable strings"
    status=1
  fi
done
cd - >/dev/null

while read -r lang; do
  [ -z "$lang" ] && continue
  case "$lang" in \#*) continue ;; esac
  msgmerge --quiet --no-fuzzy-matching -o "$work/$lang.po" "$src/$lang.po" "$work/gradscope.pot"
  stats=$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$work/$lang.po" 2>&1) || {
    echo "$lang: msgfmt --check failed: $stats"
    status=1
    continue
  }
  echo "$lang: $stats"
  if echo "$stats" | grep -Eq 'fuzzy|untranslated'; then
    echo "$lang: every message must be translated and none fuzzy; these are not:"
    { msgattrib --untranslated "$work/$lang.po"; msgattrib --only-fuzzy "$work/$lang.po"; } |
      grep '^msgid "..*' | head -40 || true
    status=1
  fi
  # The build compiles the .po itself, not the merge above: a message with <PRIu64> that
  # lacks its c-format flag there is compiled as plain text and never matches at run time.
  unflagged=$(awk 'BEGIN { RS = "" } /msgid[^\n]*<PRI/ && !/#,[^\n]*c-format/' "$src/$lang.po" |
    grep '^msgid' || true)
  if [ -n "$unflagged" ]; then
    echo "$lang: these messages use <PRI...> macros but lack '#, c-format' in $lang.po:"
    echo "$unflagged"
    status=1
  fi
  # Messages in the .po that no source uses any more are stale: they must go too.
  obsolete=$(msgattrib --only-obsolete "$work/$lang.po" | grep -c '^#~ msgid' || true)
  if [ "$obsolete" -gt 0 ]; then
    echo "$lang: $obsolete translations no longer used by any source (remove them)"
    status=1
  fi
done < "$src/LINGUAS"
exit "$status"
