/* optim-impl.h: what optimizer.c shares with the one-pass steps (fused-step.c) and with the
 * steps of the other kinds (more-optimizers.c). */
#pragma once

#include <stdbool.h>

#include <gradscope/gradscope.h>

/* One SGD step of parameter p with gradient g and momentum buffer buf (0 without momentum;
 * with momentum it must exist already: the first step makes it), as one pass, with the same
 * results and in-place write events as the ops' path. False, having changed nothing, when the
 * tensors' layouts are not ones the pass walks: the caller then runs the ops. */
bool gs__sgd_fused_step(const gs_sgd_options *o, gs_tensor p, gs_tensor g, gs_tensor buf);

/* One Adam (decoupled: AdamW) step of p with gradient g at step number `step` (already
 * counted), its state exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq already made, as
 * one pass, with the same results and in-place write events as the ops' path; false, having
 * changed nothing, when the layouts are not ones the pass walks. */
bool gs__adam_fused_step(const gs_adam_options *o, bool decoupled, int64_t step, gs_tensor p,
                         gs_tensor g, gs_tensor exp_avg, gs_tensor exp_avg_sq,
                         gs_tensor max_exp_avg_sq);

/* ---- the kinds and per-parameter state optimizer.c and more-optimizers.c share ---------- */

typedef enum gs__opt_kind {
  GS__OPT_SGD,
  GS__OPT_ADAM,
  GS__OPT_ADAMW,
  GS__OPT_ADADELTA,
  GS__OPT_ADAMAX,
  GS__OPT_NADAM,
  GS__OPT_RADAM,
  GS__OPT_ASGD,
  GS__OPT_RPROP
} gs__opt_kind;

/* The options of the kinds more-optimizers.c steps (one of them, by the optimizer's kind). */
typedef union gs__more_options {
  gs_adadelta_options adadelta;
  gs_adamax_options adamax;
  gs_nadam_options nadam;
  gs_radam_options radam;
  gs_asgd_options asgd;
  gs_rprop_options rprop;
} gs__more_options;

/* One parameter's state. The tensors are named by kind (gs__more_state_names): SGD's
 * momentum_buffer is buf; Adam's exp_avg, exp_avg_sq, max_exp_avg_sq are buf, sq, max_sq. */
typedef struct gs__param_state {
  gs_tensor param;
  gs_tensor buf, sq, max_sq;
  int64_t step;               /* the per-parameter step count */
  double eta, mu, mu_product; /* ASGD's eta and mu, NAdam's mu_product (torch keeps them as
                               * float32 tensors: these hold float32 values) */
} gs__param_state;

/* Takes t out of the current scope, held by optimizer `owner` (GS_NO_TENSOR stays so). */
gs_tensor gs__optim_own(gs_tensor t, uint64_t owner);
/* Disposes a temporary of a step (nothing for GS_NO_TENSOR). */
void gs__optim_drop(gs_tensor t);

/* Makes an optimizer of a kind with its (checked) options: exactly one of sgd, adam, more. */
gs_optimizer gs__optimizer_new(gs__opt_kind kind, const gs_tensor *params, int n,
                               const gs_sgd_options *sgd, const gs_adam_options *adam,
                               const gs__more_options *more, const char *fn);

/* For a kind of more-optimizers.c: its name ("Adadelta"); its state tensors' names in slot
 * order (buf, sq) with NULL where a slot is unused; its learning rate; its momentum (beta1),
 * NULL for a kind without one. */
const char *gs__more_kind_name(gs__opt_kind kind);
void gs__more_state_names(gs__opt_kind kind, const char *names[3]);
double *gs__more_lr(gs__opt_kind kind, gs__more_options *o);
double *gs__more_momentum(gs__opt_kind kind, gs__more_options *o);
/* Its scalar state by torch's name ("eta", "mu", "mu_product"), or NULL if it has none so
 * named. */
double *gs__more_scalar(gs__opt_kind kind, gs__param_state *s, const char *name);
/* Makes a parameter's state as torch does on its first step (step count untouched); false if a
 * tensor could not be made. */
bool gs__more_init_state(gs__opt_kind kind, const gs__more_options *o, gs__param_state *s,
                         uint64_t owner);
/* One step of the parameter (it has a gradient), under no_grad. */
void gs__more_step(gs__opt_kind kind, const gs__more_options *o, gs__param_state *s,
                   uint64_t owner);
