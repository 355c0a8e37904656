#!/usr/bin/env bash
# test-explain-tour.sh GRADSCOPE TOUR_DIR: `gradscope explain --list-tours` lists every tour
# once; `gradscope explain --tour NAME LOG` prints each step's event with the very sentence
# `gradscope explain LOG --at N` gives for it (so the tour says what the log says), and
# without LOG records the tour's program itself; unknown tours, a log of another tour and
# extra arguments are errors that say so. Tour 8's program is Python (run with GS_PYTHON and
# the build's module on PYTHONPATH, both set by meson); a tour the build left out
# (GS_TOUR_SKIP, "NAME: why") is skipped, saying why.
set -euo pipefail
gradscope=$1
export GS_TOUR_DIR=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "not ok: $*"; exit 1; }

"$gradscope" explain --list-tours > "$work/list"
[ "$(wc -l < "$work/list")" -eq 8 ] || fail "--list-tours printed $(wc -l < "$work/list") lines"
tours=$(cut -f1 "$work/list")
[ "$(echo "$tours" | sort -u | wc -l)" -eq 8 ] || fail "tour names repeat"
echo "$tours" | grep -qx sharing || fail "no sharing tour"
echo "$tours" | grep -qx micrograd || fail "no micrograd tour"

for tour in $tours; do
  log="$work/$tour.gstrace"
  if [ "${GS_TOUR_SKIP%%:*}" = "$tour" ]; then
    echo "ok: $tour # SKIP ${GS_TOUR_SKIP#*: }"
    continue
  fi
  if [ -e "$GS_TOUR_DIR/tour-$tour.py" ]; then
    program=("$GS_PYTHON" "$GS_TOUR_DIR/tour-$tour.py")
  else
    program=("$GS_TOUR_DIR/tour-$tour")
  fi
  GS_TRACE_VALUES=16 "$gradscope" record -o "$log" -- "${program[@]}" > /dev/null
  "$gradscope" explain --tour "$tour" "$log" > "$work/$tour.txt"
  head -1 "$work/$tour.txt" | grep -q "^$tour: " || fail "$tour: no title line"
  steps=$(grep -cE '^[0-9]+/[0-9]+ #[0-9]+ ' "$work/$tour.txt")
  [ "$steps" -ge 4 ] || fail "$tour: $steps steps"
  # Each step's sentence line is explain --at's line for that event.
  grep -E '^[0-9]+/[0-9]+ #[0-9]+ ' "$work/$tour.txt" | while read -r _ seq _; do
    n=${seq#\#}
    want=$("$gradscope" explain "$log" --at "$n")
    grep -qxF "  $want" "$work/$tour.txt" || fail "$tour: step at #$n lacks '$want'"
  done
  echo "ok: $tour ($steps steps)"
done

# Each step names the page and the tensor the inspector selects there.
grep -qE '^1/5 #[0-9]+ node_create \[graph, e #[0-9]+\.[0-9]+\]$' "$work/micrograd.txt" ||
  fail "micrograd's first step does not name its page and tensor e"
# Without a log the program runs and is recorded first: the same steps, the same events.
"$gradscope" explain --tour micrograd > "$work/fresh.txt"
diff <(grep -E '^[0-9]+/' "$work/fresh.txt") <(grep -E '^[0-9]+/' "$work/micrograd.txt") ||
  fail "a fresh micrograd run resolves to other events"
# In Chinese: the paragraphs, the sentences and the pages' tags are translated; the event
# numbers and kinds are not.
LANGUAGE=zh_CN LANG=C.UTF-8 "$gradscope" explain --tour micrograd "$work/micrograd.gstrace" \
  > "$work/zh.txt"
grep -qP '[\x{4e00}-\x{9fff}]' "$work/zh.txt" || fail "no Chinese in the zh_CN tour"
diff <(grep -oE '^[0-9]+/[0-9]+ #[0-9]+ [a-z_]+' "$work/zh.txt") \
  <(grep -oE '^[0-9]+/[0-9]+ #[0-9]+ [a-z_]+' "$work/micrograd.txt") ||
  fail "the zh_CN tour resolves to other events"
grep -qE '^1/5 #[0-9]+ node_create \[计算图, e #[0-9]+\.[0-9]+\]$' "$work/zh.txt" ||
  fail "the zh_CN tour's first step does not name its page in Chinese"
! grep -qE '\[(events|graph|memory|scopes)[],]' "$work/zh.txt" ||
  fail "the zh_CN tour leaves a page's tag in English"

# A Python tour recorded fresh, with no PYTHONPATH of the caller's: gradscope gives the
# build's module to the program itself, and the steps land on the same events.
if [ "${GS_TOUR_SKIP%%:*}" != sharing ]; then
  env -u PYTHONPATH "$gradscope" explain --tour sharing > "$work/sharing-fresh.txt" ||
    fail "explain --tour sharing without a log failed"
  diff <(grep -E '^[0-9]+/' "$work/sharing-fresh.txt" | cut -d' ' -f1,3-) \
       <(grep -E '^[0-9]+/' "$work/sharing.txt" | cut -d' ' -f1,3-) ||
    fail "a fresh sharing run resolves to other kinds of events"
  echo "ok: sharing, recorded fresh"
fi

# Errors.
if "$gradscope" explain --tour no-such "$work/micrograd.gstrace" 2> "$work/err"; then
  fail "an unknown tour succeeded"
fi
grep -q "no tour is called 'no-such'" "$work/err" || fail "unknown tour: $(cat "$work/err")"
if "$gradscope" explain --tour storage "$work/micrograd.gstrace" 2> "$work/err"; then
  fail "the storage tour resolved in the micrograd log"
fi
grep -q 'views' "$work/err" || fail "wrong log: $(cat "$work/err")"
if "$gradscope" explain --tour micrograd a b 2> "$work/err"; then
  fail "two logs accepted"
fi
if GS_TOUR_DIR="$work/none" "$gradscope" explain --tour micrograd 2> "$work/err"; then
  fail "a missing program succeeded"
fi
grep -q 'GS_TOUR_DIR' "$work/err" || fail "missing program: $(cat "$work/err")"
if "$gradscope" explain --tour micrograd "$work/micrograd.gstrace" --at 3 2> "$work/err"; then
  fail "--at with --tour accepted"
fi
grep -q 'do not go together' "$work/err" || fail "--at with --tour: $(cat "$work/err")"
echo "ok: errors"
