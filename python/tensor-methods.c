/* tensor-methods.c: the engine's ops as Tensor methods, with PyTorch's names and keyword
 * arguments (t.sum(dim=1, keepdim=True), t.view(2, -1), t.add_(b, alpha=0.1), ...), plus
 * autograd (backward, requires_grad_, retain_grad) and ownership (move_to_outer, dispose).
 * Each method is a thin call of the engine: the engine validates and the error it reports
 * becomes the exception. */
#include "gs-py.h"

#include <math.h>

#define METH_KW (METH_VARARGS | METH_KEYWORDS)

/* ---- conversion (the one-call methods are rows of tensor-op-table.c) ---------------- */

static PyObject *m_to(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dtype_obj = NULL;
  static char *kwlist[] = {"dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:to", kwlist, &dtype_obj))
    return NULL;
  if (PyUnicode_Check(dtype_obj) && PyUnicode_CompareWithASCIIString(dtype_obj, "cpu") == 0)
    return Py_NewRef(self);
  gs_dtype dtype;
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0)
    return NULL;
  if (dtype == gs_dtype_of(gsp_handle(self)))
    return Py_NewRef(self); /* as torch: same dtype, the same tensor */
  return gsp_wrap(gs_to_dtype(gsp_handle(self), dtype));
}

/* ---- reductions ---------------------------------------------------------------------- */

typedef gs_tensor (*reduce_fn)(gs_tensor, const int *, int, bool);

static PyObject *reduce(PyObject *self, PyObject *args, PyObject *kwargs, reduce_fn fn,
                        const char *format) {
  GSP_SITE();
  PyObject *dim = Py_None;
  int keepdim = 0;
  static char *kwlist[] = {"dim", "keepdim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &keepdim))
    return NULL;
  int dims[GS_MAX_DIMS];
  int n = gsp_dims_from_object(dim, dims);
  if (n < 0)
    return NULL;
  return gsp_wrap(fn(gsp_handle(self), dims, n, keepdim));
}

static PyObject *m_sum(PyObject *s, PyObject *a, PyObject *k) { return reduce(s, a, k, gs_sum, "|Op:sum"); }
static PyObject *m_mean(PyObject *s, PyObject *a, PyObject *k) { return reduce(s, a, k, gs_mean, "|Op:mean"); }
static PyObject *m_amax(PyObject *s, PyObject *a, PyObject *k) { return reduce(s, a, k, gs_max, "|Op:amax"); }
static PyObject *m_amin(PyObject *s, PyObject *a, PyObject *k) { return reduce(s, a, k, gs_min, "|Op:amin"); }
static PyObject *m_logsumexp(PyObject *s, PyObject *a, PyObject *k) {
  GSP_SITE();
  return reduce(s, a, k, gs_logsumexp, "O|p:logsumexp");
}

/* The (dim=None, keepdim=False) arguments of max, min, argmax and argmin. */
static bool dim_keepdim(PyObject *args, PyObject *kwargs, PyObject **dim, int *keepdim) {
  static char *kwlist[] = {"dim", "keepdim", NULL};
  *dim = Py_None;
  *keepdim = 0;
  return PyArg_ParseTupleAndKeywords(args, kwargs, "|Op", kwlist, dim, keepdim);
}

/* max()/min(): the whole tensor's extreme, or with dim= the pair (values, indices). */
static PyObject *extreme(PyObject *self, PyObject *args, PyObject *kwargs, bool is_max) {
  GSP_SITE();
  PyObject *dim;
  int keepdim;
  if (!dim_keepdim(args, kwargs, &dim, &keepdim))
    return NULL;
  gs_tensor t = gsp_handle(self);
  if (dim == Py_None)
    return gsp_wrap(is_max ? gs_max(t, NULL, 0, false) : gs_min(t, NULL, 0, false));
  if (gsp_is_tensor(dim))
    return gsp_binary(self, dim, is_max ? GSP_MAXIMUM : GSP_MINIMUM);
  int d = (int)PyLong_AsLong(dim);
  if (PyErr_Occurred())
    return NULL;
  PyObject *values = gsp_wrap(is_max ? gs_max(t, &d, 1, keepdim) : gs_min(t, &d, 1, keepdim));
  if (!values)
    return NULL;
  PyObject *indices = gsp_wrap(is_max ? gs_argmax(t, d, keepdim) : gs_argmin(t, d, keepdim));
  if (!indices) {
    Py_DECREF(values);
    return NULL;
  }
  return gsp_values_indices(is_max ? "max" : "min", values, indices);
}
static PyObject *m_max(PyObject *s, PyObject *a, PyObject *k) { return extreme(s, a, k, true); }
static PyObject *m_min(PyObject *s, PyObject *a, PyObject *k) { return extreme(s, a, k, false); }

static PyObject *arg_extreme(PyObject *self, PyObject *args, PyObject *kwargs, bool is_max) {
  GSP_SITE();
  PyObject *dim;
  int keepdim;
  if (!dim_keepdim(args, kwargs, &dim, &keepdim))
    return NULL;
  gs_tensor t = gsp_handle(self);
  if (dim == Py_None)
    return gsp_wrap(is_max ? gs_argmax_all(t) : gs_argmin_all(t));
  int d = (int)PyLong_AsLong(dim);
  if (PyErr_Occurred())
    return NULL;
  return gsp_wrap(is_max ? gs_argmax(t, d, keepdim) : gs_argmin(t, d, keepdim));
}
static PyObject *m_argmax(PyObject *s, PyObject *a, PyObject *k) { return arg_extreme(s, a, k, true); }
static PyObject *m_argmin(PyObject *s, PyObject *a, PyObject *k) { return arg_extreme(s, a, k, false); }

static PyObject *along_dim(PyObject *self, PyObject *args, PyObject *kwargs,
                           gs_tensor (*fn)(gs_tensor, int), const char *format) {
  GSP_SITE();
  int dim;
  static char *kwlist[] = {"dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim))
    return NULL;
  return gsp_wrap(fn(gsp_handle(self), dim));
}
static PyObject *m_softmax(PyObject *s, PyObject *a, PyObject *k) { return along_dim(s, a, k, gs_softmax, "i:softmax"); }
static PyObject *m_log_softmax(PyObject *s, PyObject *a, PyObject *k) {
  GSP_SITE();
  return along_dim(s, a, k, gs_log_softmax, "i:log_softmax");
}
static PyObject *m_unsqueeze(PyObject *s, PyObject *a, PyObject *k) {
  GSP_SITE();
  return along_dim(s, a, k, gs_unsqueeze, "i:unsqueeze");
}

/* ---- views --------------------------------------------------------------------------- */

static PyObject *m_permute(PyObject *self, PyObject *args) {
  GSP_SITE();
  int64_t d64[GS_MAX_DIMS];
  int dims[GS_MAX_DIMS];
  int nd = gsp_shape_from_args(args, d64);
  if (nd < 0)
    return NULL;
  for (int i = 0; i < nd; i++)
    dims[i] = (int)d64[i];
  return gsp_wrap(gs_permute(gsp_handle(self), dims, nd));
}

static PyObject *m_transpose(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int d0, d1;
  static char *kwlist[] = {"dim0", "dim1", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ii:transpose", kwlist, &d0, &d1))
    return NULL;
  return gsp_wrap(gs_transpose(gsp_handle(self), d0, d1));
}

static PyObject *m_squeeze(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dim = Py_None;
  static char *kwlist[] = {"dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:squeeze", kwlist, &dim))
    return NULL;
  if (dim == Py_None)
    return gsp_wrap(gs_squeeze_all(gsp_handle(self)));
  int d = (int)PyLong_AsLong(dim);
  return PyErr_Occurred() ? NULL : gsp_wrap(gs_squeeze(gsp_handle(self), d));
}

static PyObject *m_flatten(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int start = 0, end = -1;
  static char *kwlist[] = {"start_dim", "end_dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ii:flatten", kwlist, &start, &end))
    return NULL;
  return gsp_wrap(gs_flatten(gsp_handle(self), start, end));
}

static PyObject *m_narrow(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim;
  long long start, length;
  static char *kwlist[] = {"dim", "start", "length", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iLL:narrow", kwlist, &dim, &start, &length))
    return NULL;
  return gsp_wrap(gs_narrow(gsp_handle(self), dim, start, length));
}

static PyObject *m_select(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim;
  long long index;
  static char *kwlist[] = {"dim", "index", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iL:select", kwlist, &dim, &index))
    return NULL;
  return gsp_wrap(gs_select(gsp_handle(self), dim, index));
}

static PyObject *pieces(gs_tensor t, int64_t arg, int dim, bool by_size) {
  GSP_SITE();
  int n = by_size ? gs_split(t, arg, dim, NULL, 0) : gs_chunk(t, (int)arg, dim, NULL, 0);
  if (n < 0)
    return gsp_raise_engine_error();
  gs_tensor *out = PyMem_Malloc(sizeof(gs_tensor) * (size_t)(n > 0 ? n : 1));
  if (!out)
    return PyErr_NoMemory();
  n = by_size ? gs_split(t, arg, dim, out, n) : gs_chunk(t, (int)arg, dim, out, n);
  if (n < 0) {
    PyMem_Free(out);
    return gsp_raise_engine_error();
  }
  PyObject *tuple = PyTuple_New(n);
  for (int i = 0; i < n; i++) {
    PyObject *item = tuple ? gsp_wrap(out[i]) : NULL;
    if (!item) {
      for (int j = i + (tuple ? 1 : 0); j < n; j++)
        gs_dispose(out[j]);
      Py_XDECREF(tuple);
      PyMem_Free(out);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  PyMem_Free(out);
  return tuple;
}

static PyObject *m_split(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  long long size;
  int dim = 0;
  static char *kwlist[] = {"split_size", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L|i:split", kwlist, &size, &dim))
    return NULL;
  return pieces(gsp_handle(self), size, dim, true);
}

static PyObject *m_chunk(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int chunks, dim = 0;
  static char *kwlist[] = {"chunks", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|i:chunk", kwlist, &chunks, &dim))
    return NULL;
  return pieces(gsp_handle(self), chunks, dim, false);
}

static PyObject *indexed(PyObject *self, PyObject *args, PyObject *kwargs,
                         gs_tensor (*fn)(gs_tensor, int, gs_tensor), const char *format) {
  GSP_SITE();
  int dim;
  PyObject *index;
  static char *kwlist[] = {"dim", "index", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &dim, &gsp_tensor_type, &index))
    return NULL;
  return gsp_wrap(fn(gsp_handle(self), dim, gsp_handle(index)));
}
static PyObject *m_index_select(PyObject *s, PyObject *a, PyObject *k) {
  GSP_SITE();
  return indexed(s, a, k, gs_index_select, "iO!:index_select");
}
static PyObject *m_gather(PyObject *s, PyObject *a, PyObject *k) { return indexed(s, a, k, gs_gather, "iO!:gather"); }

static double bound(PyObject *o, double none_value) {
  return o == Py_None ? none_value : PyFloat_AsDouble(o);
}

static PyObject *m_clamp(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *lo = Py_None, *hi = Py_None;
  static char *kwlist[] = {"min", "max", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:clamp", kwlist, &lo, &hi))
    return NULL;
  double a = bound(lo, -INFINITY), b = bound(hi, INFINITY);
  if (PyErr_Occurred())
    return NULL;
  return gsp_wrap(gs_clamp(gsp_handle(self), a, b));
}

/* clamp_min(min) and clamp_max(max): clamp with one bound. */
static PyObject *one_bound(PyObject *self, PyObject *args, PyObject *kwargs, bool is_min,
                           bool in_place) {
  GSP_SITE();
  PyObject *v;
  static char *min_kw[] = {"min", NULL}, *max_kw[] = {"max", NULL};
  const char *format = is_min ? (in_place ? "O:clamp_min_" : "O:clamp_min")
                              : (in_place ? "O:clamp_max_" : "O:clamp_max");
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, is_min ? min_kw : max_kw, &v))
    return NULL;
  double b = PyFloat_AsDouble(v);
  if (b == -1.0 && PyErr_Occurred())
    return NULL;
  double lo = is_min ? b : -(double)INFINITY, hi = is_min ? (double)INFINITY : b;
  if (!in_place)
    return gsp_wrap(gs_clamp(gsp_handle(self), lo, hi));
  gs_clear_error();
  gs_clamp_(gsp_handle(self), lo, hi);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}
static PyObject *m_clamp_min(PyObject *s, PyObject *a, PyObject *k) {
  return one_bound(s, a, k, true, false);
}
static PyObject *m_clamp_max(PyObject *s, PyObject *a, PyObject *k) {
  return one_bound(s, a, k, false, false);
}
static PyObject *m_clamp_min_(PyObject *s, PyObject *a, PyObject *k) {
  return one_bound(s, a, k, true, true);
}
static PyObject *m_clamp_max_(PyObject *s, PyObject *a, PyObject *k) {
  return one_bound(s, a, k, false, true);
}

/* ---- in place ------------------------------------------------------------------------------ */

static PyObject *done_inplace(PyObject *self) {
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *m_add_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *other;
  double alpha = 1.0;
  static char *kwlist[] = {"other", "alpha", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$d:add_", kwlist, &other, &alpha))
    return NULL;
  gs_tensor t = gsp_handle(self), b, temp = GS_NO_TENSOR;
  gs_clear_error();
  if (PyFloat_Check(other) || PyLong_Check(other)) {
    double s = PyFloat_AsDouble(other) * alpha;
    if (PyErr_Occurred())
      return NULL;
    gs_add_scalar_(t, s);
    return done_inplace(self);
  }
  if (gsp_tensor_arg(other, &b, &temp, gs_dtype_of(t)) < 0)
    return NULL;
  if (alpha == 1.0)
    gs_add_(t, b);
  else
    gs_add_scaled_(t, b, alpha);
  gs_dispose(temp);
  return done_inplace(self);
}

static PyObject *m_zero_(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_zero_(gsp_handle(self));
  return done_inplace(self);
}

static PyObject *m_fill_(PyObject *self, PyObject *value) {
  GSP_SITE();
  double v = PyFloat_AsDouble(value);
  if (v == -1.0 && PyErr_Occurred())
    return NULL;
  gs_clear_error();
  gs_fill_(gsp_handle(self), v);
  return done_inplace(self);
}

static PyObject *m_clamp_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *lo = Py_None, *hi = Py_None;
  static char *kwlist[] = {"min", "max", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:clamp_", kwlist, &lo, &hi))
    return NULL;
  double a = bound(lo, -INFINITY), b = bound(hi, INFINITY);
  if (PyErr_Occurred())
    return NULL;
  gs_clear_error();
  gs_clamp_(gsp_handle(self), a, b);
  return done_inplace(self);
}

/* ---- autograd ------------------------------------------------------------------------------ */

static PyObject *m_requires_grad_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int flag = 1;
  static char *kwlist[] = {"requires_grad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:requires_grad_", kwlist, &flag))
    return NULL;
  gs_clear_error();
  gs_set_requires_grad(gsp_handle(self), flag);
  return done_inplace(self);
}

static PyObject *m_retain_grad(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_retain_grad(gsp_handle(self));
  return gsp_check_void();
}

static PyObject *m_backward(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *gradient = Py_None;
  int retain_graph = 0;
  static char *kwlist[] = {"gradient", "retain_graph", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:backward", kwlist, &gradient, &retain_graph))
    return NULL;
  if (gradient != Py_None && !gsp_is_tensor(gradient)) {
    PyErr_SetString(PyExc_TypeError, "backward(): gradient must be a Tensor or None");
    return NULL;
  }
  gs_clear_error();
  gs_tensor g = gradient == Py_None ? GS_NO_TENSOR : gsp_handle(gradient);
  if (gs_tensor_is_none(g) && !retain_graph)
    gs_backward(gsp_handle(self));
  else
    gs_backward_with(gsp_handle(self), g, retain_graph);
  return gsp_check_void();
}

/* ---- ownership ----------------------------------------------------------------------------- */

static PyObject *m_move_to_outer(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_move_to_outer(gsp_handle(self));
  return done_inplace(self);
}

static PyObject *m_detach_from_scopes(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_detach_from_scopes(gsp_handle(self));
  ((gsp_tensor *)self)->owned = true;
  return done_inplace(self);
}

/* Disposes the handle now (TorchSharp's Dispose()); later uses raise the stale-handle error. */
static PyObject *m_dispose(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_dispose(gsp_handle(self));
  return gsp_check_void();
}

static PyObject *m_owner_scope_name(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_scope s = gs_owner_scope(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  if (s.id == 0)
    Py_RETURN_NONE;
  return PyUnicode_FromString(gs_scope_name(s));
}

/* ---- information ----------------------------------------------------------------------- */

static PyObject *m_item(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_tensor t = gsp_handle(self);
  int64_t n = gs_numel(t);
  if (n < 0)
    return gsp_raise_engine_error();
  if (n != 1) {
    PyErr_Format(PyExc_RuntimeError,
                 "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
    return NULL;
  }
  gs_clear_error();
  double v = gs_item(t);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  switch (gs_dtype_of(t)) {
  case GS_I64: {
    int64_t i;
    gs_copy_to(t, &i, sizeof i);
    return PyLong_FromLongLong(i);
  }
  case GS_I32: /* every i32, u8, i8 and i16 is exact as a double */
  case GS_U8:
  case GS_I8:
  case GS_I16: return PyLong_FromDouble(v);
  case GS_BOOL: return PyBool_FromLong(v != 0);
  default: return PyFloat_FromDouble(v);
  }
}

static PyObject *m_size(PyObject *self, PyObject *args) {
  GSP_SITE();
  int dim = 0;
  gs_tensor t = gsp_handle(self);
  if (PyTuple_GET_SIZE(args) == 0) {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(t, shape);
    return nd < 0 ? gsp_raise_engine_error() : gsp_size_new(shape, nd);
  }
  if (!PyArg_ParseTuple(args, "i:size", &dim))
    return NULL;
  int64_t n = gs_size(t, dim);
  return n < 0 ? gsp_raise_engine_error() : PyLong_FromLongLong(n);
}

static PyObject *m_stride(PyObject *self, PyObject *args) {
  GSP_SITE();
  gs_tensor t = gsp_handle(self);
  int64_t strides[GS_MAX_DIMS];
  int nd = gs_strides(t, strides);
  if (nd < 0)
    return gsp_raise_engine_error();
  if (PyTuple_GET_SIZE(args) == 0)
    return gsp_int_tuple(strides, nd);
  int dim;
  if (!PyArg_ParseTuple(args, "i:stride", &dim))
    return NULL;
  gs_clear_error();
  int64_t s = gs_stride(t, dim);
  return gs_last_error_code() != GS_OK ? gsp_raise_engine_error() : PyLong_FromLongLong(s);
}

bool gsp_memory_format_of(PyObject *o, int *code, const char *fn) {
  if (!o || o == Py_None) {
    *code = GS_CONTIGUOUS_FORMAT;
    return true;
  }
  PyObject *c = PyObject_GetAttrString(o, "_code");
  long v = c && PyLong_Check(c) ? PyLong_AsLong(c) : -1;
  Py_XDECREF(c);
  if (v < 0 || v > GSP_PRESERVE_FORMAT) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s(): expected memory_format to be a memory_format (contiguous_format, "
                 "channels_last, channels_last_3d or preserve_format), got %R",
                 fn, o);
    return false;
  }
  *code = (int)v;
  return true;
}

/* t.is_contiguous(memory_format=contiguous_format) */
static PyObject *m_is_contiguous(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *format = NULL;
  static char *kwlist[] = {"memory_format", NULL};
  int code;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:is_contiguous", kwlist, &format) ||
      !gsp_memory_format_of(format, &code, "is_contiguous"))
    return NULL;
  if (code == GSP_PRESERVE_FORMAT) {
    PyErr_SetString(PyExc_RuntimeError,
                    "is_contiguous(): preserve_format is not a layout to test for");
    return NULL;
  }
  gs_clear_error();
  bool c = gs_is_contiguous_as(gsp_handle(self), (gs_memory_format)code);
  return gs_last_error_code() != GS_OK ? gsp_raise_engine_error() : PyBool_FromLong(c);
}

/* t.contiguous(memory_format=contiguous_format): t itself when it is laid out so already (as
 * torch's, for the channels-last formats; a row-major t gives a view, as before) */
static PyObject *m_contiguous(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *format = NULL;
  static char *kwlist[] = {"memory_format", NULL};
  int code;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:contiguous", kwlist, &format) ||
      !gsp_memory_format_of(format, &code, "contiguous"))
    return NULL;
  if (code == GSP_PRESERVE_FORMAT) {
    PyErr_SetString(PyExc_RuntimeError,
                    "preserve memory format is unsupported by the contiguous operator");
    return NULL;
  }
  gs_clear_error();
  gs_tensor t = gsp_handle(self);
  if (code != GS_CONTIGUOUS_FORMAT && gs_is_contiguous_as(t, (gs_memory_format)code))
    return Py_NewRef(self);
  gs_tensor r =
      code == GS_CONTIGUOUS_FORMAT ? gs_contiguous(t) : gs_contiguous_as(t, (gs_memory_format)code);
  return r.id ? gsp_wrap(r) : gsp_raise_engine_error();
}

/* t.clone(*, memory_format=None): a copy that stays in the graph, laid out as t (the
 * engine's copy-on-write clone; None is preserve_format, torch's default), or as memory_format
 * says: a copy with the format's
 * strides when t is not laid out so, as torch's. */
static PyObject *m_clone(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *format = NULL;
  static char *kwlist[] = {"memory_format", NULL};
  int code = GSP_PRESERVE_FORMAT;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:clone", kwlist, &format) ||
      (format && format != Py_None && !gsp_memory_format_of(format, &code, "clone")))
    return NULL;
  gs_clear_error();
  gs_tensor t = gsp_handle(self), r;
  if (code == GSP_PRESERVE_FORMAT || gs_is_contiguous_as(t, (gs_memory_format)code))
    r = gs_clone(t);
  else if (code == GS_CONTIGUOUS_FORMAT)
    r = gs_contiguous(t);
  else
    r = gs_contiguous_as(t, (gs_memory_format)code);
  return r.id ? gsp_wrap(r) : gsp_raise_engine_error();
}

static PyObject *m_element_size(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSize_t(gs_dtype_size(gs_dtype_of(gsp_handle(self))));
}

/* The address of the first element, as torch's data_ptr(): the same number on both sides of
 * a DLPack exchange. */
static PyObject *m_data_ptr(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  const void *p = gs_data(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyLong_FromVoidPtr((void *)p);
}

static PyObject *m_array(PyObject *self, PyObject *args) {
  GSP_SITE();
  (void)args;
  return gsp_tensor_numpy(self, NULL);
}

PyMethodDef gsp_tensor_methods[] = {
    {"to", GSP_FN(m_to), METH_KW, NULL},
    {"sum", GSP_FN(m_sum), METH_KW, NULL},
    {"mean", GSP_FN(m_mean), METH_KW, NULL},
    {"amax", GSP_FN(m_amax), METH_KW, NULL},
    {"amin", GSP_FN(m_amin), METH_KW, NULL},
    {"logsumexp", GSP_FN(m_logsumexp), METH_KW, NULL},
    {"max", GSP_FN(m_max), METH_KW, NULL},
    {"min", GSP_FN(m_min), METH_KW, NULL},
    {"argmax", GSP_FN(m_argmax), METH_KW, NULL},
    {"argmin", GSP_FN(m_argmin), METH_KW, NULL},
    {"softmax", GSP_FN(m_softmax), METH_KW, NULL},
    {"log_softmax", GSP_FN(m_log_softmax), METH_KW, NULL},
    {"unsqueeze", GSP_FN(m_unsqueeze), METH_KW, NULL},
    {"permute", m_permute, METH_VARARGS, NULL},
    {"transpose", GSP_FN(m_transpose), METH_KW, NULL},
    {"squeeze", GSP_FN(m_squeeze), METH_KW, NULL},
    {"flatten", GSP_FN(m_flatten), METH_KW, NULL},
    {"narrow", GSP_FN(m_narrow), METH_KW, NULL},
    {"select", GSP_FN(m_select), METH_KW, NULL},
    {"split", GSP_FN(m_split), METH_KW, NULL},
    {"chunk", GSP_FN(m_chunk), METH_KW, NULL},
    {"index_select", GSP_FN(m_index_select), METH_KW, NULL},
    {"gather", GSP_FN(m_gather), METH_KW, NULL},
    {"clamp", GSP_FN(m_clamp), METH_KW, NULL},
    {"clip", GSP_FN(m_clamp), METH_KW, NULL}, /* torch's alias */
    {"clamp_min", GSP_FN(m_clamp_min), METH_KW, NULL},
    {"clamp_max", GSP_FN(m_clamp_max), METH_KW, NULL},
    {"clamp_min_", GSP_FN(m_clamp_min_), METH_KW, NULL},
    {"clamp_max_", GSP_FN(m_clamp_max_), METH_KW, NULL},
    {"add_", GSP_FN(m_add_), METH_KW, NULL},
    {"zero_", m_zero_, METH_NOARGS, NULL},
    {"fill_", m_fill_, METH_O, NULL},
    {"clamp_", GSP_FN(m_clamp_), METH_KW, NULL},
    {"clip_", GSP_FN(m_clamp_), METH_KW, NULL},
    {"requires_grad_", GSP_FN(m_requires_grad_), METH_KW, NULL},
    {"retain_grad", m_retain_grad, METH_NOARGS, NULL},
    {"backward", GSP_FN(m_backward), METH_KW, NULL},
    {"move_to_outer", m_move_to_outer, METH_NOARGS, NULL},
    {"detach_from_scopes", m_detach_from_scopes, METH_NOARGS, NULL},
    {"dispose", m_dispose, METH_NOARGS, NULL},
    {"owner_scope_name", m_owner_scope_name, METH_NOARGS, NULL},
    {"item", m_item, METH_NOARGS, NULL},
    {"tolist", gsp_tensor_tolist, METH_NOARGS, NULL},
    {"size", m_size, METH_VARARGS, NULL},
    {"stride", m_stride, METH_VARARGS, NULL},
    {"is_contiguous", GSP_FN(m_is_contiguous), METH_VARARGS | METH_KEYWORDS, NULL},
    {"contiguous", GSP_FN(m_contiguous), METH_VARARGS | METH_KEYWORDS, NULL},
    {"clone", GSP_FN(m_clone), METH_VARARGS | METH_KEYWORDS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"numpy", gsp_tensor_numpy, METH_NOARGS, NULL},
    {"__array__", m_array, METH_VARARGS, NULL},
    {"__dlpack__", GSP_FN(gsp_tensor_dlpack), METH_KW, NULL},
    {"__dlpack_device__", gsp_tensor_dlpack_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
