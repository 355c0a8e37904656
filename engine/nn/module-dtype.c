/* module-dtype.c: a module tree's floating parameters and buffers converted to another dtype
 * in place, as torch's Module.double(), float() and to(dtype) (Module._apply with
 * `param.data = fn(param.data)`): each keeps its handle (so optimizers, the binding's objects
 * and the module's names still hold it), its requires_grad and its place in the tree, and an
 * existing grad is converted the same way. Integer buffers (BatchNorm's num_batches_tracked)
 * stay as they are, as in torch. Each replacement is a tensor_set_data event naming the method
 * ("double", "float"), so the inspector shows the conversion tensor by tensor. */
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"

/* t's data replaced by a converted copy made outside the graph; false after an error. */
static bool convert(gs_tensor t, gs_dtype dtype, const char *op) {
  gs_no_grad_begin();
  gs_tensor c = gs_to_dtype(t, dtype);
  gs_no_grad_end();
  if (!c.id)
    return false;
  gs_tensor_set_data(t, c, op);
  bool ok = gs_last_error_code() == GS_OK;
  gs__dispose_as(c, "its data moved into the tensor it was converted for");
  return ok;
}

int gs_module_to_dtype(gs_module m, gs_dtype dtype) {
  const char *fn = "module_to_dtype";
  if (!gs__module_lookup(m, fn))
    return -1;
  if (dtype != GS_F32 && dtype != GS_F64) {
    gs__error(GS_ERR_DTYPE, fn, "expected f32 or f64 (modules compute in those), got %s",
              gs_dtype_name(dtype));
    return -1;
  }
  int n = gs_module_named_parameters(m, NULL, NULL, 0);
  gs_tensor *params = n > 0 ? malloc(sizeof *params * (size_t)n) : NULL;
  if (n > 0 && !params) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not list %d parameters", n);
    return -1;
  }
  gs_module_named_parameters(m, params, NULL, n);
  const char *op = dtype == GS_F64 ? "double" : "float";
  int converted = 0;
  gs_clear_error();
  for (int i = 0; i < n; i++) {
    gs__tensor *p = gs__lookup(params[i], fn);
    if (!p) {
      free(params);
      return -1;
    }
    if (!gs_dtype_is_floating(p->dtype) || p->dtype == dtype)
      continue; /* integer buffers stay integer; nothing to do for the rest */
    gs_tensor g = gs_grad(params[i]);
    if (!convert(params[i], dtype, op) ||
        (g.id && gs_dtype_of(g) != dtype && !convert(g, dtype, op))) {
      free(params);
      return -1;
    }
    converted++;
  }
  free(params);
  return converted;
}
