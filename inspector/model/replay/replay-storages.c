/* replay-storages.c: storages and the bytes they hold. A storage reads its own buffer or,
 * copy-on-write, one it shares; bytes are alive while any storage reads them, so memory
 * (live_bytes and its peak) counts buffers, and a shared buffer's bytes pass to a sharer when
 * the storage that made them goes. The trace model's per-storage tally lives here too. */
#include "replay-private.h"

static void buffer_free(replay_buffer *b) {
  replay_values_free(b->values);
  g_free(b);
}

void replay_storage_free(gpointer p) {
  replay_storage *s = p;
  if (p == GS_REPLAY_GONE)
    return;
  if (s->bytes && --s->bytes->refs == 0)
    buffer_free(s->bytes);
  g_free(s);
}

/* Storage records and buffers let go of are kept for the next ones, as objects are
 * (replay-objects.c): a log of short-lived tensors makes and frees one of each per tensor, and
 * the allocator was a twentieth of indexing it. Every record is still g_malloc'ed, so any one
 * may be g_free'd instead (replay_storage_free). */
#define MAX_SPARE 1024

static gpointer spare_take(gpointer *spares, guint *n, gsize size) {
  return *n ? spares[--*n] : g_malloc(size);
}

static void spare_keep(gpointer **spares, guint *n, gpointer p) {
  if (!*spares)
    *spares = g_new(gpointer, MAX_SPARE);
  if (*n < MAX_SPARE)
    (*spares)[(*n)++] = p;
  else
    g_free(p);
}

static void buffer_recycle(gs_replay *r, replay_buffer *b) {
  replay_values_free(b->values);
  spare_keep(&r->spare_buffers, &r->n_spare_buffers, b);
}

/* Sizes come from the log and may be anything up to 2^64 - 1: the sums saturate instead of
 * wrapping (a signed sum overflowed on a 2^63-byte storage and the peak read 16 EiB). */
static guint64 saturating_move(guint64 sum, guint64 nbytes, gboolean grow) {
  if (grow)
    return sum > G_MAXUINT64 - nbytes ? G_MAXUINT64 : sum + nbytes;
  return sum > nbytes ? sum - nbytes : 0;
}

/* outside: the bytes are not the engine allocator's (counted in outside_bytes too). */
static void memory_add(gs_replay *r, const gs_trace_event *e, guint64 nbytes, gboolean grow,
                       gboolean outside) {
  if (!nbytes)
    return;
  r->live_bytes = saturating_move(r->live_bytes, nbytes, grow);
  if (outside)
    r->outside_bytes = saturating_move(r->outside_bytes, nbytes, grow);
  r->memory_changed = TRUE;
  if (r->live_bytes > r->peak_bytes) {
    r->peak_bytes = r->live_bytes;
    r->peak_seq = e->seq;
    r->peak_ns = e->time_ns;
  }
}

/* storage lets go of b. If it owned b and others still share it (a clone outliving the
 * tensor it was cloned from, as every accumulated gradient does), the bytes pass to one of
 * them: they are alive, and someone's. */
static void buffer_drop(gs_replay *r, const gs_trace_event *e, replay_buffer *b,
                        guint64 storage) {
  if (!b)
    return;
  if (--b->refs == 0) {
    memory_add(r, e, b->nbytes, FALSE, b->memory != 0);
    buffer_recycle(r, b);
    return;
  }
  if (b->owner != storage)
    return;
  b->owner = 0;
  /* A shared buffer is the state's own: a base keeps storages only while each reads its own
   * bytes (replay-records.c), and sharing one made its source the state's own first. */
  gpointer value;
  for (guint it = 0; gs_id_table_next(r->storages, &it, &value);) {
    const replay_storage *heir = value;
    if (value == GS_REPLAY_GONE)
      continue;
    if (heir->bytes != b)
      continue;
    gs_replay_mark_storage(r, heir->id); /* what it owns changes */
    if (heir->id != storage && (!b->owner || heir->id < b->owner))
      b->owner = heir->id; /* the oldest sharer, so any copy of the state picks the same */
  }
  r->heir_storage = b->owner;
}

static replay_buffer *buffer_new(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  replay_buffer *b = spare_take(r->spare_buffers, &r->n_spare_buffers, sizeof *b);
  b->nbytes = nbytes;
  b->refs = 1;
  b->owner = e->storage;
  b->memory = e->kind == GS_TRACE_STORAGE_SHARE ? 0 : e->memory;
  b->peer = e->kind == GS_TRACE_STORAGE_SHARE ? 0 : e->peer;
  b->values = NULL;
  memory_add(r, e, nbytes, TRUE, b->memory != 0);
  return b;
}

/* Takes a storage out (its bytes let go of) and counts it gone. */
static void storage_remove(gs_replay *r, const gs_trace_event *e, replay_storage *s) {
  buffer_drop(r, e, s->bytes, s->id);
  s->bytes = NULL;
  /* (s is the state's own: replay_storage_w) */
  if (r->base && replay_base_storage(r->base, s->id))
    gs_id_table_replace(r->storages, s->id, GS_REPLAY_GONE); /* frees s */
  else                                                       /* s itself comes out */
    spare_keep(&r->spare_storages, &r->n_spare_storages, gs_id_table_steal(r->storages, s->id));
  r->live_storages--;
}

/* A base's record that the state never changed goes without being copied first (a seek
 * through the freeing of 200,000 storages copied each): the bytes it reads are its own
 * (replay-records.c keeps no shared buffer), so they go with it. FALSE if e's storage is
 * not such a record. */
static gboolean base_storage_free(gs_replay *r, const gs_trace_event *e) {
  if (!r->base || gs_id_table_lookup(r->storages, e->storage))
    return FALSE;
  const replay_storage *kept = replay_base_storage(r->base, e->storage);
  if (!kept)
    return FALSE;
  gs_replay_mark_storage(r, e->storage);
  if (kept->bytes)
    memory_add(r, e, kept->bytes->nbytes, FALSE, kept->bytes->memory != 0);
  gs_id_table_replace(r->storages, e->storage, GS_REPLAY_GONE);
  r->live_storages--;
  return TRUE;
}

static replay_storage *storage_add(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  replay_storage *old = replay_storage_w(r, e->storage);
  if (old) { /* a reused id without a free: the old one is gone now */
    replay_warn(r, e->seq, GS_REPLAY_WARN_STORAGE_TWICE, e->storage);
    storage_remove(r, e, old);
  }
  replay_storage *s = spare_take(r->spare_storages, &r->n_spare_storages, sizeof *s);
  memset(s, 0, sizeof *s);
  s->id = e->storage;
  s->nbytes = nbytes;
  s->version_unknown = r->in_snapshot; /* its counter ran before the log began */
  gs_id_table_replace(r->storages, s->id, s);
  r->live_storages++;
  return s;
}

void replay_on_storage(gs_replay *r, const gs_trace_event *e) {
  replay_storage *s;
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
    s = storage_add(r, e, e->nbytes);
    s->bytes = buffer_new(r, e, e->nbytes);
    replay_memo_storage(r, e->storage, s);
    break;
  case GS_TRACE_STORAGE_SHARE: {
    replay_storage *src = replay_storage_w(r, e->source);
    /* Held before storage_add: a log may name the storage as its own source, and adding it
     * again frees the old record (and its bytes, were they not held). */
    replay_buffer *shared = src ? src->bytes : NULL;
    if (shared)
      shared->refs++;
    s = storage_add(r, e, e->nbytes);
    if (shared) {
      s->bytes = shared;
    } else { /* its source is unknown to us: count the bytes as its own */
      s->bytes = buffer_new(r, e, e->nbytes);
    }
    break;
  }
  case GS_TRACE_STORAGE_MATERIALISE:
    s = replay_storage_w(r, e->storage);
    if (!s)
      s = storage_add(r, e, e->nbytes);
    /* The copy holds what the shared bytes held. */
    replay_values *values = s->bytes ? replay_values_copy(s->bytes->values) : NULL;
    buffer_drop(r, e, s->bytes, s->id);
    s->nbytes = e->nbytes;
    s->bytes = buffer_new(r, e, e->nbytes);
    s->bytes->values = values; /* in shared memory: trusted no longer than values.c says */
    break;
  case GS_TRACE_STORAGE_FREE:
    if (base_storage_free(r, e))
      break;
    s = replay_storage_w(r, e->storage);
    if (s)
      storage_remove(r, e, s);
    else
      replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_STORAGE, e->storage);
    replay_memo_storage(r, e->storage, NULL);
    break;
  default:
    break;
  }
}

/* Storages share buffers copy-on-write: copy each buffer once and re-point its sharers. */
void replay_copy_storages(gs_replay *r, const gs_replay *src) {
  g_autoptr(GHashTable) buffers = g_hash_table_new(g_direct_hash, g_direct_equal);
  gs_id_table_reserve(r->storages, (guint)src->live_storages);
  gs_replay_iter at = {0};
  for (replay_storage *from; replay_storages_next(src, &at, &from);) {
    replay_storage *to = g_memdup2(from, sizeof *from);
    if (from->bytes) {
      to->bytes = g_hash_table_lookup(buffers, from->bytes);
      if (!to->bytes) {
        to->bytes = g_memdup2(from->bytes, sizeof *from->bytes);
        to->bytes->refs = 0;
        to->bytes->values = replay_values_copy(from->bytes->values);
        g_hash_table_insert(buffers, from->bytes, to->bytes);
      }
      to->bytes->refs++;
    }
    gs_id_table_replace(r->storages, to->id, to);
  }
}

/* ---- queries -------------------------------------------------------------------------- */

static guint64 own_bytes(const replay_storage *s) {
  return s->bytes && s->bytes->owner == s->id ? s->bytes->nbytes : 0;
}

void gs_replay_foreach_storage(const gs_replay *r, gs_replay_storage_fn fn, gpointer user_data) {
  gs_replay_iter it = {0};
  for (replay_storage *s; replay_storages_next(r, &it, &s);)
    fn(s->id, own_bytes(s), s->saved_refs, user_data);
}

gboolean gs_replay_storage(const gs_replay *r, guint64 id, guint64 *bytes, guint *saved_refs) {
  const replay_storage *s = replay_storage_get(r, id);
  if (!s)
    return FALSE;
  if (bytes)
    *bytes = own_bytes(s);
  if (saved_refs)
    *saved_refs = s->saved_refs;
  return TRUE;
}

gboolean gs_replay_storage_memory(const gs_replay *r, guint64 id, guint *memory, guint *peer) {
  const replay_storage *s = replay_storage_get(r, id);
  if (!s || !s->bytes)
    return FALSE;
  *memory = s->bytes->memory;
  *peer = s->bytes->peer;
  return TRUE;
}

gs_replay_tally *gs_replay_storage_tally(gs_replay *r, guint64 id) {
  replay_storage *s = replay_storage_w(r, id); /* the caller writes its tally */
  return s ? &s->tally : NULL;
}

gs_replay_tally *gs_replay_storage_full(gs_replay *r, guint64 id, guint64 *bytes,
                                        guint *saved_refs) {
  replay_storage *s = replay_storage_w(r, id);
  if (!s)
    return NULL;
  *bytes = own_bytes(s);
  *saved_refs = s->saved_refs;
  return &s->tally;
}

void gs_replay_tally_storage(const gs_replay_tally *t, guint64 *bytes, guint *saved_refs) {
  const replay_storage *s =
      (const replay_storage *)((const char *)t - G_STRUCT_OFFSET(replay_storage, tally));
  *bytes = own_bytes(s);
  *saved_refs = s->saved_refs;
}
