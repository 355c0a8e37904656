/* cases-conv1d.c: gradcheck cases for the 1-D convolution: with and without bias, stride,
 * padding, dilation, groups and an unbatched input. Inputs are transposed and sliced views. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                              \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return __VA_ARGS__;                                                                            \
  }

FN(f_conv1d_bias, gs_conv1d(in[0], in[1], in[2], NULL))
FN(f_conv1d_strided, gs_conv1d(in[0], in[1], GS_NO_TENSOR,
                               &(gs_conv1d_options){.stride = 2, .padding = 2, .dilation = 2}))
FN(f_conv1d_groups, gs_conv1d(in[0], in[1], in[2], &(gs_conv1d_options){.padding = 1, .groups = 2}))

const grad_case grad_cases_conv1d[] = {
    {"Conv1dBackward",
     "kernel 3 with bias",
     f_conv1d_bias,
     3,
     {GI(3, 2, 3, 7), GI_T(3, 4, 3, 3), GI(1, 4)}},
    {"Conv1dBackward",
     "stride 2, padding 2, dilation 2, no bias",
     f_conv1d_strided,
     2,
     {GI_S(3, 2, 2, 9), GI(3, 3, 2, 3)}},
    {"Conv1dBackward",
     "groups 2, padding 1",
     f_conv1d_groups,
     3,
     {GI_T(3, 2, 4, 6), GI_S(3, 6, 2, 3), GI_S(1, 6)}},
    {"Conv1dBackward",
     "unbatched with bias",
     f_conv1d_bias,
     3,
     {GI(2, 3, 6), GI(3, 2, 3, 2), GI(1, 2)}},
};
const int grad_cases_conv1d_count = G_N_ELEMENTS(grad_cases_conv1d);
