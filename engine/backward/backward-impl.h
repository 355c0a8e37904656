/* backward-impl.h: what the backward layer's files share. */
#pragma once

#include "ops-impl.h"

/* Adds grad into the gradient of the tensor that asked node n to retain it (gs_retain_grad);
 * accumulate.c. */
void gs__accumulate_retained(gs__node *n, gs_tensor grad);

/* Calls the registered backward hooks (hooks.c) at one point of a pass: t is the root for
 * BEGIN and END, the leaf for GRAD_READY (with its gradient). */
typedef enum gs__backward_hook_point {
  GS__HOOK_BEGIN,
  GS__HOOK_GRAD_READY,
  GS__HOOK_END,
} gs__backward_hook_point;
void gs__backward_hooks_call(gs__backward_hook_point point, gs_tensor t, gs_tensor grad);

/* Runs node n's gradient hooks (grad-hooks.c) on *grad, the gradient flowing into it (owned by
 * the pass): a hook's replacement takes its place. False after reporting, when a hook stopped
 * the pass or returned a gradient of another shape. */
bool gs__grad_hooks_run(gs__node *n, gs_tensor *grad);
/* Runs node n's post-hooks (gs_node_register_post_hook), if it has any, on the gradients its
 * formula made (grads[i], owned by the pass; replacements take their place) and the gradient
 * it was given. False after reporting, as gs__grad_hooks_run. */
bool gs__node_post_hooks_run(gs__node *n, gs_tensor *grads, gs_tensor grad_output);

/* Called by a formula that runs user code (a custom function's backward, function.c) when
 * that code failed: the pass stops after the formula returns, with the gradients it made
 * disposed, and reports the error already pending. */
void gs__formula_stop(void);

/* Called by AccumulateGrad's formula when it made the gradient it was given (the pass's own
 * temporary) the leaf's .grad instead of a clone of it: the pass then does not dispose it. */
void gs__formula_took_grad(void);
