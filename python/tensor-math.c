/* tensor-math.c: Tensor methods over the engine's moment and masking ops, as PyTorch's: var,
 * std (unbiased= or correction=, dim, keepdim) and masked_fill, and over the ops along a dim
 * and the compositions (cumsum, sort, argsort, topk, norm, repeat, expand_as, masked_select),
 * and the strict matrix products (mm, bmm, mv, dot, outer, addmm).
 * They live beside tensor-methods.c's table and join the Tensor type at import
 * (gsp_tensor_math_install); gradscope.var(t) and friends reach them through the functional
 * forwarders of functions.c.
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

/* t.cumsum(dim) */
static PyObject *m_cumsum(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim;
  PyObject *dtype = Py_None;
  static char *kwlist[] = {"dim", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|$O:cumsum", kwlist, &dim, &dtype))
    return NULL;
  PyObject *r = gsp_wrap(gs_cumsum(gsp_handle(self), dim));
  if (!r || dtype == Py_None)
    return r;
  PyObject *converted = PyObject_CallMethod(r, "to", "O", dtype);
  Py_DECREF(r);
  return converted;
}

/* (values, indices) as op's torch.return_types class (gradscope/return_types.py: one per op,
 * printed as torch prints it); steals both references. */
PyObject *gsp_values_indices(const char *op, PyObject *values, PyObject *indices) {
  static PyObject *return_types; /* the module, kept for the process */
  if (!return_types)
    return_types = PyImport_ImportModule("gradscope.return_types");
  PyObject *type = return_types ? PyObject_GetAttrString(return_types, op) : NULL;
  PyObject *pair = type ? PyObject_CallFunctionObjArgs(type, values, indices, NULL) : NULL;
  Py_XDECREF(type);
  Py_DECREF(values);
  Py_DECREF(indices);
  return pair;
}

PyObject *gsp_wrap_values_indices(const char *op, bool ok, gs_tensor values, gs_tensor indices) {
  if (!ok)
    return gsp_raise_engine_error();
  PyObject *v = gsp_wrap(values), *i = v ? gsp_wrap(indices) : NULL;
  if (!i) {
    if (!v)
      gs_dispose(indices);
    Py_XDECREF(v);
    return NULL;
  }
  return gsp_values_indices(op, v, i);
}

/* t.sort(dim=-1, descending=False, stable=False): a stable sort either way. */
static PyObject *m_sort(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim = -1, descending = 0, stable = 0;
  static char *kwlist[] = {"dim", "descending", "stable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ip$p:sort", kwlist, &dim, &descending,
                                   &stable))
    return NULL;
  gs_tensor values = GS_NO_TENSOR, indices = GS_NO_TENSOR;
  gs_clear_error();
  bool ok = gs_sort(gsp_handle(self), dim, descending, &values, &indices);
  return gsp_wrap_values_indices("sort", ok, values, indices);
}

static PyObject *m_argsort(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  int dim = -1, descending = 0;
  static char *kwlist[] = {"dim", "descending", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ip:argsort", kwlist, &dim, &descending))
    return NULL;
  return gsp_wrap(gs_argsort(gsp_handle(self), dim, descending));
}

/* t.topk(k, dim=-1, largest=True, sorted=True): always sorted (sorted=False allows any order). */
static PyObject *m_topk(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  long long k;
  int dim = -1, largest = 1, sorted = 1;
  static char *kwlist[] = {"k", "dim", "largest", "sorted", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L|ipp:topk", kwlist, &k, &dim, &largest,
                                   &sorted))
    return NULL;
  gs_tensor values = GS_NO_TENSOR, indices = GS_NO_TENSOR;
  gs_clear_error();
  bool ok = gs_topk(gsp_handle(self), k, dim, largest, &values, &indices);
  return gsp_wrap_values_indices("topk", ok, values, indices);
}

/* t.norm(p='fro', dim=None, keepdim=False): 'fro' and None are the 2-norm, 'inf' strings and
 * float('inf') the max norm, as torch.norm over vectors. */
static PyObject *m_norm(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *p_obj = Py_None, *dim = Py_None;
  int keepdim = 0;
  PyObject *dtype = Py_None;
  static char *kwlist[] = {"p", "dim", "keepdim", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOp$O:norm", kwlist, &p_obj, &dim, &keepdim,
                                   &dtype))
    return NULL;
  double p = 2.0;
  if (PyUnicode_Check(p_obj)) {
    if (PyUnicode_CompareWithASCIIString(p_obj, "fro") != 0) {
      PyErr_Format(PyExc_ValueError, "norm(): p must be a number or 'fro', got %R", p_obj);
      return NULL;
    }
  } else if (p_obj != Py_None) {
    p = PyFloat_AsDouble(p_obj);
    if (p == -1.0 && PyErr_Occurred())
      return NULL;
  }
  int dims[GS_MAX_DIMS];
  int n = gsp_dims_from_object(dim, dims);
  if (n < 0)
    return NULL;
  return gsp_wrap(gs_norm(gsp_handle(self), p, dims, n, keepdim));
}

/* t.repeat(2, 3) or t.repeat((2, 3)) */
static PyObject *m_repeat(PyObject *self, PyObject *args) {
  GSP_SITE();
  int64_t reps[GS_MAX_DIMS];
  int n = gsp_shape_from_args(args, reps);
  return n < 0 ? NULL : gsp_wrap(gs_repeat(gsp_handle(self), reps, n));
}

static PyObject *m_expand_as(PyObject *self, PyObject *other) {
  GSP_SITE();
  if (!gsp_is_tensor(other)) {
    PyErr_Format(PyExc_TypeError, "expand_as(): expected a Tensor, got %.200s",
                 Py_TYPE(other)->tp_name);
    return NULL;
  }
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(gsp_handle(other), shape);
  if (nd < 0)
    return gsp_raise_engine_error();
  return gsp_wrap(gs_expand(gsp_handle(self), shape, nd));
}

/* size, stride and storage_offset=None (t's own offset) as as_strided takes them; the number
 * of dims, or -1 with an exception set. */
static int strided_geometry(gs_tensor t, PyObject *size, PyObject *stride, PyObject *offset,
                            int64_t *shape, int64_t *strides, long long *at) {
  int nd = gsp_shape_from_sequence(size, shape);
  if (nd < 0)
    return -1;
  int ns = gsp_shape_from_sequence(stride, strides);
  if (ns < 0)
    return -1;
  if (ns != nd) {
    PyErr_Format(PyExc_RuntimeError,
                 "mismatch in length of strides and shape: %d sizes and %d strides", nd, ns);
    return -1;
  }
  *at = offset == Py_None ? (long long)gs_storage_offset(t) : PyLong_AsLongLong(offset);
  return *at == -1 && PyErr_Occurred() ? -1 : nd;
}

/* t.as_strided(size, stride, storage_offset=None): None keeps t's offset, as torch. */
static PyObject *m_as_strided(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *size, *stride, *offset = Py_None;
  static char *kwlist[] = {"size", "stride", "storage_offset", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:as_strided", kwlist, &size, &stride,
                                   &offset))
    return NULL;
  int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  long long at;
  gs_tensor t = gsp_handle(self);
  int nd = strided_geometry(t, size, stride, offset, shape, strides, &at);
  return nd < 0 ? NULL : gsp_wrap(gs_as_strided(t, shape, strides, nd, at));
}

/* t.as_strided_(size, stride, storage_offset=None): the same geometry given to t itself
 * (gs_as_strided_); returns t. _op names the in-place op made of it (unsqueeze_, t_, ...) in
 * errors and the log. */
static PyObject *m_as_strided_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *size, *stride, *offset = Py_None;
  const char *op = "as_strided_";
  static char *kwlist[] = {"size", "stride", "storage_offset", "_op", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$s:as_strided_", kwlist, &size, &stride,
                                   &offset, &op))
    return NULL;
  int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  long long at;
  gs_tensor t = gsp_handle(self);
  int nd = strided_geometry(t, size, stride, offset, shape, strides, &at);
  if (nd < 0)
    return NULL;
  gs_clear_error();
  if (!gs_as_strided_(t, shape, strides, nd, at, op))
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *m_masked_select(PyObject *self, PyObject *mask) {
  GSP_SITE();
  if (!gsp_is_tensor(mask)) {
    PyErr_Format(PyExc_TypeError, "masked_select(): expected a bool Tensor mask, got %.200s",
                 Py_TYPE(mask)->tp_name);
    return NULL;
  }
  return gsp_wrap(gs_masked_select(gsp_handle(self), gsp_handle(mask)));
}

/* ---- the strict products: t.mm(m), t.bmm(b), t.mv(v), t.dot(v), t.outer(v), t.addmm -------- */

/* Their operands are tensors only, as torch's (a number is refused, not broadcast): `what`
 * names the argument as torch's message does. */
static bool product_operand(PyObject *o, const char *fn, const char *what) {
  if (gsp_is_tensor(o))
    return true;
  PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position 1) must be Tensor, not %.200s", fn,
               what, Py_TYPE(o)->tp_name);
  return false;
}

static PyObject *product(PyObject *self, PyObject *other, gs_tensor (*fn)(gs_tensor, gs_tensor),
                         const char *name, const char *what) {
  GSP_SITE();
  if (!product_operand(other, name, what))
    return NULL;
  return gsp_wrap(fn(gsp_handle(self), gsp_handle(other)));
}

static PyObject *m_mm(PyObject *s, PyObject *o) { return product(s, o, gs_mm, "mm", "mat2"); }
static PyObject *m_bmm(PyObject *s, PyObject *o) { return product(s, o, gs_bmm, "bmm", "mat2"); }
static PyObject *m_mv(PyObject *s, PyObject *o) { return product(s, o, gs_mv, "mv", "vec"); }
static PyObject *m_dot(PyObject *s, PyObject *o) { return product(s, o, gs_dot, "dot", "tensor"); }

/* t.outer(v): t reshaped to a column times v, for 1-D t and v: the nodes torch 1.13 records
 * (MulBackward0 over ReshapeAliasBackward0). */
static PyObject *m_outer(PyObject *self, PyObject *other) {
  GSP_SITE();
  if (!product_operand(other, "outer", "vec2"))
    return NULL;
  gs_tensor a = gsp_handle(self), b = gsp_handle(other);
  int na = gs_ndim(a), nb = gs_ndim(b);
  if (na < 0 || nb < 0)
    return gsp_raise_engine_error();
  if (na != 1 || nb != 1) {
    PyErr_Format(PyExc_RuntimeError, "outer: expected two 1-D vectors, got %d-D and %d-D", na, nb);
    return NULL;
  }
  int64_t n = gs_numel(a);
  gs_tensor column = gs_reshape(a, (int64_t[]){n, 1}, 2); /* torch's reshape, named as its */
  gs_tensor r = column.id ? gs_mul(column, b) : GS_NO_TENSOR;
  gs_dispose(column);
  return gsp_wrap(r);
}

/* t.addmm(mat1, mat2, *, beta=1, alpha=1): beta * t + alpha * mat1 @ mat2 (torch.addmm's
 * input is the method's self). */
static PyObject *m_addmm(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *mat1, *mat2;
  double beta = 1.0, alpha = 1.0;
  static char *kwlist[] = {"mat1", "mat2", "beta", "alpha", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$dd:addmm", kwlist, &mat1, &mat2, &beta,
                                   &alpha))
    return NULL;
  if (!product_operand(mat1, "addmm", "mat1") || !product_operand(mat2, "addmm", "mat2"))
    return NULL;
  return gsp_wrap(gs_addmm(gsp_handle(self), gsp_handle(mat1), gsp_handle(mat2), beta, alpha));
}

/* t.round(*, decimals=0): half to even, as torch.round. */
static gs_tensor rounded(PyObject *self, PyObject *args, PyObject *kwargs, const char *format) {
  int decimals = 0;
  static char *kwlist[] = {"decimals", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &decimals))
    return GS_NO_TENSOR;
  return gs_round_decimals(gsp_handle(self), decimals);
}

static PyObject *m_round(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = rounded(self, args, kwargs, "|$i:round");
  return r.id || !PyErr_Occurred() ? gsp_wrap(r) : NULL;
}

/* The in-place form's end: r (the op's result, or the empty handle after an error) written
 * into self, which is returned. */
static PyObject *write_back(PyObject *self, gs_tensor r) {
  if (!r.id)
    return PyErr_Occurred() ? NULL : gsp_raise_engine_error();
  gs_copy_(gsp_handle(self), r);
  gs_dispose(r);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *m_round_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, rounded(self, args, kwargs, "|$i:round_"));
}

/* t.lerp(end, weight): t + weight * (end - t), weight a number or a tensor. */
static gs_tensor lerped(PyObject *self, PyObject *args, PyObject *kwargs, const char *format) {
  PyObject *end, *weight;
  static char *kwlist[] = {"end", "weight", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &gsp_tensor_type, &end, &weight))
    return GS_NO_TENSOR;
  gs_tensor t = gsp_handle(self);
  if (gsp_is_tensor(weight))
    return gs_lerp(t, gsp_handle(end), gsp_handle(weight));
  double w = PyFloat_AsDouble(weight);
  if (w == -1.0 && PyErr_Occurred())
    return GS_NO_TENSOR;
  return gs_lerp_scalar(t, gsp_handle(end), w);
}

static PyObject *m_lerp(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_tensor r = lerped(self, args, kwargs, "O!O:lerp");
  return r.id || !PyErr_Occurred() ? gsp_wrap(r) : NULL;
}

static PyObject *m_lerp_(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, lerped(self, args, kwargs, "O!O:lerp_"));
}

/* t.polygamma(n): the n-th derivative of digamma, as torch's Tensor.polygamma. */
static gs_tensor polygamma_of(PyObject *self, PyObject *args, const char *format) {
  int n;
  if (!PyArg_ParseTuple(args, format, &n))
    return GS_NO_TENSOR;
  return gs_polygamma(n, gsp_handle(self));
}

static PyObject *m_polygamma(PyObject *self, PyObject *args) {
  GSP_SITE();
  gs_clear_error();
  gs_tensor r = polygamma_of(self, args, "i:polygamma");
  return r.id ? gsp_wrap(r) : PyErr_Occurred() ? NULL : gsp_raise_engine_error();
}

static PyObject *m_polygamma_(PyObject *self, PyObject *args) {
  GSP_SITE();
  gs_clear_error();
  return write_back(self, polygamma_of(self, args, "i:polygamma_"));
}

static PyMethodDef tensor_math_methods[] = {
    {"polygamma", m_polygamma, METH_VARARGS, NULL},
    {"polygamma_", m_polygamma_, METH_VARARGS, NULL},
    {"round", GSP_FN(m_round), METH_KW, NULL},
    {"round_", GSP_FN(m_round_), METH_KW, NULL},
    {"lerp", GSP_FN(m_lerp), METH_KW, NULL},
    {"lerp_", GSP_FN(m_lerp_), METH_KW, NULL},
    {"cumsum", GSP_FN(m_cumsum), METH_KW, NULL},
    {"sort", GSP_FN(m_sort), METH_KW, NULL},
    {"argsort", GSP_FN(m_argsort), METH_KW, NULL},
    {"topk", GSP_FN(m_topk), METH_KW, NULL},
    {"norm", GSP_FN(m_norm), METH_KW, NULL},
    {"repeat", m_repeat, METH_VARARGS, NULL},
    {"expand_as", m_expand_as, METH_O, NULL},
    {"as_strided", GSP_FN(m_as_strided), METH_KW, NULL},
    {"as_strided_", GSP_FN(m_as_strided_), METH_KW, NULL},
    {"masked_select", m_masked_select, METH_O, NULL},
    {"var", GSP_FN(m_var), METH_KW, NULL},
    {"std", GSP_FN(m_std), METH_KW, NULL},
    {"masked_fill", GSP_FN(m_masked_fill), METH_KW, NULL},
    {"masked_fill_", GSP_FN(m_masked_fill_), METH_KW, NULL},
    {"mm", m_mm, METH_O, NULL},
    {"bmm", m_bmm, METH_O, NULL},
    {"mv", m_mv, METH_O, NULL},
    {"dot", m_dot, METH_O, NULL},
    {"outer", m_outer, METH_O, NULL},
    {"addmm", GSP_FN(m_addmm), METH_KW, NULL},
    {NULL, NULL, 0, NULL},
};

/* Adds the methods to the ready Tensor type's dict (as tp_methods would). */
int gsp_tensor_math_install(void) {
  gsp_docs_fill(tensor_math_methods, "Tensor");
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
