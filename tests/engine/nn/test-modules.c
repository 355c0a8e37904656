/* test-modules.c: module trees (named_parameters order and dotted names, lookup by path,
 * children, train/eval propagation, ownership of the tree, errors), forward dispatch through a
 * module's type, Dropout as a module in each mode, and Sequential: forward and gradient equal to
 * the manual composition, and scope statistics that count only its output as left alive. */
#include "test-util.h"

/* A tree as a PyTorch user would build it:
 *   Net: scale, encoder (Encoder: layers (Sequential: Linear(4,3), ReLU, Linear(3,2))),
 *        fc2 (Linear(2,2)) */
typedef struct net {
  gs_module root, encoder, layers, fc2;
} net;

static net make_net(gs_rng *rng) {
  net n;
  n.root = gs_module_new("Net");
  gs_module_register_parameter(n.root, "scale",
                               gs_parameter_new(gs_ones(GS_F32, (int64_t[]){1}, 1), true));
  n.encoder = gs_module_new("Encoder");
  gs_module parts[3] = {gs_linear_new(4, 3, true, rng), gs_relu_new(),
                        gs_linear_new(3, 2, true, rng)};
  n.layers = gs_sequential_new(parts, 3);
  gs_module_register_child(n.encoder, "layers", n.layers);
  gs_module_register_child(n.root, "encoder", n.encoder);
  n.fc2 = gs_linear_new(2, 2, true, rng);
  gs_module_register_child(n.root, "fc2", n.fc2);
  return n;
}

static void test_named_parameters_of_a_nested_tree(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  net n = make_net(&rng);
  static const char *const want[] = {
      "scale",          "encoder.layers.0.weight", "encoder.layers.0.bias",
      "encoder.layers.2.weight", "encoder.layers.2.bias", "fc2.weight", "fc2.bias"};
  gs_tensor ps[8];
  const char *names[8];
  g_assert_cmpint(gs_module_named_parameters(n.root, NULL, NULL, 0), ==, 7);
  g_assert_cmpint(gs_module_named_parameters(n.root, ps, names, 8), ==, 7);
  for (int i = 0; i < 7; i++) {
    g_assert_cmpstr(names[i], ==, want[i]);
    g_assert_cmpuint(gs_module_parameter(n.root, want[i]).id, ==, ps[i].id);
    g_assert_true(gs_is_parameter(ps[i]));
  }
  /* Relative to a subtree, and with a short buffer. */
  g_assert_cmpint(gs_module_named_parameters(n.encoder, ps, names, 1), ==, 4);
  g_assert_cmpstr(names[0], ==, "layers.0.weight");
  const char *before = names[0];
  g_assert_cmpint(gs_module_named_parameters(n.layers, ps, names, 8), ==, 4);
  g_assert_cmpstr(names[3], ==, "2.bias");
  g_assert_cmpuint(ps[3].id, ==, gs_module_parameter(gs_module_child(n.root, "encoder.layers.2"),
                                                     "bias").id);

  /* Children, paths, parents, types. */
  g_assert_cmpint(gs_module_child_count(n.root), ==, 2);
  const char *cname;
  g_assert_cmpuint(gs_module_child_at(n.root, 1, &cname).id, ==, n.fc2.id);
  g_assert_cmpstr(cname, ==, "fc2");
  g_assert_cmpint(gs_module_child_count(n.layers), ==, 3);
  g_assert_cmpstr(gs_module_type_name(gs_module_child(n.root, "encoder.layers.1")), ==, "ReLU");
  g_assert_cmpstr(gs_module_type_name(n.layers), ==, "Sequential");
  g_assert_cmpuint(gs_module_parent(n.layers).id, ==, n.encoder.id);
  g_assert_cmpuint(gs_module_parent(n.root).id, ==, 0);
  g_assert_cmpuint(gs_module_child(n.root, "encoder.nope").id, ==, 0);
  g_assert_cmpuint(gs_module_child(n.root, "encoder.layers.3").id, ==, 0);
  g_assert_cmpuint(gs_module_parameter(n.root, "fc2.nope").id, ==, 0);
  g_assert_cmpuint(gs_module_parameter(n.root, "nope.weight").id, ==, 0);
  g_assert_cmpint(gs_module_parameter_count(n.root), ==, 1); /* its own only */

  /* Names handed out stay valid after the tree changes; a new list shows the change. */
  gs_module_register_child(n.root, "head", gs_linear_new(2, 1, false, &rng));
  g_assert_cmpstr(before, ==, "layers.0.weight");
  g_assert_cmpint(gs_module_named_parameters(n.encoder, NULL, NULL, 0), ==, 4); /* rebuilt */
  g_assert_cmpint(gs_module_named_parameters(n.root, ps, names, 8), ==, 8);
  g_assert_cmpstr(names[7], ==, "head.weight");

  /* Disposing the root disposes the whole tree: every parameter, every child handle. */
  gs_module child = n.fc2;
  gs_tensor w = gs_module_parameter(n.root, "encoder.layers.0.weight");
  gs_module_dispose(n.root);
  g_assert_false(gs_is_alive(w));
  EXPECT_ERROR(gs_module_type_name(child), "stale: the module was disposed");
}

/* A stale module handle names the disposal that took it and when, however often its slot was
 * reused since (up to 128 modules): a child names its root's disposal, and a model rebuilt
 * 100 times in the same slot still lets the first one's handle say what became of it. */
static void test_stale_module_keeps_its_story_after_100_reuses(void) {
  gs_module root = gs_module_new("Net"), head = gs_module_new("Head");
  gs_module_register_child(root, "head", head);
  gs_module_dispose(root);
  uint64_t disposed_at = gs_event_counter(); /* the root goes last, after its children */
  char by[64];
  g_snprintf(by, sizeof by, "by the disposal of module Net #%u at event",
             (unsigned)(root.id & 0xffffffffu));
  EXPECT_ERROR(gs_module_type_name(head), by);
  for (int i = 0; i < 100; i++) {
    gs_module m = gs_module_new("Net");
    g_assert_cmpuint(m.id & 0xffffffffu, ==, root.id & 0xffffffffu);
    gs_module_dispose(m);
  }
  char expected[200];
  g_snprintf(expected, sizeof expected,
             "module #%u.%u is stale: the module was disposed %s %llu (its slot has held 100 "
             "modules since)",
             (unsigned)(root.id & 0xffffffffu), (unsigned)(root.id >> 32), by,
             (unsigned long long)disposed_at);
  EXPECT_ERROR(gs_module_forward(root, GS_NO_TENSOR), expected);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
}

static void test_tree_errors(void) {
  gs_module a = gs_module_new("A"), b = gs_module_new("B"), c = gs_module_new("C");
  gs_module_register_child(a, "b", b);
  gs_module_register_child(b, "c", c);
  EXPECT_ERROR(gs_module_register_child(c, "a", a), "cannot be a child of C #");
  EXPECT_ERROR(gs_module_register_child(c, "a", a), "is one of its ancestors");
  EXPECT_ERROR(gs_module_register_child(a, "self", a), "is the same module");
  gs_module d = gs_module_new("D");
  EXPECT_ERROR(gs_module_register_child(a, "x.y", d), "child name \"x.y\" contains '.'");
  EXPECT_ERROR(gs_module_register_child(a, "", d), "expected a child name, got \"\"");
  EXPECT_ERROR(gs_module_register_child(d, "c", c), "is held only by its parent B #");
  EXPECT_ERROR(gs_module_dispose(c), "is a child of B #");
  gs_tensor p = gs_parameter_new(gs_zeros(GS_F32, (int64_t[]){2}, 1), true);
  EXPECT_ERROR(gs_module_register_parameter(a, "b", p), "already has a child named \"b\"");
  EXPECT_ERROR(gs_module_register_parameter(a, "w.x", p), "contains '.'");
  gs_module_register_parameter(d, "w", p);
  gs_module e = gs_module_new("E");
  EXPECT_ERROR(gs_module_register_child(d, "w", e), "already has a parameter");
  EXPECT_ERROR(gs_module_forward(a, p), "has no forward function (it is a container");
  EXPECT_ERROR(gs_module_child_at(a, 1, NULL), "index 1 is out of range for a module with 1 children");
  EXPECT_ERROR(gs_module_named_parameters(a, NULL, NULL, -1), "expected max >= 0, got -1");
  EXPECT_ERROR(gs_sequential_new((gs_module[]){c}, 1),
               "module 0 (C) is listed 1 time but the caller holds it 0 times");
  EXPECT_ERROR(gs_sequential_new((gs_module[]){d, d}, 2),
               "module 0 (D) is listed 2 times but the caller holds it 1 time");
  EXPECT_ERROR(gs_sequential_append(a, d), "sequential_append: expected a Sequential module, got an A module");
  EXPECT_ERROR(gs_layer_norm_forward(a, p), "layer_norm_forward: expected a LayerNorm module, got an A module");

  /* Replacing a child disposes the old one (and its parameters). */
  gs_module_register_child(a, "d", d);
  gs_module d2 = gs_module_new("D2");
  gs_module_register_child(a, "d", d2);
  g_assert_false(gs_is_alive(p));
  g_assert_cmpuint(gs_module_child(a, "d").id, ==, d2.id);
  g_assert_cmpint(gs_module_child_count(a), ==, 2);
  gs_module_dispose(a);
  gs_module_dispose(e); /* the failed registration left it to the caller */
}

static void test_train_eval_and_dropout_module(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module drop = gs_dropout_new(0.5, &rng);
  gs_module seq = gs_sequential_new((gs_module[]){gs_linear_new(8, 8, true, &rng), drop}, 2);
  gs_module root = gs_module_new("Root");
  gs_module_register_child(root, "body", seq);
  g_assert_true(gs_module_is_training(root));
  g_assert_true(gs_module_is_training(drop)); /* PyTorch's default */

  const int64_t n = 4000;
  gs_tensor x = gs_uniform(GS_F32, &n, 1, 1.0, 2.0, &rng);
  /* Training: about half zeroed, survivors doubled. */
  gs_tensor y = gs_module_forward(drop, x);
  double *vx = test_values(x), *vy = test_values(y);
  int zeros = 0;
  for (int64_t i = 0; i < n; i++) {
    if (vy[i] == 0.0)
      zeros++;
    else
      g_assert_cmpfloat(fabs(vy[i] - 2.0 * vx[i]), <, 1e-6);
  }
  g_assert_cmpint(zeros, >, 1800);
  g_assert_cmpint(zeros, <, 2200);
  g_free(vy);
  gs_dispose(y);

  /* eval() on the root reaches every module of the tree; Dropout is then the identity. */
  gs_module_train(root, false);
  g_assert_false(gs_module_is_training(root));
  g_assert_false(gs_module_is_training(seq));
  g_assert_false(gs_module_is_training(drop));
  g_assert_false(gs_module_is_training(gs_module_child(root, "body.0")));
  y = gs_module_forward(drop, x);
  vy = test_values(y);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat(vy[i], ==, vx[i]);
  g_free(vy);
  gs_dispose(y);
  /* train() on a subtree changes that subtree only. */
  gs_module_train(seq, true);
  g_assert_true(gs_module_is_training(drop));
  g_assert_false(gs_module_is_training(root));
  g_free(vx);
  EXPECT_ERROR(gs_dropout_new(1.0, NULL), "dropout_new: expected p in [0, 1), got 1");
  gs_dispose(x);
  gs_module_dispose(root);
}

/* The same chain by hand: Linear, Tanh, Linear, Sigmoid. */
static gs_tensor manual_chain(gs_module l1, gs_module l2, gs_tensor x) {
  gs_tensor h = gs_linear_forward(l1, x);
  gs_tensor a = gs_tanh(h);
  gs_tensor o = gs_linear_forward(l2, a);
  gs_tensor y = gs_sigmoid(o);
  gs_dispose(h), gs_dispose(a), gs_dispose(o);
  return y;
}

static void test_sequential_equals_manual_composition(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_module l1 = gs_linear_new(5, 4, true, &rng), l2 = gs_linear_new(4, 3, true, &rng);
  gs_module seq = gs_sequential_new((gs_module[]){l1, gs_tanh_new(), l2, gs_sigmoid_new()}, 4);
  gs_tensor x = gs_uniform(GS_F32, (int64_t[]){6, 5}, 2, -1.0, 1.0, &rng);
  gs_set_requires_grad(x, true);

  gs_tensor params[4];
  g_assert_cmpint(gs_module_named_parameters(seq, params, NULL, 4), ==, 4);
  double *want_grads[5];
  gs_tensor y_manual = manual_chain(l1, l2, x);
  gs_tensor s = gs_sum(y_manual, NULL, 0, false);
  gs_backward(s);
  for (int i = 0; i < 4; i++)
    want_grads[i] = test_values(gs_grad(params[i]));
  want_grads[4] = test_values(gs_grad(x));
  double *want_y = test_values(y_manual);
  gs_dispose(s);
  for (int i = 0; i < 4; i++)
    gs_zero_grad(params[i]);
  gs_zero_grad(x);

  gs_tensor y = gs_module_forward(seq, x);
  test_assert_values(y, (int64_t[]){6, 3}, 2, want_y, 0, 0);
  s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  for (int i = 0; i < 4; i++) {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(params[i], shape);
    test_assert_values(gs_grad(params[i]), shape, nd, want_grads[i], 0, 0);
  }
  test_assert_values(gs_grad(x), (int64_t[]){6, 5}, 2, want_grads[4], 0, 0);
  for (int i = 0; i < 5; i++)
    g_free(want_grads[i]);
  g_free(want_y);

  /* Every layer type through gs_module_forward equals its own function. */
  gs_module ln = gs_layer_norm_new(5, 1e-5), gelu = gs_gelu_new();
  gs_tensor a = gs_module_forward(ln, x), b = gs_layer_norm_forward(ln, x);
  double *vb = test_values(b);
  test_assert_values(a, (int64_t[]){6, 5}, 2, vb, 0, 0);
  g_free(vb);
  gs_tensor c = gs_module_forward(gelu, x), d = gs_gelu(x);
  double *vd = test_values(d);
  test_assert_values(c, (int64_t[]){6, 5}, 2, vd, 0, 0);
  g_free(vd);
  gs_module emb = gs_embedding_new(7, 2, &rng);
  gs_tensor idx = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){6, 0, 6});
  gs_tensor e = gs_module_forward(emb, idx), f = gs_embedding_forward(emb, idx);
  double *vf = test_values(f);
  test_assert_values(e, (int64_t[]){3, 2}, 2, vf, 0, 0);
  g_free(vf);
  g_assert_cmpstr(gs_module_type_name(ln), ==, "LayerNorm");
  g_assert_cmpstr(gs_module_type_name(emb), ==, "Embedding");

  /* An empty Sequential is the identity (a new handle). */
  gs_module empty = gs_sequential_new(NULL, 0);
  gs_tensor g = gs_module_forward(empty, idx);
  test_assert_values(g, (int64_t[]){3}, 1, (double[]){6, 0, 6}, 0, 0);

  DISPOSE_ALL(y_manual, y, s, x, a, b, c, d, idx, e, f, g);
  gs_module_dispose(seq), gs_module_dispose(ln), gs_module_dispose(gelu);
  gs_module_dispose(emb), gs_module_dispose(empty);
}

/* A Sequential of k modules makes k results and disposes k - 1 of them: in a scope and outside,
 * the statistics count exactly one object left alive, as for a single op. */
static void test_sequential_ownership_counts(void) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, 9);
  gs_module seq = gs_sequential_new(
      (gs_module[]){gs_linear_new(3, 3, true, &rng), gs_relu_new(),
                    gs_linear_new(3, 2, true, &rng)}, 3);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 3}, 2);

  gs_scope_stats before = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  gs_scope step = gs_scope_begin("step");
  gs_tensor y = gs_module_forward(seq, x);
  gs_scope_info info = gs_scope_get_info(step);
  g_assert_cmpuint(info.alive, ==, 1);
  g_assert_cmpuint(gs_owner_scope(y).id, ==, step.id);
  gs_scope_stats mid = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpint(mid.live - before.live, ==, 1);
  g_assert_cmpuint(mid.created_in_scope - before.created_in_scope, ==, info.created);
  g_assert_cmpuint(mid.disposed_in_scope - before.disposed_in_scope, ==, info.created - 1);
  g_assert_cmpuint(mid.created_outside_scope, ==, before.created_outside_scope);
  /* Backward through the chain in the scope, then the scope takes the output with it. */
  gs_tensor s = gs_sum(y, NULL, 0, false);
  gs_backward(s);
  gs_scope_end(step);
  g_assert_false(gs_is_alive(y));
  gs_scope_stats after = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpint(after.live, ==, before.live);
  gs_tensor w = gs_module_parameter(seq, "0.weight");
  g_assert_true(gs_is_alive(w) && gs_grad(w).id); /* parameters outlive the step */

  /* Outside any scope: the caller owns the one result. */
  before = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  y = gs_module_forward(seq, x);
  after = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpint(after.live - before.live, ==, 1);
  g_assert_cmpuint(after.created_outside_scope - before.created_outside_scope, ==,
                   after.disposed_outside_scope - before.disposed_outside_scope + 1);
  g_assert_cmpuint(gs_owner_scope(y).id, ==, 0);
  gs_dispose(y), gs_dispose(x);
  gs_module_dispose(seq);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* A user-defined module type: y = factor * x, its factor in the module's data. */
static gs_tensor scale_forward(gs_module m, gs_tensor x);
static const gs_module_type scale_type = {"Scale", scale_forward, g_free};

static gs_tensor scale_forward(gs_module m, gs_tensor x) {
  const double *factor = gs_module_data(m, &scale_type);
  return factor ? gs_mul_scalar(x, *factor) : GS_NO_TENSOR;
}

static void test_user_defined_type(void) {
  double *factor = g_new(double, 1);
  *factor = 3.0;
  gs_module scale = gs_module_new_typed(&scale_type, factor);
  g_assert_cmpstr(gs_module_type_name(scale), ==, "Scale");
  g_assert_true(gs_module_is_a(scale, &scale_type));
  gs_module seq = gs_sequential_new((gs_module[]){scale, gs_relu_new()}, 2);
  g_assert_false(gs_module_is_a(seq, &scale_type));
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, -2, 0.5});
  gs_tensor y = gs_module_forward(seq, x);
  test_assert_values(y, (int64_t[]){3}, 1, (double[]){3, 0, 1.5}, 0, 0);
  EXPECT_ERROR(gs_module_data(seq, &scale_type), "module_data: expected a Scale module, got a Sequential module");
  EXPECT_ERROR(gs_module_new_typed(NULL, NULL), "expected a module type with a name, got NULL");
  gs_dispose(x), gs_dispose(y);
  gs_module_dispose(seq); /* frees the factor with g_free: ASan would see a leak otherwise */
  EXPECT_ERROR(gs_module_forward(scale, x), "stale: the module was disposed");
}

/* gs_module_remove_parameter (torch's ParameterDict.pop, del module.weight): the entry goes
 * from the named parameters and the parameter is the caller's, still usable; a computed
 * tensor (gs_module_set_computed, weight_norm's weight) stands in for the removed weight in
 * the Linear's own forward; a recycled module slot starts with no computed entries. */
static void test_remove_parameter_and_computed_weight(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  for (int round = 0; round < 3; round++) {
    gs_module lin = gs_linear_new(3, 2, true, &rng);
    bool callers = false;
    gs_tensor w = gs_module_remove_parameter(lin, "weight", &callers);
    g_assert_true(callers);
    g_assert_cmpint(gs_module_parameter_count(lin), ==, 1);
    const char *name = NULL;
    gs_module_parameter_at(lin, 0, &name);
    g_assert_cmpstr(name, ==, "bias");
    gs_tensor twice = gs_mul_scalar(w, 2.0); /* a weight computed from a parameter */
    gs_module_set_computed(lin, "weight", twice);
    g_assert_true(gs_module_parameter(lin, "weight").id == twice.id);
    gs_tensor x = gs_ones(GS_F32, (int64_t[]){4, 3}, 2);
    gs_tensor y = gs_module_forward(lin, x);
    gs_tensor twice_t = gs_t(twice);
    gs_tensor expected = gs_addmm(gs_module_parameter(lin, "bias"), x, twice_t, 1.0, 1.0);
    double *want = test_values(expected);
    test_assert_values(y, (int64_t[]){4, 2}, 2, want, 0, 0);
    g_free(want);
    EXPECT_ERROR(gs_module_set_computed(lin, "bias", twice),
                 "already has a parameter named \"bias\"");
    EXPECT_ERROR(gs_module_remove_parameter(lin, "weight", NULL),
                 "has no parameter named \"weight\"");
    gs_module_set_computed(lin, "weight", GS_NO_TENSOR);
    g_assert_true(gs_module_parameter(lin, "weight").id == 0);
    DISPOSE_ALL(x, y, expected, twice_t, twice);
    gs_module_dispose(lin);
    g_assert_true(gs_is_alive(w)); /* the caller's: it outlives the module */
    gs_dispose(w);
  }
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/modules/named-parameters-of-a-nested-tree",
                        test_named_parameters_of_a_nested_tree);
  test_add_leak_checked("/modules/tree-errors", test_tree_errors);
  g_test_add_func("/modules/stale-module-keeps-its-story-after-100-reuses",
                  test_stale_module_keeps_its_story_after_100_reuses);
  test_add_leak_checked("/modules/train-eval-and-dropout-module",
                        test_train_eval_and_dropout_module);
  test_add_leak_checked("/modules/sequential-equals-manual-composition",
                        test_sequential_equals_manual_composition);
  g_test_add_func("/modules/sequential-ownership-counts", test_sequential_ownership_counts);
  test_add_leak_checked("/modules/user-defined-type", test_user_defined_type);
  test_add_leak_checked("/modules/remove-parameter-and-computed-weight",
                        test_remove_parameter_and_computed_weight);
  return g_test_run();
}
