/* gradcheck.c: compares backward's gradients with float64 central finite differences.
 *
 * The analytic Jacobian comes from one backward per output element (seeded with a one-hot
 * gradient, graph retained); the numeric one from evaluating the function with each input
 * element moved by +eps and -eps (in clones, under no_grad). Every entry is compared with
 * |analytic - numeric| <= atol + rtol * |numeric|, and the worst one is reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"

/* t's values as doubles, row-major (malloc'd); NULL if t is the empty handle. */
static double *values_of(gs_tensor t, int64_t numel) {
  double *v = calloc((size_t)(numel > 0 ? numel : 1), sizeof *v);
  if (!v)
    return NULL;
  if (t.id) {
    gs_tensor d = gs_to_dtype(t, GS_F64);
    gs_copy_to(d, v, (size_t)numel * sizeof *v);
    gs_dispose(d);
  }
  return v;
}

/* Inputs that require grad are checked; the others (a condition, an index) pass through. */
static bool check_inputs(const gs_tensor *inputs, int n, char *why, size_t why_size) {
  int checked = 0;
  for (int i = 0; i < n; i++) {
    if (!gs_is_alive(inputs[i])) {
      snprintf(why, why_size, "input %d is not a live tensor", i);
      return false;
    }
    gs__tensor *t = gs__lookup(inputs[i], "gradcheck");
    if (!t->ag.requires_grad)
      continue;
    checked++;
    if (t->dtype != GS_F64) {
      snprintf(why, why_size, "input %d must be f64 to be checked, got %s", i,
               gs_dtype_name(t->dtype));
      return false;
    }
    for (int d = 0; d < t->ndim; d++) {
      if (t->strides[d] == 0 && t->shape[d] > 1) {
        snprintf(why, why_size,
                 "input %d is expanded (dim %d has stride 0): perturbing one element would "
                 "move several; pass a contiguous copy",
                 i, d);
        return false;
      }
    }
  }
  if (checked == 0) {
    snprintf(why, why_size, "no input requires grad: nothing to check");
    return false;
  }
  return true;
}

/* Evaluates fn with input i replaced by a clone whose element k moved by delta (no_grad);
 * returns the output's values (malloc'd, m of them) or NULL. */
static double *evaluate_moved(gs_gradcheck_fn fn, void *user, const gs_tensor *inputs, int n,
                              int i, int64_t k, double delta, int64_t m) {
  gs_tensor moved = gs_clone(inputs[i]);
  gs__tensor *t = gs__lookup(moved, "gradcheck");
  int64_t offset = 0, rest = k;
  for (int d = t->ndim - 1; d >= 0; d--) {
    offset += (rest % t->shape[d]) * t->strides[d];
    rest /= t->shape[d];
  }
  double *p = gs_data_mut(moved);
  p[offset] += delta;
  gs_tensor *args = malloc((size_t)n * sizeof *args);
  memcpy(args, inputs, (size_t)n * sizeof *args);
  args[i] = moved;
  gs_tensor out = fn(args, n, user);
  double *v = out.id && gs_numel(out) == m ? values_of(out, m) : NULL;
  if (out.id)
    gs_dispose(out);
  gs_dispose(moved);
  free(args);
  return v;
}

bool gs_gradcheck(gs_gradcheck_fn fn, void *user, const gs_tensor *inputs, int n,
                  const gs_gradcheck_options *options, gs_gradcheck_result *result) {
  gs_gradcheck_result local;
  gs_gradcheck_result *res = result ? result : &local;
  memset(res, 0, sizeof *res);
  res->worst_input = -1;
  res->error = -INFINITY;
  gs_gradcheck_options opt = {1e-6, 1e-5, 1e-3};
  if (options)
    opt = *options;
  if (!fn || !inputs || n <= 0) {
    gs__error(GS_ERR_ARGUMENT, "gradcheck", "expected a function and at least one input");
    snprintf(res->message, sizeof res->message, "gradcheck: no function or no inputs");
    return false;
  }
  if (!check_inputs(inputs, n, res->message, sizeof res->message))
    return false;

  /* Analytic Jacobian, one output element at a time. */
  bool was_enabled = gs_set_grad_enabled(true);
  for (int i = 0; i < n; i++)
    if (gs_requires_grad(inputs[i]))
      gs_zero_grad(inputs[i]);
  gs_tensor out = fn(inputs, n, user);
  if (!out.id || !gs_requires_grad(out)) {
    snprintf(res->message, sizeof res->message,
             "gradcheck: the function's output %s", out.id ? "does not require grad" : "is empty");
    if (out.id)
      gs_dispose(out);
    gs_set_grad_enabled(was_enabled);
    return false;
  }
  int64_t m = gs_numel(out);
  int64_t out_shape[GS_MAX_DIMS];
  int out_ndim = gs_shape(out, out_shape);
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    total += gs_numel(inputs[i]);
  /* analytic[j * total + (input offset + k)] */
  double *analytic = calloc((size_t)(m * total + 1), sizeof *analytic);
  for (int64_t j = 0; j < m; j++) {
    gs_tensor seed = gs_zeros(gs_dtype_of(out), out_shape, out_ndim);
    double *s = gs_data_mut(seed);
    if (gs_dtype_of(out) == GS_F64)
      s[j] = 1.0;
    else
      ((float *)s)[j] = 1.0f;
    gs_backward_with(out, seed, true);
    gs_dispose(seed);
    int64_t base = 0;
    for (int i = 0; i < n; i++) {
      int64_t ni = gs_numel(inputs[i]);
      if (!gs_requires_grad(inputs[i])) {
        base += ni;
        continue;
      }
      double *g = values_of(gs_grad(inputs[i]), ni);
      memcpy(analytic + j * total + base, g, (size_t)ni * sizeof *g);
      free(g);
      gs_zero_grad(inputs[i]);
      base += ni;
    }
  }
  gs_dispose(out);

  /* Numeric Jacobian and the comparison, one input element at a time; grad mode off (not a
   * no_grad block, which a function could not leave: one that takes a gradient itself, as a
   * double-backward check does, turns grad mode back on). */
  gs_set_grad_enabled(false);
  int64_t base = 0;
  int64_t compared = 0;
  bool passed = true;
  for (int i = 0; i < n; i++) {
    int64_t ni = gs_numel(inputs[i]);
    if (!gs_requires_grad(inputs[i])) {
      base += ni;
      continue;
    }
    for (int64_t k = 0; k < ni; k++) {
      double *plus = evaluate_moved(fn, user, inputs, n, i, k, opt.eps, m);
      double *minus = evaluate_moved(fn, user, inputs, n, i, k, -opt.eps, m);
      if (!plus || !minus) {
        free(plus), free(minus);
        snprintf(res->message, sizeof res->message,
                 "gradcheck: the function failed or changed its output's size when input %d "
                 "element %lld moved",
                 i, (long long)k);
        passed = false;
        goto done;
      }
      for (int64_t j = 0; j < m; j++) {
        double numeric = (plus[j] - minus[j]) / (2 * opt.eps);
        double a = analytic[j * total + base + k];
        double err = fabs(a - numeric) - (opt.atol + opt.rtol * fabs(numeric));
        if (isnan(a) != isnan(numeric) || (isnan(err) && !isnan(a)))
          err = INFINITY;
        if (err > res->error || res->worst_input < 0) {
          res->error = err;
          res->worst_input = i;
          res->worst_index = k;
          res->worst_output = j;
          res->analytic = a;
          res->numeric = numeric;
        }
        if (err > 0)
          passed = false;
        compared++;
      }
      free(plus), free(minus);
    }
    base += ni;
  }
  if (passed)
    snprintf(res->message, sizeof res->message,
             "gradcheck: passed: %lld derivatives of %d input(s) compared; worst at input %d "
             "element %lld, output %lld: analytic %.10g, numeric %.10g",
             (long long)compared, n, res->worst_input, (long long)res->worst_index,
             (long long)res->worst_output, res->analytic, res->numeric);
  else
    snprintf(res->message, sizeof res->message,
             "gradcheck: failed at input %d element %lld, output %lld: analytic %.10g but "
             "numeric %.10g (allowed difference %.3g, atol %g + rtol %g)",
             res->worst_input, (long long)res->worst_index, (long long)res->worst_output,
             res->analytic, res->numeric, opt.atol + opt.rtol * fabs(res->numeric), opt.atol,
             opt.rtol);
done:
  free(analytic);
  gs_set_grad_enabled(was_enabled);
  res->passed = passed;
  return passed;
}
