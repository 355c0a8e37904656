/* elementwise.c: the out-of-place elementwise ops (arithmetic, comparisons, unary math,
 * where) and their backward formulas. Each public op is one line naming its operation code;
 * the shared paths do validation, broadcasting, dtype promotion and the run over
 * gs__iter_run, then record a graph node when an input requires grad. Each op's formula sits
 * with its family, written with the public ops: the chain rule as it reads on paper. */
#include <math.h>
#include <string.h>

#include "ops-impl.h"

/* ---- dtype rules ---------------------------------------------------------------------- */

gs_dtype gs__result_type(const gs__tensor *a, const gs__tensor *b) {
  bool a_dim = a->ndim > 0, b_dim = b->ndim > 0;
  if (a_dim == b_dim)
    return gs_promote_types(a->dtype, b->dtype);
  const gs__tensor *dimmed = a_dim ? a : b, *zero = a_dim ? b : a;
  /* A 0-dim operand decides only when it is of a higher category. */
  return gs__dtype_category(zero->dtype) > gs__dtype_category(dimmed->dtype) ? zero->dtype : dimmed->dtype;
}

/* A double scalar is a floating operand of the default dtype: it keeps floating tensors'
 * dtype and turns integer and bool tensors into f32. */
static gs_dtype scalar_result_type(gs_dtype t) {
  return gs_dtype_is_floating(t) ? t : gs_default_dtype();
}

void gs__report_broadcast(const char *fn, const int64_t *a, int na, const int64_t *b, int nb) {
  char sa[GS__SHAPE_STR], sb[GS__SHAPE_STR];
  int n = na > nb ? na : nb;
  /* Trailing dims first, as broadcasting aligns shapes from the right. */
  for (int i = n - 1; i >= 0; i--) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    if (x != y && x != 1 && y != 1) {
      gs__error(GS_ERR_SHAPE, fn,
                "shapes %s and %s cannot be broadcast together (dim %d: %lld vs %lld)",
                gs__shape_str(sa, a, na), gs__shape_str(sb, b, nb), i, (long long)x,
                (long long)y);
      return;
    }
  }
}

/* ---- runs --------------------------------------------------------------------------- */

void gs__run_binary(gs__binop op, gs_dtype compute, gs__tensor *out, const gs__tensor *a,
                    const gs__tensor *b) {
  int64_t strides[3][GS_MAX_DIMS];
  memcpy(strides[0], out->strides, sizeof strides[0]);
  gs__broadcast_strides(a, out->shape, out->ndim, strides[1]);
  gs__broadcast_strides(b, out->shape, out->ndim, strides[2]);
  char *data[3] = {gs__tensor_data(out), gs__tensor_data(a), gs__tensor_data(b)};
  size_t sizes[3] = {gs__elsize(out->dtype), gs__elsize(compute), gs__elsize(compute)};
  gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, out->shape, out->ndim,
               gs__binary_loop(op, compute), NULL);
}

void gs__run_unary(gs__unop op, gs_dtype compute, gs__tensor *out, const gs__tensor *in,
                   const gs__unary_params *params) {
  int64_t strides[2][GS_MAX_DIMS];
  memcpy(strides[0], out->strides, sizeof strides[0]);
  gs__broadcast_strides(in, out->shape, out->ndim, strides[1]);
  char *data[2] = {gs__tensor_data(out), gs__tensor_data(in)};
  size_t sizes[2] = {gs__elsize(compute), gs__elsize(compute)};
  gs__unary_params none = {0};
  gs__iter_run(2, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, out->shape, out->ndim,
               gs__unary_loop(op, compute), (void *)(params ? params : &none));
}

/* The first value of an integer operand that bad() refuses, reported as fn with why (which
 * ends in an open parenthesis the value closes), before
 * any loop runs: integer pow has no negative exponents (PyTorch refuses them too), integer
 * //, % and fmod no zero divisor (it would trap). */
bool gs__check_int_operand(const gs__tensor *b, bool (*bad)(int64_t), const char *why,
                           const char *fn) {
  gs__tensor c;
  if (!gs__as_contiguous(b, GS_I64, &c, fn))
    return false;
  const int64_t *v = (const int64_t *)gs__tensor_data(&c);
  bool ok = true;
  for (int64_t i = 0; i < c.numel && ok; i++)
    if (bad(v[i])) {
      gs__error(GS_ERR_ARGUMENT, fn, "%s%lld)", why, (long long)v[i]);
      ok = false;
    }
  gs__tensor_release(&c);
  return ok;
}
bool gs__is_negative(int64_t v) { return v < 0; }
static bool is_zero(int64_t v) { return v == 0; }

static void report_unsupported(const char *fn, gs_dtype dtype) {
  gs__error(GS_ERR_DTYPE, fn, "%s tensors are not supported%s", gs_dtype_name(dtype),
            dtype == GS_BOOL ? " (convert with to_dtype first)" : "");
}

/* a op b for two looked-up operands; the shared body of tensor and scalar forms. */
static gs_tensor binary(gs__binop op, const gs__tensor *a, const gs__tensor *b,
                        gs_dtype compute, const char *fn) {
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  if (!gs__broadcast_shapes(a->shape, a->ndim, b->shape, b->ndim, shape, &ndim)) {
    gs__report_broadcast(fn, a->shape, a->ndim, b->shape, b->ndim);
    return GS_NO_TENSOR;
  }
  if ((op == GS__DIV || op == GS__ATAN2) && !gs_dtype_is_floating(compute))
    compute = gs_default_dtype(); /* true division; atan2 of integers too, as in torch */
  if (!gs__binary_loop(op, compute)) {
    report_unsupported(fn, compute);
    return GS_NO_TENSOR;
  }
  /* Operands of another dtype are converted first: rare (mixed dtypes), and it keeps one
   * typed loop per op. */
  gs__tensor ca, cb;
  const gs__tensor *pa = a, *pb = b;
  bool conv_a = a->dtype != compute, conv_b = b->dtype != compute;
  if (conv_a && !gs__as_contiguous(a, compute, &ca, fn))
    return GS_NO_TENSOR;
  if (conv_b && !gs__as_contiguous(b, compute, &cb, fn)) {
    if (conv_a)
      gs__tensor_release(&ca);
    return GS_NO_TENSOR;
  }
  if (conv_a)
    pa = &ca;
  if (conv_b)
    pb = &cb;
  /* The divisor and exponent are checked as the loop will read them, after conversion: an
   * i64 -2^63 is 0 as an i32 divisor. */
  bool ok = true;
  if (op == GS__POW && gs_dtype_is_integer(compute))
    ok = gs__check_int_operand(
        pb, gs__is_negative, "integers to negative integer powers are not allowed (exponent ", fn);
  if ((op == GS__FLOOR_DIV || op == GS__REMAINDER || op == GS__FMOD) &&
      gs_dtype_is_integer(compute))
    ok = gs__check_int_operand(pb, is_zero, "integer division by zero (divisor ", fn);
  if (!ok) {
    if (conv_a)
      gs__tensor_release(&ca);
    if (conv_b)
      gs__tensor_release(&cb);
    return GS_NO_TENSOR;
  }

  gs__tensor *out;
  gs_dtype out_dtype = gs__binop_is_comparison(op) ? GS_BOOL : compute;
  gs_tensor h = gs__tensor_new_like(out_dtype, shape, ndim, (const gs__tensor *[]){a, b}, 2, fn,
                                    &out); /* laid out as a (or b) is, as torch's */
  if (h.id)
    gs__run_binary(op, compute, out, pa, pb);
  if (conv_a)
    gs__tensor_release(&ca);
  if (conv_b)
    gs__tensor_release(&cb);
  return h;
}


/* ---- backward formulas: binary ---------------------------------------------------------- */

/* A 0-dim zero of g's dtype, for where(mask, 0, g). */
static gs_tensor zero_of(gs_tensor g) { return gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0)); }

/* d(a + b) = g, g */
static void add_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad_through(n, 1, g);
}
GS__BACKWARD_TWICE(AddBackward, add_backward);

/* d(a - b) = g, -g */
static void sub_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_neg(g));
}
GS__BACKWARD_TWICE(SubBackward, sub_backward);

/* d(a * b) = g * b, g * a */
static void mul_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__saved(n, 1)));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_mul(g, gs__saved(n, 0)));
}
GS__BACKWARD_TWICE(MulBackward, mul_backward);

/* d(a / b) = g / b, -g * a / b^2 */
static void div_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_div(g, b));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1,
                               gs_neg(gs__formula_temp(gs_div(gs__formula_temp(gs_mul(g, a)),
                                                              gs__formula_temp(gs_mul(b, b))))));
}
GS__BACKWARD_TWICE(DivBackward, div_backward);

/* d(a ^ b) = g * b * a^(b-1) (0 where b == 0), g * a^b * log(a) (0 where a == 0 and b >= 0,
 * PyTorch's convention at the edge of log's domain) */
static void pow_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  /* pow_ (in place) saves only its operands: its output is computed again */
  gs_tensor out = n->n_saved > 2 ? gs__saved(n, 2) : gs__formula_temp(gs_pow(a, b));
  if (gs__needs_grad(n, 0)) {
    gs_tensor d = gs__formula_temp(
        gs_mul(b, gs__formula_temp(gs_pow(a, gs__formula_temp(gs_sub_scalar(b, 1))))));
    d = gs__formula_temp(gs_where(gs__formula_temp(gs_eq_scalar(b, 0)), zero_of(d), d));
    grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
  }
  if (gs__needs_grad(n, 1)) {
    gs_tensor d = gs__formula_temp(gs_mul(out, gs__formula_temp(gs_log(a))));
    gs_tensor edge = gs__formula_temp(
        gs_mul(gs__formula_temp(gs_eq_scalar(a, 0)), gs__formula_temp(gs_ge_scalar(b, 0))));
    d = gs__formula_temp(gs_where(edge, zero_of(d), d));
    grads[1] = gs__reduce_grad(n, 1, gs_mul(g, d));
  }
}
GS__BACKWARD_TWICE(PowBackward, pow_backward);

/* max(a, b) sends g to the larger input, half to each on a tie (as torch.maximum). */
static void extremum_backward(gs__node *n, gs_tensor g, gs_tensor *grads, bool maximum) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  gs_tensor half = gs__formula_temp(
      gs_where(gs__formula_temp(gs_eq(a, b)), gs__formula_temp(gs_mul_scalar(g, 0.5)), g));
  gs_tensor a_loses = gs__formula_temp(maximum ? gs_lt(a, b) : gs_gt(a, b));
  gs_tensor b_loses = gs__formula_temp(maximum ? gs_gt(a, b) : gs_lt(a, b));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_where(a_loses, zero_of(half), half));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_where(b_loses, zero_of(half), half));
}
static void maximum_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  extremum_backward(n, g, grads, true);
}
static void minimum_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  extremum_backward(n, g, grads, false);
}
GS__BACKWARD_TWICE(MaximumBackward, maximum_backward);
GS__BACKWARD_TWICE(MinimumBackward, minimum_backward);

/* d(a % b) = d(a - floor(a / b) * b) = g, -floor(a / b) * g (floor's own gradient is 0) */
static void remainder_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 1)) {
    gs_tensor q = gs__formula_temp(gs_floor(gs__formula_temp(gs_div(a, b))));
    grads[1] = gs__reduce_grad(n, 1, gs_neg(gs__formula_temp(gs_mul(g, q))));
  }
}
GS__BACKWARD_TWICE(RemainderBackward, remainder_backward);

/* d fmod(a, b) = d(a - trunc(a / b) * b) = g, -trunc(a / b) * g */
static void fmod_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), b = gs__saved(n, 1);
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 1)) {
    gs_tensor q = gs__formula_temp(gs_trunc(gs__formula_temp(gs_div(a, b))));
    grads[1] = gs__reduce_grad(n, 1, gs_neg(gs__formula_temp(gs_mul(g, q))));
  }
}
GS__BACKWARD_TWICE(FmodBackward, fmod_backward);

/* d atan2(y, x) = g * x / (x^2 + y^2), -g * y / (x^2 + y^2) */
static void atan2_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor y = gs__saved(n, 0), x = gs__saved(n, 1);
  gs_tensor r2 =
      gs__formula_temp(gs_add(gs__formula_temp(gs_mul(x, x)), gs__formula_temp(gs_mul(y, y))));
  gs_tensor gr = gs__formula_temp(gs_div(g, r2));
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_mul(gr, x));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_neg(gs__formula_temp(gs_mul(gr, y))));
}
GS__BACKWARD_TWICE(Atan2Backward, atan2_backward);

/* Scalar forms: the scalar s is in n->reals[0]. */
static void add_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g); /* d(a + s) = g */
}
GS__BACKWARD_TWICE(AddScalarBackward, add_scalar_backward);
GS__BACKWARD_TWICE(SubScalarBackward, add_scalar_backward); /* a - s: named as written */

static void rsub_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_neg(g)); /* d(s - a) = -g */
}
GS__BACKWARD_TWICE(RsubScalarBackward, rsub_scalar_backward);

static void mul_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul_scalar(g, n->reals[0])); /* d(a * s) = g * s */
}
GS__BACKWARD_TWICE(MulScalarBackward, mul_scalar_backward);

static void div_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_div_scalar(g, n->reals[0])); /* d(a / s) = g / s */
}
GS__BACKWARD_TWICE(DivScalarBackward, div_scalar_backward);

/* d(a ^ e) = g * e * a^(e-1), and 0 for e == 0 (even at a == 0) */
static void pow_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  double e = n->reals[0];
  if (e == 0.0) {
    grads[0] = gs__reduce_grad(n, 0, gs_zeros_like(g));
    return;
  }
  gs_tensor d =
      gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_pow_scalar(gs__saved(n, 0), e - 1)), e));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(PowScalarBackward, pow_scalar_backward);

/* max(a, s): g where a wins, half of it on a tie. */
static void extremum_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads, bool maximum) {
  gs_tensor a = gs__saved(n, 0);
  double s = n->reals[0];
  gs_tensor half = gs__formula_temp(gs_where(gs__formula_temp(gs_eq_scalar(a, s)),
                                             gs__formula_temp(gs_mul_scalar(g, 0.5)), zero_of(g)));
  gs_tensor wins = gs__formula_temp(maximum ? gs_gt_scalar(a, s) : gs_lt_scalar(a, s));
  grads[0] = gs__reduce_grad(n, 0, gs_where(wins, g, half));
}
static void maximum_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  extremum_scalar_backward(n, g, grads, true);
}
static void minimum_scalar_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  extremum_scalar_backward(n, g, grads, false);
}
GS__BACKWARD_TWICE(MaximumScalarBackward, maximum_scalar_backward);
GS__BACKWARD_TWICE(MinimumScalarBackward, minimum_scalar_backward);

/* Records the node of a tensor-tensor binary op: which inputs and outputs its formula reads. */
static void record_binary(gs__binop op, gs_tensor h, const gs__tensor *a, const gs__tensor *b) {
  if (!gs__any_requires_grad(2, (const gs__tensor *[]){a, b}))
    return; /* the common case for data and inference: nothing to look up */
  static const gs__node_kind *const kinds[GS__BINOP_COUNT] = {
      [GS__ADD] = &AddBackward,         [GS__SUB] = &SubBackward,
      [GS__MUL] = &MulBackward,         [GS__DIV] = &DivBackward,
      [GS__POW] = &PowBackward,         [GS__MAXIMUM] = &MaximumBackward,
      [GS__MINIMUM] = &MinimumBackward, [GS__REMAINDER] = &RemainderBackward,
      [GS__FMOD] = &FmodBackward,       [GS__ATAN2] = &Atan2Backward,
  };
  if (!kinds[op])
    return; /* floor division and bitwise ops have no gradient (torch's is zero) */
  gs__tensor *out = gs__lookup(h, kinds[op]->name);
  int n_saved = op == GS__ADD || op == GS__SUB ? 0 : op == GS__POW ? 3 : 2;
  gs__node *n = gs__record(kinds[op], out, 2, (const gs__tensor *[]){a, b}, n_saved);
  if (!n || n_saved == 0)
    return;
  gs__save(n, 0, a);
  gs__save(n, 1, b);
  if (op == GS__POW)
    gs__save(n, 2, out);
}

static void record_binary_scalar(gs__binop op, bool reversed, gs_tensor h, const gs__tensor *a,
                                 double s) {
  if (!gs__any_requires_grad(1, &a))
    return;
  const gs__node_kind *kind;
  bool save_a = false;
  switch (op) {
  case GS__ADD: kind = &AddScalarBackward; break;
  case GS__SUB: kind = reversed ? &RsubScalarBackward : &SubScalarBackward; break;
  case GS__MUL: kind = &MulScalarBackward; break;
  case GS__DIV: kind = &DivScalarBackward; break;
  case GS__POW: kind = &PowScalarBackward, save_a = true; break;
  case GS__MAXIMUM: kind = &MaximumScalarBackward, save_a = true; break;
  case GS__MINIMUM: kind = &MinimumScalarBackward, save_a = true; break;
  default: return; /* comparisons have no gradient */
  }
  gs__tensor *out = gs__lookup(h, kind->name);
  gs__node *n = gs__record(kind, out, 1, (const gs__tensor *[]){a}, save_a ? 1 : 0);
  if (!n)
    return;
  n->reals[0] = s;
  if (save_a)
    gs__save(n, 0, a);
}

static gs_tensor binary_tensors(gs__binop op, gs_tensor ha, gs_tensor hb, const char *fn) {
  gs__tensor *a = gs__lookup(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b)
    return GS_NO_TENSOR;
  gs_tensor h = binary(op, a, b, gs__result_type(a, b), fn);
  if (h.id && !gs__binop_is_comparison(op))
    record_binary(op, h, a, b);
  return h;
}

/* a op s, or s op a when reversed. */
static gs_tensor binary_scalar(gs__binop op, gs_tensor ha, double s, bool reversed,
                               const char *fn) {
  gs__tensor *a = gs__lookup(ha, fn);
  if (!a)
    return GS_NO_TENSOR;
  gs_dtype compute = scalar_result_type(a->dtype);
  gs__scalar_box box;
  const gs__tensor *st = gs__scalar_box_init(&box, compute, s);
  gs_tensor h = reversed ? binary(op, st, a, compute, fn) : binary(op, a, st, compute, fn);
  if (h.id)
    record_binary_scalar(op, reversed, h, a, s);
  return h;
}

gs_tensor gs_add(gs_tensor a, gs_tensor b) { return binary_tensors(GS__ADD, a, b, "add"); }
gs_tensor gs_sub(gs_tensor a, gs_tensor b) { return binary_tensors(GS__SUB, a, b, "sub"); }
gs_tensor gs_mul(gs_tensor a, gs_tensor b) { return binary_tensors(GS__MUL, a, b, "mul"); }
gs_tensor gs_div(gs_tensor a, gs_tensor b) { return binary_tensors(GS__DIV, a, b, "div"); }
gs_tensor gs_pow(gs_tensor a, gs_tensor b) { return binary_tensors(GS__POW, a, b, "pow"); }
gs_tensor gs_maximum(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__MAXIMUM, a, b, "maximum");
}
gs_tensor gs_minimum(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__MINIMUM, a, b, "minimum");
}
gs_tensor gs_floor_divide(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__FLOOR_DIV, a, b, "floor_divide");
}
gs_tensor gs_remainder(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__REMAINDER, a, b, "remainder");
}
gs_tensor gs_bitwise_and(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__BITAND, a, b, "bitwise_and");
}
gs_tensor gs_bitwise_or(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__BITOR, a, b, "bitwise_or");
}
gs_tensor gs_bitwise_xor(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__BITXOR, a, b, "bitwise_xor");
}
gs_tensor gs_fmod(gs_tensor a, gs_tensor b) { return binary_tensors(GS__FMOD, a, b, "fmod"); }
gs_tensor gs_atan2(gs_tensor a, gs_tensor b) { return binary_tensors(GS__ATAN2, a, b, "atan2"); }
gs_tensor gs_logical_and(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__LOGICAL_AND, a, b, "logical_and");
}
gs_tensor gs_logical_or(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__LOGICAL_OR, a, b, "logical_or");
}
gs_tensor gs_logical_xor(gs_tensor a, gs_tensor b) {
  return binary_tensors(GS__LOGICAL_XOR, a, b, "logical_xor");
}
gs_tensor gs_eq(gs_tensor a, gs_tensor b) { return binary_tensors(GS__EQ, a, b, "eq"); }
gs_tensor gs_ne(gs_tensor a, gs_tensor b) { return binary_tensors(GS__NE, a, b, "ne"); }
gs_tensor gs_lt(gs_tensor a, gs_tensor b) { return binary_tensors(GS__LT, a, b, "lt"); }
gs_tensor gs_le(gs_tensor a, gs_tensor b) { return binary_tensors(GS__LE, a, b, "le"); }
gs_tensor gs_gt(gs_tensor a, gs_tensor b) { return binary_tensors(GS__GT, a, b, "gt"); }
gs_tensor gs_ge(gs_tensor a, gs_tensor b) { return binary_tensors(GS__GE, a, b, "ge"); }

gs_tensor gs_add_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__ADD, a, s, false, "add_scalar");
}
gs_tensor gs_sub_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__SUB, a, s, false, "sub_scalar");
}
gs_tensor gs_rsub_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__SUB, a, s, true, "rsub_scalar");
}
gs_tensor gs_mul_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__MUL, a, s, false, "mul_scalar");
}
gs_tensor gs_div_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__DIV, a, s, false, "div_scalar");
}
gs_tensor gs_pow_scalar(gs_tensor a, double e) {
  return binary_scalar(GS__POW, a, e, false, "pow_scalar");
}
gs_tensor gs_maximum_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__MAXIMUM, a, s, false, "maximum_scalar");
}
gs_tensor gs_minimum_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__MINIMUM, a, s, false, "minimum_scalar");
}
gs_tensor gs_eq_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__EQ, a, s, false, "eq_scalar");
}
gs_tensor gs_ne_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__NE, a, s, false, "ne_scalar");
}
gs_tensor gs_lt_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__LT, a, s, false, "lt_scalar");
}
gs_tensor gs_le_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__LE, a, s, false, "le_scalar");
}
gs_tensor gs_gt_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__GT, a, s, false, "gt_scalar");
}
gs_tensor gs_ge_scalar(gs_tensor a, double s) {
  return binary_scalar(GS__GE, a, s, false, "ge_scalar");
}

/* ---- unary -------------------------------------------------------------------------- */

/* ---- backward formulas: unary (saved slot 0 is the input or the output, as noted) -------- */

static void neg_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_neg(g)); /* d(-a) = -g */
}
GS__BACKWARD_TWICE(NegBackward, neg_backward);

/* d|a| = g * sign(a), with sign(0) = 0 (saved: a) */
static void abs_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor negative = gs__formula_temp(
      gs_where(gs__formula_temp(gs_lt_scalar(a, 0)), gs__formula_temp(gs_neg(g)), zero_of(g)));
  grads[0] = gs__reduce_grad(n, 0, gs_where(gs__formula_temp(gs_gt_scalar(a, 0)), g, negative));
}
GS__BACKWARD_TWICE(AbsBackward, abs_backward);

/* d exp(a) = g * exp(a) (saved: the output) */
static void exp_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__saved(n, 0)));
}
GS__BACKWARD_TWICE(ExpBackward, exp_backward);

/* d log(a) = g / a (saved: a) */
static void log_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, gs__saved(n, 0)));
}
GS__BACKWARD_TWICE(LogBackward, log_backward);

/* d sqrt(a) = g / (2 sqrt(a)) (saved: the output) */
static void sqrt_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, gs__formula_temp(gs_mul_scalar(gs__saved(n, 0), 2))));
}
GS__BACKWARD_TWICE(SqrtBackward, sqrt_backward);

/* d a^(-1/2) = -g / 2 * a^(-3/2) = -g / 2 * out^3 (saved: the output) */
static void rsqrt_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out3 = gs__formula_temp(gs_pow_scalar(gs__saved(n, 0), 3));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_mul_scalar(out3, -0.5))));
}
GS__BACKWARD_TWICE(RsqrtBackward, rsqrt_backward);

/* d tanh(a) = g * (1 - tanh(a)^2) (saved: the output) */
static void tanh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_rsub_scalar(gs__formula_temp(gs_mul(out, out)), 1));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(TanhBackward, tanh_backward);

/* d sigmoid(a) = g * s * (1 - s) (saved: the output s) */
static void sigmoid_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_mul(out, gs__formula_temp(gs_rsub_scalar(out, 1))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(SigmoidBackward, sigmoid_backward);

/* d relu(a) = g where the output y is positive, 0 elsewhere, as PyTorch's threshold_backward
 * (saved: the output). One fused pass: g * (y > 0) took a comparison, a bool-to-float copy
 * and a product. g has y's shape and dtype (the engine hands each formula its output's). */
static void relu_backward(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  if (gs__formula_creates_graph()) { /* the same, with ops that record (double backward) */
    gs_tensor positive = gs__formula_temp(gs_gt_scalar(gs__saved(n, 0), 0));
    grads[0] = gs__reduce_grad(n, 0, gs_where(positive, hg, zero_of(hg)));
    return;
  }
  const char *fn = n->kind->name;
  gs__tensor *g = gs__lookup(hg, fn), *y = g ? gs__lookup(gs__saved(n, 0), fn) : NULL;
  if (!y)
    return;
  gs__tensor *out;
  gs_tensor h =
      gs__tensor_new_like(y->dtype, y->shape, y->ndim, (const gs__tensor *[]){g, y}, 2, fn, &out);
  if (!h.id)
    return;
  int64_t strides[3][GS_MAX_DIMS];
  memcpy(strides[0], out->strides, sizeof strides[0]);
  memcpy(strides[1], g->strides, sizeof strides[1]);
  memcpy(strides[2], y->strides, sizeof strides[2]);
  char *data[3] = {gs__tensor_data(out), gs__tensor_data(g), gs__tensor_data(y)};
  size_t es = gs__elsize(y->dtype), sizes[3] = {es, es, es};
  gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, out->shape, out->ndim,
               gs__relu_grad_loop(y->dtype), NULL);
  grads[0] = gs__reduce_grad(n, 0, h);
}
GS__BACKWARD_TWICE(ReluBackward, relu_backward);

/* d leaky_relu(a) = g where a > 0, g * slope elsewhere (saved: a; slope in reals[0]) */
static void leaky_relu_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor positive = gs__formula_temp(gs_gt_scalar(gs__saved(n, 0), 0));
  grads[0] =
      gs__reduce_grad(n, 0, gs_where(positive, g, gs__formula_temp(gs_mul_scalar(g, n->reals[0]))));
}
GS__BACKWARD_TWICE(LeakyReluBackward, leaky_relu_backward);

/* gelu's derivative Phi(a) + a * phi(a) out of ops that record (erf, exp, products), for
 * double backward: its own derivative, phi(a) * (2 - a^2), then follows by the chain rule. */
static gs_tensor gelu_derivative_recorded(gs_tensor a) {
  gs_tensor scaled = gs__formula_temp(gs_mul_scalar(a, 0.70710678118654752440)); /* 1/sqrt2 */
  gs_tensor cdf = gs__formula_temp(
      gs_mul_scalar(gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_erf(scaled)), 1)), 0.5));
  gs_tensor square = gs__formula_temp(gs_mul(a, a));
  gs_tensor density = gs__formula_temp(
      gs_mul_scalar(gs__formula_temp(gs_exp(gs__formula_temp(gs_mul_scalar(square, -0.5)))),
                    0.39894228040143267794)); /* 1/sqrt(2 pi) */
  return gs__formula_temp(gs_add(cdf, gs__formula_temp(gs_mul(a, density))));
}

/* The tanh form's derivative 0.5 (1 + t) + 0.5 a (1 - t^2) k (1 + 3 c a^2), t =
 * tanh(k (a + c a^3)), out of ops that record, for double backward. */
static gs_tensor gelu_tanh_derivative_recorded(gs_tensor a) {
  const double k = 0.79788456080286535588, c = 0.044715; /* sqrt(2/pi), torch's kappa */
  gs_tensor square = gs__formula_temp(gs_mul(a, a));
  gs_tensor cube = gs__formula_temp(gs_mul(square, a));
  gs_tensor inner = gs__formula_temp(gs_add(a, gs__formula_temp(gs_mul_scalar(cube, c))));
  gs_tensor t = gs__formula_temp(gs_tanh(gs__formula_temp(gs_mul_scalar(inner, k))));
  gs_tensor half_1pt = gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_add_scalar(t, 1)), 0.5));
  gs_tensor sech2 = gs__formula_temp(
      gs_neg(gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_mul(t, t)), -1)))); /* 1 - t^2 */
  gs_tensor inner_slope = gs__formula_temp(gs_mul_scalar(
      gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_mul_scalar(square, 3 * c)), 1)), 0.5 * k));
  gs_tensor rest = gs__formula_temp(gs_mul(gs__formula_temp(gs_mul(a, sech2)), inner_slope));
  return gs__formula_temp(gs_add(half_1pt, rest));
}

/* d gelu(a) = g * (Phi(a) + a * phi(a)), Phi and phi the normal CDF and density (saved: a;
 * ints[1]: 1 for the tanh form, whose derivative is gelu_tanh_derivative_recorded's).
 * One fused kernel, unless the pass creates a graph. */
static void gelu_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  bool tanh_form = n->ints[1] == 1;
  gs_tensor a = gs__saved(n, 0);
  gs_tensor d = gs__formula_creates_graph()
                    ? (tanh_form ? gelu_tanh_derivative_recorded(a) : gelu_derivative_recorded(a))
                    : gs__formula_temp(gs__unary_op(tanh_form ? GS__GELU_TANH_GRAD : GS__GELU_GRAD,
                                                    a, NULL, "GeluBackward"));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(GeluBackward, gelu_backward);

/* d clamp(a) = g where min <= a <= max (saved: a; bounds in reals) */
static void clamp_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor inside = gs__formula_temp(gs_mul(gs__formula_temp(gs_ge_scalar(a, n->reals[0])),
                                             gs__formula_temp(gs_le_scalar(a, n->reals[1]))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, inside));
}
GS__BACKWARD_TWICE(ClampBackward, clamp_backward);

/* d sin(a) = g * cos(a) (saved: a) */
static void sin_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_cos(gs__saved(n, 0)))));
}
GS__BACKWARD_TWICE(SinBackward, sin_backward);

/* d cos(a) = -g * sin(a) (saved: a) */
static void cos_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor s = gs__formula_temp(gs_sin(gs__saved(n, 0)));
  grads[0] = gs__reduce_grad(n, 0, gs_neg(gs__formula_temp(gs_mul(g, s))));
}
GS__BACKWARD_TWICE(CosBackward, cos_backward);

/* d tan(a) = g * (1 + tan(a)^2) (saved: the output) */
static void tan_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_mul(out, out)), 1));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(TanBackward, tan_backward);

/* d frac(a) = d(a - trunc(a)) = g */
static void frac_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad_through(n, 0, g);
}
GS__BACKWARD_TWICE(FracBackward, frac_backward);

/* d (1 / a) = -g * out^2 (saved: the output) */
static void reciprocal_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_neg(gs__formula_temp(gs_mul(out, out))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(ReciprocalBackward, reciprocal_backward);

/* d a^2 = g * 2a (saved: a) */
static void square_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor d = gs__formula_temp(gs_mul_scalar(gs__saved(n, 0), 2));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(SquareBackward, square_backward);

/* d log1p(a) = g / (1 + a) (saved: a) */
static void log1p_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, gs__formula_temp(gs_add_scalar(gs__saved(n, 0), 1))));
}
GS__BACKWARD_TWICE(Log1pBackward, log1p_backward);

/* d expm1(a) = g * (out + 1) (saved: the output) */
static void expm1_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_add_scalar(gs__saved(n, 0), 1))));
}
GS__BACKWARD_TWICE(Expm1Backward, expm1_backward);

/* d log_b(a) = g / (a ln b) (saved: a) */
static void log_base_backward(gs__node *n, gs_tensor g, gs_tensor *grads, double ln_base) {
  grads[0] =
      gs__reduce_grad(n, 0, gs_div(g, gs__formula_temp(gs_mul_scalar(gs__saved(n, 0), ln_base))));
}
static void log2_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  log_base_backward(n, g, grads, 0.69314718055994530942);
}
static void log10_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  log_base_backward(n, g, grads, 2.30258509299404568402);
}
GS__BACKWARD_TWICE(Log2Backward, log2_backward);
GS__BACKWARD_TWICE(Log10Backward, log10_backward);

/* d asin(a) = g / sqrt(1 - a^2), d acos(a) = -g / sqrt(1 - a^2) (saved: a) */
static void arcsine_backward(gs__node *n, gs_tensor g, gs_tensor *grads, bool negate) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor root = gs__formula_temp(
      gs_sqrt(gs__formula_temp(gs_rsub_scalar(gs__formula_temp(gs_mul(a, a)), 1))));
  gs_tensor d = gs__formula_temp(gs_div(g, root));
  grads[0] = gs__reduce_grad(n, 0, negate ? gs_neg(d) : gs__pass_grad_through(d));
}
static void asin_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  arcsine_backward(n, g, grads, false);
}
static void acos_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  arcsine_backward(n, g, grads, true);
}
GS__BACKWARD_TWICE(AsinBackward, asin_backward);
GS__BACKWARD_TWICE(AcosBackward, acos_backward);

/* d atan(a) = g / (1 + a^2) (saved: a) */
static void atan_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_mul(a, a)), 1));
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, d));
}
GS__BACKWARD_TWICE(AtanBackward, atan_backward);

/* d sinh(a) = g * cosh(a), d cosh(a) = g * sinh(a) (saved: a) */
static void sinh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_cosh(gs__saved(n, 0)))));
}
static void cosh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_sinh(gs__saved(n, 0)))));
}
GS__BACKWARD_TWICE(SinhBackward, sinh_backward);
GS__BACKWARD_TWICE(CoshBackward, cosh_backward);

/* d erf(a) = g * 2 / sqrt(pi) * exp(-a^2) (saved: a) */
static void erf_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor e =
      gs__formula_temp(gs_exp(gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_mul(a, a)), -1))));
  gs_tensor d = gs__formula_temp(gs_mul_scalar(e, 1.12837916709551257390) /* 2 / sqrt(pi) */);
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(ErfBackward, erf_backward);

/* d erfc(a) = -g * 2 / sqrt(pi) * exp(-a^2) (saved: a) */
static void erfc_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor e =
      gs__formula_temp(gs_exp(gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_mul(a, a)), -1))));
  gs_tensor d = gs__formula_temp(gs_mul_scalar(e, -1.12837916709551257390));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(ErfcBackward, erfc_backward);

/* d erfinv(a) = g * sqrt(pi) / 2 * exp(out^2) (saved: the output) */
static void erfinv_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor out = gs__saved(n, 0);
  gs_tensor e = gs__formula_temp(gs_exp(gs__formula_temp(gs_mul(out, out))));
  gs_tensor d = gs__formula_temp(gs_mul_scalar(e, 0.88622692545275801365) /* sqrt(pi) / 2 */);
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(ErfinvBackward, erfinv_backward);

/* d asinh(a) = g / sqrt(a^2 + 1), d acosh(a) = g / sqrt(a^2 - 1) (saved: a) */
static void inverse_hyperbolic_backward(gs__node *n, gs_tensor g, gs_tensor *grads, double one) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor root = gs__formula_temp(
      gs_sqrt(gs__formula_temp(gs_add_scalar(gs__formula_temp(gs_mul(a, a)), one))));
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, root));
}
static void asinh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  inverse_hyperbolic_backward(n, g, grads, 1);
}
static void acosh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  inverse_hyperbolic_backward(n, g, grads, -1);
}
GS__BACKWARD_TWICE(AsinhBackward, asinh_backward);
GS__BACKWARD_TWICE(AcoshBackward, acosh_backward);

/* d atanh(a) = g / (1 - a^2) (saved: a) */
static void atanh_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0);
  gs_tensor d = gs__formula_temp(gs_rsub_scalar(gs__formula_temp(gs_mul(a, a)), 1));
  grads[0] = gs__reduce_grad(n, 0, gs_div(g, d));
}
GS__BACKWARD_TWICE(AtanhBackward, atanh_backward);

/* d 2^a = g * out * ln 2 (saved: the output) */
static void exp2_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor d = gs__formula_temp(gs_mul_scalar(gs__saved(n, 0), 0.69314718055994530942));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(Exp2Backward, exp2_backward);

/* d lgamma(a) = g * digamma(a) (saved: a): digamma records its own node, so this formula can
 * be differentiated once more. */
static void lgamma_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_digamma(gs__saved(n, 0)))));
}
GS__BACKWARD_TWICE(LgammaBackward, lgamma_backward);

/* d digamma(a) = g * polygamma(1, a), d polygamma(k, a) = g * polygamma(k + 1, a) (saved:
 * a, and the order in ints[0]): each records its own node, so any order can be
 * differentiated again. */
static void digamma_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_polygamma(1, gs__saved(n, 0)))));
}
static void polygamma_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int order = (int)n->ints[0] + 1;
  grads[0] =
      gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_polygamma(order, gs__saved(n, 0)))));
}
GS__BACKWARD_TWICE(DigammaBackward, digamma_backward);
GS__BACKWARD_TWICE(PolygammaBackward, polygamma_backward);

/* The Bessel functions' derivatives, as torch 1.13's (saved: a, and the output):
 *   d i0 = i1, d i0e = i1e - sgn(a) i0e,
 *   d i1 = i0 - i1 / a, d i1e = i0e - i1e (sgn(a) + 1 / a), both 0.5 where |a| <= eps
 *   (the limit; a there is replaced by eps so the unused branch stays finite). */
static void i0_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, gs__formula_temp(gs_i1(gs__saved(n, 0)))));
}
GS__BACKWARD_TWICE(I0Backward, i0_backward);

static void i0e_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), out = gs__saved(n, 1);
  gs_tensor d = gs__formula_temp(gs_sub(
      gs__formula_temp(gs_i1e(a)), gs__formula_temp(gs_mul(gs__formula_temp(gs_sign(a)), out))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(SpecialI0EBackward, i0e_backward);

static void i1_backward_of(gs__node *n, gs_tensor g, gs_tensor *grads, bool scaled) {
#define T(x) gs__formula_temp(x)
  gs_tensor a = gs__saved(n, 0), out = gs__saved(n, 1);
  double eps = gs_dtype_of(a) == GS_F32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  gs_tensor not_tiny = T(gs_gt_scalar(T(gs_abs(a)), eps));
  gs_tensor safe = T(gs_where(not_tiny, a, T(gs_full_like(a, eps))));
  gs_tensor d;
  if (scaled)
    d = T(gs_sub(T(gs_i0e(safe)),
                 T(gs_mul(out, T(gs_add(T(gs_sign(safe)), T(gs_reciprocal(safe))))))));
  else
    d = T(gs_sub(T(gs_i0(safe)), T(gs_mul(out, T(gs_reciprocal(safe))))));
  d = T(gs_where(not_tiny, d, T(gs_full_like(a, 0.5))));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
#undef T
}
static void i1_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  i1_backward_of(n, g, grads, false);
}
static void i1e_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  i1_backward_of(n, g, grads, true);
}
GS__BACKWARD_TWICE(SpecialI1Backward, i1_backward);
GS__BACKWARD_TWICE(SpecialI1EBackward, i1e_backward);

/* d erfcx(a) = g * (2 a erfcx(a) - 2 / sqrt(pi)) (saved: a, and the output) */
static void erfcx_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor a = gs__saved(n, 0), out = gs__saved(n, 1);
  gs_tensor d = gs__formula_temp(
      gs_add_scalar(gs__formula_temp(gs_mul_scalar(gs__formula_temp(gs_mul(a, out)), 2.0)),
                    -1.12837916709551257390));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(g, d));
}
GS__BACKWARD_TWICE(SpecialErfcxBackward, erfcx_backward);

/* Each differentiable unary op's node kind, and whether its formula reads the input or the
 * output. */
static const struct {
  const gs__node_kind *kind;
  gs__unary_save save;
} rules[GS__UNOP_COUNT] = {
    [GS__NEG] = {&NegBackward, GS__SAVE_NOTHING},
    [GS__ABS] = {&AbsBackward, GS__SAVE_INPUT},
    [GS__EXP] = {&ExpBackward, GS__SAVE_OUTPUT},
    [GS__LOG] = {&LogBackward, GS__SAVE_INPUT},
    [GS__SQRT] = {&SqrtBackward, GS__SAVE_OUTPUT},
    [GS__RSQRT] = {&RsqrtBackward, GS__SAVE_OUTPUT},
    [GS__TANH] = {&TanhBackward, GS__SAVE_OUTPUT},
    [GS__SIGMOID] = {&SigmoidBackward, GS__SAVE_OUTPUT},
    [GS__RELU] = {&ReluBackward, GS__SAVE_OUTPUT},
    [GS__LEAKY_RELU] = {&LeakyReluBackward, GS__SAVE_INPUT},
    [GS__GELU] = {&GeluBackward, GS__SAVE_INPUT},
    [GS__GELU_TANH] = {&GeluBackward, GS__SAVE_INPUT},
    [GS__CLAMP] = {&ClampBackward, GS__SAVE_INPUT},
    [GS__SIN] = {&SinBackward, GS__SAVE_INPUT},
    [GS__COS] = {&CosBackward, GS__SAVE_INPUT},
    [GS__TAN] = {&TanBackward, GS__SAVE_OUTPUT},
    [GS__FRAC] = {&FracBackward, GS__SAVE_NOTHING},
    [GS__RECIPROCAL] = {&ReciprocalBackward, GS__SAVE_OUTPUT},
    [GS__SQUARE] = {&SquareBackward, GS__SAVE_INPUT},
    [GS__LOG1P] = {&Log1pBackward, GS__SAVE_INPUT},
    [GS__EXPM1] = {&Expm1Backward, GS__SAVE_OUTPUT},
    [GS__LOG2] = {&Log2Backward, GS__SAVE_INPUT},
    [GS__LOG10] = {&Log10Backward, GS__SAVE_INPUT},
    [GS__ASIN] = {&AsinBackward, GS__SAVE_INPUT},
    [GS__ACOS] = {&AcosBackward, GS__SAVE_INPUT},
    [GS__ATAN] = {&AtanBackward, GS__SAVE_INPUT},
    [GS__SINH] = {&SinhBackward, GS__SAVE_INPUT},
    [GS__COSH] = {&CoshBackward, GS__SAVE_INPUT},
    [GS__ERF] = {&ErfBackward, GS__SAVE_INPUT},
    [GS__ASINH] = {&AsinhBackward, GS__SAVE_INPUT},
    [GS__ACOSH] = {&AcoshBackward, GS__SAVE_INPUT},
    [GS__ATANH] = {&AtanhBackward, GS__SAVE_INPUT},
    [GS__ERFC] = {&ErfcBackward, GS__SAVE_INPUT},
    [GS__ERFINV] = {&ErfinvBackward, GS__SAVE_OUTPUT},
    [GS__EXP2] = {&Exp2Backward, GS__SAVE_OUTPUT},
    [GS__LGAMMA] = {&LgammaBackward, GS__SAVE_INPUT},
    [GS__DIGAMMA] = {&DigammaBackward, GS__SAVE_INPUT},
    [GS__POLYGAMMA] = {&PolygammaBackward, GS__SAVE_INPUT},
    [GS__I0] = {&I0Backward, GS__SAVE_INPUT},
    [GS__I0E] = {&SpecialI0EBackward, GS__SAVE_BOTH},
    [GS__I1] = {&SpecialI1Backward, GS__SAVE_BOTH},
    [GS__I1E] = {&SpecialI1EBackward, GS__SAVE_BOTH},
    [GS__ERFCX] = {&SpecialErfcxBackward, GS__SAVE_BOTH},
};

const gs__node_kind *gs__unary_rule(gs__unop op, gs__unary_save *save) {
  *save = rules[op].save;
  return rules[op].kind;
}

/* Records a unary op's node. */
static void record_unary(gs__unop op, gs_tensor h, const gs__tensor *in,
                         const gs__unary_params *params) {
  if (!rules[op].kind || !gs__any_requires_grad(1, &in))
    return; /* internal ops (gelu's derivative) are not differentiated */
  gs__tensor *out = gs__lookup(h, rules[op].kind->name);
  gs__node *n = gs__record(rules[op].kind, out, 1, (const gs__tensor *[]){in},
                           rules[op].save == GS__SAVE_NOTHING ? 0
                           : rules[op].save == GS__SAVE_BOTH  ? 2
                                                              : 1);
  if (!n)
    return;
  if (rules[op].save == GS__SAVE_BOTH) {
    gs__save(n, 0, in);
    gs__save_result(n, 1, out);
  } else if (rules[op].save != GS__SAVE_NOTHING) {
    gs__save(n, 0, rules[op].save == GS__SAVE_INPUT ? in : out);
  }
  n->ints[1] = op == GS__GELU_TANH; /* which gelu GeluBackward differentiates */
  if (params) {
    n->reals[0] = op == GS__CLAMP ? params->min : params->slope;
    n->reals[1] = params->max;
    n->ints[0] = params->decimals; /* polygamma's order */
  }
}

/* Math functions compute in a floating dtype (integers in f32, as torch.exp); sign-like ops
 * (neg, abs, relu, clamp) keep integer dtypes. */
static bool unop_keeps_integers(gs__unop op) {
  return op == GS__NEG || op == GS__ABS || op == GS__RELU || op == GS__CLAMP || op == GS__FLOOR ||
         op == GS__BITWISE_NOT || op == GS__CEIL || op == GS__ROUND || op == GS__TRUNC ||
         op == GS__SIGN || op == GS__SQUARE;
}

gs_tensor gs__unary_op(gs__unop op, gs_tensor h, const gs__unary_params *params,
                       const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  gs_dtype compute = t->dtype;
  /* bitwise_not (logical not) and sign are the ops defined on bool */
  if ((compute == GS_BOOL && op != GS__BITWISE_NOT && op != GS__SIGN) ||
      (!gs_dtype_is_floating(compute) && !unop_keeps_integers(op)))
    compute = unop_keeps_integers(op) ? compute : gs_default_dtype();
  if (!gs__unary_loop(op, compute)) {
    report_unsupported(fn, compute);
    return GS_NO_TENSOR;
  }
  gs__tensor conv;
  const gs__tensor *in = t;
  if (t->dtype != compute) {
    if (!gs__as_contiguous(t, compute, &conv, fn))
      return GS_NO_TENSOR;
    in = &conv;
  }
  gs__tensor *out;
  gs_tensor r = gs__tensor_new_like(compute, t->shape, t->ndim, (const gs__tensor *[]){t}, 1, fn,
                                    &out); /* laid out as t is, as torch's */
  if (r.id)
    gs__run_unary(op, compute, out, in, params);
  if (in == &conv)
    gs__tensor_release(&conv);
  if (r.id)
    record_unary(op, r, t, params);
  return r;
}


gs_tensor gs_neg(gs_tensor t) { return gs__unary_op(GS__NEG, t, NULL, "neg"); }
gs_tensor gs_abs(gs_tensor t) { return gs__unary_op(GS__ABS, t, NULL, "abs"); }
gs_tensor gs_exp(gs_tensor t) { return gs__unary_op(GS__EXP, t, NULL, "exp"); }
gs_tensor gs_log(gs_tensor t) { return gs__unary_op(GS__LOG, t, NULL, "log"); }
gs_tensor gs_sqrt(gs_tensor t) { return gs__unary_op(GS__SQRT, t, NULL, "sqrt"); }
gs_tensor gs_rsqrt(gs_tensor t) { return gs__unary_op(GS__RSQRT, t, NULL, "rsqrt"); }
gs_tensor gs_tanh(gs_tensor t) { return gs__unary_op(GS__TANH, t, NULL, "tanh"); }
gs_tensor gs_sigmoid(gs_tensor t) { return gs__unary_op(GS__SIGMOID, t, NULL, "sigmoid"); }
gs_tensor gs_relu(gs_tensor t) { return gs__unary_op(GS__RELU, t, NULL, "relu"); }
gs_tensor gs_gelu(gs_tensor t) { return gs__unary_op(GS__GELU, t, NULL, "gelu"); }
gs_tensor gs_gelu_tanh(gs_tensor t) { return gs__unary_op(GS__GELU_TANH, t, NULL, "gelu"); }
gs_tensor gs_sin(gs_tensor t) { return gs__unary_op(GS__SIN, t, NULL, "sin"); }
gs_tensor gs_cos(gs_tensor t) { return gs__unary_op(GS__COS, t, NULL, "cos"); }
gs_tensor gs_tan(gs_tensor t) { return gs__unary_op(GS__TAN, t, NULL, "tan"); }
/* floor's gradient is zero almost everywhere: it records no node, as bitwise_not. */
gs_tensor gs_floor(gs_tensor t) { return gs__unary_op(GS__FLOOR, t, NULL, "floor"); }
/* So do ceil, round, trunc and sign (torch's zero gradients). */
gs_tensor gs_ceil(gs_tensor t) { return gs__unary_op(GS__CEIL, t, NULL, "ceil"); }
gs_tensor gs_round(gs_tensor t) { return gs__unary_op(GS__ROUND, t, NULL, "round"); }
gs_tensor gs_trunc(gs_tensor t) { return gs__unary_op(GS__TRUNC, t, NULL, "trunc"); }
gs_tensor gs_sign(gs_tensor t) { return gs__unary_op(GS__SIGN, t, NULL, "sign"); }
gs_tensor gs_reciprocal(gs_tensor t) { return gs__unary_op(GS__RECIPROCAL, t, NULL, "reciprocal"); }
gs_tensor gs_square(gs_tensor t) { return gs__unary_op(GS__SQUARE, t, NULL, "square"); }
gs_tensor gs_log1p(gs_tensor t) { return gs__unary_op(GS__LOG1P, t, NULL, "log1p"); }
gs_tensor gs_expm1(gs_tensor t) { return gs__unary_op(GS__EXPM1, t, NULL, "expm1"); }
gs_tensor gs_log2(gs_tensor t) { return gs__unary_op(GS__LOG2, t, NULL, "log2"); }
gs_tensor gs_log10(gs_tensor t) { return gs__unary_op(GS__LOG10, t, NULL, "log10"); }
gs_tensor gs_asin(gs_tensor t) { return gs__unary_op(GS__ASIN, t, NULL, "asin"); }
gs_tensor gs_acos(gs_tensor t) { return gs__unary_op(GS__ACOS, t, NULL, "acos"); }
gs_tensor gs_atan(gs_tensor t) { return gs__unary_op(GS__ATAN, t, NULL, "atan"); }
gs_tensor gs_sinh(gs_tensor t) { return gs__unary_op(GS__SINH, t, NULL, "sinh"); }
gs_tensor gs_cosh(gs_tensor t) { return gs__unary_op(GS__COSH, t, NULL, "cosh"); }
gs_tensor gs_erf(gs_tensor t) { return gs__unary_op(GS__ERF, t, NULL, "erf"); }
gs_tensor gs_asinh(gs_tensor t) { return gs__unary_op(GS__ASINH, t, NULL, "asinh"); }
gs_tensor gs_acosh(gs_tensor t) { return gs__unary_op(GS__ACOSH, t, NULL, "acosh"); }
gs_tensor gs_atanh(gs_tensor t) { return gs__unary_op(GS__ATANH, t, NULL, "atanh"); }
gs_tensor gs_erfc(gs_tensor t) { return gs__unary_op(GS__ERFC, t, NULL, "erfc"); }
gs_tensor gs_erfinv(gs_tensor t) { return gs__unary_op(GS__ERFINV, t, NULL, "erfinv"); }
gs_tensor gs_exp2(gs_tensor t) { return gs__unary_op(GS__EXP2, t, NULL, "exp2"); }
gs_tensor gs_lgamma(gs_tensor t) { return gs__unary_op(GS__LGAMMA, t, NULL, "lgamma"); }
gs_tensor gs_digamma(gs_tensor t) { return gs__unary_op(GS__DIGAMMA, t, NULL, "digamma"); }
gs_tensor gs_i0(gs_tensor t) { return gs__unary_op(GS__I0, t, NULL, "i0"); }
gs_tensor gs_i0e(gs_tensor t) { return gs__unary_op(GS__I0E, t, NULL, "i0e"); }
gs_tensor gs_i1(gs_tensor t) { return gs__unary_op(GS__I1, t, NULL, "i1"); }
gs_tensor gs_i1e(gs_tensor t) { return gs__unary_op(GS__I1E, t, NULL, "i1e"); }
gs_tensor gs_erfcx(gs_tensor t) { return gs__unary_op(GS__ERFCX, t, NULL, "erfcx"); }

gs_tensor gs_polygamma(int n, gs_tensor t) {
  if (n < 0) {
    gs__error(GS_ERR_ARGUMENT, "polygamma", "expected a non-negative order n, got %d", n);
    return GS_NO_TENSOR;
  }
  gs__unary_params p = {.decimals = n};
  return gs__unary_op(GS__POLYGAMMA, t, &p, "polygamma");
}

/* frac of integers is an error in torch (not a tensor of zeros). */
gs_tensor gs_frac(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "frac");
  if (!t)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    report_unsupported("frac", t->dtype);
    return GS_NO_TENSOR;
  }
  return gs__unary_op(GS__FRAC, h, NULL, "frac");
}

gs_tensor gs_round_decimals(gs_tensor h, int decimals) {
  gs__tensor *t = gs__lookup(h, "round_decimals");
  if (!t)
    return GS_NO_TENSOR;
  if (decimals == 0) /* torch's own shortcut: plain round, integers unchanged */
    return gs_round(h);
  if (!gs_dtype_is_floating(t->dtype)) {
    report_unsupported("round_decimals", t->dtype);
    return GS_NO_TENSOR;
  }
  if (decimals < -308 || decimals > 308) {
    gs__error(GS_ERR_ARGUMENT, "round_decimals", "expected decimals in [-308, 308], got %d",
              decimals);
    return GS_NO_TENSOR;
  }
  gs__unary_params p = {.decimals = decimals};
  return gs__unary_op(GS__ROUND_DECIMALS, h, &p, "round_decimals");
}

gs_tensor gs_bitwise_not(gs_tensor t) {
  return gs__unary_op(GS__BITWISE_NOT, t, NULL, "bitwise_not");
}

gs_tensor gs_leaky_relu(gs_tensor t, double negative_slope) {
  gs__unary_params p = {.slope = negative_slope};
  return gs__unary_op(GS__LEAKY_RELU, t, &p, "leaky_relu");
}

/* Validates clamp bounds; integer tensors get them rounded inward so the clamp stays exact. */
bool gs__clamp_params(gs_dtype dtype, double min, double max, gs__unary_params *p,
                      const char *fn) {
  if (isnan(min) || isnan(max) || min > max) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected min <= max (use -INFINITY/INFINITY for no bound), "
              "got min %g, max %g", min, max);
    return false;
  }
  p->min = gs_dtype_is_integer(dtype) ? ceil(min) : min;
  p->max = gs_dtype_is_integer(dtype) ? floor(max) : max;
  return true;
}

gs_tensor gs_clamp(gs_tensor h, double min, double max) {
  gs__tensor *t = gs__lookup(h, "clamp");
  gs__unary_params p;
  if (!t || !gs__clamp_params(t->dtype, min, max, &p, "clamp"))
    return GS_NO_TENSOR;
  return gs__unary_op(GS__CLAMP, h, &p, "clamp");
}

/* ---- where -------------------------------------------------------------------------- */

/* d where(c, a, b) = where(c, g, 0), where(c, 0, g) (saved: c) */
static void where_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor c = gs__saved(n, 0);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_where(c, g, zero_of(g)));
  if (gs__needs_grad(n, 2))
    grads[2] = gs__reduce_grad(n, 2, gs_where(c, zero_of(g), g));
}
GS__BACKWARD_TWICE(WhereBackward, where_backward);

gs_tensor gs_where(gs_tensor hc, gs_tensor ha, gs_tensor hb) {
  const char *fn = "where";
  gs__tensor *c = gs__lookup(hc, fn);
  gs__tensor *a = c ? gs__lookup(ha, fn) : NULL;
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b)
    return GS_NO_TENSOR;
  if (c->dtype != GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected a bool condition, got %s", gs_dtype_name(c->dtype));
    return GS_NO_TENSOR;
  }
  int64_t ab[GS_MAX_DIMS], shape[GS_MAX_DIMS];
  int nab, ndim;
  if (!gs__broadcast_shapes(a->shape, a->ndim, b->shape, b->ndim, ab, &nab)) {
    gs__report_broadcast(fn, a->shape, a->ndim, b->shape, b->ndim);
    return GS_NO_TENSOR;
  }
  if (!gs__broadcast_shapes(c->shape, c->ndim, ab, nab, shape, &ndim)) {
    gs__report_broadcast(fn, c->shape, c->ndim, ab, nab);
    return GS_NO_TENSOR;
  }
  gs_dtype dtype = gs__result_type(a, b);
  gs__tensor ca, cb;
  const gs__tensor *pa = a, *pb = b;
  if (a->dtype != dtype) {
    if (!gs__as_contiguous(a, dtype, &ca, fn))
      return GS_NO_TENSOR;
    pa = &ca;
  }
  if (b->dtype != dtype) {
    if (!gs__as_contiguous(b, dtype, &cb, fn)) {
      if (pa == &ca)
        gs__tensor_release(&ca);
      return GS_NO_TENSOR;
    }
    pb = &cb;
  }
  gs__tensor *out;
  gs_tensor h =
      gs__tensor_new_like(dtype, shape, ndim, (const gs__tensor *[]){c, a, b}, 3, fn, &out);
  if (h.id) {
    int64_t strides[4][GS_MAX_DIMS];
    memcpy(strides[0], out->strides, sizeof strides[0]);
    gs__broadcast_strides(c, shape, ndim, strides[1]);
    gs__broadcast_strides(pa, shape, ndim, strides[2]);
    gs__broadcast_strides(pb, shape, ndim, strides[3]);
    char *data[4] = {gs__tensor_data(out), gs__tensor_data(c), gs__tensor_data(pa),
                     gs__tensor_data(pb)};
    size_t es = gs__elsize(dtype);
    size_t sizes[4] = {es, 1, es, es};
    gs__iter_run(4, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, shape, ndim,
                 gs__where_loop(dtype), NULL);
  }
  if (pa == &ca)
    gs__tensor_release(&ca);
  if (pb == &cb)
    gs__tensor_release(&cb);
  if (h.id && gs_dtype_is_floating(dtype)) {
    gs__node *n = gs__record(&WhereBackward, gs__lookup(h, fn), 3,
                             (const gs__tensor *[]){c, a, b}, 1);
    if (n)
      gs__save(n, 0, c);
  }
  return h;
}
