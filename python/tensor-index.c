/* tensor-index.c: t[...] and t[...] = v with integers, slices, None and Ellipsis: basic
 * indexing as in PyTorch and NumPy, where every result is a view sharing t's storage (select,
 * slice, unsqueeze), so writes through it show in t. An index tensor picks rows along the first
 * dimension (index_select, a copy, as advanced indexing is). Assignment writes through the
 * view (copy_ or fill_) and bumps the storage's version. */
#include "gs-py.h"

/* Applies one index term at dimension *dim of *cur, replacing *cur by the view (the previous
 * intermediate is disposed). Returns 0, or -1 raised. */
static int apply_term(gs_tensor *cur, int *dim, PyObject *term, bool *owns) {
  gs_tensor next;
  gs_tensor t = *cur;
  if (term == Py_None) {
    next = gs_unsqueeze(t, *dim);
    (*dim)++;
  } else if (PySlice_Check(term)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(term, &start, &stop, &step) < 0)
      return -1;
    if (step <= 0) {
      PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
      return -1;
    }
    /* PySlice_Unpack gives PY_SSIZE_T_MIN/MAX for open ends; the engine clamps. */
    next = gs_slice(t, *dim, start, stop, step);
    (*dim)++;
  } else if (PyLong_Check(term) || (gsp_is_tensor(term) && gs_ndim(gsp_handle(term)) == 0 &&
                                    gs_dtype_of(gsp_handle(term)) == GS_I64)) {
    long long i = PyLong_Check(term) ? PyLong_AsLongLong(term) : (long long)gs_item(gsp_handle(term));
    if (i == -1 && PyErr_Occurred())
      return -1;
    next = gs_select(t, *dim, i);
  } else if (gsp_is_tensor(term) && gs_dtype_of(gsp_handle(term)) == GS_I64 &&
             gs_ndim(gsp_handle(term)) == 1) {
    next = gs_index_select(t, *dim, gsp_handle(term));
    (*dim)++;
  } else {
    PyErr_Format(PyExc_TypeError,
                 "only integers, slices, None, ... and 1-D int64 tensors are valid indices, "
                 "got %.200s",
                 Py_TYPE(term)->tp_name);
    return -1;
  }
  if (gs_tensor_is_none(next)) {
    gsp_raise_engine_error();
    return -1;
  }
  if (*owns)
    gs_dispose(t);
  *cur = next;
  *owns = true;
  return 0;
}

/* The view t[index]; *owns tells whether it is a new handle (false: t itself). */
static int index_view(gs_tensor t, PyObject *index, gs_tensor *out, bool *owns) {
  PyObject *terms = PyTuple_Check(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
  if (!terms)
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(terms);
  int consumed = 0; /* dimensions of t the terms use (ints and slices) */
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *term = PyTuple_GET_ITEM(terms, i);
    if (term != Py_None && term != Py_Ellipsis)
      consumed++;
  }
  int nd = gs_ndim(t);
  if (nd < 0) {
    Py_DECREF(terms);
    gsp_raise_engine_error();
    return -1;
  }
  if (consumed > nd) {
    Py_DECREF(terms);
    PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", nd);
    return -1;
  }
  gs_tensor cur = t;
  *owns = false;
  int dim = 0;
  bool seen_ellipsis = false;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *term = PyTuple_GET_ITEM(terms, i);
    if (term == Py_Ellipsis) {
      if (seen_ellipsis) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        goto fail;
      }
      seen_ellipsis = true;
      dim += nd - consumed;
      continue;
    }
    if (apply_term(&cur, &dim, term, owns) < 0)
      goto fail;
  }
  Py_DECREF(terms);
  *out = cur;
  return 0;
fail:
  if (*owns)
    gs_dispose(cur);
  Py_DECREF(terms);
  return -1;
}

static PyObject *tensor_getitem(PyObject *self, PyObject *index) {
  GSP_SITE();
  gs_tensor view;
  bool owns;
  if (index_view(gsp_handle(self), index, &view, &owns) < 0)
    return NULL;
  /* t[...] or t[()] with nothing to apply is still a new view (in the graph), as in PyTorch. */
  if (owns)
    return gsp_wrap(view);
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(view, shape);
  return gsp_wrap(gs_view(view, shape, nd));
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  GSP_SITE();
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
    return -1;
  }
  gs_tensor view;
  bool owns;
  if (index_view(gsp_handle(self), index, &view, &owns) < 0)
    return -1;
  gs_clear_error();
  PyObject *number = gsp_numpy_scalar_as_number(value);
  if (number)
    value = number;
  PyObject *data = NULL; /* t[0] = np.ones(4) or a list: copied in as a tensor, as torch does */
  if (!PyErr_Occurred() && !gsp_is_tensor(value) && !PyFloat_Check(value) && !PyLong_Check(value)) {
    PyObject *dtype = gsp_dtype_object(gs_dtype_of(view));
    data = dtype ? gsp_tensor_from_data(value, dtype, false) : NULL;
    Py_XDECREF(dtype);
    value = data;
  }
  if (PyErr_Occurred()) {
    Py_XDECREF(number);
    if (owns)
      gs_dispose(view);
    return -1;
  }
  if (gsp_is_tensor(value)) {
    gs_copy_(view, gsp_handle(value));
  } else {
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred()) {
      if (owns)
        gs_dispose(view);
      return -1;
    }
    gs_fill_(view, v);
  }
  Py_XDECREF(number);
  Py_XDECREF(data);
  PyObject *ok = gsp_check_void();
  if (owns)
    gs_dispose(view);
  return ok ? 0 : -1;
}

PyMappingMethods gsp_tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
