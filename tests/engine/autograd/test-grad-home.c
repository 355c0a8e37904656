/* test-grad-home.c: gradient homes (gs_backward_hooks.grad_home), where a matrix product's
 * formula writes a leaf's gradient directly (DDP's buckets with gradient_as_bucket_view): the
 * weight of a linear layer (read as W^T) and of x @ W get their gradient in the home offered,
 * as a view of it, with the bits the plain backward computes; a home is claimed once a pass,
 * so a weight used twice still gets the sum; a leaf that has a gradient already, or a formula
 * recording its graph, takes no home; and a home is never asked for once the hook is gone. */
#include <math.h>

#include "test-util.h"

/* The hook's side: one home for one leaf, given once per pass. */
typedef struct home_offer {
  gs_tensor leaf, home;
  bool claimed;
  int claims, peeks; /* calls with and without claim */
} home_offer;

static void offer_begin(gs_tensor root, void *user) {
  (void)root;
  ((home_offer *)user)->claimed = false;
}

static gs_tensor offer_home(gs_tensor leaf, bool claim, void *user) {
  home_offer *o = user;
  if (leaf.id != o->leaf.id)
    return GS_NO_TENSOR;
  if (!claim) {
    o->peeks++;
    return o->claimed ? o->home : GS_NO_TENSOR;
  }
  o->claims++;
  if (o->claimed)
    return GS_NO_TENSOR;
  o->claimed = true;
  return o->home;
}

static int add_offer(home_offer *o) {
  return gs_backward_hooks_add(&(gs_backward_hooks){.begin = offer_begin, .grad_home = offer_home},
                               o);
}

static gs_tensor param(int64_t rows, int64_t cols, uint64_t seed) {
  gs_rng rng;
  gs_rng_seed(&rng, seed);
  gs_tensor t = gs_normal(GS_F64, (int64_t[]){rows, cols}, 2, 0, 1, &rng);
  gs_set_requires_grad(t, true);
  return t;
}

/* sum(tanh(f(x, w, b))) backward; f picks the product. */
typedef enum product_kind { LINEAR, MATMUL_T, MATMUL_PLAIN, SHARED } product_kind;

static void run(product_kind kind, gs_tensor x, gs_tensor w, gs_tensor b, bool create_graph) {
  gs_scope s = gs_scope_begin("run");
  gs_tensor y;
  if (kind == LINEAR)
    y = gs_linear(x, w, b);
  else if (kind == MATMUL_T)
    y = gs_add(gs_matmul(x, gs_t(w)), b);
  else if (kind == MATMUL_PLAIN)
    y = gs_matmul(x, w);
  else /* w twice: (x @ w^T) @ w^T, square w */
    y = gs_matmul(gs_tanh(gs_matmul(x, gs_t(w))), gs_t(w));
  gs_tensor loss = gs_sum(gs_tanh(y), NULL, 0, false);
  gs_backward_many_with(&loss, NULL, 1, &(gs_backward_options){.create_graph = create_graph});
  gs_scope_end(s);
}

/* The largest |a - factor * b| over two f64 tensors of one shape (0: the same bits). */
static double max_diff(gs_tensor a, gs_tensor b, double factor) {
  g_assert_cmpint(gs_numel(a), ==, gs_numel(b));
  const double *x = gs_data(a), *y = gs_data(b);
  double worst = 0;
  for (int64_t i = 0; i < gs_numel(a); i++)
    worst = fmax(worst, fabs(x[i] - factor * y[i]));
  return worst;
}

/* The gradient of w with a home offered against the plain backward's, bit for bit; whether it
 * lies in the home. */
static void check_kind(product_kind kind, int64_t in, int64_t out, bool expect_home) {
  gs_tensor x = param(5, in, 1), b = param(1, out, 3);
  gs_set_requires_grad(x, false);
  bool plain = kind == MATMUL_PLAIN;
  gs_tensor w = plain ? param(in, out, 2) : param(out, in, 2);
  gs_tensor bias = gs_reshape(b, (int64_t[]){out}, 1);
  run(kind, x, w, bias, false);
  gs_tensor want = gs_clone(gs_grad(w));
  gs_zero_grad(w);
  gs_zero_grad(b);

  int64_t shape[2];
  gs_shape(w, shape);
  home_offer o = {.leaf = w, .home = gs_full(GS_F64, shape, 2, 7.0)};
  int hook = add_offer(&o);
  g_assert_cmpint(hook, >, 0);
  run(kind, x, w, bias, false);
  gs_tensor got = gs_grad(w);
  g_assert_true(got.id != 0);
  g_assert_cmpint(o.claims, ==, kind == SHARED ? 2 : 1);
  if (expect_home) {
    g_assert_true(gs_data(got) == gs_data(o.home));
    g_assert_true(gs_view_base(got).id != 0);
  }
  g_assert_cmpfloat(max_diff(got, want, 1.0), ==, 0.0); /* the same gemm: the same bits */

  /* Without zero_grad the next backward adds into the gradient: no home is claimed. */
  int claims = o.claims;
  run(kind, x, w, bias, false);
  g_assert_cmpint(o.claims, ==, claims);
  g_assert_cmpfloat(max_diff(gs_grad(w), want, 2.0), <=, 1e-12);

  /* Recording the graph (create_graph): the formula does not write in place. */
  gs_zero_grad(w);
  claims = o.claims;
  run(kind, x, w, bias, true);
  g_assert_cmpint(o.claims, ==, claims);
  g_assert_true(gs_data(gs_grad(w)) != gs_data(o.home));

  /* Once the hook is removed, nobody is asked. */
  gs_backward_hooks_remove(hook);
  gs_zero_grad(w);
  claims = o.claims;
  run(kind, x, w, bias, false);
  g_assert_cmpint(o.claims, ==, claims);
  gs_zero_grad(w);
  gs_zero_grad(b);
  DISPOSE_ALL(x, w, b, bias, want, o.home);
}

static void test_linear_weight(void) { check_kind(LINEAR, 4, 3, true); }
static void test_matmul_transposed_weight(void) { check_kind(MATMUL_T, 4, 3, true); }
static void test_matmul_plain_weight(void) { check_kind(MATMUL_PLAIN, 4, 3, true); }
/* The first product's gradient is written in the home, the second is not (claimed once); the
 * engine sums the two as usual (where the sum lands is its business). */
static void test_shared_weight(void) { check_kind(SHARED, 4, 4, false); }

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/grad-home/linear-weight", test_linear_weight);
  test_add_leak_checked("/grad-home/matmul-transposed-weight", test_matmul_transposed_weight);
  test_add_leak_checked("/grad-home/matmul-plain-weight", test_matmul_plain_weight);
  test_add_leak_checked("/grad-home/shared-weight", test_shared_weight);
  return g_test_run();
}
