/* test-autograd.c: the semantics people come to debug and to learn, as tests: clone vs
 * detach, in-place after detach and its version error, view gradients landing in the base,
 * in-place writes through views (CopySlices) and views they made stale,
 * accumulation across backwards, retain_graph, retain_grad, no_grad, leaves and their errors. */
#include "test-util.h"

static gs_tensor leaf(const double *values, int64_t n) {
  gs_tensor t = gs_from_data(GS_F64, &n, 1, values);
  gs_set_requires_grad(t, true);
  return t;
}

static void assert_grad(gs_tensor t, const double *expected, int64_t n) {
  gs_tensor g = gs_grad(t);
  g_assert_true(g.id != 0);
  test_assert_values(g, &n, 1, expected, 1e-12, 1e-12);
}

/* Clone is a copy for values and the identity for gradients; it costs nothing until written. */
static void test_clone_then_write(void) {
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  gs_tensor y = gs_mul_scalar(x, 2.0);
  gs_memory_stats before, after;
  gs_memory_get_stats(&before);
  gs_tensor c = gs_clone(y);
  gs_memory_get_stats(&after);
  g_assert_cmpuint(after.allocations, ==, before.allocations); /* O(1): no bytes yet */
  g_assert_true(gs_is_copy_on_write(c));
  g_assert_cmpstr(gs_grad_fn_name(c), ==, "CloneBackward");

  gs_add_scalar_(c, 10.0); /* the first write materialises the clone's bytes */
  g_assert_false(gs_is_copy_on_write(c));
  double y_values[3] = {2, 4, 6}, c_values[3] = {12, 14, 16};
  test_assert_values(y, (int64_t[]){3}, 1, y_values, 0, 0);
  test_assert_values(c, (int64_t[]){3}, 1, c_values, 0, 0);

  /* Gradient flows through the clone (and its in-place add) to x. */
  gs_tensor s = gs_mul(c, c);
  gs_tensor ones = gs_ones_like(s);
  gs_backward_with(s, ones, false);
  double expected[3] = {2 * 12 * 2, 2 * 14 * 2, 2 * 16 * 2};
  assert_grad(x, expected, 3);
  gs_dispose(x), gs_dispose(y), gs_dispose(c), gs_dispose(s), gs_dispose(ones);
}

/* Detach shares storage and version counter: an in-place write through the detached alias
 * shows in the original, and a backward that saved the original refuses to run. */
static void test_in_place_after_detach(void) {
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  gs_tensor y = gs_mul_scalar(x, 1.0);
  gs_tensor z = gs_mul(y, y); /* MulBackward saves y (version 0) */
  gs_tensor d = gs_detach(y);
  g_assert_false(gs_requires_grad(d));
  g_assert_true(gs_is_leaf(d));
  g_assert_cmpuint(gs_storage_id(d), ==, gs_storage_id(y));
  gs_add_scalar_(d, 1.0);
  uint64_t write_event = gs_event_counter(); /* the write was the last event */
  double shown[3] = {2, 3, 4};
  test_assert_values(y, (int64_t[]){3}, 1, shown, 0, 0); /* the write shows in y */
  g_assert_cmpint(gs_version(y), ==, 1);

  /* The node is named by its id (as the event log and the inspector name it), and so is
   * the saved input that was modified: y * y saved y as both, self is checked first. */
  char expected[256];
  g_snprintf(expected, sizeof expected,
             " as self (input 0) is at version 1; expected version 0. It was modified in place "
             "by add_scalar_ (event %llu) through a detached alias (tensor #",
             (unsigned long long)write_event);
  gs_tensor ones = gs_ones_like(z);
  EXPECT_ERROR(gs_backward_with(z, ones, false), expected);
  EXPECT_ERROR(gs_backward_with(z, ones, false),
               "backward: one of the variables needed for gradient computation has been "
               "modified by an inplace operation: tensor [3] f64 saved by MulBackward #");
  g_assert_true(g_regex_match_simple("saved by MulBackward #[0-9]+ as self", gs_last_error(), 0,
                                     0));
  /* Nothing ran: no gradient reached x. */
  g_assert_true(gs_grad(x).id == 0);
  gs_dispose(x), gs_dispose(y), gs_dispose(z), gs_dispose(d), gs_dispose(ones);
}

/* Writing through a plain view (no autograd involved in the write) is caught the same way. */
static void test_in_place_through_view_is_caught(void) {
  gs_tensor x = leaf((double[]){1, 2, 3, 4}, 4);
  gs_tensor e = gs_exp(x); /* ExpBackward saves its output */
  gs_tensor v;
  gs_no_grad_begin();
  v = gs_slice(e, 0, 1, 3, 1);
  gs_fill_(v, 0.0);
  gs_no_grad_end();
  gs_tensor ones = gs_ones_like(e);
  EXPECT_ERROR(gs_backward_with(e, ones, false),
               " as result (its output) is at version 1; expected version 0. It was modified "
               "in place by fill_");
  g_assert_true(g_regex_match_simple("saved by ExpBackward #[0-9]+ as result", gs_last_error(), 0,
                                     0));
  EXPECT_ERROR(gs_backward_with(e, ones, false), "through a view sharing its storage");
  gs_dispose(x), gs_dispose(e), gs_dispose(v), gs_dispose(ones);
}

/* In-place writes through views rewrite the base's history (CopySlices), as in PyTorch; a
 * view made before a write into its base gets its history from the base's new one on its next
 * use (AsStridedBackward). */
static void test_in_place_through_views_under_autograd(void) {
  /* mul_ through a narrow of a non-leaf: b = [a0 w0, a1 w1, a2]; loss = b . [1, 2, 3]. */
  gs_tensor a = leaf((double[]){1, 2, 3}, 3), w = leaf((double[]){5, 7}, 2);
  gs_tensor b = gs_mul_scalar(a, 1.0);
  gs_tensor v = gs_narrow(b, 0, 0, 2);
  gs_mul_(v, w);
  g_assert_cmpstr(gs_grad_fn_name(b), ==, "CopySlices");
  g_assert_cmpstr(gs_grad_fn_name(v), ==, "AsStridedBackward");
  gs_tensor c = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_tensor bc = gs_mul(b, c), loss = gs_sum(bc, NULL, 0, false);
  gs_backward(loss);
  test_assert_values(b, (int64_t[]){3}, 1, (double[]){5, 14, 3}, 0, 0);
  assert_grad(a, (double[]){5, 14, 3}, 3);
  assert_grad(w, (double[]){1, 4}, 2);

  /* A buffer that needs no gradient, filled through a row: it joins the graph. */
  gs_tensor h = leaf((double[]){1, -2}, 2);
  gs_tensor buffer = gs_zeros(GS_F64, (int64_t[]){3, 2}, 2);
  gs_tensor row = gs_select(buffer, 0, 1);
  gs_tensor h2 = gs_mul_scalar(h, 2.0);
  g_assert_false(gs_requires_grad(buffer));
  gs_copy_(row, h2);
  g_assert_true(gs_requires_grad(buffer));
  g_assert_false(gs_is_leaf(buffer));
  gs_tensor sq = gs_mul(buffer, buffer), l2 = gs_sum(sq, NULL, 0, false);
  gs_backward(l2);
  assert_grad(h, (double[]){8, -16}, 2); /* d/dh of sum((2h)^2) */

  /* Views made before writes into their base, directly and through an overlapping view, see
   * the writes in their values and in their gradients: y = [20, 40, 60, 8] after both. */
  gs_tensor x = leaf((double[]){1, 2, 3, 4}, 4);
  gs_tensor y = gs_mul_scalar(x, 1.0);
  gs_tensor first = gs_select(y, 0, 0);
  gs_tensor s1 = gs_narrow(y, 0, 0, 3), s2 = gs_narrow(y, 0, 1, 3);
  gs_mul_scalar_(y, 2.0);
  gs_mul_scalar_(s1, 10.0);
  gs_tensor l3a = gs_sum(s2, NULL, 0, false), l3 = gs_add(l3a, first);
  gs_backward(l3);
  test_assert_values(s2, (int64_t[]){3}, 1, (double[]){40, 60, 8}, 0, 0);
  assert_grad(x, (double[]){20, 20, 20, 2}, 4);

  /* ... also once the base itself is gone: its storage keeps what its views need. */
  gs_tensor p = leaf((double[]){1, 2, 3}, 3);
  gs_tensor q = gs_mul_scalar(p, 1.0);
  gs_tensor tail = gs_narrow(q, 0, 1, 2);
  gs_mul_scalar_(q, 3.0);
  gs_dispose(q);
  gs_tensor l4 = gs_sum(tail, NULL, 0, false);
  gs_backward(l4);
  assert_grad(p, (double[]){0, 3, 3}, 3);

  /* A retained gradient is the latest version's, after writes into it and through views. */
  gs_tensor r = leaf((double[]){1, 2, 3}, 3);
  gs_tensor k = gs_mul_scalar(r, 1.0);
  gs_retain_grad(k);
  gs_mul_scalar_(k, 3.0);
  gs_tensor kv = gs_narrow(k, 0, 1, 2);
  gs_mul_scalar_(kv, 5.0);
  gs_tensor kc = gs_mul(k, c), l5 = gs_sum(kc, NULL, 0, false);
  gs_backward(l5);
  assert_grad(k, (double[]){1, 2, 3}, 3);
  assert_grad(r, (double[]){3, 30, 45}, 3);

  DISPOSE_ALL(a, w, b, v, c, bc, loss, h, buffer, row, h2, sq, l2, x, y, first, s1, s2, l3a, l3, p,
              tail, l4, r, k, kv, kc, l5);
}

/* A write through a view whose base was disposed cannot reach the base's history: refused,
 * before anything is written. */
static void test_in_place_through_view_of_a_disposed_base(void) {
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  gs_tensor y = gs_mul_scalar(x, 1.0);
  gs_tensor v = gs_narrow(y, 0, 0, 2);
  gs_dispose(y);
  EXPECT_ERROR(gs_mul_scalar_(v, 2.0), "is a view whose base tensor #");
  EXPECT_ERROR(gs_mul_scalar_(v, 2.0), "was disposed; a write into it could not be recorded");
  g_assert_cmpint(gs_version(v), ==, 0);
  test_assert_values(v, (int64_t[]){2}, 1, (double[]){1, 2}, 0, 0);
  gs_no_grad_begin(); /* outside autograd it is a plain write */
  gs_mul_scalar_(v, 2.0);
  gs_no_grad_end();
  test_assert_values(v, (int64_t[]){2}, 1, (double[]){2, 4}, 0, 0);
  gs_dispose(x), gs_dispose(v);
}

/* Gradients of views land in the base, summed where views overlap. */
static void test_view_gradients_land_in_base(void) {
  gs_tensor x = leaf((double[]){1, 2, 3, 4, 5, 6}, 6);
  gs_tensor m = gs_view(x, (int64_t[]){2, 3}, 2);
  gs_tensor col = gs_select(m, 1, 1);          /* x[1], x[4] */
  gs_tensor rows = gs_slice(m, 1, 1, 3, 1);    /* x[1], x[2], x[4], x[5] */
  gs_tensor t = gs_t(m);
  gs_tensor a = gs_mul_scalar(col, 10.0);
  gs_tensor b = gs_sum(rows, NULL, 0, false);
  gs_tensor c = gs_sum(t, (int[]){0}, 1, false); /* [2]: each row of m once */
  gs_tensor sa = gs_sum(a, NULL, 0, false), sc = gs_sum(c, NULL, 0, false);
  gs_tensor ab = gs_add(sa, b), total = gs_add(ab, sc);
  gs_backward(total);
  double expected[6] = {1, 12, 2, 1, 12, 2};
  assert_grad(x, expected, 6);
  DISPOSE_ALL(x, m, col, rows, t, a, b, c, sa, sc, ab, total);
}

/* Two backwards accumulate into a leaf's grad until it is cleared. */
static void test_grad_accumulates_until_zeroed(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  for (int i = 0; i < 2; i++) {
    gs_tensor y = gs_mul_scalar(x, 3.0);
    gs_tensor s = gs_sum(y, NULL, 0, false);
    gs_backward(s);
    gs_dispose(y), gs_dispose(s);
  }
  double six[2] = {6, 6};
  assert_grad(x, six, 2);
  int64_t grad_version = gs_version(gs_grad(x));
  g_assert_cmpint(grad_version, ==, 1); /* the second backward added in place */
  gs_zero_grad(x);
  g_assert_true(gs_grad(x).id == 0);
  gs_dispose(x);
}

/* gs_set_grad makes the tensor given the gradient itself (t.grad = g): backward adds into it,
 * a view's gradient writes through to its base, and bad gradients are refused with why. */
static void test_set_grad(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor base = gs_from_data(GS_F64, (int64_t[]){4}, 1, (double[]){10, 20, 30, 40});
  gs_tensor part = gs_narrow(base, 0, 1, 2); /* 20, 30 */
  g_assert_cmpint(gs_set_grad(x, part), ==, 0);
  g_assert_true(gs_grad(x).id == part.id);
  gs_tensor m = gs_mul_scalar(x, 3.0);
  gs_tensor s = gs_sum(m, NULL, 0, false);
  gs_backward(s);
  assert_grad(x, (double[]){23, 33}, 2);
  const double *b = gs_data(base); /* added in place, through the view into its base */
  g_assert_cmpfloat(b[0], ==, 10);
  g_assert_cmpfloat(b[1], ==, 23);
  g_assert_cmpfloat(b[2], ==, 33);
  g_assert_cmpfloat(b[3], ==, 40);
  gs_tensor wrong = gs_zeros(GS_F64, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_set_grad(x, wrong), "expected a gradient of shape [2] f64");
  gs_tensor f32 = gs_zeros(GS_F32, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_set_grad(x, f32), "got [2] f32");
  EXPECT_ERROR(gs_set_grad(x, x), "cannot be its own gradient");
  gs_tensor y = leaf((double[]){5, 6}, 2);
  EXPECT_ERROR(gs_set_grad(y, part), "is the gradient of another tensor");
  gs_zero_grad(x); /* x owned it: clearing the gradient disposes it */
  g_assert_false(gs_is_alive(part));
  g_assert_cmpint(gs_set_grad(y, GS_NO_TENSOR), ==, 0);
  gs_dispose(wrong), gs_dispose(f32), gs_dispose(m), gs_dispose(s), gs_dispose(base);
  gs_dispose(x), gs_dispose(y);
}

static void test_retain_graph(void) {
  gs_tensor x = leaf((double[]){2}, 1);
  gs_tensor y = gs_mul(x, x);
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward_with(s, GS_NO_TENSOR, true);
  gs_backward_with(s, GS_NO_TENSOR, false); /* retained: runs again */
  double eight[1] = {8};
  assert_grad(x, eight, 1);
  EXPECT_ERROR(gs_backward(s), "was already run by a backward that freed its saved tensors");
  EXPECT_ERROR(gs_backward(s), "pass retain_graph to the first backward");
  gs_dispose(x), gs_dispose(y), gs_dispose(s);
}

static void test_retain_grad_for_non_leaf(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_mul_scalar(x, 3.0);
  gs_retain_grad(y);
  gs_tensor z = gs_mul(y, y);
  gs_tensor s = gs_sum(z, NULL, 0, false);
  gs_backward(s);
  double gy[2] = {6, 12}, gx[2] = {18, 36};
  assert_grad(y, gy, 2);
  assert_grad(x, gx, 2);
  gs_tensor w = gs_mul_scalar(x, 1.0);
  g_assert_true(gs_grad(w).id == 0); /* non-leaves keep no grad unless asked */
  gs_dispose(x), gs_dispose(y), gs_dispose(z), gs_dispose(s), gs_dispose(w);
}

static void test_no_grad_records_nothing(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_no_grad_begin();
  g_assert_false(gs_grad_enabled());
  gs_tensor y = gs_mul(x, x);
  gs_no_grad_begin(); /* blocks nest */
  gs_no_grad_end();
  g_assert_false(gs_grad_enabled());
  gs_no_grad_end();
  g_assert_true(gs_grad_enabled());
  g_assert_false(gs_requires_grad(y));
  g_assert_true(gs_is_leaf(y));
  g_assert_null(gs_grad_fn_name(y));
  /* Leaves may be changed in place inside no_grad (what optimizers do). */
  gs_no_grad_begin();
  gs_add_scalar_(x, 1.0);
  gs_no_grad_end();
  EXPECT_ERROR(gs_no_grad_end(), "no_grad_end: no no_grad block is open on this thread");
  bool previous = gs_set_grad_enabled(false);
  g_assert_true(previous);
  gs_tensor z = gs_exp(x);
  g_assert_false(gs_requires_grad(z));
  gs_set_grad_enabled(true);
  gs_dispose(x), gs_dispose(y), gs_dispose(z);
}

static void test_leaf_rules(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  EXPECT_ERROR(gs_add_scalar_(x, 1.0), "is a leaf that requires grad and cannot be modified in "
                                       "place");
  g_assert_cmpint(gs_version(x), ==, 0);
  gs_tensor y = gs_exp(x);
  EXPECT_ERROR(gs_set_requires_grad(y, false), "is not a leaf (it was made by ExpBackward)");
  gs_tensor i = gs_zeros(GS_I64, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_set_requires_grad(i, true), "only floating tensors can require grad, got i64");
  gs_tensor plain = gs_ones(GS_F64, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_backward(plain), "does not require grad and has no grad_fn");
  gs_tensor v = gs_view(x, (int64_t[]){2, 1}, 2); /* a view of a leaf that requires grad */
  EXPECT_ERROR(gs_mul_scalar_(v, 2.0), "is a view of tensor #");
  EXPECT_ERROR(gs_mul_scalar_(v, 2.0), "[2] f64, a leaf that requires grad; writing into the "
                                       "view would change the leaf in place");
  g_assert_cmpint(gs_version(x), ==, 0);
  /* Comparisons and integer results are not differentiable. */
  gs_tensor c = gs_gt_scalar(x, 1.5);
  g_assert_false(gs_requires_grad(c));
  gs_dispose(x), gs_dispose(y), gs_dispose(i), gs_dispose(plain), gs_dispose(v), gs_dispose(c);
}

/* A leaf used as the root accumulates ones into itself, as in PyTorch. */
static void test_backward_of_a_leaf(void) {
  gs_tensor x = leaf((double[]){5}, 1);
  gs_backward(x);
  double one[1] = {1};
  assert_grad(x, one, 1);
  gs_dispose(x);
}

static void test_explicit_gradient_and_shape_errors(void) {
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  gs_tensor y = gs_mul(x, x);
  EXPECT_ERROR(gs_backward(y), "a gradient can be implied only for a one-element output; got "
                               "shape [3]");
  gs_tensor wrong = gs_ones(GS_F64, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_backward_with(y, wrong, false),
               "expected a gradient of the output's shape [3], got [2]");
  double seed_v[3] = {1, 0.5, 0};
  gs_tensor seed = gs_from_data(GS_F64, (int64_t[]){3}, 1, seed_v);
  gs_backward_with(y, seed, false);
  double expected[3] = {2, 2, 0};
  assert_grad(x, expected, 3);
  gs_dispose(x), gs_dispose(y), gs_dispose(wrong), gs_dispose(seed);
}

/* Saved tensors keep their storage: disposing every handle but the root still backwards. */
static void test_disposed_handles_do_not_break_backward(void) {
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor a = gs_exp(x);
  gs_tensor b = gs_mul(a, x);
  gs_tensor s = gs_sum(b, NULL, 0, false);
  gs_dispose(a), gs_dispose(b); /* the graph still holds what it saved */
  gs_backward(s);
  double expected[2] = {exp(1.0) * 2, exp(2.0) * 3}; /* d(x e^x) = e^x (x + 1) */
  assert_grad(x, expected, 2);
  gs_dispose(s);
  /* A leaf disposed before backward simply gets nothing; the others still do. */
  gs_tensor u = leaf((double[]){1}, 1), w = leaf((double[]){2}, 1);
  gs_tensor uw = gs_mul(u, w);
  gs_dispose(u);
  gs_backward(uw);
  double one[1] = {1};
  assert_grad(w, one, 1);
  gs_dispose(uw), gs_dispose(w), gs_dispose(x);
}

/* A graph's nodes are freed with the last tensor that needs them: no leaks, no live tensors. */
static void test_graph_memory_is_released(void) {
  uint64_t live = gs_live_tensor_count();
  gs_memory_stats before, after;
  gs_memory_get_stats(&before);
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  gs_tensor y = x;
  for (int i = 0; i < 1000; i++) { /* a long chain: releasing it must not recurse deeply */
    gs_tensor next = gs_mul_scalar(y, 1.0001);
    if (i > 0)
      gs_dispose(y);
    y = next;
  }
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_dispose(y);
  gs_backward(s);
  g_assert_cmpfloat_with_epsilon(gs_get(gs_grad(x), (int64_t[]){0}), pow(1.0001, 1000), 1e-9);
  gs_dispose(s);
  gs_dispose(x);
  gs_memory_get_stats(&after);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  g_assert_cmpuint(after.live_storages, ==, before.live_storages);
}

/* A small network end to end: linear, tanh, linear, log_softmax, NLL (the mean of minus the
 * target classes' log-probabilities, picked with gather). Inputs: x [4, 3], W1 [3, 5],
 * b1 [5], W2 [5, 2], b2 [2]; targets fixed. */
static gs_tensor two_layer_nll(const gs_tensor *in, int n, void *user) {
  (void)n;
  gs_tensor targets = *(const gs_tensor *)user;
  gs_tensor h = gs_addmm(in[2], in[0], in[1], 1.0, 1.0);
  gs_tensor a = gs_tanh(h);
  gs_tensor logits = gs_addmm(in[4], a, in[3], 1.0, 1.0);
  gs_tensor logp = gs_log_softmax(logits, 1);
  gs_tensor picked = gs_gather(logp, 1, targets);
  gs_tensor mean = gs_mean(picked, NULL, 0, false);
  gs_tensor loss = gs_neg(mean);
  DISPOSE_ALL(h, a, logits, logp, picked, mean);
  return loss;
}

static void test_two_layer_network_gradcheck(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 77);
  int64_t shapes[5][2] = {{4, 3}, {3, 5}, {5, 0}, {5, 2}, {2, 0}};
  int ndims[5] = {2, 2, 1, 2, 1};
  gs_tensor in[5];
  for (int i = 0; i < 5; i++) {
    in[i] = gs_randn(GS_F64, shapes[i], ndims[i], &rng);
    gs_set_requires_grad(in[i], true);
  }
  int64_t target_values[4] = {0, 1, 1, 0};
  gs_tensor targets = gs_from_data(GS_I64, (int64_t[]){4, 1}, 2, target_values);
  gs_gradcheck_result r;
  bool ok = gs_gradcheck(two_layer_nll, &targets, in, 5, NULL, &r);
  if (!ok)
    g_printerr("%s\n", r.message);
  g_assert_true(ok);
  /* One plain backward gives every parameter a gradient of its own shape. */
  gs_tensor loss = two_layer_nll(in, 5, &targets);
  g_assert_cmpstr(gs_grad_fn_name(loss), ==, "NegBackward");
  gs_backward(loss);
  for (int i = 0; i < 5; i++) {
    int64_t gshape[GS_MAX_DIMS];
    g_assert_cmpint(gs_shape(gs_grad(in[i]), gshape), ==, ndims[i]);
    g_assert_cmpint(gshape[0], ==, shapes[i][0]);
  }
  gs_dispose(loss), gs_dispose(targets);
  for (int i = 0; i < 5; i++)
    gs_dispose(in[i]);
}

/* relu's gradient is PyTorch's threshold_backward on the output: g where the output is not
 * <= 0 (a NaN output passes g), exactly 0 elsewhere (also against an infinite g, and at 0). */
static void test_relu_gradient_at_special_values(void) {
  double xs[4] = {NAN, 2, -1, 0}, seeds[4] = {1, 1, INFINITY, 1};
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){4}, 1, xs);
  gs_set_requires_grad(x, true);
  gs_tensor y = gs_relu(x);
  gs_tensor g = gs_from_data(GS_F64, (int64_t[]){4}, 1, seeds);
  gs_backward_with(y, g, false);
  double expected[4] = {1, 1, 0, 0};
  test_assert_values(gs_grad(x), (int64_t[]){4}, 1, expected, 0, 0);
  gs_dispose(x), gs_dispose(y), gs_dispose(g);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/autograd/clone-then-write", test_clone_then_write);
  g_test_add_func("/autograd/set-grad", test_set_grad);
  g_test_add_func("/autograd/in-place-after-detach", test_in_place_after_detach);
  g_test_add_func("/autograd/in-place-through-view-is-caught", test_in_place_through_view_is_caught);
  g_test_add_func("/autograd/view-gradients-land-in-base", test_view_gradients_land_in_base);
  g_test_add_func("/autograd/in-place-through-views", test_in_place_through_views_under_autograd);
  g_test_add_func("/autograd/in-place-through-view-of-a-disposed-base",
                  test_in_place_through_view_of_a_disposed_base);
  g_test_add_func("/autograd/grad-accumulates-until-zeroed", test_grad_accumulates_until_zeroed);
  g_test_add_func("/autograd/retain-graph", test_retain_graph);
  g_test_add_func("/autograd/retain-grad-for-non-leaf", test_retain_grad_for_non_leaf);
  g_test_add_func("/autograd/no-grad-records-nothing", test_no_grad_records_nothing);
  g_test_add_func("/autograd/leaf-rules", test_leaf_rules);
  g_test_add_func("/autograd/backward-of-a-leaf", test_backward_of_a_leaf);
  g_test_add_func("/autograd/explicit-gradient-and-shape-errors",
                  test_explicit_gradient_and_shape_errors);
  g_test_add_func("/autograd/disposed-handles-do-not-break-backward",
                  test_disposed_handles_do_not_break_backward);
  g_test_add_func("/autograd/graph-memory-is-released", test_graph_memory_is_released);
  g_test_add_func("/autograd/two-layer-network-gradcheck", test_two_layer_network_gradcheck);
  g_test_add_func("/autograd/relu-gradient-at-special-values", test_relu_gradient_at_special_values);
  return g_test_run();
}
