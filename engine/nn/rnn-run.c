/* rnn-run.c: the layer stack of RNN, LSTM and GRU over packed rows, as PyTorch's _VF.lstm and
 * friends run it: per layer and direction one input projection (a GEMM over every row) and
 * one fused recurrence; the directions' outputs side by side feed the next layer, through
 * dropout between layers in training. The padded and packed entry points (rnn-modules.c)
 * both come here: a padded batch is packed rows whose every step is full. */
#include <stdlib.h>

#include "core-impl.h"
#include "recurrent-impl.h"
#include "rnn-impl.h"

/* One layer and direction: its output rows [rows, H] and final states [B, H]. */
static bool run_direction(const gs__rnn_config *cfg, const gs__rnn_weights *w, gs_tensor in,
                          const int64_t *bs, int64_t steps, gs_tensor h0, gs_tensor c0,
                          bool reverse, gs_tensor *y, gs_tensor *h_n, gs_tensor *c_n,
                          const char *fn) {
  int64_t rows = gs_size(in, 0), B = bs[0];
  gs_tensor xproj = gs__rnn_project_input(cfg->mode, in, w);
  gs_tensor all = xproj.id ? gs__recurrence(cfg->mode, xproj, h0, c0, w->w_hh,
                                            cfg->mode == GS_RNN_GRU ? w->b_hh : GS_NO_TENSOR, bs,
                                            steps, reverse, fn)
                           : GS_NO_TENSOR;
  gs_dispose(xproj);
  if (!all.id)
    return false;
  *y = gs_narrow(all, 0, 0, rows);
  *h_n = gs_narrow(all, 0, rows, B);
  *c_n = cfg->mode == GS_RNN_LSTM ? gs_narrow(all, 0, rows + B, B) : GS_NO_TENSOR;
  gs_dispose(all);
  return true;
}

/* State k of h0 ([L * D, B, H]), or zeros. */
static gs_tensor initial_state(gs_tensor given, int64_t k, gs_tensor zeros) {
  return given.id ? gs_select(given, 0, k) : gs_clone(zeros);
}

bool gs__rnn_run(const gs__rnn_config *cfg, const gs__rnn_weights *weights, gs_tensor data,
                 const int64_t *bs, int64_t steps, gs_tensor h0, gs_tensor c0, gs_tensor *out,
                 gs_tensor *h_n, gs_tensor *c_n, const char *fn) {
  int64_t D = cfg->bidirectional ? 2 : 1, L = cfg->num_layers, states = L * D;
  bool lstm = cfg->mode == GS_RNN_LSTM;
  gs_tensor *hs = calloc((size_t)states, sizeof *hs), *cs = calloc((size_t)states, sizeof *cs);
  if (!hs || !cs) {
    free(hs), free(cs);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld states", (long long)states);
    return false;
  }
  gs_tensor zeros = gs_zeros(gs_dtype_of(data), (int64_t[]){bs[0], cfg->hidden}, 2);
  gs_tensor in = gs_clone(data); /* owned, like every later layer's input */
  bool ok = zeros.id && in.id;
  for (int64_t l = 0; ok && l < L; l++) {
    gs_tensor ys[2] = {GS_NO_TENSOR, GS_NO_TENSOR};
    for (int64_t d = 0; ok && d < D; d++) {
      int64_t k = l * D + d;
      gs_tensor h = initial_state(h0, k, zeros);
      gs_tensor c = lstm ? initial_state(c0, k, zeros) : GS_NO_TENSOR;
      ok = run_direction(cfg, &weights[k], in, bs, steps, h, c, d == 1, &ys[d], &hs[k], &cs[k],
                         fn);
      gs_dispose(h);
      gs_dispose(c);
    }
    gs_tensor next = GS_NO_TENSOR;
    if (ok)
      next = D == 2 ? gs_cat(ys, 2, 1) : gs_clone(ys[0]);
    gs_dispose(ys[0]);
    gs_dispose(ys[1]);
    if (next.id && l + 1 < L && cfg->training && cfg->dropout > 0) {
      gs_tensor dropped = gs_dropout(next, cfg->dropout, true, cfg->rng);
      gs_dispose(next);
      next = dropped;
    }
    gs_dispose(in);
    in = next;
    ok = ok && in.id;
  }
  if (ok) {
    *out = in;
    if (h_n)
      *h_n = gs_stack(hs, (int)states, 0);
    if (c_n)
      *c_n = lstm ? gs_stack(cs, (int)states, 0) : GS_NO_TENSOR;
  } else {
    gs_dispose(in);
  }
  for (int64_t k = 0; k < states; k++) {
    gs_dispose(hs[k]);
    gs_dispose(cs[k]);
  }
  free(hs);
  free(cs);
  gs_dispose(zeros);
  return ok;
}
