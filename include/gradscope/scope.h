/* gradscope/scope.h: dispose scopes (TorchSharp's DisposeScope, in C), parameters, modules
 * (trees of named parameters and child modules, with forward dispatch and train/eval mode),
 * and composite objects such as PackedSequence and DataLoader batches.
 *
 * Each thread has a stack of scopes. An object (a tensor, or a composite such as a packed
 * sequence) created while a scope is current is owned by that scope; ending the scope disposes
 * everything it still owns. Objects created with no scope open are owned by the caller. An
 * object can move to the enclosing scope, to another scope, out of all scopes (detach), or be
 * attached to a scope. Statistics follow TorchSharp's: per thread and per kind of object, six
 * counters that only increase and the live count derived from them.
 */
#pragma once

#include <stdio.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_scope {
  uint64_t id;
} gs_scope;

#define GS_NO_SCOPE ((gs_scope){0})

/* ---- scopes ---------------------------------------------------------------------------- */

/* Opens a scope on this thread and makes it current. name labels it in errors and in the event
 * log ("step", "collate"); it is copied. */
GS_API gs_scope gs_scope_begin(const char *name);
/* Ends a scope: disposes everything it still owns and unlinks it from its thread's stack (a
 * scope in the middle of the stack may be ended: its inner scopes then enclose in its outer
 * one). Ending an ended scope does nothing; any other use of an ended scope is an error. */
GS_API void gs_scope_end(gs_scope scope);
/* This thread's innermost scope, or GS_NO_SCOPE. */
GS_API gs_scope gs_scope_current(void);
/* The scope enclosing scope, or GS_NO_SCOPE. */
GS_API gs_scope gs_scope_outer(gs_scope scope);
GS_API bool gs_scope_is_active(gs_scope scope);
/* The name given to gs_scope_begin (valid while the scope is active). */
GS_API const char *gs_scope_name(gs_scope scope);
/* Disposes everything the scope owns except the objects whose ids are listed (tensor.id or
 * packed_sequence.id: the two never collide), which stay owned by it. Listed objects the scope
 * does not own are left alone. */
GS_API void gs_scope_dispose_everything_but(gs_scope scope, const uint64_t *keep_ids, int n_keep);
GS_API void gs_scope_dispose_everything(gs_scope scope);

/* ---- ownership of tensors ------------------------------------------------------------- */

/* The scope that owns t, or GS_NO_SCOPE (caller-owned, or held by a module, an optimizer or a
 * composite). */
GS_API gs_scope gs_owner_scope(gs_tensor t);
/* Moves t from its owning scope to that scope's outer scope; with no outer scope this is a
 * detach. Does nothing if t is owned by no scope. Returns t, for chaining. */
GS_API gs_tensor gs_move_to_outer(gs_tensor t);
/* As scope's MoveToOuter in TorchSharp: moves t to scope's outer scope only if scope owns it
 * (a no-op otherwise). */
GS_API void gs_scope_move_to_outer(gs_scope scope, gs_tensor t);
/* Moves t from scope to target (GS_NO_SCOPE: detach) if scope owns t; a no-op otherwise. */
GS_API void gs_scope_move_to(gs_scope scope, gs_scope target, gs_tensor t);
/* Takes t out of every scope: the caller owns it and must dispose it. Returns t. */
GS_API gs_tensor gs_detach_from_scopes(gs_tensor t);
/* Makes scope own t, taking it from its previous owner. Returns t. */
GS_API gs_tensor gs_scope_attach(gs_scope scope, gs_tensor t);

/* ---- statistics ----------------------------------------------------------------------- */

typedef enum gs_object_kind {
  GS_OBJECT_TENSOR = 0,
  GS_OBJECT_PACKED_SEQUENCE = 1,
  GS_OBJECT_BATCH = 2, /* a DataLoader batch (data.h) */
  /* A tensor dataset (data.h). The event log names the tensors it reads; it reads them
   * without owning them, and no scope ever owns it, so its statistics stay 0. */
  GS_OBJECT_DATASET = 3,
} gs_object_kind;

#define GS_OBJECT_KIND_COUNT 4

/* TorchSharp's six counters (they only increase) and the live count derived from them. */
typedef struct gs_scope_stats {
  uint64_t created_outside_scope;
  uint64_t disposed_outside_scope;
  uint64_t created_in_scope;
  uint64_t disposed_in_scope;
  uint64_t attached_to_scope;
  uint64_t detached_from_scope;
  int64_t live; /* created - disposed, in and outside scopes */
} gs_scope_stats;

/* This thread's statistics for one kind of object. */
GS_API gs_scope_stats gs_thread_scope_stats(gs_object_kind kind);
/* Zeroes this thread's statistics (all kinds). */
GS_API void gs_thread_scope_stats_reset(void);
/* "live: 1; created outside scope: 0; disposed outside scope: 0; created in scope: 1; ..."
 * into buf (live first, then the six counters in TorchSharp's order). */
GS_API char *gs_scope_stats_format(const gs_scope_stats *stats, char *buf, size_t size);

/* One scope's own account: objects it came to own, objects disposed while it owned them, what
 * it owns now, and the bytes of tensor storage it owns now and at most. */
typedef struct gs_scope_info {
  uint64_t created;   /* objects created while it was the current scope */
  uint64_t disposed;  /* objects disposed while it owned them */
  uint64_t alive;     /* objects it owns now */
  uint64_t bytes;     /* bytes of the tensors it owns now (each storage counted once per tensor) */
  uint64_t peak_bytes;
} gs_scope_info;

GS_API gs_scope_info gs_scope_get_info(gs_scope scope);

/* ---- parameters and modules ----------------------------------------------------------- */

/* Turns t into a parameter by moving its handle: t becomes invalid (using it is a stale-handle
 * error naming the parameter; disposing it does nothing), the scope that owned t owns the
 * parameter in its place, and no statistic changes. */
GS_API gs_tensor gs_parameter_new(gs_tensor t, bool requires_grad);
GS_API bool gs_is_parameter(gs_tensor t);

/* A module, as torch.nn.Module: named parameters and named child modules, which it owns
 * outside every scope (so they survive the scopes of training steps), a type that says how it
 * computes, and a train/eval mode. Names contain no '.': a dotted name ("encoder.layers.1.bias")
 * is a path through the tree. */
typedef struct gs_module {
  uint64_t id;
} gs_module;

#define GS_NO_MODULE ((gs_module){0})

/* What kind of module it is. name labels it in errors, in the event log and in
 * gs_module_type_name; forward computes its output (NULL: a container that cannot be called,
 * as a bare nn.Module); free_data frees the module's data (its non-tensor configuration, such
 * as dropout's p) at disposal (NULL: data is not freed). A type must outlive its modules (a
 * static constant). */
typedef struct gs_module_type {
  const char *name;
  gs_tensor (*forward)(gs_module m, gs_tensor x);
  void (*free_data)(void *data);
} gs_module_type;

/* A module with no forward: a container named type_name (copied; NULL: "Module"). */
GS_API gs_module gs_module_new(const char *type_name);
/* A module of type, holding data: the module owns it from now on (if the module cannot be
 * made, data is freed with type->free_data when there is one). */
GS_API gs_module gs_module_new_typed(const gs_module_type *type, void *data);
/* "Linear", "Sequential"... (valid while the process runs), or NULL for a stale handle. */
GS_API const char *gs_module_type_name(gs_module m);
/* Whether m is a live module of type (no error for another type). */
GS_API bool gs_module_is_a(gs_module m, const gs_module_type *type);
/* m's data if m is of type expected; otherwise an error naming both types, and NULL. */
GS_API void *gs_module_data(gs_module m, const gs_module_type *expected);
/* m's forward on x: one new tensor (owned like any op's result by the current scope, or the
 * caller); intermediates it made are disposed. An error for a module without a forward. */
GS_API gs_tensor gs_module_forward(gs_module m, gs_tensor x);

/* Registers p under name (moving it out of any scope: a detach); replacing a name disposes the
 * previous parameter. p must be a parameter; name must be non-empty, without '.', and not a
 * child's name. */
GS_API void gs_module_register_parameter(gs_module m, const char *name, gs_tensor p);
/* The parameter under name, which may be dotted ("fc2.bias": parameter bias of child fc2)
 * (borrowed: the module owns it), or the computed tensor set under it
 * (gs_module_set_computed), or GS_NO_TENSOR. */
GS_API gs_tensor gs_module_parameter(gs_module m, const char *name);
/* m's own parameters (not its children's): how many, and the i-th in registration order with
 * its name. */
GS_API int gs_module_parameter_count(gs_module m);
GS_API gs_tensor gs_module_parameter_at(gs_module m, int i, const char **name);
/* Takes the entry name out of m's own parameters (torch's ParameterDict.pop, del
 * module.name) and returns the parameter, which stays alive: a parameter m owned that no
 * other module lists becomes the caller's (to dispose; *callers, if given, is set true), one
 * another module lists is that module's from then on. */
GS_API gs_tensor gs_module_remove_parameter(gs_module m, const char *name, bool *callers);
/* Lets m's forward read t where it reads the parameter name (which m must not have): a
 * tensor computed from other parameters before each forward, as torch's weight_norm and
 * spectral_norm set module.weight. gs_module_parameter returns it under that name; it is not
 * a parameter (not in named parameters or the state dict). Borrowed: the caller keeps t
 * alive while m may use it. GS_NO_TENSOR removes the entry; registering a parameter of that
 * name replaces it. */
GS_API void gs_module_set_computed(gs_module m, const char *name, gs_tensor t);

/* Modules are shared, as PyTorch's: one module may sit in several slots (of one parent or of
 * several), and lives while anything holds it. Its holders are the caller that made it and
 * each gs_module_retain; every parent slot naming it is an owner too. gs_module_dispose lets
 * go of one hold; the module (with its parameters, and each child no one else holds) is
 * disposed when its last holder and its last parent slot are gone. */

/* Makes child a submodule of m under name (non-empty, without '.', not a parameter's name).
 * The new slot takes over one of the caller's holds on child (as a fresh module's owner hands
 * it to its parent): a module that is already someone's child and that the caller does not
 * hold must be gs_module_retain'ed first. Replacing a name lets go of the previous child
 * (disposed if nothing else holds it). child must not be m or one of m's ancestors. */
GS_API void gs_module_register_child(gs_module m, const char *name, gs_module child);
/* The same, as a new slot at position index (0 to the child count) instead of at the end. */
GS_API void gs_module_insert_child(gs_module m, int index, const char *name, gs_module child);
/* Empties m's slot name: the child there is let go (disposed if nothing else holds it). */
GS_API void gs_module_remove_child(gs_module m, const char *name);
/* Renames m's slot name to new_name (neither a child's nor a parameter's name yet). */
GS_API void gs_module_rename_child(gs_module m, const char *name, const char *new_name);
/* One more hold on m for the caller, who lets go of it with gs_module_dispose; returns m. */
GS_API gs_module gs_module_retain(gs_module m);
/* m's direct children: how many, and the i-th in registration order with its name. */
GS_API int gs_module_child_count(gs_module m);
GS_API gs_module gs_module_child_at(gs_module m, int i, const char **name);
/* The submodule under a (possibly dotted) name ("encoder.layers.1"), or GS_NO_MODULE. */
GS_API gs_module gs_module_child(gs_module m, const char *name);
/* The module of the oldest slot naming m (a renamed slot counts as made anew, as the log's
 * reader sees it: the module whose path the inspector names m's parameters by), or
 * GS_NO_MODULE for a root. */
GS_API gs_module gs_module_parent(gs_module m);
/* How many parent slots name m (0 for a root; a module used twice in one parent counts 2),
 * and how many holds callers have on it (-1 for a stale handle). */
GS_API int gs_module_parent_count(gs_module m);
GS_API int gs_module_holder_count(gs_module m);

/* Every parameter of the tree, as PyTorch's named_parameters(): m's own in registration order,
 * then each child's in registration order, depth first, with dotted names relative to m
 * ("0.weight", "fc2.bias"); a parameter reachable by several paths (its module is shared) is
 * listed once, under the first. Writes the first max into out and names_out (either may be
 * NULL) and returns the total (-1 for a stale handle). Names stay valid while m lives. */
GS_API int gs_module_named_parameters(gs_module m, gs_tensor *out, const char **names_out,
                                      int max);
/* The same walk with every path kept, a shared module's parameters under each of its paths,
 * as PyTorch's state_dict() lists them. */
GS_API int gs_module_parameter_paths(gs_module m, gs_tensor *out, const char **names_out, int max);

/* Training mode (the default, as PyTorch's) or evaluation mode, for m and its whole tree
 * (nn.Module.train(mode) / eval()). Dropout uses it. */
GS_API void gs_module_train(gs_module m, bool training);
GS_API bool gs_module_is_training(gs_module m);

/* torch's Module.double() (dtype f64) and float() (f32): every floating parameter and buffer of
 * m's tree, and each one's grad, converted in place with gs_tensor_set_data (handles, names,
 * requires_grad kept; integer buffers untouched). Returns how many parameters it converted, or
 * -1 after an error (a dtype other than f32 or f64). */
GS_API int gs_module_to_dtype(gs_module m, gs_dtype dtype);

/* Lets go of the caller's hold on m. When nothing else holds it (no other hold, no parent
 * slot), it is disposed with every parameter it owns, and each child is let go (a child held
 * elsewhere, by a caller or another parent, lives on). A module the caller does not hold (a
 * child only its parents hold) cannot be disposed on its own: it goes with its parents. */
GS_API void gs_module_dispose(gs_module m);

/* ---- leaks ---------------------------------------------------------------------------- */

/* Writes every live, caller-owned tensor (created outside a scope or detached from one and not
 * disposed) with its creating op, shape and scope history; returns how many there were. Set
 * GS_LEAK_REPORT=1 to have it printed to stderr at exit. */
GS_API int gs_leak_report(FILE *out);

/* Whether tensors remember where they were made (GS_LEAK_REPORT was set at load): a binding
 * whose lines the engine cannot see (Python) then names them with gs_trace_set_site_text,
 * as it does while tracing. */
GS_API bool gs_remembers_sites(void);

#ifdef __cplusplus
}
#endif
