/* set-data.c: replacing a tensor's data, as torch's `t.data = x` (Tensor.set_data): the tensor
 * keeps its handle, requires_grad, grad and place in a module (so optimizers, modules and a
 * language binding's object that hold the handle keep working), and from now on views the
 * source's storage with the source's dtype and layout. A module's double() and float() are
 * made of it (nn/module-dtype.c). A view may have its data replaced too (torch allows it): it
 * is a view no more. It needs only the tensor record and whether the tensor is a
 * leaf, so it sits with the graph's bookkeeping, below the ops that modules use. */
#include <string.h>

#include "autograd-impl.h"
#include "trace-writer.h"

void gs_tensor_set_data(gs_tensor h, gs_tensor src, const char *op) {
  const char *fn = "tensor_set_data";
  gs__tensor *t = gs__lookup(h, fn);
  gs__tensor *s = t ? gs__lookup(src, fn) : NULL;
  if (!s)
    return;
  if (t->ag.grad_fn) {
    gs__error(GS_ERR_STATE, fn,
              "tensor #%u.%u was made by %s: only a leaf's data can be replaced; detach it first",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32), t->ag.grad_fn->kind->name);
    return;
  }
  if (t->ag.requires_grad && !gs_dtype_is_floating(s->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "tensor #%u.%u requires grad, so its data must be floating, got %s",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32), gs_dtype_name(s->dtype));
    return;
  }
  if (h.id == src.id)
    return;
  /* A view (a leaf one: its base needs no grad) stops being one, as torch's set_data cuts
   * it from its base: it no longer counts among the base's views, and writes into it no
   * longer rewrite the base's history. */
  if (t->view_base) {
    gs__view_history_on_dispose(t);
    t->view_base = 0;
    t->base_history = 0;
  }
  gs__storage *old = t->storage;
  gs__storage_retain(s->storage);
  gs__storage_log_alloc(s->storage); /* the log knows the storage before the tensor names it */
  t->storage = s->storage;
  t->dtype = s->dtype;
  t->ndim = s->ndim;
  t->numel = s->numel;
  t->offset = s->offset;
  memcpy(t->shape, s->shape, sizeof t->shape);
  memcpy(t->strides, s->strides, sizeof t->strides);
  if (gs__trace_on())
    gs__trace_tensor_set_data(h.id, t->storage->id, (uint32_t)t->dtype,
                              gs__intern(op && *op ? op : "set_data"), t->offset, t->shape,
                              t->strides, t->ndim);
  else
    gs__trace_skip(1);
  gs__storage_release(old); /* after the tensor left it: its free follows in the log */
}

/* t.as_strided_ and the in-place shape ops made of it (include/gradscope/tensor.h): like
 * set_data, the tensor keeps its handle; unlike it, it keeps its storage and view base too. */
bool gs_as_strided_(gs_tensor h, const int64_t *shape, const int64_t *strides, int ndim,
                    int64_t storage_offset, const char *op) {
  const char *fn = op && *op ? op : "as_strided_";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return false;
  /* Autograd recorded t with its shape: a node made it, or one will read it as a leaf. */
  if (t->ag.grad_fn) {
    gs__error(GS_ERR_STATE, fn,
              "tensor #%u.%u was made by %s, which recorded its shape for backward: its shape "
              "cannot change in place; make a new view instead (x = x.unsqueeze(dim), say)",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32), t->ag.grad_fn->kind->name);
    return false;
  }
  if (t->ag.requires_grad && gs_grad_enabled()) {
    gs__error(GS_ERR_STATE, fn,
              "a leaf Variable that requires grad is being used in an in-place operation.");
    return false;
  }
  if (!gs__geometry_fits(t, shape, strides, ndim, storage_offset, fn))
    return false;
  gs__bump_version(t, fn, false); /* a node that saved t sees the change, as after a write */
  t->ndim = ndim;
  t->numel = gs__checked_numel(shape, ndim, fn);
  t->offset = storage_offset;
  memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
  if (gs__trace_on())
    gs__trace_tensor_set_data(h.id, t->storage->id, (uint32_t)t->dtype, gs__intern(fn), t->offset,
                              t->shape, t->strides, t->ndim);
  else
    gs__trace_skip(1);
  return true;
}
