/* test-loss.c: the losses against values computed here in plain C from PyTorch's formulas,
 * in every reduction; label smoothing; gradcheck of each loss with respect to its floating
 * inputs; the errors each refuses bad arguments with; and that a call leaves exactly one new
 * handle (every test ends with the live tensor count it started with). */
#include "test-util.h"

#define N 3
#define C 4

static const double logits_v[N * C] = {0.5, -1.25, 2.0,  0.125, /* row 0 */
                                       -0.75, 0.3, 0.0, 1.5,    /* row 1 */
                                       3.0, -2.0, 0.25, -0.5};  /* row 2 */
static const int64_t targets_v[N] = {2, 0, 3};

static gs_tensor make_logits(bool requires_grad) {
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){N, C}, 2, logits_v);
  if (requires_grad)
    gs_set_requires_grad(t, true);
  return t;
}

static gs_tensor make_targets(void) {
  return gs_from_data(GS_I64, (int64_t[]){N}, 1, targets_v);
}

/* Per-row cross entropy with smoothing eps, as PyTorch: (1-eps)*nll + eps*mean_c(-lsm). */
static void expected_ce_rows(double eps, double *rows) {
  for (int i = 0; i < N; i++) {
    const double *x = &logits_v[i * C];
    double m = x[0];
    for (int c = 1; c < C; c++)
      m = fmax(m, x[c]);
    double s = 0, mean_x = 0;
    for (int c = 0; c < C; c++)
      s += exp(x[c] - m), mean_x += x[c] / C;
    double lse = m + log(s);
    double nll = lse - x[targets_v[i]];
    double smooth = lse - mean_x;
    rows[i] = (1 - eps) * nll + eps * smooth;
  }
}

/* Checks a loss result against per-element expectations under reduction. */
static void assert_reduced(gs_tensor loss, gs_reduction reduction, const double *rows,
                           const int64_t *shape, int ndim) {
  int64_t n = test_numel(shape, ndim);
  if (reduction == GS_REDUCTION_NONE) {
    test_assert_values(loss, shape, ndim, rows, 1e-12, 1e-12);
    return;
  }
  double total = 0;
  for (int64_t i = 0; i < n; i++)
    total += rows[i];
  double expected = reduction == GS_REDUCTION_MEAN ? total / (double)n : total;
  test_assert_values(loss, NULL, 0, &expected, 1e-12, 1e-12);
}

static const gs_reduction reductions[] = {GS_REDUCTION_MEAN, GS_REDUCTION_SUM,
                                          GS_REDUCTION_NONE};

/* ---- values -------------------------------------------------------------------------- */

static void test_cross_entropy_values(void) {
  gs_tensor logits = make_logits(false), targets = make_targets();
  const double eps_values[] = {0.0, 0.1, 0.35};
  for (size_t e = 0; e < G_N_ELEMENTS(eps_values); e++) {
    double rows[N];
    expected_ce_rows(eps_values[e], rows);
    for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
      test_set_context("cross_entropy eps %g reduction %d", eps_values[e], (int)reductions[r]);
      uint64_t before = gs_live_tensor_count();
      gs_tensor loss = gs_cross_entropy(logits, targets, reductions[r], eps_values[e]);
      g_assert_cmpuint(gs_live_tensor_count(), ==, before + 1); /* only the result */
      assert_reduced(loss, reductions[r], rows, (int64_t[]){N}, 1);
      gs_dispose(loss);
    }
  }
  gs_dispose(logits), gs_dispose(targets);
}

/* Logits in f32 give an f32 loss close to the f64 one. */
static void test_cross_entropy_f32(void) {
  gs_tensor l64 = make_logits(false), targets = make_targets();
  gs_tensor l32 = gs_to_dtype(l64, GS_F32);
  gs_tensor loss = gs_cross_entropy(l32, targets, GS_REDUCTION_MEAN, 0.1);
  g_assert_cmpint(gs_dtype_of(loss), ==, GS_F32);
  double rows[N];
  expected_ce_rows(0.1, rows);
  double expected = (rows[0] + rows[1] + rows[2]) / N;
  test_assert_values(loss, NULL, 0, &expected, 1e-5, 1e-5);
  gs_dispose(loss), gs_dispose(l32), gs_dispose(l64), gs_dispose(targets);
}

/* With label smoothing and no weighed rows, cross_entropy is one node (CrossEntropyLossBackward,
 * engine/ops/cross-entropy.c); its values and gradients are the composition's (a unit class
 * weight takes that path), in f64 and f32, every reduction, also for logits around 1e4
 * where a careless smoothing term would cancel. */
static void test_cross_entropy_fused_is_the_composition(void) {
  const gs_dtype dtypes[] = {GS_F64, GS_F32};
  const double offsets[] = {0.0, 1e4};
  for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++)
    for (size_t o = 0; o < G_N_ELEMENTS(offsets); o++)
      for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
        test_set_context("dtype %s offset %g reduction %d", gs_dtype_name(dtypes[d]), offsets[o],
                         (int)reductions[r]);
        double tol = dtypes[d] == GS_F64 ? 1e-12 : 1e-5;
        gs_tensor base = make_logits(false), shifted = gs_add_scalar(base, offsets[o]);
        gs_tensor targets = make_targets();
        gs_tensor a = gs_to_dtype(shifted, dtypes[d]), b = gs_to_dtype(shifted, dtypes[d]);
        gs_set_requires_grad(a, true), gs_set_requires_grad(b, true);
        gs_tensor ones = gs_ones(dtypes[d], (int64_t[]){C}, 1);
        gs_tensor fused = gs_cross_entropy(a, targets, reductions[r], 0.3);
        gs_tensor composed = gs_cross_entropy_weighted(b, targets, ones, reductions[r], 0.3, -100);
        g_assert_cmpstr(gs_grad_fn_name(fused), ==, "CrossEntropyLossBackward");
        g_assert_cmpstr(gs_grad_fn_name(composed), !=, "CrossEntropyLossBackward");
        gs_tensor fa = gs_to_dtype(fused, GS_F64), fb = gs_to_dtype(composed, GS_F64);
        gs_tensor sa = gs_sum(fused, NULL, 0, false), sb = gs_sum(composed, NULL, 0, false);
        gs_backward(sa), gs_backward(sb);
        gs_tensor ga = gs_to_dtype(gs_grad(a), GS_F64), gb = gs_to_dtype(gs_grad(b), GS_F64);
        double va[N], vb[N], da[N * C], db[N * C];
        int64_t nv = gs_numel(fa);
        g_assert_cmpint(gs_copy_to(fa, va, sizeof va), ==, 0);
        g_assert_cmpint(gs_copy_to(fb, vb, sizeof vb), ==, 0);
        g_assert_cmpint(gs_copy_to(ga, da, sizeof da), ==, 0);
        g_assert_cmpint(gs_copy_to(gb, db, sizeof db), ==, 0);
        for (int64_t i = 0; i < nv; i++)
          g_assert_cmpfloat_with_epsilon(va[i], vb[i], tol * (1 + fabs(vb[i])));
        for (int i = 0; i < N * C; i++)
          g_assert_cmpfloat_with_epsilon(da[i], db[i], tol);
        DISPOSE_ALL(base, shifted, targets, a, b, ones, fused, composed, fa, fb, sa, sb, ga, gb);
      }
}

/* nll_loss of log_softmax is cross_entropy; on arbitrary scores it picks -x[target]. */
static void test_nll_loss_values(void) {
  gs_tensor logits = make_logits(false), targets = make_targets();
  double rows[N];
  for (int i = 0; i < N; i++)
    rows[i] = -logits_v[i * C + targets_v[i]];
  for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
    test_set_context("nll_loss reduction %d", (int)reductions[r]);
    uint64_t before = gs_live_tensor_count();
    gs_tensor loss = gs_nll_loss(logits, targets, reductions[r]);
    g_assert_cmpuint(gs_live_tensor_count(), ==, before + 1);
    assert_reduced(loss, reductions[r], rows, (int64_t[]){N}, 1);
    gs_dispose(loss);
  }
  gs_tensor lsm = gs_log_softmax(logits, 1);
  gs_tensor a = gs_nll_loss(lsm, targets, GS_REDUCTION_MEAN);
  gs_tensor b = gs_cross_entropy(logits, targets, GS_REDUCTION_MEAN, 0.0);
  test_assert_values(a, NULL, 0, (double[]){gs_item(b)}, 1e-14, 1e-14);
  gs_dispose(a), gs_dispose(b), gs_dispose(lsm), gs_dispose(logits), gs_dispose(targets);
}

static void test_mse_loss_values(void) {
  const double x[6] = {1.0, -2.0, 0.5, 3.25, 0.0, -1.5};
  const double y[6] = {0.5, -2.0, 1.5, 1.0, -0.25, 2.0};
  int64_t shape[2] = {2, 3};
  gs_tensor input = gs_from_data(GS_F64, shape, 2, x);
  gs_tensor target = gs_from_data(GS_F64, shape, 2, y);
  double rows[6];
  for (int i = 0; i < 6; i++)
    rows[i] = (x[i] - y[i]) * (x[i] - y[i]);
  for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
    test_set_context("mse_loss reduction %d", (int)reductions[r]);
    uint64_t before = gs_live_tensor_count();
    gs_tensor loss = gs_mse_loss(input, target, reductions[r]);
    g_assert_cmpuint(gs_live_tensor_count(), ==, before + 1);
    assert_reduced(loss, reductions[r], rows, shape, 2);
    gs_dispose(loss);
  }
  gs_dispose(input), gs_dispose(target);
}

static double bce_ref(double x, double y) {
  return fmax(x, 0) - x * y + log1p(exp(-fabs(x)));
}

static void test_bce_with_logits_values(void) {
  const double x[8] = {-2.5, -0.3, 0.0, 0.7, 3.0, 40.0, -40.0, 1000.0};
  const double y[8] = {0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.25, 0.0};
  int64_t shape[2] = {2, 4};
  gs_tensor logits = gs_from_data(GS_F64, shape, 2, x);
  gs_tensor targets = gs_from_data(GS_F64, shape, 2, y);
  double rows[8];
  for (int i = 0; i < 8; i++)
    rows[i] = bce_ref(x[i], y[i]);
  g_assert_cmpfloat(rows[7], ==, 1000.0); /* stable: no overflow for large logits */
  for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
    test_set_context("bce_with_logits reduction %d", (int)reductions[r]);
    uint64_t before = gs_live_tensor_count();
    gs_tensor loss = gs_binary_cross_entropy_with_logits(logits, targets, reductions[r]);
    g_assert_cmpuint(gs_live_tensor_count(), ==, before + 1);
    assert_reduced(loss, reductions[r], rows, shape, 2);
    gs_dispose(loss);
  }
  gs_dispose(logits), gs_dispose(targets);
}

/* The gradient at x = 0 is sigmoid(0) - y = 0.5 - y exactly (no kink from relu or abs), and
 * mean reduction divides by the element count. */
static void test_bce_gradient_at_zero(void) {
  const double x[3] = {0.0, 0.0, 2.0}, y[3] = {0.0, 1.0, 0.25};
  gs_tensor logits = gs_from_data(GS_F64, (int64_t[]){3}, 1, x);
  gs_set_requires_grad(logits, true);
  gs_tensor targets = gs_from_data(GS_F64, (int64_t[]){3}, 1, y);
  gs_tensor loss = gs_binary_cross_entropy_with_logits(logits, targets, GS_REDUCTION_MEAN);
  gs_backward(loss);
  double expected[3];
  for (int i = 0; i < 3; i++)
    expected[i] = (1.0 / (1.0 + exp(-x[i])) - y[i]) / 3.0;
  test_assert_values(gs_grad(logits), (int64_t[]){3}, 1, expected, 1e-14, 1e-12);
  gs_dispose(loss), gs_dispose(logits), gs_dispose(targets);
}

/* Cross entropy's gradient is (softmax - smoothed one-hot) / N under mean reduction. */
static void test_cross_entropy_gradient(void) {
  uint64_t live = gs_live_tensor_count();
  const double eps = 0.2;
  gs_tensor logits = make_logits(true), targets = make_targets();
  gs_tensor loss = gs_cross_entropy(logits, targets, GS_REDUCTION_MEAN, eps);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + 3);
  gs_backward(loss);
  double expected[N * C];
  for (int i = 0; i < N; i++) {
    const double *x = &logits_v[i * C];
    double s = 0;
    for (int c = 0; c < C; c++)
      s += exp(x[c]);
    for (int c = 0; c < C; c++) {
      double q = (1 - eps) * (c == targets_v[i]) + eps / C;
      expected[i * C + c] = (exp(x[c]) / s - q) / N;
    }
  }
  test_assert_values(gs_grad(logits), (int64_t[]){N, C}, 2, expected, 1e-14, 1e-12);
  gs_dispose(loss), gs_dispose(logits), gs_dispose(targets);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* ---- gradcheck ------------------------------------------------------------------------ */

typedef enum { LOSS_CE, LOSS_NLL, LOSS_MSE, LOSS_BCE, LOSS_CE_IGNORE, LOSS_NLL_IGNORE } loss_kind;

/* Row 1's target is ignore_index (-100, torch's default): it counts 0 and the mean is over
 * rows 0 and 2. */
static const int64_t ignored_targets_v[N] = {2, -100, 3};

typedef struct loss_call {
  loss_kind kind;
  gs_reduction reduction;
  double eps;
} loss_call;

static gs_tensor call_loss(const gs_tensor *in, int n, void *user_data) {
  (void)n;
  const loss_call *c = user_data;
  switch (c->kind) {
  case LOSS_CE:
    return gs_cross_entropy(in[0], in[1], c->reduction, c->eps);
  case LOSS_NLL:
    return gs_nll_loss(in[0], in[1], c->reduction);
  case LOSS_MSE:
    return gs_mse_loss(in[0], in[1], c->reduction);
  case LOSS_BCE:
    return gs_binary_cross_entropy_with_logits(in[0], in[1], c->reduction);
  case LOSS_CE_IGNORE: return gs_cross_entropy_ignore(in[0], in[1], c->reduction, c->eps, -100);
  case LOSS_NLL_IGNORE: return gs_nll_loss_ignore(in[0], in[1], c->reduction, -100);
  }
  return GS_NO_TENSOR;
}

static void run_gradcheck(loss_kind kind, gs_reduction reduction, double eps) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  int64_t shape[2] = {N, C};
  gs_tensor in[2];
  in[0] = test_make(GS_F64, shape, 2, LAYOUT_CONTIGUOUS, -2, 2, &rng);
  gs_set_requires_grad(in[0], true);
  if (kind == LOSS_CE || kind == LOSS_NLL) {
    in[1] = make_targets();
  } else if (kind == LOSS_CE_IGNORE || kind == LOSS_NLL_IGNORE) {
    in[1] = gs_from_data(GS_I64, (int64_t[]){N}, 1, ignored_targets_v);
  } else {
    /* Both inputs are checked: mse's target and bce's targets get gradients too. */
    double lo = kind == LOSS_BCE ? 0 : -2, hi = kind == LOSS_BCE ? 1 : 2;
    in[1] = test_make(GS_F64, shape, 2, LAYOUT_CONTIGUOUS, lo, hi, &rng);
    gs_set_requires_grad(in[1], true);
  }
  loss_call call = {kind, reduction, eps};
  gs_gradcheck_result result;
  bool passed = gs_gradcheck(call_loss, &call, in, 2, NULL, &result);
  if (!passed)
    g_printerr("loss %d reduction %d eps %g: %s\n", (int)kind, (int)reduction, eps,
               result.message);
  g_assert_true(passed);
  g_assert_cmpint(result.worst_input, >=, 0);
  gs_dispose(in[0]), gs_dispose(in[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_gradcheck_all(void) {
  for (size_t r = 0; r < G_N_ELEMENTS(reductions); r++) {
    run_gradcheck(LOSS_CE, reductions[r], 0.0);
    run_gradcheck(LOSS_CE, reductions[r], 0.25);
    run_gradcheck(LOSS_NLL, reductions[r], 0.0);
    run_gradcheck(LOSS_MSE, reductions[r], 0.0);
    run_gradcheck(LOSS_BCE, reductions[r], 0.0);
    run_gradcheck(LOSS_CE_IGNORE, reductions[r], 0.0);
    run_gradcheck(LOSS_CE_IGNORE, reductions[r], 0.25);
    run_gradcheck(LOSS_NLL_IGNORE, reductions[r], 0.0);
  }
}

/* ignore_index: the ignored row's loss is 0, the mean is over the others (the per-row values
 * of expected_ce_rows), the row gets no gradient; with every row ignored the mean is nan and
 * the gradient zero, as torch's. */
static void test_ignore_index(void) {
  const double eps_values[] = {0.0, 0.3};
  for (size_t e = 0; e < G_N_ELEMENTS(eps_values); e++) {
    double rows[N];
    expected_ce_rows(eps_values[e], rows);
    gs_tensor logits = make_logits(true);
    gs_tensor targets = gs_from_data(GS_I64, (int64_t[]){N}, 1, ignored_targets_v);
    gs_tensor none =
        gs_cross_entropy_ignore(logits, targets, GS_REDUCTION_NONE, eps_values[e], -100);
    test_assert_values(none, (int64_t[]){N}, 1, (double[]){rows[0], 0.0, rows[2]}, 1e-14, 1e-12);
    gs_tensor mean =
        gs_cross_entropy_ignore(logits, targets, GS_REDUCTION_MEAN, eps_values[e], -100);
    g_assert_cmpfloat_with_epsilon(gs_item(mean), (rows[0] + rows[2]) / 2, 1e-12);
    gs_backward(mean);
    gs_tensor row1 = gs_select(gs_grad(logits), 0, 1);
    test_assert_values(row1, (int64_t[]){C}, 1, (double[]){0, 0, 0, 0}, 0, 0);
    gs_dispose(row1), gs_dispose(mean), gs_dispose(none), gs_dispose(targets);
    gs_dispose(logits);
  }
  gs_tensor logits = make_logits(true);
  gs_tensor all = gs_from_data(GS_I64, (int64_t[]){N}, 1, (int64_t[]){7, 7, 7});
  gs_tensor mean = gs_cross_entropy_ignore(logits, all, GS_REDUCTION_MEAN, 0.2, 7);
  g_assert_true(isnan(gs_item(mean)));
  gs_backward(mean);
  gs_tensor abs_grad = gs_abs(gs_grad(logits));
  gs_tensor sum = gs_sum(abs_grad, NULL, 0, false);
  g_assert_cmpfloat(gs_item(sum), ==, 0.0);
  gs_tensor nll = gs_nll_loss_ignore(logits, all, GS_REDUCTION_SUM, 7);
  g_assert_cmpfloat(gs_item(nll), ==, 0.0);
  /* a target that is neither a class nor ignore_index is still an error */
  gs_tensor bad = gs_from_data(GS_I64, (int64_t[]){N}, 1, (int64_t[]){0, 9, 1});
  gs_tensor r;
  EXPECT_ERROR(r = gs_nll_loss_ignore(logits, bad, GS_REDUCTION_MEAN, -100),
               "target 9 is out of range");
  g_assert_cmpuint(r.id, ==, 0);
  gs_dispose(bad), gs_dispose(nll), gs_dispose(sum), gs_dispose(abs_grad), gs_dispose(mean);
  gs_dispose(all);
  gs_dispose(logits);
}

/* weight=: each kept row's nll times weight[target], the mean over the sum of the kept rows'
 * weights; the smoothing term sums each class's -log_softmax times its weight (torch's
 * formulas, computed here from the plain rows). */
static void test_class_weight(void) {
  test_set_context("class weight");
  const double w[C] = {0.5, 2.0, 1.5, 0.25};
  const int64_t targets[N] = {2, -100, 3};
  const double eps = 0.3;
  double nll[N], smooth[N], total = 0;
  for (int i = 0; i < N; i++) {
    const double *x = &logits_v[i * C];
    double m = x[0], s = 0;
    for (int c = 1; c < C; c++)
      m = fmax(m, x[c]);
    for (int c = 0; c < C; c++)
      s += exp(x[c] - m);
    double lse = m + log(s);
    bool keep = targets[i] != -100;
    nll[i] = keep ? w[targets[i]] * (lse - x[targets[i]]) : 0.0;
    smooth[i] = 0;
    for (int c = 0; keep && c < C; c++)
      smooth[i] += w[c] * (lse - x[c]) * eps / C;
    total += keep ? w[targets[i]] : 0.0;
  }
  gs_tensor logits = make_logits(false);
  gs_tensor t = gs_from_data(GS_I64, (int64_t[]){N}, 1, targets);
  gs_tensor weight = gs_from_data(GS_F64, (int64_t[]){C}, 1, w);
  gs_tensor lsm = gs_log_softmax(logits, 1);
  gs_tensor none = gs_nll_loss_weighted(lsm, t, weight, GS_REDUCTION_NONE, -100);
  test_assert_values(none, (int64_t[]){N}, 1, (double[]){nll[0], nll[1], nll[2]}, 1e-14, 1e-12);
  gs_tensor mean = gs_nll_loss_weighted(lsm, t, weight, GS_REDUCTION_MEAN, -100);
  g_assert_cmpfloat_with_epsilon(gs_item(mean), (nll[0] + nll[2]) / total, 1e-12);
  gs_tensor ce = gs_cross_entropy_weighted(logits, t, weight, GS_REDUCTION_MEAN, eps, -100);
  double rows = 0;
  for (int i = 0; i < N; i++)
    rows += (1 - eps) * nll[i] + smooth[i];
  g_assert_cmpfloat_with_epsilon(gs_item(ce), rows / total, 1e-12);
  gs_tensor sum = gs_cross_entropy_weighted(logits, t, weight, GS_REDUCTION_SUM, eps, -100);
  g_assert_cmpfloat_with_epsilon(gs_item(sum), rows, 1e-12);
  /* a weight of the wrong length or dtype is refused, naming what was expected */
  gs_tensor w3 = gs_zeros(GS_F64, (int64_t[]){3}, 1);
  gs_tensor w4f = gs_zeros(GS_F32, (int64_t[]){C}, 1);
  gs_tensor r;
  EXPECT_ERROR(r = gs_cross_entropy_weighted(logits, t, w3, GS_REDUCTION_MEAN, 0.0, -100),
               "cross_entropy: expected a class weight of shape [4] (one weight per class), got "
               "[3]");
  EXPECT_ERROR(r = gs_nll_loss_weighted(logits, t, w4f, GS_REDUCTION_MEAN, -100),
               "nll_loss: expected a class weight of the scores' dtype f64, got f32");
  g_assert_true(r.id == 0);
  DISPOSE_ALL(logits, t, weight, none, lsm, mean, ce, sum, w3, w4f);
}

/* ---- errors --------------------------------------------------------------------------- */

static void test_errors(void) {
  gs_tensor logits = gs_zeros(GS_F64, (int64_t[]){4, 5}, 2);
  gs_tensor t41 = gs_zeros(GS_I64, (int64_t[]){4, 1}, 2);
  gs_tensor bad = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){0, 4, 7, 1});
  gs_tensor neg = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){0, -1, 2, 1});
  gs_tensor ok = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){0, 4, 3, 1});
  gs_tensor f32t = gs_zeros(GS_F32, (int64_t[]){4}, 1);
  gs_tensor ilogits = gs_zeros(GS_I64, (int64_t[]){4, 5}, 2);
  gs_tensor v5 = gs_zeros(GS_F64, (int64_t[]){5}, 1);
  gs_tensor m23 = gs_zeros(GS_F64, (int64_t[]){2, 3}, 2);
  gs_tensor m32 = gs_zeros(GS_F64, (int64_t[]){3, 2}, 2);
  gs_tensor i23 = gs_zeros(GS_I64, (int64_t[]){2, 3}, 2);
  uint64_t before = gs_live_tensor_count();
  gs_tensor r = GS_NO_TENSOR;

  EXPECT_ERROR(r = gs_cross_entropy(logits, t41, GS_REDUCTION_MEAN, 0.0),
               "cross_entropy: expected targets of shape [4] (one class index per row), got "
               "[4, 1]");
  g_assert_true(r.id == 0);
  EXPECT_ERROR(r = gs_cross_entropy(logits, bad, GS_REDUCTION_MEAN, 0.0),
               "cross_entropy: target 7 is out of range for 5 classes (row 2; expected 0 to 4)");
  EXPECT_ERROR(r = gs_nll_loss(logits, neg, GS_REDUCTION_SUM),
               "nll_loss: target -1 is out of range for 5 classes");
  EXPECT_ERROR(r = gs_cross_entropy(logits, f32t, GS_REDUCTION_MEAN, 0.0),
               "cross_entropy: expected i64 targets (class indices), got f32");
  EXPECT_ERROR(r = gs_cross_entropy(ilogits, ok, GS_REDUCTION_MEAN, 0.0),
               "cross_entropy: expected floating logits (f32 or f64), got i64");
  EXPECT_ERROR(r = gs_cross_entropy(v5, ok, GS_REDUCTION_MEAN, 0.0),
               "cross_entropy: expected logits of shape [N, C]");
  EXPECT_ERROR(r = gs_nll_loss(v5, ok, GS_REDUCTION_MEAN),
               "nll_loss: expected log_probs of shape [N, C] (a row of class scores per "
               "sample), got [5]");
  EXPECT_ERROR(r = gs_cross_entropy(logits, ok, GS_REDUCTION_MEAN, -0.1),
               "cross_entropy: expected label_smoothing between 0.0 and 1.0, got -0.1");
  EXPECT_ERROR(r = gs_cross_entropy(logits, ok, GS_REDUCTION_MEAN, NAN),
               "expected label_smoothing between 0.0 and 1.0, got nan");
  EXPECT_ERROR(r = gs_cross_entropy(logits, ok, (gs_reduction)7, 0.0),
               "cross_entropy: unknown reduction 7");
  EXPECT_ERROR(r = gs_mse_loss(m23, m32, GS_REDUCTION_MEAN),
               "mse_loss: expected input and target of the same shape, got [2, 3] and [3, 2]");
  EXPECT_ERROR(r = gs_mse_loss(m23, i23, GS_REDUCTION_MEAN),
               "mse_loss: expected floating target (f32 or f64), got i64");
  EXPECT_ERROR(r = gs_binary_cross_entropy_with_logits(m23, m32, GS_REDUCTION_NONE),
               "binary_cross_entropy_with_logits: expected logits and targets of the same "
               "shape, got [2, 3] and [3, 2]");
  EXPECT_ERROR(r = gs_binary_cross_entropy_with_logits(i23, m23, GS_REDUCTION_NONE),
               "binary_cross_entropy_with_logits: expected floating logits (f32 or f64), got "
               "i64");
  EXPECT_ERROR(r = gs_mse_loss(m23, m23, (gs_reduction)-1), "mse_loss: unknown reduction -1");
  g_assert_true(r.id == 0);
  /* A stale handle is reported under the loss's name. */
  gs_tensor gone = gs_zeros(GS_F64, (int64_t[]){2, 3}, 2);
  gs_dispose(gone);
  EXPECT_ERROR(r = gs_mse_loss(gone, m23, GS_REDUCTION_MEAN), "mse_loss:");
  g_assert_cmpuint(gs_live_tensor_count(), ==, before); /* a refused call creates nothing */

  DISPOSE_ALL(logits, t41, bad, neg, ok, f32t, ilogits, v5, m23, m32, i23);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/loss/cross-entropy-values", test_cross_entropy_values);
  test_add_leak_checked("/loss/cross-entropy-f32", test_cross_entropy_f32);
  test_add_leak_checked("/loss/cross-entropy-fused-is-the-composition",
                        test_cross_entropy_fused_is_the_composition);
  g_test_add_func("/loss/cross-entropy-gradient", test_cross_entropy_gradient);
  test_add_leak_checked("/loss/nll-loss-values", test_nll_loss_values);
  test_add_leak_checked("/loss/mse-loss-values", test_mse_loss_values);
  test_add_leak_checked("/loss/bce-with-logits-values", test_bce_with_logits_values);
  test_add_leak_checked("/loss/bce-gradient-at-zero", test_bce_gradient_at_zero);
  g_test_add_func("/loss/gradcheck", test_gradcheck_all);
  g_test_add_func("/loss/ignore-index", test_ignore_index);
  test_add_leak_checked("/loss/class-weight", test_class_weight);
  test_add_leak_checked("/loss/errors", test_errors);
  return g_test_run();
}
