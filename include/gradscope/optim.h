/* gradscope/optim.h: optimizers (SGD, Adam, AdamW, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop)
 * with PyTorch 1.13's update formulas.
 *
 * An optimizer holds a list of parameters (borrowed: the caller or a module owns them) and
 * its state tensors (momentum buffers, exp_avg, exp_avg_sq, ...), which it owns outside every scope
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

/* torch.optim.Adadelta: g (+ weight_decay * p; negated with maximize);
 * square_avg = rho * square_avg + (1 - rho) g^2; delta = sqrt(acc_delta + eps) /
 * sqrt(square_avg + eps) * g; acc_delta = rho * acc_delta + (1 - rho) delta^2; p -= lr * delta. */
typedef struct gs_adadelta_options {
  double lr, rho, eps, weight_decay;
  bool maximize;
} gs_adadelta_options;
#define GS_ADADELTA_OPTIONS_DEFAULT ((gs_adadelta_options){1.0, 0.9, 1e-6, 0.0, false})

/* torch.optim.Adamax: exp_avg as Adam's; exp_inf = max(beta2 * exp_inf, |g| + eps);
 * p -= lr / (1 - beta1^t) * exp_avg / exp_inf. */
typedef struct gs_adamax_options {
  double lr, beta1, beta2, eps, weight_decay;
  bool maximize;
} gs_adamax_options;
#define GS_ADAMAX_OPTIONS_DEFAULT ((gs_adamax_options){2e-3, 0.9, 0.999, 1e-8, 0.0, false})

/* torch.optim.NAdam: Adam's moments with Nesterov momentum, the momentum schedule
 * mu_t = beta1 (1 - 0.96^(t momentum_decay) / 2) and its running product mu_product. */
typedef struct gs_nadam_options {
  double lr, beta1, beta2, eps, weight_decay, momentum_decay;
} gs_nadam_options;
#define GS_NADAM_OPTIONS_DEFAULT ((gs_nadam_options){2e-3, 0.9, 0.999, 1e-8, 0.0, 4e-3})

/* torch.optim.RAdam: Adam's moments; while the variance's rho_t <= 5 an SGD-with-momentum step
 * p -= lr * exp_avg / (1 - beta1^t), after that the rectified adaptive step. */
typedef struct gs_radam_options {
  double lr, beta1, beta2, eps, weight_decay;
} gs_radam_options;
#define GS_RADAM_OPTIONS_DEFAULT ((gs_radam_options){1e-3, 0.9, 0.999, 1e-8, 0.0})

/* torch.optim.ASGD: p *= 1 - lambd * eta; p -= eta * g; ax, the average of the parameters
 * from step t0 on (a copy of p before); eta = lr / (1 + lambd lr t)^alpha and
 * mu = 1 / max(1, t - t0) after each step. */
typedef struct gs_asgd_options {
  double lr, lambd, alpha, t0, weight_decay;
  bool maximize;
} gs_asgd_options;
#define GS_ASGD_OPTIONS_DEFAULT ((gs_asgd_options){1e-2, 1e-4, 0.75, 1e6, 0.0, false})

/* torch.optim.Rprop: each element's step_size (lr at first) times eta_plus where the gradient
 * kept its sign, eta_minus where it changed (and that gradient counts as 0), clamped to
 * [step_size_min, step_size_max]; p -= sign(g) * step_size; prev = g. */
typedef struct gs_rprop_options {
  double lr, eta_minus, eta_plus, step_size_min, step_size_max;
  bool maximize;
} gs_rprop_options;
#define GS_RPROP_OPTIONS_DEFAULT ((gs_rprop_options){1e-2, 0.5, 1.2, 1e-6, 50.0, false})

/* The constructors of these, as gs_sgd_new's (opt NULL: the defaults above); invalid options
 * are errors with PyTorch's messages (lr, eps, weight_decay, momentum_decay < 0, rho outside
 * [0, 1], a beta outside [0, 1), not 0 < eta_minus < 1 < eta_plus). */
GS_API gs_optimizer gs_adadelta_new(const gs_tensor *params, int n, const gs_adadelta_options *opt);
GS_API gs_optimizer gs_adamax_new(const gs_tensor *params, int n, const gs_adamax_options *opt);
GS_API gs_optimizer gs_nadam_new(const gs_tensor *params, int n, const gs_nadam_options *opt);
GS_API gs_optimizer gs_radam_new(const gs_tensor *params, int n, const gs_radam_options *opt);
GS_API gs_optimizer gs_asgd_new(const gs_tensor *params, int n, const gs_asgd_options *opt);
GS_API gs_optimizer gs_rprop_new(const gs_tensor *params, int n, const gs_rprop_options *opt);

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
/* The momentum the next step uses: SGD's momentum, the beta1 of Adam, AdamW, Adamax, NAdam and
 * RAdam (what torch.optim.lr_scheduler.OneCycleLR cycles), or NAN for a stale handle or a kind
 * without one (Adadelta, ASGD, Rprop: an error). */
GS_API double gs_optimizer_momentum(gs_optimizer o);
/* Sets it (SGD: >= 0, and > 0 with nesterov; Adam: in [0, 1); else an error and nothing
 * changes). The state is kept: SGD makes its momentum buffer on the first step with momentum. */
GS_API void gs_optimizer_set_momentum(gs_optimizer o, double momentum);

/* The state of parameter i as torch.optim's state_dict names it: SGD's "momentum_buffer",
 * Adam's "exp_avg", "exp_avg_sq" and (amsgrad) "max_exp_avg_sq"; Adadelta's "square_avg" and
 * "acc_delta"; Adamax's "exp_avg" and "exp_inf"; NAdam's and RAdam's "exp_avg" and "exp_avg_sq";
 * ASGD's "ax"; Rprop's "prev" and "step_size". A borrowed handle the
 * optimizer holds, GS_NO_TENSOR before the parameter's first step (no error then); an unknown
 * name or i out of range is an error. */
GS_API gs_tensor gs_optimizer_state(gs_optimizer o, int i, const char *name);
/* The step count of parameter i (0 before its first step; always 0 for SGD), or -1 on error. */
GS_API int64_t gs_optimizer_state_step(gs_optimizer o, int i);
/* load_state_dict: values (the parameter's shape; copied, converted to its dtype) become that
 * state; the parameter's other state tensors, if it had none, start as its first step makes
 * them (zeros; Rprop's step_size filled with lr). */
GS_API bool gs_optimizer_load_state(gs_optimizer o, int i, const char *name, gs_tensor values);
/* Sets the step count of parameter i (>= 0). */
GS_API bool gs_optimizer_load_state_step(gs_optimizer o, int i, int64_t step);
/* The scalar state of parameter i, which torch keeps as float32 0-d tensors: ASGD's "eta" and
 * "mu", NAdam's "mu_product" (their values before the first step: lr rounded to float32, 1, 1).
 * NAN with an error for another name or i out of range. */
GS_API double gs_optimizer_state_scalar(gs_optimizer o, int i, const char *name);
/* Sets it (rounded to float32, as torch's tensor holds it). */
GS_API bool gs_optimizer_load_state_scalar(gs_optimizer o, int i, const char *name, double value);

#ifdef __cplusplus
}
#endif
