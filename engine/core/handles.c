/* handles.c: the tensor pool behind gs_tensor handles: registering a tensor, disposing it,
 * moving it to a new handle, and the stale-handle errors.
 *
 * The pool (base/pool.h) gives lock-free lookups, generations that never wrap, and each slot's
 * memory of how its last ids ended, so a stale handle names what disposed its tensor and when even
 * after the slot has been reused many times. What owns a tensor and what its graph holds are
 * the business of the layers above, told through the lifecycle hooks (lifecycle.h). The
 * stale-handle message itself is stale.c's, shared with every other kind of handle.
 */
#include "core-impl.h"
#include "trace-writer.h"

gs__pool gs__tensors =
    GS__POOL_INIT("tensor", sizeof(gs__slot), GS__TENSOR_PAGE_SHIFT,
                  (1u << GS__TENSOR_PAGE_SHIFT) * GS__POOL_MAX_PAGES, 0);
GS__POOL_GUARD_FORK(gs__tensors)

uint64_t gs_live_tensor_count(void) { return gs__pool_live(&gs__tensors); }

uint64_t gs_live_tensors(gs_tensor *out, uint64_t max) {
  uint64_t n = 0;
  gs__slot *s;
  for (uint32_t index = 0; (s = (gs__slot *)gs__pool_slot_at(&gs__tensors, index)); index++) {
    if (!atomic_load_explicit(&s->pool.live, memory_order_acquire))
      continue;
    if (n < max)
      out[n] = (gs_tensor){s->tensor.id};
    n++;
  }
  return n;
}

static const gs__handle_kind tensor_kind = {
    .pool = &gs__tensors, .noun = "tensor", .nouns = "tensors", .it = "it", .ended = "disposed"};

gs__tensor *gs__lookup_failed(gs_tensor h, const char *fn) {
  gs__report_stale(&tensor_kind, h.id, fn);
  return NULL;
}

bool gs__remember_sites;

bool gs_is_alive(gs_tensor h) { return gs__tensor_slot(h.id) != NULL; }

/* Its fresh storage's allocation goes in the tensor's creation event (the reader derives it)
 * and takes no number of its own; a storage made earlier for something else is logged now if
 * it was not yet (with the log off too: the numbers stay the same). Returns the bytes folded.
 * (A clone's copy-on-write share goes in its creation event too: trace_create takes it.) */
static uint64_t fold_alloc(const gs__tensor *t) {
  gs__storage *storage = t->storage;
  if (storage->alloc_unlogged && t->origin == GS__ORIGIN_NEW) {
    storage->alloc_unlogged = false;
    return storage->nbytes;
  }
  gs__storage_log_alloc(storage);
  return 0;
}

/* Logs a tensor's creation (its geometry, the op that made it and its owner). */
static void trace_create(const gs__slot *s, uint64_t alloc) {
  const gs__tensor *t = &s->tensor;
  /* A clone's share, held back for this event (gs__storage_share_cow): it takes no number. */
  uint64_t shared = 0;
  if (t->origin == GS__ORIGIN_CLONE)
    gs__storage_take_share(t->storage, &shared);
  gs__trace_tensor_create(&(gs__trace_tensor){.seq = t->created_event,
                                              .tensor = t->id,
                                              .storage = t->storage->id,
                                              .source = t->source,
                                              .owner = gs__owner_id(&s->own),
                                              .alloc_nbytes = alloc,
                                              .shared = shared,
                                              .shared_nbytes = shared ? t->storage->nbytes : 0,
                                              .offset = t->offset,
                                              .shape = t->shape,
                                              .strides = t->strides,
                                              .op = t->created_by,
                                              .dtype = (uint32_t)t->dtype,
                                              .origin = (uint32_t)t->origin,
                                              .holder = (uint32_t)s->own.holder,
                                              .ndim = t->ndim,
                                              .requires_grad = t->ag.requires_grad});
  if (gs__trace_values_limit() > 0)
    gs__trace_defer_values(t->id); /* its op computes the values next (trace-events.c) */
}

gs_tensor gs__register(const gs__tensor *t, const char *fn) {
  uint64_t id;
  gs__slot *s = (gs__slot *)gs__pool_take(&gs__tensors, &id);
  if (!s) {
    gs__storage_log_share(t->storage); /* a clone's, never to be in its creation */
    gs__storage_release(t->storage);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "the tensor table is full (%u live tensors)",
              gs__tensors.max_items);
    return GS_NO_TENSOR;
  }
  gs_tensor h = {id};
  s->tensor = *t;
  s->tensor.id = id;
  s->tensor.ag = (gs__autograd_meta){0}; /* graph links are set by the op, never copied */
  s->tensor.is_parameter = false;
  s->tensor.binding = NULL;
  s->tensor.counted_view = false; /* a copy of a view is not counted until it says so */
  s->tensor.live_views = 0;
  s->tensor.created_by = fn;
  s->tensor.created_event = gs__next_event();
  s->tensor.created_at = 0;
  s->tensor.created_at_text = NULL;
  if (__builtin_expect(gs__remember_sites, 0)) {
    /* An interpreter's program names its own line: the walk would find the interpreter. */
    s->tensor.created_at_text = gs__trace_site_text_current();
    if (!s->tensor.created_at_text)
      s->tensor.created_at = gs__trace_caller();
  }
  /* Only a tensor with fresh bytes charges them to its scope: views share someone's. */
  uint64_t bytes = t->origin == GS__ORIGIN_NEW ? t->storage->nbytes : 0;
  GS__LIFECYCLE_EACH(on_register, s, bytes); /* engine/scope fills s->own */
  uint64_t alloc = fold_alloc(&s->tensor);
  if (gs__trace_on())
    trace_create(s, alloc);
  gs__pool_publish(&gs__tensors, &s->pool);
  return h;
}

/* Ends the life of the live tensor in slot s (id h). */
static void dispose_slot(gs__slot *s, gs_tensor h, const char *reason) {
  gs__tensor *t = &s->tensor;
  /* One call: the nodes it releases (and their saved tensors) share its time and site. */
  gs__trace_call call = gs__trace_call_enter();
  GS__LIFECYCLE_EACH(on_dispose, s);
  gs__storage *storage = t->storage;
  t->storage = NULL;
  uint64_t event = gs__next_event();
  gs__pool_release_slot(&gs__tensors, &s->pool, h.id, reason, event, GS__POOL_DISPOSED);
  /* The storage freed by this disposal goes in its event (the reader derives the free) and
   * takes no number of its own, log on or off. The event is written first: freeing may
   * release what the storage's kept view record holds. */
  uint64_t storage_id = storage->id;
  bool last = atomic_load_explicit(&storage->refcount, memory_order_acquire) == 1;
  if (gs__trace_on())
    gs__trace_tensor_dispose(event, h.id, reason, last ? storage_id : 0);
  if (last)
    gs__storage_release_for_dispose(storage);
  else
    gs__storage_release(storage);
  gs__trace_call_leave(call);
}

void gs__dispose_as(gs_tensor h, const char *reason) {
  gs__tensor *t = gs__lookup(h, "dispose");
  if (t)
    dispose_slot(gs__slot_of(t), h, reason);
}

/* A handle whose tensor moved to another handle (a parameter): disposing it does nothing, as
 * in TorchSharp, where the moved-from tensor no longer holds anything. */
static bool was_moved(gs_tensor h) {
  gs__pool_id_report report = gs__pool_report_of(&gs__tensors, h.id);
  return report.state == GS__POOL_ENDED && report.ending == GS__POOL_MOVED;
}

bool gs_remembers_sites(void) { return gs__remember_sites; }

void gs_dispose(gs_tensor h) {
  if (h.id == 0)
    return;
  gs__slot *s = gs__tensor_slot(h.id);
  if (!s) {
    if (!was_moved(h))
      gs__lookup_failed(h, "dispose");
    return;
  }
  for (int i = 0; i < gs__lifecycle.n_refuses_dispose; i++) {
    const char *refusal = gs__lifecycle.refuses_dispose[i](s);
    if (refusal) {
      gs__error(GS_ERR_STATE, "dispose", "tensor #%u.%u %s", (unsigned)(h.id & 0xffffffffu),
                (unsigned)(h.id >> 32), refusal);
      return;
    }
  }
  /* The engine disposes its own temporaries with gs_dispose too: the log must not say the
   * program did. */
  const char *reason = "gs_dispose";
  for (int i = 0; i < gs__lifecycle.n_dispose_reason; i++) {
    const char *engine = gs__lifecycle.dispose_reason[i](s);
    if (engine)
      reason = engine;
  }
  dispose_slot(s, h, reason);
}

gs_tensor gs__move_handle(gs_tensor h, const char *reason) {
  gs__tensor *t = gs__lookup(h, "move_handle");
  if (!t)
    return GS_NO_TENSOR;
  uint64_t id;
  gs__slot *to = (gs__slot *)gs__pool_take(&gs__tensors, &id);
  if (!to) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "move_handle", "the tensor table is full");
    return GS_NO_TENSOR;
  }
  gs__slot *from = gs__slot_of(t);
  gs_tensor moved = {id};
  to->tensor = from->tensor;
  to->tensor.id = id;
  to->tensor.binding = NULL; /* the binding's object holds the old handle */
  /* The new handle takes the old one's place with its owner and in its graph (the owner record
   * moves under the owners' lock, in engine/scope). */
  GS__LIFECYCLE_EACH(on_move, to, from);
  from->tensor.ag = (gs__autograd_meta){0};
  from->tensor.storage = NULL;
  gs__pool_publish(&gs__tensors, &to->pool);
  gs__pool_release(&gs__tensors, h.id, reason, gs__next_event(), GS__POOL_MOVED);
  if (gs__trace_on())
    gs__trace_tensor_move(h.id, moved.id);
  else
    gs__trace_skip(1);
  return moved;
}

void gs__rename_disposer(gs_tensor h, const char *reason) {
  gs__pool_rename(&gs__tensors, h.id, reason);
}
