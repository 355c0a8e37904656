/* test-gradcheck.c: every differentiable op's backward formula against float64 finite
 * differences (the cases live in grad/cases-*.c, one file per op family), and the rule that
 * keeps it so: every kind of node the engine can create has at least one case. */
#include "grad/grad-case.h"

/* Every evaluation of a case's function goes through here, so kept handles die with it. */
typedef struct case_call {
  const grad_case *c;
} case_call;

static gs_tensor call_case(const gs_tensor *inputs, int n, void *user_data) {
  const case_call *call = user_data;
  gs_tensor out = call->c->fn(inputs, n, NULL);
  grad_case_dispose_kept();
  return out;
}

static void run_case(gconstpointer data) {
  const grad_case *c = data;
  uint64_t live = gs_live_tensor_count();
  gs_tensor inputs[GRAD_CASE_MAX_INPUTS];
  grad_case_make_inputs(c, inputs);
  /* The function must end in the op under test. */
  case_call call = {c};
  gs_tensor out = call_case(inputs, c->n_inputs, &call);
  g_assert_cmpstr(gs_grad_fn_name(out), ==, c->kind);
  gs_dispose(out);

  gs_gradcheck_result result;
  bool passed = gs_gradcheck(call_case, &call, inputs, c->n_inputs,
                             c->options.eps > 0 ? &c->options : NULL, &result);
  if (!passed)
    g_printerr("%s (%s): %s\n", c->kind, c->label, result.message);
  g_assert_true(passed);
  g_assert_cmpint(result.worst_input, >=, 0);
  for (int i = 0; i < c->n_inputs; i++)
    gs_dispose(inputs[i]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static bool has_case(const char *kind) {
  for (size_t f = 0; f < grad_family_count; f++)
    for (int i = 0; i < *grad_families[f].count; i++)
      if (strcmp(grad_families[f].cases[i].kind, kind) == 0)
        return true;
  return false;
}

static void test_every_node_kind_has_a_case(void) {
  const char *names[512];
  int n = gs_autograd_node_kinds(names, 512);
  g_assert_cmpint(n, >, 10);
  g_assert_cmpint(n, <=, 512);
  int missing = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(names[i], "AccumulateGrad") == 0)
      continue; /* not a formula: it adds into leaves, which every case exercises */
    if (!has_case(names[i])) {
      g_printerr("node kind %s has no gradcheck case in tests/engine/autograd/grad/cases-*.c\n", names[i]);
      missing++;
    }
  }
  g_assert_cmpint(missing, ==, 0);
}

static gs_tensor f_cut_by_detach(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor d = gs_detach(in[0]);
  gs_tensor r = gs_mul(in[0], d);
  gs_dispose(d);
  return r;
}

/* gradcheck itself must fail when backward is wrong: x * detach(x) has derivative 2x, but
 * the graph only sees x. */
static void test_gradcheck_catches_a_wrong_gradient(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_tensor x = gs_uniform(GS_F64, (int64_t[]){3}, 1, 0.5, 2.0, &rng);
  gs_set_requires_grad(x, true);
  gs_gradcheck_result r;
  g_assert_false(gs_gradcheck(f_cut_by_detach, NULL, &x, 1, NULL, &r));
  g_assert_false(r.passed);
  g_assert_cmpint(r.worst_input, ==, 0);
  g_assert_cmpfloat(fabs(r.numeric - 2 * r.analytic), <, 1e-6);
  g_assert_true(strstr(r.message, "gradcheck: failed at input 0"));
  /* Expanded and non-f64 inputs are refused with a reason. */
  gs_tensor row = gs_ones(GS_F64, (int64_t[]){1, 3}, 2);
  gs_tensor e = gs_expand(row, (int64_t[]){4, 3}, 2);
  gs_set_requires_grad(e, true); /* a leaf view */
  g_assert_false(gs_gradcheck(f_cut_by_detach, NULL, &e, 1, NULL, &r));
  g_assert_true(strstr(r.message, "input 0 is expanded (dim 0 has stride 0)"));
  gs_tensor f32 = gs_ones(GS_F32, (int64_t[]){2}, 1);
  g_assert_false(gs_gradcheck(f_cut_by_detach, NULL, &f32, 1, NULL, &r));
  g_assert_true(strstr(r.message, "no input requires grad"));
  gs_set_requires_grad(f32, true);
  g_assert_false(gs_gradcheck(f_cut_by_detach, NULL, &f32, 1, NULL, &r));
  g_assert_true(strstr(r.message, "input 0 must be f64 to be checked, got f32"));
  gs_dispose(x), gs_dispose(row), gs_dispose(e), gs_dispose(f32);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_set_nonfatal_assertions(); /* one failing case must not hide the others */
  for (size_t f = 0; f < grad_family_count; f++) {
    for (int i = 0; i < *grad_families[f].count; i++) {
      const grad_case *c = &grad_families[f].cases[i];
      char *path = g_strdup_printf("/gradcheck/%s/%s", c->kind, c->label);
      g_test_add_data_func(path, c, run_case);
      g_free(path);
    }
  }
  g_test_add_func("/gradcheck/every-node-kind-has-a-case", test_every_node_kind_has_a_case);
  g_test_add_func("/gradcheck/catches-a-wrong-gradient", test_gradcheck_catches_a_wrong_gradient);
  return g_test_run();
}
