/* recurrent-impl.h: the fused recurrence of one recurrent layer in one direction (RNN with
 * tanh or relu, LSTM, GRU), which engine/nn builds cells and layers on.
 *
 * One op runs every time step of a packed (or padded: every step full) batch: a loop over
 * steps with one small GEMM each for h @ W_hh^T and the gate math fused per row, and one
 * node for the whole loop, whose backward walks the steps back the same way. The input
 * projection x @ W_ih^T + b is not part of it: the caller does it for all steps as one GEMM
 * (an addmm, differentiable as usual) and passes the result.
 *
 * A node has one output, so the op returns one tensor holding three things one after another
 * along dim 0: the output of every row (rows), the final h (B rows) and, for LSTM, the final
 * c (B rows). Narrowing it gives each; gradients into any of them flow back together.
 */
#pragma once

#include "gradscope/gradscope.h"

/* Exported under its private name so the gradcheck cases can check the op alone (not API). */
#define GS__RECURRENT_TESTABLE __attribute__((visibility("default")))

/* xproj [rows, G*H] (G = 1 for RNN, 4 for LSTM in PyTorch's order i, f, g, o, 3 for GRU:
 * r, z, n), holding x @ W_ih^T + b_ih (+ b_hh for RNN and LSTM; GRU's b_hh goes in b_hh here
 * because its n gate multiplies the hidden part by r). h0 [B, H]; c0 [B, H] for LSTM
 * (GS_NO_TENSOR otherwise); w_hh [G*H, H]; b_hh [G*H] or GS_NO_TENSOR (GRU only).
 * batch_sizes[steps]: positive, non-increasing, first B, summing to rows; step t's rows
 * follow those of earlier steps. reverse: the steps run from last to first (the backward
 * direction of a bidirectional layer). Returns [rows + B, H] ([rows + 2B, H] for LSTM), or
 * GS_NO_TENSOR after reporting as an error of fn. */
GS__RECURRENT_TESTABLE gs_tensor gs__recurrence(gs_rnn_mode mode, gs_tensor xproj, gs_tensor h0,
                                                gs_tensor c0, gs_tensor w_hh, gs_tensor b_hh,
                                                const int64_t *batch_sizes, int64_t steps,
                                                bool reverse, const char *fn);

/* G for mode: how many gate blocks of H columns W_ih and W_hh have. */
static inline int64_t gs__rnn_gate_count(gs_rnn_mode mode) {
  return mode == GS_RNN_LSTM ? 4 : mode == GS_RNN_GRU ? 3 : 1;
}
