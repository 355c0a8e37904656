/* test-gradgradcheck.c: double backward (create_graph) against float64 finite differences of
 * the first gradient. On every gradcheck case (grad/cases-*.c), the function checked is
 * inputs -> the case's first gradient (its output seeded with fixed values), computed by a
 * backward with create_graph: gs_gradcheck then compares the backward through the graph that
 * pass recorded (the second derivative) with central differences of the first derivative. A
 * case whose graph has a node kind without a differentiable formula must be refused with the
 * error naming it; the kinds issue 31 lists must never be. Also: leaves' .grad keeps its
 * history, higher derivatives, and a refused pass changes nothing. */
#include "autograd-impl.h"
#include "grad/grad-case.h"

/* Kinds double backward must support (issue 31). */
static const char *const required_kinds[] = {
    "AddBackward",
    "SubBackward",
    "MulBackward",
    "DivBackward",
    "AddScalarBackward",
    "SubScalarBackward",
    "RsubScalarBackward",
    "MulScalarBackward",
    "DivScalarBackward",
    "NegBackward",
    "PowScalarBackward",
    "ExpBackward",
    "LogBackward",
    "SinBackward",
    "CosBackward",
    "TanhBackward",
    "SigmoidBackward",
    "ReluBackward",
    "SqrtBackward",
    "SumBackward",
    "MeanBackward",
    "MatmulBackward",
    "AddmmBackward",
    "ViewBackward",
    "ReshapeBackward",
    "TransposeBackward",
    "ExpandBackward",
    "IndexSelectBackward",
    "TBackward",
    "SliceBackward",
    "SelectBackward",
    "SumToBackward",
    "ToDtypeBackward",
    "CloneBackward",
    "PermuteBackward",
    "UnsqueezeBackward",
    "SqueezeBackward",
    "PowBackward",
    "WhereBackward",
    "SoftmaxBackward",
    "LogSoftmaxBackward",
    "AccumulateGrad",
    /* ops recorded as torch records them, one node each (issue 31, grad_fn names) */
    "MaskedFillBackward",
    "RepeatBackward",
    "VarBackward",
    "StdBackward",
    "NormBackward",
    "SortBackward",
    "TopkBackward",
    "MseLossBackward",
    "NllLossBackward",
};

/* And the fused kernels of convolution nets and recurrent layers, and the activations
 * (gradient penalties, Hessian-vector products through a CNN or an RNN). */
static const char *const kernel_kinds[] = {
    "GeluBackward",
    "SiluBackward",
    "EluBackward", /* elu and selu */
    "SoftplusBackward",
    "HardtanhBackward", /* hardtanh and relu6 */
    "HardsigmoidBackward",
    "HardswishBackward",
    "LogSigmoidBackward",
    "MishBackward",
    "LeakyReluBackward",
    "CumprodBackward",
    "MaxPool2dBackward",
    "AvgPool2dBackward",
    "Conv2dBackward",
    "Conv1dBackward",
    "ConvTranspose2dBackward",
    "BatchNormBackward",
    "NativeGroupNormBackward",
    "NativeLayerNormBackward",
    "CopySlices",
    "LSTMRecurrenceBackward",
    "GRURecurrenceBackward",
    "RNNTanhRecurrenceBackward",
    "RNNReluRecurrenceBackward",
};

/* The kinds whose formulas cannot be differentiated again yet: eigh's, the SVD's and the
 * QR's use the decomposition's saved factors, which have no history (torch's can); grid_sample's
 * is its own loop, as torch 1.13's, which has no double backward either. Each is
 * checked to say so, and every other kind to say it can. */
static const char *const once_kinds[] = {
    "LinalgEighBackward", "LinalgEighVectorsBackward", "LinalgSvdBackward",
    "LinalgSvdUBackward", "LinalgSvdVhBackward",       "LinalgQrBackward",
    "LinalgQrRBackward",  "GridSampler2dBackward",     "GridSampler3dBackward",
    "CtcLossBackward",
};

static bool is_once(const char *kind) {
  for (size_t i = 0; i < G_N_ELEMENTS(once_kinds); i++)
    if (strcmp(once_kinds[i], kind) == 0)
      return true;
  return false;
}

static bool is_required(const char *kind) {
  for (size_t i = 0; i < G_N_ELEMENTS(required_kinds); i++)
    if (strcmp(required_kinds[i], kind) == 0)
      return true;
  for (size_t i = 0; i < G_N_ELEMENTS(kernel_kinds); i++)
    if (strcmp(kernel_kinds[i], kind) == 0)
      return true;
  return false;
}

typedef struct first_gradient_call {
  const grad_case *c;
} first_gradient_call;

/* The case's output, seeded with fixed values in [0.5, 1.5) (not ones: a wrong transpose or
 * a dropped factor must show), differentiated with create_graph with respect to every input
 * that requires grad; the gradients flattened into one tensor. Plus 0 * the inputs' sum, so
 * the result requires grad even where the first gradient is constant (its derivative: 0).
 * Without create_graph: the same numbers from the formulas' fast kernels. */
static gs_tensor first_gradient_of(const grad_case *c, const gs_tensor *inputs, int n,
                                   bool create_graph) {
  gs_tensor out = c->fn(inputs, n, NULL);
  grad_case_dispose_kept();
  if (!out.id)
    return out;
  gs_rng rng;
  gs_rng_seed(&rng, 99);
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(out, shape);
  gs_tensor seed = gs_uniform(gs_dtype_of(out), shape, nd, 0.5, 1.5, &rng);
  gs_tensor wrt[GRAD_CASE_MAX_INPUTS], grads[GRAD_CASE_MAX_INPUTS];
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!c->inputs[i].no_grad)
      wrt[m++] = inputs[i];
  /* retain_graph: the graph recorded reaches back into the forward's nodes */
  int rc = gs_autograd_grad_with(
      &out, &seed, 1, wrt, m,
      &(gs_backward_options){.retain_graph = true, .create_graph = create_graph}, true, grads);
  gs_dispose(out);
  gs_dispose(seed);
  if (rc != 0)
    return GS_NO_TENSOR;
  gs_tensor flat[GRAD_CASE_MAX_INPUTS + 1];
  gs_tensor zero_link = GS_NO_TENSOR;
  for (int k = 0; k < m; k++) {
    gs_tensor g = grads[k].id ? grads[k] : gs_zeros_like(wrt[k]);
    flat[k] = gs_reshape(g, (int64_t[]){-1}, 1);
    gs_dispose(g);
    gs_tensor s = gs_sum(wrt[k], NULL, 0, false), z = gs_mul_scalar(s, 0.0);
    gs_tensor linked = zero_link.id ? gs_add(zero_link, z) : gs_clone(z);
    DISPOSE_ALL(s, z);
    if (zero_link.id)
      gs_dispose(zero_link);
    zero_link = linked;
  }
  gs_tensor all = gs_cat(flat, m, 0);
  gs_tensor result = gs_add(all, zero_link);
  for (int k = 0; k < m; k++)
    gs_dispose(flat[k]);
  DISPOSE_ALL(all, zero_link);
  return result;
}

static gs_tensor first_gradient(const gs_tensor *given, int n, void *user_data) {
  const first_gradient_call *call = user_data;
  /* gs_gradcheck's finite differences pass inputs that do not require grad: the first
   * gradient still needs leaves to be taken with respect to. */
  gs_tensor inputs[GRAD_CASE_MAX_INPUTS] = {{0}}, made[GRAD_CASE_MAX_INPUTS] = {{0}};
  bool was_enabled = gs_set_grad_enabled(true); /* gs_gradcheck's differences run without */
  for (int i = 0; i < n; i++) {
    made[i] = GS_NO_TENSOR;
    inputs[i] = given[i];
    if (!call->c->inputs[i].no_grad && !gs_requires_grad(given[i])) {
      inputs[i] = made[i] = gs_detach(given[i]);
      gs_set_requires_grad(made[i], true);
    }
  }
  gs_tensor result = first_gradient_of(call->c, inputs, n, true);
  for (int i = 0; i < n; i++)
    if (made[i].id)
      gs_dispose(made[i]);
  gs_set_grad_enabled(was_enabled);
  return result;
}

/* What the probe call saw: the first error's message, if any. */
static char probe_error[1024];

static void remember_error(const gs_error *e, void *user_data) {
  (void)user_data;
  if (!probe_error[0])
    g_strlcpy(probe_error, e->message, sizeof probe_error);
}

static void run_case(gconstpointer data) {
  const grad_case *c = data;
  uint64_t live = gs_live_tensor_count();
  gs_tensor inputs[GRAD_CASE_MAX_INPUTS];
  grad_case_make_inputs(c, inputs);
  first_gradient_call call = {c};
  /* One call with errors returning: a refusal (an unsupported node kind) skips the case. */
  probe_error[0] = 0;
  void *previous_data;
  gs_error_handler previous = gs_set_error_handler(remember_error, NULL, &previous_data);
  gs_tensor probe = first_gradient(inputs, c->n_inputs, &call);
  gs_set_error_handler(previous, previous_data, NULL);
  gs_clear_error();
  if (!probe.id) {
    bool refused = strstr(probe_error, "double backward through") &&
                   strstr(probe_error, "is not supported yet");
    if (!refused || is_required(c->kind))
      g_printerr("%s (%s): %s\n", c->kind, c->label, probe_error);
    g_assert_true(refused);
    g_assert_false(is_required(c->kind) && strstr(probe_error, c->kind));
    g_test_skip(probe_error);
  } else {
    /* The recorded formulas' first gradient is the kernels': gradgradcheck alone would take a
     * recorded formula off by a factor its own derivative shares. */
    gs_tensor plain = first_gradient_of(c, inputs, c->n_inputs, false);
    g_assert_cmpint(gs_numel(plain), ==, gs_numel(probe));
    double *want = test_values(plain), *got = test_values(probe);
    for (int64_t k = 0; k < gs_numel(plain); k++)
      if (fabs(got[k] - want[k]) > 1e-12 * (1 + fabs(want[k]))) {
        g_printerr("%s (%s): first gradient %lld: %.17g with create_graph, %.17g without\n",
                   c->kind, c->label, (long long)k, got[k], want[k]);
        g_assert_cmpfloat(got[k], ==, want[k]);
        break;
      }
    g_free(want), g_free(got);
    gs_dispose(plain);
    gs_dispose(probe);
    gs_gradcheck_result result;
    bool passed = gs_gradcheck(first_gradient, &call, inputs, c->n_inputs, NULL, &result);
    if (!passed)
      g_printerr("%s (%s): %s\n", c->kind, c->label, result.message);
    g_assert_true(passed);
  }
  for (int i = 0; i < c->n_inputs; i++)
    gs_dispose(inputs[i]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* The kinds issue 31 lists say their formulas are differentiable, and so does every other
 * kind the engine defines but the few listed in once_kinds; a name no kind has says not. */
static void test_required_kinds_are_differentiable(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(required_kinds); i++) {
    if (!gs_autograd_node_kind_twice(required_kinds[i]))
      g_printerr("%s is not marked differentiable\n", required_kinds[i]);
    g_assert_true(gs_autograd_node_kind_twice(required_kinds[i]));
  }
  for (size_t i = 0; i < G_N_ELEMENTS(kernel_kinds); i++) {
    if (!gs_autograd_node_kind_twice(kernel_kinds[i]))
      g_printerr("%s is not marked differentiable\n", kernel_kinds[i]);
    g_assert_true(gs_autograd_node_kind_twice(kernel_kinds[i]));
  }
  int count = gs_autograd_node_kinds(NULL, 0);
  const char **names = g_new(const char *, count);
  g_assert_cmpint(gs_autograd_node_kinds(names, count), ==, count);
  for (int i = 0; i < count; i++) {
    if (gs_autograd_node_kind_twice(names[i]) == is_once(names[i]))
      g_printerr("%s is %smarked differentiable\n", names[i], is_once(names[i]) ? "" : "not ");
    g_assert_true(gs_autograd_node_kind_twice(names[i]) != is_once(names[i]));
  }
  for (size_t i = 0; i < G_N_ELEMENTS(once_kinds); i++) {
    bool known = false;
    for (int k = 0; k < count; k++)
      known |= strcmp(names[k], once_kinds[i]) == 0;
    g_assert_true(known); /* a kind renamed or gone leaves this list */
  }
  g_free(names);
  g_assert_false(gs_autograd_node_kind_twice("NoSuchBackward"));
  g_assert_false(gs_autograd_node_kind_twice(NULL));
}

static double scalar_of(gs_tensor t) { return gs_item(t); }

/* d/dx x^3 = 3x^2, d2 = 6x, d3 = 6, each by a grad of the previous grad. */
static void test_higher_derivatives_of_a_power(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){1}, 1, (double[]){1.5});
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_pow_scalar(x, 3);
  gs_backward_options twice = {.retain_graph = true, .create_graph = true};
  gs_tensor d1, d2, d3;
  g_assert_cmpint(gs_autograd_grad_with(&y, NULL, 1, &x, 1, &twice, false, &d1), ==, 0);
  g_assert_cmpfloat_with_epsilon(scalar_of(d1), 3 * 1.5 * 1.5, 1e-12);
  g_assert_nonnull(gs_grad_fn_name(d1));
  g_assert_cmpint(gs_autograd_grad_with(&d1, NULL, 1, &x, 1, &twice, false, &d2), ==, 0);
  g_assert_cmpfloat_with_epsilon(scalar_of(d2), 6 * 1.5, 1e-12);
  g_assert_cmpint(gs_autograd_grad_with(&d2, NULL, 1, &x, 1, &twice, false, &d3), ==, 0);
  g_assert_cmpfloat_with_epsilon(scalar_of(d3), 6, 1e-12);
  DISPOSE_ALL(x, y, d1, d2, d3);
}

/* sin: the third derivative is -cos, through a saved input used again each time. */
static void test_third_derivative_of_sin(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.3, -1.2});
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_sin(x), s = gs_sum(y, NULL, 0, false);
  gs_backward_options twice = {.retain_graph = true, .create_graph = true};
  gs_tensor g = s, next;
  gs_tensor made[3];
  for (int order = 0; order < 3; order++) {
    gs_tensor total = order ? gs_sum(g, NULL, 0, false) : gs_clone(g);
    g_assert_cmpint(gs_autograd_grad_with(&total, NULL, 1, &x, 1, &twice, false, &next), ==, 0);
    gs_dispose(total);
    made[order] = g = next;
  }
  double *v = test_values(g);
  g_assert_cmpfloat_with_epsilon(v[0], -cos(0.3), 1e-12);
  g_assert_cmpfloat_with_epsilon(v[1], -cos(-1.2), 1e-12);
  g_free(v);
  DISPOSE_ALL(x, y, s, made[0], made[1], made[2]);
}

/* With create_graph a leaf's .grad has a grad_fn, and a second such backward adds into it
 * out of place, still differentiable: backward of x.grad gives the second derivative. */
static void test_leaf_grad_keeps_its_history(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, 2.0});
  gs_set_requires_grad(x, true);
  gs_tensor cube = gs_pow_scalar(x, 3), y = gs_sum(cube, NULL, 0, false);
  gs_tensor none = GS_NO_TENSOR;
  gs_backward_many_with(&y, &none, 1,
                        &(gs_backward_options){.retain_graph = true, .create_graph = true});
  gs_tensor g = gs_grad(x);
  g_assert_nonnull(gs_grad_fn_name(g));
  test_assert_values(g, (int64_t[]){2}, 1, (double[]){0.75, 12.0}, 1e-12, 0);
  /* the second accumulates: 2 * 3x^2 */
  gs_backward_many_with(&y, &none, 1,
                        &(gs_backward_options){.retain_graph = true, .create_graph = true});
  g = gs_grad(x);
  test_assert_values(g, (int64_t[]){2}, 1, (double[]){1.5, 24.0}, 1e-12, 0);
  /* d/dx sum(x.grad) = 2 * 6x, into x.grad (which it also replaces: zero it first) */
  gs_tensor total = gs_sum(g, NULL, 0, false);
  gs_tensor d2;
  g_assert_cmpint(gs_autograd_grad(&total, NULL, 1, &x, 1, false, false, &d2), ==, 0);
  test_assert_values(d2, (int64_t[]){2}, 1, (double[]){6.0, 24.0}, 1e-12, 0);
  DISPOSE_ALL(x, cube, y, total, d2);
}

/* A kind whose formula is not marked differentiable (GS__BACKWARD), as a new fused kernel's
 * is until it has a recorded form: the engine's own kinds all have one now. Defined outside
 * the kinds' linker section, so no gradcheck case is asked of it. Its formula: d(2a) = 2g. */
static void once_only_formula(gs__node *n, gs_tensor g, gs_tensor *grads) {
  (void)n;
  grads[0] = gs_mul_scalar(g, 2);
}
static const gs__node_kind OnceOnlyBackward = {"OnceOnlyBackward", once_only_formula, false};

/* 2x, recorded as one OnceOnlyBackward node over x. */
static gs_tensor doubled_once_only(gs_tensor x) {
  gs_tensor plain = gs_detach(x), y = gs_mul_scalar(plain, 2);
  gs_dispose(plain);
  g_assert_true(gs__record_unary_for_test(&OnceOnlyBackward, y, x));
  return y;
}

/* A graph with a node whose formula cannot be differentiated: refused before anything runs,
 * naming the op; .grad untouched and the saved tensors kept (a plain backward still works). */
static void test_unsupported_kind_is_refused_first(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, -1.0});
  gs_set_requires_grad(x, true);
  gs_tensor y = doubled_once_only(x), z = gs_mul(y, x), s = gs_sum(z, NULL, 0, false);
  g_assert_cmpstr(gs_grad_fn_name(y), ==, "OnceOnlyBackward");
  g_assert_false(gs_autograd_node_kind_twice("OnceOnlyBackward")); /* not in the section */
  gs_backward(gs__keep(gs_sum(gs__keep(gs_mul_scalar(x, 2)), NULL, 0, false)));
  grad_case_dispose_kept();
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){2, 2}, 0, 0);
  gs_tensor none = GS_NO_TENSOR, got = GS_NO_TENSOR;
  uint64_t live = gs_live_tensor_count();
  EXPECT_ERROR(gs_backward_many_with(&s, &none, 1, &(gs_backward_options){.create_graph = true}),
               "double backward through OnceOnlyBackward is not supported yet");
  EXPECT_ERROR(gs_autograd_grad_with(&s, NULL, 1, &x, 1,
                                     &(gs_backward_options){.create_graph = true}, false, &got),
               "double backward through OnceOnlyBackward is not supported yet");
  g_assert_cmpuint(got.id, ==, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  g_assert_true(gs_grad_enabled());
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){2, 2}, 0, 0);
  g_assert_null(gs_grad_fn_name(gs_grad(x)));
  /* nothing was freed: the ordinary backward runs, s = 2 x^2 adding 4x */
  gs_backward(s);
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){4, -2}, 1e-12, 0);
  DISPOSE_ALL(x, y, z, s);
}

/* An in-place product saved the value it overwrote, which flows back to that value's
 * history: y = x * 1; y *= x is x^2, whose second derivative is 2. */
static void test_inplace_product_differentiates_twice(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, -1.0});
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_mul_scalar(x, 1.0);
  gs_mul_(y, x);
  gs_tensor s = gs_sum(y, NULL, 0, false), d1, d2;
  g_assert_cmpint(gs_autograd_grad_with(&s, NULL, 1, &x, 1,
                                        &(gs_backward_options){.create_graph = true}, false, &d1),
                  ==, 0);
  test_assert_values(d1, (int64_t[]){2}, 1, (double[]){1.0, -2.0}, 1e-12, 0);
  gs_tensor total = gs_sum(d1, NULL, 0, false);
  g_assert_cmpint(gs_autograd_grad(&total, NULL, 1, &x, 1, false, false, &d2), ==, 0);
  test_assert_values(d2, (int64_t[]){2}, 1, (double[]){2.0, 2.0}, 1e-12, 0);
  DISPOSE_ALL(x, y, s, d1, total, d2);
}

/* A create_graph pass records its formulas inside a no_grad block too (as PyTorch's engine
 * sets grad mode for the pass), and leaves the block as it found it. */
static void test_create_graph_records_inside_no_grad(void) {
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){0.5, 2.0});
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_pow_scalar(x, 3), s = gs_sum(y, NULL, 0, false), d1, d2;
  gs_no_grad_begin();
  g_assert_cmpint(
      gs_autograd_grad_with(&s, NULL, 1, &x, 1,
                            &(gs_backward_options){.retain_graph = true, .create_graph = true},
                            false, &d1),
      ==, 0);
  g_assert_false(gs_grad_enabled());
  gs_tensor wrt[] = {x};
  gs_tensor none = GS_NO_TENSOR;
  g_assert_cmpint(
      gs_backward_inputs_with(&s, &none, 1, wrt, 1, &(gs_backward_options){.create_graph = true}),
      ==, 0);
  g_assert_false(gs_grad_enabled());
  gs_no_grad_end();
  g_assert_true(gs_grad_enabled());
  g_assert_nonnull(gs_grad_fn_name(d1));
  g_assert_nonnull(gs_grad_fn_name(gs_grad(x)));
  gs_tensor total = gs_sum(d1, NULL, 0, false);
  g_assert_cmpint(gs_autograd_grad(&total, NULL, 1, &x, 1, false, false, &d2), ==, 0);
  test_assert_values(d2, (int64_t[]){2}, 1, (double[]){3.0, 12.0}, 1e-12, 0);
  DISPOSE_ALL(x, y, s, d1, total, d2);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_set_nonfatal_assertions(); /* one failing case must not hide the others */
  for (size_t f = 0; f < grad_family_count; f++) {
    for (int i = 0; i < *grad_families[f].count; i++) {
      const grad_case *c = &grad_families[f].cases[i];
      if (c->options.eps > 0)
        continue; /* paths through f32: a second difference drowns in its rounding */
      char *path = g_strdup_printf("/gradgradcheck/%s/%s", c->kind, c->label);
      g_test_add_data_func(path, c, run_case);
      g_free(path);
    }
  }
  g_test_add_func("/gradgradcheck/required-kinds-are-differentiable",
                  test_required_kinds_are_differentiable);
  test_add_leak_checked("/gradgradcheck/higher-derivatives-of-a-power",
                        test_higher_derivatives_of_a_power);
  test_add_leak_checked("/gradgradcheck/third-derivative-of-sin", test_third_derivative_of_sin);
  test_add_leak_checked("/gradgradcheck/leaf-grad-keeps-its-history",
                        test_leaf_grad_keeps_its_history);
  test_add_leak_checked("/gradgradcheck/unsupported-kind-is-refused-first",
                        test_unsupported_kind_is_refused_first);
  test_add_leak_checked("/gradgradcheck/inplace-product-differentiates-twice",
                        test_inplace_product_differentiates_twice);
  test_add_leak_checked("/gradgradcheck/create-graph-records-inside-no-grad",
                        test_create_graph_records_inside_no_grad);
  return g_test_run();
}
