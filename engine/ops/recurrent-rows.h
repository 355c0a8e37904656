/* recurrent-rows.h: the f32 gate math of one row of the fused recurrence (recurrent.c) with
 * AVX-512, 16 hidden units a vector (recurrent-rows-avx512.c).
 *
 * Each pass computes exactly what the portable loop of recurrent-kernel.h computes, bit for
 * bit: the same operations in the same order, none fused into an FMA, and expf replayed
 * lane by lane as glibc computes it (its double-precision table and polynomial, with the
 * FMAs glibc's own FMA build uses); lanes glibc sends to its special cases (|x| >= 88, NaN,
 * infinities) call expf itself. tests/engine/nn/test-recurrent-vector.c checks each pass
 * against those loops bit for bit.
 *
 * Row layouts are recurrent.c's (work rows [i f g o | tanh c | c_prev | h_prev] for LSTM,
 * [r z n | hidden part of n | h_prev] for GRU, [h | h_prev] for RNN). H: hidden units. */
#pragma once

#include <stdint.h>

#include "recurrent-impl.h" /* GS__RECURRENT_TESTABLE: tests call these directly */

/* LSTM forward: g [4H] (pre-activations), c [H] (the state, updated), writes w's first 6H,
 * h [H] and o [H]. */
GS__RECURRENT_TESTABLE void gs__lstm_forward_row_avx512(const float *g, float *w, float *c,
                                                        float *h, float *o, int64_t H);
/* GRU forward: x [3H] (input side), g [3H] (hidden side with b_hh), hp [H] (the previous h),
 * writes w's first 4H, h and o. */
GS__RECURRENT_TESTABLE void gs__gru_forward_row_avx512(const float *x, const float *g,
                                                       const float *hp, float *w, float *h,
                                                       float *o, int64_t H);
/* RNN (tanh) forward: g [H], writes w's first H, h and o. */
GS__RECURRENT_TESTABLE void gs__rnn_tanh_forward_row_avx512(const float *g, float *w, float *h,
                                                            float *o, int64_t H);

/* LSTM backward: w (the forward's work row), go [H] (the output's gradient), dh and dc [H]
 * (the state's gradients: dh read, dc read and updated), writes dx [4H]. */
GS__RECURRENT_TESTABLE void gs__lstm_backward_row_avx512(const float *w, const float *go,
                                                         const float *dh, float *dc, float *dx,
                                                         int64_t H);
/* GRU backward: w, hp [H] (the previous h), go, dh [H] (read, then set to the direct path's
 * part), writes dx [3H] and dhg [3H] (the hidden side's). */
GS__RECURRENT_TESTABLE void gs__gru_backward_row_avx512(const float *w, const float *hp,
                                                        const float *go, float *dh, float *dx,
                                                        float *dhg, int64_t H);
