/* autograd-impl.h: graph nodes and how ops record them.
 *
 * An op that may need a gradient records itself in three steps, right after computing its
 * result, and its backward formula sits next to it in the same file:
 *
 *   static void mul_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
 *     if (gs__needs_grad(n, 0))
 *       grads[0] = gs__reduce_grad(n, 0, gs_mul(grad, gs__saved(n, 1)));
 *     if (gs__needs_grad(n, 1))
 *       grads[1] = gs__reduce_grad(n, 1, gs_mul(grad, gs__saved(n, 0)));
 *   }
 *   GS__BACKWARD(MulBackward, mul_backward);
 *
 *   gs__node *n = gs__record(&MulBackward, out, 2, (const gs__tensor *[]){a, b});
 *   if (n) { gs__save(n, 0, a); gs__save(n, 1, b); }
 *
 * Backward formulas are written with the public ops on handles: they read like the math.
 * Handles a formula gets from gs__saved are disposed for it when it returns; the gradients it
 * writes into grads[] are handed to the engine.
 */
#pragma once

#include <string.h>

#include "core-impl.h"
#include "gradscope/autograd.h"

typedef struct gs__node gs__node;

/* Computes the gradients of a node's inputs from the gradient of its output. grads[i] starts
 * as GS_NO_TENSOR; leave it so for inputs that need no gradient. Grad mode is off inside. */
typedef void (*gs__backward_fn)(gs__node *node, gs_tensor grad, gs_tensor *grads);

/* A kind of node: its name, its formula, and whether that formula can itself be
 * differentiated: written only with ops that record nodes when grad mode is on (or switching
 * to such a variant when gs__formula_creates_graph says so), and reading its saved tensors
 * only through gs__saved. A backward with create_graph (double backward) refuses, before
 * running anything, a graph with a node whose kind is not. Defined with GS__BACKWARD or
 * GS__BACKWARD_TWICE, which also list it (in a linker section) so tests can check that every
 * kind has a gradcheck. */
typedef struct gs__node_kind {
  const char *name;
  gs__backward_fn backward;
  bool differentiable;
} gs__node_kind;

#define GS__BACKWARD(NAME, FN)                                                                     \
  __attribute__((used, section("gs_node_kinds"), aligned(sizeof(void *))))                         \
  const gs__node_kind NAME = {#NAME, FN, false}
/* A kind whose formula is differentiable (above): double backward may run through it. */
#define GS__BACKWARD_TWICE(NAME, FN)                                                               \
  __attribute__((used, section("gs_node_kinds"), aligned(sizeof(void *))))                         \
  const gs__node_kind NAME = {#NAME, FN, true}

/* Node kinds this layer's bookkeeping makes but whose formulas are written with ops, so they
 * are defined above it and install themselves at start-up: AccumulateGrad, the node a leaf's
 * gradient flows into (backward/accumulate.c); CopySlices and AsStridedBackward, for writes
 * through views (ops/view-grad.c). */
typedef struct gs__autograd_kinds {
  const gs__node_kind *accumulate_grad, *copy_slices, *as_strided;
} gs__autograd_kinds;
extern gs__autograd_kinds gs__kinds;

/* Where leaf's gradient may be produced directly in this backward, asked of the layers above
 * (backward/hooks.c sets it when a backward hook offers homes; NULL: none does): a contiguous
 * tensor of the leaf's shape and dtype, borrowed, that nothing reads until the leaf takes its
 * gradient, or no tensor. claim: the formula about to write there asks, and a home is given
 * once a pass (a second path into the leaf gets none, so the two are summed as usual);
 * without claim, whether the home claimed in this pass is the one given. DDP with
 * gradient_as_bucket_view offers a parameter's place in its bucket, so the weight gradient's
 * gemm writes there and staging copies nothing. */
typedef gs_tensor (*gs__grad_home_fn)(uint64_t leaf, bool claim);
extern gs__grad_home_fn gs__grad_home;

/* Where a view lies in its base (CopySlices and AsStridedBackward nodes). */
typedef struct gs__view_geometry {
  int ndim, base_ndim;
  int64_t offset, base_offset; /* storage offsets, in elements */
  int64_t numel, base_numel;
  bool base_contiguous; /* then a view element's base index is its position - base_offset */
  int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  int64_t base_shape[GS_MAX_DIMS], base_strides[GS_MAX_DIMS];
} gs__view_geometry;

/* Where view v lies in base (malloc'd; NULL without memory). */
gs__view_geometry *gs__view_geometry_new(const gs__tensor *v, const gs__tensor *base);

/* A tensor kept for backward: its geometry and a reference to its storage, and the storage
 * version it saw, so a later in-place write is caught. */
typedef struct gs__saved_tensor {
  gs__tensor value;  /* unregistered; value.storage is retained (NULL once released) */
  int64_t version;
  uint64_t tensor;   /* the handle it was saved from, for messages */
  int input;         /* which input of the node it is, GS__SAVED_RESULT, or GS__SAVED_OTHER:
                        the version error says which one was modified */
  /* Saved while a pair of saved-tensor hooks was pushed (saved-hooks.c): value keeps the
   * geometry but no storage, except while loaded (unpacked for a formula). */
  struct gs__saved_hooks *hooks; /* the pair that packed it (a reference), or NULL */
  struct gs__saved_hooks *pending; /* the pair that will pack it (a reference), or NULL */
  void *packed;                  /* what its pack returned */
  uint64_t storage_id;           /* the storage it was saved from: its version is checked if
                                    unpack gives that storage back */
  int loads;                     /* gs__saved_load calls not yet unloaded */
  bool lost;                     /* its pack hook failed: nothing to give backward */
} gs__saved_tensor;
#define GS__SAVED_RESULT (-1) /* the op's own output */
#define GS__SAVED_OTHER (-2)  /* anything else: a copy made before a write, an index */
#define GS__SAVED_CONSTANT (-3) /* a value with no history by design (gs__save_constant) */

/* What a formula needs to know of an input without keeping it alive. */
typedef struct gs__input_meta {
  gs_dtype dtype;
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  uint64_t tensor; /* its handle when recorded: gs__save finds which input it saves */
} gs__input_meta;

/* Small arguments of the op (dims, scalars), for its formula. */
#define GS__NODE_INTS 16
#define GS__NODE_REALS 4

struct gs__node {
  atomic_int_fast64_t refcount; /* from the tensors it made and from the nodes it feeds */
  uint64_t id;                  /* node number, for messages and the event log */
  const gs__node_kind *kind;
  int n_inputs;
  gs__node **next;              /* per input: the node its gradient goes to, or NULL */
  gs__input_meta *inputs;       /* per input */
  int n_saved;
  gs__saved_tensor *saved;
  int64_t ints[GS__NODE_INTS];
  double reals[GS__NODE_REALS];
  uint64_t output;              /* the tensor it made (for the event log) */
  /* AccumulateGrad nodes: the leaf they accumulate into (not owned: the leaf owns them). */
  uint64_t leaf;
  /* A non-leaf output that asked to keep its grad (gs_retain_grad), or 0. */
  uint64_t retained_output;
  /* Set once a backward without retain_graph has run this node and freed its saved tensors. */
  bool released;
  uint64_t released_event;
  /* An in-place op's node wrapped by a CopySlices node (view-history.c): not in the graph
   * walk nor in the event log; its wrapper owns it and shares its saved tensors. */
  bool wrapped;
  uint64_t wrapper_id; /* wrapped: its CopySlices node's id, which the log names it by */
  struct gs__node *inner;               /* CopySlices: the wrapped op's node (owned) */
  gs__view_geometry *geometry;          /* CopySlices, AsStridedBackward: where the view is in
                                           its base (owned) */
  /* The shape of the tensor it made (its leaf's, for AccumulateGrad), for gs_node_output_shape
   * once that tensor is gone. */
  int out_ndim;
  int64_t out_shape[GS_MAX_DIMS];
  /* Its public handle (gs_node), given on first request (node-handle.c), or 0. */
  uint64_t handle;
  /* Hooks on the gradient flowing into it (gs_register_grad_hook), in registration order;
   * owned, freed with it. */
  struct gs__grad_hook *hooks;
  /* What a custom function's node keeps for its formula (backward/function.c), freed with
   * it by free_user. */
  void *user;
  void (*free_user)(void *user);
};

/* A hook on the gradient that flows into a node: the tensor hook of its output (a non-leaf's
 * grad_fn, or a leaf's AccumulateGrad). Registered and run by backward/grad-hooks.c; freed
 * here with its node (its free_user_data called). */
typedef struct gs__grad_hook {
  struct gs__grad_hook *next;
  uint64_t id;
  gs_grad_hook_fn fn;           /* NULL for a post-hook */
  gs_node_post_hook_fn post_fn; /* runs after the node's formula (gs_node_register_post_hook) */
  void *user_data;
  void (*free_user_data)(void *user_data);
  bool removed; /* removed while its node's hooks were running: freed after they finish */
} gs__grad_hook;

/* Frees a hook (calling its free_user_data). */
void gs__grad_hook_free(gs__grad_hook *h);

/* Sets the tensor a node made, and the shape it keeps of it. */
static inline void gs__node_set_output(gs__node *n, const gs__tensor *t) {
  n->output = t->id;
  n->out_ndim = t->ndim;
  memcpy(n->out_shape, t->shape, sizeof n->out_shape);
}

/* Ends a freed node's public handle (node-handle.c): it reports stale from now on, naming
 * the event that freed the node. */
void gs__node_handle_end(gs__node *n, uint64_t event);
/* n's public handle, given now if it has none. */
gs_node gs__node_handle(gs__node *n);
/* The live node a handle names, or NULL after reporting a stale handle as an error of fn. */
gs__node *gs__node_lookup(gs_node h, const char *fn);

/* True while ops record nodes on this thread. */
bool gs__grad_mode(void);
/* Leaves this thread's no_grad blocks for a while (a create_graph backward records its
 * formulas even when called inside one, as PyTorch's engine sets grad mode for the pass):
 * returns their depth, for gs__no_grad_resume. */
int gs__no_grad_suspend(void);
void gs__no_grad_resume(int depth);

/* Whether an op over these inputs must record a node: grad mode on and some input requires
 * grad. */
bool gs__any_requires_grad(int n, const gs__tensor *const *inputs);

/* What a node keeps of an input (its dtype and shape). */
static inline gs__input_meta gs__input_meta_of(const gs__tensor *t) {
  gs__input_meta m = {t->dtype, t->ndim, {0}, t->id};
  memcpy(m.shape, t->shape, sizeof m.shape);
  return m;
}

/* A zeroed node of kind with room for its edges and saved slots; NULL when out of memory. */
gs__node *gs__node_alloc(const gs__node_kind *kind, int n_inputs, int n_saved);

/* Records the node that made out from inputs (out must be registered and floating), or
 * returns NULL when nothing needs a gradient. n_saved slots are reserved for gs__save. */
gs__node *gs__record(const gs__node_kind *kind, gs__tensor *out, int n_inputs,
                     const gs__tensor *const *inputs, int n_saved);
/* Records over the handle out a node of kind with in as its one input, for the tests of
 * what a pass does with a kind defined outside the engine (the refusal of a formula that is
 * not differentiable, now that the engine's own all are). Exported under its private name
 * (not API); false after reporting. */
__attribute__((visibility("default"))) bool gs__record_unary_for_test(const gs__node_kind *kind,
                                                                      gs_tensor out, gs_tensor in);
/* Saves t (or, with save_result, the op's own output) into slot i of the node. */
void gs__save(gs__node *node, int slot, const gs__tensor *t);
/* Saves t as the node's own output: for an in-place op, whose output t is also its input 0's
 * handle, which gs__save would take it for (a double backward would then follow the input's
 * history instead of the node's). */
void gs__save_result(gs__node *node, int slot, const gs__tensor *t);
/* Saves t as a constant of the formula: a value with no gradient to follow (batch norm's
 * running estimates), or one the formula recomputes with ops when it creates a graph (the
 * batch's statistics). Unlike a copy made before an in-place write, a double backward may run
 * through a node reading it. */
void gs__save_constant(gs__node *node, int slot, const gs__tensor *t);

/* ---- saved-tensor hooks (saved-hooks.c) ----------------------------------------------- */

/* Called by gs__save for the slot it just filled: with a pair pushed on this thread, gives
 * the tensor to its pack and keeps what that returns instead of the storage. */
void gs__saved_pack(gs__node *node, gs__saved_tensor *s);
/* Packs the saves still waiting for their pack hook on this thread (the node an op is saving
 * into: its hooks run once its last slot is saved). Called before anything that needs them
 * packed: the next node recorded, a pop, a load. */
void gs__saved_pack_pending(void);
/* Whether slot s holds something a formula can read (a storage, or a packed value). */
static inline bool gs__saved_present(const gs__saved_tensor *s) {
  return s->value.storage || s->hooks;
}
/* Makes every hooked slot of n readable (value.storage set) for a formula or an access,
 * calling unpack for those not loaded yet and checking what it gives; false after reporting
 * (then nothing stays loaded). fn names the caller in errors. */
bool gs__node_load_saved(gs__node *n, const char *fn);
/* Ends a gs__node_load_saved: hooked slots drop the storage their unpack gave. */
void gs__node_unload_saved(gs__node *n);
/* Frees slot s's packed value (free_packed) and its reference to its pair. */
void gs__saved_free_packed(gs__saved_tensor *s);

/* The node t's gradient goes to: its grad_fn, or (a leaf that requires grad) its
 * AccumulateGrad node, made on first use. NULL if t needs no gradient. */
gs__node *gs__grad_edge(gs__tensor *t);

void gs__node_retain(gs__node *node);
void gs__node_release(gs__node *node);
/* Frees a node's saved tensors (after backward). */
void gs__node_release_saved(gs__node *node);

/* Announces a new node in the event log (once its op has saved its tensors). */
void gs__node_announce(gs__node *n);

/* ---- the graph's part in a tensor's life (node.c, registered as lifecycle hooks) ------ */

/* Drops t's graph references and disposes its grad; called when t is disposed. */
void gs__autograd_on_dispose(gs__tensor *t);
/* Before an in-place write into t by op (operand_requires_grad: whether another operand of
 * the op requires grad): refuses, after reporting, a leaf that requires grad, and a view of
 * one or of a disposed base (gs__check_view_write). In-place ops then record their node with
 * gs__record(kind, t, ..., inputs) where inputs[0] is t: its previous history becomes the
 * node's first input (through a view: the base's, see gs__record_view_write). */
bool gs__autograd_check_inplace(const gs__tensor *t, bool operand_requires_grad,
                                const char *op);
/* ---- views and in-place writes (view-history.c) ------------------------------------- */

/* Brings a view's graph links up to date after its base's history was rewritten by an in-place
 * write (into the base or through another view): its grad_fn becomes an AsStridedBackward
 * from the base's current history, as PyTorch regenerates a view's grad_fn when its base's
 * version changed. Does nothing for other tensors, up-to-date views and views whose base is
 * gone. Inline: every op calls it for each input. */
void gs__refresh_view_slow(gs__tensor *t);
static inline void gs__refresh_view(gs__tensor *t) {
  if (t->origin == GS__ORIGIN_VIEW && t->view_base)
    gs__refresh_view_slow(t);
}
/* A new view: counted in its base's live_views (root: the base, NULL if it is gone), or in the
 * kept record of its disposed base. */
void gs__count_view(gs__tensor *v, gs__tensor *root);
/* When t is disposed. A view: no longer counted (the last view of a disposed base frees its
 * kept record). A base whose history in-place writes rewrote, with views alive: its storage
 * keeps its geometry and grad_fn (taken from t) for them, until the last one goes. */
void gs__view_history_on_dispose(gs__tensor *t);
/* Before a recorded in-place write into view t: its base must still exist and must not be a
 * leaf that requires grad; false after reporting. */
bool gs__check_view_write(const gs__tensor *t, const char *op);
/* Records an in-place write into view v whose node (made by gs__record, inputs[0] == v) is
 * inner: the base's history becomes CopySlices(inner) over its previous history, and v (like
 * every other view of the base) gets its grad_fn from there on next use. */
void gs__record_view_write(gs__tensor *v, gs__tensor *base, gs__node *inner);

/* When n becomes t's grad_fn by an in-place write: t's retained gradient (gs_retain_grad), if
 * it asked for one, is now n's output's, as PyTorch moves the hook to the new version. */
void gs__move_retained_grad(gs__tensor *t, gs__node *n);
/* Frees a storage's kept base record. */
void gs__view_root_free(struct gs__view_root *root);
