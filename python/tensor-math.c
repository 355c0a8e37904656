/* tensor-math.c: Tensor methods over the engine's moment and masking ops, as PyTorch's: var,
 * std (unbiased= or correction=, dim, keepdim) and masked_fill. They live beside
 * tensor-methods.c's table and join the Tensor type at import (gsp_tensor_math_install);
 * gradscope.var(t) and friends reach them through the functional forwarders of functions.c.
 * (sin, cos and tan are rows of tensor-op-table.c.) */
#include "gs-py.h"

#define METH_KW (METH_VARARGS | METH_KEYWORDS)

typedef gs_tensor (*moment_fn)(gs_tensor, const int *, int, double, bool);

/* t.var(dim=None, unbiased=True, keepdim=False, *, correction=None), as torch 1.13: a bool
 * first argument is `unbiased` (t.var(False)); correction, when given, wins over unbiased. */
static PyObject *moment(PyObject *self, PyObject *args, PyObject *kwargs, moment_fn fn,
                        const char *format) {
  GSP_SITE();
  PyObject *dim = Py_None, *unbiased = Py_None, *correction = Py_None;
  int keepdim = 0;
  static char *kwlist[] = {"dim", "unbiased", "keepdim", "correction", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &unbiased, &keepdim,
                                   &correction))
    return NULL;
  if (PyBool_Check(dim)) {
    unbiased = dim;
    dim = Py_None;
  }
  double c = 1.0;
  if (correction != Py_None) {
    c = PyFloat_AsDouble(correction);
    if (c == -1.0 && PyErr_Occurred())
      return NULL;
  } else if (unbiased != Py_None) {
    int u = PyObject_IsTrue(unbiased);
    if (u < 0)
      return NULL;
    c = u ? 1.0 : 0.0;
  }
  int dims[GS_MAX_DIMS];
  int n = gsp_dims_from_object(dim, dims);
  if (n < 0)
    return NULL;
  return gsp_wrap(fn(gsp_handle(self), dims, n, c, keepdim));
}
static PyObject *m_var(PyObject *s, PyObject *a, PyObject *k) { return moment(s, a, k, gs_var, "|OOp$O:var"); }
static PyObject *m_std(PyObject *s, PyObject *a, PyObject *k) { return moment(s, a, k, gs_std, "|OOp$O:std"); }

/* t.masked_fill(mask, value): value a number or a 0-dim tensor, as PyTorch accepts both. */
static PyObject *m_masked_fill(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *mask, *value;
  static char *kwlist[] = {"mask", "value", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O:masked_fill", kwlist, &gsp_tensor_type,
                                   &mask, &value))
    return NULL;
  double v;
  if (gsp_is_tensor(value)) {
    PyObject *item = PyObject_CallMethod(value, "item", NULL);
    if (!item)
      return NULL;
    v = PyFloat_AsDouble(item);
    Py_DECREF(item);
  } else {
    v = PyFloat_AsDouble(value);
  }
  if (v == -1.0 && PyErr_Occurred())
    return NULL;
  return gsp_wrap(gs_masked_fill(gsp_handle(self), gsp_handle(mask), v));
}

/* t.masked_fill_(mask, value): writes the filled values back into t (a version bump). */
static PyObject *m_masked_fill_(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *filled = m_masked_fill(self, args, kwargs);
  if (!filled)
    return NULL;
  gs_clear_error();
  gs_copy_(gsp_handle(self), gsp_handle(filled));
  Py_DECREF(filled);
  if (!gsp_check_void())
    return NULL;
  return Py_NewRef(self);
}

static PyMethodDef tensor_math_methods[] = {
    {"var", GSP_FN(m_var), METH_KW, NULL},
    {"std", GSP_FN(m_std), METH_KW, NULL},
    {"masked_fill", GSP_FN(m_masked_fill), METH_KW, NULL},
    {"masked_fill_", GSP_FN(m_masked_fill_), METH_KW, NULL},
    {NULL, NULL, 0, NULL},
};

/* Adds the methods to the ready Tensor type's dict (as tp_methods would). */
int gsp_tensor_math_install(void) {
  PyObject *dict = gsp_tensor_type.tp_dict;
  for (PyMethodDef *d = tensor_math_methods; d->ml_name; d++) {
    PyObject *descr = PyDescr_NewMethod(&gsp_tensor_type, d);
    if (!descr || PyDict_SetItemString(dict, d->ml_name, descr) < 0) {
      Py_XDECREF(descr);
      return -1;
    }
    Py_DECREF(descr);
  }
  PyType_Modified(&gsp_tensor_type);
  return 0;
}
