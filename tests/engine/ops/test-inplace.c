/* test-inplace.c: in-place ops write through views, bump the storage version once per call,
 * materialise copy-on-write bytes first, read aliased operands as they were before the write,
 * and change nothing (not even the version) when they refuse a call. */
#include "test-util.h"

typedef struct {
  const char *name;
  void (*op)(gs_tensor, gs_tensor);
  double (*ref)(double, double);
} inplace_case;

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }

static const inplace_case cases[] = {
    {"add_", gs_add_, r_add},
    {"sub_", gs_sub_, r_sub},
    {"mul_", gs_mul_, r_mul},
    {"div_", gs_div_, r_div},
};

static void test_binary_inplace_on_every_layout(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 21);
  uint64_t live = gs_live_tensor_count();
  int64_t shape[2] = {5, 6};
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    for (int d = GS_F32; d <= GS_I64; d++) {
      if (d == GS_I64 && cases[k].ref == r_div)
        continue;
      /* The destination may be any layout but broadcast; the operand any layout. */
      for (int lt = 0; lt < LAYOUT_BROADCAST; lt++) {
        for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
          test_set_context("%s %s, t %s, b %s", cases[k].name, gs_dtype_name((gs_dtype)d),
                           test_layout_name(lt), test_layout_name(lb));
          gs_tensor t = test_make((gs_dtype)d, shape, 2, lt, -5, 5, &rng);
          gs_tensor b = test_make((gs_dtype)d, (int64_t[]){6}, 1, LAYOUT_CONTIGUOUS, 1, 4, &rng);
          gs_tensor b2 = test_make((gs_dtype)d, shape, 2, lb, 1, 4, &rng);
          double *vt = test_values(t), *vb = test_values(b), *vb2 = test_values(b2);
          double expected[30];
          for (int i = 0; i < 30; i++) {
            double once = cases[k].ref(vt[i], vb[i % 6]);
            if (d == GS_F32)
              once = (float)once;
            expected[i] = cases[k].ref(once, vb2[i]);
            if (d == GS_F32)
              expected[i] = (float)expected[i];
          }
          int64_t v0 = gs_version(t);
          cases[k].op(t, b);  /* broadcast operand */
          cases[k].op(t, b2); /* operand in any layout */
          g_assert_cmpint(gs_version(t), ==, v0 + 2);
          double tol = d == GS_F32 ? 1e-6 : d == GS_F64 ? 1e-14 : 0;
          test_assert_values(t, shape, 2, expected, tol, tol);
          g_free(vt), g_free(vb), g_free(vb2);
          gs_dispose(t), gs_dispose(b), gs_dispose(b2);
        }
      }
    }
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_scalar_fill_zero_clamp(void) {
  gs_tensor base = gs_arange(0, 12, 1, GS_F32);
  gs_tensor m = gs_view(base, (int64_t[]){3, 4}, 2);
  gs_tensor col = gs_select(m, 1, 2); /* 2, 6, 10 */
  gs_add_scalar_(col, 0.5);
  gs_mul_scalar_(col, 2.0);
  double e1[3] = {5, 13, 21};
  test_assert_values(col, (int64_t[]){3}, 1, e1, 0, 0);
  g_assert_cmpint(gs_version(base), ==, 2);
  gs_clamp_(m, 1, 9);
  double e2[12] = {1, 1, 5, 3, 4, 5, 9, 7, 8, 9, 9, 9};
  test_assert_values(m, (int64_t[]){3, 4}, 2, e2, 0, 0);
  gs_tensor row = gs_select(m, 0, 1);
  gs_fill_(row, -2);
  gs_zero_(col);
  double e3[12] = {1, 1, 0, 3, -2, -2, 0, -2, 8, 9, 0, 9};
  test_assert_values(m, (int64_t[]){3, 4}, 2, e3, 0, 0);
  g_assert_cmpint(gs_version(m), ==, 5);

  gs_tensor i = gs_arange(0, 4, 1, GS_I64);
  gs_add_scalar_(i, 3);
  gs_clamp_(i, 3.5, 5.9); /* integer bounds round inward: [4, 5] */
  double e4[4] = {4, 4, 5, 5};
  test_assert_values(i, (int64_t[]){4}, 1, e4, 0, 0);
  EXPECT_ERROR(gs_add_scalar_(i, 0.5), "add_scalar_: result type f32 cannot be written in place "
                                       "into a tensor of dtype i64 (scalar 0.5 has a fraction)");
  DISPOSE_ALL(base, m, col, row, i);
}

static void test_copy_converts_and_broadcasts(void) {
  gs_tensor dst = gs_zeros(GS_I64, (int64_t[]){2, 3}, 2);
  double src_v[3] = {1.9, -2.9, 3.0};
  gs_tensor src = gs_from_data(GS_F64, (int64_t[]){3}, 1, src_v);
  gs_copy_(dst, src); /* copy_ converts any dtype, truncating like a cast */
  double expected[6] = {1, -2, 3, 1, -2, 3};
  test_assert_values(dst, (int64_t[]){2, 3}, 2, expected, 0, 0);
  gs_tensor wrong = gs_zeros(GS_F64, (int64_t[]){4}, 1);
  EXPECT_ERROR(gs_copy_(dst, wrong), "copy_: operand of shape [4] cannot be broadcast to the "
                                     "destination's shape [2, 3]");
  gs_dispose(dst), gs_dispose(src), gs_dispose(wrong);
}

static void test_write_materialises_copy_on_write(void) {
  gs_tensor a = gs_ones(GS_F64, (int64_t[]){4}, 1);
  gs_tensor c = gs_clone(a);
  gs_tensor cv = gs_slice(c, 0, 0, 4, 2);
  gs_add_scalar_(cv, 1.0); /* writes through a view of the clone */
  double ea[4] = {1, 1, 1, 1}, ec[4] = {2, 1, 2, 1};
  test_assert_values(a, (int64_t[]){4}, 1, ea, 0, 0);
  test_assert_values(c, (int64_t[]){4}, 1, ec, 0, 0);
  g_assert_false(gs_is_copy_on_write(a));
  g_assert_cmpint(gs_version(a), ==, 0);
  g_assert_cmpint(gs_version(c), ==, 1);
  gs_dispose(a), gs_dispose(c), gs_dispose(cv);
}

static void test_aliased_operand_reads_old_values(void) {
  /* t += t.T must read t as it was before the call, as if the operand were a copy. */
  gs_tensor flat = gs_arange(0, 9, 1, GS_F64);
  gs_tensor t = gs_view(flat, (int64_t[]){3, 3}, 2);
  gs_tensor tt = gs_t(t);
  gs_add_(t, tt);
  double expected[9] = {0, 4, 8, 4, 8, 12, 8, 12, 16};
  test_assert_values(t, (int64_t[]){3, 3}, 2, expected, 0, 0);
  /* Overlapping shifted view: x[1:] += x[:-1] must use the old x. */
  gs_tensor x = gs_arange(1, 6, 1, GS_F32);
  gs_tensor hi = gs_slice(x, 0, 1, 5, 1), lo = gs_slice(x, 0, 0, 4, 1);
  gs_add_(hi, lo);
  double ex[5] = {1, 3, 5, 7, 9};
  test_assert_values(x, (int64_t[]){5}, 1, ex, 0, 0);
  gs_tensor handles[] = {flat, t, tt, x, hi, lo};
  for (size_t k = 0; k < G_N_ELEMENTS(handles); k++)
    gs_dispose(handles[k]);
}

static void test_refused_writes_change_nothing(void) {
  gs_tensor i = gs_zeros(GS_I64, (int64_t[]){3}, 1);
  gs_tensor f = gs_ones(GS_F32, (int64_t[]){3}, 1);
  gs_tensor b = gs_zeros(GS_BOOL, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_add_(i, f), "add_: result type f32 cannot be written in place into a "
                              "tensor of dtype i64 (it would lose the fraction)");
  EXPECT_ERROR(gs_div_(i, i), "div_: cannot div in place into a tensor of dtype i64 (true "
                              "division gives a floating result)");
  EXPECT_ERROR(gs_sub_(b, b), "sub_: cannot sub in place into a tensor of dtype bool");
  gs_tensor row = gs_ones(GS_F32, (int64_t[]){1}, 1);
  gs_tensor e = gs_expand(row, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_mul_(e, f), "mul_: cannot write in place into an expanded tensor: dim 0 "
                              "(size 3) has stride 0");
  gs_tensor small = gs_ones(GS_F32, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_add_(f, small), "add_: operand of shape [2] cannot be broadcast");
  g_assert_cmpint(gs_version(i), ==, 0);
  g_assert_cmpint(gs_version(f), ==, 0);
  g_assert_cmpint(gs_version(row), ==, 0);
  double ones[3] = {1, 1, 1};
  test_assert_values(f, (int64_t[]){3}, 1, ones, 0, 0);
  /* Integer into float is fine (a wider category). */
  gs_add_(f, i);
  g_assert_cmpint(gs_version(f), ==, 1);
  gs_tensor handles[] = {i, f, b, row, e, small};
  for (size_t k = 0; k < G_N_ELEMENTS(handles); k++)
    gs_dispose(handles[k]);
}

/* add_scaled_ is t.add_(b, alpha=alpha): one pass that must round exactly as mul_scalar then
 * add_ (the optimizers switched to it without changing a single update). */
static void test_add_scaled(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  gs_tensor t = gs_randn(GS_F32, (int64_t[]){1000}, 1, &rng);
  gs_tensor b = gs_randn(GS_F32, (int64_t[]){1000}, 1, &rng);
  gs_tensor two_pass = gs_clone(t), scaled = gs_mul_scalar(b, -0.01);
  gs_add_(two_pass, scaled);
  gs_add_scaled_(t, b, -0.01);
  g_assert_cmpint(gs_version(t), ==, 1);
  g_assert_cmpmem(gs_data(t), 4000, gs_data(two_pass), 4000);

  /* b broadcast into a transposed destination. */
  gs_tensor base = gs_zeros(GS_F64, (int64_t[]){4, 3}, 2);
  gs_tensor tt = gs_t(base);
  gs_tensor row = gs_arange(1, 5, 1, GS_F64);
  gs_add_scaled_(tt, row, 0.5);
  double expected[12] = {0.5, 1, 1.5, 2, 0.5, 1, 1.5, 2, 0.5, 1, 1.5, 2};
  test_assert_values(tt, (int64_t[]){3, 4}, 2, expected, 0, 0);

  /* An operand aliasing the destination reads the old values: x += 2 * x is 3 * x. */
  gs_tensor x = gs_arange(0, 4, 1, GS_F32);
  gs_add_scaled_(x, x, 2.0);
  double tripled[4] = {0, 3, 6, 9};
  test_assert_values(x, (int64_t[]){4}, 1, tripled, 0, 0);

  /* Integers take an integral alpha and wrap as PyTorch's do. */
  gs_tensor i = gs_arange(0, 3, 1, GS_I64);
  gs_add_scaled_(i, i, -3);
  double minus_twice[3] = {0, -2, -4};
  test_assert_values(i, (int64_t[]){3}, 1, minus_twice, 0, 0);
  EXPECT_ERROR(gs_add_scaled_(i, i, 0.5),
               "add_scaled_: expected an integral alpha for a tensor of dtype i64, got 0.5");
  gs_tensor flags = gs_zeros(GS_BOOL, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_add_scaled_(flags, flags, 1),
               "add_scaled_: cannot add_scaled_ in place into a tensor of dtype bool");
  EXPECT_ERROR(gs_add_scaled_(i, x, 1), "add_scaled_: operand of shape [4] cannot be broadcast");
  g_assert_cmpint(gs_version(i), ==, 1); /* only the call that succeeded wrote */
  DISPOSE_ALL(t, b, two_pass, scaled, base, tt, row, x, i, flags);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/inplace/binary-inplace-on-every-layout", test_binary_inplace_on_every_layout);
  g_test_add_func("/inplace/scalar-fill-zero-clamp", test_scalar_fill_zero_clamp);
  g_test_add_func("/inplace/copy-converts-and-broadcasts", test_copy_converts_and_broadcasts);
  g_test_add_func("/inplace/write-materialises-copy-on-write",
                  test_write_materialises_copy_on_write);
  g_test_add_func("/inplace/aliased-operand-reads-old-values",
                  test_aliased_operand_reads_old_values);
  g_test_add_func("/inplace/refused-writes-change-nothing", test_refused_writes_change_nothing);
  g_test_add_func("/inplace/add-scaled", test_add_scaled);
  return g_test_run();
}
