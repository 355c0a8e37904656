/* scopes.c: dispose scopes: their handle pool, each thread's chain of scopes, beginning and
 * ending them (in or out of order), disposing what they own, and their own accounts.
 *
 * A thread's scopes form a chain from its current scope outwards (TorchSharp's OuterScope
 * links). Ending a scope in the middle unlinks it: the scope inside it now encloses in its
 * outer scope. Scope handles come from a generational pool (base/pool.h) as tensor handles do,
 * so a handle to an ended scope is recognised (ending it again does nothing, using it otherwise
 * is an error naming the scope and when it ended, however often its slot was reused since).
 */
#include <string.h>

#include "scope-impl.h"
#include "trace-writer.h"

#define MAX_SCOPES 65536u

/* The pool finds a scope's record; the ownership lock guards what is in it. A stale handle's
 * report names the scope it was (the name is what a user knows it by) and when it ended. */
static gs__pool scopes = GS__POOL_INIT("scope", sizeof(gs__scope_rec), 6, MAX_SCOPES, 0);
GS__POOL_GUARD_FORK(scopes)
static const gs__handle_kind scope_kind = {.pool = &scopes, .noun = "scope", .nouns = "scopes",
                                           .it = "it", .ended = "ended", .by_is_name = true};

/* ---- handles ------------------------------------------------------------------------------ */

gs__scope_rec *gs__scope_lookup(gs_scope h, const char *fn) {
  gs__scope_rec *s = gs__pool_get(&scopes, h.id);
  if (!s)
    gs__report_stale(&scope_kind, h.id, fn);
  return s;
}

bool gs_scope_is_active(gs_scope h) { return gs__pool_get(&scopes, h.id) != NULL; }

/* ---- begin and end ---------------------------------------------------------------------- */

/* The scope names this thread began last, with their interned name and end reason: a training
 * loop opens the same few scopes every step ("train step", the loader's "collate"), and
 * formatting the reason and interning both (a hash and a lock each) cost more than the rest of
 * scope_begin. Interned strings live as long as the process, so the pointers stay good. */
enum { NAME_CACHE = 4 };
typedef struct scope_name_cache {
  char name[64];
  const char *interned_name, *end_reason;
} scope_name_cache;
static _Thread_local scope_name_cache name_cache[NAME_CACHE];
static _Thread_local unsigned name_cache_next;

/* short_name's interned copy and its end reason ("the end of scope '...'"). */
static const scope_name_cache *scope_names(const char *short_name) {
  for (int i = 0; i < NAME_CACHE; i++)
    if (name_cache[i].interned_name && strcmp(name_cache[i].name, short_name) == 0)
      return &name_cache[i];
  scope_name_cache *c = &name_cache[name_cache_next++ % NAME_CACHE];
  char reason[128];
  snprintf(reason, sizeof reason, "the end of scope '%.60s'", short_name);
  memcpy(c->name, short_name, sizeof c->name);
  c->end_reason = gs__intern(reason);
  c->interned_name = gs__intern(short_name);
  return c;
}

gs_scope gs_scope_begin(const char *name) {
  if (!name)
    name = "scope";
  char short_name[64]; /* the name cut to 63 bytes, as the record keeps it */
  size_t len = strnlen(name, sizeof short_name - 1);
  memcpy(short_name, name, len);
  memset(short_name + len, 0, sizeof short_name - len);
  const scope_name_cache *names = scope_names(short_name);
  const char *interned_name = names->interned_name, *end_reason = names->end_reason;

  gs__thread_scopes *ts = gs__thread_scopes_get();
  uint64_t id;
  gs__scope_rec *s = (gs__scope_rec *)gs__pool_take(&scopes, &id);
  if (!s) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "scope_begin", "too many scopes are open (%u)",
              MAX_SCOPES);
    return GS_NO_SCOPE;
  }
  gs__own_lock();
  s->id = id;
  memcpy(s->name, short_name, sizeof s->name);
  s->interned_name = interned_name;
  s->end_reason = end_reason;
  s->head.prev = s->head.next = &s->head;
  memset(&s->info, 0, sizeof s->info);
  s->thread = ts;
  s->outer = ts->current;
  ts->current = s;
  gs_scope h = gs__scope_handle(s);
  uint64_t outer = s->outer ? gs__scope_handle(s->outer).id : 0;
  gs__pool_publish(&scopes, &s->pool);
  gs__own_unlock();
  if (gs__trace_on())
    gs__trace_scope_begin(h.id, outer, interned_name);
  else
    gs__trace_skip(1);
  return h;
}

/* Disposes every object s owns but those in keep (ids). Objects are disposed one at a time
 * with the lock released, since disposal re-enters ownership. */
static void dispose_owned(gs__scope_rec *s, const uint64_t *keep, int n_keep, const char *reason);

static bool kept(uint64_t id, const uint64_t *keep, int n) {
  for (int i = 0; i < n; i++)
    if (keep[i] == id)
      return true;
  return false;
}

static void dispose_owned(gs__scope_rec *s, const uint64_t *keep, int n_keep, const char *reason) {
  for (;;) {
    gs__own_lock();
    gs__owned *o = s->head.next;
    while (o != &s->head && kept(o->id, keep, n_keep))
      o = o->next;
    uint64_t id = o != &s->head ? o->id : 0;
    gs__own_unlock();
    if (!id)
      return;
    gs__dispose_object(id, reason);
  }
}

void gs_scope_end(gs_scope h) {
  gs__scope_rec *s = gs__pool_get(&scopes, h.id);
  if (!s) {
    gs__pool_id_state state = gs__pool_report_of(&scopes, h.id).state;
    if (state != GS__POOL_ENDED && state != GS__POOL_FORGOTTEN)
      gs__report_stale(&scope_kind, h.id, "scope_end"); /* ending twice is no error */
    return;
  }
  gs__trace_call call = gs__trace_call_enter();
  dispose_owned(s, NULL, 0, s->end_reason);
  gs__trace_call_leave(call);

  gs__own_lock();
  if (gs__pool_get(&scopes, h.id) != s) { /* another thread ended it meanwhile */
    gs__own_unlock();
    return;
  }
  gs__thread_scopes *ts = s->thread;
  if (ts->current == s) {
    ts->current = s->outer;
  } else { /* out of order: the scope inside it now encloses in its outer scope */
    for (gs__scope_rec *inner = ts->current; inner; inner = inner->outer) {
      if (inner->outer == s) {
        inner->outer = s->outer;
        break;
      }
    }
  }
  s->outer = NULL;
  uint64_t ended_at = gs__next_event();
  gs__pool_release(&scopes, h.id, s->interned_name, ended_at, GS__POOL_DISPOSED);
  gs__own_unlock();
  if (gs__trace_on())
    gs__trace_scope_end(h.id, ended_at);
}

gs_scope gs_scope_current(void) {
  gs__own_lock();
  gs__scope_rec *s = gs__thread_scopes_get()->current;
  gs_scope h = s ? gs__scope_handle(s) : GS_NO_SCOPE;
  gs__own_unlock();
  return h;
}

gs_scope gs_scope_outer(gs_scope h) {
  gs__scope_rec *s = gs__scope_lookup(h, "scope_outer");
  if (!s)
    return GS_NO_SCOPE;
  gs__own_lock();
  gs_scope outer = s->outer ? gs__scope_handle(s->outer) : GS_NO_SCOPE;
  gs__own_unlock();
  return outer;
}

const char *gs_scope_name(gs_scope h) {
  gs__scope_rec *s = gs__scope_lookup(h, "scope_name");
  return s ? s->interned_name : NULL;
}

void gs_scope_dispose_everything_but(gs_scope h, const uint64_t *keep, int n_keep) {
  gs__scope_rec *s = gs__scope_lookup(h, "scope_dispose_everything_but");
  if (!s)
    return;
  if (n_keep < 0 || (n_keep > 0 && !keep)) {
    gs__error(GS_ERR_ARGUMENT, "scope_dispose_everything_but",
              "expected %d ids to keep, got %s", n_keep, keep ? "a negative count" : "NULL");
    return;
  }
  /* Kept objects stay exactly where they are: owned by this scope if it owned them, by their
   * own owner otherwise (TorchSharp put foreign kept objects into the scope's set without
   * changing their owner). */
  char reason[128];
  snprintf(reason, sizeof reason, "dispose_everything_but on scope '%s'", s->name);
  dispose_owned(s, keep, n_keep, gs__intern(reason));
}

void gs_scope_dispose_everything(gs_scope h) {
  gs__scope_rec *s = gs__scope_lookup(h, "scope_dispose_everything");
  if (!s)
    return;
  char reason[128];
  snprintf(reason, sizeof reason, "dispose_everything on scope '%s'", s->name);
  dispose_owned(s, NULL, 0, gs__intern(reason));
}

gs_scope_info gs_scope_get_info(gs_scope h) {
  gs__scope_rec *s = gs__scope_lookup(h, "scope_get_info");
  if (!s)
    return (gs_scope_info){0};
  gs__own_lock();
  gs_scope_info info = s->info;
  gs__own_unlock();
  return info;
}

/* ---- a late log's snapshot (trace/snapshot.c) ----------------------------------------- */

/* Every open scope as its scope_begin, outer ones first (a scope's outer began before it). */
static uint64_t snapshot_scopes(void) {
  uint32_t count = atomic_load_explicit(&scopes.count, memory_order_acquire);
  for (int depth = 0;; depth++) {
    bool deeper = false;
    for (uint32_t i = 0; i < count; i++) {
      gs__scope_rec *s = (gs__scope_rec *)gs__pool_slot_of(&scopes, i);
      if (!atomic_load_explicit(&s->pool.live, memory_order_acquire))
        continue;
      int d = 0;
      for (const gs__scope_rec *o = s->outer; o && d <= depth; o = o->outer)
        d++;
      if (d > depth) {
        deeper = true;
        continue;
      }
      if (d < depth)
        continue;
      gs__trace_snapshot_event(&(gs_trace_event){
          .kind = GS_TRACE_SCOPE_BEGIN, .scope = s->id, .outer = s->outer ? s->outer->id : 0,
          .name = gs__trace_string(s->interned_name)});
    }
    if (!deeper)
      return 0; /* scopes are not objects: the count is of tensors and composites */
  }
}

__attribute__((constructor)) static void register_scope_snapshot(void) {
  gs__trace_add_snapshot_hook(10, snapshot_scopes);
}
