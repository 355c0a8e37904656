/* test-reentrant.c: a backward started while another runs on the same thread (reentrant
 * backward, as torch.utils.checkpoint uses): a custom function whose backward recomputes its
 * segment with grad mode on and runs a backward or gs_autograd_grad through it, gives the
 * gradients the plain graph gives (the parameter's through the nested pass); the outer pass's
 * state is as it was afterwards; a nested pass through the node the outer one is running, or
 * through nodes a pass freed, is a clear error; and the event log nests the passes. */
#include "test-util.h"

static gs_tensor leaf(const double *values, int64_t n) {
  gs_tensor t = gs_from_data(GS_F64, &n, 1, values);
  gs_set_requires_grad(t, true);
  return t;
}

static gs_tensor sum_all(gs_tensor t) { return gs_sum(t, NULL, 0, false); }

/* The checkpointed segment: sin(x) * w * x, w a parameter (not an input of the function). */
static gs_tensor segment(gs_tensor x, gs_tensor w) {
  gs_tensor s = gs_sin(x), sw = gs_mul(s, w);
  gs_tensor y = gs_mul(sw, x);
  DISPOSE_ALL(s, sw);
  return y;
}

typedef enum recompute_how {
  HOW_BACKWARD,     /* gs_backward_with through the recomputed segment */
  HOW_GRAD,         /* gs_autograd_grad with respect to the detached input only */
  HOW_REACH_ITSELF, /* a nested backward from the outer root: reaches this very node */
} recompute_how;

typedef struct checkpoint {
  gs_tensor w;
  recompute_how how;
  gs_tensor root; /* HOW_REACH_ITSELF: the outer pass's root */
  int calls;
  bool grad_mode_inside, grad_mode_after_inner;
} checkpoint;

static bool checkpoint_backward(const gs_function_call *call) {
  checkpoint *c = call->user_data;
  c->calls++;
  c->grad_mode_inside = gs_grad_enabled();
  if (c->how == HOW_REACH_ITSELF) {
    EXPECT_ERROR(gs_backward_with(c->root, GS_NO_TENSOR, true),
                 "is running in an outer backward pass on this thread");
    call->grad_inputs[0] = gs_ones_like(call->grad_output);
    return true;
  }
  bool was = gs_set_grad_enabled(true);
  gs_tensor x = gs_detach(call->saved[0]);
  gs_set_requires_grad(x, true);
  gs_tensor y = segment(x, c->w);
  if (c->how == HOW_BACKWARD) {
    gs_backward_with(y, call->grad_output, false);
    call->grad_inputs[0] = gs_clone(gs_grad(x));
  } else {
    g_assert_cmpint(
        gs_autograd_grad(&y, &call->grad_output, 1, &x, 1, false, false, call->grad_inputs), ==, 0);
  }
  c->grad_mode_after_inner = gs_grad_enabled();
  DISPOSE_ALL(y, x);
  gs_set_grad_enabled(was);
  return true;
}

/* The segment under no_grad, recorded as one node that saves its input. */
static gs_tensor checkpointed(gs_tensor x, checkpoint *c) {
  gs_no_grad_begin();
  gs_tensor y = segment(x, c->w);
  gs_no_grad_end();
  gs_function fn = {.name = "CheckpointBackward",
                    .backward = checkpoint_backward,
                    .saved = &x,
                    .n_saved = 1,
                    .user_data = c};
  g_assert_cmpint(gs_function_record(y, &x, 1, &fn), ==, 1);
  return y;
}

static void assert_close(gs_tensor got, gs_tensor want) {
  g_assert_true(got.id && want.id);
  g_autofree double *a = test_values(got);
  g_autofree double *b = test_values(want);
  for (int64_t i = 0; i < gs_numel(want); i++)
    g_assert_cmpfloat_with_epsilon(a[i], b[i], 1e-12);
}

/* loss = sum(segment(x)^2) through the checkpoint and through the plain graph. */
static void run_against_plain(recompute_how how) {
  const double xs[] = {0.5, -1.25, 2.0}, ws[] = {1.5, 0.25, -0.75};
  gs_tensor x = leaf(xs, 3), w = leaf(ws, 3), x0 = leaf(xs, 3), w0 = leaf(ws, 3);
  checkpoint c = {.w = w, .how = how};
  gs_tensor y = checkpointed(x, &c), yy = gs_mul(y, y), loss = sum_all(yy);
  g_assert_false(gs_requires_grad(w) && gs_grad(w).id); /* nothing ran yet */
  gs_backward(loss);
  g_assert_cmpint(c.calls, ==, 1);
  g_assert_false(c.grad_mode_inside);     /* the outer pass's mode */
  g_assert_true(c.grad_mode_after_inner); /* the nested pass gave the mode back */
  g_assert_true(gs_grad_enabled());

  gs_tensor y0 = segment(x0, w0), yy0 = gs_mul(y0, y0), loss0 = sum_all(yy0);
  gs_backward(loss0);
  assert_close(y, y0);
  assert_close(gs_grad(x), gs_grad(x0));
  if (how == HOW_BACKWARD)
    assert_close(gs_grad(w), gs_grad(w0)); /* through the nested pass only */
  else
    g_assert_true(gs_grad(w).id == 0); /* grad() leaves .grad alone */
  DISPOSE_ALL(loss0, yy0, y0, loss, yy, y, w0, x0, w, x);
}

static void test_function_runs_a_nested_backward(void) { run_against_plain(HOW_BACKWARD); }

static void test_function_runs_a_nested_grad(void) { run_against_plain(HOW_GRAD); }

/* Twice in one process, then on a graph of two checkpoints in a row: a nested pass inside a
 * pass that already ran one. */
static void test_two_checkpoints_in_a_row(void) {
  const double xs[] = {0.3, 0.7};
  gs_tensor x = leaf(xs, 2), w = leaf((double[]){2, 3}, 2);
  gs_tensor x0 = leaf(xs, 2), w0 = leaf((double[]){2, 3}, 2);
  checkpoint c = {.w = w, .how = HOW_BACKWARD};
  gs_tensor a = checkpointed(x, &c), b = checkpointed(a, &c), loss = sum_all(b);
  gs_backward(loss);
  g_assert_cmpint(c.calls, ==, 2);
  gs_tensor a0 = segment(x0, w0), b0 = segment(a0, w0), loss0 = sum_all(b0);
  gs_backward(loss0);
  assert_close(gs_grad(x), gs_grad(x0));
  assert_close(gs_grad(w), gs_grad(w0));
  DISPOSE_ALL(loss0, b0, a0, loss, b, a, w0, x0, w, x);
}

/* The nested pass reaches the node running it: an error in the nested pass only. */
static void test_nested_pass_cannot_reach_the_running_node(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 4}, 2);
  checkpoint c = {.w = w, .how = HOW_REACH_ITSELF};
  gs_tensor y = checkpointed(x, &c), loss = sum_all(y);
  c.root = loss;
  gs_backward_with(loss, GS_NO_TENSOR, true);
  g_assert_cmpint(c.calls, ==, 1); /* not run again by the nested pass */
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){1, 1}, 0, 0);
  DISPOSE_ALL(loss, y, w, x);
}

/* A function whose backward runs a backward of its own through `other`, a graph the outer pass
 * shares, without retain_graph. */
typedef struct frees_shared {
  gs_tensor other;
  const char *expect; /* the nested pass's error, or NULL */
} frees_shared;

static bool backward_through_other(const gs_function_call *call) {
  frees_shared *f = call->user_data;
  if (f->expect)
    EXPECT_ERROR(gs_backward(f->other), f->expect);
  else
    gs_backward(f->other);
  call->grad_inputs[0] = gs_clone(call->grad_output);
  return true;
}

static gs_tensor through_other(gs_tensor x, frees_shared *f) {
  gs_tensor y = gs_detach(x);
  gs_function fn = {
      .name = "ThroughOtherBackward", .backward = backward_through_other, .user_data = f};
  g_assert_cmpint(gs_function_record(y, &x, 1, &fn), ==, 1);
  return y;
}

/* The nested pass frees the saved tensors of a node the outer pass has still to run: the
 * outer pass stops there with the usual error, not with freed memory. */
static void test_nested_pass_frees_what_the_outer_needs(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor h = gs_mul(x, x), other = sum_all(h);
  frees_shared f = {.other = other};
  gs_tensor y = through_other(h, &f), loss = sum_all(y);
  EXPECT_ERROR(gs_backward(loss), "was already run by a backward that freed its saved tensors");
  DISPOSE_ALL(loss, y, other, h, x);
}

/* The nested pass walks into a node the outer pass ran and freed: the nested pass's error. */
static void test_nested_pass_reaches_a_freed_node(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 4}, 2);
  frees_shared f = {.expect = "was already run by a backward that freed its saved tensors"};
  gs_tensor y = through_other(x, &f), yw = gs_mul(y, w), loss = sum_all(yw);
  f.other = loss;
  gs_backward(loss);
  test_assert_values(gs_grad(x), (int64_t[]){2}, 1, (double[]){3, 4}, 0, 0);
  DISPOSE_ALL(loss, yw, y, w, x);
}

/* The event log: the nested pass's BACKWARD_BEGIN and END inside the outer's. */
static void test_log_nests_the_passes(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-reentrant-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "nested.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = leaf((double[]){0.5, 1}, 2), w = leaf((double[]){2, 3}, 2);
  checkpoint c = {.w = w, .how = HOW_BACKWARD};
  gs_tensor y = checkpointed(x, &c), loss = sum_all(y);
  gs_backward(loss);
  DISPOSE_ALL(loss, y, w, x);
  gs_trace_close();
  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  int depth = 0, deepest = 0, begins = 0;
  uint64_t roots[4] = {0};
  while (gs_trace_reader_next(r, &e) > 0) {
    if (e.kind == GS_TRACE_BACKWARD_BEGIN) {
      g_assert_cmpint(depth, <, 4);
      roots[depth++] = e.tensor;
      begins++;
      deepest = MAX(deepest, depth);
    } else if (e.kind == GS_TRACE_BACKWARD_END) {
      g_assert_cmpint(depth, >, 0);
      g_assert_cmpuint(e.tensor, ==, roots[--depth]); /* ends the pass that began last */
    }
  }
  g_assert_cmpint(begins, ==, 2);
  g_assert_cmpint(deepest, ==, 2);
  g_assert_cmpint(depth, ==, 0);
  gs_trace_reader_free(r);
  remove(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/reentrant/function-runs-a-nested-backward",
                        test_function_runs_a_nested_backward);
  test_add_leak_checked("/reentrant/function-runs-a-nested-grad", test_function_runs_a_nested_grad);
  test_add_leak_checked("/reentrant/two-checkpoints-in-a-row", test_two_checkpoints_in_a_row);
  test_add_leak_checked("/reentrant/nested-pass-cannot-reach-the-running-node",
                        test_nested_pass_cannot_reach_the_running_node);
  test_add_leak_checked("/reentrant/nested-pass-frees-what-the-outer-needs",
                        test_nested_pass_frees_what_the_outer_needs);
  test_add_leak_checked("/reentrant/nested-pass-reaches-a-freed-node",
                        test_nested_pass_reaches_a_freed_node);
  test_add_leak_checked("/reentrant/log-nests-the-passes", test_log_nests_the_passes);
  return g_test_run();
}
