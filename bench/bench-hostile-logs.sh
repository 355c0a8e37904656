#!/bin/sh
# bench-hostile-logs.sh: the unusual-shape benchmark (issue 22). Writes each hostile log of
# tests/fuzz/hostile-logs.c at full scale and runs every `gradscope` command on it under a
# time limit and an address-space limit, printing one machine-readable line per run:
#   hostile log=NAME command=CMD exit=N seconds=S peak_kb=K
# exit 124 is the time limit, 134/137 an abort or kill. Usage:
#   bench-hostile-logs.sh GRADSCOPE MAKE-HOSTILE-LOGS [SCALE [LIMIT_S [LOGS...]]]
set -u
GS=$1; MAKE=$2; SCALE=${3:-1}; LIMIT=${4:-10}
shift 2; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gs-hostile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$MAKE" "$TMP" "$SCALE" || exit 1
# 4 GB of address space: a blow-up ends in a clean failure, not in the machine's OOM killer.
ulimit -v 4194304
for log in "$TMP"/*.gst; do
  name=$(basename "$log" .gst)
  if [ $# -gt 0 ]; then
    case " $* " in *" $name "*) ;; *) continue ;; esac
  fi
  for cmd in stats dump explain export-dot "export-graph -o $TMP/g.png" \
             "export-timeline -o $TMP/t.png" "chrome-trace -o $TMP/c.json"; do
    short=${cmd%% *}
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$TMP/time" timeout "$LIMIT" "$GS" $short "$log" ${cmd#"$short"} \
      >"$TMP/out" 2>"$TMP/err"
    status=$?
    # time's last line is "seconds peak" (before it, a note when the command was killed).
    seconds=$(tail -1 "$TMP/time" | cut -d' ' -f1)
    peak=$(tail -1 "$TMP/time" | cut -d' ' -f2)
    echo "hostile log=$name command=$short exit=$status seconds=$seconds peak_kb=$peak" \
         "out_bytes=$(wc -c <"$TMP/out")"
  done
done
