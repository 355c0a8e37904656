/* test-function.c: functions with a backward of their own (gs_function_record), as
 * torch.autograd.Function: the node's name, the gradients against finite differences, double
 * backward through a backward written with ops, saved tensors checked for in-place writes,
 * a failing backward stopping the pass, inputs that need no gradient, an output written in
 * place (mark_dirty), and the user data freed once. */
#include "test-util.h"

typedef struct counters {
  int calls, frees;
  bool fail;
  bool needs[4];
} counters;

static void count_free(void *user) { ((counters *)user)->frees++; }

/* d(a * b^2)/da = g * b^2, d/db = g * 2ab; a and b are saved. Written with ops, so under
 * create_graph it records a graph. */
static bool mul_square_backward(const gs_function_call *call) {
  counters *c = call->user_data;
  c->calls++;
  for (int i = 0; i < call->n_inputs && i < 4; i++)
    c->needs[i] = call->needs[i];
  if (c->fail) {
    gs_tensor partial = gs_ones_like(call->grad_output);
    call->grad_inputs[0] = partial; /* made, then dropped by the engine */
    return false;
  }
  g_assert_cmpint(call->n_saved, ==, 2);
  gs_tensor a = call->saved[0], b = call->saved[1];
  if (call->needs[0]) {
    gs_tensor bb = gs_mul(b, b);
    call->grad_inputs[0] = gs_mul(call->grad_output, bb);
    gs_dispose(bb);
  }
  if (call->needs[1]) {
    gs_tensor ab = gs_mul(a, b);
    gs_tensor ab2 = gs_mul_scalar(ab, 2.0);
    call->grad_inputs[1] = gs_mul(call->grad_output, ab2);
    gs_dispose(ab), gs_dispose(ab2);
  }
  return true;
}

/* The forward: computed with grad mode off, then recorded. */
static gs_tensor mul_square(gs_tensor a, gs_tensor b, counters *c) {
  gs_no_grad_begin();
  gs_tensor bb = gs_mul(b, b);
  gs_tensor out = gs_mul(a, bb);
  gs_dispose(bb);
  gs_no_grad_end();
  gs_function fn = {.name = "MulSquareBackward",
                    .backward = mul_square_backward,
                    .saved = (gs_tensor[]){a, b},
                    .n_saved = 2,
                    .user_data = c,
                    .free_user_data = count_free};
  g_assert_cmpint(gs_function_record(out, (gs_tensor[]){a, b}, 2, &fn), >=, 0);
  return out;
}

static gs_tensor leaf(const double *values, int64_t n) {
  gs_tensor t = gs_from_data(GS_F64, &n, 1, values);
  gs_set_requires_grad(t, true);
  return t;
}

static void test_backward_calls_the_function(void) {
  counters c = {0};
  gs_tensor a = leaf((double[]){1, 2, 3}, 3), b = leaf((double[]){4, 5, 6}, 3);
  gs_tensor y = mul_square(a, b, &c);
  g_assert_cmpstr(gs_grad_fn_name(y), ==, "MulSquareBackward");
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  g_assert_cmpint(c.calls, ==, 1);
  test_assert_values(gs_grad(a), (int64_t[]){3}, 1, (double[]){16, 25, 36}, 0, 0);
  test_assert_values(gs_grad(b), (int64_t[]){3}, 1, (double[]){8, 20, 36}, 0, 0);
  g_assert_cmpint(c.frees, ==, 0);
  gs_dispose(s), gs_dispose(y);
  g_assert_cmpint(c.frees, ==, 1); /* with its node */
  gs_dispose(a), gs_dispose(b);
}

static counters gradcheck_counters;
static int gradcheck_records;

static gs_tensor mul_square_fn(const gs_tensor *in, int n, void *user) {
  (void)n, (void)user;
  gradcheck_records++;
  return mul_square(in[0], in[1], &gradcheck_counters);
}

static void test_gradcheck_and_double_backward(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_tensor in[2];
  for (int i = 0; i < 2; i++) {
    in[i] = gs_randn(GS_F64, (int64_t[]){2, 3}, 2, &rng);
    gs_set_requires_grad(in[i], true);
  }
  gs_gradcheck_result r;
  if (!gs_gradcheck(mul_square_fn, NULL, in, 2, NULL, &r))
    g_error("%s", r.message);
  g_assert_cmpint(gradcheck_counters.calls, >, 0);
  /* Each record's data is freed once: with its node, or at once under the differences'
   * no_grad. */
  g_assert_cmpint(gradcheck_counters.frees, ==, gradcheck_records);

  /* d/da of sum(dL/db) with L = sum(a b^2): dL/db = 2ab, so d/da sum(2ab) = 2b. */
  counters c = {0};
  gs_tensor y = mul_square(in[0], in[1], &c);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_tensor gb;
  g_assert_cmpint(gs_autograd_grad_with(&s, NULL, 1, &in[1], 1,
                                        &(gs_backward_options){.create_graph = true}, false, &gb),
                  ==, 0);
  g_assert_true(gs_requires_grad(gb));
  gs_tensor t = gs_sum(gb, NULL, 0, false);
  gs_tensor ga;
  g_assert_cmpint(gs_autograd_grad(&t, NULL, 1, &in[0], 1, false, false, &ga), ==, 0);
  double *bv = test_values(in[1]), expected[6];
  for (int i = 0; i < 6; i++)
    expected[i] = 2 * bv[i];
  g_free(bv);
  test_assert_values(ga, (int64_t[]){2, 3}, 2, expected, 1e-12, 1e-12);
  DISPOSE_ALL(y, s, gb, t, ga, in[0], in[1]);
  g_assert_cmpint(c.frees, ==, 1);
}

/* A saved tensor written in place after the forward: the same error an op's saved tensor
 * gives, naming the function's node. */
static void test_saved_tensor_written_in_place(void) {
  counters c = {0};
  gs_tensor a = leaf((double[]){1, 2}, 2);
  gs_tensor b0 = leaf((double[]){3, 4}, 2);
  gs_tensor b = gs_mul_scalar(b0, 1.0);
  gs_tensor y = mul_square(a, b, &c);
  gs_add_scalar_(b, 1.0);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  EXPECT_ERROR(gs_backward(s), "modified by an inplace operation");
  g_assert_cmpint(c.calls, ==, 0);
  DISPOSE_ALL(a, b0, b, y, s);
}

static void test_failing_backward_stops_the_pass(void) {
  counters c = {.fail = true};
  gs_tensor a = leaf((double[]){1, 2}, 2), b = leaf((double[]){3, 4}, 2);
  gs_tensor y = mul_square(a, b, &c);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  EXPECT_ERROR(gs_backward(s), "the backward of MulSquareBackward");
  g_assert_cmpint(c.calls, ==, 1);
  g_assert_true(gs_grad(a).id == 0); /* the partial gradient it made was dropped */
  g_assert_true(gs_grad(b).id == 0);
  DISPOSE_ALL(a, b, y, s);
  g_assert_cmpint(c.frees, ==, 1);
}

static void test_needs_and_no_node(void) {
  counters c = {0};
  gs_tensor a = leaf((double[]){1, 2}, 2);
  gs_tensor b = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){3, 4});
  gs_tensor y = mul_square(a, b, &c);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  g_assert_true(c.needs[0]);
  g_assert_false(c.needs[1]);
  test_assert_values(gs_grad(a), (int64_t[]){2}, 1, (double[]){9, 16}, 0, 0);
  DISPOSE_ALL(y, s);

  /* Nothing requires grad: no node, and the user data is freed at once. */
  counters none = {0};
  gs_tensor z = mul_square(b, b, &none);
  g_assert_false(gs_requires_grad(z));
  g_assert_null(gs_grad_fn_name(z));
  g_assert_cmpint(none.frees, ==, 1);
  DISPOSE_ALL(z, a, b);
}

static bool double_it_backward(const gs_function_call *call) {
  call->grad_inputs[0] = gs_mul_scalar(call->grad_output, 2.0);
  return true;
}

/* The forward doubles its input in place (torch's ctx.mark_dirty): the output is the input,
 * whose old history becomes the node's input edge. */
static void test_output_written_in_place(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor h = gs_mul_scalar(x, 3.0);
  gs_no_grad_begin();
  gs_mul_scalar_(h, 2.0);
  gs_no_grad_end();
  gs_function fn = {.name = "DoubleInPlaceBackward", .backward = double_it_backward};
  g_assert_cmpint(gs_function_record(h, (gs_tensor[]){h}, 1, &fn), ==, 1);
  g_assert_cmpstr(gs_grad_fn_name(h), ==, "DoubleInPlaceBackward");
  test_assert_values(h, (int64_t[]){2}, 1, (double[]){6, 12}, 0, 0);
  gs_tensor s = gs_sum(h, NULL, 0, false);
  gs_backward(s);
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){6, 6}, 0, 0);

  /* A leaf that requires grad cannot be the output written in place. */
  EXPECT_ERROR(gs_function_record(x, (gs_tensor[]){x}, 1, &fn), "cannot be modified in place");
  DISPOSE_ALL(s, h, x);
}

static void test_refused_outputs(void) {
  counters c = {0};
  gs_tensor a = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_mul_scalar(a, 2.0); /* has a history already */
  gs_function fn = {.name = "XBackward",
                    .backward = double_it_backward,
                    .user_data = &c,
                    .free_user_data = count_free};
  EXPECT_ERROR(gs_function_record(y, (gs_tensor[]){a}, 1, &fn), "already has a grad_fn");
  g_assert_cmpint(c.frees, ==, 1);
  gs_tensor i = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){1, 2});
  EXPECT_ERROR(gs_function_record(i, (gs_tensor[]){a}, 1, &fn), "expected a floating-point output");
  g_assert_cmpint(c.frees, ==, 2);
  fn.name = "";
  EXPECT_ERROR(gs_function_record(i, (gs_tensor[]){a}, 1, &fn), "expected a function with a name");
  g_assert_cmpint(c.frees, ==, 3);
  DISPOSE_ALL(a, y, i);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/function/backward-calls-the-function", test_backward_calls_the_function);
  g_test_add_func("/function/gradcheck-and-double-backward", test_gradcheck_and_double_backward);
  g_test_add_func("/function/saved-tensor-written-in-place", test_saved_tensor_written_in_place);
  g_test_add_func("/function/failing-backward-stops-the-pass",
                  test_failing_backward_stops_the_pass);
  g_test_add_func("/function/needs-and-no-node", test_needs_and_no_node);
  g_test_add_func("/function/output-written-in-place", test_output_written_in_place);
  g_test_add_func("/function/refused-outputs", test_refused_outputs);
  return g_test_run();
}
