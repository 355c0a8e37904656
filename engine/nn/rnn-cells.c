/* rnn-cells.c: RNNCell, LSTMCell and GRUCell (functional and as modules): one step of the
 * fused recurrence over a batch, with the input projection as one addmm before it. Also the
 * two helpers the layers share with the cells: the input projection and the initialisation. */
#include <math.h>
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "recurrent-impl.h"
#include "rnn-impl.h"

gs_tensor gs__rnn_parameter(gs_dtype dtype, const int64_t *shape, int ndim, int64_t hidden,
                            gs_rng *rng) {
  gs_tensor p = gs_parameter_new(gs_empty(dtype, shape, ndim), true);
  double bound = 1.0 / sqrt((double)hidden);
  if (p.id)
    gs_init_uniform_(p, -bound, bound, rng);
  return p;
}

gs_tensor gs__rnn_project_input(gs_rnn_mode mode, gs_tensor x, const gs__rnn_weights *w) {
  gs_tensor wt = gs_t(w->w_ih), bias = w->b_ih, sum = GS_NO_TENSOR;
  /* RNN and LSTM add b_hh where b_ih goes; GRU's n gate needs it inside r * (...). */
  if (mode != GS_RNN_GRU && w->b_ih.id && w->b_hh.id)
    bias = sum = gs_add(w->b_ih, w->b_hh);
  else if (mode != GS_RNN_GRU && w->b_hh.id)
    bias = w->b_hh;
  gs_tensor y = bias.id ? gs_addmm(bias, x, wt, 1.0, 1.0) : gs_matmul(x, wt);
  gs_dispose(sum);
  gs_dispose(wt);
  return y;
}

/* x, h, c and the weights agree: x [B, in], W_ih [G*H, in], W_hh [G*H, H], h and c [B, H],
 * biases [G*H]. Names what differs. */
static bool check_cell(gs_rnn_mode mode, gs_tensor x, gs_tensor h, gs_tensor c,
                       const gs__rnn_weights *w, const char *fn) {
  gs__tensor *xt = gs__lookup(x, fn), *wi = xt ? gs__lookup(w->w_ih, fn) : NULL,
             *wh = wi ? gs__lookup(w->w_hh, fn) : NULL;
  if (!wh)
    return false;
  char got[GS__SHAPE_STR], want[GS__SHAPE_STR];
  int64_t G = gs__rnn_gate_count(mode);
  if (wh->ndim != 2 || wh->shape[0] % G != 0 || wh->shape[0] / G != wh->shape[1]) {
    gs__error(GS_ERR_SHAPE, fn, "expected weight_hh of shape [%lld * hidden, hidden], got %s",
              (long long)G, gs__shape_str(got, wh->shape, wh->ndim));
    return false;
  }
  int64_t H = wh->shape[1];
  if (wi->ndim != 2 || wi->shape[0] != G * H) {
    gs__error(GS_ERR_SHAPE, fn, "expected weight_ih of shape [%lld, input_size], got %s",
              (long long)(G * H), gs__shape_str(got, wi->shape, wi->ndim));
    return false;
  }
  if (xt->ndim != 2 || xt->shape[1] != wi->shape[1]) {
    gs__error(GS_ERR_SHAPE, fn, "expected input of shape [batch, %lld] (input_size), got %s",
              (long long)wi->shape[1], gs__shape_str(got, xt->shape, xt->ndim));
    return false;
  }
  int64_t state[2] = {xt->shape[0], H};
  gs_tensor states[2] = {h, c};
  for (int i = 0; i < 2; i++) {
    gs__tensor *s = states[i].id ? gs__lookup(states[i], fn) : NULL;
    if (states[i].id && !s)
      return false;
    if (s && (s->ndim != 2 || s->shape[0] != state[0] || s->shape[1] != H)) {
      gs__error(GS_ERR_SHAPE, fn, "expected %s of shape %s, got %s", i ? "c" : "h",
                gs__shape_str(want, state, 2), gs__shape_str(got, s->shape, s->ndim));
      return false;
    }
  }
  return true;
}

/* The step: h' (and *c_out for LSTM). */
static gs_tensor cell_step(gs_rnn_mode mode, gs_tensor x, gs_tensor h, gs_tensor c,
                           const gs__rnn_weights *w, gs_tensor *c_out, const char *fn) {
  if (c_out)
    *c_out = GS_NO_TENSOR;
  if (!check_cell(mode, x, h, c, w, fn))
    return GS_NO_TENSOR;
  int64_t B = gs_size(x, 0), H = gs_size(w->w_hh, 1);
  gs_tensor zeros = GS_NO_TENSOR;
  if (!h.id || (mode == GS_RNN_LSTM && !c.id))
    zeros = gs_zeros(gs_dtype_of(x), (int64_t[]){B, H}, 2);
  gs_tensor xproj = gs__rnn_project_input(mode, x, w);
  gs_tensor all = xproj.id ? gs__recurrence(mode, xproj, h.id ? h : zeros,
                                            mode == GS_RNN_LSTM ? (c.id ? c : zeros)
                                                                : GS_NO_TENSOR,
                                            w->w_hh, mode == GS_RNN_GRU ? w->b_hh : GS_NO_TENSOR,
                                            &B, 1, false, fn)
                           : GS_NO_TENSOR;
  /* One step: the output rows are the new h; for LSTM the new c follows the final h. */
  gs_tensor next = all.id ? gs_narrow(all, 0, 0, B) : GS_NO_TENSOR;
  if (all.id && mode == GS_RNN_LSTM && c_out)
    *c_out = gs_narrow(all, 0, 2 * B, B);
  gs_dispose(all);
  gs_dispose(xproj);
  gs_dispose(zeros);
  return next;
}

gs_tensor gs_rnn_cell(gs_rnn_mode mode, gs_tensor x, gs_tensor h, gs_tensor w_ih, gs_tensor w_hh,
                      gs_tensor b_ih, gs_tensor b_hh) {
  if (mode == GS_RNN_LSTM) {
    gs__error(GS_ERR_ARGUMENT, "rnn_cell", "expected GS_RNN_TANH, GS_RNN_RELU or GS_RNN_GRU, "
              "got GS_RNN_LSTM (use gs_lstm_cell: it has a cell state)");
    return GS_NO_TENSOR;
  }
  return cell_step(mode, x, h, GS_NO_TENSOR, &(gs__rnn_weights){w_ih, w_hh, b_ih, b_hh}, NULL,
                   "rnn_cell");
}

gs_tensor gs_lstm_cell(gs_tensor x, gs_tensor h, gs_tensor c, gs_tensor w_ih, gs_tensor w_hh,
                       gs_tensor b_ih, gs_tensor b_hh, gs_tensor *c_out) {
  if (!c_out) {
    gs__error(GS_ERR_ARGUMENT, "lstm_cell", "expected somewhere to store the next c, got NULL");
    return GS_NO_TENSOR;
  }
  return cell_step(GS_RNN_LSTM, x, h, c, &(gs__rnn_weights){w_ih, w_hh, b_ih, b_hh}, c_out,
                   "lstm_cell");
}

/* ---- cell modules --------------------------------------------------------------------- */

static gs_tensor cell_forward_zero_state(gs_module m, gs_tensor x);
static const gs_module_type rnn_cell_type = {"RNNCell", cell_forward_zero_state, free};
static const gs_module_type lstm_cell_type = {"LSTMCell", cell_forward_zero_state, free};
static const gs_module_type gru_cell_type = {"GRUCell", cell_forward_zero_state, free};

static const gs_module_type *cell_type(gs_rnn_mode mode) {
  return mode == GS_RNN_LSTM ? &lstm_cell_type : mode == GS_RNN_GRU ? &gru_cell_type
                                                                    : &rnn_cell_type;
}

static const char *mode_name(gs_rnn_mode mode) {
  static const char *names[] = {"GS_RNN_TANH", "GS_RNN_RELU", "GS_RNN_LSTM", "GS_RNN_GRU"};
  return (unsigned)mode < 4 ? names[mode] : "an unknown mode";
}

gs_module gs_rnn_cell_new(gs_rnn_mode mode, int64_t input_size, int64_t hidden_size, bool bias,
                          gs_dtype dtype, gs_rng *rng) {
  const char *fn = "rnn_cell_new";
  if ((unsigned)mode > GS_RNN_GRU || input_size <= 0 || hidden_size <= 0 ||
      (dtype != GS_F32 && dtype != GS_F64)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a mode of gs_rnn_mode, positive sizes and dtype "
              "f32 or f64, got mode %d, input_size %lld, hidden_size %lld, dtype %s", (int)mode,
              (long long)input_size, (long long)hidden_size, gs_dtype_name(dtype));
    return GS_NO_MODULE;
  }
  gs_rnn_mode *data = malloc(sizeof *data);
  if (!data) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *data = mode;
  gs_module m = gs_module_new_typed(cell_type(mode), data);
  if (!m.id)
    return m;
  int64_t GH = gs__rnn_gate_count(mode) * hidden_size;
  gs_module_register_parameter(
      m, "weight_ih", gs__rnn_parameter(dtype, (int64_t[]){GH, input_size}, 2, hidden_size, rng));
  gs_module_register_parameter(
      m, "weight_hh", gs__rnn_parameter(dtype, (int64_t[]){GH, hidden_size}, 2, hidden_size, rng));
  if (bias) {
    gs_module_register_parameter(m, "bias_ih", gs__rnn_parameter(dtype, &GH, 1, hidden_size, rng));
    gs_module_register_parameter(m, "bias_hh", gs__rnn_parameter(dtype, &GH, 1, hidden_size, rng));
  }
  return m;
}

gs_tensor gs_rnn_cell_forward(gs_module cell, gs_tensor x, gs_tensor h, gs_tensor c,
                              gs_tensor *c_out) {
  const char *fn = "rnn_cell_forward";
  gs__module *rec = gs__module_lookup(cell, fn);
  if (!rec)
    return GS_NO_TENSOR;
  if (rec->type != &rnn_cell_type && rec->type != &lstm_cell_type && rec->type != &gru_cell_type) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an RNNCell, LSTMCell or GRUCell, got a %s",
              rec->type_name);
    return GS_NO_TENSOR;
  }
  gs_rnn_mode mode = *(const gs_rnn_mode *)rec->data;
  if (mode == GS_RNN_LSTM && !c_out) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected somewhere to store an LSTMCell's next c, got NULL");
    return GS_NO_TENSOR;
  }
  if (mode != GS_RNN_LSTM && c.id) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected no c for a cell of mode %s (only LSTMCell has a "
              "cell state), got one", mode_name(mode));
    return GS_NO_TENSOR;
  }
  gs__rnn_weights w = {gs_module_parameter(cell, "weight_ih"), gs_module_parameter(cell, "weight_hh"),
                       gs_module_parameter(cell, "bias_ih"), gs_module_parameter(cell, "bias_hh")};
  return cell_step(mode, x, h, c, &w, c_out, fn);
}

static gs_tensor cell_forward_zero_state(gs_module m, gs_tensor x) {
  gs_tensor c = GS_NO_TENSOR;
  gs_tensor h = gs_rnn_cell_forward(m, x, GS_NO_TENSOR, GS_NO_TENSOR, &c);
  gs_dispose(c);
  return h;
}
