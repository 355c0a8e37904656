/* test-inplace.c: the in-place forms (add_, sub_, mul_, div_, the scalar forms, fill_, zero_,
 * copy_, clamp_) through every destination and operand layout; an operand that aliases the
 * destination reads the old values; and refused calls (expanded destinations, dtypes that
 * would lose values, shapes that do not broadcast) change nothing, version included. */
#include "test-util.h"

typedef void (*inplace_fn)(gs_tensor, gs_tensor);

/* The ops in the order apply() computes them. */
static const struct {
  const char *name;
  inplace_fn fn;
} inplace_cases[] = {{"add_", gs_add_}, {"sub_", gs_sub_}, {"mul_", gs_mul_}, {"div_", gs_div_}};

static double apply(int which, double a, double b) {
  switch (which) {
  case 0: return a + b;
  case 1: return a - b;
  case 2: return a * b;
  default: return a / b;
  }
}

static void test_binary_inplace_all_layouts(void) {
  const int64_t shape[] = {3, 4};
  const int64_t row_shape[] = {4};
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  for (size_t c = 0; c < G_N_ELEMENTS(inplace_cases); c++) {
    for (int dt = GS_F32; dt <= GS_F64; dt++) {
      /* Destinations may not be expanded; operands may have any layout and broadcast. */
      for (int lt = 0; lt < LAYOUT_BROADCAST; lt++) {
        for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
          for (int row = 0; row < 2; row++) {
            g_test_message("%s %s dest %s operand %s%s", inplace_cases[c].name,
                           gs_dtype_name(dt), test_layout_name(lt), test_layout_name(lb),
                           row ? " (row)" : "");
            gs_tensor t = test_make(dt, shape, 2, lt, -4, 4, &rng);
            gs_tensor b = row ? test_make(dt, row_shape, 1, lb, 1, 4, &rng)
                              : test_make(dt, shape, 2, lb, 1, 4, &rng);
            double *vt = test_values(t), *vb = test_values(b), expected[12];
            for (int i = 0; i < 12; i++) {
              double e = apply((int)c, vt[i], vb[row ? i % 4 : i]);
              expected[i] = dt == GS_F32 ? (double)(float)e : e;
            }
            int64_t version = gs_version(t);
            inplace_cases[c].fn(t, b);
            g_assert_cmpint(gs_version(t), ==, version + 1);
            test_assert_values(t, shape, 2, expected, 0, 0);
            g_free(vt), g_free(vb);
            gs_dispose(t), gs_dispose(b);
          }
        }
      }
    }
  }
}

static void test_scalar_inplace_and_fill(void) {
  gs_tensor t = gs_arange(0, 4, 1, GS_I64);
  gs_add_scalar_(t, 3);
  gs_mul_scalar_(t, -2);
  test_assert_values(t, (int64_t[]){4}, 1, (double[]){-6, -8, -10, -12}, 0, 0);
  EXPECT_ERROR(gs_add_scalar_(t, 0.5), "has a fraction");
  gs_clamp_(t, -9.5, 0); /* integer bounds are rounded inward: -9 */
  test_assert_values(t, (int64_t[]){4}, 1, (double[]){-6, -8, -9, -9}, 0, 0);
  gs_tensor m = gs_zeros(GS_F32, (int64_t[]){2, 3}, 2);
  gs_tensor col = gs_select(m, 1, 1);
  gs_fill_(col, 5);
  test_assert_values(m, (int64_t[]){2, 3}, 2, (double[]){0, 5, 0, 0, 5, 0}, 0, 0);
  gs_zero_(m);
  test_assert_values(m, (int64_t[]){2, 3}, 2, (double[]){0, 0, 0, 0, 0, 0}, 0, 0);
  gs_dispose(t), gs_dispose(m), gs_dispose(col);
}

static void test_copy_broadcasts_and_converts(void) {
  gs_tensor t = gs_zeros(GS_I64, (int64_t[]){2, 3}, 2);
  gs_tensor src = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1.9, -2.5, 3});
  gs_copy_(t, src); /* copy_ converts any dtype, truncating as a cast */
  test_assert_values(t, (int64_t[]){2, 3}, 2, (double[]){1, -2, 3, 1, -2, 3}, 0, 0);
  gs_tensor tr = gs_transpose(t, 0, 1);
  gs_tensor col = gs_from_data(GS_I64, (int64_t[]){3, 1}, 2, (int64_t[]){7, 8, 9});
  gs_copy_(tr, col); /* a transposed destination */
  test_assert_values(t, (int64_t[]){2, 3}, 2, (double[]){7, 8, 9, 7, 8, 9}, 0, 0);
  gs_dispose(t), gs_dispose(src), gs_dispose(tr), gs_dispose(col);
}

static void test_aliasing_operand_reads_old_values(void) {
  gs_tensor t = gs_from_data(GS_F32, (int64_t[]){2, 2}, 2, (float[]){1, 2, 3, 4});
  gs_tensor tt = gs_transpose(t, 0, 1);
  gs_add_(t, tt); /* t += t.T must read t before any write */
  test_assert_values(t, (int64_t[]){2, 2}, 2, (double[]){2, 5, 5, 8}, 0, 0);
  gs_tensor row0 = gs_select(t, 0, 0);
  gs_mul_(t, row0); /* the operand is a row of the destination */
  test_assert_values(t, (int64_t[]){2, 2}, 2, (double[]){4, 25, 10, 40}, 0, 0);
  gs_dispose(t), gs_dispose(tt), gs_dispose(row0);
}

static void test_inplace_on_clone_leaves_original(void) {
  gs_tensor a = gs_ones(GS_F32, (int64_t[]){8}, 1);
  gs_tensor c = gs_clone(a);
  gs_tensor b = gs_full(GS_F32, (int64_t[]){8}, 1, 2);
  gs_add_(c, b);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0}), ==, 1);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){0}), ==, 3);
  gs_dispose(a), gs_dispose(c), gs_dispose(b);
}

/* Each refused call reports one error and leaves the destination's values and version. */
static void test_refused_calls_change_nothing(void) {
  gs_tensor t = gs_ones(GS_I64, (int64_t[]){2, 3}, 2);
  gs_tensor f = gs_full(GS_F32, (int64_t[]){2, 3}, 2, 0.5);
  gs_tensor wrong = gs_ones(GS_I64, (int64_t[]){4}, 1);
  gs_tensor row = gs_ones(GS_F32, (int64_t[]){1, 3}, 2);
  gs_tensor expanded = gs_expand(row, (int64_t[]){2, 3}, 2);
  int64_t version = gs_version(t), row_version = gs_version(row);

  EXPECT_ERROR(gs_add_(t, f), "result type f32 cannot be written into a i64 tensor in place");
  EXPECT_ERROR(gs_div_(t, t), "true division gives a floating result");
  EXPECT_ERROR(gs_add_(t, wrong), "operand of shape [4] cannot be broadcast to the "
                                  "destination's shape [2, 3]");
  EXPECT_ERROR(gs_mul_scalar_(t, 1.5), "has a fraction");
  EXPECT_ERROR(gs_clamp_(t, 2, 1), "expected min <= max");
  EXPECT_ERROR(gs_fill_(expanded, 0), "cannot write in place into an expanded tensor");
  EXPECT_ERROR(gs_add_(expanded, f), "expanded");
  EXPECT_ERROR(gs_copy_(expanded, f), "expanded");

  g_assert_cmpint(gs_version(t), ==, version);
  g_assert_cmpint(gs_version(row), ==, row_version);
  test_assert_values(t, (int64_t[]){2, 3}, 2, (double[]){1, 1, 1, 1, 1, 1}, 0, 0);
  test_assert_values(row, (int64_t[]){1, 3}, 2, (double[]){1, 1, 1}, 0, 0);
  gs_dispose(t), gs_dispose(f), gs_dispose(wrong), gs_dispose(row), gs_dispose(expanded);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/inplace/binary-all-layouts", test_binary_inplace_all_layouts);
  g_test_add_func("/inplace/scalar-and-fill", test_scalar_inplace_and_fill);
  g_test_add_func("/inplace/copy-broadcasts-and-converts", test_copy_broadcasts_and_converts);
  g_test_add_func("/inplace/aliasing-operand-reads-old-values",
                  test_aliasing_operand_reads_old_values);
  g_test_add_func("/inplace/on-clone-leaves-original", test_inplace_on_clone_leaves_original);
  g_test_add_func("/inplace/refused-calls-change-nothing", test_refused_calls_change_nothing);
  return g_test_run();
}
