#!/bin/sh
# test-hostile-logs.sh: every `gradscope` command on every hostile or unusual log of
# tests/fuzz/hostile-logs.c (suite 'cli', issue 22): relation cycles, colliding ids, many
# threads and names, a node consumed thousands of times, deep scopes, huge names and sizes,
# markup and broken UTF-8, logs without events. Each run has a time limit; none may hang,
# crash or abort, a failure is one "gradscope: " line and a non-zero exit (never a picture
# that is not one), and the outputs that are formats (DOT, JSON) parse.
# Usage: test-hostile-logs.sh GRADSCOPE MAKE-HOSTILE-LOGS
set -u
GS=$1
MAKE=$2
LIMIT=${GS_HOSTILE_LIMIT:-30}
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gradscope-hostile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# A small scale keeps each shape (cycles, collisions, depth past the fold, thousands of
# threads and names) within the suite's budget; bench/bench-hostile-logs.sh runs full size.
"$MAKE" "$TMP" 0.05 || { echo "FAIL: make-hostile-logs"; exit 1; }
# 4 GB of address space: a blow-up fails here instead of swapping the machine. ASan reserves
# terabytes of it: a sanitizer build sets GS_HOSTILE_VMEM_KB=0 (no limit).
vmem=${GS_HOSTILE_VMEM_KB:-4194304}
[ "$vmem" -gt 0 ] && ulimit -v "$vmem"

for log in "$TMP"/*.gst; do
  name=$(basename "$log" .gst)
  for cmd in stats dump explain export-dot "export-graph -o $TMP/g.png" \
             "export-graph -o $TMP/g.svg" "export-timeline -o $TMP/t.png" \
             "chrome-trace -o $TMP/c.json" "diff $log --json"; do
    short=${cmd%% *}
    rm -f "$TMP/g.png" "$TMP/g.svg" "$TMP/t.png" "$TMP/c.json"
    # shellcheck disable=SC2086
    timeout "$LIMIT" "$GS" $short "$log" ${cmd#"$short"} >"$TMP/out" 2>"$TMP/err"
    status=$?
    what="$short on $name"
    case $status in
    0)
      # A success says nothing but notes, and its output is what it claims to be.
      if grep -v '^gradscope: note: ' "$TMP/err" | grep -q .; then
        fail "$what: exit 0 with stderr:"; sed 's/^/  /' "$TMP/err" | head -3; continue
      fi
      case $short in
      export-dot)
        # gvpr parses without laying out (dot -Tcanon lays out: minutes for 20,000 nodes); it
        # exits 0 even on a syntax error, so what it says counts.
        if command -v gvpr >/dev/null &&
           { ! timeout "$LIMIT" gvpr -c 'N{}' "$TMP/out" >/dev/null 2>"$TMP/dot-err" ||
             [ -s "$TMP/dot-err" ]; }; then
          fail "$what: Graphviz cannot read the DOT:"; head -3 "$TMP/dot-err"; continue
        fi ;;
      export-graph)
        image=$(ls "$TMP"/g.png "$TMP"/g.svg 2>/dev/null | head -1)
        if [ -z "$image" ] || [ ! -s "$image" ]; then fail "$what: exit 0 without an image"; continue; fi ;;
      chrome-trace)
        if ! "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/c.json"; then
          fail "$what: the JSON does not parse"; continue
        fi ;;
      diff) # the log against itself: its JSON parses and no pass gained or lost a node
        if ! "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not any(p["added"] or p["removed"] for p in d["passes"])' "$TMP/out"; then
          fail "$what: the JSON does not parse or a log differs from itself"; continue
        fi ;;
      esac
      pass "$what (exit 0$(grep -c '^gradscope: note' "$TMP/err" | sed 's/^0$//; s/^./, & notes/'))"
      ;;
    1)
      if [ "$(grep -vc '^gradscope: note: ' "$TMP/err")" -eq 1 ] && grep -q '^gradscope: ' "$TMP/err"; then
        pass "$what (refused: $(grep -v '^gradscope: note: ' "$TMP/err" | cut -c1-120))"
      else
        fail "$what: exit 1 without one message:"; sed 's/^/  /' "$TMP/err" | head -3
      fi
      ;;
    124) fail "$what: still running after $LIMIT s" ;;
    *) fail "$what: exit $status"; sed 's/^/  /' "$TMP/err" | head -3 ;;
    esac
  done
done

# What each shape must say.
expect() { # expect EXIT NAME "COMMAND ARGS" TEXT: the run exits EXIT and stderr has TEXT
  want=$1 name=$2 cmd=$3 text=$4
  short=${cmd%% *}
  # shellcheck disable=SC2086
  timeout "$LIMIT" "$GS" $short "$TMP/$name.gst" ${cmd#"$short"} >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" -eq "$want" ] && { [ -z "$text" ] || grep -qF -- "$text" "$TMP/err"; }; then
    pass "$cmd on $name (exit $got) ${text:+says: $text}"
  else fail "$cmd on $name: exit $got (wanted $want), stderr lacks '$text':"; head -3 "$TMP/err"; fi
}
for name in header-only strings-only; do
  for cmd in stats dump explain export-dot "chrome-trace -o $TMP/c.json"; do
    expect 0 "$name" "$cmd" "gradscope: note: $TMP/$name.gst holds no events (only a header and strings)"
  done
  for cmd in "export-graph -o $TMP/g.png" "export-timeline -o $TMP/t.png"; do
    expect 1 "$name" "$cmd" "holds no events (only a header and strings): nothing to draw"
  done
done
expect 0 scope-self-outer export-dot "gradscope: note: the log has 1 inconsistency, stepped over (event 3: scope #7.0 names itself as its outer scope; it is shown at the top)"
expect 0 scope-mutual-outer "export-graph -o $TMP/g.png" "names a scope that never began as its outer scope; it is shown at the top"
expect 0 scopes-10k-deep export-dot "gradscope: note: Scopes are nested 500 deep; boxes are drawn 16 deep"
# Folded: the DOT of 500 nested scopes stays small (it was 300 MB for 10,000).
"$GS" export-dot "$TMP/scopes-10k-deep.gst" >"$TMP/out" 2>/dev/null
if [ "$(grep -c 'subgraph' "$TMP/out")" -le 16 ] && grep -q "× 484 more nested scopes" "$TMP/out"; then
  pass "500 nested scopes draw 16 boxes, the last saying × 484 more"
else fail "500 nested scopes: $(grep -c subgraph "$TMP/out") boxes"; fi
# A 65,536-character name is cut short in the graph, and the picture is drawn.
expect 0 long-name "export-graph -o $TMP/g.png" ""
"$GS" export-dot "$TMP/long-name.gst" >"$TMP/out" 2>/dev/null
if grep -q 'more characters)' "$TMP/out" && [ "$(wc -c <"$TMP/out")" -lt 4000 ]; then
  pass "a 65,536-character name is clipped in DOT"
else fail "a 65,536-character name: DOT of $(wc -c <"$TMP/out") bytes"; fi
# Entities in names reach Graphviz as text, and broken UTF-8 as U+FFFD.
"$GS" export-dot "$TMP/markup-names.gst" >"$TMP/out" 2>/dev/null
if grep -qF '&amp;amp;' "$TMP/out" && grep -qF '&amp;#0;' "$TMP/out" && grep -q "$(printf '\357\277\275')" "$TMP/out"; then
  pass "markup names are escaped for Graphviz, broken UTF-8 replaced"
else fail "markup names: $(grep -c amp "$TMP/out") escaped"; fi
# Sizes of 2^63 and 2^64 - 1 bytes: no wrapped sum (the peak saturates, the end is 0).
expect 0 huge-sizes stats ""
if grep -q 'at the end 0 bytes' "$TMP/out"; then pass "huge sizes: memory ends at 0"
else fail "huge sizes: $(grep 'at the end' "$TMP/out")"; fi

# Inconsistencies are counted and told with their event numbers, and ordinary shapes have none.
"$GS" stats "$TMP/scope-self-outer.gst" >"$TMP/out" 2>/dev/null
if grep -q '^warnings: 1 (inconsistencies in the log' "$TMP/out" &&
   grep -q '^  event [0-9]*: scope #7.0 names itself as its outer scope' "$TMP/out"; then
  pass "stats counts a scope that is its own outer as one warning, with its event"
else fail "scope-self-outer warnings: $(grep -A1 '^warnings' "$TMP/out" | tr '\n' ' ')"; fi
"$GS" stats "$TMP/scope-mutual-outer.gst" >"$TMP/out" 2>/dev/null
if grep -q '^warnings: [1-9]' "$TMP/out" && grep -q 'names a scope that never began' "$TMP/out"; then
  pass "stats warns of an outer scope that never began"
else fail "scope-mutual-outer warnings: $(grep '^warnings' "$TMP/out")"; fi
for name in colliding-ids many-names huge-sizes; do
  "$GS" stats "$TMP/$name.gst" >"$TMP/out" 2>/dev/null
  if grep -q '^warnings: 0$' "$TMP/out"; then pass "$name: no warnings"
  else fail "$name: $(grep '^warnings' "$TMP/out")"; fi
done

echo "$failures failed"
[ "$failures" -eq 0 ]
