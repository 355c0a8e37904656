/* ctc-loss.c: the connectionist temporal classification loss (torch.nn.functional.ctc_loss):
 * each sample's negative log-likelihood of its target sequence over every alignment of it to
 * the input's time steps (blanks between and around labels, repeats merged).
 *
 * The forward runs the alpha recursion in log space over the extended target l' (blank,
 * l1, blank, l2, ..., blank): alpha[t][s] = lp[t][l'(s)] + logsumexp(alpha[t-1][s],
 * alpha[t-1][s-1], alpha[t-1][s-2] when l'(s) is a label different from l'(s-2)), and
 * nll = -logsumexp of the last two alphas at the sample's last step. The backward runs the beta
 * recursion the same way from the end and gives torch 1.13's gradient for log_probs:
 * exp(lp[t][c]) - exp(logsumexp over s with l'(s) = c of alpha + beta - nll - lp[t][c]) for
 * t below the sample's input length, 0 after it. That is the gradient with log_softmax's
 * normalisation folded in (its terms sum to 0 over c), as torch's: through a log_softmax, the
 * way ctc_loss is fed, it is the true gradient of the loss.
 *
 * With zero_infinity an impossible alignment (nll infinite) gives loss 0 and gradient 0. The
 * backward is not differentiable again (torch 1.13's is not either). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* ints: blank, zero_infinity. saved: log_probs, targets (concatenated), input lengths, target
 * lengths, the losses. */
enum { CTC_BLANK, CTC_ZERO_INF };

static const double INF = (double)INFINITY;

static double log_add(double a, double b) {
  if (a == -INF)
    return b;
  if (b == -INF)
    return a;
  double m = a > b ? a : b;
  return m + log1p(exp(-fabs(a - b)));
}

/* One sample's view of the operands: its log-probabilities lp(t, c) and its extended target. */
typedef struct ctc_sample {
  const char *lp;
  gs_dtype dt;
  int64_t t_stride, c_stride; /* in elements */
  int64_t steps, labels;      /* its input length and target length */
  const int64_t *target;
  int64_t blank;
} ctc_sample;

static double lp_at(const ctc_sample *x, int64_t t, int64_t c) {
  int64_t i = t * x->t_stride + c * x->c_stride;
  return x->dt == GS_F32 ? (double)((const float *)x->lp)[i] : ((const double *)x->lp)[i];
}

static int64_t ext_label(const ctc_sample *x, int64_t s) {
  return s % 2 == 0 ? x->blank : x->target[s / 2];
}

/* alpha: steps x (2 labels + 1), filled; returns the negative log-likelihood. */
static double ctc_alpha(const ctc_sample *x, double *alpha) {
  int64_t S = 2 * x->labels + 1;
  for (int64_t i = 0; i < x->steps * S; i++)
    alpha[i] = -INF;
  if (x->steps == 0)
    return x->labels == 0 ? 0.0 : INF;
  alpha[0] = lp_at(x, 0, x->blank);
  if (S > 1)
    alpha[1] = lp_at(x, 0, ext_label(x, 1));
  for (int64_t t = 1; t < x->steps; t++)
    for (int64_t s = 0; s < S; s++) {
      const double *prev = alpha + (t - 1) * S;
      double a = prev[s];
      if (s >= 1)
        a = log_add(a, prev[s - 1]);
      int64_t l = ext_label(x, s);
      if (s >= 2 && l != x->blank && l != ext_label(x, s - 2))
        a = log_add(a, prev[s - 2]);
      alpha[t * S + s] = a == -INF ? -INF : a + lp_at(x, t, l);
    }
  const double *last = alpha + (x->steps - 1) * S;
  double ll = S > 1 ? log_add(last[S - 1], last[S - 2]) : last[0];
  return -ll;
}

/* beta: steps x S, filled (each includes its own step's log-probability, as alpha does). */
static void ctc_beta(const ctc_sample *x, double *beta) {
  int64_t S = 2 * x->labels + 1, T = x->steps;
  for (int64_t i = 0; i < T * S; i++)
    beta[i] = -INF;
  if (T == 0)
    return;
  beta[(T - 1) * S + S - 1] = lp_at(x, T - 1, ext_label(x, S - 1));
  if (S > 1)
    beta[(T - 1) * S + S - 2] = lp_at(x, T - 1, ext_label(x, S - 2));
  for (int64_t t = T - 2; t >= 0; t--)
    for (int64_t s = 0; s < S; s++) {
      const double *next = beta + (t + 1) * S;
      double b = next[s];
      if (s + 1 < S)
        b = log_add(b, next[s + 1]);
      int64_t l = ext_label(x, s);
      if (s + 2 < S && l != x->blank && l != ext_label(x, s + 2))
        b = log_add(b, next[s + 2]);
      beta[t * S + s] = b == -INF ? -INF : b + lp_at(x, t, l);
    }
}

/* The operands, checked: log_probs [T, N, C] floating, targets i64 concatenated, the lengths
 * i64 [N]. Fills the offsets of each sample's target. false after an error. */
typedef struct ctc_operands {
  gs__tensor lp, targets, in_len, tg_len; /* contiguous copies (or the tensors themselves) */
  int64_t T, N, C;
  int64_t *offsets;
} ctc_operands;

static void release_operands(ctc_operands *o) {
  gs__tensor_release(&o->lp);
  gs__tensor_release(&o->targets);
  gs__tensor_release(&o->in_len);
  gs__tensor_release(&o->tg_len);
  free(o->offsets);
}

static bool check_operands(gs__tensor *lp, gs__tensor *targets, gs__tensor *in_len,
                           gs__tensor *tg_len, int64_t blank, ctc_operands *o, const char *fn) {
  memset(o, 0, sizeof *o);
  if (lp->ndim != 3 || !gs_dtype_is_floating(lp->dtype)) {
    gs__error(GS_ERR_SHAPE, fn, "expected log_probs of shape [T, N, C], floating, got %dD %s",
              lp->ndim, gs_dtype_name(lp->dtype));
    return false;
  }
  o->T = lp->shape[0], o->N = lp->shape[1], o->C = lp->shape[2];
  if (targets->dtype != GS_I64 || targets->ndim != 1 || in_len->dtype != GS_I64 ||
      tg_len->dtype != GS_I64 || in_len->ndim != 1 || tg_len->ndim != 1 ||
      in_len->shape[0] != o->N || tg_len->shape[0] != o->N) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected int64 targets (1-D, concatenated) and int64 input and target lengths "
              "of shape [%lld], got targets %dD %s, lengths %dD %s and %dD %s",
              (long long)o->N, targets->ndim, gs_dtype_name(targets->dtype), in_len->ndim,
              gs_dtype_name(in_len->dtype), tg_len->ndim, gs_dtype_name(tg_len->dtype));
    return false;
  }
  if (blank < 0 || blank >= o->C) {
    gs__error(GS_ERR_ARGUMENT, fn, "blank must be in label range, got blank %lld for %lld classes",
              (long long)blank, (long long)o->C);
    return false;
  }
  if (!gs__as_contiguous(lp, lp->dtype, &o->lp, fn) ||
      !gs__as_contiguous(targets, GS_I64, &o->targets, fn) ||
      !gs__as_contiguous(in_len, GS_I64, &o->in_len, fn) ||
      !gs__as_contiguous(tg_len, GS_I64, &o->tg_len, fn)) {
    release_operands(o);
    return false;
  }
  o->offsets = malloc(sizeof(int64_t) * (size_t)(o->N + 1));
  if (!o->offsets) {
    release_operands(o);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return false;
  }
  const int64_t *il = (const int64_t *)(const void *)gs__tensor_data(&o->in_len),
                *tl = (const int64_t *)(const void *)gs__tensor_data(&o->tg_len);
  const int64_t *tg = (const int64_t *)(const void *)gs__tensor_data(&o->targets);
  o->offsets[0] = 0;
  for (int64_t b = 0; b < o->N; b++) {
    if (il[b] < 0 || il[b] > o->T) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "Expected input_lengths to have value at most %lld, but got value %lld",
                (long long)o->T, (long long)il[b]);
      release_operands(o);
      return false;
    }
    if (tl[b] < 0 || o->offsets[b] + tl[b] > targets->shape[0]) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected target lengths that fit the %lld targets, got %lld for sample %lld",
                (long long)targets->shape[0], (long long)tl[b], (long long)b);
      release_operands(o);
      return false;
    }
    for (int64_t i = o->offsets[b]; i < o->offsets[b] + tl[b]; i++)
      if (tg[i] < 0 || tg[i] >= o->C || tg[i] == blank) {
        gs__error(GS_ERR_ARGUMENT, fn,
                  "expected target labels in [0, %lld) other than blank %lld, got %lld",
                  (long long)o->C, (long long)blank, (long long)tg[i]);
        release_operands(o);
        return false;
      }
    o->offsets[b + 1] = o->offsets[b] + tl[b];
  }
  return true;
}

static ctc_sample sample_of(const ctc_operands *o, int64_t b, int64_t blank) {
  const int64_t *il = (const int64_t *)(const void *)gs__tensor_data(&o->in_len),
                *tl = (const int64_t *)(const void *)gs__tensor_data(&o->tg_len);
  const int64_t *tg = (const int64_t *)(const void *)gs__tensor_data(&o->targets);
  size_t es = gs_dtype_size(o->lp.dtype);
  return (ctc_sample){.lp = (const char *)gs__tensor_data(&o->lp) + (size_t)(b * o->C) * es,
                      .dt = o->lp.dtype,
                      .t_stride = o->N * o->C,
                      .c_stride = 1,
                      .steps = il[b],
                      .labels = tl[b],
                      .target = tg + o->offsets[b],
                      .blank = blank};
}

static void ctc_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const char *fn = "ctc_loss_backward";
  int64_t blank = n->ints[CTC_BLANK];
  bool zero_inf = n->ints[CTC_ZERO_INF];
  gs__tensor *lp = gs__lookup(gs__saved(n, 0), fn);
  gs__tensor *tg = gs__lookup(gs__saved(n, 1), fn);
  gs__tensor *il = gs__lookup(gs__saved(n, 2), fn);
  gs__tensor *tl = gs__lookup(gs__saved(n, 3), fn);
  gs__tensor *gp = gs__lookup(g, fn);
  ctc_operands o;
  gs__tensor cg;
  if (!lp || !tg || !il || !tl || !gp || !check_operands(lp, tg, il, tl, blank, &o, fn))
    return;
  if (!gs__as_contiguous(gp, GS_F64, &cg, fn)) {
    release_operands(&o);
    return;
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(lp->dtype, lp->shape, 3, fn, &out);
  int64_t maxS = 1;
  for (int64_t b = 0; b < o.N; b++) {
    int64_t S = 2 * (o.offsets[b + 1] - o.offsets[b]) + 1;
    maxS = S > maxS ? S : maxS;
  }
  double *work = malloc(sizeof(double) * (size_t)(2 * o.T * maxS + o.C + 1));
  if (!h.id || !work) {
    free(work);
    gs_dispose(h);
    gs__tensor_release(&cg);
    release_operands(&o);
    if (h.id)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return;
  }
  char *po = gs__tensor_data(out);
  size_t es = gs_dtype_size(lp->dtype);
  memset(po, 0, (size_t)out->numel * es);
  const double *gv = (const double *)(const void *)gs__tensor_data(&cg);
  for (int64_t b = 0; b < o.N; b++) {
    ctc_sample x = sample_of(&o, b, blank);
    int64_t S = 2 * x.labels + 1;
    double *alpha = work, *beta = work + o.T * maxS, *lcab = beta + o.T * maxS;
    double nll = ctc_alpha(&x, alpha);
    if (isinf(nll) && zero_inf)
      continue;
    ctc_beta(&x, beta);
    double gb = gv[b];
    for (int64_t t = 0; t < x.steps; t++) {
      for (int64_t c = 0; c < o.C; c++)
        lcab[c] = -INF;
      for (int64_t s = 0; s < S; s++) {
        int64_t l = ext_label(&x, s);
        lcab[l] = log_add(lcab[l], alpha[t * S + s] + beta[t * S + s]);
      }
      for (int64_t c = 0; c < o.C; c++) {
        double lpv = lp_at(&x, t, c);
        double v = (exp(lpv) - exp(lcab[c] + nll - lpv)) * gb;
        size_t at = (size_t)((t * o.N + b) * o.C + c);
        if (lp->dtype == GS_F32)
          ((float *)po)[at] = (float)v;
        else
          ((double *)po)[at] = v;
      }
    }
  }
  free(work);
  gs__tensor_release(&cg);
  release_operands(&o);
  grads[0] = h;
}
GS__BACKWARD(CtcLossBackward, ctc_backward);

gs_tensor gs_ctc_loss(gs_tensor log_probs, gs_tensor targets, gs_tensor input_lengths,
                      gs_tensor target_lengths, int64_t blank, bool zero_infinity) {
  const char *fn = "ctc_loss";
  gs__tensor *lp = gs__lookup(log_probs, fn);
  gs__tensor *tg = lp ? gs__lookup(targets, fn) : NULL;
  gs__tensor *il = tg ? gs__lookup(input_lengths, fn) : NULL;
  gs__tensor *tl = il ? gs__lookup(target_lengths, fn) : NULL;
  ctc_operands o;
  if (!tl || !check_operands(lp, tg, il, tl, blank, &o, fn))
    return GS_NO_TENSOR;
  int64_t maxS = 1;
  for (int64_t b = 0; b < o.N; b++) {
    int64_t S = 2 * (o.offsets[b + 1] - o.offsets[b]) + 1;
    maxS = S > maxS ? S : maxS;
  }
  double *alpha = malloc(sizeof(double) * (size_t)(o.T * maxS + 1));
  gs__tensor *out;
  gs_tensor h = alpha ? gs__tensor_new(lp->dtype, &o.N, 1, fn, &out) : GS_NO_TENSOR;
  if (!h.id) {
    free(alpha);
    release_operands(&o);
    if (!alpha)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_TENSOR;
  }
  for (int64_t b = 0; b < o.N; b++) {
    ctc_sample x = sample_of(&o, b, blank);
    double nll = ctc_alpha(&x, alpha);
    if (isinf(nll) && zero_infinity)
      nll = 0.0;
    gs__store_f64((char *)gs__tensor_data(out) + (size_t)b * gs_dtype_size(lp->dtype), lp->dtype,
                  nll);
  }
  free(alpha);
  release_operands(&o);
  gs__node *n = gs__record(&CtcLossBackward, out, 1, (const gs__tensor *[]){lp}, 4);
  if (n) {
    n->ints[CTC_BLANK] = blank;
    n->ints[CTC_ZERO_INF] = zero_infinity;
    gs__save(n, 0, lp);
    gs__save(n, 1, tg);
    gs__save(n, 2, il);
    gs__save(n, 3, tl);
  }
  return h;
}
