/* reduce.c: reductions over dims: sum, mean, max, min, logsumexp, argmax, argmin and sum_to
 * (the reverse of broadcasting, which autograd uses to reduce gradients of broadcast operands).
 *
 * Every reduction is one walk. The input's dims are split into kept dims (one output element
 * per kept index) and reduced dims (folded into that element). gs__iter_run walks the kept
 * dims in the input's memory order and hands over runs of n consecutive outputs; each run is
 * folded in one of two orders, chosen by which is closer in memory:
 *   by runs: each output folds its whole reduced block, innermost reduced dim as one run
 *            (sum over the last dim of a contiguous tensor is one contiguous run per output);
 *   by rows: a chunk of outputs is folded together, one reduced position at a time, each
 *            position a row of adjacent inputs (sum over dim 0 of a contiguous [N, M] matrix,
 *            the bias gradient, adds contiguous rows into a buffer of double accumulators).
 * The fold itself (what "add one element" means) is a typed kernel per operation and dtype.
 *
 * The backward formulas sit between the shared body of the reductions and the public ones
 * that record them: each spreads the output's gradient back over the dims its node folded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

typedef float f32;
typedef double f64;
typedef int64_t i64;
typedef int32_t i32;
typedef uint8_t u8;
typedef int8_t i8;
typedef int16_t i16;
typedef bool b8;

/* ---- folds ---------------------------------------------------------------------------- */

/* What a kernel folds elements into. */
typedef enum fold_op { FOLD_SUM, FOLD_MAX, FOLD_MIN, FOLD_ARGMAX, FOLD_ARGMIN, FOLD_SUMEXP,
                       FOLD_COUNT } fold_op;

/* Accumulators of a chunk of outputs: floating inputs fold into f, integer and bool inputs
 * into i (exact beyond 2^53), arg ops also track the position of the extreme, and logsumexp's
 * second pass reads the max it subtracts from shift. */
typedef struct fold_state {
  double *f;
  int64_t *i;
  int64_t *arg;
  const double *shift;
} fold_state;

/* Folds n elements p[0], p[s], ... (s in bytes) into accumulator j; pos is the reduced-space
 * position (row-major) of p[0]. */
typedef void (*fold_run_fn)(fold_state *st, int64_t j, const char *p, int64_t s, int64_t n,
                            int64_t pos);
/* Folds p[j * s] into accumulator j for every j < n; all at reduced position pos. */
typedef void (*fold_rows_fn)(fold_state *st, const char *p, int64_t s, int64_t n, int64_t pos);

typedef struct fold_kernel {
  fold_run_fn run;
  fold_rows_fn rows;
} fold_kernel;

/* STEP(acc, arg, x, pos, shift) folds element x into one accumulator. */
#define FOLD_RUN(NAME, T, AT, FIELD, STEP)                                                   \
  static void NAME##_run(fold_state *st, int64_t j, const char *p, int64_t s, int64_t n,    \
                         int64_t pos) {                                                      \
    AT acc = st->FIELD[j];                                                                   \
    int64_t arg = st->arg[j];                                                                \
    const double sh = st->shift[j];                                                          \
    (void)sh, (void)pos;                                                                     \
    for (int64_t k = 0; k < n; k++) {                                                        \
      T x = *(const T *)(p + k * s);                                                         \
      STEP(acc, arg, x, pos + k, sh);                                                        \
    }                                                                                        \
    st->FIELD[j] = acc;                                                                      \
    st->arg[j] = arg;                                                                        \
  }
#define FOLD_ROWS(NAME, T, AT, FIELD, STEP)                                                  \
  static void NAME##_rows(fold_state *st, const char *p, int64_t s, int64_t n, int64_t pos) { \
    AT *restrict acc = st->FIELD;                                                            \
    int64_t *restrict arg = st->arg;                                                         \
    const double *restrict sh = st->shift;                                                   \
    (void)arg, (void)sh, (void)pos;                                                          \
    if (s == (int64_t)sizeof(T)) { /* adjacent outputs read adjacent inputs: vectorisable */ \
      const T *restrict v = (const T *)p;                                                    \
      for (int64_t j = 0; j < n; j++)                                                        \
        STEP(acc[j], arg[j], v[j], pos, sh[j]);                                              \
    } else {                                                                                 \
      for (int64_t j = 0; j < n; j++) {                                                      \
        T x = *(const T *)(p + j * s);                                                       \
        STEP(acc[j], arg[j], x, pos, sh[j]);                                                 \
      }                                                                                      \
    }                                                                                        \
  }
#define FOLD_KERNEL(NAME, T, AT, FIELD, STEP)                                                \
  FOLD_RUN(NAME, T, AT, FIELD, STEP)                                                         \
  FOLD_ROWS(NAME, T, AT, FIELD, STEP)

/* Integer sums wrap around on overflow, as PyTorch's do, without signed-overflow UB. */
#define STEP_SUM_INT(acc, arg, x, pos, sh) ((acc) = (int64_t)((uint64_t)(acc) + (uint64_t)(x)))
#define STEP_SUM_EXP(acc, arg, x, pos, sh) ((acc) += exp((double)(x) - (sh)))
/* Once the accumulator is NaN no comparison is true, so the NaN sticks. */
#define STEP_MAX_FLOAT(acc, arg, x, pos, sh)                                                 \
  do {                                                                                       \
    if ((double)(x) > (acc) || isnan(x))                                                     \
      (acc) = (double)(x);                                                                   \
  } while (0)
#define STEP_MIN_FLOAT(acc, arg, x, pos, sh)                                                 \
  do {                                                                                       \
    if ((double)(x) < (acc) || isnan(x))                                                     \
      (acc) = (double)(x);                                                                   \
  } while (0)
#define STEP_MAX_INT(acc, arg, x, pos, sh)                                                   \
  do {                                                                                       \
    if ((int64_t)(x) > (acc))                                                                \
      (acc) = (int64_t)(x);                                                                  \
  } while (0)
#define STEP_MIN_INT(acc, arg, x, pos, sh)                                                   \
  do {                                                                                       \
    if ((int64_t)(x) < (acc))                                                                \
      (acc) = (int64_t)(x);                                                                  \
  } while (0)
/* Strict comparisons keep the first occurrence; the first NaN wins and is never replaced,
 * as PyTorch's argmax/argmin treat NaN as the extreme. */
#define STEP_ARGMAX_FLOAT(acc, arg, x, pos, sh)                                              \
  do {                                                                                       \
    if (!isnan(acc) && ((double)(x) > (acc) || isnan(x)))                                    \
      (acc) = (double)(x), (arg) = (pos);                                                    \
  } while (0)
#define STEP_ARGMIN_FLOAT(acc, arg, x, pos, sh)                                              \
  do {                                                                                       \
    if (!isnan(acc) && ((double)(x) < (acc) || isnan(x)))                                    \
      (acc) = (double)(x), (arg) = (pos);                                                    \
  } while (0)
#define STEP_ARGMAX_INT(acc, arg, x, pos, sh)                                                \
  do {                                                                                       \
    if ((int64_t)(x) > (acc))                                                                \
      (acc) = (int64_t)(x), (arg) = (pos);                                                   \
  } while (0)
#define STEP_ARGMIN_INT(acc, arg, x, pos, sh)                                                \
  do {                                                                                       \
    if ((int64_t)(x) < (acc))                                                                \
      (acc) = (int64_t)(x), (arg) = (pos);                                                   \
  } while (0)

/* Floating sums by runs get their own kernel: eight partial sums break the dependency chain
 * of one accumulator, so a contiguous run vectorises instead of waiting on each add. */
#define SUM_FLOAT_KERNEL(T)                                                                  \
  static void sum_##T##_run(fold_state *st, int64_t j, const char *p, int64_t s, int64_t n,  \
                            int64_t pos) {                                                   \
    (void)pos;                                                                               \
    double total = 0.0;                                                                      \
    if (s == (int64_t)sizeof(T)) {                                                           \
      const T *restrict v = (const T *)p;                                                    \
      double lane[8] = {0};                                                                  \
      int64_t k = 0;                                                                         \
      for (; k + 8 <= n; k += 8)                                                             \
        for (int l = 0; l < 8; l++)                                                          \
          lane[l] += (double)v[k + l];                                                       \
      for (; k < n; k++)                                                                     \
        total += (double)v[k];                                                               \
      total += ((lane[0] + lane[1]) + (lane[2] + lane[3])) +                                 \
               ((lane[4] + lane[5]) + (lane[6] + lane[7]));                                  \
    } else {                                                                                 \
      for (int64_t k = 0; k < n; k++)                                                        \
        total += (double)*(const T *)(p + k * s);                                            \
    }                                                                                        \
    st->f[j] += total;                                                                       \
  }                                                                                          \
  static void sum_##T##_rows(fold_state *st, const char *p, int64_t s, int64_t n,           \
                             int64_t pos) {                                                  \
    (void)pos;                                                                               \
    double *restrict acc = st->f;                                                            \
    if (s == (int64_t)sizeof(T)) {                                                           \
      const T *restrict v = (const T *)p;                                                    \
      for (int64_t j = 0; j < n; j++)                                                        \
        acc[j] += (double)v[j];                                                              \
    } else {                                                                                 \
      for (int64_t j = 0; j < n; j++)                                                        \
        acc[j] += (double)*(const T *)(p + j * s);                                           \
    }                                                                                        \
  }

/* Contiguous float max/min runs: eight lanes compared in T keep the compare chain short (and
 * vectorise); NaN is only noted per lane, and then wins. The tail and the lanes' combination
 * go through STEP, which also keeps a NaN the accumulator already holds. */
#define EXTREME_FLOAT_RUN(NAME, T, STEP, BETTER)                                             \
  static void NAME##_run(fold_state *st, int64_t j, const char *p, int64_t s, int64_t n,    \
                         int64_t pos) {                                                      \
    (void)pos;                                                                               \
    double acc = st->f[j];                                                                   \
    int64_t k = 0;                                                                           \
    if (s == (int64_t)sizeof(T) && n >= 16) {                                                \
      const T *restrict v = (const T *)p;                                                    \
      T lane[8];                                                                             \
      int unordered[8] = {0};                                                                \
      for (int l = 0; l < 8; l++)                                                            \
        lane[l] = v[l];                                                                      \
      for (k = 8; k + 8 <= n; k += 8)                                                        \
        for (int l = 0; l < 8; l++) {                                                        \
          T x = v[k + l];                                                                    \
          unordered[l] |= isnan(x);                                                          \
          lane[l] = x BETTER lane[l] ? x : lane[l];                                          \
        }                                                                                    \
      for (int l = 0; l < 8; l++) {                                                          \
        STEP(acc, 0, lane[l], 0, 0);                                                         \
        if (unordered[l])                                                                    \
          acc = NAN;                                                                         \
      }                                                                                      \
    }                                                                                        \
    for (; k < n; k++)                                                                       \
      STEP(acc, 0, *(const T *)(p + k * s), 0, 0);                                           \
    st->f[j] = acc;                                                                          \
  }

SUM_FLOAT_KERNEL(f32)
SUM_FLOAT_KERNEL(f64)
FOLD_KERNEL(sum_i64, i64, int64_t, i, STEP_SUM_INT)
FOLD_KERNEL(sum_b8, b8, int64_t, i, STEP_SUM_INT)
FOLD_KERNEL(sum_i32, i32, int64_t, i, STEP_SUM_INT)
FOLD_KERNEL(sum_u8, u8, int64_t, i, STEP_SUM_INT)
FOLD_KERNEL(sum_i8, i8, int64_t, i, STEP_SUM_INT)
FOLD_KERNEL(sum_i16, i16, int64_t, i, STEP_SUM_INT)
EXTREME_FLOAT_RUN(max_f32, f32, STEP_MAX_FLOAT, >)
EXTREME_FLOAT_RUN(max_f64, f64, STEP_MAX_FLOAT, >)
FOLD_ROWS(max_f32, f32, double, f, STEP_MAX_FLOAT)
FOLD_ROWS(max_f64, f64, double, f, STEP_MAX_FLOAT)
FOLD_KERNEL(max_i64, i64, int64_t, i, STEP_MAX_INT)
FOLD_KERNEL(max_b8, b8, int64_t, i, STEP_MAX_INT)
FOLD_KERNEL(max_i32, i32, int64_t, i, STEP_MAX_INT)
FOLD_KERNEL(max_u8, u8, int64_t, i, STEP_MAX_INT)
FOLD_KERNEL(max_i8, i8, int64_t, i, STEP_MAX_INT)
FOLD_KERNEL(max_i16, i16, int64_t, i, STEP_MAX_INT)
EXTREME_FLOAT_RUN(min_f32, f32, STEP_MIN_FLOAT, <)
EXTREME_FLOAT_RUN(min_f64, f64, STEP_MIN_FLOAT, <)
FOLD_ROWS(min_f32, f32, double, f, STEP_MIN_FLOAT)
FOLD_ROWS(min_f64, f64, double, f, STEP_MIN_FLOAT)
FOLD_KERNEL(min_i64, i64, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(min_b8, b8, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(min_i32, i32, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(min_u8, u8, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(min_i8, i8, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(min_i16, i16, int64_t, i, STEP_MIN_INT)
FOLD_KERNEL(argmax_f32, f32, double, f, STEP_ARGMAX_FLOAT)
FOLD_KERNEL(argmax_f64, f64, double, f, STEP_ARGMAX_FLOAT)
FOLD_KERNEL(argmax_i64, i64, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmax_b8, b8, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmax_i32, i32, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmax_u8, u8, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmax_i8, i8, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmax_i16, i16, int64_t, i, STEP_ARGMAX_INT)
FOLD_KERNEL(argmin_f32, f32, double, f, STEP_ARGMIN_FLOAT)
FOLD_KERNEL(argmin_f64, f64, double, f, STEP_ARGMIN_FLOAT)
FOLD_KERNEL(argmin_i64, i64, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(argmin_b8, b8, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(argmin_i32, i32, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(argmin_u8, u8, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(argmin_i8, i8, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(argmin_i16, i16, int64_t, i, STEP_ARGMIN_INT)
FOLD_KERNEL(sumexp_f32, f32, double, f, STEP_SUM_EXP)
FOLD_KERNEL(sumexp_f64, f64, double, f, STEP_SUM_EXP)

#define KERNELS(OP)                                                                                \
  {                                                                                                \
    {OP##_f32_run, OP##_f32_rows}, {OP##_f64_run, OP##_f64_rows}, {OP##_i64_run, OP##_i64_rows},   \
        {OP##_b8_run, OP##_b8_rows}, {OP##_i32_run, OP##_i32_rows}, {OP##_u8_run, OP##_u8_rows},   \
        {OP##_i8_run, OP##_i8_rows}, {                                                             \
      OP##_i16_run, OP##_i16_rows                                                                  \
    }                                                                                              \
  }

/* Indexed [op][dtype] in gs_dtype order: f32, f64, i64, bool, i32, u8, i8, i16. Callers check
 * dtypes first: sumexp exists for floating inputs only. */
static const fold_kernel fold_kernels[FOLD_COUNT][GS_DTYPE_COUNT] = {
    [FOLD_SUM] = KERNELS(sum),
    [FOLD_MAX] = KERNELS(max),
    [FOLD_MIN] = KERNELS(min),
    [FOLD_ARGMAX] = KERNELS(argmax),
    [FOLD_ARGMIN] = KERNELS(argmin),
    [FOLD_SUMEXP] = {{sumexp_f32_run, sumexp_f32_rows},
                     {sumexp_f64_run, sumexp_f64_rows},
                     {NULL, NULL},
                     {NULL, NULL},
                     {NULL, NULL},
                     {NULL, NULL},
                     {NULL, NULL},
                     {NULL, NULL}},
};

/* ---- the walk ------------------------------------------------------------------------- */

/* The reduced index space, simplified: size-1 dims dropped, dims that are contiguous with
 * each other merged, innermost last. Byte strides. */
typedef struct reduce_plan {
  int nred;
  int64_t red_shape[GS_MAX_DIMS];
  int64_t red_bytes[GS_MAX_DIMS];
  int64_t red_count; /* elements folded into each output (0 for an empty reduction) */
  int nkept;
  int64_t kept_shape[GS_MAX_DIMS];
  int64_t kept_strides[GS_MAX_DIMS]; /* input strides, in elements */
} reduce_plan;

typedef struct reduce_ctx {
  fold_op op;
  gs_dtype in_dtype, out_dtype;
  fold_kernel kernel;
  reduce_plan plan;
  double divisor;    /* mean divides the sum by the count; 1 otherwise */
  bool has_shift;    /* logsumexp's second pass: operand 2 holds each output's max */
  fold_state chunk;  /* accumulators of the outputs folded together by rows */
  int64_t chunk_size;
} reduce_ctx;

/* keep_order keeps the reduced dims in logical order, so positions count row-major (what
 * argmax reports, and which of equal extremes comes first); other folds are free to walk the
 * reduced dims in memory order. */
static void build_plan(const gs__tensor *t, const bool *reduced, bool keep_order,
                       reduce_plan *p) {
  int64_t es = (int64_t)gs_dtype_size(t->dtype);
  memset(p, 0, sizeof *p);
  p->red_count = 1;
  int64_t shape[GS_MAX_DIMS], bytes[GS_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (!reduced[d]) {
      p->kept_shape[p->nkept] = t->shape[d];
      p->kept_strides[p->nkept++] = t->strides[d];
      continue;
    }
    p->red_count *= t->shape[d];
    if (t->shape[d] != 1)
      shape[n] = t->shape[d], bytes[n++] = t->strides[d] * es;
  }
  if (!keep_order) { /* stable insertion sort, largest |stride| first */
    for (int i = 1; i < n; i++) {
      int64_t sh = shape[i], by = bytes[i];
      int j = i;
      for (; j > 0 && gs__abs64(bytes[j - 1]) < gs__abs64(by); j--)
        shape[j] = shape[j - 1], bytes[j] = bytes[j - 1];
      shape[j] = sh, bytes[j] = by;
    }
  }
  for (int i = 0; i < n; i++) {
    if (p->nred > 0 && p->red_bytes[p->nred - 1] == bytes[i] * shape[i]) {
      p->red_shape[p->nred - 1] *= shape[i];
      p->red_bytes[p->nred - 1] = bytes[i];
      continue;
    }
    p->red_shape[p->nred] = shape[i];
    p->red_bytes[p->nred++] = bytes[i];
  }
  if (p->nred == 0) { /* nothing left to reduce: one run of one element per output */
    p->red_shape[0] = 1;
    p->red_bytes[0] = 0;
    p->nred = 1;
  }
}

/* Steps idx (innermost last) to the next position of an n-dim space, keeping *off (bytes)
 * in step; false after the last position. */
static bool next_position(int64_t *idx, const int64_t *shape, const int64_t *bytes, int n,
                          int64_t *off) {
  for (int d = n - 1; d >= 0; d--) {
    *off += bytes[d];
    if (++idx[d] < shape[d])
      return true;
    *off -= bytes[d] * shape[d];
    idx[d] = 0;
  }
  return false;
}

static void init_state(fold_op op, fold_state *st, int64_t n) {
  double f0 = 0.0;
  int64_t i0 = 0;
  if (op == FOLD_MAX || op == FOLD_ARGMAX)
    f0 = -INFINITY, i0 = INT64_MIN;
  else if (op == FOLD_MIN || op == FOLD_ARGMIN)
    f0 = INFINITY, i0 = INT64_MAX;
  for (int64_t j = 0; j < n; j++)
    st->f[j] = f0, st->i[j] = i0, st->arg[j] = 0;
}

static void store_result(const reduce_ctx *c, const fold_state *st, int64_t j, char *out) {
  bool floating = gs_dtype_is_floating(c->in_dtype);
  switch (c->op) {
  case FOLD_SUM:
    if (floating)
      gs__store_f64(out, c->out_dtype, st->f[j] / c->divisor);
    else
      *(int64_t *)out = st->i[j];
    break;
  case FOLD_MAX:
  case FOLD_MIN:
    if (floating)
      gs__store_f64(out, c->out_dtype, st->f[j]);
    else if (c->out_dtype == GS_BOOL)
      *(bool *)out = st->i[j] != 0;
    else if (c->out_dtype == GS_I64)
      *(int64_t *)out = st->i[j];
    else /* i32, u8, i8, i16: the extreme is one of the input's values, exact in a double */
      gs__store_f64(out, c->out_dtype, (double)st->i[j]);
    break;
  case FOLD_ARGMAX:
  case FOLD_ARGMIN:
    *(int64_t *)out = st->arg[j];
    break;
  case FOLD_SUMEXP: {
    /* An infinite max is the answer itself (exp(x - max) would be NaN). */
    double m = st->shift[j];
    gs__store_f64(out, c->out_dtype, isinf(m) ? m : m + log(st->f[j]));
    break;
  }
  case FOLD_COUNT:
    break;
  }
}

/* Outputs folded together in the by-rows order. Up to a whole row of a matrix, so that
 * folding reads it straight through memory (shorter pieces of many rows defeat the prefetcher
 * and the TLB); from the heap, or a smaller chunk on the stack if that fails, which only
 * costs speed. */
#define ROWS_CHUNK_MAX 8192
#define ROWS_CHUNK_STACK 256

typedef struct stack_chunk {
  double f[ROWS_CHUNK_STACK], shift[ROWS_CHUNK_STACK];
  int64_t i[ROWS_CHUNK_STACK], arg[ROWS_CHUNK_STACK];
} stack_chunk;

/* Points c->chunk at accumulators for c->chunk_size outputs: from the heap (returned, for
 * free) when more than the stack chunk is worth having, else from fallback. */
static void *alloc_chunk(reduce_ctx *c, stack_chunk *fallback) {
  int64_t kept = 1;
  for (int d = 0; d < c->plan.nkept; d++)
    kept *= c->plan.kept_shape[d];
  c->chunk = (fold_state){fallback->f, fallback->i, fallback->arg, fallback->shift};
  c->chunk_size = kept < 1 ? 1 : kept < ROWS_CHUNK_STACK ? kept : ROWS_CHUNK_STACK;
  if (kept <= ROWS_CHUNK_STACK)
    return NULL;
  size_t n = (size_t)(kept < ROWS_CHUNK_MAX ? kept : ROWS_CHUNK_MAX);
  void *heap = malloc(n * (2 * sizeof(double) + 2 * sizeof(int64_t)));
  if (heap) {
    double *f = heap;
    int64_t *i = (int64_t *)(f + n);
    c->chunk = (fold_state){f, i, i + n, (double *)(i + 2 * n)};
    c->chunk_size = (int64_t)n;
  }
  return heap;
}

static void fold_by_runs(const reduce_ctx *c, char **ptrs, const int64_t *bs, int64_t n) {
  const reduce_plan *p = &c->plan;
  int outer = p->nred - 1;
  int64_t len = p->red_shape[outer], step = p->red_bytes[outer];
  double f, shift = 0.0;
  int64_t i, arg;
  fold_state st = {&f, &i, &arg, &shift};
  for (int64_t j = 0; j < n; j++) {
    init_state(c->op, &st, 1);
    if (c->has_shift)
      shift = *(const double *)(ptrs[2] + j * bs[2]);
    const char *base = ptrs[0] + j * bs[0];
    int64_t idx[GS_MAX_DIMS] = {0}, off = 0, pos = 0;
    if (p->red_count > 0) {
      do {
        c->kernel.run(&st, 0, base + off, step, len, pos);
        pos += len;
      } while (next_position(idx, p->red_shape, p->red_bytes, outer, &off));
    }
    store_result(c, &st, 0, ptrs[1] + j * bs[1]);
  }
}

static void fold_by_rows(const reduce_ctx *c, char **ptrs, const int64_t *bs, int64_t n) {
  const reduce_plan *p = &c->plan;
  fold_state st = c->chunk;
  double *shift = (double *)st.shift;
  for (int64_t j0 = 0; j0 < n; j0 += c->chunk_size) {
    int64_t m = n - j0 < c->chunk_size ? n - j0 : c->chunk_size;
    init_state(c->op, &st, m);
    for (int64_t j = 0; j < m; j++)
      shift[j] = c->has_shift ? *(const double *)(ptrs[2] + (j0 + j) * bs[2]) : 0.0;
    const char *base = ptrs[0] + j0 * bs[0];
    int64_t idx[GS_MAX_DIMS] = {0}, off = 0, pos = 0;
    if (p->red_count > 0) {
      do
        c->kernel.rows(&st, base + off, bs[0], m, pos++);
      while (next_position(idx, p->red_shape, p->red_bytes, p->nred, &off));
    }
    for (int64_t j = 0; j < m; j++)
      store_result(c, &st, j, ptrs[1] + (j0 + j) * bs[1]);
  }
}

/* gs__iter_run's inner loop: n consecutive outputs; operand 0 is the input (so the kept dims
 * are walked in its memory order), 1 the output, 2 logsumexp's maxima. */
static void reduce_loop(char **ptrs, const int64_t *bs, int64_t n, void *ctx) {
  const reduce_ctx *c = ctx;
  const reduce_plan *p = &c->plan;
  /* Rows are worth it when neighbouring outputs are closer in memory than neighbouring
   * reduced elements, or when there is (almost) nothing to reduce. */
  bool rows = n > 1 && (p->red_count <= 1 || gs__abs64(bs[0]) < gs__abs64(p->red_bytes[p->nred - 1]));
  if (rows)
    fold_by_rows(c, ptrs, bs, n);
  else
    fold_by_runs(c, ptrs, bs, n);
}

/* Folds t's reduced dims into out, a contiguous tensor of the kept dims' size (its shape may
 * add size-1 dims). shift: logsumexp's maxima, shaped like out, or NULL. */
static void run_reduction(fold_op op, const gs__tensor *t, const bool *reduced, gs__tensor *out,
                          const gs__tensor *shift, double divisor) {
  reduce_ctx c = {
      .op = op,
      .in_dtype = t->dtype,
      .out_dtype = out->dtype,
      .kernel = fold_kernels[op][t->dtype],
      .divisor = divisor,
      .has_shift = shift != NULL,
  };
  build_plan(t, reduced, op == FOLD_ARGMAX || op == FOLD_ARGMIN, &c.plan);
  stack_chunk fallback;
  void *heap = alloc_chunk(&c, &fallback);
  int64_t strides[3][GS_MAX_DIMS];
  memcpy(strides[0], c.plan.kept_strides, sizeof strides[0]);
  gs__contiguous_strides(c.plan.kept_shape, c.plan.nkept, strides[1]);
  memcpy(strides[2], strides[1], sizeof strides[2]);
  char *data[3] = {gs__tensor_data(t), gs__tensor_data(out),
                   shift ? gs__tensor_data(shift) : NULL};
  size_t sizes[3] = {gs_dtype_size(t->dtype), gs_dtype_size(out->dtype), sizeof(double)};
  gs__iter_run(shift ? 3 : 2, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes,
               c.plan.kept_shape, c.plan.nkept, reduce_loop, &c);
  free(heap);
}

/* ---- validation ----------------------------------------------------------------------- */

/* Marks the listed dims in reduced (every dim when ndims is 0); false after reporting a bad,
 * repeated or missing dim. */
static bool parse_dims(const gs__tensor *t, const int *dims, int ndims, bool *reduced,
                       const char *fn) {
  memset(reduced, 0, GS_MAX_DIMS * sizeof *reduced);
  if (ndims < 0 || (ndims > 0 && !dims)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a list of dims (ndims 0 reduces over all dims), got %s%d",
              ndims < 0 ? "ndims " : "NULL with ndims ", ndims);
    return false;
  }
  if (ndims == 0) {
    for (int d = 0; d < t->ndim; d++)
      reduced[d] = true;
    return true;
  }
  for (int k = 0; k < ndims; k++) {
    int d = gs__wrap_dim(dims[k], t->ndim, fn);
    if (d < 0)
      return false;
    if (reduced[d]) {
      gs__error(GS_ERR_DIM, fn, "dim %d appears more than once in the list of dims", d);
      return false;
    }
    reduced[d] = true;
  }
  return true;
}

/* max, min and the arg ops have no identity: an empty reduced dim has no answer. */
static bool check_nonempty(const gs__tensor *t, const bool *reduced, const char *fn) {
  for (int d = 0; d < t->ndim; d++)
    if (reduced[d] && t->shape[d] == 0) {
      gs__error(GS_ERR_SHAPE, fn, "cannot reduce over dim %d of size 0 (no identity)", d);
      return false;
    }
  return true;
}

static bool check_floating(const gs__tensor *t, const char *fn) {
  if (gs_dtype_is_floating(t->dtype))
    return true;
  gs__error(GS_ERR_DTYPE, fn, "expected a floating dtype (f32 or f64), got %s",
            gs_dtype_name(t->dtype));
  return false;
}

/* The output shape: kept dims, and reduced dims as 1 if keepdim. */
static int reduced_shape(const gs__tensor *t, const bool *reduced, bool keepdim,
                         int64_t *shape) {
  int n = 0;
  for (int d = 0; d < t->ndim; d++)
    if (!reduced[d])
      shape[n++] = t->shape[d];
    else if (keepdim)
      shape[n++] = 1;
  return n;
}

static int64_t reduced_count(const gs__tensor *t, const bool *reduced) {
  int64_t count = 1;
  for (int d = 0; d < t->ndim; d++)
    if (reduced[d])
      count *= t->shape[d];
  return count;
}

/* ---- public reductions ---------------------------------------------------------------- */

typedef enum reduction { R_SUM, R_MEAN, R_MAX, R_MIN, R_LOGSUMEXP, R_ARGMAX, R_ARGMIN }
    reduction;

static gs_dtype output_dtype(reduction r, gs_dtype in) {
  switch (r) {
  case R_SUM: return gs_dtype_is_floating(in) ? in : GS_I64;
  case R_ARGMAX:
  case R_ARGMIN: return GS_I64;
  default: return in;
  }
}

/* Reduces a looked-up tensor over the marked dims into a new tensor of shape. */
static gs_tensor reduce_marked(reduction r, const gs__tensor *t, const bool *reduced,
                               const int64_t *shape, int ndim, const char *fn) {
  if ((r == R_MEAN || r == R_LOGSUMEXP) && !check_floating(t, fn))
    return GS_NO_TENSOR;
  if ((r == R_MAX || r == R_MIN || r == R_ARGMAX || r == R_ARGMIN) &&
      !check_nonempty(t, reduced, fn))
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(output_dtype(r, t->dtype), shape, ndim, fn, &out);
  if (!h.id)
    return h;
  switch (r) {
  case R_SUM: run_reduction(FOLD_SUM, t, reduced, out, NULL, 1.0); break;
  case R_MEAN:
    run_reduction(FOLD_SUM, t, reduced, out, NULL, (double)reduced_count(t, reduced));
    break;
  case R_MAX: run_reduction(FOLD_MAX, t, reduced, out, NULL, 1.0); break;
  case R_MIN: run_reduction(FOLD_MIN, t, reduced, out, NULL, 1.0); break;
  case R_ARGMAX: run_reduction(FOLD_ARGMAX, t, reduced, out, NULL, 1.0); break;
  case R_ARGMIN: run_reduction(FOLD_ARGMIN, t, reduced, out, NULL, 1.0); break;
  case R_LOGSUMEXP: {
    /* Two passes: each output's max (in double, shaped like out), then the sum of
     * exp(x - max); subtracting the max keeps exp from overflowing. */
    gs__tensor maxima;
    if (!gs__tensor_init(&maxima, GS_F64, shape, ndim, fn)) {
      gs_dispose(h);
      return GS_NO_TENSOR;
    }
    run_reduction(FOLD_MAX, t, reduced, &maxima, NULL, 1.0);
    run_reduction(FOLD_SUMEXP, t, reduced, out, &maxima, 1.0);
    gs__tensor_release(&maxima);
    break;
  }
  }
  return h;
}

/* ---- backward formulas ---------------------------------------------------------------- */

/* A reduction's node remembers what it folded: ints[0] keepdim, ints[1] how many dims,
 * ints[2...] those dims of the input, in increasing order; reals[0] how many elements went
 * into each output. Saved slots (max, min, logsumexp): 0 the input, 1 the output. */
/* A reduction's node: ints[0] keepdim, ints[1] how many dims it folded, ints[2...] those dims,
 * ints[DIMS_GIVEN] whether the caller named dims (sum(t, 0) of a 1-D t folds what sum(t) does,
 * but PyTorch names the two apart). */
#define DIMS_GIVEN (2 + GS_MAX_DIMS)
_Static_assert(GS__NODE_INTS > DIMS_GIVEN, "a node must hold every reduced dim");

/* The reduced dims, as a list gs_sum takes; returns how many. */
static int folded_dims(const gs__node *n, int *dims) {
  for (int k = 0; k < n->ints[1]; k++)
    dims[k] = (int)n->ints[2 + k];
  return (int)n->ints[1];
}

/* t with the reduced dims put back as size 1 (the keepdim shape), so it broadcasts against
 * the input. */
static gs_tensor unsqueeze_folded(gs__node *n, gs_tensor t) {
  if (n->ints[0])
    return t;
  for (int k = 0; k < n->ints[1]; k++) /* increasing order: each lands at its input dim */
    t = gs__formula_temp(gs_unsqueeze(t, (int)n->ints[2 + k]));
  return t;
}

/* g spread back over the input: every input element receives its output's gradient. */
static gs_tensor expand_folded(gs__node *n, gs_tensor g) {
  return gs_expand(unsqueeze_folded(n, g), n->inputs[0].shape, n->inputs[0].ndim);
}

/* d sum(a) = g expanded over the reduced dims */
static void sum_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, expand_folded(n, g));
}
GS__BACKWARD_TWICE(SumBackward, sum_backward);

/* d mean(a) = g / count expanded over the reduced dims (count: elements per output) */
static void mean_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] =
      gs__reduce_grad(n, 0, expand_folded(n, gs__formula_temp(gs_div_scalar(g, n->reals[0]))));
}
GS__BACKWARD_TWICE(MeanBackward, mean_backward);

/* d amax(a) = g * (a == out) / sum(a == out): the extremes share g evenly, as torch.amax
 * (amin alike) */
static void extreme_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int dims[GS_MAX_DIMS];
  int ndims = folded_dims(n, dims);
  gs_tensor hit = gs__formula_temp(gs_eq(gs__saved(n, 0), unsqueeze_folded(n, gs__saved(n, 1))));
  gs_tensor ties = gs__formula_temp(gs_sum(hit, dims, ndims, true));
  gs_tensor share = gs__formula_temp(gs_div(unsqueeze_folded(n, g), ties));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(share, hit));
}
GS__BACKWARD_TWICE(MaxBackward, extreme_backward);
GS__BACKWARD_TWICE(MinBackward, extreme_backward);

/* d logsumexp(a) = g * exp(a - out) */
static void logsumexp_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), out = unsqueeze_folded(n, gs__saved(n, 1));
  gs_tensor weight = gs__formula_temp(gs_exp(gs__formula_temp(gs_sub(a, out))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(unsqueeze_folded(n, g), weight));
}
GS__BACKWARD_TWICE(LogsumexpBackward, logsumexp_backward);

/* Records a reduction's node when its output is floating (argmax, argmin and integer sums
 * have no gradient). */
static void record_reduction(reduction r, gs_tensor h, const gs__tensor *t, const bool *reduced,
                             bool keepdim, bool dims_given) {
  static const gs__node_kind *const kinds[] = {
      [R_SUM] = &SumBackward, [R_MEAN] = &MeanBackward, [R_MAX] = &MaxBackward,
      [R_MIN] = &MinBackward, [R_LOGSUMEXP] = &LogsumexpBackward,
      [R_ARGMAX] = NULL,      [R_ARGMIN] = NULL,
  };
  if (!kinds[r] || !gs_dtype_is_floating(output_dtype(r, t->dtype)))
    return;
  bool save = r == R_MAX || r == R_MIN || r == R_LOGSUMEXP;
  gs__tensor *out = gs__lookup(h, kinds[r]->name);
  gs__node *n = gs__record(kinds[r], out, 1, (const gs__tensor *[]){t}, save ? 2 : 0);
  if (!n)
    return;
  n->ints[0] = keepdim;
  n->ints[DIMS_GIVEN] = dims_given;
  for (int d = 0; d < t->ndim; d++) /* a 0-dim input folds nothing, whatever dims said */
    if (reduced[d])
      n->ints[2 + n->ints[1]++] = d;
  n->reals[0] = (double)reduced_count(t, reduced);
  if (save) {
    gs__save(n, 0, t);
    gs__save(n, 1, out);
  }
}

int gs_node_reduction(gs_node h, int *dims, bool *keepdim, bool *dims_given) {
  const char *fn = "node_reduction";
  gs__node *n = gs__node_lookup(h, fn);
  if (!n)
    return -1;
  if (n->kind != &SumBackward && n->kind != &MeanBackward && n->kind != &MaxBackward &&
      n->kind != &MinBackward && n->kind != &LogsumexpBackward) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected the node of a reduction, got %s", n->kind->name);
    return -1;
  }
  if (keepdim)
    *keepdim = n->ints[0] != 0;
  if (dims_given)
    *dims_given = n->ints[DIMS_GIVEN] != 0;
  int folded[GS_MAX_DIMS];
  int count = folded_dims(n, folded);
  if (dims)
    memcpy(dims, folded, (size_t)count * sizeof *dims);
  return count;
}

static gs_tensor reduce_dims(reduction r, gs_tensor h, const int *dims, int ndims,
                             bool keepdim, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  bool reduced[GS_MAX_DIMS];
  if (!t || !parse_dims(t, dims, ndims, reduced, fn))
    return GS_NO_TENSOR;
  int64_t shape[GS_MAX_DIMS];
  int ndim = reduced_shape(t, reduced, keepdim, shape);
  gs_tensor out = reduce_marked(r, t, reduced, shape, ndim, fn);
  if (out.id)
    record_reduction(r, out, t, reduced, keepdim, ndims > 0);
  return out;
}

gs_tensor gs_sum(gs_tensor t, const int *dims, int ndims, bool keepdim) {
  return reduce_dims(R_SUM, t, dims, ndims, keepdim, "sum");
}
gs_tensor gs_mean(gs_tensor t, const int *dims, int ndims, bool keepdim) {
  return reduce_dims(R_MEAN, t, dims, ndims, keepdim, "mean");
}
gs_tensor gs_max(gs_tensor t, const int *dims, int ndims, bool keepdim) {
  return reduce_dims(R_MAX, t, dims, ndims, keepdim, "max");
}
gs_tensor gs_min(gs_tensor t, const int *dims, int ndims, bool keepdim) {
  return reduce_dims(R_MIN, t, dims, ndims, keepdim, "min");
}
gs_tensor gs_logsumexp(gs_tensor t, const int *dims, int ndims, bool keepdim) {
  return reduce_dims(R_LOGSUMEXP, t, dims, ndims, keepdim, "logsumexp");
}
gs_tensor gs_argmax(gs_tensor t, int dim, bool keepdim) {
  return reduce_dims(R_ARGMAX, t, &dim, 1, keepdim, "argmax");
}
gs_tensor gs_argmin(gs_tensor t, int dim, bool keepdim) {
  return reduce_dims(R_ARGMIN, t, &dim, 1, keepdim, "argmin");
}

/* Over the flattened tensor: every dim reduced in logical order, so the position is the
 * row-major flat index. */
gs_tensor gs_argmax_all(gs_tensor t) {
  return reduce_dims(R_ARGMAX, t, NULL, 0, false, "argmax_all");
}
gs_tensor gs_argmin_all(gs_tensor t) {
  return reduce_dims(R_ARGMIN, t, NULL, 0, false, "argmin_all");
}

/* ---- sum_to --------------------------------------------------------------------------- */

/* Marks the dims of t that broadcasting from shape created or stretched: the leading extra
 * dims and those where shape has size 1. false after reporting a shape t could not have been
 * broadcast from. */
static bool sum_to_dims(const gs__tensor *t, const int64_t *shape, int ndim, bool *reduced,
                        const char *fn) {
  char want[GS__SHAPE_STR], have[GS__SHAPE_STR];
  if (ndim < 0 || ndim > GS_MAX_DIMS || (ndim > 0 && !shape)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a shape of 0 to %d sizes, got %d%s", GS_MAX_DIMS,
              ndim, ndim > 0 && !shape ? " and a NULL shape" : "");
    return false;
  }
  if (ndim > t->ndim) {
    gs__shape_str(have, t->shape,
                  t->ndim); /* only on error: formatting costs more than the check */
    gs__error(GS_ERR_SHAPE, fn,
              "expected a shape that broadcasts to %s, got %s (it has more dims)", have,
              gs__shape_str(want, shape, ndim));
    return false;
  }
  int lead = t->ndim - ndim;
  for (int d = 0; d < t->ndim; d++) {
    if (d < lead) {
      reduced[d] = true;
      continue;
    }
    int64_t s = shape[d - lead];
    if (s != t->shape[d] && s != 1) {
      gs__shape_str(have, t->shape, t->ndim);
      gs__error(GS_ERR_SHAPE, fn,
                "expected a shape that broadcasts to %s, got %s (dim %d: size %lld is neither "
                "1 nor %lld)",
                have, gs__shape_str(want, shape, ndim), d - lead, (long long)s,
                (long long)t->shape[d]);
      return false;
    }
    reduced[d] = s == 1 && t->shape[d] != 1;
  }
  return true;
}

/* d sum_to(a) = g expanded back to a's shape */
static void sum_to_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_expand(g, n->inputs[0].shape, n->inputs[0].ndim));
}
GS__BACKWARD_TWICE(SumToBackward, sum_to_backward);

/* The sum over a contiguous floating t's leading dims (reduced: those and no other), each
 * column added up in double in row order from 0, as the walk's rows kernel (sum_T_rows) does,
 * so the bits are the walk's: a bias's gradient, [batch, features] to [features], without the
 * walk's set-up, which cost more than the adding for the digits example's 16 x 128. NO_TENSOR
 * (nothing made) where this does not apply.
 *
 * The loop runs along a row, each column its own sum, so vectors change nothing in the
 * order of any column's adds: the AVX-512 copy (8 doubles a vector, where the baseline's
 * SSE2 adds 2) gives the same bits, and took a digits step's two bias sums (16 x 128 and
 * 16 x 10, with their tensors and nodes) from 610-660 to 430-540 ns. Chosen by the ops' CPU
 * level, as the fused optimizer passes choose theirs (optim/fused-step.c says why not
 * target_clones). */
enum { LEADING_SUM_MAX_COLS = 4096 };
#define LEADING_SUM(T, NAME, ATTR)                                                                 \
  ATTR static void NAME(const T *x, int64_t rows, int64_t cols, double *acc, T *out) {             \
    for (int64_t j = 0; j < cols; j++)                                                             \
      acc[j] = 0.0;                                                                                \
    for (int64_t i = 0; i < rows; i++)                                                             \
      for (int64_t j = 0; j < cols; j++)                                                           \
        acc[j] += (double)x[i * cols + j];                                                         \
    for (int64_t j = 0; j < cols; j++)                                                             \
      out[j] = (T)acc[j];                                                                          \
  }
#define LEADING_SUM_AVX512 __attribute__((target("avx512f,prefer-vector-width=512")))
LEADING_SUM(f32, leading_sum_f32_avx512, LEADING_SUM_AVX512)
LEADING_SUM(f64, leading_sum_f64_avx512, LEADING_SUM_AVX512)
LEADING_SUM(f32, leading_sum_f32_base, )
LEADING_SUM(f64, leading_sum_f64_base, )

static void leading_sum_f32(const f32 *x, int64_t rows, int64_t cols, double *acc, f32 *out) {
  if (gs__cpu_level_get() >= GS__CPU_AVX512)
    leading_sum_f32_avx512(x, rows, cols, acc, out);
  else
    leading_sum_f32_base(x, rows, cols, acc, out);
}

static void leading_sum_f64(const f64 *x, int64_t rows, int64_t cols, double *acc, f64 *out) {
  if (gs__cpu_level_get() >= GS__CPU_AVX512)
    leading_sum_f64_avx512(x, rows, cols, acc, out);
  else
    leading_sum_f64_base(x, rows, cols, acc, out);
}

static gs_tensor leading_sum(const gs__tensor *t, const bool *reduced, const int64_t *shape,
                             int ndim, const char *fn) {
  if ((t->dtype != GS_F32 && t->dtype != GS_F64) || !gs__is_contiguous(t))
    return GS_NO_TENSOR;
  int lead = 0;
  while (lead < t->ndim && reduced[lead])
    lead++;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (d >= lead && reduced[d])
      return GS_NO_TENSOR; /* a reduced dim after a kept one: the walk's */
    *(d < lead ? &rows : &cols) *= t->shape[d];
  }
  if (lead == 0 || rows == 0 || cols > LEADING_SUM_MAX_COLS)
    return GS_NO_TENSOR;
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(t->dtype, shape, ndim, fn, &out);
  if (!h.id)
    return h;
  double acc[LEADING_SUM_MAX_COLS];
  if (t->dtype == GS_F32)
    leading_sum_f32((const f32 *)gs__tensor_data(t), rows, cols, acc, (f32 *)gs__tensor_data(out));
  else
    leading_sum_f64((const f64 *)gs__tensor_data(t), rows, cols, acc, (f64 *)gs__tensor_data(out));
  return h;
}

gs_tensor gs_sum_to(gs_tensor h, const int64_t *shape, int ndim) {
  const char *fn = "sum_to";
  gs__tensor *t = gs__lookup(h, fn);
  bool reduced[GS_MAX_DIMS] = {false};
  if (!t || !sum_to_dims(t, shape, ndim, reduced, fn))
    return GS_NO_TENSOR;
  /* The kept dims are exactly shape's sizes other than 1, in order, so a contiguous output
   * of shape holds them in the order the walk writes them. */
  gs_tensor out = leading_sum(t, reduced, shape, ndim, fn);
  if (!out.id)
    out = reduce_marked(R_SUM, t, reduced, shape, ndim, fn);
  if (out.id && gs_dtype_is_floating(t->dtype))
    gs__record(&SumToBackward, gs__lookup(out, fn), 1, (const gs__tensor *[]){t}, 0);
  return out;
}
