/* cases-norm.c: gradcheck cases for layer norm (one and two normalized dims, with and without
 * weight and bias), batch norm and group norm (groups of one, several and
 * all channels, with and without weight and bias). Batch norm: training (batch statistics, whose
 * mean and variance depend on every input, so each gradient gathers the whole channel) with and
 * without the affine weight and bias, over [N, C], [N, C, L] and [N, C, H, W]; evaluation
 * (running estimates given as constant inputs). Inputs are transposed and sliced views. */
#include "grad-case.h"

/* A constant f64 input in [LO, HI) (a running estimate). */
#define CONST(LO, HI, ND, ...)                                                               \
  {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_CONTIGUOUS, .lo = LO, .hi = HI,      \
   .no_grad = true, .dtype = GS_F64}

/* Training with running estimates of C channels made for the call (updated, not read). */
static gs_tensor train(const gs_tensor *in, gs_tensor w, gs_tensor b) {
  int64_t c = gs_size(in[0], 1);
  gs_tensor rm = gs__keep(gs_zeros(GS_F64, &c, 1)), rv = gs__keep(gs_ones(GS_F64, &c, 1));
  return gs_batch_norm(in[0], rm, rv, w, b, true, 0.1, 1e-5);
}

static gs_tensor f_train_affine(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return train(in, in[1], in[2]);
}

static gs_tensor f_train_plain(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_batch_norm(in[0], GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, true,
                       0.1, 1e-3);
}

static gs_tensor f_train_weight_only(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return train(in, in[1], GS_NO_TENSOR);
}

static gs_tensor f_eval(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_batch_norm(in[0], in[2], in[3], in[1], GS_NO_TENSOR, false, 0.1, 1e-5);
}

static gs_tensor f_group_affine(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_group_norm(in[0], 2, in[1], in[2], 1e-5);
}

static gs_tensor f_group_plain(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_group_norm(in[0], 1, GS_NO_TENSOR, GS_NO_TENSOR, 1e-3);
}

static gs_tensor f_group_weight_only(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_group_norm(in[0], 3, in[1], GS_NO_TENSOR, 1e-5);
}

static gs_tensor f_layer_two_dims(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_layer_norm_shape(in[0], (int64_t[]){3, 4}, 2, in[1], in[2], 1e-5);
}

static gs_tensor f_layer_plain(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_layer_norm_shape(in[0], (int64_t[]){5}, 1, GS_NO_TENSOR, GS_NO_TENSOR, 1e-3);
}

static gs_tensor f_layer_weight_only(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_layer_norm_shape(in[0], (int64_t[]){2, 3}, 2, in[1], GS_NO_TENSOR, 1e-5);
}

const grad_case grad_cases_norm[] = {
    {"NativeLayerNormBackward",
     "[N, L, 3, 4] over the last two dims, weight and bias",
     f_layer_two_dims,
     3,
     {GI_T(4, 2, 2, 3, 4), GI(2, 3, 4), GI_S(2, 3, 4)}},
    {"NativeLayerNormBackward",
     "[N, 5] over the last dim, no affine",
     f_layer_plain,
     1,
     {GI_T(2, 3, 5)}},
    {"NativeLayerNormBackward",
     "[2, 3] alone (no leading dims), weight only",
     f_layer_weight_only,
     2,
     {GI_S(2, 2, 3), GI(2, 2, 3)}},
    {"NativeGroupNormBackward",
     "[N, C, H, W], 2 groups, weight and bias",
     f_group_affine,
     3,
     {GI_T(4, 2, 4, 2, 3), GI(1, 4), GI_S(1, 4)}},
    {"NativeGroupNormBackward", "[N, C], one group, no affine", f_group_plain, 1, {GI_T(2, 3, 4)}},
    {"NativeGroupNormBackward",
     "[N, C, L], a group per channel, weight only",
     f_group_weight_only,
     2,
     {GI_S(3, 2, 3, 4), GI(1, 3)}},
    {"BatchNormBackward",
     "training [N, C, H, W] with weight and bias",
     f_train_affine,
     3,
     {GI_T(4, 3, 2, 3, 4), GI(1, 2), GI_S(1, 2)}},
    {"BatchNormBackward",
     "training [N, C], no affine, no running estimates",
     f_train_plain,
     1,
     {GI_T(2, 5, 3)}},
    {"BatchNormBackward",
     "training [N, C, L], weight only",
     f_train_weight_only,
     2,
     {GI_S(3, 2, 3, 4), GI(1, 3)}},
    {"BatchNormBackward",
     "evaluation [N, C, H, W], weight, running estimates",
     f_eval,
     4,
     {GI_S(4, 2, 3, 2, 3), GI(1, 3), CONST(-1, 1, 1, 3), CONST(0.5, 2, 1, 3)}},
};
const int grad_cases_norm_count = G_N_ELEMENTS(grad_cases_norm);
