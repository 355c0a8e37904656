/* test-optim-more.c: Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop against torch.optim 1.13's
 * update formulas recomputed in plain C (tests/python/test_more_optimizers.py compares them with
 * torch itself, to 1e-15).
 *
 * Two 3-element f64 parameters whose gradient is c_k (backward of sum(p * c_k), c_k changing
 * size and sign with the step k); the second has no gradient on the first two steps, so it is
 * skipped and makes its state on its own first step. Every step runs in its own scope. Then: the
 * state tensors by torch's names (held by the optimizer, outside the step scopes, gone with it),
 * the step counts and scalar state, the state loaded into a fresh optimizer making it step as
 * the first, the option checks, and momentum (beta1) where the kind has one. */
#include "test-util.h"

#define N 3
#define STEPS 8

static const double P0[N] = {0.5, -1.25, 2.0};
static const double P1[N] = {-0.75, 0.3, 1.1};

/* The gradient at step k; step 3 repeats step 2's signs, step 4 flips them (Rprop). */
static void grad_at(int k, int which, double *c) {
  static const double base[2][N] = {{0.3, -1.2, 2.5}, {1.5, 0.25, -0.6}};
  double scale = k == 2 ? 0.1 : (1.0 + 0.5 * k) * (k % 2 ? -1.0 : 1.0);
  for (int j = 0; j < N; j++)
    c[j] = base[which][j] * scale + 0.05 * j * k;
}

static gs_tensor make_param(const double *v) {
  gs_tensor p = gs_from_data(GS_F64, (int64_t[]){N}, 1, v);
  gs_set_requires_grad(p, true);
  return p;
}

static void train_step(gs_optimizer o, gs_tensor *params, const bool *has_grad, int n, int k) {
  gs_scope s = gs_scope_begin("step");
  gs_optimizer_zero_grad(o);
  gs_tensor loss = GS_NO_TENSOR;
  for (int i = 0; i < n; i++) {
    if (!has_grad[i])
      continue;
    double c[N];
    grad_at(k, i, c);
    gs_tensor ct = gs_from_data(GS_F64, (int64_t[]){N}, 1, c);
    gs_tensor term = gs_sum(gs_mul(params[i], ct), NULL, 0, false);
    loss = loss.id ? gs_add(loss, term) : term;
  }
  gs_backward(loss);
  gs_optimizer_step(o);
  gs_scope_end(s);
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
}

/* ---- the reference: torch 1.13's formulas, element by element --------------------------- */

typedef enum kind { ADADELTA, ADAMAX, NADAM, RADAM, ASGD, RPROP } kind;

typedef struct options {
  kind k;
  gs_adadelta_options adadelta;
  gs_adamax_options adamax;
  gs_nadam_options nadam;
  gs_radam_options radam;
  gs_asgd_options asgd;
  gs_rprop_options rprop;
} options;

typedef struct ref {
  double p[N], a[N], b[N]; /* a, b: the kind's two state tensors in gs__more_state_names order */
  int step;
  double eta, mu, mu_product;
} ref;

static double f32(double v) {
  volatile float r = (float)v;
  return r;
}

static double lr_of(const options *o) {
  switch (o->k) {
  case ADADELTA: return o->adadelta.lr;
  case ADAMAX: return o->adamax.lr;
  case NADAM: return o->nadam.lr;
  case RADAM: return o->radam.lr;
  case ASGD: return o->asgd.lr;
  default: return o->rprop.lr;
  }
}

static void ref_step(const options *o, ref *r, const double *g_in) {
  if (r->step == 0) {
    for (int j = 0; j < N; j++)
      r->a[j] = 0, r->b[j] = o->k == RPROP ? o->rprop.lr : 0.0;
    r->eta = f32(o->asgd.lr), r->mu = 1, r->mu_product = 1;
  }
  double t = ++r->step;
  double mu = 0, mu_next = 0, mp_next = 0, rho_inf = 0, rho_t = 0;
  if (o->k == NADAM) {
    const gs_nadam_options *n = &o->nadam;
    mu = n->beta1 * (1 - 0.5 * pow(0.96, t * n->momentum_decay));
    mu_next = n->beta1 * (1 - 0.5 * pow(0.96, (t + 1) * n->momentum_decay));
    r->mu_product = f32(f32(r->mu_product) * f32(mu));
    mp_next = f32(f32(f32(r->mu_product) * f32(mu)) * f32(mu_next));
  }
  if (o->k == RADAM) {
    double b2 = o->radam.beta2;
    rho_inf = 2 / (1 - b2) - 1;
    rho_t = rho_inf - 2 * t * pow(b2, t) / (1 - pow(b2, t));
  }
  for (int j = 0; j < N; j++) {
    double g = g_in[j], p = r->p[j];
    switch (o->k) {
    case ADADELTA: {
      const gs_adadelta_options *a = &o->adadelta;
      g = (a->maximize ? -g : g) + a->weight_decay * p;
      r->a[j] = r->a[j] * a->rho + (1 - a->rho) * g * g;
      double delta = sqrt(r->b[j] + a->eps) / sqrt(r->a[j] + a->eps) * g;
      r->b[j] = r->b[j] * a->rho + (1 - a->rho) * delta * delta;
      r->p[j] = p - a->lr * delta;
      break;
    }
    case ADAMAX: {
      const gs_adamax_options *a = &o->adamax;
      g = (a->maximize ? -g : g) + a->weight_decay * p;
      r->a[j] = a->beta1 * r->a[j] + (1 - a->beta1) * g;
      r->b[j] = fmax(a->beta2 * r->b[j], fabs(g) + a->eps);
      r->p[j] = p - a->lr / (1 - pow(a->beta1, t)) * r->a[j] / r->b[j];
      break;
    }
    case NADAM: {
      const gs_nadam_options *a = &o->nadam;
      g = g + a->weight_decay * p;
      r->a[j] = a->beta1 * r->a[j] + (1 - a->beta1) * g;
      r->b[j] = a->beta2 * r->b[j] + (1 - a->beta2) * g * g;
      double denom = sqrt(r->b[j] / (1 - pow(a->beta2, t))) + a->eps;
      r->p[j] = p - a->lr * (1 - mu) / (1 - r->mu_product) * g / denom -
                a->lr * mu_next / (1 - mp_next) * r->a[j] / denom;
      break;
    }
    case RADAM: {
      const gs_radam_options *a = &o->radam;
      g = g + a->weight_decay * p;
      r->a[j] = a->beta1 * r->a[j] + (1 - a->beta1) * g;
      r->b[j] = a->beta2 * r->b[j] + (1 - a->beta2) * g * g;
      double m_hat = r->a[j] / (1 - pow(a->beta1, t));
      if (rho_t > 5) {
        double rect =
            sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        double l = sqrt(1 - pow(a->beta2, t)) / (sqrt(r->b[j]) + a->eps);
        r->p[j] = p - a->lr * m_hat * l * rect;
      } else {
        r->p[j] = p - a->lr * m_hat;
      }
      break;
    }
    case ASGD: {
      const gs_asgd_options *a = &o->asgd;
      g = (a->maximize ? -g : g) + a->weight_decay * p;
      p = p * (1 - a->lambd * r->eta) - r->eta * g;
      r->a[j] = r->mu != 1 ? r->a[j] + (p - r->a[j]) * r->mu : p;
      r->p[j] = p;
      break;
    }
    case RPROP: {
      const gs_rprop_options *a = &o->rprop;
      g = a->maximize ? -g : g;
      double s = g * r->a[j];
      double f = s > 0 ? a->eta_plus : s < 0 ? a->eta_minus : 1.0;
      r->b[j] = fmin(fmax(r->b[j] * f, a->step_size_min), a->step_size_max);
      if (s < 0)
        g = 0;
      r->p[j] = p - (g > 0 ? 1 : g < 0 ? -1 : 0) * r->b[j];
      r->a[j] = g;
      break;
    }
    }
  }
  if (o->k == ASGD) {
    r->eta = f32(o->asgd.lr / pow(1 + o->asgd.lambd * o->asgd.lr * t, o->asgd.alpha));
    r->mu = f32(1 / fmax(1, t - o->asgd.t0));
  }
}

static gs_optimizer make(const options *o, gs_tensor *params, int n) {
  switch (o->k) {
  case ADADELTA: return gs_adadelta_new(params, n, &o->adadelta);
  case ADAMAX: return gs_adamax_new(params, n, &o->adamax);
  case NADAM: return gs_nadam_new(params, n, &o->nadam);
  case RADAM: return gs_radam_new(params, n, &o->radam);
  case ASGD: return gs_asgd_new(params, n, &o->asgd);
  default: return gs_rprop_new(params, n, &o->rprop);
  }
}

static const char *const STATE_NAMES[][2] = {
    [ADADELTA] = {"square_avg", "acc_delta"},
    [ADAMAX] = {"exp_avg", "exp_inf"},
    [NADAM] = {"exp_avg", "exp_avg_sq"},
    [RADAM] = {"exp_avg", "exp_avg_sq"},
    [ASGD] = {"ax", NULL},
    [RPROP] = {"prev", "step_size"},
};

static int state_count(kind k) { return STATE_NAMES[k][1] ? 2 : 1; }

static void check_state(gs_optimizer o, int i, const options *opt, const ref *r, int k) {
  test_set_context("step %d, parameter %d", k, i);
  g_assert_cmpint(gs_optimizer_state_step(o, i), ==, r->step);
  for (int s = 0; s < state_count(opt->k); s++) {
    gs_tensor t = gs_optimizer_state(o, i, STATE_NAMES[opt->k][s]);
    if (r->step == 0)
      g_assert_true(gs_tensor_is_none(t));
    else
      test_assert_values(t, (int64_t[]){N}, 1, s == 0 ? r->a : r->b, 1e-13, 1e-12);
  }
  if (opt->k == ASGD && r->step > 0) {
    g_assert_cmpfloat(gs_optimizer_state_scalar(o, i, "eta"), ==, r->eta);
    g_assert_cmpfloat(gs_optimizer_state_scalar(o, i, "mu"), ==, r->mu);
  }
  if (opt->k == NADAM && r->step > 0)
    g_assert_cmpfloat(gs_optimizer_state_scalar(o, i, "mu_product"), ==, r->mu_product);
}

/* STEPS steps against the reference, the second parameter without a gradient at first; then
 * the state tensors are the only extra live tensors, and they go with the optimizer. */
static void run(const options *opt) {
  uint64_t live0 = gs_live_tensor_count();
  gs_tensor params[2] = {make_param(P0), make_param(P1)};
  gs_optimizer o = make(opt, params, 2);
  g_assert_cmpuint(o.id, !=, 0);
  g_assert_cmpint(gs_optimizer_parameter_count(o), ==, 2);
  g_assert_cmpfloat(gs_optimizer_lr(o), ==, lr_of(opt));
  ref r[2] = {0};
  memcpy(r[0].p, P0, sizeof P0);
  memcpy(r[1].p, P1, sizeof P1);
  for (int k = 0; k < STEPS; k++) {
    bool has[2] = {true, k >= 2};
    train_step(o, params, has, 2, k);
    for (int i = 0; i < 2; i++) {
      if (has[i]) {
        double c[N];
        grad_at(k, i, c);
        ref_step(opt, &r[i], c);
      }
      test_set_context("step %d, parameter %d", k, i);
      test_assert_values(params[i], (int64_t[]){N}, 1, r[i].p, 1e-13, 1e-12);
      check_state(o, i, opt, &r[i], k);
    }
  }
  gs_optimizer_zero_grad(o);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0 + 2 + 2 * (uint64_t)state_count(opt->k));
  /* The state is the optimizer's: users cannot dispose it. */
  EXPECT_ERROR(gs_dispose(gs_optimizer_state(o, 0, STATE_NAMES[opt->k][0])), "optimizer");

  /* The state (state_dict's path) loaded into a fresh optimizer over copies of the
   * parameters: both then step alike. */
  gs_tensor copies[2] = {make_param(r[0].p), make_param(r[1].p)};
  gs_optimizer o2 = make(opt, copies, 2);
  for (int i = 0; i < 2; i++) {
    g_assert_true(gs_optimizer_load_state_step(o2, i, gs_optimizer_state_step(o, i)));
    if (opt->k == ASGD) {
      g_assert_true(gs_optimizer_load_state_scalar(o2, i, "eta", r[i].eta));
      g_assert_true(gs_optimizer_load_state_scalar(o2, i, "mu", r[i].mu));
    }
    if (opt->k == NADAM)
      g_assert_true(gs_optimizer_load_state_scalar(o2, i, "mu_product", r[i].mu_product));
    for (int s = state_count(opt->k) - 1; s >= 0; s--) {
      const char *name = STATE_NAMES[opt->k][s];
      g_assert_true(gs_optimizer_load_state(o2, i, name, gs_optimizer_state(o, i, name)));
    }
  }
  bool all[2] = {true, true};
  for (int k = STEPS; k < STEPS + 3; k++) {
    train_step(o, params, all, 2, k);
    train_step(o2, copies, all, 2, k);
    for (int i = 0; i < 2; i++) {
      double c[N];
      grad_at(k, i, c);
      ref_step(opt, &r[i], c);
      test_set_context("loaded, step %d, parameter %d", k, i);
      test_assert_values(params[i], (int64_t[]){N}, 1, r[i].p, 1e-13, 1e-12);
      test_assert_values(copies[i], (int64_t[]){N}, 1, r[i].p, 1e-13, 1e-12);
    }
  }
  gs_optimizer_dispose(o2);
  gs_dispose(copies[0]);
  gs_dispose(copies[1]);
  gs_optimizer_dispose(o);
  EXPECT_ERROR(gs_optimizer_step(o), "optimizer");
  gs_dispose(params[0]);
  gs_dispose(params[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0);
}

static void test_adadelta(void) {
  run(&(options){.k = ADADELTA, .adadelta = GS_ADADELTA_OPTIONS_DEFAULT});
  run(&(options){.k = ADADELTA, .adadelta = {0.5, 0.8, 1e-4, 0.1, true}});
}
static void test_adamax(void) {
  run(&(options){.k = ADAMAX, .adamax = GS_ADAMAX_OPTIONS_DEFAULT});
  run(&(options){.k = ADAMAX, .adamax = {0.05, 0.8, 0.9, 1e-3, 0.1, true}});
}
static void test_nadam(void) {
  run(&(options){.k = NADAM, .nadam = GS_NADAM_OPTIONS_DEFAULT});
  run(&(options){.k = NADAM, .nadam = {0.05, 0.8, 0.9, 1e-3, 0.1, 0.05}});
}
/* betas (0.8, 0.9): rho_t passes 5 at step 6, so both of RAdam's updates are taken. */
static void test_radam(void) {
  run(&(options){.k = RADAM, .radam = GS_RADAM_OPTIONS_DEFAULT});
  run(&(options){.k = RADAM, .radam = {0.05, 0.8, 0.9, 1e-3, 0.1}});
}
/* t0 = 3: ax is a copy of p for the first steps, an average after. */
static void test_asgd(void) {
  run(&(options){.k = ASGD, .asgd = GS_ASGD_OPTIONS_DEFAULT});
  run(&(options){.k = ASGD, .asgd = {0.05, 0.01, 0.5, 3, 0.1, true}});
}
static void test_rprop(void) {
  run(&(options){.k = RPROP, .rprop = GS_RPROP_OPTIONS_DEFAULT});
  run(&(options){.k = RPROP, .rprop = {0.05, 0.3, 1.5, 1e-3, 0.2, true}});
}

/* ---- options, names, momentum ------------------------------------------------------------ */

static void test_option_checks(void) {
  gs_tensor p = make_param(P0);
  EXPECT_ERROR(gs_adadelta_new(&p, 1, &(gs_adadelta_options){1.0, 1.5, 1e-6, 0, false}),
               "Invalid rho value: 1.5");
  EXPECT_ERROR(gs_adadelta_new(&p, 1, &(gs_adadelta_options){-1.0, 0.9, 1e-6, 0, false}),
               "Invalid learning rate: -1");
  EXPECT_ERROR(gs_adamax_new(&p, 1, &(gs_adamax_options){1e-3, 1.0, 0.9, 1e-8, 0, false}),
               "Invalid beta parameter at index 0: 1");
  EXPECT_ERROR(gs_nadam_new(&p, 1, &(gs_nadam_options){1e-3, 0.9, 0.999, 1e-8, 0, -1}),
               "Invalid momentum_decay value: -1");
  EXPECT_ERROR(gs_radam_new(&p, 1, &(gs_radam_options){1e-3, 0.9, 0.999, -1e-8, 0}),
               "Invalid epsilon value");
  EXPECT_ERROR(gs_asgd_new(&p, 1, &(gs_asgd_options){1e-2, 1e-4, 0.75, 1e6, -1, false}),
               "Invalid weight_decay value: -1");
  EXPECT_ERROR(gs_rprop_new(&p, 1, &(gs_rprop_options){1e-2, 1.1, 1.2, 1e-6, 50, false}),
               "Invalid eta values: 1.1, 1.2");
  EXPECT_ERROR(gs_rprop_new(&p, 0, NULL), "empty parameter list");
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_adamax_new(&ints, 1, NULL), "floating");
  gs_dispose(ints);

  gs_optimizer r = gs_rprop_new(&p, 1, NULL);
  EXPECT_ERROR(gs_optimizer_state(r, 0, "exp_avg"), "expected \"prev\" or \"step_size\"");
  EXPECT_ERROR(gs_optimizer_state(r, 1, "prev"), "out of range");
  EXPECT_ERROR(g_assert_true(isnan(gs_optimizer_state_scalar(r, 0, "eta"))),
               "no scalar state \"eta\"");
  EXPECT_ERROR(g_assert_true(isnan(gs_optimizer_momentum(r))), "Rprop #");
  EXPECT_ERROR(gs_optimizer_set_momentum(r, 0.5), "has no momentum");
  /* Before the first step: no state, step 0. */
  g_assert_true(gs_tensor_is_none(gs_optimizer_state(r, 0, "step_size")));
  g_assert_cmpint(gs_optimizer_state_step(r, 0), ==, 0);
  gs_optimizer_dispose(r);

  gs_optimizer a = gs_asgd_new(&p, 1, &(gs_asgd_options){0.1, 1e-4, 0.75, 1e6, 0, false});
  g_assert_cmpfloat(gs_optimizer_state_scalar(a, 0, "eta"), ==, (double)0.1f);
  EXPECT_ERROR(gs_optimizer_state(a, 0, "prev"), "expected \"ax\"");
  gs_optimizer_dispose(a);

  /* beta1 is the momentum of Adamax, NAdam and RAdam (OneCycleLR cycles it). */
  gs_optimizer n = gs_nadam_new(&p, 1, NULL);
  g_assert_cmpfloat(gs_optimizer_momentum(n), ==, 0.9);
  gs_optimizer_set_momentum(n, 0.85);
  g_assert_cmpfloat(gs_optimizer_momentum(n), ==, 0.85);
  EXPECT_ERROR(gs_optimizer_set_momentum(n, 1.0), "Invalid beta parameter at index 0");
  gs_optimizer_set_lr(n, 0.5);
  g_assert_cmpfloat(gs_optimizer_lr(n), ==, 0.5);
  gs_optimizer_dispose(n);
  gs_dispose(p);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/optim-more/adadelta", test_adadelta);
  test_add_leak_checked("/optim-more/adamax", test_adamax);
  test_add_leak_checked("/optim-more/nadam", test_nadam);
  test_add_leak_checked("/optim-more/radam", test_radam);
  test_add_leak_checked("/optim-more/asgd", test_asgd);
  test_add_leak_checked("/optim-more/rprop", test_rprop);
  test_add_leak_checked("/optim-more/option-checks", test_option_checks);
  return g_test_run();
}
