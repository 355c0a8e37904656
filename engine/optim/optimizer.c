/* optimizer.c: every engine optimizer's record, handle, options and state (state_dict's
 * reads and writes), and the steps of SGD, Adam and AdamW, step for step as torch.optim's
 * single-tensor implementations, written with the engine's own ops under no_grad; a parameter
 * whose layout allows it takes one pass with the same results and write events instead
 * (fused-step.c). Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop step in more-optimizers.c.
 *
 * An optimizer is a record in a generational pool (base/pool.h), as modules are. It
 * borrows its parameters and owns its state tensors outside every scope, as a module owns its
 * parameters: they are created lazily on a parameter's first step (as PyTorch does), taken out
 * of whatever scope is current (counted as a detach) to be held by the optimizer, and disposed
 * by gs_optimizer_dispose. The log shows them held by the optimizer. Temporaries of a step are
 * disposed at once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gradscope/gradscope.h>

#include "core-impl.h"
#include "optim-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

typedef gs__opt_kind opt_kind;
typedef gs__param_state param_state;
#define OPT_SGD GS__OPT_SGD
#define OPT_ADAM GS__OPT_ADAM
#define OPT_ADAMW GS__OPT_ADAMW
/* A kind more-optimizers.c steps. */
#define IS_MORE(k) ((k) > GS__OPT_ADAMW)

typedef struct optimizer {
  gs__pool_slot pool;
  uint32_t index; /* its slot: the number messages call it by ("Adam #2") */
  opt_kind kind;
  gs_sgd_options sgd;
  gs_adam_options adam;
  gs__more_options more;
  param_state *params;
  int n_params;
} optimizer;

#define MAX_OPTIMIZERS 65536u

static gs__pool optimizers =
    GS__POOL_INIT("optimizer", sizeof(optimizer), 4, MAX_OPTIMIZERS, 0);
GS__POOL_GUARD_FORK(optimizers)
static const gs__handle_kind optimizer_kind = {.pool = &optimizers, .noun = "optimizer",
                                               .nouns = "optimizers", .it = "the optimizer",
                                               .ended = "disposed"};

static const char *kind_name(opt_kind k) {
  return IS_MORE(k)      ? gs__more_kind_name(k)
         : k == OPT_SGD  ? "SGD"
         : k == OPT_ADAM ? "Adam"
                         : "AdamW";
}

static optimizer *lookup(gs_optimizer h, const char *fn) {
  optimizer *o = gs__pool_get(&optimizers, h.id);
  if (!o)
    gs__report_stale(&optimizer_kind, h.id, fn);
  return o;
}

/* Parameters must be alive, floating leaves (PyTorch: "can't optimize a non-leaf Tensor"). */
static bool check_params(const gs_tensor *params, int n, const char *fn) {
  if (n < 0 || (n > 0 && !params)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an array of %d parameters, got %s", n,
              n < 0 ? "a negative count" : "NULL");
    return false;
  }
  if (n == 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "optimizer got an empty parameter list");
    return false;
  }
  for (int i = 0; i < n; i++) {
    gs_tensor p = params[i];
    if (!gs_is_alive(p)) {
      gs__error(GS_ERR_STALE_HANDLE, fn, "parameter %d (handle %#llx) is not a live tensor", i,
                (unsigned long long)p.id);
      return false;
    }
    if (!gs_dtype_is_floating(gs_dtype_of(p))) {
      gs__error(GS_ERR_DTYPE, fn, "parameter %d is %s; an optimizer can only optimize floating "
                "tensors", i, gs_dtype_name(gs_dtype_of(p)));
      return false;
    }
    if (!gs_is_leaf(p)) {
      gs__error(GS_ERR_ARGUMENT, fn, "parameter %d: can't optimize a non-leaf Tensor (it was "
                "made by %s)", i, gs_grad_fn_name(p));
      return false;
    }
  }
  return true;
}

gs_optimizer gs__optimizer_new(opt_kind kind, const gs_tensor *params, int n,
                               const gs_sgd_options *sgd, const gs_adam_options *adam,
                               const gs__more_options *more, const char *fn) {
  if (!check_params(params, n, fn))
    return (gs_optimizer){0};
  param_state *ps = calloc((size_t)n, sizeof *ps);
  if (!ps) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the state of %d parameters", n);
    return (gs_optimizer){0};
  }
  for (int i = 0; i < n; i++)
    ps[i] = (param_state){.param = params[i],
                          .mu = 1.0,
                          .mu_product = 1.0,
                          .eta = kind == GS__OPT_ASGD ? (double)(float)more->asgd.lr : 0.0};
  uint64_t id;
  optimizer *o = (optimizer *)gs__pool_take(&optimizers, &id);
  if (!o) {
    free(ps);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "too many optimizers are alive");
    return (gs_optimizer){0};
  }
  o->index = gs__pool_index(&optimizers, id);
  o->kind = kind;
  if (sgd)
    o->sgd = *sgd;
  if (adam)
    o->adam = *adam;
  if (more)
    o->more = *more;
  o->params = ps;
  o->n_params = n;
  gs__pool_publish(&optimizers, &o->pool);
  gs_optimizer h = {id};
  if (gs__trace_on())
    gs__trace_optimizer_create(h.id, kind_name(kind), params, n);
  else
    gs__trace_skip(gs__trace_optimizer_events(n));
  return h;
}

gs_optimizer gs_sgd_new(const gs_tensor *params, int n, const gs_sgd_options *opt) {
  const char *fn = "sgd_new";
  gs_sgd_options o = opt ? *opt : GS_SGD_OPTIONS_DEFAULT;
  if (!(o.lr >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid learning rate: %g", o.lr);
    return (gs_optimizer){0};
  }
  if (!(o.momentum >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid momentum value: %g", o.momentum);
    return (gs_optimizer){0};
  }
  if (!(o.weight_decay >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid weight_decay value: %g", o.weight_decay);
    return (gs_optimizer){0};
  }
  if (isnan(o.dampening)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid dampening value: %g", o.dampening);
    return (gs_optimizer){0};
  }
  if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "Nesterov momentum requires a momentum and zero dampening (got momentum %g, "
              "dampening %g)", o.momentum, o.dampening);
    return (gs_optimizer){0};
  }
  return gs__optimizer_new(OPT_SGD, params, n, &o, NULL, NULL, fn);
}

static bool check_adam(const gs_adam_options *o, const char *fn) {
  if (!(o->lr >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid learning rate: %g", o->lr);
    return false;
  }
  if (!(o->eps >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid epsilon value: %g", o->eps);
    return false;
  }
  if (!(o->beta1 >= 0.0 && o->beta1 < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid beta parameter at index 0: %g (must be in [0, 1))",
              o->beta1);
    return false;
  }
  if (!(o->beta2 >= 0.0 && o->beta2 < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid beta parameter at index 1: %g (must be in [0, 1))",
              o->beta2);
    return false;
  }
  if (!(o->weight_decay >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid weight_decay value: %g", o->weight_decay);
    return false;
  }
  return true;
}

gs_optimizer gs_adam_new(const gs_tensor *params, int n, const gs_adam_options *opt) {
  gs_adam_options o = opt ? *opt : GS_ADAM_OPTIONS_DEFAULT;
  if (!check_adam(&o, "adam_new"))
    return (gs_optimizer){0};
  return gs__optimizer_new(OPT_ADAM, params, n, NULL, &o, NULL, "adam_new");
}

gs_optimizer gs_adamw_new(const gs_tensor *params, int n, const gs_adam_options *opt) {
  gs_adam_options o = opt ? *opt : GS_ADAM_OPTIONS_DEFAULT;
  if (!check_adam(&o, "adamw_new"))
    return (gs_optimizer){0};
  return gs__optimizer_new(OPT_ADAMW, params, n, NULL, &o, NULL, "adamw_new");
}

/* ---- steps ------------------------------------------------------------------------------ */

void gs__optim_drop(gs_tensor t) {
  if (t.id && gs_is_alive(t))
    gs_dispose(t);
}
#define drop gs__optim_drop

/* A state tensor: held by optimizer (its id), outside every scope. */
gs_tensor gs__optim_own(gs_tensor t, uint64_t owner) {
  gs__tensor *p = t.id ? gs__lookup(t, "optimizer_step") : NULL;
  if (!p)
    return GS_NO_TENSOR;
  gs__own_lock();
  gs__own_set_holder_locked(&gs__slot_of(p)->own, GS__HELD_BY_OPTIMIZER, owner);
  gs__own_unlock();
  return t;
}
#define own gs__optim_own

/* A state tensor goes with its optimizer (users cannot dispose it: it refuses). */
static void drop_state(gs_tensor t, const char *why) {
  if (t.id && gs_is_alive(t))
    gs__dispose_as(t, why);
}

/* x + alpha * y, a new tensor (PyTorch's x.add(y, alpha=alpha)). */
static gs_tensor add_scaled(gs_tensor x, gs_tensor y, double alpha) {
  gs_tensor tmp = gs_mul_scalar(y, alpha);
  gs_tensor out = tmp.id ? gs_add(x, tmp) : GS_NO_TENSOR;
  drop(tmp);
  return out;
}

static void sgd_step(const gs_sgd_options *o, param_state *s, uint64_t id) {
  gs_tensor p = s->param;
  gs_tensor g = gs_grad(p);
  /* Once the momentum buffer exists, one pass does it all (fused-step.c). A buffer kept
   * from before the momentum was set to 0 (gs_optimizer_set_momentum) is left alone, as
   * torch's SGD leaves it. */
  if ((o->momentum == 0.0 || s->buf.id) &&
      gs__sgd_fused_step(o, p, g, o->momentum == 0.0 ? GS_NO_TENSOR : s->buf))
    return;
  gs_tensor d = g, d_owned = GS_NO_TENSOR;
  if (o->weight_decay != 0.0)
    d = d_owned = add_scaled(g, p, o->weight_decay);
  if (!d.id)
    return;
  gs_tensor nesterov = GS_NO_TENSOR;
  if (o->momentum != 0.0) {
    if (!s->buf.id) {
      s->buf = own(gs_clone(d), id);
    } else {
      gs_mul_scalar_(s->buf, o->momentum);
      gs_add_scaled_(s->buf, d, 1.0 - o->dampening);
    }
    if (o->nesterov)
      d = nesterov = add_scaled(d, s->buf, o->momentum);
    else
      d = s->buf;
  }
  if (d.id)
    gs_add_scaled_(p, d, -o->lr);
  drop(nesterov);
  drop(d_owned);
}

static void adam_step(const gs_adam_options *o, bool decoupled, param_state *s, uint64_t id) {
  gs_tensor p = s->param;
  gs_tensor g = gs_grad(p), g_owned = GS_NO_TENSOR;
  if (!s->buf.id) {
    s->step = 0;
    s->buf = own(gs_zeros_like(p), id);
    s->sq = own(gs_zeros_like(p), id);
    if (o->amsgrad)
      s->max_sq = own(gs_zeros_like(p), id);
    if (!s->buf.id || !s->sq.id || (o->amsgrad && !s->max_sq.id))
      return;
  }
  s->step++;
  if (gs__adam_fused_step(o, decoupled, s->step, p, g, s->buf, s->sq, s->max_sq))
    return; /* one pass (fused-step.c) */
  if (o->weight_decay != 0.0) {
    if (decoupled)
      gs_mul_scalar_(p, 1.0 - o->lr * o->weight_decay);
    else if (!(g = g_owned = add_scaled(g, p, o->weight_decay)).id)
      return;
  }
  /* exp_avg = beta1 * exp_avg + (1 - beta1) * g; exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) g^2 */
  gs_mul_scalar_(s->buf, o->beta1);
  gs_add_scaled_(s->buf, g, 1.0 - o->beta1);
  gs_tensor g2 = gs_mul(g, g);
  gs_mul_scalar_(s->sq, o->beta2);
  if (g2.id)
    gs_add_scaled_(s->sq, g2, 1.0 - o->beta2);
  drop(g2);
  double bc1 = 1.0 - pow(o->beta1, (double)s->step);
  double bc2 = 1.0 - pow(o->beta2, (double)s->step);
  double step_size = o->lr / bc1;
  double bc2_sqrt = sqrt(bc2);
  gs_tensor v = s->sq;
  if (o->amsgrad) {
    gs_tensor mx = gs_maximum(s->max_sq, s->sq);
    if (mx.id)
      gs_copy_(s->max_sq, mx);
    drop(mx);
    v = s->max_sq;
  }
  /* denom = sqrt(v) / sqrt(bc2) + eps; p += -step_size * exp_avg / denom */
  gs_tensor root = gs_sqrt(v);
  gs_tensor denom = root.id ? gs_div_scalar(root, bc2_sqrt) : GS_NO_TENSOR;
  drop(root);
  if (denom.id) {
    gs_add_scalar_(denom, o->eps);
    gs_tensor ratio = gs_div(s->buf, denom);
    if (ratio.id)
      gs_add_scaled_(p, ratio, -step_size);
    drop(ratio);
  }
  drop(denom);
  drop(g_owned);
}

void gs_optimizer_step(gs_optimizer h) {
  const char *fn = "optimizer_step";
  optimizer *o = lookup(h, fn);
  if (!o)
    return;
  for (int i = 0; i < o->n_params; i++) {
    if (!gs_is_alive(o->params[i].param)) {
      gs__error(GS_ERR_STALE_HANDLE, fn,
                "%s parameter %d (handle %#llx) was disposed while the optimizer still holds it",
                kind_name(o->kind), i, (unsigned long long)o->params[i].param.id);
      return;
    }
  }
  gs__trace_call call = gs__trace_call_enter();
  gs_no_grad_begin();
  for (int i = 0; i < o->n_params; i++) {
    param_state *s = &o->params[i];
    if (!gs_grad(s->param).id)
      continue; /* no gradient: skipped, as PyTorch */
    gs__trace_call_retime(); /* each parameter's update at its own time */
    if (o->kind == OPT_SGD)
      sgd_step(&o->sgd, s, h.id);
    else if (IS_MORE(o->kind))
      gs__more_step(o->kind, &o->more, s, h.id);
    else
      adam_step(&o->adam, o->kind == OPT_ADAMW, s, h.id);
  }
  gs_no_grad_end();
  gs__trace_call_leave(call);
}

void gs_optimizer_zero_grad(gs_optimizer h) {
  optimizer *o = lookup(h, "optimizer_zero_grad");
  if (!o)
    return;
  for (int i = 0; i < o->n_params; i++)
    if (gs_is_alive(o->params[i].param))
      gs_zero_grad(o->params[i].param);
}

int gs_optimizer_parameter_count(gs_optimizer h) {
  optimizer *o = lookup(h, "optimizer_parameter_count");
  return o ? o->n_params : -1;
}

/* One rate per optimizer, kept in the options its kind steps with. */
static double *lr_slot(optimizer *o) {
  return IS_MORE(o->kind)     ? gs__more_lr(o->kind, &o->more)
         : o->kind == OPT_SGD ? &o->sgd.lr
                              : &o->adam.lr;
}

double gs_optimizer_lr(gs_optimizer h) {
  optimizer *o = lookup(h, "optimizer_lr");
  return o ? *lr_slot(o) : (double)NAN;
}

void gs_optimizer_set_lr(gs_optimizer h, double lr) {
  optimizer *o = lookup(h, "optimizer_set_lr");
  if (!o)
    return;
  if (!(lr >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, "optimizer_set_lr", "Invalid learning rate: %g", lr);
    return;
  }
  *lr_slot(o) = lr;
}

double gs_optimizer_momentum(gs_optimizer h) {
  optimizer *o = lookup(h, "optimizer_momentum");
  if (!o)
    return (double)NAN;
  if (IS_MORE(o->kind)) {
    double *m = gs__more_momentum(o->kind, &o->more);
    if (!m)
      gs__error(GS_ERR_ARGUMENT, "optimizer_momentum", "%s #%u has no momentum", kind_name(o->kind),
                o->index);
    return m ? *m : (double)NAN;
  }
  return o->kind == OPT_SGD ? o->sgd.momentum : o->adam.beta1;
}

void gs_optimizer_set_momentum(gs_optimizer h, double m) {
  const char *fn = "optimizer_set_momentum";
  optimizer *o = lookup(h, fn);
  if (!o)
    return;
  if (o->kind == OPT_SGD) {
    if (!(m >= 0.0) || (o->sgd.nesterov && m == 0.0)) {
      gs__error(GS_ERR_ARGUMENT, fn, "Invalid momentum value: %g%s", m,
                o->sgd.nesterov ? " (nesterov needs a momentum > 0)" : "");
      return;
    }
    o->sgd.momentum = m;
  } else if (IS_MORE(o->kind) && !gs__more_momentum(o->kind, &o->more)) {
    gs__error(GS_ERR_ARGUMENT, fn, "%s #%u has no momentum", kind_name(o->kind), o->index);
  } else {
    if (!(m >= 0.0 && m < 1.0)) {
      gs__error(GS_ERR_ARGUMENT, fn, "Invalid beta parameter at index 0: %g (must be in [0, 1))",
                m);
      return;
    }
    *(IS_MORE(o->kind) ? gs__more_momentum(o->kind, &o->more) : &o->adam.beta1) = m;
  }
}

/* ---- state (state_dict / load_state_dict) ------------------------------------------------ */

/* Parameter i's state record, or NULL with an error. */
static param_state *state_at(gs_optimizer h, int i, optimizer **out, const char *fn) {
  optimizer *o = lookup(h, fn);
  if (!o)
    return NULL;
  if (i < 0 || i >= o->n_params) {
    gs__error(GS_ERR_ARGUMENT, fn, "parameter index %d out of range: %s #%u has %d parameters", i,
              kind_name(o->kind), o->index, o->n_params);
    return NULL;
  }
  *out = o;
  return &o->params[i];
}

/* The slot of a state name for the optimizer's kind, or NULL with an error naming the kind's
 * names. */
static gs_tensor *state_slot(optimizer *o, param_state *s, const char *name, const char *fn) {
  if (IS_MORE(o->kind)) {
    const char *names[3];
    gs__more_state_names(o->kind, names);
    gs_tensor *slots[3] = {&s->buf, &s->sq, &s->max_sq};
    for (int k = 0; k < 3; k++)
      if (names[k] && name && strcmp(names[k], name) == 0)
        return slots[k];
    gs__error(GS_ERR_ARGUMENT, fn, "%s #%u has no state \"%s\": expected \"%s\"%s%s%s",
              kind_name(o->kind), o->index, name ? name : "(null)", names[0],
              names[1] ? " or \"" : "", names[1] ? names[1] : "", names[1] ? "\"" : "");
    return NULL;
  }
  if (o->kind == OPT_SGD && strcmp(name, "momentum_buffer") == 0)
    return &s->buf;
  if (o->kind != OPT_SGD) {
    if (strcmp(name, "exp_avg") == 0)
      return &s->buf;
    if (strcmp(name, "exp_avg_sq") == 0)
      return &s->sq;
    if (strcmp(name, "max_exp_avg_sq") == 0 && o->adam.amsgrad)
      return &s->max_sq;
  }
  gs__error(GS_ERR_ARGUMENT, fn, "%s #%u has no state \"%s\": expected %s", kind_name(o->kind),
            o->index, name ? name : "(null)",
            o->kind == OPT_SGD ? "\"momentum_buffer\""
            : o->adam.amsgrad  ? "\"exp_avg\", \"exp_avg_sq\" or \"max_exp_avg_sq\""
                               : "\"exp_avg\" or \"exp_avg_sq\"");
  return NULL;
}

gs_tensor gs_optimizer_state(gs_optimizer h, int i, const char *name) {
  const char *fn = "optimizer_state";
  optimizer *o;
  param_state *s = state_at(h, i, &o, fn);
  gs_tensor *slot = s && name ? state_slot(o, s, name, fn) : NULL;
  return slot ? *slot : GS_NO_TENSOR;
}

int64_t gs_optimizer_state_step(gs_optimizer h, int i) {
  optimizer *o;
  param_state *s = state_at(h, i, &o, "optimizer_state_step");
  return s ? s->step : -1;
}

bool gs_optimizer_load_state(gs_optimizer h, int i, const char *name, gs_tensor values) {
  const char *fn = "optimizer_load_state";
  optimizer *o;
  param_state *s = state_at(h, i, &o, fn);
  gs_tensor *slot = s && name ? state_slot(o, s, name, fn) : NULL;
  if (!slot)
    return false;
  int64_t want[GS_MAX_DIMS], got[GS_MAX_DIMS];
  int nw = gs_shape(s->param, want), ng = gs_shape(values, got);
  if (nw < 0 || ng < 0)
    return false;
  if (nw != ng || memcmp(want, got, sizeof(int64_t) * (size_t)nw) != 0) {
    char a[GS__SHAPE_STR], b[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "state \"%s\" of parameter %d: expected shape %s, got %s", name, i,
              gs__shape_str(a, want, nw), gs__shape_str(b, got, ng));
    return false;
  }
  gs_no_grad_begin();
  /* The other state tensors start as the first step makes them. */
  if (IS_MORE(o->kind) && !s->buf.id && !gs__more_init_state(o->kind, &o->more, s, h.id)) {
    gs_no_grad_end();
    return false;
  }
  gs_tensor v = gs_to_dtype(values, gs_dtype_of(s->param));
  bool ok = v.id != 0;
  if (ok && !slot->id)
    *slot = own(gs_clone(v), h.id);
  else if (ok)
    gs_copy_(*slot, v);
  drop(v);
  /* Adam steps all its moments together: the ones not given start at zeros. */
  gs_tensor *companions[] = {&s->buf, &s->sq,
                             o->kind != OPT_SGD && o->adam.amsgrad ? &s->max_sq : NULL};
  for (int k = 0; ok && o->kind != OPT_SGD && !IS_MORE(o->kind) && k < 3; k++)
    if (companions[k] && !companions[k]->id)
      *companions[k] = own(gs_zeros_like(s->param), h.id);
  gs_no_grad_end();
  return ok && slot->id;
}

bool gs_optimizer_load_state_step(gs_optimizer h, int i, int64_t step) {
  const char *fn = "optimizer_load_state_step";
  optimizer *o;
  param_state *s = state_at(h, i, &o, fn);
  if (!s)
    return false;
  if (step < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a step count >= 0, got %lld", (long long)step);
    return false;
  }
  s->step = step;
  return true;
}

/* The scalar state's slot, or NULL with an error. */
static double *scalar_slot(gs_optimizer h, int i, const char *name, const char *fn) {
  optimizer *o;
  param_state *s = state_at(h, i, &o, fn);
  if (!s)
    return NULL;
  double *slot = IS_MORE(o->kind) && name ? gs__more_scalar(o->kind, s, name) : NULL;
  if (!slot)
    gs__error(GS_ERR_ARGUMENT, fn, "%s #%u has no scalar state \"%s\"%s", kind_name(o->kind),
              o->index, name ? name : "(null)",
              o->kind == GS__OPT_ASGD    ? ": expected \"eta\" or \"mu\""
              : o->kind == GS__OPT_NADAM ? ": expected \"mu_product\""
                                         : "");
  return slot;
}

double gs_optimizer_state_scalar(gs_optimizer h, int i, const char *name) {
  double *slot = scalar_slot(h, i, name, "optimizer_state_scalar");
  return slot ? *slot : (double)NAN;
}

bool gs_optimizer_load_state_scalar(gs_optimizer h, int i, const char *name, double value) {
  double *slot = scalar_slot(h, i, name, "optimizer_load_state_scalar");
  if (slot)
    *slot = (double)(float)value;
  return slot != NULL;
}

void gs_optimizer_dispose(gs_optimizer h) {
  optimizer *o = lookup(h, "optimizer_dispose");
  if (!o)
    return;
  char reason[64];
  snprintf(reason, sizeof reason, "the disposal of optimizer %s #%u", kind_name(o->kind),
           o->index);
  const char *why = gs__intern(reason);
  for (int i = 0; i < o->n_params; i++) {
    drop_state(o->params[i].buf, why);
    drop_state(o->params[i].sq, why);
    drop_state(o->params[i].max_sq, why);
  }
  free(o->params);
  o->params = NULL;
  o->n_params = 0;
  /* Not in the log, but it takes an event number as disposals do, so that its stale handles
   * can say when it went. */
  gs__pool_release(&optimizers, h.id, why, gs__next_event(), GS__POOL_DISPOSED);
}

/* ---- a late log's snapshot (trace/snapshot.c) ----------------------------------------- */

/* Every live optimizer as its optimizer_create (split as the writer splits a long parameter
 * list); its state tensors are tensors, held by it, written with the others. */
static uint64_t snapshot_optimizers(void) {
  uint32_t count = atomic_load_explicit(&optimizers.count, memory_order_acquire);
  for (uint32_t i = 0; i < count; i++) {
    optimizer *o = (optimizer *)gs__pool_slot_of(&optimizers, i);
    if (!atomic_load_explicit(&o->pool.live, memory_order_acquire))
      continue;
    uint64_t params[GS__TRACE_SNAPSHOT_PARAMS];
    int done = 0;
    do {
      int n = o->n_params - done < GS__TRACE_SNAPSHOT_PARAMS ? o->n_params - done
                                                              : GS__TRACE_SNAPSHOT_PARAMS;
      for (int p = 0; p < n; p++)
        params[p] = o->params[done + p].param.id;
      gs__trace_snapshot_event(&(gs_trace_event){
          .kind = GS_TRACE_OPTIMIZER_CREATE, .optimizer = gs__pool_id(&optimizers, &o->pool, i),
          .name = gs__trace_string(kind_name(o->kind)), .n_params = (uint32_t)n,
          .params = params});
      done += n;
    } while (done < o->n_params);
  }
  return 0;
}

__attribute__((constructor)) static void register_optimizer_snapshot(void) {
  gs__trace_add_snapshot_hook(60, snapshot_optimizers);
}
