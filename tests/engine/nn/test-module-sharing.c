/* test-module-sharing.c: modules shared as PyTorch shares them: one module in two containers
 * or twice in one (named_parameters lists each parameter once, parameter_paths every path),
 * who disposes what (a module lives while a holder or a parent slot has it; a scope still
 * disposes the tensors it owns), Sequential's slices (the same modules, under their names),
 * del seq[i] and insert with renumbering, tied parameters, ReLU(inplace=True) as a module, the
 * stale-handle errors for what truly went, and the module_child events the log gets. */
#include "test-util.h"

#include <glib/gstdio.h>

static double first_value(gs_tensor t) {
  g_autofree double *v = test_values(t);
  return v[0];
}

/* A Linear in two Sequentials: both run the same weights; disposing one container leaves the
 * Linear to the other; disposing the last makes its handles stale, naming that disposal. */
static void test_one_module_in_two_containers(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  gs_module lin = gs_linear_new(3, 2, true, &rng);
  gs_tensor w = gs_module_parameter(lin, "weight");
  gs_module_retain(lin); /* one hold for each container */
  gs_module a = gs_sequential_new((gs_module[]){lin}, 1);
  gs_module b = gs_sequential_new((gs_module[]){lin, gs_tanh_new()}, 2);
  g_assert_cmpint(gs_module_parent_count(lin), ==, 2);
  g_assert_cmpint(gs_module_holder_count(lin), ==, 0);
  g_assert_cmpuint(gs_module_parent(lin).id, ==, a.id); /* the first place */
  g_assert_cmpuint(gs_module_parameter(a, "0.weight").id, ==, w.id);
  g_assert_cmpuint(gs_module_parameter(b, "0.weight").id, ==, w.id);

  gs_tensor x = gs_ones(GS_F32, (int64_t[]){1, 3}, 2);
  gs_tensor ya = gs_module_forward(a, x), yb = gs_module_forward(b, x);
  gs_tensor tanh_ya = gs_tanh(ya);
  g_autofree double *want = test_values(tanh_ya);
  test_assert_values(yb, (int64_t[]){1, 2}, 2, want, 1e-6, 0);
  EXPECT_ERROR(gs_module_dispose(lin), "is a child of Sequential #");

  gs_module_dispose(a);
  g_assert_true(gs_is_alive(w));
  g_assert_cmpint(gs_module_parent_count(lin), ==, 1);
  g_assert_cmpuint(gs_module_parent(lin).id, ==, b.id);
  gs_tensor yb2 = gs_module_forward(b, x);
  test_assert_values(yb2, (int64_t[]){1, 2}, 2, want, 1e-6, 0);
  gs_module_dispose(b);
  g_assert_false(gs_is_alive(w));
  char by[96];
  g_snprintf(by, sizeof by, "the disposal of module Sequential #%u",
             (unsigned)(b.id & 0xffffffffu));
  EXPECT_ERROR(gs_module_type_name(lin), by);
  EXPECT_ERROR(gs_module_forward(a, x), "stale");
  DISPOSE_ALL(x, ya, yb, tanh_ya, yb2);
}

/* nn.Sequential(lin, relu, lin): the output is lin(relu(lin(x))); the parameters are listed
 * once ("0.weight", "0.bias"), every path in parameter_paths (also "2.weight", "2.bias"); the
 * gradient of the shared weight sums both uses. */
static void test_module_used_twice_in_one_sequential(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 2);
  gs_module lin = gs_linear_new(2, 2, true, &rng);
  gs_module seq = gs_sequential_new((gs_module[]){gs_module_retain(lin), gs_relu_new(), lin}, 3);
  g_assert_cmpint(gs_module_parent_count(lin), ==, 2);
  gs_tensor ps[8];
  const char *names[8];
  g_assert_cmpint(gs_module_named_parameters(seq, ps, names, 8), ==, 2);
  g_assert_cmpstr(names[0], ==, "0.weight");
  g_assert_cmpstr(names[1], ==, "0.bias");
  g_assert_cmpint(gs_module_parameter_paths(seq, ps, names, 8), ==, 4);
  g_assert_cmpstr(names[2], ==, "2.weight");
  g_assert_cmpstr(names[3], ==, "2.bias");
  g_assert_cmpuint(ps[2].id, ==, ps[0].id);

  gs_tensor x = test_make(GS_F32, (int64_t[]){4, 2}, 2, LAYOUT_CONTIGUOUS, -1, 1, &rng);
  gs_tensor y = gs_module_forward(seq, x);
  gs_tensor h = gs_linear_forward(lin, x), r = gs_relu(h), manual = gs_linear_forward(lin, r);
  g_autofree double *want = test_values(manual);
  test_assert_values(y, (int64_t[]){4, 2}, 2, want, 1e-6, 0);
  gs_tensor loss = gs_sum(y, NULL, 0, false);
  gs_backward(loss);
  gs_tensor w = gs_module_parameter(seq, "0.weight");
  g_autofree double *g_seq = test_values(gs_grad(w));
  gs_zero_grad(w);
  gs_tensor loss2 = gs_sum(manual, NULL, 0, false);
  gs_backward(loss2);
  test_assert_values(gs_grad(w), (int64_t[]){2, 2}, 2, g_seq, 1e-6, 0);
  DISPOSE_ALL(x, y, h, r, manual, loss, loss2);
  gs_module_dispose(seq); /* both slots go: so does lin */
  g_assert_false(gs_is_alive(w));
}

/* seq[1:] and seq[:-1] hold the SAME modules under their names in seq; disposing seq leaves
 * them to the slices; a caller's own hold keeps a child past every parent. */
static void test_slices_share_and_outlive(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module l1 = gs_linear_new(3, 4, true, &rng), l2 = gs_linear_new(4, 2, true, &rng);
  gs_module relu = gs_relu_new();
  gs_module seq = gs_sequential_new((gs_module[]){l1, relu, l2}, 3);
  gs_module tail = gs_sequential_slice(seq, 1, INT64_MAX, 1);
  gs_module backbone = gs_sequential_slice(seq, 0, -1, 1);
  gs_module reversed = gs_sequential_slice(seq, -1, -INT64_MAX, -1);
  g_assert_cmpint(gs_module_child_count(tail), ==, 2);
  const char *name = NULL;
  g_assert_cmpuint(gs_module_child_at(tail, 0, &name).id, ==, relu.id);
  g_assert_cmpstr(name, ==, "1"); /* torch keeps the keys */
  g_assert_cmpuint(gs_module_child(tail, "2").id, ==, l2.id);
  g_assert_cmpint(gs_module_child_count(backbone), ==, 2);
  g_assert_cmpuint(gs_module_child(backbone, "0").id, ==, l1.id);
  g_assert_cmpuint(gs_module_child_at(reversed, 2, NULL).id, ==, l1.id);
  g_assert_cmpint(gs_module_parent_count(l1), ==, 3);
  gs_tensor ps[4];
  const char *names[4];
  g_assert_cmpint(gs_module_named_parameters(tail, ps, names, 4), ==, 2);
  g_assert_cmpstr(names[0], ==, "2.weight");

  gs_module_retain(relu); /* the caller's own hold */
  gs_module_dispose(seq);
  gs_module_dispose(reversed);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 3}, 2);
  gs_tensor feats = gs_module_forward(backbone, x); /* still works: backbone holds l1, relu */
  gs_tensor out = gs_module_forward(tail, feats);
  g_assert_cmpint(gs_size(out, 1), ==, 2);
  gs_module_dispose(backbone);
  EXPECT_ERROR(gs_module_type_name(l1), "stale");
  gs_module_dispose(tail);
  EXPECT_ERROR(gs_module_type_name(l2), "stale");
  g_assert_cmpstr(gs_module_type_name(relu), ==, "ReLU"); /* the caller still holds it */
  g_assert_cmpint(gs_module_parent_count(relu), ==, 0);
  gs_module_dispose(relu);
  EXPECT_ERROR(gs_module_dispose(relu), "stale");
  EXPECT_ERROR(gs_sequential_slice(tail, 0, 1, 1), "stale");
  DISPOSE_ALL(x, feats, out);
}

/* del seq[0], insert, renumbering; a removed module no one holds is disposed, naming why. */
static void test_remove_insert_renumber(void) {
  gs_module a = gs_module_new("A"), b = gs_relu_new(), c = gs_tanh_new(), d = gs_sigmoid_new();
  gs_module seq = gs_sequential_new((gs_module[]){a, b, c}, 3);
  gs_sequential_remove(seq, 0);
  EXPECT_ERROR(gs_module_type_name(a), "its removal from module Sequential #");
  const char *n0 = NULL, *n1 = NULL;
  g_assert_cmpuint(gs_module_child_at(seq, 0, &n0).id, ==, b.id);
  g_assert_cmpuint(gs_module_child_at(seq, 1, &n1).id, ==, c.id);
  g_assert_cmpstr(n0, ==, "0");
  g_assert_cmpstr(n1, ==, "1");
  gs_sequential_insert(seq, 1, d);
  g_assert_cmpuint(gs_module_child(seq, "1").id, ==, d.id);
  g_assert_cmpuint(gs_module_child(seq, "2").id, ==, c.id);
  g_assert_cmpuint(gs_module_child_at(seq, 1, NULL).id, ==, d.id);
  gs_tensor x = gs_full(GS_F32, (int64_t[]){1}, 1, -2.0);
  gs_tensor y = gs_module_forward(seq, x); /* tanh(sigmoid(relu(-2))) = tanh(0.5) */
  g_assert_cmpfloat_with_epsilon(first_value(y), tanh(0.5), 1e-6);
  gs_sequential_remove(seq, -1);
  g_assert_cmpint(gs_module_child_count(seq), ==, 2);
  EXPECT_ERROR(gs_module_type_name(c), "stale");
  EXPECT_ERROR(gs_sequential_remove(seq, 2), "index 2 is out of range for a Sequential of 2");
  EXPECT_ERROR(gs_sequential_insert(seq, 4, gs_module_new("E")), "index 4 is out of range");
  EXPECT_ERROR(gs_module_remove_child(seq, "9"), "has no child named \"9\"");
  EXPECT_ERROR(gs_module_rename_child(seq, "0", "1"), "already has a child named \"1\"");
  DISPOSE_ALL(x, y);
  gs_module_dispose(seq);
  EXPECT_ERROR(gs_module_type_name(d), "stale");
}

/* A module shared by two parents still cannot hold an ancestor: the check walks down. */
static void test_no_cycle_through_a_shared_module(void) {
  gs_module a = gs_module_new("A"), b = gs_module_new("B"), c = gs_module_new("C");
  gs_module_register_child(a, "b", gs_module_retain(b));
  gs_module_register_child(c, "b", b);
  gs_module_retain(a);
  EXPECT_ERROR(gs_module_register_child(b, "a", a), "is one of its ancestors");
  EXPECT_ERROR(gs_module_register_child(b, "self", gs_module_retain(b)), "is the same module");
  gs_module_dispose(b); /* the failed registration's hold */
  gs_module_dispose(a); /* the extra hold */
  gs_module_dispose(a);
  g_assert_cmpstr(gs_module_type_name(b), ==, "B"); /* c holds it */
  gs_module_dispose(c);
  EXPECT_ERROR(gs_module_type_name(b), "stale");
}

/* Tied weights (decoder.weight = encoder.weight): a parameter in two modules; the module that
 * goes first hands it to the other; it is disposed with the last. */
static void test_tied_parameter(void) {
  gs_module enc = gs_module_new("Enc"), dec = gs_module_new("Dec");
  gs_tensor w = gs_parameter_new(gs_ones(GS_F32, (int64_t[]){2}, 1), true);
  gs_module_register_parameter(enc, "weight", w);
  gs_module_register_parameter(dec, "weight", w);
  gs_module_register_parameter(dec, "again", w);
  gs_tensor ps[4];
  g_assert_cmpint(gs_module_named_parameters(dec, ps, NULL, 4), ==, 1);
  g_assert_cmpint(gs_module_parameter_paths(dec, ps, NULL, 4), ==, 2);
  gs_module_dispose(enc);
  g_assert_true(gs_is_alive(w));
  EXPECT_ERROR(gs_dispose(w), "owned by a module");
  /* Replacing one of dec's two entries keeps w: the other still names it. */
  gs_module_register_parameter(dec, "again",
                               gs_parameter_new(gs_zeros(GS_F32, (int64_t[]){1}, 1), true));
  g_assert_true(gs_is_alive(w));
  gs_module_dispose(dec);
  g_assert_false(gs_is_alive(w));
}

/* A child created inside a scope and shared outlives the scope, since modules are not scope
 * objects; the tensors the scope owns still go with it. */
static void test_scope_still_disposes_what_it_owns(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 4);
  gs_module outer = gs_module_new("Outer");
  gs_module lin;
  gs_tensor t;
  gs_scope s = gs_scope_begin("build");
  lin = gs_linear_new(2, 2, true, &rng);
  t = gs_ones(GS_F32, (int64_t[]){2}, 1);
  gs_module_register_child(outer, "a", gs_module_retain(lin));
  gs_module_register_child(outer, "b", lin);
  gs_scope_end(s);
  g_assert_false(gs_is_alive(t));
  g_assert_true(gs_is_alive(gs_module_parameter(outer, "b.weight")));
  gs_module_remove_child(outer, "a");
  g_assert_true(gs_is_alive(gs_module_parameter(outer, "b.weight")));
  gs_module_dispose(outer);
  EXPECT_ERROR(gs_module_type_name(lin), "stale");
}

/* ReLU(inplace=True) writes into its input and returns that same handle; in a Sequential its
 * gradients equal the out-of-place ReLU's. */
static void test_relu_inplace_module(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_module relu = gs_relu_inplace_new();
  gs_tensor x = test_make(GS_F64, (int64_t[]){5}, 1, LAYOUT_CONTIGUOUS, -1, 1, &rng);
  g_autofree double *before = test_values(x);
  int64_t version = gs_version(x);
  gs_tensor y = gs_module_forward(relu, x);
  g_assert_cmpuint(y.id, ==, x.id);
  g_assert_cmpint(gs_version(x), >, version);
  for (int i = 0; i < 5; i++)
    before[i] = before[i] > 0 ? before[i] : 0;
  test_assert_values(x, (int64_t[]){5}, 1, before, 0, 0);
  gs_module_dispose(relu);

  gs_module lin = gs_linear_new(3, 3, true, &rng);
  gs_module_to_dtype(lin, GS_F64);
  gs_module_retain(lin);
  gs_module in_place = gs_sequential_new((gs_module[]){lin, gs_relu_inplace_new()}, 2);
  gs_module plain = gs_sequential_new((gs_module[]){lin, gs_relu_new()}, 2);
  gs_tensor w = gs_module_parameter(lin, "weight");
  gs_tensor in = test_make(GS_F64, (int64_t[]){4, 3}, 2, LAYOUT_CONTIGUOUS, -1, 1, &rng);
  gs_tensor a = gs_module_forward(in_place, in), la = gs_sum(a, NULL, 0, false);
  gs_backward(la);
  g_autofree double *ga = test_values(gs_grad(w));
  gs_zero_grad(w);
  gs_tensor b = gs_module_forward(plain, in), lb = gs_sum(b, NULL, 0, false);
  gs_backward(lb);
  g_autofree double *vb = test_values(b);
  test_assert_values(a, (int64_t[]){4, 3}, 2, vb, 1e-12, 0);
  test_assert_values(gs_grad(w), (int64_t[]){3, 3}, 2, ga, 1e-12, 0);
  DISPOSE_ALL(x, in, a, la, b, lb);
  gs_module_dispose(in_place);
  gs_module_dispose(plain);
}

/* The log says what happened to slots: a second parent's module_child, the slot a removal or
 * a rename emptied (child 0), and the slot of a shared child outliving its parent. */
static void test_sharing_in_the_log(void) {
  g_autofree char *dir = g_dir_make_tmp("module-sharing-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "log.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_module lin = gs_relu_new(), other = gs_tanh_new();
  gs_module seq = gs_sequential_new((gs_module[]){gs_module_retain(lin), other}, 2);
  gs_module head = gs_sequential_slice(seq, 0, 1, 1); /* lin's second parent */
  gs_sequential_remove(seq, 0);                       /* slot "0" emptied, "1" renamed to "0" */
  gs_module_dispose(seq);                             /* other goes; lin stays with head */
  gs_module_dispose(lin);                             /* the caller's hold: head still has it */
  gs_module_dispose(head);
  gs_trace_close();

  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  GString *seen = g_string_new(NULL);
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind != GS_TRACE_MODULE_CHILD)
      continue;
    const char *who = e.child == lin.id     ? "lin"
                      : e.child == other.id ? "other"
                      : e.child             ? "?"
                                            : "-";
    const char *where = e.module == seq.id ? "seq" : e.module == head.id ? "head" : "?";
    g_string_append_printf(seen, "%s %s=%s;", where, gs_trace_reader_string(r, e.name), who);
  }
  gs_trace_reader_free(r);
  g_assert_cmpstr(seen->str, ==, "seq 0=lin;seq 1=other;head 0=lin;seq 0=-;seq 0=other;seq 1=-;");
  g_string_free(seen, TRUE);
  g_unlink(path);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/module-sharing/one-module-in-two-containers",
                        test_one_module_in_two_containers);
  test_add_leak_checked("/module-sharing/module-used-twice-in-one-sequential",
                        test_module_used_twice_in_one_sequential);
  test_add_leak_checked("/module-sharing/slices-share-and-outlive", test_slices_share_and_outlive);
  test_add_leak_checked("/module-sharing/remove-insert-renumber", test_remove_insert_renumber);
  test_add_leak_checked("/module-sharing/no-cycle-through-a-shared-module",
                        test_no_cycle_through_a_shared_module);
  test_add_leak_checked("/module-sharing/tied-parameter", test_tied_parameter);
  test_add_leak_checked("/module-sharing/scope-still-disposes-what-it-owns",
                        test_scope_still_disposes_what_it_owns);
  test_add_leak_checked("/module-sharing/relu-inplace-module", test_relu_inplace_module);
  test_add_leak_checked("/module-sharing/sharing-in-the-log", test_sharing_in_the_log);
  return g_test_run();
}
