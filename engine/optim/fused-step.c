/* fused-step.c: an SGD step of one parameter as one pass over its elements.
 *
 * optimizer.c writes SGD with the engine's ops, as torch.optim does: buf.mul_(momentum), then
 * buf.add_(d, alpha=1-dampening), then p.add_(buf, alpha=-lr), where d is the gradient (plus
 * weight_decay * p first). Each is a pass over memory: 8 array streams for momentum SGD. This
 * pass reads g, buf and p once and writes buf and p once (5 streams) and computes, element by
 * element, exactly what the ops compute (same operations, order and precision: the results
 * are bit-identical).
 *
 * The log still says what happened: each write the ops make takes its in-place write event
 * (number, version bump, op name) through gs__begin_write, in the same order, so the log, the
 * versions and the event numbers are the ops' own. Temporaries the ops would have made
 * (weight decay's g + wd * p, Nesterov's d + momentum * buf) are never made, so they are not
 * in the log. When the log records values, a write's values are read at this thread's next
 * event: the pass then runs in stages, each after its write's event.
 */
#include <stdbool.h>
#include <stdint.h>

#include <gradscope/gradscope.h>

#include "core-impl.h"
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

/* d = g [+ p * wd]; buf = buf * m; buf = buf + a * d; p = p + lr * (buf, or d + buf * m with
 * Nesterov, or d without momentum): the ops' expressions (add_scaled_ is x + alpha * y,
 * mul_scalar_ x * s, add x + y), each rounded to T as they round it. An AVX2 copy beside the
 * baseline one is chosen at load time (the pass is short of instructions as much as of memory
 * bandwidth); with no FMA (C11 mode contracts nothing) both copies round alike. */
#define SGD_PASS(NAME, T)                                                                          \
  __attribute__((target_clones("avx2", "default"))) static void NAME(const sgd_pass *s,            \
                                                                     int64_t lo, int64_t hi) {     \
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

/* Runs the pass over the tensors' bytes as they are now (a write's copy-on-write may have
 * given a tensor new bytes). */
static void run_pass(sgd_pass *s, gs__tensor *p, const gs__tensor *g, gs__tensor *buf) {
  s->p = gs__tensor_data(p);
  s->g = gs__tensor_data(g);
  s->buf = buf ? gs__tensor_data(buf) : NULL;
  if (p->dtype == GS_F32)
    sgd_pass_f32(s, 0, p->numel);
  else
    sgd_pass_f64(s, 0, p->numel);
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

typedef struct sgd_write {
  int flag;
  gs__tensor *t;
  const char *op; /* the name the ops' path writes it under */
} sgd_write;

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
  sgd_pass s = {.wd = o->weight_decay,
                .momentum = o->momentum,
                .buf_alpha = 1.0 - o->dampening,
                .param_alpha = -o->lr,
                .nesterov = o->nesterov};
  sgd_write writes[3];
  int n = 0;
  if (buf) {
    writes[n++] = (sgd_write){WRITE_BUF_MUL, buf, "mul_scalar_"};
    writes[n++] = (sgd_write){WRITE_BUF_ADD, buf, "add_scaled_"};
  }
  writes[n++] = (sgd_write){WRITE_PARAM, p, "add_scaled_"};
  bool staged = gs__trace_on() && gs__trace_values_limit() > 0;
  for (int i = 0; i < n; i++) {
    /* Each write's checks, copy-on-write and event, in the ops' order; one that fails stops
     * the step where the ops would have stopped, with the earlier writes done. The step runs
     * under no_grad, where the autograd check passes whatever the operand: false. */
    if (!gs__begin_write(writes[i].t, false, writes[i].op))
      break;
    s.writes = staged ? writes[i].flag : s.writes | writes[i].flag;
    if (staged)
      run_pass(&s, p, g, buf);
  }
  if (!staged && s.writes)
    run_pass(&s, p, g, buf);
  return true;
}
