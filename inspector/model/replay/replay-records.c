/* replay-records.c: a state's alive objects and storages kept for the trace model's keyframes
 * (replay-records.h), in buckets by id that a keyframe shares with the one before it when
 * nothing in them changed, and records shared too when a bucket did change; and a state that
 * reads them as its base (gs_replay_set_base), copying a record into its own table before
 * it changes it. */
#include "replay-records.h"

#include <stddef.h>
#include <string.h>

#include "replay-private.h"

/* Buckets per table: 200,000 records make ~50 a bucket, and a keyframe's two directories
 * cost 32 KiB. */
#define RECORDS_BITS 11
#define N_BUCKETS (1u << RECORDS_BITS)

/* Kept records, each starting with its count of the buckets that hold it: an object, and a
 * storage with a copy of the buffer it reads (its bytes pointer that copy, or NULL), so a
 * state reading them as its base finds them as its own records look. */
typedef struct object_rec {
  gint refs;
  gs_replay_object object;
} object_rec;

typedef struct storage_rec {
  gint refs;
  gboolean has_buffer;
  replay_storage storage;
  replay_buffer buffer;
} storage_rec;

/* A record with its id beside it: sorting and matching ids reads no record. */
typedef struct entry {
  guint64 id;
  gpointer rec; /* object_rec* or storage_rec* (kept), or the live record */
} entry;

typedef struct bucket {
  gint refs;
  guint n;
  entry recs[]; /* by id */
} bucket;

struct gs_replay_records {
  gint refs; /* the keyframe, and states reading it as their base */
  guint n_objects, n_storages;
  bucket *objects[N_BUCKETS], *storages[N_BUCKETS]; /* NULL: empty */
};

static guint bucket_of(guint64 id) { return (guint)(gs_id_mix(id) >> (64 - RECORDS_BITS)); }

static void rec_unref(gpointer r) {
  if (--*(gint *)r == 0)
    g_free(r);
}

static void bucket_unref(bucket *b) {
  if (!b || --b->refs)
    return;
  for (guint i = 0; i < b->n; i++)
    rec_unref(b->recs[i].rec);
  g_free(b);
}

gs_replay_records *gs_replay_records_ref(gs_replay_records *k) {
  k->refs++;
  return k;
}

void gs_replay_records_free(gs_replay_records *k) {
  if (!k || --k->refs)
    return;
  for (guint i = 0; i < N_BUCKETS; i++) {
    bucket_unref(k->objects[i]);
    bucket_unref(k->storages[i]);
  }
  g_free(k);
}

/* Whether kept record r holds what the live record does (a storage: but for where its buffer
 * is, which a copy changes). Bytes compared as they are: a difference in padding only costs
 * a record kept twice. */
static gboolean rec_equal(gconstpointer r, gconstpointer live, gboolean storages) {
  if (!storages)
    return memcmp(&((const object_rec *)r)->object, live, sizeof(gs_replay_object)) == 0;
  const storage_rec *k = r;
  const replay_storage *s = live;
  const gsize at = offsetof(replay_storage, bytes), after = at + sizeof s->bytes;
  if (memcmp(&k->storage, s, at) != 0 ||
      memcmp((const char *)&k->storage + after, (const char *)s + after, sizeof *s - after) !=
          0 ||
      k->has_buffer != (s->bytes != NULL))
    return FALSE;
  return !s->bytes || memcmp(&k->buffer, s->bytes, sizeof *s->bytes) == 0;
}

guint64 gs_replay_records_cost(const gs_replay *r) {
  guint64 n_objects = r->n_objects, n_storages = r->live_storages;
  return sizeof(gs_replay_records) + 2 * N_BUCKETS * sizeof(bucket) +
         n_objects * (sizeof(object_rec) + sizeof(entry)) +
         n_storages * (sizeof(storage_rec) + sizeof(entry));
}

guint gs_replay_records_count(const gs_replay *r) { return r->n_objects + (guint)r->live_storages; }

static gpointer rec_new(gconstpointer live, gboolean storages) {
  if (!storages) {
    object_rec *o = g_new(object_rec, 1);
    o->refs = 1;
    memcpy(&o->object, live, sizeof(gs_replay_object));
    return o;
  }
  const replay_storage *s = live;
  storage_rec *r = g_new0(storage_rec, 1);
  r->refs = 1;
  memcpy(&r->storage, s, sizeof *s);
  r->has_buffer = s->bytes != NULL;
  r->storage.bytes = s->bytes ? &r->buffer : NULL;
  if (s->bytes)
    memcpy(&r->buffer, s->bytes, sizeof *s->bytes);
  return r;
}

/* The kept record of id in b, or NULL. */
static gpointer bucket_find(const bucket *b, guint64 id) {
  guint lo = 0, hi = b ? b->n : 0;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    guint64 at = b->recs[mid].id;
    if (at == id)
      return b->recs[mid].rec;
    if (at < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static gint by_u64(gconstpointer a, gconstpointer b) {
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static gint by_id(gconstpointer a, gconstpointer b) {
  guint64 x = ((const entry *)a)->id, y = ((const entry *)b)->id;
  return x < y ? -1 : x > y;
}

/* Keeps the live records (n of them, each starting with its id) into out, sharing what prev
 * already keeps unchanged; adds the bytes it allocated to *bytes. */
static void keep(gpointer *live, guint n, gboolean storages, bucket *const *prev, bucket **out,
                 guint64 *bytes) {
  guint *start = g_new0(guint, N_BUCKETS + 1);
  guint *home = g_new(guint, MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    home[i] = bucket_of(*(const guint64 *)live[i]);
    start[home[i] + 1]++;
  }
  for (guint b = 0; b < N_BUCKETS; b++)
    start[b + 1] += start[b];
  entry *sorted = g_new(entry, MAX(n, 1));
  guint *fill = g_memdup2(start, sizeof(guint) * N_BUCKETS);
  for (guint i = 0; i < n; i++)
    sorted[fill[home[i]]++] = (entry){*(const guint64 *)live[i], live[i]};
  g_free(fill);
  g_free(home);
  for (guint b = 0; b < N_BUCKETS; b++) {
    entry *in = sorted + start[b];
    guint len = start[b + 1] - start[b];
    if (!len)
      continue;
    qsort(in, len, sizeof(entry), by_id);
    bucket *p = prev ? prev[b] : NULL;
    gboolean same = p && p->n == len;
    for (guint i = 0; same && i < len; i++)
      same = p->recs[i].id == in[i].id && rec_equal(p->recs[i].rec, in[i].rec, storages);
    if (same) {
      p->refs++;
      out[b] = p;
      continue;
    }
    bucket *nb = g_malloc(sizeof(bucket) + sizeof(entry) * len);
    nb->refs = 1;
    nb->n = len;
    *bytes += sizeof(bucket) + sizeof(entry) * len;
    for (guint i = 0; i < len; i++) {
      gpointer r = bucket_find(p, in[i].id);
      if (r && rec_equal(r, in[i].rec, storages)) {
        ++*(gint *)r;
      } else {
        r = rec_new(in[i].rec, storages);
        *bytes += storages ? sizeof(storage_rec) : sizeof(object_rec);
      }
      nb->recs[i] = (entry){in[i].id, r};
    }
    out[b] = nb;
  }
  g_free(sorted);
  g_free(start);
}

/* The ids in a change set, grouped by bucket (start[b] to start[b + 1]) and sorted by id
 * within each. */
static guint64 *changed_by_bucket(const gs_id_table *changed, guint *start) {
  guint n = gs_id_table_size(changed), i = 0;
  guint64 *ids = g_new(guint64, MAX(n, 1)), *sorted = g_new(guint64, MAX(n, 1));
  memset(start, 0, sizeof(guint) * (N_BUCKETS + 1));
  for (guint at = 0; at <= changed->mask; at++)
    if (changed->slots[at].value) {
      ids[i++] = changed->slots[at].id;
      start[bucket_of(changed->slots[at].id) + 1]++;
    }
  for (guint b = 0; b < N_BUCKETS; b++)
    start[b + 1] += start[b];
  guint *fill = g_memdup2(start, sizeof(guint) * N_BUCKETS);
  for (i = 0; i < n; i++)
    sorted[fill[bucket_of(ids[i])]++] = ids[i];
  g_free(fill);
  g_free(ids);
  for (guint b = 0; b < N_BUCKETS; b++)
    if (start[b + 1] - start[b] > 1)
      qsort(sorted + start[b], start[b + 1] - start[b], sizeof(guint64), by_u64);
  return sorted;
}

static gconstpointer live_record(const gs_replay *r, guint64 id, gboolean storages) {
  return storages ? (gconstpointer)replay_storage_get(r, id)
                  : (gconstpointer)gs_replay_object_find(r, id);
}

/* keep() for a state whose changes since prev were tracked: only the buckets that hold a
 * changed id are looked at, and only those whose records differ are built anew (the others'
 * records are prev's, shared). */
static void keep_changed(const gs_replay *r, const gs_id_table *changed, gboolean storages,
                         bucket *const *prev, bucket **out, guint64 *bytes) {
  guint *start = g_new(guint, N_BUCKETS + 1);
  guint64 *ids = changed_by_bucket(changed, start);
  for (guint b = 0; b < N_BUCKETS; b++) {
    bucket *p = prev[b];
    const guint64 *ch = ids + start[b];
    guint n_ch = start[b + 1] - start[b];
    gboolean same = TRUE;
    for (guint i = 0; same && i < n_ch; i++) {
      gconstpointer live = live_record(r, ch[i], storages);
      gpointer old = bucket_find(p, ch[i]);
      same = live ? old && rec_equal(old, live, storages) : !old;
    }
    if (same) {
      if (p)
        p->refs++;
      out[b] = p;
      continue;
    }
    guint n_prev = p ? p->n : 0, len = 0, i = 0, j = 0;
    bucket *nb = g_malloc(sizeof(bucket) + sizeof(entry) * (n_prev + n_ch));
    nb->refs = 1;
    while (i < n_prev || j < n_ch) {
      if (j == n_ch || (i < n_prev && p->recs[i].id < ch[j])) { /* unchanged: shared */
        ++*(gint *)p->recs[i].rec;
        nb->recs[len++] = p->recs[i++];
        continue;
      }
      guint64 id = ch[j++];
      gpointer old = NULL;
      if (i < n_prev && p->recs[i].id == id)
        old = p->recs[i++].rec;
      gconstpointer live = live_record(r, id, storages);
      if (!live)
        continue; /* gone */
      gpointer rec;
      if (old && rec_equal(old, live, storages)) {
        ++*(gint *)old;
        rec = old;
      } else {
        rec = rec_new(live, storages);
        *bytes += storages ? sizeof(storage_rec) : sizeof(object_rec);
      }
      nb->recs[len++] = (entry){id, rec};
    }
    nb->n = len;
    if (!len) {
      g_free(nb);
      out[b] = NULL;
      continue;
    }
    *bytes += sizeof(bucket) + sizeof(entry) * len;
    out[b] = nb;
  }
  g_free(ids);
  g_free(start);
}

/* Whether a storage can be kept as a record: a buffer read by two storages, or one with
 * values, is copied with the whole state. */
static gboolean storage_keepable(const replay_storage *s) {
  return !s->bytes || (s->bytes->refs == 1 && !s->bytes->values);
}

/* gs_replay_records_take for a state whose changes since prev were tracked. */
static gs_replay_records *take_changed(const gs_replay *r, const gs_replay_records *prev,
                                       guint64 *bytes) {
  const gs_id_table *cs = r->changed_storages;
  for (guint at = 0; at <= cs->mask; at++) {
    const replay_storage *s = cs->slots[at].value ? replay_storage_get(r, cs->slots[at].id) : NULL;
    if (s && !storage_keepable(s))
      return NULL;
  }
  gs_replay_records *k = g_new0(gs_replay_records, 1);
  k->refs = 1;
  k->n_objects = r->n_objects;
  k->n_storages = (guint)r->live_storages;
  *bytes += sizeof *k;
  keep_changed(r, r->changed_storages, TRUE, prev->storages, k->storages, bytes);
  keep_changed(r, r->changed_objects, FALSE, prev->objects, k->objects, bytes);
  return k;
}

gs_replay_records *gs_replay_records_take(const gs_replay *r, const gs_replay_records *prev,
                                          guint64 *bytes) {
  if (prev && r->changed_objects && r->changed_storages)
    return take_changed(r, prev, bytes);
  guint n = 0;
  gpointer *live = g_new(gpointer, MAX(r->live_storages, 1));
  gs_replay_iter it = {0};
  for (replay_storage *s; replay_storages_next(r, &it, &s);) {
    if (!storage_keepable(s)) {
      g_free(live);
      return NULL;
    }
    live[n++] = s;
  }
  gs_replay_records *k = g_new0(gs_replay_records, 1);
  k->refs = 1;
  k->n_objects = r->n_objects;
  k->n_storages = (guint)r->live_storages;
  *bytes += sizeof *k;
  keep(live, n, TRUE, prev ? prev->storages : NULL, k->storages, bytes);
  g_free(live);

  n = 0;
  live = g_new(gpointer, MAX(r->n_objects, 1));
  it = (gs_replay_iter){0};
  for (gs_replay_object *o; gs_replay_objects_next(r, &it, &o);)
    live[n++] = o;
  keep(live, n, FALSE, prev ? prev->objects : NULL, k->objects, bytes);
  g_free(live);
  return k;
}

/* ---- a state reading kept records as its base ----------------------------------------- */

const char gs_replay_gone_mark;

gs_replay_object *gs_replay_base_object(const gs_replay_records *k, guint64 id) {
  object_rec *o = bucket_find(k->objects[bucket_of(id)], id);
  return o ? &o->object : NULL;
}

replay_storage *replay_base_storage(const gs_replay_records *k, guint64 id) {
  storage_rec *s = bucket_find(k->storages[bucket_of(id)], id);
  return s ? &s->storage : NULL;
}

gs_replay_object *replay_object_own(gs_replay *r, guint64 id) {
  const gs_replay_object *kept = gs_replay_base_object(r->base, id);
  if (!kept)
    return NULL;
  gs_replay_object *o = replay_object_new(r);
  memcpy(o, kept, sizeof *o);
  gs_id_table_replace(r->object_table, id, o);
  return o;
}

replay_storage *replay_storage_own(gs_replay *r, guint64 id) {
  const replay_storage *kept = replay_base_storage(r->base, id);
  if (!kept)
    return NULL;
  replay_storage *s = g_memdup2(kept, sizeof *s);
  if (kept->bytes) { /* the buffer it reads alone (storage_keepable) */
    s->bytes = g_memdup2(kept->bytes, sizeof *s->bytes);
    s->bytes->refs = 1;
  }
  gs_id_table_replace(r->storages, id, s);
  return s;
}

void gs_replay_set_base(gs_replay *r, gs_replay_records *k) {
  g_return_if_fail(!r->base && r->n_objects == 0 && gs_id_table_size(r->storages) == 0);
  r->base = gs_replay_records_ref(k);
  r->n_objects = k->n_objects;
  r->live_storages = k->n_storages;
}

/* The next record of base's buckets (objects or storages) that table does not amend, then
 * table's own. */
static gboolean next_record(const gs_replay_records *base, bucket *const *buckets,
                            const gs_id_table *table, gs_replay_iter *it, gpointer *value) {
  while (base && !it->own && it->bucket < N_BUCKETS) {
    const bucket *b = buckets[it->bucket];
    if (!b || it->at >= b->n) {
      it->bucket++;
      it->at = 0;
      continue;
    }
    const entry *e = &b->recs[it->at++];
    if (gs_id_table_lookup(table, e->id))
      continue; /* the state's own record (or gone) */
    *value = buckets == base->objects ? (gpointer) & ((object_rec *)e->rec)->object
                                      : (gpointer) & ((storage_rec *)e->rec)->storage;
    return TRUE;
  }
  if (!it->own) {
    it->own = TRUE;
    it->at = 0;
  }
  for (gpointer v; gs_id_table_next(table, &it->at, &v);)
    if (v != GS_REPLAY_GONE) {
      *value = v;
      return TRUE;
    }
  return FALSE;
}

gboolean gs_replay_objects_next(const gs_replay *r, gs_replay_iter *it, gs_replay_object **o) {
  return next_record(r->base, r->base ? r->base->objects : NULL, r->object_table, it,
                     (gpointer *)o);
}

gboolean replay_storages_next(const gs_replay *r, gs_replay_iter *it, replay_storage **s) {
  return next_record(r->base, r->base ? r->base->storages : NULL, r->storages, it, (gpointer *)s);
}
