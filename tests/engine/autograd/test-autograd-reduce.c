/* test-autograd-reduce.c: gradients of reductions and softmax against hand-computed values:
 * max/min sharing the gradient among tied extremes (which gradcheck cannot check: moving one
 * tied element breaks the tie), short chains ending in a loss, the NLL loss of log_softmax
 * written with a one-hot mask, and the outputs that must record no node. */
#include "test-util.h"

static gs_tensor leaf(const int64_t *shape, int ndim, const double *values) {
  gs_tensor t = gs_from_data(GS_F64, shape, ndim, values);
  gs_set_requires_grad(t, true);
  return t;
}

/* Backward from out (disposed) and checks x's gradient exactly. */
static void check_grad(gs_tensor out, gs_tensor x, const double *expected) {
  gs_backward(out);
  gs_dispose(out);
  gs_tensor g = gs_grad(x);
  g_assert_true(g.id != 0);
  int64_t shape[GS_MAX_DIMS];
  int ndim = gs_shape(x, shape);
  test_assert_values(g, shape, ndim, expected, 0, 0);
}

/* torch.amax([1, 3, 3]).backward() gives [0, 0.5, 0.5]. */
static void test_max_splits_gradient_among_ties(void) {
  gs_tensor x = leaf((int64_t[]){3}, 1, (double[]){1, 3, 3});
  gs_tensor m = gs_max(x, NULL, 0, false);
  g_assert_cmpstr(gs_grad_fn_name(m), ==, "MaxBackward");
  g_assert_cmpfloat(gs_item(m), ==, 3);
  check_grad(m, x, (double[]){0, 0.5, 0.5});
  gs_dispose(x);
}

static void test_min_splits_gradient_among_ties(void) {
  gs_tensor x = leaf((int64_t[]){4}, 1, (double[]){2, 1, 1, 5});
  check_grad(gs_min(x, (int[]){0}, 1, true), x, (double[]){0, 0.5, 0.5, 0});
  gs_dispose(x);
}

/* Ties are counted per output over every reduced dim: three 3s share the max of [[3, 1],
 * [3, 3]]; along dim 0 each column splits its own gradient. */
static void test_ties_over_several_dims(void) {
  gs_tensor x = leaf((int64_t[]){2, 2}, 2, (double[]){3, 1, 3, 3});
  check_grad(gs_max(x, NULL, 0, false), x, (double[]){1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
  gs_zero_grad(x);
  gs_tensor cols = gs_max(x, (int[]){0}, 1, false); /* [3, 3] */
  gs_tensor w = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){2, 10});
  gs_tensor weighted = gs_mul(cols, w);
  check_grad(gs_sum(weighted, NULL, 0, false), x, (double[]){1, 0, 1, 10});
  gs_dispose(cols), gs_dispose(w), gs_dispose(weighted), gs_dispose(x);
}

/* mean(sum(x, dim 1)) over x = [[1, 2, 3], [4, 5, 6]]: sums [6, 15], mean 10.5, and every
 * element's gradient is 1/2 (one of two rows). */
static void test_sum_then_mean(void) {
  gs_tensor x = leaf((int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6});
  gs_tensor rows = gs_sum(x, (int[]){1}, 1, false);
  test_assert_values(rows, (int64_t[]){2}, 1, (double[]){6, 15}, 0, 0);
  gs_tensor m = gs_mean(rows, NULL, 0, false);
  g_assert_cmpstr(gs_grad_fn_name(m), ==, "MeanBackward");
  g_assert_cmpfloat(gs_item(m), ==, 10.5);
  check_grad(m, x, (double[]){0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  gs_dispose(rows), gs_dispose(x);
}

/* sum(mean(x, dim 0, keepdim) * x) over x of shape [4, 2]: d/dx[i][j] = mean_j (through the
 * product) + sum_k x[k][j] / 4 (through the mean) = 2 mean_j: both paths summed. */
static void test_mean_keepdim_and_product(void) {
  gs_tensor x = leaf((int64_t[]){4, 2}, 2, (double[]){1, 2, 3, 4, 5, 6, 7, 8});
  gs_tensor m = gs_mean(x, (int[]){0}, 1, true); /* [[4, 5]] */
  test_assert_values(m, (int64_t[]){1, 2}, 2, (double[]){4, 5}, 0, 0);
  gs_tensor p = gs_mul(m, x);
  check_grad(gs_sum(p, NULL, 0, false), x, (double[]){8, 10, 8, 10, 8, 10, 8, 10});
  gs_dispose(m), gs_dispose(p), gs_dispose(x);
}

/* sum_to([2, 3] -> [3]) then a weighted sum: each row receives the weights. */
static void test_sum_to_expands_back(void) {
  gs_tensor x = leaf((int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6});
  gs_tensor s = gs_sum_to(x, (int64_t[]){3}, 1);
  g_assert_cmpstr(gs_grad_fn_name(s), ==, "SumToBackward");
  test_assert_values(s, (int64_t[]){3}, 1, (double[]){5, 7, 9}, 0, 0);
  gs_tensor w = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, -2, 0.5});
  gs_tensor sw = gs_mul(s, w);
  check_grad(gs_sum(sw, NULL, 0, false), x, (double[]){1, -2, 0.5, 1, -2, 0.5});
  gs_dispose(s), gs_dispose(w), gs_dispose(sw), gs_dispose(x);
}

/* The NLL loss of log_softmax over classes (dim 1), targets [1, 2] as a one-hot mask:
 * loss = -sum(log_softmax(x) * onehot) / 2, and d loss / dx = (softmax(x) - onehot) / 2.
 * Row 1 is uniform, so its softmax is 1/3 each. */
static void test_log_softmax_nll(void) {
  gs_tensor x = leaf((int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 0, 0, 0});
  gs_tensor onehot = gs_from_data(GS_F64, (int64_t[]){2, 3}, 2, (double[]){0, 1, 0, 0, 0, 1});
  gs_tensor lsm = gs_log_softmax(x, 1);
  g_assert_cmpstr(gs_grad_fn_name(lsm), ==, "LogSoftmaxBackward");
  gs_tensor picked = gs_mul(lsm, onehot);
  gs_tensor total = gs_sum(picked, NULL, 0, false);
  gs_tensor loss = gs_mul_scalar(total, -0.5);

  double z = exp(1) + exp(2) + exp(3);
  double expected_loss = -((2 - log(z)) + (0 - log(3))) / 2;
  g_assert_cmpfloat_with_epsilon(gs_item(loss), expected_loss, 1e-15);
  gs_backward(loss);
  double expected[] = {
      exp(1) / z / 2, (exp(2) / z - 1) / 2, exp(3) / z / 2,
      1.0 / 6,        1.0 / 6,              (1.0 / 3 - 1) / 2,
  };
  /* Exact but for the last bits exp and log leave (the engine subtracts a row's max first). */
  test_assert_values(gs_grad(x), (int64_t[]){2, 3}, 2, expected, 1e-15, 0);
  gs_dispose(onehot), gs_dispose(lsm), gs_dispose(picked), gs_dispose(total);
  gs_dispose(loss), gs_dispose(x);
}

/* softmax over dim 0 then the gradient of one output element: d p_k / d x_i = p_k (δ_ki - p_i). */
static void test_softmax_jacobian_row(void) {
  gs_tensor x = leaf((int64_t[]){3}, 1, (double[]){0, 0, 0});
  gs_tensor p = gs_softmax(x, 0);
  g_assert_cmpstr(gs_grad_fn_name(p), ==, "SoftmaxBackward");
  gs_tensor seed = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 0, 0});
  gs_backward_with(p, seed, false);
  double third = 1.0 / 3;
  test_assert_values(gs_grad(x), (int64_t[]){3}, 1,
                     (double[]){third * (1 - third), -third * third, -third * third}, 0, 0);
  gs_dispose(seed), gs_dispose(p), gs_dispose(x);
}

/* An f32 input gets an f32 gradient from every formula. x = [[1, 4], [4, 4]]:
 *   max over dim 1, summed:       [[0, 1], [1/2, 1/2]] (row 1 is a tie)
 *   mean of logsumexp over dim 0: column 0 gets softmax([1, 4]) / 2, column 1 [1/4, 1/4]
 *   sum of softmax(x, -1)[:, 0]:  p0 (1 - p0) and -p0 (1 - p0) per row (p0 = 1/2 in row 1) */
static void test_f32_gradients_stay_f32(void) {
  gs_tensor x = gs_from_data(GS_F32, (int64_t[]){2, 2}, 2, (float[]){1, 4, 4, 4});
  gs_set_requires_grad(x, true);
  gs_tensor a = gs_max(x, (int[]){1}, 1, false);
  gs_tensor b = gs_logsumexp(x, (int[]){0}, 1, false);
  gs_tensor c = gs_softmax(x, -1);
  gs_tensor sa = gs_sum(a, NULL, 0, false), sb = gs_mean(b, NULL, 0, false);
  /* Column 0 by a mask, not gs_select: views do not record nodes yet. */
  gs_tensor first = gs_from_data(GS_F32, (int64_t[]){2}, 1, (float[]){1, 0});
  gs_tensor c0 = gs_mul(c, first), sc = gs_sum(c0, NULL, 0, false);
  gs_tensor ab = gs_add(sa, sb), loss = gs_add(ab, sc);
  gs_backward(loss);
  gs_tensor g = gs_grad(x);
  g_assert_cmpint(gs_dtype_of(g), ==, GS_F32);
  double p0 = 1 / (1 + exp(3)); /* softmax([1, 4])[0] */
  double expected[] = {
      0 + p0 / 2 + p0 * (1 - p0),   1 + 0.25 - p0 * (1 - p0),
      0.5 + (1 - p0) / 2 + 0.25,    0.5 + 0.25 - 0.25,
  };
  test_assert_values(g, (int64_t[]){2, 2}, 2, expected, 1e-6, 0);
  gs_dispose(a), gs_dispose(b), gs_dispose(c), gs_dispose(sa), gs_dispose(sb);
  gs_dispose(first), gs_dispose(c0), gs_dispose(sc), gs_dispose(ab), gs_dispose(loss);
  gs_dispose(x);
}

/* Integer and bool sums are i64 and argmax is an index: no node, no requires_grad, even
 * when the input of argmax requires grad. */
static void test_integer_outputs_record_nothing(void) {
  gs_tensor i = gs_from_data(GS_I64, (int64_t[]){2, 3}, 2, (int64_t[]){1, 2, 3, 4, 5, 6});
  gs_tensor s = gs_sum(i, (int[]){0}, 1, false);
  g_assert_cmpint(gs_dtype_of(s), ==, GS_I64);
  g_assert_null(gs_grad_fn_name(s));
  g_assert_false(gs_requires_grad(s));
  gs_tensor to = gs_sum_to(i, (int64_t[]){3}, 1);
  g_assert_null(gs_grad_fn_name(to));
  gs_tensor b = gs_gt_scalar(i, 2);
  gs_tensor sb = gs_sum(b, NULL, 0, false);
  g_assert_cmpint(gs_dtype_of(sb), ==, GS_I64);
  g_assert_null(gs_grad_fn_name(sb));
  gs_tensor x = leaf((int64_t[]){3}, 1, (double[]){1, 3, 2});
  gs_tensor am = gs_argmax(x, 0, false), an = gs_argmin_all(x);
  g_assert_null(gs_grad_fn_name(am));
  g_assert_false(gs_requires_grad(am));
  g_assert_null(gs_grad_fn_name(an));
  gs_dispose(i), gs_dispose(s), gs_dispose(to), gs_dispose(b), gs_dispose(sb);
  gs_dispose(x), gs_dispose(am), gs_dispose(an);
}

/* Under no_grad nothing is recorded, and a leaf that needs no grad makes no node. */
static void test_no_grad_records_nothing(void) {
  gs_tensor x = leaf((int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4});
  gs_no_grad_begin();
  gs_tensor s = gs_sum(x, NULL, 0, false), p = gs_softmax(x, 0);
  gs_no_grad_end();
  g_assert_null(gs_grad_fn_name(s));
  g_assert_null(gs_grad_fn_name(p));
  gs_tensor y = gs_ones(GS_F64, (int64_t[]){2}, 1);
  gs_tensor m = gs_max(y, NULL, 0, false);
  g_assert_null(gs_grad_fn_name(m));
  gs_dispose(x), gs_dispose(s), gs_dispose(p), gs_dispose(y), gs_dispose(m);
}

/* softmax saves its output: writing into it in place before backward is reported, as in
 * PyTorch, instead of giving a wrong gradient. */
static void test_softmax_output_modified_in_place(void) {
  gs_tensor x = leaf((int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_tensor p = gs_softmax(x, 0);
  gs_mul_scalar_(p, 2.0);
  gs_tensor w = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_tensor pw = gs_mul(p, w);
  gs_tensor loss = gs_sum(pw, NULL, 0, false);
  EXPECT_ERROR(gs_backward(loss), " as result (its output) is at version 1");
  g_assert_true(g_regex_match_simple("saved by SoftmaxBackward #[0-9]+ as result", gs_last_error(),
                                     0, 0));
  g_assert_false(gs_grad(x).id != 0);
  gs_dispose(x), gs_dispose(p), gs_dispose(w), gs_dispose(pw), gs_dispose(loss);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/autograd-reduce/max/splits-gradient-among-ties",
                  test_max_splits_gradient_among_ties);
  g_test_add_func("/autograd-reduce/min/splits-gradient-among-ties",
                  test_min_splits_gradient_among_ties);
  g_test_add_func("/autograd-reduce/max/ties-over-several-dims", test_ties_over_several_dims);
  g_test_add_func("/autograd-reduce/sum-then-mean", test_sum_then_mean);
  g_test_add_func("/autograd-reduce/mean-keepdim-and-product", test_mean_keepdim_and_product);
  g_test_add_func("/autograd-reduce/sum-to/expands-back", test_sum_to_expands_back);
  g_test_add_func("/autograd-reduce/log-softmax/nll-loss", test_log_softmax_nll);
  g_test_add_func("/autograd-reduce/softmax/jacobian-row", test_softmax_jacobian_row);
  g_test_add_func("/autograd-reduce/f32-gradients-stay-f32", test_f32_gradients_stay_f32);
  g_test_add_func("/autograd-reduce/integer-outputs-record-nothing",
                  test_integer_outputs_record_nothing);
  g_test_add_func("/autograd-reduce/no-grad-records-nothing", test_no_grad_records_nothing);
  g_test_add_func("/autograd-reduce/softmax/output-modified-in-place",
                  test_softmax_output_modified_in_place);
  return g_test_run();
}
