/* gradscope/ops.h: operations on tensors.
 *
 * Binary and ternary operations broadcast as PyTorch does and accept any strides.
 * Operand dtypes are promoted as in PyTorch: bool < i64 < f32 < f64, where a 0-dim tensor
 * only decides the dtype when it is of a higher category (bool, integer, floating) than the
 * dimensioned operands, and a double scalar counts as a floating 0-dim operand of the default
 * dtype f32 (so i64 + 0.5 is f32, f64 + 0.5 is f64, f32 + 0.5 is f32).
 * Every function returns a new handle; in-place forms (trailing underscore) return nothing
 * useful but write through t, bump its storage's version and first materialise
 * copy-on-write bytes.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- binary arithmetic -------------------------------------------------------------- */

GS_API gs_tensor gs_add(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_sub(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_mul(gs_tensor a, gs_tensor b);
/* True division: integer operands give f32, as torch.div. */
GS_API gs_tensor gs_div(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_pow(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_maximum(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_minimum(gs_tensor a, gs_tensor b);
/* Python's // and % (torch.floor_divide, torch.remainder: the remainder has the divisor's
 * sign). Integer operands stay integers, and an integer zero divisor is an error. floor_divide
 * records no gradient (torch's is zero); remainder's is (g, -floor(a / b) g). */
GS_API gs_tensor gs_floor_divide(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_remainder(gs_tensor a, gs_tensor b);
/* C's fmod (torch.fmod: the remainder has the dividend's sign, fmod(-7, 3) = -1). Integer
 * operands stay integers, and an integer zero divisor is an error. Gradient (g, -trunc(a/b) g). */
GS_API gs_tensor gs_fmod(gs_tensor a, gs_tensor b);
/* t % s and fmod(t, s) by a number s (in t's dtype), as torch's Scalar overloads: one node
 * whose only input is t (gradient g). */
GS_API gs_tensor gs_remainder_scalar(gs_tensor t, double s);
GS_API gs_tensor gs_fmod_scalar(gs_tensor t, double s);
/* The angle of the point (x = b, y = a) in (-pi, pi]; integer operands give f32. */
GS_API gs_tensor gs_atan2(gs_tensor a, gs_tensor b);
/* a and b, a or b, a xor b, with non-zero (and NaN) as true, any dtypes: bool results, no
 * gradient (torch.logical_and, ...). */
GS_API gs_tensor gs_logical_and(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_logical_or(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_logical_xor(gs_tensor a, gs_tensor b);
/* start + weight * (end - start), all three broadcast (torch.lerp): start and end of one
 * floating dtype, a weight tensor of that dtype too. */
GS_API gs_tensor gs_lerp(gs_tensor start, gs_tensor end, gs_tensor weight);
GS_API gs_tensor gs_lerp_scalar(gs_tensor start, gs_tensor end, double weight);
/* &, |, ^ of i32, i64 or bool operands (logical for bool); no gradient. */
GS_API gs_tensor gs_bitwise_and(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_bitwise_or(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_bitwise_xor(gs_tensor a, gs_tensor b);

GS_API gs_tensor gs_add_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_sub_scalar(gs_tensor a, double s);
/* s - a */
GS_API gs_tensor gs_rsub_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_mul_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_div_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_pow_scalar(gs_tensor a, double exponent);
GS_API gs_tensor gs_maximum_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_minimum_scalar(gs_tensor a, double s);

/* ---- unary -------------------------------------------------------------------------- */

GS_API gs_tensor gs_neg(gs_tensor t);
GS_API gs_tensor gs_abs(gs_tensor t);
/* Floating results; integer inputs compute in f32, as torch.exp. */
GS_API gs_tensor gs_exp(gs_tensor t);
GS_API gs_tensor gs_log(gs_tensor t);
GS_API gs_tensor gs_sqrt(gs_tensor t);
GS_API gs_tensor gs_rsqrt(gs_tensor t);
GS_API gs_tensor gs_tanh(gs_tensor t);
GS_API gs_tensor gs_sin(gs_tensor t);
GS_API gs_tensor gs_cos(gs_tensor t);
GS_API gs_tensor gs_tan(gs_tensor t);
GS_API gs_tensor gs_sigmoid(gs_tensor t);
GS_API gs_tensor gs_relu(gs_tensor t);
GS_API gs_tensor gs_leaky_relu(gs_tensor t, double negative_slope);
/* Exact GELU: x * Phi(x), with the normal CDF through erf. */
GS_API gs_tensor gs_gelu(gs_tensor t);
/* GELU's tanh form (torch's approximate='tanh'): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
 * x^3))); recorded as GeluBackward, as torch's. */
GS_API gs_tensor gs_gelu_tanh(gs_tensor t);
/* The activations of torch.nn, with torch 1.13's values and slopes (at the kinks too). */
/* x * sigmoid(x). */
GS_API gs_tensor gs_silu(gs_tensor t);
/* x above 0, alpha * (exp(x) - 1) at or below. */
GS_API gs_tensor gs_elu(gs_tensor t, double alpha);
/* scale * elu(x, alpha) with torch's constants (alpha 1.6732..., scale 1.0507...). */
GS_API gs_tensor gs_selu(gs_tensor t);
/* log(1 + exp(beta * x)) / beta, or x where beta * x > threshold. */
GS_API gs_tensor gs_softplus(gs_tensor t, double beta, double threshold);
/* x limited to [min_val, max_val]; the gradient is 0 at the bounds (torch's). */
GS_API gs_tensor gs_hardtanh(gs_tensor t, double min_val, double max_val);
/* hardtanh(x, 0, 6). */
GS_API gs_tensor gs_relu6(gs_tensor t);
/* x / 6 + 1/2 limited to [0, 1]. */
GS_API gs_tensor gs_hardsigmoid(gs_tensor t);
/* x * hardsigmoid(x). */
GS_API gs_tensor gs_hardswish(gs_tensor t);
/* log(sigmoid(x)), computed stably. */
GS_API gs_tensor gs_logsigmoid(gs_tensor t);
/* x * tanh(softplus(x)). */
GS_API gs_tensor gs_mish(gs_tensor t);
/* Limits to [min, max]; pass -INFINITY or INFINITY for no bound. */
GS_API gs_tensor gs_clamp(gs_tensor t, double min, double max);
/* Rounds down (integers unchanged); no gradient (zero almost everywhere). */
GS_API gs_tensor gs_floor(gs_tensor t);
/* Round up, half to even (torch.round: round(2.5) = 2, round(-0.5) = -0), toward zero, and
 * -1, 0 or 1 (0 for NaN, as torch on the CPU). Integers come back unchanged (sign: their
 * sign), and as floor none records a gradient (torch's is zero). */
GS_API gs_tensor gs_ceil(gs_tensor t);
GS_API gs_tensor gs_round(gs_tensor t);
GS_API gs_tensor gs_trunc(gs_tensor t);
GS_API gs_tensor gs_sign(gs_tensor t);
/* torch.round(t, decimals=d) of a floating t: round half to even at 10^-d (d < 0 rounds to
 * tens, hundreds...); d = 0 is gs_round. No gradient. */
GS_API gs_tensor gs_round_decimals(gs_tensor t, int decimals);
/* t - trunc(t), floating only; gradient g. */
GS_API gs_tensor gs_frac(gs_tensor t);
/* t * t; integers stay integers (wrapping), as torch.square. */
GS_API gs_tensor gs_square(gs_tensor t);
/* Floating results (integers compute in f32): 1 / t, log(1 + t), exp(t) - 1, logarithms to
 * base 2 and 10, inverse and hyperbolic trigonometry, and C99's erf. */
GS_API gs_tensor gs_reciprocal(gs_tensor t);
GS_API gs_tensor gs_log1p(gs_tensor t);
GS_API gs_tensor gs_expm1(gs_tensor t);
GS_API gs_tensor gs_log2(gs_tensor t);
GS_API gs_tensor gs_log10(gs_tensor t);
GS_API gs_tensor gs_asin(gs_tensor t);
GS_API gs_tensor gs_acos(gs_tensor t);
GS_API gs_tensor gs_atan(gs_tensor t);
GS_API gs_tensor gs_sinh(gs_tensor t);
GS_API gs_tensor gs_cosh(gs_tensor t);
GS_API gs_tensor gs_erf(gs_tensor t);
/* More of the same, as torch's: inverse hyperbolic functions, the complementary error
 * function erfc, the inverse error function erfinv (+-inf at +-1, NaN beyond), 2^t, the log-gamma
 * and digamma (psi) functions (digamma is -inf at +0, NaN at the negative integers; its
 * gradient is polygamma(1, t)). */
GS_API gs_tensor gs_asinh(gs_tensor t);
GS_API gs_tensor gs_acosh(gs_tensor t);
GS_API gs_tensor gs_atanh(gs_tensor t);
GS_API gs_tensor gs_erfc(gs_tensor t);
GS_API gs_tensor gs_erfinv(gs_tensor t);
GS_API gs_tensor gs_exp2(gs_tensor t);
GS_API gs_tensor gs_lgamma(gs_tensor t);
GS_API gs_tensor gs_digamma(gs_tensor t);
/* The n-th derivative of digamma (n >= 0), as torch.polygamma: trigamma for n = 1, higher
 * orders through the Hurwitz zeta function; +-inf at 0 and the negative integers. */
GS_API gs_tensor gs_polygamma(int n, gs_tensor t);
/* The modified Bessel functions of the first kind I0 and I1 (torch.special.i0, i1), the same
 * scaled by exp(-|t|) (i0e, i1e: finite where I0 and I1 overflow), and the scaled
 * complementary error function exp(t^2) erfc(t) (erfcx); floating results (integers give the
 * default dtype), each differentiable as torch 1.13's (d i0 = i1, d erfcx = 2 t erfcx(t) -
 * 2 / sqrt(pi), ...). */
GS_API gs_tensor gs_i0(gs_tensor t);
GS_API gs_tensor gs_i0e(gs_tensor t);
GS_API gs_tensor gs_i1(gs_tensor t);
GS_API gs_tensor gs_i1e(gs_tensor t);
GS_API gs_tensor gs_erfcx(gs_tensor t);
/* ~t: bitwise not of i64, logical not of bool. */
GS_API gs_tensor gs_bitwise_not(gs_tensor t);

/* ---- comparisons (bool results) and selection --------------------------------------- */

GS_API gs_tensor gs_eq(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_ne(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_lt(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_le(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_gt(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_ge(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_eq_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_ne_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_lt_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_le_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_gt_scalar(gs_tensor a, double s);
GS_API gs_tensor gs_ge_scalar(gs_tensor a, double s);
/* t with value written where mask (bool, broadcast to t's shape) is true, as
 * Tensor.masked_fill; t's dtype (value converted to it). */
GS_API gs_tensor gs_masked_fill(gs_tensor t, gs_tensor mask, double value);
/* The parametric ReLU, as F.prelu: x where x > 0, weight * x elsewhere; weight (x's floating
 * dtype) holds one value for all, or one per channel (dim 1 of x). */
GS_API gs_tensor gs_prelu(gs_tensor x, gs_tensor weight);
/* t surrounded by value, as torch.constant_pad_nd (F.pad's 'constant' mode): pad holds npad
 * sizes, two per dim from the last backwards ((left, right) of the last dim, then of the one
 * before it, ...), at most two per dim of t; a negative size crops that side instead. */
GS_API gs_tensor gs_constant_pad_nd(gs_tensor t, const int64_t *pad, int npad, double value);
/* [*, C r^2, H, W] to [*, C, H r, W r], each r x r block of the output from r^2 channels, as
 * torch.pixel_shuffle (a copy; 3 to GS_MAX_DIMS - 2 dims). gs_pixel_unshuffle is its inverse
 * ([*, C, H r, W r] to [*, C r^2, H, W]). */
GS_API gs_tensor gs_pixel_shuffle(gs_tensor t, int64_t upscale_factor);
GS_API gs_tensor gs_pixel_unshuffle(gs_tensor t, int64_t downscale_factor);
/* t padded along its last npad / 2 dims (1 to 3; t has one or two dims more) by its own
 * rows, pads as gs_constant_pad_nd's (none negative): mirrored without repeating the edge
 * (F.pad's 'reflect' mode: each pad below its dim's size), the edge repeated ('replicate'),
 * or wrapped around from the other side ('circular': each pad at most its dim's size). */
GS_API gs_tensor gs_reflection_pad(gs_tensor t, const int64_t *pad, int npad);
GS_API gs_tensor gs_replication_pad(gs_tensor t, const int64_t *pad, int npad);
GS_API gs_tensor gs_circular_pad(gs_tensor t, const int64_t *pad, int npad);
/* t [N, C, *] (k dims in *, 1 to 3) resized to sizes by nearest rows, as F.interpolate's
 * 'nearest' mode: output row j along a dim takes input row floor(j * scale), scale scales[i]
 * when scales is given and it is positive (1 / scale_factor), else in / out. */
GS_API gs_tensor gs_upsample_nearest(gs_tensor t, const int64_t *sizes, const double *scales,
                                     int k);
/* t [N, C, H, W] resized to sizes[0] x sizes[1] by bicubic convolution (A = -0.75), as
 * F.interpolate's 'bicubic' mode: output row j reads around input row j * s (align_corners:
 * s = (in - 1) / (out - 1)) or (j + 0.5) * s - 0.5 (s = scales[i] when scales is given and it
 * is positive, i.e. 1 / scale_factor, else in / out), its 4 taps clamped to the edges. */
GS_API gs_tensor gs_upsample_bicubic2d(gs_tensor t, const int64_t sizes[2], const double *scales,
                                       bool align_corners);
/* How gs_grid_sample reads between pixels and outside the image (torch's numbering). */
typedef enum gs_grid_sample_mode {
  GS_GRID_SAMPLE_BILINEAR,
  GS_GRID_SAMPLE_NEAREST,
  GS_GRID_SAMPLE_BICUBIC
} gs_grid_sample_mode;
typedef enum gs_grid_padding {
  GS_GRID_PADDING_ZEROS,     /* outside reads 0 */
  GS_GRID_PADDING_BORDER,    /* positions clipped to the edge pixels */
  GS_GRID_PADDING_REFLECTION /* positions mirrored at the edges */
} gs_grid_padding;
/* input [N, C, H, W] read at the points of grid [N, Ho, Wo, 2] (x then y, -1 and 1 the edges:
 * the outer pixels' centers with align_corners, their outer borders without), as
 * F.grid_sample: [N, C, Ho, Wo], input's dtype (grid's must match; f32 or f64). A volume
 * [N, C, D, H, W] is read at grid [N, Do, Ho, Wo, 3] (x, y, z) into [N, C, Do, Ho, Wo],
 * trilinear (BILINEAR, as torch names it) or nearest. Gradients go to input and grid
 * (nearest: a zero gradient for grid, as torch's). */
GS_API gs_tensor gs_grid_sample(gs_tensor input, gs_tensor grid, gs_grid_sample_mode mode,
                                gs_grid_padding padding, bool align_corners);
/* The sampling grid of the affine maps theta ([N, 2, 3] for size (N, C, H, W): [N, H, W, 2];
 * [N, 3, 4] for (N, C, D, H, W): [N, D, H, W, 3]), as F.affine_grid: each output point is
 * theta times its own normalized (x, y[, z], 1), which run over [-1, 1] (align_corners) or the
 * pixel centers inside it. theta floating; differentiable. */
GS_API gs_tensor gs_affine_grid(gs_tensor theta, const int64_t *size, int nsize,
                                bool align_corners);
/* The sliding windows of t [N, C, H, W] (or [C, H, W]) as columns, as F.unfold (torch's
 * im2col): [N, C kh kw, L], row c kh kw + ki kw + kj holding element (ki, kj) of each of the
 * L windows of channel c (row-major over the windows). Each array holds (h, w); padding adds
 * zeros on both sides. */
GS_API gs_tensor gs_unfold(gs_tensor t, const int64_t kernel[2], const int64_t dilation[2],
                           const int64_t padding[2], const int64_t stride[2]);
/* cond ? a : b elementwise; cond must be bool; all three broadcast. */
GS_API gs_tensor gs_where(gs_tensor cond, gs_tensor a, gs_tensor b);

/* ---- in-place (write through t; t's dtype and shape never change) ------------------- */

/* b is broadcast to t's shape and converted to t's dtype (an error if that would need a
 * wider category, e.g. adding f32 into i64, as in PyTorch). */
GS_API void gs_add_(gs_tensor t, gs_tensor b);
GS_API void gs_sub_(gs_tensor t, gs_tensor b);
GS_API void gs_mul_(gs_tensor t, gs_tensor b);
GS_API void gs_div_(gs_tensor t, gs_tensor b);
/* t = t ^ b (torch's pow_); an integer t takes no negative exponents. */
GS_API void gs_pow_(gs_tensor t, gs_tensor b);
/* t += alpha * b in one pass (PyTorch's t.add_(b, alpha=alpha)), rounded as gs_mul_scalar then
 * gs_add_ would round it. Not for bool; for i64 tensors alpha must be integral. */
GS_API void gs_add_scaled_(gs_tensor t, gs_tensor b, double alpha);
/* For integer and bool tensors s must be integral (else a dtype error). */
GS_API void gs_add_scalar_(gs_tensor t, double s);
GS_API void gs_mul_scalar_(gs_tensor t, double s);
GS_API void gs_zero_(gs_tensor t);
GS_API void gs_fill_(gs_tensor t, double value);
/* Copies src's values (broadcast, any dtype converted) into t. */
GS_API void gs_copy_(gs_tensor t, gs_tensor src);
GS_API void gs_clamp_(gs_tensor t, double min, double max);
/* The unary ops in place, recorded as PyTorch records t.sin_(): the op's own node becomes t's
 * grad_fn. The result keeps t's dtype: a floating op on an integer tensor is refused. */
GS_API void gs_neg_(gs_tensor t);
GS_API void gs_abs_(gs_tensor t);
GS_API void gs_exp_(gs_tensor t);
GS_API void gs_log_(gs_tensor t);
GS_API void gs_sqrt_(gs_tensor t);
GS_API void gs_rsqrt_(gs_tensor t);
GS_API void gs_tanh_(gs_tensor t);
GS_API void gs_sigmoid_(gs_tensor t);
GS_API void gs_relu_(gs_tensor t);
GS_API void gs_sin_(gs_tensor t);
GS_API void gs_cos_(gs_tensor t);
GS_API void gs_tan_(gs_tensor t);
GS_API void gs_frac_(gs_tensor t);
GS_API void gs_reciprocal_(gs_tensor t);
GS_API void gs_square_(gs_tensor t);
GS_API void gs_log1p_(gs_tensor t);
GS_API void gs_expm1_(gs_tensor t);
GS_API void gs_log2_(gs_tensor t);
GS_API void gs_log10_(gs_tensor t);
GS_API void gs_asin_(gs_tensor t);
GS_API void gs_acos_(gs_tensor t);
GS_API void gs_atan_(gs_tensor t);
GS_API void gs_sinh_(gs_tensor t);
GS_API void gs_cosh_(gs_tensor t);
GS_API void gs_erf_(gs_tensor t);
GS_API void gs_asinh_(gs_tensor t);
GS_API void gs_acosh_(gs_tensor t);
GS_API void gs_atanh_(gs_tensor t);
GS_API void gs_erfc_(gs_tensor t);
GS_API void gs_erfinv_(gs_tensor t);
GS_API void gs_exp2_(gs_tensor t);
GS_API void gs_lgamma_(gs_tensor t);
GS_API void gs_digamma_(gs_tensor t);

/* ---- reductions --------------------------------------------------------------------- */

/* Reduce over the listed dims (ndims 0: over all dims), keeping them as size 1 if keepdim.
 * Integer and bool sums are i64; floating sums accumulate in double. */
GS_API gs_tensor gs_sum(gs_tensor t, const int *dims, int ndims, bool keepdim);
/* The product of every element (torch.prod(t)), or along dim (keepdim: dim stays, size 1).
 * Integer and bool products are i64 (wrapping on overflow); floating ones multiply in double.
 * The gradient is exact when t holds zeros, as torch's. */
GS_API gs_tensor gs_prod_all(gs_tensor t);
GS_API gs_tensor gs_prod(gs_tensor t, int dim, bool keepdim);
/* The lower median of every element (torch.median(t)): for an even count, the smaller of the
 * middle two; NaN when t holds one. Its gradient is shared evenly by the elements equal to it. */
GS_API gs_tensor gs_median_all(gs_tensor t);
/* The lower median along dim: writes *values (gradient to the picked element) and *indices
 * (i64, where it is in each row); either may be NULL. A row holding NaN gives its first NaN. */
GS_API bool gs_median(gs_tensor t, int dim, bool keepdim, gs_tensor *values, gs_tensor *indices);
/* Floating only. */
GS_API gs_tensor gs_mean(gs_tensor t, const int *dims, int ndims, bool keepdim);
/* Largest / smallest value over the dims (torch.amax / torch.amin); NaN propagates. */
GS_API gs_tensor gs_max(gs_tensor t, const int *dims, int ndims, bool keepdim);
GS_API gs_tensor gs_min(gs_tensor t, const int *dims, int ndims, bool keepdim);
/* log(sum(exp(t))) over the dims, computed stably. Floating only. */
GS_API gs_tensor gs_logsumexp(gs_tensor t, const int *dims, int ndims, bool keepdim);
/* Index (i64) of the first largest / smallest value along dim. */
GS_API gs_tensor gs_argmax(gs_tensor t, int dim, bool keepdim);
GS_API gs_tensor gs_argmin(gs_tensor t, int dim, bool keepdim);
/* Index into the flattened tensor, 0-dim i64. */
GS_API gs_tensor gs_argmax_all(gs_tensor t);
GS_API gs_tensor gs_argmin_all(gs_tensor t);
/* Variance over the dims (ndims 0: all), sum((t - mean)^2) / (M - correction) with M the
 * number of elements each output folds: correction 1 is torch.var's default (unbiased), 0
 * the biased estimate. Floating only. No degrees of freedom left gives NaN (or inf), as
 * PyTorch. gs_std is its square root (torch.std). */
GS_API gs_tensor gs_var(gs_tensor t, const int *dims, int ndims, double correction, bool keepdim);
GS_API gs_tensor gs_std(gs_tensor t, const int *dims, int ndims, double correction, bool keepdim);
/* The p-norm over the dims (ndims 0: all), as torch.norm / torch.linalg.vector_norm: p 2 is
 * sqrt(sum(t^2)), 1 sum(|t|), INFINITY max(|t|), others sum(|t|^p)^(1/p). Floating only. */
GS_API gs_tensor gs_norm(gs_tensor t, double p, const int *dims, int ndims, bool keepdim);
/* Sums t down to shape (the reverse of broadcasting t from shape), as Tensor.sum_to_size. */
GS_API gs_tensor gs_sum_to(gs_tensor t, const int64_t *shape, int ndim);
GS_API gs_tensor gs_softmax(gs_tensor t, int dim);
GS_API gs_tensor gs_log_softmax(gs_tensor t, int dim);

/* ---- linear algebra (OpenBLAS) ------------------------------------------------------ */

/* torch.matmul: 1-D and 2-D operands and batched operands whose batch dims broadcast.
 * Operands of one dtype: f32 or f64 (OpenBLAS), or i64 (a plain loop that wraps on
 * overflow); bool is refused. Transposed operands go to BLAS as transposed, not copied. */
GS_API gs_tensor gs_matmul(gs_tensor a, gs_tensor b);
/* The strict products of torch.mm, torch.bmm, torch.mv and torch.dot: matmul's product with
 * the operands' dims fixed (2-D @ 2-D; 3-D @ 3-D with equal batch sizes, no broadcasting;
 * 2-D @ 1-D; 1-D . 1-D), anything else refused naming both shapes. Their nodes are named after
 * them (MmBackward, BmmBackward, MvBackward, DotBackward). */
GS_API gs_tensor gs_mm(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_bmm(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_mv(gs_tensor a, gs_tensor b);
GS_API gs_tensor gs_dot(gs_tensor a, gs_tensor b);
/* The cross product of 3-vectors along dim (torch.linalg.cross): a and b of one dtype and
 * ndim, size 3 along dim, broadcast in the other dims. */
GS_API gs_tensor gs_cross(gs_tensor a, gs_tensor b, int dim);
/* The sum of a 2-D matrix's diagonal (torch.trace); integer and bool give i64. */
GS_API gs_tensor gs_trace(gs_tensor t);
/* beta * bias + alpha * (a @ b); a and b 2-D, bias broadcast to the result. */
GS_API gs_tensor gs_addmm(gs_tensor bias, gs_tensor a, gs_tensor b, double beta, double alpha);

/* ---- indexing ----------------------------------------------------------------------- */

/* The entries of t at index (1-D i64) along dim. */
GS_API gs_tensor gs_index_select(gs_tensor t, int dim, gs_tensor index);
/* t[index] as torch's advanced indexing: dims [dim, dim + span) of t, taken as one (their
 * row-major flattening), are replaced by index's dims, each entry of index (i64, any shape,
 * negative counting from the end) picking one position there; recorded as one IndexBackward
 * node over t. t[list] is span 1, t[mask] for a mask of t's shape span t's ndim over the
 * mask's true positions. */
GS_API gs_tensor gs_index(gs_tensor t, int dim, int span, gs_tensor index);
/* t[indices[0], indices[1], ...] as torch's advanced indexing (at::index), the index tensors
 * paired elementwise: t[rows, cols] is t[rows[i], cols[i]], not an outer product. Entry i of
 * indices (n of them, n <= ndim) indexes the next dim of t: an i64 tensor (negative entries
 * count from the end), GS_NO_TENSOR for the whole dim, or a bool mask of k dims standing for
 * its k nonzero() columns over the next k dims (of the mask's shape). The i64 indexes
 * broadcast together; their shape replaces the indexed dims where they are when those are
 * adjacent, and goes first otherwise. An index out of range is reported as torch's "index 5
 * is out of bounds for dimension 0 with size 3" (dimension: among the indexed ones). One
 * IndexTensorsBackward node (torch's IndexBackward0): a position picked twice gets both
 * gradients. */
GS_API gs_tensor gs_index_tensors(gs_tensor t, int n, const gs_tensor *indices);
/* t[indices...] = values as torch's index_put_: values (t's dtype) broadcast to the shape
 * gs_index_tensors would give and written there in place (a version bump), or added when
 * accumulate (a position named twice then gets every value; without accumulate it keeps one).
 * Records IndexPutBackward (torch's IndexPutBackward0); through a view, inside CopySlices. */
GS_API void gs_index_put_tensors_(gs_tensor t, int n, const gs_tensor *indices, gs_tensor values,
                                  bool accumulate);
/* The same into a copy of t (torch.index_put). */
GS_API gs_tensor gs_index_put_tensors(gs_tensor t, int n, const gs_tensor *indices,
                                      gs_tensor values, bool accumulate);
/* out[i][j] = t[index[i][j]][j] for dim 0, and so on (index i64, same ndim as t). */
GS_API gs_tensor gs_gather(gs_tensor t, int dim, gs_tensor index);
/* A copy of t with src added at index along dim: out[index[i][j]][j] += src[i][j]. */
GS_API gs_tensor gs_scatter_add(gs_tensor t, int dim, gs_tensor index, gs_tensor src);
/* What a scatter does with the element it lands on (torch's reduce=): writes over it, adds to
 * it or multiplies it. MULTIPLY has no gradient (nor has torch 1.13's): it refuses inputs
 * that require grad. (ADD is scatter_add, with its gradient.) */
typedef enum gs_scatter_reduce {
  GS_SCATTER_REPLACE,
  GS_SCATTER_ADD,
  GS_SCATTER_MULTIPLY,
} gs_scatter_reduce;
/* A copy of t with src's elements written at index along dim (torch.scatter):
 * out[index[i][j]][j] = src[i][j] for dim 0; index i64 with t's ndim, no larger than src in
 * any dim nor than t in any dim but dim. A position named twice keeps one of its values. */
GS_API gs_tensor gs_scatter(gs_tensor t, int dim, gs_tensor index, gs_tensor src,
                            gs_scatter_reduce reduce);
/* How torch.scatter_reduce combines the values that land on one element. */
typedef enum gs_scatter_reduction {
  GS_SCATTER_SUM,
  GS_SCATTER_PROD,
  GS_SCATTER_MEAN,
  GS_SCATTER_AMAX,
  GS_SCATTER_AMIN,
} gs_scatter_reduction;
/* torch.scatter_reduce (scatter-reduce.c): a copy of t (numeric, not bool) with each element
 * of src combined by reduce into the element index names along dim (index as gs_scatter's);
 * include_self false: an element that receives values starts from them, not from t's. Means
 * of integers round down. Floating results are differentiable in t and src (amax and amin
 * split the gradient between ties, as torch 1.13). */
GS_API gs_tensor gs_scatter_reduced(gs_tensor t, int dim, gs_tensor index, gs_tensor src,
                                    gs_scatter_reduction reduce, bool include_self);
/* The same with one value at every position index names (t.scatter(dim, index, 2.0)). */
GS_API gs_tensor gs_scatter_value(gs_tensor t, int dim, gs_tensor index, double value,
                                  gs_scatter_reduce reduce);
/* A copy of t with alpha * src added at index (1-D, i64 or i32) along dim: out[index[i]] +=
 * alpha * src[i] for dim 0 (torch.index_add); src has t's shape but len(index) along dim. */
GS_API gs_tensor gs_index_add(gs_tensor t, int dim, gs_tensor index, gs_tensor src, double alpha);
/* torch.index_reduce (reduce prod, mean, amax or amin): a copy of t with each slice src[i]
 * along dim combined into slice index[i] (1-D, i64 or i32), as gs_scatter_reduced combines;
 * src has t's shape but len(index) along dim. Differentiable as scatter_reduce. */
GS_API gs_tensor gs_index_reduce(gs_tensor t, int dim, gs_tensor index, gs_tensor src,
                                 gs_scatter_reduction reduce, bool include_self);
/* A copy of t with value at the positions index (1-D, i64) names along dim (index_fill). */
GS_API gs_tensor gs_index_fill(gs_tensor t, int dim, gs_tensor index, double value);
/* The elements of t, seen flattened in row-major order, at index (i64, any shape; negative
 * values count from the end): a tensor of index's shape (torch.take). */
GS_API gs_tensor gs_take(gs_tensor t, gs_tensor index);
/* gather along dim after broadcasting t and index in every other dim (torch.take_along_dim);
 * dim_given false: both flattened, as take_along_dim(t, index) without dim. */
GS_API gs_tensor gs_take_along_dim(gs_tensor t, gs_tensor index, int dim, bool dim_given);
/* Rows of weight (2-D) picked by index (i64, any shape): shape index.shape + [dim]. */
GS_API gs_tensor gs_embedding(gs_tensor weight, gs_tensor index);
/* The same with torch.nn.functional.embedding's options: padding_idx a row in [0, rows) whose
 * gradient stays zero (-1: none); scale_grad_by_freq divides each row's gradient by how many
 * times index names it. */
GS_API gs_tensor gs_embedding_with(gs_tensor weight, gs_tensor index, int64_t padding_idx,
                                   bool scale_grad_by_freq);
/* torch.embedding_renorm_: each row of weight that index names whose norm_type-norm exceeds
 * max_norm is scaled in place by max_norm / (norm + 1e-7), unrecorded (as under no_grad; a
 * version bump). false after an error. */
GS_API bool gs_embedding_renorm_(gs_tensor weight, gs_tensor index, double max_norm,
                                 double norm_type);

/* The elements of t where mask (bool, broadcast with t) is true, in row-major order: a 1-D
 * tensor (torch.masked_select, t[mask]). The gradient goes back to those positions. */
GS_API gs_tensor gs_masked_select(gs_tensor t, gs_tensor mask);
/* A copy of t with values written at index (1-D i64) along dim 0: out[index[i]] = values[i]
 * (values broadcast to [len(index), t.shape[1:]]), or added when accumulate (index_put,
 * t[index] = values). Gradients: t's where it was not overwritten, values' gathered back. A
 * repeated index without accumulate keeps the sum of its values. */
GS_API gs_tensor gs_index_put(gs_tensor t, gs_tensor index, gs_tensor values, bool accumulate);
/* index (i64, values in [0, num_classes)) as one-hot rows: shape index.shape + [num_classes],
 * i64. num_classes < 0: the largest index + 1 (F.one_hot's -1). */
GS_API gs_tensor gs_one_hot(gs_tensor index, int64_t num_classes);

/* ---- along a dim: scans and ordering ---------------------------------------------------- */

/* Running sums along dim (torch.cumsum); integer and bool inputs give i64. Gradient: the
 * reversed running sums of g. */
GS_API gs_tensor gs_cumsum(gs_tensor t, int dim);
/* Running log(sum(exp)) along dim, computed stably (torch.logcumsumexp). Floating only. */
GS_API gs_tensor gs_logcumsumexp(gs_tensor t, int dim);
/* Running products along dim (torch.cumprod); integer and bool inputs give i64. The gradient
 * is exact with zeros (a formula in C: no double backward). */
GS_API gs_tensor gs_cumprod(gs_tensor t, int dim);
/* Running maximum / minimum along dim with the index (i64) each came from (torch.cummax,
 * torch.cummin): a tie takes the later index, NaN stays once met. Either output may be NULL. */
GS_API bool gs_cummax(gs_tensor t, int dim, gs_tensor *values, gs_tensor *indices);
GS_API bool gs_cummin(gs_tensor t, int dim, gs_tensor *values, gs_tensor *indices);
/* The distinct values of t, flattened, in ascending order (torch.unique(t), dim=None): writes
 * *values (t's dtype, no gradient: torch 1.13's has none either), *inverse (i64 of t's shape:
 * where each element's value is in *values) and *counts (i64: how often each occurs); any of
 * the three may be NULL. */
GS_API bool gs_unique(gs_tensor t, gs_tensor *values, gs_tensor *inverse, gs_tensor *counts);
/* The distinct slices of t along dim (torch.unique(t, dim=dim)), in lexicographic order:
 * *values is t with dim shrunk to their count, *inverse (i64 [t's size along dim]) the slice
 * each one is, *counts (i64) how often each occurs; any may be NULL. No gradient. */
GS_API bool gs_unique_dim(gs_tensor t, int dim, gs_tensor *values, gs_tensor *inverse,
                          gs_tensor *counts);
/* Runs of equal consecutive values (dim NULL: of t flattened) or slices along *dim, as
 * torch.unique_consecutive: *values the first of each run, *inverse (i64, t's shape flattened
 * or [size along dim]) the run of each, *counts (i64) the runs' lengths. No gradient. */
GS_API bool gs_unique_consecutive(gs_tensor t, const int *dim, gs_tensor *values,
                                  gs_tensor *inverse, gs_tensor *counts);
/* Stable sort along dim: writes new handles to *values (gradient through a gather) and
 * *indices (i64); either may be NULL. NaN sorts as the largest value, as torch.sort. False
 * after reporting an error. */
GS_API bool gs_sort(gs_tensor t, int dim, bool descending, gs_tensor *values, gs_tensor *indices);
/* The indices gs_sort would give (torch.argsort). */
GS_API gs_tensor gs_argsort(gs_tensor t, int dim, bool descending);
/* The k largest (or smallest) along dim, in sorted order (torch.topk). */
GS_API bool gs_topk(gs_tensor t, int64_t k, int dim, bool largest, gs_tensor *values,
                    gs_tensor *indices);

/* ---- joining and splitting ---------------------------------------------------------- */

GS_API gs_tensor gs_cat(const gs_tensor *tensors, int count, int dim);
GS_API gs_tensor gs_stack(const gs_tensor *tensors, int count, int dim);
/* Views of split_size elements along dim (the last may be smaller). Writes up to max_out
 * handles into out and returns how many pieces there are (-1 on error); if the pieces do
 * not fit in max_out nothing is created and that is an error. out NULL with max_out 0 only
 * returns the count. */
GS_API int gs_split(gs_tensor t, int64_t split_size, int dim, gs_tensor *out, int max_out);
/* chunks views of ceil(size/chunks) elements along dim (fewer if size is small), as
 * torch.chunk. Same return convention as gs_split. */
GS_API int gs_chunk(gs_tensor t, int chunks, int dim, gs_tensor *out, int max_out);

/* ---- convolution and pooling (images [N, C, H, W], or [C, H, W] unbatched) ---------- */

/* torch.nn.functional.conv2d's options. Zero-initialised fields take PyTorch's defaults
 * (stride 1, padding 0, dilation 1, groups 1); NULL options are all defaults. Index 0 is
 * the height, 1 the width. */
typedef struct gs_conv2d_options {
  int64_t stride[2];
  int64_t padding[2];  /* zeros added on each side */
  int64_t dilation[2];
  int64_t groups;      /* in and out channels split into this many independent groups */
} gs_conv2d_options;

/* torch.nn.functional.conv2d: input [N, C, H, W] (or [C, H, W]), weight
 * [O, C / groups, kh, kw], bias [O] or GS_NO_TENSOR; all of one floating dtype. The result is
 * [N, O, H', W'] with H' = (H + 2 padding - dilation (kh - 1) - 1) / stride + 1. Computed
 * through im2col and OpenBLAS gemm; differentiable in input, weight and bias, twice too. */
GS_API gs_tensor gs_conv2d(gs_tensor input, gs_tensor weight, gs_tensor bias,
                           const gs_conv2d_options *options);

/* torch.nn.functional.conv1d's options; zero fields take PyTorch's defaults (stride 1,
 * padding 0, dilation 1, groups 1). */
typedef struct gs_conv1d_options {
  int64_t stride;
  int64_t padding; /* zeros added on each side */
  int64_t dilation;
  int64_t groups;
} gs_conv1d_options;

/* torch.nn.functional.conv1d (engine/ops/conv1d.c): input [N, C, L] (or [C, L]), weight
 * [O, C / groups, K], bias [O] or GS_NO_TENSOR, one floating dtype. The result is [N, O, L']
 * with L' = (L + 2 padding - dilation (K - 1) - 1) / stride + 1: conv2d of height 1, one node
 * (as torch's). Differentiable in all three, twice too. */
GS_API gs_tensor gs_conv1d(gs_tensor input, gs_tensor weight, gs_tensor bias,
                           const gs_conv1d_options *options);

/* torch.nn.functional.conv_transpose2d's options; zero fields take PyTorch's defaults
 * (stride 1, padding 0, output_padding 0, dilation 1, groups 1), as gs_conv2d_options'. */
typedef struct gs_conv_transpose2d_options {
  int64_t stride[2];
  int64_t padding[2];        /* cropped from each side of the full output */
  int64_t output_padding[2]; /* added to one side (each below stride or dilation) */
  int64_t dilation[2];
  int64_t groups;
} gs_conv_transpose2d_options;

/* torch.nn.functional.conv_transpose2d (engine/ops/conv-transpose.c): input [N, C, H, W] (or
 * [C, H, W]), weight [C, O / groups, kh, kw], bias [O] or GS_NO_TENSOR, one floating dtype.
 * The result is [N, O, H', W'] with H' = (H - 1) stride - 2 padding + dilation (kh - 1) +
 * output_padding + 1: conv2d's input gradient. Differentiable in all three, twice too. */
GS_API gs_tensor gs_conv_transpose2d(gs_tensor input, gs_tensor weight, gs_tensor bias,
                                     const gs_conv_transpose2d_options *options);

/* Pooling options, as torch.nn.functional.max_pool2d / avg_pool2d (index 0 the height, 1
 * the width). kernel[0] is required; a zero kernel[1], stride[1] or dilation[1] repeats
 * index 0 ({.kernel = {2}} is a 2x2 window); a zero stride takes the kernel size (PyTorch's
 * default); a zero dilation is 1 (max pooling only). Padding is taken as given (each at most
 * half the kernel). */
typedef struct gs_pool2d_options {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2];
  bool ceil_mode;          /* round the output size up instead of down */
  bool count_exclude_pad;  /* average pooling: divide by the window's part inside the image
                              (torch's count_include_pad=False); false is torch's default */
} gs_pool2d_options;

/* The largest value of each window (floating input; NaN propagates). indices, if not NULL,
 * receives a new i64 tensor of the output's shape with each maximum's flat index into its
 * H x W plane (torch's return_indices=True). The gradient goes to those positions. */
GS_API gs_tensor gs_max_pool2d(gs_tensor input, const gs_pool2d_options *options,
                               gs_tensor *indices);
/* The mean of each window (floating input). */
GS_API gs_tensor gs_avg_pool2d(gs_tensor input, const gs_pool2d_options *options);

/* ---- volumetric convolution and pooling (volumes [N, C, D, H, W], or [C, D, H, W]) ---- */

/* torch.nn.functional.conv3d's options, as gs_conv2d_options' with index 0 the depth, 1 the
 * height, 2 the width; zero fields take PyTorch's defaults, NULL options are all defaults. */
typedef struct gs_conv3d_options {
  int64_t stride[3];
  int64_t padding[3]; /* zeros added on each side */
  int64_t dilation[3];
  int64_t groups;
} gs_conv3d_options;

/* torch.nn.functional.conv3d (engine/ops/conv.c, the loops of conv2d with a depth): input
 * [N, C, D, H, W] (or [C, D, H, W]), weight [O, C / groups, kd, kh, kw], bias [O] or
 * GS_NO_TENSOR, one floating dtype. The result is [N, O, D', H', W'], each size as conv2d's.
 * Through vol2col and OpenBLAS gemm; differentiable in all three, twice too. */
GS_API gs_tensor gs_conv3d(gs_tensor input, gs_tensor weight, gs_tensor bias,
                           const gs_conv3d_options *options);

/* torch.nn.functional.conv_transpose3d's options (index 0 the depth), as
 * gs_conv_transpose2d_options'. */
typedef struct gs_conv_transpose3d_options {
  int64_t stride[3];
  int64_t padding[3];
  int64_t output_padding[3];
  int64_t dilation[3];
  int64_t groups;
} gs_conv_transpose3d_options;

/* torch.nn.functional.conv_transpose3d: input [N, C, D, H, W] (or unbatched), weight
 * [C, O / groups, kd, kh, kw], bias [O] or GS_NO_TENSOR: conv3d's input gradient, each size
 * as gs_conv_transpose2d's. Differentiable in all three, twice too. */
GS_API gs_tensor gs_conv_transpose3d(gs_tensor input, gs_tensor weight, gs_tensor bias,
                                     const gs_conv_transpose3d_options *options);

/* Volumetric pooling options, as gs_pool2d_options' with index 0 the depth: kernel[0] is
 * required, zero later entries of kernel, stride and dilation repeat index 0, a zero stride
 * takes the kernel size. */
typedef struct gs_pool3d_options {
  int64_t kernel[3];
  int64_t stride[3];
  int64_t padding[3];
  int64_t dilation[3];
  bool ceil_mode;
  bool count_exclude_pad;
} gs_pool3d_options;

/* torch.nn.functional.max_pool3d over input [N, C, D, H, W] (or [C, D, H, W]); indices, if
 * not NULL, receives each maximum's flat index into its D x H x W volume. */
GS_API gs_tensor gs_max_pool3d(gs_tensor input, const gs_pool3d_options *options,
                               gs_tensor *indices);
/* torch.nn.functional.avg_pool3d: the mean of each window. */
GS_API gs_tensor gs_avg_pool3d(gs_tensor input, const gs_pool3d_options *options);

/* ---- normalisation (batch-norm.c) ------------------------------------------------------ */

/* torch.nn.functional.batch_norm over dim 1 of input [N, C, ...] (floating). training: each
 * channel is normalised by its batch mean and biased variance, and running_mean and
 * running_var (if given: both [C], of the input's dtype) are updated in place to
 * (1 - momentum) * running + momentum * batch, the variance unbiased; otherwise the running
 * estimates normalise (then they are required). weight and bias ([C], or GS_NO_TENSOR for 1
 * and 0) scale and shift. PyTorch's defaults: momentum 0.1, eps 1e-5. Differentiable in
 * input, weight and bias. */
GS_API gs_tensor gs_batch_norm(gs_tensor input, gs_tensor running_mean, gs_tensor running_var,
                               gs_tensor weight, gs_tensor bias, bool training, double momentum,
                               double eps);

/* torch.nn.functional.group_norm (group-norm.c): input [N, C, ...] (floating) with its C
 * channels split into groups of C / groups, each group of each sample normalised by its mean
 * and biased variance (over its channels and positions), then scaled by weight and shifted by
 * bias ([C], or GS_NO_TENSOR for 1 and 0). One node, as torch's NativeGroupNormBackward0;
 * differentiable in input, weight and bias, twice. */
GS_API gs_tensor gs_group_norm(gs_tensor input, int64_t groups, gs_tensor weight, gs_tensor bias,
                               double eps);

/* torch.nn.functional.layer_norm (layer-norm.c): input (f32 or f64) whose last k dims are
 * normalized_shape[0..k), each row of those k dims normalised by its mean and biased variance,
 * then scaled elementwise by weight and shifted by bias (of normalized_shape, or GS_NO_TENSOR
 * for 1 and 0). One node, as torch's NativeLayerNormBackward0; differentiable in input, weight
 * and bias, twice. gs_layer_norm (nn.h) is the k = 1 case. */
GS_API gs_tensor gs_layer_norm_shape(gs_tensor input, const int64_t *normalized_shape, int k,
                                     gs_tensor weight, gs_tensor bias, double eps);

#ifdef __cplusplus
}
#endif
