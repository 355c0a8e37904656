/* resample.c: ops that take rows along each of the last dims by an index per dim: reflection,
 * replication and circular padding (F.pad's 'reflect', 'replicate' and 'circular' modes, of 1
 * to 3 dims) and
 * nearest resizing (F.interpolate's 'nearest', of 1 to 3 dims).
 *
 * Each computes its indices, takes the rows with index_select along each dim with grad mode
 * off, and records one node, as torch records these ops (ReflectionPad2DBackward0,
 * ReplicationPad1DBackward0, UpsampleNearest2DBackward1, ...). The formula adds g back along
 * each dim with index_add (a row taken twice gets both gradients; saved: the indices), so it
 * differentiates again.
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

/* d rows(t) = g added back into zeros along each dim, last dim first (saved slot i: the index
 * of the i-th of the n_saved last dims) */
static void rows_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  int k = n->n_saved;
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(g, shape);
  gs_tensor cur = g;
  for (int i = k - 1; i >= 0; i--) {
    int d = m->ndim - k + i;
    shape[d] = m->shape[d];
    gs_tensor zeros = gs__formula_temp(gs_zeros(gs_dtype_of(g), shape, nd));
    gs_tensor added = gs_index_add(zeros, d, gs__saved(n, i), cur, 1.0);
    cur = i > 0 ? gs__formula_temp(added) : added;
  }
  grads[0] = gs__reduce_grad(n, 0, cur);
}
GS__BACKWARD_TWICE(ReflectionPad1dBackward, rows_backward);
GS__BACKWARD_TWICE(ReflectionPad2dBackward, rows_backward);
GS__BACKWARD_TWICE(ReflectionPad3dBackward, rows_backward);
GS__BACKWARD_TWICE(ReplicationPad1dBackward, rows_backward);
GS__BACKWARD_TWICE(ReplicationPad2dBackward, rows_backward);
GS__BACKWARD_TWICE(ReplicationPad3dBackward, rows_backward);
GS__BACKWARD_TWICE(CircularPad1dBackward, rows_backward);
GS__BACKWARD_TWICE(CircularPad2dBackward, rows_backward);
GS__BACKWARD_TWICE(CircularPad3dBackward, rows_backward);
GS__BACKWARD_TWICE(UpsampleNearest1dBackward, rows_backward);
GS__BACKWARD_TWICE(UpsampleNearest2dBackward, rows_backward);
GS__BACKWARD_TWICE(UpsampleNearest3dBackward, rows_backward);

/* The rows of t (of handle h) at rows[i] (lens[i] of them) along each of its last k dims,
 * recorded as kind; takes rows[] over (frees them). */
static gs_tensor take_rows(gs_tensor h, gs__tensor *t, int64_t **rows, const int64_t *lens, int k,
                           const gs__node_kind *kind, const char *fn) {
  gs_tensor index[3] = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  bool ok = true;
  for (int i = 0; i < k; i++) {
    ok = ok && rows[i];
    if (ok)
      index[i] = gs_from_data(GS_I64, &lens[i], 1, rows[i]);
    ok = ok && index[i].id;
  }
  for (int i = 0; i < k; i++)
    free(rows[i]);
  gs_tensor cur = h;
  if (!ok) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for the row indices");
  } else {
    gs_no_grad_begin();
    for (int i = 0; i < k && cur.id; i++) {
      gs_tensor next = gs_index_select(cur, t->ndim - k + i, index[i]);
      if (cur.id != h.id)
        gs_dispose(cur);
      cur = next;
    }
    gs_no_grad_end();
  }
  gs_tensor out = ok && cur.id != h.id ? cur : GS_NO_TENSOR;
  gs__node *n = gs__record_result(kind, out, 1, (const gs__tensor *[]){t}, k, fn);
  for (int i = 0; n && i < k; i++)
    gs__save(n, i, gs__lookup(index[i], fn));
  for (int i = 0; i < k; i++)
    if (index[i].id)
      gs_dispose(index[i]);
  return out;
}

/* ---- reflection, replication and circular padding ------------------------------------------ */

typedef enum pad_kind { PAD_REPLICATE, PAD_REFLECT, PAD_CIRCULAR } pad_kind;

/* Whether pads (left, right) fit a dim of size rows in this kind of padding: reflection
 * mirrors without the edge (each pad below size), circular wraps around at most once (each
 * pad up to size), replication needs an edge to repeat. */
static bool pads_fit(pad_kind kind, int64_t left, int64_t right, int64_t size) {
  if (left < 0 || right < 0)
    return false;
  switch (kind) {
  case PAD_REFLECT: return left < size && right < size;
  case PAD_CIRCULAR: return size > 0 && left <= size && right <= size;
  default: return size > 0;
  }
}

static gs_tensor pad_rows(gs_tensor h, const int64_t *pad, int npad, pad_kind kind) {
  static const char *const fns[3] = {"replication_pad", "reflection_pad", "circular_pad"};
  static const char *const expected[3] = {
      "expected pads >= 0 of a non-empty dim",
      "expected pads >= 0 and below the size of the dim they pad",
      "expected pads >= 0 of a non-empty dim, at most its size (wrapping around once)"};
  const char *fn = fns[kind];
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  int k = npad / 2;
  if (!pad || npad % 2 != 0 || k < 1 || k > 3) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 2, 4 or 6 pads (two for each of 1 to 3 dims), got %d",
              npad);
    return GS_NO_TENSOR;
  }
  if (t->ndim != k + 1 && t->ndim != k + 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected an input of %d or %d dims to pad %d dims, got %d-D",
              k + 1, k + 2, k, t->ndim);
    return GS_NO_TENSOR;
  }
  int64_t *rows[3] = {NULL, NULL, NULL}, lens[3];
  for (int i = 0; i < k; i++) { /* rows[i] is for dim ndim - k + i: its pads come last-first */
    int d = t->ndim - k + i;
    int64_t size = t->shape[d], left = pad[2 * (k - 1 - i)], right = pad[2 * (k - 1 - i) + 1];
    if (!pads_fit(kind, left, right, size)) {
      gs__error(GS_ERR_ARGUMENT, fn, "%s, got (%lld, %lld) for dim %d of size %lld", expected[kind],
                (long long)left, (long long)right, d, (long long)size);
      for (int j = 0; j < i; j++)
        free(rows[j]);
      return GS_NO_TENSOR;
    }
    lens[i] = size + left + right;
    rows[i] = malloc(sizeof(int64_t) * (size_t)lens[i]);
    for (int64_t j = 0; rows[i] && j < lens[i]; j++) {
      int64_t s = j - left; /* the row of t it would be without padding */
      if (kind == PAD_REFLECT)
        s = s < 0 ? -s : s >= size ? 2 * (size - 1) - s : s;
      else if (kind == PAD_CIRCULAR)
        s = s < 0 ? s + size : s >= size ? s - size : s;
      else
        s = s < 0 ? 0 : s >= size ? size - 1 : s;
      rows[i][j] = s;
    }
  }
  static const gs__node_kind *const kinds[3][3] = {
      {&ReplicationPad1dBackward, &ReplicationPad2dBackward, &ReplicationPad3dBackward},
      {&ReflectionPad1dBackward, &ReflectionPad2dBackward, &ReflectionPad3dBackward},
      {&CircularPad1dBackward, &CircularPad2dBackward, &CircularPad3dBackward}};
  return take_rows(h, t, rows, lens, k, kinds[kind][k - 1], fn);
}

gs_tensor gs_reflection_pad(gs_tensor t, const int64_t *pad, int npad) {
  return pad_rows(t, pad, npad, PAD_REFLECT);
}

gs_tensor gs_replication_pad(gs_tensor t, const int64_t *pad, int npad) {
  return pad_rows(t, pad, npad, PAD_REPLICATE);
}

gs_tensor gs_circular_pad(gs_tensor t, const int64_t *pad, int npad) {
  return pad_rows(t, pad, npad, PAD_CIRCULAR);
}

/* ---- nearest resizing ---------------------------------------------------------------------- */

gs_tensor gs_upsample_nearest(gs_tensor h, const int64_t *sizes, const double *scales, int k) {
  const char *fn = "upsample_nearest";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!sizes || k < 1 || k > 3 || t->ndim != k + 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected 1 to 3 output sizes for an input [N, C, *] with that many more dims, got "
              "%d sizes for a %d-D input",
              k, t->ndim);
    return GS_NO_TENSOR;
  }
  int64_t *rows[3] = {NULL, NULL, NULL}, lens[3];
  for (int i = 0; i < k; i++) {
    int64_t in = t->shape[2 + i], out = sizes[i];
    if (out <= 0 || in <= 0) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected positive input and output sizes, got %lld to %lld "
                "along dim %d",
                (long long)in, (long long)out, 2 + i);
      for (int j = 0; j < i; j++)
        free(rows[j]);
      return GS_NO_TENSOR;
    }
    /* the source of output row j: floor(j * s), s the given scale (1 / scale_factor) or
     * in / out, within the input */
    double s = scales && scales[i] > 0 ? scales[i] : (double)in / (double)out;
    lens[i] = out;
    rows[i] = malloc(sizeof(int64_t) * (size_t)out);
    for (int64_t j = 0; rows[i] && j < out; j++) {
      int64_t src = (int64_t)floor((double)j * s);
      rows[i][j] = src < in - 1 ? src : in - 1;
    }
  }
  static const gs__node_kind *const kinds[3] = {
      &UpsampleNearest1dBackward, &UpsampleNearest2dBackward, &UpsampleNearest3dBackward};
  return take_rows(h, t, rows, lens, k, kinds[k - 1], fn);
}
