/* cases-conv3d.c: gradcheck cases for the volumetric ops: conv3d with and without bias,
 * stride, padding, dilation and groups (depth, height and width set differently, so a swapped
 * pair shows), unbatched input; conv_transpose3d with output padding and groups; max and
 * average pooling over volumes with overlapping windows, padding, dilation, ceil mode and both
 * counts of padding. Inputs are transposed and sliced views. */
#include "grad-case.h"

#define FN(NAME, ...)                                                                              \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    return __VA_ARGS__;                                                                            \
  }

FN(f_conv3d_bias, gs_conv3d(in[0], in[1], in[2], NULL))
FN(f_conv3d_strided,
   gs_conv3d(in[0], in[1], GS_NO_TENSOR,
             &(gs_conv3d_options){
                 .stride = {2, 1, 2}, .padding = {1, 0, 2}, .dilation = {1, 2, 1}}))
FN(f_conv3d_groups,
   gs_conv3d(in[0], in[1], in[2], &(gs_conv3d_options){.padding = {1, 1, 0}, .groups = 2}))
FN(f_conv_t3d,
   gs_conv_transpose3d(in[0], in[1], in[2],
                       &(gs_conv_transpose3d_options){
                           .stride = {2, 1, 2}, .padding = {1, 0, 1}, .output_padding = {1, 0, 0}}))
FN(f_conv_t3d_groups,
   gs_conv_transpose3d(in[0], in[1], GS_NO_TENSOR,
                       &(gs_conv_transpose3d_options){.dilation = {2, 1, 1}, .groups = 2}))
FN(f_max_pool3d_2, gs_max_pool3d(in[0], &(gs_pool3d_options){.kernel = {2}}, NULL))
FN(f_max_pool3d_overlap,
   gs_max_pool3d(
       in[0], &(gs_pool3d_options){.kernel = {2, 3, 2}, .stride = {1, 2, 1}, .padding = {1, 1, 0}},
       NULL))
FN(f_max_pool3d_dilated_ceil,
   gs_max_pool3d(in[0],
                 &(gs_pool3d_options){
                     .kernel = {2}, .stride = {2, 2, 1}, .dilation = {1, 2, 1}, .ceil_mode = true},
                 NULL))
FN(f_avg_pool3d_2, gs_avg_pool3d(in[0], &(gs_pool3d_options){.kernel = {2}}))
FN(f_avg_pool3d_pad_include,
   gs_avg_pool3d(in[0], &(gs_pool3d_options){
                            .kernel = {3, 2, 2}, .stride = {2, 1, 2}, .padding = {1, 1, 0}}))
FN(f_avg_pool3d_pad_exclude_ceil,
   gs_avg_pool3d(in[0], &(gs_pool3d_options){.kernel = {3},
                                             .stride = {2},
                                             .padding = {1},
                                             .ceil_mode = true,
                                             .count_exclude_pad = true}))

const grad_case grad_cases_conv3d[] = {
    {"Conv3dBackward",
     "2x3x2 with bias",
     f_conv3d_bias,
     3,
     {GI(5, 2, 2, 3, 4, 4), GI_T(5, 3, 2, 2, 3, 2), GI(1, 3)}},
    {"Conv3dBackward",
     "stride [2, 1, 2], padding [1, 0, 2], dilation [1, 2, 1], no bias",
     f_conv3d_strided,
     2,
     {GI_S(5, 2, 2, 4, 5, 3), GI(5, 2, 2, 2, 2, 3)}},
    {"Conv3dBackward",
     "groups 2, padding [1, 1, 0], unbatched",
     f_conv3d_groups,
     3,
     {GI_T(4, 4, 3, 3, 4), GI_S(5, 4, 2, 2, 3, 2), GI_S(1, 4)}},
    {"ConvTranspose3dBackward",
     "stride [2, 1, 2], padding [1, 0, 1], output padding [1, 0, 0], with bias",
     f_conv_t3d,
     3,
     {GI(5, 2, 3, 2, 3, 2), GI_T(5, 3, 2, 3, 2, 3), GI(1, 2)}},
    {"ConvTranspose3dBackward",
     "groups 2, dilation [2, 1, 1], unbatched",
     f_conv_t3d_groups,
     2,
     {GI_S(4, 4, 2, 3, 2), GI(5, 4, 1, 2, 2, 2)}},
    {"MaxPool3dBackward", "2x2x2 windows", f_max_pool3d_2, 1, {GI_T(5, 2, 2, 4, 4, 6)}},
    {"MaxPool3dBackward",
     "2x3x2 overlapping, stride [1, 2, 1], padding [1, 1, 0]",
     f_max_pool3d_overlap,
     1,
     {GI_S(5, 1, 2, 3, 5, 4)}},
    {"MaxPool3dBackward",
     "unbatched, dilation [1, 2, 1], ceil mode",
     f_max_pool3d_dilated_ceil,
     1,
     {GI(4, 2, 5, 7, 5)}},
    {"AvgPool3dBackward", "2x2x2 windows", f_avg_pool3d_2, 1, {GI_S(5, 2, 2, 4, 4, 6)}},
    {"AvgPool3dBackward",
     "3x2x2, stride [2, 1, 2], padding counted",
     f_avg_pool3d_pad_include,
     1,
     {GI_T(5, 1, 2, 5, 4, 5)}},
    {"AvgPool3dBackward",
     "unbatched 3x3x3, padding excluded, ceil mode",
     f_avg_pool3d_pad_exclude_ceil,
     1,
     {GI(4, 2, 4, 6, 5)}},
};
const int grad_cases_conv3d_count = G_N_ELEMENTS(grad_cases_conv3d);
