#!/bin/sh
# test-cli.sh: the `gradscope` CLI end to end on a recorded run (suite 'cli').
# Records cli-workload (cli-workload.c, beside it: scoped training steps with backward, marks,
# an error, a leak and hostile names) with `gradscope record`, then checks every command's
# output and exit status, damaged and truncated logs, and bad input.
# Usage: test-cli.sh GRADSCOPE WORKLOAD WORKLOAD.c
set -u
. "$(dirname "$0")/cli-checks.sh"
GS=$(abspath "$1")
WORKLOAD=$(abspath "$2")
WORKLOAD_SOURCE=$(abspath "$3") # for the lines leaks are reported at
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gradscope-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1

# expect_failure_line DESCRIPTION -- COMMAND...: non-zero exit and exactly one stderr line.
expect_failure_line() {
  what=$1; shift 2
  "$@" >out 2>err
  got=$?
  lines=$(wc -l <err)
  if [ "$got" -ne 0 ] && [ "$lines" -eq 1 ] && grep -q '^gradscope: ' err; then
    pass "$what (exit $got: $(cat err))"
  else
    fail "$what: exit $got with $lines stderr lines"; sed 's/^/  stderr: /' err | head -5
  fi
}
contains() { # contains FILE TEXT...
  file=$1; shift
  for text in "$@"; do
    if grep -qF -- "$text" "$file"; then :; else fail "$file lacks '$text'"; return; fi
  done
  pass "$file mentions: $*"
}

# ---- help, version, bad commands ----------------------------------------------------------
expect_status 0 "gradscope --help" -- "$GS" --help
expect_status 0 "gradscope --version" -- "$GS" --version
contains out "gradscope "
for cmd in record stats dump export-dot export-graph export-timeline chrome-trace; do
  expect_status 0 "gradscope $cmd --help" -- "$GS" "$cmd" --help
done
# In Chinese, as `explain` is: the command list is translated, the names stay as typed.
LANGUAGE=zh_CN LANG=C.UTF-8 "$GS" --help >help-zh.txt
contains help-zh.txt "用法：gradscope COMMAND" "  stats " "内存峰值"
expect_failure_line "an unknown command" -- "$GS" frobnicate
expect_failure_line "no command" -- "$GS"
expect_failure_line "an unknown option" -- "$GS" dump --frob run.gstrace
for cmd in stats dump export-dot; do
  expect_failure_line "$cmd of a nonexistent file" -- "$GS" "$cmd" does-not-exist.gstrace
done
expect_failure_line "chrome-trace of a nonexistent file" -- "$GS" chrome-trace nope.gstrace -o x.json
expect_failure_line "stats of a directory" -- "$GS" stats .
printf 'this is not an event log, just some text long enough to hold a header....' >junk.txt
expect_failure_line "dump of a file that is not a log" -- "$GS" dump junk.txt
: >empty.gstrace
expect_failure_line "stats of an empty file" -- "$GS" stats empty.gstrace
# Every command says the same thing of a file that holds no log: not a Gradscope log (with
# its first bytes), empty, or a header cut short.
printf 'GRADSCOP\001' >cut.gstrace
for cmd in stats dump export-dot "export-graph -o x.png" "export-timeline -o x.png" \
           "chrome-trace -o x.json"; do
  name=${cmd%% *}
  opts=${cmd#"$name"}
  # shellcheck disable=SC2086
  expect_failure_line "$name of a file that is not a log" -- "$GS" $name junk.txt $opts
  contains err "junk.txt is not a Gradscope log (no GRADSCOP header: it starts with the bytes 74 68 69 73"
  # shellcheck disable=SC2086
  expect_failure_line "$name of an empty file" -- "$GS" $name empty.gstrace $opts
  contains err "empty.gstrace is empty: a Gradscope log starts with a 64-byte GRADSCOP header"
  # shellcheck disable=SC2086
  expect_failure_line "$name of a cut header" -- "$GS" $name cut.gstrace $opts
  contains err "cut.gstrace ends inside its log header (9 of 64 bytes)"
done
expect_failure_line "record without a program" -- "$GS" record -o x.gstrace --

# ---- record -------------------------------------------------------------------------------
expect_status 0 "record the workload" -- "$GS" record -o run.gstrace -- "$WORKLOAD"
contains err "recorded" "run.gstrace"
[ -s run.gstrace ] && pass "the log exists" || fail "no log written"
expect_status 3 "record passes the program's exit status on" -- "$GS" record -o sh.gstrace -- sh -c 'exit 3'
( "$GS" record -- "$WORKLOAD" >/dev/null 2>&1 )
ls gradscope-*.gstrace >/dev/null 2>&1 && pass "record's default file name" || fail "no gradscope-PID.gstrace"

# ---- stats --------------------------------------------------------------------------------
expect_status 0 "stats" -- "$GS" stats run.gstrace
cp out stats.txt
contains stats.txt "events by kind" tensor_create tensor_dispose node_create backward_begin \
  scope_begin mark error "train step" "sgd evil" "peak" "at event" "leaked on purpose" \
  "1 × ones [3] f32" "errors: 1" "shape mismatch" "live objects at the end: 2" "on 2 threads" \
  "load batch"
# Leaks come grouped, with the line of the program that made them (cli-workload.c).
leak_line=$(grep -n 'gs_tensor leaked = gs_ones' "$WORKLOAD_SOURCE" | cut -d: -f1)
contains stats.txt "× ones [3] f32 (12 bytes) at cli-workload.c:$leak_line in main, held by the program" \
  "× mul_scalar [3] f32 (12 bytes) at cli-workload.c:$((leak_line + 3)) in main"
events=$(sed -n 's/^  \([0-9]*\) events on.*/\1/p' stats.txt)
[ -n "$events" ] && [ "$events" -gt 100 ] && pass "stats counts $events events" || fail "event count '$events'"
# One time base, said, for the run and its peak: the peak lies within the run, on the same
# clock (the log's, as dump prints times) and as far into it as it says.
if "$PY" - stats.txt <<'PYEOF'
import re, sys
text = open(sys.argv[1], encoding='utf-8').read()
run = re.search(r'over ([0-9.]+) ms \(([0-9.]+) to ([0-9.]+) ms on the log\'s clock\)', text)
peak = re.search(r'peak .* at event [0-9]+ \(([0-9.]+) ms on the log\'s clock, ([0-9.]+) ms into the run\)', text)
assert run and peak, text
length, first, last = map(float, run.groups())
at, into = map(float, peak.groups())
assert abs(last - first - length) < 0.002, run.group(0)
assert first <= at <= last and 0 <= into <= length, (run.group(0), peak.group(0))
assert abs(at - first - into) < 0.002, (run.group(0), peak.group(0))
PYEOF
then pass "stats gives the run and its peak in one stated time base"; else
  fail "stats' times: $(grep -E 'events on|peak' stats.txt)"; fi
table=$(sed -n 's/^  and \([0-9]*\) table entries.*/\1/p' stats.txt)
[ -n "$table" ] && [ "$table" -gt 0 ] && pass "stats counts $table table entries apart" \
  || fail "table entry count '$table'"

# The leaked tensor's handle as the English stats name it (its slot depends on how many the
# engine's own temporaries took before it).
leak_handle=$(grep -o '#[0-9]*\.[0-9]* "leaked on purpose" made at event' stats.txt | cut -d' ' -f1)
# In Chinese, every line but the names the log and the program gave (event kinds, scopes,
# error codes and messages). LANG names a locale this system may lack: the CLI then keeps
# UTF-8 and LANGUAGE still chooses the language.
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" stats run.gstrace >stats-zh.txt 2>err \
  && pass "stats in Chinese (exit 0)" || fail "stats in Chinese: exit $?"
contains stats-zh.txt "日志：run.gstrace" "  格式 " "，由进程 " "$events 个事件，分布在 2 个线程上，历时 " \
  " 毫秒（日志时钟上的 " "  另有 $table 个表项（字符串、调用点、二进制文件）" "    线程 " \
  "按类型统计的事件：" tensor_create "作用域：" "个实例，" "个名称" "实例数" "峰值字节" \
  "时间（毫秒）" "train step" "内存（存活的存储字节数）：" "  峰值 " "，在事件 " "运行开始后 " \
  "  结束时 " "个存储中" "结束时存活的对象：2 个，分为 2 组（已创建但从未释放" \
  "（12 字节），创建于 cli-workload.c:$leak_line（在 main 中），程序持有" \
  "${leak_handle:-no handle in stats.txt} \"leaked on purpose\"，创建于事件 " "存活的图节点：" \
  "错误：1" "（线程 2）shape mismatch：" \
  "警告：0" "反向传播耗时："
# The Chinese times are the English ones: one time base, in both.
run_en=$(grep -o 'over [0-9.]* ms ([0-9.]* to [0-9.]* ms' stats.txt | tr -dc '0-9. ')
run_zh=$(grep -o '历时 [0-9.]* 毫秒（日志时钟上的 [0-9.]* 至 [0-9.]*' stats-zh.txt | tr -dc '0-9. ')
[ -n "$run_en" ] && [ "$(echo $run_en)" = "$(echo $run_zh)" ] && pass "the run's times agree in Chinese" \
  || fail "the run's times: '$run_en' in English, '$run_zh' in Chinese"
for english in "events by kind" "memory (storage" "live objects at the end" " events on " \
  "ms on the log's clock" "into the run" "errors:" "warnings:" "time in backward" "made at event" \
  "scopes:" "instances" "peak bytes" "table entries" "held by the program"; do
  grep -qF -- "$english" stats-zh.txt && fail "stats in Chinese still says '$english'" \
    || pass "stats in Chinese does not say '$english'"
done
# --help of the commands in Chinese too.
LANGUAGE=zh_CN LANG=zh_CN.UTF-8 "$GS" stats --help >help-stats-zh.txt
contains help-stats-zh.txt "汇总一个事件日志" "列出每组存活对象的全部成员"

# A flight recorder's log opens with a snapshot that re-creates what was alive when its window
# began: the log does not know when those objects were made, and says so, never "made at" the
# snapshot's number.
GS_TRACE=ring.gstrace GS_TRACE_RING=64K "$WORKLOAD" ring
expect_status 0 "stats of a flight recorder's log" -- "$GS" stats ring.gstrace
cp out ring-stats.txt
contains ring-stats.txt "recording began at event" \
  '#0.1 "alive before the window" made before the recording began (event unknown)'
grep -E 'made at event' ring-stats.txt >/dev/null \
  && fail "stats gives a snapshot's object a creation event: $(grep 'made at event' ring-stats.txt)" \
  || pass "stats gives no creation event to what the snapshot re-created"
expect_status 0 "dump of a flight recorder's log" -- "$GS" dump ring.gstrace
grep ' tensor_create ' out | head -1 | grep -F '(re-created by the snapshot: it happened before the recording began, at an event the log does not know)' >/dev/null \
  && pass "dump says when a snapshot's creation happened is unknown" \
  || fail "dump of a snapshot's tensor_create: $(grep ' tensor_create ' out | head -1)"
grep ' tensor_create ' out | tail -1 | grep -F 're-created' >/dev/null \
  && fail "dump marks an event after the snapshot" || pass "dump marks only the snapshot's events"
"$GS" dump --jsonl ring.gstrace >ring.jsonl 2>err
if "$PY" - ring.jsonl <<'PYEOF'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1], encoding='utf-8')]
end = next(i for i, e in enumerate(events) if e['kind'] == 'snapshot_end')
inside = [e for e in events[:end] if e['kind'] == 'tensor_create']
assert inside and all(e.get('before_recording') is True for e in inside), inside[:2]
assert not any('before_recording' in e for e in events[end:]), 'marked after the snapshot'
PYEOF
then pass "dump --jsonl marks the snapshot's events before_recording"; else fail "dump --jsonl of a ring log"; fi

# ---- dump ---------------------------------------------------------------------------------
expect_status 0 "dump" -- "$GS" dump run.gstrace
[ "$(wc -l <out)" -eq "$((events + table))" ] && pass "dump prints one line per event and table entry" \
  || fail "dump: $(wc -l <out) lines for $events events and $table table entries"
contains out "tensor_create" "op=\"matmul\"" "shape=[8,4]" "module_child" "name=\"head\"" \
  "optimizer_create" "name=\"SGD\"" "holder=optimizer" "params=[#" "saved=[#"
# Handles inside arrays read as the engine names them (#slot.gen), never as raw 64-bit ids.
grep -E '(saved|params|parts)=\[[0-9]' out >/dev/null && fail "dump prints raw ids in an array" \
  || pass "dump prints handles in arrays as #slot.gen"
cp out run.dump
# explain: the inspector's sentence for every event but the table entries (strings, sites,
# binaries), or for one.
expect_status 0 "explain" -- "$GS" explain run.gstrace
want=$(awk '$5 != "string" && $5 != "site" && $5 != "binary"' run.dump | wc -l)
[ "$(wc -l <out)" -eq "$want" ] && pass "explain prints one sentence per event" \
  || fail "explain: $(wc -l <out) lines for $want events"
contains out " tensor_create: " " created tensor #" " scope_begin: "
# Plain text, not C: names read as written ("batch", quotes and backslashes kept; only control
# characters escaped), and the error's sentence does not repeat the kind printed before it.
contains out ' "batch"' ' "leaked on purpose"' 'evil "name" \ back\slash\nnew line\ttab\001\033[31m red'
grep -F '\"' out >/dev/null && fail "explain escapes quotes: $(grep -F '\"' out | head -1)" \
  || pass "explain prints quotes as they are"
grep ' error: ' out >/dev/null && ! grep -i ' error: error' out >/dev/null \
  && pass "an error's line says error once" || fail "explain error line: $(grep ' error: ' out | head -1)"
create_seq=$(grep ' tensor_create ' run.dump | head -1 | awk '{print $1}')
expect_status 0 "explain --at" -- "$GS" explain run.gstrace --at "$create_seq"
[ "$(wc -l <out)" -eq 1 ] && grep -q "^#$create_seq tensor_create: " out \
  && pass "explain --at $create_seq gives that event's sentence" || fail "explain --at: $(cat out)"
LANG=C.UTF-8 LANGUAGE=zh_CN "$GS" explain run.gstrace --at "$create_seq" >out 2>err
grep -q '张量' out && pass "explain speaks the user's language (zh_CN)" || fail "explain in zh_CN: $(cat out)"
expect_failure_line "explain --at an event the log lacks" -- "$GS" explain run.gstrace --at 999999999
contains err "has no event #999999999 (its events are #"
expect_status 0 "dump --jsonl" -- "$GS" dump --jsonl run.gstrace
cp out run.jsonl
[ "$(wc -l <run.jsonl)" -eq "$((events + table))" ] && pass "dump --jsonl prints one line per event" || fail "jsonl line count"
# Each line parses alone; the hostile name comes back byte for byte.
if "$PY" - run.jsonl <<'PYEOF'
import json, sys
hostile = 'evil "name" \\ back\\slash\nnew line\ttab\x01\x1b[31m red } ] //'
events = [json.loads(line) for line in open(sys.argv[1], encoding='utf-8')]
assert all('seq' in e and 'kind' in e and 'thread' in e for e in events)
names = [e.get('name') for e in events if e['kind'] == 'tensor_name']
assert hostile in names, names
kinds = {e['kind'] for e in events}
for k in ('tensor_create', 'node_create', 'scope_begin', 'scope_end', 'backward_begin', 'mark', 'error'):
    assert k in kinds, k
scope = [e for e in events if e['kind'] == 'scope_begin' and e['name'].startswith('sgd')]
assert scope and scope[0]['name'] == 'sgd ' + hostile
err = [e for e in events if e['kind'] == 'error'][0]
assert err['code'] == 'shape mismatch' and 'broadcast' in err['text'], err
child = [e for e in events if e['kind'] == 'module_child' and e['name'] == 'head']
assert child and child[0]['module'] and child[0]['child'], child
opt = [e for e in events if e['kind'] == 'optimizer_create'][0]
assert opt['name'] == 'SGD' and len(opt['params']) == 2, opt
held = [e for e in events if e['kind'] == 'owner_change' and e['holder'] == 'optimizer']
assert len(held) == 2 and all(e['owner'] == opt['optimizer'] for e in held), held
nodes = [e for e in events if e['kind'] == 'node_create' and e['name'] == 'MatmulBackward']
assert nodes and len(nodes[0]['inputs']) == 2
PYEOF
then pass "every JSON line parses; hostile strings round-trip"; else fail "dump --jsonl content"; fi

# ---- export-dot ---------------------------------------------------------------------------
check_dot() { # check_dot FILE: well-formed as far as we can tell, and through dot if installed
  if "$PY" - "$1" <<'PYEOF'
import re, sys
text = open(sys.argv[1], encoding='utf-8').read()
assert text.startswith('//') and 'digraph autograd {' in text and text.rstrip().endswith('}')
quoted = r'"(?:[^"\\\n]|\\.)*"'
stmt = re.compile(r'^ +(%s( -> %s)?( \[.*\])?|graph \[.*\]|node \[.*\]|edge \[.*\]);$' % (quoted, quoted))
# Scopes are clusters: subgraph "cluster_ID" { label="..."; style...; ... }
opening = re.compile(r'^ +subgraph "cluster_[0-9]+" \{$')
cluster_attrs = re.compile(r'^ +label=%s; style=rounded; color=gray60;$' % quoted)
depth = 0
for line in text.splitlines()[2:-1]:
    if opening.match(line):
        depth += 1
    elif line.strip() == '}':
        depth -= 1
        assert depth >= 0, line
    else:
        assert stmt.match(line) or (depth and cluster_attrs.match(line)), line
assert depth == 0
PYEOF
  then pass "$1 is well-formed DOT"; else fail "$1 is not well-formed DOT"; fi
  if command -v dot >/dev/null 2>&1; then
    if dot -Tsvg "$1" >"$1.svg" 2>dot.err; then pass "dot -Tsvg accepts $1"; else
      fail "dot -Tsvg rejects $1: $(head -3 dot.err)"; fi
  else
    missing_tool dot "the DOT files' check by Graphviz"
  fi
}
expect_status 0 "export-dot (default: the last node_create)" -- "$GS" export-dot run.gstrace
cp out last.dot
contains last.dot "digraph autograd" "MulScalarBackward" "leaked on purpose" "lightblue" "darkolivegreen1"
check_dot last.dot
# The last step's graph, just before its backward.
at=$("$PY" -c 'import json,sys; print([e for e in map(json.loads, open(sys.argv[1])) if e["kind"] == "backward_begin"][-1]["seq"])' run.jsonl)
expect_status 0 "export-dot --at $at" -- "$GS" export-dot run.gstrace --at "$at"
cp out step.dot
contains step.dot "MatmulBackward" "AddBackward" "MeanBackward" "Linear.weight" "batch" \
  "fillcolor=orange" "dir=none" "fillcolor=lightblue" "\"loss" "evil \\\"name\\\" \\\\ back"
check_dot step.dot
expect_status 0 "export-dot --at 1 (no graph yet)" -- "$GS" export-dot run.gstrace --at 1
grep -q -- '->' out && fail "a graph at event 1" || pass "no nodes at event 1"
expect_failure_line "export-dot --at with a non-number" -- "$GS" export-dot run.gstrace --at soon

# ---- export-graph (the graph view's renderer, no display) ---------------------------------
expect_status 0 "export-graph --at $at -o step.png" -- \
  "$GS" export-graph run.gstrace --at "$at" -o step.png --width 640 --height 480
expect_status 0 "export-graph -o step.svg" -- "$GS" export-graph run.gstrace --at "$at" -o step.svg
if "$PY" - step.png step.svg <<'PYEOF'
import struct, sys, xml.dom.minidom
png = open(sys.argv[1], 'rb').read()
assert png[:8] == b'\x89PNG\r\n\x1a\n' and png[12:16] == b'IHDR'
assert struct.unpack('>II', png[16:24]) == (640, 480), struct.unpack('>II', png[16:24])
svg = xml.dom.minidom.parse(sys.argv[2]).documentElement
assert svg.tagName == 'svg' and len(svg.getElementsByTagName('path')) > 10
PYEOF
then pass "export-graph wrote a 640x480 PNG and a well-formed SVG"; else
  fail "export-graph output is wrong"; fi
expect_status 0 "export-graph with the default moment and size" -- \
  "$GS" export-graph run.gstrace -o last.png
expect_failure_line "export-graph without -o" -- "$GS" export-graph run.gstrace
expect_failure_line "export-graph to .jpg" -- "$GS" export-graph run.gstrace -o g.jpg
expect_failure_line "export-graph --at past the end" -- \
  "$GS" export-graph run.gstrace --at 99999999 -o g.png
expect_failure_line "export-graph --at with a non-number" -- \
  "$GS" export-graph run.gstrace --at soon -o g.png
expect_failure_line "export-graph --width out of range" -- \
  "$GS" export-graph run.gstrace -o g.png --width 99999
expect_failure_line "export-graph of a nonexistent file" -- "$GS" export-graph nope.gstrace -o g.png
# The graph a chosen backward pass walks: the third step's, the same as at its backward_begin.
at3=$("$PY" -c 'import json,sys; print([e for e in map(json.loads, open(sys.argv[1])) if e["kind"] == "backward_begin"][2]["seq"])' run.jsonl)
expect_status 0 "export-dot --backward 3" -- "$GS" export-dot run.gstrace --backward 3
cp out backward3.dot
contains backward3.dot "graph at event $at3" "MatmulBackward" "MeanBackward"
expect_status 0 "export-graph --backward 1" -- "$GS" export-graph run.gstrace --backward 1 -o b1.png
expect_failure_line "export-graph --backward past the last pass" -- \
  "$GS" export-graph run.gstrace --backward 9 -o g.png
expect_failure_line "export-graph --backward 0" -- "$GS" export-graph run.gstrace --backward 0 -o g.png
expect_failure_line "export-graph with --at and --backward" -- \
  "$GS" export-graph run.gstrace --at 5 --backward 1 -o g.png

# ---- chrome-trace -------------------------------------------------------------------------
expect_status 0 "chrome-trace" -- "$GS" chrome-trace run.gstrace -o run.json
if "$PY" - run.json <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding='utf-8'))
ev = doc['traceEvents']
slices = [e for e in ev if e['ph'] == 'X']
assert len([e for e in slices if e['name'] == 'train step']) == 3
assert len([e for e in slices if e['name'] == 'head step']) == 1
assert len([e for e in slices if e['name'] == 'backward']) == 4  # 3 train steps, the head's
assert all(e['dur'] >= 0 and isinstance(e['ts'], (int, float)) for e in slices)
assert any(e['ph'] == 'C' and e['name'] == 'scope bytes: train step' for e in ev)
assert any(e['ph'] == 'C' and e['name'].startswith('memory') for e in ev)
assert {e['name'] for e in ev if e['ph'] == 'i'} >= {'step 0', 'step 1', 'step 2'}
loads = [e for e in slices if e['name'] == 'load batch']
assert len(loads) == 2
assert len({e['tid'] for e in slices if e['name'] == 'load batch'} |
           {e['tid'] for e in slices if e['name'] == 'train step'}) == 2
assert len([e for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name']) == 2
PYEOF
then pass "chrome-trace JSON parses, with slices, counters and instants"; else fail "chrome-trace content"; fi
expect_failure_line "chrome-trace without -o" -- "$GS" chrome-trace run.gstrace

# ---- export-timeline ----------------------------------------------------------------------
png_size() { # png_size FILE: "W H" from the PNG header, or nothing if it is not a PNG
  "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n" and d[12:16]==b"IHDR"; print(*struct.unpack(">II", d[16:24]))' "$1" 2>/dev/null
}
expect_status 0 "export-timeline (defaults)" -- "$GS" export-timeline run.gstrace -o tl.png
[ "$(png_size tl.png)" = "1200 400" ] && pass "tl.png is a 1200x400 PNG" || fail "tl.png size: $(png_size tl.png)"
expect_status 0 "export-timeline --by category --width 640 --height 200" -- \
  "$GS" export-timeline run.gstrace -o tl-cat.png --by category --width 640 --height 200
[ "$(png_size tl-cat.png)" = "640 200" ] && pass "tl-cat.png is a 640x200 PNG" || fail "tl-cat.png size: $(png_size tl-cat.png)"
expect_status 0 "export-timeline --first/--last --dark" -- \
  "$GS" export-timeline run.gstrace -o tl-zoom.png --first 10 --last 60 --dark
expect_failure_line "export-timeline without -o" -- "$GS" export-timeline run.gstrace
expect_failure_line "export-timeline --by module" -- "$GS" export-timeline run.gstrace -o x.png --by module
contains err "'scope' or 'category'" "module"
expect_failure_line "export-timeline --width 10" -- "$GS" export-timeline run.gstrace -o x.png --width 10
contains err "200..16384" "10 x 400"
expect_failure_line "export-timeline -o x.svg" -- "$GS" export-timeline run.gstrace -o x.svg
expect_failure_line "export-timeline --first after the end" -- "$GS" export-timeline run.gstrace -o x.png --first 99999999
contains err "events (1.."
expect_failure_line "export-timeline --first after --last" -- "$GS" export-timeline run.gstrace -o x.png --first 9 --last 3
expect_failure_line "export-timeline --first 0 (events count from 1)" -- "$GS" export-timeline run.gstrace -o x.png --first 0
expect_failure_line "export-timeline of a nonexistent file" -- "$GS" export-timeline nope.gstrace -o x.png
expect_failure_line "export-timeline into a missing directory" -- "$GS" export-timeline run.gstrace -o no/such/dir/x.png
[ -e x.png ] && fail "a failed export left x.png" || pass "failed exports wrote nothing"

# ---- damaged logs -------------------------------------------------------------------------
size=$(wc -c <run.gstrace)
head -c $((size - 100)) run.gstrace >cut.gstrace
expect_status 2 "dump of a truncated log" -- "$GS" dump cut.gstrace
lines=$(wc -l <out)
[ "$lines" -gt 0 ] && [ "$lines" -lt "$((events + table))" ] && pass "the truncated log's $lines valid events are printed" || fail "truncated dump printed $lines lines"
contains err "warning: The log ends in the middle of a chunk at byte" "events before it are shown."
cp err dump.err
expect_status 2 "stats of a truncated log" -- "$GS" stats cut.gstrace
contains out "events by kind" "scopes:" "memory"
expect_status 2 "dump --jsonl of a truncated log" -- "$GS" dump --jsonl cut.gstrace
"$PY" -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <out && pass "its JSON lines parse" || fail "truncated JSON lines"
expect_status 2 "export-timeline of a truncated log" -- "$GS" export-timeline cut.gstrace -o cut.png
[ "$(png_size cut.png)" = "1200 400" ] && pass "the truncated log's timeline is still drawn" || fail "cut.png: $(png_size cut.png)"
expect_status 2 "chrome-trace of a truncated log" -- "$GS" chrome-trace cut.gstrace -o cut.json
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' cut.json && pass "its JSON parses" || fail "truncated chrome-trace JSON"
expect_status 2 "export-dot of a truncated log" -- "$GS" export-dot cut.gstrace
# Every command describes the cut log with the same sentence and the same count of events.
grep 'warning: ' err | cmp -s - dump.err && pass "export-dot and dump give the same warning" \
  || { fail "export-dot and dump describe the cut log differently"; cat err dump.err; }

# A flipped byte in the middle: the chunk's CRC fails there.
"$PY" - run.gstrace flipped.gstrace <<'PYEOF'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[len(data) // 2] ^= 0xff
open(sys.argv[2], 'wb').write(data)
PYEOF
expect_status 2 "dump of a log with a flipped byte" -- "$GS" dump flipped.gstrace
contains err "warning: The log is damaged: " "events before the damage are shown."
[ "$(wc -l <out)" -gt 0 ] && pass "events before the damage are printed" || fail "nothing printed before the damage"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
