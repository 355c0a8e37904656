/* layers.c: Dropout, Embedding and LayerNorm (functions and module types), composed from
 * public differentiable ops so autograd needs nothing new. Every call leaves exactly one new handle (its result): all
 * intermediates are disposed before returning. */
#include <math.h>
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/autograd.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

/* ---- dropout ------------------------------------------------------------------------ */

gs_tensor gs_dropout(gs_tensor x, double p, bool training, gs_rng *rng) {
  gs__tensor *xp = gs__lookup(x, "dropout");
  if (!xp)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(xp->dtype)) {
    gs__error(GS_ERR_DTYPE, "dropout", "expected a floating tensor, got %s",
              gs_dtype_name(xp->dtype));
    return GS_NO_TENSOR;
  }
  if (!(p >= 0.0 && p < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, "dropout", "expected p in [0, 1), got %g", p);
    return GS_NO_TENSOR;
  }
  if (!training || p == 0.0)
    return gs_clone(x);
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(x, shape);
  /* 1 (kept) with probability 1 - p, then scaled in place: the mask is a constant. */
  gs_tensor mask = gs_bernoulli_p(gs_dtype_of(x), shape, nd, 1.0 - p, rng);
  if (!mask.id)
    return GS_NO_TENSOR;
  gs_mul_scalar_(mask, 1.0 / (1.0 - p));
  gs_tensor y = gs_mul(x, mask);
  gs_dispose(mask);
  return y;
}

/* The Dropout module's configuration: its p and the generator its masks come from. */
typedef struct dropout_config {
  double p;
  gs_rng *rng;
} dropout_config;

static gs_tensor dropout_forward(gs_module m, gs_tensor x);
static const gs_module_type dropout_type = {"Dropout", dropout_forward, free};

static gs_tensor dropout_forward(gs_module m, gs_tensor x) {
  const dropout_config *config = gs__module_data_as(m, &dropout_type, "dropout_forward");
  return config ? gs_dropout(x, config->p, gs_module_is_training(m), config->rng)
                : GS_NO_TENSOR;
}

gs_module gs_dropout_new(double p, gs_rng *rng) {
  if (!(p >= 0.0 && p < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, "dropout_new", "expected p in [0, 1), got %g", p);
    return GS_NO_MODULE;
  }
  dropout_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "dropout_new", "out of memory");
    return GS_NO_MODULE;
  }
  *config = (dropout_config){p, rng};
  return gs_module_new_typed(&dropout_type, config);
}

double gs_dropout_p(gs_module m) {
  const dropout_config *config = gs__module_data_as(m, &dropout_type, "dropout_p");
  return config ? config->p : -1.0;
}

bool gs_dropout_set_p(gs_module m, double p) {
  dropout_config *config = gs__module_data_as(m, &dropout_type, "dropout_set_p");
  if (!config)
    return false;
  if (!(p >= 0.0 && p < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, "dropout_set_p", "expected p in [0, 1), got %g", p);
    return false;
  }
  config->p = p;
  return true;
}

/* ---- embedding ---------------------------------------------------------------------- */

static const gs_module_type embedding_type = {"Embedding", gs_embedding_forward, NULL};

gs_module gs_embedding_new(int64_t num_embeddings, int64_t dim, gs_rng *rng) {
  if (num_embeddings <= 0 || dim <= 0) {
    gs__error(GS_ERR_ARGUMENT, "embedding_new",
              "expected positive sizes, got num_embeddings %lld, dim %lld",
              (long long)num_embeddings, (long long)dim);
    return (gs_module){0};
  }
  gs_module m = gs_module_new_typed(&embedding_type, NULL);
  if (!m.id)
    return m;
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, (int64_t[]){num_embeddings, dim}, 2), true);
  gs_init_normal_(w, 0.0, 1.0, rng);
  gs_module_register_parameter(m, "weight", w);
  return m;
}

gs_tensor gs_embedding_forward(gs_module m, gs_tensor indices) {
  gs_tensor w = gs_module_parameter(m, "weight");
  if (!w.id || gs_ndim(w) != 2) {
    gs__error(GS_ERR_ARGUMENT, "embedding_forward",
              "expected an Embedding module (it has no 2-D weight)");
    return GS_NO_TENSOR;
  }
  return gs_embedding(w, indices);
}

/* ---- layer norm --------------------------------------------------------------------- */

static bool check_affine(gs_tensor t, const char *what, int64_t d, const char *fn) {
  if (!t.id)
    return true;
  if (!gs__lookup(t, fn))
    return false;
  if (gs_ndim(t) != 1 || gs_size(t, 0) != d) {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(t, shape);
    char buf[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected %s of shape [%lld], got %s", what, (long long)d,
              gs__shape_str(buf, shape, nd));
    return false;
  }
  return true;
}

gs_tensor gs_layer_norm(gs_tensor x, gs_tensor weight, gs_tensor bias, double eps) {
  static const char *fn = "layer_norm";
  gs__tensor *xp = gs__lookup(x, fn);
  if (!xp)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(xp->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating tensor, got %s", gs_dtype_name(xp->dtype));
    return GS_NO_TENSOR;
  }
  int nd = gs_ndim(x);
  if (nd < 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected at least 1 dimension, got a 0-D tensor");
    return GS_NO_TENSOR;
  }
  if (!(eps > 0.0) || !isfinite(eps)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a positive eps, got %g", eps);
    return GS_NO_TENSOR;
  }
  int64_t d = gs_size(x, -1);
  if (!check_affine(weight, "weight", d, fn) || !check_affine(bias, "bias", d, fn))
    return GS_NO_TENSOR;

  int last = -1;
  gs_tensor mean = gs_mean(x, &last, 1, true);
  gs_tensor xc = gs_sub(x, mean);
  gs_dispose(mean);
  gs_tensor sq = gs_mul(xc, xc);
  gs_tensor var = gs_mean(sq, &last, 1, true); /* biased, as torch */
  gs_dispose(sq);
  gs_tensor var_eps = gs_add_scalar(var, eps);
  gs_dispose(var);
  gs_tensor rstd = gs_rsqrt(var_eps);
  gs_dispose(var_eps);
  gs_tensor y = gs_mul(xc, rstd);
  gs_dispose(xc), gs_dispose(rstd);
  if (weight.id) {
    gs_tensor yw = gs_mul(y, weight);
    gs_dispose(y);
    y = yw;
  }
  if (bias.id) {
    gs_tensor yb = gs_add(y, bias);
    gs_dispose(y);
    y = yb;
  }
  return y;
}

/* A LayerNorm's eps lives in the module's data (its non-tensor configuration). */
typedef struct layer_norm_config {
  double eps;
} layer_norm_config;

static const gs_module_type layer_norm_type = {"LayerNorm", gs_layer_norm_forward, free};

gs_module gs_layer_norm_new(int64_t dim, double eps) {
  static const char *fn = "layer_norm_new";
  if (dim <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a positive dim, got %lld", (long long)dim);
    return (gs_module){0};
  }
  if (!(eps > 0.0) || !isfinite(eps)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a positive eps, got %g", eps);
    return (gs_module){0};
  }
  layer_norm_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory recording eps");
    return GS_NO_MODULE;
  }
  config->eps = eps;
  gs_module m = gs_module_new_typed(&layer_norm_type, config);
  if (!m.id)
    return m;
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, &dim, 1), true);
  gs_init_ones_(w);
  gs_module_register_parameter(m, "weight", w);
  gs_tensor b = gs_parameter_new(gs_empty(GS_F32, &dim, 1), true);
  gs_init_zeros_(b);
  gs_module_register_parameter(m, "bias", b);
  return m;
}

gs_tensor gs_layer_norm_forward(gs_module m, gs_tensor x) {
  static const char *fn = "layer_norm_forward";
  const layer_norm_config *config = gs__module_data_as(m, &layer_norm_type, fn);
  if (!config)
    return GS_NO_TENSOR;
  double eps = config->eps;
  gs_tensor w = gs_module_parameter(m, "weight");
  gs_tensor b = gs_module_parameter(m, "bias");
  if (!w.id || !b.id) {
    gs__error(GS_ERR_ARGUMENT, fn, "LayerNorm module #%u lost its weight or bias",
              (unsigned)(m.id & 0xffffffffu));
    return GS_NO_TENSOR;
  }
  if (!gs__lookup(x, fn))
    return GS_NO_TENSOR;
  int64_t d = gs_size(w, 0);
  if (gs_ndim(x) < 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected a last dimension of %lld, got a 0-D tensor",
              (long long)d);
    return GS_NO_TENSOR;
  }
  if (gs_size(x, -1) != d) {
    gs__error(GS_ERR_SHAPE, fn, "expected a last dimension of %lld, got %lld", (long long)d,
              (long long)gs_size(x, -1));
    return GS_NO_TENSOR;
  }
  return gs_layer_norm(x, w, b, eps);
}
