/* iter.c: strided iteration over several operands, broadcasting, and strided copies.
 *
 * Every elementwise op and every copy goes through gs__iter_run: it orders dims by the
 * output's strides, merges dims that are contiguous in every operand, and hands the innermost
 * run to a typed inner loop. A contiguous or merely transposed operand therefore runs as one
 * long loop the compiler can vectorise, whatever its logical shape.
 */
#include <string.h>

#include "core-impl.h"

bool gs__broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                          int *nout) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return false;
    out[i] = sa == 1 ? sb : sa;
  }
  *nout = n;
  return true;
}

bool gs__broadcast_strides(const gs__tensor *t, const int64_t *shape, int ndim,
                           int64_t *strides_out) {
  if (t->ndim > ndim)
    return false;
  int lead = ndim - t->ndim;
  for (int i = 0; i < ndim; i++) {
    if (i < lead) {
      strides_out[i] = 0;
      continue;
    }
    int64_t ts = t->shape[i - lead];
    if (ts == shape[i])
      strides_out[i] = ts == 1 ? 0 : t->strides[i - lead];
    else if (ts == 1)
      strides_out[i] = 0;
    else
      return false;
  }
  return true;
}

/* The step of an operand that is either dense row-major over shape (its element size) or a
 * single broadcast value (0); false for any other layout. */
static bool flat_step(const int64_t *strides, const int64_t *shape, int ndim, size_t elem_size,
                      int64_t *step) {
  bool dense = true, single = true;
  int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    if (shape[d] == 1)
      continue;
    dense = dense && strides[d] == expected;
    single = single && strides[d] == 0;
    expected *= shape[d];
  }
  *step = dense ? (int64_t)elem_size : 0;
  return dense || single;
}

void gs__iter_run(int nops, char *const *data, const int64_t (*strides)[GS_MAX_DIMS],
                  const size_t *elem_sizes, const int64_t *shape, int ndim, gs__loop_fn fn,
                  void *ctx) {
  int64_t sh[GS_MAX_DIMS];
  int64_t st[GS__MAX_OPERANDS][GS_MAX_DIMS];
  int perm[GS_MAX_DIMS];
  int n = 0;

  int64_t numel = 1;
  for (int d = 0; d < ndim; d++)
    numel *= shape[d];
  if (numel == 0)
    return; /* nothing to visit */

  /* Fast path, the common case: each operand either walks all elements row-major or is one
   * broadcast value, so a single inner-loop call covers everything. Keeps small ops cheap. */
  {
    char *ptr[GS__MAX_OPERANDS];
    int64_t step[GS__MAX_OPERANDS];
    int k = 0;
    for (; k < nops && flat_step(strides[k], shape, ndim, elem_sizes[k], &step[k]); k++)
      ptr[k] = data[k];
    if (k == nops) {
      fn(ptr, step, numel, ctx);
      return;
    }
  }

  /* Drop size-1 dims: their strides never matter. */
  int kept[GS_MAX_DIMS];
  int nk = 0;
  for (int d = 0; d < ndim; d++)
    if (shape[d] != 1)
      kept[nk++] = d;

  /* Order dims outermost-first by the output's |stride| (stable), so an output written
   * through a transposed view is still walked in memory order. */
  for (int i = 0; i < nk; i++)
    perm[i] = kept[i];
  for (int i = 1; i < nk; i++) {
    int p = perm[i], j = i;
    int64_t sp = strides[0][p] < 0 ? -strides[0][p] : strides[0][p];
    while (j > 0) {
      int64_t sq = strides[0][perm[j - 1]];
      sq = sq < 0 ? -sq : sq;
      if (sq >= sp)
        break;
      perm[j] = perm[j - 1];
      j--;
    }
    perm[j] = p;
  }

  /* Merge neighbouring dims that are contiguous with each other in every operand. */
  for (int i = 0; i < nk; i++) {
    int d = perm[i];
    if (n > 0) {
      bool mergeable = true;
      for (int k = 0; k < nops && mergeable; k++)
        mergeable = st[k][n - 1] == strides[k][d] * shape[d];
      if (mergeable) {
        sh[n - 1] *= shape[d];
        for (int k = 0; k < nops; k++)
          st[k][n - 1] = strides[k][d];
        continue;
      }
    }
    sh[n] = shape[d];
    for (int k = 0; k < nops; k++)
      st[k][n] = strides[k][d];
    n++;
  }

  char *ptr[GS__MAX_OPERANDS];
  int64_t inner_bytes[GS__MAX_OPERANDS];
  for (int k = 0; k < nops; k++)
    ptr[k] = data[k];

  if (n == 0) { /* a single element */
    for (int k = 0; k < nops; k++)
      inner_bytes[k] = (int64_t)elem_sizes[k];
    fn(ptr, inner_bytes, 1, ctx);
    return;
  }

  int inner = n - 1;
  for (int k = 0; k < nops; k++)
    inner_bytes[k] = st[k][inner] * (int64_t)elem_sizes[k];

  int64_t counter[GS_MAX_DIMS] = {0};
  for (;;) {
    fn(ptr, inner_bytes, sh[inner], ctx);
    /* Odometer over the outer dims, advancing the pointers incrementally. */
    int d = inner - 1;
    for (; d >= 0; d--) {
      counter[d]++;
      for (int k = 0; k < nops; k++)
        ptr[k] += st[k][d] * (int64_t)elem_sizes[k];
      if (counter[d] < sh[d])
        break;
      for (int k = 0; k < nops; k++)
        ptr[k] -= st[k][d] * sh[d] * (int64_t)elem_sizes[k];
      counter[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/* ---- copies with dtype conversion ------------------------------------------------- */

#define COPY_LOOP(TO, FROM, CONVERT)                                                         \
  static void copy_##TO##_##FROM(char **p, const int64_t *s, int64_t n, void *ctx) {       \
    (void)ctx;                                                                               \
    char *o = p[0];                                                                          \
    const char *x = p[1];                                                                    \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(FROM)) {                     \
      TO *restrict out = (TO *)o;                                                            \
      const FROM *restrict in = (const FROM *)x;                                             \
      for (int64_t i = 0; i < n; i++) {                                                      \
        FROM v = in[i];                                                                      \
        out[i] = CONVERT;                                                                    \
      }                                                                                      \
    } else {                                                                                 \
      for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                               \
        FROM v = *(const FROM *)x;                                                           \
        *(TO *)o = CONVERT;                                                                  \
      }                                                                                      \
    }                                                                                        \
  }

typedef float f32;
typedef double f64;
typedef int64_t i64;
typedef int32_t i32;
typedef uint8_t u8;
typedef int8_t i8;
typedef int16_t i16;
typedef bool b8;

/* The conversion of v into each dtype, as PyTorch's casts: floating values go through the
 * range-checked conversions of core-impl.h; integers narrow by keeping the low bits (done in
 * unsigned arithmetic, where it is defined). */
#define TO_INT(T, UT, FROM_F64, v)                                                                 \
  _Generic((v), float                                                                              \
           : FROM_F64((double)(v)), double                                                         \
           : FROM_F64((double)(v)), default                                                        \
           : (T)(UT)(uint64_t)(v))
#define CONV_f32(v) ((float)(v))
#define CONV_f64(v) ((double)(v))
#define CONV_b8(v) ((v) != 0)
#define CONV_i64(v) TO_INT(int64_t, uint64_t, gs__f64_to_i64, v)
#define CONV_i32(v) TO_INT(int32_t, uint32_t, gs__f64_to_i32, v)
#define CONV_u8(v) TO_INT(uint8_t, uint8_t, gs__f64_to_u8, v)
#define CONV_i8(v) TO_INT(int8_t, uint8_t, gs__f64_to_i8, v)
#define CONV_i16(v) TO_INT(int16_t, uint16_t, gs__f64_to_i16, v)

/* The copies into TO from every dtype, and their row of the table, in gs_dtype order: f32,
 * f64, i64, bool, i32, u8, i8, i16. */
#define COPY_LOOPS_INTO(TO)                                                                        \
  COPY_LOOP(TO, f32, CONV_##TO(v))                                                                 \
  COPY_LOOP(TO, f64, CONV_##TO(v))                                                                 \
  COPY_LOOP(TO, i64, CONV_##TO(v))                                                                 \
  COPY_LOOP(TO, b8, CONV_##TO(v))                                                                  \
  COPY_LOOP(TO, i32, CONV_##TO(v))                                                                 \
  COPY_LOOP(TO, u8, CONV_##TO(v))                                                                  \
  COPY_LOOP(TO, i8, CONV_##TO(v))                                                                  \
  COPY_LOOP(TO, i16, CONV_##TO(v))
#define COPY_ROW(TO)                                                                               \
  {                                                                                                \
    copy_##TO##_f32, copy_##TO##_f64, copy_##TO##_i64, copy_##TO##_b8, copy_##TO##_i32,            \
        copy_##TO##_u8, copy_##TO##_i8, copy_##TO##_i16                                            \
  }

COPY_LOOPS_INTO(f32)
COPY_LOOPS_INTO(f64)
COPY_LOOPS_INTO(i64)
COPY_LOOPS_INTO(b8)
COPY_LOOPS_INTO(i32)
COPY_LOOPS_INTO(u8)
COPY_LOOPS_INTO(i8)
COPY_LOOPS_INTO(i16)

/* Indexed [to][from]. */
static const gs__loop_fn copy_loops[GS_DTYPE_COUNT][GS_DTYPE_COUNT] = {
    COPY_ROW(f32), COPY_ROW(f64), COPY_ROW(i64), COPY_ROW(b8),
    COPY_ROW(i32), COPY_ROW(u8),  COPY_ROW(i8),  COPY_ROW(i16),
};

void gs__copy_into(gs__tensor *dst, const gs__tensor *src) {
  int64_t strides[2][GS_MAX_DIMS];
  memcpy(strides[0], dst->strides, sizeof strides[0]);
  gs__broadcast_strides(src, dst->shape, dst->ndim, strides[1]);
  char *data[2] = {gs__tensor_data(dst), gs__tensor_data(src)};
  size_t sizes[2] = {gs__elsize(dst->dtype), gs__elsize(src->dtype)};
  gs__iter_run(2, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, dst->shape, dst->ndim,
               copy_loops[dst->dtype][src->dtype], NULL);
}

bool gs__as_contiguous(const gs__tensor *t, gs_dtype dtype, gs__tensor *out, const char *fn) {
  if (t->dtype == dtype && gs__is_contiguous(t)) {
    *out = *t;
    out->id = 0;
    gs__storage_retain(out->storage);
    return true;
  }
  if (!gs__tensor_init(out, dtype, t->shape, t->ndim, fn))
    return false;
  gs__copy_into(out, t);
  return true;
}

const gs__tensor *gs__scalar_box_init(gs__scalar_box *box, gs_dtype dtype, double value) {
  memset(box, 0, sizeof *box);
  gs__store_f64(&box->value, dtype, value);
  box->buffer.data = &box->value;
  box->buffer.nbytes = gs__elsize(dtype);
  atomic_init(&box->buffer.refcount, 1);
  box->storage.buffer = &box->buffer;
  box->storage.nbytes = box->buffer.nbytes;
  atomic_init(&box->storage.refcount, 1);
  box->tensor.dtype = dtype;
  box->tensor.numel = 1;
  box->tensor.storage = &box->storage;
  return &box->tensor;
}
