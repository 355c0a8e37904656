/* composite.c: objects made of several tensors (a packed sequence, a data batch) that
 * take part in scopes as one unit.
 *
 * A composite's parts are held by the composite, not by a scope: only the composite is on the
 * scope's list and in the statistics. Moving, detaching or disposing it does that to all its
 * parts; when it is disposed, its parts' handles go stale naming the same disposer.
 */
#include <string.h>

#include "scope-impl.h"
#include "trace-writer.h"

#define MAX_COMPOSITES 65536u

/* A composite's record in the composite pool. Its contents are guarded by the ownership lock;
 * the pool only finds it. */
typedef struct composite {
  gs__pool_slot pool;
  int kind;
  gs__owned own;
  int n_parts;
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
} composite;

/* Ids carry GS__COMPOSITE_ID_BIT (the pool's tag), so they never equal a tensor's. */
static gs__pool composites =
    GS__POOL_INIT("composite", sizeof(composite), 6, MAX_COMPOSITES, GS__COMPOSITE_ID_BIT);
GS__POOL_GUARD_FORK(composites)

/* How each kind of composite is named in its stale-handle errors. */
static const gs__handle_kind *handle_kind(int kind) {
  static const gs__handle_kind packed = {.pool = &composites, .noun = "packed sequence",
                                         .nouns = "packed sequences", .it = "it",
                                         .ended = "disposed"};
  static const gs__handle_kind batch = {.pool = &composites, .noun = "batch",
                                        .nouns = "batches", .it = "it", .ended = "disposed"};
  static const gs__handle_kind object = {.pool = &composites, .noun = "object",
                                         .nouns = "objects", .it = "it", .ended = "disposed"};
  return kind == GS_OBJECT_PACKED_SEQUENCE ? &packed : kind == GS_OBJECT_BATCH ? &batch : &object;
}

uint64_t gs__composite_new(int kind, const gs_tensor *parts, int n_parts, const char *fn) {
  uint64_t id;
  composite *c = (composite *)gs__pool_take(&composites, &id);
  if (!c) {
    for (int i = 0; i < n_parts; i++)
      if (parts[i].id)
        gs__dispose_as(parts[i], "a failed composite creation");
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "too many %s are alive", handle_kind(kind)->nouns);
    return 0;
  }
  gs__own_lock();
  c->kind = kind;
  c->n_parts = n_parts;
  uint64_t bytes = 0;
  for (int i = 0; i < n_parts; i++) {
    c->parts[i] = parts[i];
    if (!parts[i].id)
      continue;
    gs__tensor *t = gs__lookup(parts[i], fn);
    gs__own_set_holder_locked(&gs__slot_of(t)->own, GS__HELD_BY_COMPOSITE, id);
    bytes += t->storage->nbytes;
  }
  gs__own_new_locked(&c->own, kind, id, bytes);
  gs__pool_publish(&composites, &c->pool);
  gs__own_unlock();
  if (gs__trace_on())
    gs__trace_composite_create(id, kind, parts, n_parts);
  else
    gs__trace_skip(1);
  return id;
}

gs__owned *gs__composite_lookup(uint64_t id, int kind, const char *fn, gs_tensor *parts_out) {
  gs__own_lock();
  composite *c = gs__pool_get(&composites, id);
  int found = c ? c->kind : kind;
  if (c && found == kind && parts_out)
    memcpy(parts_out, c->parts, sizeof c->parts);
  gs__own_unlock();
  if (c && found == kind)
    return &c->own;
  if (c)
    gs__error(GS_ERR_STALE_HANDLE, fn, "%s handle %#llx names a live %s",
              handle_kind(kind)->noun, (unsigned long long)id, handle_kind(found)->noun);
  else
    gs__report_stale(handle_kind(kind), id, fn);
  return NULL;
}

bool gs__composite_is_alive(uint64_t id) { return gs__pool_get(&composites, id) != NULL; }

gs_scope gs__composite_owner_scope(uint64_t id, int kind, const char *fn) {
  gs__owned *o = gs__composite_lookup(id, kind, fn, NULL);
  return o ? gs__owned_scope(o) : GS_NO_SCOPE;
}

bool gs__composite_move_to_outer(uint64_t id, int kind, const char *fn) {
  gs__owned *o = gs__composite_lookup(id, kind, fn, NULL);
  if (o)
    gs__owned_move_to_outer(o);
  return o != NULL;
}

bool gs__composite_detach_from_scopes(uint64_t id, int kind, const char *fn) {
  gs__owned *o = gs__composite_lookup(id, kind, fn, NULL);
  if (o)
    gs__owned_detach(o);
  return o != NULL;
}

bool gs__composite_attach(gs_scope sh, uint64_t id, int kind, const char *what, const char *fn) {
  gs__scope_rec *s = gs__scope_lookup(sh, fn);
  gs__owned *o = s ? gs__composite_lookup(id, kind, fn, NULL) : NULL;
  return o && gs__owned_attach(o, s, what, fn);
}

void gs__composite_dispose(uint64_t id, const char *reason) {
  gs__own_lock();
  composite *c = gs__pool_get(&composites, id);
  if (!c) {
    gs__own_unlock();
    return;
  }
  gs__own_dispose_locked(&c->own);
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  int n = c->n_parts;
  memcpy(parts, c->parts, sizeof parts);
  uint64_t event = gs__next_event();
  gs__pool_release(&composites, id, reason, event, GS__POOL_DISPOSED);
  gs__own_unlock();
  /* The log says the composite itself is gone (before its parts), or a reader would keep it
   * alive forever. */
  if (gs__trace_on())
    gs__trace_tensor_dispose(event, id, reason, 0);
  for (int i = 0; i < n; i++)
    if (parts[i].id && gs_is_alive(parts[i]))
      gs__dispose_as(parts[i], reason);
}

/* ---- a late log's snapshot (trace/snapshot.c) ----------------------------------------- */

/* Every live composite as its composite_create, then the owner it has now (a reader gives a
 * new composite to its thread's innermost scope, which the snapshot's thread may not have). */
static uint64_t snapshot_composites(void) {
  uint32_t count = atomic_load_explicit(&composites.count, memory_order_acquire);
  uint64_t written = 0;
  gs__own_lock();
  for (uint32_t i = 0; i < count; i++) {
    composite *c = (composite *)gs__pool_slot_of(&composites, i);
    if (!atomic_load_explicit(&c->pool.live, memory_order_acquire))
      continue;
    uint64_t id = gs__pool_id(&composites, &c->pool, i);
    uint64_t parts[GS__COMPOSITE_MAX_PARTS];
    for (int p = 0; p < c->n_parts; p++)
      parts[p] = c->parts[p].id;
    gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_COMPOSITE_CREATE, .object = id,
                                               .object_kind = (uint32_t)c->kind,
                                               .n_parts = (uint32_t)c->n_parts, .parts = parts});
    gs__trace_snapshot_event(&(gs_trace_event){
        .kind = GS_TRACE_OWNER_CHANGE, .object = id, .previous_holder = GS_TRACE_HELD_BY_CALLER,
        .holder = (uint32_t)c->own.holder, .owner = gs__owner_id(&c->own)});
    written++;
  }
  gs__own_unlock();
  return written;
}

__attribute__((constructor)) static void register_composite_snapshot(void) {
  gs__trace_add_snapshot_hook(40, snapshot_composites);
}
