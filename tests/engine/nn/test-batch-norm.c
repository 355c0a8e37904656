/* test-batch-norm.c: the BatchNorm1d/2d modules as a C program uses them: their tensors under
 * PyTorch's names, the running estimates moving in training (momentum 0.1, unbiased variance)
 * and normalising in evaluation, the step count, torch's options (momentum None, affine,
 * track_running_stats) and the refusals. The op's numbers are
 * checked against PyTorch by ops-torch-compare.py and its gradients by gradcheck. */
#include "test-util.h"

static void test_batch_norm2d_module(void) {
  gs_module bn = gs_batch_norm_new(2, 2, 1e-5, 0.1);
  g_assert_cmpstr(gs_module_type_name(bn), ==, "BatchNorm2d");
  const char *names[5];
  g_assert_cmpint(gs_module_named_parameters(bn, NULL, names, 5), ==, 5);
  g_assert_cmpstr(names[0], ==, "weight");
  g_assert_cmpstr(names[2], ==, "running_mean");
  g_assert_cmpstr(names[4], ==, "num_batches_tracked");
  g_assert_false(gs_requires_grad(gs_module_parameter(bn, "running_var")));
  /* Channel 0 holds 1..4 over N = 2 and H x W = 1 x 2, channel 1 holds 10 everywhere. */
  float v[8] = {1, 2, 10, 10, 3, 4, 10, 10};
  gs_tensor x = gs_from_data(GS_F32, (int64_t[]){2, 2, 1, 2}, 4, v);
  gs_tensor y = gs_batch_norm_forward(bn, x);
  double s = 1.0 / sqrt(1.25 + 1e-5);
  test_assert_values(y, (int64_t[]){2, 2, 1, 2}, 4,
                     (double[]){-1.5 * s, -0.5 * s, 0, 0, 0.5 * s, 1.5 * s, 0, 0}, 1e-6, 1e-6);
  /* mean 2.5 and 10; unbiased variance 5/3 and 0. */
  test_assert_values(gs_module_parameter(bn, "running_mean"), (int64_t[]){2}, 1,
                     (double[]){0.25, 1.0}, 1e-6, 0);
  test_assert_values(gs_module_parameter(bn, "running_var"), (int64_t[]){2}, 1,
                     (double[]){0.9 + 0.1 * 5.0 / 3.0, 0.9}, 1e-6, 0);
  g_assert_cmpfloat(gs_item(gs_module_parameter(bn, "num_batches_tracked")), ==, 1);
  gs_module_train(bn, false);
  gs_tensor e = gs_module_forward(bn, x);
  double r0 = 1.0 / sqrt(0.9 + 0.5 / 3.0 + 1e-5), r1 = 1.0 / sqrt(0.9 + 1e-5);
  test_assert_values(e, (int64_t[]){2, 2, 1, 2}, 4,
                     (double[]){0.75 * r0, 1.75 * r0, 9 * r1, 9 * r1, 2.75 * r0, 3.75 * r0,
                                9 * r1, 9 * r1},
                     1e-5, 1e-5);
  g_assert_cmpfloat(gs_item(gs_module_parameter(bn, "num_batches_tracked")), ==, 1);
  EXPECT_ERROR(gs_module_forward(bn, gs_module_parameter(bn, "weight")),
               "BatchNorm2d expected 4D input (got 1D input)");
  gs_dispose(x), gs_dispose(y), gs_dispose(e);
  gs_module_dispose(bn);
}

static void test_batch_norm1d_and_refusals(void) {
  gs_module bn = gs_batch_norm_new(1, 3, 1e-5, 0.1);
  g_assert_cmpstr(gs_module_type_name(bn), ==, "BatchNorm1d");
  gs_tensor one = gs_ones(GS_F32, (int64_t[]){1, 3}, 2);
  EXPECT_ERROR(gs_module_forward(bn, one),
               "batch_norm: expected more than 1 value per channel when training, got input size [1, 3]");
  gs_tensor x4 = gs_ones(GS_F32, (int64_t[]){2, 3, 2, 2}, 4);
  EXPECT_ERROR(gs_module_forward(bn, x4), "BatchNorm1d expected 2D or 3D input (got 4D input)");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){4, 3, 5}, 3);
  gs_tensor y = gs_module_forward(bn, x);
  g_assert_cmpint(gs_numel(y), ==, 60);
  gs_tensor w2 = gs_ones(GS_F32, (int64_t[]){2}, 1), w64 = gs_ones(GS_F64, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_batch_norm(x, GS_NO_TENSOR, GS_NO_TENSOR, w2, GS_NO_TENSOR, true, 0.1, 1e-5),
               "batch_norm: expected weight of shape [3] (the input's channels), got [2]");
  EXPECT_ERROR(gs_batch_norm(x, GS_NO_TENSOR, GS_NO_TENSOR, w64, GS_NO_TENSOR, true, 0.1, 1e-5),
               "batch_norm: expected weight of the input's dtype f32, got f64");
  EXPECT_ERROR(gs_batch_norm(x, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, false, 0.1, 1e-5),
               "batch_norm: running_mean and running_var must be given in evaluation");
  EXPECT_ERROR(gs_batch_norm_new(4, 4, 1e-5, 0.1),
               "batch_norm_new: expected spatial_dims 1, 2 or 3");
  gs_module bn3 = gs_batch_norm_new(3, 3, 1e-5, 0.1);
  g_assert_cmpstr(gs_module_type_name(bn3), ==, "BatchNorm3d");
  EXPECT_ERROR(gs_module_forward(bn3, x4), "BatchNorm3d expected 5D input (got 4D input)");
  gs_tensor x5 = gs_ones(GS_F32, (int64_t[]){2, 3, 2, 1, 2}, 5);
  gs_tensor y5 = gs_module_forward(bn3, x5);
  g_assert_cmpint(gs_numel(y5), ==, 24);
  gs_dispose(one), gs_dispose(x4), gs_dispose(x), gs_dispose(y), gs_dispose(w2), gs_dispose(w64);
  gs_dispose(x5), gs_dispose(y5);
  gs_module_dispose(bn), gs_module_dispose(bn3);
}

/* torch's options: momentum None (NAN) averages the batches cumulatively; without affine no
 * weight and bias; without track_running_stats no estimates, and batch statistics in
 * evaluation too. */
static void test_batch_norm_options(void) {
  gs_batch_norm_options o = gs_batch_norm_defaults();
  o.momentum = NAN;
  o.affine = false;
  gs_module bn = gs_batch_norm_new_with(1, 1, &o);
  const char *names[5];
  g_assert_cmpint(gs_module_named_parameters(bn, NULL, names, 5), ==, 3);
  g_assert_cmpstr(names[0], ==, "running_mean");
  /* batches with means 1, 2 and 6: the running mean is their mean, 3 */
  double means[3] = {1, 2, 6};
  for (int k = 0; k < 3; k++) {
    gs_tensor x =
        gs_from_data(GS_F64, (int64_t[]){2, 1}, 2, (double[]){means[k] - 1, means[k] + 1});
    gs_module_to_dtype(bn, GS_F64);
    gs_dispose(gs_batch_norm_forward(bn, x));
    gs_dispose(x);
  }
  test_assert_values(gs_module_parameter(bn, "running_mean"), (int64_t[]){1}, 1, (double[]){3},
                     1e-12, 0);
  /* each batch's unbiased variance is 2 */
  test_assert_values(gs_module_parameter(bn, "running_var"), (int64_t[]){1}, 1, (double[]){2},
                     1e-12, 0);
  gs_batch_norm_options now;
  g_assert_true(gs_batch_norm_get_options(bn, &now));
  g_assert_true(isnan(now.momentum) && !now.affine && now.track_running_stats);
  g_assert_cmpint(gs_batch_norm_num_features(bn), ==, 1);
  now.momentum = 0.5;
  g_assert_true(gs_batch_norm_set_options(bn, &now));
  now.affine = true;
  EXPECT_ERROR(gs_batch_norm_set_options(bn, &now),
               "batch_norm_set_options: affine and track_running_stats are fixed");
  now.affine = false;
  now.momentum = 2;
  EXPECT_ERROR(gs_batch_norm_set_options(bn, &now),
               "batch_norm_set_options: expected eps > 0 and momentum in [0, 1] or NAN");
  gs_module_dispose(bn);

  o = gs_batch_norm_defaults();
  o.track_running_stats = false;
  gs_module free_bn = gs_batch_norm_new_with(1, 2, &o);
  g_assert_cmpint(gs_module_named_parameters(free_bn, NULL, names, 5), ==, 2);
  gs_module_train(free_bn, false);
  gs_tensor x = gs_from_data(GS_F32, (int64_t[]){2, 2}, 2, (float[]){0, 5, 2, 7});
  /* evaluation without estimates: the batch's own statistics normalise */
  gs_tensor y = gs_batch_norm_forward(free_bn, x);
  double s = 1.0 / sqrt(1.0 + 1e-5);
  test_assert_values(y, (int64_t[]){2, 2}, 2, (double[]){-s, -s, s, s}, 1e-6, 1e-6);
  gs_dispose(x), gs_dispose(y);
  gs_module_dispose(free_bn);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/batch-norm/module-2d", test_batch_norm2d_module);
  g_test_add_func("/batch-norm/module-1d-and-refusals", test_batch_norm1d_and_refusals);
  test_add_leak_checked("/batch-norm/options", test_batch_norm_options);
  return g_test_run();
}
