/* recurrent.c: the fused recurrence op (recurrent-impl.h): validation, the node and its
 * backward formula. The loops themselves are in recurrent-kernel.h, included here once per
 * floating dtype.
 *
 * Why fused: written with elementwise ops, a step of a packed LSTM is about fifteen small ops
 * and nodes, and each step's slice of the input projection gets back a gradient the size of
 * the whole projection (a narrow's backward). Here a step is one GEMM and one pass over its
 * rows; nothing is allocated per step; the backward writes each row's gradient once.
 *
 * Work rows (saved for backward), W values per row, the previous h always last:
 *   LSTM [i f g o | tanh c | c_prev | h_prev]  W = 7H
 *   GRU  [r z n | h_n-part of h @ W_hh^T + b_hh | h_prev]  W = 5H
 *   RNN  [h | h_prev]  W = 2H
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"
#include "recurrent-gemm.h"
#include "recurrent-grad.h"
#include "recurrent-impl.h"
#include "recurrent-rows.h"

typedef struct rec_plan {
  gs_rnn_mode mode;
  bool reverse;
  int64_t hidden, batch, steps, rows;
  int64_t gate_width; /* G * H */
  int64_t work_width; /* W */
  const int64_t *bs;  /* [steps] */
  int64_t *off;       /* [steps]: where each step's rows start */
} rec_plan;

/* tanh in the f32 kernels, through expf: glibc's tanhf goes through expm1f, about ten times
 * the cost of expf, and was a fifth of a packed LSTM training step (three tanh per hidden
 * unit and step, forward and backward). Below |x| = 0.4 its Taylor series to x^13 (the next
 * term is under 1e-8 relative there); above, 1 - 2 / (e^2|x| + 1), which cancels little from
 * 0.4 on. Checked against double tanh over every 4th float in [-12, 12]: at most 1.8 ulp.
 * The f64 kernels keep libm's tanh: they are what the comparisons with PyTorch check to
 * 1e-9. */
static inline float tanh_f32(float x) {
  float a = fabsf(x);
  if (a < 0.4f) {
    float x2 = x * x;
    float odd = 21844.0f / 6081075.0f;
    odd = -1382.0f / 155925.0f + x2 * odd;
    odd = 62.0f / 2835.0f + x2 * odd;
    odd = -17.0f / 315.0f + x2 * odd;
    odd = 2.0f / 15.0f + x2 * odd;
    odd = -1.0f / 3.0f + x2 * odd;
    return x + x * x2 * odd;
  }
  return copysignf(1.0f - 2.0f / (expf(2.0f * a) + 1.0f), x); /* NaN stays NaN, inf gives 1 */
}

#define REAL float
#define SUFFIX f32
#define GEMM cblas_sgemm
#define EXP expf
#define TANH tanh_f32
#define RK_VECTOR 1 /* recurrent-rows.h's AVX-512 rows */
#include "recurrent-kernel.h"
#undef RK_VECTOR
#undef REAL
#undef SUFFIX
#undef GEMM
#undef EXP
#undef TANH
#define REAL double
#define SUFFIX f64
#define GEMM cblas_dgemm
#define EXP exp
#define TANH tanh
#define RK_VECTOR 0
#include "recurrent-kernel.h"
#undef RK_VECTOR
#undef REAL
#undef SUFFIX
#undef GEMM
#undef EXP
#undef TANH

static int64_t work_width(gs_rnn_mode mode, int64_t hidden) {
  return (mode == GS_RNN_LSTM ? 7 : mode == GS_RNN_GRU ? 5 : 2) * hidden;
}

/* Fills plan->off from plan->bs (malloc'd; false when out of memory). */
static bool plan_offsets(rec_plan *p) {
  p->off = malloc(sizeof(int64_t) * (size_t)p->steps);
  if (!p->off)
    return false;
  int64_t at = 0;
  for (int64_t t = 0; t < p->steps; t++) {
    p->off[t] = at;
    at += p->bs[t];
  }
  return true;
}

/* ---- backward ------------------------------------------------------------------------- */

/* Node layout. ints: 0 mode, 1 reverse, 2 H, 3 B, 4 steps, 5 rows, 6 c0's input index (-1:
 * none), 7 b_hh's input index (-1: none). Inputs: 0 xproj, 1 h0, 2 w_hh, then c0 and b_hh when
 * given. Saved: 0 w_hh, 1 the work rows, 2 the batch sizes (i64), then xproj, h0, c0 and b_hh
 * (the last two when given) for a backward that creates a graph, which runs the steps again
 * with ops (recurrent-grad.c): the work rows have no history. */
enum { IN_XPROJ, IN_H0, IN_WHH };
enum {
  SAVED_WHH,
  SAVED_WORK,
  SAVED_BATCH_SIZES,
  SAVED_XPROJ,
  SAVED_H0,
  SAVED_C0,
  SAVED_BHH,
  SAVED_COUNT
};

/* A contiguous handle with t's values (t itself when it already is: another view of it). */
static gs_tensor contiguous_tmp(gs_tensor t) { return gs__formula_temp(gs_contiguous(t)); }

static void *data_of(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "recurrence");
  return t ? gs__tensor_data(t) : NULL;
}

static void recurrence_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  rec_plan p = {.mode = (gs_rnn_mode)n->ints[0], .reverse = n->ints[1] != 0,
                .hidden = n->ints[2], .batch = n->ints[3], .steps = n->ints[4],
                .rows = n->ints[5]};
  int c0_in = (int)n->ints[6], bhh_in = (int)n->ints[7];
  p.gate_width = gs__rnn_gate_count(p.mode) * p.hidden;
  p.work_width = work_width(p.mode, p.hidden);
  if (gs__formula_creates_graph()) { /* the same with ops that record (double backward) */
    gs_tensor bs = gs__saved(n, SAVED_BATCH_SIZES);
    p.bs = data_of(bs);
    if (!p.bs || !plan_offsets(&p)) {
      gs__error(GS_ERR_OUT_OF_MEMORY, n->kind->name, "could not prepare the backward pass");
      return;
    }
    gs__recurrence_layout l = {p.mode, p.reverse, p.hidden, p.batch, p.steps,
                               p.rows, p.bs,      p.off,    c0_in,   bhh_in};
    gs__recurrence_backward_ops(n, &l, grad, gs__saved(n, SAVED_XPROJ), gs__saved(n, SAVED_H0),
                                c0_in >= 0 ? gs__saved(n, SAVED_C0) : GS_NO_TENSOR,
                                gs__saved(n, SAVED_WHH),
                                bhh_in >= 0 ? gs__saved(n, SAVED_BHH) : GS_NO_TENSOR, grads);
    free(p.off);
    return;
  }
  gs_tensor g = contiguous_tmp(grad), whh = contiguous_tmp(gs__saved(n, SAVED_WHH));
  gs_tensor work = gs__saved(n, SAVED_WORK), bs = gs__saved(n, SAVED_BATCH_SIZES);
  p.bs = data_of(bs);
  if (!g.id || !whh.id || !p.bs || !plan_offsets(&p)) {
    gs__error(GS_ERR_OUT_OF_MEMORY, n->kind->name, "could not prepare the backward pass");
    return;
  }
  gs_dtype dt = n->inputs[IN_XPROJ].dtype;
  int64_t H = p.hidden, B = p.batch, GH = p.gate_width;
  gs_tensor dx = gs_empty(dt, (int64_t[]){p.rows, GH}, 2);
  gs_tensor dh = gs_empty(dt, (int64_t[]){B, H}, 2);
  gs_tensor dc = c0_in >= 0 ? gs_empty(dt, (int64_t[]){B, H}, 2) : GS_NO_TENSOR;
  gs_tensor dhg = p.mode == GS_RNN_GRU ? gs__formula_temp(gs_empty(dt, (int64_t[]){p.rows, GH}, 2))
                                       : GS_NO_TENSOR;
  gs_tensor dwhh = gs__needs_grad(n, IN_WHH) ? gs_empty(dt, (int64_t[]){GH, H}, 2) : GS_NO_TENSOR;
  gs_tensor dbhh = bhh_in >= 0 && gs__needs_grad(n, bhh_in) ? gs_empty(dt, &GH, 1) : GS_NO_TENSOR;
  if (dt == GS_F32)
    recurrence_backward_f32(&p, data_of(g), data_of(work), data_of(whh), data_of(dx),
                            data_of(dh), dc.id ? data_of(dc) : NULL,
                            dhg.id ? data_of(dhg) : NULL, dwhh.id ? data_of(dwhh) : NULL,
                            dbhh.id ? data_of(dbhh) : NULL);
  else
    recurrence_backward_f64(&p, data_of(g), data_of(work), data_of(whh), data_of(dx),
                            data_of(dh), dc.id ? data_of(dc) : NULL,
                            dhg.id ? data_of(dhg) : NULL, dwhh.id ? data_of(dwhh) : NULL,
                            dbhh.id ? data_of(dbhh) : NULL);
  free(p.off);
  /* Each result goes to the input that wants it; the rest are dropped. */
  gs_tensor results[5] = {dx, dh, dwhh, GS_NO_TENSOR, GS_NO_TENSOR};
  if (c0_in >= 0)
    results[c0_in] = dc;
  if (bhh_in >= 0)
    results[bhh_in] = dbhh;
  for (int i = 0; i < n->n_inputs; i++) {
    if (gs__needs_grad(n, i) && results[i].id)
      grads[i] = results[i];
    else
      gs_dispose(results[i]);
  }
}
GS__BACKWARD_TWICE(RNNTanhRecurrenceBackward, recurrence_backward);
GS__BACKWARD_TWICE(RNNReluRecurrenceBackward, recurrence_backward);
GS__BACKWARD_TWICE(LSTMRecurrenceBackward, recurrence_backward);
GS__BACKWARD_TWICE(GRURecurrenceBackward, recurrence_backward);

static const gs__node_kind *kind_of(gs_rnn_mode mode) {
  switch (mode) {
  case GS_RNN_TANH: return &RNNTanhRecurrenceBackward;
  case GS_RNN_RELU: return &RNNReluRecurrenceBackward;
  case GS_RNN_LSTM: return &LSTMRecurrenceBackward;
  default: return &GRURecurrenceBackward;
  }
}

/* ---- validation ----------------------------------------------------------------------- */

/* t is a live tensor of dtype dt with the given shape; what names it in the message. */
static gs__tensor *expect(gs_tensor h, const char *what, gs_dtype dt, const int64_t *shape,
                          int ndim, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return NULL;
  char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
  if (t->dtype != dt) {
    gs__error(GS_ERR_DTYPE, fn, "expected %s to be %s (the input's dtype), got %s", what,
              gs_dtype_name(dt), gs_dtype_name(t->dtype));
    return NULL;
  }
  if (t->ndim != ndim || memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim) != 0) {
    gs__error(GS_ERR_SHAPE, fn, "expected %s of shape %s, got %s", what,
              gs__shape_str(want, shape, ndim), gs__shape_str(got, t->shape, t->ndim));
    return NULL;
  }
  return t;
}

static bool check_batch_sizes(const int64_t *bs, int64_t steps, int64_t rows, const char *fn) {
  if (!bs || steps < 1) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected at least one time step, got %lld",
              (long long)steps);
    return false;
  }
  int64_t sum = 0;
  for (int64_t t = 0; t < steps; t++) {
    if (bs[t] < 1 || (t > 0 && bs[t] > bs[t - 1])) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected positive, non-increasing batch sizes, got %lld "
                "at step %lld after %lld", (long long)bs[t], (long long)t,
                (long long)(t ? bs[t - 1] : 0));
      return false;
    }
    sum += bs[t];
  }
  if (sum != rows) {
    gs__error(GS_ERR_SHAPE, fn, "expected %lld input rows (the sum of the batch sizes), got %lld",
              (long long)sum, (long long)rows);
    return false;
  }
  return true;
}

/* ---- forward -------------------------------------------------------------------------- */

/* A contiguous copy of t when it is not contiguous (no graph: the node records t itself). */
static gs_tensor plain(gs__tensor *t, gs__tensor **out) {
  gs_no_grad_begin();
  gs_tensor c = gs_contiguous((gs_tensor){t->id});
  gs_no_grad_end();
  *out = c.id ? gs__lookup(c, "recurrence") : NULL;
  return c;
}

gs_tensor gs__recurrence(gs_rnn_mode mode, gs_tensor xproj, gs_tensor h0, gs_tensor c0,
                         gs_tensor w_hh, gs_tensor b_hh, const int64_t *batch_sizes,
                         int64_t steps, bool reverse, const char *fn) {
  gs__tensor *x = gs__lookup(xproj, fn);
  if (!x)
    return GS_NO_TENSOR;
  if ((x->dtype != GS_F32 && x->dtype != GS_F64) || x->ndim != 2) {
    char got[GS__SHAPE_STR];
    gs__error(x->ndim != 2 ? GS_ERR_SHAPE : GS_ERR_DTYPE, fn, "expected the input projection "
              "to be a 2-D f32 or f64 tensor, got %s %s", gs__shape_str(got, x->shape, x->ndim),
              gs_dtype_name(x->dtype));
    return GS_NO_TENSOR;
  }
  rec_plan p = {.mode = mode, .reverse = reverse, .steps = steps, .rows = x->shape[0],
                .bs = batch_sizes};
  if (!check_batch_sizes(batch_sizes, steps, p.rows, fn))
    return GS_NO_TENSOR;
  gs__tensor *h = gs__lookup(h0, fn);
  if (!h)
    return GS_NO_TENSOR;
  if (h->ndim != 2) {
    char got[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected h0 of shape [batch, hidden], got %s",
              gs__shape_str(got, h->shape, h->ndim));
    return GS_NO_TENSOR;
  }
  p.batch = h->shape[0];
  p.hidden = h->shape[1];
  p.gate_width = gs__rnn_gate_count(mode) * p.hidden;
  p.work_width = work_width(mode, p.hidden);
  gs_dtype dt = x->dtype;
  int64_t H = p.hidden, B = p.batch, GH = p.gate_width;
  gs__tensor *c = NULL, *whh, *bhh = NULL;
  if (!expect(xproj, "the input projection", dt, (int64_t[]){p.rows, GH}, 2, fn) ||
      !expect(h0, "h0", dt, (int64_t[]){batch_sizes[0], H}, 2, fn) ||
      !(whh = expect(w_hh, "weight_hh", dt, (int64_t[]){GH, H}, 2, fn)))
    return GS_NO_TENSOR;
  if (mode == GS_RNN_LSTM && !(c = expect(c0, "c0", dt, (int64_t[]){B, H}, 2, fn)))
    return GS_NO_TENSOR;
  if (mode != GS_RNN_LSTM && c0.id) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected no cell state (only LSTM has one), got a c0");
    return GS_NO_TENSOR;
  }
  if (b_hh.id && mode != GS_RNN_GRU) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected b_hh folded into the input projection for "
              "RNN and LSTM (only GRU keeps it apart), got a b_hh");
    return GS_NO_TENSOR;
  }
  if (b_hh.id && !(bhh = expect(b_hh, "bias_hh", dt, &GH, 1, fn)))
    return GS_NO_TENSOR;

  int64_t out_rows = p.rows + (mode == GS_RNN_LSTM ? 2 : 1) * B;
  gs__tensor *out;
  gs_tensor result = gs__tensor_new(dt, (int64_t[]){out_rows, H}, 2, fn, &out);
  /* The work rows are a registered tensor, disposed below once saved: the log then shows the
   * node's biggest saved buffer (the step's working set) as a saved tensor with its shape,
   * which the inspector draws and counts as saved for backward. */
  gs__tensor *work = NULL, bs = {0};
  gs_tensor work_handle = GS_NO_TENSOR;
  gs__tensor *xc, *hc, *cc = NULL, *wc, *bc = NULL;
  gs_tensor tmp[5] = {plain(x, &xc), plain(h, &hc), c ? plain(c, &cc) : GS_NO_TENSOR,
                      plain(whh, &wc), bhh ? plain(bhh, &bc) : GS_NO_TENSOR};
  void *gates = malloc((size_t)(B * GH) * gs__elsize(dt));
  bool ok = result.id && xc && hc && (!c || cc) && wc && (!bhh || bc) && gates &&
            (work_handle = gs__tensor_new(dt, (int64_t[]){p.rows > 0 ? p.rows : 1, p.work_width},
                                          2, fn, &work)).id &&
            gs__tensor_init(&bs, GS_I64, &steps, 1, fn) && plan_offsets(&p);
  if (ok) {
    memcpy(gs__tensor_data(&bs), batch_sizes, sizeof(int64_t) * (size_t)steps);
    if (dt == GS_F32)
      recurrence_forward_f32(&p, (float *)gs__tensor_data(xc), (float *)gs__tensor_data(hc),
                             cc ? (float *)gs__tensor_data(cc) : NULL,
                             (float *)gs__tensor_data(wc), bc ? (float *)gs__tensor_data(bc) : NULL,
                             (float *)gs__tensor_data(out), (float *)gs__tensor_data(work), gates);
    else
      recurrence_forward_f64(&p, (double *)gs__tensor_data(xc), (double *)gs__tensor_data(hc),
                             cc ? (double *)gs__tensor_data(cc) : NULL,
                             (double *)gs__tensor_data(wc),
                             bc ? (double *)gs__tensor_data(bc) : NULL,
                             (double *)gs__tensor_data(out), (double *)gs__tensor_data(work),
                             gates);
    const gs__tensor *inputs[5] = {x, h, whh};
    int n_inputs = 3, c0_in = -1, bhh_in = -1;
    if (c)
      inputs[c0_in = n_inputs++] = c;
    if (bhh)
      inputs[bhh_in = n_inputs++] = bhh;
    gs__node *node = gs__record(kind_of(mode), out, n_inputs, inputs, SAVED_COUNT);
    if (node) {
      int64_t ints[] = {mode, reverse, H, B, steps, p.rows, c0_in, bhh_in};
      memcpy(node->ints, ints, sizeof ints);
      gs__save(node, SAVED_WHH, whh);
      gs__save_constant(node, SAVED_WORK, work); /* a double backward recomputes it */
      gs__save(node, SAVED_BATCH_SIZES, &bs);
      gs__save(node, SAVED_XPROJ, x);
      gs__save(node, SAVED_H0, h);
      if (c)
        gs__save(node, SAVED_C0, c);
      if (bhh)
        gs__save(node, SAVED_BHH, bhh);
    }
  } else if (result.id) {
    if (!gates)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the gates of %lld sequences",
                (long long)B);
    gs_dispose(result);
    result = GS_NO_TENSOR;
  }
  free(p.off);
  free(gates);
  gs_dispose(work_handle); /* the node keeps its bytes */
  if (bs.storage)
    gs__tensor_release(&bs);
  for (int i = 0; i < 5; i++)
    gs_dispose(tmp[i]);
  return result;
}
