/* optim-impl.h: what optimizer.c shares with the one-pass steps (fused-step.c). */
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
