/* test-relu-avx512.c: the AVX-512 relu and relu-gradient passes (engine/ops/relu-avx512.c)
 * give the portable loops' bits (kernels.c's expressions, written out here) for every kind of
 * float: NaNs with their payloads and signs, signed zeros, infinities, subnormals; at every
 * length around the 16-lane vectors (the masked tail) and at unaligned starts; in place; and
 * touch nothing past the end. And gs_relu and its gradient, which take them on such a CPU,
 * still agree with those loops through the op. */
#include <stdint.h>
#include <string.h>

#include "ops-impl.h"
#include "relu-avx512.h"
#include "test-util.h"

static bool have_avx512(void) {
  if (gs__cpu_level_get() >= GS__CPU_AVX512)
    return true;
  g_test_skip("this CPU (or GS_CPU_FEATURES) runs the portable code only");
  return false;
}

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* The portable loops' expressions (kernels.c: relu_f32, relu_grad_f32). */
static float relu_ref(float a) { return a > 0 ? a : (a != a ? a : 0.0f); }
static float relu_grad_ref(float g, float y) { return y <= 0 ? 0.0f : g; }

/* Values of every class, then random bit patterns (every exponent, NaNs included). */
static void fill_values(float *v, int64_t n, GRand *rng) {
  static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                     0xffc00000, 0x7f800001, 0xff812345, 0x7fbfffff, 0x00000001,
                                     0x80000001, 0x007fffff, 0x807fffff, 0x3f800000, 0xbf800000,
                                     0x7f7fffff, 0xff7fffff, 0x00800000, 0x80800000};
  for (int64_t i = 0; i < n; i++)
    v[i] = i < (int64_t)G_N_ELEMENTS(special) ? from_bits(special[i])
                                              : from_bits((uint32_t)g_rand_int(rng));
}

enum { MAX_LEN = 300, GUARD = 32 };
static const uint32_t guard_bits = 0x5a5a5a5a;

static void check_guards(const float *buf, int64_t start, int64_t n, const char *what) {
  for (int64_t i = 0; i < start; i++)
    g_assert_cmphex(bits_of(buf[i]), ==, guard_bits);
  for (int64_t i = start + n; i < start + n + GUARD; i++)
    if (bits_of(buf[i]) != guard_bits)
      g_error("%s wrote element %" G_GINT64_FORMAT " past a run of %" G_GINT64_FORMAT, what,
              i - start, n);
}

static void test_relu_bits(void) {
  if (!have_avx512())
    return;
  GRand *rng = g_rand_new_with_seed(11);
  float x[MAX_LEN + 16], out[16 + MAX_LEN + GUARD], inplace[MAX_LEN + 16];
  for (int64_t n = 0; n <= MAX_LEN; n += n < 40 ? 1 : 37)
    for (int64_t start = 0; start < 16; start += 5) {
      fill_values(x + start, n, rng);
      for (size_t i = 0; i < G_N_ELEMENTS(out); i++)
        out[i] = from_bits(guard_bits);
      gs__relu_f32_avx512(out + start, x + start, n);
      memcpy(inplace + start, x + start, sizeof(float) * (size_t)n);
      gs__relu_f32_avx512(inplace + start, inplace + start, n);
      for (int64_t i = 0; i < n; i++) {
        uint32_t want = bits_of(relu_ref(x[start + i]));
        if (bits_of(out[start + i]) != want || bits_of(inplace[start + i]) != want)
          g_error("relu of %08x (n %" G_GINT64_FORMAT ", element %" G_GINT64_FORMAT
                  "): %08x (in place %08x), want %08x",
                  bits_of(x[start + i]), n, i, bits_of(out[start + i]), bits_of(inplace[start + i]),
                  want);
      }
      check_guards(out, start, n, "relu");
    }
  g_rand_free(rng);
}

static void test_relu_grad_bits(void) {
  if (!have_avx512())
    return;
  GRand *rng = g_rand_new_with_seed(12);
  float g[MAX_LEN + 16], y[MAX_LEN + 16], out[16 + MAX_LEN + GUARD], inplace[MAX_LEN + 16];
  for (int64_t n = 0; n <= MAX_LEN; n += n < 40 ? 1 : 37)
    for (int64_t start = 0; start < 16; start += 3) {
      fill_values(g + start, n, rng);
      fill_values(y + start, n, rng);
      /* the special values meet each other, not only themselves */
      for (int64_t i = 0; i < n && i < 19; i++)
        y[start + i] = y[start + (i * 7) % (n < 19 ? n : 19)];
      for (size_t i = 0; i < G_N_ELEMENTS(out); i++)
        out[i] = from_bits(guard_bits);
      gs__relu_grad_f32_avx512(out + start, g + start, y + start, n);
      memcpy(inplace + start, g + start, sizeof(float) * (size_t)n);
      gs__relu_grad_f32_avx512(inplace + start, inplace + start, y + start, n);
      for (int64_t i = 0; i < n; i++) {
        uint32_t want = bits_of(relu_grad_ref(g[start + i], y[start + i]));
        if (bits_of(out[start + i]) != want || bits_of(inplace[start + i]) != want)
          g_error("relu_grad of g %08x, y %08x: %08x (in place %08x), want %08x",
                  bits_of(g[start + i]), bits_of(y[start + i]), bits_of(out[start + i]),
                  bits_of(inplace[start + i]), want);
      }
      check_guards(out, start, n, "relu_grad");
    }
  g_rand_free(rng);
}

/* Through the op: gs_relu of a contiguous f32 tensor with every kind of value, and its
 * gradient (the loss is the sum of relu(x) * w, so x's gradient is relu's backward of w). */
static void test_relu_op_matches_the_loops(void) {
  enum { N = 1000 };
  GRand *rng = g_rand_new_with_seed(13);
  float xv[N], wv[N], got[N];
  fill_values(xv, N, rng);
  for (int i = 0; i < N; i++)
    wv[i] = (float)g_rand_double_range(rng, -2, 2);
  gs_tensor x = gs_from_data(GS_F32, (int64_t[]){N}, 1, xv);
  gs_set_requires_grad(x, true);
  gs_tensor w = gs_from_data(GS_F32, (int64_t[]){N}, 1, wv);
  gs_tensor y = gs_relu(x), yw = gs_mul(y, w), loss = gs_sum(yw, NULL, 0, false);
  gs_copy_to(y, got, sizeof got);
  for (int i = 0; i < N; i++)
    g_assert_cmphex(bits_of(got[i]), ==, bits_of(relu_ref(xv[i])));
  gs_backward(loss);
  gs_copy_to(gs_grad(x), got, sizeof got);
  /* y holds relu(x): the gradient reads it, as torch's threshold_backward reads the result */
  for (int i = 0; i < N; i++)
    g_assert_cmphex(bits_of(got[i]), ==, bits_of(relu_grad_ref(wv[i], relu_ref(xv[i]))));
  DISPOSE_ALL(loss, yw, y, w, x);
  g_rand_free(rng);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/relu-avx512/relu-bits", test_relu_bits);
  g_test_add_func("/relu-avx512/relu-grad-bits", test_relu_grad_bits);
  test_add_leak_checked("/relu-avx512/op-matches-the-loops", test_relu_op_matches_the_loops);
  return g_test_run();
}
