#!/usr/bin/env bash
# check-split.sh: the examples suite's check that word-language and its PyTorch twin
# (bench/compare-torch/word_language.py, whose --print-words needs no torch) pick the same
# training and test words, in the same order, from the same lists.
# Usage: check-split.sh path/to/word-language path/to/word_language.py
set -euo pipefail
program=$1 script=$2
args=(--train-words 4000 --test-words 1000 --print-words)
ours=$("$program" "${args[@]}")
theirs=$(/usr/bin/python3 "$script" "${args[@]}")
[ "$(wc -l <<<"$ours")" = 25000 ] || { echo "check-split: expected 25000 words, got $(wc -l <<<"$ours")" >&2; exit 1; }
if [ "$ours" != "$theirs" ]; then
  echo "check-split: the example and word_language.py pick different words:" >&2
  diff <(echo "$ours") <(echo "$theirs") | head -n 20 >&2
  exit 1
fi
echo "ok: the same 25000 words on both sides"
