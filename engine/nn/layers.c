/* layers.c: Dropout, Embedding and LayerNorm (functions and module types) on the public ops
 * (LayerNorm's is one op, engine/ops/layer-norm.c). Every call leaves exactly one new handle
 * (its result): all intermediates are disposed before returning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static const gs_module_type embedding_type = {"Embedding", gs_embedding_forward, free};

gs_embedding_options gs_embedding_defaults(void) {
  return (gs_embedding_options){.padding_idx = -1, .max_norm = 0.0, .norm_type = 2.0};
}

static bool check_embedding_options(const gs_embedding_options *o, int64_t rows, const char *fn) {
  if (o->padding_idx < -1 || o->padding_idx >= rows) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected padding_idx -1 (none) or a row in [0, %lld), got %lld",
              (long long)rows, (long long)o->padding_idx);
    return false;
  }
  if (!(o->max_norm >= 0) || !(o->norm_type > 0)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected max_norm >= 0 (0: none) and a positive norm_type, got %g and %g",
              o->max_norm, o->norm_type);
    return false;
  }
  return true;
}

gs_module gs_embedding_new_with(int64_t num_embeddings, int64_t dim, const gs_embedding_options *o,
                                gs_rng *rng) {
  static const char *fn = "embedding_new";
  gs_embedding_options defaults = gs_embedding_defaults();
  if (!o)
    o = &defaults;
  if (num_embeddings <= 0 || dim <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected positive sizes, got num_embeddings %lld, dim %lld",
              (long long)num_embeddings, (long long)dim);
    return GS_NO_MODULE;
  }
  if (!check_embedding_options(o, num_embeddings, fn))
    return GS_NO_MODULE;
  gs_embedding_options *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory recording the options");
    return GS_NO_MODULE;
  }
  *config = *o;
  gs_module m = gs_module_new_typed(&embedding_type, config);
  if (!m.id)
    return m;
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, (int64_t[]){num_embeddings, dim}, 2), true);
  gs_init_normal_(w, 0.0, 1.0, rng);
  if (o->padding_idx >= 0) { /* torch's padding row starts at zero */
    gs_no_grad_begin();
    gs_tensor row = gs_select(w, 0, o->padding_idx);
    gs_zero_(row);
    gs_dispose(row);
    gs_no_grad_end();
  }
  gs_module_register_parameter(m, "weight", w);
  return m;
}

gs_module gs_embedding_new(int64_t num_embeddings, int64_t dim, gs_rng *rng) {
  return gs_embedding_new_with(num_embeddings, dim, NULL, rng);
}

bool gs_embedding_get_options(gs_module m, gs_embedding_options *o) {
  const gs_embedding_options *config =
      gs__module_data_as(m, &embedding_type, "embedding_get_options");
  if (config && o)
    *o = *config;
  return config != NULL;
}

bool gs_embedding_set_options(gs_module m, const gs_embedding_options *o) {
  static const char *fn = "embedding_set_options";
  gs_embedding_options *config = gs__module_data_as(m, &embedding_type, fn);
  gs_tensor w = config ? gs_module_parameter(m, "weight") : GS_NO_TENSOR;
  if (!config || !w.id || !check_embedding_options(o, gs_size(w, 0), fn))
    return false;
  *config = *o;
  return true;
}

gs_tensor gs_embedding_forward(gs_module m, gs_tensor indices) {
  static const char *fn = "embedding_forward";
  const gs_embedding_options *config = gs__module_data_as(m, &embedding_type, fn);
  if (!config)
    return GS_NO_TENSOR;
  gs_tensor w = gs_module_parameter(m, "weight");
  if (!w.id || gs_ndim(w) != 2) {
    gs__error(GS_ERR_ARGUMENT, fn, "Embedding module #%u lost its 2-D weight",
              (unsigned)(m.id & 0xffffffffu));
    return GS_NO_TENSOR;
  }
  if (config->max_norm > 0 &&
      !gs_embedding_renorm_(w, indices, config->max_norm, config->norm_type))
    return GS_NO_TENSOR;
  return gs_embedding_with(w, indices, config->padding_idx, config->scale_grad_by_freq);
}

/* ---- layer norm --------------------------------------------------------------------- */

/* The last-dim case of gs_layer_norm_shape (engine/ops/layer-norm.c). */
gs_tensor gs_layer_norm(gs_tensor x, gs_tensor weight, gs_tensor bias, double eps) {
  static const char *fn = "layer_norm";
  if (!gs__lookup(x, fn))
    return GS_NO_TENSOR;
  if (gs_ndim(x) < 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected at least 1 dimension, got a 0-D tensor");
    return GS_NO_TENSOR;
  }
  int64_t d = gs_size(x, -1);
  return gs_layer_norm_shape(x, &d, 1, weight, bias, eps);
}

/* A LayerNorm's normalized shape, eps and whether it has weight and bias live in the module's
 * data (its non-tensor configuration). */
typedef struct layer_norm_config {
  double eps;
  int k;
  bool affine;
  int64_t shape[GS_MAX_DIMS];
} layer_norm_config;

static const gs_module_type layer_norm_type = {"LayerNorm", gs_layer_norm_forward, free};

static bool positive_eps(double eps, const char *fn) {
  if (eps > 0.0 && isfinite(eps))
    return true;
  gs__error(GS_ERR_ARGUMENT, fn, "expected a positive eps, got %g", eps);
  return false;
}

gs_module gs_layer_norm_new_with(const int64_t *normalized_shape, int k, bool elementwise_affine,
                                 double eps) {
  static const char *fn = "layer_norm_new";
  if (k < 1 || k > GS_MAX_DIMS || !normalized_shape) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a normalized_shape of 1 to %d sizes, got %d",
              GS_MAX_DIMS, normalized_shape ? k : 0);
    return GS_NO_MODULE;
  }
  for (int d = 0; d < k; d++)
    if (normalized_shape[d] <= 0) {
      char buf[GS__SHAPE_STR];
      gs__error(GS_ERR_ARGUMENT, fn, "expected a positive dim, got %lld in normalized_shape %s",
                (long long)normalized_shape[d], gs__shape_str(buf, normalized_shape, k));
      return GS_NO_MODULE;
    }
  if (!positive_eps(eps, fn))
    return GS_NO_MODULE;
  layer_norm_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory recording eps");
    return GS_NO_MODULE;
  }
  *config = (layer_norm_config){.eps = eps, .k = k, .affine = elementwise_affine};
  memcpy(config->shape, normalized_shape, (size_t)k * sizeof *normalized_shape);
  gs_module m = gs_module_new_typed(&layer_norm_type, config);
  if (!m.id || !elementwise_affine)
    return m;
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, normalized_shape, k), true);
  gs_init_ones_(w);
  gs_module_register_parameter(m, "weight", w);
  gs_tensor b = gs_parameter_new(gs_empty(GS_F32, normalized_shape, k), true);
  gs_init_zeros_(b);
  gs_module_register_parameter(m, "bias", b);
  return m;
}

gs_module gs_layer_norm_new(int64_t dim, double eps) {
  if (dim <= 0) {
    gs__error(GS_ERR_ARGUMENT, "layer_norm_new", "expected a positive dim, got %lld",
              (long long)dim);
    return GS_NO_MODULE;
  }
  return gs_layer_norm_new_with(&dim, 1, true, eps);
}

int gs_layer_norm_normalized_shape(gs_module m, int64_t *shape) {
  const layer_norm_config *config =
      gs__module_data_as(m, &layer_norm_type, "layer_norm_normalized_shape");
  if (!config)
    return -1;
  if (shape)
    memcpy(shape, config->shape, (size_t)config->k * sizeof *shape);
  return config->k;
}

double gs_layer_norm_eps(gs_module m) {
  const layer_norm_config *config = gs__module_data_as(m, &layer_norm_type, "layer_norm_eps");
  return config ? config->eps : (double)NAN;
}

bool gs_layer_norm_set_eps(gs_module m, double eps) {
  static const char *fn = "layer_norm_set_eps";
  layer_norm_config *config = gs__module_data_as(m, &layer_norm_type, fn);
  if (!config || !positive_eps(eps, fn))
    return false;
  config->eps = eps;
  return true;
}

gs_tensor gs_layer_norm_forward(gs_module m, gs_tensor x) {
  static const char *fn = "layer_norm_forward";
  const layer_norm_config *config = gs__module_data_as(m, &layer_norm_type, fn);
  if (!config)
    return GS_NO_TENSOR;
  gs_tensor w = GS_NO_TENSOR, b = GS_NO_TENSOR;
  if (config->affine) {
    w = gs_module_parameter(m, "weight");
    b = gs_module_parameter(m, "bias");
    if (!w.id || !b.id) {
      gs__error(GS_ERR_ARGUMENT, fn, "LayerNorm module #%u lost its weight or bias",
                (unsigned)(m.id & 0xffffffffu));
      return GS_NO_TENSOR;
    }
  }
  gs__tensor *xp = gs__lookup(x, fn);
  if (!xp)
    return GS_NO_TENSOR;
  int k = config->k;
  if (xp->ndim < k ||
      memcmp(xp->shape + xp->ndim - k, config->shape, (size_t)k * sizeof *config->shape) != 0) {
    char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected an input whose last %d dims are %s, got shape %s", k,
              gs__shape_str(want, config->shape, k), gs__shape_str(got, xp->shape, xp->ndim));
    return GS_NO_TENSOR;
  }
  return gs_layer_norm_shape(x, config->shape, k, w, b, config->eps);
}
