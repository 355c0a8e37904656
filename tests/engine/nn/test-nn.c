/* test-nn.c: initialisers draw from the documented ranges; Linear computes x W^T + b with
 * PyTorch's initialisation and keeps its parameters alive across training-step scopes. */
#include "test-util.h"

static void assert_within(gs_tensor t, double bound) {
  double *v = test_values(t);
  int64_t n = gs_numel(t);
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
  g_assert_cmpfloat(lo, >=, -bound);
  g_assert_cmpfloat(hi, <=, bound);
  /* Drawn from the whole range, not a corner of it. */
  g_assert_cmpfloat(hi - lo, >, bound);
  g_free(v);
}

static void test_initialisers(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_tensor w = gs_empty(GS_F64, (int64_t[]){50, 40}, 2);
  gs_init_kaiming_uniform_(w, 0.0, &rng);
  assert_within(w, sqrt(6.0 / 40)); /* gain sqrt(2) * sqrt(3 / fan_in) */
  gs_init_xavier_uniform_(w, &rng);
  assert_within(w, sqrt(6.0 / 90));
  gs_init_zeros_(w);
  double *v = test_values(w);
  g_assert_cmpfloat(v[123], ==, 0.0);
  g_free(v);
  gs_tensor p = gs_parameter_new(gs_empty(GS_F32, (int64_t[]){8, 3, 2}, 3), true);
  gs_init_kaiming_uniform_(p, sqrt(5.0), &rng); /* works on a parameter: runs under no_grad */
  assert_within(p, 1.0 / sqrt(6.0));            /* fan_in = 3 * 2 */
  gs_tensor vec = gs_empty(GS_F32, (int64_t[]){4}, 1);
  EXPECT_ERROR(gs_init_kaiming_uniform_(vec, 0, &rng), "fan in and fan out need at least 2 dimensions");
  gs_dispose(w), gs_dispose(p), gs_dispose(vec);
}

static void test_linear_forward_and_init(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_module lin = gs_linear_new(16, 4, true, &rng);
  g_assert_cmpint(gs_module_parameter_count(lin), ==, 2);
  gs_tensor w = gs_module_parameter(lin, "weight"), b = gs_module_parameter(lin, "bias");
  g_assert_cmpint(gs_size(w, 0), ==, 4);
  g_assert_cmpint(gs_size(w, 1), ==, 16);
  g_assert_true(gs_is_parameter(w) && gs_requires_grad(w));
  assert_within(w, 1.0 / sqrt(16.0));
  assert_within(b, 1.0 / sqrt(16.0));

  gs_tensor x = gs_randn(GS_F32, (int64_t[]){3, 16}, 2, &rng);
  gs_tensor y = gs_linear_forward(lin, x);
  double *vx = test_values(x), *vw = test_values(w), *vb = test_values(b), expected[12];
  for (int n = 0; n < 3; n++)
    for (int o = 0; o < 4; o++) {
      double acc = vb[o];
      for (int i = 0; i < 16; i++)
        acc += vx[n * 16 + i] * vw[o * 16 + i];
      expected[n * 4 + o] = acc;
    }
  test_assert_values(y, (int64_t[]){3, 4}, 2, expected, 1e-5, 1e-5);
  /* One input row (1-D) works too. */
  gs_tensor row = gs_select(x, 0, 0);
  gs_tensor y1 = gs_linear_forward(lin, row);
  test_assert_values(y1, (int64_t[]){4}, 1, expected, 1e-5, 1e-5);

  /* Gradients reach both parameters: d sum(y) / dW[o][i] = sum over rows of x[n][i] (the
   * product behind it is computed transposed, in W's layout), contiguous as weight.grad is
   * in PyTorch. */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  double ones[4] = {3, 3, 3, 3}, column_sums[4 * 16];
  for (int o = 0; o < 4; o++)
    for (int i = 0; i < 16; i++)
      column_sums[o * 16 + i] = vx[i] + vx[16 + i] + vx[32 + i];
  test_assert_values(gs_grad(b), (int64_t[]){4}, 1, ones, 1e-6, 0);
  test_assert_values(gs_grad(w), (int64_t[]){4, 16}, 2, column_sums, 1e-5, 1e-5);
  g_assert_true(gs_is_contiguous(gs_grad(w)));
  g_free(vx), g_free(vw), g_free(vb);
  gs_dispose(x), gs_dispose(y), gs_dispose(row), gs_dispose(y1), gs_dispose(s);
  gs_module_dispose(lin);
}

static void test_parameters_survive_step_scopes(void) {
  uint64_t live = gs_live_tensor_count();
  gs_module lin = gs_linear_new(3, 2, true, NULL);
  for (int step = 0; step < 3; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_ones(GS_F32, (int64_t[]){5, 3}, 2);
    gs_tensor y = gs_linear_forward(lin, x);
    gs_tensor loss = gs_mean(y, NULL, 0, false);
    gs_backward(loss);
    gs_scope_end(s);
    g_assert_true(gs_is_alive(gs_module_parameter(lin, "weight")));
  }
  gs_module_dispose(lin);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  EXPECT_ERROR(gs_linear_new(0, 3, true, NULL), "linear_new: expected positive feature counts, got in 0, out 3");
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/nn/initialisers", test_initialisers);
  g_test_add_func("/nn/linear-forward-and-init", test_linear_forward_and_init);
  g_test_add_func("/nn/parameters-survive-step-scopes", test_parameters_survive_step_scopes);
  return g_test_run();
}
