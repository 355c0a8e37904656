/* gradscope/nn.h: layers and initialisation, built on modules (scope.h): a layer is a module
 * whose parameters it owns outside every scope, and whose type carries its forward function,
 * so gs_module_forward(m, x) runs any of them (the gs_X_forward functions remain, for when the
 * kind is known). Layers compose into trees: gs_sequential_new, or gs_module_register_child
 * on a container from gs_module_new, with dotted parameter names ("0.weight", "fc2.bias") from
 * gs_module_named_parameters and train/eval mode from gs_module_train. */
#pragma once

#include "ops.h"
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
/* y = x W^T + b (bias may be GS_NO_TENSOR), as torch.nn.functional.linear, made of the ops
 * torch 1.13 makes it of (so the graph is named as torch's): addmm for a matrix x with a bias,
 * a view of an addmm for a contiguous 3-D x with a bias, else matmul (then an add). */
GS_API gs_tensor gs_linear(gs_tensor x, gs_tensor weight, gs_tensor bias);

/* ---- more layers (engine/nn/layers.c) ------------------------------------------------- */

/* Dropout: in training mode zeroes each element of x (floating) with probability p and scales
 * the survivors by 1/(1-p), as torch.nn.functional.dropout; a differentiable copy of x (clone)
 * in eval mode or when p == 0. p must lie in [0, 1). Masks come from gs_bernoulli_p with rng
 * (NULL: the default generator). */
GS_API gs_tensor gs_dropout(gs_tensor x, double p, bool training, gs_rng *rng);

/* Dropout as a module (type "Dropout", no parameters): gs_dropout with the module's p and its
 * train/eval mode (gs_module_train; training by default). rng (NULL: the default generator)
 * must outlive the module. p must lie in [0, 1). */
GS_API gs_module gs_dropout_new(double p, gs_rng *rng);
/* A Dropout module's p, or -1 after an error if m is not one. */
GS_API double gs_dropout_p(gs_module m);
/* Changes the p later forwards use (torch reads dropout.p at each call); p must lie in
 * [0, 1). false after an error (the module is unchanged). */
GS_API bool gs_dropout_set_p(gs_module m, double p);

/* Embedding: a module with parameter "weight" [num_embeddings, dim] (f32) initialised N(0, 1)
 * as torch.nn.Embedding. */
GS_API gs_module gs_embedding_new(int64_t num_embeddings, int64_t dim, gs_rng *rng);
/* torch.nn.Embedding's options: padding_idx a row in [0, num_embeddings) that starts at zero and
 * gets no gradient (-1: none); max_norm > 0 renormalises the rows a forward reads to at most
 * max_norm in norm_type-norm, in place (gs_embedding_renorm_; 0: none); scale_grad_by_freq
 * divides each row's gradient by how many times the batch names it. */
typedef struct gs_embedding_options {
  int64_t padding_idx;
  double max_norm, norm_type;
  bool scale_grad_by_freq;
} gs_embedding_options;
/* padding_idx -1, max_norm 0, norm_type 2, scale_grad_by_freq false. */
GS_API gs_embedding_options gs_embedding_defaults(void);
/* An Embedding with options (NULL: the defaults). */
GS_API gs_module gs_embedding_new_with(int64_t num_embeddings, int64_t dim,
                                       const gs_embedding_options *options, gs_rng *rng);
/* An Embedding's options as they are now; set changes the ones later forwards use (false after
 * an error, the module unchanged). */
GS_API bool gs_embedding_get_options(gs_module embedding, gs_embedding_options *options);
GS_API bool gs_embedding_set_options(gs_module embedding, const gs_embedding_options *options);
/* Rows of the weight picked by indices (i64, any shape): shape indices.shape + [dim], with the
 * module's options. */
GS_API gs_tensor gs_embedding_forward(gs_module embedding, gs_tensor indices);

/* Functional layer norm over the last dimension of x (gs_layer_norm_shape, ops.h, with the
 * last size as normalized_shape): y = (x - mean) / sqrt(var_biased + eps) * weight + bias.
 * weight and bias are [D] (D = x's last size) or GS_NO_TENSOR (no affine part); eps >= 0. */
GS_API gs_tensor gs_layer_norm(gs_tensor x, gs_tensor weight, gs_tensor bias, double eps);
/* LayerNorm over the last dim: a module with parameters "weight" (ones) and "bias" (zeros) of
 * shape [dim] (f32). eps (torch's default is 1e-5) is not a tensor: it is kept in the module's
 * data and freed with the module. */
GS_API gs_module gs_layer_norm_new(int64_t dim, double eps);
/* torch.nn.LayerNorm(normalized_shape, eps, elementwise_affine): over the last k dims, whose
 * sizes are normalized_shape[0..k); with elementwise_affine, parameters "weight" (ones) and
 * "bias" (zeros) of that shape (f32), without, none. */
GS_API gs_module gs_layer_norm_new_with(const int64_t *normalized_shape, int k,
                                        bool elementwise_affine, double eps);
/* A LayerNorm's normalized shape into shape (GS_MAX_DIMS entries, or NULL): returns its k, or
 * -1 after an error. */
GS_API int gs_layer_norm_normalized_shape(gs_module layer_norm, int64_t *shape);
/* A LayerNorm's eps (NaN after an error); set_eps changes the eps later forwards use (> 0;
 * false after an error, the module unchanged). */
GS_API double gs_layer_norm_eps(gs_module layer_norm);
GS_API bool gs_layer_norm_set_eps(gs_module layer_norm, double eps);
/* x [..., normalized_shape] through the layer (gs_layer_norm_shape with the module's weight,
 * bias and eps). */
GS_API gs_tensor gs_layer_norm_forward(gs_module layer_norm, gs_tensor x);

/* ---- convolution (engine/nn/conv.c) --------------------------------------------------- */

/* Conv2d: a module (type "Conv2d") with parameters "weight" [out, in / groups, kh, kw] and
 * "bias" [out] (unless bias is false), f32, initialised as torch.nn.Conv2d (kaiming_uniform_
 * with a = sqrt(5), bias uniform in +-1/sqrt(in / groups * kh * kw)). options (NULL: stride
 * 1, no padding, dilation 1, one group) are copied; in and out must divide by groups. */
GS_API gs_module gs_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                               int64_t kernel_w, const gs_conv2d_options *options, bool bias,
                               gs_rng *rng);
/* How a Conv2d layer fills the border it adds to its input before convolving, as
 * torch.nn.Conv2d's padding_mode: zeros, or F.pad's 'reflect', 'replicate' or 'circular'. */
typedef enum gs_padding_mode {
  GS_PADDING_ZEROS,
  GS_PADDING_REFLECT,
  GS_PADDING_REPLICATE,
  GS_PADDING_CIRCULAR,
} gs_padding_mode;

/* A Conv2d layer's options: the convolution's own, and a border the input gets first: pad in
 * F.pad's order (left, right, top, bottom), filled as padding_mode says. torch.nn.Conv2d pads
 * so for a padding_mode other than zeros (the convolution's padding then 0) and for
 * padding='same' whose zeros do not split evenly (zeros, the odd one on the far side). */
typedef struct gs_conv2d_layer_options {
  gs_conv2d_options conv;
  gs_padding_mode padding_mode;
  int64_t pad[4];
} gs_conv2d_layer_options;

/* gs_conv2d_new with a border added before the convolution (options NULL: none); pads must be
 * >= 0, and a padding_mode other than zeros comes with the convolution's padding 0. */
GS_API gs_module gs_conv2d_new_with(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                                    int64_t kernel_w, const gs_conv2d_layer_options *options,
                                    bool bias, gs_rng *rng);
/* A Conv2d layer's options as made (groups filled in); false after an error (not a Conv2d). */
GS_API bool gs_conv2d_get_options(gs_module conv2d, gs_conv2d_layer_options *out);
/* x [N, in, H, W] (or [in, H, W]) through the layer: its border (gs_constant_pad_nd,
 * gs_reflection_pad, gs_replication_pad or gs_circular_pad), then gs_conv2d. */
GS_API gs_tensor gs_conv2d_forward(gs_module conv2d, gs_tensor x);

/* ---- batch normalisation (engine/nn/batch-norm.c) -------------------------------------- */

/* BatchNorm1d (spatial_dims 1: input [N, C] or [N, C, L]), BatchNorm2d (spatial_dims 2:
 * [N, C, H, W]) or BatchNorm3d (spatial_dims 3: [N, C, D, H, W]) over num_features channels,
 * as torch.nn.BatchNorm1d/2d/3d with affine and
 * track_running_stats: parameters "weight" (ones) and "bias" (zeros), and the running
 * estimates "running_mean" (zeros), "running_var" (ones) and "num_batches_tracked" (i64 0)
 * registered as parameters that do not require grad (modules have no other buffers), so
 * they are in named parameters and state dicts under PyTorch's names and optimizers skip
 * them. In training mode (gs_module_train) the batch's statistics normalise and update the
 * running estimates with momentum; in evaluation mode the running estimates normalise.
 * PyTorch's defaults: eps 1e-5, momentum 0.1. */
GS_API gs_module gs_batch_norm_new(int spatial_dims, int64_t num_features, double eps,
                                   double momentum);
/* torch.nn.BatchNorm1d/2d's options. momentum NAN is PyTorch's momentum=None: the running
 * estimates are the cumulative average of the batches' statistics (factor 1 / steps).
 * Without affine the layer has no weight and bias; without track_running_stats no running
 * estimates and no step count, and the batch's statistics normalise in evaluation mode too. */
typedef struct gs_batch_norm_options {
  double eps;               /* 1e-5 */
  double momentum;          /* 0.1; NAN: a cumulative average */
  bool affine;              /* true */
  bool track_running_stats; /* true */
} gs_batch_norm_options;
/* PyTorch's defaults, as above. */
GS_API gs_batch_norm_options gs_batch_norm_defaults(void);
/* gs_batch_norm_new with all of torch's options (options NULL: the defaults). */
GS_API gs_module gs_batch_norm_new_with(int spatial_dims, int64_t num_features,
                                        const gs_batch_norm_options *options);
/* A layer's options now; false after an error if m is not a batch norm layer. */
GS_API bool gs_batch_norm_get_options(gs_module m, gs_batch_norm_options *options);
/* The layer's number of channels, or -1 after an error if m is not a batch norm layer. */
GS_API int64_t gs_batch_norm_num_features(gs_module m);
/* Changes eps and momentum for later forwards (torch: bn.momentum = None); affine and
 * track_running_stats must be the layer's own. false after an error. */
GS_API bool gs_batch_norm_set_options(gs_module m, const gs_batch_norm_options *options);
/* x through the layer (gs_batch_norm with the module's tensors and mode). */
GS_API gs_tensor gs_batch_norm_forward(gs_module batch_norm, gs_tensor x);

/* ---- activations and Sequential (engine/nn/activations.c, sequential.c) --------------- */

/* Modules without parameters whose forward is gs_relu, gs_tanh, gs_sigmoid, gs_gelu. */
GS_API gs_module gs_relu_new(void);
GS_API gs_module gs_tanh_new(void);
GS_API gs_module gs_sigmoid_new(void);
GS_API gs_module gs_gelu_new(void);
/* GELU(approximate='tanh'): its forward is gs_gelu_tanh. */
GS_API gs_module gs_gelu_tanh_new(void);
/* ReLU(inplace=True): its forward writes max(x, 0) into x (gs_relu_, an in-place write that
 * bumps x's version) and returns x itself, not a new handle. */
GS_API gs_module gs_relu_inplace_new(void);

/* torch.nn.Sequential: the n modules become its children "0", "1", ... (each slot takes over
 * one of the caller's holds, gs_module_register_child: disposing the Sequential disposes what
 * nothing else holds; on error none is taken). A module may appear more than once (torch's
 * Sequential(lin, relu, lin)) if the caller holds it as many times (gs_module_retain). Its
 * forward applies them in order and disposes each intermediate result once the next module has
 * used it, so only the output is left (in the current scope, or to the caller); gradients flow
 * through the whole chain. An empty Sequential returns a clone of its input. */
GS_API gs_module gs_sequential_new(const gs_module *mods, int n);
/* Adds m as the next child ("n" for a Sequential of n modules). */
GS_API void gs_sequential_append(gs_module seq, gs_module m);
/* Puts m at position i (0 to the length), renumbering the children after it, as torch's
 * Sequential.insert (a negative i counts from the end). */
GS_API void gs_sequential_insert(gs_module seq, int64_t i, gs_module m);
/* Removes the child at position i (negative: from the end) and renumbers the rest, as torch's
 * `del seq[i]`; the child is let go (disposed if nothing else holds it). */
GS_API void gs_sequential_remove(gs_module seq, int64_t i);
/* torch's seq[start:stop:step]: a new Sequential (the caller holds it) whose children are the
 * SAME modules as seq's at those positions (shared, not copied: training one trains the
 * other), under the names they have in seq ("1", "2" for seq[1:], as torch keeps the keys).
 * start, stop and step follow Python's slice rules on seq's length (step != 0). */
GS_API gs_module gs_sequential_slice(gs_module seq, int64_t start, int64_t stop, int64_t step);

#ifdef __cplusplus
}
#endif
