/* replay-values.c: what a tensor's elements hold, as the log says it (GS_TRACE_VALUES=N
 * records a tensor's first N elements after its creation and after each in-place write to
 * it), and storage versions.
 *
 * Values belong to bytes, not to handles: a write through one alias changes what every other
 * alias of those bytes reads. So values are kept per buffer (the bytes a storage reads, shared
 * copy-on-write by clones until one writes), by element position. A values event places a
 * tensor's elements through its offset and strides; an in-place write first forgets every
 * position the writer covers (the values event after it then gives the first N back), so the
 * model never shows a value the bytes no longer hold. Materialising copies the buffer's values
 * with its bytes. Memory the engine does not own alone (gs_from_blob, DLPack, mapped files,
 * shared memory) has known values only at the event that recorded them: others write it
 * without an event. */
#include "replay-private.h"

#include <string.h>

/* Positions kept per buffer, at most: a buffer viewed row by row by many tensors could
 * otherwise gather all of its elements. Past it, new positions are not kept (unknown). */
#define MAX_POSITIONS 4096

/* Sorted by position. */
struct replay_values {
  guint64 seq; /* the last values event placed here */
  guint n, cap;
  gint64 *pos;
  double *val;
};

void replay_values_free(replay_values *v) {
  if (!v)
    return;
  g_free(v->pos);
  g_free(v->val);
  g_free(v);
}

replay_values *replay_values_copy(const replay_values *v) {
  if (!v)
    return NULL;
  replay_values *c = g_new0(replay_values, 1);
  c->seq = v->seq;
  c->n = c->cap = v->n;
  c->pos = g_memdup2(v->pos, sizeof *v->pos * v->n);
  c->val = g_memdup2(v->val, sizeof *v->val * v->n);
  return c;
}

/* The index of the first entry at or after pos. */
static guint lower_bound(const replay_values *v, gint64 pos) {
  guint lo = 0, hi = v->n;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (v->pos[mid] < pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void values_set(replay_values *v, gint64 pos, double value) {
  guint i = lower_bound(v, pos);
  if (i < v->n && v->pos[i] == pos) {
    v->val[i] = value;
    return;
  }
  if (v->n == MAX_POSITIONS)
    return;
  if (v->n == v->cap) {
    v->cap = MAX(16, v->cap * 2);
    v->pos = g_renew(gint64, v->pos, v->cap);
    v->val = g_renew(double, v->val, v->cap);
  }
  memmove(v->pos + i + 1, v->pos + i, sizeof *v->pos * (v->n - i));
  memmove(v->val + i + 1, v->val + i, sizeof *v->val * (v->n - i));
  v->pos[i] = pos;
  v->val[i] = value;
  v->n++;
}

static gboolean values_get(const replay_values *v, gint64 pos, double *value) {
  if (!v)
    return FALSE;
  guint i = lower_bound(v, pos);
  if (i == v->n || v->pos[i] != pos)
    return FALSE;
  *value = v->val[i];
  return TRUE;
}

/* ---- a tensor's elements in its buffer --------------------------------------------------- */

/* The buffer position of logical element k (row-major). */
static gint64 position_of(const gs_replay_object *o, guint64 k) {
  gint64 pos = o->offset;
  for (int d = o->ndim - 1; d >= 0; d--) {
    gint64 size = MAX(o->shape[d], 1);
    pos += (gint64)(k % (guint64)size) * o->strides[d];
    k /= (guint64)size;
  }
  return pos;
}

/* Whether buffer position pos is one of o's elements. Views here (slices, selects, transposes,
 * expands, narrows) never place two elements of different indices at one position unless a
 * stride is 0, so taking dimensions from the largest stride down decides it exactly. */
static gboolean covers(const gs_replay_object *o, gint64 pos) {
  int order[GS_MAX_DIMS], n = 0;
  for (int d = 0; d < o->ndim; d++) {
    if (o->shape[d] <= 0)
      return FALSE;
    if (o->shape[d] > 1 && o->strides[d] != 0)
      order[n++] = d;
  }
  for (int i = 1; i < n; i++) /* by stride, largest first (a handful of dimensions) */
    for (int j = i; j > 0 && ABS(o->strides[order[j]]) > ABS(o->strides[order[j - 1]]); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  gint64 rest = pos - o->offset;
  for (int i = 0; i < n; i++) {
    gint64 stride = o->strides[order[i]];
    if (stride < 0) /* not made by any view of this engine: decide conservatively */
      return TRUE;
    gint64 index = rest / stride;
    if (index < 0 || index >= o->shape[order[i]])
      return FALSE;
    rest -= index * stride;
  }
  return rest == 0;
}

static replay_buffer *buffer_of(const gs_replay *r, guint64 storage) {
  const replay_storage *s = replay_storage_get(r, storage);
  return s ? s->bytes : NULL;
}

void replay_on_values(gs_replay *r, const gs_trace_event *e) {
  const gs_replay_object *o = gs_replay_object_get(r, e->tensor);
  if (!o || o->composite)
    return;
  replay_storage *s = replay_storage_w(r, o->storage); /* its buffer's values change */
  replay_buffer *b = s ? s->bytes : NULL;
  if (!b)
    return;
  if (!b->values)
    b->values = g_new0(replay_values, 1);
  b->values->seq = e->seq;
  guint64 n = MIN((guint64)e->n_values, gs_replay_object_numel(o));
  for (guint64 k = 0; k < n; k++)
    values_set(b->values, position_of(o, k), e->values[k]);
}

void replay_on_inplace_write(gs_replay *r, const gs_trace_event *e) {
  replay_storage *s = replay_storage_w(r, e->storage);
  if (s) {
    s->version = e->version;
    s->version_unknown = FALSE;
  }
  replay_buffer *b = s ? s->bytes : NULL;
  if (!b || !b->values)
    return;
  const gs_replay_object *o = gs_replay_object_get(r, e->tensor);
  if (!o || o->composite || o->storage != e->storage) { /* who wrote is unknown: all of it */
    b->values->n = 0;
    return;
  }
  guint kept = 0;
  for (guint i = 0; i < b->values->n; i++)
    if (!covers(o, b->values->pos[i])) {
      b->values->pos[kept] = b->values->pos[i];
      b->values->val[kept++] = b->values->val[i];
    }
  b->values->n = kept;
}

/* ---- queries -------------------------------------------------------------------------- */

guint gs_replay_tensor_values(const gs_replay *r, const gs_replay_object *o, double *out,
                              guint max) {
  if (!o || o->composite)
    return 0;
  const replay_buffer *b = buffer_of(r, o->storage);
  if (!b || !b->values)
    return 0;
  /* Bytes that are not the engine's own (a blob, DLPack, a mapped file, shared memory) can be
   * written by others, out of the log's sight: what they held is claimed only at the values
   * event that read them, not one event later. */
  if (b->memory != 0 && b->values->seq != r->last_seq)
    return 0;
  guint64 n = MIN((guint64)max, gs_replay_object_numel(o));
  guint k = 0;
  while (k < n && values_get(b->values, position_of(o, k), &out[k]))
    k++;
  return k;
}

gboolean gs_replay_storage_version(const gs_replay *r, guint64 id, guint64 *version) {
  const replay_storage *s = replay_storage_get(r, id);
  if (!s || s->version_unknown)
    return FALSE;
  *version = s->version;
  return TRUE;
}

guint64 gs_replay_storage_shares_bytes_with(const gs_replay *r, guint64 id) {
  const replay_storage *s = replay_storage_get(r, id);
  if (!s || !s->bytes || s->bytes->refs < 2)
    return 0;
  if (s->bytes->owner && s->bytes->owner != id)
    return s->bytes->owner;
  guint64 other = 0; /* it made the bytes (or their maker is gone): the oldest other sharer */
  /* Sharers of a buffer are all the state's own records (replay-storages.c's buffer_drop). */
  gpointer value;
  for (guint it = 0; gs_id_table_next(r->storages, &it, &value);) {
    const replay_storage *t = value;
    if (value != GS_REPLAY_GONE && t->bytes == s->bytes && t->id != id && (!other || t->id < other))
      other = t->id;
  }
  return other;
}
