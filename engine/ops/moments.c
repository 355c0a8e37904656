/* moments.c: variance and standard deviation over dims (torch.var, torch.std), the p-norm
 * (torch.norm) and masked_fill. Each computes with the engine's own ops with grad mode off (the
 * two-pass variance, sum((x - mean)^2) / (M - correction), is the numerically careful form) and
 * records one node of its own, as PyTorch does (VarBackward0, StdBackward0, NormBackward1,
 * LinalgVectorNormBackward0 for torch.linalg.vector_norm, MaskedFillBackward0), whose formula is
 * written with ops, so it differentiates again. */
#include <math.h>

#include "ops-impl.h"

static void dispose_all(gs_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    gs_dispose(ts[i]);
}

/* How many elements each output of a reduction over dims folds (all dims when ndims is 0). */
static int64_t reduced_count(const gs__tensor *t, const int *dims, int ndims, const char *fn) {
  if (ndims == 0)
    return t->numel;
  int64_t count = 1;
  bool seen[GS_MAX_DIMS] = {false};
  for (int i = 0; i < ndims; i++) {
    int d = gs__wrap_dim(dims[i], t->ndim > 0 ? t->ndim : 1, fn);
    if (d < 0)
      return -1;
    if (seen[d]) {
      gs__error(GS_ERR_ARGUMENT, fn, "dim %d appears more than once in the list of dims", d);
      return -1;
    }
    seen[d] = true;
    count *= t->ndim > 0 ? t->shape[d] : 1;
  }
  return count;
}

/* The bits of the dims a reduction over dims folds (ndims 0: every dim); -1 after reporting. */
static int64_t reduced_bits(const gs__tensor *t, const int *dims, int ndims, const char *fn) {
  int64_t bits = 0;
  for (int d = 0; d < t->ndim; d++)
    bits |= ndims == 0 ? (int64_t)1 << d : 0;
  for (int i = 0; i < ndims && t->ndim > 0; i++) {
    int d = gs__wrap_dim(dims[i], t->ndim, fn);
    if (d < 0)
      return -1;
    bits |= (int64_t)1 << d;
  }
  return bits;
}

/* What a moment's formula needs: x - mean(x) over the node's dims (saved slot 0: x; ints[0]:
 * the dims' bits), and g reshaped to keep those dims (size 1), so both broadcast to x. */
static gs_tensor centred_input(gs__node *n, gs_tensor g, gs_tensor *kept) {
  const gs__input_meta *m = &n->inputs[0];
  int dims[GS_MAX_DIMS], ndims = 0;
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < m->ndim; d++) {
    bool folded = (n->ints[0] >> d) & 1;
    shape[d] = folded ? 1 : m->shape[d];
    if (folded)
      dims[ndims++] = d;
  }
  *kept = gs__formula_temp(gs_reshape(g, shape, m->ndim));
  gs_tensor x = gs__saved(n, 0);
  return gs__formula_temp(gs_sub(x, gs__formula_temp(gs_mean(x, dims, ndims, true))));
}

/* d var(x) = g * 2 (x - mean(x)) / (M - correction), as PyTorch's var_backward (the divisor
 * in reals[0], unclamped as there) */
static void var_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor kept;
  gs_tensor diff = centred_input(n, g, &kept);
  gs_tensor scaled = gs__formula_temp(gs_mul_scalar(kept, 2.0 / n->reals[0]));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(scaled, diff));
}
GS__BACKWARD_TWICE(VarBackward, var_backward);

/* d std(x) = var's with g / (2 std) for g, 0 where std is 0, as PyTorch's std_backward (saved
 * slot 1: the output) */
static void std_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor kept;
  gs_tensor diff = centred_input(n, g, &kept);
  const gs__input_meta *m = &n->inputs[0];
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < m->ndim; d++)
    shape[d] = (n->ints[0] >> d) & 1 ? 1 : m->shape[d];
  gs_tensor std = gs__formula_temp(gs_reshape(gs__saved(n, 1), shape, m->ndim));
  gs_tensor halved = gs__formula_temp(gs_div(kept, gs__formula_temp(gs_mul_scalar(std, 2.0))));
  gs_tensor zero = gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0));
  gs_tensor gvar =
      gs__formula_temp(gs_where(gs__formula_temp(gs_eq_scalar(std, 0.0)), zero, halved));
  gs_tensor scaled = gs__formula_temp(gs_mul_scalar(gvar, 2.0 / n->reals[0]));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(scaled, diff));
}
GS__BACKWARD_TWICE(StdBackward, std_backward);

/* var(t) over dims with grad mode off, checked under fn's name; *dof gets M - correction. */
static gs_tensor var_values(gs_tensor h, const int *dims, int ndims, double correction,
                            bool keepdim, const char *fn, double *dof, int64_t *bits) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "std and var only support floating dtypes (f32, f64), got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  int64_t m = reduced_count(t, dims, ndims, fn);
  if (m < 0 || (*bits = reduced_bits(t, dims, ndims, fn)) < 0)
    return GS_NO_TENSOR;
  gs_no_grad_begin();
  gs_tensor mean = gs_mean(h, dims, ndims, true);
  gs_tensor diff = gs_sub(h, mean);
  gs_tensor sq = gs_mul(diff, diff);
  gs_tensor sum = gs_sum(sq, dims, ndims, keepdim);
  /* No degrees of freedom left gives 0/0 or x/0, as PyTorch (NaN or inf, with a warning). */
  *dof = (double)m - correction;
  gs_tensor v = gs_div_scalar(sum, *dof > 0 ? *dof : 0.0);
  gs_no_grad_end();
  gs_dispose(mean), gs_dispose(diff), gs_dispose(sq), gs_dispose(sum);
  return v;
}

/* Records a moment's node on r (kind VarBackward or StdBackward), which saves x and, for std,
 * r. */
static void record_moment(const gs__node_kind *kind, gs_tensor r, gs_tensor h, double dof,
                          int64_t bits, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  bool std = kind == &StdBackward;
  gs__node *n = gs__record_result(kind, r, 1, (const gs__tensor *[]){t}, std ? 2 : 1, fn);
  if (!n)
    return;
  gs__save(n, 0, t);
  if (std)
    gs__save(n, 1, gs__lookup(r, fn));
  n->ints[0] = bits;
  n->reals[0] = dof;
}

gs_tensor gs_var(gs_tensor h, const int *dims, int ndims, double correction, bool keepdim) {
  const char *fn = "var";
  double dof;
  int64_t bits;
  gs_tensor v = var_values(h, dims, ndims, correction, keepdim, fn, &dof, &bits);
  if (v.id)
    record_moment(&VarBackward, v, h, dof, bits, fn);
  return v;
}

gs_tensor gs_std(gs_tensor h, const int *dims, int ndims, double correction, bool keepdim) {
  const char *fn = "std";
  double dof;
  int64_t bits;
  gs_tensor v = var_values(h, dims, ndims, correction, keepdim, fn, &dof, &bits);
  if (!v.id)
    return v;
  gs_no_grad_begin();
  gs_tensor s = gs_sqrt(v);
  gs_no_grad_end();
  gs_dispose(v);
  if (s.id)
    record_moment(&StdBackward, s, h, dof, bits, fn);
  return s;
}

/* ---- norm --------------------------------------------------------------------------------- */

/* The norm's value with grad mode off (the caller's), checked under fn's name. */
static gs_tensor norm_values(gs_tensor h, double p, const int *dims, int ndims, bool keepdim,
                             const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "expected a floating tensor (f32 or f64), got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  if (isnan(p)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an order p that is a number, got nan");
    return GS_NO_TENSOR;
  }
  if (p == 2.0) { /* the common case, without abs (whose gradient at 0 is 0 anyway) */
    gs_tensor sq = gs_mul(h, h), sum = gs_sum(sq, dims, ndims, keepdim);
    gs_tensor out = gs_sqrt(sum);
    dispose_all((gs_tensor[]){sq, sum}, 2);
    return out;
  }
  gs_tensor a = gs_abs(h), out;
  if (isinf(p)) {
    out = p > 0 ? gs_max(a, dims, ndims, keepdim) : gs_min(a, dims, ndims, keepdim);
  } else if (p == 0.0) { /* the number of non-zero elements */
    gs_tensor nz = gs_ne_scalar(a, 0), f = gs_to_dtype(nz, t->dtype);
    out = gs_sum(f, dims, ndims, keepdim);
    dispose_all((gs_tensor[]){nz, f}, 2);
  } else if (p == 1.0) {
    out = gs_sum(a, dims, ndims, keepdim);
  } else {
    gs_tensor powered = gs_pow_scalar(a, p), sum = gs_sum(powered, dims, ndims, keepdim);
    out = gs_pow_scalar(sum, 1.0 / p);
    dispose_all((gs_tensor[]){powered, sum}, 2);
  }
  gs_dispose(a);
  return out;
}

/* d norm(x) as PyTorch's norm_backward, with g and the norm r kept along the folded dims:
 * p 0: 0; p 1: sgn(x) g; p inf: sgn(x) g / count where |x| = r (ties share it); others:
 * x |x|^(p-2) g / r^(p-1), 0 where r = 0 (p 2: x g / r). Saved: x, r; p in reals[0]. */
static void norm_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  double p = n->reals[0];
  gs_tensor x = gs__saved(n, 0);
  if (p == 0.0) {
    grads[0] = gs__reduce_grad(n, 0, gs_zeros(gs_dtype_of(g), m->shape, m->ndim));
    return;
  }
  int dims[GS_MAX_DIMS], ndims = 0;
  int64_t shape[GS_MAX_DIMS];
  for (int d = 0; d < m->ndim; d++) {
    bool folded = (n->ints[0] >> d) & 1;
    shape[d] = folded ? 1 : m->shape[d];
    if (folded)
      dims[ndims++] = d;
  }
  gs_tensor kept = gs__formula_temp(gs_reshape(g, shape, m->ndim));
  if (p == 1.0) { /* g kept along the folded dims, so it broadcasts without keepdim too */
    grads[0] = gs__reduce_grad(n, 0, gs_mul(gs__formula_temp(gs_sign(x)), kept));
    return;
  }
  gs_tensor r = gs__formula_temp(gs_reshape(gs__saved(n, 1), shape, m->ndim));
  if (isinf(p)) {
    gs_tensor hit = gs__formula_temp(gs_eq(gs__formula_temp(gs_abs(x)), r));
    gs_tensor mask = gs__formula_temp(gs_to_dtype(hit, gs_dtype_of(g)));
    gs_tensor count = gs__formula_temp(gs_sum(mask, dims, ndims, true));
    gs_tensor share = gs__formula_temp(gs_mul(gs__formula_temp(gs_div(kept, count)), mask));
    grads[0] = gs__reduce_grad(n, 0, gs_mul(gs__formula_temp(gs_sign(x)), share));
    return;
  }
  gs_tensor scaled_x =
      p == 2.0  ? x
      : p < 2.0 ? gs__formula_temp(
                      gs_mul(gs__formula_temp(gs_sign(x)),
                             gs__formula_temp(gs_pow_scalar(gs__formula_temp(gs_abs(x)), p - 1))))
                : gs__formula_temp(gs_mul(
                      x, gs__formula_temp(gs_pow_scalar(gs__formula_temp(gs_abs(x)), p - 2))));
  gs_tensor power = p == 2.0 ? r : gs__formula_temp(gs_pow_scalar(r, p - 1));
  gs_tensor ratio = gs__formula_temp(gs_div(kept, power));
  gs_tensor zero = gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0));
  gs_tensor scale = gs__formula_temp(gs_where(gs__formula_temp(gs_eq_scalar(r, 0.0)), zero, ratio));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(scaled_x, scale));
}
GS__BACKWARD_TWICE(NormBackward, norm_backward);

/* torch.linalg.vector_norm is the same norm with the same formula, recorded under its own
 * name. */
GS__BACKWARD_TWICE(LinalgVectorNormBackward, norm_backward);

/* The norm of h recorded as kind (NormBackward or LinalgVectorNormBackward). */
static gs_tensor norm_recorded(const gs__node_kind *kind, gs_tensor h, double p, const int *dims,
                               int ndims, bool keepdim, const char *fn) {
  gs_no_grad_begin();
  gs_tensor r = norm_values(h, p, dims, ndims, keepdim, fn);
  gs_no_grad_end();
  gs__tensor *t = r.id ? gs__lookup(h, fn) : NULL;
  int64_t bits = t ? reduced_bits(t, dims, ndims, fn) : -1;
  gs__node *n = bits >= 0 ? gs__record_result(kind, r, 1, (const gs__tensor *[]){t}, 2, fn) : NULL;
  if (n) {
    gs__save(n, 0, t);
    gs__save(n, 1, gs__lookup(r, fn));
    n->ints[0] = bits;
    n->reals[0] = p;
  }
  return r;
}

gs_tensor gs_norm(gs_tensor h, double p, const int *dims, int ndims, bool keepdim) {
  return norm_recorded(&NormBackward, h, p, dims, ndims, keepdim, "norm");
}

gs_tensor gs_linalg_vector_norm(gs_tensor h, double ord, const int *dims, int ndims, bool keepdim) {
  return norm_recorded(&LinalgVectorNormBackward, h, ord, dims, ndims, keepdim,
                       "linalg_vector_norm");
}

/* d masked_fill(t, mask, v) = g where mask is false, 0 where it is true (saved: the mask) */
static void masked_fill_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  gs_tensor zero = gs__formula_temp(gs_scalar(gs_dtype_of(g), 0.0));
  grads[0] = gs__reduce_grad(n, 0, gs_where(gs__saved(n, 0), zero, g));
}
GS__BACKWARD_TWICE(MaskedFillBackward, masked_fill_backward);

gs_tensor gs_masked_fill(gs_tensor h, gs_tensor hmask, double value) {
  const char *fn = "masked_fill";
  gs__tensor *mask;
  gs__tensor *t = gs__lookup_with_mask(h, hmask, fn, &mask);
  if (!t)
    return GS_NO_TENSOR;
  int64_t unused[GS_MAX_DIMS];
  if (mask->ndim > t->ndim || !gs__broadcast_strides(mask, t->shape, t->ndim, unused)) {
    char sm[GS__SHAPE_STR], st[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "the mask of shape %s cannot be broadcast to the tensor's shape %s",
              gs__shape_str(sm, mask->shape, mask->ndim), gs__shape_str(st, t->shape, t->ndim));
    return GS_NO_TENSOR;
  }
  gs_tensor fill = gs_scalar(t->dtype, value);
  gs_no_grad_begin();
  gs_tensor r = gs_where(hmask, fill, h);
  gs_no_grad_end();
  gs_dispose(fill);
  gs__node *n = gs__record_result(&MaskedFillBackward, r, 1, (const gs__tensor *[]){t}, 1, fn);
  if (n)
    gs__save(n, 0, mask);
  return r;
}
