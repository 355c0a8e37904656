/* cross-trace.c: two small products of linear algebra: the cross product of 3-vectors along
 * a dim (torch.linalg.cross, torch.cross) and the trace of a matrix.
 *
 * Both compute with the engine's own ops with grad mode off and record their own node, whose
 * formula is written with ops (the cross product again, a scaled identity), so it
 * differentiates again.
 */
#include <string.h>

#include "ops-impl.h"

/* x along d with its 3 entries rotated left by shift (1: [x1, x2, x0]). */
static gs_tensor rotated(gs_tensor x, int d, int shift) {
  int64_t three = 3, order[3];
  for (int k = 0; k < 3; k++)
    order[k] = (k + shift) % 3;
  gs_tensor index = gs_from_data(GS_I64, &three, 1, order);
  gs_tensor r = gs_index_select(x, d, index);
  gs_dispose(index);
  return r;
}

/* a x b = rot1(a) * rot2(b) - rot2(a) * rot1(b) along d, broadcast; no node of its own. */
static gs_tensor cross_values(gs_tensor a, gs_tensor b, int d) {
  gs_tensor a1 = rotated(a, d, 1), a2 = rotated(a, d, 2);
  gs_tensor b1 = rotated(b, d, 1), b2 = rotated(b, d, 2);
  gs_tensor p = gs_mul(a1, b2), q = gs_mul(a2, b1);
  gs_tensor r = gs_sub(p, q);
  gs_tensor all[] = {a1, a2, b1, b2, p, q};
  for (int i = 0; i < 6; i++)
    gs_dispose(all[i]);
  return r;
}

/* d (a x b) = b x g for a, g x a for b (each summed to its operand's shape) */
static void cross_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  int d = (int)n->ints[0];
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_cross(gs__saved(n, 1), g, d));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_cross(g, gs__saved(n, 0), d));
}
GS__BACKWARD_TWICE(CrossBackward, cross_backward);

gs_tensor gs_cross(gs_tensor ha, gs_tensor hb, int dim) {
  const char *fn = "cross";
  gs__tensor *a = gs__lookup(ha, fn);
  gs__tensor *b = a ? gs__lookup(hb, fn) : NULL;
  if (!b)
    return GS_NO_TENSOR;
  if (a->dtype != b->dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected operands of one dtype, got %s and %s",
              gs_dtype_name(a->dtype), gs_dtype_name(b->dtype));
    return GS_NO_TENSOR;
  }
  if (a->ndim != b->ndim) {
    gs__error(GS_ERR_SHAPE, fn, "expected operands with the same number of dims, got %d and %d",
              a->ndim, b->ndim);
    return GS_NO_TENSOR;
  }
  int d = gs__wrap_dim(dim, a->ndim, fn);
  if (d < 0)
    return GS_NO_TENSOR;
  if (a->shape[d] != 3 || b->shape[d] != 3) {
    gs__error(GS_ERR_SHAPE, fn, "expected size 3 along dim %d of both operands, got %lld and %lld",
              d, (long long)a->shape[d], (long long)b->shape[d]);
    return GS_NO_TENSOR;
  }
  int64_t shape[GS_MAX_DIMS];
  int nd;
  if (!gs__broadcast_shapes(a->shape, a->ndim, b->shape, b->ndim, shape, &nd)) {
    gs__report_broadcast(fn, a->shape, a->ndim, b->shape, b->ndim);
    return GS_NO_TENSOR;
  }
  gs_no_grad_begin();
  gs_tensor r = cross_values(ha, hb, d);
  gs_no_grad_end();
  gs__tensor *out = r.id ? gs__lookup(r, fn) : NULL;
  gs__node *n = out && gs_dtype_is_floating(out->dtype)
                    ? gs__record(&CrossBackward, out, 2, (const gs__tensor *[]){a, b}, 2)
                    : NULL;
  if (n) {
    gs__save(n, 0, a);
    gs__save(n, 1, b);
    n->ints[0] = d;
  }
  return r;
}

/* d trace(t) = g * eye (of t's shape) */
static void trace_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  const gs__input_meta *m = &n->inputs[0];
  gs_tensor eye = gs__formula_temp(gs_eye(m->shape[0], m->shape[1], gs_dtype_of(g)));
  grads[0] = gs__reduce_grad(n, 0, gs_mul(eye, g));
}
GS__BACKWARD_TWICE(TraceBackward, trace_backward);

gs_tensor gs_trace(gs_tensor h) {
  const char *fn = "trace";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return GS_NO_TENSOR;
  if (t->ndim != 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected a 2-D matrix, got %d-D", t->ndim);
    return GS_NO_TENSOR;
  }
  /* The diagonal is a strided view: one step down and one right at a time. */
  int64_t len = t->shape[0] < t->shape[1] ? t->shape[0] : t->shape[1];
  int64_t step = t->strides[0] + t->strides[1];
  gs_no_grad_begin();
  gs_tensor diagonal = gs_as_strided(h, &len, &step, 1, gs_storage_offset(h));
  gs_tensor r = gs_sum(diagonal, NULL, 0, false);
  gs_no_grad_end();
  gs_dispose(diagonal);
  gs__tensor *out = r.id ? gs__lookup(r, fn) : NULL;
  if (out && gs_dtype_is_floating(out->dtype))
    gs__record(&TraceBackward, out, 1, (const gs__tensor *[]){t}, 0);
  return r;
}
