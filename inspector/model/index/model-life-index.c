/* model-life-index.c: the tensor-life postings sorted by object, one sealed segment at a time.
 *
 * Scanning every event's 32-bit key made a life query read 4 bytes per event (892 ms at 126 M
 * events). Instead, each full segment of MODEL_LIFE_SEGMENT events is sealed: its (key, event)
 * postings are sorted by key (a stable radix sort, so the events stay ascending under a key)
 * and written as groups of varints, with a directory entry every MODEL_LIFE_DIR_EVERY keys. A
 * query binary-searches each segment's directory and decodes at most that many groups there,
 * about a microsecond per segment, whatever the log's length; the postings cost about what the
 * per-event keys did (a key step, two counts and event steps of a byte or two). */
#include "model-private.h"

#include <string.h>

/* Sealing's scratch: postings as (key, tag), tag the event's place in its segment with the top
 * bit set for an extra key; two buffers for the radix sort's passes. */
typedef struct model_life_sorter {
  guint32 *keys[2], *tags[2];
  gsize cap;
  guint32 count[1u << 16];
} model_life_sorter;

#define EXTRA_TAG 0x80000000u

void model_life_index_init(gs_trace_model *m) {
  m->life_segment_events = MODEL_LIFE_SEGMENT;
  m->life_keys = g_array_new(FALSE, FALSE, sizeof(guint32));
  m->life_extra = g_array_new(FALSE, FALSE, sizeof(model_posting));
  m->life_segments = g_array_new(FALSE, FALSE, sizeof(model_life_segment));
  m->life_dir = g_array_new(FALSE, FALSE, sizeof(model_life_dir));
}

static void sorter_free(model_life_sorter *s) {
  if (!s)
    return;
  for (int i = 0; i < 2; i++) {
    g_free(s->keys[i]);
    g_free(s->tags[i]);
  }
  g_free(s);
}

void model_life_index_clear(gs_trace_model *m) {
  g_array_unref(m->life_keys);
  g_array_unref(m->life_extra);
  g_array_unref(m->life_segments);
  g_array_unref(m->life_dir);
  g_free(m->life_bytes);
  sorter_free(m->life_sorter);
}

void gs_trace_model_set_life_segment(gs_trace_model *m, guint events) {
  g_return_if_fail(m->kinds->len == 0 && m->n_pending == 0);
  g_return_if_fail(events == G_MAXUINT || (events > 0 && events <= MODEL_LIFE_SEGMENT));
  m->life_segment_events = events;
}

guint64 model_life_index_bytes(const gs_trace_model *m) {
  return m->life_bytes_len + (guint64)m->life_dir->len * sizeof(model_life_dir) +
         (guint64)m->life_segments->len * sizeof(model_life_segment) +
         (guint64)m->life_keys->len * sizeof(guint32) +
         (guint64)m->life_extra->len * sizeof(model_posting);
}

/* One pass of the stable radix sort, on the key's 16 bits at shift: from buffer `from`. */
static void radix_pass(model_life_sorter *s, gsize n, int from, guint shift) {
  memset(s->count, 0, sizeof s->count);
  const guint32 *keys = s->keys[from], *tags = s->tags[from];
  for (gsize i = 0; i < n; i++)
    s->count[(keys[i] >> shift) & 0xffff]++;
  guint32 sum = 0;
  for (guint d = 0; d < G_N_ELEMENTS(s->count); d++) {
    guint32 c = s->count[d];
    s->count[d] = sum;
    sum += c;
  }
  guint32 *to_keys = s->keys[!from], *to_tags = s->tags[!from];
  for (gsize i = 0; i < n; i++) {
    guint32 at = s->count[(keys[i] >> shift) & 0xffff]++;
    to_keys[at] = keys[i];
    to_tags[at] = tags[i];
  }
}

static void put(gs_trace_model *m, guint64 v) {
  model_put_varint(&m->life_bytes, &m->life_bytes_len, &m->life_bytes_cap, v);
}

/* Writes one key's events: tags[from, to) of one kind (primary or extra), ascending. */
static void put_events(gs_trace_model *m, const guint32 *tags, gsize from, gsize to) {
  guint32 last = 0;
  for (gsize i = from; i < to; i++) {
    guint32 at = tags[i] & ~EXTRA_TAG;
    put(m, at - last);
    last = at;
  }
}

void model_life_seal(gs_trace_model *m) {
  gsize n_keys = m->life_keys->len, n_extra = m->life_extra->len;
  model_life_sorter *s = m->life_sorter;
  if (!s)
    s = m->life_sorter = g_new0(model_life_sorter, 1);
  if (s->cap < n_keys + n_extra) {
    s->cap = MAX(n_keys + n_extra, s->cap * 2);
    for (int i = 0; i < 2; i++) {
      s->keys[i] = g_renew(guint32, s->keys[i], s->cap);
      s->tags[i] = g_renew(guint32, s->tags[i], s->cap);
    }
  }
  /* Primary postings first, then extras, each in event order: the stable sort keeps that
   * order under each key. */
  gsize n = 0;
  const guint32 *keys = (const guint32 *)m->life_keys->data;
  for (gsize i = 0; i < n_keys; i++)
    if (keys[i]) {
      s->keys[0][n] = keys[i];
      s->tags[0][n++] = (guint32)i;
    }
  const model_posting *extra = (const model_posting *)m->life_extra->data;
  for (gsize i = 0; i < n_extra; i++) {
    s->keys[0][n] = extra[i].key;
    s->tags[0][n++] = (guint32)(extra[i].index - m->life_open_first) | EXTRA_TAG;
  }
  radix_pass(s, n, 0, 0);
  radix_pass(s, n, 1, 16);
  const guint32 *sk = s->keys[0], *st = s->tags[0];

  model_life_segment seg = {
      .bytes = m->life_bytes_len, .first = m->life_open_first, .dir = m->life_dir->len};
  guint32 prev = 0;
  for (gsize i = 0; i < n;) {
    guint32 key = sk[i];
    gsize end = i, primary_end;
    while (end < n && sk[end] == key && !(st[end] & EXTRA_TAG))
      end++;
    primary_end = end;
    while (end < n && sk[end] == key)
      end++;
    if (seg.n_groups % MODEL_LIFE_DIR_EVERY == 0) {
      model_life_dir d = {key, (guint32)(m->life_bytes_len - seg.bytes)};
      g_array_append_val(m->life_dir, d);
      seg.n_dir++;
    } else {
      put(m, key - prev);
    }
    gsize primaries = primary_end - i, extras = end - primary_end;
    put(m, (guint64)primaries << 1 | (extras > 0));
    if (extras)
      put(m, extras);
    put_events(m, st, i, primary_end);
    put_events(m, st, primary_end, end);
    seg.n_groups++;
    prev = key;
    i = end;
  }
  g_array_append_val(m->life_segments, seg);
  m->life_open_first += n_keys;
  g_array_set_size(m->life_keys, 0);
  g_array_set_size(m->life_extra, 0);
}

/* Skips n varint steps. */
static const guint8 *skip_events(const guint8 *p, guint64 n) {
  guint64 step;
  for (guint64 i = 0; i < n; i++)
    p = model_get_varint(p, &step);
  return p;
}

guint64 *model_life_take(const model_life_group *g, gboolean extras, guint64 *out) {
  const guint8 *p = g->events;
  if (extras)
    p = skip_events(p, g->primaries);
  guint64 at = g->first, step, n = extras ? g->extras : g->primaries;
  for (guint64 i = 0; i < n; i++) {
    p = model_get_varint(p, &step);
    at += step;
    out[i] = at;
  }
  return out + n;
}

void model_life_find(const gs_trace_model *m, guint32 k, GArray *groups) {
  const model_life_dir *dir = (const model_life_dir *)m->life_dir->data;
  for (guint s = 0; s < m->life_segments->len; s++) {
    const model_life_segment *seg = &g_array_index(m->life_segments, model_life_segment, s);
    /* The last directory entry whose key is at most k. */
    guint lo = 0, hi = seg->n_dir;
    while (lo < hi) {
      guint mid = (lo + hi) / 2;
      if (dir[seg->dir + mid].key <= k)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == 0)
      continue;
    guint entry = lo - 1;
    const guint8 *p = m->life_bytes + seg->bytes + dir[seg->dir + entry].pos;
    guint64 key = dir[seg->dir + entry].key;
    guint n_groups = MIN(MODEL_LIFE_DIR_EVERY, seg->n_groups - entry * MODEL_LIFE_DIR_EVERY);
    for (guint g = 0; g < n_groups; g++) {
      if (g > 0) {
        guint64 step;
        p = model_get_varint(p, &step);
        key += step;
      }
      if (key > k)
        break;
      guint64 counts, n_extra = 0;
      p = model_get_varint(p, &counts);
      if (counts & 1)
        p = model_get_varint(p, &n_extra);
      if (key == k) {
        model_life_group found = {p, seg->first, (guint32)(counts >> 1), (guint32)n_extra};
        g_array_append_val(groups, found);
        break;
      }
      p = skip_events(p, (counts >> 1) + n_extra);
    }
  }
}
