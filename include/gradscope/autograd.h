/* gradscope/autograd.h: gradients, recorded as PyTorch records them.
 *
 * A floating tensor can require grad. Every differentiable op whose inputs require grad (while
 * grad mode is on) creates a graph node holding edges to its inputs' nodes and the tensors its
 * backward formula needs; the result requires grad and names that node as its grad_fn.
 * gs_backward walks the graph in reverse topological order, sums gradients where paths join
 * and accumulates them into the leaves' grad. A saved tensor keeps its storage alive and
 * remembers the storage's version, so disposing a handle never breaks backward, and an
 * in-place write after saving is reported instead of silently giving wrong gradients.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- leaves and grads --------------------------------------------------------------- */

/* Marks a leaf as requiring grad (floating dtypes only), or not. A non-leaf's flag follows
 * from its inputs: changing it is an error, as in PyTorch. */
GS_API void gs_set_requires_grad(gs_tensor t, bool requires_grad);
/* torch's `t.data = src`: the leaf t views src's storage, with src's dtype, shape and strides,
 * from now on (the two share bytes and version counter; src stays valid). t keeps its handle,
 * requires_grad (src must then be floating), grad and place in a module, so what holds t (an
 * optimizer, a module) keeps working. A leaf view may be t (torch allows it): it is cut from
 * its base, a view no more (writes into it leave the base alone). op names the cause in the log's
 * tensor_set_data event (NULL: "set_data"). */
GS_API void gs_tensor_set_data(gs_tensor t, gs_tensor src, const char *op);
GS_API bool gs_requires_grad(gs_tensor t);
/* A leaf was not made by a recorded op (constructors, detach, or results under no_grad). */
GS_API bool gs_is_leaf(gs_tensor t);
/* The gradient accumulated into t, or GS_NO_TENSOR if none yet. The handle is borrowed: t owns
 * it, it stays valid until t is disposed or its grad is cleared, and it must not be disposed.
 * Backward adds into it in place (its version advances). */
GS_API gs_tensor gs_grad(gs_tensor t);
/* Clears t's gradient (PyTorch's zero_grad(set_to_none=True)): the next backward starts a
 * fresh one. */
GS_API void gs_zero_grad(gs_tensor t);
/* Makes grad itself (not a copy) t's gradient, as `t.grad = g` in PyTorch: grad must have t's
 * shape and dtype, and be a tensor the caller or a scope holds (not a parameter, another
 * tensor's gradient or an optimizer's state). t takes it over, as backward's gradients: the
 * caller must not dispose it any more; gs_zero_grad or t's disposal does. t's previous
 * gradient is disposed. grad may be a view (DistributedDataParallel's gradient_as_bucket_view
 * makes each gradient a view of its bucket); later backwards add into it in place.
 * GS_NO_TENSOR clears the gradient as gs_zero_grad. Returns 0, or -1 after reporting. */
GS_API int gs_set_grad(gs_tensor t, gs_tensor grad);
/* Makes a non-leaf keep its gradient in gs_grad after backward, as Tensor.retain_grad. */
GS_API void gs_retain_grad(gs_tensor t);
/* Whether a non-leaf asked for that (false for leaves, as Tensor.retains_grad). */
GS_API bool gs_retains_grad(gs_tensor t);
/* The name of the node that made t ("MulBackward"), or NULL for a leaf. */
GS_API const char *gs_grad_fn_name(gs_tensor t);

/* ---- backward ------------------------------------------------------------------------ */

/* Backward from a one-element tensor, seeded with 1. Frees the graph's saved tensors. */
GS_API void gs_backward(gs_tensor t);
/* Backward seeded with grad (t's shape; NULL handle means ones for a one-element t). With
 * retain_graph the saved tensors stay, so backward can run through the graph again. */
GS_API void gs_backward_with(gs_tensor t, gs_tensor grad, bool retain_graph);

/* ---- graph nodes ---------------------------------------------------------------------- */

/* A node of the autograd graph, as PyTorch's grad_fn: a handle by value (slot index and
 * generation, as gs_tensor's), stale-checked on every use. A node lives while a tensor it made,
 * a node it feeds, a leaf (its AccumulateGrad) or a holder (gs_node_retain) refers to it; a
 * handle to a node freed since is reported as stale, naming the event that freed it. Id 0 is
 * "no node". A node keeps the same handle for its whole life, so equal ids mean the same
 * node. */
typedef struct gs_node {
  uint64_t id;
} gs_node;

#define GS_NO_NODE ((gs_node){0})
static inline bool gs_node_is_none(gs_node n) { return n.id == 0; }

/* The node that made t (its grad_fn), or GS_NO_NODE for a leaf or a tensor made without
 * grad. */
GS_API gs_node gs_grad_fn(gs_tensor t);
/* The AccumulateGrad node of a leaf that requires grad (made on first use, as backward makes
 * it), or GS_NO_NODE for a tensor that has a grad_fn or does not require grad. */
GS_API gs_node gs_grad_accumulator(gs_tensor t);
/* True while n names a live node; never reports an error. */
GS_API bool gs_node_is_alive(gs_node n);
/* The node's kind ("MulBackward", "AccumulateGrad"), or NULL on a stale handle. */
GS_API const char *gs_node_name(gs_node n);
/* Its number in the event log and in error messages ("MulBackward #4"), or 0 on error. */
GS_API uint64_t gs_node_number(gs_node n);
/* How many inputs (edges) it has, or -1 on error. */
GS_API int gs_node_n_inputs(gs_node n);
/* The node input `input`'s gradient goes to (its grad_fn or AccumulateGrad), or GS_NO_NODE
 * when that input needs no gradient (or on error). */
GS_API gs_node gs_node_next(gs_node n, int input);
/* The dtype and shape input `input` had when the node was recorded; returns its ndim, or -1
 * on error. shape has room for GS_MAX_DIMS. */
GS_API int gs_node_input_shape(gs_node n, int input, int64_t *shape, gs_dtype *dtype);
/* The shape of the tensor the node made (a leaf's, for AccumulateGrad); returns its ndim, or
 * -1 on error. */
GS_API int gs_node_output_shape(gs_node n, int64_t *shape);
/* A reduction's node (sum, mean, max, min, logsumexp): the input dims it folded (returns how
 * many; dims has room for GS_MAX_DIMS, or is NULL), whether it kept them (keepdim), and
 * whether the caller named the dims (gs_sum(t, (int[]){0}, 1, ...) rather than all of them by
 * NULL, 0). -1 and GS_ERR_ARGUMENT for any other node. */
GS_API int gs_node_reduction(gs_node n, int *dims, bool *keepdim, bool *dims_given);
/* An AccumulateGrad node's leaf (borrowed: the leaf's owner disposes it), or GS_NO_TENSOR for
 * other nodes. A stale error if the leaf was disposed. */
GS_API gs_tensor gs_node_variable(gs_node n);
/* Whether a backward without retain_graph has run it and freed its saved tensors. */
GS_API bool gs_node_released(gs_node n);
/* Keeps n alive, with everything it feeds, until the matching gs_node_release (as a Python
 * grad_fn object holds its node): for bindings and tools that hold nodes longer than the
 * tensors that made them. */
GS_API void gs_node_retain(gs_node n);
GS_API void gs_node_release(gs_node n);

/* ---- gradient hooks on tensors -------------------------------------------------------- */

/* Called during backward with the gradient flowing into a tensor (borrowed: valid during the
 * call), before it reaches the tensor's grad_fn, or its .grad for a leaf, as PyTorch's
 * Tensor.register_hook. To change it, store a new tensor of grad's shape and dtype in
 * *replacement (the engine takes that handle and disposes it); leave *replacement empty to
 * keep grad. Return false to stop the backward pass (it then reports an error; gradients
 * already accumulated stay). Runs with grad mode off and the backward lock held. It may start
 * a backward of its own: that pass runs to completion, nested, before this one goes on (one
 * through the node whose hook this is, or through nodes a pass freed, is an error). Tensors
 * it makes belong to the caller's scope, as if made where backward was called. */
typedef bool (*gs_grad_hook_fn)(gs_tensor grad, gs_tensor *replacement, void *user_data);

/* A registered hook: the node it hangs on and its number. */
typedef struct gs_grad_hook {
  uint64_t node, id;
} gs_grad_hook;

/* Registers fn on t's gradient (t must require grad): on its grad_fn for a non-leaf, on its
 * AccumulateGrad for a leaf. Hooks run in registration order; each sees the previous one's
 * replacement. free_user_data (may be NULL) is called with user_data when the hook is
 * removed or its node freed. Returns the hook, or an empty one (id 0) on error. */
GS_API gs_grad_hook gs_register_grad_hook(gs_tensor t, gs_grad_hook_fn fn, void *user_data,
                                          void (*free_user_data)(void *user_data));
/* The same hook on a node (a grad_fn), as PyTorch's Node.register_prehook: it sees the
 * gradient flowing into the node before its formula runs, after the hooks of the node's output
 * tensor registered before it. */
GS_API gs_grad_hook gs_node_register_pre_hook(gs_node node, gs_grad_hook_fn fn, void *user_data,
                                              void (*free_user_data)(void *user_data));
/* A hook after a node's formula, as PyTorch's Node.register_hook: it gets the gradients the
 * formula made for each input (grad_inputs[i], GS_NO_TENSOR where an input needs none) and
 * the gradient the node was given (grad_output). replacements[i] starts as grad_inputs[i]
 * (kept); the hook may set a new tensor of the same shape and dtype (PyTorch's returned
 * gradient), or GS_NO_TENSOR (PyTorch's None: the input gets no gradient from this node).
 * Returns false to stop the backward pass. Rules as gs_grad_hook_fn's (grad mode off, no
 * backward; what it makes is the caller's). */
typedef bool (*gs_node_post_hook_fn)(const gs_tensor *grad_inputs, int n_inputs,
                                     gs_tensor grad_output, gs_tensor *replacements,
                                     void *user_data);
GS_API gs_grad_hook gs_node_register_post_hook(gs_node node, gs_node_post_hook_fn fn,
                                               void *user_data,
                                               void (*free_user_data)(void *user_data));
/* Removes a hook; removing it again, or after its node was freed, does nothing (as PyTorch's
 * RemovableHandle.remove). A hook may remove itself or others while it runs; removing one
 * from another thread while a backward runs it is the caller's race to avoid. */
GS_API void gs_grad_hook_remove(gs_grad_hook hook);

/* ---- functions with a backward of their own (torch.autograd.Function) ---------------- */

/* What a custom function's backward is given. grad_output is the gradient of the function's
 * output; saved are the tensors gs_function_record saved, in its order. Both are handles
 * valid during the call; under create_graph they carry history (grad_output its own, a saved
 * tensor the history of what it was saved from), so what is computed from them can be
 * differentiated again. For each input i with needs[i], the backward stores a tensor of that
 * input's shape and dtype in grad_inputs[i] (the engine takes that handle and disposes it), or
 * leaves it empty: no gradient flows there. */
typedef struct gs_function_call {
  gs_tensor grad_output;
  const gs_tensor *saved;
  int n_saved;
  const bool *needs;
  gs_tensor *grad_inputs;
  int n_inputs;
  void *user_data;
} gs_function_call;

/* Returns false to stop the backward pass (an error is then reported, after any of its own).
 * Runs with grad mode as the pass sets it (on under create_graph) and the backward lock held.
 * It may start a backward or gs_autograd_grad of its own, as torch allows (reentrant
 * checkpointing recomputes a segment and differentiates it here): that pass runs to
 * completion, nested, and the outer one goes on with its state as it was. A nested pass
 * through this node, or through nodes a pass freed, is an error. Tensors it makes belong to
 * the caller's scope, as a hook's. */
typedef bool (*gs_function_backward_fn)(const gs_function_call *call);

/* A custom function: its node's name (as torch names a Function's node, "MySquareBackward";
 * copied), its backward, the tensors the backward needs (saved as an op saves its own: a
 * later in-place write to one is an error at backward, the event log lists them, and a
 * backward without retain_graph frees them), and the data the backward gets, freed with
 * free_user_data (may be NULL) when the node is freed, or at once when no node is made. */
typedef struct gs_function {
  const char *name;
  gs_function_backward_fn backward;
  const gs_tensor *saved;
  int n_saved;
  void *user_data;
  void (*free_user_data)(void *user_data);
} gs_function;

/* Makes output the result of fn over inputs[0..n_inputs), as torch.autograd.Function.apply
 * does once its forward has run: when grad mode is on and an input requires grad, output
 * (computed by the caller, with no history of its own, for instance under gs_no_grad_begin)
 * gets a node of kind fn->name whose edges lead to the inputs' histories, and a backward
 * through it calls fn->backward. An output that is inputs[k] itself was written in place by
 * the forward (torch's ctx.mark_dirty): its old history becomes the node's input edge, as for
 * an in-place op, and a leaf that requires grad is refused. Returns 1 when a node was made, 0
 * when none was needed, -1 on error; user_data is taken in every case. */
GS_API int gs_function_record(gs_tensor output, const gs_tensor *inputs, int n_inputs,
                              const gs_function *fn);
/* Whether n is a custom function's node (made by gs_function_record): its name is the
 * function's own, not an op's. */
GS_API bool gs_node_is_function(gs_node n);

/* ---- backward from several outputs, and gradients without .grad --------------------- */

/* One backward pass from n outputs (torch.autograd.backward): grads[i] seeds outputs[i]
 * (grads may be NULL, an entry may be GS_NO_TENSOR: ones, for a one-element output). Shared
 * parts of their graphs run once, with the seeds' contributions summed. */
GS_API void gs_backward_many(const gs_tensor *outputs, const gs_tensor *grads, int n,
                             bool retain_graph);
/* torch.autograd.grad: the gradients of the outputs (seeded as gs_backward_many) with
 * respect to inputs, written to grads_out[i] as new tensors the caller owns, without touching
 * any tensor's .grad. Only the part of the graph between the outputs and the inputs runs. An
 * input no gradient reaches is an error, unless allow_unused (then grads_out[i] is
 * GS_NO_TENSOR). The graph's saved tensors are freed unless retain_graph. Returns 0, or -1
 * after an error (grads_out all empty). */
GS_API int gs_autograd_grad(const gs_tensor *outputs, const gs_tensor *grad_outputs, int n_outputs,
                            const gs_tensor *inputs, int n_inputs, bool retain_graph,
                            bool allow_unused, gs_tensor *grads_out);

/* How a backward pass runs (gs_backward_many_with, gs_autograd_grad_with,
 * gs_backward_inputs_with); {0}: as gs_backward. */
typedef struct gs_backward_options {
  bool retain_graph; /* keep the saved tensors, so backward can run through the graph again */
  /* Record the graph of the backward formulas (torch's create_graph): the gradients made, and
   * the .grad of leaves, have grad_fns and can be differentiated again (double backward:
   * gradient penalties, Hessian-vector products, higher derivatives). Every node the pass
   * runs must have a differentiable formula; otherwise the pass fails before running
   * anything, with an error naming the node kind (gs_autograd_node_kind_twice says which do).
   * As in PyTorch, pass retain_graph too if the first graph is needed again. */
  bool create_graph;
} gs_backward_options;

/* gs_backward_many, with options (NULL: the defaults). */
GS_API void gs_backward_many_with(const gs_tensor *outputs, const gs_tensor *grads, int n,
                                  const gs_backward_options *options);
/* gs_autograd_grad, with options (NULL: the defaults). */
GS_API int gs_autograd_grad_with(const gs_tensor *outputs, const gs_tensor *grad_outputs,
                                 int n_outputs, const gs_tensor *inputs, int n_inputs,
                                 const gs_backward_options *options, bool allow_unused,
                                 gs_tensor *grads_out);

/* torch.autograd.backward(..., inputs=...): one backward pass from the outputs (seeded as
 * gs_backward_many) whose gradients accumulate only into the .grad of the n_inputs tensors
 * given (leaves or not: a non-leaf keeps the gradient as if it had retained it); every other
 * .grad is left alone. An input no gradient reaches keeps its .grad as it was. The graph's
 * saved tensors are freed unless retain_graph. Returns 0, or -1 after an error (then no .grad
 * has changed). */
GS_API int gs_backward_inputs(const gs_tensor *outputs, const gs_tensor *grads, int n_outputs,
                              const gs_tensor *inputs, int n_inputs, bool retain_graph);
/* gs_backward_inputs, with options (NULL: the defaults). */
GS_API int gs_backward_inputs_with(const gs_tensor *outputs, const gs_tensor *grads, int n_outputs,
                                   const gs_tensor *inputs, int n_inputs,
                                   const gs_backward_options *options);

/* ---- backward hooks ------------------------------------------------------------------ */

/* Callbacks around every backward pass in the process, for layers that must act while it
 * runs (DistributedDataParallel launches a bucket's allreduce as soon as its gradients are
 * final, overlapping the rest of backward). Any callback may be NULL.
 *  - begin(root): before any formula runs. A pass nested in another (started from a custom
 *    function's backward or a gradient hook) is part of the outer one: begin and end are
 *    called for the outermost pass only.
 *  - grad_ready(leaf, grad): the leaf's gradient has been accumulated for the last time in
 *    this pass (a leaf's AccumulateGrad node runs once per pass, after every path into it has
 *    delivered): grad is gs_grad(leaf), borrowed. Called with the backward lock held and grad
 *    mode off: it must not start another backward; reading grad is fine.
 *  - end(root): after the pass has finished and released its lock; it may run ops and even
 *    a backward of its own (hooks see that one too).
 * Leaves no gradient reached get no grad_ready call. Hooks run on the thread that called
 * backward, in registration order. */
typedef struct gs_backward_hooks {
  void (*begin)(gs_tensor root, void *user_data);
  void (*grad_ready)(gs_tensor leaf, gs_tensor grad, void *user_data);
  void (*end)(gs_tensor root, void *user_data);
  /* grad_home(leaf, claim): where the leaf's gradient may be written directly in this pass,
   * a contiguous tensor of its shape and dtype (borrowed) whose bytes nothing reads until the
   * leaf takes its gradient, or GS_NO_TENSOR. Asked (claim true) by a formula that can write
   * its result in place (the weight gradient of a matrix product, for a leaf with no gradient
   * yet); give a home at most once per leaf per pass. Asked again without claim as the leaf
   * takes its gradient: answer the home given in this pass, if any. A gradient written there
   * becomes the leaf's grad as a view of it (no copy). DDP's gradient_as_bucket_view offers
   * each parameter's place in its bucket. */
  gs_tensor (*grad_home)(gs_tensor leaf, bool claim, void *user_data);
} gs_backward_hooks;

/* Registers hooks (copied) with user_data; returns a handle for gs_backward_hooks_remove, or
 * 0 when the table (GS_BACKWARD_HOOKS_MAX) is full. */
#define GS_BACKWARD_HOOKS_MAX 32
GS_API int gs_backward_hooks_add(const gs_backward_hooks *hooks, void *user_data);
GS_API void gs_backward_hooks_remove(int handle);

/* ---- saved-tensor hooks ---------------------------------------------------------------- */

/* A pair of hooks on the tensors backward nodes save, as PyTorch's
 * torch.autograd.graph.saved_tensors_hooks. While a pair is pushed on a thread, every tensor a
 * node saves when an op records it there is given to pack, and what pack returns is kept in
 * the node instead of the tensor (the node then holds no reference to its storage); when a
 * backward (or gs_node_saved) needs it, unpack turns that back into the tensor to use.
 *  - pack(t, &packed, user_data): t is a new handle the hook owns (a view of the saved tensor
 *    that does not require grad: keep it, or dispose it); write what to keep into *packed.
 *    An op's packs run, in slot order, once it has saved its last slot (so its node's
 *    creation in the log lists them all), or, for an op that leaves its last slot empty,
 *    before the next node is recorded, the pair is popped or the node is backpropagated.
 *    Returns false after reporting an error (the slot then holds nothing, and a backward
 *    through the node fails naming it). Saves made while a pack hook runs are not hooked.
 *  - unpack(packed, user_data): returns a new handle (the engine takes it over) to a tensor of
 *    the saved tensor's shape and dtype (anything else is an error naming both), or
 *    GS_NO_TENSOR after reporting, which stops the backward. A backward calls it once for each
 *    hooked slot of each node it runs, before the node's formula, as PyTorch's nodes unpack
 *    theirs on entry.
 *  - free_packed(packed, user_data) (may be NULL): the node's saved tensors are freed (after a
 *    backward without retain_graph, or with the node); any thread, any time.
 *  - free_user_data (may be NULL): once the pair is popped and no packed value needs it.
 * Tensors saved while no pair is pushed are kept as before, with their version check. A
 * hooked tensor's version is checked only when unpack gives back a tensor over the storage it
 * was saved from (PyTorch checks none). The log records each pack and unpack (saved_pack,
 * saved_unpack). */
typedef struct gs_saved_tensor_hooks {
  bool (*pack)(gs_tensor t, void **packed, void *user_data);
  gs_tensor (*unpack)(void *packed, void *user_data);
  void (*free_packed)(void *packed, void *user_data);
  void *user_data;
  void (*free_user_data)(void *user_data);
} gs_saved_tensor_hooks;

/* Pushes a pair (copied) on this thread's stack: the innermost pair is the one used. 0, or -1
 * after reporting (NULL hooks, no pack or unpack). */
GS_API int gs_saved_tensor_hooks_push(const gs_saved_tensor_hooks *hooks);
/* Pops this thread's innermost pair; an error when none is pushed. */
GS_API void gs_saved_tensor_hooks_pop(void);
/* How many pairs are pushed on this thread. */
GS_API int gs_saved_tensor_hooks_depth(void);
/* torch.autograd.graph.disable_saved_tensors_hooks: while disabled on this thread, a push is
 * an error carrying the message of the innermost disable (copied; NULL: a default). Disables
 * nest: each needs its enable. Returns how many were open before. */
GS_API int gs_saved_tensor_hooks_disable(const char *message);
GS_API void gs_saved_tensor_hooks_enable(void);

/* The numbers node h recorded with its op for its formula, as torch's grad_fn._saved_* shows
 * them: MulScalarBackward's and DivScalarBackward's scalar, PowScalarBackward's exponent and
 * ClampBackward's min (reals[0]); AddmmBackward's beta and alpha (reals[0], reals[1]); the dim
 * of softmax and log_softmax (ints[0]). What each number means is its kind's (the op's source
 * says). Copies GS_NODE_REALS reals and GS_NODE_INTS ints (either array may be NULL); 0, or
 * -1 after an error. */
#define GS_NODE_REALS 4
#define GS_NODE_INTS 16
GS_API int gs_node_scalars(gs_node h, double *reals, int64_t *ints);

/* How many tensors node h saved, or -1 after an error. */
GS_API int gs_node_n_saved(gs_node h);
/* Saved slot i of node h as a new handle the caller disposes, unpacked by its hooks if it was
 * packed (as grad_fn._saved_* in PyTorch); GS_NO_TENSOR after an error (freed by a backward,
 * unpack failed). */
GS_API gs_tensor gs_node_saved(gs_node h, int i);

/* ---- grad mode ----------------------------------------------------------------------- */

/* Whether ops record graph nodes on this thread (on by default). */
GS_API bool gs_grad_enabled(void);
/* Sets grad mode for this thread; returns the previous setting. */
GS_API bool gs_set_grad_enabled(bool enabled);
/* A no_grad block: ops inside record nothing. Blocks nest; each begin needs its end. */
GS_API void gs_no_grad_begin(void);
GS_API void gs_no_grad_end(void);

/* ---- gradcheck ----------------------------------------------------------------------- */

/* The function under test: builds an output from the inputs (the gradcheck owns neither: it
 * disposes the returned tensor). */
typedef gs_tensor (*gs_gradcheck_fn)(const gs_tensor *inputs, int n_inputs, void *user_data);

typedef struct gs_gradcheck_options {
  double eps;  /* central difference step (default 1e-6) */
  double atol; /* default 1e-5 */
  double rtol; /* default 1e-3 */
} gs_gradcheck_options;

typedef struct gs_gradcheck_result {
  bool passed;
  int worst_input;      /* the input holding the worst element (-1 if none was compared) */
  int64_t worst_index;  /* its flat (row-major) index in that input */
  int64_t worst_output; /* and the output element whose derivative was compared */
  double analytic;      /* d output / d input from backward */
  double numeric;       /* the same from central differences */
  double error;         /* |analytic - numeric| - (atol + rtol * |numeric|): > 0 fails */
  char message[512];    /* one sentence saying what was compared and how it went */
} gs_gradcheck_result;

/* Compares the analytic gradient (one backward per output element) of every input that
 * requires grad with float64 central finite differences; other inputs (conditions, indices)
 * pass through unchanged. Checked inputs must be f64 and must not overlap themselves in
 * memory (no expanded inputs). options NULL: the defaults. Returns result->passed; result may
 * be NULL. */
GS_API bool gs_gradcheck(gs_gradcheck_fn fn, void *user_data, const gs_tensor *inputs,
                         int n_inputs, const gs_gradcheck_options *options,
                         gs_gradcheck_result *result);

/* ---- introspection -------------------------------------------------------------------- */

/* The names of every kind of backward node the engine can create ("AddBackward", ...), in no
 * particular order; returns how many there are and writes up to max of them into names. */
GS_API int gs_autograd_node_kinds(const char **names, int max);
/* Whether backward nodes of the kind named (gs_autograd_node_kinds) have a differentiable
 * formula, so a create_graph pass (double backward) may run through them; false for a name
 * that is not a kind. */
GS_API bool gs_autograd_node_kind_twice(const char *name);

#ifdef __cplusplus
}
#endif
