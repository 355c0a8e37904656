/* words.c: reads Debian's word lists and picks the example's words (the rules are in
 * words.h). Plain C: the lists are read whole, a hash table over every usable word remembers
 * which lists hold it, and each list's own words are sorted by their seeded rank. */
#include "words.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const LIST_FILES[WORDS_LANGUAGES] = {"american-english", "ngerman", "french",
                                                        "spanish", "italian"};
static const char *const LANGUAGE_NAMES[WORDS_LANGUAGES] = {"English", "German", "French",
                                                            "Spanish", "Italian"};

const char *words_list_file(int language) { return LIST_FILES[language]; }
const char *words_language_name(int language) { return LANGUAGE_NAMES[language]; }

uint64_t word_rank(const char *text, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ seed;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return h;
}

/* The next code point of valid UTF-8 at *p (advancing it), or -1 if the bytes are not valid
 * UTF-8 (Python's strict decoder would refuse them, so the word is not used). */
static int32_t next_code_point(const unsigned char **p) {
  const unsigned char *s = *p;
  int32_t c;
  int extra;
  if (s[0] < 0x80)
    c = s[0], extra = 0;
  else if ((s[0] & 0xe0) == 0xc0)
    c = s[0] & 0x1f, extra = 1;
  else if ((s[0] & 0xf0) == 0xe0)
    c = s[0] & 0x0f, extra = 2;
  else if ((s[0] & 0xf8) == 0xf0)
    c = s[0] & 0x07, extra = 3;
  else
    return -1;
  for (int i = 1; i <= extra; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return -1;
    c = (c << 6) | (s[i] & 0x3f);
  }
  static const int32_t smallest[] = {0, 0x80, 0x800, 0x10000};
  if (c < smallest[extra] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
    return -1; /* overlong, out of range or a surrogate */
  *p = s + 1 + extra;
  return c;
}

/* The word's code points into cps (at most WORDS_MAX_CHARS), or -1 when it is not usable. */
static int decode_usable(const char *text, int32_t *cps) {
  const unsigned char *p = (const unsigned char *)text;
  int n = 0;
  while (*p) {
    int32_t c = next_code_point(&p);
    if (c < 0 || n == WORDS_MAX_CHARS)
      return -1;
    if (c < 128 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return -1;
    cps[n++] = c;
  }
  return n >= 2 ? n : -1;
}

/* ---- which lists hold each word ---------------------------------------------------------- */

typedef struct entry {
  const char *text; /* into a list's buffer */
  unsigned lists;   /* bit per language */
} entry;

typedef struct word_table {
  entry *slots;
  size_t mask; /* capacity - 1, a power of two */
} word_table;

static entry *table_find(word_table *t, const char *text) {
  size_t i = (size_t)word_rank(text, 0) & t->mask;
  while (t->slots[i].text && strcmp(t->slots[i].text, text) != 0)
    i = (i + 1) & t->mask;
  return &t->slots[i];
}

/* The whole file, its lines ended by NULs; *lines receives their count. NULL on error. */
static char *read_lines(const char *path, size_t *lines) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
    buf = malloc((size_t)size + 1);
  if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size)
    free(buf), buf = NULL;
  fclose(f);
  if (!buf)
    return NULL;
  buf[size] = '\0';
  *lines = 0;
  for (long i = 0; i < size; i++)
    if (buf[i] == '\n')
      buf[i] = '\0', ++*lines;
  ++*lines; /* a last line without its newline */
  return buf;
}

typedef struct ranked {
  uint64_t rank;
  const char *text;
} ranked;

static int by_rank(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return strcmp(x->text, y->text); /* bytes, as Python's sort of encoded words */
}

static int by_code_point(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static bool take_word(word *w, const char *text, int language) {
  w->text = strdup(text);
  w->language = language;
  int32_t cps[WORDS_MAX_CHARS];
  w->length = decode_usable(text, cps);
  for (int i = 0; i < w->length; i++)
    w->chars[i] = cps[i]; /* code points for now; indices once the vocabulary exists */
  return w->text != NULL;
}

/* The training words' code points, sorted and unique, then every word's characters as
 * indices (0: not in the vocabulary). */
static bool build_vocabulary(word_split *s) {
  size_t n = 0;
  uint32_t *all = malloc(sizeof *all * (size_t)s->n_train * WORDS_MAX_CHARS);
  if (!all)
    return false;
  for (int i = 0; i < s->n_train; i++)
    for (int c = 0; c < s->train[i].length; c++)
      all[n++] = (uint32_t)s->train[i].chars[c];
  qsort(all, n, sizeof *all, by_code_point);
  size_t unique = 0;
  for (size_t i = 0; i < n; i++)
    if (unique == 0 || all[unique - 1] != all[i])
      all[unique++] = all[i];
  s->chars = all;
  s->vocab = (int)unique + 1;
  word *lists[2] = {s->train, s->test};
  int counts[2] = {s->n_train, s->n_test};
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < counts[l]; i++)
      for (int c = 0; c < lists[l][i].length; c++) {
        uint32_t cp = (uint32_t)lists[l][i].chars[c];
        const uint32_t *hit = bsearch(&cp, all, unique, sizeof *all, by_code_point);
        lists[l][i].chars[c] = hit ? (int32_t)(hit - all) + 1 : 0;
      }
  return true;
}

bool words_load(const char *dir, uint64_t seed, int train_per_language, int test_per_language,
                word_split *out) {
  memset(out, 0, sizeof *out);
  char *buffers[WORDS_LANGUAGES] = {0};
  size_t lines[WORDS_LANGUAGES] = {0}, total = 0;
  bool ok = true;
  for (int l = 0; l < WORDS_LANGUAGES && ok; l++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, LIST_FILES[l]);
    buffers[l] = read_lines(path, &lines[l]);
    if (!buffers[l]) {
      fprintf(stderr, "word-language: cannot read %s (apt-get install wamerican wngerman "
                      "wfrench wspanish witalian)\n", path);
      ok = false;
    }
    total += lines[l];
  }
  word_table table = {0};
  size_t capacity = 1;
  while (capacity < 2 * total + 2)
    capacity *= 2;
  if (ok && !(table.slots = calloc(capacity, sizeof *table.slots)))
    ok = false;
  table.mask = capacity - 1;
  /* Every usable word, with the lists that hold it. */
  for (int l = 0; l < WORDS_LANGUAGES && ok; l++) {
    const char *p = buffers[l];
    for (size_t i = 0; i < lines[l]; i++, p += strlen(p) + 1) {
      int32_t cps[WORDS_MAX_CHARS];
      if (decode_usable(p, cps) < 0)
        continue;
      entry *e = table_find(&table, p);
      e->text = p;
      e->lists |= 1u << l;
    }
  }
  int want = train_per_language + test_per_language;
  if (ok) {
    out->train = calloc((size_t)train_per_language * WORDS_LANGUAGES, sizeof *out->train);
    out->test = calloc((size_t)test_per_language * WORDS_LANGUAGES + 1, sizeof *out->test);
    ok = out->train && out->test;
  }
  ranked *own = ok ? malloc(sizeof *own * (total + 1)) : NULL;
  ok = ok && own;
  for (int l = 0; l < WORDS_LANGUAGES && ok; l++) {
    size_t n = 0;
    for (size_t i = 0; i <= table.mask; i++)
      if (table.slots[i].lists == 1u << l)
        own[n++] = (ranked){word_rank(table.slots[i].text, seed), table.slots[i].text};
    if (n < (size_t)want) {
      fprintf(stderr, "word-language: %s has %zu usable words of its own, %d wanted\n",
              LIST_FILES[l], n, want);
      ok = false;
      break;
    }
    qsort(own, n, sizeof *own, by_rank);
    for (int i = 0; i < train_per_language && ok; i++)
      ok = take_word(&out->train[out->n_train++], own[i].text, l);
    for (int i = 0; i < test_per_language && ok; i++)
      ok = take_word(&out->test[out->n_test++], own[train_per_language + i].text, l);
  }
  free(own);
  free(table.slots);
  for (int l = 0; l < WORDS_LANGUAGES; l++)
    free(buffers[l]);
  if (ok && !(ok = build_vocabulary(out)))
    fprintf(stderr, "word-language: out of memory\n");
  if (!ok)
    words_free(out);
  return ok;
}

void words_free(word_split *s) {
  for (int i = 0; i < s->n_train; i++)
    free(s->train[i].text);
  for (int i = 0; i < s->n_test; i++)
    free(s->test[i].text);
  free(s->train);
  free(s->test);
  free(s->chars);
  *s = (word_split){0};
}
