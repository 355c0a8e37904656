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
/* Makes a non-leaf keep its gradient in gs_grad after backward, as Tensor.retain_grad. */
GS_API void gs_retain_grad(gs_tensor t);
/* The name of the node that made t ("MulBackward"), or NULL for a leaf. */
GS_API const char *gs_grad_fn_name(gs_tensor t);

/* ---- backward ------------------------------------------------------------------------ */

/* Backward from a one-element tensor, seeded with 1. Frees the graph's saved tensors. */
GS_API void gs_backward(gs_tensor t);
/* Backward seeded with grad (t's shape; NULL handle means ones for a one-element t). With
 * retain_graph the saved tensors stay, so backward can run through the graph again. */
GS_API void gs_backward_with(gs_tensor t, gs_tensor grad, bool retain_graph);

/* ---- backward hooks ------------------------------------------------------------------ */

/* Callbacks around every backward pass in the process, for layers that must act while it
 * runs (DistributedDataParallel launches a bucket's allreduce as soon as its gradients are
 * final, overlapping the rest of backward). Any callback may be NULL.
 *  - begin(root): before any formula runs.
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
} gs_backward_hooks;

/* Registers hooks (copied) with user_data; returns a handle for gs_backward_hooks_remove, or
 * 0 when the table (GS_BACKWARD_HOOKS_MAX) is full. */
#define GS_BACKWARD_HOOKS_MAX 32
GS_API int gs_backward_hooks_add(const gs_backward_hooks *hooks, void *user_data);
GS_API void gs_backward_hooks_remove(int handle);

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

#ifdef __cplusplus
}
#endif
