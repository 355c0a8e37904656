/* small-gemm.h: f32 matrix products too small for OpenBLAS's per-call work (buffers, packing,
 * thread checks) to pay off, such as an MLP's layers on a batch of 16 rows (the digits
 * example: 16x64 @ 64x128 and the like, a few microseconds each through sgemm, most of it
 * packing), computed with AVX-512 straight from the operands' rows (small-gemm-avx512.c).
 *
 * Each output is one FMA chain from zero in k order, plus the addend last, as OpenBLAS's main
 * kernel sums when k is not split into blocks. OpenBLAS itself sums in other orders on some
 * paths (dot products over k when b is read transposed, other kernels for odd columns), so
 * f32 products can differ from sgemm's by rounding; f64 always goes to dgemm.
 * tests/engine/ops/test-small-gemm.c checks the order bit for bit and sgemm to rounding. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Visible to the tests, which compare it with sgemm. */
#define GS__SMALL_GEMM_TESTABLE __attribute__((visibility("default")))

/* The largest k and m * n * k the small path takes; larger products go to sgemm. Up to
 * GS__SMALL_GEMM_MAX_WORK it may be chosen whatever OpenBLAS's threads; up to
 * GS__SMALL_GEMM_ONE_THREAD_WORK only where OpenBLAS runs one thread (it splits larger
 * products between its threads, the small path never). */
enum {
  GS__SMALL_GEMM_MAX_K = 256,
  GS__SMALL_GEMM_MAX_WORK = 1 << 20,
  GS__SMALL_GEMM_ONE_THREAD_WORK = 1 << 24
};

/* Whether gs__small_sgemm can run here for a product of these sizes (the CPU has AVX-512, k
 * is at most GS__SMALL_GEMM_MAX_K and m * n * k at most GS__SMALL_GEMM_ONE_THREAD_WORK). */
GS__SMALL_GEMM_TESTABLE bool gs__small_sgemm_fits(int64_t m, int64_t n, int64_t k);

/* Whether matmul should take the small path over sgemm for this product, as measured on
 * the digits example's shapes and around them (CPU time per call, one OpenBLAS thread; the
 * numbers are in doc/benchmarks.md). Where OpenBLAS runs kernels without a small-matrix path
 * (Haswell's, which OPENBLAS_CORETYPE=Haswell picks, or Zen's), sgemm packs both operands on
 * every call and the small path is faster for every size it fits (0.13-0.92 of sgemm's time
 * over m 1-256, n 10-256, k 10-256, either operand transposed): the digits example's five
 * products take 4.4 us here against 9.9 us in sgemm. At one OpenBLAS thread that holds up to
 * 2^24 multiply-adds too (0.42-0.83 of sgemm's time on six shapes from 1437x128x64, the
 * digits example's evaluation, to 1024x1024x16 and 256x256x256), so there it takes those.
 * OpenBLAS's AVX-512 kernels (SkylakeX and later) have one: there the small path wins only when b
 * is read transposed (x @ W^T), where sgemm still copies a transposed b: 16x64 @ (128x64)^T with a
 * bias added takes 1.9 us here and 3.3 us in sgemm; with b read as rows OpenBLAS's own small
 * kernels are as fast or faster, and fewer than 8 rows of a or 16 columns do not repay the copies.
 */
GS__SMALL_GEMM_TESTABLE bool gs__small_sgemm_wins(int64_t m, int64_t n, int64_t k, bool b_trans);

/* c [m, n] (rows ldc apart) = add + a @ b (sgemm with alpha 1, beta 1 with add = c and ldadd
 * = ldc, beta 0 with add NULL); add's row i at add + i * ldadd (ldadd 0: one row, a bias, for
 * every row of c, which saves copying it into c first). a's element (i, l) is a[i * lda + l], or
 * a[l * lda + i] when a_trans; b's element (l, j) is b[l * ldb + j], or b[j * ldb + l] when
 * b_trans. Only when gs__small_sgemm_fits said yes. */
GS__SMALL_GEMM_TESTABLE void gs__small_sgemm(int64_t m, int64_t n, int64_t k, const float *a,
                                             int64_t lda, bool a_trans, const float *b, int64_t ldb,
                                             bool b_trans, const float *add, int64_t ldadd,
                                             float *c, int64_t ldc);

/* The same product with b read transposed (b's element (l, j) at b[j * ldb + l]), computed as
 * its transpose c^T = b @ a^T with a's rows transposed 16 at a time (in place when a_trans),
 * so that b, which can be much larger than a (a layer's weight against a batch of 16 rows),
 * is never copied; each output is the same FMA chain and addend as gs__small_sgemm's.
 * gs__small_sgemm takes this way when its copies cost less; visible to the tests, which check
 * both ways on every shape. */
GS__SMALL_GEMM_TESTABLE void gs__small_sgemm_transposed(int64_t m, int64_t n, int64_t k,
                                                        const float *a, int64_t lda, bool a_trans,
                                                        const float *b, int64_t ldb,
                                                        const float *add, int64_t ldadd, float *c,
                                                        int64_t ldc);
