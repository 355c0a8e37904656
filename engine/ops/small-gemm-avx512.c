/* small-gemm-avx512.c: small f32 products with AVX-512 (small-gemm.h says when and why). A
 * block of up to 4 rows of c times up to 64 columns (8 rows times up to 32) keeps its sums in
 * 16 registers; each l reads one row of b (masked past n) and broadcasts one value of a per
 * row. A b read transposed (x @ W^T, a Linear layer's forward) is either transposed into rows
 * on the stack, 16 x 16 floats at a time in registers, or left in place and the product
 * computed as its transpose, c^T = b @ a^T, with a and c^T transposed instead: whichever
 * copies less (a batch of 16 rows against a weight of 128, the transposed way). */
#include <cblas.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <strings.h>

#include "ops-impl.h"
#include "small-gemm.h"

#define AVX512 __attribute__((target("avx512f,fma")))
/* The block's loops over its rows and vectors, unrolled so its sums stay in registers. */
#define UNROLL _Pragma("GCC unroll 16")

enum { ROWS = 4, VECS = 4, COLS = 16 * VECS };

bool gs__small_sgemm_fits(int64_t m, int64_t n, int64_t k) {
  return k > 0 && k <= GS__SMALL_GEMM_MAX_K && m > 0 && n > 0 &&
         m * n <= GS__SMALL_GEMM_ONE_THREAD_WORK / k && gs__cpu_has_avx512f();
}

/* Whether OpenBLAS runs this CPU on kernels with its small-matrix path (0.3.21's SkylakeX,
 * Cooperlake and SapphireRapids: no packing for small sizes); other cores (Haswell, Zen, as
 * OPENBLAS_CORETYPE may ask) pack both operands on every call. Asked once: the core is
 * chosen when OpenBLAS loads. */
static bool openblas_has_small_kernels(void) {
  static atomic_int known; /* 0: not asked yet, 1: no, 2: yes */
  int v = atomic_load_explicit(&known, memory_order_relaxed);
  if (!v) {
    const char *core = openblas_get_corename();
    bool small = core && (!strcasecmp(core, "SkylakeX") || !strcasecmp(core, "Cooperlake") ||
                          !strcasecmp(core, "SapphireRapids"));
    v = small ? 2 : 1;
    atomic_store_explicit(&known, v, memory_order_relaxed);
  }
  return v == 2;
}

bool gs__small_sgemm_wins(int64_t m, int64_t n, int64_t k, bool b_trans) {
  if (!gs__small_sgemm_fits(m, n, k))
    return false;
  bool small_work = m * n <= GS__SMALL_GEMM_MAX_WORK / k;
  if (!openblas_has_small_kernels())
    return small_work || openblas_get_num_threads() == 1;
  return small_work && b_trans && m >= 8 && n >= 16;
}

/* rows x (16 * vecs) of c (both compile-time constants once inlined); mask: the last vector's
 * columns that exist. */
AVX512 static inline __attribute__((always_inline)) void
block(int rows, int vecs, __mmask16 mask, int64_t k, const float *a, int64_t ars, int64_t acs,
      const float *b, int64_t ldb, const float *add, int64_t ldadd, float *c, int64_t ldc) {
  __m512 acc[2 * ROWS][VECS];
  UNROLL for (int i = 0; i < rows; i++) UNROLL for (int v = 0; v < vecs; v++) acc[i][v] =
      _mm512_setzero_ps();
  for (int64_t l = 0; l < k; l++, b += ldb) {
    __m512 bv[VECS];
    UNROLL for (int v = 0; v < vecs; v++) bv[v] =
        v < vecs - 1 ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(mask, b + 16 * v);
    UNROLL for (int i = 0; i < rows; i++) {
      __m512 x = _mm512_set1_ps(a[i * ars + l * acs]);
      UNROLL for (int v = 0; v < vecs; v++) acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
    }
  }
  UNROLL for (int i = 0; i < rows; i++) UNROLL for (int v = 0; v < vecs; v++) {
    __mmask16 m = v < vecs - 1 ? (__mmask16)0xffff : mask;
    float *out = c + i * ldc + 16 * v;
    __m512 r = acc[i][v];
    if (add) /* the addend last, as sgemm's kernels add to c */
      r = _mm512_add_ps(_mm512_maskz_loadu_ps(m, add + i * ldadd + 16 * v), r);
    _mm512_mask_storeu_ps(out, m, r);
  }
}

/* One panel of up to 64 columns (vecs vectors, the last one masked), all m rows, in blocks
 * of ROWS rows; 8-row blocks where the panel is one or two vectors wide, so a narrow product
 * (10 classes) still has enough independent sums to keep the FMA units busy. */
#define BLOCK(r, v)                                                                                \
  block(r, v, mask, k, a + i * ars, ars, acs, b, ldb, add ? add + i * ldadd : NULL, ldadd,         \
        c + i * ldc, ldc)
AVX512 static void panel(int vecs, __mmask16 mask, int64_t m, int64_t k, const float *a,
                         int64_t ars, int64_t acs, const float *b, int64_t ldb, const float *add,
                         int64_t ldadd, float *c, int64_t ldc) {
  int rows = vecs <= 2 ? 2 * ROWS : ROWS;
  for (int64_t i = 0; i < m; i += rows) {
    int left = (int)(m - i < rows ? m - i : rows);
    switch (vecs * 16 + left) {
    case 16 + 1: BLOCK(1, 1); break;
    case 16 + 2: BLOCK(2, 1); break;
    case 16 + 3: BLOCK(3, 1); break;
    case 16 + 4: BLOCK(4, 1); break;
    case 16 + 5: BLOCK(5, 1); break;
    case 16 + 6: BLOCK(6, 1); break;
    case 16 + 7: BLOCK(7, 1); break;
    case 16 + 8: BLOCK(8, 1); break;
    case 32 + 1: BLOCK(1, 2); break;
    case 32 + 2: BLOCK(2, 2); break;
    case 32 + 3: BLOCK(3, 2); break;
    case 32 + 4: BLOCK(4, 2); break;
    case 32 + 5: BLOCK(5, 2); break;
    case 32 + 6: BLOCK(6, 2); break;
    case 32 + 7: BLOCK(7, 2); break;
    case 32 + 8: BLOCK(8, 2); break;
    case 48 + 1: BLOCK(1, 3); break;
    case 48 + 2: BLOCK(2, 3); break;
    case 48 + 3: BLOCK(3, 3); break;
    case 48 + 4: BLOCK(4, 3); break;
    case 64 + 1: BLOCK(1, 4); break;
    case 64 + 2: BLOCK(2, 4); break;
    case 64 + 3: BLOCK(3, 4); break;
    default: BLOCK(4, 4); break;
    }
  }
}

/* b [k, n] with rows ldb apart. */
AVX512 static void product(int64_t m, int64_t n, int64_t k, const float *a, int64_t ars,
                           int64_t acs, const float *b, int64_t ldb, const float *add,
                           int64_t ldadd, float *c, int64_t ldc) {
  for (int64_t j = 0; j < n; j += COLS) {
    int64_t cols = n - j < COLS ? n - j : COLS;
    __mmask16 mask = (__mmask16)(cols % 16 ? (1u << (cols % 16)) - 1 : 0xffff);
    panel((int)((cols + 15) / 16), mask, m, k, a, ars, acs, b + j, ldb, add ? add + j : NULL, ldadd,
          c + j, ldc);
  }
}

/* The 16 x 16 floats in r, transposed in registers (unpack within 128-bit lanes, then
 * shuffles of whole lanes). */
AVX512 static inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; i++) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

/* The first count lanes (all 16 past 16). */
static inline __mmask16 first_lanes(int64_t count) {
  return (__mmask16)(count < 16 ? (1u << count) - 1 : 0xffff);
}

/* r = count rows of src (ld floats apart), mask's lanes of each, zeros past them, transposed in
 * registers: r[u] holds lane u of every row. */
AVX512 static inline __attribute__((always_inline)) void
load_transposed(__m512 r[16], const float *src, int64_t ld, int count, __mmask16 mask) {
  UNROLL for (int t = 0; t < 16; t++) r[t] =
      t < count ? _mm512_maskz_loadu_ps(mask, src + t * ld) : _mm512_setzero_ps();
  transpose16(r);
}

/* rows [k, n] (n floats apart) from b's element (l, j) at b[j * ldb + l], in 16 x 16 tiles
 * transposed in registers (zeros stand in past n and k and are not stored). */
AVX512 static void transpose_rows(int64_t n, int64_t k, const float *b, int64_t ldb, float *rows) {
  for (int64_t j = 0; j < n; j += 16) {
    int jn = (int)(n - j < 16 ? n - j : 16);
    for (int64_t l = 0; l < k; l += 16) {
      int ln = (int)(k - l < 16 ? k - l : 16);
      __m512 r[16];
      load_transposed(r, b + j * ldb + l, ldb, jn, first_lanes(ln));
      for (int u = 0; u < ln; u++)
        _mm512_mask_storeu_ps(rows + (l + u) * n + j, first_lanes(jn), r[u]);
    }
  }
}

/* c [rows, cols] (rows <= 16) = add + ct^T, from ct [cols, rows] with rows 16 floats apart, in
 * 16 x 16 tiles transposed in registers: the addend added last, as block adds it. */
AVX512 static void transpose_out(int64_t rows, int64_t cols, const float *ct, const float *add,
                                 int64_t ldadd, float *c, int64_t ldc) {
  for (int64_t j = 0; j < cols; j += 16) {
    int jn = (int)(cols - j < 16 ? cols - j : 16);
    __mmask16 jmask = first_lanes(jn);
    __m512 r[16];
    load_transposed(r, ct + j * 16, 16, jn, first_lanes(rows));
    for (int i = 0; i < rows; i++) {
      __m512 v = r[i];
      if (add)
        v = _mm512_add_ps(_mm512_maskz_loadu_ps(jmask, add + i * ldadd + j), v);
      _mm512_mask_storeu_ps(c + i * ldc + j, jmask, v);
    }
  }
}

AVX512 void gs__small_sgemm_transposed(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                                       bool a_trans, const float *b, int64_t ldb, const float *add,
                                       int64_t ldadd, float *c, int64_t ldc) {
  /* Stack: a^T for 16 rows of c (16 KB at the largest k) and c^T for 16 rows by CT_COLS. */
  enum { CT_COLS = 128 };
  float at[GS__SMALL_GEMM_MAX_K * 16], ct[CT_COLS * 16];
  for (int64_t i = 0; i < m; i += 16) {
    int64_t rows = m - i < 16 ? m - i : 16;
    /* a^T's row l (a's column l, from row i): read in place when a is read transposed */
    const float *arows = a + i;
    int64_t ld_at = lda;
    if (!a_trans) {
      transpose_rows(rows, k, a + i * lda, lda, at);
      arows = at;
      ld_at = rows;
    }
    for (int64_t j = 0; j < n; j += CT_COLS) {
      int64_t cols = n - j < CT_COLS ? n - j : CT_COLS;
      /* c^T's rows j.. (b's rows, broadcast) times a^T's rows, 16 floats apart */
      product(cols, rows, k, b + j * ldb, ldb, 1, arows, ld_at, NULL, 0, ct, 16);
      transpose_out(rows, cols, ct, add ? add + i * ldadd + j : NULL, ldadd, c + i * ldc + j, ldc);
    }
  }
}

/* Whether b read transposed is cheaper to multiply as c^T = b @ a^T (gs__small_sgemm_transposed:
 * copies a^T and c^T, vectors run along m) than by copying b's transpose (vectors run along
 * n), counting a 16 x 16 transpose as 40 vector FMAs (about its loads, shuffles and stores). */
static bool transposed_is_cheaper(int64_t m, int64_t n, int64_t k, bool a_trans) {
  int64_t mv = (m + 15) / 16, nv = (n + 15) / 16, kv = (k + 15) / 16;
  int64_t rows_way = 40 * nv * kv + m * nv * k;
  int64_t transposed_way = 40 * ((a_trans ? 0 : mv * kv) + mv * nv) + n * mv * k;
  return transposed_way < rows_way;
}

AVX512 void gs__small_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                            bool a_trans, const float *b, int64_t ldb, bool b_trans,
                            const float *add, int64_t ldadd, float *c, int64_t ldc) {
  int64_t ars = a_trans ? 1 : lda, acs = a_trans ? lda : 1;
  if (!b_trans) {
    product(m, n, k, a, ars, acs, b, ldb, add, ldadd, c, ldc);
    return;
  }
  if (transposed_is_cheaper(m, n, k, a_trans)) {
    gs__small_sgemm_transposed(m, n, k, a, lda, a_trans, b, ldb, add, ldadd, c, ldc);
    return;
  }
  /* b's transposed copy goes in slices of columns (16 KB on the stack: a caller's thread may
   * have a small stack); k <= GS__SMALL_GEMM_MAX_K keeps a slice at least 16 columns wide. */
  enum { STACK_FLOATS = 4096 };
  _Static_assert(STACK_FLOATS / GS__SMALL_GEMM_MAX_K >= 16, "a slice is one vector at least");
  float rows[STACK_FLOATS];
  int64_t step = STACK_FLOATS / k / 16 * 16;
  for (int64_t j = 0; j < n; j += step) {
    int64_t cols = n - j < step ? n - j : step;
    transpose_rows(cols, k, b + j * ldb, ldb, rows);
    product(m, cols, k, a, ars, acs, rows, cols, add ? add + j : NULL, ldadd, c + j, ldc);
  }
}
