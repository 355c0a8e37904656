#!/bin/sh
# test-hostile-logs.sh: every `gradscope` command on every hostile or unusual log of
# tests/fuzz/hostile-logs.c (suite 'cli', issue 22): relation cycles, colliding ids, many
# threads and names, a node consumed thousands of times, deep scopes, huge names and sizes,
# markup and broken UTF-8, logs without events. Each run has a time limit; none may hang,
# crash or abort, a failure is one "gradscope: " line and a non-zero exit (never a picture
# that is not one), and the outputs that are formats (DOT, JSON) parse. Where a command must
# succeed, it is told what it must produce (a clean refusal is not enough).
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
# A tool a check needs is missing: a failure naming it in CI (CI=true), a skip line elsewhere,
# said once.
missing_tool() {
  if [ "${CI:-}" = true ]; then fail "$1 is missing (CI=true): $2 cannot run"
  else echo "skipped: no $1: $2 not run"; fi
}
if ! command -v gvpr >/dev/null 2>&1; then
  missing_tool gvpr "Graphviz's parse of each export-dot output"
fi

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
             "chrome-trace -o $TMP/c.json" "diff $log --json" state "state --json"; do
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
      state) # the JSON form parses and lists as many tensors as its totals say
        if [ "$cmd" = "state --json" ] &&
           ! "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["totals"]["tensors"] == len(d["tensors"])' "$TMP/out"; then
          fail "$what: the JSON does not parse or its totals disagree"; continue
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

# What dump, explain, chrome-trace and diff must produce on the shapes that stress them: the
# loop above lets a clean refusal pass, so here each must succeed and show what the shape
# holds. The counts follow from tests/fuzz/hostile-logs.c at scale 0.05: 5,000 threads with a
# scope and a tensor each; 50 nodes of 4,096 inputs; 5,000 nested scopes.
produces() { # produces NAME "COMMAND ARGS" WHAT CONDITION: exit 0, and the Python CONDITION
  # holds over out (stdout), lines, err (stderr), json (stdout parsed, for diff) and trace
  # (the chrome-trace file's events)
  name=$1 cmd=$2 what=$3 cond=$4
  short=${cmd%% *}
  rm -f "$TMP/c.json"
  # shellcheck disable=SC2086
  timeout "$LIMIT" "$GS" $short "$TMP/$name.gst" ${cmd#"$short"} >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" -ne 0 ]; then
    fail "$short on $name: exit $got, wanted 0 and $what:"; head -3 "$TMP/err"; return
  fi
  if "$PY" - "$TMP" "$cond" <<'PY'; then pass "$short on $name: $what"; else fail "$short on $name: not $what"; fi
import json, os, sys
tmp, cond = sys.argv[1], sys.argv[2]
out = open(os.path.join(tmp, "out"), encoding="utf-8", errors="replace").read()
err = open(os.path.join(tmp, "err"), encoding="utf-8", errors="replace").read()
lines = out.splitlines()
try:
    json_ = json.loads(out)
except ValueError:
    json_ = None
trace = None
if os.path.exists(os.path.join(tmp, "c.json")):
    t = json.load(open(os.path.join(tmp, "c.json")))
    trace = t["traceEvents"] if isinstance(t, dict) else t
ok = eval(cond, {"out": out, "err": err, "lines": lines, "json": json_, "trace": trace})
if not ok:
    print("  condition: " + cond)
    print("  stdout: " + " | ".join(lines[:2])[:300] + " ... " + str(len(lines)) + " lines")
    print("  stderr: " + err[:300])
sys.exit(0 if ok else 1)
PY
}
slices='[e for e in trace if e.get("ph") == "X"]'
produces many-threads dump "15,003 events, the last thread's own" \
  'len(lines) == 15003 and any(l.split()[1] == "t5000" for l in lines)'
produces many-threads explain "a sentence for each of 15,001 events" \
  'len(lines) == 15001 and "scope \"worker\" #5000.0 began on thread 5000" in out'
produces many-threads "chrome-trace -o $TMP/c.json" "5,000 scope slices on 5,000 threads" \
  "len($slices) == 5000 and len({e['tid'] for e in $slices}) == 5000"
produces many-threads "diff $TMP/many-threads.gst --json" "itself: 15,003 events, 5,000 alive" \
  'json["a"]["events"] == json["b"]["events"] == 15003 and json["a"]["live_objects"] == 5000'
produces cycles-everywhere dump "its 30 events, the self-made scope among them" \
  'len(lines) == 30 and "scope=#1.0 outer=#1.0" in out'
produces cycles-everywhere explain "27 sentences and the loops as inconsistencies" \
  'len(lines) == 27 and "names itself as its outer scope" in err'
produces cycles-everywhere "chrome-trace -o $TMP/c.json" "the 3 scopes as slices" \
  "len($slices) == 3"
produces cycles-everywhere "diff $TMP/cycles-everywhere.gst --json" "itself: 30 events, 5 alive" \
  'json["a"]["events"] == json["b"]["events"] == 30 and json["a"]["live_objects"] == 5'
produces wide-node dump "51 nodes, each consumer's 4,096 inputs listed" \
  'len(lines) == 52 and sum(1 for l in lines if "node_create" in l) == 51 and lines[-1].count(",") == 4095'
produces wide-node explain "a sentence for each of the 51 nodes" \
  'len(lines) == 51 and all("SumBackward" in l for l in lines)'
produces wide-node "chrome-trace -o $TMP/c.json" "a trace with nothing timed (no scope, no memory)" \
  "len(trace) > 0 and not $slices"
produces wide-node "diff $TMP/wide-node.gst --json" "itself: 52 events" \
  'json["a"]["events"] == json["b"]["events"] == 52'
produces scopes-100k-deep dump "5,008 events down to scope 5,000 inside 4,999" \
  'len(lines) == 5008 and "scope=#5000.0 outer=#4999.0" in out'
produces scopes-100k-deep explain "a sentence for each of 5,006 events, the deepest scope's too" \
  'len(lines) == 5006 and "scope \"level\" #5000.0 began inside scope \"level\" #4999.0" in out'
produces scopes-100k-deep "chrome-trace -o $TMP/c.json" "5,000 nested scope slices" \
  "len($slices) == 5000"
produces scopes-100k-deep "diff $TMP/scopes-100k-deep.gst --json" "itself: 5,008 events" \
  'json["a"]["events"] == json["b"]["events"] == 5008 and json["a"]["peak_scope"] == "level"'

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
