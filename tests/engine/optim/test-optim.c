/* test-optim.c: SGD, Adam and AdamW against torch.optim's update formulas recomputed in plain C.
 *
 * Each case optimizes 3-element f64 parameters whose gradient is set by backward of
 * sum(p * c_k), c_k changing with the step k, so the gradient is exactly c_k. Every step runs
 * inside its own scope (open, loss, backward, step, end), so the optimizer's state must survive
 * the step scopes. After every step each parameter is compared with the reference. Then:
 * parameters without a gradient are skipped (and get their state on their own first step), the
 * option and parameter checks, the stale-handle error, and the live tensor count returning to
 * where it started. The learning rate read and changed between steps (as a scheduler does)
 * takes effect at the next step and keeps the momentum state. The state copied out of one
 * optimizer and loaded into another (state_dict's path) makes them step alike. */
#include "test-util.h"

#define N 3
#define STEPS 5

static const double P0[N] = {0.5, -1.25, 2.0};
static const double P1[N] = {-0.75, 0.3, 1.1};

/* The gradient at step k: changes size and sign so momentum and amsgrad's max matter. */
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

/* loss += sum(p * c), within the current scope (its temporaries go with it). */
static gs_tensor loss_term(gs_tensor p, const double *c) {
  gs_tensor ct = gs_from_data(GS_F64, (int64_t[]){N}, 1, c);
  return gs_sum(gs_mul(p, ct), NULL, 0, false);
}

/* One training step in its own scope: zero_grad, loss over the params with a gradient, backward,
 * step. has_grad[i] false leaves param i out of the loss. */
static void train_step(gs_optimizer o, gs_tensor *params, const bool *has_grad, int n, int k) {
  gs_scope s = gs_scope_begin("step");
  gs_optimizer_zero_grad(o);
  gs_tensor loss = GS_NO_TENSOR;
  for (int i = 0; i < n; i++) {
    if (!has_grad[i])
      continue;
    double c[N];
    grad_at(k, i, c);
    gs_tensor term = loss_term(params[i], c);
    loss = loss.id ? gs_add(loss, term) : term;
  }
  gs_backward(loss);
  gs_optimizer_step(o);
  gs_scope_end(s);
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
}

static void check_param(gs_tensor p, const double *want, int step) {
  test_set_context("step %d", step);
  test_assert_values(p, (int64_t[]){N}, 1, want, 1e-13, 1e-12);
}

/* ---- SGD --------------------------------------------------------------------------------- */

typedef struct ref_sgd {
  double p[N], buf[N];
  bool has_buf;
} ref_sgd;

static void ref_sgd_step(const gs_sgd_options *o, ref_sgd *r, const double *g_in) {
  for (int j = 0; j < N; j++) {
    double g = g_in[j];
    if (o->weight_decay != 0)
      g = g + o->weight_decay * r->p[j];
    if (o->momentum != 0) {
      if (!r->has_buf)
        r->buf[j] = g;
      else
        r->buf[j] = o->momentum * r->buf[j] + (1 - o->dampening) * g;
      g = o->nesterov ? g + o->momentum * r->buf[j] : r->buf[j];
    }
    r->p[j] = r->p[j] + (-o->lr) * g;
  }
  r->has_buf = true;
}

static void run_sgd(gs_sgd_options opt) {
  uint64_t live0 = gs_live_tensor_count();
  gs_tensor params[2] = {make_param(P0), make_param(P1)};
  gs_optimizer o = gs_sgd_new(params, 2, &opt);
  g_assert_cmpint(gs_optimizer_parameter_count(o), ==, 2);
  ref_sgd ref[2] = {0};
  memcpy(ref[0].p, P0, sizeof P0);
  memcpy(ref[1].p, P1, sizeof P1);
  bool all[2] = {true, true};
  for (int k = 0; k < STEPS; k++) {
    train_step(o, params, all, 2, k);
    for (int i = 0; i < 2; i++) {
      double c[N];
      grad_at(k, i, c);
      ref_sgd_step(&opt, &ref[i], c);
      check_param(params[i], ref[i].p, k);
    }
  }
  gs_optimizer_dispose(o);
  gs_dispose(params[0]);
  gs_dispose(params[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0);
}

static void test_sgd_plain(void) { run_sgd((gs_sgd_options){0.1, 0, 0, 0, false}); }
static void test_sgd_momentum(void) { run_sgd((gs_sgd_options){0.1, 0.9, 0, 0, false}); }
static void test_sgd_dampening_decay(void) {
  run_sgd((gs_sgd_options){0.05, 0.8, 0.3, 0.01, false});
}
static void test_sgd_nesterov(void) { run_sgd((gs_sgd_options){0.1, 0.9, 0, 0.02, true}); }

/* A new rate between steps: the next step uses it, the momentum buffer carries on. */
static void test_set_lr_between_steps(void) {
  gs_sgd_options opt = {0.1, 0.9, 0, 0, false};
  gs_tensor p = make_param(P0);
  gs_optimizer o = gs_sgd_new(&p, 1, &opt);
  g_assert_cmpfloat(gs_optimizer_lr(o), ==, 0.1);
  ref_sgd ref = {0};
  memcpy(ref.p, P0, sizeof P0);
  bool all[1] = {true};
  for (int k = 0; k < STEPS; k++) {
    opt.lr = 0.1 * pow(0.5, k);
    gs_optimizer_set_lr(o, opt.lr);
    g_assert_cmpfloat(gs_optimizer_lr(o), ==, opt.lr);
    train_step(o, &p, all, 1, k);
    double c[N];
    grad_at(k, 0, c);
    ref_sgd_step(&opt, &ref, c);
    check_param(p, ref.p, k);
  }
  EXPECT_ERROR(gs_optimizer_set_lr(o, -1.0), "Invalid learning rate");
  EXPECT_ERROR(gs_optimizer_set_lr(o, NAN), "Invalid learning rate");
  g_assert_cmpfloat(gs_optimizer_lr(o), ==, opt.lr);
  gs_optimizer adam = gs_adam_new(&p, 1, NULL);
  g_assert_cmpfloat(gs_optimizer_lr(adam), ==, 1e-3);
  gs_optimizer_set_lr(adam, 0.25);
  g_assert_cmpfloat(gs_optimizer_lr(adam), ==, 0.25);
  gs_optimizer_dispose(adam);
  gs_optimizer_dispose(o);
  EXPECT_ERROR(g_assert_true(isnan(gs_optimizer_lr(o))), "optimizer");
  EXPECT_ERROR(gs_optimizer_set_lr(o, 0.1), "optimizer");
  gs_dispose(p);
}

/* ---- Adam / AdamW ------------------------------------------------------------------------ */

typedef struct ref_adam {
  double p[N], m[N], v[N], vmax[N];
  int step;
} ref_adam;

static void ref_adam_step(const gs_adam_options *o, bool decoupled, ref_adam *r,
                          const double *g_in) {
  r->step++;
  double bc1 = 1 - pow(o->beta1, r->step), bc2 = 1 - pow(o->beta2, r->step);
  double step_size = o->lr / bc1;
  for (int j = 0; j < N; j++) {
    double g = g_in[j];
    if (o->weight_decay != 0) {
      if (decoupled)
        r->p[j] *= 1 - o->lr * o->weight_decay;
      else
        g = g + o->weight_decay * r->p[j];
    }
    r->m[j] = o->beta1 * r->m[j] + (1 - o->beta1) * g;
    r->v[j] = o->beta2 * r->v[j] + (1 - o->beta2) * g * g;
    double v = r->v[j];
    if (o->amsgrad) {
      r->vmax[j] = fmax(r->vmax[j], r->v[j]);
      v = r->vmax[j];
    }
    double denom = sqrt(v) / sqrt(bc2) + o->eps;
    r->p[j] += -step_size * (r->m[j] / denom);
  }
}

/* A new momentum between steps (OneCycleLR's): SGD's momentum going from 0 (the buffer made
 * at the first step with momentum) to 0.9, 0.5, back to 0 (the buffer left alone) and 0.8;
 * Adam's beta1 changing each step (the bias correction uses the current one, as torch's). */
static void test_set_momentum_between_steps(void) {
  const double sgd_m[STEPS] = {0.0, 0.9, 0.5, 0.0, 0.8};
  const double adam_b1[STEPS] = {0.9, 0.85, 0.95, 0.8, 0.9};
  gs_sgd_options sopt = {0.1, 0.0, 0, 0, false};
  gs_adam_options aopt = {0.05, 0.9, 0.999, 1e-8, 0, false};
  gs_tensor p = make_param(P0), q = make_param(P1);
  gs_optimizer sgd = gs_sgd_new(&p, 1, &sopt), adam = gs_adam_new(&q, 1, &aopt);
  ref_sgd rs = {0};
  ref_adam ra = {0};
  memcpy(rs.p, P0, sizeof P0);
  memcpy(ra.p, P1, sizeof P1);
  bool all[1] = {true};
  for (int k = 0; k < STEPS; k++) {
    sopt.momentum = sgd_m[k];
    aopt.beta1 = adam_b1[k];
    gs_optimizer_set_momentum(sgd, sopt.momentum);
    gs_optimizer_set_momentum(adam, aopt.beta1);
    g_assert_cmpfloat(gs_optimizer_momentum(sgd), ==, sopt.momentum);
    g_assert_cmpfloat(gs_optimizer_momentum(adam), ==, aopt.beta1);
    train_step(sgd, &p, all, 1, k);
    train_step(adam, &q, all, 1, k);
    double c[N];
    grad_at(k, 0, c);
    if (sopt.momentum != 0 || rs.has_buf) {
      ref_sgd_step(&sopt, &rs, c);
    } else { /* no buffer yet: plain SGD, and the first step with momentum makes it */
      for (int j = 0; j < N; j++)
        rs.p[j] += -sopt.lr * c[j];
    }
    check_param(p, rs.p, k);
    grad_at(k, 0, c);
    ref_adam_step(&aopt, false, &ra, c);
    check_param(q, ra.p, k);
  }
  EXPECT_ERROR(gs_optimizer_set_momentum(sgd, -0.1), "Invalid momentum value");
  EXPECT_ERROR(gs_optimizer_set_momentum(adam, 1.0), "Invalid beta parameter at index 0");
  g_assert_cmpfloat(gs_optimizer_momentum(adam), ==, 0.9);
  gs_optimizer nesterov = gs_sgd_new(&p, 1, &(gs_sgd_options){0.1, 0.9, 0, 0, true});
  EXPECT_ERROR(gs_optimizer_set_momentum(nesterov, 0.0), "nesterov");
  gs_optimizer_dispose(nesterov);
  gs_optimizer_dispose(sgd);
  gs_optimizer_dispose(adam);
  EXPECT_ERROR(g_assert_true(isnan(gs_optimizer_momentum(sgd))), "optimizer");
  gs_dispose(p);
  gs_dispose(q);
}

static void run_adam(gs_adam_options opt, bool decoupled) {
  uint64_t live0 = gs_live_tensor_count();
  gs_tensor params[2] = {make_param(P0), make_param(P1)};
  gs_optimizer o = decoupled ? gs_adamw_new(params, 2, &opt) : gs_adam_new(params, 2, &opt);
  ref_adam ref[2] = {0};
  memcpy(ref[0].p, P0, sizeof P0);
  memcpy(ref[1].p, P1, sizeof P1);
  bool all[2] = {true, true};
  for (int k = 0; k < STEPS; k++) {
    train_step(o, params, all, 2, k);
    for (int i = 0; i < 2; i++) {
      double c[N];
      grad_at(k, i, c);
      ref_adam_step(&opt, decoupled, &ref[i], c);
      check_param(params[i], ref[i].p, k);
    }
  }
  gs_optimizer_dispose(o);
  gs_dispose(params[0]);
  gs_dispose(params[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0);
}

static void test_adam(void) { run_adam((gs_adam_options){0.01, 0.9, 0.999, 1e-8, 0, false}, false); }
static void test_adam_defaults(void) { run_adam(GS_ADAM_OPTIONS_DEFAULT, false); }
static void test_adam_weight_decay(void) {
  run_adam((gs_adam_options){0.05, 0.8, 0.99, 1e-6, 0.1, false}, false);
}
static void test_adam_amsgrad(void) {
  run_adam((gs_adam_options){0.05, 0.9, 0.999, 1e-8, 0.05, true}, false);
}
static void test_adamw(void) { run_adam((gs_adam_options){0.05, 0.9, 0.999, 1e-8, 0.1, false}, true); }
static void test_adamw_amsgrad(void) {
  run_adam((gs_adam_options){0.02, 0.85, 0.995, 1e-8, 0.01, true}, true);
}

/* ---- skipping parameters without a gradient ---------------------------------------------- */

static void test_skip_without_grad(void) {
  gs_adam_options opt = {0.05, 0.9, 0.999, 1e-8, 0.1, false};
  gs_tensor params[2] = {make_param(P0), make_param(P1)};
  gs_optimizer o = gs_adamw_new(params, 2, &opt);
  ref_adam ref[2] = {0};
  memcpy(ref[0].p, P0, sizeof P0);
  memcpy(ref[1].p, P1, sizeof P1);
  /* Param 1 gets no gradient on steps 0 and 1: untouched (not even decayed), no state yet. */
  for (int k = 0; k < STEPS; k++) {
    bool has[2] = {true, k >= 2};
    train_step(o, params, has, 2, k);
    for (int i = 0; i < 2; i++) {
      if (has[i]) {
        double c[N];
        grad_at(k, i, c);
        ref_adam_step(&opt, true, &ref[i], c);
      }
      check_param(params[i], ref[i].p, k);
    }
    if (k < 2)
      g_assert_true(gs_tensor_is_none(gs_grad(params[1])));
  }
  g_assert_cmpint(ref[1].step, ==, STEPS - 2);

  /* SGD with momentum too: a parameter without a gradient keeps its value. */
  gs_sgd_options sopt = {0.1, 0.9, 0, 0, false};
  gs_optimizer s = gs_sgd_new(params, 2, &sopt);
  double before[N];
  memcpy(before, ref[1].p, sizeof before);
  train_step(s, params, (bool[]){true, false}, 2, 0);
  check_param(params[1], before, 0);

  gs_optimizer_dispose(s);
  gs_optimizer_dispose(o);
  gs_dispose(params[0]);
  gs_dispose(params[1]);
}

/* ---- state lifetime ------------------------------------------------------------------------ */

/* State is made inside the step scope but belongs to the optimizer: after the scope ends the
 * extra live tensors are exactly the state (2 momentum buffers; 2 x 2 Adam moments; params
 * and their grads), and disposing the optimizer frees them. */
static void test_state_outlives_scopes(void) {
  uint64_t live0 = gs_live_tensor_count();
  gs_tensor params[2] = {make_param(P0), make_param(P1)};
  bool all[2] = {true, true};

  gs_optimizer o = gs_sgd_new(params, 2, &(gs_sgd_options){0.1, 0.9, 0, 0, false});
  train_step(o, params, all, 2, 0);
  uint64_t with_grads = gs_live_tensor_count();
  gs_optimizer_zero_grad(o);
  g_assert_true(gs_tensor_is_none(gs_grad(params[0])));
  uint64_t without_grads = gs_live_tensor_count();
  g_assert_cmpuint(with_grads - without_grads, ==, 2);
  g_assert_cmpuint(without_grads, ==, live0 + 2 + 2); /* params + momentum buffers */
  gs_optimizer_dispose(o);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0 + 2);

  gs_optimizer a = gs_adam_new(params, 2, &(gs_adam_options){0.01, 0.9, 0.999, 1e-8, 0, true});
  train_step(a, params, all, 2, 0);
  train_step(a, params, all, 2, 1);
  gs_optimizer_zero_grad(a);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0 + 2 + 2 * 3); /* exp_avg, _sq, max */
  gs_optimizer_dispose(a);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0 + 2);

  /* Parameters owned by a module work the same way. */
  gs_module m = gs_module_new("Test");
  gs_module_register_parameter(m, "w", gs_parameter_new(make_param(P0), true));
  gs_tensor w = gs_module_parameter_at(m, 0, NULL);
  gs_optimizer mo = gs_sgd_new(&w, gs_module_parameter_count(m),
                               &(gs_sgd_options){0.1, 0.5, 0, 0, false});
  ref_sgd ref = {0};
  memcpy(ref.p, P0, sizeof P0);
  for (int k = 0; k < 3; k++) {
    train_step(mo, &w, all, 1, k);
    double c[N];
    grad_at(k, 0, c);
    ref_sgd_step(&(gs_sgd_options){0.1, 0.5, 0, 0, false}, &ref, c);
    check_param(w, ref.p, k);
  }
  gs_optimizer_dispose(mo);
  gs_module_dispose(m);

  gs_dispose(params[0]);
  gs_dispose(params[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live0);
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors(void) {
  gs_tensor p = make_param(P0);
  gs_optimizer bad = {0};

  EXPECT_ERROR(bad = gs_sgd_new(&p, 1, &(gs_sgd_options){-0.1, 0, 0, 0, false}),
               "Invalid learning rate");
  g_assert_cmpuint(bad.id, ==, 0);
  EXPECT_ERROR(gs_sgd_new(&p, 1, &(gs_sgd_options){0.1, -1, 0, 0, false}),
               "Invalid momentum value");
  EXPECT_ERROR(gs_sgd_new(&p, 1, &(gs_sgd_options){0.1, 0.9, 0, -1, false}),
               "Invalid weight_decay value");
  EXPECT_ERROR(gs_sgd_new(&p, 1, &(gs_sgd_options){0.1, 0, 0, 0, true}),
               "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_ERROR(gs_sgd_new(&p, 1, &(gs_sgd_options){0.1, 0.9, 0.1, 0, true}),
               "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_ERROR(gs_adam_new(&p, 1, &(gs_adam_options){-1, 0.9, 0.999, 1e-8, 0, false}),
               "Invalid learning rate");
  EXPECT_ERROR(gs_adam_new(&p, 1, &(gs_adam_options){1e-3, 1.0, 0.999, 1e-8, 0, false}),
               "Invalid beta parameter at index 0");
  EXPECT_ERROR(gs_adamw_new(&p, 1, &(gs_adam_options){1e-3, 0.9, -0.1, 1e-8, 0, false}),
               "Invalid beta parameter at index 1");
  EXPECT_ERROR(gs_adam_new(&p, 1, &(gs_adam_options){1e-3, 0.9, 0.999, -1, 0, false}),
               "Invalid epsilon value");
  EXPECT_ERROR(gs_adamw_new(&p, 1, &(gs_adam_options){1e-3, 0.9, 0.999, 1e-8, -1, false}),
               "Invalid weight_decay value");
  EXPECT_ERROR(gs_adam_new(&p, 0, NULL), "empty parameter list");

  /* Parameters: alive, floating, leaves. */
  gs_tensor nonleaf = gs_mul_scalar(p, 2.0);
  EXPECT_ERROR(gs_sgd_new(&nonleaf, 1, NULL), "non-leaf");
  gs_dispose(nonleaf);
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){N}, 1);
  EXPECT_ERROR(gs_adam_new(&ints, 1, NULL), "floating");
  gs_dispose(ints);
  gs_tensor gone = gs_zeros(GS_F64, (int64_t[]){N}, 1);
  gs_dispose(gone);
  EXPECT_ERROR(gs_sgd_new(&gone, 1, NULL), "not a live tensor");

  /* A disposed optimizer's handle is stale; a disposed parameter is reported by step. */
  gs_optimizer o = gs_sgd_new(&p, 1, NULL);
  gs_optimizer_dispose(o);
  EXPECT_ERROR(gs_optimizer_step(o), "stale: the optimizer was disposed");
  EXPECT_ERROR(gs_optimizer_zero_grad(o), "stale");
  EXPECT_ERROR(gs_optimizer_dispose(o), "stale");
  EXPECT_ERROR(gs_optimizer_step((gs_optimizer){0}), "empty");
  gs_optimizer o2 = gs_adam_new(&p, 1, NULL); /* reuses the record: o stays stale */
  EXPECT_ERROR(gs_optimizer_step(o), "stale");
  gs_tensor q = make_param(P1);
  gs_optimizer o3 = gs_sgd_new((gs_tensor[]){p, q}, 2, NULL);
  gs_dispose(q);
  EXPECT_ERROR(gs_optimizer_step(o3), "was disposed while the optimizer still holds it");
  gs_optimizer_dispose(o3);
  gs_optimizer_dispose(o2);

  gs_dispose(p);
}

/* A stale optimizer handle names its disposal and when after its slot has held 100 more
 * optimizers (a sweep makes one per run). */
static void test_stale_optimizer_keeps_its_story_after_100_reuses(void) {
  gs_tensor p = make_param(P0);
  gs_optimizer old = gs_adam_new(&p, 1, NULL);
  gs_optimizer_dispose(old);
  uint64_t disposed_at = gs_event_counter(); /* it had no state to dispose */
  for (int i = 0; i < 100; i++) {
    gs_optimizer o = gs_sgd_new(&p, 1, NULL);
    g_assert_cmpuint(o.id & 0xffffffffu, ==, old.id & 0xffffffffu);
    gs_optimizer_dispose(o);
  }
  char expected[200];
  unsigned index = (unsigned)(old.id & 0xffffffffu);
  g_snprintf(expected, sizeof expected,
             "optimizer #%u.%u is stale: the optimizer was disposed by the disposal of optimizer "
             "Adam #%u at event %llu (its slot has held 100 optimizers since)",
             index, (unsigned)(old.id >> 32), index, (unsigned long long)disposed_at);
  EXPECT_ERROR(gs_optimizer_step(old), expected);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  gs_dispose(p);
}

/* state_dict / load_state_dict: an optimizer's state copied into a fresh one for the same
 * parameters' copies makes both step alike; names, shapes and indices are checked. */
static void test_state_round_trip(void) {
  gs_adam_options opt = {0.05, 0.9, 0.999, 1e-8, 0.01, true};
  gs_tensor a[2] = {make_param(P0), make_param(P1)}, b[2] = {make_param(P0), make_param(P1)};
  gs_optimizer oa = gs_adam_new(a, 2, &opt), ob = gs_adam_new(b, 2, &opt);
  g_assert_cmpuint(gs_optimizer_state(oa, 0, "exp_avg").id, ==, 0); /* before a step: none */
  g_assert_cmpint(gs_optimizer_state_step(oa, 0), ==, 0);
  bool both[2] = {true, true};
  for (int k = 0; k < 3; k++)
    train_step(oa, a, both, 2, k);
  g_assert_cmpint(gs_optimizer_state_step(oa, 1), ==, 3);
  for (int i = 0; i < 2; i++) {
    gs_no_grad_begin();
    gs_copy_(b[i], a[i]);
    gs_no_grad_end();
    for (const char *const *name =
             (const char *const[]){"exp_avg", "exp_avg_sq", "max_exp_avg_sq", NULL};
         *name; name++)
      g_assert_true(gs_optimizer_load_state(ob, i, *name, gs_optimizer_state(oa, i, *name)));
    g_assert_true(gs_optimizer_load_state_step(ob, i, gs_optimizer_state_step(oa, i)));
  }
  for (int k = 3; k < STEPS; k++) {
    train_step(oa, a, both, 2, k);
    train_step(ob, b, both, 2, k);
  }
  for (int i = 0; i < 2; i++) {
    double want[N];
    gs_copy_to(a[i], want, sizeof want);
    check_param(b[i], want, STEPS);
  }
  EXPECT_ERROR(gs_optimizer_state(oa, 0, "momentum_buffer"), "has no state \"momentum_buffer\"");
  EXPECT_ERROR(gs_optimizer_state(oa, 2, "exp_avg"), "out of range");
  gs_tensor wrong = gs_zeros(GS_F64, (int64_t[]){2}, 1);
  EXPECT_ERROR(gs_optimizer_load_state(ob, 0, "exp_avg", wrong), "expected shape [3], got [2]");
  EXPECT_ERROR(gs_optimizer_load_state_step(ob, 0, -1), "expected a step count >= 0");
  gs_dispose(wrong);
  gs_optimizer sgd = gs_sgd_new(a, 1, &(gs_sgd_options){0.1, 0.9, 0, 0, false});
  gs_tensor buf = gs_full(GS_F64, (int64_t[]){N}, 1, 0.5);
  g_assert_true(gs_optimizer_load_state(sgd, 0, "momentum_buffer", buf));
  test_assert_values(gs_optimizer_state(sgd, 0, "momentum_buffer"), (int64_t[]){N}, 1,
                     (double[]){0.5, 0.5, 0.5}, 0, 0);
  g_assert_cmpint(gs_optimizer_state_step(sgd, 0), ==, 0);
  gs_dispose(buf);
  gs_optimizer_dispose(sgd);
  gs_optimizer_dispose(oa);
  gs_optimizer_dispose(ob);
  DISPOSE_ALL(a[0], a[1], b[0], b[1]);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/optim/sgd/plain", test_sgd_plain);
  g_test_add_func("/optim/sgd/momentum", test_sgd_momentum);
  g_test_add_func("/optim/sgd/dampening-weight-decay", test_sgd_dampening_decay);
  g_test_add_func("/optim/sgd/nesterov", test_sgd_nesterov);
  g_test_add_func("/optim/adam/basic", test_adam);
  g_test_add_func("/optim/adam/defaults", test_adam_defaults);
  g_test_add_func("/optim/adam/weight-decay", test_adam_weight_decay);
  g_test_add_func("/optim/adam/amsgrad", test_adam_amsgrad);
  g_test_add_func("/optim/adamw/basic", test_adamw);
  g_test_add_func("/optim/adamw/amsgrad", test_adamw_amsgrad);
  test_add_leak_checked("/optim/skip-without-grad", test_skip_without_grad);
  g_test_add_func("/optim/state-outlives-scopes", test_state_outlives_scopes);
  test_add_leak_checked("/optim/errors", test_errors);
  test_add_leak_checked("/optim/state-round-trip", test_state_round_trip);
  test_add_leak_checked("/optim/set-lr-between-steps", test_set_lr_between_steps);
  test_add_leak_checked("/optim/set-momentum-between-steps", test_set_momentum_between_steps);
  test_add_leak_checked("/optim/stale-optimizer-keeps-its-story-after-100-reuses",
                        test_stale_optimizer_keeps_its_story_after_100_reuses);
  return g_test_run();
}
