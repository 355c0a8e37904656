/* test-graph-api.c: the autograd graph as a C program sees it: node handles (gs_grad_fn,
 * gs_node_next, AccumulateGrad's variable, stale handles after a node is freed, holds),
 * gradient hooks on tensors (seeing, replacing, removing, stopping a pass) and on nodes
 * (before and after their formula), one backward from
 * several outputs, gs_autograd_grad (gradients without .grad, only the needed part of the
 * graph, unused inputs) and gs_backward_inputs (backward into chosen tensors' .grad). */
#include "test-util.h"

static gs_tensor leaf(const double *values, int64_t n) {
  gs_tensor t = gs_from_data(GS_F64, &n, 1, values);
  gs_set_requires_grad(t, true);
  return t;
}

static gs_tensor sum_all(gs_tensor t) { return gs_sum(t, NULL, 0, false); }

static void assert_values(gs_tensor t, const double *expected, int64_t n) {
  g_assert_true(t.id != 0);
  test_assert_values(t, &n, 1, expected, 1e-12, 1e-12);
}

/* A reduction's node tells the dims it folded, keepdim, and whether the caller named dims:
 * sum(v, 0) of a vector folds what sum(v) does, but was asked for differently. */
static void test_reduction_nodes(void) {
  gs_tensor v = leaf((double[]){1, 2}, 2);
  gs_tensor m = gs_reshape(v, (int64_t[]){1, 2}, 2);
  gs_tensor all = gs_sum(v, NULL, 0, false), dim0 = gs_sum(v, (int[]){0}, 1, false);
  gs_tensor kept = gs_mean(m, (int[]){-1}, 1, true), big = gs_max(m, NULL, 0, false);
  int dims[GS_MAX_DIMS];
  bool keepdim = true, given = true;
  g_assert_cmpint(gs_node_reduction(gs_grad_fn(all), dims, &keepdim, &given), ==, 1);
  g_assert_cmpint(dims[0], ==, 0);
  g_assert_false(keepdim);
  g_assert_false(given);
  g_assert_cmpint(gs_node_reduction(gs_grad_fn(dim0), dims, NULL, &given), ==, 1);
  g_assert_true(given);
  g_assert_cmpint(gs_node_reduction(gs_grad_fn(kept), dims, &keepdim, &given), ==, 1);
  g_assert_cmpint(dims[0], ==, 1); /* -1 of a 2-D input */
  g_assert_true(keepdim);
  g_assert_true(given);
  g_assert_cmpint(gs_node_reduction(gs_grad_fn(big), dims, NULL, &given), ==, 2);
  g_assert_false(given);
  EXPECT_ERROR(gs_node_reduction(gs_grad_fn(m), dims, NULL, NULL),
               "node_reduction: expected the node of a reduction, got ReshapeBackward");
  gs_dispose(v), gs_dispose(m), gs_dispose(all), gs_dispose(dim0), gs_dispose(kept),
      gs_dispose(big);
}

/* y = sum(x * w + x): the graph walked from y's grad_fn by gs_node_next, as grad_fn and
 * next_functions walk it in PyTorch. */
static void test_walk_the_graph(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 4}, 2);
  gs_tensor c = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){5, 6});
  gs_tensor xw = gs_mul(x, w), a = gs_add(xw, x), s = sum_all(a), sc = gs_mul(a, c);

  g_assert_true(gs_node_is_none(gs_grad_fn(x))); /* a leaf */
  gs_retain_grad(x), gs_retain_grad(a);
  g_assert_false(gs_retains_grad(x)); /* a leaf keeps its grad anyway */
  g_assert_true(gs_retains_grad(a));
  g_assert_false(gs_retains_grad(xw));
  g_assert_true(gs_node_is_none(gs_grad_fn(c))); /* made without grad */
  g_assert_true(gs_node_is_none(gs_grad_accumulator(c)));
  gs_node sum = gs_grad_fn(s);
  g_assert_cmpstr(gs_node_name(sum), ==, "SumBackward");
  g_assert_cmpint(gs_node_n_inputs(sum), ==, 1);
  g_assert_cmpuint(gs_grad_fn(s).id, ==, sum.id); /* one handle per node, for life */
  int64_t shape[GS_MAX_DIMS];
  gs_dtype dtype;
  g_assert_cmpint(gs_node_output_shape(sum, shape), ==, 0);
  g_assert_cmpint(gs_node_input_shape(sum, 0, shape, &dtype), ==, 1);
  g_assert_cmpint(shape[0], ==, 2);
  g_assert_cmpint(dtype, ==, GS_F64);

  gs_node add = gs_node_next(sum, 0);
  g_assert_cmpuint(add.id, ==, gs_grad_fn(a).id);
  g_assert_cmpstr(gs_node_name(add), ==, "AddBackward");
  gs_node mul = gs_node_next(add, 0), acc_x = gs_node_next(add, 1);
  g_assert_cmpstr(gs_node_name(mul), ==, "MulBackward");
  g_assert_cmpstr(gs_node_name(acc_x), ==, "AccumulateGrad");
  g_assert_cmpuint(gs_node_variable(acc_x).id, ==, x.id);
  g_assert_cmpuint(gs_grad_accumulator(x).id, ==, acc_x.id); /* the same node, both ways */
  g_assert_cmpuint(gs_node_next(mul, 0).id, ==, acc_x.id);   /* x feeds two nodes */
  g_assert_cmpuint(gs_node_variable(gs_node_next(mul, 1)).id, ==, w.id);
  g_assert_cmpint(gs_node_n_inputs(acc_x), ==, 0);
  g_assert_true(gs_tensor_is_none(gs_node_variable(mul))); /* not an AccumulateGrad */
  /* x * c: c needs no gradient, so its edge is empty */
  g_assert_true(gs_node_is_none(gs_node_next(gs_grad_fn(sc), 1)));
  g_assert_cmpuint(gs_node_number(sum), >, gs_node_number(add)); /* numbered as made */

  EXPECT_ERROR(gs_node_next(add, 2), "AddBackward #");
  EXPECT_ERROR(gs_node_input_shape(add, -1, shape, NULL), "has 2 inputs, got input -1");

  /* Backward without retain_graph frees saved tensors, not nodes: the graph is still there. */
  g_assert_false(gs_node_released(mul));
  gs_backward(s);
  g_assert_true(gs_node_released(mul));
  g_assert_cmpstr(gs_node_name(gs_node_next(sum, 0)), ==, "AddBackward");
  gs_dispose(x), gs_dispose(w), gs_dispose(c), gs_dispose(xw), gs_dispose(a), gs_dispose(s);
  gs_dispose(sc);
}

/* A node freed with its last tensor leaves a stale handle that names the event, never a
 * crash; a hold keeps it (and what it feeds) alive until released. */
static void test_stale_node_and_holds(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_mul_scalar(x, 3.0);
  gs_node n = gs_grad_fn(y);
  gs_dispose(y);
  g_assert_false(gs_node_is_alive(n));
  EXPECT_ERROR(gs_node_name(n), "graph node #");
  EXPECT_ERROR(gs_node_name(n), "is stale: the node was freed by the release of the last tensor");
  EXPECT_ERROR(gs_node_next(n, 0), "is stale");

  y = gs_mul_scalar(x, 3.0);
  gs_tensor z = gs_exp(y);
  n = gs_grad_fn(z);
  gs_node_retain(n);
  gs_dispose(z), gs_dispose(y);
  g_assert_true(gs_node_is_alive(n)); /* held */
  gs_node mul = gs_node_next(n, 0);
  g_assert_cmpstr(gs_node_name(mul), ==, "MulScalarBackward"); /* kept alive through n */
  gs_node_release(n);
  g_assert_false(gs_node_is_alive(n));
  g_assert_false(gs_node_is_alive(mul));
  EXPECT_ERROR(gs_node_release(n), "is stale");

  y = gs_mul_scalar(x, 3.0);
  EXPECT_ERROR(gs_node_release(gs_grad_fn(y)), "is not held");
  g_assert_cmpstr(gs_grad_fn_name(y), ==, "MulScalarBackward"); /* refused: still alive */
  EXPECT_ERROR(gs_node_name((gs_node){12345}), "never created");
  gs_dispose(y), gs_dispose(x);
}

static bool scale_by(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  *replacement = gs_mul_scalar(grad, *(double *)user_data);
  return true;
}

typedef struct seen {
  int calls;
  double first;
} seen;

static bool record(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  (void)replacement;
  seen *s = user_data;
  if (s->calls++ == 0)
    s->first = gs_get(grad, (int64_t[]){0});
  return true;
}

static int freed;
static void count_free(void *user_data) {
  (void)user_data;
  freed++;
}

static bool stop(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  (void)grad, (void)replacement, (void)user_data;
  return false;
}

static bool wrong_shape(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  (void)user_data;
  *replacement = sum_all(grad);
  return true;
}

/* Hooks see the gradient flowing into a tensor and may replace it, on non-leaves (before
 * their grad_fn) and on leaves (before .grad); removed hooks stop running. */
static void test_gradient_hooks(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_mul_scalar(x, 2.0);
  double ten = 10.0, half = 0.5;
  seen on_y = {0}, on_x = {0};
  gs_grad_hook h_y = gs_register_grad_hook(y, record, &on_y, NULL);
  gs_grad_hook h_scale = gs_register_grad_hook(y, scale_by, &ten, count_free);
  gs_grad_hook h_x = gs_register_grad_hook(x, record, &on_x, NULL);
  gs_register_grad_hook(x, scale_by, &half, NULL);
  g_assert_cmpuint(h_y.node, ==, gs_grad_fn(y).id);
  g_assert_cmpuint(h_x.node, ==, gs_grad_accumulator(x).id);
  gs_tensor y3 = gs_mul_scalar(y, 3.0), s = sum_all(y3);
  gs_backward_with(s, GS_NO_TENSOR, true);
  /* y's gradient is 3, the hook makes it 30, x's is 2 * 30 = 60, halved on the leaf */
  g_assert_cmpint(on_y.calls, ==, 1);
  g_assert_cmpfloat(on_y.first, ==, 3.0);
  g_assert_cmpfloat(on_x.first, ==, 60.0);
  assert_values(gs_grad(x), (double[]){30, 30}, 2);

  gs_grad_hook_remove(h_scale);
  g_assert_cmpint(freed, ==, 1); /* its user data let go */
  gs_grad_hook_remove(h_scale);  /* again: nothing */
  g_assert_cmpint(freed, ==, 1);
  gs_zero_grad(x);
  gs_backward_with(s, GS_NO_TENSOR, true);
  assert_values(gs_grad(x), (double[]){3, 3}, 2);
  g_assert_cmpint(on_y.calls, ==, 2);

  /* A hook that stops the pass, and one that returns another shape: errors, .grad untouched */
  gs_grad_hook_remove(h_y);
  gs_grad_hook h_stop = gs_register_grad_hook(y, stop, NULL, NULL);
  gs_zero_grad(x);
  EXPECT_ERROR(gs_backward_with(s, GS_NO_TENSOR, true), "stopped the backward pass");
  g_assert_true(gs_tensor_is_none(gs_grad(x)));
  gs_grad_hook_remove(h_stop);
  gs_register_grad_hook(y, wrong_shape, NULL, NULL);
  EXPECT_ERROR(gs_backward_with(s, GS_NO_TENSOR, true), "returned a gradient [] f64; expected");

  gs_tensor c = gs_from_data(GS_F64, (int64_t[]){1}, 1, (double[]){1});
  gs_grad_hook none = {1, 1};
  EXPECT_ERROR(none = gs_register_grad_hook(c, record, NULL, count_free), "does not require grad");
  g_assert_cmpuint(none.id, ==, 0);
  g_assert_cmpint(freed, ==, 2); /* a refused hook lets its data go too */
  EXPECT_ERROR(gs_register_grad_hook(x, NULL, NULL, count_free), "expected a hook function");
  g_assert_cmpint(freed, ==, 3);
  gs_dispose(c), gs_dispose(s), gs_dispose(y3), gs_dispose(y), gs_dispose(x);
}

/* A node post-hook: records the gradients the node made, then scales input 0's by 10 and
 * drops input 1's (PyTorch's None). */
static bool post_scale_drop(const gs_tensor *grad_inputs, int n_inputs, gs_tensor grad_output,
                            gs_tensor *replacements, void *user_data) {
  double *seen_values = user_data;
  g_assert_cmpint(n_inputs, ==, 2);
  seen_values[0] = gs_get(grad_inputs[0], (int64_t[]){0});
  seen_values[1] = gs_get(grad_inputs[1], (int64_t[]){0});
  seen_values[2] = gs_get(grad_output, (int64_t[]){0});
  replacements[0] = gs_mul_scalar(grad_inputs[0], 10.0);
  replacements[1] = GS_NO_TENSOR;
  return true;
}

static bool post_wrong_shape(const gs_tensor *grad_inputs, int n_inputs, gs_tensor grad_output,
                             gs_tensor *replacements, void *user_data) {
  (void)n_inputs, (void)grad_output, (void)user_data;
  replacements[0] = sum_all(grad_inputs[0]);
  return true;
}

static bool post_keep(const gs_tensor *grad_inputs, int n_inputs, gs_tensor grad_output,
                      gs_tensor *replacements, void *user_data) {
  (void)grad_inputs, (void)n_inputs, (void)grad_output, (void)replacements;
  (*(int *)user_data)++;
  return true;
}

/* Hooks on nodes, as PyTorch's Node.register_prehook and register_hook: the pre-hook sees
 * and may replace the gradient flowing into the node; the post-hook sees what the node made
 * for each input and the gradient it was given, and replaces or drops them; removal; a
 * replacement of another shape is refused; a hook on a stale node is refused. */
static void test_node_hooks(void) {
  gs_tensor x = leaf((double[]){1, 2, 3}, 3), w = leaf((double[]){0.5, -1, 2}, 3);
  gs_tensor y = gs_mul(x, w), y3 = gs_mul_scalar(y, 3.0), s = sum_all(y3);
  double seen_values[3] = {0}, one = 1.0;
  seen pre = {0};
  gs_grad_hook h_post =
      gs_node_register_post_hook(gs_grad_fn(y), post_scale_drop, seen_values, NULL);
  gs_grad_hook h_pre = gs_node_register_pre_hook(gs_grad_fn(y), record, &pre, NULL);
  gs_grad_hook h_add = gs_node_register_pre_hook(gs_grad_fn(y), scale_by, &one, NULL);
  g_assert_cmpuint(h_post.node, ==, gs_grad_fn(y).id);
  gs_backward_with(s, GS_NO_TENSOR, true);
  g_assert_cmpfloat(pre.first, ==, 3.0);          /* y's gradient flowing in */
  g_assert_cmpfloat(seen_values[0], ==, 3 * 0.5); /* d/dx = g * w */
  g_assert_cmpfloat(seen_values[1], ==, 3 * 1.0); /* d/dw = g * x */
  g_assert_cmpfloat(seen_values[2], ==, 3.0);
  assert_values(gs_grad(x), (double[]){15, -30, 60}, 3);
  g_assert_true(gs_tensor_is_none(gs_grad(w))); /* dropped */

  gs_grad_hook_remove(h_post), gs_grad_hook_remove(h_pre), gs_grad_hook_remove(h_add);
  gs_zero_grad(x);
  gs_backward_with(s, GS_NO_TENSOR, true);
  assert_values(gs_grad(x), (double[]){1.5, -3, 6}, 3);
  assert_values(gs_grad(w), (double[]){3, 6, 9}, 3);

  int kept = 0;
  gs_node_register_post_hook(gs_grad_fn(y), post_keep, &kept, NULL);
  gs_zero_grad(x), gs_zero_grad(w);
  gs_backward_with(s, GS_NO_TENSOR, true);
  g_assert_cmpint(kept, ==, 1);
  assert_values(gs_grad(x), (double[]){1.5, -3, 6}, 3);

  gs_node_register_post_hook(gs_grad_fn(y), post_wrong_shape, NULL, NULL);
  gs_zero_grad(x), gs_zero_grad(w);
  EXPECT_ERROR(gs_backward_with(s, GS_NO_TENSOR, true), "a hook after MulBackward #");
  int before = freed;
  EXPECT_ERROR(gs_node_register_post_hook((gs_node){12345}, post_keep, NULL, count_free),
               "never created");
  g_assert_cmpint(freed, ==, before + 1); /* a refused hook lets its data go */
  gs_dispose(s), gs_dispose(y3), gs_dispose(y), gs_dispose(w), gs_dispose(x);
}

static bool start_another(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  (void)replacement;
  gs_backward(*(gs_tensor *)user_data);
  return gs_is_alive(grad);
}

/* A hook may start a backward of its own: it runs, nested, before the outer pass goes on, and
 * both accumulate into the leaf. */
static void test_hook_starts_a_nested_backward(void) {
  gs_tensor x = leaf((double[]){1}, 1);
  gs_tensor y = gs_mul_scalar(x, 2.0), other = gs_mul_scalar(x, 5.0);
  gs_register_grad_hook(y, start_another, &other, NULL);
  gs_backward(y);
  assert_values(gs_grad(x), (double[]){2 + 5}, 1);
  gs_dispose(other), gs_dispose(y), gs_dispose(x);
}

/* gs_backward_many: one pass, shared nodes run once with their seeds summed. */
static void test_backward_many(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_mul(x, x);
  gs_tensor a = sum_all(y), b = gs_mul_scalar(y, 3.0);
  gs_tensor seed = gs_from_data(GS_F64, (int64_t[]){2}, 1, (double[]){1, 10});
  gs_backward_many((gs_tensor[]){a, b}, (gs_tensor[]){GS_NO_TENSOR, seed}, 2, false);
  /* d/dx: 2x * (1 + 3 * seed) */
  assert_values(gs_grad(x), (double[]){2 * 1 * 4, 2 * 2 * 31}, 2);
  EXPECT_ERROR(gs_backward_many(NULL, NULL, 0, false), "expected at least one output");
  gs_dispose(seed), gs_dispose(b), gs_dispose(a), gs_dispose(y), gs_dispose(x);
}

/* gs_autograd_grad: gradients as new tensors, .grad untouched, only what leads to the inputs
 * runs, and unused inputs are an error unless allowed. */
static void test_autograd_grad(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 4}, 2);
  gs_tensor u = leaf((double[]){0}, 1);
  gs_tensor h = gs_mul(x, w);
  gs_tensor e = gs_exp(h), s = sum_all(e);
  gs_tensor g[3];
  g_assert_cmpint(gs_autograd_grad(&s, NULL, 1, (gs_tensor[]){x, h}, 2, true, false, g), ==, 0);
  double e3 = exp(3), e8 = exp(8);
  assert_values(g[0], (double[]){3 * e3, 4 * e8}, 2); /* d/dx = w exp(xw) */
  assert_values(g[1], (double[]){e3, e8}, 2);         /* the non-leaf's own gradient */
  g_assert_true(gs_tensor_is_none(gs_grad(x)));
  g_assert_true(gs_tensor_is_none(gs_grad(w))); /* w's AccumulateGrad did not run */
  g_assert_false(gs_node_released(gs_grad_fn(h)));
  gs_dispose(g[0]), gs_dispose(g[1]);

  /* u is not in the graph: an error naming it, none with allow_unused */
  g[0] = g[1] = (gs_tensor){99};
  EXPECT_ERROR(gs_autograd_grad(&s, NULL, 1, (gs_tensor[]){x, u}, 2, true, false, g),
               "input 1 (tensor #");
  g_assert_true(gs_tensor_is_none(g[0]) && gs_tensor_is_none(g[1]));
  g_assert_cmpint(gs_autograd_grad(&s, NULL, 1, (gs_tensor[]){w, u}, 2, false, true, g), ==, 0);
  assert_values(g[0], (double[]){1 * e3, 2 * e8}, 2);
  g_assert_true(gs_tensor_is_none(g[1]));
  gs_dispose(g[0]);
  /* the pass freed what it ran: a second one through it is the usual error */
  EXPECT_ERROR(gs_autograd_grad(&s, NULL, 1, &w, 1, false, false, g), "retain_graph");

  gs_tensor c = gs_from_data(GS_F64, (int64_t[]){1}, 1, (double[]){1});
  EXPECT_ERROR(gs_autograd_grad(&s, NULL, 1, &c, 1, false, false, g), "does not require grad");
  EXPECT_ERROR(gs_autograd_grad(&s, NULL, 1, NULL, 0, false, false, g), "expected at least");
  gs_dispose(c), gs_dispose(s), gs_dispose(e), gs_dispose(h), gs_dispose(u), gs_dispose(w),
      gs_dispose(x);
}

/* gs_backward_inputs: only the given tensors' .grad accumulate (a non-leaf's too), twice
 * adds, an unreached input keeps its grad, and a failed pass changes no .grad. */
static void test_backward_inputs(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 4}, 2);
  gs_tensor u = leaf((double[]){0}, 1);
  gs_tensor h = gs_mul(x, w), hh = gs_mul(h, h), s = sum_all(hh); /* s = sum((xw)^2) */
  g_assert_cmpint(gs_backward_inputs(&s, NULL, 1, &w, 1, true), ==, 0);
  assert_values(gs_grad(w), (double[]){2 * 1 * 3, 2 * 4 * 4}, 2); /* 2 x^2 w */
  g_assert_true(gs_tensor_is_none(gs_grad(x)));
  g_assert_cmpint(gs_backward_inputs(&s, NULL, 1, (gs_tensor[]){w, h, u}, 3, true), ==, 0);
  assert_values(gs_grad(w), (double[]){2 * 6, 2 * 32}, 2); /* added */
  assert_values(gs_grad(h), (double[]){2 * 3, 2 * 8}, 2);  /* a non-leaf keeps it */
  g_assert_true(gs_tensor_is_none(gs_grad(u)) && gs_tensor_is_none(gs_grad(x)));
  /* the last pass freed the graph: the next one fails and leaves every .grad as it was */
  g_assert_cmpint(gs_backward_inputs(&s, NULL, 1, &x, 1, false), ==, 0);
  assert_values(gs_grad(x), (double[]){2 * 9, 2 * 2 * 16}, 2); /* 2 x w^2 */
  EXPECT_ERROR(gs_backward_inputs(&s, NULL, 1, &x, 1, false), "retain_graph");
  assert_values(gs_grad(x), (double[]){2 * 9, 2 * 2 * 16}, 2);
  EXPECT_ERROR(gs_backward_inputs(&s, NULL, 1, NULL, 0, false), "expected at least one");
  gs_dispose(s), gs_dispose(hh), gs_dispose(h), gs_dispose(u), gs_dispose(w), gs_dispose(x);
}

/* gs_view_base: the root of a chain of views (PyTorch's _base), none for bases. */
static void test_view_base(void) {
  gs_tensor x = leaf((double[]){1, 2, 3, 4}, 4);
  gs_tensor v = gs_view(x, (int64_t[]){2, 2}, 2), s = gs_select(v, 0, 1);
  gs_tensor d = gs_detach(x), c = gs_clone(v);
  g_assert_cmpuint(gs_view_base(v).id, ==, x.id);
  g_assert_cmpuint(gs_view_base(s).id, ==, x.id); /* a chain resolves to its root */
  g_assert_true(gs_tensor_is_none(gs_view_base(x)));
  g_assert_true(gs_tensor_is_none(gs_view_base(d)));
  g_assert_true(gs_tensor_is_none(gs_view_base(c)));
  gs_dispose(x);
  EXPECT_ERROR(gs_view_base(s), "is stale");
  gs_dispose(c), gs_dispose(d), gs_dispose(s), gs_dispose(v);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/graph-api/walk-the-graph", test_walk_the_graph);
  g_test_add_func("/graph-api/reduction-nodes", test_reduction_nodes);
  g_test_add_func("/graph-api/stale-node-and-holds", test_stale_node_and_holds);
  g_test_add_func("/graph-api/gradient-hooks", test_gradient_hooks);
  g_test_add_func("/graph-api/node-hooks", test_node_hooks);
  g_test_add_func("/graph-api/hook-starts-a-nested-backward", test_hook_starts_a_nested_backward);
  g_test_add_func("/graph-api/backward-many", test_backward_many);
  g_test_add_func("/graph-api/autograd-grad", test_autograd_grad);
  g_test_add_func("/graph-api/backward-inputs", test_backward_inputs);
  g_test_add_func("/graph-api/view-base", test_view_base);
  return g_test_run();
}
