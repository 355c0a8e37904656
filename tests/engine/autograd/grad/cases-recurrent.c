/* cases-recurrent.c: gradcheck cases for the fused recurrence (each of its four node kinds,
 * packed batches whose sequences end at different steps, both directions, non-zero final
 * state gradients) and for whole recurrent stacks as nn runs them: packed input with
 * unsorted lengths, two layers, both directions, every parameter checked through one flat
 * weight vector cut into PyTorch's shapes. */
#include "grad-case.h"
#include "recurrent-impl.h"
#include "rnn-impl.h"

/* Three sequences of lengths 4, 3 and 1 (already sorted): 8 packed rows. */
static const int64_t batch_sizes[] = {3, 2, 2, 1};
#define STEPS 4
#define ROWS 8
#define B 3
#define H 2

#define RECURRENCE(NAME, MODE, REVERSE, WITH_C, WITH_BHH)                                    \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return gs__recurrence(MODE, in[0], in[1], WITH_C ? in[2] : GS_NO_TENSOR,                 \
                          WITH_C ? in[3] : in[2], WITH_BHH ? in[3] : GS_NO_TENSOR,           \
                          batch_sizes, STEPS, REVERSE, "recurrence");                        \
  }
RECURRENCE(f_lstm, GS_RNN_LSTM, false, true, false)
RECURRENCE(f_lstm_reverse, GS_RNN_LSTM, true, true, false)
RECURRENCE(f_gru, GS_RNN_GRU, false, false, true)
RECURRENCE(f_gru_reverse, GS_RNN_GRU, true, false, true)
RECURRENCE(f_gru_no_bias, GS_RNN_GRU, false, false, false)
RECURRENCE(f_tanh, GS_RNN_TANH, false, false, false)
RECURRENCE(f_tanh_reverse, GS_RNN_TANH, true, false, false)
RECURRENCE(f_relu, GS_RNN_RELU, true, false, false)

/* ---- whole stacks ---------------------------------------------------------------------- */

/* A stack's shape: mode, layers, directions and input size (hidden is H). */
typedef struct stack_case {
  gs_rnn_mode mode;
  int64_t layers, dirs, input;
  bool bias;
} stack_case;

/* Cuts the flat weight vector into each layer and direction's tensors, in PyTorch's order. */
static void cut_weights(const stack_case *s, gs_tensor flat, gs__rnn_weights *w) {
  int64_t G = gs__rnn_gate_count(s->mode), at = 0;
  for (int64_t k = 0; k < s->layers * s->dirs; k++) {
    int64_t in = k < s->dirs ? s->input : s->dirs * H;
    int64_t shapes[4][2] = {{G * H, in}, {G * H, H}, {G * H, 1}, {G * H, 1}};
    gs_tensor *slots[4] = {&w[k].w_ih, &w[k].w_hh, &w[k].b_ih, &w[k].b_hh};
    for (int i = 0; i < 4; i++) {
      *slots[i] = GS_NO_TENSOR;
      if (i >= 2 && !s->bias)
        continue;
      int64_t numel = shapes[i][0] * shapes[i][1];
      gs_tensor piece = gs__keep(gs_narrow(flat, 0, at, numel));
      *slots[i] = gs__keep(gs_reshape(piece, shapes[i], i >= 2 ? 1 : 2));
      at += numel;
    }
  }
}

/* Lengths 2, 4, 1: unsorted, so packing permutes the batch and the states follow. */
static const int64_t lengths[] = {2, 4, 1};

/* in: padded x [4, 3, input], h0 and c0 [layers * dirs, 3, H], the flat weights. Returns
 * the packed output, h_n and c_n flattened and joined, states in the caller's order. */
static gs_tensor run_stack(const stack_case *s, const gs_tensor *in) {
  gs_tensor len = gs__keep(gs_from_data(GS_I64, (int64_t[]){3}, 1, lengths));
  gs_packed_sequence ps = gs_pack_padded_sequence(in[0], len, false, false);
  gs__rnn_weights w[8];
  cut_weights(s, in[3], w);
  gs__rnn_config cfg = {s->mode, s->layers, H, s->dirs == 2, 0.0, false, NULL};
  gs_tensor sorted = gs_packed_sorted_indices(ps), unsorted = gs_packed_unsorted_indices(ps);
  gs_tensor h0 = gs__keep(gs_index_select(in[1], 1, sorted));
  gs_tensor c0 = s->mode == GS_RNN_LSTM ? gs__keep(gs_index_select(in[2], 1, sorted))
                                        : GS_NO_TENSOR;
  gs_tensor out, hn, cn;
  int64_t bs[STEPS];
  gs_copy_to(gs_packed_batch_sizes(ps), bs, sizeof bs);
  g_assert_true(gs__rnn_run(&cfg, w, gs_packed_data(ps), bs, STEPS, h0, c0, &out, &hn, &cn,
                            "rnn_run"));
  gs_tensor parts[3] = {gs__keep(gs_flatten(gs__keep(out), 0, -1)),
                        gs__keep(gs_flatten(gs__keep(gs_index_select(gs__keep(hn), 1, unsorted)), 0, -1)),
                        GS_NO_TENSOR};
  if (cn.id)
    parts[2] = gs__keep(gs_flatten(gs__keep(gs_index_select(gs__keep(cn), 1, unsorted)), 0, -1));
  gs_tensor joined = gs_cat(parts, cn.id ? 3 : 2, 0);
  gs_packed_sequence_dispose(ps);
  return joined;
}

#define STACK(NAME, ...)                                                                     \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    static const stack_case s = {__VA_ARGS__};                                               \
    return run_stack(&s, in);                                                                \
  }
/* Flat weight counts: per layer and direction G*H*(in + H) + 2*G*H with biases. */
STACK(f_lstm_2_layers_bidirectional, GS_RNN_LSTM, 2, 2, 3, true)
STACK(f_gru_2_layers_bidirectional, GS_RNN_GRU, 2, 2, 3, true)
STACK(f_tanh_2_layers_no_bias, GS_RNN_TANH, 2, 1, 3, false)

/* Inputs: padded x [4, 3, 3], h0 [L*D, 3, 2], c0 the same, flat weights. */
#define STACK_INPUTS(STATES, WEIGHTS) {GI(3, 4, 3, 3), GI(3, STATES, 3, 2), GI(3, STATES, 3, 2), GI(1, WEIGHTS)}
/* LSTM G=4: layer 0 per dir 8*(3+2)+16 = 56, layer 1 (in 4) 8*(4+2)+16 = 64: 2*(56+64).
 * GRU G=3: 6*5+12 = 42 and 6*6+12 = 48: 2*(42+48). tanh G=1, no bias, one direction:
 * 2*(3+2) = 10 and 2*(2+2) = 8. */
const grad_case grad_cases_recurrent[] = {
    {"LSTMRecurrenceBackward", "packed 4, 3, 1", f_lstm, 4, {GI(2, ROWS, 4 * H), GI(2, B, H), GI(2, B, H), GI_T(2, 4 * H, H)}},
    {"LSTMRecurrenceBackward", "packed 4, 3, 1, reverse", f_lstm_reverse, 4, {GI_S(2, ROWS, 4 * H), GI(2, B, H), GI(2, B, H), GI(2, 4 * H, H)}},
    {"GRURecurrenceBackward", "packed 4, 3, 1", f_gru, 4, {GI(2, ROWS, 3 * H), GI(2, B, H), GI(2, 3 * H, H), GI(1, 3 * H)}},
    {"GRURecurrenceBackward", "packed 4, 3, 1, reverse", f_gru_reverse, 4, {GI(2, ROWS, 3 * H), GI_T(2, B, H), GI(2, 3 * H, H), GI(1, 3 * H)}},
    {"GRURecurrenceBackward", "no b_hh", f_gru_no_bias, 3, {GI(2, ROWS, 3 * H), GI(2, B, H), GI(2, 3 * H, H)}},
    {"RNNTanhRecurrenceBackward", "packed 4, 3, 1", f_tanh, 3, {GI(2, ROWS, H), GI(2, B, H), GI(2, H, H)}},
    {"RNNTanhRecurrenceBackward", "packed 4, 3, 1, reverse", f_tanh_reverse, 3, {GI(2, ROWS, H), GI(2, B, H), GI_T(2, H, H)}},
    {"RNNReluRecurrenceBackward", "packed 4, 3, 1, reverse", f_relu, 3, {GI(2, ROWS, H), GI(2, B, H), GI(2, H, H)}},
    {"CatBackward", "LSTM stack: unsorted lengths 2, 4, 1, 2 layers, both directions", f_lstm_2_layers_bidirectional, 4, STACK_INPUTS(4, 240)},
    {"CatBackward", "GRU stack: unsorted lengths 2, 4, 1, 2 layers, both directions", f_gru_2_layers_bidirectional, 4, STACK_INPUTS(4, 180)},
    {"CatBackward", "tanh RNN stack: unsorted lengths, 2 layers, no bias", f_tanh_2_layers_no_bias, 4, STACK_INPUTS(2, 18)},
};
const int grad_cases_recurrent_count = G_N_ELEMENTS(grad_cases_recurrent);
