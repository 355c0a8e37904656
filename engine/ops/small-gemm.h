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

/* The largest k and m * n * k the small path takes; larger products go to sgemm. */
enum { GS__SMALL_GEMM_MAX_K = 256, GS__SMALL_GEMM_MAX_WORK = 1 << 20 };

/* Whether gs__small_sgemm can run here for a product of these sizes (the CPU has AVX-512,
 * the sizes are small). */
GS__SMALL_GEMM_TESTABLE bool gs__small_sgemm_fits(int64_t m, int64_t n, int64_t k);

/* Whether matmul should take the small path over sgemm for this product, as measured on
 * the digits example's shapes and around them (bench: CPU time per call, one OpenBLAS thread):
 * only when b is read transposed (x @ W^T), where sgemm packs a transposed copy of b on every
 * call: 16x64 @ (128x64)^T with a bias added takes 2.6 us here and 4.5 us in sgemm. With b read
 * as rows, OpenBLAS's own small-matrix kernels are as fast or faster; fewer than 8 rows of a
 * do not repay the transposed copy of b, nor fewer than 16 columns (one masked vector). */
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
