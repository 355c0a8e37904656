/* scope-impl.h: dispose scopes and ownership, inside the engine.
 *
 * Every ownable object (a tensor's slot, a composite's record) carries a gs__owned record. All
 * ownership state (scope records, their lists, holders) is guarded by one lock: operations are
 * a few pointer updates, and objects may move between threads' scopes. Statistics are per
 * thread, counted on the thread that performs the operation, as TorchSharp counts them.
 */
#pragma once

#include "core-impl.h"
#include "gradscope/scope.h"

typedef struct gs__thread_scopes gs__thread_scopes;

/* A scope's record in the scope pool (scopes.c). Its contents are guarded by the ownership
 * lock; the pool only finds it. */
typedef struct gs__scope_rec {
  gs__pool_slot pool;
  uint64_t id;                /* its handle while it is open */
  char name[64];
  const char *interned_name;
  const char *end_reason;     /* interned "the end of scope 'NAME'" */
  struct gs__scope_rec *outer;
  gs__thread_scopes *thread;  /* the thread whose stack it is on */
  gs__owned head;             /* sentinel of the circular list of owned objects */
  gs_scope_info info;
} gs__scope_rec;

struct gs__thread_scopes {
  gs__scope_rec *current;
  gs_scope_stats stats[GS_OBJECT_KIND_COUNT];
  int suspended; /* > 0: new objects are the engine's own, not counted */
  const char *suspended_for; /* the work that suspended it first (a dispose reason), or NULL */
};

/* An open scope record's handle. */
static inline gs_scope gs__scope_handle(const gs__scope_rec *s) { return (gs_scope){s->id}; }

/* The calling thread's scope state. */
gs__thread_scopes *gs__thread_scopes_get(void);
/* In a process just forked (a DataLoader worker): the scopes open on this thread are the
 * parent's, whose beginnings the child's log lacks and which the child never ends, so the
 * child starts with none open (and ownership not suspended). */
void gs__scopes_forget_inherited(void);

void gs__own_lock(void);
void gs__own_unlock(void);

/* The active scope a handle names, or NULL after reporting (fn names the call). */
gs__scope_rec *gs__scope_lookup(gs_scope s, const char *fn);

/* ---- ownership transitions (call with the lock held) -------------------------------- */

/* A new object: owned by the current scope, the caller, or (while suspended) the engine. */
void gs__own_new_locked(gs__owned *o, int kind, uint64_t id, uint64_t bytes);
/* The same, taking the lock only when a scope's list is involved. */
void gs__own_new(gs__owned *o, int kind, uint64_t id, uint64_t bytes);
void gs__own_dispose(gs__owned *o);
/* The object is being disposed: counts the disposal and leaves its owner. */
void gs__own_dispose_locked(gs__owned *o);
/* Moves o into scope (NULL: to the caller), counting as TorchSharp does: attach counts when
 * attaching, detach counts when leaving a scope for no scope, moves between scopes count
 * nothing. */
void gs__own_move_locked(gs__owned *o, gs__scope_rec *scope, bool counts_as_attach);
/* Hands o to a non-scope holder (module, composite, tensor, engine), leaving any scope (a
 * detach when it leaves a scope for a module). */
void gs__own_set_holder_locked(gs__owned *o, gs__holder holder, uint64_t holder_id);
/* The same, for a caller whose next event carries the change (backward's grad_accumulate,
 * format 2.2) instead of an owner_change of its own: true if holder or owner changed, with
 * what they were; its number is then taken with that event's, which is the next this thread
 * numbers, log on or off. */
bool gs__own_set_holder_locked_folded(gs__owned *o, gs__holder holder, uint64_t holder_id,
                                      int *previous_holder, uint64_t *previous_owner);

/* While suspended (nestable), objects created on this thread belong to the engine and count
 * in no statistic: backward's temporaries, a composite's parts before it is assembled. */
void gs__ownership_suspend(void);
void gs__ownership_resume(void);
/* Suspends as gs__ownership_suspend, naming the work: the engine's temporaries it disposes
 * with gs_dispose are then logged with reason (a fixed string the inspector knows, see
 * inspector/model/words/dispose-reason.c), not as the program's gs_dispose. */
void gs__ownership_suspend_for(const char *reason);

/* The dispose reasons of the engine's own temporaries: backward's, and any other's. */
#define GS__REASON_BACKWARD_TEMPORARY "gs_backward's own temporary"
#define GS__REASON_ENGINE_TEMPORARY "the engine's own temporary"

/* Makes an engine-held tensor (built while suspended) a new object of the current scope or
 * the caller, counted as created: what a composite op hands back to the user. */
void gs__own_adopt(gs_tensor h);

/* Why a user may not dispose o (a module's parameter, a composite's part, a gradient), or
 * NULL if they may. */
const char *gs__own_refuses_dispose(const gs__owned *o);

/* Ids of composite objects carry this bit in their slot index (the composite pool's tag), so a
 * tensor's id and a composite's never collide (dispose_everything_but takes a list of either). */
#define GS__COMPOSITE_ID_BIT 0x80000000u

static inline bool gs__is_composite_id(uint64_t id) {
  return (id & GS__COMPOSITE_ID_BIT) != 0;
}

/* Disposes the object an id names (a tensor or a composite), on behalf of reason. */
void gs__dispose_object(uint64_t id, const char *reason);
/* Disposes a composite object (packed-sequence.c). */
void gs__composite_dispose(uint64_t id, const char *reason);

/* Scope operations on any owned object (tensor or composite); what names it in errors. */
void gs__owned_move_to_outer(gs__owned *o);
void gs__owned_detach(gs__owned *o);
bool gs__owned_attach(gs__owned *o, gs__scope_rec *s, const char *what, const char *fn);
gs_scope gs__owned_scope(gs__owned *o);

/* ---- composite objects (composite.c) ------------------------------------------------ */

#define GS__COMPOSITE_MAX_PARTS 4

/* Makes a composite of kind from parts (handles the caller created while ownership was
 * suspended; absent parts are GS_NO_TENSOR): the parts become the composite's, and the
 * composite is registered as one object on the current scope. Returns its id, or 0. */
uint64_t gs__composite_new(int kind, const gs_tensor *parts, int n_parts, const char *fn);
/* The owned record and parts of a live composite, or NULL after reporting a stale or forged
 * id as an error of fn ("packed sequence #3.1 is stale: it was disposed by the end of scope
 * 'collate' at event 88"). */
gs__owned *gs__composite_lookup(uint64_t id, int kind, const char *fn, gs_tensor *parts_out);
bool gs__composite_is_alive(uint64_t id);
/* The scope operations of a composite's public API (gs_batch_move_to_outer,
 * gs_packed_move_to_outer...), on a composite of kind: a stale or forged id is reported as an
 * error of fn, and the three that change the owner return false then; what names the kind in
 * an attach error ("batch"). */
gs_scope gs__composite_owner_scope(uint64_t id, int kind, const char *fn);
bool gs__composite_move_to_outer(uint64_t id, int kind, const char *fn);
bool gs__composite_detach_from_scopes(uint64_t id, int kind, const char *fn);
bool gs__composite_attach(gs_scope sh, uint64_t id, int kind, const char *what, const char *fn);
