#!/bin/sh
# test-cli-diff.sh: `gradscope diff` on two recordings of one program before and after a fix
# (diff-workload.c, beside it: a leak removed, a detach added that cuts the graph), in text and
# JSON, both ways round; the --fail options' exit statuses at and around their limits; and bad
# input (a missing file, a file that is no log, a damaged log, bad option values).
# Usage: test-cli-diff.sh GRADSCOPE DIFF-WORKLOAD
set -u
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
GS=$(abspath "$1")
WORKLOAD=$(abspath "$2")
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gradscope-diff.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

expect_status() { # expect_status WANT DESCRIPTION -- COMMAND...
  want=$1; what=$2; shift 3
  "$@" >out 2>err
  got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else
    fail "$what: exit $got, wanted $want"; sed 's/^/  stderr: /' err | head -5; fi
}
contains() { # contains FILE TEXT...
  file=$1; shift
  for text in "$@"; do
    if grep -qF -- "$text" "$file"; then :; else fail "$file lacks '$text'"; sed 's/^/  /' "$file" | head -40; return; fi
  done
  pass "$file mentions: $*"
}
lacks() { # lacks FILE TEXT
  if grep -qF -- "$2" "$1"; then fail "$1 has '$2'"; else pass "$1 does not mention '$2'"; fi
}

expect_status 0 "record before the fix" -- "$GS" record -o before.gstrace -- "$WORKLOAD" before
expect_status 0 "record after the fix" -- "$GS" record -o after.gstrace -- "$WORKLOAD" after

# ---- text ---------------------------------------------------------------------------------
expect_status 0 "diff before after" -- "$GS" diff before.gstrace after.gstrace
cp out text.out
cat text.out
contains text.out "A: before.gstrace" "B: after.gstrace" \
  "objects alive at the end: 3 → 0" \
  "backward passes (matched by the step or epoch mark before them):" \
  "A pass 2 at event" "(\"step 2\", #1 after it)" \
  "nodes 9 → 6: 3 removed, 0 added" \
  "removed: TanhBackward, MatmulBackward, AccumulateGrad" \
  "AccumulateGrad 2 → 1" "MulBackward 1," \
  "\"step\": instances 3," "tensor_create" "scope_begin          3"
[ "$(grep -c '3 removed, 0 added' text.out)" -eq 3 ] && pass "each of the 3 passes lost 3 nodes" \
  || fail "not every pass reports 3 removed nodes"
# The leak's site: made 3 times, alive 3 before and 0 after.
grep -E '^  main \(diff-workload\.c:[0-9]+\): created 3, alive 3 → 0$' text.out >/dev/null \
  && pass "the leaking call site is alive 3 → 0" || fail "no call site alive 3 → 0"
lacks text.out "added: "

# The same comparison the other way round: the graph grows, the leak appears.
expect_status 0 "diff after before" -- "$GS" diff after.gstrace before.gstrace
contains out "objects alive at the end: 0 → 3" "nodes 6 → 9: 0 removed, 3 added" \
  "added: TanhBackward, MatmulBackward, AccumulateGrad"

# A run against itself: nothing moves.
expect_status 0 "diff before before" -- "$GS" diff before.gstrace before.gstrace
contains out "objects alive at the end: 3" "nodes 9: 0 removed, 0 added"
grep "→" out | grep -v -e "(A → B)" -e "; A → B)" >changed; [ -s changed ] && fail "a run differs from itself: $(cat changed)" || pass "a run against itself shows no change"

# A run of many passes: the text prints the first and those that differ, and counts the rest.
expect_status 0 "record 25 steps" -- "$GS" record -o long.gstrace -- "$WORKLOAD" before 25
expect_status 0 "diff of 25 alike passes" -- "$GS" diff long.gstrace long.gstrace
contains out "A pass 1 at event" "... and 24 more passes with the same graph in both runs (--all-passes prints them)"
[ "$(grep -c '^  A pass ' out)" -eq 1 ] && pass "one pass printed" || fail "$(grep -c '^  A pass ' out) passes printed"
expect_status 0 "diff --all-passes" -- "$GS" diff --all-passes long.gstrace long.gstrace
[ "$(grep -c '^  A pass ' out)" -eq 25 ] && pass "every pass printed" || fail "$(grep -c '^  A pass ' out) passes printed with --all-passes"
# Against the 3-step run: passes 1-3 match by step mark, 4-25 only in A.
expect_status 0 "diff of 25 steps against 3" -- "$GS" diff long.gstrace before.gstrace
contains out "A pass 25 at event" "  B none"

# ---- in Chinese ---------------------------------------------------------------------------
# Every line but the names the logs gave (files, scopes, node and event kinds, call sites).
# LANG names a locale this system may lack: LANGUAGE still chooses the language.
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" diff before.gstrace after.gstrace >zh.out 2>err \
  && pass "diff in Chinese (exit 0)" || fail "diff in Chinese: exit $?"
contains zh.out "A: before.gstrace (" " 个事件)" "内存：" "  A 峰值 " "，在事件 " "，位于作用域“step”" \
  "  峰值：" "  结束时存活的对象：3 → 0" "  结束时存活的内存：" \
  "反向传播（按其前面的 step 或 epoch 标记对应）：" "  A 第 2 次反向传播，在事件 " \
  "（“step 2”之后第 1 次）" "    节点 9 → 6：移除 3 个，新增 0 个" "    类型：AccumulateGrad 2 → 1" \
  "    移除：TanhBackward, MatmulBackward, AccumulateGrad" \
  "调用点（创建的对象数，结束时存活数；A → B）：" "：创建 3，存活 3 → 0" \
  "按名称对应的作用域（A → B）：" "  “step”：实例 3，创建 24 → 27" "按类型统计的事件（A → B）：" \
  "scope_begin          3"
[ "$(grep -c '移除 3 个，新增 0 个' zh.out)" -eq 3 ] && pass "in Chinese, each of the 3 passes lost 3 nodes" \
  || fail "in Chinese, not every pass reports 3 removed nodes"
for english in "memory:" "peak" "objects alive" "backward passes" "pass 1 at event" "nodes " \
  "kinds:" "removed:" "call sites" "created " "scopes by name" "instances" "events by kind" " events)"; do
  grep -qF -- "$english" zh.out && fail "diff in Chinese still says '$english'" \
    || pass "diff in Chinese does not say '$english'"
done
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" diff long.gstrace long.gstrace >zh.out
contains zh.out "  ……另有 24 次反向传播在两次运行中的图相同（--all-passes 会打印它们）"
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" diff --help >zh.out
contains zh.out "比较两次运行" "输出一个 JSON 对象而非文本" "若 B 的内存峰值比 A 高出 SIZE 以上"
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" diff --fail-live-increase=x before.gstrace after.gstrace \
  >zh.out 2>&1
contains zh.out "diff：--fail-live-increase 需要一个对象数（0 或更多），得到的是“x”"

# ---- JSON ---------------------------------------------------------------------------------
expect_status 0 "diff --json" -- "$GS" diff --json before.gstrace after.gstrace
"$PY" - out <<'PYEOF' && pass "the JSON parses and says what changed" || fail "diff --json"
import json, sys
d = json.loads(open(sys.argv[1]).read())
assert d["a"]["live_objects"] == 3 and d["b"]["live_objects"] == 0, (d["a"], d["b"])
assert d["a"]["peak_bytes"] > d["b"]["peak_bytes"] > 0
assert d["a"]["peak_scope"] == "step" and "diff-workload.c:" in d["a"]["peak_site"]
assert d["passes_matched_by"] == "step"
assert len(d["passes"]) == 3
for i, p in enumerate(d["passes"]):
    assert p["a"]["step"] == p["b"]["step"] == "step %d" % (i + 1), p
    assert p["a"]["nodes"] == 9 and p["b"]["nodes"] == 6, p
    assert sorted(n["kind"] for n in p["removed"]) == ["AccumulateGrad", "MatmulBackward", "TanhBackward"], p
    assert p["added"] == []
    assert p["kinds"]["TanhBackward"] == {"a": 2, "b": 1}
leak = [s for s in d["sites"] if s["a"] and s["b"] and s["a"]["alive"] == 3 and s["b"]["alive"] == 0]
assert len(leak) == 1 and leak[0]["a"]["created"] == 3, d["sites"]
detach = [s for s in d["sites"] if s["a"] is None]
assert len(detach) == 1 and detach[0]["b"]["created"] == 3, detach
assert d["scopes"][0]["name"] == "step" and d["scopes"][0]["a"]["instances"] == 3
assert d["events_by_kind"]["backward_begin"] == {"a": 3, "b": 3}
assert d["events_by_kind"]["grad_accumulate"]["a"] > d["events_by_kind"]["grad_accumulate"]["b"]
assert [c["failed"] for c in d["checks"]] == [False, False]
PYEOF
"$PY" -m json.tool out >/dev/null && pass "python3 -m json.tool accepts it" || fail "json.tool"

# ---- the CI guards -------------------------------------------------------------------------
peak_a=$("$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["a"]["peak_bytes"])' <out)
peak_b=$("$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["b"]["peak_bytes"])' <out)
grow=$((peak_a - peak_b)) # after -> before grows by this much
expect_status 0 "fixed run under --fail-live-increase=0" -- "$GS" diff --fail-live-increase=0 before.gstrace after.gstrace
expect_status 0 "fixed run under --fail-peak-increase=0" -- "$GS" diff --fail-peak-increase=0 before.gstrace after.gstrace
expect_status 1 "a run that leaks 3 more under --fail-live-increase=0" -- "$GS" diff --fail-live-increase=0 after.gstrace before.gstrace
contains err "gradscope: diff: --fail-live-increase: B has 3, A 0: more than the 0 allowed"
expect_status 1 "3 more alive under --fail-live-increase=2" -- "$GS" diff --fail-live-increase=2 after.gstrace before.gstrace
expect_status 0 "3 more alive under --fail-live-increase=3" -- "$GS" diff --fail-live-increase=3 after.gstrace before.gstrace
expect_status 1 "a higher peak under --fail-peak-increase=0" -- "$GS" diff --fail-peak-increase=0 after.gstrace before.gstrace
expect_status 1 "a peak $grow bytes higher under --fail-peak-increase=$((grow - 1))" -- "$GS" diff --fail-peak-increase=$((grow - 1)) after.gstrace before.gstrace
expect_status 0 "a peak $grow bytes higher under --fail-peak-increase=$grow" -- "$GS" diff --fail-peak-increase=$grow after.gstrace before.gstrace
expect_status 0 "a peak $grow bytes higher under --fail-peak-increase=1MiB" -- "$GS" diff --fail-peak-increase=1MiB after.gstrace before.gstrace
expect_status 0 "... and under --fail-peak-increase=1K" -- "$GS" diff --fail-peak-increase=1K after.gstrace before.gstrace
expect_status 1 "both guards, one passed" -- "$GS" diff --json --fail-peak-increase=1MiB --fail-live-increase=0 after.gstrace before.gstrace
"$PY" - out <<'PYEOF' && pass "the JSON's checks say which guard failed" || fail "checks in JSON"
import json, sys
checks = json.loads(open(sys.argv[1]).read())["checks"]
assert checks[0] == {"option": "fail-peak-increase", "limit": 1 << 20, "a": checks[0]["a"], "b": checks[0]["b"], "failed": False}, checks
assert checks[1]["option"] == "fail-live-increase" and checks[1]["limit"] == 0 and checks[1]["failed"] is True, checks
PYEOF

# ---- bad input ----------------------------------------------------------------------------
expect_one_line() { # expect_one_line STATUS DESCRIPTION TEXT -- COMMAND...
  want=$1; what=$2; text=$3; shift 4
  "$@" >out 2>err
  got=$?
  if [ "$got" -eq "$want" ] && [ "$(wc -l <err)" -eq 1 ] && grep -qF -- "$text" err; then
    pass "$what (exit $got: $(cat err))"
  else
    fail "$what: exit $got, stderr:"; sed 's/^/  /' err | head -5
  fi
}
expect_one_line 1 "a missing file is named" "gradscope: diff: cannot open nope.gstrace" -- "$GS" diff before.gstrace nope.gstrace
echo "not a log at all, just text" >text.gstrace
expect_one_line 1 "a file that is no log is named" "text.gstrace is not a Gradscope log" -- "$GS" diff text.gstrace after.gstrace
: >empty.gstrace
expect_one_line 1 "an empty file is named" "empty.gstrace is empty" -- "$GS" diff before.gstrace empty.gstrace
expect_one_line 1 "one log only" "give two logs" -- "$GS" diff before.gstrace
expect_one_line 1 "a bad size" "--fail-peak-increase wants a size" -- "$GS" diff --fail-peak-increase=lots before.gstrace after.gstrace
expect_one_line 1 "a negative count" "--fail-live-increase wants a count" -- "$GS" diff --fail-live-increase=-1 before.gstrace after.gstrace
# A flipped byte in the middle of B: its valid part is compared, the warning names the file.
"$PY" - after.gstrace flipped.gstrace <<'PYEOF'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[len(data) // 2] ^= 0xff
open(sys.argv[2], 'wb').write(data)
PYEOF
expect_status 2 "diff with a damaged log" -- "$GS" diff before.gstrace flipped.gstrace
contains err "gradscope: warning: flipped.gstrace: The log is damaged: "
contains out "A: before.gstrace" "memory:"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
