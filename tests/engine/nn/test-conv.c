/* test-conv.c: convolution and pooling as a C program uses them: conv2d against a direct
 * sum over each window, the Conv2d module (shapes, PyTorch's initialisation bounds, forward,
 * gradients, scopes), pooling's indices, the volumetric ops against the 2-D ones slice by
 * slice, and every refusal with what was expected and what
 * was given. Gradients are checked by gradcheck and against PyTorch by ops-torch-compare.py. */
#include <math.h>

#include "ops-impl.h"
#include "test-util.h"

/* Every value of t lies within +-bound. */
static void assert_within(gs_tensor t, double bound) {
  double *v = test_values(t);
  for (int64_t i = 0; i < gs_numel(t); i++)
    g_assert_cmpfloat(fabs(v[i]), <=, bound);
  g_free(v);
}

/* conv2d over a transposed input with stride, padding, dilation and groups against the
 * definition: out[n][o][y][x] = b[o] + sum over c, i, j of w[o][c][i][j] * x[n][g*cg + c]
 * [y*s - p + i*d][x*s - p + j*d]. */
typedef struct conv_case {
  gs_dtype dt;
  int N, C, H, W, O, G, KH, KW;
  int64_t sh, sw, ph, pw, dh, dw;
} conv_case;

static void check_conv2d_definition(const conv_case *k) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  const int N = k->N, C = k->C, H = k->H, W = k->W, O = k->O, G = k->G, CG = C / G, KH = k->KH,
            KW = k->KW;
  const int64_t sh = k->sh, sw = k->sw, ph = k->ph, pw = k->pw, dh = k->dh, dw = k->dw;
  gs_tensor base = gs_randn(k->dt, (int64_t[]){N, C, W, H}, 4, &rng);
  gs_tensor x = gs_transpose(base, 2, 3);
  gs_tensor w = gs_randn(k->dt, (int64_t[]){O, CG, KH, KW}, 4, &rng);
  gs_tensor b = gs_randn(k->dt, (int64_t[]){O}, 1, &rng);
  gs_conv2d_options opt = {{sh, sw}, {ph, pw}, {dh, dw}, G};
  gs_tensor y = gs_conv2d(x, w, b, &opt);
  int64_t oh = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
  int64_t ow = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
  double *vx = test_values(x), *vw = test_values(w), *vb = test_values(b);
  double *expected = g_new0(double, N * O * oh * ow);
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          double acc = vb[o];
          int g = o / (O / G);
          for (int c = 0; c < CG; c++)
            for (int i = 0; i < KH; i++)
              for (int j = 0; j < KW; j++) {
                int64_t iy = oy * sh - ph + i * dh, ix = ox * sw - pw + j * dw;
                if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                  acc += vw[((o * CG + c) * KH + i) * KW + j] *
                         vx[((n * C + g * CG + c) * H + iy) * W + ix];
              }
          expected[((n * O + o) * oh + oy) * ow + ox] = acc;
        }
  double tol = k->dt == GS_F32 ? 1e-5 : 1e-12;
  test_assert_values(y, (int64_t[]){N, O, oh, ow}, 4, expected, tol, tol);
  g_free(vx), g_free(vw), g_free(vb), g_free(expected);
  gs_dispose(base), gs_dispose(x), gs_dispose(w), gs_dispose(b), gs_dispose(y);
}

/* The general im2col (stride, padding, dilation, groups, a transposed input), the
 * unit-stride one over a padded copy with its 8- and 4-wide rows and any other width, and the
 * direct 3x3 path (the CNN's 8x8 digits and their pooled 4x4), in both dtypes. */
static void test_conv2d_matches_the_definition(void) {
  static const conv_case cases[] = {
      {GS_F64, 2, 4, 6, 7, 6, 2, 3, 2, 2, 1, 1, 2, 1, 2},
      {GS_F64, 3, 2, 5, 8, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1},
      {GS_F32, 3, 2, 8, 8, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1},
      {GS_F32, 2, 6, 4, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1},
      {GS_F32, 2, 3, 5, 6, 2, 1, 2, 3, 1, 1, 0, 2, 1, 1},
      /* unit stride but not 3x3: the padded-copy im2col on rows 8 and 4 wide */
      {GS_F32, 2, 3, 8, 8, 4, 1, 5, 5, 1, 1, 2, 2, 1, 1},
      {GS_F64, 2, 2, 4, 4, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    check_conv2d_definition(&cases[i]);
}

/* The direct 3x3 path (conv-direct.c) in f32 (AVX-512 or AVX2+FMA where the CPU has them
 * and GS_CPU_FEATURES allows, otherwise im2col) against the same convolution in f64 (the plain
 * loops the gradchecks check): output and all three gradients of sum(y * r). The shapes cover each
 * row width up to 16 (vectors of several rows, of one, and the last vector of a plane holding fewer
 * rows), padding 0 and 1, batches, several channels, and output channels past one block of 16 and
 * not a multiple of 8 (the weight gradient's blocks of 8). */
typedef struct direct_case {
  int N, C, H, W, O, P;
} direct_case;

static double *grad_values(gs_tensor t) {
  gs_tensor g = gs_grad(t);
  g_assert_true(g.id != 0);
  return test_values(g);
}

static void check_direct_f32_matches_f64(const direct_case *k) {
  test_set_context("direct conv N %d C %d H %d W %d O %d padding %d", k->N, k->C, k->H, k->W, k->O,
                   k->P);
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  const int64_t oh = k->H + 2 * k->P - 2, ow = k->W + 2 * k->P - 2;
  gs_tensor x64 = gs_randn(GS_F64, (int64_t[]){k->N, k->C, k->H, k->W}, 4, &rng);
  gs_tensor w64 = gs_randn(GS_F64, (int64_t[]){k->O, k->C, 3, 3}, 4, &rng);
  gs_tensor b64 = gs_randn(GS_F64, (int64_t[]){k->O}, 1, &rng);
  gs_tensor r64 = gs_randn(GS_F64, (int64_t[]){k->N, k->O, oh, ow}, 4, &rng);
  gs_tensor in[2][3], y[2];
  gs_conv2d_options opt = {.padding = {k->P, k->P}};
  for (int d = 0; d < 2; d++) {
    gs_dtype dt = d ? GS_F32 : GS_F64;
    gs_tensor src[3] = {x64, w64, b64};
    for (int i = 0; i < 3; i++) {
      gs_tensor t = gs_to_dtype(src[i], dt);
      in[d][i] = gs_detach(t); /* a leaf of its own */
      gs_dispose(t);
      gs_set_requires_grad(in[d][i], true);
    }
    y[d] = gs_conv2d(in[d][0], in[d][1], in[d][2], &opt);
    gs_tensor r = gs_to_dtype(r64, dt), ry = gs_mul(y[d], r);
    gs_tensor loss = gs_sum(ry, NULL, 0, false);
    gs_backward(loss);
    gs_dispose(r), gs_dispose(ry), gs_dispose(loss);
  }
  double *expected = test_values(y[0]);
  test_assert_values(y[1], (int64_t[]){k->N, k->O, oh, ow}, 4, expected, 1e-4, 1e-4);
  g_free(expected);
  const int64_t *shapes[3] = {(int64_t[]){k->N, k->C, k->H, k->W}, (int64_t[]){k->O, k->C, 3, 3},
                              (int64_t[]){k->O}};
  const int ndims[3] = {4, 4, 1};
  for (int i = 0; i < 3; i++) {
    double *want = grad_values(in[0][i]);
    gs_tensor g32 = gs_grad(in[1][i]);
    /* sums of up to a few hundred products of unit-sized terms */
    test_assert_values(g32, shapes[i], ndims[i], want, 1e-3, 1e-4);
    g_free(want);
  }
  for (int d = 0; d < 2; d++) {
    gs_dispose(y[d]);
    for (int i = 0; i < 3; i++)
      gs_dispose(in[d][i]);
  }
  gs_dispose(x64), gs_dispose(w64), gs_dispose(b64), gs_dispose(r64);
}

static void test_conv2d_direct_f32_matches_f64(void) {
  uint64_t live = gs_live_tensor_count();
  static const direct_case cases[] = {
      {5, 16, 4, 4, 32, 1}, /* the digits CNN's second layer, rows 4 wide */
      {4, 1, 8, 8, 16, 1},  /* its first, rows 8 wide */
      {2, 3, 8, 8, 18, 0},  /* padding 0: rows 6 wide, 2 per vector and the last alone */
      {2, 2, 5, 3, 5, 1},   /* rows 3 wide, 5 per vector, output channels fewer than 8 */
      {3, 2, 7, 16, 9, 1},  /* rows 16 wide, one per vector */
      {2, 2, 9, 16, 3, 0},  /* padding 0 at the widest: the input's gradient 16 wide */
      {1, 3, 6, 1, 4, 1},   /* rows 1 wide */
      {2, 4, 3, 7, 20, 0},  /* one output row 5 wide */
      {2, 2, 11, 2, 17, 1}, /* rows 2 wide, 8 per vector, 11 rows */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    check_direct_f32_matches_f64(&cases[i]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* GS_CPU_FEATURES caps the kernels the ops pick (meson runs this program again with avx2 and
 * none, so that the direct path's checks above run on each kernel this CPU has). */
static void test_cpu_features_cap(void) {
  const char *v = g_getenv("GS_CPU_FEATURES");
  gs__cpu_level level = gs__cpu_level_get();
  if (g_strcmp0(v, "none") == 0)
    g_assert_cmpint(level, ==, GS__CPU_NONE);
  else if (g_strcmp0(v, "avx2") == 0)
    g_assert_cmpint(level, <=, GS__CPU_AVX2);
  g_test_message("f32 kernels: %s", level == GS__CPU_AVX512 ? "AVX-512"
                                    : level == GS__CPU_AVX2 ? "AVX2+FMA"
                                                            : "portable");
}

static void test_conv2d_module(void) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, 8);
  gs_module conv = gs_conv2d_new(4, 6, 3, 2, &(gs_conv2d_options){.padding = {1, 0}, .groups = 2},
                                 true, &rng);
  g_assert_cmpstr(gs_module_type_name(conv), ==, "Conv2d");
  gs_tensor params[2];
  const char *names[2];
  g_assert_cmpint(gs_module_named_parameters(conv, params, names, 2), ==, 2);
  g_assert_cmpstr(names[0], ==, "weight");
  g_assert_cmpstr(names[1], ==, "bias");
  int64_t shape[4];
  g_assert_cmpint(gs_shape(params[0], shape), ==, 4);
  g_assert_cmpint(shape[0], ==, 6);
  g_assert_cmpint(shape[1], ==, 2);
  g_assert_cmpint(shape[2], ==, 3);
  g_assert_cmpint(shape[3], ==, 2);
  g_assert_cmpint(gs_dtype_of(params[0]), ==, GS_F32);
  /* fan_in = 2 * 3 * 2 = 12: kaiming_uniform_(a = sqrt(5)) gives +-1/sqrt(12), as the bias. */
  assert_within(params[0], 1.0 / sqrt(12.0));
  assert_within(params[1], 1.0 / sqrt(12.0));

  for (int step = 0; step < 2; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, (int64_t[]){3, 4, 5, 5}, 4, &rng);
    gs_tensor y = gs_module_forward(conv, x);
    gs_tensor direct = gs_conv2d(x, params[0], params[1],
                                 &(gs_conv2d_options){.padding = {1, 0}, .groups = 2});
    double *vd = test_values(direct);
    test_assert_values(y, (int64_t[]){3, 6, 5, 4}, 4, vd, 0, 0);
    g_free(vd);
    gs_tensor loss = gs_sum(y, NULL, 0, false);
    gs_backward(loss);
    gs_scope_end(s);
  }
  /* d sum(y) / d bias = N * H' * W' per channel, over two steps. */
  double counts[6];
  for (int i = 0; i < 6; i++)
    counts[i] = 2 * 3 * 5 * 4;
  test_assert_values(gs_grad(params[1]), (int64_t[]){6}, 1, counts, 1e-3, 0);
  gs_tensor no_bias = gs_randn(GS_F32, (int64_t[]){1, 4, 3, 3}, 4, &rng);
  gs_module plain = gs_conv2d_new(4, 2, 3, 3, NULL, false, &rng);
  g_assert_cmpint(gs_module_parameter_count(plain), ==, 1);
  gs_tensor y = gs_conv2d_forward(plain, no_bias);
  g_assert_cmpint(gs_numel(y), ==, 2);
  gs_dispose(y), gs_dispose(no_bias);
  gs_module_dispose(plain);
  gs_module_dispose(conv);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  EXPECT_ERROR(gs_conv2d_new(3, 4, 3, 3, &(gs_conv2d_options){.groups = 2}, true, NULL),
               "conv2d_new: expected in_channels (3) and out_channels (4) divisible by groups (2)");
  EXPECT_ERROR(gs_conv2d_new(3, 0, 3, 3, NULL, true, NULL),
               "conv2d_new: expected positive channels, kernel size and groups, got in 3, out 0");
}

/* A Conv2d layer with a border (padding_mode, or an uneven padding='same') is the pad op then
 * gs_conv2d: the same values and gradients as the two calls made by hand, one pad node under
 * the convolution's, nothing left alive; circular padding wraps rows around (checked against
 * the definition); and the refusals. */
static void backward_of_squares(gs_tensor y) {
  gs_tensor sq = gs_mul(y, y), loss = gs_sum(sq, NULL, 0, false);
  gs_backward(loss);
  gs_dispose(loss), gs_dispose(sq);
}

static void test_conv2d_module_border(void) {
  uint64_t live = gs_live_tensor_count();
  gs_rng rng;
  gs_rng_seed(&rng, 12);
  const char *pad_nodes[] = {"ConstantPadNdBackward", "ReflectionPad2dBackward",
                             "ReplicationPad2dBackward", "CircularPad2dBackward"};
  for (int mode = GS_PADDING_ZEROS; mode <= GS_PADDING_CIRCULAR; mode++) {
    test_set_context("padding mode %d", mode);
    gs_conv2d_layer_options o = {
        .conv = {.dilation = {1, 2}}, .padding_mode = mode, .pad = {1, 2, 0, 1}};
    if (mode == GS_PADDING_ZEROS)
      o.conv.padding[0] = 1; /* 'same' of an even kernel: near zeros here, the far one above */
    gs_module conv = gs_conv2d_new_with(2, 3, 2, 3, &o, true, &rng);
    gs_conv2d_layer_options back;
    g_assert_true(gs_conv2d_get_options(conv, &back));
    g_assert_cmpint(back.padding_mode, ==, mode);
    g_assert_cmpint(back.pad[1], ==, 2);
    g_assert_cmpint(back.conv.groups, ==, 1);
    gs_module_to_dtype(conv, GS_F64);
    gs_tensor w = gs_module_parameter(conv, "weight"), b = gs_module_parameter(conv, "bias");
    gs_tensor x = gs_randn(GS_F64, (int64_t[]){2, 2, 4, 5}, 4, &rng);
    gs_set_requires_grad(x, true);
    gs_tensor y = gs_conv2d_forward(conv, x);
    g_assert_cmpstr(gs_node_name(gs_grad_fn(y)), ==, "Conv2dBackward");
    g_assert_cmpstr(gs_node_name(gs_node_next(gs_grad_fn(y), 0)), ==, pad_nodes[mode]);
    backward_of_squares(y);
    double *gx = test_values(gs_grad(x)), *gw = test_values(gs_grad(w));
    gs_zero_grad(x), gs_zero_grad(w), gs_zero_grad(b);
    gs_tensor padded = mode == GS_PADDING_ZEROS       ? gs_constant_pad_nd(x, o.pad, 4, 0.0)
                       : mode == GS_PADDING_REFLECT   ? gs_reflection_pad(x, o.pad, 4)
                       : mode == GS_PADDING_REPLICATE ? gs_replication_pad(x, o.pad, 4)
                                                      : gs_circular_pad(x, o.pad, 4);
    gs_tensor by_hand = gs_conv2d(padded, w, b, &o.conv);
    double *vy = test_values(by_hand);
    /* H: 4 + 1 padded rows - 1 + 2 conv zeros (zeros mode); W: 5 + 3 padded - 2 * 2 */
    test_assert_values(y, (int64_t[]){2, 3, 4 + 2 * o.conv.padding[0], 4}, 4, vy, 1e-12, 1e-12);
    backward_of_squares(by_hand);
    test_assert_values(gs_grad(x), (int64_t[]){2, 2, 4, 5}, 4, gx, 1e-12, 1e-12);
    test_assert_values(gs_grad(w), (int64_t[]){3, 2, 2, 3}, 4, gw, 1e-12, 1e-12);
    g_free(gx), g_free(gw), g_free(vy);
    gs_dispose(padded), gs_dispose(by_hand), gs_dispose(y), gs_dispose(x);
    gs_module_dispose(conv);
  }
  test_set_context("circular rows");
  /* circular: row j of the padded rows is row (j - left) mod size */
  gs_tensor r = gs_arange(0, 3, 1, GS_F64);
  gs_tensor r2 = gs_reshape(r, (int64_t[]){1, 3}, 2);
  gs_tensor wrapped = gs_circular_pad(r2, (int64_t[]){3, 2}, 2);
  test_assert_values(wrapped, (int64_t[]){1, 8}, 2, (double[]){0, 1, 2, 0, 1, 2, 0, 1}, 0, 0);
  gs_dispose(wrapped), gs_dispose(r2), gs_dispose(r);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  gs_tensor small = gs_zeros(GS_F32, (int64_t[]){1, 2, 3}, 3);
  EXPECT_ERROR(gs_circular_pad(small, (int64_t[]){4, 0}, 2),
               "circular_pad: expected pads >= 0 of a non-empty dim, at most its size (wrapping "
               "around once), got (4, 0) for dim 2 of size 3");
  EXPECT_ERROR(gs_circular_pad(small, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1}, 8),
               "circular_pad: expected 2, 4 or 6 pads");
  gs_dispose(small);
  EXPECT_ERROR(gs_conv2d_new_with(2, 2, 3, 3,
                                  &(gs_conv2d_layer_options){.conv = {.padding = {1, 1}},
                                                             .padding_mode = GS_PADDING_REFLECT},
                                  true, NULL),
               "conv2d_new: expected the convolution's padding 0 with a padding mode other than "
               "zeros (the border is all the padding), got (1, 1)");
  EXPECT_ERROR(
      gs_conv2d_new_with(2, 2, 3, 3, &(gs_conv2d_layer_options){.pad = {0, -1, 0, 0}}, true, NULL),
      "conv2d_new: expected border pads >= 0, got (0, -1, 0, 0)");
  EXPECT_ERROR(
      gs_conv2d_new_with(2, 2, 3, 3, &(gs_conv2d_layer_options){.padding_mode = 7}, true, NULL),
      "conv2d_new: expected a padding mode of zeros, reflect, replicate or circular (0 to "
      "3), got 7");
  gs_module lin = gs_linear_new(2, 2, true, NULL);
  gs_conv2d_layer_options unused;
  EXPECT_ERROR(gs_conv2d_get_options(lin, &unused), "conv2d_get_options");
  gs_module_dispose(lin);
}

/* max_pool2d's indices are flat positions in each plane, first maximum of each window. */
/* The f32 2x2 pool (four windows at a time where rows hold pairs of windows, an odd pair
 * left over) answers as the f64 scan: same values and indices, ties (relu's zeros, small
 * integers) and NaNs included; and both backward passes put the gradient on the same pixels. */
/* The 2x2 pool's backward with a gradient of distinct values, not ones (f32 takes AVX-512 where
 * the CPU has it): each window's value lands on its own winner, in f32 as in f64, for planes
 * 2 to 16 wide; -0 arrives as +0, as adding onto zero gives it. */
static void test_max_unpool_values(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 6);
  const int64_t shapes[][4] = {
      {2, 3, 4, 8}, {1, 2, 6, 16}, {3, 1, 2, 2}, {2, 2, 4, 4}, {1, 1, 2, 12}};
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
    test_set_context("unpool [%lld, %lld, %lld, %lld]", (long long)shapes[i][0],
                     (long long)shapes[i][1], (long long)shapes[i][2], (long long)shapes[i][3]);
    gs_tensor x64 = gs_randn(GS_F64, shapes[i], 4, &rng), x32 = gs_to_dtype(x64, GS_F32);
    int64_t out[4] = {shapes[i][0], shapes[i][1], shapes[i][2] / 2, shapes[i][3] / 2};
    gs_tensor r64 = gs_randn(GS_F64, out, 4, &rng);
    double *rv = test_values(r64);
    rv[0] = -0.0;
    gs_tensor rz = gs_from_data(GS_F64, out, 4, rv), r32 = gs_to_dtype(rz, GS_F32);
    g_free(rv);
    gs_set_requires_grad(x64, true), gs_set_requires_grad(x32, true);
    gs_tensor y64 = gs_max_pool2d(x64, &(gs_pool2d_options){.kernel = {2}}, NULL);
    gs_tensor y32 = gs_max_pool2d(x32, &(gs_pool2d_options){.kernel = {2}}, NULL);
    gs_tensor p64 = gs_mul(y64, rz), p32 = gs_mul(y32, r32);
    gs_tensor s64 = gs_sum(p64, NULL, 0, false), s32 = gs_sum(p32, NULL, 0, false);
    gs_backward(s64), gs_backward(s32);
    double *ga = test_values(gs_grad(x64)), *gb = test_values(gs_grad(x32));
    for (int64_t k = 0; k < gs_numel(x64); k++) {
      g_assert_cmpfloat(gb[k], ==, (double)(float)ga[k]);
      g_assert_false(signbit(gb[k]) && gb[k] == 0); /* -0's window: +0 everywhere */
    }
    g_free(ga), g_free(gb);
    gs_dispose(s64), gs_dispose(s32), gs_dispose(p64), gs_dispose(p32);
    gs_dispose(y64), gs_dispose(y32), gs_dispose(r64), gs_dispose(rz), gs_dispose(r32);
    gs_dispose(x64), gs_dispose(x32);
  }
}

static void test_max_pool_f32_matches_f64(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int64_t shapes[][4] = {{2, 3, 6, 8}, {1, 3, 2, 4}, {3, 2, 4, 4}, {1, 1, 3, 6}};
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
    gs_tensor r = gs_randn(GS_F64, shapes[i], 4, &rng);
    gs_tensor two = gs_scalar(GS_F64, 2);
    gs_tensor scaled = gs_mul(r, two);
    gs_tensor floored = gs_floor(scaled), relu = gs_relu(floored); /* many ties */
    double *v = test_values(relu);
    v[1] = NAN;
    gs_tensor x64 = gs_from_data(GS_F64, shapes[i], 4, v);
    g_free(v);
    gs_tensor x32 = gs_to_dtype(x64, GS_F32);
    gs_tensor i64, i32;
    gs_set_requires_grad(x64, true), gs_set_requires_grad(x32, true);
    gs_tensor y64 = gs_max_pool2d(x64, &(gs_pool2d_options){.kernel = {2}}, &i64);
    gs_tensor y32 = gs_max_pool2d(x32, &(gs_pool2d_options){.kernel = {2}}, &i32);
    /* backward: 1 at each window's winner (4x4 planes: exact tiling; 6 wide rows: leftovers) */
    gs_tensor s64 = gs_sum(y64, NULL, 0, false), s32 = gs_sum(y32, NULL, 0, false);
    gs_backward(s64), gs_backward(s32);
    double *ga = test_values(gs_grad(x64)), *gb = test_values(gs_grad(x32));
    double *want = g_new0(double, gs_numel(x64)), *at = test_values(i64);
    int64_t plane = shapes[i][2] * shapes[i][3],
            per = gs_numel(y64) / (shapes[i][0] * shapes[i][1]);
    for (int64_t k = 0; k < gs_numel(y64); k++)
      want[k / per * plane + (int64_t)at[k]] = 1;
    for (int64_t k = 0; k < gs_numel(x64); k++) {
      g_assert_cmpfloat(ga[k], ==, want[k]);
      g_assert_cmpfloat(gb[k], ==, want[k]);
    }
    g_free(ga), g_free(gb), g_free(want), g_free(at);
    gs_dispose(s64), gs_dispose(s32);
    double *a = test_values(y64), *b = test_values(y32), *ia = test_values(i64),
           *ib = test_values(i32);
    for (int64_t k = 0; k < gs_numel(y64); k++) {
      g_assert_true(isnan(a[k]) ? isnan(b[k]) : a[k] == b[k]);
      g_assert_cmpfloat(ia[k], ==, ib[k]);
    }
    g_free(a), g_free(b), g_free(ia), g_free(ib);
    gs_dispose(r), gs_dispose(two), gs_dispose(scaled), gs_dispose(floored), gs_dispose(relu);
    gs_dispose(x64), gs_dispose(x32);
    gs_dispose(i64), gs_dispose(i32), gs_dispose(y64), gs_dispose(y32);
  }
}

static void test_max_pool_indices(void) {
  double v[16] = {1, 5, 2, 2,
                  3, 5, 0, 9,
                  7, 1, 4, 4,
                  0, 7, 4, 1};
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){1, 1, 4, 4}, 4, v);
  gs_tensor idx;
  gs_tensor y = gs_max_pool2d(x, &(gs_pool2d_options){.kernel = {2}}, &idx);
  test_assert_values(y, (int64_t[]){1, 1, 2, 2}, 4, (double[]){5, 9, 7, 4}, 0, 0);
  test_assert_values(idx, (int64_t[]){1, 1, 2, 2}, 4, (double[]){1, 7, 8, 10}, 0, 0);
  /* Ties and NaNs, as PyTorch 1.13 answers them: the first maximum, the last NaN. The 4x4
   * input takes the 2x2 fast path, the 4x5 one in ceil mode (a window past the edge) the
   * general loop: the first four windows must agree. */
  double nan = NAN, w[20] = {nan, 1, 3, 3, 0, nan, 2, 3, 1, 0, 0, 5, -1, nan, 0, 5, 5, 2, 2, 0};
  for (int run = 0; run < 4; run++) { /* general and fast path, each in f64 and f32 */
    int general = run % 2;
    gs_tensor t64 =
        general ? gs_from_data(GS_F64, (int64_t[]){1, 1, 4, 5}, 4, w)
                : gs_from_data(GS_F64, (int64_t[]){1, 1, 4, 4}, 4,
                               (double[]){nan, 1, 3, 3, nan, 2, 3, 1, 0, 5, -1, nan, 5, 5, 2, 2});
    gs_tensor t = run < 2 ? t64 : gs_to_dtype(t64, GS_F32);
    gs_tensor ti,
        ty = gs_max_pool2d(t, &(gs_pool2d_options){.kernel = {2}, .ceil_mode = general}, &ti);
    double want_at[2][4] = {{4, 2, 9, 11}, {5, 2, 11, 13}}, want[4] = {nan, 3, 5, nan};
    for (int k = 0; k < 4; k++) {
      int64_t at[4] = {0, 0, k / 2, k % 2};
      double got = gs_get(ty, at);
      g_assert_true(isnan(want[k]) ? isnan(got) : got == want[k]);
      g_assert_cmpfloat(gs_get(ti, at), ==, want_at[general][k]);
    }
    if (run >= 2)
      gs_dispose(t64);
    gs_dispose(t), gs_dispose(ty), gs_dispose(ti);
  }
  gs_tensor avg = gs_avg_pool2d(x, &(gs_pool2d_options){.kernel = {2}});
  test_assert_values(avg, (int64_t[]){1, 1, 2, 2}, 4, (double[]){3.5, 3.25, 3.75, 3.25}, 0, 0);
  gs_dispose(x), gs_dispose(y), gs_dispose(idx), gs_dispose(avg);
}

static void test_refusals(void) {
  gs_tensor x = gs_zeros(GS_F32, (int64_t[]){2, 4, 5, 5}, 4);
  gs_tensor w = gs_zeros(GS_F32, (int64_t[]){8, 3, 3, 3}, 4);
  gs_tensor w64 = gs_zeros(GS_F64, (int64_t[]){8, 4, 3, 3}, 4);
  gs_tensor big = gs_zeros(GS_F32, (int64_t[]){8, 4, 7, 7}, 4);
  gs_tensor b = gs_zeros(GS_F32, (int64_t[]){5}, 1);
  gs_tensor flat = gs_zeros(GS_F32, (int64_t[]){4, 5}, 2);
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){1, 1, 4, 4}, 4);
  EXPECT_ERROR(gs_conv2d(x, w, GS_NO_TENSOR, NULL),
               "conv2d: given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 5, 5] "
               "to have 3 channels, but got 4 channels instead");
  EXPECT_ERROR(gs_conv2d(x, w64, GS_NO_TENSOR, NULL),
               "conv2d: expected input, weight and bias of one floating dtype (f32 or f64), got "
               "input f32, weight f64, bias none");
  EXPECT_ERROR(gs_conv2d(flat, w, GS_NO_TENSOR, NULL),
               "conv2d: expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, W], got [4, 5]");
  EXPECT_ERROR(gs_conv2d(x, big, GS_NO_TENSOR, NULL),
               "kernel size (7 x 7) (with dilation) cannot be greater than the actual input size");
  EXPECT_ERROR(gs_conv2d(x, w, GS_NO_TENSOR, &(gs_conv2d_options){.groups = 3}),
               "conv2d: expected the weight's out channels (8) to be divisible by groups (3)");
  gs_tensor w4 = gs_zeros(GS_F32, (int64_t[]){8, 4, 3, 3}, 4);
  EXPECT_ERROR(gs_conv2d(x, w4, b, NULL),
               "conv2d: expected a bias of shape [8] (the weight's out channels), got [5]");
  EXPECT_ERROR(gs_max_pool2d(x, &(gs_pool2d_options){.kernel = {2}, .padding = {2, 0}}, NULL),
               "max_pool2d: pad should be at most half of kernel size, but got pad [2, 0] and "
               "kernel size [2, 2]");
  EXPECT_ERROR(gs_avg_pool2d(ints, &(gs_pool2d_options){.kernel = {2}}),
               "avg_pool2d: expected a floating input (f32 or f64), got i64");
  EXPECT_ERROR(gs_avg_pool2d(x, &(gs_pool2d_options){.kernel = {2}, .dilation = {2}}),
               "avg_pool2d: average pooling has no dilation, got [2, 2]");
  EXPECT_ERROR(gs_max_pool2d(x, &(gs_pool2d_options){.kernel = {6}}, NULL),
               "max_pool2d: given input size [2, 4, 5, 5], calculated output size [0, 0] is too small");
  EXPECT_ERROR(gs_max_pool2d(x, NULL, NULL), "max_pool2d: expected options with a kernel size");
  gs_dispose(x), gs_dispose(w), gs_dispose(w64), gs_dispose(big), gs_dispose(b);
  gs_dispose(flat), gs_dispose(ints), gs_dispose(w4);
}

/* A volume's ops with a depth-1 window are the 2-D ops slice by slice: conv3d with kernel
 * depth 1 and depth stride 2 gives conv2d of slices 0, 2, 4; max_pool3d and avg_pool3d with
 * window depth 1 give the 2-D pools of each slice, the indices offset by the slice's place
 * (z * H * W) in its volume. */
static void test_volumes_of_depth_one_windows_are_slices(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int64_t N = 2, C = 4, D = 5, H = 6, W = 7, O = 6;
  gs_tensor x = gs_randn(GS_F64, (int64_t[]){N, C, D, H, W}, 5, &rng);
  gs_tensor w = gs_randn(GS_F64, (int64_t[]){O, C / 2, 1, 3, 2}, 5, &rng);
  gs_tensor b = gs_randn(GS_F64, (int64_t[]){O}, 1, &rng);
  gs_tensor w2 = gs_select(w, 2, 0);
  gs_tensor y =
      gs_conv3d(x, w, b,
                &(gs_conv3d_options){
                    .stride = {2, 1, 2}, .padding = {0, 1, 1}, .dilation = {1, 2, 1}, .groups = 2});
  int64_t shape[5];
  g_assert_cmpint(gs_shape(y, shape), ==, 5);
  g_assert_cmpint(shape[2], ==, 3);
  gs_tensor pooled, idx;
  gs_tensor mp =
      gs_max_pool3d(x, &(gs_pool3d_options){.kernel = {1, 3, 2}, .padding = {0, 1, 1}}, &idx);
  gs_tensor ap = gs_avg_pool3d(x, &(gs_pool3d_options){.kernel = {1, 2, 3}, .stride = {1, 1, 2}});
  for (int64_t z = 0; z < D; z++) {
    gs_tensor slice = gs_select(x, 2, z);
    if (z % 2 == 0) {
      gs_tensor want = gs_conv2d(slice, w2, b, &(gs_conv2d_options){{1, 2}, {1, 1}, {2, 1}, 2});
      gs_tensor got = gs_select(y, 2, z / 2);
      double *v = test_values(want);
      gs_shape(want, shape);
      test_assert_values(got, shape, 4, v, 1e-12, 1e-12);
      g_free(v), gs_dispose(want), gs_dispose(got);
    }
    gs_tensor idx2;
    pooled = gs_max_pool2d(slice, &(gs_pool2d_options){.kernel = {3, 2}, .padding = {1, 1}}, &idx2);
    gs_tensor got = gs_select(mp, 2, z), got_idx = gs_select(idx, 2, z);
    double *v = test_values(pooled), *vi = test_values(idx2);
    for (int64_t i = 0; i < gs_numel(idx2); i++)
      vi[i] += (double)(z * H * W);
    gs_shape(pooled, shape);
    test_assert_values(got, shape, 4, v, 0, 0);
    test_assert_values(got_idx, shape, 4, vi, 0, 0);
    g_free(v), g_free(vi);
    gs_dispose(pooled), gs_dispose(idx2), gs_dispose(got), gs_dispose(got_idx);
    pooled = gs_avg_pool2d(slice, &(gs_pool2d_options){.kernel = {2, 3}, .stride = {1, 2}});
    got = gs_select(ap, 2, z);
    v = test_values(pooled);
    gs_shape(pooled, shape);
    test_assert_values(got, shape, 4, v, 1e-15, 1e-15);
    g_free(v), gs_dispose(pooled), gs_dispose(got), gs_dispose(slice);
  }
  gs_dispose(x), gs_dispose(w), gs_dispose(b), gs_dispose(w2), gs_dispose(y);
  gs_dispose(mp), gs_dispose(idx), gs_dispose(ap);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/conv/conv2d-matches-the-definition", test_conv2d_matches_the_definition);
  g_test_add_func("/conv/cpu-features-cap", test_cpu_features_cap);
  g_test_add_func("/conv/conv2d-direct-f32-matches-f64", test_conv2d_direct_f32_matches_f64);
  g_test_add_func("/conv/conv2d-module", test_conv2d_module);
  g_test_add_func("/conv/conv2d-module-border", test_conv2d_module_border);
  g_test_add_func("/conv/max-pool-indices", test_max_pool_indices);
  g_test_add_func("/conv/max-pool-f32-matches-f64", test_max_pool_f32_matches_f64);
  g_test_add_func("/conv/max-unpool-values", test_max_unpool_values);
  g_test_add_func("/conv/refusals", test_refusals);
  g_test_add_func("/conv/volumes-of-depth-one-windows-are-slices",
                  test_volumes_of_depth_one_windows_are_slices);
  return g_test_run();
}
