/* model-series.c: a value over event indices, stored only where it changes, compactly.
 *
 * The memory series take a point at most events that make or free a tensor, so on a log of
 * short-lived tensors their points were half of the model's memory (a 32-bit index and a
 * 64-bit value: 12 bytes a point). Here a point is two varints, the index's distance from the
 * point before and the value's zigzagged change: 2 bytes for the usual step of a few events
 * and a few kilobytes. Every MODEL_SERIES_BLOCK points a block restarts with the point in
 * full, so finding the value at an index is a binary search over blocks and at most a
 * block's worth of decoding; a block also keeps its smallest and largest value, so the
 * timeline's columns over a long log read blocks rather than decode every point.
 *
 * The newest point stays aside, unencoded: a later change in the same event (or in the
 * second event of a pair, model_event_closes_pair) overwrites or undoes it. */
#include "model-private.h"

#include <string.h>

static void put_varint(model_series *s, guint64 v) {
  model_put_varint(&s->data, &s->data_len, &s->data_cap, v);
}

static const guint8 *get_varint(const guint8 *p, guint64 *out) { return model_get_varint(p, out); }

void model_series_init(model_series *s) { memset(s, 0, sizeof *s); }

void model_series_clear(model_series *s) {
  g_free(s->blocks);
  g_free(s->data);
  memset(s, 0, sizeof *s);
}

guint64 model_series_len(const model_series *s) { return s->n_encoded + (s->has_tail ? 1 : 0); }

/* Encodes the aside point after the others. */
static void commit_tail(model_series *s) {
  if (!s->has_tail)
    return;
  if (s->n_encoded % MODEL_SERIES_BLOCK == 0) {
    if (s->n_blocks == s->blocks_cap) {
      s->blocks_cap = MAX(s->blocks_cap * 2, 16);
      s->blocks = g_renew(model_series_block, s->blocks, s->blocks_cap);
    }
    s->blocks[s->n_blocks++] = (model_series_block){
        .value = s->tail_value, .offset = s->data_len, .at = s->tail_at,
        .last_at = s->tail_at, .min = s->tail_value, .max = s->tail_value,
        .max_at = s->tail_at};
  } else {
    put_varint(s, s->tail_at - s->last_at);
    gint64 delta = (gint64)(s->tail_value - s->last_value); /* wraps: any change fits */
    put_varint(s, ((guint64)delta << 1) ^ (guint64)(delta >> 63));
    model_series_block *b = &s->blocks[s->n_blocks - 1];
    b->last_at = s->tail_at;
    b->min = MIN(b->min, s->tail_value);
    if (s->tail_value > b->max) {
      b->max = s->tail_value;
      b->max_at = s->tail_at;
    }
  }
  s->last_at = s->tail_at;
  s->last_value = s->tail_value;
  s->n_encoded++;
  s->has_tail = FALSE;
}

void model_series_set(model_series *s, guint64 index, guint64 value) {
  if (s->has_tail && s->tail_at == (guint32)index) {
    /* Changed twice in one event (or one pair of events): a change undone leaves no point. */
    if (value == (s->n_encoded ? s->last_value : 0))
      s->has_tail = FALSE;
    else
      s->tail_value = value;
    return;
  }
  commit_tail(s);
  s->tail_at = (guint32)index;
  s->tail_value = value;
  s->has_tail = TRUE;
}

/* Loads point k into c (k < model_series_len), c being at point k - 1 (or before the first
 * point for k = 0, or anywhere for the first point of a block). */
static void load_point(model_series_cursor *c, guint64 k) {
  const model_series *s = c->series;
  c->pos = k;
  if (k == s->n_encoded) { /* the point aside */
    c->at = s->tail_at;
    c->value = s->tail_value;
    return;
  }
  if (k % MODEL_SERIES_BLOCK == 0) {
    const model_series_block *b = &s->blocks[k / MODEL_SERIES_BLOCK];
    c->at = b->at;
    c->value = b->value;
    c->byte = b->offset;
    return;
  }
  guint64 step, change;
  const guint8 *p = get_varint(s->data + c->byte, &step);
  p = get_varint(p, &change);
  c->byte = (gsize)(p - s->data);
  c->at += (guint32)step;
  c->value += (change >> 1) ^ (guint64)-(gint64)(change & 1);
}

gboolean model_series_seek(const model_series *s, guint64 index, model_series_cursor *c) {
  memset(c, 0, sizeof *c);
  c->series = s;
  c->pos = G_MAXUINT64; /* before the first point */
  if (s->has_tail && s->tail_at <= index) {
    load_point(c, s->n_encoded);
    return TRUE;
  }
  /* The last block that starts at or before index. */
  guint lo = 0, hi = s->n_blocks;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (s->blocks[mid].at <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return FALSE;
  guint64 k = (guint64)(lo - 1) * MODEL_SERIES_BLOCK;
  load_point(c, k);
  guint64 end = MIN(k + MODEL_SERIES_BLOCK, s->n_encoded);
  while (c->pos + 1 < end) {
    model_series_cursor next = *c;
    load_point(&next, c->pos + 1);
    if (next.at > index)
      break;
    *c = next;
  }
  return TRUE;
}

gboolean model_series_next(model_series_cursor *c) {
  guint64 k = c->pos + 1; /* 0 from before the first point */
  if (k >= model_series_len(c->series))
    return FALSE;
  load_point(c, k);
  return TRUE;
}

guint64 model_series_value(const model_series *s, guint64 index) {
  model_series_cursor c;
  return model_series_seek(s, index, &c) ? c.value : 0;
}

void model_series_range(const model_series *s, guint64 first, guint64 last, guint64 *min,
                        guint64 *max, guint64 *max_at) {
  model_series_cursor c;
  guint64 v = model_series_seek(s, first, &c) ? c.value : 0;
  *min = *max = v;
  *max_at = first;
  guint64 len = model_series_len(s);
  /* The points after first's, in order; a block wholly before last counts as its summary. */
  for (guint64 k = c.pos + 1; k < len;) {
    if (k % MODEL_SERIES_BLOCK == 0 && k < s->n_encoded) {
      const model_series_block *b = &s->blocks[k / MODEL_SERIES_BLOCK];
      if (b->at > last)
        break;
      if (b->last_at <= last) {
        *min = MIN(*min, b->min);
        if (b->max > *max) {
          *max = b->max;
          *max_at = b->max_at;
        }
        k = MIN(k + MODEL_SERIES_BLOCK, s->n_encoded);
        continue;
      }
    }
    load_point(&c, k); /* c is at k - 1, or k starts a block */
    if (c.at > last)
      break;
    *min = MIN(*min, c.value);
    if (c.value > *max) {
      *max = c.value;
      *max_at = c.at;
    }
    k++;
  }
}
