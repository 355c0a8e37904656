/* test-optim-fused.c: SGD's one-pass step (engine/optim/fused-step.c) against the ops it
 * replaces, bit for bit.
 *
 * One optimizer steps two copies of a parameter side by side: one contiguous, which takes the
 * pass, and one with the same values stored transposed, a layout the pass leaves to the ops.
 * Both get the same gradient at every step, so after every step their values and momentum
 * buffers must be equal to the last bit, and their versions must have advanced alike (the
 * pass takes the ops' in-place write events: one per write). With weight decay the pass makes
 * no temporary (the ops make g + wd * p): that tells the pass was taken. meson also runs this
 * test with the log recording values (GS_TRACE_VALUES), where the pass runs in stages. */
#include "test-util.h"

enum { ROWS = 7, COLS = 33, STEPS = 5 };

/* A rows x cols parameter (a leaf requiring grad) with values from a generator seeded so. */
static gs_tensor make_param(gs_dtype dtype, test_layout layout, uint64_t seed) {
  gs_rng rng;
  gs_rng_seed(&rng, seed);
  gs_tensor p = test_make(dtype, (int64_t[]){ROWS, COLS}, 2, layout, -1.0, 1.0, &rng);
  gs_set_requires_grad(p, true);
  return p;
}

/* t's values, row-major, as raw bytes (g_free the result). */
static void *raw_values(gs_tensor t) {
  size_t bytes = (size_t)gs_numel(t) * (gs_dtype_of(t) == GS_F32 ? 4 : 8);
  void *out = g_malloc(bytes);
  g_assert_cmpint(gs_copy_to(t, out, bytes), ==, 0);
  return out;
}

static void assert_bit_equal(gs_tensor a, gs_tensor b, const char *what, int step) {
  size_t bytes = (size_t)gs_numel(a) * (gs_dtype_of(a) == GS_F32 ? 4 : 8);
  g_autofree void *va = raw_values(a), *vb = raw_values(b);
  if (memcmp(va, vb, bytes) != 0)
    g_error("step %d: the %s differ between the one-pass step and the ops' step", step, what);
}

static void run_case(gs_dtype dtype, gs_sgd_options opt) {
  test_set_context("%s lr %g momentum %g dampening %g weight_decay %g nesterov %d",
                   gs_dtype_name(dtype), opt.lr, opt.momentum, opt.dampening, opt.weight_decay,
                   opt.nesterov);
  gs_tensor params[2] = {make_param(dtype, LAYOUT_CONTIGUOUS, 7),
                         make_param(dtype, LAYOUT_TRANSPOSED, 7)};
  assert_bit_equal(params[0], params[1], "starting values", -1);
  gs_optimizer o = gs_sgd_new(params, 2, &opt);
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  int64_t v0[2] = {gs_version(params[0]), gs_version(params[1])};
  int64_t buf_v0[2] = {0, 0};
  for (int k = 0; k < STEPS; k++) {
    gs_scope s = gs_scope_begin("step");
    gs_optimizer_zero_grad(o);
    gs_tensor c = test_make(dtype, (int64_t[]){ROWS, COLS}, 2, LAYOUT_CONTIGUOUS, -2.0, 2.0, &rng);
    gs_tensor loss = gs_add(gs_sum(gs_mul(params[0], c), NULL, 0, false),
                            gs_sum(gs_mul(params[1], c), NULL, 0, false));
    gs_backward(loss);
    gs_scope_end(s);
    gs_optimizer_step(o);
    assert_bit_equal(params[0], params[1], "parameters", k);
    g_assert_cmpint(gs_version(params[0]) - v0[0], ==, k + 1);
    g_assert_cmpint(gs_version(params[1]) - v0[1], ==, k + 1);
    if (opt.momentum != 0.0) {
      gs_tensor b0 = gs_optimizer_state(o, 0, "momentum_buffer");
      gs_tensor b1 = gs_optimizer_state(o, 1, "momentum_buffer");
      assert_bit_equal(b0, b1, "momentum buffers", k);
      if (k == 0) {
        buf_v0[0] = gs_version(b0), buf_v0[1] = gs_version(b1);
      } else {
        /* mul_ then add_: two writes a step, as the ops make them */
        g_assert_cmpint(gs_version(b0) - buf_v0[0], ==, 2 * k);
        g_assert_cmpint(gs_version(b1) - buf_v0[1], ==, 2 * k);
      }
    }
  }
  gs_optimizer_dispose(o);
  DISPOSE_ALL(params[0], params[1]);
}

static void test_sgd_matches_the_ops(void) {
  const gs_sgd_options cases[] = {
      {0.1, 0.9, 0, 0, false},       /* bench-mlp's */
      {0.05, 0.8, 0.3, 0.01, false}, /* dampening and weight decay */
      {0.1, 0.9, 0, 0.02, true},     /* Nesterov */
      {0.1, 0, 0, 0, false},         /* no momentum: only the parameter is written */
      {0.1, 0, 0, 0.05, false},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    run_case(GS_F32, cases[i]);
    run_case(GS_F64, cases[i]);
  }
}

/* The tensors one step of an optimizer over p alone makes, after its first step. */
static uint64_t tensors_made_by_a_step(gs_tensor p, const gs_sgd_options *opt) {
  gs_optimizer o = gs_sgd_new(&p, 1, opt);
  uint64_t made = 0;
  for (int k = 0; k < 2; k++) {
    gs_scope s = gs_scope_begin("step");
    gs_optimizer_zero_grad(o);
    gs_backward(gs_sum(gs_mul_scalar(p, 1.5 + k), NULL, 0, false));
    gs_scope_end(s);
    gs_scope_stats before = gs_thread_scope_stats(GS_OBJECT_TENSOR);
    gs_optimizer_step(o);
    gs_scope_stats after = gs_thread_scope_stats(GS_OBJECT_TENSOR);
    made = (after.created_in_scope + after.created_outside_scope) -
           (before.created_in_scope + before.created_outside_scope);
  }
  gs_optimizer_zero_grad(o);
  gs_optimizer_dispose(o);
  return made;
}

/* The ops make g + wd * p (two tensors) and Nesterov's d + momentum * buf (two more); the pass
 * makes none: so the contiguous parameter did take the pass. */
static void test_sgd_pass_makes_no_temporaries(void) {
  const gs_sgd_options opt = {0.1, 0.9, 0, 0.02, true};
  gs_tensor contiguous = make_param(GS_F32, LAYOUT_CONTIGUOUS, 3);
  gs_tensor transposed = make_param(GS_F32, LAYOUT_TRANSPOSED, 3);
  g_assert_cmpuint(tensors_made_by_a_step(contiguous, &opt), ==, 0);
  g_assert_cmpuint(tensors_made_by_a_step(transposed, &opt), ==, 4);
  DISPOSE_ALL(contiguous, transposed);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/optim/fused/sgd-matches-the-ops-bit-for-bit", test_sgd_matches_the_ops);
  test_add_leak_checked("/optim/fused/sgd-pass-makes-no-temporaries",
                        test_sgd_pass_makes_no_temporaries);
  return g_test_run();
}
