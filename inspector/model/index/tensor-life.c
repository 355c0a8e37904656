/* tensor-life.c: a tensor's life in two bytes an event (tensor-life.h), made by model-life.c's
 * merge (model_life_answer_add) and read by the inspector's views. */
#include "model-private.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tensor-life.h"

/* Lows this big go on 2 MiB pages where the kernel has them: the fewer fresh pages a first
 * query faults in, the less it waits for the kernel. From the heap (not a mapping of their
 * own), so that once freed the next answer can reuse their pages. */
enum { HUGE_PAGE = 2u << 20 };

static guint16 *lows_new(gsize bytes) {
  void *p = NULL;
  if (bytes < HUGE_PAGE || posix_memalign(&p, HUGE_PAGE, bytes) != 0)
    return g_malloc(bytes);
  madvise(p, bytes, MADV_HUGEPAGE); /* advice only: 4 KiB pages otherwise */
  return p;
}

gs_tensor_life *model_life_answer_new(guint64 bound, guint64 events) {
  g_return_val_if_fail(bound <= G_MAXUINT, NULL);
  gs_tensor_life *l = g_new0(gs_tensor_life, 1);
  l->lows = lows_new(MAX(bound, 1) * sizeof(guint16));
  /* A chunk per 65,536-event range at most, and one per event at most. */
  l->chunks = g_new(model_life_chunk, MAX(MIN(bound, (events >> 16) + 1), 1));
  return l;
}

void gs_tensor_life_free(gs_tensor_life *life) {
  if (!life)
    return;
  free(life->lows); /* posix_memalign's or g_malloc's: both are malloc's */
  g_free(life->chunks);
  g_free(life);
}

guint gs_tensor_life_len(const gs_tensor_life *life) { return life ? life->n : 0; }

/* The chunk that holds position i: the last whose first is at most i. */
static guint chunk_of(const gs_tensor_life *life, guint i) {
  guint lo = 0, hi = life->n_chunks;
  while (hi - lo > 1) {
    guint mid = lo + (hi - lo) / 2;
    if (life->chunks[mid].first <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

guint64 gs_tensor_life_at(const gs_tensor_life *life, guint i) {
  g_return_val_if_fail(life && i < life->n, 0);
  return life->chunks[chunk_of(life, i)].high << 16 | life->lows[i];
}

guint gs_tensor_life_count_upto(const gs_tensor_life *life, guint64 index) {
  if (!life || life->n == 0)
    return 0;
  /* The first chunk of a later range than index's: everything before it is at most index's
   * range; within index's range (the chunk before, if it is that range), compare lows. */
  guint64 high = index >> 16;
  guint lo = 0, hi = life->n_chunks;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (life->chunks[mid].high <= high)
      lo = mid + 1;
    else
      hi = mid;
  }
  guint end = lo < life->n_chunks ? life->chunks[lo].first : life->n;
  if (lo == 0 || life->chunks[lo - 1].high != high)
    return end;
  guint from = life->chunks[lo - 1].first;
  guint16 low = (guint16)index;
  while (from < end) { /* the first low past index's */
    guint mid = from + (end - from) / 2;
    if (life->lows[mid] <= low)
      from = mid + 1;
    else
      end = mid;
  }
  return from;
}

gboolean gs_tensor_life_contains(const gs_tensor_life *life, guint64 index) {
  guint upto = gs_tensor_life_count_upto(life, index);
  return upto > 0 && gs_tensor_life_at(life, upto - 1) == index;
}

gboolean gs_tensor_life_starts_with(const gs_tensor_life *life, const gs_tensor_life *prefix) {
  guint n = gs_tensor_life_len(prefix);
  if (n == 0)
    return TRUE;
  if (gs_tensor_life_len(life) < n || life->n_chunks < prefix->n_chunks)
    return FALSE;
  /* The same ranges starting at the same positions, and the same lows: then every event of
   * the prefix is the same (its last chunk may go on in life). */
  for (guint c = 0; c < prefix->n_chunks; c++)
    if (life->chunks[c].high != prefix->chunks[c].high ||
        life->chunks[c].first != prefix->chunks[c].first)
      return FALSE;
  if (life->n_chunks > prefix->n_chunks && life->chunks[prefix->n_chunks].first < n)
    return FALSE; /* life's next range starts within the prefix */
  return memcmp(life->lows, prefix->lows, n * sizeof(guint16)) == 0;
}

void gs_tensor_life_cursor_init(gs_tensor_life_cursor *c, const gs_tensor_life *life, guint at) {
  guint n = gs_tensor_life_len(life);
  c->life = life;
  c->i = MIN(at, n);
  c->chunk = n ? chunk_of(life, MIN(c->i, n - 1)) : 0;
}

gboolean gs_tensor_life_cursor_next(gs_tensor_life_cursor *c, guint64 *index) {
  const gs_tensor_life *l = c->life;
  if (c->i >= gs_tensor_life_len(l))
    return FALSE;
  while (c->chunk + 1 < l->n_chunks && l->chunks[c->chunk + 1].first <= c->i)
    c->chunk++;
  *index = l->chunks[c->chunk].high << 16 | l->lows[c->i++];
  return TRUE;
}

gboolean gs_tensor_life_cursor_prev(gs_tensor_life_cursor *c, guint64 *index) {
  const gs_tensor_life *l = c->life;
  if (c->i == 0)
    return FALSE;
  c->i--;
  while (c->chunk > 0 && l->chunks[c->chunk].first > c->i)
    c->chunk--;
  *index = l->chunks[c->chunk].high << 16 | l->lows[c->i];
  return TRUE;
}
