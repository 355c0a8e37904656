/* batch-norm.c: the BatchNorm1d, 2d and 3d layers (torch.nn.BatchNorm1d/2d/3d): gs_batch_norm
 * with the module's affine parameters and running estimates, in training or evaluation mode,
 * with torch's options (affine, track_running_stats, momentum None for a cumulative average).
 *
 * The engine's modules hold no buffers apart from parameters, so the running estimates
 * ("running_mean", "running_var") and the step count ("num_batches_tracked", i64) are
 * registered as parameters that do not require grad: they appear under PyTorch's names in
 * named parameters and state dicts, and optimizers skip them, as they never get a gradient. */
#include <math.h>
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/autograd.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

typedef struct batch_norm_config {
  gs_batch_norm_options options;
  int64_t num_features;
  int spatial_dims; /* 1: BatchNorm1d ([N, C] or [N, C, L]); 2: BatchNorm2d ([N, C, H, W]);
                       3: BatchNorm3d ([N, C, D, H, W]) */
} batch_norm_config;

static gs_tensor batch_norm_forward(gs_module m, gs_tensor x);
static const gs_module_type batch_norm1d_type = {"BatchNorm1d", batch_norm_forward, free};
static const gs_module_type batch_norm2d_type = {"BatchNorm2d", batch_norm_forward, free};
static const gs_module_type batch_norm3d_type = {"BatchNorm3d", batch_norm_forward, free};

/* The module's record if m is a batch norm layer, else NULL after an error. */
static gs__module *batch_norm_record(gs_module m, const char *fn) {
  gs__module *rec = gs__module_lookup(m, fn);
  if (rec && rec->type != &batch_norm1d_type && rec->type != &batch_norm2d_type &&
      rec->type != &batch_norm3d_type) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a BatchNorm1d, BatchNorm2d or BatchNorm3d module, got %s", rec->type_name);
    return NULL;
  }
  return rec;
}

static gs_tensor batch_norm_forward(gs_module m, gs_tensor x) {
  const char *fn = "batch_norm_forward";
  gs__module *rec = batch_norm_record(m, fn);
  if (!rec)
    return GS_NO_TENSOR;
  const batch_norm_config *config = rec->data;
  const gs_batch_norm_options *o = &config->options;
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
  /* As torch's _BatchNorm.forward: without running estimates the batch's statistics
   * normalise in evaluation mode too; the step count moves before the cumulative average
   * (momentum None) takes its factor 1 / steps from it. */
  bool training = rec->training || !o->track_running_stats;
  double momentum = isnan(o->momentum) ? 0.0 : o->momentum; /* unused without an update */
  if (rec->training && o->track_running_stats) {
    gs_tensor steps = gs_module_parameter(m, "num_batches_tracked");
    gs_no_grad_begin();
    gs_add_scalar_(steps, 1);
    gs_no_grad_end();
    if (isnan(o->momentum))
      momentum = 1.0 / gs_item(steps);
  }
  return gs_batch_norm(x, gs_module_parameter(m, "running_mean"),
                       gs_module_parameter(m, "running_var"), gs_module_parameter(m, "weight"),
                       gs_module_parameter(m, "bias"), training, momentum, o->eps);
}

gs_tensor gs_batch_norm_forward(gs_module m, gs_tensor x) { return batch_norm_forward(m, x); }

static void add_parameter(gs_module m, const char *name, gs_tensor values, bool requires_grad) {
  gs_module_register_parameter(m, name, gs_parameter_new(values, requires_grad));
}

static bool options_valid(const gs_batch_norm_options *o) {
  return o->eps > 0 && (isnan(o->momentum) || (o->momentum >= 0 && o->momentum <= 1));
}

gs_module gs_batch_norm_new_with(int spatial_dims, int64_t num_features,
                                 const gs_batch_norm_options *options) {
  const char *fn = "batch_norm_new";
  gs_batch_norm_options o = options ? *options : gs_batch_norm_defaults();
  if (spatial_dims < 1 || spatial_dims > 3 || num_features <= 0 || !options_valid(&o)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected spatial_dims 1, 2 or 3, positive num_features and eps, and momentum in "
              "[0, 1] or NAN (a cumulative average), got spatial_dims %d, num_features %lld, "
              "eps %g, momentum %g",
              spatial_dims, (long long)num_features, o.eps, o.momentum);
    return GS_NO_MODULE;
  }
  batch_norm_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *config = (batch_norm_config){o, num_features, spatial_dims};
  static const gs_module_type *const types[] = {&batch_norm1d_type, &batch_norm2d_type,
                                                &batch_norm3d_type};
  gs_module m = gs_module_new_typed(types[spatial_dims - 1], config);
  if (!m.id)
    return m;
  if (o.affine) {
    add_parameter(m, "weight", gs_ones(GS_F32, &num_features, 1), true);
    add_parameter(m, "bias", gs_zeros(GS_F32, &num_features, 1), true);
  }
  if (o.track_running_stats) {
    add_parameter(m, "running_mean", gs_zeros(GS_F32, &num_features, 1), false);
    add_parameter(m, "running_var", gs_ones(GS_F32, &num_features, 1), false);
    add_parameter(m, "num_batches_tracked", gs_zeros(GS_I64, NULL, 0), false);
  }
  return m;
}

gs_batch_norm_options gs_batch_norm_defaults(void) {
  return (gs_batch_norm_options){
      .eps = 1e-5, .momentum = 0.1, .affine = true, .track_running_stats = true};
}

gs_module gs_batch_norm_new(int spatial_dims, int64_t num_features, double eps, double momentum) {
  gs_batch_norm_options o = gs_batch_norm_defaults();
  o.eps = eps;
  o.momentum = momentum;
  return gs_batch_norm_new_with(spatial_dims, num_features, &o);
}

bool gs_batch_norm_get_options(gs_module m, gs_batch_norm_options *options) {
  gs__module *rec = batch_norm_record(m, "batch_norm_get_options");
  if (!rec)
    return false;
  *options = ((const batch_norm_config *)rec->data)->options;
  return true;
}

int64_t gs_batch_norm_num_features(gs_module m) {
  gs__module *rec = batch_norm_record(m, "batch_norm_num_features");
  return rec ? ((const batch_norm_config *)rec->data)->num_features : -1;
}

bool gs_batch_norm_set_options(gs_module m, const gs_batch_norm_options *options) {
  const char *fn = "batch_norm_set_options";
  gs__module *rec = batch_norm_record(m, fn);
  if (!rec)
    return false;
  batch_norm_config *config = rec->data;
  const gs_batch_norm_options *now = &config->options;
  if (options->affine != now->affine || options->track_running_stats != now->track_running_stats) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "affine and track_running_stats are fixed when the layer is "
              "made (affine %d, track_running_stats %d), got affine %d, track_running_stats %d",
              now->affine, now->track_running_stats, options->affine, options->track_running_stats);
    return false;
  }
  if (!options_valid(options)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected eps > 0 and momentum in [0, 1] or NAN (a "
              "cumulative average), got eps %g, momentum %g",
              options->eps, options->momentum);
    return false;
  }
  config->options = *options;
  return true;
}
