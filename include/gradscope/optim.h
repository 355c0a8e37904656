/* gradscope/optim.h: optimizers (SGD, Adam, AdamW) with PyTorch's update formulas.
 *
 * An optimizer holds a list of parameters (borrowed: the caller or a module owns them) and
 * its state tensors (momentum buffers, exp_avg, exp_avg_sq), which it owns outside every scope
 * so that the scope of a training step does not dispose them. gs_optimizer_step updates every
 * parameter that has a gradient, under no_grad; parameters without one are skipped (PyTorch).
 * gs_optimizer_dispose frees the state; using a disposed optimizer is a stale-handle error.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_optimizer {
  uint64_t id;
} gs_optimizer;

/* torch.optim.SGD: g += weight_decay * p; buf = momentum * buf + (1 - dampening) * g (the
 * first step buf = g); g = nesterov ? g + momentum * buf : buf; p -= lr * g. */
typedef struct gs_sgd_options {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
} gs_sgd_options;

#define GS_SGD_OPTIONS_DEFAULT ((gs_sgd_options){1e-3, 0.0, 0.0, 0.0, false})

/* torch.optim.Adam / AdamW, with bias correction (and AMSGrad if asked). */
typedef struct gs_adam_options {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad;
} gs_adam_options;

/* lr 1e-3, betas 0.9/0.999, eps 1e-8, no weight decay. AdamW's PyTorch default weight decay is
 * 1e-2: set it explicitly. */
#define GS_ADAM_OPTIONS_DEFAULT ((gs_adam_options){1e-3, 0.9, 0.999, 1e-8, 0.0, false})

/* params: n alive, floating leaf tensors (copied: the array need not outlive the call).
 * opt NULL: the defaults above. Invalid options (lr < 0, momentum < 0, weight_decay < 0,
 * nesterov without momentum or with dampening, eps < 0, a beta outside [0, 1)) are errors,
 * with PyTorch's messages. */
GS_API gs_optimizer gs_sgd_new(const gs_tensor *params, int n, const gs_sgd_options *opt);
/* Adam: L2 weight decay is added to the gradient. */
GS_API gs_optimizer gs_adam_new(const gs_tensor *params, int n, const gs_adam_options *opt);
/* AdamW: decoupled weight decay, p -= lr * weight_decay * p before the Adam update. */
GS_API gs_optimizer gs_adamw_new(const gs_tensor *params, int n, const gs_adam_options *opt);

/* One update of every parameter that has a gradient, under no_grad. */
GS_API void gs_optimizer_step(gs_optimizer o);
/* Clears every parameter's gradient (zero_grad(set_to_none=True)). */
GS_API void gs_optimizer_zero_grad(gs_optimizer o);
/* Disposes the optimizer's state tensors and the optimizer (not the parameters). */
GS_API void gs_optimizer_dispose(gs_optimizer o);
/* How many parameters it updates, or -1 for a stale handle. */
GS_API int gs_optimizer_parameter_count(gs_optimizer o);
/* The learning rate the next step uses, or NAN for a stale handle. Learning-rate schedulers
 * (torch.optim.lr_scheduler) read and change it between steps; the other options and the
 * state (momentum buffers, Adam's moments and step counts) are unchanged by a new rate. */
GS_API double gs_optimizer_lr(gs_optimizer o);
/* Sets it (lr >= 0, else an error and nothing changes). */
GS_API void gs_optimizer_set_lr(gs_optimizer o, double lr);
/* The momentum the next step uses: SGD's momentum, Adam's and AdamW's beta1 (what
 * torch.optim.lr_scheduler.OneCycleLR cycles), or NAN for a stale handle. */
GS_API double gs_optimizer_momentum(gs_optimizer o);
/* Sets it (SGD: >= 0, and > 0 with nesterov; Adam: in [0, 1); else an error and nothing
 * changes). The state is kept: SGD makes its momentum buffer on the first step with momentum. */
GS_API void gs_optimizer_set_momentum(gs_optimizer o, double momentum);

/* The state of parameter i as torch.optim's state_dict names it: SGD's "momentum_buffer",
 * Adam's "exp_avg", "exp_avg_sq" and (amsgrad) "max_exp_avg_sq". A borrowed handle the
 * optimizer holds, GS_NO_TENSOR before the parameter's first step (no error then); an unknown
 * name or i out of range is an error. */
GS_API gs_tensor gs_optimizer_state(gs_optimizer o, int i, const char *name);
/* Adam's step count of parameter i (0 before its first step; 0 for SGD), or -1 on error. */
GS_API int64_t gs_optimizer_state_step(gs_optimizer o, int i);
/* load_state_dict: values (the parameter's shape; copied, converted to its dtype) become that
 * state; an Adam parameter's other moments start at zeros if they had none. */
GS_API bool gs_optimizer_load_state(gs_optimizer o, int i, const char *name, gs_tensor values);
/* Sets Adam's step count of parameter i (>= 0). */
GS_API bool gs_optimizer_load_state_step(gs_optimizer o, int i, int64_t step);

#ifdef __cplusplus
}
#endif
