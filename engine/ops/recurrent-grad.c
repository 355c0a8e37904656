/* recurrent-grad.c: the fused recurrence's backward written with the public ops, for a
 * backward that creates a graph (double backward through RNN, LSTM and GRU layers).
 *
 * The fused formula (recurrent.c, recurrent-kernel.h) reads the gates the forward kept in its
 * work rows, values without history. Here the steps are first run again with ops from the
 * saved input projection, initial state, W_hh and b_hh, so every gate is a function of them;
 * then the kernel's backward walk is written step by step with the same ops (one matmul per
 * step for the recurrent gradient, one for all of W_hh's). The gradient that comes out can
 * be differentiated again through both the gates and the incoming gradient. Packed batches
 * as in the kernel: step t updates the first bs[t] rows of the state and leaves the rest.
 */
#include <stdlib.h>

#include "recurrent-grad.h"

#define TMP(x) gs__formula_temp(x)

/* What one step ran on and made, as ops' results (formula temporaries). */
typedef struct step_values {
  gs_tensor hp;   /* the state it read, [n, H] */
  gs_tensor v[6]; /* LSTM: i f g o c c_prev; GRU: r z n (h part of n); RNN: h */
  gs_tensor dx;   /* its rows' input-side gradient [n, G H] */
  gs_tensor hid;  /* its rows' hidden-side gradient [n, G H] */
} step_values;

static gs_tensor rows(gs_tensor t, int64_t start, int64_t len) {
  return TMP(gs_narrow(t, 0, start, len));
}
static gs_tensor block(gs_tensor t, int64_t k, int64_t h) { return TMP(gs_narrow(t, 1, k * h, h)); }
static gs_tensor mul(gs_tensor a, gs_tensor b) { return TMP(gs_mul(a, b)); }
static gs_tensor add(gs_tensor a, gs_tensor b) { return TMP(gs_add(a, b)); }
static gs_tensor one_minus(gs_tensor t) { return TMP(gs_rsub_scalar(t, 1)); }
/* s * (1 - s): a sigmoid's derivative from its value */
static gs_tensor sigmoid_slope(gs_tensor s) { return mul(s, one_minus(s)); }
/* 1 - t^2: tanh's derivative from its value */
static gs_tensor tanh_slope(gs_tensor t) { return one_minus(mul(t, t)); }

/* The state with its first n of b rows replaced by top (packed steps leave the others). */
static gs_tensor replace_top(gs_tensor state, gs_tensor top, int64_t n, int64_t b) {
  if (n == b)
    return top;
  gs_tensor parts[2] = {top, rows(state, n, b - n)};
  return TMP(gs_cat(parts, 2, 0));
}

/* Runs the steps forward again with ops, keeping each step's values. */
static void run_forward(const gs__recurrence_layout *l, gs_tensor x, gs_tensor h, gs_tensor c,
                        gs_tensor whh, gs_tensor bhh, step_values *sv) {
  int64_t H = l->hidden, B = l->batch;
  gs_tensor whh_t = TMP(gs_t(whh));
  for (int64_t s = 0; s < l->steps; s++) {
    int64_t t = l->reverse ? l->steps - 1 - s : s, n = l->bs[t];
    step_values *v = &sv[t];
    gs_tensor xs = rows(x, l->off[t], n);
    v->hp = rows(h, 0, n);
    gs_tensor hg = TMP(gs_matmul(v->hp, whh_t));
    gs_tensor hn;
    if (l->mode == GS_RNN_LSTM) {
      gs_tensor gates = add(xs, hg);
      gs_tensor i = TMP(gs_sigmoid(block(gates, 0, H))), f = TMP(gs_sigmoid(block(gates, 1, H)));
      gs_tensor g = TMP(gs_tanh(block(gates, 2, H))), o = TMP(gs_sigmoid(block(gates, 3, H)));
      gs_tensor cp = rows(c, 0, n), cn = add(mul(f, cp), mul(i, g));
      hn = mul(o, TMP(gs_tanh(cn)));
      c = replace_top(c, cn, n, B);
      gs_tensor keep[6] = {i, f, g, o, cn, cp};
      for (int k = 0; k < 6; k++)
        v->v[k] = keep[k];
    } else if (l->mode == GS_RNN_GRU) {
      if (bhh.id)
        hg = add(hg, bhh);
      gs_tensor r = TMP(gs_sigmoid(add(block(xs, 0, H), block(hg, 0, H))));
      gs_tensor z = TMP(gs_sigmoid(add(block(xs, 1, H), block(hg, 1, H))));
      gs_tensor hgn = block(hg, 2, H);
      gs_tensor nn = TMP(gs_tanh(add(block(xs, 2, H), mul(r, hgn))));
      hn = add(nn, mul(z, TMP(gs_sub(v->hp, nn))));
      v->v[0] = r, v->v[1] = z, v->v[2] = nn, v->v[3] = hgn;
    } else {
      gs_tensor pre = add(xs, hg);
      hn = TMP(l->mode == GS_RNN_TANH ? gs_tanh(pre) : gs_relu(pre));
      v->v[0] = hn;
    }
    h = replace_top(h, hn, n, B);
  }
}

/* The kernel's backward walk with ops: fills each step's dx and hid and returns the initial
 * state's gradients in *dh0 and *dc0 (formula temporaries). */
static void run_backward(const gs__recurrence_layout *l, gs_tensor g, gs_tensor whh,
                         step_values *sv, gs_tensor *dh0, gs_tensor *dc0) {
  int64_t B = l->batch;
  gs_tensor dh = rows(g, l->rows, B);
  gs_tensor dc = l->mode == GS_RNN_LSTM ? rows(g, l->rows + B, B) : GS_NO_TENSOR;
  for (int64_t s = l->steps - 1; s >= 0; s--) {
    int64_t t = l->reverse ? l->steps - 1 - s : s, n = l->bs[t];
    step_values *v = &sv[t];
    gs_tensor d = add(rows(g, l->off[t], n), rows(dh, 0, n));
    gs_tensor top;
    if (l->mode == GS_RNN_LSTM) {
      gs_tensor i = v->v[0], f = v->v[1], gg = v->v[2], o = v->v[3], cn = v->v[4], cp = v->v[5];
      gs_tensor tc = TMP(gs_tanh(cn));
      gs_tensor dcell = add(rows(dc, 0, n), mul(mul(d, o), tanh_slope(tc)));
      gs_tensor parts[4] = {mul(mul(dcell, gg), sigmoid_slope(i)),
                            mul(mul(dcell, cp), sigmoid_slope(f)),
                            mul(mul(dcell, i), tanh_slope(gg)), mul(mul(d, tc), sigmoid_slope(o))};
      v->dx = v->hid = TMP(gs_cat(parts, 4, 1));
      dc = replace_top(dc, mul(dcell, f), n, B);
      top = TMP(gs_matmul(v->hid, whh));
    } else if (l->mode == GS_RNN_GRU) {
      gs_tensor r = v->v[0], z = v->v[1], nn = v->v[2], hgn = v->v[3];
      gs_tensor dn = mul(mul(d, one_minus(z)), tanh_slope(nn));
      gs_tensor dr = mul(mul(dn, hgn), sigmoid_slope(r));
      gs_tensor dz = mul(mul(d, TMP(gs_sub(v->hp, nn))), sigmoid_slope(z));
      v->dx = TMP(gs_cat((gs_tensor[]){dr, dz, dn}, 3, 1));
      v->hid = TMP(gs_cat((gs_tensor[]){dr, dz, mul(dn, r)}, 3, 1));
      top = add(mul(d, z), TMP(gs_matmul(v->hid, whh)));
    } else {
      gs_tensor hn = v->v[0];
      if (l->mode == GS_RNN_TANH)
        v->dx = mul(d, tanh_slope(hn));
      else
        v->dx = TMP(gs_where(TMP(gs_gt_scalar(hn, 0)), d, TMP(gs_zeros_like(d))));
      v->hid = v->dx;
      top = TMP(gs_matmul(v->hid, whh));
    }
    dh = replace_top(dh, top, n, B);
  }
  *dh0 = dh;
  *dc0 = dc;
}

/* A handle of its own on a formula temporary, for grads[] (the temporary is disposed). */
static gs_tensor own(gs_tensor t) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(t, shape);
  return gs_view(t, shape, nd);
}

void gs__recurrence_backward_ops(gs__node *n, const gs__recurrence_layout *l, gs_tensor g,
                                 gs_tensor x, gs_tensor h0, gs_tensor c0, gs_tensor whh,
                                 gs_tensor bhh, gs_tensor *grads) {
  step_values *sv = calloc((size_t)l->steps, sizeof *sv);
  gs_tensor *dxs = calloc((size_t)l->steps * 3, sizeof *dxs);
  if (!sv || !dxs) {
    free(sv), free(dxs);
    gs__error(GS_ERR_OUT_OF_MEMORY, n->kind->name, "out of memory for %lld steps",
              (long long)l->steps);
    return;
  }
  gs_tensor dh0, dc0;
  run_forward(l, x, h0, c0, whh, bhh, sv);
  run_backward(l, g, whh, sv, &dh0, &dc0);
  /* Rows in step order (as the input projection's). */
  gs_tensor *hids = dxs + l->steps, *hps = hids + l->steps;
  for (int64_t t = 0; t < l->steps; t++)
    dxs[t] = sv[t].dx, hids[t] = sv[t].hid, hps[t] = sv[t].hp;
  if (gs__needs_grad(n, 0))
    grads[0] = gs_cat(dxs, (int)l->steps, 0);
  if (gs__needs_grad(n, 1))
    grads[1] = own(dh0);
  gs_tensor hid = GS_NO_TENSOR;
  if (gs__needs_grad(n, 2) || (l->bhh_in >= 0 && gs__needs_grad(n, l->bhh_in)))
    hid = TMP(gs_cat(hids, (int)l->steps, 0));
  if (gs__needs_grad(n, 2)) /* every row's hidden-side gradient times the state it read */
    grads[2] = gs_matmul(TMP(gs_t(hid)), TMP(gs_cat(hps, (int)l->steps, 0)));
  if (l->c0_in >= 0 && gs__needs_grad(n, l->c0_in))
    grads[l->c0_in] = own(dc0);
  if (l->bhh_in >= 0 && gs__needs_grad(n, l->bhh_in))
    grads[l->bhh_in] = gs_sum(hid, (const int[]){0}, 1, false);
  free(sv), free(dxs);
}
