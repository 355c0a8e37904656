/* flight-state.c: the state the flight recorder's dropped chunks leave, as the events that
 * re-create it (flight-state.h).
 *
 * Records are the applied events worth keeping, deep-copied, in the order they were applied
 * (which is the order they are written back). Each live object points at its records through
 * small id maps; when it dies its records are marked dead and, once the dead outnumber the
 * living, the array is compacted. So memory follows what is alive, not how long the run was.
 *
 * What is kept, per kind (everything else: writes, marks, errors, backward passes, values,
 * says nothing about what is alive and is dropped with its chunk):
 * - strings, sites, binaries: the last definition of each id (table entries);
 * - storages: their allocation or copy-on-write share (a materialisation turns a share into
 *   an allocation of its own); a freed storage that live shares still point at is kept with
 *   its free, so the shared bytes are counted once, as they were;
 * - tensors and composites: their creation, their last ownership change, their name, their
 *   last requires_grad change, their last data replacement and their place in a module; a
 *   tensor moved into a parameter is re-created under its new id;
 * - scopes until they end; nodes until released, with their free_saved; modules, their
 *   children and optimizers for the whole run (the log records no end for them);
 * - a distributed run's dist_init (which rank of which run wrote the log). */
#include <stdlib.h>
#include <string.h>

#include "flight-state.h"
#include "format.h"
#include "writer-impl.h"

/* ---- id maps: u64 id -> record index, linear probing with backward-shift deletion -------- */

typedef struct idmap {
  uint64_t *keys; /* 0: empty */
  uint32_t *vals;
  size_t cap, len;
} idmap;

static size_t slot_of(uint64_t key, size_t cap) {
  return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static bool idmap_put(idmap *m, uint64_t key, uint32_t val) {
  if (!key)
    return true;
  if ((m->len + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      free(keys), free(vals);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j])
          j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i], vals[j] = m->vals[i];
      }
    free(m->keys), free(m->vals);
    m->keys = keys, m->vals = vals, m->cap = cap;
  }
  size_t j = slot_of(key, m->cap);
  while (m->keys[j] && m->keys[j] != key)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j])
    m->len++;
  m->keys[j] = key, m->vals[j] = val;
  return true;
}

/* The value + 1 of key, 0 if absent. */
static uint32_t idmap_get(const idmap *m, uint64_t key) {
  if (!key || !m->len) /* most maps are empty most of the time: no probe */
    return 0;
  for (size_t j = slot_of(key, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == key)
      return m->vals[j] + 1;
  return 0;
}

/* Removes key; returns its value + 1, 0 if it was absent (one probe for a get and a delete). */
static uint32_t idmap_take(idmap *m, uint64_t key) {
  if (!key || !m->len)
    return 0;
  size_t j = slot_of(key, m->cap);
  while (m->keys[j] && m->keys[j] != key)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j])
    return 0;
  uint32_t taken = m->vals[j] + 1;
  m->keys[j] = 0;
  m->len--;
  /* Backward shift: move later members of the run into the hole if their home allows. */
  for (size_t k = (j + 1) & (m->cap - 1); m->keys[k]; k = (k + 1) & (m->cap - 1)) {
    size_t home = slot_of(m->keys[k], m->cap);
    if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
      m->keys[j] = m->keys[k], m->vals[j] = m->vals[k];
      m->keys[k] = 0;
      j = k;
    }
  }
  return taken;
}

static void idmap_del(idmap *m, uint64_t key) { idmap_take(m, key); }

/* ---- records ------------------------------------------------------------------------- */

typedef struct record {
  gs_trace_event e; /* arrays and text point into `owned` */
  void *owned;
  bool live;
} record;

/* Which map holds which records; each indexes the records by the id in the event. */
enum {
  M_STRING, M_SITE, M_STORAGE, M_STORAGE_FREE, M_OBJECT, M_OWNER, M_NAME, M_PARAM, M_GRAD,
  M_DATA, M_SCOPE, M_NODE, M_NODE_FREED, M_MODULE, M_N
};

struct gs__flight_state {
  record *recs;
  size_t n, cap, dead;
  idmap maps[M_N];
  idmap share_refs; /* storage -> live storages sharing its bytes (value = count - 1) */
  uint64_t last_seq, last_time;
  bool incomplete; /* memory ran out: what is written may miss objects */
};

gs__flight_state *gs__flight_state_new(void) { return calloc(1, sizeof(gs__flight_state)); }

void gs__flight_state_free(gs__flight_state *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->n; i++)
    free(s->recs[i].owned);
  for (int k = 0; k < M_N; k++)
    free(s->maps[k].keys), free(s->maps[k].vals);
  free(s->share_refs.keys), free(s->share_refs.vals);
  free(s->recs);
  free(s);
}

bool gs__flight_state_empty(const gs__flight_state *s) { return s->last_seq == 0 && s->n == 0; }

uint64_t gs__flight_state_objects(const gs__flight_state *s) { return s->maps[M_OBJECT].len; }

/* Copies e with its arrays and text into a new record; its index, or -1. */
static long add_record(gs__flight_state *s, const gs_trace_event *e) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    record *recs = realloc(s->recs, cap * sizeof *recs);
    if (!recs)
      return -1;
    s->recs = recs, s->cap = cap;
  }
  size_t words = (size_t)e->n_inputs + e->n_saved + e->n_parts + e->n_params + e->n_frames;
  size_t bytes = words * sizeof(uint64_t) + (e->text ? e->text_len + 1 : 0);
  record *r = &s->recs[s->n];
  r->e = *e;
  r->owned = NULL;
  r->live = true;
  r->e.values = NULL, r->e.n_values = 0; /* values are not state */
  /* A storage is a record of its own, in the log as the reader derived it from a tensor
   * event's alloc, freed or shared: written back, it is a storage event, and the tensor's
   * creation allocates or shares nothing. (Set here, not on a copy of the event: that copy
   * cost as much again.) */
  r->e.derived = false;
  r->e.alloc = 0;
  r->e.shared = 0;
  if (bytes) {
    uint8_t *p = r->owned = malloc(bytes);
    if (!p)
      return -1;
#define COPY(field, n)                                                                         \
  if (e->n) {                                                                                  \
    memcpy(p, e->field, e->n * sizeof(uint64_t));                                              \
    r->e.field = (const uint64_t *)p;                                                          \
    p += e->n * sizeof(uint64_t);                                                              \
  }
    COPY(inputs, n_inputs)
    COPY(saved, n_saved)
    COPY(parts, n_parts)
    COPY(params, n_params)
    COPY(frames, n_frames)
#undef COPY
    if (e->text) {
      memcpy(p, e->text, e->text_len);
      p[e->text_len] = 0;
      r->e.text = (const char *)p;
    }
  }
  return (long)s->n++;
}

static void kill_index(gs__flight_state *s, uint32_t index_plus_one) {
  if (!index_plus_one)
    return;
  record *r = &s->recs[index_plus_one - 1];
  if (r->live) {
    r->live = false;
    s->dead++;
  }
}

/* Kills the record map k holds for id and forgets it. */
static void kill(gs__flight_state *s, int k, uint64_t id) {
  kill_index(s, idmap_take(&s->maps[k], id));
}

/* Keeps e as the record of id in map k, replacing (killing) the one before. */
static bool keep(gs__flight_state *s, int k, uint64_t id, const gs_trace_event *e) {
  kill(s, k, id);
  long at = add_record(s, e);
  return at >= 0 && idmap_put(&s->maps[k], id, (uint32_t)at);
}

/* Compacts the records once the dead outnumber the living, rebuilding the maps. */
static bool compact(gs__flight_state *s) {
  if (s->dead < 1024 || s->dead * 2 < s->n)
    return true;
  uint32_t *moved = malloc(s->n * sizeof *moved);
  if (!moved)
    return false;
  size_t out = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!s->recs[i].live) {
      if (s->recs[i].owned) /* most records own nothing: no call for them */
        free(s->recs[i].owned);
      continue;
    }
    moved[i] = (uint32_t)out;
    s->recs[out++] = s->recs[i];
  }
  for (int k = 0; k < M_N; k++) {
    idmap *m = &s->maps[k];
    for (size_t j = 0; j < m->cap; j++)
      if (m->keys[j])
        m->vals[j] = moved[m->vals[j]];
  }
  free(moved);
  s->n = out;
  s->dead = 0;
  return true;
}

/* ---- storages ---------------------------------------------------------------------- */

static void share_ref(gs__flight_state *s, uint64_t source, int delta) {
  uint32_t refs = idmap_get(&s->share_refs, source); /* count, as value + 1 */
  if (refs == 0 && delta < 0)
    return;
  uint32_t now = (uint32_t)((int)refs + delta);
  if (now == 0) {
    idmap_del(&s->share_refs, source);
    /* A freed storage kept only for its sharers goes with the last of them. */
    if (idmap_get(&s->maps[M_STORAGE_FREE], source)) {
      kill(s, M_STORAGE, source);
      kill(s, M_STORAGE_FREE, source);
    }
  } else if (!idmap_put(&s->share_refs, source, now - 1)) {
    s->incomplete = true;
  }
}

/* The storage this live storage shares bytes from, 0 if its bytes are its own. */
static uint64_t shared_from(const gs__flight_state *s, uint64_t storage) {
  uint32_t at = idmap_get(&s->maps[M_STORAGE], storage);
  const record *r = at ? &s->recs[at - 1] : NULL;
  return r && r->e.kind == GS_TRACE_STORAGE_SHARE ? r->e.source : 0;
}

/* Storage source is leaving the bytes its live shares read (it materialised a buffer of its
 * own): the bytes stay theirs. The oldest sharer is re-created as their allocation, in its
 * share's place, and the others as shares of it. */
static void sharers_keep_the_bytes(gs__flight_state *s, uint64_t source) {
  uint32_t refs = idmap_get(&s->share_refs, source);
  if (!refs)
    return;
  idmap_del(&s->share_refs, source);
  uint64_t heir = 0;
  uint32_t heirs_sharers = 0;
  for (size_t i = 0; i < s->n; i++) {
    record *r = &s->recs[i];
    if (!r->live || r->e.kind != GS_TRACE_STORAGE_SHARE || r->e.source != source ||
        idmap_get(&s->maps[M_STORAGE], r->e.storage) != i + 1)
      continue;
    if (!heir) {
      heir = r->e.storage;
      r->e.kind = GS_TRACE_STORAGE_ALLOC;
      r->e.source = 0;
    } else {
      r->e.source = heir;
      heirs_sharers++;
    }
  }
  if (heirs_sharers && !idmap_put(&s->share_refs, heir, heirs_sharers - 1))
    s->incomplete = true;
}

static bool on_storage(gs__flight_state *s, const gs_trace_event *e) {
  uint64_t from = shared_from(s, e->storage);
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_SHARE: {
    if (from)
      share_ref(s, from, -1);
    kill(s, M_STORAGE_FREE, e->storage);
    if (!keep(s, M_STORAGE, e->storage, e))
      return false;
    if (e->kind == GS_TRACE_STORAGE_SHARE && e->source)
      share_ref(s, e->source, +1);
    return true;
  }
  case GS_TRACE_STORAGE_MATERIALISE: {
    /* Its bytes are its own now: re-created as an allocation of them. */
    if (from)
      share_ref(s, from, -1);
    sharers_keep_the_bytes(s, e->storage);
    gs_trace_event alloc = {.kind = GS_TRACE_STORAGE_ALLOC, .thread = e->thread, .seq = e->seq,
                            .time_ns = e->time_ns, .storage = e->storage, .nbytes = e->nbytes,
                            .memory = e->memory};
    uint32_t at = idmap_get(&s->maps[M_STORAGE], e->storage);
    if (at) {
      /* In its old record's place: the tensors re-created over it come after that record, and
       * one made by the storage's own allocation counts its bytes only if it finds them. */
      record *r = &s->recs[at - 1];
      alloc.thread = r->e.thread, alloc.seq = r->e.seq, alloc.time_ns = r->e.time_ns;
      r->e = alloc; /* a storage record owns no arrays */
      return true;
    }
    return keep(s, M_STORAGE, e->storage, &alloc);
  }
  case GS_TRACE_STORAGE_FREE:
    if (from)
      share_ref(s, from, -1);
    if (idmap_get(&s->share_refs, e->storage)) { /* live shares still count its bytes */
      return keep(s, M_STORAGE_FREE, e->storage, e);
    }
    kill(s, M_STORAGE, e->storage);
    return true;
  default: return true;
  }
}

/* ---- scopes ------------------------------------------------------------------------- */

/* A scope ended, maybe in the middle of its thread's stack: the open scopes inside it now
 * enclose in its outer scope (as the engine re-links them), and are re-created so. */
static void scope_ended(gs__flight_state *s, uint64_t scope) {
  uint32_t at = idmap_get(&s->maps[M_SCOPE], scope);
  uint64_t outer = at ? s->recs[at - 1].e.outer : 0;
  const idmap *open = &s->maps[M_SCOPE];
  for (size_t j = 0; at && j < open->cap; j++) {
    if (!open->keys[j])
      continue;
    record *r = &s->recs[open->vals[j]];
    if (r->live && r->e.outer == scope)
      r->e.outer = outer;
  }
  kill(s, M_SCOPE, scope);
}

/* ---- objects ----------------------------------------------------------------------- */

static void on_object_gone(gs__flight_state *s, uint64_t id) {
  /* Names and owners are kept only for known objects: most ids (a new tensor's) have none. */
  if (!idmap_get(&s->maps[M_OBJECT], id) && !idmap_get(&s->maps[M_PARAM], id))
    return;
  kill(s, M_OBJECT, id);
  kill(s, M_OWNER, id);
  kill(s, M_NAME, id);
  kill(s, M_PARAM, id);
  kill(s, M_GRAD, id);
  kill(s, M_DATA, id);
}

/* Re-keys record `k` of id under target, rewriting the id field the event carries. */
static bool rekey(gs__flight_state *s, int k, uint64_t id, uint64_t target) {
  uint32_t at = idmap_get(&s->maps[k], id);
  if (!at)
    return true;
  idmap_del(&s->maps[k], id);
  kill(s, k, target);
  gs_trace_event *e = &s->recs[at - 1].e;
  if (e->kind == GS_TRACE_OWNER_CHANGE || e->kind == GS_TRACE_COMPOSITE_CREATE)
    e->object = target;
  else
    e->tensor = target;
  return idmap_put(&s->maps[k], target, at - 1);
}

/* A tensor moved into a parameter is re-created under its new handle, as it now is. */
static bool on_move(gs__flight_state *s, const gs_trace_event *e) {
  if (!e->target || e->target == e->tensor || !idmap_get(&s->maps[M_OBJECT], e->tensor))
    return true;
  return rekey(s, M_OBJECT, e->tensor, e->target) && rekey(s, M_OWNER, e->tensor, e->target) &&
         rekey(s, M_NAME, e->tensor, e->target) && rekey(s, M_PARAM, e->tensor, e->target) &&
         rekey(s, M_GRAD, e->tensor, e->target) && rekey(s, M_DATA, e->tensor, e->target);
}

/* ---- applying ---------------------------------------------------------------------- */

static bool apply(gs__flight_state *s, const gs_trace_event *e) {
  /* What the snapshot re-creates is the kinds list's: tables and what changes what is alive
   * (trace-kinds.h). Writes, values, marks, errors and backward passes leave nothing to keep. */
  if (!(gs_trace_kind_flags(e->kind) & (GS_TRACE_KIND_TABLE | GS_TRACE_KIND_STATE)))
    return true;
  switch (e->kind) {
  case GS_TRACE_STRING: return keep(s, M_STRING, (uint64_t)e->name + 1, e);
  case GS_TRACE_SITE: return keep(s, M_SITE, (uint64_t)e->site + 1, e);
  case GS_TRACE_BINARY: return add_record(s, e) >= 0; /* once per log, never replaced */
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_SHARE:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE: return on_storage(s, e);
  case GS_TRACE_TENSOR_CREATE: {
    on_object_gone(s, e->tensor); /* add_record drops its alloc: the storage is a record */
    return keep(s, M_OBJECT, e->tensor, e);
  }
  case GS_TRACE_COMPOSITE_CREATE:
    on_object_gone(s, e->object);
    return keep(s, M_OBJECT, e->object, e);
  case GS_TRACE_TENSOR_DISPOSE: on_object_gone(s, e->tensor); return true;
  case GS_TRACE_TENSOR_MOVE: return on_move(s, e);
  case GS_TRACE_TENSOR_NAME:
    return !idmap_get(&s->maps[M_OBJECT], e->tensor) || keep(s, M_NAME, e->tensor, e);
  case GS_TRACE_OWNER_CHANGE:
    return !idmap_get(&s->maps[M_OBJECT], e->object) || keep(s, M_OWNER, e->object, e);
  case GS_TRACE_REQUIRES_GRAD:
    return !idmap_get(&s->maps[M_OBJECT], e->tensor) || keep(s, M_GRAD, e->tensor, e);
  case GS_TRACE_TENSOR_SET_DATA: /* its last data replacement, after the storage it names */
    return !idmap_get(&s->maps[M_OBJECT], e->tensor) || keep(s, M_DATA, e->tensor, e);
  case GS_TRACE_MODULE_PARAMETER: return keep(s, M_PARAM, e->tensor, e);
  case GS_TRACE_SCOPE_BEGIN: return keep(s, M_SCOPE, e->scope, e);
  case GS_TRACE_SCOPE_END: scope_ended(s, e->scope); return true;
  case GS_TRACE_NODE_CREATE: kill(s, M_NODE_FREED, e->node); return keep(s, M_NODE, e->node, e);
  case GS_TRACE_NODE_FREE_SAVED:
    return !idmap_get(&s->maps[M_NODE], e->node) || keep(s, M_NODE_FREED, e->node, e);
  case GS_TRACE_NODE_RELEASE:
    kill(s, M_NODE, e->node);
    kill(s, M_NODE_FREED, e->node);
    return true;
  case GS_TRACE_MODULE_CREATE: return keep(s, M_MODULE, e->module, e);
  case GS_TRACE_MODULE_CHILD:
  case GS_TRACE_OPTIMIZER_CREATE: return add_record(s, e) >= 0; /* no end is recorded */
  case GS_TRACE_DIST_INIT: return add_record(s, e) >= 0; /* which rank of which run: once */
  default: return true;
  }
}

bool gs__flight_state_apply(gs__flight_state *s, const gs_trace_event *e) {
  if (!gs_trace_kind_is_table(e->kind)) {
    s->last_seq = e->seq;
    s->last_time = e->time_ns;
  }
  if (!apply(s, e) || !compact(s)) {
    s->incomplete = true;
    return false;
  }
  return true;
}

/* ---- writing ----------------------------------------------------------------------- */

/* One chunk being filled; static: a fatal signal handler writes with it (flight-state.h). */
static uint8_t chunk[GS__TRACE_CHUNK_HEADER_SIZE + GS__TW_BUFFER_BYTES + 8];
static gs__trace_ids chunk_ids; /* its compact-id tables (format.h), reset with each chunk */
typedef struct chunk_writer {
  size_t used;     /* payload bytes */
  uint32_t thread; /* of the events in it */
  uint64_t seq, time;
  gs__flight_out_fn out;
  void *ctx;
  bool ok;
} chunk_writer;

static void chunk_flush(chunk_writer *w) {
  if (!w->used)
    return;
  size_t pad = (8 - w->used % 8) % 8;
  memset(chunk + GS__TRACE_CHUNK_HEADER_SIZE + w->used, 0, pad);
  gs__trace_chunk_header(chunk, w->thread, w->seq, w->time, chunk + GS__TRACE_CHUNK_HEADER_SIZE,
                      w->used);
  if (w->ok && !w->out(chunk, GS__TRACE_CHUNK_HEADER_SIZE + w->used + pad, w->ctx))
    w->ok = false;
  w->used = 0;
}

/* Appends e to the chunk (a new one when the thread changes or it is full). Every event has
 * the snapshot's seq and time: the chunk's base, so its deltas are 0. */
static void chunk_put(chunk_writer *w, const gs_trace_event *e) {
  uint32_t thread = e->thread ? e->thread : 1;
  size_t max = gs__trace_max_event_size(e);
  if (max > GS__TW_BUFFER_BYTES)
    return; /* bounded by the format's limits: cannot happen for a decoded event */
  if (w->used && (thread != w->thread || w->used + max > GS__TW_BUFFER_BYTES))
    chunk_flush(w);
  w->thread = thread;
  if (w->used == 0)
    gs__trace_ids_reset(&chunk_ids);
  uint8_t *start = chunk + GS__TRACE_CHUNK_HEADER_SIZE + w->used;
  uint8_t *body = start + 1 + GS__TW_LENGTH_BYTES;
  uint8_t *end = gs__trace_encode_body_as(body, e, 0, 0, GS__TRACE_SCHEMA_MINOR, &chunk_ids);
  size_t len = (size_t)(end - body);
  start[0] = (uint8_t)e->kind;
  start[1] = (uint8_t)(0x80 | (len & 0x7f)); /* padded to 3 bytes, as the writer does */
  start[2] = (uint8_t)(0x80 | ((len >> 7) & 0x7f));
  start[3] = (uint8_t)((len >> 14) & 0x7f);
  w->used += (size_t)(end - start);
}

bool gs__flight_state_write(const gs__flight_state *s, uint32_t reason, const char *reason_text,
                            gs__flight_out_fn out, void *ctx) {
  chunk_writer w = {.seq = s->last_seq, .time = s->last_time, .out = out, .ctx = ctx, .ok = true};
  uint32_t first_thread = 1;
  for (size_t i = 0; i < s->n; i++)
    if (s->recs[i].live && s->recs[i].e.thread) {
      first_thread = s->recs[i].e.thread;
      break;
    }
  /* Tables first: any event after may name them, in any thread's stream. */
  for (size_t i = 0; i < s->n; i++)
    if (s->recs[i].live && gs_trace_kind_is_table(s->recs[i].e.kind))
      chunk_put(&w, &s->recs[i].e);
  gs_trace_event marker = {.kind = GS_TRACE_STRING, .thread = first_thread, .name = reason,
                           .text = reason_text, .text_len = (uint32_t)strlen(reason_text)};
  chunk_put(&w, &marker);
  uint64_t objects = gs__flight_state_objects(s);
  marker = (gs_trace_event){.kind = GS_TRACE_SNAPSHOT_BEGIN, .thread = first_thread,
                            .name = reason, .count = objects};
  chunk_put(&w, &marker);
  for (size_t i = 0; i < s->n; i++)
    if (s->recs[i].live && !gs_trace_kind_is_table(s->recs[i].e.kind))
      chunk_put(&w, &s->recs[i].e);
  marker = (gs_trace_event){.kind = GS_TRACE_SNAPSHOT_END, .thread = first_thread,
                            .count = objects};
  chunk_put(&w, &marker);
  chunk_flush(&w);
  return w.ok && !s->incomplete;
}
