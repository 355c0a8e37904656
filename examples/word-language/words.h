/* words.h: the word-language example's data: words read from Debian's word lists, picked by
 * a seeded hash so every run (and bench/compare-torch/word_language.py) uses the same ones,
 * and their characters as indices into a vocabulary built from the training words.
 *
 * The selection, which the Python side repeats exactly:
 *   - a word is usable if it has 2..WORDS_MAX_CHARS characters (code points), is valid UTF-8
 *     and has no ASCII byte that is not a letter (no apostrophes, hyphens, digits, dots);
 *   - a word found in more than one list has no single answer and is left out of all;
 *   - each list's remaining words are ordered by word_rank(word, seed), ties by their bytes;
 *     the first train_per_language are for training, the next test_per_language for the test.
 * The vocabulary is the training words' code points in increasing order; index 0 stands for
 * a character the training words do not have. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum { WORDS_LANGUAGES = 5, WORDS_MAX_CHARS = 20 };

typedef struct word {
  char *text;                     /* UTF-8, owned */
  int language;                   /* 0..WORDS_LANGUAGES-1, as words_language_name */
  int length;                     /* characters */
  int32_t chars[WORDS_MAX_CHARS]; /* vocabulary indices */
} word;

typedef struct word_split {
  word *train, *test;
  int n_train, n_test;
  int vocab;       /* vocabulary size, the unknown character's 0 included */
  uint32_t *chars; /* vocab - 1 code points, increasing */
} word_split;

/* The list files under dir (/usr/share/dict), in language order. */
const char *words_list_file(int language);
const char *words_language_name(int language);
/* FNV-1a 64 over the word's bytes, started from the offset basis xor seed. */
uint64_t word_rank(const char *text, uint64_t seed);
/* Reads the lists and picks the split; false with a message on stderr when a list is
 * missing or has too few usable words. */
bool words_load(const char *dir, uint64_t seed, int train_per_language, int test_per_language,
                word_split *out);
void words_free(word_split *s);
