/* recurrent-gemm.h: the small f32 matrix product each step of the fused recurrence runs
 * (recurrent-kernel.h): h @ W_hh^T forward and the gates' gradient @ W_hh backward, with
 * AVX-512 over a copy of W_hh packed once per call (recurrent-gemm-avx512.c).
 *
 * Why not sgemm: OpenBLAS packs both operands on every call, and W_hh (256 KB at hidden 128)
 * is the same for all 50 steps of a padded batch: the packing was a fifth of a padded LSTM
 * training step, and the product itself ran at two thirds of what the core does.
 *
 * The sum over k runs in one FMA chain from zero, in k order, and the addend is added last,
 * as OpenBLAS's kernels do: the products agree with sgemm bit for bit wherever OpenBLAS does
 * not split k into blocks (k = hidden on the forward side; 4 * hidden up to 384 backward),
 * and differ by rounding only where it does. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recurrent-impl.h" /* GS__RECURRENT_TESTABLE */

/* Floats the packed copy of a [k, n] operand takes (a multiple of 16: 64-byte rows). */
GS__RECURRENT_TESTABLE size_t gs__step_gemm_packed_size(int64_t k, int64_t n);

/* Packs B [k, n] (b[kk * ldb + j], or b[j * ldb + kk] when transposed) for gs__step_gemm;
 * packed: gs__step_gemm_packed_size(k, n) floats, 64-byte aligned. */
GS__RECURRENT_TESTABLE void gs__step_gemm_pack_avx512(const float *b, int64_t k, int64_t n,
                                                      bool transposed, int64_t ldb, float *packed);

/* c [m, n] (row stride ldc) = add + a @ B, a [m, k] (row stride lda), B packed as above;
 * add [m, n] with row stride ldadd (0: one row for every row of c; add may be c itself), or
 * NULL for none. */
GS__RECURRENT_TESTABLE void gs__step_gemm_avx512(int64_t m, int64_t n, int64_t k, const float *a,
                                                 int64_t lda, const float *packed, const float *add,
                                                 int64_t ldadd, float *c, int64_t ldc);
