/* batch-norm.c: the BatchNorm1d, 2d and 3d layers (torch.nn.BatchNorm1d/2d/3d): gs_batch_norm
 * with the module's affine parameters and running estimates, in training or evaluation mode.
 *
 * The engine's modules hold no buffers apart from parameters, so the running estimates
 * ("running_mean", "running_var") and the step count ("num_batches_tracked", i64) are
 * registered as parameters that do not require grad: they appear under PyTorch's names in
 * named parameters and state dicts, and optimizers skip them, as they never get a gradient. */
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/autograd.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

typedef struct batch_norm_config {
  double eps, momentum;
  int spatial_dims; /* 1: BatchNorm1d ([N, C] or [N, C, L]); 2: BatchNorm2d ([N, C, H, W]);
                       3: BatchNorm3d ([N, C, D, H, W]) */
} batch_norm_config;

static gs_tensor batch_norm_forward(gs_module m, gs_tensor x);
static const gs_module_type batch_norm1d_type = {"BatchNorm1d", batch_norm_forward, free};
static const gs_module_type batch_norm2d_type = {"BatchNorm2d", batch_norm_forward, free};
static const gs_module_type batch_norm3d_type = {"BatchNorm3d", batch_norm_forward, free};

static gs_tensor batch_norm_forward(gs_module m, gs_tensor x) {
  const char *fn = "batch_norm_forward";
  gs__module *rec = gs__module_lookup(m, fn);
  if (!rec)
    return GS_NO_TENSOR;
  if (rec->type != &batch_norm1d_type && rec->type != &batch_norm2d_type &&
      rec->type != &batch_norm3d_type) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a BatchNorm1d, BatchNorm2d or BatchNorm3d module, got %s", rec->type_name);
    return GS_NO_TENSOR;
  }
  const batch_norm_config *config = rec->data;
  int nd = gs_ndim(x);
  if (nd < 0)
    return GS_NO_TENSOR;
  bool ok = config->spatial_dims == 1 ? nd == 2 || nd == 3 : nd == config->spatial_dims + 2;
  if (!ok) {
    gs__error(GS_ERR_SHAPE, fn, "%s expected %s input (got %dD input)", rec->type_name,
              config->spatial_dims == 1   ? "2D or 3D"
              : config->spatial_dims == 2 ? "4D"
                                          : "5D",
              nd);
    return GS_NO_TENSOR;
  }
  bool training = rec->training;
  gs_tensor y = gs_batch_norm(x, gs_module_parameter(m, "running_mean"),
                              gs_module_parameter(m, "running_var"),
                              gs_module_parameter(m, "weight"), gs_module_parameter(m, "bias"),
                              training, config->momentum, config->eps);
  if (y.id && training) {
    gs_no_grad_begin();
    gs_add_scalar_(gs_module_parameter(m, "num_batches_tracked"), 1);
    gs_no_grad_end();
  }
  return y;
}

gs_tensor gs_batch_norm_forward(gs_module m, gs_tensor x) { return batch_norm_forward(m, x); }

static void add_parameter(gs_module m, const char *name, gs_tensor values, bool requires_grad) {
  gs_module_register_parameter(m, name, gs_parameter_new(values, requires_grad));
}

gs_module gs_batch_norm_new(int spatial_dims, int64_t num_features, double eps,
                            double momentum) {
  const char *fn = "batch_norm_new";
  if (spatial_dims < 1 || spatial_dims > 3 || num_features <= 0 || !(eps > 0) ||
      !(momentum >= 0 && momentum <= 1)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected spatial_dims 1, 2 or 3, positive num_features and eps, and momentum in "
              "[0, 1], got spatial_dims %d, num_features %lld, eps %g, momentum %g",
              spatial_dims, (long long)num_features, eps, momentum);
    return GS_NO_MODULE;
  }
  batch_norm_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *config = (batch_norm_config){eps, momentum, spatial_dims};
  static const gs_module_type *const types[] = {&batch_norm1d_type, &batch_norm2d_type,
                                                &batch_norm3d_type};
  gs_module m = gs_module_new_typed(types[spatial_dims - 1], config);
  if (!m.id)
    return m;
  add_parameter(m, "weight", gs_ones(GS_F32, &num_features, 1), true);
  add_parameter(m, "bias", gs_zeros(GS_F32, &num_features, 1), true);
  add_parameter(m, "running_mean", gs_zeros(GS_F32, &num_features, 1), false);
  add_parameter(m, "running_var", gs_ones(GS_F32, &num_features, 1), false);
  add_parameter(m, "num_batches_tracked", gs_zeros(GS_I64, NULL, 0), false);
  return m;
}
