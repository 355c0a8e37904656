/* gradscope/tensor.h: creating, inspecting, viewing and disposing tensors.
 *
 * A tensor is a view onto a storage: dtype, shape, strides (in elements), offset. Views share
 * their base's storage and see its writes. A clone shares the bytes copy-on-write: it costs
 * O(1) and the first write to either side copies them. Every function that returns a tensor
 * returns a new handle the caller owns and must pass to gs_dispose (later, a dispose scope
 * may own it instead). On error the empty handle GS_NO_TENSOR is returned.
 *
 * Shapes are given as (const int64_t *shape, int ndim); ndim 0 is a scalar (one element).
 * Dimension arguments may be negative, counting from the end as in PyTorch.
 */
#pragma once

#include <stdio.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- lifetime ----------------------------------------------------------------------- */

/* Disposes the handle. Its storage is freed when no other tensor uses it. Disposing the
 * empty handle does nothing; disposing a stale handle is an error. */
GS_API void gs_dispose(gs_tensor t);
/* True while t names a live tensor; never reports an error. */
GS_API bool gs_is_alive(gs_tensor t);
/* Tensors alive in this process (all threads). */
GS_API uint64_t gs_live_tensor_count(void);
/* The handles of every tensor alive in this process, in slot order, as gc.get_objects() does
 * for Python: for tools that check what a program holds (tests/oracle compares the engine
 * with its event log through it). Writes at most max handles to out (out may be NULL when max
 * is 0) and returns how many are alive. While other threads make or dispose tensors, a
 * tensor being made or disposed may or may not be listed. */
GS_API uint64_t gs_live_tensors(gs_tensor *out, uint64_t max);
/* The global event number: it advances on every create, dispose and in-place write, whether
 * or not the event log is on, so errors can name "event 412". */
GS_API uint64_t gs_event_counter(void);

/* ---- information (errors return -1, or false, or GS_F32 for dtype) ------------------ */

GS_API gs_dtype gs_dtype_of(gs_tensor t);
GS_API int gs_ndim(gs_tensor t);
/* Size of dimension dim (negative counts from the end). */
GS_API int64_t gs_size(gs_tensor t, int dim);
/* Stride in elements of dimension dim. */
GS_API int64_t gs_stride(gs_tensor t, int dim);
/* Copies the shape into shape_out (room for GS_MAX_DIMS); returns ndim. */
GS_API int gs_shape(gs_tensor t, int64_t *shape_out);
GS_API int gs_strides(gs_tensor t, int64_t *strides_out);
GS_API int64_t gs_numel(gs_tensor t);
GS_API int64_t gs_storage_offset(gs_tensor t);
GS_API bool gs_is_contiguous(gs_tensor t);
/* How a 4-D or 5-D tensor's elements are laid out, as torch's memory formats: row-major;
 * channels_last, [N, C, H, W] stored as N, H, W, C (strides H*W*C, 1, W*C, C); channels_last_3d,
 * [N, C, D, H, W] stored as N, D, H, W, C. */
typedef enum gs_memory_format {
  GS_CONTIGUOUS_FORMAT,
  GS_CHANNELS_LAST,
  GS_CHANNELS_LAST_3D,
} gs_memory_format;
/* Whether t's strides are format's (torch's is_contiguous(memory_format=)): false for a rank
 * the format does not take. */
GS_API bool gs_is_contiguous_as(gs_tensor t, gs_memory_format format);
/* Id of the storage t views: equal ids mean shared memory (views and detaches). */
GS_API uint64_t gs_storage_id(gs_tensor t);
/* The storage's version counter: bumped by every in-place write through any alias. */
GS_API int64_t gs_version(gs_tensor t);
/* True while t's bytes are shared copy-on-write with another storage (after gs_clone,
 * before either side writes). */
GS_API bool gs_is_copy_on_write(gs_tensor t);
/* One pointer a language binding keeps with a tensor handle: its object for it, so that
 * asking for the same tensor twice (a view's base, a leaf's gradient) gives the same object,
 * as PyTorch keeps its Python object in the tensor. The engine never reads it; a new or moved
 * handle starts with NULL. The binding clears it when its object goes. Neither reports an
 * error: a stale handle has no binding (NULL), and setting one on it does nothing. */
GS_API void gs_tensor_set_binding(gs_tensor t, void *object);
GS_API void *gs_tensor_binding(gs_tensor t);
/* "[3, 4] f32"-style description into buf; returns buf. */
GS_API char *gs_describe(gs_tensor t, char *buf, size_t buf_size);

/* ---- creation ----------------------------------------------------------------------- */

GS_API gs_tensor gs_empty(gs_dtype dtype, const int64_t *shape, int ndim);
/* The same laid out in format (torch.empty(..., memory_format=)): channels_last's strides even
 * where a size-1 dim would let row-major's do. */
GS_API gs_tensor gs_empty_format(gs_dtype dtype, const int64_t *shape, int ndim,
                                 gs_memory_format format);
GS_API gs_tensor gs_zeros(gs_dtype dtype, const int64_t *shape, int ndim);
GS_API gs_tensor gs_ones(gs_dtype dtype, const int64_t *shape, int ndim);
GS_API gs_tensor gs_full(gs_dtype dtype, const int64_t *shape, int ndim, double value);
/* A 0-dim tensor holding value. */
GS_API gs_tensor gs_scalar(gs_dtype dtype, double value);
GS_API gs_tensor gs_zeros_like(gs_tensor t);
GS_API gs_tensor gs_ones_like(gs_tensor t);
GS_API gs_tensor gs_full_like(gs_tensor t, double value);
/* Values start, start+step, ... below end (above end for a negative step), as torch.arange. */
GS_API gs_tensor gs_arange(double start, double end, double step, gs_dtype dtype);
/* steps values evenly from start to end inclusive. */
GS_API gs_tensor gs_linspace(double start, double end, int64_t steps, gs_dtype dtype);
/* n x m with ones on the diagonal. */
GS_API gs_tensor gs_eye(int64_t n, int64_t m, gs_dtype dtype);
/* Copies numel(shape) elements of dtype from data (row-major). */
GS_API gs_tensor gs_from_data(gs_dtype dtype, const int64_t *shape, int ndim, const void *data);

/* Called once when no tensor uses wrapped external memory any more. */
typedef void (*gs_release_fn)(void *data, void *user_data);
/* Wraps memory the caller owns without copying. strides may be NULL (row-major). release may
 * be NULL (the caller keeps the memory valid until every tensor over it is disposed). */
GS_API gs_tensor gs_from_blob(gs_dtype dtype, const int64_t *shape, int ndim,
                              const int64_t *strides, void *data, gs_release_fn release,
                              void *user_data);

/* ---- conversion and values ---------------------------------------------------------- */

/* A tensor of the given dtype with t's values (contiguous). Same dtype: an O(1) clone. */
GS_API gs_tensor gs_to_dtype(gs_tensor t, gs_dtype dtype);
/* Copies t's values, row-major, as t's dtype, into dst (dst_bytes must be at least
 * numel * dtype size). Returns 0, or -1 on error. */
GS_API int gs_copy_to(gs_tensor t, void *dst, size_t dst_bytes);
/* The single element of a one-element tensor, as double (NAN on error). */
GS_API double gs_item(gs_tensor t);
/* The element at the given index (ndim indices), as double (NAN on error). */
GS_API double gs_get(gs_tensor t, const int64_t *index);
/* A pointer to t's first element for reading, valid until t's storage is written or freed. */
GS_API const void *gs_data(gs_tensor t);
/* A pointer for writing: materialises copy-on-write bytes and bumps the version first. */
GS_API void *gs_data_mut(gs_tensor t);
/* Prints t's dtype, shape and values (elided beyond a few thousand elements). */
GS_API void gs_print(FILE *out, gs_tensor t);

/* ---- views (share the storage, O(1)) ------------------------------------------------ */

/* New shape over the same elements; one size may be -1 (inferred). An error if t's strides
 * make a view impossible (use gs_reshape). */
GS_API gs_tensor gs_view(gs_tensor t, const int64_t *shape, int ndim);
/* A view of all of t as it is (torch.alias: what t[...] gives), recorded as AliasBackward. */
GS_API gs_tensor gs_alias(gs_tensor t);
/* Like gs_view, but copies when a view is impossible, as torch.reshape. */
GS_API gs_tensor gs_reshape(gs_tensor t, const int64_t *shape, int ndim);
GS_API gs_tensor gs_transpose(gs_tensor t, int dim0, int dim1);
/* Transpose of a 2-D (or 1-D/0-D, returned as is) tensor, as torch.t. */
GS_API gs_tensor gs_t(gs_tensor t);
GS_API gs_tensor gs_permute(gs_tensor t, const int *dims, int ndims);
/* Elements start, start+step, ... below end along dim; start/end are clamped and may be
 * negative as in Python slicing; step must be positive. */
GS_API gs_tensor gs_slice(gs_tensor t, int dim, int64_t start, int64_t end, int64_t step);
/* Removes dim, keeping index along it. */
GS_API gs_tensor gs_select(gs_tensor t, int dim, int64_t index);
/* length elements from start along dim (no clamping: out of range is an error). */
GS_API gs_tensor gs_narrow(gs_tensor t, int dim, int64_t start, int64_t length);
/* Broadcasts size-1 dimensions (stride 0) and prepends new ones; -1 keeps a size. */
GS_API gs_tensor gs_expand(gs_tensor t, const int64_t *shape, int ndim);
/* Any sizes and (non-negative) strides over t's storage from storage_offset, as
 * torch.as_strided: checked against the storage's size; differentiable to t's elements. */
GS_API gs_tensor gs_as_strided(gs_tensor t, const int64_t *shape, const int64_t *strides, int ndim,
                               int64_t storage_offset);
/* The same geometry given to t itself, as torch's in-place t.as_strided_ (what unsqueeze_, t_,
 * squeeze_, transpose_ and resize_ within the storage come down to; op names the call in
 * errors and the log): t keeps its handle, storage, view base and grad, and its storage's
 * version goes up, so a node that saved t refuses it in backward. Not for a tensor autograd
 * tracks (made by a node, or requiring grad while grad mode is on): false, with an error. */
GS_API bool gs_as_strided_(gs_tensor t, const int64_t *shape, const int64_t *strides, int ndim,
                           int64_t storage_offset, const char *op);
/* t repeated reps[d] times along each dim, as torch.Tensor.repeat: n >= t's dims (leading
 * dims are added), a new tensor (never a view). */
GS_API gs_tensor gs_repeat(gs_tensor t, const int64_t *reps, int n);
/* Removes dim if its size is 1 (otherwise returns a view unchanged). */
GS_API gs_tensor gs_squeeze(gs_tensor t, int dim);
/* Removes every size-1 dimension. */
GS_API gs_tensor gs_squeeze_all(gs_tensor t);
GS_API gs_tensor gs_unsqueeze(gs_tensor t, int dim);
/* Merges dims start_dim..end_dim (a view when possible, a copy otherwise). */
GS_API gs_tensor gs_flatten(gs_tensor t, int start_dim, int end_dim);
/* A row-major tensor with t's values: a view of t if t is already contiguous. */
GS_API gs_tensor gs_contiguous(gs_tensor t);
/* A tensor with t's values laid out in format (torch's t.contiguous(memory_format=)): a view
 * of t if it already is, else a copy with the format's strides; the gradient passes through.
 * channels_last takes 4-D tensors only, channels_last_3d 5-D. */
GS_API gs_tensor gs_contiguous_as(gs_tensor t, gs_memory_format format);
/* The tensor at the root of t's chain of views (PyTorch's Tensor._base), borrowed: its owner
 * disposes it. GS_NO_TENSOR for a tensor that is not a view (a base, a clone, a detach); a
 * stale-handle error if the base was disposed while the view lived on. */
GS_API gs_tensor gs_view_base(gs_tensor t);
/* Semantically a copy, O(1): shares the bytes copy-on-write until either side writes. */
GS_API gs_tensor gs_clone(gs_tensor t);
/* Shares the storage and its version counter (writes show in both). */
GS_API gs_tensor gs_detach(gs_tensor t);

/* ---- random numbers ----------------------------------------------------------------- */

/* A seedable generator: PyTorch 1.13's CPU generator, a 32-bit Mersenne Twister (mt19937)
 * seeded as torch seeds it, plus the normal value torch keeps between calls. Same seed, same
 * numbers as torch.manual_seed(seed) gives torch, on every machine. */
#define GS_MT19937_N 624
typedef struct gs_rng {
  uint32_t state[GS_MT19937_N];
  uint64_t seed;      /* the seed it was given (torch's initial_seed) */
  uint32_t next;      /* the state word the next number tempers */
  int32_t left;       /* numbers left before the state is twisted again */
  double next_normal; /* the second value of the last pair gs_rng_normal drew */
  bool has_next_normal;
} gs_rng;

/* Seeds as torch.Generator.manual_seed: only the low 32 bits of seed reach the state. */
GS_API void gs_rng_seed(gs_rng *rng, uint64_t seed);
/* The next 32-bit number (torch's generator->random()). */
GS_API uint32_t gs_rng_next_u32(gs_rng *rng);
/* Two 32-bit numbers, the first in the high half (torch's generator->random64()). */
GS_API uint64_t gs_rng_next_u64(gs_rng *rng);
/* Uniform in [0, 1) from the low 53 bits of gs_rng_next_u64 (torch's double uniform). */
GS_API double gs_rng_uniform(gs_rng *rng);
/* Standard normal, torch's double sampler: Box-Muller over two uniforms, the sine half kept
 * for the next call. */
GS_API double gs_rng_normal(gs_rng *rng);
/* Seeds the process-wide default generator that functions use when given rng = NULL. */
GS_API void gs_manual_seed(uint64_t seed);
/* The default generator's state, copied out (torch.get_rng_state), and put back
 * (torch.set_rng_state): the numbers drawn after a set repeat those drawn after the get. */
GS_API void gs_get_rng_state(gs_rng *out);
GS_API void gs_set_rng_state(const gs_rng *state);
/* A generator's state in the 5056 bytes torch.get_rng_state() returns (its legacy layout),
 * and back: bytes torch wrote load here and the reverse. Loading refuses (returns false) a
 * buffer whose size is not GS_RNG_STATE_BYTES. */
#define GS_RNG_STATE_BYTES 5056
GS_API void gs_rng_state_save(const gs_rng *rng, uint8_t out[GS_RNG_STATE_BYTES]);
GS_API bool gs_rng_state_load(gs_rng *rng, const uint8_t *bytes, size_t size);

/* Uniform in [0, 1); dtype must be floating. */
GS_API gs_tensor gs_rand(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng);
/* Standard normal; dtype must be floating. */
GS_API gs_tensor gs_randn(gs_dtype dtype, const int64_t *shape, int ndim, gs_rng *rng);
/* Uniform in [low, high). */
GS_API gs_tensor gs_uniform(gs_dtype dtype, const int64_t *shape, int ndim, double low,
                            double high, gs_rng *rng);
/* Normal with the given mean and standard deviation. */
GS_API gs_tensor gs_normal(gs_dtype dtype, const int64_t *shape, int ndim, double mean,
                           double std, gs_rng *rng);
/* Integers uniform in [low, high), dtype i64. */
GS_API gs_tensor gs_randint(int64_t low, int64_t high, const int64_t *shape, int ndim,
                            gs_rng *rng);
/* 1 with probability probs[i], else 0; same dtype and shape as probs (floating). */
GS_API gs_tensor gs_bernoulli(gs_tensor probs, gs_rng *rng);
/* 1 with probability p, else 0. */
GS_API gs_tensor gs_bernoulli_p(gs_dtype dtype, const int64_t *shape, int ndim, double p,
                                gs_rng *rng);
/* A random permutation of 0 .. n-1, dtype i64 (torch.randperm's swaps). */
GS_API gs_tensor gs_randperm(int64_t n, gs_rng *rng);
/* Fills out[0 .. n-1] with torch.randperm(n)'s permutation: samplers shuffle with it. */
GS_API void gs_rng_permutation(gs_rng *rng, int64_t *out, int64_t n);

#ifdef __cplusplus
}
#endif
