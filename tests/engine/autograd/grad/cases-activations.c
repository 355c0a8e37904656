/* cases-activations.c: gradcheck cases for the activations of engine/ops/activations.c, on
 * transposed and sliced inputs spread wide enough to reach each piece of the piecewise ones. */
#include "grad-case.h"

#define UNARY(NAME, CALL)                                                                          \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return CALL;                                                                                   \
  }

UNARY(f_silu, gs_silu(in[0]))
UNARY(f_elu, gs_elu(in[0], 0.7))
UNARY(f_selu, gs_selu(in[0]))
UNARY(f_softplus, gs_softplus(in[0], 2.0, 3.0)) /* linear above x = 1.5 */
UNARY(f_hardtanh, gs_hardtanh(in[0], -0.8, 1.2))
UNARY(f_relu6, gs_relu6(in[0]))
UNARY(f_hardsigmoid, gs_hardsigmoid(in[0]))
UNARY(f_hardswish, gs_hardswish(in[0]))
UNARY(f_logsigmoid, gs_logsigmoid(in[0]))
UNARY(f_mish, gs_mish(in[0]))

/* Inputs over [LO, HI], for the ops whose pieces lie beyond [-2, 2]. */
#define WIDE(LAYOUT, LO, HI)                                                                       \
  { .ndim = 2, .shape = {4, 5}, .layout = LAYOUT, .lo = LO, .hi = HI }

const grad_case grad_cases_activations[] = {
    {"SiluBackward", "transposed", f_silu, 1, {GI_T(2, 3, 4)}},
    {"EluBackward", "elu, alpha 0.7, sliced", f_elu, 1, {GI_S(2, 3, 4)}},
    {"EluBackward", "selu, transposed", f_selu, 1, {GI_T(2, 3, 4)}},
    {"SoftplusBackward", "beta 2, threshold 3", f_softplus, 1, {GI_S(2, 3, 4)}},
    {"HardtanhBackward", "[-0.8, 1.2]", f_hardtanh, 1, {GI_T(2, 3, 4)}},
    {"HardtanhBackward", "relu6 over [-3, 9]", f_relu6, 1, {WIDE(LAYOUT_SLICED, -3, 9)}},
    {"HardsigmoidBackward", "over [-5, 5]", f_hardsigmoid, 1, {WIDE(LAYOUT_TRANSPOSED, -5, 5)}},
    {"HardswishBackward", "over [-5, 5]", f_hardswish, 1, {WIDE(LAYOUT_SLICED, -5, 5)}},
    {"LogSigmoidBackward", "over [-6, 6]", f_logsigmoid, 1, {WIDE(LAYOUT_TRANSPOSED, -6, 6)}},
    {"MishBackward", "over [-4, 4]", f_mish, 1, {WIDE(LAYOUT_CONTIGUOUS, -4, 4)}},
};
const int grad_cases_activations_count = G_N_ELEMENTS(grad_cases_activations);
