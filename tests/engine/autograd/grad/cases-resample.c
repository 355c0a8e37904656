/* cases-resample.c: gradcheck cases for the resampling ops that blend pixels: grid_sample in
 * each mode and padding mode (gradients to the image and to the grid, whose points reach
 * outside the image; 4-D images and 5-D volumes), bicubic resizing (up and down, align_corners or
 * not, given scales) and the affine grid (2-D and 3-D). The image is weighted first so that a
 * gradient added at the wrong pixel changes the result. */
#include "grad-case.h"

/* in[0] * (1, 2, 3, ...): every element's gradient is distinct. */
static gs_tensor weighted(gs_tensor x) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(x, shape);
  gs_tensor flat = gs_arange(1, (double)gs_numel(x) + 1, 1, GS_F64);
  gs_tensor w = gs_reshape(flat, shape, nd);
  gs_tensor y = gs_mul(x, w);
  gs_dispose(flat), gs_dispose(w);
  return y;
}

/* grid_sample(weighted in[0], in[1]) in a mode, padding mode and alignment */
#define SAMPLE_CASE(NAME, MODE, PAD, ALIGN)                                                        \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    gs_tensor x = weighted(in[0]);                                                                 \
    gs_tensor r = gs_grid_sample(x, in[1], MODE, PAD, ALIGN);                                      \
    gs_dispose(x);                                                                                 \
    return r;                                                                                      \
  }
SAMPLE_CASE(f_bilinear_zeros, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_ZEROS, false)
SAMPLE_CASE(f_bilinear_border, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_BORDER, true)
SAMPLE_CASE(f_bilinear_reflect, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_REFLECTION, false)
SAMPLE_CASE(f_bilinear_reflect_ac, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_REFLECTION, true)
SAMPLE_CASE(f_nearest_zeros, GS_GRID_SAMPLE_NEAREST, GS_GRID_PADDING_ZEROS, false)
SAMPLE_CASE(f_nearest_reflect, GS_GRID_SAMPLE_NEAREST, GS_GRID_PADDING_REFLECTION, true)
SAMPLE_CASE(f_bicubic_zeros, GS_GRID_SAMPLE_BICUBIC, GS_GRID_PADDING_ZEROS, true)
SAMPLE_CASE(f_bicubic_border, GS_GRID_SAMPLE_BICUBIC, GS_GRID_PADDING_BORDER, false)
SAMPLE_CASE(f_bicubic_reflect, GS_GRID_SAMPLE_BICUBIC, GS_GRID_PADDING_REFLECTION, false)
/* the same on volumes (5-D: trilinear, nearest) */
SAMPLE_CASE(f_trilinear_zeros, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_ZEROS, false)
SAMPLE_CASE(f_trilinear_border, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_BORDER, true)
SAMPLE_CASE(f_trilinear_reflect, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_REFLECTION, false)
SAMPLE_CASE(f_nearest_3d_border, GS_GRID_SAMPLE_NEAREST, GS_GRID_PADDING_BORDER, false)

#define BICUBIC_CASE(NAME, CALL)                                                                   \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                                     \
    (void)n, (void)u;                                                                              \
    gs_tensor x = weighted(in[0]);                                                                 \
    gs_tensor r = CALL;                                                                            \
    gs_dispose(x);                                                                                 \
    return r;                                                                                      \
  }
BICUBIC_CASE(f_bicubic_up, gs_upsample_bicubic2d(x, (int64_t[]){7, 9}, NULL, false))
BICUBIC_CASE(f_bicubic_down_ac, gs_upsample_bicubic2d(x, (int64_t[]){2, 3}, NULL, true))
BICUBIC_CASE(f_bicubic_scales,
             gs_upsample_bicubic2d(x, (int64_t[]){6, 5}, (double[]){0.5, 1.0 / 1.5}, false))

static gs_tensor f_affine_2d(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_affine_grid(in[0], (int64_t[]){2, 3, 4, 5}, 4, false);
}
static gs_tensor f_affine_3d(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_affine_grid(in[0], (int64_t[]){2, 1, 3, 2, 4}, 5, true);
}

/* The image [2, 3, 4, 5] and a grid [2, 3, 4, 2] with points in [-1.3, 1.3): some outside. */
#define IMAGE_AND_GRID                                                                             \
  {                                                                                                \
    GI(4, 2, 3, 4, 5), {                                                                           \
      .ndim = 4, .shape = {2, 3, 4, 2}, .layout = LAYOUT_CONTIGUOUS, .lo = -1.3, .hi = 1.3         \
    }                                                                                              \
  }
/* A wider reach for reflection (several flips) and a transposed image. */
#define IMAGE_AND_FAR_GRID                                                                         \
  {                                                                                                \
    GI_T(4, 1, 2, 3, 4), {                                                                         \
      .ndim = 4, .shape = {1, 2, 5, 2}, .layout = LAYOUT_CONTIGUOUS, .lo = -3.5, .hi = 3.5         \
    }                                                                                              \
  }

/* A volume [2, 2, 3, 4, 3] and a grid [2, 2, 3, 2, 3] with points in [-1.3, 1.3); a
 * transposed volume and a far grid for reflection. */
#define VOLUME_AND_GRID                                                                            \
  {                                                                                                \
    GI(5, 2, 2, 3, 4, 3), {                                                                        \
      .ndim = 5, .shape = {2, 2, 3, 2, 3}, .layout = LAYOUT_CONTIGUOUS, .lo = -1.3, .hi = 1.3      \
    }                                                                                              \
  }
#define VOLUME_AND_FAR_GRID                                                                        \
  {                                                                                                \
    GI_T(5, 1, 2, 3, 2, 4), {                                                                      \
      .ndim = 5, .shape = {1, 2, 2, 3, 3}, .layout = LAYOUT_CONTIGUOUS, .lo = -3.5, .hi = 3.5      \
    }                                                                                              \
  }

const grad_case grad_cases_resample[] = {
    {"GridSampler3dBackward", "trilinear, zeros", f_trilinear_zeros, 2, VOLUME_AND_GRID},
    {"GridSampler3dBackward", "trilinear, border, aligned", f_trilinear_border, 2, VOLUME_AND_GRID},
    {"GridSampler3dBackward", "trilinear, reflection", f_trilinear_reflect, 2, VOLUME_AND_FAR_GRID},
    {"GridSampler3dBackward", "nearest, border", f_nearest_3d_border, 2, VOLUME_AND_GRID},
    {"GridSampler2dBackward", "bilinear, zeros", f_bilinear_zeros, 2, IMAGE_AND_GRID},
    {"GridSampler2dBackward", "bilinear, border, aligned", f_bilinear_border, 2, IMAGE_AND_GRID},
    {"GridSampler2dBackward", "bilinear, reflection", f_bilinear_reflect, 2, IMAGE_AND_FAR_GRID},
    {"GridSampler2dBackward", "bilinear, reflection, aligned", f_bilinear_reflect_ac, 2,
     IMAGE_AND_FAR_GRID},
    {"GridSampler2dBackward", "nearest, zeros", f_nearest_zeros, 2, IMAGE_AND_GRID},
    {"GridSampler2dBackward", "nearest, reflection, aligned", f_nearest_reflect, 2,
     IMAGE_AND_FAR_GRID},
    {"GridSampler2dBackward", "bicubic, zeros, aligned", f_bicubic_zeros, 2, IMAGE_AND_GRID},
    {"GridSampler2dBackward", "bicubic, border", f_bicubic_border, 2, IMAGE_AND_GRID},
    {"GridSampler2dBackward", "bicubic, reflection", f_bicubic_reflect, 2, IMAGE_AND_FAR_GRID},
    {"UpsampleBicubic2dBackward", "[2, 2, 3, 4] to 7 x 9", f_bicubic_up, 1, {GI(4, 2, 2, 3, 4)}},
    {"UpsampleBicubic2dBackward",
     "[1, 2, 5, 6] to 2 x 3, aligned, sliced",
     f_bicubic_down_ac,
     1,
     {GI_S(4, 1, 2, 5, 6)}},
    {"UpsampleBicubic2dBackward",
     "[1, 1, 3, 3] by scales 2 and 1.5",
     f_bicubic_scales,
     1,
     {GI_T(4, 1, 1, 3, 3)}},
    {"AffineGridGeneratorBackward", "[2, 2, 3] for 4 x 5", f_affine_2d, 1, {GI(3, 2, 2, 3)}},
    {"AffineGridGeneratorBackward",
     "[2, 3, 4] for 3 x 2 x 4, aligned",
     f_affine_3d,
     1,
     {GI_T(3, 2, 3, 4)}},
};
const int grad_cases_resample_count = G_N_ELEMENTS(grad_cases_resample);
