/* cases-conv-transpose.c: gradcheck cases for the transposed convolution: with and without
 * bias, stride with output_padding, padding, dilation, groups (height and width set
 * differently, so a swapped pair shows) and an unbatched input. Inputs are transposed and
 * sliced views. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                        \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return __VA_ARGS__;                                                                      \
  }

FN(f_convt_bias, gs_conv_transpose2d(in[0], in[1], in[2], NULL))
FN(f_convt_strided,
   gs_conv_transpose2d(in[0], in[1], GS_NO_TENSOR,
                       &(gs_conv_transpose2d_options){.stride = {2, 3},
                                                      .padding = {1, 0},
                                                      .output_padding = {1, 2}}))
FN(f_convt_groups_dilated,
   gs_conv_transpose2d(in[0], in[1], in[2],
                       &(gs_conv_transpose2d_options){.stride = {1, 2},
                                                      .padding = {0, 1},
                                                      .dilation = {2, 1},
                                                      .groups = 2}))

const grad_case grad_cases_conv_transpose[] = {
    {"ConvTranspose2dBackward", "3x3 with bias", f_convt_bias, 3, {GI(4, 2, 3, 4, 5), GI_T(4, 3, 2, 3, 3), GI(1, 2)}},
    {"ConvTranspose2dBackward", "stride [2, 3], padding [1, 0], output_padding [1, 2], no bias", f_convt_strided, 2, {GI_S(4, 2, 2, 3, 4), GI(4, 2, 3, 3, 2)}},
    {"ConvTranspose2dBackward", "groups 2, dilation [2, 1], stride [1, 2], padding [0, 1]", f_convt_groups_dilated, 3, {GI_T(4, 2, 4, 3, 4), GI_S(4, 4, 2, 2, 3), GI_S(1, 4)}},
    {"ConvTranspose2dBackward", "unbatched 3x3 with bias", f_convt_bias, 3, {GI(3, 3, 4, 3), GI(4, 3, 2, 3, 3), GI(1, 2)}},
};
const int grad_cases_conv_transpose_count = G_N_ELEMENTS(grad_cases_conv_transpose);
