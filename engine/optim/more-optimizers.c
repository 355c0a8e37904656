/* more-optimizers.c: Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop, step for step as
 * torch.optim 1.13's single-tensor implementations, written with the engine's own ops under
 * no_grad (optimizer.c keeps their records, handles and state as it does SGD's and Adam's).
 *
 * Each step does torch's operations in torch's order and rounding, so that a float64 model
 * matches torch to the last bits: addcmul_(a, b, value=v) is self + (v * a) * b, addcdiv_ is
 * self + (v * a) / b (the CPU kernels' order), `scalar / tensor` is tensor.reciprocal() *
 * scalar (Tensor.__rtruediv__), and what torch keeps in float32 0-d tensors (NAdam's
 * mu_product, ASGD's eta and mu) is rounded to float32 here. Temporaries are disposed at the
 * end of each parameter's step.
 */
#include <math.h>
#include <string.h>

#include <gradscope/gradscope.h>

#include "core-impl.h"
#include "optim-impl.h"

/* ---- constructors ------------------------------------------------------------------------ */

static bool at_least_zero(double v, const char *what, const char *fn) {
  if (!(v >= 0.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid %s: %g", what, v);
    return false;
  }
  return true;
}

static bool check_betas(double b1, double b2, const char *fn) {
  double b[2] = {b1, b2};
  for (int i = 0; i < 2; i++) {
    if (!(b[i] >= 0.0 && b[i] < 1.0)) {
      gs__error(GS_ERR_ARGUMENT, fn, "Invalid beta parameter at index %d: %g (must be in [0, 1))",
                i, b[i]);
      return false;
    }
  }
  return true;
}

gs_optimizer gs_adadelta_new(const gs_tensor *params, int n, const gs_adadelta_options *opt) {
  const char *fn = "adadelta_new";
  gs__more_options m = {.adadelta = opt ? *opt : GS_ADADELTA_OPTIONS_DEFAULT};
  gs_adadelta_options *o = &m.adadelta;
  if (!at_least_zero(o->lr, "learning rate", fn))
    return (gs_optimizer){0};
  if (!(o->rho >= 0.0 && o->rho <= 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid rho value: %g (must be in [0, 1])", o->rho);
    return (gs_optimizer){0};
  }
  if (!at_least_zero(o->eps, "epsilon value", fn) ||
      !at_least_zero(o->weight_decay, "weight_decay value", fn))
    return (gs_optimizer){0};
  return gs__optimizer_new(GS__OPT_ADADELTA, params, n, NULL, NULL, &m, fn);
}

gs_optimizer gs_adamax_new(const gs_tensor *params, int n, const gs_adamax_options *opt) {
  const char *fn = "adamax_new";
  gs__more_options m = {.adamax = opt ? *opt : GS_ADAMAX_OPTIONS_DEFAULT};
  gs_adamax_options *o = &m.adamax;
  if (!at_least_zero(o->lr, "learning rate", fn) || !at_least_zero(o->eps, "epsilon value", fn) ||
      !check_betas(o->beta1, o->beta2, fn) ||
      !at_least_zero(o->weight_decay, "weight_decay value", fn))
    return (gs_optimizer){0};
  return gs__optimizer_new(GS__OPT_ADAMAX, params, n, NULL, NULL, &m, fn);
}

gs_optimizer gs_nadam_new(const gs_tensor *params, int n, const gs_nadam_options *opt) {
  const char *fn = "nadam_new";
  gs__more_options m = {.nadam = opt ? *opt : GS_NADAM_OPTIONS_DEFAULT};
  gs_nadam_options *o = &m.nadam;
  if (!at_least_zero(o->lr, "learning rate", fn) || !at_least_zero(o->eps, "epsilon value", fn) ||
      !check_betas(o->beta1, o->beta2, fn) ||
      !at_least_zero(o->weight_decay, "weight_decay value", fn) ||
      !at_least_zero(o->momentum_decay, "momentum_decay value", fn))
    return (gs_optimizer){0};
  return gs__optimizer_new(GS__OPT_NADAM, params, n, NULL, NULL, &m, fn);
}

gs_optimizer gs_radam_new(const gs_tensor *params, int n, const gs_radam_options *opt) {
  const char *fn = "radam_new";
  gs__more_options m = {.radam = opt ? *opt : GS_RADAM_OPTIONS_DEFAULT};
  gs_radam_options *o = &m.radam;
  if (!at_least_zero(o->lr, "learning rate", fn) || !at_least_zero(o->eps, "epsilon value", fn) ||
      !check_betas(o->beta1, o->beta2, fn) ||
      !at_least_zero(o->weight_decay, "weight_decay value", fn))
    return (gs_optimizer){0};
  return gs__optimizer_new(GS__OPT_RADAM, params, n, NULL, NULL, &m, fn);
}

gs_optimizer gs_asgd_new(const gs_tensor *params, int n, const gs_asgd_options *opt) {
  const char *fn = "asgd_new";
  gs__more_options m = {.asgd = opt ? *opt : GS_ASGD_OPTIONS_DEFAULT};
  if (!at_least_zero(m.asgd.lr, "learning rate", fn) ||
      !at_least_zero(m.asgd.weight_decay, "weight_decay value", fn))
    return (gs_optimizer){0};
  return gs__optimizer_new(GS__OPT_ASGD, params, n, NULL, NULL, &m, fn);
}

gs_optimizer gs_rprop_new(const gs_tensor *params, int n, const gs_rprop_options *opt) {
  const char *fn = "rprop_new";
  gs__more_options m = {.rprop = opt ? *opt : GS_RPROP_OPTIONS_DEFAULT};
  gs_rprop_options *o = &m.rprop;
  if (!at_least_zero(o->lr, "learning rate", fn))
    return (gs_optimizer){0};
  if (!(0.0 < o->eta_minus && o->eta_minus < 1.0 && 1.0 < o->eta_plus)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid eta values: %g, %g (expected 0 < %g < 1 < %g)",
              o->eta_minus, o->eta_plus, o->eta_minus, o->eta_plus);
    return (gs_optimizer){0};
  }
  if (isnan(o->step_size_min) || isnan(o->step_size_max)) {
    gs__error(GS_ERR_ARGUMENT, fn, "Invalid step sizes: %g, %g", o->step_size_min,
              o->step_size_max);
    return (gs_optimizer){0};
  }
  return gs__optimizer_new(GS__OPT_RPROP, params, n, NULL, NULL, &m, fn);
}

/* ---- what optimizer.c asks of a kind ---------------------------------------------------- */

const char *gs__more_kind_name(gs__opt_kind kind) {
  switch (kind) {
  case GS__OPT_ADADELTA: return "Adadelta";
  case GS__OPT_ADAMAX: return "Adamax";
  case GS__OPT_NADAM: return "NAdam";
  case GS__OPT_RADAM: return "RAdam";
  case GS__OPT_ASGD: return "ASGD";
  case GS__OPT_RPROP: return "Rprop";
  default: return "optimizer";
  }
}

void gs__more_state_names(gs__opt_kind kind, const char *names[3]) {
  names[0] = names[1] = names[2] = NULL;
  switch (kind) {
  case GS__OPT_ADADELTA: names[0] = "square_avg", names[1] = "acc_delta"; break;
  case GS__OPT_ADAMAX: names[0] = "exp_avg", names[1] = "exp_inf"; break;
  case GS__OPT_NADAM:
  case GS__OPT_RADAM: names[0] = "exp_avg", names[1] = "exp_avg_sq"; break;
  case GS__OPT_ASGD: names[0] = "ax"; break;
  case GS__OPT_RPROP: names[0] = "prev", names[1] = "step_size"; break;
  default: break;
  }
}

double *gs__more_lr(gs__opt_kind kind, gs__more_options *o) {
  switch (kind) {
  case GS__OPT_ADADELTA: return &o->adadelta.lr;
  case GS__OPT_ADAMAX: return &o->adamax.lr;
  case GS__OPT_NADAM: return &o->nadam.lr;
  case GS__OPT_RADAM: return &o->radam.lr;
  case GS__OPT_ASGD: return &o->asgd.lr;
  default: return &o->rprop.lr;
  }
}

double *gs__more_momentum(gs__opt_kind kind, gs__more_options *o) {
  switch (kind) {
  case GS__OPT_ADAMAX: return &o->adamax.beta1;
  case GS__OPT_NADAM: return &o->nadam.beta1;
  case GS__OPT_RADAM: return &o->radam.beta1;
  default: return NULL;
  }
}

double *gs__more_scalar(gs__opt_kind kind, gs__param_state *s, const char *name) {
  if (kind == GS__OPT_ASGD && strcmp(name, "eta") == 0)
    return &s->eta;
  if (kind == GS__OPT_ASGD && strcmp(name, "mu") == 0)
    return &s->mu;
  if (kind == GS__OPT_NADAM && strcmp(name, "mu_product") == 0)
    return &s->mu_product;
  return NULL;
}

bool gs__more_init_state(gs__opt_kind kind, const gs__more_options *o, gs__param_state *s,
                         uint64_t owner) {
  const char *names[3];
  gs__more_state_names(kind, names);
  gs_tensor *slots[2] = {&s->buf, &s->sq};
  for (int k = 0; k < 2; k++) {
    if (!names[k] || slots[k]->id)
      continue;
    gs_tensor t = kind == GS__OPT_RPROP && k == 1 ? gs_full_like(s->param, o->rprop.lr)
                                                  : gs_zeros_like(s->param);
    *slots[k] = gs__optim_own(t, owner);
    if (!slots[k]->id)
      return false;
  }
  return true;
}

/* ---- steps ------------------------------------------------------------------------------ */

/* The temporaries of one parameter's step, disposed together at its end. */
typedef struct temps {
  gs_tensor t[32]; /* Rprop makes 17 */
  int n;
  bool failed; /* an op failed (its error is set): the step stops there */
} temps;

static gs_tensor tmp(temps *T, gs_tensor t) {
  if (!t.id) {
    T->failed = true;
  } else if (T->n == (int)(sizeof T->t / sizeof T->t[0])) { /* a bug here: stop, not leak */
    gs__optim_drop(t);
    gs__error(GS_ERR_STATE, "optimizer_step", "a step made more than %d temporaries", T->n);
    T->failed = true;
    t = GS_NO_TENSOR;
  } else {
    T->t[T->n++] = t;
  }
  return t;
}

static void drop_temps(temps *T) {
  for (int i = 0; i < T->n; i++)
    gs__optim_drop(T->t[i]);
}

/* The gradient as torch's steps take it: negated with maximize, then + weight_decay * p
 * (grad.add(param, alpha=weight_decay)). */
static gs_tensor grad_of(temps *T, gs_tensor p, bool maximize, double weight_decay) {
  gs_tensor g = gs_grad(p);
  if (maximize)
    g = tmp(T, gs_neg(g));
  if (!T->failed && weight_decay != 0.0) {
    gs_tensor wd = tmp(T, gs_mul_scalar(p, weight_decay));
    g = T->failed ? g : tmp(T, gs_add(g, wd));
  }
  return g;
}

/* x.addcmul_(a, b, value=v): x + (v * a) * b. */
static void addcmul_(temps *T, gs_tensor x, gs_tensor a, gs_tensor b, double v) {
  gs_tensor va = tmp(T, gs_mul_scalar(a, v));
  gs_tensor vab = T->failed ? va : tmp(T, gs_mul(va, b));
  if (!T->failed)
    gs_add_(x, vab);
}

/* x.addcdiv_(a, b, value=v): x + (v * a) / b. */
static void addcdiv_(temps *T, gs_tensor x, gs_tensor a, gs_tensor b, double v) {
  gs_tensor va = tmp(T, gs_mul_scalar(a, v));
  gs_tensor q = T->failed ? va : tmp(T, gs_div(va, b));
  if (!T->failed)
    gs_add_(x, q);
}

/* m.mul_(beta).add_(g, alpha=1 - beta): the first moment of Adamax, NAdam and RAdam. */
static void first_moment(gs_tensor m, gs_tensor g, double beta) {
  gs_mul_scalar_(m, beta);
  gs_add_scaled_(m, g, 1.0 - beta);
}

static void adadelta_step(temps *T, const gs_adadelta_options *o, gs__param_state *s) {
  gs_tensor p = s->param, sa = s->buf, ad = s->sq;
  gs_tensor g = grad_of(T, p, o->maximize, o->weight_decay);
  if (T->failed)
    return;
  gs_mul_scalar_(sa, o->rho);
  addcmul_(T, sa, g, g, 1.0 - o->rho);
  /* std = square_avg.add(eps).sqrt_(); delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g) */
  gs_tensor std = tmp(T, gs_add_scalar(sa, o->eps));
  gs_tensor delta = T->failed ? std : tmp(T, gs_add_scalar(ad, o->eps));
  if (T->failed)
    return;
  gs_sqrt_(std);
  gs_sqrt_(delta);
  gs_div_(delta, std);
  gs_mul_(delta, g);
  gs_mul_scalar_(ad, o->rho);
  addcmul_(T, ad, delta, delta, 1.0 - o->rho);
  if (!T->failed)
    gs_add_scaled_(p, delta, -o->lr);
}

static void adamax_step(temps *T, const gs_adamax_options *o, gs__param_state *s) {
  gs_tensor p = s->param, exp_avg = s->buf, exp_inf = s->sq;
  gs_tensor g = grad_of(T, p, o->maximize, o->weight_decay);
  if (T->failed)
    return;
  first_moment(exp_avg, g, o->beta1);
  /* exp_inf = amax(stack(exp_inf.mul_(beta2), |g| + eps)) */
  gs_mul_scalar_(exp_inf, o->beta2);
  gs_tensor bound = tmp(T, gs_abs(g));
  if (T->failed)
    return;
  gs_add_scalar_(bound, o->eps);
  gs_tensor mx = tmp(T, gs_maximum(exp_inf, bound));
  if (T->failed)
    return;
  gs_copy_(exp_inf, mx);
  double clr = o->lr / (1.0 - pow(o->beta1, (double)s->step));
  addcdiv_(T, p, exp_avg, exp_inf, -clr);
}

/* a * b in float32, as torch multiplies a float32 tensor by a Python number. */
static double mul_f32(double a, double b) {
  volatile float r = (float)a * (float)b; /* volatile: no wider intermediate */
  return (double)r;
}

static void nadam_step(temps *T, const gs_nadam_options *o, gs__param_state *s) {
  gs_tensor p = s->param, exp_avg = s->buf, exp_avg_sq = s->sq;
  double step = (double)s->step;
  double bc2 = 1.0 - pow(o->beta2, step);
  gs_tensor g = grad_of(T, p, false, o->weight_decay);
  if (T->failed)
    return;
  double mu = o->beta1 * (1.0 - 0.5 * pow(0.96, step * o->momentum_decay));
  double mu_next = o->beta1 * (1.0 - 0.5 * pow(0.96, (step + 1.0) * o->momentum_decay));
  s->mu_product = mul_f32(s->mu_product, mu);
  double mu_product_next = mul_f32(mul_f32(s->mu_product, mu), mu_next);
  first_moment(exp_avg, g, o->beta1);
  gs_mul_scalar_(exp_avg_sq, o->beta2);
  addcmul_(T, exp_avg_sq, g, g, 1.0 - o->beta2);
  /* denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps) */
  gs_tensor denom = T->failed ? g : tmp(T, gs_div_scalar(exp_avg_sq, bc2));
  if (T->failed)
    return;
  gs_sqrt_(denom);
  gs_add_scalar_(denom, o->eps);
  addcdiv_(T, p, g, denom, -o->lr * (1.0 - mu) / (1.0 - s->mu_product));
  if (!T->failed)
    addcdiv_(T, p, exp_avg, denom, -o->lr * mu_next / (1.0 - mu_product_next));
}

static void radam_step(temps *T, const gs_radam_options *o, gs__param_state *s) {
  gs_tensor p = s->param, exp_avg = s->buf, exp_avg_sq = s->sq;
  double step = (double)s->step;
  double bc1 = 1.0 - pow(o->beta1, step), bc2 = 1.0 - pow(o->beta2, step);
  gs_tensor g = grad_of(T, p, false, o->weight_decay);
  if (T->failed)
    return;
  first_moment(exp_avg, g, o->beta1);
  gs_mul_scalar_(exp_avg_sq, o->beta2);
  addcmul_(T, exp_avg_sq, g, g, 1.0 - o->beta2);
  gs_tensor corrected = T->failed ? g : tmp(T, gs_div_scalar(exp_avg, bc1));
  if (T->failed)
    return;
  /* The length of the approximated simple moving average: past 5 the variance is tractable
   * and the adaptive step is rectified; before, the step is SGD with momentum. */
  double rho_inf = 2.0 / (1.0 - o->beta2) - 1.0;
  double rho_t = rho_inf - 2.0 * step * pow(o->beta2, step) / bc2;
  gs_tensor update = tmp(T, gs_mul_scalar(corrected, o->lr));
  if (T->failed)
    return;
  if (rho_t > 5.0) {
    double rect =
        sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
    /* adaptive_lr = sqrt(bc2) / exp_avg_sq.sqrt().add_(eps): __rtruediv__, reciprocal * s */
    gs_tensor denom = tmp(T, gs_sqrt(exp_avg_sq));
    if (T->failed)
      return;
    gs_add_scalar_(denom, o->eps);
    gs_reciprocal_(denom);
    gs_mul_scalar_(denom, sqrt(bc2));
    gs_mul_(update, denom);
    gs_mul_scalar_(update, rect);
  }
  gs_add_scaled_(p, update, -1.0);
}

/* torch keeps eta and mu as float32 tensors made from Python numbers. */
static double to_f32(double v) {
  volatile float r = (float)v;
  return (double)r;
}

static void asgd_step(temps *T, const gs_asgd_options *o, gs__param_state *s) {
  gs_tensor p = s->param, ax = s->buf;
  gs_tensor g = grad_of(T, p, o->maximize, o->weight_decay);
  if (T->failed)
    return;
  gs_mul_scalar_(p, 1.0 - o->lambd * s->eta); /* decay */
  gs_add_scaled_(p, g, -s->eta);
  if (s->mu != 1.0) { /* averaging: ax += (p - ax) * mu */
    gs_tensor d = tmp(T, gs_sub(p, ax));
    if (T->failed)
      return;
    gs_mul_scalar_(d, s->mu);
    gs_add_(ax, d);
  } else {
    gs_copy_(ax, p);
  }
  double step = (double)s->step;
  s->eta = to_f32(o->lr / pow(1.0 + o->lambd * o->lr * step, o->alpha));
  s->mu = to_f32(1.0 / (step - o->t0 > 1.0 ? step - o->t0 : 1.0));
}

static void rprop_step(temps *T, const gs_rprop_options *o, gs__param_state *s) {
  gs_tensor p = s->param, prev = s->buf, step_size = s->sq;
  gs_tensor g = gs_grad(p);
  if (o->maximize)
    g = tmp(T, gs_neg(g));
  /* sign = (g * prev).sign(), then eta_plus where > 0, eta_minus where < 0, 1 where 0 */
  gs_tensor prod = T->failed ? g : tmp(T, gs_mul(g, prev));
  gs_tensor sign = T->failed ? g : tmp(T, gs_sign(prod));
  gs_tensor pos = T->failed ? g : tmp(T, gs_gt_scalar(sign, 0.0));
  gs_tensor neg = T->failed ? g : tmp(T, gs_lt_scalar(sign, 0.0));
  gs_tensor zero = T->failed ? g : tmp(T, gs_eq_scalar(sign, 0.0));
  gs_tensor plus = T->failed ? g : tmp(T, gs_full_like(sign, o->eta_plus));
  gs_tensor minus = T->failed ? g : tmp(T, gs_full_like(sign, o->eta_minus));
  gs_tensor ones = T->failed ? g : tmp(T, gs_ones_like(sign));
  gs_tensor f0 = T->failed ? g : tmp(T, gs_where(zero, ones, sign));
  gs_tensor f1 = T->failed ? g : tmp(T, gs_where(neg, minus, f0));
  gs_tensor factor = T->failed ? g : tmp(T, gs_where(pos, plus, f1));
  if (T->failed)
    return;
  gs_mul_(step_size, factor);
  gs_clamp_(step_size, o->step_size_min, o->step_size_max);
  /* where the sign changed the gradient counts as 0 */
  gs_tensor changed = tmp(T, gs_eq_scalar(factor, o->eta_minus));
  gs_tensor zeros = T->failed ? g : tmp(T, gs_zeros_like(g));
  gs_tensor kept = T->failed ? g : tmp(T, gs_where(changed, zeros, g));
  gs_tensor dir = T->failed ? g : tmp(T, gs_sign(kept));
  gs_tensor move = T->failed ? g : tmp(T, gs_mul(dir, step_size));
  if (T->failed)
    return;
  gs_add_scaled_(p, move, -1.0);
  gs_copy_(prev, kept);
}

void gs__more_step(gs__opt_kind kind, const gs__more_options *o, gs__param_state *s,
                   uint64_t owner) {
  if (!s->buf.id) { /* the first step makes the state, as torch's lazy initialisation */
    if (!gs__more_init_state(kind, o, s, owner))
      return;
    s->step = 0;
    s->eta = to_f32(kind == GS__OPT_ASGD ? o->asgd.lr : 0.0);
    s->mu = s->mu_product = 1.0;
  }
  s->step++;
  temps T = {.n = 0};
  switch (kind) {
  case GS__OPT_ADADELTA: adadelta_step(&T, &o->adadelta, s); break;
  case GS__OPT_ADAMAX: adamax_step(&T, &o->adamax, s); break;
  case GS__OPT_NADAM: nadam_step(&T, &o->nadam, s); break;
  case GS__OPT_RADAM: radam_step(&T, &o->radam, s); break;
  case GS__OPT_ASGD: asgd_step(&T, &o->asgd, s); break;
  case GS__OPT_RPROP: rprop_step(&T, &o->rprop, s); break;
  default: break;
  }
  drop_temps(&T);
}
