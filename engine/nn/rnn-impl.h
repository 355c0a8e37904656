/* rnn-impl.h: what the recurrent cells (rnn-cells.c), the layer stack (rnn-run.c) and the
 * module types (rnn-modules.c) share. The time loop itself is the fused op of
 * engine/ops/recurrent.c; these files arrange its inputs and outputs as PyTorch's modules do. */
#pragma once

#include "gradscope/gradscope.h"

/* Exported under private names so the gradcheck cases can drive the layer stack with weights
 * of their own (not API: nothing installed declares them). */
#define GS__RNN_TESTABLE __attribute__((visibility("default")))

/* One layer and direction's parameters, as PyTorch names them (biases may be GS_NO_TENSOR). */
typedef struct gs__rnn_weights {
  gs_tensor w_ih, w_hh, b_ih, b_hh;
} gs__rnn_weights;

/* What the layer stack needs to know beside its weights. */
typedef struct gs__rnn_config {
  gs_rnn_mode mode;
  int64_t num_layers, hidden;
  bool bidirectional;
  double dropout;  /* applied between layers when training */
  bool training;
  gs_rng *rng;     /* dropout masks */
} gs__rnn_config;

/* x @ W_ih^T plus the biases the recurrence expects folded in (b_ih + b_hh for RNN and LSTM,
 * b_ih alone for GRU): one matrix product for every row of x. */
gs_tensor gs__rnn_project_input(gs_rnn_mode mode, gs_tensor x, const gs__rnn_weights *w);

/* Runs the stack over packed rows: data [rows, in] in the packed order, batch_sizes[steps].
 * weights[num_layers * D] in PyTorch's order (l0, l0_reverse, l1, ...). h0, c0
 * [num_layers * D, B, H] in the packed (sorted) batch order, or GS_NO_TENSOR for zeros (c0:
 * LSTM only). *out receives [rows, D * H]; *h_n and *c_n (may be NULL; c_n LSTM only)
 * [num_layers * D, B, H] in the sorted order. false after reporting as an error of fn, with
 * nothing left behind. */
GS__RNN_TESTABLE bool gs__rnn_run(const gs__rnn_config *cfg, const gs__rnn_weights *weights,
                                  gs_tensor data, const int64_t *batch_sizes, int64_t steps,
                                  gs_tensor h0, gs_tensor c0, gs_tensor *out, gs_tensor *h_n,
                                  gs_tensor *c_n, const char *fn);

/* A parameter of dtype and shape, uniform in +-1/sqrt(hidden) as every torch.nn recurrent
 * parameter starts. */
gs_tensor gs__rnn_parameter(gs_dtype dtype, const int64_t *shape, int ndim, int64_t hidden,
                            gs_rng *rng);
