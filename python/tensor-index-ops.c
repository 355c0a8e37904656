/* tensor-index-ops.c: Tensor methods over the engine's ops that write by index and pick by
 * order, as PyTorch 1.13's: scatter, scatter_add, index_add, index_fill, index_put (each with its
 * in-place form), take, take_along_dim, prod, cumprod, logcumsumexp, median, cummax, cummin,
 * unique, cross and trace. They join the Tensor type at import (gsp_tensor_index_ops_install),
 * beside tensor-math.c's; gradscope.scatter(t, ...) and friends reach them through the forwarders
 * of functions.c.
 *
 * An in-place form computes the out-of-place result and copies it into the tensor (a version
 * bump), as masked_fill_ does.
 */
#include "gs-py.h"

#include <string.h>

#define METH_KW (METH_VARARGS | METH_KEYWORDS)

/* r written into self, which is returned; r GS_NO_TENSOR: the error raised (or reported). */
static PyObject *write_back(PyObject *self, gs_tensor r) {
  if (!r.id)
    return PyErr_Occurred() ? NULL : gsp_raise_engine_error();
  gs_clear_error();
  gs_copy_(gsp_handle(self), r);
  gs_dispose(r);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

/* A number argument, or a 0-D tensor's value (scatter's value, index_fill's), into *v. */
static bool number_of(PyObject *o, double *v) {
  if (gsp_is_tensor(o)) {
    PyObject *item = PyObject_CallMethod(o, "item", NULL);
    if (!item)
      return false;
    *v = PyFloat_AsDouble(item);
    Py_DECREF(item);
  } else {
    *v = PyFloat_AsDouble(o);
  }
  return !(*v == -1.0 && PyErr_Occurred());
}

/* ---- scatter, scatter_add, index_add, index_fill ----------------------------------------------
 */

/* reduce=None, 'add' or 'multiply' */
static bool reduce_of(const char *reduce, gs_scatter_reduce *mode) {
  if (!reduce)
    *mode = GS_SCATTER_REPLACE;
  else if (strcmp(reduce, "add") == 0)
    *mode = GS_SCATTER_ADD;
  else if (strcmp(reduce, "multiply") == 0)
    *mode = GS_SCATTER_MULTIPLY;
  else {
    PyErr_Format(PyExc_RuntimeError, "reduce argument must be either add or multiply, got '%s'",
                 reduce);
    return false;
  }
  return true;
}

/* t.scatter(dim, index, src, *, reduce=None) or t.scatter(dim, index, value, *, reduce=None):
 * src a tensor, value a number (as torch's two overloads, by the third argument's type). */
static gs_tensor scattered(PyObject *self, PyObject *args, PyObject *kwargs, const char *format) {
  int dim;
  PyObject *index, *src = NULL, *value = NULL;
  const char *reduce = NULL;
  static char *kwlist[] = {"dim", "index", "src", "value", "reduce", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &src, &value, &reduce))
    return GS_NO_TENSOR;
  gs_scatter_reduce mode;
  if (!reduce_of(reduce, &mode))
    return GS_NO_TENSOR;
  if (src == Py_None)
    src = NULL;
  if (value == Py_None)
    value = NULL;
  if ((src != NULL) == (value != NULL)) {
    PyErr_SetString(PyExc_ValueError,
                    "scatter(): expected one of src (a Tensor) or value (a number), got "
                    "both or neither");
    return GS_NO_TENSOR;
  }
  if (src && gsp_is_tensor(src) && !value)
    return gs_scatter(gsp_handle(self), dim, gsp_handle(index), gsp_handle(src), mode);
  double v;
  if (!number_of(src ? src : value, &v))
    return GS_NO_TENSOR;
  return gs_scatter_value(gsp_handle(self), dim, gsp_handle(index), v, mode);
}

static PyObject *m_scatter(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = scattered(self, args, kwargs, "iO!|OO$z:scatter");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_scatter_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, scattered(self, args, kwargs, "iO!|OO$z:scatter_"));
}

/* t.scatter_add(dim, index, src) */
static gs_tensor scatter_added(PyObject *self, PyObject *args, PyObject *kwargs,
                               const char *format) {
  int dim;
  PyObject *index, *src;
  static char *kwlist[] = {"dim", "index", "src", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &gsp_tensor_type, &src))
    return GS_NO_TENSOR;
  return gs_scatter_add(gsp_handle(self), dim, gsp_handle(index), gsp_handle(src));
}

static PyObject *m_scatter_add(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = scatter_added(self, args, kwargs, "iO!O!:scatter_add");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_scatter_add_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, scatter_added(self, args, kwargs, "iO!O!:scatter_add_"));
}

/* t.scatter_reduce(dim, index, src, reduce, *, include_self=True) */
static gs_tensor scatter_reduced(PyObject *self, PyObject *args, PyObject *kwargs,
                                 const char *format) {
  int dim, include_self = 1;
  PyObject *index, *src;
  const char *reduce;
  static char *kwlist[] = {"dim", "index", "src", "reduce", "include_self", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &gsp_tensor_type, &src, &reduce, &include_self))
    return GS_NO_TENSOR;
  static const char *const names[] = {"sum", "prod", "mean", "amax", "amin"};
  for (int i = 0; i < 5; i++) {
    if (strcmp(reduce, names[i]) != 0)
      continue;
    gs_clear_error();
    gs_tensor r = gs_scatter_reduced(gsp_handle(self), dim, gsp_handle(index), gsp_handle(src),
                                     (gs_scatter_reduction)i, include_self);
    gs_error_code code = gs_last_error_code();
    if (!r.id && (code == GS_ERR_INDEX || code == GS_ERR_DTYPE || code == GS_ERR_SHAPE))
      PyErr_SetString(PyExc_RuntimeError, gs_last_error()); /* torch's are RuntimeErrors */
    return r;
  }
  PyErr_Format(PyExc_RuntimeError,
               "reduce argument must be either sum, prod, mean, amax or amin, got %s", reduce);
  return GS_NO_TENSOR;
}

static PyObject *m_scatter_reduce(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = scatter_reduced(self, args, kwargs, "iO!O!s|$p:scatter_reduce");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_scatter_reduce_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, scatter_reduced(self, args, kwargs, "iO!O!s|$p:scatter_reduce_"));
}

/* t.index_reduce(dim, index, source, reduce, *, include_self=True) */
static gs_tensor index_reduced(PyObject *self, PyObject *args, PyObject *kwargs,
                               const char *format) {
  int dim, include_self = 1;
  PyObject *index, *source;
  const char *reduce;
  static char *kwlist[] = {"dim", "index", "source", "reduce", "include_self", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &gsp_tensor_type, &source, &reduce, &include_self))
    return GS_NO_TENSOR;
  /* the engine's reductions, by its numbering (sum is scatter_reduce's only) */
  static const char *const names[] = {NULL, "prod", "mean", "amax", "amin"};
  for (int i = 1; i < 5; i++)
    if (strcmp(reduce, names[i]) == 0)
      return gs_index_reduce(gsp_handle(self), dim, gsp_handle(index), gsp_handle(source),
                             (gs_scatter_reduction)i, include_self);
  PyErr_Format(PyExc_RuntimeError,
               "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.",
               reduce);
  return GS_NO_TENSOR;
}

static PyObject *m_index_reduce(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = index_reduced(self, args, kwargs, "iO!O!s|$p:index_reduce");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_index_reduce_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, index_reduced(self, args, kwargs, "iO!O!s|$p:index_reduce_"));
}

/* t.index_add(dim, index, source, *, alpha=1) */
static gs_tensor index_added(PyObject *self, PyObject *args, PyObject *kwargs, const char *format) {
  int dim;
  PyObject *index, *source;
  double alpha = 1.0;
  static char *kwlist[] = {"dim", "index", "source", "alpha", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &gsp_tensor_type, &source, &alpha))
    return GS_NO_TENSOR;
  return gs_index_add(gsp_handle(self), dim, gsp_handle(index), gsp_handle(source), alpha);
}

static PyObject *m_index_add(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = index_added(self, args, kwargs, "iO!O!|$d:index_add");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_index_add_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, index_added(self, args, kwargs, "iO!O!|$d:index_add_"));
}

/* t.index_fill(dim, index, value): value a number or a 0-D tensor */
static gs_tensor index_filled(PyObject *self, PyObject *args, PyObject *kwargs,
                              const char *format) {
  int dim;
  PyObject *index, *value;
  static char *kwlist[] = {"dim", "index", "value", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index,
                                   &value))
    return GS_NO_TENSOR;
  double v;
  if (!number_of(value, &v))
    return GS_NO_TENSOR;
  return gs_index_fill(gsp_handle(self), dim, gsp_handle(index), v);
}

static PyObject *m_index_fill(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = index_filled(self, args, kwargs, "iO!O:index_fill");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}
static PyObject *m_index_fill_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, index_filled(self, args, kwargs, "iO!O:index_fill_"));
}

/* ---- take, take_along_dim ------------------------------------------------------------------ */

static PyObject *m_take(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *index;
  static char *kwlist[] = {"index", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!:take", kwlist, &gsp_tensor_type, &index))
    return NULL;
  return gsp_wrap(gs_take(gsp_handle(self), gsp_handle(index)));
}

/* t.take_along_dim(indices, dim=None) */
static PyObject *m_take_along_dim(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *indices, *dim = Py_None;
  static char *kwlist[] = {"indices", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O:take_along_dim", kwlist, &gsp_tensor_type,
                                   &indices, &dim))
    return NULL;
  int d = 0;
  if (dim != Py_None) {
    d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred())
      return NULL;
  }
  return gsp_wrap(gs_take_along_dim(gsp_handle(self), gsp_handle(indices), d, dim != Py_None));
}

/* ---- products ------------------------------------------------------------------------------- */

/* The result converted to dtype (None: kept), as torch's dtype= arguments. */
static PyObject *with_dtype(PyObject *r, PyObject *dtype) {
  if (!r || dtype == Py_None)
    return r;
  PyObject *converted = PyObject_CallMethod(r, "to", "O", dtype);
  Py_DECREF(r);
  return converted;
}

/* t.prod(dim=None, keepdim=False, *, dtype=None): of everything without dim */
static PyObject *m_prod(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dim = Py_None, *dtype = Py_None;
  int keepdim = 0;
  static char *kwlist[] = {"dim", "keepdim", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op$O:prod", kwlist, &dim, &keepdim, &dtype))
    return NULL;
  gs_tensor t = gsp_handle(self);
  if (dim == Py_None)
    return with_dtype(gsp_wrap(gs_prod_all(t)), dtype);
  int d = PyLong_AsLong(dim);
  if (d == -1 && PyErr_Occurred())
    return NULL;
  return with_dtype(gsp_wrap(gs_prod(t, d, keepdim)), dtype);
}

static PyObject *m_cumprod(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim;
  PyObject *dtype = Py_None;
  static char *kwlist[] = {"dim", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|$O:cumprod", kwlist, &dim, &dtype))
    return NULL;
  return with_dtype(gsp_wrap(gs_cumprod(gsp_handle(self), dim)), dtype);
}

static PyObject *m_logcumsumexp(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim;
  static char *kwlist[] = {"dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i:logcumsumexp", kwlist, &dim))
    return NULL;
  return gsp_wrap(gs_logcumsumexp(gsp_handle(self), dim));
}

/* ---- picks by order: median, cummax, cummin, unique --------------------------------------------
 */

/* t.median() is a value; t.median(dim, keepdim=False) is (values, indices) */
static PyObject *m_median(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dim = Py_None;
  int keepdim = 0;
  static char *kwlist[] = {"dim", "keepdim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:median", kwlist, &dim, &keepdim))
    return NULL;
  if (dim == Py_None)
    return gsp_wrap(gs_median_all(gsp_handle(self)));
  int d = PyLong_AsLong(dim);
  if (d == -1 && PyErr_Occurred())
    return NULL;
  gs_tensor values = GS_NO_TENSOR, indices = GS_NO_TENSOR;
  gs_clear_error();
  bool ok = gs_median(gsp_handle(self), d, keepdim, &values, &indices);
  return gsp_wrap_values_indices("median", ok, values, indices);
}

static PyObject *running(PyObject *self, PyObject *args, PyObject *kwargs, bool largest) {
  GSP_SITE();
  int dim;
  static char *kwlist[] = {"dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, largest ? "i:cummax" : "i:cummin", kwlist, &dim))
    return NULL;
  gs_tensor values = GS_NO_TENSOR, indices = GS_NO_TENSOR;
  gs_clear_error();
  bool ok = (largest ? gs_cummax : gs_cummin)(gsp_handle(self), dim, &values, &indices);
  return gsp_wrap_values_indices(largest ? "cummax" : "cummin", ok, values, indices);
}
static PyObject *m_cummax(PyObject *s, PyObject *a, PyObject *k) { return running(s, a, k, true); }
static PyObject *m_cummin(PyObject *s, PyObject *a, PyObject *k) { return running(s, a, k, false); }

/* (values, inverse, counts) as torch returns them: the values alone unless more is asked
 * for, else a tuple of what was asked for, in that order. */
static PyObject *unique_result(gs_tensor values, gs_tensor inverse, gs_tensor counts,
                               bool want_inverse, bool want_counts) {
  PyObject *v = gsp_wrap(values);
  PyObject *inv = want_inverse ? gsp_wrap(inverse) : NULL;
  PyObject *cnt = want_counts ? gsp_wrap(counts) : NULL;
  if (!v || (want_inverse && !inv) || (want_counts && !cnt)) {
    Py_XDECREF(v), Py_XDECREF(inv), Py_XDECREF(cnt);
    return NULL;
  }
  if (!want_inverse && !want_counts)
    return v;
  PyObject *r = PyTuple_New(1 + want_inverse + want_counts);
  if (!r) {
    Py_DECREF(v), Py_XDECREF(inv), Py_XDECREF(cnt);
    return NULL;
  }
  Py_ssize_t k = 0;
  PyTuple_SET_ITEM(r, k++, v);
  if (inv)
    PyTuple_SET_ITEM(r, k++, inv);
  if (cnt)
    PyTuple_SET_ITEM(r, k++, cnt);
  return r;
}

/* dim=None or an int, into *dim; false with a TypeError. */
static bool optional_dim(PyObject *o, int *dim, bool *given) {
  *given = o != Py_None;
  if (!*given)
    return true;
  long d = PyLong_AsLong(o);
  if (d == -1 && PyErr_Occurred())
    return false;
  *dim = (int)d;
  return true;
}

/* t.unique(sorted=True, return_inverse=False, return_counts=False, dim=None): always sorted
 * (sorted=False allows any order); with dim, the distinct slices along it. */
static PyObject *m_unique(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int sorted = 1, return_inverse = 0, return_counts = 0, d = 0;
  bool has_dim;
  PyObject *dim = Py_None;
  static char *kwlist[] = {"sorted", "return_inverse", "return_counts", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pppO:unique", kwlist, &sorted, &return_inverse,
                                   &return_counts, &dim) ||
      !optional_dim(dim, &d, &has_dim))
    return NULL;
  gs_tensor values = GS_NO_TENSOR, inverse = GS_NO_TENSOR, counts = GS_NO_TENSOR;
  gs_tensor *inv = return_inverse ? &inverse : NULL, *cnt = return_counts ? &counts : NULL;
  gs_clear_error();
  bool ok = has_dim ? gs_unique_dim(gsp_handle(self), d, &values, inv, cnt)
                    : gs_unique(gsp_handle(self), &values, inv, cnt);
  if (!ok)
    return gsp_raise_engine_error();
  return unique_result(values, inverse, counts, return_inverse, return_counts);
}

/* t.unique_consecutive(return_inverse=False, return_counts=False, dim=None): runs of equal
 * values (or slices along dim), in their order. */
static PyObject *m_unique_consecutive(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int return_inverse = 0, return_counts = 0, d = 0;
  bool has_dim;
  PyObject *dim = Py_None;
  static char *kwlist[] = {"return_inverse", "return_counts", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ppO:unique_consecutive", kwlist, &return_inverse,
                                   &return_counts, &dim) ||
      !optional_dim(dim, &d, &has_dim))
    return NULL;
  gs_tensor values = GS_NO_TENSOR, inverse = GS_NO_TENSOR, counts = GS_NO_TENSOR;
  gs_clear_error();
  if (!gs_unique_consecutive(gsp_handle(self), has_dim ? &d : NULL, &values,
                             return_inverse ? &inverse : NULL, return_counts ? &counts : NULL))
    return gsp_raise_engine_error();
  return unique_result(values, inverse, counts, return_inverse, return_counts);
}

/* ---- cross, trace ---------------------------------------------------------------------------- */

/* t.cross(other, dim=None): without dim, the first dim of size 3 (torch.cross's 1.13 default;
 * torch.linalg.cross's is -1). */
static PyObject *m_cross(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *other, *dim = Py_None;
  static char *kwlist[] = {"other", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O:cross", kwlist, &gsp_tensor_type, &other,
                                   &dim))
    return NULL;
  gs_tensor t = gsp_handle(self);
  int d = -1;
  if (dim != Py_None) {
    d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred())
      return NULL;
  } else {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(t, shape);
    if (nd < 0)
      return gsp_raise_engine_error();
    for (d = 0; d < nd && shape[d] != 3; d++)
      ;
    if (d == nd) {
      PyErr_SetString(PyExc_RuntimeError, "no dimension of size 3 in input");
      return NULL;
    }
  }
  return gsp_wrap(gs_cross(t, gsp_handle(other), d));
}

static PyObject *m_trace(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  return gsp_wrap(gs_trace(gsp_handle(self)));
}

/* t.index_put_(indices, values) and t.index_put(...): tensor-index.c's, beside t[...] = v */
static PyObject *m_index_put_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  return gsp_tensor_index_put(self, args, kwargs, true);
}
static PyObject *m_index_put(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  return gsp_tensor_index_put(self, args, kwargs, false);
}

static PyMethodDef tensor_index_ops_methods[] = {
    {"index_put_", GSP_FN(m_index_put_), METH_KW, NULL},
    {"index_put", GSP_FN(m_index_put), METH_KW, NULL},
    {"scatter", GSP_FN(m_scatter), METH_KW, NULL},
    {"scatter_", GSP_FN(m_scatter_), METH_KW, NULL},
    {"scatter_add", GSP_FN(m_scatter_add), METH_KW, NULL},
    {"scatter_add_", GSP_FN(m_scatter_add_), METH_KW, NULL},
    {"scatter_reduce", GSP_FN(m_scatter_reduce), METH_KW, NULL},
    {"scatter_reduce_", GSP_FN(m_scatter_reduce_), METH_KW, NULL},
    {"index_reduce", GSP_FN(m_index_reduce), METH_KW, NULL},
    {"index_reduce_", GSP_FN(m_index_reduce_), METH_KW, NULL},
    {"index_add", GSP_FN(m_index_add), METH_KW, NULL},
    {"index_add_", GSP_FN(m_index_add_), METH_KW, NULL},
    {"index_fill", GSP_FN(m_index_fill), METH_KW, NULL},
    {"index_fill_", GSP_FN(m_index_fill_), METH_KW, NULL},
    {"take", GSP_FN(m_take), METH_KW, NULL},
    {"take_along_dim", GSP_FN(m_take_along_dim), METH_KW, NULL},
    {"prod", GSP_FN(m_prod), METH_KW, NULL},
    {"cumprod", GSP_FN(m_cumprod), METH_KW, NULL},
    {"logcumsumexp", GSP_FN(m_logcumsumexp), METH_KW, NULL},
    {"median", GSP_FN(m_median), METH_KW, NULL},
    {"cummax", GSP_FN(m_cummax), METH_KW, NULL},
    {"cummin", GSP_FN(m_cummin), METH_KW, NULL},
    {"unique", GSP_FN(m_unique), METH_KW, NULL},
    {"unique_consecutive", GSP_FN(m_unique_consecutive), METH_KW, NULL},
    {"cross", GSP_FN(m_cross), METH_KW, NULL},
    {"trace", m_trace, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* Adds the methods to the ready Tensor type's dict (as tp_methods would). */
int gsp_tensor_index_ops_install(void) {
  gsp_docs_fill(tensor_index_ops_methods, "Tensor");
  PyObject *dict = gsp_tensor_type.tp_dict;
  for (PyMethodDef *d = tensor_index_ops_methods; d->ml_name; d++) {
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
