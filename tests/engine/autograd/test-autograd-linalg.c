/* test-autograd-linalg.c: gradients of matrix products, index ops and joins, end to end and
 * exact: a two-layer network against the chain rule written out by hand, addmm's scaled terms,
 * repeated embedding and index_select rows that accumulate, split pieces whose gradients sum
 * in their input, mixed dtypes in cat, and which operands a product keeps for backward. (The
 * formulas are checked against finite differences in test-gradcheck.) */
#include "test-util.h"

static gs_tensor f64(const int64_t *shape, int ndim, const double *values, bool requires_grad) {
  gs_tensor t = gs_from_data(GS_F64, shape, ndim, values);
  gs_set_requires_grad(t, requires_grad);
  return t;
}

static void assert_grad(gs_tensor t, const int64_t *shape, int ndim, const double *expected) {
  g_assert_true(gs_grad(t).id != 0);
  test_assert_values(gs_grad(t), shape, ndim, expected, 1e-12, 1e-12);
}

/* y = tanh(x @ W1 + b1) @ W2 through addmm and matmul, seeded with gy; every gradient
 * against the chain rule in plain loops:
 *   h = tanh(x W1 + b1)       dW2 = h^T gy         dh = gy W2^T
 *   dpre = dh * (1 - h^2)     dW1 = x^T dpre       db1 = sum over rows of dpre
 *   dx = dpre W1^T */
static void test_two_layer_net(void) {
  const double xv[2][3] = {{1, 0, -1}, {0.5, 2, 0}};
  const double w1v[3][2] = {{0.1, -0.2}, {0.3, 0.0}, {-0.1, 0.2}};
  const double b1v[2] = {0.05, -0.05};
  const double w2v[2] = {1.0, -2.0}; /* [2, 1] */
  const double gyv[2] = {1.0, -0.5}; /* [2, 1] */
  gs_tensor x = f64((int64_t[]){2, 3}, 2, &xv[0][0], true);
  gs_tensor w1 = f64((int64_t[]){3, 2}, 2, &w1v[0][0], true);
  gs_tensor b1 = f64((int64_t[]){2}, 1, b1v, true);
  gs_tensor w2 = f64((int64_t[]){2, 1}, 2, w2v, true);
  gs_tensor gy = f64((int64_t[]){2, 1}, 2, gyv, false);

  gs_tensor pre = gs_addmm(b1, x, w1, 1.0, 1.0);
  gs_tensor h = gs_tanh(pre);
  gs_tensor y = gs_matmul(h, w2);
  g_assert_cmpstr(gs_grad_fn_name(pre), ==, "AddmmBackward");
  g_assert_cmpstr(gs_grad_fn_name(y), ==, "MatmulBackward");

  double hv[2][2], yv[2], dpre[2][2];
  double dx[2][3] = {{0}}, dw1[3][2] = {{0}}, db1[2] = {0}, dw2[2] = {0};
  for (int i = 0; i < 2; i++) {
    yv[i] = 0;
    for (int j = 0; j < 2; j++) {
      double p = b1v[j];
      for (int k = 0; k < 3; k++)
        p += xv[i][k] * w1v[k][j];
      hv[i][j] = tanh(p);
      yv[i] += hv[i][j] * w2v[j];
      dw2[j] += hv[i][j] * gyv[i];
      dpre[i][j] = gyv[i] * w2v[j] * (1 - hv[i][j] * hv[i][j]);
      db1[j] += dpre[i][j];
    }
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 3; k++) {
        dw1[k][j] += xv[i][k] * dpre[i][j];
        dx[i][k] += dpre[i][j] * w1v[k][j];
      }
  test_assert_values(y, (int64_t[]){2, 1}, 2, yv, 1e-12, 1e-12);

  gs_backward_with(y, gy, false);
  assert_grad(w2, (int64_t[]){2, 1}, 2, dw2);
  assert_grad(w1, (int64_t[]){3, 2}, 2, &dw1[0][0]);
  assert_grad(b1, (int64_t[]){2}, 1, db1);
  assert_grad(x, (int64_t[]){2, 3}, 2, &dx[0][0]);

  DISPOSE_ALL(x, w1, b1, w2, gy, pre, h, y);
}

/* 3 * bias + 2 * a @ b in small integers: every gradient exact. */
static void test_addmm_scaled_terms(void) {
  gs_tensor bias = f64((int64_t[]){2}, 1, (double[]){1, 2}, true);
  gs_tensor a = f64((int64_t[]){1, 2}, 2, (double[]){1, 2}, true);
  gs_tensor b = f64((int64_t[]){2, 2}, 2, (double[]){3, 4, 5, 6}, true);
  gs_tensor g = f64((int64_t[]){1, 2}, 2, (double[]){1, 10}, false);
  gs_tensor y = gs_addmm(bias, a, b, 3.0, 2.0);
  test_assert_values(y, (int64_t[]){1, 2}, 2, (double[]){3 + 2 * 13, 6 + 2 * 16}, 0, 0);
  gs_backward_with(y, g, false);
  assert_grad(bias, (int64_t[]){2}, 1, (double[]){3, 30});        /* 3 g, summed over rows */
  assert_grad(a, (int64_t[]){1, 2}, 2, (double[]){86, 130});      /* 2 g b^T */
  assert_grad(b, (int64_t[]){2, 2}, 2, (double[]){2, 20, 4, 40}); /* 2 a^T g */
  gs_dispose(bias), gs_dispose(a), gs_dispose(b), gs_dispose(g), gs_dispose(y);
}

/* A dot product and a vector-matrix product: the vectors' gradients are vectors. */
static void test_matmul_vector_grads_stay_vectors(void) {
  gs_tensor a = f64((int64_t[]){3}, 1, (double[]){1, 2, 3}, true);
  gs_tensor b = f64((int64_t[]){3}, 1, (double[]){4, 5, 6}, true);
  gs_tensor dot = gs_matmul(a, b);
  g_assert_cmpint(gs_ndim(dot), ==, 0);
  gs_backward(dot);
  assert_grad(a, (int64_t[]){3}, 1, (double[]){4, 5, 6});
  assert_grad(b, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_zero_grad(a);

  /* a [3] @ m [2, 3, 2]: a's gradient sums over the batch, and stays [3]. */
  gs_tensor m = f64((int64_t[]){2, 3, 2}, 3, (double[]){1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 2, 2}, true);
  gs_tensor y = gs_matmul(a, m);
  gs_tensor g = f64((int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4}, false);
  gs_backward_with(y, g, false);
  /* grad a[k] = sum over batch and j of m[batch][k][j] * g[batch][j] */
  assert_grad(a, (int64_t[]){3}, 1, (double[]){1 + 6, 2 + 8, 3 + 14});
  /* grad m[batch][k][j] = a[k] * g[batch][j] */
  assert_grad(m, (int64_t[]){2, 3, 2}, 3, (double[]){1, 2, 2, 4, 3, 6, 3, 4, 6, 8, 9, 12});
  gs_dispose(a), gs_dispose(b), gs_dispose(dot), gs_dispose(m), gs_dispose(y), gs_dispose(g);
}

/* Rows looked up several times get the sum of their gradients, over repeated backwards too. */
static void test_embedding_repeated_rows_accumulate(void) {
  gs_tensor w = gs_zeros(GS_F64, (int64_t[]){4, 2}, 2);
  gs_set_requires_grad(w, true);
  gs_tensor index = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){0, 2, 0, 0});
  gs_tensor g = f64((int64_t[]){4, 2}, 2, (double[]){1, 2, 3, 4, 5, 6, 7, 8}, false);
  gs_tensor e = gs_embedding(w, index);
  g_assert_cmpstr(gs_grad_fn_name(e), ==, "EmbeddingBackward");
  gs_backward_with(e, g, true);
  assert_grad(w, (int64_t[]){4, 2}, 2, (double[]){1 + 5 + 7, 2 + 6 + 8, 0, 0, 3, 4, 0, 0});
  gs_backward_with(e, g, false); /* a second backward adds into the same grad */
  assert_grad(w, (int64_t[]){4, 2}, 2, (double[]){26, 32, 0, 0, 6, 8, 0, 0});

  /* index_select along dim 1 with a repeated column. */
  gs_tensor t = gs_zeros(GS_F64, (int64_t[]){2, 3}, 2);
  gs_set_requires_grad(t, true);
  gs_tensor cols = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){2, 2, 0});
  gs_tensor s = gs_index_select(t, 1, cols);
  gs_tensor gs_ = f64((int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6}, false);
  gs_backward_with(s, gs_, false);
  assert_grad(t, (int64_t[]){2, 3}, 2, (double[]){3, 0, 3, 6, 0, 9});
  gs_tensor list[] = {w, index, g, e, t, cols, s, gs_};
  for (size_t i = 0; i < G_N_ELEMENTS(list); i++)
    gs_dispose(list[i]);
}

/* Pieces of a split are views with a node each: their gradients land side by side in the
 * input, and an unused piece's place gets zero. */
static void test_split_pieces_sum_in_input(void) {
  gs_tensor x = f64((int64_t[]){6}, 1, (double[]){1, 2, 3, 4, 5, 6}, true);
  gs_tensor p[3];
  g_assert_cmpint(gs_split(x, 2, 0, p, 3), ==, 3);
  for (int i = 0; i < 3; i++)
    g_assert_cmpstr(gs_grad_fn_name(p[i]), ==, "SplitBackward");
  gs_tensor twice = gs_mul_scalar(p[0], 2.0);
  gs_tensor y = gs_add(twice, p[2]); /* 2 x[0:2] + x[4:6] */
  gs_tensor g = f64((int64_t[]){2}, 1, (double[]){1, 10}, false);
  gs_backward_with(y, g, false);
  assert_grad(x, (int64_t[]){6}, 1, (double[]){2, 20, 0, 0, 1, 10});
  gs_zero_grad(x);

  /* chunk's pieces, joined again in the other order by cat. */
  gs_tensor c[2];
  g_assert_cmpint(gs_chunk(x, 2, 0, c, 2), ==, 2); /* x[0:3], x[3:6] */
  gs_tensor swapped = gs_cat((gs_tensor[]){c[1], c[0]}, 2, 0);
  g_assert_cmpstr(gs_grad_fn_name(swapped), ==, "CatBackward");
  gs_tensor g6 = f64((int64_t[]){6}, 1, (double[]){1, 2, 3, 4, 5, 6}, false);
  gs_backward_with(swapped, g6, false);
  assert_grad(x, (int64_t[]){6}, 1, (double[]){4, 5, 6, 1, 2, 3});
  DISPOSE_ALL(x, p[0], p[1], p[2], twice, y, g, c[0], c[1], swapped, g6);
}

/* cat promotes f32 and f64 to f64; each input's gradient comes back in its own dtype, and an
 * input that does not require grad gets none. */
static void test_cat_gradients_keep_input_dtypes(void) {
  gs_tensor a = gs_from_data(GS_F32, (int64_t[]){2}, 1, (float[]){1, 2});
  gs_set_requires_grad(a, true);
  gs_tensor b = f64((int64_t[]){3}, 1, (double[]){3, 4, 5}, true);
  gs_tensor c = f64((int64_t[]){1}, 1, (double[]){6}, false);
  gs_tensor y = gs_cat((gs_tensor[]){a, c, b}, 3, 0);
  g_assert_cmpint(gs_dtype_of(y), ==, GS_F64);
  gs_tensor g = f64((int64_t[]){6}, 1, (double[]){10, 20, 30, 40, 50, 60}, false);
  gs_backward_with(y, g, false);
  g_assert_cmpint(gs_dtype_of(gs_grad(a)), ==, GS_F32);
  assert_grad(a, (int64_t[]){2}, 1, (double[]){10, 20});
  assert_grad(b, (int64_t[]){3}, 1, (double[]){40, 50, 60});
  g_assert_true(gs_grad(c).id == 0);
  gs_dispose(a), gs_dispose(b), gs_dispose(c), gs_dispose(y), gs_dispose(g);
}

/* A product keeps an operand only for the other operand's gradient: with frozen weights W,
 * y = x @ W keeps W but not x, so writing x afterwards is harmless, and writing W is caught. */
static void test_products_keep_only_what_backward_needs(void) {
  gs_tensor x = f64((int64_t[]){1, 2}, 2, (double[]){1, 2}, true);
  gs_tensor w = f64((int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4}, false);
  gs_tensor g = f64((int64_t[]){1, 2}, 2, (double[]){1, 10}, false);
  gs_tensor y = gs_matmul(x, w);
  gs_tensor alias = gs_detach(x);
  gs_add_scalar_(alias, 100.0); /* x is not saved: backward does not care */
  gs_backward_with(y, g, false);
  assert_grad(x, (int64_t[]){1, 2}, 2, (double[]){21, 43}); /* g W^T */

  gs_tensor y2 = gs_matmul(x, w);
  gs_add_scalar_(w, 1.0);
  /* w was the right operand: PyTorch's "other". */
  EXPECT_ERROR(gs_backward_with(y2, g, false), " as other (input 1) is at version 1");
  g_assert_true(g_regex_match_simple("saved by MatmulBackward #[0-9]+ as other", gs_last_error(),
                                     0, 0));
  DISPOSE_ALL(x, w, g, y, alias, y2);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/autograd-linalg/two-layer-net", test_two_layer_net);
  g_test_add_func("/autograd-linalg/addmm-scaled-terms", test_addmm_scaled_terms);
  g_test_add_func("/autograd-linalg/matmul-vector-grads-stay-vectors",
                  test_matmul_vector_grads_stay_vectors);
  g_test_add_func("/autograd-linalg/embedding-repeated-rows-accumulate",
                  test_embedding_repeated_rows_accumulate);
  g_test_add_func("/autograd-linalg/split-pieces-sum-in-input", test_split_pieces_sum_in_input);
  g_test_add_func("/autograd-linalg/cat-gradients-keep-input-dtypes",
                  test_cat_gradients_keep_input_dtypes);
  g_test_add_func("/autograd-linalg/products-keep-only-what-backward-needs",
                  test_products_keep_only_what_backward_needs);
  return g_test_run();
}
