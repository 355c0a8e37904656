#!/usr/bin/env bash
# check-run.sh: the examples suite's test of word-language: a short run (300 training and 100
# test words per language, 3 epochs) must learn something (test accuracy well above the 0.2
# of guessing among five languages), report its training time, and end with live_tensors=
# equal to the count before training (0: the program holds no tensor then), exiting 0.
# Usage: check-run.sh path/to/word-language
set -euo pipefail
program=$1
out=$("$program" --epochs 3 --train-words 300 --test-words 100) || {
  echo "word-language exited with status $?:"; echo "$out"; exit 1; }
echo "$out"
fail() { echo "check-run: $*" >&2; exit 1; }
grep -qx '1500 training and 500 test words, [0-9]* characters' <<<"$out" ||
  fail "expected the word counts line"
[ "$(grep -c '^epoch [0-9]*  loss [0-9.]*$' <<<"$out")" = 3 ] || fail "expected 3 epoch lines"
acc=$(sed -n 's/^test_accuracy=\([0-9.]*\)$/\1/p' <<<"$out")
secs=$(sed -n 's/^train_seconds=\([0-9.]*\)$/\1/p' <<<"$out")
[ -n "$acc" ] || fail "expected a test_accuracy= line"
[ -n "$secs" ] || fail "expected a train_seconds= line"
awk -v a="$acc" 'BEGIN { exit !(a >= 0.45 && a <= 1) }' || fail "test accuracy $acc is not >= 0.45"
awk -v s="$secs" 'BEGIN { exit !(s > 0) }' || fail "train_seconds $secs is not positive"
[ "$(tail -n 1 <<<"$out")" = "live_tensors=0" ] || fail "expected the last line live_tensors=0"
echo "ok: test_accuracy=$acc train_seconds=$secs"
