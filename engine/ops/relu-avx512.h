/* relu-avx512.h: relu and relu's gradient over contiguous f32 arrays with AVX-512, 16 lanes a
 * vector (relu-avx512.c), for kernels.c's loops when gs__cpu_has_avx512f().
 *
 * Why: in an MLP's training step these are two of the few passes between the products (one
 * each per hidden layer, 64K elements a pass in bench-mlp), and the baseline loops' SSE2 takes
 * 4 lanes: on warm data a pass took 5-7 us there against 2-3 us with 16 lanes.
 *
 * Each computes the portable loop's expression with the same comparisons and selects, so the
 * bits are the same, NaN included. out may be x (or g) itself: each element is read before
 * it is written, and no later element is read after it. */
#pragma once

#include <stdint.h>

/* Visible to tests/engine/ops/test-relu-avx512.c, which checks them bit for bit. */
#define GS__RELU_TESTABLE __attribute__((visibility("default")))

/* out[i] = x[i] > 0 ? x[i] : (x[i] is NaN ? x[i] : 0), kernels.c's relu_f32. */
GS__RELU_TESTABLE void gs__relu_f32_avx512(float *out, const float *x, int64_t n);

/* out[i] = y[i] <= 0 ? 0 : g[i] (so g[i] where y[i] is NaN), kernels.c's relu_grad_f32. */
GS__RELU_TESTABLE void gs__relu_grad_f32_avx512(float *out, const float *g, const float *y,
                                                int64_t n);
