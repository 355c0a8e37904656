/* test-optim-fused.c: the one-pass steps of SGD, Adam and AdamW (engine/optim/fused-step.c)
 * against the ops they replace, bit for bit.
 *
 * One optimizer steps two copies of a parameter side by side: one contiguous, which takes the
 * pass, and one with the same values stored transposed, a layout the pass leaves to the ops.
 * Both get the same gradient at every step, so after every step their values and states
 * (momentum buffer; exp_avg, exp_avg_sq, max_exp_avg_sq) must be equal to the last bit, and
 * their versions must have advanced alike (the pass takes the ops' in-place write events: one
 * per write). The pass makes no temporary where the ops make several: that tells the pass was
 * taken. meson also runs this test with the log recording values (GS_TRACE_VALUES), where the
 * pass runs in stages, and with the CPU level capped (GS_CPU_FEATURES=avx2, none), where the
 * pass's AVX2 and baseline copies run instead of the AVX-512 one. */
#include "test-util.h"

enum { ROWS = 7, COLS = 33, STEPS = 5 };

/* A rows x cols parameter (a leaf requiring grad) with values from a generator seeded so. */
static gs_tensor make_param_sized(gs_dtype dtype, int64_t rows, int64_t cols, test_layout layout,
                                  uint64_t seed) {
  gs_rng rng;
  gs_rng_seed(&rng, seed);
  gs_tensor p = test_make(dtype, (int64_t[]){rows, cols}, 2, layout, -1.0, 1.0, &rng);
  gs_set_requires_grad(p, true);
  return p;
}
static gs_tensor make_param(gs_dtype dtype, test_layout layout, uint64_t seed) {
  return make_param_sized(dtype, ROWS, COLS, layout, seed);
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

typedef gs_optimizer (*make_optimizer_fn)(gs_tensor *params, int n, const void *options);
static gs_optimizer make_sgd(gs_tensor *params, int n, const void *o) {
  return gs_sgd_new(params, n, o);
}
static gs_optimizer make_adam(gs_tensor *params, int n, const void *o) {
  return gs_adam_new(params, n, o);
}
static gs_optimizer make_adamw(gs_tensor *params, int n, const void *o) {
  return gs_adamw_new(params, n, o);
}

enum { MAX_STATES = 3 };

/* The gradient of a step: uniform in [-2, 2), or, with a spread s > 0, that times e^u for u
 * uniform in [-s, s) (magnitudes over many binades). */
static gs_tensor make_gradient(gs_dtype dtype, int64_t rows, int64_t cols, double spread,
                               gs_rng *rng) {
  const int64_t shape[2] = {rows, cols};
  gs_tensor c = test_make(dtype, shape, 2, LAYOUT_CONTIGUOUS, -2.0, 2.0, rng);
  if (spread > 0.0)
    c = gs_mul(c, gs_exp(test_make(dtype, shape, 2, LAYOUT_CONTIGUOUS, -spread, spread, rng)));
  return c;
}

/* Steps the two copies (rows x cols) under one optimizer; after each step their values, their
 * states (named in states, NULL-terminated) and how far their versions moved must be equal. */
static void run_case_sized(gs_dtype dtype, int64_t rows, int64_t cols, double spread,
                           make_optimizer_fn make, const void *options, const char *const *states,
                           const char *what) {
  test_set_context("%s, %s", what, gs_dtype_name(dtype));
  gs_tensor params[2] = {make_param_sized(dtype, rows, cols, LAYOUT_CONTIGUOUS, 7),
                         make_param_sized(dtype, rows, cols, LAYOUT_TRANSPOSED, 7)};
  assert_bit_equal(params[0], params[1], "starting values", -1);
  gs_optimizer o = make(params, 2, options);
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  int64_t v0[2] = {gs_version(params[0]), gs_version(params[1])};
  int64_t state_v0[MAX_STATES][2] = {{0}};
  for (int k = 0; k < STEPS; k++) {
    gs_scope s = gs_scope_begin("step");
    gs_optimizer_zero_grad(o);
    gs_tensor c = make_gradient(dtype, rows, cols, spread, &rng);
    gs_tensor loss = gs_add(gs_sum(gs_mul(params[0], c), NULL, 0, false),
                            gs_sum(gs_mul(params[1], c), NULL, 0, false));
    gs_backward(loss);
    gs_scope_end(s);
    gs_optimizer_step(o);
    assert_bit_equal(params[0], params[1], "parameters", k);
    /* As many writes (version bumps) as the ops make. */
    g_assert_cmpint(gs_version(params[0]) - v0[0], ==, gs_version(params[1]) - v0[1]);
    g_assert_cmpint(gs_version(params[0]) - v0[0], >=, k + 1);
    for (int i = 0; states[i]; i++) {
      gs_tensor s0 = gs_optimizer_state(o, 0, states[i]);
      gs_tensor s1 = gs_optimizer_state(o, 1, states[i]);
      g_assert_true(s0.id && s1.id);
      assert_bit_equal(s0, s1, states[i], k);
      if (k == 0) {
        state_v0[i][0] = gs_version(s0), state_v0[i][1] = gs_version(s1);
      } else {
        g_assert_cmpint(gs_version(s0) - state_v0[i][0], ==, gs_version(s1) - state_v0[i][1]);
        g_assert_cmpint(gs_version(s0) - state_v0[i][0], >=, k);
      }
    }
  }
  gs_optimizer_dispose(o);
  DISPOSE_ALL(params[0], params[1]);
}
static void run_case(gs_dtype dtype, make_optimizer_fn make, const void *options,
                     const char *const *states, const char *what) {
  run_case_sized(dtype, ROWS, COLS, 0.0, make, options, states, what);
}

static void test_sgd_matches_the_ops(void) {
  const gs_sgd_options cases[] = {
      {0.1, 0.9, 0, 0, false},       /* bench-mlp's */
      {0.05, 0.8, 0.3, 0.01, false}, /* dampening and weight decay */
      {0.1, 0.9, 0, 0.02, true},     /* Nesterov */
      {0.1, 0, 0, 0, false},         /* no momentum: only the parameter is written */
      {0.1, 0, 0, 0.05, false},
  };
  const char *const momentum[] = {"momentum_buffer", NULL}, *const none[] = {NULL};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char what[32];
    snprintf(what, sizeof what, "SGD case %zu", i);
    const char *const *states = cases[i].momentum != 0.0 ? momentum : none;
    run_case(GS_F32, make_sgd, &cases[i], states, what);
    run_case(GS_F64, make_sgd, &cases[i], states, what);
  }
}

static void test_adam_matches_the_ops(void) {
  /* Each variant the pass has a loop of its own for (fused-step.c's ADAM_PASS). */
  gs_adam_options plain = GS_ADAM_OPTIONS_DEFAULT, decay = plain, ams = plain, ams_decay = plain;
  plain.lr = 0.01;
  decay.lr = 0.02, decay.weight_decay = 0.05;
  ams.lr = 0.01, ams.amsgrad = true;
  ams_decay.lr = 0.01, ams_decay.weight_decay = 0.01, ams_decay.amsgrad = true;
  const char *const moments[] = {"exp_avg", "exp_avg_sq", NULL};
  const char *const with_max[] = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", NULL};
  const gs_dtype dtypes[] = {GS_F32, GS_F64};
  for (int d = 0; d < 2; d++) {
    run_case(dtypes[d], make_adam, &plain, moments, "Adam");
    run_case(dtypes[d], make_adam, &decay, moments, "Adam, L2 weight decay");
    run_case(dtypes[d], make_adam, &ams, with_max, "Adam, amsgrad");
    run_case(dtypes[d], make_adam, &ams_decay, with_max, "Adam, amsgrad, L2 weight decay");
    run_case(dtypes[d], make_adamw, &decay, moments, "AdamW, decoupled decay");
    run_case(dtypes[d], make_adamw, &ams_decay, with_max, "AdamW, amsgrad");
  }
}

/* The float32 pass divides sqrt(v) by sqrt(1 - beta2^step) as a multiply in double
 * (fused-step.c says why that is the correctly rounded quotient): 2^18 elements a step whose
 * gradients span e^-40..e^40 (so v spans about 2^-115..2^115), at betas that give different
 * divisors, must still match the ops' float divide bit for bit. */
static void test_adam_f32_quotient_is_the_divide(void) {
  const char *const moments[] = {"exp_avg", "exp_avg_sq", NULL};
  const double beta2s[] = {0.999, 0.9, 0.3};
  for (size_t i = 0; i < G_N_ELEMENTS(beta2s); i++) {
    gs_adam_options o = GS_ADAM_OPTIONS_DEFAULT;
    o.lr = 0.01, o.beta2 = beta2s[i], o.eps = 1e-30;
    run_case_sized(GS_F32, 512, 512, 40.0, make_adam, &o, moments, "Adam, wide gradients");
  }
}

/* The tensors one step of an optimizer over p alone makes, after its first step. */
static uint64_t tensors_made_by_a_step(gs_tensor p, make_optimizer_fn make, const void *options) {
  gs_optimizer o = make(&p, 1, options);
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

/* The ops make temporaries: SGD's g + wd * p and Nesterov's d + momentum * buf (two tensors
 * each), Adam's g + wd * p (two), g * g, sqrt(v), its quotient by sqrt(bc2) and exp_avg over
 * that. The pass makes none: so the contiguous parameter did take the pass. */
static void test_pass_makes_no_temporaries(void) {
  const gs_sgd_options sgd = {0.1, 0.9, 0, 0.02, true};
  gs_adam_options adam = GS_ADAM_OPTIONS_DEFAULT;
  adam.weight_decay = 0.01;
  gs_tensor contiguous = make_param(GS_F32, LAYOUT_CONTIGUOUS, 3);
  gs_tensor transposed = make_param(GS_F32, LAYOUT_TRANSPOSED, 3);
  g_assert_cmpuint(tensors_made_by_a_step(contiguous, make_sgd, &sgd), ==, 0);
  g_assert_cmpuint(tensors_made_by_a_step(transposed, make_sgd, &sgd), ==, 4);
  g_assert_cmpuint(tensors_made_by_a_step(contiguous, make_adam, &adam), ==, 0);
  g_assert_cmpuint(tensors_made_by_a_step(transposed, make_adam, &adam), ==, 6);
  DISPOSE_ALL(contiguous, transposed);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/optim/fused/sgd-matches-the-ops-bit-for-bit", test_sgd_matches_the_ops);
  test_add_leak_checked("/optim/fused/adam-matches-the-ops-bit-for-bit", test_adam_matches_the_ops);
  test_add_leak_checked("/optim/fused/adam-f32-quotient-is-the-divide",
                        test_adam_f32_quotient_is_the_divide);
  test_add_leak_checked("/optim/fused/pass-makes-no-temporaries", test_pass_makes_no_temporaries);
  return g_test_run();
}
