/* cases-conv.c: gradcheck cases for convolution and pooling: conv2d with and without bias,
 * stride, padding, dilation and groups (height and width set differently, so a swapped pair
 * shows), unbatched input; max and average pooling with overlapping windows (a maximum
 * shared by two windows gets both gradients), padding, ceil mode and both counts of padding.
 * Inputs are transposed and sliced views. The 3x3 cases of unit stride (padding 0 and 1, batches,
 * several channels, more than 16 out channels) take conv-direct.c's path in float64. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                        \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return __VA_ARGS__;                                                                      \
  }

FN(f_conv_bias, gs_conv2d(in[0], in[1], in[2], NULL))
FN(f_conv_no_bias_strided,
   gs_conv2d(in[0], in[1], GS_NO_TENSOR,
             &(gs_conv2d_options){.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}}))
FN(f_conv_groups,
   gs_conv2d(in[0], in[1], in[2],
             &(gs_conv2d_options){.stride = {1, 2}, .padding = {1, 0}, .groups = 2}))
FN(f_conv_depthwise,
   gs_conv2d(in[0], in[1], in[2], &(gs_conv2d_options){.padding = {1, 1}, .groups = 3}))

FN(f_conv_pad1, gs_conv2d(in[0], in[1], in[2], &(gs_conv2d_options){.padding = {1, 1}}))
FN(f_conv_5x5_pad2, gs_conv2d(in[0], in[1], in[2], &(gs_conv2d_options){.padding = {2, 2}}))
FN(f_conv_pad1_no_bias,
   gs_conv2d(in[0], in[1], GS_NO_TENSOR, &(gs_conv2d_options){.padding = {1, 1}}))
FN(f_max_pool_2, gs_max_pool2d(in[0], &(gs_pool2d_options){.kernel = {2}}, NULL))
FN(f_max_pool_overlap,
   gs_max_pool2d(in[0], &(gs_pool2d_options){.kernel = {3, 2}, .stride = {1, 1}, .padding = {1, 1}},
                 NULL))
FN(f_max_pool_dilated_ceil,
   gs_max_pool2d(in[0],
                 &(gs_pool2d_options){.kernel = {2}, .stride = {2, 2}, .dilation = {2, 1},
                                      .ceil_mode = true},
                 NULL))
FN(f_avg_pool_2, gs_avg_pool2d(in[0], &(gs_pool2d_options){.kernel = {2}}))
FN(f_avg_pool_pad_include,
   gs_avg_pool2d(in[0], &(gs_pool2d_options){.kernel = {3, 2}, .stride = {2, 1}, .padding = {1, 1}}))
FN(f_avg_pool_pad_exclude_ceil,
   gs_avg_pool2d(in[0], &(gs_pool2d_options){.kernel = {3}, .stride = {2}, .padding = {1},
                                             .ceil_mode = true, .count_exclude_pad = true}))

const grad_case grad_cases_conv[] = {
    {"Conv2dBackward", "3x3 with bias", f_conv_bias, 3, {GI(4, 2, 3, 5, 5), GI_T(4, 4, 3, 3, 3), GI(1, 4)}},
    {"Conv2dBackward", "stride [2, 1], padding [1, 2], dilation [1, 2], no bias", f_conv_no_bias_strided, 2, {GI_S(4, 2, 2, 6, 5), GI(4, 3, 2, 3, 2)}},
    {"Conv2dBackward", "groups 2, stride [1, 2], padding [1, 0]", f_conv_groups, 3, {GI_T(4, 2, 4, 5, 6), GI_S(4, 6, 2, 3, 2), GI_S(1, 6)}},
    {"Conv2dBackward", "unbatched depthwise, padding 1", f_conv_depthwise, 3, {GI(3, 3, 4, 5), GI(4, 6, 1, 3, 3), GI(1, 6)}},
    {"Conv2dBackward", "padding 1, rows 8 wide", f_conv_pad1, 3, {GI(4, 2, 2, 3, 8), GI(4, 3, 2, 3, 3), GI(1, 3)}},
    {"Conv2dBackward", "padding 1, rows 4 wide", f_conv_pad1, 3, {GI_T(4, 2, 3, 4, 4), GI(4, 2, 3, 3, 3), GI(1, 2)}},
    {"Conv2dBackward", "5x5, padding 2, rows 4 wide (unit-stride im2col)", f_conv_5x5_pad2, 3, {GI(4, 2, 2, 8, 4), GI_T(4, 2, 2, 5, 5), GI(1, 2)}},
    {"Conv2dBackward", "direct 3x3, padding 0, 17 out channels", f_conv_bias, 3, {GI(4, 2, 2, 4, 5), GI_S(4, 17, 2, 3, 3), GI(1, 17)}},
    {"Conv2dBackward", "direct 3x3, padding 1, one row 16 wide", f_conv_pad1, 3, {GI_T(4, 3, 2, 1, 16), GI(4, 2, 2, 3, 3), GI(1, 2)}},
    {"Conv2dBackward", "direct 3x3, padding 1, no bias, 3 samples", f_conv_pad1_no_bias, 2, {GI(4, 3, 3, 5, 2), GI_T(4, 4, 3, 3, 3)}},
    {"MaxPool2dBackward", "2x2 windows", f_max_pool_2, 1, {GI_T(4, 2, 3, 4, 6)}},
    {"MaxPool2dBackward", "3x2 overlapping, padding 1", f_max_pool_overlap, 1, {GI_S(4, 2, 2, 5, 4)}},
    {"MaxPool2dBackward", "unbatched, dilation [2, 1], ceil mode", f_max_pool_dilated_ceil, 1, {GI(3, 2, 7, 5)}},
    {"AvgPool2dBackward", "2x2 windows", f_avg_pool_2, 1, {GI_S(4, 2, 3, 4, 6)}},
    {"AvgPool2dBackward", "3x2, stride [2, 1], padding counted", f_avg_pool_pad_include, 1, {GI_T(4, 2, 2, 5, 4)}},
    {"AvgPool2dBackward", "unbatched 3x3, padding excluded, ceil mode", f_avg_pool_pad_exclude_ceil, 1, {GI(3, 2, 6, 5)}},
};
const int grad_cases_conv_count = G_N_ELEMENTS(grad_cases_conv);
