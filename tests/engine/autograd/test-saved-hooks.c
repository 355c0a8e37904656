/* test-saved-hooks.c: saved-tensor hooks (gs_saved_tensor_hooks_push, PyTorch's
 * saved_tensors_hooks): which saves are packed and by which pair, the order of packs and
 * unpacks, gradients unchanged by hooks that keep a copy, nesting, freeing of packed values
 * and of the pair, a wrong unpack result, the version check through hooks, a failing pack,
 * gs_node_saved, disabling, and a fused node that keeps values of its forward (cross entropy)
 * computing from the tensor the hook gives back. */
#include "test-util.h"

#include <glib/gstdio.h>

/* A log of hook calls: 'p' for a pack, 'u' for an unpack, 'f' for a free, each with the
 * pair's tag and the saved tensor's element count. */
typedef struct hook_log {
  char calls[1024][16];
  int n;
} hook_log;

/* What one pair keeps: its tag, where it logs, and the handles its packs kept. */
typedef struct pair {
  char tag;
  hook_log *log;
  bool copy;        /* keep a clone instead of the handle given */
  bool wrong_shape; /* unpack gives a tensor of another shape */
  bool wrong_dtype; /* unpack gives another dtype */
  bool fail_pack;
  int user_data_freed;
} pair;

typedef struct packed {
  gs_tensor kept;
  int64_t numel;
} packed;

static void log_call(pair *p, char what, int64_t numel) {
  g_assert_cmpint(p->log->n, <, 1024);
  snprintf(p->log->calls[p->log->n++], 16, "%c%c%lld", what, p->tag, (long long)numel);
}

static bool pack(gs_tensor t, void **out, void *user_data) {
  pair *p = user_data;
  log_call(p, 'p', gs_numel(t));
  if (p->fail_pack) {
    gs_dispose(t);
    return false;
  }
  packed *k = g_new0(packed, 1);
  k->numel = gs_numel(t);
  k->kept = p->copy ? gs_clone(t) : t;
  if (p->copy)
    gs_dispose(t);
  *out = k;
  return true;
}

static gs_tensor unpack(void *kept, void *user_data) {
  pair *p = user_data;
  packed *k = kept;
  log_call(p, 'u', k->numel);
  if (p->wrong_shape)
    return gs_zeros(GS_F64, (int64_t[]){k->numel + 1}, 1);
  if (p->wrong_dtype)
    return gs_to_dtype(k->kept, GS_F32);
  return gs_alias(k->kept);
}

static void free_packed(void *kept, void *user_data) {
  packed *k = kept;
  log_call(user_data, 'f', k->numel);
  gs_dispose(k->kept);
  g_free(k);
}

static void free_pair(void *user_data) { ((pair *)user_data)->user_data_freed++; }

static void push(pair *p) {
  gs_saved_tensor_hooks h = {pack, unpack, free_packed, p, free_pair};
  g_assert_cmpint(gs_saved_tensor_hooks_push(&h), ==, 0);
}

static gs_tensor leaf(const double *values, int64_t n) {
  gs_tensor t = gs_from_data(GS_F64, &n, 1, values);
  gs_set_requires_grad(t, true);
  return t;
}

/* "pA3 pA3 ..." of the log, for one comparison. */
static char *joined(const hook_log *log) {
  GString *s = g_string_new(NULL);
  for (int i = 0; i < log->n; i++)
    g_string_append_printf(s, "%s%s", i ? " " : "", log->calls[i]);
  return g_string_free(s, false);
}

static void assert_log(hook_log *log, const char *expected) {
  g_autofree char *got = joined(log);
  g_assert_cmpstr(got, ==, expected);
  log->n = 0;
}

/* sum(exp(x) * w) with x of 3 and w of 3: the gradients, with or without a pair pushed. */
static void exp_mul_grads(pair *p, double *gx, double *gw, hook_log *log, bool expect_calls) {
  gs_tensor x = leaf((double[]){0.5, -1, 2}, 3), w = leaf((double[]){3, 4, -2}, 3);
  if (p)
    push(p);
  gs_tensor e = gs_exp(x), m = gs_mul(e, w), s = gs_sum(m, NULL, 0, false);
  if (p)
    gs_saved_tensor_hooks_pop();
  /* ExpBackward saves its result; MulBackward both factors; SumBackward nothing. */
  if (expect_calls)
    assert_log(log, "pA3 pA3 pA3");
  gs_backward(s);
  if (expect_calls) /* Mul runs first (its two slots in order), then Exp; then freed */
    assert_log(log, "uA3 uA3 fA3 fA3 uA3 fA3");
  double *a = test_values(gs_grad(x)), *b = test_values(gs_grad(w));
  memcpy(gx, a, 3 * sizeof *gx);
  memcpy(gw, b, 3 * sizeof *gw);
  g_free(a), g_free(b);
  DISPOSE_ALL(x, w, e, m, s);
}

/* Hooks that keep the tensor (or a copy) give the gradients of no hooks; with none pushed
 * nothing is called. */
static void test_order_and_same_grads(void) {
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log}, c = {.tag = 'A', .log = &log, .copy = true};
  double gx0[3], gw0[3], gx1[3], gw1[3], gx2[3], gw2[3];
  exp_mul_grads(NULL, gx0, gw0, &log, false);
  g_assert_cmpint(log.n, ==, 0);
  exp_mul_grads(&a, gx1, gw1, &log, true);
  exp_mul_grads(&c, gx2, gw2, &log, true);
  for (int i = 0; i < 3; i++) {
    g_assert_cmpfloat(gx0[i], ==, gx1[i]);
    g_assert_cmpfloat(gw0[i], ==, gw1[i]);
    g_assert_cmpfloat(gx0[i], ==, gx2[i]);
    g_assert_cmpfloat(gw0[i], ==, gw2[i]);
  }
  g_assert_cmpint(a.user_data_freed, ==, 1); /* popped, and its packed values all freed */
  g_assert_cmpint(c.user_data_freed, ==, 1);
}

/* The function gradchecked below: exp(a) * b * a under a pair that keeps copies (the node
 * holds none of the tensors), so the analytic gradient comes through unpack. */
static gs_tensor hooked_fn(const gs_tensor *in, int n, void *user_data) {
  (void)n;
  push(user_data);
  gs_tensor e = gs_exp(in[0]), eb = gs_mul(e, in[1]), out = gs_mul(eb, in[0]);
  gs_saved_tensor_hooks_pop();
  DISPOSE_ALL(e, eb);
  return out;
}

/* Float64 finite differences agree with a backward that reads every saved tensor back
 * through unpack. */
static void test_gradcheck_through_hooks(void) {
  hook_log log = {0};
  pair c = {.tag = 'C', .log = &log, .copy = true};
  gs_tensor a = leaf((double[]){0.3, -0.7, 1.1}, 3), b = leaf((double[]){2, -1, 0.5}, 3);
  gs_gradcheck_result result;
  bool ok = gs_gradcheck(hooked_fn, &c, (gs_tensor[]){a, b}, 2, NULL, &result);
  if (!ok)
    g_test_message("%s", result.message);
  g_assert_true(ok);
  g_assert_cmpint(log.n, >, 0);
  g_autofree char *calls = joined(&log);
  g_assert_nonnull(strstr(calls, "uC3")); /* the backward unpacked */
  DISPOSE_ALL(a, b);
}

/* The innermost pair packs; each slot is unpacked by the pair that packed it, after both were
 * popped; saves with no pair pushed are not packed. */
static void test_nesting(void) {
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log}, b = {.tag = 'B', .log = &log};
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor y = gs_reshape(x, (int64_t[]){1, 2}, 2); /* saves nothing */
  push(&a);
  gs_tensor e1 = gs_exp(x); /* A */
  push(&b);
  g_assert_cmpint(gs_saved_tensor_hooks_depth(), ==, 2);
  gs_tensor e2 = gs_exp(y); /* B */
  gs_saved_tensor_hooks_pop();
  gs_tensor e3 = gs_exp(e1); /* A */
  gs_saved_tensor_hooks_pop();
  gs_tensor e4 = gs_exp(e2); /* none */
  g_assert_cmpint(gs_saved_tensor_hooks_depth(), ==, 0);
  assert_log(&log, "pA2 pB2 pA2");
  g_assert_cmpint(a.user_data_freed + b.user_data_freed, ==, 0); /* slots still need them */
  gs_tensor s3 = gs_sum(e3, NULL, 0, false), s4 = gs_sum(e4, NULL, 0, false);
  gs_tensor s = gs_add(s3, s4);
  gs_backward(s);
  /* e3's node, then e1's; e4's (unhooked), then e2's: each pair's own unpack */
  g_autofree char *got = joined(&log);
  g_assert_nonnull(strstr(got, "uA2 fA2 uA2 fA2"));
  g_assert_nonnull(strstr(got, "uB2 fB2"));
  g_assert_cmpint(log.n, ==, 6);
  g_assert_cmpint(a.user_data_freed, ==, 1);
  g_assert_cmpint(b.user_data_freed, ==, 1);
  EXPECT_ERROR(gs_saved_tensor_hooks_pop(), "no saved-tensor hooks are pushed");
  EXPECT_ERROR(gs_saved_tensor_hooks_push(NULL), "expected a pair with both");
  DISPOSE_ALL(x, y, e1, e2, e3, e4, s3, s4, s);
}

/* An unpack giving another shape or dtype stops the backward with both named. */
static void test_wrong_unpack(void) {
  hook_log log = {0};
  pair shape = {.tag = 'S', .log = &log, .wrong_shape = true},
       dtype = {.tag = 'D', .log = &log, .wrong_dtype = true};
  gs_tensor x = leaf((double[]){1, 2, 3}, 3);
  push(&shape);
  gs_tensor e = gs_exp(x), s = gs_sum(e, NULL, 0, false);
  gs_saved_tensor_hooks_pop();
  EXPECT_ERROR(gs_backward(s), "must give back a tensor like the one packed, [3] f64; got [4] f64");
  g_assert_true(gs_tensor_is_none(gs_grad(x)));
  push(&dtype);
  gs_tensor e2 = gs_exp(x), s2 = gs_sum(e2, NULL, 0, false);
  gs_saved_tensor_hooks_pop();
  EXPECT_ERROR(gs_backward(s2), "[3] f64; got [3] f32");
  DISPOSE_ALL(x, e, s, e2, s2);
}

/* A pack that keeps the saved tensor itself still catches an in-place write to it when
 * unpack gives that storage back; a pack that keeps a copy does not care. */
static void test_version_check_through_hooks(void) {
  hook_log log = {0};
  pair same = {.tag = 'A', .log = &log}, copy = {.tag = 'C', .log = &log, .copy = true};
  gs_tensor x = leaf((double[]){1, 2}, 2);
  gs_tensor b = gs_mul_scalar(x, 1.0);
  push(&same);
  gs_tensor e = gs_exp(b);
  gs_saved_tensor_hooks_pop();
  push(&copy);
  gs_tensor e2 = gs_exp(b);
  gs_saved_tensor_hooks_pop();
  gs_no_grad_begin();
  gs_add_scalar_(e, 1.0); /* e is ExpBackward's saved result */
  gs_add_scalar_(e2, 1.0);
  gs_no_grad_end();
  gs_tensor s = gs_sum(e, NULL, 0, false);
  EXPECT_ERROR(gs_backward(s),
               "modified by an inplace operation: tensor [2] f64 saved by ExpBackward");
  gs_tensor s2 = gs_sum(e2, NULL, 0, false);
  gs_backward(s2); /* the copy was taken before the write */
  double *g = test_values(gs_grad(x));
  g_assert_cmpfloat_with_epsilon(g[0], exp(1.0), 1e-12);
  g_free(g);
  DISPOSE_ALL(x, b, e, e2, s, s2);
}

/* A failing pack is reported when the node is recorded and again by a backward through it. */
static void test_failing_pack(void) {
  hook_log log = {0};
  pair bad = {.tag = 'F', .log = &log, .fail_pack = true};
  gs_tensor x = leaf((double[]){1, 2}, 2), e = GS_NO_TENSOR;
  push(&bad);
  EXPECT_ERROR(e = gs_exp(x), "the saved-tensor pack hook failed");
  gs_saved_tensor_hooks_pop();
  g_assert_cmpint(bad.user_data_freed, ==, 1); /* nothing packed holds it */
  gs_tensor s = gs_sum(e, NULL, 0, false);
  EXPECT_ERROR(gs_backward(s), "its saved-tensor pack hook failed");
  DISPOSE_ALL(x, e, s);
}

/* gs_node_saved unpacks a hooked slot (and reads a plain one); after a backward freed them it
 * is an error, as is a slot out of range. */
static void test_node_saved(void) {
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log};
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 5}, 2);
  push(&a);
  gs_tensor m = gs_mul(x, w);
  gs_saved_tensor_hooks_pop();
  gs_node n = gs_grad_fn(m);
  g_assert_cmpint(gs_node_n_saved(n), ==, 2);
  log.n = 0;
  gs_tensor w_saved = gs_node_saved(n, 1);
  assert_log(&log, "uA2");
  test_assert_values(w_saved, (int64_t[]){2}, 1, (double[]){3, 5}, 0, 0);
  EXPECT_ERROR(gs_node_saved(n, 2), "saved 2 tensors, got slot 2");
  gs_tensor s = gs_sum(m, NULL, 0, false);
  gs_backward(s);
  log.n = 0;
  EXPECT_ERROR(gs_node_saved(n, 0), "a backward freed them");
  DISPOSE_ALL(x, w, m, w_saved, s);
}

/* disable_saved_tensors_hooks: pushing is an error with the caller's message until enabled. */
static void test_disable(void) {
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log};
  g_assert_cmpint(gs_saved_tensor_hooks_disable("not with this feature"), ==, 0);
  gs_saved_tensor_hooks h = {pack, unpack, free_packed, &a, free_pair};
  EXPECT_ERROR(gs_saved_tensor_hooks_push(&h), "not with this feature");
  g_assert_cmpint(gs_saved_tensor_hooks_disable("inner reason"), ==, 1);
  EXPECT_ERROR(gs_saved_tensor_hooks_push(&h), "inner reason");
  gs_saved_tensor_hooks_enable();
  EXPECT_ERROR(gs_saved_tensor_hooks_push(&h), "not with this feature");
  g_assert_cmpint(gs_saved_tensor_hooks_depth(), ==, 0);
  gs_saved_tensor_hooks_enable();
  EXPECT_ERROR(gs_saved_tensor_hooks_enable(), "not disabled");
  push(&a);
  gs_saved_tensor_hooks_pop();
  g_assert_cmpint(a.user_data_freed, ==, 1);
}

/* The log shows each pack and unpack, after the node's creation, which lists every tensor the
 * node saved (its hooks run once the op has saved them all). */
static void test_log_shows_packs_and_unpacks(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-saved-hooks-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log};
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = leaf((double[]){1, 2}, 2), w = leaf((double[]){3, 5}, 2);
  push(&a);
  gs_tensor m = gs_mul(x, w);
  gs_saved_tensor_hooks_pop();
  uint64_t node = gs_node_number(gs_grad_fn(m));
  gs_tensor s = gs_sum(m, NULL, 0, false);
  gs_backward(s);
  gs_trace_close();
  assert_log(&log, "pA2 pA2 uA2 uA2 fA2 fA2");

  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  int packs = 0, unpacks = 0;
  bool created = false;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind == GS_TRACE_NODE_CREATE && e.node == node) {
      created = true;
      g_assert_cmpuint(e.n_saved, ==, 2);
      g_assert_cmpuint(e.saved[0], ==, x.id);
      g_assert_cmpuint(e.saved[1], ==, w.id);
    } else if (e.kind == GS_TRACE_SAVED_PACK) {
      g_assert_true(created); /* after the node it packs for */
      g_assert_cmpuint(e.node, ==, node);
      g_assert_cmpuint(e.tensor, ==, packs == 0 ? x.id : w.id);
      g_assert_cmpuint(e.storage, !=, 0);
      packs++;
    } else if (e.kind == GS_TRACE_SAVED_UNPACK) {
      g_assert_cmpint(packs, ==, 2);
      g_assert_cmpuint(e.node, ==, node);
      g_assert_cmpuint(e.tensor, !=, 0);
      unpacks++;
    }
  }
  gs_trace_reader_free(r);
  g_assert_cmpint(packs, ==, 2);
  g_assert_cmpint(unpacks, ==, 2);
  DISPOSE_ALL(x, w, m, s);
  g_unlink(path);
  g_rmdir(dir);
}

/* A write through a view saves into the op's node, which the log never shows: the packs name
 * the CopySlices node the log lists those saved tensors under (the differential oracle found
 * packs of a node the log never made). And the tensor a pack hook is given is outside the
 * view's history: a clone of it does not require grad, so what the hook keeps does not lead
 * back to the node that keeps it (that cycle leaked both). */
static void test_write_through_view(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-saved-hooks-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log, .copy = true};
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor x = leaf((double[]){1, 2, 3, 4}, 4), w = leaf((double[]){3, 5}, 2);
  gs_tensor base = gs_mul_scalar(x, 1.0);
  gs_tensor view = gs_narrow(base, 0, 1, 2);
  push(&a);
  gs_mul_(view, w);
  gs_saved_tensor_hooks_pop();
  gs_node copy_slices = gs_grad_fn(base);
  g_assert_cmpstr(gs_node_name(copy_slices), ==, "CopySlices");
  uint64_t node = gs_node_number(copy_slices);
  gs_tensor s = gs_sum(base, NULL, 0, false);
  gs_backward(s);
  gs_trace_close();
  assert_log(&log, "pA2 pA2 uA2 uA2 fA2 fA2");
  /* x's gradient: 1 outside the view, w inside it */
  gs_tensor g = gs_grad(x);
  const double want[] = {1, 3, 5, 1};
  for (int64_t i = 0; i < 4; i++)
    g_assert_cmpfloat(gs_get(g, &i), ==, want[i]);

  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  int packs = 0;
  bool listed = false;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind == GS_TRACE_NODE_CREATE && e.node == node)
      listed = e.n_saved == 2;
    else if (e.kind == GS_TRACE_SAVED_PACK) {
      g_assert_true(listed);
      g_assert_cmpuint(e.node, ==, node);
      packs++;
    }
  }
  gs_trace_reader_free(r);
  g_assert_cmpint(packs, ==, 2);
  DISPOSE_ALL(x, w, base, view, s);
  g_unlink(path);
  g_rmdir(dir);
}

/* Without a backward, only the disposals free the graph: nothing may keep it alive. */
static void test_write_through_view_no_cycle(void) {
  hook_log log = {0};
  pair a = {.tag = 'A', .log = &log, .copy = true};
  gs_tensor x = leaf((double[]){1, 2, 3, 4}, 4), w = leaf((double[]){3, 5}, 2);
  gs_tensor base = gs_mul_scalar(x, 1.0);
  gs_tensor view = gs_narrow(base, 0, 1, 2);
  push(&a);
  gs_mul_(view, w);
  gs_saved_tensor_hooks_pop();
  DISPOSE_ALL(x, w, base, view);
  assert_log(&log, "pA2 pA2 fA2 fA2");
}

/* A pair whose unpack hands the backward twice the saved floating values. */
static bool pack_keep(gs_tensor t, void **out, void *user_data) {
  (void)user_data;
  gs_tensor *k = g_new(gs_tensor, 1);
  *k = t;
  *out = k;
  return true;
}
static gs_tensor unpack_doubled(void *kept, void *user_data) {
  (void)user_data;
  gs_tensor t = *(gs_tensor *)kept;
  return gs_dtype_is_floating(gs_dtype_of(t)) ? gs_mul_scalar(t, 2.0) : gs_alias(t);
}
static void free_kept(void *kept, void *user_data) {
  (void)user_data;
  gs_dispose(*(gs_tensor *)kept);
  g_free(kept);
}

/* The fused cross entropy keeps its forward's exps for the backward (ops/cross-entropy.c):
 * when a hook hands the backward other logits, the gradient is computed from those, exactly
 * as the same loss's at those logits. */
static void test_cross_entropy_backward_reads_unpacked_logits(void) {
  const double xv[12] = {0.5, -1, 2, 0.25, 3, 0.1, -0.7, 1.5, -2, 0.8, 0.3, 1};
  const int64_t tv[3] = {0, 2, 3};
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3, 4}, 2, xv);
  gs_tensor t = gs_from_data(GS_I64, (int64_t[]){3}, 1, tv);
  gs_tensor x2 = gs_mul_scalar(x, 2.0);
  gs_set_requires_grad(x, true);
  gs_set_requires_grad(x2, true);
  gs_tensor want_loss = gs_cross_entropy(x2, t, GS_REDUCTION_MEAN, 0.2);
  gs_backward(want_loss);

  gs_saved_tensor_hooks h = {pack_keep, unpack_doubled, free_kept, NULL, NULL};
  g_assert_cmpint(gs_saved_tensor_hooks_push(&h), ==, 0);
  gs_tensor loss = gs_cross_entropy(x, t, GS_REDUCTION_MEAN, 0.2);
  gs_saved_tensor_hooks_pop();
  gs_backward(loss);
  double want[12], got[12];
  gs_copy_to(gs_grad(x2), want, sizeof want);
  gs_copy_to(gs_grad(x), got, sizeof got);
  g_assert_cmpmem(got, sizeof got, want, sizeof want);
  gs_tensor handles[] = {x, t, x2, want_loss, loss};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/saved-hooks/order-and-same-grads", test_order_and_same_grads);
  test_add_leak_checked("/saved-hooks/nesting", test_nesting);
  test_add_leak_checked("/saved-hooks/gradcheck", test_gradcheck_through_hooks);
  test_add_leak_checked("/saved-hooks/wrong-unpack", test_wrong_unpack);
  test_add_leak_checked("/saved-hooks/version-check", test_version_check_through_hooks);
  test_add_leak_checked("/saved-hooks/failing-pack", test_failing_pack);
  test_add_leak_checked("/saved-hooks/write-through-view", test_write_through_view);
  test_add_leak_checked("/saved-hooks/write-through-view-no-cycle",
                        test_write_through_view_no_cycle);
  test_add_leak_checked("/saved-hooks/node-saved", test_node_saved);
  test_add_leak_checked("/saved-hooks/disable", test_disable);
  test_add_leak_checked("/saved-hooks/log", test_log_shows_packs_and_unpacks);
  test_add_leak_checked("/saved-hooks/cross-entropy-reads-unpacked-logits",
                        test_cross_entropy_backward_reads_unpacked_logits);
  return g_test_run();
}
