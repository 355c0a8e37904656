/* test-layers.c: Dropout statistics and gradient, Embedding rows and gradient accumulation,
 * LayerNorm values against plain C and gradcheck, argument errors, and no leaked handles. */
#include "test-util.h"

static void test_dropout_statistics_and_grad(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  const double p = 0.3;
  const int64_t n = 100000;
  gs_tensor x = gs_uniform(GS_F64, &n, 1, 0.5, 1.5, &rng);
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_dropout(x, p, true, &rng);
  double *vx = test_values(x), *vy = test_values(y);
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; i++) {
    if (vy[i] == 0.0)
      zeros++;
    else
      g_assert_cmpfloat(vy[i], ==, vx[i] * (1.0 / (1.0 - p))); /* exactly scaled */
  }
  double frac = (double)zeros / (double)n;
  /* sd of the fraction is sqrt(p(1-p)/n) ~ 0.00145: allow ~7 sd. */
  g_assert_cmpfloat(fabs(frac - p), <, 0.01);

  /* Gradient of sum(y) is the mask scaled by 1/(1-p), exactly. */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  double *g = test_values(gs_grad(x));
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat(g[i], ==, vy[i] == 0.0 ? 0.0 : 1.0 / (1.0 - p));
  g_free(vx), g_free(vy), g_free(g);
  gs_dispose(y), gs_dispose(s);

  /* Eval mode and p == 0: identity values, gradient one. */
  gs_tensor small = gs_from_data(GS_F64, (int64_t[]){2, 2}, 2, (double[]){1, -2, 3, 4});
  gs_set_requires_grad(small, true);
  gs_tensor e = gs_dropout(small, 0.9, false, &rng);
  gs_tensor z = gs_dropout(small, 0.0, true, NULL);
  test_assert_values(e, (int64_t[]){2, 2}, 2, (double[]){1, -2, 3, 4}, 0, 0);
  test_assert_values(z, (int64_t[]){2, 2}, 2, (double[]){1, -2, 3, 4}, 0, 0);
  g_assert_true(gs_requires_grad(e));
  gs_tensor se = gs_sum(e, NULL, 0, false);
  gs_backward(se);
  test_assert_values(gs_grad(small), (int64_t[]){2, 2}, 2, (double[]){1, 1, 1, 1}, 0, 0);
  gs_dispose(e), gs_dispose(z), gs_dispose(se), gs_dispose(small), gs_dispose(x);
}

static void test_dropout_errors(void) {
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_dropout(x, 1.5, true, NULL), "dropout: expected p in [0, 1), got 1.5");
  EXPECT_ERROR(gs_dropout(x, 1.0, true, NULL), "dropout: expected p in [0, 1), got 1");
  EXPECT_ERROR(gs_dropout(x, -0.1, false, NULL), "dropout: expected p in [0, 1), got -0.1");
  gs_tensor i = gs_zeros(GS_I64, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_dropout(i, 0.5, true, NULL), "dropout: expected a floating tensor");
  /* the module's p changed after construction is the one its forwards use */
  gs_module d = gs_dropout_new(0.5, NULL);
  g_assert_cmpfloat(gs_dropout_p(d), ==, 0.5);
  g_assert_true(gs_dropout_set_p(d, 0.0));
  gs_tensor y = gs_module_forward(d, x);
  test_assert_values(y, (int64_t[]){3}, 1, (double[]){1, 1, 1}, 0, 0);
  EXPECT_ERROR(gs_dropout_set_p(d, 1.0), "dropout_set_p: expected p in [0, 1), got 1");
  g_assert_cmpfloat(gs_dropout_p(d), ==, 0.0);
  gs_module relu = gs_relu_new();
  EXPECT_ERROR(gs_dropout_p(relu), "dropout_p");
  gs_dispose(x), gs_dispose(i), gs_dispose(y);
  gs_module_dispose(d), gs_module_dispose(relu);
}

static void test_embedding(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_module emb = gs_embedding_new(10, 4, &rng);
  gs_tensor w = gs_module_parameter(emb, "weight");
  g_assert_cmpint(gs_module_parameter_count(emb), ==, 1);
  g_assert_true(gs_is_parameter(w) && gs_requires_grad(w));
  g_assert_cmpint(gs_size(w, 0), ==, 10);
  g_assert_cmpint(gs_size(w, 1), ==, 4);

  int64_t idx[6] = {3, 0, 3, 9, 3, 0};
  gs_tensor index = gs_from_data(GS_I64, (int64_t[]){2, 3}, 2, idx);
  gs_tensor y = gs_embedding_forward(emb, index);
  double *vw = test_values(w), expected[24];
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 4; c++)
      expected[r * 4 + c] = vw[idx[r] * 4 + c];
  test_assert_values(y, (int64_t[]){2, 3, 4}, 3, expected, 0, 0);
  g_free(vw);

  /* Repeated indices accumulate: row 3 three times, row 0 twice, row 9 once. */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  double grad[40] = {0};
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 4; c++)
      grad[idx[r] * 4 + c] += 1.0;
  test_assert_values(gs_grad(w), (int64_t[]){10, 4}, 2, grad, 0, 0);

  /* N(0, 1) initialisation: a large table has mean ~0 and variance ~1. */
  gs_module big = gs_embedding_new(1000, 50, &rng);
  double *vb = test_values(gs_module_parameter(big, "weight"));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < 50000; i++)
    sum += vb[i], sum2 += vb[i] * vb[i];
  double mean = sum / 50000, var = sum2 / 50000 - mean * mean;
  g_assert_cmpfloat(fabs(mean), <, 0.03);
  g_assert_cmpfloat(fabs(var - 1.0), <, 0.05);
  g_free(vb);

  EXPECT_ERROR(gs_embedding_new(0, 4, NULL), "embedding_new: expected positive sizes, got num_embeddings 0, dim 4");
  gs_module lin = gs_linear_new(2, 2, false, NULL);
  gs_module ln = gs_layer_norm_new(4, 1e-5);
  EXPECT_ERROR(gs_embedding_forward(ln, index), "embedding_forward: expected an Embedding module");
  gs_dispose(index), gs_dispose(y), gs_dispose(s);
  gs_module_dispose(emb), gs_module_dispose(big), gs_module_dispose(lin), gs_module_dispose(ln);
}

/* torch.nn.Embedding's options: the padding row starts at zero and gets no gradient, the
 * gradient divided by each row's count, rows renormalised in place to max_norm. */
static void test_embedding_options(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_embedding_options o = gs_embedding_defaults();
  o.padding_idx = 2;
  o.scale_grad_by_freq = true;
  gs_module emb = gs_embedding_new_with(5, 3, &o, &rng);
  gs_tensor w = gs_module_parameter(emb, "weight");
  gs_tensor pad_row = gs_select(w, 0, 2);
  test_assert_values(pad_row, (int64_t[]){3}, 1, (double[]){0, 0, 0}, 0, 0);
  int64_t picks[6] = {2, 0, 0, 4, 2, 0};
  gs_tensor index = gs_from_data(GS_I64, (int64_t[]){2, 3}, 2, picks);
  gs_tensor y = gs_embedding_forward(emb, index);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  /* row 0 named 3 times: 3 / 3; row 4 once; row 2 (padding) nothing */
  test_assert_values(gs_grad(w), (int64_t[]){5, 3}, 2,
                     (double[]){1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, 0, 0);
  gs_embedding_options got;
  g_assert_true(gs_embedding_get_options(emb, &got));
  g_assert_cmpint(got.padding_idx, ==, 2);
  g_assert_true(got.scale_grad_by_freq);

  /* max_norm: rows 0 and 1 (norms 5 and 0.5) read with max_norm 1: row 0 becomes norm 1 */
  double vals[6] = {3, 4, 0.3, 0.4, 6, 8};
  gs_tensor tw = gs_from_data(GS_F64, (int64_t[]){3, 2}, 2, vals);
  int64_t two[2] = {0, 1};
  gs_tensor i2 = gs_from_data(GS_I64, (int64_t[]){2}, 1, two);
  int64_t version = gs_version(tw);
  g_assert_true(gs_embedding_renorm_(tw, i2, 1.0, 2.0));
  g_assert_cmpint(gs_version(tw), >, version);
  double k = 1.0 / (5.0 + 1e-7);
  test_assert_values(tw, (int64_t[]){3, 2}, 2, (double[]){3 * k, 4 * k, 0.3, 0.4, 6, 8}, 1e-15, 0);

  o = gs_embedding_defaults();
  o.padding_idx = 5;
  EXPECT_ERROR(gs_embedding_new_with(5, 3, &o, NULL),
               "embedding_new: expected padding_idx -1 (none) or a row in [0, 5), got 5");
  o.padding_idx = -1, o.max_norm = -1;
  EXPECT_ERROR(gs_embedding_set_options(emb, &o),
               "embedding_set_options: expected max_norm >= 0 (0: none) and a positive norm_type, "
               "got -1 and 2");
  EXPECT_ERROR(gs_embedding_with(tw, i2, 3, false),
               "embedding: expected padding_idx -1 (none) or a row in [0, 3), got 3");
  EXPECT_ERROR(gs_embedding_renorm_(tw, i2, 0.0, 2.0),
               "embedding_renorm_: expected a positive max_norm and norm_type, got 0 and 2");
  gs_dispose(pad_row), gs_dispose(index), gs_dispose(y), gs_dispose(s), gs_dispose(tw);
  gs_dispose(i2);
  gs_module_dispose(emb);
}

static void plain_layer_norm(const double *x, int rows, int d, double eps, const double *w,
                             const double *b, double *out) {
  for (int r = 0; r < rows; r++) {
    const double *row = x + r * d;
    double mean = 0, var = 0;
    for (int i = 0; i < d; i++)
      mean += row[i];
    mean /= d;
    for (int i = 0; i < d; i++)
      var += (row[i] - mean) * (row[i] - mean);
    var /= d;
    for (int i = 0; i < d; i++)
      out[r * d + i] = (row[i] - mean) / sqrt(var + eps) * (w ? w[i] : 1.0) + (b ? b[i] : 0.0);
  }
}

static void test_layer_norm_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 13);
  gs_module ln = gs_layer_norm_new(8, 1e-5);
  g_assert_cmpint(gs_module_parameter_count(ln), ==, 2);
  test_assert_values(gs_module_parameter(ln, "weight"), (int64_t[]){8}, 1,
                     (double[]){1, 1, 1, 1, 1, 1, 1, 1}, 0, 0);
  test_assert_values(gs_module_parameter(ln, "bias"), (int64_t[]){8}, 1,
                     (double[]){0, 0, 0, 0, 0, 0, 0, 0}, 0, 0);

  gs_tensor x = gs_uniform(GS_F32, (int64_t[]){2, 3, 8}, 3, -3.0, 5.0, &rng);
  gs_tensor y = gs_layer_norm_forward(ln, x);
  double *vx = test_values(x), expected[48];
  plain_layer_norm(vx, 6, 8, 1e-5, NULL, NULL, expected);
  test_assert_values(y, (int64_t[]){2, 3, 8}, 3, expected, 1e-5, 1e-5);
  /* Default parameters: each row has mean 0 and biased variance ~1. */
  double *vy = test_values(y);
  for (int r = 0; r < 6; r++) {
    double m = 0, v = 0;
    for (int i = 0; i < 8; i++)
      m += vy[r * 8 + i];
    m /= 8;
    for (int i = 0; i < 8; i++)
      v += (vy[r * 8 + i] - m) * (vy[r * 8 + i] - m);
    v /= 8;
    g_assert_cmpfloat(fabs(m), <, 1e-5);
    g_assert_cmpfloat(fabs(v - 1.0), <, 1e-3);
  }
  g_free(vy);

  /* Gradients reach weight and bias; bias grad of sum(y) is the row count. */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  test_assert_values(gs_grad(gs_module_parameter(ln, "bias")), (int64_t[]){8}, 1,
                     (double[]){6, 6, 6, 6, 6, 6, 6, 6}, 1e-5, 0);
  g_assert_true(gs_grad(gs_module_parameter(ln, "weight")).id != 0);

  /* Functional form with an affine part and a custom eps. */
  double w[8] = {0.5, -1, 2, 1, 0, 3, -0.25, 1.5}, b[8] = {1, 2, 3, 4, -1, -2, -3, 0};
  gs_tensor tw = gs_from_data(GS_F64, (int64_t[]){8}, 1, w);
  gs_tensor tb = gs_from_data(GS_F64, (int64_t[]){8}, 1, b);
  gs_tensor x64 = gs_from_data(GS_F64, (int64_t[]){6, 8}, 2, vx);
  gs_tensor y2 = gs_layer_norm(x64, tw, tb, 0.1);
  plain_layer_norm(vx, 6, 8, 0.1, w, b, expected);
  test_assert_values(y2, (int64_t[]){6, 8}, 2, expected, 1e-12, 1e-12);
  g_free(vx);

  gs_dispose(x), gs_dispose(y), gs_dispose(s), gs_dispose(tw), gs_dispose(tb);
  gs_dispose(x64), gs_dispose(y2);
  gs_module_dispose(ln);
}

/* torch.nn.LayerNorm((3, 4)) and LayerNorm((3, 4), elementwise_affine=False): rows of 12
 * values, the weight and bias elementwise over them; eps read at each forward. */
static void test_layer_norm_shapes(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 21);
  gs_module plain = gs_layer_norm_new_with((int64_t[]){3, 4}, 2, false, 1e-5);
  gs_module affine = gs_layer_norm_new_with((int64_t[]){3, 4}, 2, true, 1e-5);
  g_assert_cmpint(gs_module_parameter_count(plain), ==, 0);
  g_assert_cmpint(gs_module_parameter_count(affine), ==, 2);
  int64_t shape[GS_MAX_DIMS];
  g_assert_cmpint(gs_layer_norm_normalized_shape(affine, shape), ==, 2);
  g_assert_cmpint(shape[0], ==, 3);
  g_assert_cmpint(shape[1], ==, 4);
  g_assert_cmpint(gs_ndim(gs_module_parameter(affine, "weight")), ==, 2);

  gs_tensor x = gs_uniform(GS_F32, (int64_t[]){5, 3, 4}, 3, -2.0, 4.0, &rng);
  double *vx = test_values(x), expected[60];
  plain_layer_norm(vx, 5, 12, 1e-5, NULL, NULL, expected);
  gs_tensor y = gs_layer_norm_forward(plain, x);
  test_assert_values(y, (int64_t[]){5, 3, 4}, 3, expected, 1e-5, 1e-5);
  g_assert_false(gs_requires_grad(y)); /* no parameters, an input without history */

  double w[12], b[12];
  for (int i = 0; i < 12; i++)
    w[i] = 0.25 * (i - 5), b[i] = 1.0 - 0.5 * i;
  gs_tensor tw = gs_from_data(GS_F64, (int64_t[]){3, 4}, 2, w);
  gs_tensor tb = gs_from_data(GS_F64, (int64_t[]){3, 4}, 2, b);
  gs_no_grad_begin();
  gs_copy_(gs_module_parameter(affine, "weight"), tw);
  gs_copy_(gs_module_parameter(affine, "bias"), tb);
  gs_no_grad_end();
  g_assert_true(gs_layer_norm_set_eps(affine, 0.5));
  plain_layer_norm(vx, 5, 12, 0.5, w, b, expected);
  gs_tensor y2 = gs_layer_norm_forward(affine, x);
  test_assert_values(y2, (int64_t[]){5, 3, 4}, 3, expected, 1e-5, 1e-5);
  gs_node node = gs_grad_fn(y2);
  g_assert_cmpstr(gs_node_name(node), ==, "NativeLayerNormBackward");
  g_free(vx);
  gs_dispose(x), gs_dispose(y), gs_dispose(y2), gs_dispose(tw), gs_dispose(tb);
  gs_module_dispose(plain), gs_module_dispose(affine);
}

static gs_tensor layer_norm_fn(const gs_tensor *in, int n, void *user_data) {
  (void)n, (void)user_data;
  return gs_layer_norm(in[0], in[1], in[2], 1e-5);
}

static void test_layer_norm_gradcheck(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 17);
  gs_tensor in[3] = {
      gs_uniform(GS_F64, (int64_t[]){3, 5}, 2, -2.0, 2.0, &rng),
      gs_uniform(GS_F64, (int64_t[]){5}, 1, 0.5, 1.5, &rng),
      gs_uniform(GS_F64, (int64_t[]){5}, 1, -1.0, 1.0, &rng),
  };
  for (int i = 0; i < 3; i++)
    gs_set_requires_grad(in[i], true);
  gs_gradcheck_result r;
  bool ok = gs_gradcheck(layer_norm_fn, NULL, in, 3, NULL, &r);
  if (!ok)
    g_test_message("%s", r.message);
  g_assert_true(ok);
  for (int i = 0; i < 3; i++)
    gs_dispose(in[i]);
}

static void test_layer_norm_errors(void) {
  gs_module ln = gs_layer_norm_new(8, 1e-5);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){4, 6}, 2);
  EXPECT_ERROR(gs_layer_norm_forward(ln, x),
               "layer_norm_forward: expected an input whose last 1 dims are [8], got shape [4, 6]");
  EXPECT_ERROR(gs_layer_norm_new(0, 1e-5), "layer_norm_new: expected a positive dim, got 0");
  EXPECT_ERROR(gs_layer_norm_new(4, 0.0), "layer_norm_new: expected a positive eps, got 0");
  gs_module emb = gs_embedding_new(3, 6, NULL);
  EXPECT_ERROR(gs_layer_norm_forward(emb, x), "layer_norm_forward: expected a LayerNorm module");
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){5}, 1);
  EXPECT_ERROR(gs_layer_norm(x, w, GS_NO_TENSOR, 1e-5),
               "layer_norm: expected weight of the same shape as normalized_shape [6], got weight "
               "of shape [5]");
  EXPECT_ERROR(gs_layer_norm(x, GS_NO_TENSOR, GS_NO_TENSOR, -1.0),
               "layer_norm: expected a finite eps >= 0, got -1");
  EXPECT_ERROR(gs_layer_norm_shape(x, (int64_t[]){4, 5}, 2, GS_NO_TENSOR, GS_NO_TENSOR, 1e-5),
               "layer_norm: expected an input whose last 2 dims are normalized_shape [4, 5], got "
               "an input of shape [4, 6]");
  gs_tensor w64 = gs_ones(GS_F64, (int64_t[]){6}, 1);
  EXPECT_ERROR(gs_layer_norm(x, w64, GS_NO_TENSOR, 1e-5),
               "layer_norm: expected weight of the input's dtype f32, got f64");
  gs_tensor xi = gs_ones(GS_I64, (int64_t[]){4, 6}, 2);
  EXPECT_ERROR(gs_layer_norm(xi, GS_NO_TENSOR, GS_NO_TENSOR, 1e-5),
               "layer_norm: expected a floating input (f32 or f64), got i64");
  EXPECT_ERROR(gs_layer_norm_new_with((int64_t[]){3, 0}, 2, true, 1e-5),
               "layer_norm_new: expected a positive dim, got 0 in normalized_shape [3, 0]");
  EXPECT_ERROR(gs_layer_norm_set_eps(ln, 0.0),
               "layer_norm_set_eps: expected a positive eps, got 0");
  EXPECT_ERROR(gs_layer_norm_normalized_shape(emb, NULL),
               "layer_norm_normalized_shape: expected a LayerNorm module");
  g_assert_cmpfloat(gs_layer_norm_eps(ln), ==, 1e-5);
  gs_dispose(w64), gs_dispose(xi);
  gs_dispose(x), gs_dispose(w);
  gs_module_dispose(ln), gs_module_dispose(emb);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/layers/dropout-statistics-and-grad", test_dropout_statistics_and_grad);
  g_test_add_func("/layers/dropout-errors", test_dropout_errors);
  test_add_leak_checked("/layers/embedding", test_embedding);
  test_add_leak_checked("/layers/embedding-options", test_embedding_options);
  test_add_leak_checked("/layers/layer-norm-values", test_layer_norm_values);
  test_add_leak_checked("/layers/layer-norm-gradcheck", test_layer_norm_gradcheck);
  test_add_leak_checked("/layers/layer-norm-errors", test_layer_norm_errors);
  test_add_leak_checked("/layers/layer-norm-shapes", test_layer_norm_shapes);
  return g_test_run();
}
