/* linear.c: parameter initialisers (torch.nn.init) and the Linear layer. */
#include <math.h>

#include "core-impl.h"
#include "gradscope/autograd.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

/* Replaces t's values with fresh ones of the same shape (under no_grad: parameters are leaves
 * that require grad, and initialising them is not part of any graph). */
static void assign(gs_tensor t, gs_tensor values) {
  if (!values.id)
    return;
  gs_no_grad_begin();
  gs_copy_(t, values);
  gs_no_grad_end();
  gs_dispose(values);
}

static bool shape_of(gs_tensor t, int64_t *shape, int *ndim, const char *fn) {
  gs__tensor *p = gs__lookup(t, fn);
  if (!p)
    return false;
  if (!gs_dtype_is_floating(p->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating tensor, got %s", gs_dtype_name(p->dtype));
    return false;
  }
  *ndim = gs_shape(t, shape);
  return true;
}

void gs_init_uniform_(gs_tensor t, double low, double high, gs_rng *rng) {
  int64_t shape[GS_MAX_DIMS];
  int nd;
  if (shape_of(t, shape, &nd, "init_uniform_"))
    assign(t, gs_uniform(gs_dtype_of(t), shape, nd, low, high, rng));
}

void gs_init_normal_(gs_tensor t, double mean, double std, gs_rng *rng) {
  int64_t shape[GS_MAX_DIMS];
  int nd;
  if (shape_of(t, shape, &nd, "init_normal_"))
    assign(t, gs_normal(gs_dtype_of(t), shape, nd, mean, std, rng));
}

void gs_init_zeros_(gs_tensor t) {
  gs_no_grad_begin();
  gs_zero_(t);
  gs_no_grad_end();
}

void gs_init_ones_(gs_tensor t) {
  gs_no_grad_begin();
  gs_fill_(t, 1.0);
  gs_no_grad_end();
}

/* torch's _calculate_fan_in_and_fan_out: dims 0 and 1 are out and in; later dims multiply. */
static bool fans(gs_tensor t, double *fan_in, double *fan_out, const char *fn) {
  int64_t shape[GS_MAX_DIMS];
  int nd;
  if (!shape_of(t, shape, &nd, fn))
    return false;
  if (nd < 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "fan in and fan out need at least 2 dimensions, got a %d-D tensor", nd);
    return false;
  }
  double receptive = 1;
  for (int i = 2; i < nd; i++)
    receptive *= (double)shape[i];
  *fan_in = (double)shape[1] * receptive;
  *fan_out = (double)shape[0] * receptive;
  return true;
}

void gs_init_kaiming_uniform_(gs_tensor t, double a, gs_rng *rng) {
  double fan_in, fan_out;
  if (!fans(t, &fan_in, &fan_out, "init_kaiming_uniform_"))
    return;
  double gain = sqrt(2.0 / (1.0 + a * a));
  double bound = fan_in > 0 ? gain * sqrt(3.0 / fan_in) : 0.0;
  gs_init_uniform_(t, -bound, bound, rng);
}

void gs_init_xavier_uniform_(gs_tensor t, gs_rng *rng) {
  double fan_in, fan_out;
  if (!fans(t, &fan_in, &fan_out, "init_xavier_uniform_"))
    return;
  double bound = sqrt(6.0 / (fan_in + fan_out));
  gs_init_uniform_(t, -bound, bound, rng);
}

static const gs_module_type linear_type = {"Linear", gs_linear_forward, NULL};

gs_module gs_linear_new(int64_t in, int64_t out, bool bias, gs_rng *rng) {
  if (in <= 0 || out <= 0) {
    gs__error(GS_ERR_ARGUMENT, "linear_new", "expected positive feature counts, got in %lld, out %lld",
              (long long)in, (long long)out);
    return (gs_module){0};
  }
  gs_module m = gs_module_new_typed(&linear_type, NULL);
  if (!m.id)
    return m;
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, (int64_t[]){out, in}, 2), true);
  gs_init_kaiming_uniform_(w, sqrt(5.0), rng);
  gs_module_register_parameter(m, "weight", w);
  if (bias) {
    gs_tensor b = gs_parameter_new(gs_empty(GS_F32, &out, 1), true);
    double bound = 1.0 / sqrt((double)in);
    gs_init_uniform_(b, -bound, bound, rng);
    gs_module_register_parameter(m, "bias", b);
  }
  return m;
}

gs_tensor gs_linear(gs_tensor x, gs_tensor w, gs_tensor b) {
  gs__tensor *xt = gs__lookup(x, "linear");
  if (!xt || !gs__lookup(w, "linear") || (b.id && !gs__lookup(b, "linear")))
    return GS_NO_TENSOR;
  int nd = xt->ndim;
  gs_tensor wt = gs_t(w);
  if (!wt.id)
    return GS_NO_TENSOR;
  gs_tensor y;
  if (b.id && nd == 2) {
    y = gs_addmm(b, x, wt, 1.0, 1.0);
  } else if (b.id && nd == 3 && gs_is_contiguous(x)) { /* torch's fused path for 3-D input */
    int64_t s[3];
    gs_shape(x, s);
    gs_tensor flat = gs_view(x, (int64_t[]){s[0] * s[1], s[2]}, 2);
    gs_tensor r = flat.id ? gs_addmm(b, flat, wt, 1.0, 1.0) : GS_NO_TENSOR;
    int64_t rs[2] = {0, 0};
    if (r.id)
      gs_shape(r, rs);
    y = r.id ? gs_view(r, (int64_t[]){s[0], s[1], rs[1]}, 3) : GS_NO_TENSOR;
    gs_dispose(flat);
    gs_dispose(r);
  } else {
    gs_tensor xw = gs_matmul(x, wt);
    y = b.id && xw.id ? gs_add(xw, b) : xw;
    if (b.id)
      gs_dispose(xw);
  }
  gs_dispose(wt);
  return y;
}

gs_tensor gs_linear_forward(gs_module m, gs_tensor x) {
  gs_tensor w = gs_module_parameter(m, "weight");
  if (!w.id) {
    gs__error(GS_ERR_ARGUMENT, "linear_forward", "expected a Linear module (it has no weight)");
    return GS_NO_TENSOR;
  }
  return gs_linear(x, w, gs_module_parameter(m, "bias"));
}
