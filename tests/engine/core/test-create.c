/* test-create.c: constructors, dtype conversion, copying values out, and the seedable random
 * generator (same seed, same numbers; the right distributions). */
#include "test-util.h"

static void test_constants(void) {
  int64_t shape[2] = {2, 2};
  for (int d = 0; d < GS_DTYPE_COUNT; d++) {
    gs_tensor z = gs_zeros((gs_dtype)d, shape, 2), o = gs_ones((gs_dtype)d, shape, 2);
    gs_tensor f = gs_full((gs_dtype)d, shape, 2, 3.0);
    double zeros[4] = {0}, ones[4] = {1, 1, 1, 1}, threes[4] = {3, 3, 3, 3};
    test_assert_values(z, shape, 2, zeros, 0, 0);
    test_assert_values(o, shape, 2, ones, 0, 0);
    test_assert_values(f, shape, 2, d == GS_BOOL ? ones : threes, 0, 0);
    g_assert_cmpint(gs_dtype_of(f), ==, d);
    gs_tensor fl = gs_full_like(f, 2.0), zl = gs_zeros_like(f), ol = gs_ones_like(f);
    g_assert_cmpint(gs_dtype_of(fl), ==, d);
    g_assert_cmpfloat(gs_get(zl, (int64_t[]){1, 1}), ==, 0.0);
    g_assert_cmpfloat(gs_get(ol, (int64_t[]){1, 1}), ==, 1.0);
    DISPOSE_ALL(z, o, f, fl, zl, ol);
  }
  gs_tensor s = gs_scalar(GS_F64, 2.5);
  g_assert_cmpint(gs_ndim(s), ==, 0);
  g_assert_cmpfloat(gs_item(s), ==, 2.5);
  gs_dispose(s);
}

static void test_arange_linspace_eye(void) {
  gs_tensor a = gs_arange(0, 1, 0.1, GS_F64);
  g_assert_cmpint(gs_numel(a), ==, 10);
  g_assert_cmpfloat_with_epsilon(gs_get(a, (int64_t[]){9}), 0.9, 1e-12);
  gs_tensor down = gs_arange(5, 0, -2, GS_I64);
  double d[3] = {5, 3, 1};
  test_assert_values(down, (int64_t[]){3}, 1, d, 0, 0);
  gs_tensor none = gs_arange(2, 2, 1, GS_F32);
  g_assert_cmpint(gs_numel(none), ==, 0);
  EXPECT_ERROR(gs_arange(0, 5, 0, GS_F32), "arange: expected finite start, end and a non-zero");
  EXPECT_ERROR(gs_arange(0, 5, -1, GS_F32), "step -1 moves away from end");

  gs_tensor l = gs_linspace(-1, 1, 5, GS_F32);
  double lv[5] = {-1, -0.5, 0, 0.5, 1};
  test_assert_values(l, (int64_t[]){5}, 1, lv, 0, 0);
  gs_tensor l1 = gs_linspace(3, 7, 1, GS_F64);
  g_assert_cmpfloat(gs_item(l1), ==, 3);
  gs_tensor lodd = gs_linspace(0, 1, 7, GS_F64);
  g_assert_cmpfloat(gs_get(lodd, (int64_t[]){6}), ==, 1.0); /* exactly end */
  EXPECT_ERROR(gs_linspace(0, 1, -1, GS_F32), "linspace: expected steps >= 0, got -1");

  gs_tensor e = gs_eye(2, 3, GS_BOOL);
  double ev[6] = {1, 0, 0, 0, 1, 0};
  test_assert_values(e, (int64_t[]){2, 3}, 2, ev, 0, 0);
  DISPOSE_ALL(a, down, none, l, l1, lodd, e);
}

static void test_from_data_and_copy_to(void) {
  int64_t v[6] = {1, -2, 3, -4, 5, -6};
  gs_tensor t = gs_from_data(GS_I64, (int64_t[]){2, 3}, 2, v);
  v[0] = 100; /* copied: later changes to the array do not show */
  int64_t out[6];
  g_assert_cmpint(gs_copy_to(t, out, sizeof out), ==, 0);
  g_assert_cmpint(out[0], ==, 1);
  g_assert_cmpint(out[5], ==, -6);
  gs_tensor tr = gs_t(t);
  g_assert_cmpint(gs_copy_to(tr, out, sizeof out), ==, 0); /* row-major logical order */
  int64_t expect[6] = {1, -4, -2, 5, 3, -6};
  for (int i = 0; i < 6; i++)
    g_assert_cmpint(out[i], ==, expect[i]);
  int rc = 0;
  EXPECT_ERROR(rc = gs_copy_to(t, out, 40),
               "copy_to: expected a destination of at least 48 bytes (6 i64 elements), got 40");
  g_assert_cmpint(rc, ==, -1);
  EXPECT_ERROR(gs_from_data(GS_F32, (int64_t[]){2}, 1, NULL),
               "from_data: expected 2 elements of data, got NULL");
  EXPECT_ERROR(gs_item(t), "item: expected a tensor with one element, got shape [2, 3]");
  EXPECT_ERROR(gs_get(t, (int64_t[]){2, 0}), "get: index 2 is out of range for dim 0 of size 2");
  g_assert_cmpfloat(gs_get(t, (int64_t[]){-1, -1}), ==, -6);
  gs_dispose(tr);
  gs_dispose(t);
}

static void test_dtype_conversion(void) {
  double src[5] = {1.5, -2.7, 0.0, NAN, 1e30};
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){5}, 1, src);
  gs_tensor f = gs_to_dtype(t, GS_F32);
  gs_tensor i = gs_to_dtype(t, GS_I64);
  gs_tensor b = gs_to_dtype(t, GS_BOOL);
  float fv[5];
  gs_copy_to(f, fv, sizeof fv);
  g_assert_cmpfloat(fv[0], ==, 1.5f);
  g_assert_true(isnan(fv[3]));
  int64_t iv[5];
  gs_copy_to(i, iv, sizeof iv);
  g_assert_cmpint(iv[0], ==, 1);
  g_assert_cmpint(iv[1], ==, -2); /* truncation toward zero */
  g_assert_cmpint(iv[3], ==, INT64_MIN); /* NaN, as x86 and PyTorch on x86 */
  g_assert_cmpint(iv[4], ==, INT64_MIN);
  bool bv[5];
  gs_copy_to(b, bv, sizeof bv);
  g_assert_true(bv[0] && bv[1] && !bv[2] && bv[3] && bv[4]);
  gs_tensor same = gs_to_dtype(t, GS_F64); /* an O(1) clone */
  g_assert_true(gs_is_copy_on_write(same));
  EXPECT_ERROR(gs_to_dtype(t, (gs_dtype)9),
               "to_dtype: expected a dtype (f32, f64, i64, bool, i32, u8, i8 or i16)");
  DISPOSE_ALL(t, f, i, b, same);
}

/* i32 as PyTorch's int32: its name and size, its place in promotion, and conversions in and
 * out (floats truncate, NaN and values out of range give INT32_MIN as on x86, i64 keeps its
 * low 32 bits). */
static void test_i32(void) {
  g_assert_cmpstr(gs_dtype_name(GS_I32), ==, "i32");
  g_assert_cmpuint(gs_dtype_size(GS_I32), ==, 4);
  g_assert_false(gs_dtype_is_floating(GS_I32));
  g_assert_true(gs_dtype_is_integer(GS_I32) && gs_dtype_is_integer(GS_I64));
  g_assert_false(gs_dtype_is_integer(GS_BOOL) || gs_dtype_is_integer(GS_F32));
  g_assert_cmpint(gs_promote_types(GS_I32, GS_BOOL), ==, GS_I32);
  g_assert_cmpint(gs_promote_types(GS_I32, GS_I64), ==, GS_I64);
  g_assert_cmpint(gs_promote_types(GS_I64, GS_I32), ==, GS_I64);
  g_assert_cmpint(gs_promote_types(GS_I32, GS_F32), ==, GS_F32);
  g_assert_cmpint(gs_promote_types(GS_F64, GS_I32), ==, GS_F64);

  double src[6] = {1.7, -1.7, 3e9, NAN, -2147483648.0, 2147483647.0};
  gs_tensor f = gs_from_data(GS_F64, (int64_t[]){6}, 1, src);
  gs_tensor i = gs_to_dtype(f, GS_I32);
  int32_t iv[6];
  g_assert_cmpint(gs_copy_to(i, iv, sizeof iv), ==, 0);
  const int32_t want[6] = {1, -1, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MAX};
  for (int k = 0; k < 6; k++)
    g_assert_cmpint(iv[k], ==, want[k]);
  gs_tensor wide = gs_from_data(GS_I64, (int64_t[]){2}, 1,
                                (int64_t[]){((int64_t)1 << 40) + 5, -((int64_t)1 << 32) - 3});
  gs_tensor narrow = gs_to_dtype(wide, GS_I32);
  g_assert_cmpfloat(gs_get(narrow, (int64_t[]){0}), ==, 5.0);
  g_assert_cmpfloat(gs_get(narrow, (int64_t[]){1}), ==, -3.0);
  gs_tensor back = gs_to_dtype(i, GS_F32), as_bool = gs_to_dtype(i, GS_BOOL);
  g_assert_cmpfloat(gs_get(back, (int64_t[]){5}), ==, 2147483648.0f);
  g_assert_cmpfloat(gs_get(as_bool, (int64_t[]){0}), ==, 1.0);

  gs_tensor r = gs_arange(0, 5, 2, GS_I32), full = gs_full(GS_I32, (int64_t[]){2}, 1, -7.9);
  gs_tensor e = gs_eye(2, 2, GS_I32);
  g_assert_cmpint(gs_dtype_of(r), ==, GS_I32);
  test_assert_values(r, (int64_t[]){3}, 1, (double[]){0, 2, 4}, 0, 0);
  test_assert_values(full, (int64_t[]){2}, 1, (double[]){-7, -7}, 0, 0);
  test_assert_values(e, (int64_t[]){2, 2}, 2, (double[]){1, 0, 0, 1}, 0, 0);
  gs_storage_info info;
  g_assert_cmpint(gs_storage_info_of(r, &info), ==, 0);
  g_assert_cmpuint(info.nbytes, ==, 12);
  DISPOSE_ALL(f, i, wide, narrow, back, as_bool, r, full, e);
}

static void test_shape_validation(void) {
  EXPECT_ERROR(gs_zeros(GS_F32, (int64_t[]){2, -3}, 2),
               "zeros: expected sizes >= 0, got -3 in shape [2, -3]");
  EXPECT_ERROR(gs_zeros(GS_F32, (int64_t[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, 9),
               "zeros: expected 0 to 8 dimensions, got 9");
  EXPECT_ERROR(gs_ones(GS_F32, (int64_t[]){1ll << 32, 1ll << 32}, 2),
               "ones: shape [4294967296, 4294967296] has more elements than fit in 64 bits");
  EXPECT_ERROR(gs_empty((gs_dtype)GS_DTYPE_COUNT, (int64_t[]){2}, 1), "empty: expected a dtype");
  EXPECT_ERROR(gs_zeros(GS_F32, NULL, 2), "zeros: expected a shape of 2 sizes, got NULL");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_ARGUMENT);
}

static void test_same_seed_same_numbers(void) {
  gs_rng a, b;
  gs_rng_seed(&a, 42);
  gs_rng_seed(&b, 42);
  int64_t shape[1] = {100};
  gs_tensor x = gs_randn(GS_F64, shape, 1, &a), y = gs_randn(GS_F64, shape, 1, &b);
  double *vx = test_values(x), *vy = test_values(y);
  for (int i = 0; i < 100; i++)
    g_assert_cmpfloat(vx[i], ==, vy[i]);
  gs_rng_seed(&b, 43);
  gs_tensor z = gs_randn(GS_F64, shape, 1, &b);
  double *vz = test_values(z);
  int differ = 0;
  for (int i = 0; i < 100; i++)
    differ += vz[i] != vx[i];
  g_assert_cmpint(differ, >, 95);
  /* The default generator is reseedable too. */
  gs_manual_seed(7);
  gs_tensor u1 = gs_rand(GS_F32, shape, 1, NULL);
  gs_manual_seed(7);
  gs_tensor u2 = gs_rand(GS_F32, shape, 1, NULL);
  double *w1 = test_values(u1), *w2 = test_values(u2);
  for (int i = 0; i < 100; i++)
    g_assert_cmpfloat(w1[i], ==, w2[i]);
  /* Its state saved and put back (torch.get_rng_state / set_rng_state): the draws after the
   * set repeat those after the get, normal's spare value included; a fresh seed differs. */
  gs_manual_seed(11);
  gs_tensor skip = gs_randn(GS_F64, (int64_t[]){3}, 1, NULL); /* leaves a spare normal */
  gs_rng saved;
  gs_get_rng_state(&saved);
  gs_tensor n1 = gs_randn(GS_F64, shape, 1, NULL);
  gs_set_rng_state(&saved);
  gs_tensor n2 = gs_randn(GS_F64, shape, 1, NULL);
  gs_manual_seed(12);
  gs_tensor n3 = gs_randn(GS_F64, shape, 1, NULL);
  double *m1 = test_values(n1), *m2 = test_values(n2), *m3 = test_values(n3);
  int same3 = 0;
  for (int i = 0; i < 100; i++) {
    g_assert_cmpfloat(m1[i], ==, m2[i]);
    same3 += m1[i] == m3[i];
  }
  g_assert_cmpint(same3, <, 5);
  g_free(m1), g_free(m2), g_free(m3);
  g_free(vx), g_free(vy), g_free(vz), g_free(w1), g_free(w2);
  gs_tensor handles[] = {x, y, z, u1, u2, skip, n1, n2, n3};
  for (size_t i = 0; i < G_N_ELEMENTS(handles); i++)
    gs_dispose(handles[i]);
}

/* The draws after a seed are torch 1.13's for that seed; the values below were printed by
 * torch 1.13 (torch.manual_seed(s), then the call named beside each). */
static void test_torch_generator_values(void) {
  gs_rng g;
  gs_rng_seed(&g, 0); /* torch.empty((), dtype=torch.int64).random_(): 64 bits mod 2^63 */
  g_assert_cmpint((int64_t)(gs_rng_next_u64(&g) & INT64_MAX), ==, 900450186894289455ll);
  gs_rng_seed(&g, 0);
  gs_tensor r32 = gs_rand(GS_F32, (int64_t[]){3}, 1, &g); /* torch.rand(3) */
  const float *f = gs_data(r32);
  const uint32_t want32[3] = {0x3efe1558u, 0x3f44aa2fu, 0x3db533a8u};
  for (int i = 0; i < 3; i++) {
    uint32_t bits;
    memcpy(&bits, &f[i], 4);
    g_assert_cmphex(bits, ==, want32[i]);
  }
  gs_rng_seed(&g, 0);
  gs_tensor r64 = gs_rand(GS_F64, (int64_t[]){2}, 1, &g); /* torch.rand(2, dtype=float64) */
  const double *d = gs_data(r64);
  g_assert_cmpfloat(d[0], ==, 0x1.f0aac97c4aa2fp-1);
  g_assert_cmpfloat(d[1], ==, 0x1.6a675d821ccc0p-1);
  gs_rng_seed(&g, 0); /* torch.randn(3, dtype=float64): the element-wise sampler */
  gs_tensor n3 = gs_randn(GS_F64, (int64_t[]){3}, 1, &g);
  d = gs_data(n3);
  g_assert_cmpfloat(d[0], ==, 0x1.8a7eb8902be3ap+0);
  g_assert_cmpfloat(d[1], ==, -0x1.2c78a087c6feap-2);
  g_assert_cmpfloat(d[2], ==, -0x1.16e2920a70ee5p+1);
  gs_rng_seed(&g, 0); /* torch.randn(17, dtype=float64): the 16-wide fill and its tail */
  gs_tensor n17 = gs_randn(GS_F64, (int64_t[]){17}, 1, &g);
  d = gs_data(n17);
  g_assert_cmpfloat(d[15], ==, -0x1.c8318cc163de5p-1);
  g_assert_cmpfloat(d[16], ==, 0x1.5986ed8e63e98p-1);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    gs_rng_seed(&g, 0); /* torch.randn(17): torch's AVX2 float kernel (taken on AVX2 CPUs) */
    gs_tensor f17 = gs_randn(GS_F32, (int64_t[]){17}, 1, &g);
    f = gs_data(f17);
    g_assert_cmpfloat(f[15], ==, -0x1.aff666p-1f);
    g_assert_cmpfloat(f[16], ==, 0x1.dd1860p-1f);
    gs_dispose(f17);
  }
#endif
  gs_rng_seed(&g, 0); /* torch.randint(0, 10, (5,)), then torch.randperm(10) */
  gs_tensor ri = gs_randint(0, 10, (int64_t[]){5}, 1, &g);
  gs_tensor rp = gs_randperm(10, &g);
  const int64_t want_ri[5] = {4, 9, 3, 0, 3}, want_rp[10] = {9, 8, 0, 7, 3, 6, 1, 4, 2, 5};
  g_assert_cmpmem(gs_data(ri), sizeof want_ri, want_ri, sizeof want_ri);
  g_assert_cmpmem(gs_data(rp), sizeof want_rp, want_rp, sizeof want_rp);
  gs_rng_seed(&g, 7); /* torch.randint(-2**40, 2**40, (2,)): a range past 32 bits */
  gs_tensor big = gs_randint(-(1ll << 40), 1ll << 40, (int64_t[]){2}, 1, &g);
  const int64_t want_big[2] = {-346915937084ll, -990767470090ll};
  g_assert_cmpmem(gs_data(big), sizeof want_big, want_big, sizeof want_big);
  /* torch.get_rng_state() after manual_seed(0): seed 0, left 1, seeded 1, next 0 */
  uint8_t st[GS_RNG_STATE_BYTES];
  gs_rng_seed(&g, 0);
  gs_rng_state_save(&g, st);
  const uint8_t head[24] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  g_assert_cmpmem(st, 24, head, 24);
  gs_rng back;
  g_assert_true(gs_rng_state_load(&back, st, sizeof st));
  g_assert_false(gs_rng_state_load(&back, st, 41));
  g_assert_cmpuint(gs_rng_next_u64(&back), ==, gs_rng_next_u64(&g));
  DISPOSE_ALL(r32, r64, n3, n17, ri, rp, big);
}

static void test_distributions(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  int64_t n = 200000;
  gs_tensor u = gs_rand(GS_F32, &n, 1, &rng);
  gs_tensor g = gs_normal(GS_F64, &n, 1, 2.0, 3.0, &rng);
  gs_tensor r = gs_randint(-3, 4, &n, 1, &rng);
  gs_tensor bp = gs_bernoulli_p(GS_F32, &n, 1, 0.25, &rng);
  gs_tensor un = gs_uniform(GS_F64, &n, 1, -2.0, -1.0, &rng);
  double *vu = test_values(u), *vg = test_values(g), *vr = test_values(r), *vb = test_values(bp),
         *vun = test_values(un);
  double su = 0, sg = 0, sg2 = 0, sb = 0;
  int hits[7] = {0};
  for (int64_t i = 0; i < n; i++) {
    g_assert_true(vu[i] >= 0.0 && vu[i] < 1.0);
    g_assert_true(vun[i] >= -2.0 && vun[i] < -1.0);
    g_assert_true(vr[i] >= -3 && vr[i] < 4 && vr[i] == floor(vr[i]));
    g_assert_true(vb[i] == 0.0 || vb[i] == 1.0);
    hits[(int)vr[i] + 3]++;
    su += vu[i], sg += vg[i], sg2 += vg[i] * vg[i], sb += vb[i];
  }
  double mean_g = sg / n, std_g = sqrt(sg2 / n - mean_g * mean_g);
  g_assert_cmpfloat_with_epsilon(su / n, 0.5, 0.01);
  g_assert_cmpfloat_with_epsilon(mean_g, 2.0, 0.03);
  g_assert_cmpfloat_with_epsilon(std_g, 3.0, 0.03);
  g_assert_cmpfloat_with_epsilon(sb / n, 0.25, 0.01);
  for (int k = 0; k < 7; k++)
    g_assert_cmpfloat_with_epsilon(hits[k] / (double)n, 1.0 / 7, 0.01);

  double probs[4] = {0.0, 1.0, 0.0, 1.0};
  gs_tensor p = gs_from_data(GS_F64, (int64_t[]){2, 2}, 2, probs);
  gs_tensor b = gs_bernoulli(p, &rng);
  test_assert_values(b, (int64_t[]){2, 2}, 2, probs, 0, 0);
  g_assert_cmpint(gs_dtype_of(b), ==, GS_F64);

  EXPECT_ERROR(gs_rand(GS_I64, &n, 1, &rng), "rand: expected a floating dtype (f32 or f64), got i64");
  EXPECT_ERROR(gs_randint(3, 3, &n, 1, &rng), "randint: expected low < high, got low 3, high 3");
  EXPECT_ERROR(gs_bernoulli_p(GS_F32, &n, 1, 1.5, &rng), "expected a probability in [0, 1], got 1.5");
  EXPECT_ERROR(gs_normal(GS_F32, &n, 1, 0, -1, &rng), "normal: expected std >= 0, got -1");
  double bad[2] = {0.5, 2.0};
  gs_tensor pb = gs_from_data(GS_F64, (int64_t[]){2}, 1, bad);
  EXPECT_ERROR(gs_bernoulli(pb, &rng), "bernoulli: expected probabilities in [0, 1], got 2 at flat index 1");
  g_free(vu), g_free(vg), g_free(vr), g_free(vb), g_free(vun);
  DISPOSE_ALL(u, g, r, bp, un, p, b, pb);
}

static void test_describe_and_print(void) {
  gs_tensor t = gs_arange(0, 6, 1, GS_I64);
  gs_tensor v = gs_view(t, (int64_t[]){2, 3}, 2);
  char buf[64];
  g_assert_cmpstr(gs_describe(v, buf, sizeof buf), ==, "[2, 3] i64");
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  gs_print(mem, v);
  fclose(mem);
  g_assert_cmpstr(text, ==, "tensor([[0, 1, 2],\n        [3, 4, 5]], shape=[2, 3], dtype=i64)\n");
  free(text);
  gs_dispose(v);
  gs_dispose(t);
  g_assert_cmpstr(gs_describe(t, buf, sizeof buf), ==, "(no tensor)");
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/create/constants", test_constants);
  g_test_add_func("/create/arange-linspace-eye", test_arange_linspace_eye);
  g_test_add_func("/create/from-data-and-copy-to", test_from_data_and_copy_to);
  g_test_add_func("/create/dtype-conversion", test_dtype_conversion);
  g_test_add_func("/create/i32", test_i32);
  g_test_add_func("/create/shape-validation", test_shape_validation);
  g_test_add_func("/create/same-seed-same-numbers", test_same_seed_same_numbers);
  g_test_add_func("/create/torch-generator-values", test_torch_generator_values);
  g_test_add_func("/create/distributions", test_distributions);
  g_test_add_func("/create/describe-and-print", test_describe_and_print);
  return g_test_run();
}
