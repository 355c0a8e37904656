/* activations.c: the activations torch.nn has beyond relu, gelu and sigmoid (silu, elu and
 * selu, softplus, hardtanh and relu6, hardsigmoid, hardswish, logsigmoid, mish), as unary
 * ops with torch's node kinds. Each backward is g times the op's derivative, an internal
 * unary op (kernels.c) over the saved input, so the slopes at the kinks are torch's. Under
 * create_graph (double backward) the same gradient is written with ops that record instead,
 * so it can be differentiated again. */
#include <math.h>

#include "ops-impl.h"

/* A formula's intermediate, disposed when the formula returns. */
static gs_tensor temp(gs_tensor t) { return gs__formula_temp(t); }

static gs_tensor zero_of(gs_tensor g) { return temp(gs_scalar(gs_dtype_of(g), 0.0)); }

/* g times each activation's derivative at a, written with ops that record, so the result is
 * differentiable again; prm: the node's two parameters. They give the kernels' numbers (same
 * branches at the kinks, NaN taking the same one), up to rounding. */
typedef gs_tensor (*recorded_grad_fn)(gs_tensor a, gs_tensor g, const double *prm);

/* s * (1 + a * (1 - s)), s = sigmoid(a), as torch's infinitely_differentiable_silu_backward */
static gs_tensor silu_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  (void)prm;
  gs_tensor s = temp(gs_sigmoid(a));
  gs_tensor d =
      temp(gs_mul(s, temp(gs_add_scalar(temp(gs_mul(a, temp(gs_rsub_scalar(s, 1)))), 1))));
  return gs_mul(g, d);
}

/* alpha * scale * exp(a) where a <= 0, scale elsewhere. exp sees min(a, 0): the branch
 * where() drops still gets a zero gradient, and 0 * exp(large a) would be NaN. */
static gs_tensor elu_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  gs_tensor nonpositive = temp(gs_le_scalar(a, 0));
  gs_tensor clipped = temp(gs_where(nonpositive, a, zero_of(a)));
  gs_tensor slope = temp(gs_mul_scalar(temp(gs_exp(clipped)), prm[0] * prm[1]));
  return gs_where(nonpositive, temp(gs_mul(g, slope)), temp(gs_mul_scalar(g, prm[1])));
}

/* sigmoid(beta * a), 1 where beta * a > threshold (linear there) */
static gs_tensor softplus_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  gs_tensor scaled = temp(gs_mul_scalar(a, prm[0]));
  gs_tensor linear = temp(gs_gt_scalar(scaled, prm[1]));
  return gs_where(linear, g, temp(gs_mul(g, temp(gs_sigmoid(scaled)))));
}

/* 0 where a <= min or a >= max, 1 elsewhere (NaN too) */
static gs_tensor hardtanh_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  gs_tensor outside =
      temp(gs_logical_or(temp(gs_le_scalar(a, prm[0])), temp(gs_ge_scalar(a, prm[1]))));
  return gs_where(outside, zero_of(g), g);
}

/* torch's float 1/6 where -3 < a < 3, 0 elsewhere */
static gs_tensor hardsigmoid_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  (void)prm;
  gs_tensor inside = temp(gs_logical_and(temp(gs_gt_scalar(a, -3)), temp(gs_lt_scalar(a, 3))));
  return gs_where(inside, temp(gs_mul_scalar(g, (double)(1.0f / 6.0f))), zero_of(g));
}

/* 0 below -3, a / 3 + 1/2 on [-3, 3], 1 above (and for NaN) */
static gs_tensor hardswish_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  (void)prm;
  gs_tensor ramp = temp(gs_add_scalar(temp(gs_div_scalar(a, 3)), 0.5));
  gs_tensor upper = temp(gs_where(temp(gs_le_scalar(a, 3)), temp(gs_mul(g, ramp)), g));
  return gs_where(temp(gs_lt_scalar(a, -3)), zero_of(g), upper);
}

/* sigmoid(-a) */
static gs_tensor logsigmoid_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  (void)prm;
  return gs_mul(g, temp(gs_sigmoid(temp(gs_neg(a)))));
}

/* t + a * sigmoid(a) * (1 - t^2), t = tanh(log1p(exp(a))), as torch's
 * infinitely_differentiable_mish_backward */
static gs_tensor mish_grad_recorded(gs_tensor a, gs_tensor g, const double *prm) {
  (void)prm;
  gs_tensor t = temp(gs_tanh(temp(gs_log1p(temp(gs_exp(a))))));
  gs_tensor a_s = temp(gs_mul(a, temp(gs_sigmoid(a))));
  gs_tensor d = temp(gs_add(t, temp(gs_mul(a_s, temp(gs_rsub_scalar(temp(gs_mul(t, t)), 1))))));
  return gs_mul(g, d);
}

/* g times grad_op (the activation's derivative, ops-impl.h) at the saved input, with the
 * node's two parameters: one fused kernel, unless the pass creates a graph. */
static void activation_backward(gs__node *n, gs_tensor g, gs_tensor *grads, gs__unop grad_op,
                                recorded_grad_fn recorded) {
  if (gs__formula_creates_graph()) {
    grads[0] = gs__reduce_grad(n, 0, recorded(gs__saved(n, 0), g, n->reals));
    return;
  }
  gs__unary_params p = {.arg = {n->reals[0], n->reals[1]}};
  gs_tensor d = temp(gs__unary_op(grad_op, gs__saved(n, 0), &p, n->kind->name));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}

#define ACTIVATION_BACKWARD(KIND, GRAD_OP, RECORDED)                                               \
  static void KIND##_formula(gs__node *n, gs_tensor g, gs_tensor *grads) {                         \
    activation_backward(n, g, grads, GRAD_OP, RECORDED);                                           \
  }                                                                                                \
  GS__BACKWARD_TWICE(KIND, KIND##_formula)

ACTIVATION_BACKWARD(SiluBackward, GS__SILU_GRAD, silu_grad_recorded);
ACTIVATION_BACKWARD(EluBackward, GS__ELU_GRAD, elu_grad_recorded); /* selu too, as in torch */
ACTIVATION_BACKWARD(SoftplusBackward, GS__SOFTPLUS_GRAD, softplus_grad_recorded);
/* relu6 too, as in torch */
ACTIVATION_BACKWARD(HardtanhBackward, GS__HARDTANH_GRAD, hardtanh_grad_recorded);
ACTIVATION_BACKWARD(HardsigmoidBackward, GS__HARDSIGMOID_GRAD, hardsigmoid_grad_recorded);
ACTIVATION_BACKWARD(HardswishBackward, GS__HARDSWISH_GRAD, hardswish_grad_recorded);
ACTIVATION_BACKWARD(LogSigmoidBackward, GS__LOGSIGMOID_GRAD, logsigmoid_grad_recorded);
ACTIVATION_BACKWARD(MishBackward, GS__MISH_GRAD, mish_grad_recorded);

/* Runs op over h (integers compute in f32, as torch.exp) and records its node, which saves the
 * input and the two parameters. */
static gs_tensor activation(gs__unop op, const gs__node_kind *kind, gs_tensor h, double arg0,
                            double arg1, const char *fn) {
  gs__unary_params p = {.arg = {arg0, arg1}};
  gs_tensor r = gs__unary_op(op, h, &p, fn); /* records nothing: the op has no kind there */
  if (!r.id)
    return r;
  gs__tensor *in = gs__lookup(h, fn), *out = gs__lookup(r, fn);
  if (!in || !out || !gs__any_requires_grad(1, (const gs__tensor *const[]){in}))
    return r;
  gs__node *n = gs__record(kind, out, 1, (const gs__tensor *const[]){in}, 1);
  if (!n)
    return r;
  gs__save(n, 0, in);
  n->reals[0] = arg0;
  n->reals[1] = arg1;
  return r;
}

/* Checks that a parameter is a finite number, as fn's name. */
static bool finite_param(double v, const char *name, const char *fn) {
  if (isfinite(v))
    return true;
  gs__error(GS_ERR_ARGUMENT, fn, "expected a finite %s, got %g", name, v);
  return false;
}

gs_tensor gs_silu(gs_tensor t) { return activation(GS__SILU, &SiluBackward, t, 0, 0, "silu"); }

gs_tensor gs_elu(gs_tensor t, double alpha) {
  if (!finite_param(alpha, "alpha", "elu"))
    return GS_NO_TENSOR;
  return activation(GS__ELU, &EluBackward, t, alpha, 1.0, "elu");
}

/* torch's constants (Klambauer et al., 2017). */
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946

gs_tensor gs_selu(gs_tensor t) {
  return activation(GS__ELU, &EluBackward, t, SELU_ALPHA, SELU_SCALE, "selu");
}

gs_tensor gs_softplus(gs_tensor t, double beta, double threshold) {
  if (!finite_param(beta, "beta", "softplus") || !finite_param(threshold, "threshold", "softplus"))
    return GS_NO_TENSOR;
  if (beta == 0) {
    gs__error(GS_ERR_ARGUMENT, "softplus", "expected a non-zero beta, got 0");
    return GS_NO_TENSOR;
  }
  return activation(GS__SOFTPLUS, &SoftplusBackward, t, beta, threshold, "softplus");
}

gs_tensor gs_hardtanh(gs_tensor t, double min_val, double max_val) {
  if (isnan(min_val) || isnan(max_val) || min_val > max_val) {
    gs__error(GS_ERR_ARGUMENT, "hardtanh",
              "expected min_val <= max_val, got min_val %g, "
              "max_val %g",
              min_val, max_val);
    return GS_NO_TENSOR;
  }
  return activation(GS__HARDTANH, &HardtanhBackward, t, min_val, max_val, "hardtanh");
}

gs_tensor gs_relu6(gs_tensor t) {
  return activation(GS__HARDTANH, &HardtanhBackward, t, 0.0, 6.0, "relu6");
}

gs_tensor gs_hardsigmoid(gs_tensor t) {
  return activation(GS__HARDSIGMOID, &HardsigmoidBackward, t, 0, 0, "hardsigmoid");
}

gs_tensor gs_hardswish(gs_tensor t) {
  return activation(GS__HARDSWISH, &HardswishBackward, t, 0, 0, "hardswish");
}

gs_tensor gs_logsigmoid(gs_tensor t) {
  return activation(GS__LOGSIGMOID, &LogSigmoidBackward, t, 0, 0, "logsigmoid");
}

gs_tensor gs_mish(gs_tensor t) { return activation(GS__MISH, &MishBackward, t, 0, 0, "mish"); }
