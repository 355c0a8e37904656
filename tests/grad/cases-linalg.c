/* cases-linalg.c: gradcheck cases for matrix products (every 1-D/2-D/batched combination of
 * matmul, addmm with broadcast bias and scaled terms), the index ops (with indices that repeat,
 * so gradients must add up), and joining and cutting (cat and stack of three inputs along a
 * middle dim, split and chunk pieces used together). Inputs are transposed and sliced views. */
#include "grad-case.h"

/* ---- products --------------------------------------------------------------------------- */

static gs_tensor f_matmul(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_matmul(in[0], in[1]);
}

#define ADDMM(NAME, BETA, ALPHA)                                                             \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return gs_addmm(in[0], in[1], in[2], BETA, ALPHA);                                       \
  }
ADDMM(f_addmm, 1.0, 1.0)
ADDMM(f_addmm_scaled, 0.5, -1.5)
ADDMM(f_addmm_beta_zero, 0.0, 2.0)

const grad_case grad_cases_linalg[] = {
    {"MatmulBackward", "1-D . 1-D", f_matmul, 2, {GI(1, 4), GI_S(1, 4)}},
    {"MatmulBackward", "1-D x 2-D", f_matmul, 2, {GI_S(1, 3), GI_T(2, 3, 4)}},
    {"MatmulBackward", "2-D x 1-D", f_matmul, 2, {GI_T(2, 3, 4), GI(1, 4)}},
    {"MatmulBackward", "2-D x 2-D", f_matmul, 2, {GI_T(2, 3, 4), GI_S(2, 4, 5)}},
    {"MatmulBackward", "batch [2, 1] x batch [3]", f_matmul, 2, {GI(4, 2, 1, 3, 4), GI_T(3, 3, 4, 2)}},
    {"MatmulBackward", "2-D x batch [2]", f_matmul, 2, {GI_S(2, 3, 4), GI(3, 2, 4, 2)}},
    {"MatmulBackward", "batch [2] x 2-D", f_matmul, 2, {GI_T(3, 2, 3, 4), GI_S(2, 4, 2)}},
    {"MatmulBackward", "1-D x batch [2]", f_matmul, 2, {GI(1, 3), GI_S(3, 2, 3, 4)}},
    {"MatmulBackward", "batch [2] x 1-D", f_matmul, 2, {GI_T(3, 2, 3, 4), GI_S(1, 4)}},
    {"AddmmBackward", "bias [5] broadcast over rows", f_addmm, 3, {GI(1, 5), GI_T(2, 3, 4), GI_S(2, 4, 5)}},
    {"AddmmBackward", "bias [3, 1], beta 0.5, alpha -1.5", f_addmm_scaled, 3, {GI(2, 3, 1), GI_S(2, 3, 4), GI_T(2, 4, 5)}},
    {"AddmmBackward", "full sliced bias, beta 0.5, alpha -1.5", f_addmm_scaled, 3, {GI_S(2, 3, 5), GI(2, 3, 4), GI(2, 4, 5)}},
    {"AddmmBackward", "beta 0: the bias gets zero", f_addmm_beta_zero, 3, {GI(0, 0), GI_T(2, 3, 4), GI(2, 4, 5)}},
};
const int grad_cases_linalg_count = G_N_ELEMENTS(grad_cases_linalg);
