/* recurrent-grad.h: the fused recurrence's backward with the public ops (recurrent-grad.c),
 * which recurrent.c's formula runs when the backward creates a graph. */
#pragma once

#include "ops-impl.h"

/* One recurrence node's geometry (recurrent.c's node layout). */
typedef struct gs__recurrence_layout {
  gs_rnn_mode mode;
  bool reverse;
  int64_t hidden, batch, steps, rows;
  const int64_t *bs;  /* [steps]: active sequences per step */
  const int64_t *off; /* [steps]: where each step's rows start */
  int c0_in, bhh_in;  /* input numbers of c0 and b_hh, -1 when not given */
} gs__recurrence_layout;

/* Fills grads[] (input projection, h0, W_hh, then c0 and b_hh when given) from the gradient g
 * of the node's output, recomputing the steps from the saved inputs x, h0, c0 (LSTM) and
 * whh, bhh (GRU, or GS_NO_TENSOR). */
void gs__recurrence_backward_ops(gs__node *n, const gs__recurrence_layout *l, gs_tensor g,
                                 gs_tensor x, gs_tensor h0, gs_tensor c0, gs_tensor whh,
                                 gs_tensor bhh, gs_tensor *grads);
