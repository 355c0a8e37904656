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

#ifdef __cplusplus
}
#endif
