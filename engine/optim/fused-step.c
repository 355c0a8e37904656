/* fused-step.c: an SGD, Adam or AdamW step of one parameter as one pass over its elements.
 *
 * optimizer.c writes the steps with the engine's ops, as torch.optim does: for SGD
 * buf.mul_(momentum), then buf.add_(d, alpha=1-dampening), then p.add_(buf, alpha=-lr), where
 * d is the gradient (plus weight_decay * p first). Each is a pass over memory: 8 array streams
 * for momentum SGD, about 20 for Adam. This pass reads g, buf and p once and writes buf and p
 * once (5 streams; Adam 8) and computes, element by element, exactly what the ops compute
 * (same operations, order and precision: the results are bit-identical).
 *
 * The log still says what happened: each write the ops make takes its in-place write event
 * (number, version bump, op name) through gs__begin_write, in the same order, so the log, the
 * versions and the event numbers are the ops' own. Temporaries the ops would have made
 * (weight decay's g + wd * p, Nesterov's d + momentum * buf, Adam's g * g, sqrt(v) and the
 * quotients) are never made, so they are not in the log. When the log records values, a
 * write's values are read at this thread's next event: the pass then runs in stages, each
 * after its write's event.
 */
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <gradscope/gradscope.h>

#include "core-impl.h"
#include "ops-impl.h"
#include "optim-impl.h"
#include "trace-writer.h"

/* The writes of one step, in the ops' order; a pass runs those whose flag it is given. */
enum { WRITE_BUF_MUL = 1, WRITE_BUF_ADD = 2, WRITE_PARAM = 4 };

typedef struct sgd_pass {
  char *p, *buf;
  const char *g;
  double wd, momentum, buf_alpha, param_alpha; /* as the ops take them: cast to the dtype */
  bool nesterov;
  int writes;
} sgd_pass;

/* Each pass has three copies of one C loop, compiled for baseline x86-64, for AVX2 and for
 * AVX-512 (16 floats a vector: the Adam pass is short of sqrt and divide throughput more than
 * of memory bandwidth), chosen per call by the ops' CPU level (ops/cpu-features.c: a plain
 * test, capped by GS_CPU_FEATURES so that the tests run each copy; not target_clones, whose
 * ifunc resolver runs before ThreadSanitizer's runtime is up and crashed every TSan test at
 * load). The copies compute the same operations in the same order: C11 mode contracts no
 * a * b + c into an FMA, and vector sqrt and divide round as the scalar ones do, so the three
 * are bit-identical. AS(name, attribute, wide, ...) makes one copy; wide is true for the
 * AVX2 and AVX-512 ones. */
#define AVX2_ATTR __attribute__((target("avx2")))
#define AVX512_ATTR __attribute__((target("avx512f,prefer-vector-width=512")))
#define VECTOR_COPIES(NAME, PASS, AS, ...)                                                         \
  AS(NAME##_avx512, AVX512_ATTR, true, __VA_ARGS__)                                                \
  AS(NAME##_avx2, AVX2_ATTR, true, __VA_ARGS__)                                                    \
  AS(NAME##_base, , false, __VA_ARGS__)                                                            \
  static void NAME(const PASS *s, int64_t lo, int64_t hi) {                                        \
    gs__cpu_level level = gs__cpu_level_get();                                                     \
    if (level >= GS__CPU_AVX512)                                                                   \
      NAME##_avx512(s, lo, hi);                                                                    \
    else if (level >= GS__CPU_AVX2)                                                                \
      NAME##_avx2(s, lo, hi);                                                                      \
    else                                                                                           \
      NAME##_base(s, lo, hi);                                                                      \
  }

/* d = g [+ p * wd]; buf = buf * m; buf = buf + a * d; p = p + lr * (buf, or d + buf * m with
 * Nesterov, or d without momentum): the ops' expressions (add_scaled_ is x + alpha * y,
 * mul_scalar_ x * s, add x + y), each rounded to T as they round it. */
#define SGD_PASS(NAME, T) VECTOR_COPIES(NAME, sgd_pass, SGD_PASS_AS, T)
#define SGD_PASS_AS(NAME, ATTR, WIDE, T)                                                           \
  ATTR static void NAME(const sgd_pass *s, int64_t lo, int64_t hi) {                               \
    T *p = (T *)s->p, *buf = (T *)s->buf;                                                          \
    const T *g = (const T *)s->g;                                                                  \
    const T wd = (T)s->wd, m = (T)s->momentum, a = (T)s->buf_alpha, lr = (T)s->param_alpha;        \
    if (s->writes == (WRITE_BUF_MUL | WRITE_BUF_ADD | WRITE_PARAM) && s->wd == 0.0 &&              \
        !s->nesterov) {                                                                            \
      for (int64_t i = lo; i < hi; i++) { /* the common case, kept simple to vectorise */          \
        T b = buf[i] * m;                                                                          \
        b = b + a * g[i];                                                                          \
        buf[i] = b;                                                                                \
        p[i] = p[i] + lr * b;                                                                      \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t i = lo; i < hi; i++) {                                                            \
      T d = s->wd != 0.0 ? g[i] + p[i] * wd : g[i];                                                \
      if (s->writes & WRITE_BUF_MUL)                                                               \
        buf[i] = buf[i] * m;                                                                       \
      if (s->writes & WRITE_BUF_ADD)                                                               \
        buf[i] = buf[i] + a * d;                                                                   \
      if (s->writes & WRITE_PARAM) {                                                               \
        T step = !buf ? d : s->nesterov ? d + buf[i] * m : buf[i];                                 \
        p[i] = p[i] + lr * step;                                                                   \
      }                                                                                            \
    }                                                                                              \
  }

SGD_PASS(sgd_pass_f32, float)
SGD_PASS(sgd_pass_f64, double)

/* Thin adapters for gs__split_run. */
static void sgd_chunk_f32(void *s, int64_t lo, int64_t hi) { sgd_pass_f32(s, lo, hi); }
static void sgd_chunk_f64(void *s, int64_t lo, int64_t hi) { sgd_pass_f64(s, lo, hi); }

/* Runs a pass over n elements of elem_size bytes: split with a helper thread when OpenBLAS
 * has more than one (the program gave the engine that many cores) and the parameter is large
 * enough that one core's memory bandwidth, not the hand-over, bounds the pass. Chunks of
 * 64 KiB: small enough that the helper, joining late, still finds work, large enough that the
 * claims cost nothing. */
enum { SPLIT_MIN_BYTES = 512 << 10, SPLIT_CHUNK_BYTES = 64 << 10 };
static void run_split(gs__split_fn fn, void *pass, int64_t n, int64_t elem_size) {
  int threads = n * elem_size >= SPLIT_MIN_BYTES ? openblas_get_num_threads() : 1;
  gs__split_run(fn, pass, n, SPLIT_CHUNK_BYTES / elem_size, threads);
}

/* Runs the pass over the tensors' bytes as they are now (a write's copy-on-write may have
 * given a tensor new bytes). */
static void run_pass(sgd_pass *s, gs__tensor *p, const gs__tensor *g, gs__tensor *buf) {
  s->p = gs__tensor_data(p);
  s->g = gs__tensor_data(g);
  s->buf = buf ? gs__tensor_data(buf) : NULL;
  if (p->dtype == GS_F32)
    run_split(sgd_chunk_f32, s, p->numel, 4);
  else
    run_split(sgd_chunk_f64, s, p->numel, 8);
}

/* A tensor the pass can walk as a flat array of p's dtype and shape. */
static bool flat_like(const gs__tensor *t, const gs__tensor *p) {
  if (t->dtype != p->dtype || t->ndim != p->ndim || !gs__is_contiguous(t))
    return false;
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] != p->shape[d])
      return false;
  return true;
}

/* One in-place write of a step: its pass flag, the tensor and the op name the ops' path writes
 * it under. */
typedef struct fused_write {
  int flag;
  gs__tensor *t;
  const char *op;
} fused_write;

/* Takes each write's checks, copy-on-write and event, in the ops' order, then runs the pass
 * (run(ctx, flags)) for the writes taken: one that fails stops the step where the ops would
 * have stopped, with the earlier writes done. With values recorded, each write's pass runs
 * right after its event. The step runs under no_grad, where the autograd check passes
 * whatever the operand: false. */
static void take_writes_and_run(const fused_write *writes, int n, void (*run)(void *, int),
                                void *ctx) {
  bool staged = gs__trace_on() && gs__trace_values_limit() > 0;
  int taken = 0;
  for (int i = 0; i < n; i++) {
    if (!gs__begin_write(writes[i].t, false, writes[i].op))
      break;
    if (staged)
      run(ctx, writes[i].flag);
    taken |= writes[i].flag;
  }
  if (!staged && taken)
    run(ctx, taken);
}

/* The tensors of an SGD pass, for take_writes_and_run. */
typedef struct sgd_run {
  sgd_pass pass;
  gs__tensor *p, *g, *buf;
} sgd_run;

static void run_sgd(void *ctx, int writes) {
  sgd_run *r = ctx;
  r->pass.writes = writes;
  run_pass(&r->pass, r->p, r->g, r->buf);
}

bool gs__sgd_fused_step(const gs_sgd_options *o, gs_tensor hp, gs_tensor hg, gs_tensor hbuf) {
  const char *fn = "optimizer_step";
  gs__tensor *p = gs__lookup(hp, fn), *g = p ? gs__lookup(hg, fn) : NULL;
  gs__tensor *buf = hbuf.id && g ? gs__lookup(hbuf, fn) : NULL;
  if (!g || (hbuf.id && !buf) || (p->dtype != GS_F32 && p->dtype != GS_F64))
    return false;
  /* Anything else (strided or broadcast layouts, operands sharing storage, which the ops copy
   * first) is left to the ops. */
  if (!flat_like(p, p) || !flat_like(g, p) || (buf && !flat_like(buf, p)) ||
      g->storage == p->storage ||
      (buf && (buf->storage == p->storage || buf->storage == g->storage)))
    return false;
  sgd_run r = {.pass = {.wd = o->weight_decay,
                        .momentum = o->momentum,
                        .buf_alpha = 1.0 - o->dampening,
                        .param_alpha = -o->lr,
                        .nesterov = o->nesterov},
               .p = p,
               .g = g,
               .buf = buf};
  fused_write writes[3];
  int n = 0;
  if (buf) {
    writes[n++] = (fused_write){WRITE_BUF_MUL, buf, "mul_scalar_"};
    writes[n++] = (fused_write){WRITE_BUF_ADD, buf, "add_scaled_"};
  }
  writes[n++] = (fused_write){WRITE_PARAM, p, "add_scaled_"};
  take_writes_and_run(writes, n, run_sgd, &r);
  return true;
}

/* ---- Adam and AdamW ------------------------------------------------------------------ */

/* optimizer.c's Adam writes, in order: p *= 1 - lr * wd (AdamW's decay), exp_avg *= beta1,
 * exp_avg += (1 - beta1) * g, exp_avg_sq *= beta2, exp_avg_sq += (1 - beta2) * g * g,
 * max_exp_avg_sq = maximum(max_exp_avg_sq, exp_avg_sq) (amsgrad), then p += -step_size *
 * exp_avg / (sqrt(v) / sqrt(bc2) + eps), where g has Adam's L2 term p * wd added first. */
enum {
  ADAM_DECAY = 1,
  ADAM_AVG_MUL = 2,
  ADAM_AVG_ADD = 4,
  ADAM_SQ_MUL = 8,
  ADAM_SQ_ADD = 16,
  ADAM_MAX = 32,
  ADAM_PARAM = 64
};

typedef struct adam_pass {
  char *p, *avg, *sq, *max_sq; /* max_sq NULL without amsgrad */
  const char *g;
  /* As the ops take them, cast to the dtype: */
  double decay, l2, beta1, avg_alpha, beta2, sq_alpha, bc2_sqrt, eps, param_alpha;
  int writes;
} adam_pass;

/* Each expression is the op's own (mul_scalar_ x * s, add_scaled_ x + alpha * y, mul x * y,
 * maximum FMAX(x, y), sqrt, div_scalar x / s, add_scalar_ x + s, div x / y), rounded to T.
 *
 * One exception in how, not what: in float32, sqrt(v) / c2 (c2 the same for every element) is
 * computed as (float)((double)sqrt(v) * (1.0 / (double)c2)), a multiply where the divider is
 * the pass's bottleneck (a float divide or sqrt takes the one divider 5-6 cycles per 8 lanes,
 * a multiply half a cycle; the pass had two divides and a sqrt per element). It is the
 * correctly rounded float quotient, so bit for bit the op's: the double result is within a
 * relative 2^-52 of the exact x / c2 (two roundings of 2^-53), while an exact quotient of two
 * floats is never a midpoint between floats (x = m * c2 with m of 25 significant bits, the
 * last one set, would need x to have 25) and is at least a relative 2^-49 from every midpoint
 * it is not equal to (x - m * c2 is a multiple of ulp(m) * ulp(c2)): so the double rounds to
 * the float the exact quotient rounds to. Zeros, infinities and overflow to infinity go alike;
 * c2 = sqrt(1 - beta2^step) is a normal float in (0, 1]. float64 divides, and so does the
 * baseline copy (SSE2 converts two floats to double at a time: dearer than its divide; in the
 * AVX2 and AVX-512 copies the multiply made the digits example's Adam step 24-28% cheaper).
 *
 * ADAM_ELEMENT is one element's writes; W, L2 and MAX are constants where the loop is
 * specialised, so that each variant of the whole step vectorises. */
#define ADAM_FMAX(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define ADAM_ELEMENT(T, SQRT, DIV_C2, W, L2, MAX)                                                  \
  do {                                                                                             \
    if ((W)&ADAM_DECAY)                                                                            \
      p[i] = p[i] * decay;                                                                         \
    T gi = (L2) ? g[i] + p[i] * l2 : g[i];                                                         \
    if ((W)&ADAM_AVG_MUL)                                                                          \
      avg[i] = avg[i] * b1;                                                                        \
    if ((W)&ADAM_AVG_ADD)                                                                          \
      avg[i] = avg[i] + a1 * gi;                                                                   \
    if ((W)&ADAM_SQ_MUL)                                                                           \
      sq[i] = sq[i] * b2;                                                                          \
    if ((W)&ADAM_SQ_ADD) {                                                                         \
      T g2 = gi * gi;                                                                              \
      sq[i] = sq[i] + a2 * g2;                                                                     \
    }                                                                                              \
    if ((W)&ADAM_MAX)                                                                              \
      max_sq[i] = ADAM_FMAX(max_sq[i], sq[i]);                                                     \
    if ((W)&ADAM_PARAM) {                                                                          \
      T denom = DIV_C2(SQRT((MAX) ? max_sq[i] : sq[i]));                                           \
      denom = denom + eps;                                                                         \
      T ratio = avg[i] / denom;                                                                    \
      p[i] = p[i] + lr * ratio;                                                                    \
    }                                                                                              \
  } while (0)
#define ADAM_ALL (ADAM_AVG_MUL | ADAM_AVG_ADD | ADAM_SQ_MUL | ADAM_SQ_ADD | ADAM_PARAM)
#define ADAM_LOOP(T, SQRT, W, L2, MAX)                                                             \
  for (int64_t i = lo; i < hi; i++)                                                                \
  ADAM_ELEMENT(T, SQRT, T##_DIV_C2, W, L2, MAX)
/* x / c2 as the element's type takes it (above). */
#define float_DIV_C2(x) (by_multiply ? (float)((double)(x)*c2_inverse) : (x) / c2)
#define double_DIV_C2(x) ((x) / c2)
#define ADAM_PASS(NAME, T, SQRT) VECTOR_COPIES(NAME, adam_pass, ADAM_PASS_AS, T, SQRT)
#define ADAM_PASS_AS(NAME, ATTR, WIDE, T, SQRT)                                                    \
  ATTR static void NAME(const adam_pass *s, int64_t lo, int64_t hi) {                              \
    T *p = (T *)s->p, *avg = (T *)s->avg, *sq = (T *)s->sq, *max_sq = (T *)s->max_sq;              \
    const T *g = (const T *)s->g;                                                                  \
    const T decay = (T)s->decay, l2 = (T)s->l2, b1 = (T)s->beta1, a1 = (T)s->avg_alpha;            \
    const T b2 = (T)s->beta2, a2 = (T)s->sq_alpha, c2 = (T)s->bc2_sqrt, eps = (T)s->eps;           \
    const T lr = (T)s->param_alpha;                                                                \
    const double c2_inverse = 1.0 / (double)c2; /* float_DIV_C2's */                               \
    const bool by_multiply = (WIDE);                                                               \
    (void)c2_inverse, (void)by_multiply;                                                           \
    const int w = s->writes;                                                                       \
    const bool has_l2 = s->l2 != 0.0;                                                              \
    /* The whole step in one pass: Adam, Adam with L2 decay, AdamW, each with or without           \
     * amsgrad. Anything else (a stage, a step cut short) takes the general loop. */               \
    if (w == ADAM_ALL && !has_l2)                                                                  \
      ADAM_LOOP(T, SQRT, ADAM_ALL, false, false);                                                  \
    else if (w == ADAM_ALL && has_l2)                                                              \
      ADAM_LOOP(T, SQRT, ADAM_ALL, true, false);                                                   \
    else if (w == (ADAM_ALL | ADAM_DECAY))                                                         \
      ADAM_LOOP(T, SQRT, ADAM_ALL | ADAM_DECAY, false, false);                                     \
    else if (w == (ADAM_ALL | ADAM_MAX) && !has_l2)                                                \
      ADAM_LOOP(T, SQRT, ADAM_ALL | ADAM_MAX, false, true);                                        \
    else if (w == (ADAM_ALL | ADAM_MAX) && has_l2)                                                 \
      ADAM_LOOP(T, SQRT, ADAM_ALL | ADAM_MAX, true, true);                                         \
    else if (w == (ADAM_ALL | ADAM_DECAY | ADAM_MAX))                                              \
      ADAM_LOOP(T, SQRT, ADAM_ALL | ADAM_DECAY | ADAM_MAX, false, true);                           \
    else                                                                                           \
      ADAM_LOOP(T, SQRT, w, has_l2, max_sq != NULL);                                               \
  }

ADAM_PASS(adam_pass_f32, float, sqrtf)
ADAM_PASS(adam_pass_f64, double, sqrt)

static void adam_chunk_f32(void *s, int64_t lo, int64_t hi) { adam_pass_f32(s, lo, hi); }
static void adam_chunk_f64(void *s, int64_t lo, int64_t hi) { adam_pass_f64(s, lo, hi); }

typedef struct adam_run {
  adam_pass pass;
  gs__tensor *p, *g, *avg, *sq, *max_sq;
} adam_run;

static void run_adam(void *ctx, int writes) {
  adam_run *r = ctx;
  adam_pass *s = &r->pass;
  s->writes = writes;
  s->p = gs__tensor_data(r->p), s->g = gs__tensor_data(r->g);
  s->avg = gs__tensor_data(r->avg), s->sq = gs__tensor_data(r->sq);
  s->max_sq = r->max_sq ? gs__tensor_data(r->max_sq) : NULL;
  if (r->p->dtype == GS_F32)
    run_split(adam_chunk_f32, s, r->p->numel, 4);
  else
    run_split(adam_chunk_f64, s, r->p->numel, 8);
}

/* 1 - beta1^step and 1 - beta2^step, remembered for the last betas and step this thread asked
 * for: an optimizer step asks the same for each of its parameters, and the two pow calls per
 * parameter were about 7% of the digits example's optimizer step (four small parameters). */
static void bias_corrections(double beta1, double beta2, int64_t step, double *bc1, double *bc2) {
  static GS__THREAD_LOCAL struct {
    double beta1, beta2, bc1, bc2;
    int64_t step; /* 0: nothing remembered (steps count from 1) */
  } last;
  if (last.step != step || step <= 0 || last.beta1 != beta1 || last.beta2 != beta2) {
    last.beta1 = beta1, last.beta2 = beta2, last.step = step;
    last.bc1 = 1.0 - pow(beta1, (double)step);
    last.bc2 = 1.0 - pow(beta2, (double)step);
  }
  *bc1 = last.bc1, *bc2 = last.bc2;
}

bool gs__adam_fused_step(const gs_adam_options *o, bool decoupled, int64_t step, gs_tensor hp,
                         gs_tensor hg, gs_tensor havg, gs_tensor hsq, gs_tensor hmax) {
  const char *fn = "optimizer_step";
  gs__tensor *t[5] = {NULL};
  gs_tensor h[5] = {hp, hg, havg, hsq, hmax};
  int count = o->amsgrad ? 5 : 4;
  for (int i = 0; i < count; i++)
    if (!(t[i] = gs__lookup(h[i], fn)))
      return false;
  gs__tensor *p = t[0];
  if (p->dtype != GS_F32 && p->dtype != GS_F64)
    return false;
  for (int i = 0; i < count; i++) {
    if (!flat_like(t[i], p))
      return false;
    for (int j = 0; j < i; j++)
      if (t[i]->storage == t[j]->storage)
        return false;
  }
  double bc1, bc2;
  bias_corrections(o->beta1, o->beta2, step, &bc1, &bc2);
  bool decay = decoupled && o->weight_decay != 0.0;
  adam_run r = {.pass = {.decay = 1.0 - o->lr * o->weight_decay,
                         .l2 = decoupled ? 0.0 : o->weight_decay,
                         .beta1 = o->beta1,
                         .avg_alpha = 1.0 - o->beta1,
                         .beta2 = o->beta2,
                         .sq_alpha = 1.0 - o->beta2,
                         .bc2_sqrt = sqrt(bc2),
                         .eps = o->eps,
                         .param_alpha = -(o->lr / bc1)},
                .p = p,
                .g = t[1],
                .avg = t[2],
                .sq = t[3],
                .max_sq = o->amsgrad ? t[4] : NULL};
  fused_write writes[7];
  int n = 0;
  if (decay)
    writes[n++] = (fused_write){ADAM_DECAY, p, "mul_scalar_"};
  writes[n++] = (fused_write){ADAM_AVG_MUL, r.avg, "mul_scalar_"};
  writes[n++] = (fused_write){ADAM_AVG_ADD, r.avg, "add_scaled_"};
  writes[n++] = (fused_write){ADAM_SQ_MUL, r.sq, "mul_scalar_"};
  writes[n++] = (fused_write){ADAM_SQ_ADD, r.sq, "add_scaled_"};
  if (o->amsgrad)
    writes[n++] = (fused_write){ADAM_MAX, r.max_sq, "copy_"};
  writes[n++] = (fused_write){ADAM_PARAM, p, "add_scaled_"};
  take_writes_and_run(writes, n, run_adam, &r);
  return true;
}
