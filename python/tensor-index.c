/* tensor-index.c: t[...] and t[...] = v with integers, slices, None and Ellipsis: basic
 * indexing as in PyTorch and NumPy, where every result is a view sharing t's storage (select,
 * slice, unsqueeze), so writes through it show in t. Assignment writes through the view
 * (copy_ or fill_) and bumps the storage's version.
 *
 * Advanced indexing, as PyTorch's, makes copies recorded as one IndexBackward node (gs_index):
 * an integer tensor, list or array picks entries along its dim (negative entries count from
 * the end, an n-D index gives n dims), a bool mask of the tensor's shape picks its true
 * elements and a 1-D bool mask the rows it marks. t[index] = v with one such index writes through
 * index_put (or where, for a full mask) and copies the result into t.
 */
#include "gs-py.h"

#include <string.h>

/* A list, tuple or array used as an index, as a new tensor (i64 or bool); other terms as a
 * new reference to themselves. PyTorch 1.13's rules: an int32, int16 or int8 array indexes as
 * int64 (torch converts it); a uint8 tensor or array is a mask, with 1.13's deprecation
 * warning. */
static PyObject *index_term(PyObject *term) {
  if (PyList_Check(term))
    return gsp_tensor_from_data(term, NULL, false);
  bool array = gsp_is_ndarray(term);
  if (!array && !gsp_is_tensor(term))
    return Py_NewRef(term);
  PyObject *t = array ? gsp_tensor_from_data(term, NULL, false) : Py_NewRef(term);
  if (!t)
    return NULL;
  gs_dtype d = gs_dtype_of(gsp_handle(t)), to = d;
  if (d == GS_U8) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                     "torch.bool instead.",
                     1) < 0) {
      Py_DECREF(t);
      return NULL;
    }
    to = GS_BOOL;
  } else if (array && (d == GS_I32 || d == GS_I16 || d == GS_I8)) {
    to = GS_I64;
  }
  if (to == d)
    return t;
  PyObject *converted = gsp_wrap(gs_to_dtype(gsp_handle(t), to));
  Py_DECREF(t);
  return converted;
}

static bool is_advanced(PyObject *term) {
  return gsp_is_tensor(term) && gs_ndim(gsp_handle(term)) > 0 &&
         (gs_dtype_of(gsp_handle(term)) == GS_I64 || gs_dtype_of(gsp_handle(term)) == GS_BOOL);
}

/* The positions of a bool mask's true entries (row-major), as a 1-D i64 tensor. */
static gs_tensor mask_positions(gs_tensor mask) {
  gs_tensor flat = gs_contiguous(mask);
  int64_t n = gs_numel(flat), count = 0;
  const bool *bits = gs_data(flat);
  if (n < 0 || !bits) {
    gs_dispose(flat);
    return GS_NO_TENSOR;
  }
  int64_t *pos = PyMem_Malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!pos) {
    gs_dispose(flat);
    PyErr_NoMemory();
    return GS_NO_TENSOR;
  }
  for (int64_t i = 0; i < n; i++)
    if (bits[i])
      pos[count++] = i;
  gs_tensor out = gs_from_data(GS_I64, &count, 1, pos);
  PyMem_Free(pos);
  gs_dispose(flat);
  return out;
}

/* An i64 index with its negative entries counted from the end of a dim of size n (for
 * index_put, t[index] = v). */
static gs_tensor wrap_negatives(gs_tensor index, int64_t n) {
  gs_tensor negative = gs_lt_scalar(index, 0);
  gs_tensor size = gs_scalar(GS_I64, (double)n);
  gs_tensor shifted = gs_add(index, size);
  gs_tensor out = gs_where(negative, shifted, index);
  gs_dispose(negative), gs_dispose(size), gs_dispose(shifted);
  return out;
}

/* t[index] along dim for an n-D i64 index (negative entries count from the end): one
 * IndexBackward node over t, as torch records it (gs_index). */
static gs_tensor take_along(gs_tensor t, int dim, gs_tensor index) {
  return gs_index(t, dim, 1, index);
}

/* Whether mask has the shape of t's dims from dim on (as many as it has): t[..., mask] then
 * picks the positions of those dims where it is true. */
static bool covers_dims(gs_tensor t, int dim, gs_tensor mask) {
  int64_t ts[GS_MAX_DIMS], ms[GS_MAX_DIMS];
  int tn = gs_shape(t, ts), mn = gs_shape(mask, ms);
  return mn >= 1 && tn >= dim + mn && memcmp(ts + dim, ms, sizeof(int64_t) * (size_t)mn) == 0;
}

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
  } else if (is_advanced(term) && gs_dtype_of(gsp_handle(term)) == GS_I64) {
    next = take_along(t, *dim, gsp_handle(term));
    *dim += gs_ndim(gsp_handle(term));
  } else if (is_advanced(term) && covers_dims(t, *dim, gsp_handle(term))) {
    /* a mask of the dims from *dim on: one IndexBackward node over t, as torch's */
    gs_tensor positions = mask_positions(gsp_handle(term));
    if (!positions.id && PyErr_Occurred())
      return -1;
    next = positions.id ? gs_index(t, *dim, gs_ndim(gsp_handle(term)), positions) : GS_NO_TENSOR;
    gs_dispose(positions);
    (*dim)++;
  } else if (is_advanced(term) && gs_ndim(gsp_handle(term)) == 1) { /* a mask of rows */
    gs_tensor rows = mask_positions(gsp_handle(term));
    if (!rows.id && PyErr_Occurred())
      return -1;
    next = rows.id ? gs_index(t, *dim, 1, rows) : GS_NO_TENSOR;
    gs_dispose(rows);
    (*dim)++;
  } else if (is_advanced(term) && *dim == 0 && gs_ndim(gsp_handle(term)) == gs_ndim(t)) {
    next = gs_masked_select(t, gsp_handle(term)); /* a mask of elements, broadcast */
    *dim = 1;
  } else if (gsp_is_tensor(term) && gs_dtype_is_integer(gs_dtype_of(gsp_handle(term)))) {
    /* PyTorch 1.13's rule: index_select takes int32 indexes, [] takes none of int32, int16
     * and int8 */
    PyErr_Format(PyExc_IndexError,
                 "tensors used as indices must be long, byte or bool tensors, got an %s tensor "
                 "(index with t.long())",
                 gsp_dtype_torch_name(gs_dtype_of(gsp_handle(term))));
    return -1;
  } else {
    PyErr_Format(PyExc_TypeError,
                 "only integers, slices, None, ..., integer or bool tensors, lists and arrays "
                 "are valid indices (a bool mask covering all dims or one dim), got %.200s",
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
  PyObject *given = PyTuple_Check(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
  if (!given)
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(given);
  PyObject *terms = PyTuple_New(n);
  for (Py_ssize_t i = 0; terms && i < n; i++) {
    PyObject *term = index_term(PyTuple_GET_ITEM(given, i));
    if (!term)
      Py_CLEAR(terms);
    else
      PyTuple_SET_ITEM(terms, i, term);
  }
  Py_DECREF(given);
  if (!terms)
    return -1;
  int consumed = 0; /* dimensions of t the terms use (ints, slices, indexes, masks) */
  int advanced = 0;
  for (Py_ssize_t i = 0; i < n; i++)
    advanced += is_advanced(PyTuple_GET_ITEM(terms, i));
  if (advanced > 1) {
    /* torch pairs several index tensors elementwise (t[rows, cols] picks t[rows[k], cols[k]]);
     * applied one after the other they would select the outer product instead: refused
     * rather than answered differently. */
    Py_DECREF(terms);
    PyErr_Format(PyExc_NotImplementedError,
                 "t[...] with %d index tensors in one index is not supported by gradscope yet "
                 "(torch pairs them elementwise); index the flattened tensor instead, as "
                 "t.reshape(-1)[rows * t.shape[1] + cols]",
                 advanced);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *term = PyTuple_GET_ITEM(terms, i);
    if (gsp_is_tensor(term) && gs_dtype_of(gsp_handle(term)) == GS_BOOL)
      consumed += gs_ndim(gsp_handle(term));
    else if (term != Py_None && term != Py_Ellipsis)
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

/* t[index] = value for one advanced index: the result of index_put (or of where, for a mask
 * of t's shape) copied into t, so t's version bumps and autograd sees a copy_. */
static int advanced_setitem(gs_tensor t, PyObject *index, PyObject *value_obj) {
  PyObject *value = gsp_is_tensor(value_obj) || PyFloat_Check(value_obj) ||
                            PyLong_Check(value_obj)
                        ? Py_NewRef(value_obj)
                        : gsp_tensor_from_data(value_obj, NULL, false);
  if (!value)
    return -1;
  gs_tensor v, temp = GS_NO_TENSOR, rows = GS_NO_TENSOR, out = GS_NO_TENSOR;
  if (gsp_tensor_arg(value, &v, &temp, gs_dtype_of(t)) < 0) {
    Py_DECREF(value);
    return -1;
  }
  gs_tensor idx = gsp_handle(index);
  gs_clear_error();
  if (gs_dtype_of(idx) == GS_BOOL && gs_ndim(idx) == gs_ndim(t) && gs_ndim(idx) > 1) {
    out = gs_where(idx, v, t);
  } else {
    if (gs_dtype_of(idx) == GS_BOOL && gs_ndim(idx) == 1)
      rows = mask_positions(idx);
    else if (gs_ndim(idx) == 1)
      rows = wrap_negatives(idx, gs_ndim(t) > 0 ? gs_size(t, 0) : 1);
    else
      PyErr_SetString(PyExc_TypeError, "t[index] = v takes a 1-D integer or bool index, or a "
                                       "bool mask of t's shape");
    if (rows.id)
      out = gs_index_put(t, rows, v, false);
  }
  if (out.id)
    gs_copy_(t, out);
  gs_dispose(out), gs_dispose(rows), gs_dispose(temp);
  Py_DECREF(value);
  if (PyErr_Occurred())
    return -1;
  return gsp_check_void() ? 0 : -1;
}

/* -1 with a Python exception: the one set, else the engine's error as one. */
static int setitem_failed(void) {
  if (!PyErr_Occurred()) {
    PyObject *none = gsp_check_void();
    if (none) {
      Py_DECREF(none);
      PyErr_SetString(PyExc_RuntimeError, "tensor assignment failed");
    }
  }
  return -1;
}

/* Whether a tuple index holds an advanced term (an index tensor, list or array, a mask). */
static int tuple_has_advanced(PyObject *index) {
  int count = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); i++) {
    PyObject *term = index_term(PyTuple_GET_ITEM(index, i));
    if (!term)
      return -1;
    count += is_advanced(term);
    Py_DECREF(term);
  }
  if (count > 1) { /* torch pairs them elementwise; gradscope's t[i, j] does not yet */
    PyErr_Format(PyExc_NotImplementedError,
                 "t[...] = v with %d index tensors in one index is not supported by gradscope "
                 "yet (one index tensor or mask, with ints and slices, is)",
                 count);
    return -1;
  }
  return count;
}

/* t[i, j] = v, t[:, idx] = v, t[mask, 1] = v...: a tuple with an advanced term selects a
 * copy, not a view, so the assignment goes through positions: the same index applied to
 * the flat positions 0..numel-1 (in t's shape) says which elements it picks, in the order of
 * the picked result; v, broadcast to that result's shape, is put there (index_put on t's
 * flat view, or on a contiguous copy written back for a strided t). */
static int positional_setitem(PyObject *self, PyObject *index, PyObject *value) {
  gs_tensor t = gsp_handle(self);
  int64_t shape[GS_MAX_DIMS], numel = gs_numel(t);
  int nd = gs_ndim(t);
  for (int d = 0; d < nd; d++)
    shape[d] = gs_size(t, d);
  gs_clear_error();
  gs_tensor range = gs_arange(0, (double)numel, 1, GS_I64);
  PyObject *positions = range.id ? gsp_wrap(gs_view(range, shape, nd)) : NULL;
  gs_dispose(range);
  PyObject *picked = positions ? PyObject_GetItem(positions, index) : NULL;
  Py_XDECREF(positions);
  if (!picked)
    return setitem_failed();
  gs_tensor sel = gsp_handle(picked);
  int64_t sel_shape[GS_MAX_DIMS], count = gs_numel(sel);
  int sel_nd = gs_ndim(sel);
  for (int d = 0; d < sel_nd; d++)
    sel_shape[d] = gs_size(sel, d);
  PyObject *rows = gsp_wrap(gs_reshape(sel, &count, 1));
  Py_DECREF(picked);
  if (!rows)
    return -1;
  /* v broadcast to the picked shape, one value per picked position */
  PyObject *flat_value = NULL;
  if (gsp_is_tensor(value) || (!PyFloat_Check(value) && !PyLong_Check(value))) {
    PyObject *tv =
        gsp_is_tensor(value) ? Py_NewRef(value) : gsp_tensor_from_data(value, NULL, false);
    gs_tensor expanded = tv ? gs_expand(gsp_handle(tv), sel_shape, sel_nd) : GS_NO_TENSOR;
    flat_value = expanded.id ? gsp_wrap(gs_reshape(expanded, &count, 1)) : NULL;
    gs_dispose(expanded);
    Py_XDECREF(tv);
    if (!flat_value) {
      Py_DECREF(rows);
      return setitem_failed();
    }
  } else {
    flat_value = Py_NewRef(value);
  }
  bool direct = gs_is_contiguous(t);
  gs_tensor work = direct ? gs_view(t, &numel, 1) : gs_reshape(t, &numel, 1);
  int rc = work.id ? advanced_setitem(work, rows, flat_value) : -1;
  if (rc == 0 && !direct) {
    gs_tensor back = gs_view(work, shape, nd);
    gs_copy_(t, back);
    gs_dispose(back);
    rc = gsp_check_void() ? 0 : -1;
  }
  gs_dispose(work);
  Py_DECREF(rows);
  Py_DECREF(flat_value);
  return rc < 0 ? setitem_failed() : 0;
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  GSP_SITE();
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
    return -1;
  }
  if (PyTuple_Check(index)) {
    int adv = tuple_has_advanced(index);
    if (adv < 0)
      return -1;
    if (adv)
      return positional_setitem(self, index, value);
  }
  if (!PyTuple_Check(index) && !PyLong_Check(index)) {
    PyObject *term = index_term(index);
    if (!term)
      return -1;
    int rc = is_advanced(term) ? advanced_setitem(gsp_handle(self), term, value) : 1;
    Py_DECREF(term);
    if (rc <= 0)
      return rc;
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
