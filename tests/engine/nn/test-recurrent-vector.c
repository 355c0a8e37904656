/* test-recurrent-vector.c: the fused recurrence's AVX-512 code against plain loops.
 *
 * - Each gate pass (engine/ops/recurrent-rows-avx512.c) gives the f32 numbers of
 *   recurrent-kernel.h's portable loop bit for bit; the reference here is that loop written
 *   again. Inputs take every branch: the tanh series, ordinary values, and expf's overflow,
 *   underflow and far-out lanes (which glibc handles apart), infinities and NaN.
 * - The step product (recurrent-gemm-avx512.c) equals an fmaf chain in k order plus the
 *   addend, bit for bit, over row counts and widths that take every block and tail.
 * - Whole LSTM, GRU and RNN layers, forward and backward, agree with the portable code run in
 *   a child (this program with --dump under GS_CPU_FEATURES=none: the level is chosen once
 *   per process) to float rounding: sgemm may split a product's sum over k in blocks.
 */
#include <inttypes.h>
#include <math.h>

#include "ops-impl.h"
#include "recurrent-gemm.h"
#include "recurrent-rows.h"
#include "test-util.h"

static bool have_avx512(void) {
  if (gs__cpu_level_get() >= GS__CPU_AVX512)
    return true;
  g_test_skip("this CPU (or GS_CPU_FEATURES) runs the portable code only");
  return false;
}

/* ---- the portable loops, again --------------------------------------------------------- */

static float ref_sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* recurrent.c's tanh_f32 */
static float ref_tanh(float x) {
  float a = fabsf(x);
  if (a < 0.4f) {
    float x2 = x * x;
    float odd = 21844.0f / 6081075.0f;
    odd = -1382.0f / 155925.0f + x2 * odd;
    odd = 62.0f / 2835.0f + x2 * odd;
    odd = -17.0f / 315.0f + x2 * odd;
    odd = 2.0f / 15.0f + x2 * odd;
    odd = -1.0f / 3.0f + x2 * odd;
    return x + x * x2 * odd;
  }
  return copysignf(1.0f - 2.0f / (expf(2.0f * a) + 1.0f), x);
}

static void ref_lstm_forward(const float *g, float *w, float *c, float *h, float *o, int64_t H) {
  for (int64_t k = 0; k < H; k++) {
    float i = ref_sigm(g[k]), f = ref_sigm(g[H + k]), gg = ref_tanh(g[2 * H + k]),
          og = ref_sigm(g[3 * H + k]);
    float cp = c[k], cn = f * cp + i * gg, tc = ref_tanh(cn), hn = og * tc;
    w[k] = i, w[H + k] = f, w[2 * H + k] = gg, w[3 * H + k] = og;
    w[4 * H + k] = tc, w[5 * H + k] = cp;
    c[k] = cn, h[k] = hn, o[k] = hn;
  }
}

static void ref_gru_forward(const float *x, const float *g, const float *hp, float *w, float *h,
                            float *o, int64_t H) {
  for (int64_t k = 0; k < H; k++) {
    float r = ref_sigm(x[k] + g[k]), z = ref_sigm(x[H + k] + g[H + k]);
    float nn = ref_tanh(x[2 * H + k] + r * g[2 * H + k]);
    float hn = nn + z * (hp[k] - nn);
    w[k] = r, w[H + k] = z, w[2 * H + k] = nn, w[3 * H + k] = g[2 * H + k];
    h[k] = hn, o[k] = hn;
  }
}

static void ref_rnn_tanh_forward(const float *g, float *w, float *h, float *o, int64_t H) {
  for (int64_t k = 0; k < H; k++) {
    float hn = ref_tanh(g[k]);
    w[k] = hn, h[k] = hn, o[k] = hn;
  }
}

static void ref_lstm_backward(const float *w, const float *go, const float *dh, float *dc,
                              float *dx, int64_t H) {
  for (int64_t k = 0; k < H; k++) {
    float i = w[k], f = w[H + k], gg = w[2 * H + k], og = w[3 * H + k];
    float tc = w[4 * H + k], cp = w[5 * H + k];
    float d = go[k] + dh[k];
    float dcell = dc[k] + d * og * (1.0f - tc * tc);
    dx[k] = dcell * gg * i * (1.0f - i);
    dx[H + k] = dcell * cp * f * (1.0f - f);
    dx[2 * H + k] = dcell * i * (1.0f - gg * gg);
    dx[3 * H + k] = d * tc * og * (1.0f - og);
    dc[k] = dcell * f;
  }
}

static void ref_gru_backward(const float *w, const float *hp, const float *go, float *dh, float *dx,
                             float *dhg, int64_t H) {
  for (int64_t k = 0; k < H; k++) {
    float r = w[k], z = w[H + k], nn = w[2 * H + k], hgn = w[3 * H + k];
    float d = go[k] + dh[k];
    float dn = d * (1.0f - z) * (1.0f - nn * nn);
    float dr = dn * hgn * r * (1.0f - r), dz = d * (hp[k] - nn) * z * (1.0f - z);
    dx[k] = dhg[k] = dr;
    dx[H + k] = dhg[H + k] = dz;
    dx[2 * H + k] = dn;
    dhg[2 * H + k] = dn * r;
    dh[k] = d * z;
  }
}

/* ---- gate passes, bit for bit ---------------------------------------------------------- */

/* n values around scale, with every 7th one of the far-out values mixed in. */
static void fill(GRand *rng, float *v, int64_t n, double scale) {
  static const float special[] = {88.5f,     -88.5f, 100.0f, -104.0f, 1e30f,       -1e30f, INFINITY,
                                  -INFINITY, NAN,    0.0f,   -0.0f,   0.39999998f, -0.4f};
  for (int64_t i = 0; i < n; i++)
    v[i] = i % 7 == 3 ? special[g_rand_int_range(rng, 0, G_N_ELEMENTS(special))]
                      : (float)(g_rand_double_range(rng, -1.0, 1.0) * scale);
}

/* a and b hold the same floats, bit for bit (any NaN matches any NaN). */
static void assert_same_bits(const float *a, const float *b, int64_t n, const char *what,
                             int64_t hidden, double scale) {
  for (int64_t i = 0; i < n; i++) {
    if (memcmp(&a[i], &b[i], sizeof(float)) == 0 || (isnan(a[i]) && isnan(b[i])))
      continue;
    g_error("%s, hidden %" PRId64 ", scale %g: value %" PRId64 " is %a, the portable loop's %a",
            what, hidden, scale, i, (double)a[i], (double)b[i]);
  }
}

typedef struct row_buffers {
  float *x, *g, *hp, *w[2], *c[2], *h[2], *o[2], *go, *dh[2], *dc[2], *dx[2], *dhg[2];
} row_buffers;

static void test_gate_passes_match_portable_bits(void) {
  if (!have_avx512())
    return;
  GRand *rng = g_rand_new_with_seed(11);
  const int64_t hiddens[] = {128, 21, 16, 5};
  const double scales[] = {0.05, 0.5, 3.0, 40.0, 1e4};
  for (size_t hi = 0; hi < G_N_ELEMENTS(hiddens); hi++) {
    int64_t H = hiddens[hi];
    size_t row = sizeof(float) * (size_t)(7 * H);
    for (size_t si = 0; si < G_N_ELEMENTS(scales); si++) {
      double scale = scales[si];
      for (int rep = 0; rep < 20; rep++) {
        row_buffers b;
        float **all = (float **)&b;
        for (size_t i = 0; i < sizeof b / sizeof(float *); i++)
          all[i] = g_malloc0(row);
        fill(rng, b.x, 4 * H, scale), fill(rng, b.g, 4 * H, scale), fill(rng, b.hp, H, 1.0);
        fill(rng, b.c[0], H, scale), fill(rng, b.go, H, 1.0), fill(rng, b.dh[0], H, 1.0);
        fill(rng, b.dc[0], H, 1.0);
        memcpy(b.c[1], b.c[0], row), memcpy(b.dh[1], b.dh[0], row), memcpy(b.dc[1], b.dc[0], row);

        gs__lstm_forward_row_avx512(b.g, b.w[0], b.c[0], b.h[0], b.o[0], H);
        ref_lstm_forward(b.g, b.w[1], b.c[1], b.h[1], b.o[1], H);
        assert_same_bits(b.w[0], b.w[1], 6 * H, "LSTM forward work row", H, scale);
        assert_same_bits(b.c[0], b.c[1], H, "LSTM forward c", H, scale);
        assert_same_bits(b.h[0], b.h[1], H, "LSTM forward h", H, scale);
        assert_same_bits(b.o[0], b.o[1], H, "LSTM forward output", H, scale);
        gs__lstm_backward_row_avx512(b.w[1], b.go, b.dh[0], b.dc[0], b.dx[0], H);
        ref_lstm_backward(b.w[1], b.go, b.dh[1], b.dc[1], b.dx[1], H);
        assert_same_bits(b.dx[0], b.dx[1], 4 * H, "LSTM backward dx", H, scale);
        assert_same_bits(b.dc[0], b.dc[1], H, "LSTM backward dc", H, scale);

        gs__gru_forward_row_avx512(b.x, b.g, b.hp, b.w[0], b.h[0], b.o[0], H);
        ref_gru_forward(b.x, b.g, b.hp, b.w[1], b.h[1], b.o[1], H);
        assert_same_bits(b.w[0], b.w[1], 4 * H, "GRU forward work row", H, scale);
        assert_same_bits(b.h[0], b.h[1], H, "GRU forward h", H, scale);
        assert_same_bits(b.o[0], b.o[1], H, "GRU forward output", H, scale);
        gs__gru_backward_row_avx512(b.w[1], b.hp, b.go, b.dh[0], b.dx[0], b.dhg[0], H);
        ref_gru_backward(b.w[1], b.hp, b.go, b.dh[1], b.dx[1], b.dhg[1], H);
        assert_same_bits(b.dx[0], b.dx[1], 3 * H, "GRU backward dx", H, scale);
        assert_same_bits(b.dhg[0], b.dhg[1], 3 * H, "GRU backward dhg", H, scale);
        assert_same_bits(b.dh[0], b.dh[1], H, "GRU backward dh", H, scale);

        gs__rnn_tanh_forward_row_avx512(b.g, b.w[0], b.h[0], b.o[0], H);
        ref_rnn_tanh_forward(b.g, b.w[1], b.h[1], b.o[1], H);
        assert_same_bits(b.w[0], b.w[1], H, "RNN forward work row", H, scale);
        assert_same_bits(b.o[0], b.o[1], H, "RNN forward output", H, scale);
        for (size_t i = 0; i < sizeof b / sizeof(float *); i++)
          g_free(all[i]);
      }
    }
  }
  g_rand_free(rng);
}

/* ---- the step product, bit for bit ----------------------------------------------------- */

static void test_step_product_is_an_fma_chain(void) {
  if (!have_avx512())
    return;
  GRand *rng = g_rand_new_with_seed(5);
  const int64_t ms[] = {1, 2, 3, 5, 6, 7, 13, 32}, ns[] = {5, 21, 64, 84, 512},
                ks[] = {1, 21, 128, 300};
  for (size_t mi = 0; mi < G_N_ELEMENTS(ms); mi++)
    for (size_t ni = 0; ni < G_N_ELEMENTS(ns); ni++)
      for (size_t ki = 0; ki < G_N_ELEMENTS(ks); ki++)
        for (int mode = 0; mode < 8; mode++) { /* transposed B x (no addend, a row, a matrix, c) */
          int64_t m = ms[mi], n = ns[ni], k = ks[ki], lda = k + 3, ldc = n + 1;
          bool transposed = mode & 1;
          int add_kind = mode >> 1;
          float *a = g_new(float, m *lda), *b = g_new(float, k *n), *c = g_new(float, m *ldc);
          float *add = g_new(float, m *ldc), *want = g_new(float, m *ldc);
          float *packed = aligned_alloc(64, sizeof(float) * gs__step_gemm_packed_size(k, n));
          for (int64_t i = 0; i < m * lda; i++)
            a[i] = (float)g_rand_double_range(rng, -1, 1);
          for (int64_t i = 0; i < k * n; i++)
            b[i] = (float)g_rand_double_range(rng, -1, 1);
          for (int64_t i = 0; i < m * ldc; i++)
            add[i] = c[i] = (float)g_rand_double_range(rng, -4, 4);
          int64_t ldadd = add_kind == 1 ? 0 : ldc;
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
              float acc = 0.0f;
              for (int64_t kk = 0; kk < k; kk++)
                acc = fmaf(a[i * lda + kk], transposed ? b[j * k + kk] : b[kk * n + j], acc);
              want[i * ldc + j] = add_kind ? add[i * ldadd + j] + acc : acc;
            }
          gs__step_gemm_pack_avx512(b, k, n, transposed, transposed ? k : n, packed);
          gs__step_gemm_avx512(m, n, k, a, lda, packed,
                               add_kind == 0   ? NULL
                               : add_kind == 3 ? c
                                               : add,
                               ldadd, c, ldc);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j <= n; j++) /* j = n: the column past n is left alone */
              if (memcmp(&c[i * ldc + j], j < n ? &want[i * ldc + j] : &add[i * ldc + j],
                         sizeof(float)) != 0)
                g_error("m %" PRId64 " n %" PRId64 " k %" PRId64 " mode %d: c[%" PRId64 "][%" PRId64
                        "] is %a, expected %a",
                        m, n, k, mode, i, j, (double)c[i * ldc + j],
                        (double)(j < n ? want[i * ldc + j] : add[i * ldc + j]));
          g_free(a), g_free(b), g_free(c), g_free(add), g_free(want);
          free(packed);
        }
  g_rand_free(rng);
}

/* ---- whole layers, to rounding ---------------------------------------------------------- */

/* One layer's forward and backward in f32, every result appended to out as hex words. */
static void dump_case(GString *out, gs_rnn_mode mode, int64_t hidden, double scale) {
  enum { T = 4, B = 3, IN = 5 };
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.rng = &rng;
  gs_module m = gs_rnn_new(mode, IN, hidden, &o);
  gs_tensor x0 = gs_randn(GS_F32, (int64_t[]){T, B, IN}, 3, &rng);
  gs_tensor x = gs_mul_scalar(x0, scale);
  gs_set_requires_grad(x, true);
  gs_tensor h_n, c_n = GS_NO_TENSOR;
  gs_tensor y =
      gs_rnn_forward(m, x, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, mode == GS_RNN_LSTM ? &c_n : NULL);
  /* Weighted sums, so every output and the final c get a gradient of their own. */
  gs_tensor wy = gs_randn(GS_F32, (int64_t[]){T, B, hidden}, 3, &rng);
  gs_tensor py = gs_mul(y, wy), loss = gs_sum(py, NULL, 0, false);
  gs_tensor wc = GS_NO_TENSOR, pc = GS_NO_TENSOR, lc = GS_NO_TENSOR, total = loss;
  if (c_n.id) {
    wc = gs_randn(GS_F32, (int64_t[]){1, B, hidden}, 3, &rng);
    pc = gs_mul(c_n, wc), lc = gs_sum(pc, NULL, 0, false);
    total = gs_add(loss, lc);
  }
  gs_backward(total);
  gs_tensor results[12] = {y, h_n, c_n, gs_grad(x)};
  int count = 4;
  count += gs_module_named_parameters(m, NULL, NULL, 0);
  gs_tensor params[8];
  gs_module_named_parameters(m, params, NULL, 8);
  for (int i = 4; i < count; i++)
    results[i] = gs_grad(params[i - 4]);
  g_string_append_printf(out, "mode %d hidden %" PRId64 " scale %g:", (int)mode, hidden, scale);
  for (int i = 0; i < count; i++) {
    if (!results[i].id)
      continue;
    gs_tensor c = gs_contiguous(results[i]);
    const uint32_t *bits = gs_data(c);
    for (int64_t k = 0; k < gs_numel(c); k++)
      g_string_append_printf(out, " %08" PRIx32, bits[k]);
    g_string_append_c(out, ';');
    gs_dispose(c);
  }
  g_string_append_c(out, '\n');
  gs_tensor made[] = {x0, x, y, h_n, c_n, wy, py, loss, wc, pc, lc};
  test_dispose_n(made, G_N_ELEMENTS(made));
  if (total.id != loss.id)
    gs_dispose(total);
  gs_module_dispose(m);
}

static char *dump_all(void) {
  GString *out = g_string_new(NULL);
  const gs_rnn_mode modes[] = {GS_RNN_LSTM, GS_RNN_GRU, GS_RNN_TANH};
  const int64_t hiddens[] = {128, 21};
  const double scales[] = {0.05, 1.0, 400.0, 1e5};
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(hiddens); j++)
      for (size_t k = 0; k < G_N_ELEMENTS(scales); k++)
        dump_case(out, modes[i], hiddens[j], scales[k]);
  return g_string_free(out, FALSE);
}

static float float_of(const char *hex) {
  uint32_t bits = (uint32_t)g_ascii_strtoull(hex, NULL, 16);
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static void test_layers_match_portable(void) {
  if (!have_avx512())
    return;
  char *here = dump_all();
  char **envp = g_environ_setenv(g_get_environ(), "GS_CPU_FEATURES", "none", TRUE);
  char *argv[] = {"/proc/self/exe", "--dump", NULL}; /* this program */
  char *child = NULL;
  int status = 0;
  GError *error = NULL;
  g_assert_true(
      g_spawn_sync(NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &child, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  /* Case by case, value by value, so a failure names both. */
  char **mine = g_strsplit(here, "\n", -1), **theirs = g_strsplit(child, "\n", -1);
  g_assert_cmpuint(g_strv_length(mine), ==, g_strv_length(theirs));
  for (int i = 0; mine[i]; i++) {
    char **a = g_strsplit_set(mine[i], " ;", -1), **b = g_strsplit_set(theirs[i], " ;", -1);
    guint len = g_strv_length(a);
    g_assert_cmpuint(len, ==, g_strv_length(b));
    for (guint j = 6; j < len; j++) { /* after "mode M hidden H scale S:" */
      if (!*a[j])
        continue;
      float va = float_of(a[j]), vb = float_of(b[j]);
      if (isnan(va) && isnan(vb))
        continue;
      if (!(fabsf(va - vb) <= 1e-5f * (1.0f + fabsf(vb))))
        g_error("%.*s: value %u is %a, the portable code's %a",
                (int)(strchr(mine[i], ':') - mine[i]), mine[i], j, (double)va, (double)vb);
    }
    g_strfreev(a), g_strfreev(b);
  }
  g_strfreev(mine), g_strfreev(theirs), g_strfreev(envp);
  g_free(here), g_free(child);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--dump") == 0) {
    char *all = dump_all();
    fputs(all, stdout);
    g_free(all);
    return 0;
  }
  test_init(&argc, &argv);
  g_test_add_func("/recurrent/gate-passes-match-portable-bits",
                  test_gate_passes_match_portable_bits);
  g_test_add_func("/recurrent/step-product-is-an-fma-chain", test_step_product_is_an_fma_chain);
  test_add_leak_checked("/recurrent/layers-match-portable", test_layers_match_portable);
  return g_test_run();
}
