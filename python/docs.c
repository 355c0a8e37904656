/* docs.c: the words help(), inspect.signature and editors show for the C extension's functions
 * and methods, kept in one place.
 *
 * Most ops exist three times: t.add(b), gradscope.add(t, b) and F.add(t, b). They share one
 * row here: its parameters after the tensor, and what it does. The method form gets
 * `($self, ...)`, the function forms `(input, ...)`. Each docstring starts with CPython's text
 * signature (`name(...)\n--\n\n`), so inspect.signature works on built-ins as it does on
 * Python functions. The parameters must be the ones the C code parses (its kwlist):
 * tests/python/test_docs.py checks every keyword here against the function itself.
 *
 * The tables that own a PyMethodDef array call gsp_docs_fill() on it before it is used; rows
 * of tensor-op-table.c and the forwarders of functions.c ask gsp_doc() for their string.
 */
#include "gs-py.h"

#include <string.h>

enum {
  METHOD = 1,   /* a method; a Tensor one is also gradscope.NAME(input, ...) (the forwarders) */
  FUNCTION = 2, /* only a module function, params are all of them */
};

typedef struct {
  const char *owner; /* "Tensor", "Optimizer", "gradscope", "F" (nn.functional), "nn", "optim" */
  const char *name;
  int forms;
  const char *params; /* after self/input; positional-only ones end with "/" */
  const char *text;
} doc_row;

static const doc_row rows[] = {
    /* ---- elementwise ---- */
    {"Tensor", "relu", METHOD, "/", "max(x, 0) elementwise."},
    {"Tensor", "exp", METHOD, "/", "e to the power of each element."},
    {"Tensor", "log", METHOD, "/", "The natural logarithm of each element."},
    {"Tensor", "sqrt", METHOD, "/", "The square root of each element."},
    {"Tensor", "rsqrt", METHOD, "/", "1 / sqrt(x) elementwise."},
    {"Tensor", "tanh", METHOD, "/", "The hyperbolic tangent of each element."},
    {"Tensor", "sigmoid", METHOD, "/", "1 / (1 + exp(-x)) elementwise."},
    {"Tensor", "abs", METHOD, "/", "The absolute value of each element."},
    {"Tensor", "neg", METHOD, "/", "-x elementwise."},
    {"Tensor", "gelu", METHOD, "/", "GELU with the exact (erf) form, as torch's default."},
    {"Tensor", "sin", METHOD, "/", "The sine of each element (radians)."},
    {"Tensor", "cos", METHOD, "/", "The cosine of each element (radians)."},
    {"Tensor", "tan", METHOD, "/", "The tangent of each element (radians)."},
    {"Tensor", "floor", METHOD, "/", "The largest integer not above each element."},
    {"Tensor", "bitwise_not", METHOD, "/",
     "~x: bitwise not of an integer tensor, logical not of a bool one."},
    {"Tensor", "logical_not", METHOD, "/", "A bool tensor: true where the element is zero."},
    {"Tensor", "relu_", METHOD, "/",
     "relu() written into this tensor (a version bump); returns it."},
    {"Tensor", "sigmoid_", METHOD, "/", "sigmoid() written into this tensor; returns it."},
    {"Tensor", "tanh_", METHOD, "/", "tanh() written into this tensor; returns it."},
    {"Tensor", "exp_", METHOD, "/", "exp() written into this tensor; returns it."},
    {"Tensor", "log_", METHOD, "/", "log() written into this tensor; returns it."},
    {"Tensor", "sqrt_", METHOD, "/", "sqrt() written into this tensor; returns it."},
    {"Tensor", "rsqrt_", METHOD, "/", "rsqrt() written into this tensor; returns it."},
    {"Tensor", "abs_", METHOD, "/", "abs() written into this tensor; returns it."},
    {"Tensor", "neg_", METHOD, "/", "neg() written into this tensor; returns it."},
    {"Tensor", "floor_", METHOD, "/", "floor() written into this tensor; returns it."},
    {"Tensor", "ceil", METHOD, "/",
     "The smallest integer not below each element (integers unchanged)."},
    {"Tensor", "trunc", METHOD, "/", "Each element rounded toward zero (integers unchanged)."},
    {"Tensor", "frac", METHOD, "/",
     "x - trunc(x): the fractional part, with x's sign (floating tensors)."},
    {"Tensor", "sign", METHOD, "/",
     "-1, 0 or 1 by each element's sign (0 for NaN); integers stay integers."},
    {"Tensor", "reciprocal", METHOD, "/", "1 / x elementwise; integers give float32."},
    {"Tensor", "square", METHOD, "/", "x * x elementwise; integers stay integers."},
    {"Tensor", "log1p", METHOD, "/", "log(1 + x), accurate near 0."},
    {"Tensor", "expm1", METHOD, "/", "exp(x) - 1, accurate near 0."},
    {"Tensor", "log2", METHOD, "/", "The base-2 logarithm of each element."},
    {"Tensor", "log10", METHOD, "/", "The base-10 logarithm of each element."},
    {"Tensor", "asin", METHOD, "/", "The arcsine of each element (radians; NaN outside [-1, 1])."},
    {"Tensor", "acos", METHOD, "/",
     "The arccosine of each element (radians; NaN outside [-1, 1])."},
    {"Tensor", "atan", METHOD, "/", "The arctangent of each element (radians)."},
    {"Tensor", "sinh", METHOD, "/", "The hyperbolic sine of each element."},
    {"Tensor", "cosh", METHOD, "/", "The hyperbolic cosine of each element."},
    {"Tensor", "erf", METHOD, "/", "The error function (C99's erf) of each element."},
    {"Tensor", "asinh", METHOD, "/", "The inverse hyperbolic sine of each element."},
    {"Tensor", "acosh", METHOD, "/",
     "The inverse hyperbolic cosine of each element (NaN below 1)."},
    {"Tensor", "atanh", METHOD, "/",
     "The inverse hyperbolic tangent of each element (+-inf at +-1, NaN beyond)."},
    {"Tensor", "erfc", METHOD, "/",
     "The complementary error function 1 - erf(x) of each element, accurate in the tails."},
    {"Tensor", "erfinv", METHOD, "/",
     "The inverse error function of each element: +-inf at +-1, NaN beyond."},
    {"Tensor", "exp2", METHOD, "/", "2 to the power of each element."},
    {"Tensor", "lgamma", METHOD, "/",
     "The natural log of the absolute value of the gamma function of each element."},
    {"Tensor", "digamma", METHOD, "/",
     "The digamma (psi) function, lgamma's derivative, of each element: -inf at 0, NaN at the "
     "negative integers; its gradient (trigamma) cannot be differentiated again."},
    {"Tensor", "i0", METHOD, "/",
     "The modified Bessel function of the first kind of order 0 of each element (its gradient "
     "is torch.special.i1)."},
    {"Tensor", "i0_", METHOD, "/", "i0() written into this tensor; returns it."},
    {"Tensor", "ceil_", METHOD, "/", "ceil() written into this tensor; returns it."},
    {"Tensor", "trunc_", METHOD, "/", "trunc() written into this tensor; returns it."},
    {"Tensor", "frac_", METHOD, "/", "frac() written into this tensor; returns it."},
    {"Tensor", "sign_", METHOD, "/", "sign() written into this tensor; returns it."},
    {"Tensor", "reciprocal_", METHOD, "/", "reciprocal() written into this tensor; returns it."},
    {"Tensor", "square_", METHOD, "/", "square() written into this tensor; returns it."},
    {"Tensor", "log1p_", METHOD, "/", "log1p() written into this tensor; returns it."},
    {"Tensor", "expm1_", METHOD, "/", "expm1() written into this tensor; returns it."},
    {"Tensor", "log2_", METHOD, "/", "log2() written into this tensor; returns it."},
    {"Tensor", "log10_", METHOD, "/", "log10() written into this tensor; returns it."},
    {"Tensor", "asin_", METHOD, "/", "asin() written into this tensor; returns it."},
    {"Tensor", "acos_", METHOD, "/", "acos() written into this tensor; returns it."},
    {"Tensor", "atan_", METHOD, "/", "atan() written into this tensor; returns it."},
    {"Tensor", "sinh_", METHOD, "/", "sinh() written into this tensor; returns it."},
    {"Tensor", "cosh_", METHOD, "/", "cosh() written into this tensor; returns it."},
    {"Tensor", "erf_", METHOD, "/", "erf() written into this tensor; returns it."},
    {"Tensor", "asinh_", METHOD, "/", "asinh() written into this tensor; returns it."},
    {"Tensor", "acosh_", METHOD, "/", "acosh() written into this tensor; returns it."},
    {"Tensor", "atanh_", METHOD, "/", "atanh() written into this tensor; returns it."},
    {"Tensor", "erfc_", METHOD, "/", "erfc() written into this tensor; returns it."},
    {"Tensor", "erfinv_", METHOD, "/", "erfinv() written into this tensor; returns it."},
    {"Tensor", "exp2_", METHOD, "/", "exp2() written into this tensor; returns it."},
    {"Tensor", "lgamma_", METHOD, "/", "lgamma() written into this tensor; returns it."},
    {"Tensor", "digamma_", METHOD, "/", "digamma() written into this tensor; returns it."},
    {"Tensor", "sin_", METHOD, "/", "sin() written into this tensor; returns it."},
    {"Tensor", "cos_", METHOD, "/", "cos() written into this tensor; returns it."},
    {"Tensor", "tan_", METHOD, "/", "tan() written into this tensor; returns it."},
    {"Tensor", "polygamma", METHOD, "n, /",
     "The n-th derivative of digamma at each element (n >= 0: trigamma for n = 1), +-inf at 0 "
     "and the negative integers."},
    {"Tensor", "polygamma_", METHOD, "n, /", "polygamma(n) written into this tensor; returns it."},
    {"Tensor", "round", METHOD, "*, decimals=0",
     "Each element rounded half to even (torch.round), to decimals places; integers unchanged."},
    {"Tensor", "round_", METHOD, "*, decimals=0", "round() written into this tensor; returns it."},
    /* ---- binary, broadcasting ---- */
    {"Tensor", "add", METHOD, "other, /",
     "self + other, broadcast; other a tensor, number or array."},
    {"Tensor", "sub", METHOD, "other, /", "self - other, broadcast."},
    {"Tensor", "mul", METHOD, "other, /", "self * other, broadcast."},
    {"Tensor", "div", METHOD, "other, /", "self / other, broadcast (true division)."},
    {"Tensor", "pow", METHOD, "exponent, /", "self ** exponent, broadcast."},
    {"Tensor", "maximum", METHOD, "other, /", "The larger of the two, elementwise, broadcast."},
    {"Tensor", "minimum", METHOD, "other, /", "The smaller of the two, elementwise, broadcast."},
    {"Tensor", "matmul", METHOD, "other, /",
     "Matrix product with torch.matmul's rules (vectors, batches broadcast); OpenBLAS."},
    {"Tensor", "mm", METHOD, "mat2, /",
     "Product of two 2-D matrices, as torch.mm (no broadcasting)."},
    {"Tensor", "bmm", METHOD, "mat2, /",
     "Batched product of two 3-D tensors with the same batch size, as torch.bmm."},
    {"Tensor", "mv", METHOD, "vec, /", "Product of a 2-D matrix and a 1-D vector, as torch.mv."},
    {"Tensor", "dot", METHOD, "tensor, /", "Dot product of two 1-D vectors of the same length."},
    {"Tensor", "outer", METHOD, "vec2, /", "Outer product of two 1-D vectors: a 2-D tensor."},
    {"Tensor", "addmm", METHOD, "mat1, mat2, *, beta=1, alpha=1",
     "beta * input + alpha * (mat1 @ mat2), as torch.addmm; input broadcasts to the product."},
    {"Tensor", "floor_divide", METHOD, "other, /", "self // other: the quotient rounded down."},
    {"Tensor", "remainder", METHOD, "other, /",
     "self % other, with the divisor's sign (Python's)."},
    {"Tensor", "bitwise_and", METHOD, "other, /", "self & other (integer or bool tensors)."},
    {"Tensor", "bitwise_or", METHOD, "other, /", "self | other (integer or bool tensors)."},
    {"Tensor", "bitwise_xor", METHOD, "other, /", "self ^ other (integer or bool tensors)."},
    {"Tensor", "true_divide", METHOD, "other, /", "div(): self / other, broadcast."},
    {"Tensor", "atan2", METHOD, "other, /",
     "The angle of the point (other, self) in (-pi, pi], broadcast; integers give float32."},
    {"Tensor", "fmod", METHOD, "other, /",
     "C's fmod: the remainder of self / other with self's sign (fmod(-7, 3) is -1)."},
    {"Tensor", "logical_and", METHOD, "other, /",
     "A bool tensor: both non-zero, broadcast, any dtypes."},
    {"Tensor", "logical_or", METHOD, "other, /",
     "A bool tensor: either non-zero, broadcast, any dtypes."},
    {"Tensor", "logical_xor", METHOD, "other, /",
     "A bool tensor: exactly one non-zero, broadcast, any dtypes."},
    {"Tensor", "lerp", METHOD, "end, weight",
     "self + weight * (end - self), broadcast; weight a number or a tensor."},
    {"Tensor", "lerp_", METHOD, "end, weight", "lerp() written into this tensor; returns it."},
    {"Tensor", "true_divide_", METHOD, "other, /", "div_(): self /= other; returns self."},
    {"Tensor", "pow_", METHOD, "exponent, /", "self **= exponent in place; returns self."},
    {"Tensor", "atan2_", METHOD, "other, /", "atan2() written into this tensor; returns it."},
    {"Tensor", "fmod_", METHOD, "other, /", "fmod() written into this tensor; returns it."},
    {"Tensor", "logical_and_", METHOD, "other, /",
     "logical_and() written into this tensor (as 0 and 1); returns it."},
    {"Tensor", "logical_or_", METHOD, "other, /",
     "logical_or() written into this tensor (as 0 and 1); returns it."},
    {"Tensor", "logical_xor_", METHOD, "other, /",
     "logical_xor() written into this tensor (as 0 and 1); returns it."},
    {"Tensor", "eq", METHOD, "other, /", "A bool tensor: self == other, broadcast."},
    {"Tensor", "ne", METHOD, "other, /", "A bool tensor: self != other, broadcast."},
    {"Tensor", "lt", METHOD, "other, /", "A bool tensor: self < other, broadcast."},
    {"Tensor", "le", METHOD, "other, /", "A bool tensor: self <= other, broadcast."},
    {"Tensor", "gt", METHOD, "other, /", "A bool tensor: self > other, broadcast."},
    {"Tensor", "ge", METHOD, "other, /", "A bool tensor: self >= other, broadcast."},
    {"Tensor", "sub_", METHOD, "other, /",
     "self -= other in place (a version bump); returns self."},
    {"Tensor", "mul_", METHOD, "other, /", "self *= other in place; returns self."},
    {"Tensor", "div_", METHOD, "other, /", "self /= other in place; returns self."},
    {"Tensor", "copy_", METHOD, "src, /",
     "Copies src (broadcast) into this tensor in place; returns it."},
    {"Tensor", "add_", METHOD, "other, *, alpha=1.0",
     "self += alpha * other in place; returns self."},
    /* ---- reductions ---- */
    {"Tensor", "sum", METHOD, "dim=None, keepdim=False",
     "The sum over dim (an int or a tuple), or of all."},
    {"Tensor", "mean", METHOD, "dim=None, keepdim=False", "The mean over dim, or of all."},
    {"Tensor", "amax", METHOD, "dim=None, keepdim=False", "The maximum over dim, or of all."},
    {"Tensor", "amin", METHOD, "dim=None, keepdim=False", "The minimum over dim, or of all."},
    {"Tensor", "max", METHOD, "dim=None, keepdim=False",
     "The largest element; with dim, the pair (values, indices) along it."},
    {"Tensor", "min", METHOD, "dim=None, keepdim=False",
     "The smallest element; with dim, the pair (values, indices) along it."},
    {"Tensor", "argmax", METHOD, "dim=None, keepdim=False",
     "The index of the largest element (flat, or along dim)."},
    {"Tensor", "argmin", METHOD, "dim=None, keepdim=False",
     "The index of the smallest element (flat, or along dim)."},
    {"Tensor", "logsumexp", METHOD, "dim, keepdim=False",
     "log(sum(exp(x))) over dim, computed stably."},
    {"Tensor", "var", METHOD, "dim=None, unbiased=True, keepdim=False, *, correction=None",
     "The variance over dim, or of all; correction (1 unbiased, 0 biased) wins over unbiased."},
    {"Tensor", "std", METHOD, "dim=None, unbiased=True, keepdim=False, *, correction=None",
     "The standard deviation over dim, or of all."},
    {"Tensor", "norm", METHOD, "p='fro', dim=None, keepdim=False, *, dtype=None",
     "The p-norm over dim, or of all ('fro' is the 2-norm)."},
    {"Tensor", "cumsum", METHOD, "dim, *, dtype=None", "Running sums along dim."},
    {"Tensor", "softmax", METHOD, "dim", "exp(x) / sum(exp(x)) along dim, computed stably."},
    {"Tensor", "log_softmax", METHOD, "dim", "log(softmax(x)) along dim, computed stably."},
    {"Tensor", "sort", METHOD, "dim=-1, descending=False, *, stable=False",
     "(values, indices) sorted along dim; stable keeps equal elements in order."},
    {"Tensor", "argsort", METHOD, "dim=-1, descending=False", "The indices that sort along dim."},
    {"Tensor", "topk", METHOD, "k, dim=-1, largest=True, sorted=True",
     "(values, indices) of the k largest (or smallest) along dim."},
    /* ---- shapes and views ---- */
    {"Tensor", "view", METHOD, "*shape",
     "A view with another shape over the same storage (one -1 is inferred)."},
    {"Tensor", "reshape", METHOD, "*shape",
     "The same elements in another shape: a view when it can be, else a copy."},
    {"Tensor", "expand", METHOD, "*sizes",
     "A broadcast view: size-1 dims repeated without copying (-1 keeps a dim)."},
    {"Tensor", "expand_as", METHOD, "other, /", "expand() to other's shape."},
    {"Tensor", "as_strided", METHOD, "size, stride, storage_offset=None",
     "A view of any sizes and (non-negative) strides over the storage, from storage_offset "
     "(None: this tensor's); its gradient reaches this tensor's elements it reads."},
    {"Tensor", "as_strided_", METHOD, "size, stride, storage_offset=None, *, _op='as_strided_'",
     "In place: this tensor takes that geometry over its own storage (its version goes up); "
     "not for a tensor autograd tracks. Returns self."},
    {"Tensor", "repeat", METHOD, "*sizes", "A copy tiled sizes[i] times along each dim."},
    {"Tensor", "permute", METHOD, "*dims", "A view with the dims in the given order."},
    {"Tensor", "transpose", METHOD, "dim0, dim1", "A view with two dims swapped."},
    {"Tensor", "t", METHOD, "/", "transpose(0, 1) of a matrix (a vector stays as it is)."},
    {"Tensor", "squeeze", METHOD, "dim=None", "A view without size-1 dims (all, or only dim)."},
    {"Tensor", "unsqueeze", METHOD, "dim", "A view with a size-1 dim inserted at dim."},
    {"Tensor", "flatten", METHOD, "start_dim=0, end_dim=-1",
     "The dims start_dim..end_dim merged into one."},
    {"Tensor", "narrow", METHOD, "dim, start, length",
     "A view of length elements from start along dim."},
    {"Tensor", "select", METHOD, "dim, index", "A view of one index along dim, that dim removed."},
    {"Tensor", "split", METHOD, "split_size, dim=0",
     "A tuple of views of split_size elements along dim (the last may be shorter)."},
    {"Tensor", "chunk", METHOD, "chunks, dim=0", "A tuple of about equal views along dim."},
    {"Tensor", "contiguous", METHOD, "*, memory_format=None",
     "This tensor if it is contiguous, else a contiguous copy; memory_format=channels_last "
     "(4-D) or channels_last_3d (5-D): laid out channels last (NHWC strides) instead."},
    {"Tensor", "index_select", METHOD, "dim, index",
     "The rows at index (int64) along dim, copied."},
    {"Tensor", "gather", METHOD, "dim, index",
     "Values picked along dim by index (int64), as torch.gather."},
    {"Tensor", "scatter", METHOD, "dim, index, src=None, value=None, *, reduce=None",
     "A copy with src's elements (or one value) written at index along dim; reduce 'add' or "
     "'multiply' combines them with what is there instead."},
    {"Tensor", "scatter_", METHOD, "dim, index, src=None, value=None, *, reduce=None",
     "scatter() written into this tensor; returns it."},
    {"Tensor", "scatter_add", METHOD, "dim, index, src",
     "A copy with src's elements added at index along dim (repeated positions add up)."},
    {"Tensor", "scatter_add_", METHOD, "dim, index, src",
     "scatter_add() written into this tensor; returns it."},
    {"Tensor", "scatter_reduce", METHOD, "dim, index, src, reduce, *, include_self=True",
     "A copy with src's elements combined at index along dim by reduce ('sum', 'prod', 'mean', "
     "'amax' or 'amin'); include_self=False leaves this tensor's values out where something "
     "lands."},
    {"Tensor", "scatter_reduce_", METHOD, "dim, index, src, reduce, *, include_self=True",
     "scatter_reduce() written into this tensor; returns it."},
    {"Tensor", "index_add", METHOD, "dim, index, source, *, alpha=1",
     "A copy with alpha * source's slices added at the positions index (1-D) names along dim."},
    {"Tensor", "index_add_", METHOD, "dim, index, source, *, alpha=1",
     "index_add() written into this tensor; returns it."},
    {"Tensor", "index_reduce", METHOD, "dim, index, source, reduce, *, include_self=True",
     "A copy with source's slices combined into the slices index (1-D) names along dim by "
     "reduce ('prod', 'mean', 'amax' or 'amin'); include_self=False leaves this tensor's "
     "values out where something lands."},
    {"Tensor", "index_reduce_", METHOD, "dim, index, source, reduce, *, include_self=True",
     "index_reduce() written into this tensor; returns it."},
    {"Tensor", "index_fill", METHOD, "dim, index, value",
     "A copy with value at the positions index (1-D) names along dim."},
    {"Tensor", "index_fill_", METHOD, "dim, index, value",
     "index_fill() written into this tensor; returns it."},
    {"Tensor", "index_put", METHOD, "indices, values, accumulate=False",
     "A copy with values written at t[indices] (indices: a tuple of index tensors, paired as "
     "in t[rows, cols]; values broadcast to the indexed shape, of this "
     "tensor's dtype), or added there when accumulate, a position named twice getting both."},
    {"Tensor", "index_put_", METHOD, "indices, values, accumulate=False",
     "index_put() written into this tensor in place (t[indices] = values); returns it."},
    {"Tensor", "take", METHOD, "index",
     "The elements at index (int64, any shape) in the flattened tensor; negative counts from "
     "the end."},
    {"Tensor", "take_along_dim", METHOD, "indices, dim=None",
     "gather() along dim after broadcasting the other dims (None: both flattened)."},
    {"Tensor", "prod", METHOD, "dim=None, keepdim=False, *, dtype=None",
     "The product of all elements, or along dim; exact gradient with zeros."},
    {"Tensor", "cumprod", METHOD, "dim, *, dtype=None", "Running products along dim."},
    {"Tensor", "logcumsumexp", METHOD, "dim",
     "Running log(sum(exp(x))) along dim, computed stably."},
    {"Tensor", "median", METHOD, "dim=None, keepdim=False",
     "The lower median of all elements, or (values, indices) along dim."},
    {"Tensor", "cummax", METHOD, "dim", "(values, indices) of the running maximum along dim."},
    {"Tensor", "cummin", METHOD, "dim", "(values, indices) of the running minimum along dim."},
    {"Tensor", "unique", METHOD, "sorted=True, return_inverse=False, return_counts=False, dim=None",
     "The distinct values in ascending order (with dim: the distinct slices along it, in "
     "lexicographic order), with where each element's (slice's) is (return_inverse) and how "
     "often each occurs (return_counts)."},
    {"Tensor", "unique_consecutive", METHOD, "return_inverse=False, return_counts=False, dim=None",
     "The first value (or slice along dim) of each run of equal consecutive ones, with the run "
     "of each element (return_inverse) and the runs' lengths (return_counts)."},
    {"Tensor", "cross", METHOD, "other, dim=None",
     "The cross product of 3-vectors along dim (None: the first dim of size 3)."},
    {"Tensor", "trace", METHOD, "/", "The sum of a matrix's diagonal."},
    {"Tensor", "masked_fill", METHOD, "mask, value",
     "A copy with value where mask (bool, broadcast) is true."},
    {"Tensor", "masked_fill_", METHOD, "mask, value",
     "masked_fill() written into this tensor; returns it."},
    {"Tensor", "masked_select", METHOD, "mask, /",
     "A 1-D tensor of the elements where mask is true."},
    {"Tensor", "clamp", METHOD, "min=None, max=None",
     "Each element limited to [min, max] (either may be None)."},
    {"Tensor", "clamp_", METHOD, "min=None, max=None",
     "clamp() written into this tensor; returns it."},
    {"Tensor", "clip", METHOD, "min=None, max=None", "clamp(), by its other name."},
    {"Tensor", "clip_", METHOD, "min=None, max=None", "clamp_(), by its other name."},
    {"Tensor", "clamp_min", METHOD, "min", "clamp(min=min): each element at least min."},
    {"Tensor", "clamp_max", METHOD, "max", "clamp(max=max): each element at most max."},
    {"Tensor", "clamp_min_", METHOD, "min", "clamp_min() written into this tensor; returns it."},
    {"Tensor", "clamp_max_", METHOD, "max", "clamp_max() written into this tensor; returns it."},
    /* ---- graph and ownership ---- */
    {"Tensor", "clone", METHOD, "*, memory_format=None",
     "A copy that stays in the graph; it shares storage copy-on-write until either is written. "
     "memory_format=contiguous_format, channels_last or channels_last_3d lays the copy out so "
     "(None: preserve_format, as the tensor is)."},
    {"Tensor", "detach", METHOD, "/",
     "A new leaf sharing storage and version counter: writes to either show in both."},
    {"Tensor", "requires_grad_", METHOD, "requires_grad=True",
     "Sets whether autograd records ops on this leaf; returns it."},
    {"Tensor", "retain_grad", METHOD, "/", "Keeps .grad on this non-leaf after backward."},
    {"Tensor", "move_to_outer", METHOD, "/",
     "Moves the tensor from its dispose scope to the enclosing one (TorchSharp's "
     "MoveToOuterDisposeScope)."},
    {"Tensor", "detach_from_scopes", METHOD, "/",
     "Takes the tensor out of every scope: this object owns it from now on."},
    {"Tensor", "dispose", METHOD, "/",
     "Disposes the handle now; using it afterwards is a stale-handle error."},
    {"Tensor", "owner_scope_name", METHOD, "/",
     "The name of the dispose scope that owns the tensor, or None."},
    /* ---- conversion and facts ---- */
    {"Tensor", "to", METHOD, "dtype", "This tensor as dtype (itself when it already is)."},
    {"Tensor", "float", METHOD, "/", "This tensor as float32."},
    {"Tensor", "double", METHOD, "/", "This tensor as float64."},
    {"Tensor", "long", METHOD, "/", "This tensor as int64."},
    {"Tensor", "int", METHOD, "/", "This tensor as int32."},
    {"Tensor", "short", METHOD, "/", "This tensor as int16."},
    {"Tensor", "char", METHOD, "/", "This tensor as int8."},
    {"Tensor", "byte", METHOD, "/", "This tensor as uint8."},
    {"Tensor", "bool", METHOD, "/", "This tensor as bool (nonzero is true)."},
    {"Tensor", "item", METHOD, "/", "The value of a one-element tensor as a Python number."},
    {"Tensor", "tolist", METHOD, "/", "The elements as (nested) Python lists."},
    {"Tensor", "numpy", METHOD, "/", "An ndarray over the same bytes (no copy)."},
    {"Tensor", "size", METHOD, "dim=None, /", "The shape as a gradscope.Size, or one dim's size."},
    {"Tensor", "stride", METHOD, "dim=None, /", "The strides in elements, or one dim's."},
    {"Tensor", "dim", METHOD, "/", "The number of dims."},
    {"Tensor", "numel", METHOD, "/", "The number of elements."},
    {"Tensor", "element_size", METHOD, "/", "Bytes per element."},
    {"Tensor", "is_contiguous", METHOD, "*, memory_format=None",
     "Whether the elements are laid out row-major without gaps (or, given memory_format, in "
     "that format: channels_last, channels_last_3d)."},
    {"Tensor", "data_ptr", METHOD, "/", "The address of the first element."},
    {"Tensor", "storage_offset", METHOD, "/",
     "The first element's offset in its storage, in elements."},
    {"Tensor", "storage_id", METHOD, "/",
     "The engine's id of the storage (the inspector's storage number)."},
    {"Tensor", "zero_", METHOD, "/", "Fills with zeros in place; returns self."},
    {"Tensor", "fill_", METHOD, "value, /", "Fills with value in place; returns self."},
    /* ---- module functions ---- */
    {"gradscope", "tensor", FUNCTION, "data, *, dtype=None, device=None, requires_grad=False",
     "A new tensor with a copy of data (numbers, nested lists, an array or a tensor)."},
    {"gradscope", "zeros", FUNCTION, "*size, dtype=None, device=None, requires_grad=False",
     "A tensor of zeros (float32 unless dtype says)."},
    {"gradscope", "ones", FUNCTION, "*size, dtype=None, device=None, requires_grad=False",
     "A tensor of ones."},
    {"gradscope", "empty", FUNCTION,
     "*size, dtype=None, device=None, requires_grad=False, memory_format=None",
     "A tensor whose elements are not set; memory_format=channels_last (4-D) or "
     "channels_last_3d (5-D) lays it out channels last."},
    {"gradscope", "randn", FUNCTION, "*size, dtype=None, device=None, requires_grad=False",
     "Normal(0, 1) samples from the generator manual_seed sets."},
    {"gradscope", "rand", FUNCTION, "*size, dtype=None, device=None, requires_grad=False",
     "Uniform [0, 1) samples."},
    {"gradscope", "full", FUNCTION,
     "size, fill_value, /, *, dtype=None, device=None, requires_grad=False",
     "A tensor of shape size filled with fill_value."},
    {"gradscope", "randint", FUNCTION, "low, high, size, *, dtype=None",
     "int64 samples uniform in [low, high) (in dtype when given)."},
    {"gradscope", "arange", FUNCTION,
     "start, end=None, step=1, /, *, dtype=None, device=None, requires_grad=False",
     "start, start+step, ... below end (int64 when all are ints); arange(n) counts from 0."},
    {"gradscope", "linspace", FUNCTION, "start, end, steps, /",
     "steps evenly spaced values from start to end."},
    {"gradscope", "eye", FUNCTION, "n, m=None, /", "An n x m identity matrix."},
    {"gradscope", "zeros_like", FUNCTION, "input, /", "Zeros with input's shape and dtype."},
    {"gradscope", "ones_like", FUNCTION, "input, /", "Ones with input's shape and dtype."},
    {"gradscope", "full_like", FUNCTION, "input, fill_value, /",
     "fill_value with input's shape and dtype."},
    {"gradscope", "cat", FUNCTION, "tensors, dim=0", "The tensors joined along an existing dim."},
    {"gradscope", "stack", FUNCTION, "tensors, dim=0",
     "The tensors (same shape) joined along a new dim."},
    {"gradscope", "where", FUNCTION, "condition, input, other, /",
     "input where condition (bool) is true, else other; broadcast. where(condition) alone "
     "is nonzero(condition, as_tuple=True)."},
    {"gradscope", "manual_seed", FUNCTION, "seed, /",
     "Seeds the generator of randn, rand, randint, dropout and shuffles."},
    {"gradscope", "is_grad_enabled", FUNCTION, "/", "Whether this thread records graphs now."},
    {"gradscope", "set_grad_enabled", FUNCTION, "mode, /",
     "Turns graph recording on or off for this thread."},
    {"gradscope", "live_tensor_count", FUNCTION, "/",
     "Tensors alive in this process (all threads)."},
    {"gradscope", "is_tensor", FUNCTION, "obj, /", "Whether obj is a gradscope.Tensor."},
    {"gradscope", "constant_pad_nd", FUNCTION, "input, pad, value=0",
     "input surrounded by value: pad is (left, right) for the last dim, then the dim before it, "
     "...; a negative size crops that side. One op (ConstantPadNdBackward0), as F.pad's "
     "'constant' mode."},
    {"gradscope", "pixel_shuffle", FUNCTION, "input, upscale_factor",
     "[*, C r^2, H, W] to [*, C, H r, W r]: each r x r block from r^2 channels (a copy)."},
    {"gradscope", "pixel_unshuffle", FUNCTION, "input, downscale_factor",
     "[*, C, H r, W r] to [*, C r^2, H, W]: pixel_shuffle's inverse (a copy)."},
    {"gradscope", "prelu", FUNCTION, "input, weight, /",
     "input where it is positive, weight * input elsewhere; weight holds one value or one per "
     "channel (dim 1). One op (PreluBackward0), as F.prelu."},
    {"gradscope", "one_hot", FUNCTION, "tensor, num_classes=-1",
     "index (int64) as one-hot rows, as F.one_hot."},
    {"gradscope", "inspect", FUNCTION, "*, command=None, socket=None, wait=10.0",
     "Starts the inspector listening and streams this process's events to it."},
    {"gradscope", "trace_close", FUNCTION, "/", "Flushes the event log and stops recording."},
    {"gradscope", "trace_mark", FUNCTION, "label, /",
     "A user mark in the event log (\"epoch 3\")."},
    {"gradscope", "trace_name", FUNCTION, "tensor, name, /",
     "Names the tensor in the event log; returns it."},
    {"gradscope", "from_numpy", FUNCTION, "ndarray, /",
     "A tensor over the array's memory (no copy)."},
    {"gradscope", "from_dlpack", FUNCTION, "ext_tensor, /",
     "A tensor over a DLPack producer's memory (no copy)."},
    {"gradscope", "get_default_dtype", FUNCTION, "/",
     "The dtype floating tensors are made in when none is given (torch.get_default_dtype): "
     "float32, or float64 after set_default_dtype(float64)."},
    {"gradscope", "scope_stats", FUNCTION, "/", "This thread's tensor counters (TorchSharp's)."},
    {"gradscope", "reset_scope_stats", FUNCTION, "/",
     "Sets this thread's tensor counters to zero."},
    /* ---- nn.functional ---- */
    {"F", "cross_entropy", FUNCTION,
     "input, target, *, reduction='mean', label_smoothing=0.0, ignore_index=-100, weight=None",
     "log_softmax and the negative log likelihood of the target classes, in one pass; rows "
     "whose target is ignore_index count 0 and are left out of the mean; weight= scales each "
     "row by its class's weight and the mean divides by their sum, as torch's."},
    {"F", "nll_loss", FUNCTION,
     "input, target, *, reduction='mean', ignore_index=-100, weight=None",
     "The negative log likelihood of target classes from log-probabilities; rows whose target "
     "is ignore_index count 0 and are left out of the mean; weight= scales each row by its "
     "class's weight and the mean divides by their sum, as torch's."},
    {"F", "mse_loss", FUNCTION, "input, target, reduction='mean'",
     "The mean (or sum) of squared differences."},
    {"F", "binary_cross_entropy_with_logits", FUNCTION, "input, target, reduction='mean'",
     "sigmoid and binary cross-entropy in one stable pass."},
    {"F", "dropout", FUNCTION, "input, p=0.5, training=True",
     "Zeroes elements with probability p and scales the rest by 1/(1-p) (when training)."},
    {"F", "layer_norm", FUNCTION, "input, normalized_shape, weight=None, bias=None, eps=1e-05",
     "Normalises over the last dims to mean 0 and variance 1, then scales and shifts."},
    {"F", "linear", FUNCTION, "input, weight, bias=None", "input @ weight.T + bias."},
    {"F", "embedding", FUNCTION,
     "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, "
     "sparse=False",
     "The rows of weight at the indices in input (padding_idx's row gets no gradient; max_norm "
     "renormalises the rows read, in place)."},
    {"F", "leaky_relu", FUNCTION, "input, negative_slope=0.01, inplace=False",
     "x, or negative_slope * x below zero (inplace gives a new tensor)."},
    {"F", "silu", FUNCTION, "input, inplace=False", "x * sigmoid(x) (inplace gives a new tensor)."},
    {"F", "elu", FUNCTION, "input, alpha=1.0, inplace=False",
     "x above 0, alpha * (exp(x) - 1) at or below (inplace gives a new tensor)."},
    {"F", "selu", FUNCTION, "input, inplace=False",
     "scale * elu(x, alpha) with torch's constants (inplace gives a new tensor)."},
    {"F", "softplus", FUNCTION, "input, beta=1.0, threshold=20.0",
     "log(1 + exp(beta * x)) / beta, or x where beta * x > threshold."},
    {"F", "hardtanh", FUNCTION, "input, min_val=-1.0, max_val=1.0, inplace=False",
     "x limited to [min_val, max_val] (inplace gives a new tensor)."},
    {"F", "relu6", FUNCTION, "input, inplace=False",
     "hardtanh(x, 0, 6) (inplace gives a new tensor)."},
    {"F", "hardsigmoid", FUNCTION, "input, inplace=False",
     "x / 6 + 1/2 limited to [0, 1] (inplace gives a new tensor)."},
    {"F", "hardswish", FUNCTION, "input, inplace=False",
     "x * hardsigmoid(x) (inplace gives a new tensor)."},
    {"F", "logsigmoid", FUNCTION, "input, /", "log(sigmoid(x)), computed stably."},
    {"F", "mish", FUNCTION, "input, inplace=False",
     "x * tanh(softplus(x)) (inplace gives a new tensor)."},
    {"F", "conv2d", FUNCTION, "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
     "2-D convolution (cross-correlation) of N,C,H,W input, through im2col and OpenBLAS."},
    {"F", "conv_transpose2d", FUNCTION,
     "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
     "2-D transposed convolution of N,C,H,W input with weight [C, out / groups, kh, kw]: "
     "conv2d's input gradient."},
    {"F", "max_pool2d", FUNCTION,
     "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
     "return_indices=False",
     "The maximum of each window."},
    {"F", "avg_pool2d", FUNCTION,
     "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
     "divisor_override=None",
     "The mean of each window."},
    {"F", "batch_norm", FUNCTION,
     "input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, "
     "eps=1e-05",
     "Normalises each channel with batch statistics (training) or the running ones."},
    /* ---- optim ---- */
    {"optim", "SGD", FUNCTION,
     "params, lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0, *, nesterov=False",
     "Stochastic gradient descent with momentum, as torch.optim.SGD."},
    {"optim", "Adam", FUNCTION,
     "params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, *, amsgrad=False",
     "Adam, as torch.optim.Adam (weight decay added to the gradient)."},
    {"optim", "AdamW", FUNCTION,
     "params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01, *, amsgrad=False",
     "Adam with decoupled weight decay, as torch.optim.AdamW."},
    {"optim", "Adadelta", FUNCTION,
     "params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0.0, *, maximize=False",
     "Adadelta, as torch.optim.Adadelta."},
    {"optim", "Adamax", FUNCTION,
     "params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, *, maximize=False",
     "Adamax (Adam with the infinity norm), as torch.optim.Adamax."},
    {"optim", "NAdam", FUNCTION,
     "params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, momentum_decay=0.004",
     "Adam with Nesterov momentum, as torch.optim.NAdam."},
    {"optim", "RAdam", FUNCTION,
     "params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0",
     "Rectified Adam, as torch.optim.RAdam."},
    {"optim", "ASGD", FUNCTION,
     "params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0.0, *, "
     "maximize=False",
     "Averaged stochastic gradient descent, as torch.optim.ASGD."},
    {"optim", "Rprop", FUNCTION,
     "params, lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-06, 50.0), *, maximize=False",
     "Resilient backpropagation, as torch.optim.Rprop."},
    {"Optimizer", "step", METHOD, "closure=None, /", "Updates every parameter from its .grad."},
    /* ---- nn: the engine's modules ---- */
    {"nn", "_Parameter", FUNCTION, "data, requires_grad=True",
     "data as a module parameter: a leaf that requires grad, which modules register."},
    {"nn", "Linear", FUNCTION, "in_features, out_features, bias=True, device=None, dtype=None",
     "y = x @ weight.T + bias, weight and bias initialised as torch's (uniform, 1/sqrt(in))."},
    {"nn", "Conv2d", FUNCTION,
     "in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, "
     "bias=True, padding_mode='zeros', device=None, dtype=None",
     "2-D convolution over N,C,H,W inputs, as torch.nn.Conv2d: padding an int, a pair, "
     "'valid' or 'same' (the odd zero on the far side); padding_mode 'zeros', 'reflect', "
     "'replicate' or 'circular' pads the input first (F.pad), as torch's."},
    {"nn", "BatchNorm1d", FUNCTION,
     "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
     "device=None, dtype=None",
     "Batch normalisation over N,C or N,C,L inputs, as torch.nn.BatchNorm1d (momentum=None: "
     "a cumulative average; running estimates as buffers)."},
    {"nn", "BatchNorm2d", FUNCTION,
     "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
     "device=None, dtype=None",
     "Batch normalisation over N,C,H,W inputs, as torch.nn.BatchNorm2d (momentum=None: a "
     "cumulative average; running estimates as buffers)."},
    {"nn", "BatchNorm3d", FUNCTION,
     "num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, "
     "device=None, dtype=None",
     "Batch normalisation over N,C,D,H,W inputs, as torch.nn.BatchNorm3d (momentum=None: a "
     "cumulative average; running estimates as buffers)."},
    {"nn", "ReLU", FUNCTION, "inplace=False",
     "relu() as a module (inplace=True gives the same values in a new tensor)."},
    {"nn", "Tanh", FUNCTION, "", "tanh() as a module."},
    {"nn", "Sigmoid", FUNCTION, "", "sigmoid() as a module."},
    {"nn", "GELU", FUNCTION, "approximate='none'",
     "gelu() as a module: the exact form, or torch's tanh form with approximate='tanh'."},
    {"nn", "Dropout", FUNCTION, "p=0.5, inplace=False",
     "F.dropout as a module: active in train(), a no-op in eval()."},
    {"nn", "Embedding", FUNCTION,
     "num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
     "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, "
     "dtype=None",
     "A table of num_embeddings vectors; forward(indices) picks rows (padding_idx's row starts "
     "at zero and gets no gradient)."},
    {"nn", "LayerNorm", FUNCTION,
     "normalized_shape, eps=1e-05, elementwise_affine=True, device=None, dtype=None",
     "Layer normalisation over the last dims (normalized_shape), with a learned elementwise "
     "scale and shift unless elementwise_affine=False."},
    {"nn", "Sequential", FUNCTION, "*modules", "The modules applied one after another."},
    {"nn", "RNN", FUNCTION,
     "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
     "bidirectional=False, *, nonlinearity='tanh', device=None, dtype=None",
     "An Elman RNN (tanh or relu), multi-layer and bidirectional, packed sequences too."},
    {"nn", "LSTM", FUNCTION,
     "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
     "bidirectional=False, *, device=None, dtype=None",
     "A long short-term memory network, as torch.nn.LSTM; forward returns (output, (h, c))."},
    {"nn", "GRU", FUNCTION,
     "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
     "bidirectional=False, *, device=None, dtype=None",
     "A gated recurrent unit network, as torch.nn.GRU; forward returns (output, h)."},
    {"nn", "RNNCell", FUNCTION,
     "input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None",
     "One step of an Elman RNN (tanh or relu): cell(input, h=None) returns the next h."},
    {"nn", "LSTMCell", FUNCTION, "input_size, hidden_size, bias=True, device=None, dtype=None",
     "One LSTM step: cell(input, (h, c)=None) returns the next (h, c)."},
    {"nn", "GRUCell", FUNCTION, "input_size, hidden_size, bias=True, device=None, dtype=None",
     "One GRU step: cell(input, h=None) returns the next h."},
    {"Optimizer", "zero_grad", METHOD, "set_to_none=False", "Clears every parameter's .grad."},
};

enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* The composed strings, made once and kept for the process (method tables point at them). */
static const char *method_docs[N_ROWS], *function_docs[N_ROWS];

static const doc_row *find(const char *owner, const char *name) {
  for (int i = 0; i < N_ROWS; i++)
    if (strcmp(rows[i].owner, owner) == 0 && strcmp(rows[i].name, name) == 0)
      return &rows[i];
  return NULL;
}

/* "name(first, params)\n--\n\ntext"; first is "$self", "input" or NULL (the params are all). */
static const char *compose(const doc_row *r, const char *first) {
  const char *params = r->params;
  size_t n = strlen(r->name) + strlen(params) + strlen(r->text) + 32;
  char *s = PyMem_RawMalloc(n);
  if (!s)
    return NULL;
  snprintf(s, n, "%s(%s%s%s)\n--\n\n%s", r->name, first ? first : "",
           first && params[0] ? ", " : "", params, r->text);
  return s;
}

/* The docstring of OWNER.NAME: a Tensor method ("Tensor"), a function of the module ("gradscope",
 * "F", "nn" or "optim", where a Tensor op's function form is found too), or NULL if there is
 * none. */
const char *gsp_doc(const char *owner, const char *name) {
  bool method = strcmp(owner, "Tensor") == 0 || strcmp(owner, "Optimizer") == 0;
  const doc_row *r = find(owner, name);
  if (!r && !method)
    r = find("Tensor", name);
  if (!r)
    return NULL;
  int i = (int)(r - rows);
  const char **slot = method ? &method_docs[i] : &function_docs[i];
  if (!*slot)
    *slot = compose(r, r->forms == FUNCTION ? NULL : method ? "$self" : "input");
  return *slot;
}

/* Sets the docstring of every entry of a method table that has a row here (before the table is
 * used: CPython reads ml_doc when it makes the function objects). */
void gsp_docs_fill(PyMethodDef *defs, const char *owner) {
  for (PyMethodDef *d = defs; d->ml_name; d++) {
    const char *doc = gsp_doc(owner, d->ml_name);
    if (doc)
      d->ml_doc = doc;
  }
}

PyObject *gsp_doc_part(const char *doc, bool signature) {
  const char *mark = doc ? strstr(doc, ")\n--\n\n") : NULL;
  if (!mark)
    return signature || !doc ? Py_NewRef(Py_None) : PyUnicode_FromString(doc);
  if (!signature)
    return PyUnicode_FromString(mark + 6);
  const char *open = strchr(doc, '(');
  return PyUnicode_FromStringAndSize(open, mark + 1 - open);
}
