/* shm-sum.c: the shared-memory reduction's inner loop (shm-reduce.c): elements [lo, hi) of one
 * bucket summed over every rank's buffer, rank 0's first, times a scale, and the result written
 * back into every rank's buffer.
 *
 * This runs after backward on every rank at once, with no idle core to hide it, so its cost
 * is the DDP step's cost over two ranks training without communication. Each element is read
 * and written once: an AVX-512 (or AVX2) copy keeps the sum in a register, where the portable
 * copy sums a block in an L1 array and copies it out. The peers' lines are in their cores'
 * caches; reading one and then writing it costs two coherence transactions (a shared copy,
 * then an upgrade), so the vector copies first prefetch each peer line for writing
 * (PREFETCHW), which fetches it exclusively in one.
 *
 * Every copy computes (x0 + x1 + ... + x(w-1)) * scale per element in that order and rounding
 * (C11 mode contracts nothing into an FMA), so they give the same bits: the ranks agree
 * whichever copy each runs, and a run matches the one-process sum as before. Chosen by the ops'
 * CPU level (ops/cpu-features.c: a plain test, capped by GS_CPU_FEATURES; not target_clones,
 * whose ifunc resolver crashes ThreadSanitizer at load). */
#include <stdint.h>
#include <string.h>

#include "dist-impl.h"
#include "ops-impl.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86_COPIES 1
#else
#define HAVE_X86_COPIES 0
#endif

enum { BLOCK = 1024, LINE_BYTES = 64 };

/* How far ahead (bytes) the peers' lines are prefetched for writing: enough lines in flight to
 * cover a cross-core transfer's latency. */
enum { PREFETCH_AHEAD = 2048 };

/* The portable copy: a block at a time into an L1 array, so the writes read the sum from L1. */
#define SUM_BLOCKED(NAME, T)                                                                       \
  static void NAME(char *const *base, size_t off, int world, int64_t lo, int64_t hi, T scale) {    \
    T acc[BLOCK];                                                                                  \
    for (int64_t i = lo; i < hi; i += BLOCK) {                                                     \
      int64_t n = hi - i < BLOCK ? hi - i : BLOCK;                                                 \
      memcpy(acc, (const T *)(base[0] + off) + i, (size_t)n * sizeof(T));                          \
      for (int q = 1; q < world; q++) {                                                            \
        const T *src = (const T *)(base[q] + off) + i;                                             \
        for (int64_t j = 0; j < n; j++)                                                            \
          acc[j] += src[j];                                                                        \
      }                                                                                            \
      if (scale != 1)                                                                              \
        for (int64_t j = 0; j < n; j++)                                                            \
          acc[j] *= scale;                                                                         \
      for (int q = 0; q < world; q++)                                                              \
        memcpy((T *)(base[q] + off) + i, acc, (size_t)n * sizeof(T));                              \
    }                                                                                              \
  }
SUM_BLOCKED(sum_blocked_f32, float)
SUM_BLOCKED(sum_blocked_f64, double)

#if HAVE_X86_COPIES
/* A vector copy for one dtype and width: V the vector type, N its lanes, LOAD/ADD/MUL/STORE
 * its intrinsics (unaligned loads and stores: shm-reduce.c's chunks start on a line, but the
 * buffers' alignment is not this file's to assume). The scalar tail uses the same expression.
 * Every rank's lines but this one's (me) are prefetched: its own are in its cache or arrive
 * by the hardware prefetcher. */
#define SUM_VECTOR(NAME, ATTR, T, V, N, LOAD, ADD, MUL, SET1, STORE)                               \
  ATTR static void NAME(char *const *base, size_t off, int world, int me, int64_t lo, int64_t hi,  \
                        T scale) {                                                                 \
    const V s = SET1(scale);                                                                       \
    const bool scaled = scale != 1;                                                                \
    const int64_t per_line = LINE_BYTES / (int64_t)sizeof(T);                                      \
    const int64_t ahead = PREFETCH_AHEAD / (int64_t)sizeof(T);                                     \
    /* the first lines ahead, before the loop keeps ahead of its reads */                          \
    for (int q = 0; q < world; q++)                                                                \
      for (int64_t j = lo; q != me && j < lo + ahead && j < hi; j += per_line)                     \
        __builtin_prefetch((T *)(base[q] + off) + j, 1, 3);                                        \
    int64_t i = lo;                                                                                \
    for (; i + N <= hi; i += N) {                                                                  \
      if ((i & (per_line - 1)) == 0 && i + ahead < hi)                                             \
        for (int q = 0; q < world; q++)                                                            \
          if (q != me)                                                                             \
            __builtin_prefetch((T *)(base[q] + off) + i + ahead, 1, 3);                            \
      V acc = LOAD((const T *)(base[0] + off) + i);                                                \
      for (int q = 1; q < world; q++)                                                              \
        acc = ADD(acc, LOAD((const T *)(base[q] + off) + i));                                      \
      if (scaled)                                                                                  \
        acc = MUL(acc, s);                                                                         \
      for (int q = 0; q < world; q++)                                                              \
        STORE((T *)(base[q] + off) + i, acc);                                                      \
    }                                                                                              \
    for (; i < hi; i++) {                                                                          \
      T acc = ((const T *)(base[0] + off))[i];                                                     \
      for (int q = 1; q < world; q++)                                                              \
        acc += ((const T *)(base[q] + off))[i];                                                    \
      if (scaled)                                                                                  \
        acc *= scale;                                                                              \
      for (int q = 0; q < world; q++)                                                              \
        ((T *)(base[q] + off))[i] = acc;                                                           \
    }                                                                                              \
  }

#define AVX512_ATTR __attribute__((target("avx512f,prfchw")))
#define AVX2_ATTR __attribute__((target("avx2,prfchw")))
SUM_VECTOR(sum_avx512_f32, AVX512_ATTR, float, __m512, 16, _mm512_loadu_ps, _mm512_add_ps,
           _mm512_mul_ps, _mm512_set1_ps, _mm512_storeu_ps)
SUM_VECTOR(sum_avx512_f64, AVX512_ATTR, double, __m512d, 8, _mm512_loadu_pd, _mm512_add_pd,
           _mm512_mul_pd, _mm512_set1_pd, _mm512_storeu_pd)
SUM_VECTOR(sum_avx2_f32, AVX2_ATTR, float, __m256, 8, _mm256_loadu_ps, _mm256_add_ps, _mm256_mul_ps,
           _mm256_set1_ps, _mm256_storeu_ps)
SUM_VECTOR(sum_avx2_f64, AVX2_ATTR, double, __m256d, 4, _mm256_loadu_pd, _mm256_add_pd,
           _mm256_mul_pd, _mm256_set1_pd, _mm256_storeu_pd)
#endif

void gs__shm_sum(char *const *base, size_t off, int world, int me, gs_dtype dtype, int64_t lo,
                 int64_t hi, double scale) {
  bool f32 = dtype == GS_F32;
#if HAVE_X86_COPIES
  gs__cpu_level level = gs__cpu_level_get();
  if (level >= GS__CPU_AVX512) {
    if (f32)
      sum_avx512_f32(base, off, world, me, lo, hi, (float)scale);
    else
      sum_avx512_f64(base, off, world, me, lo, hi, scale);
    return;
  }
  if (level >= GS__CPU_AVX2) {
    if (f32)
      sum_avx2_f32(base, off, world, me, lo, hi, (float)scale);
    else
      sum_avx2_f64(base, off, world, me, lo, hi, scale);
    return;
  }
#else
  (void)me;
#endif
  if (f32)
    sum_blocked_f32(base, off, world, lo, hi, (float)scale);
  else
    sum_blocked_f64(base, off, world, lo, hi, scale);
}
