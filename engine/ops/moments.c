/* moments.c: variance and standard deviation over dims (torch.var, torch.std), and
 * masked_fill: ops PyTorch programs call that are compositions of the engine's own, so their
 * gradients come from the ops they are made of (the two-pass variance, sum((x - mean)^2) /
 * (M - correction), is the numerically careful form). */
#include "ops-impl.h"

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

gs_tensor gs_var(gs_tensor h, const int *dims, int ndims, double correction, bool keepdim) {
  const char *fn = "var";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "std and var only support floating dtypes (f32, f64), got %s",
              gs_dtype_name(t->dtype));
    return GS_NO_TENSOR;
  }
  int64_t m = reduced_count(t, dims, ndims, fn);
  if (m < 0)
    return GS_NO_TENSOR;
  gs_tensor mean = gs_mean(h, dims, ndims, true);
  gs_tensor diff = gs_sub(h, mean);
  gs_tensor sq = gs_mul(diff, diff);
  gs_tensor sum = gs_sum(sq, dims, ndims, keepdim);
  /* No degrees of freedom left gives 0/0 or x/0, as PyTorch (NaN or inf, with a warning). */
  double dof = (double)m - correction;
  gs_tensor v = gs_div_scalar(sum, dof > 0 ? dof : 0.0);
  gs_dispose(mean), gs_dispose(diff), gs_dispose(sq), gs_dispose(sum);
  return v;
}

gs_tensor gs_std(gs_tensor h, const int *dims, int ndims, double correction, bool keepdim) {
  gs_tensor v = gs_var(h, dims, ndims, correction, keepdim);
  if (!v.id)
    return v;
  gs_tensor s = gs_sqrt(v);
  gs_dispose(v);
  return s;
}

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
  gs_tensor r = gs_where(hmask, fill, h);
  gs_dispose(fill);
  return r;
}
