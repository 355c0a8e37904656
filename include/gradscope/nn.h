/* gradscope/nn.h: layers and initialisation, built on modules (scope.h): a layer is a module
 * whose parameters it owns outside every scope. */
#pragma once

#include "scope.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In-place initialisers, as torch.nn.init (they run under no_grad, so parameters may be
 * given). rng NULL: the default generator. */
GS_API void gs_init_uniform_(gs_tensor t, double low, double high, gs_rng *rng);
GS_API void gs_init_normal_(gs_tensor t, double mean, double std, gs_rng *rng);
GS_API void gs_init_zeros_(gs_tensor t);
GS_API void gs_init_ones_(gs_tensor t);
/* Uniform in +-gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2)): torch's kaiming_uniform_
 * with its leaky-relu default; fan_in is size(1) times the sizes after it. */
GS_API void gs_init_kaiming_uniform_(gs_tensor t, double a, gs_rng *rng);
/* Uniform in +-sqrt(6 / (fan_in + fan_out)). */
GS_API void gs_init_xavier_uniform_(gs_tensor t, gs_rng *rng);

/* y = x W^T + b: a module with parameters "weight" [out, in] and "bias" [out] (unless
 * bias is false), initialised as torch.nn.Linear (kaiming_uniform_ with a = sqrt(5), bias
 * uniform in +-1/sqrt(in)). */
GS_API gs_module gs_linear_new(int64_t in_features, int64_t out_features, bool bias, gs_rng *rng);
/* x [N, in] (or [in]) through the layer. */
GS_API gs_tensor gs_linear_forward(gs_module linear, gs_tensor x);

/* ---- more layers (engine/nn/layers.c) ------------------------------------------------- */

/* Dropout: in training mode zeroes each element of x (floating) with probability p and scales
 * the survivors by 1/(1-p), as torch.nn.functional.dropout; a differentiable copy of x (clone)
 * in eval mode or when p == 0. p must lie in [0, 1). Masks come from gs_bernoulli_p with rng
 * (NULL: the default generator). */
GS_API gs_tensor gs_dropout(gs_tensor x, double p, bool training, gs_rng *rng);

/* Embedding: a module with parameter "weight" [num_embeddings, dim] (f32) initialised N(0, 1)
 * as torch.nn.Embedding. */
GS_API gs_module gs_embedding_new(int64_t num_embeddings, int64_t dim, gs_rng *rng);
/* Rows of the weight picked by indices (i64, any shape): shape indices.shape + [dim]. */
GS_API gs_tensor gs_embedding_forward(gs_module embedding, gs_tensor indices);

/* Functional layer norm over the last dimension of x:
 * y = (x - mean) / sqrt(var_biased + eps) * weight + bias, composed from differentiable ops.
 * weight and bias are [D] (D = x's last size) or GS_NO_TENSOR (no affine part); eps > 0. */
GS_API gs_tensor gs_layer_norm(gs_tensor x, gs_tensor weight, gs_tensor bias, double eps);
/* LayerNorm: a module with parameters "weight" (ones) and "bias" (zeros) of shape [dim] (f32).
 * eps (torch's default is 1e-5) is not a tensor: layers.c keeps it in a small side table keyed
 * by module id (entries are 16 bytes and are not reclaimed when the module is disposed). */
GS_API gs_module gs_layer_norm_new(int64_t dim, double eps);
/* x [..., dim] through the layer (gs_layer_norm with the module's weight, bias and eps). */
GS_API gs_tensor gs_layer_norm_forward(gs_module layer_norm, gs_tensor x);

#ifdef __cplusplus
}
#endif
