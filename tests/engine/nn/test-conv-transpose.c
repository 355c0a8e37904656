/* test-conv-transpose.c: the transposed and the 1-D convolution (the ops beside conv2d on
 * conv.c's kernels) as a C program uses them: the transposed one against its definition (each
 * input pixel adds its weighted kernel onto the output) with stride, padding, output_padding,
 * dilation and groups over a transposed input, conv1d against conv2d of height 1, and every
 * refusal with what was expected and what was given. Gradients are checked by gradcheck and against
 * PyTorch by ops-torch-compare.py. */
#include "test-util.h"

typedef struct convt_case {
  gs_dtype dt;
  int N, C, H, W, OG, G, KH, KW;
  int64_t sh, sw, ph, pw, oph, opw, dh, dw;
} convt_case;

/* out[n][g*og + o][y*s - p + i*d][x*s - p + j*d] += x[n][g*cg + c][y][x] * w[g*cg + c][o][i][j],
 * plus b, on the output's [0, Ho) x [0, Wo). */
static void check_definition(const convt_case *k) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int N = k->N, C = k->C, H = k->H, W = k->W, OG = k->OG, G = k->G, CG = C / G;
  const int KH = k->KH, KW = k->KW, O = OG * G;
  gs_tensor base = gs_randn(k->dt, (int64_t[]){N, C, W, H}, 4, &rng);
  gs_tensor x = gs_transpose(base, 2, 3);
  gs_tensor w = gs_randn(k->dt, (int64_t[]){C, OG, KH, KW}, 4, &rng);
  gs_tensor b = gs_randn(k->dt, (int64_t[]){O}, 1, &rng);
  gs_conv_transpose2d_options opt = {
      {k->sh, k->sw}, {k->ph, k->pw}, {k->oph, k->opw}, {k->dh, k->dw}, G};
  gs_tensor y = gs_conv_transpose2d(x, w, b, &opt);
  int64_t ho = (H - 1) * k->sh - 2 * k->ph + k->dh * (KH - 1) + k->oph + 1;
  int64_t wo = (W - 1) * k->sw - 2 * k->pw + k->dw * (KW - 1) + k->opw + 1;
  int64_t shape[GS_MAX_DIMS];
  g_assert_cmpint(gs_shape(y, shape), ==, 4);
  g_assert_cmpint(shape[1], ==, O);
  g_assert_cmpint(shape[2], ==, ho);
  g_assert_cmpint(shape[3], ==, wo);
  double *vx = test_values(x), *vw = test_values(w), *vb = test_values(b), *vy = test_values(y);
  double *want = g_new0(double, (gsize)(N * O * ho * wo));
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int64_t p = 0; p < ho * wo; p++)
        want[(n * O + o) * ho * wo + p] = vb[o];
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      for (int yy = 0; yy < H; yy++)
        for (int xx = 0; xx < W; xx++)
          for (int o = 0; o < OG; o++)
            for (int i = 0; i < KH; i++)
              for (int j = 0; j < KW; j++) {
                int64_t oy = yy * k->sh - k->ph + i * k->dh, ox = xx * k->sw - k->pw + j * k->dw;
                if (oy < 0 || oy >= ho || ox < 0 || ox >= wo)
                  continue;
                int oc = (c / CG) * OG + o;
                want[((n * O + oc) * ho + oy) * wo + ox] +=
                    vx[((n * C + c) * H + yy) * W + xx] * vw[((c * OG + o) * KH + i) * KW + j];
              }
  double tol = k->dt == GS_F64 ? 1e-12 : 1e-4;
  for (int64_t i = 0; i < N * O * ho * wo; i++)
    g_assert_cmpfloat_with_epsilon(vy[i], want[i], tol);
  g_free(vx), g_free(vw), g_free(vb), g_free(vy), g_free(want);
  gs_dispose(base), gs_dispose(x), gs_dispose(w), gs_dispose(b), gs_dispose(y);
}

static void test_matches_the_definition(void) {
  static const convt_case cases[] = {
      {GS_F64, 2, 3, 4, 5, 2, 1, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
      {GS_F64, 2, 2, 3, 4, 3, 1, 3, 2, 2, 3, 1, 0, 1, 2, 1, 2},
      {GS_F64, 1, 4, 3, 3, 2, 2, 2, 3, 2, 1, 0, 1, 0, 0, 2, 1},
      {GS_F32, 2, 4, 5, 4, 3, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    check_definition(&cases[i]);
}

static void test_unbatched_input_gives_unbatched_output(void) {
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 3, 3}, 3);
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){2, 1, 2, 2}, 4);
  gs_tensor y = gs_conv_transpose2d(x, w, GS_NO_TENSOR, NULL);
  int64_t shape[GS_MAX_DIMS];
  g_assert_cmpint(gs_shape(y, shape), ==, 3);
  g_assert_cmpint(shape[0], ==, 1);
  g_assert_cmpint(shape[1], ==, 4);
  double *v = test_values(y);
  g_assert_cmpfloat(v[0], ==, 2.0); /* a corner: one pixel of each of the 2 channels */
  g_assert_cmpfloat(v[5], ==, 8.0); /* inside: four pixels of each channel */
  g_free(v);
  gs_dispose(x), gs_dispose(w), gs_dispose(y);
}

static void test_refusals(void) {
  gs_tensor x = gs_zeros(GS_F32, (int64_t[]){2, 4, 5, 5}, 4);
  gs_tensor w = gs_zeros(GS_F32, (int64_t[]){3, 2, 3, 3}, 4);
  gs_tensor w4 = gs_zeros(GS_F32, (int64_t[]){4, 2, 3, 3}, 4);
  gs_tensor w64 = gs_zeros(GS_F64, (int64_t[]){4, 2, 3, 3}, 4);
  gs_tensor flat = gs_zeros(GS_F32, (int64_t[]){4, 5}, 2);
  gs_tensor b = gs_zeros(GS_F32, (int64_t[]){5}, 1);
  EXPECT_ERROR(gs_conv_transpose2d(x, w, GS_NO_TENSOR, NULL),
               "conv_transpose2d: given groups=1, weight of size [3, 2, 3, 3], expected "
               "input[2, 4, 5, 5] to have 3 channels (divisible by groups), but got 4 channels "
               "instead");
  EXPECT_ERROR(gs_conv_transpose2d(x, w64, GS_NO_TENSOR, NULL),
               "conv_transpose2d: expected input, weight and bias of one floating dtype (f32 or "
               "f64), got input f32, weight f64, bias none");
  EXPECT_ERROR(gs_conv_transpose2d(flat, w4, GS_NO_TENSOR, NULL),
               "conv_transpose2d: expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, "
               "W], got [4, 5]");
  EXPECT_ERROR(gs_conv_transpose2d(x, flat, GS_NO_TENSOR, NULL),
               "conv_transpose2d: expected a 4-D weight [in, out / groups, kh, kw], got [4, 5]");
  EXPECT_ERROR(gs_conv_transpose2d(x, w4, b, &(gs_conv_transpose2d_options){.groups = 2}),
               "conv_transpose2d: expected a bias of shape [4] (the weight's out channels per "
               "group times groups), got [5]");
  EXPECT_ERROR(gs_conv_transpose2d(
                   x, w4, GS_NO_TENSOR,
                   &(gs_conv_transpose2d_options){.stride = {2, 1}, .output_padding = {1, 1}}),
               "conv_transpose2d: output padding must be smaller than either stride or "
               "dilation, but got output_padding [1, 1], stride [2, 1], dilation [1, 1]");
  EXPECT_ERROR(
      gs_conv_transpose2d(x, w4, GS_NO_TENSOR, &(gs_conv_transpose2d_options){.padding = {4, 0}}),
      "conv_transpose2d: given input[2, 4, 5, 5], the output size would be (-1 x 7)");
  EXPECT_ERROR(
      gs_conv_transpose2d(x, w4, GS_NO_TENSOR, &(gs_conv_transpose2d_options){.stride = {-1, 1}}),
      "conv_transpose2d: expected positive stride");
  gs_dispose(x), gs_dispose(w), gs_dispose(w4), gs_dispose(w64), gs_dispose(flat);
  gs_dispose(b);
}

/* conv1d equals conv2d on the height-1 view, for every option. */
static void test_conv1d_is_conv2d_of_height_one(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 9);
  gs_tensor base = gs_randn(GS_F64, (int64_t[]){2, 11, 4}, 3, &rng);
  gs_tensor x = gs_transpose(base, 1, 2);
  gs_tensor w = gs_randn(GS_F64, (int64_t[]){6, 2, 3}, 3, &rng);
  gs_tensor b = gs_randn(GS_F64, (int64_t[]){6}, 1, &rng);
  gs_tensor y = gs_conv1d(
      x, w, b, &(gs_conv1d_options){.stride = 2, .padding = 1, .dilation = 2, .groups = 2});
  gs_tensor x4 = gs_unsqueeze(x, 2), w4 = gs_unsqueeze(w, 2);
  gs_tensor y4 = gs_conv2d(x4, w4, b, &(gs_conv2d_options){{1, 2}, {0, 1}, {1, 2}, 2});
  int64_t shape[GS_MAX_DIMS];
  g_assert_cmpint(gs_shape(y, shape), ==, 3);
  g_assert_cmpint(shape[2], ==, 5);
  double *v = test_values(y), *v4 = test_values(y4);
  for (int64_t i = 0; i < gs_numel(y); i++)
    g_assert_cmpfloat_with_epsilon(v[i], v4[i], 1e-12);
  g_free(v), g_free(v4);
  gs_dispose(base), gs_dispose(x), gs_dispose(w), gs_dispose(b), gs_dispose(y);
  gs_dispose(x4), gs_dispose(w4), gs_dispose(y4);
}

static void test_conv1d_refusals(void) {
  gs_tensor x = gs_zeros(GS_F32, (int64_t[]){2, 4, 5}, 3);
  gs_tensor w = gs_zeros(GS_F32, (int64_t[]){6, 3, 3}, 3);
  gs_tensor w4 = gs_zeros(GS_F32, (int64_t[]){6, 4, 3}, 3);
  gs_tensor big = gs_zeros(GS_F32, (int64_t[]){6, 4, 7}, 3);
  gs_tensor b = gs_zeros(GS_F32, (int64_t[]){5}, 1);
  gs_tensor img = gs_zeros(GS_F32, (int64_t[]){1, 2, 4, 5}, 4);
  EXPECT_ERROR(gs_conv1d(x, w, GS_NO_TENSOR, NULL),
               "conv1d: given groups=1, weight of size [6, 3, 3], expected input[2, 4, 5] to "
               "have 3 channels, but got 4 channels instead");
  EXPECT_ERROR(gs_conv1d(img, w4, GS_NO_TENSOR, NULL),
               "conv1d: expected a 2-D (unbatched) or 3-D (batched) input [N, C, L], got "
               "[1, 2, 4, 5]");
  EXPECT_ERROR(gs_conv1d(x, img, GS_NO_TENSOR, NULL),
               "conv1d: expected a 3-D weight [out, in / groups, k], got [1, 2, 4, 5]");
  EXPECT_ERROR(gs_conv1d(x, big, GS_NO_TENSOR, NULL),
               "conv1d: calculated padded input size per channel: (5); kernel size (7) (with "
               "dilation) cannot be greater than the actual input size");
  EXPECT_ERROR(gs_conv1d(x, w4, b, NULL),
               "conv1d: expected a bias of shape [6] (the weight's out channels), got [5]");
  EXPECT_ERROR(gs_conv1d(x, w4, GS_NO_TENSOR, &(gs_conv1d_options){.groups = 4}),
               "conv1d: expected the weight's out channels (6) to be divisible by groups (4)");
  EXPECT_ERROR(gs_conv1d(x, w4, GS_NO_TENSOR, &(gs_conv1d_options){.groups = 2}),
               "conv1d: given groups=2, weight of size [6, 4, 3], expected input[2, 4, 5] to "
               "have 8 channels, but got 4 channels instead");
  EXPECT_ERROR(gs_conv1d(x, w4, GS_NO_TENSOR, &(gs_conv1d_options){.padding = -1}),
               "conv1d: expected positive stride, dilation and groups and non-negative padding");
  gs_dispose(x), gs_dispose(w), gs_dispose(w4), gs_dispose(big), gs_dispose(b), gs_dispose(img);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/conv-transpose/matches-the-definition", test_matches_the_definition);
  g_test_add_func("/conv-transpose/unbatched", test_unbatched_input_gives_unbatched_output);
  g_test_add_func("/conv-transpose/refusals", test_refusals);
  g_test_add_func("/conv1d/is-conv2d-of-height-one", test_conv1d_is_conv2d_of_height_one);
  g_test_add_func("/conv1d/refusals", test_conv1d_refusals);
  return g_test_run();
}
