/* ownership.c: who owns each object, and TorchSharp's statistics of it.
 *
 * The transitions (new, dispose, move, detach, attach) are the whole model; the public tensor
 * functions below are each a lookup plus one transition. Counting rules, as TorchSharp 0.105:
 * a new object counts as created in or outside a scope; a disposal counts "in scope" by its
 * owner at disposal time; leaving a scope for no scope counts a detach; attaching counts when
 * the owner actually changes; moving between two scopes counts nothing.
 */
#include <string.h>

#include "scope-impl.h"
#include "trace-writer.h"

static gs__spinlock lock = GS__SPINLOCK_INIT;
GS__FORK_GUARD_SPINLOCK(GS__FORK_RANK_OWNERSHIP, lock)
static GS__THREAD_LOCAL gs__thread_scopes thread_scopes;

gs__thread_scopes *gs__thread_scopes_get(void) { return &thread_scopes; }
void gs__own_lock(void) { gs__spin_lock(&lock); }
void gs__own_unlock(void) { gs__spin_unlock(&lock); }

void gs__scopes_forget_inherited(void) {
  /* The parent's records stay as they are (nothing here ends them): this thread only stops
   * stacking on them. */
  thread_scopes.current = NULL;
  thread_scopes.suspended = 0;
  thread_scopes.suspended_for = NULL;
}

void gs__ownership_suspend(void) { thread_scopes.suspended++; }
void gs__ownership_resume(void) {
  if (--thread_scopes.suspended == 0)
    thread_scopes.suspended_for = NULL;
}
void gs__ownership_suspend_for(const char *reason) {
  if (thread_scopes.suspended++ == 0)
    thread_scopes.suspended_for = reason;
}

static gs_scope_stats *stats_of(int kind) { return &thread_scopes.stats[kind]; }

static void trace_owner_change(const gs__owned *o, int previous_holder, uint64_t previous_owner) {
  gs__trace_owner_change(o->id, previous_holder, previous_owner, (int)o->holder,
                         gs__owner_id(o));
}

static void unlink_from_scope(gs__owned *o) {
  gs__scope_rec *s = o->scope;
  o->prev->next = o->next;
  o->next->prev = o->prev;
  o->prev = o->next = NULL;
  s->info.alive--;
  s->info.bytes -= o->bytes;
  o->scope = NULL;
}

static void link_into_scope(gs__owned *o, gs__scope_rec *s) {
  o->scope = s;
  o->holder = GS__HELD_BY_SCOPE;
  o->holder_id = gs__scope_handle(s).id;
  o->prev = s->head.prev;
  o->next = &s->head;
  s->head.prev->next = o;
  s->head.prev = o;
  o->last_scope = s->interned_name;
  s->info.alive++;
  s->info.bytes += o->bytes;
  if (s->info.bytes > s->info.peak_bytes)
    s->info.peak_bytes = s->info.bytes;
}

void gs__own_new_locked(gs__owned *o, int kind, uint64_t id, uint64_t bytes) {
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->id = id;
  o->bytes = bytes;
  if (thread_scopes.suspended > 0) {
    o->holder = GS__HELD_BY_ENGINE;
    return;
  }
  gs__scope_rec *s = thread_scopes.current;
  if (s) {
    link_into_scope(o, s);
    s->info.created++;
    stats_of(kind)->created_in_scope++;
  } else {
    o->holder = GS__HELD_BY_CALLER;
    stats_of(kind)->created_outside_scope++;
  }
}

void gs__own_dispose_locked(gs__owned *o) {
  switch (o->holder) {
  case GS__HELD_BY_SCOPE:
    o->scope->info.disposed++;
    unlink_from_scope(o);
    stats_of(o->kind)->disposed_in_scope++;
    break;
  case GS__HELD_BY_CALLER:
  case GS__HELD_BY_MODULE: /* modules own their parameters outside every scope */
  case GS__HELD_BY_OPTIMIZER: /* and optimizers their state, alike */
    stats_of(o->kind)->disposed_outside_scope++;
    break;
  default: /* parts, gradients and the engine's temporaries count in no statistic */
    break;
  }
  o->holder = GS__HELD_BY_ENGINE;
}

void gs__own_move_locked(gs__owned *o, gs__scope_rec *scope, bool counts_as_attach) {
  gs__scope_rec *from = o->holder == GS__HELD_BY_SCOPE ? o->scope : NULL;
  if (from == scope)
    return; /* already there: nothing happens, nothing counts */
  /* Who held it before matters only to the event log. */
  bool tracing = gs__trace_on();
  int previous_holder = (int)o->holder;
  uint64_t previous_owner = gs__owner_id(o);
  if (from)
    unlink_from_scope(o);
  if (scope) {
    link_into_scope(o, scope);
    if (counts_as_attach)
      stats_of(o->kind)->attached_to_scope++;
  } else {
    o->holder = GS__HELD_BY_CALLER;
    o->holder_id = 0;
    if (from)
      stats_of(o->kind)->detached_from_scope++;
  }
  if (tracing)
    trace_owner_change(o, previous_holder, previous_owner);
  else
    gs__trace_skip(1);
}

/* Hands o to holder; whether that changed its holder or owner, and what they were. */
static bool set_holder(gs__owned *o, gs__holder holder, uint64_t holder_id, int *previous_holder,
                       uint64_t *previous_owner) {
  *previous_holder = (int)o->holder;
  *previous_owner = gs__owner_id(o);
  if (o->holder == GS__HELD_BY_SCOPE) {
    unlink_from_scope(o);
    /* A module or an optimizer takes it out of the scope: a detach. */
    if (holder == GS__HELD_BY_MODULE || holder == GS__HELD_BY_OPTIMIZER)
      stats_of(o->kind)->detached_from_scope++;
  }
  o->holder = holder;
  o->holder_id = holder_id;
  return *previous_holder != (int)holder || *previous_owner != holder_id;
}

void gs__own_set_holder_locked(gs__owned *o, gs__holder holder, uint64_t holder_id) {
  bool tracing = gs__trace_on();
  int previous_holder;
  uint64_t previous_owner;
  if (set_holder(o, holder, holder_id, &previous_holder, &previous_owner)) {
    if (tracing)
      trace_owner_change(o, previous_holder, previous_owner);
    else
      gs__trace_skip(1);
  }
}

bool gs__own_set_holder_locked_folded(gs__owned *o, gs__holder holder, uint64_t holder_id,
                                      int *previous_holder, uint64_t *previous_owner) {
  if (!set_holder(o, holder, holder_id, previous_holder, previous_owner))
    return false;
  gs__trace_skip(1); /* the change's number, taken with the caller's next event's */
  return true;
}

const char *gs__own_refuses_dispose(const gs__owned *o) {
  switch (o->holder) {
  case GS__HELD_BY_MODULE: return "is a parameter owned by a module; it is disposed with the module";
  case GS__HELD_BY_COMPOSITE:
    return "belongs to a composite (a packed sequence or a batch); dispose the composite";
  case GS__HELD_BY_TENSOR: return "is the gradient of another tensor; clear it with gs_zero_grad";
  case GS__HELD_BY_OPTIMIZER: return "is an optimizer's state; it is disposed with the optimizer";
  default: return NULL;
  }
}

void gs__own_adopt(gs_tensor h) {
  if (!h.id || !gs_is_alive(h))
    return;
  gs__tensor *t = gs__lookup(h, "adopt");
  gs__owned *o = &gs__slot_of(t)->own;
  gs__own_lock();
  int previous_holder = (int)o->holder;
  uint64_t previous_owner = gs__owner_id(o);
  gs__own_new_locked(o, GS_OBJECT_TENSOR, h.id,
                     t->origin == GS__ORIGIN_NEW ? t->storage->nbytes : 0);
  /* Its creation was logged as the engine's: the log learns who owns it now. */
  if (gs__trace_on())
    trace_owner_change(o, previous_holder, previous_owner);
  else
    gs__trace_skip(1);
  gs__own_unlock();
}

void gs__own_new(gs__owned *o, int kind, uint64_t id, uint64_t bytes) {
  /* With no scope open the record only touches this thread's counters: no lock needed, which
   * keeps unscoped small ops cheap. */
  if (!thread_scopes.current || thread_scopes.suspended > 0) {
    gs__own_new_locked(o, kind, id, bytes);
    return;
  }
  gs__own_lock();
  gs__own_new_locked(o, kind, id, bytes);
  gs__own_unlock();
}

void gs__own_dispose(gs__owned *o) {
  /* Only a scoped object is on a list another thread may walk. */
  if (o->holder != GS__HELD_BY_SCOPE) {
    gs__own_dispose_locked(o);
    return;
  }
  gs__own_lock();
  gs__own_dispose_locked(o);
  gs__own_unlock();
}

void gs__dispose_object(uint64_t id, const char *reason) {
  if (gs__is_composite_id(id))
    gs__composite_dispose(id, reason);
  else
    gs__dispose_as((gs_tensor){id}, reason);
}

/* ---- the tensor lifecycle (core/lifecycle.h) -------------------------------------------- */

static void tensor_registered(gs__slot *s, uint64_t bytes) {
  gs__own_new(&s->own, GS_OBJECT_TENSOR, s->tensor.id, bytes);
}

static const char *tensor_refuses_dispose(const gs__slot *s) {
  return gs__own_refuses_dispose(&s->own);
}

/* A tensor the engine holds is one of its temporaries: the engine, not the program, is
 * disposing it (the program never had its handle). */
static const char *tensor_dispose_reason(const gs__slot *s) {
  if (s->own.holder != GS__HELD_BY_ENGINE)
    return NULL;
  return thread_scopes.suspended_for ? thread_scopes.suspended_for
                                     : GS__REASON_ENGINE_TEMPORARY;
}

static void tensor_disposed(gs__slot *s) { gs__own_dispose(&s->own); }

/* The new handle takes the old one's place with its owner: same scope, same position. */
static void tensor_moved(gs__slot *to, gs__slot *from) {
  gs__own_lock();
  to->own = from->own;
  to->own.id = to->tensor.id;
  if (to->own.holder == GS__HELD_BY_SCOPE) {
    to->own.prev->next = &to->own;
    to->own.next->prev = &to->own;
  }
  from->own = (gs__owned){.holder = GS__HELD_BY_ENGINE};
  gs__own_unlock();
}

__attribute__((constructor)) static void add_ownership_to_lifecycle(void) {
  static const gs__lifecycle_i ownership = {
      .layer = "scope", .rank = 3, .on_register = tensor_registered,
      .refuses_dispose = tensor_refuses_dispose, .dispose_reason = tensor_dispose_reason,
      .on_dispose = tensor_disposed,
      .on_move = tensor_moved};
  gs__lifecycle_add(&ownership);
}

/* ---- public: tensors ----------------------------------------------------------------- */

static gs__owned *owned_of(gs_tensor h, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  return t ? &gs__slot_of(t)->own : NULL;
}

gs_scope gs__owned_scope(gs__owned *o);

gs_scope gs_owner_scope(gs_tensor h) {
  gs__owned *o = owned_of(h, "owner_scope");
  return o ? gs__owned_scope(o) : GS_NO_SCOPE;
}

/* The owner-side operations, shared by tensors and composites. */
void gs__owned_move_to_outer(gs__owned *o) {
  gs__own_lock();
  if (o->holder == GS__HELD_BY_SCOPE) /* the move uses the owning scope */
    gs__own_move_locked(o, o->scope->outer, false);
  gs__own_unlock();
}

void gs__owned_detach(gs__owned *o) {
  gs__own_lock();
  if (o->holder == GS__HELD_BY_SCOPE)
    gs__own_move_locked(o, NULL, false);
  gs__own_unlock();
}

bool gs__owned_attach(gs__owned *o, gs__scope_rec *s, const char *what, const char *fn) {
  gs__own_lock();
  const char *refusal = gs__own_refuses_dispose(o);
  if (!refusal)
    gs__own_move_locked(o, s, true);
  gs__own_unlock();
  if (refusal)
    gs__error(GS_ERR_STATE, fn, "%s #%u.%u %s, so no scope can own it", what,
              (unsigned)(o->id & 0x7fffffffu), (unsigned)(o->id >> 32), refusal);
  return !refusal;
}

gs_scope gs__owned_scope(gs__owned *o) {
  gs__own_lock();
  gs_scope s = o->holder == GS__HELD_BY_SCOPE ? gs__scope_handle(o->scope) : GS_NO_SCOPE;
  gs__own_unlock();
  return s;
}

gs_tensor gs_move_to_outer(gs_tensor h) {
  gs__owned *o = owned_of(h, "move_to_outer");
  if (!o)
    return GS_NO_TENSOR;
  gs__owned_move_to_outer(o);
  return h;
}

/* TorchSharp's scope.MoveToOther: moves o from s to target (NULL: detach) only if s owns it. */
static void move_if_owned(gs__scope_rec *s, gs__owned *o, bool to_outer, gs__scope_rec *target) {
  gs__own_lock();
  if (o->holder == GS__HELD_BY_SCOPE && o->scope == s)
    gs__own_move_locked(o, to_outer ? s->outer : target, false);
  gs__own_unlock();
}

void gs_scope_move_to_outer(gs_scope sh, gs_tensor h) {
  gs__scope_rec *s = gs__scope_lookup(sh, "scope_move_to_outer");
  gs__owned *o = s ? owned_of(h, "scope_move_to_outer") : NULL;
  if (o)
    move_if_owned(s, o, true, NULL);
}

void gs_scope_move_to(gs_scope sh, gs_scope target_h, gs_tensor h) {
  gs__scope_rec *s = gs__scope_lookup(sh, "scope_move_to");
  gs__scope_rec *target = NULL;
  if (!s || (target_h.id && !(target = gs__scope_lookup(target_h, "scope_move_to"))))
    return;
  gs__owned *o = owned_of(h, "scope_move_to");
  if (o)
    move_if_owned(s, o, false, target);
}

gs_tensor gs_detach_from_scopes(gs_tensor h) {
  gs__owned *o = owned_of(h, "detach_from_scopes");
  if (!o)
    return GS_NO_TENSOR;
  gs__owned_detach(o);
  return h;
}

gs_tensor gs_scope_attach(gs_scope sh, gs_tensor h) {
  gs__scope_rec *s = gs__scope_lookup(sh, "scope_attach");
  gs__owned *o = s ? owned_of(h, "scope_attach") : NULL;
  if (!o || !gs__owned_attach(o, s, "tensor", "scope_attach"))
    return GS_NO_TENSOR;
  return h;
}

/* ---- statistics ----------------------------------------------------------------------- */

gs_scope_stats gs_thread_scope_stats(gs_object_kind kind) {
  if ((int)kind < 0 || kind >= GS_OBJECT_KIND_COUNT) {
    gs__error(GS_ERR_ARGUMENT, "thread_scope_stats",
              "expected an object kind (tensor, packed sequence, batch or dataset), got %d", (int)kind);
    return (gs_scope_stats){0};
  }
  gs_scope_stats s = thread_scopes.stats[kind];
  s.live = (int64_t)(s.created_outside_scope + s.created_in_scope) -
           (int64_t)(s.disposed_outside_scope + s.disposed_in_scope);
  return s;
}

void gs_thread_scope_stats_reset(void) {
  memset(thread_scopes.stats, 0, sizeof thread_scopes.stats);
}

char *gs_scope_stats_format(const gs_scope_stats *s, char *buf, size_t size) {
  if (!buf || !size || !s)
    return buf;
  snprintf(buf, size,
           "live: %lld; created outside scope: %llu; disposed outside scope: %llu; created in "
           "scope: %llu; disposed in scope: %llu; attached to scope: %llu; detached from "
           "scope: %llu",
           (long long)s->live, (unsigned long long)s->created_outside_scope,
           (unsigned long long)s->disposed_outside_scope,
           (unsigned long long)s->created_in_scope, (unsigned long long)s->disposed_in_scope,
           (unsigned long long)s->attached_to_scope,
           (unsigned long long)s->detached_from_scope);
  return buf;
}
