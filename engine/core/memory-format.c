/* memory-format.c: torch's memory formats as strides: contiguous (row-major), channels_last
 * ([N, C, H, W] laid out as N, H, W, C) and channels_last_3d ([N, C, D, H, W] as N, D, H, W,
 * C), and whether a tensor's strides are a format's.
 *
 * The strides and the test are torch 1.13's to the letter (get_channels_last_strides_2d/3d,
 * compute_channels_last_contiguous_2d/3d), so x.stride() and x.is_contiguous(memory_format=)
 * agree with torch's, size-0 and size-1 dims included. A new tensor can be made with a
 * format's strides (gs_empty_format, and gs_contiguous_as's copies in ops/views.c).
 *
 * An elementwise result is laid out as its operands are (gs__tensor_new_like), as torch's
 * TensorIterator lays out its outputs: x + 1 of a channels-last x is channels-last, of a
 * transposed x transposed, so a network fed channels-last stays so.
 */
#include "core-impl.h"

/* The dims from innermost to outermost in each channels-last format: C, then the spatial dims
 * from the last, then N. */
static const int cl_order_2d[] = {1, 3, 2, 0};
static const int cl_order_3d[] = {1, 4, 3, 2, 0};

/* The format's dim order and rank, or NULL for contiguous. */
static const int *order_of(gs_memory_format format, int *rank) {
  *rank = format == GS_CHANNELS_LAST ? 4 : 5;
  return format == GS_CHANNELS_LAST      ? cl_order_2d
         : format == GS_CHANNELS_LAST_3D ? cl_order_3d
                                         : NULL;
}

bool gs__memory_format_strides(gs_memory_format format, const int64_t *shape, int ndim,
                               int64_t *strides, const char *fn) {
  if ((unsigned)format > GS_CHANNELS_LAST_3D) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a memory format 0 to 2 (contiguous, channels_last, channels_last_3d), "
              "got %d",
              (int)format);
    return false;
  }
  int rank;
  const int *order = order_of(format, &rank);
  if (!order) {
    gs__contiguous_strides(shape, ndim, strides);
    return true;
  }
  if (ndim != rank) {
    gs__error(GS_ERR_SHAPE, fn, "required rank %d tensor to use %s format, got %d-D", rank,
              format == GS_CHANNELS_LAST ? "channels_last" : "channels_last_3d", ndim);
    return false;
  }
  int64_t s = 1; /* torch multiplies by the sizes as they are: a size-0 dim zeroes the rest */
  for (int i = 0; i < rank; i++) {
    strides[order[i]] = s;
    s *= shape[order[i]];
  }
  return true;
}

bool gs__is_contiguous_as(const gs__tensor *t, gs_memory_format format) {
  int rank;
  const int *order = order_of(format, &rank);
  if (!order)
    return gs__is_contiguous(t);
  if (t->ndim != rank)
    return false;
  int64_t expected = 1;
  for (int i = 0; i < rank; i++) {
    int d = order[i];
    if (t->shape[d] == 1)
      continue; /* the stride of a size-1 dim never matters */
    if (t->strides[d] != expected)
      return false;
    expected *= t->shape[d];
  }
  return true;
}

bool gs__tensor_init_format(gs__tensor *t, gs_dtype dtype, const int64_t *shape, int ndim,
                            gs_memory_format format, const char *fn) {
  if (!gs__tensor_init(t, dtype, shape, ndim, fn))
    return false;
  if (gs__memory_format_strides(format, t->shape, ndim, t->strides, fn))
    return true;
  gs__tensor_release(t);
  return false;
}

gs_tensor gs_empty_format(gs_dtype dtype, const int64_t *shape, int ndim, gs_memory_format format) {
  gs__tensor t;
  if (!gs__tensor_init_format(&t, dtype, shape, ndim, format, "empty"))
    return GS_NO_TENSOR;
  return gs__register(&t, "empty");
}

bool gs_is_contiguous_as(gs_tensor h, gs_memory_format format) {
  gs__tensor *t = gs__lookup(h, "is_contiguous");
  if (!t)
    return false;
  if ((unsigned)format > GS_CHANNELS_LAST_3D) {
    gs__error(GS_ERR_ARGUMENT, "is_contiguous",
              "expected a memory format 0 to 2 (contiguous, channels_last, channels_last_3d), "
              "got %d",
              (int)format);
    return false;
  }
  return gs__is_contiguous_as(t, format);
}

/* Whether dims d0 and d1 (d0 now the faster) should swap to order the result as its operands:
 * torch's TensorIterator::reorder_dimensions. The first operand whose strides tell the two
 * apart decides (a broadcast dim tells nothing); equal strides put the smaller dim first. */
static int should_swap(int d0, int d1, const int64_t (*st)[GS_MAX_DIMS], int nops,
                       const int64_t *shape) {
  for (int k = 0; k < nops; k++) {
    int64_t s0 = st[k][d0], s1 = st[k][d1];
    if (s0 == 0 || s1 == 0)
      continue;
    if (s0 != s1)
      return s0 < s1 ? -1 : 1;
    if (shape[d0] > shape[d1])
      return 1;
  }
  return 0;
}

void gs__result_strides(const int64_t *shape, int ndim, const gs__tensor *const *ops, int nops,
                        int64_t *strides) {
  int64_t st[GS__MAX_OPERANDS][GS_MAX_DIMS];
  int n = 0;
  for (int k = 0; k < nops && n < GS__MAX_OPERANDS; k++) {
    const gs__tensor *t = ops[k];
    if (!t || t->ndim > ndim)
      continue;
    int lead = ndim - t->ndim;
    for (int d = 0; d < ndim; d++) /* torch's: a size-1 dim of the result keeps its stride */
      st[n][d] = d < lead || (t->shape[d - lead] == 1 && shape[d] != 1) ? 0 : t->strides[d - lead];
    n++;
  }
  int perm[GS_MAX_DIMS]; /* fastest first, row-major to start with */
  for (int i = 0; i < ndim; i++)
    perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++) { /* insertion sort that tolerates ambiguous pairs */
    int d1 = i;
    for (int d0 = i - 1; d0 >= 0; d0--) {
      int c = should_swap(perm[d0], perm[d1], (const int64_t(*)[GS_MAX_DIMS])st, n, shape);
      if (c > 0) {
        int tmp = perm[d0];
        perm[d0] = perm[d1];
        perm[d1] = tmp;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  int64_t s = 1;
  for (int i = 0; i < ndim; i++) {
    strides[perm[i]] = s;
    s *= shape[perm[i]] > 1 ? shape[perm[i]] : 1;
  }
}

gs_tensor gs__tensor_new_like(gs_dtype dtype, const int64_t *shape, int ndim,
                              const gs__tensor *const *ops, int nops, const char *fn,
                              gs__tensor **out) {
  gs__tensor t;
  if (!gs__tensor_init(&t, dtype, shape, ndim, fn))
    return GS_NO_TENSOR;
  gs__result_strides(t.shape, ndim, ops, nops, t.strides);
  gs_tensor h = gs__register(&t, fn);
  if (out)
    *out = h.id ? gs__lookup(h, fn) : NULL;
  return h;
}
