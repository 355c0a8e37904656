/* test-resample.c: grid_sample, affine_grid and bicubic resizing from C: the identity affine
 * grid samples the image back in every mode and padding; points outside read as the padding
 * says; float32 agrees with float64; a constant image stays constant under bicubic resizing
 * and resizing to the same size is the identity; every bad argument is reported. (Gradients
 * are checked in tests/engine/autograd, values against torch in tests/python.) */
#include "test-util.h"

/* A [1, 2, 3, 4] image of distinct values in dtype. */
static gs_tensor image(gs_dtype dtype) {
  gs_tensor flat = gs_arange(0, 24, 1, GS_F64);
  gs_tensor sq = gs_mul(flat, flat);
  gs_tensor shaped = gs_reshape(sq, (int64_t[]){1, 2, 3, 4}, 4);
  gs_tensor t = gs_to_dtype(shaped, dtype);
  DISPOSE_ALL(flat, sq, shaped);
  return t;
}

static gs_tensor identity_theta(gs_dtype dtype) {
  gs_tensor t = gs_from_data(GS_F64, (int64_t[]){1, 2, 3}, 3, (double[]){1, 0, 0, 0, 1, 0});
  gs_tensor r = gs_to_dtype(t, dtype);
  gs_dispose(t);
  return r;
}

static void test_identity_grid_reads_the_image_back(void) {
  for (int d = 0; d < 2; d++) {
    gs_dtype dt = d ? GS_F32 : GS_F64;
    gs_tensor x = image(dt), theta = identity_theta(dt);
    double *want = test_values(x);
    for (int align = 0; align < 2; align++) {
      gs_tensor grid = gs_affine_grid(theta, (int64_t[]){1, 2, 3, 4}, 4, align);
      g_assert_cmpint(gs_ndim(grid), ==, 4);
      g_assert_cmpint(gs_size(grid, 3), ==, 2);
      for (int mode = 0; mode < 3; mode++)
        for (int pad = 0; pad < 3; pad++) {
          test_set_context("dtype %s, mode %d, padding %d, align %d", gs_dtype_name(dt), mode, pad,
                           align);
          gs_tensor y = gs_grid_sample(x, grid, mode, pad, align);
          test_assert_values(y, (int64_t[]){1, 2, 3, 4}, 4, want, d ? 1e-3 : 1e-9, 1e-5);
          gs_dispose(y);
        }
      gs_dispose(grid);
    }
    g_free(want);
    DISPOSE_ALL(x, theta);
  }
}

/* One point far to the left of the image, on the middle row: zeros reads 0, border the left
 * column, reflection a pixel inside (not 0). */
static void test_outside_points_follow_the_padding(void) {
  gs_tensor x = image(GS_F64);
  gs_tensor grid = gs_from_data(GS_F64, (int64_t[]){1, 1, 1, 2}, 4, (double[]){-7.5, 0.0});
  double *v = test_values(x); /* pixel (c, 1, 0) is v[c * 12 + 4] */
  gs_tensor zeros = gs_grid_sample(x, grid, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_ZEROS, true);
  test_assert_values(zeros, (int64_t[]){1, 2, 1, 1}, 4, (double[]){0, 0}, 0, 0);
  gs_tensor border = gs_grid_sample(x, grid, GS_GRID_SAMPLE_NEAREST, GS_GRID_PADDING_BORDER, true);
  test_assert_values(border, (int64_t[]){1, 2, 1, 1}, 4, (double[]){v[4], v[16]}, 0, 0);
  /* aligned, x = -7.5 is pixel position -9.75; mirrored at 0 and 3 it lands on 2.25 */
  gs_tensor refl =
      gs_grid_sample(x, grid, GS_GRID_SAMPLE_BILINEAR, GS_GRID_PADDING_REFLECTION, true);
  double want[2];
  for (int c = 0; c < 2; c++)
    want[c] = 0.75 * v[c * 12 + 4 + 2] + 0.25 * v[c * 12 + 4 + 3];
  test_assert_values(refl, (int64_t[]){1, 2, 1, 1}, 4, want, 1e-9, 0);
  g_free(v);
  DISPOSE_ALL(x, grid, zeros, border, refl);
}

static void test_bicubic_resizing(void) {
  gs_tensor ones = gs_ones(GS_F64, (int64_t[]){2, 1, 3, 5}, 4);
  double *want = g_new(double, 2 * 7 * 4);
  for (int i = 0; i < 2 * 7 * 4; i++)
    want[i] = 1.0;
  for (int align = 0; align < 2; align++) {
    gs_tensor y = gs_upsample_bicubic2d(ones, (int64_t[]){7, 4}, NULL, align);
    test_assert_values(y, (int64_t[]){2, 1, 7, 4}, 4, want, 1e-12, 0);
    gs_dispose(y);
  }
  g_free(want);
  gs_tensor x = image(GS_F32);
  double *v = test_values(x);
  gs_tensor same = gs_upsample_bicubic2d(x, (int64_t[]){3, 4}, NULL, false);
  test_assert_values(same, (int64_t[]){1, 2, 3, 4}, 4, v, 1e-4, 1e-6);
  g_assert_cmpint(gs_dtype_of(same), ==, GS_F32);
  g_free(v);
  DISPOSE_ALL(ones, x, same);
}

static void test_bad_arguments_are_reported(void) {
  gs_tensor x = image(GS_F64), x32 = image(GS_F32);
  gs_tensor grid = gs_zeros(GS_F64, (int64_t[]){1, 2, 2, 2}, 4);
  gs_tensor wide = gs_zeros(GS_F64, (int64_t[]){1, 2, 2, 3}, 4);
  gs_tensor batch = gs_zeros(GS_F64, (int64_t[]){2, 2, 2, 2}, 4);
  gs_tensor flat = gs_zeros(GS_F64, (int64_t[]){2, 3, 4}, 3);
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){1, 2, 3}, 3);
  EXPECT_ERROR(gs_grid_sample(x32, grid, 0, 0, false), "one floating dtype");
  EXPECT_ERROR(gs_grid_sample(x, wide, 0, 0, false), "size 2 in last dimension");
  EXPECT_ERROR(gs_grid_sample(x, batch, 0, 0, false), "same batch size");
  EXPECT_ERROR(gs_grid_sample(flat, grid, 0, 0, false), "4-D input");
  EXPECT_ERROR(gs_grid_sample(x, grid, 3, 0, false), "mode 0 to 2");
  EXPECT_ERROR(gs_grid_sample(x, grid, 0, 7, false), "padding 7");
  gs_tensor theta = identity_theta(GS_F64);
  EXPECT_ERROR(gs_affine_grid(theta, (int64_t[]){1, 2, 3}, 3, false), "got 3 values");
  EXPECT_ERROR(gs_affine_grid(theta, (int64_t[]){1, 2, 3, 4, 5}, 5, false),
               "expected theta [1, 3, 4]");
  EXPECT_ERROR(gs_affine_grid(theta, (int64_t[]){2, 2, 3, 4}, 4, false),
               "expected theta [2, 2, 3]");
  EXPECT_ERROR(gs_affine_grid(theta, (int64_t[]){1, 2, 0, 4}, 4, false), "positive sizes");
  EXPECT_ERROR(gs_affine_grid(ints, (int64_t[]){1, 2, 3, 4}, 4, false), "floating theta");
  EXPECT_ERROR(gs_upsample_bicubic2d(flat, (int64_t[]){2, 2}, NULL, false), "[N, C, H, W]");
  EXPECT_ERROR(gs_upsample_bicubic2d(x, (int64_t[]){0, 2}, NULL, false), "positive");
  DISPOSE_ALL(x, x32, grid, wide, batch, flat, ints, theta);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/resample/identity-grid", test_identity_grid_reads_the_image_back);
  test_add_leak_checked("/resample/outside-points", test_outside_points_follow_the_padding);
  test_add_leak_checked("/resample/bicubic", test_bicubic_resizing);
  test_add_leak_checked("/resample/bad-arguments", test_bad_arguments_are_reported);
  return g_test_run();
}
