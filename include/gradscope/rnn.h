/* gradscope/rnn.h: recurrent nets as torch.nn has them: the cells RNNCell, LSTMCell and
 * GRUCell, and the layers RNN, LSTM and GRU over a padded tensor or a PackedSequence.
 *
 * Parameters carry PyTorch's names, shapes and gate order, so a state dict saved with
 * gs_module_save_safetensors loads into torch.nn.LSTM (and back):
 *   weight_ih [G*H, in], weight_hh [G*H, H], bias_ih [G*H], bias_hh [G*H]
 * with G = 1 (RNN), 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n, where n = tanh(W_in x + b_in +
 * r * (W_hn h + b_hn))). Layers suffix them _l0, _l1, ... and _reverse for the backward
 * direction. Every parameter starts uniform in +-1/sqrt(hidden_size).
 *
 * The time loop runs as one fused op per layer and direction (its node kinds are
 * RNNTanhRecurrenceBackward, RNNReluRecurrenceBackward, LSTMRecurrenceBackward,
 * GRURecurrenceBackward): a packed batch runs each step over its active sequences only, with
 * the input projection of all steps as one matrix product.
 */
#pragma once

#include "packed.h"
#include "scope.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_rnn_mode {
  GS_RNN_TANH, /* h' = tanh(W_ih x + b_ih + W_hh h + b_hh) */
  GS_RNN_RELU, /* the same with relu */
  GS_RNN_LSTM,
  GS_RNN_GRU,
} gs_rnn_mode;

/* ---- functional cells: one step of a batch -------------------------------------------- */

/* x [B, in], h [B, H] (c [B, H]): the next h (and, for LSTM, *c_out the next c). b_ih and
 * b_hh may be GS_NO_TENSOR (no bias). h (and c) GS_NO_TENSOR: zeros. */
GS_API gs_tensor gs_rnn_cell(gs_rnn_mode mode, gs_tensor x, gs_tensor h, gs_tensor w_ih,
                             gs_tensor w_hh, gs_tensor b_ih, gs_tensor b_hh);
GS_API gs_tensor gs_lstm_cell(gs_tensor x, gs_tensor h, gs_tensor c, gs_tensor w_ih,
                              gs_tensor w_hh, gs_tensor b_ih, gs_tensor b_hh, gs_tensor *c_out);

/* ---- cell modules --------------------------------------------------------------------- */

/* RNNCell (mode GS_RNN_TANH or GS_RNN_RELU), LSTMCell (GS_RNN_LSTM) or GRUCell (GS_RNN_GRU):
 * parameters weight_ih, weight_hh, bias_ih, bias_hh (no biases when bias is false) of dtype
 * (GS_F32 or GS_F64), drawn from rng (NULL: the default generator). gs_module_forward(cell, x)
 * is the step from a zero state. */
GS_API gs_module gs_rnn_cell_new(gs_rnn_mode mode, int64_t input_size, int64_t hidden_size,
                                 bool bias, gs_dtype dtype, gs_rng *rng);
/* The cell's step: the next h, and for an LSTMCell *c_out (which may be NULL only for the
 * other cells) the next c. h, c: GS_NO_TENSOR for zeros. */
GS_API gs_tensor gs_rnn_cell_forward(gs_module cell, gs_tensor x, gs_tensor h, gs_tensor c,
                                     gs_tensor *c_out);

/* ---- layers --------------------------------------------------------------------------- */

typedef struct gs_rnn_options {
  int64_t num_layers;
  bool bias;
  bool batch_first;   /* padded input and output are [B, T, *] instead of [T, B, *] */
  double dropout;     /* on each layer's output but the last, in training mode, in [0, 1) */
  bool bidirectional;
  gs_dtype dtype;     /* of the parameters: GS_F32 or GS_F64 */
  gs_rng *rng;        /* initialisation and dropout masks (NULL: the default generator); must
                         outlive the module */
} gs_rnn_options;

#define GS_RNN_OPTIONS_DEFAULT ((gs_rnn_options){1, true, false, 0.0, false, GS_F32, NULL})

/* torch.nn.RNN (GS_RNN_TANH, GS_RNN_RELU), torch.nn.LSTM, torch.nn.GRU. opt NULL: the defaults
 * above. LSTM's proj_size is not supported. gs_module_forward(m, x) runs gs_rnn_forward from
 * zero states and returns the output only. */
GS_API gs_module gs_rnn_new(gs_rnn_mode mode, int64_t input_size, int64_t hidden_size,
                            const gs_rnn_options *opt);

/* Padded input [T, B, in] ([B, T, in] with batch_first): every sequence runs all T steps, as
 * in PyTorch. h0 (and c0 for LSTM) [num_layers * num_directions, B, H], or GS_NO_TENSOR for
 * zeros. Returns the output [T, B, D * H] ([B, T, D * H]); *h_n and *c_n (each may be NULL;
 * c_n only for LSTM) receive the final states [num_layers * D, B, H]. */
GS_API gs_tensor gs_rnn_forward(gs_module rnn, gs_tensor input, gs_tensor h0, gs_tensor c0,
                                gs_tensor *h_n, gs_tensor *c_n);
/* The same over a packed sequence (sorted or not): each step runs over the sequences still
 * active. h0, c0 and the final states are in the caller's batch order (PyTorch permutes them
 * with sorted_indices and back with unsorted_indices). Returns a new packed sequence with the
 * input's batch sizes and indices, owned like any new object (the current scope, or the
 * caller). */
GS_API gs_packed_sequence gs_rnn_forward_packed(gs_module rnn, gs_packed_sequence input,
                                                gs_tensor h0, gs_tensor c0, gs_tensor *h_n,
                                                gs_tensor *c_n);

#ifdef __cplusplus
}
#endif
