/* tensor-index.c: t[...] and t[...] = v, as PyTorch 1.13's Python indexing.
 *
 * A subscript is read as torch's applySlicing reads it: integers, slices and None are
 * applied one after the other as views (select, slice, unsqueeze) sharing t's storage, and
 * every index tensor, list or array (an i64 index, a bool mask) is set aside for the dim it
 * stands at. With none set aside, t[...] is that view and t[...] = v writes through it
 * (copy_ or fill_, a version bump). Otherwise the view is indexed by all of them at once
 * (gs_index_tensors, torch's at::index): they broadcast together and pair up, t[rows, cols]
 * being t[rows[i], cols[i]], and a bool mask stands for its nonzero() columns; assignment is
 * index_put_ on the view (gs_index_put_tensors_, IndexPutBackward0 as torch records it, or
 * inside CopySlices through a view). torch's quirks come with its rules: a mask moves the
 * dim count on by one, a list holding lists or slices is a tuple, True is [None][[0]].
 */
#include "gs-py.h"

#include <string.h>

/* A list, tuple or array used as an index, as a new tensor (i64 or bool); other terms as a
 * new reference to themselves. PyTorch 1.13's rules: an int32, int16 or int8 array indexes as
 * int64 (torch converts it); a uint8 tensor or array is a mask, with 1.13's deprecation
 * warning. */
static PyObject *index_term(PyObject *term) {
  if (PyList_Check(term) || PyTuple_Check(term))
    return gsp_tensor_from_data(term, NULL, false);
  if (PyRange_Check(term)) { /* a sequence of ints, as a list to torch ("nn really" tutorial) */
    PyObject *list = PySequence_List(term);
    PyObject *t = list ? gsp_tensor_from_data(list, NULL, false) : NULL;
    Py_XDECREF(list);
    return t;
  }
  bool array = gsp_is_ndarray(term);
  if (array) { /* a 0-D integer array is an int (torch's checkLong), any other an index */
    PyObject *i = PyNumber_Index(term);
    if (i)
      return i;
    PyErr_Clear();
  }
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

/* torch's treatSequenceAsTuple: a list (or array) holding a tensor, a sequence, a slice, None
 * or ... (and shorter than 32) is a tuple of terms, so t[[[0, 1], [1, 2]]] is
 * t[[0, 1], [1, 2]]; a list of numbers is one index. */
static bool sequence_as_tuple(PyObject *index) {
  if (PyTuple_Check(index))
    return true;
  if (gsp_is_tensor(index) || PyUnicode_Check(index) || PyBytes_Check(index) ||
      !PySequence_Check(index))
    return false;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32)
    return false;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(index, i);
    if (!item) {
      PyErr_Clear();
      return false;
    }
    bool yes = gsp_is_tensor(item) || (PySequence_Check(item) && !PyUnicode_Check(item)) ||
               PySlice_Check(item) || item == Py_Ellipsis || item == Py_None;
    Py_DECREF(item);
    if (yes)
      return true;
  }
  return false;
}

/* One subscript read: the basic terms applied (view), the index tensors set aside by dim. */
typedef struct subscript {
  gs_tensor view;
  bool owns;             /* view is a new handle (false: t itself) */
  bool skip_full_slices; /* torch's slice optimisation: off for a lone slice read */
  int n;                 /* entries of list: up to the last dim an index stands at */
  gs_tensor list[GS_MAX_DIMS];
  gs_tensor made[GS_MAX_DIMS]; /* handles made here for True/False terms (owned) */
  int n_made;
  PyObject *terms; /* the converted terms: keep the listed tensors alive */
} subscript;

static void subscript_clear(subscript *s) {
  if (s->owns)
    gs_dispose(s->view);
  for (int i = 0; i < s->n_made; i++)
    gs_dispose(s->made[i]);
  Py_CLEAR(s->terms);
  s->owns = false;
  s->n_made = 0;
}

static int set_aside(subscript *s, int dim, gs_tensor index) {
  if (dim >= GS_MAX_DIMS) {
    PyErr_Format(PyExc_IndexError, "an index tensor at dim %d: more dims than %d", dim,
                 GS_MAX_DIMS);
    return -1;
  }
  while (s->n < dim)
    s->list[s->n++] = GS_NO_TENSOR;
  s->list[dim] = index;
  s->n = dim + 1;
  return 0;
}

/* Whether term, converted, is a Python bool or a 0-D bool tensor; its value in *on. */
static bool bool_term(PyObject *term, bool *on) {
  if (PyBool_Check(term)) {
    *on = term == Py_True;
    return true;
  }
  if (gsp_is_tensor(term) && gs_ndim(gsp_handle(term)) == 0 &&
      gs_dtype_of(gsp_handle(term)) == GS_BOOL) {
    *on = gs_item(gsp_handle(term)) != 0;
    return true;
  }
  return false;
}

/* The dims of t a term uses, as torch's count_specified_dimensions counts them. */
static int specified_dims(PyObject *term) {
  bool on;
  if (term == Py_None || term == Py_Ellipsis || bool_term(term, &on))
    return 0;
  if (gsp_is_tensor(term) && gs_dtype_of(gsp_handle(term)) == GS_BOOL)
    return gs_ndim(gsp_handle(term));
  return 1;
}

/* Replaces s->view by next (a view of it or an error). */
static int step_to(subscript *s, gs_tensor next) {
  if (gs_tensor_is_none(next)) {
    gsp_raise_engine_error();
    return -1;
  }
  if (s->owns)
    gs_dispose(s->view);
  s->view = next;
  s->owns = true;
  return 0;
}

/* t.select(dim, i) as torch's indexing does it: its bounds error names real_dim, the term's
 * position counted over t's dims (the view's dim may differ after None or an int). */
static int select_at(subscript *s, int dim, int real_dim, long long i) {
  if (dim < gs_ndim(s->view)) {
    int64_t size = gs_size(s->view, dim);
    if (i < -size || i >= size) {
      PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                   i, real_dim, (long long)size);
      return -1;
    }
  }
  return step_to(s, gs_select(s->view, dim, i));
}

/* Applies one term at *dim, as torch's applySlicing (real_dim: the term's place among t's
 * dims, for messages). 0, or -1 raised. */
static int apply_term(subscript *s, int *dim, int real_dim, PyObject *term) {
  bool on;
  gs_tensor v = s->view;
  if (term == Py_None) {
    return step_to(s, gs_unsqueeze(v, (*dim)++));
  } else if (PySlice_Check(term)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(term, &start, &stop, &step) < 0)
      return -1;
    if (step <= 0) {
      PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
      return -1;
    }
    /* torch skips a slice that names the whole dim exactly (0:len, not `:`): no node */
    if (s->skip_full_slices && start == 0 && step == 1 && *dim < gs_ndim(v) &&
        stop == gs_size(v, *dim)) {
      (*dim)++;
      return 0;
    }
    /* PySlice_Unpack gives PY_SSIZE_T_MIN/MAX for open ends; the engine clamps. */
    return step_to(s, gs_slice(v, (*dim)++, start, stop, step));
  } else if (bool_term(term, &on)) {
    /* torch: t[True] is t[None][[0]], t[False] is t[None][[]] */
    if (step_to(s, gs_unsqueeze(v, *dim)) < 0)
      return -1;
    int64_t count = on ? 1 : 0, zero = 0;
    gs_tensor index = gs_from_data(GS_I64, &count, 1, &zero);
    if (!index.id) {
      gsp_raise_engine_error();
      return -1;
    }
    s->made[s->n_made++] = index;
    return set_aside(s, (*dim)++, index);
  } else if (gsp_is_tensor(term)) {
    gs_tensor ti = gsp_handle(term);
    if (gs_ndim(ti) == 0 && gs_dtype_is_integer(gs_dtype_of(ti)))
      return select_at(s, *dim, real_dim, (long long)gs_item(ti));
    return set_aside(s, (*dim)++, ti); /* any other dtype: refused by the index, as torch's */
  } else if (PyIndex_Check(term)) {
    long long i = PyLong_AsLongLong(term);
    if (i == -1 && PyErr_Occurred())
      return -1;
    return select_at(s, *dim, real_dim, i);
  }
  PyErr_Format(PyExc_IndexError,
               "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
               "are valid indices (got %.200s)",
               Py_TYPE(term)->tp_name);
  return -1;
}

/* Reads index over t into s (cleared by the caller). 0, or -1 raised. */
static int subscript_read(gs_tensor t, PyObject *index, bool writing, subscript *s) {
  memset(s, 0, sizeof *s);
  s->view = t;
  bool tuple = sequence_as_tuple(index);
  s->skip_full_slices = tuple || writing;
  PyObject *given = tuple ? PySequence_Tuple(index) : PyTuple_Pack(1, index);
  if (!given)
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(given);
  s->terms = PyTuple_New(n);
  for (Py_ssize_t i = 0; s->terms && i < n; i++) {
    PyObject *term = index_term(PyTuple_GET_ITEM(given, i));
    if (!term)
      Py_CLEAR(s->terms);
    else
      PyTuple_SET_ITEM(s->terms, i, term);
  }
  Py_DECREF(given);
  if (!s->terms)
    return -1;
  int nd = gs_ndim(t);
  if (nd < 0) {
    gsp_raise_engine_error();
    return -1;
  }
  int specified = 0;
  for (Py_ssize_t i = 0; i < n; i++)
    specified += specified_dims(PyTuple_GET_ITEM(s->terms, i));
  if (specified > nd) {
    PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", nd);
    return -1;
  }
  int dim = 0, real_dim = 0;
  bool seen_ellipsis = false;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *term = PyTuple_GET_ITEM(s->terms, i);
    if (term == Py_Ellipsis) {
      if (seen_ellipsis) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        return -1;
      }
      seen_ellipsis = true;
      dim += nd - specified;
      real_dim += nd - specified;
    } else if (s->n_made >= GS_MAX_DIMS) {
      PyErr_Format(PyExc_IndexError, "more than %d True/False terms in one index", GS_MAX_DIMS);
      return -1;
    } else if (apply_term(s, &dim, real_dim++, term) < 0) {
      return -1;
    }
  }
  return 0;
}

static PyObject *tensor_getitem(PyObject *self, PyObject *index) {
  GSP_SITE();
  subscript s;
  PyObject *r = NULL;
  if (subscript_read(gsp_handle(self), index, false, &s) == 0) {
    gs_clear_error();
    if (s.n) {
      r = gsp_wrap(gs_index_tensors(s.view, s.n, s.list));
    } else if (s.owns) {
      r = gsp_wrap(s.view);
      s.owns = false;
    } else {
      /* t[...] or t[()] with nothing to apply is still a new view (in the graph), as torch's */
      r = gsp_wrap(gs_alias(s.view));
    }
  }
  subscript_clear(&s);
  return r;
}

/* torch's names of dtypes in index_put's message ("Float", "Long"). */
static const char *scalar_type_name(gs_dtype d) {
  switch (d) {
  case GS_F32: return "Float";
  case GS_F64: return "Double";
  case GS_I64: return "Long";
  case GS_I32: return "Int";
  case GS_I16: return "Short";
  case GS_I8: return "Char";
  case GS_U8: return "Byte";
  case GS_BOOL: return "Bool";
  default: return gs_dtype_name(d);
  }
}

/* The value of t[...] = value as a tensor for dst: a Tensor as it is (index_put takes only
 * dst's dtype, as torch's), a number as a 0-D tensor of dst's dtype, a NumPy array or list as
 * a tensor of dst's dtype; leading size-1 dims dropped (torch's slicePrefix1sSize), so a
 * [1, 3] value fits a [3] place. *temp: a handle to dispose. */
static int value_tensor(PyObject *value, gs_tensor dst, bool advanced, gs_tensor *out,
                        gs_tensor *temp) {
  gs_dtype d = gs_dtype_of(dst);
  *temp = GS_NO_TENSOR;
  PyObject *number = gsp_numpy_scalar_as_number(value), *data = NULL;
  if (number || PyFloat_Check(value) || PyLong_Check(value)) {
    PyObject *n = number ? number : Py_NewRef(value);
    double v = PyFloat_AsDouble(n);
    Py_DECREF(n);
    if (v == -1.0 && PyErr_Occurred())
      return -1;
    *temp = gs_scalar(d, v);
  } else {
    if (!gsp_is_tensor(value)) {
      /* t[0] = np.ones(4) or a list: copied in as a tensor (torch 1.13 takes a list only) */
      PyObject *dtype = gsp_dtype_object(d);
      data = dtype ? gsp_tensor_from_data(value, dtype, false) : NULL;
      Py_XDECREF(dtype);
      if (!data)
        return -1;
      value = data;
    }
    gs_tensor given = gsp_handle(value);
    if (advanced && gs_dtype_of(given) != d) {
      PyErr_Format(PyExc_RuntimeError,
                   "Index put requires the source and destination dtypes match, got %s for the "
                   "destination and %s for the source.",
                   scalar_type_name(d), scalar_type_name(gs_dtype_of(given)));
      return -1;
    }
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(given, shape), lead = 0;
    while (lead < nd && shape[lead] == 1)
      lead++;
    /* a view: a handle of its own (data's goes with data), without the leading 1s */
    *temp = gs_view(given, shape + lead, nd - lead);
    Py_XDECREF(data);
  }
  if (!temp->id) {
    gsp_raise_engine_error();
    return -1;
  }
  *out = *temp;
  return 0;
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  GSP_SITE();
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
    return -1;
  }
  if (index == Py_False) /* torch writes nothing, not even a version bump */
    return 0;
  subscript s;
  gs_tensor v = GS_NO_TENSOR, temp = GS_NO_TENSOR;
  int rc = subscript_read(gsp_handle(self), index, true, &s);
  if (rc == 0)
    rc = value_tensor(value, s.view, s.n > 0, &v, &temp);
  if (rc == 0) {
    gs_clear_error();
    if (s.n)
      gs_index_put_tensors_(s.view, s.n, s.list, v, false);
    else if (!gsp_is_tensor(value) && gs_ndim(v) == 0) /* a number */
      gs_fill_(s.view, gs_item(v));
    else
      gs_copy_(s.view, v);
    rc = gsp_check_void() ? 0 : -1;
  }
  gs_dispose(temp);
  subscript_clear(&s);
  return rc;
}

/* ---- index_put ------------------------------------------------------------------------------ */

/* t.index_put_(indices, values, accumulate=False) and t.index_put(...): indices a tuple of
 * index tensors, values a Tensor of t's dtype (or a number). */
PyObject *gsp_tensor_index_put(PyObject *self, PyObject *args, PyObject *kwargs, bool in_place) {
  static char *kwlist[] = {"indices", "values", "accumulate", NULL};
  PyObject *indices, *values;
  int accumulate = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, in_place ? "OO|p:index_put_" : "OO|p:index_put",
                                   kwlist, &indices, &values, &accumulate))
    return NULL;
  if (!PyTuple_Check(indices) && !PyList_Check(indices)) {
    PyErr_Format(PyExc_TypeError, "%s(): argument 'indices' must be tuple of Tensors, not %.200s",
                 in_place ? "index_put_" : "index_put", Py_TYPE(indices)->tp_name);
    return NULL;
  }
  PyObject *seq = PySequence_Tuple(indices);
  if (!seq)
    return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > GS_MAX_DIMS) {
    Py_DECREF(seq);
    return PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d",
                        gs_ndim(gsp_handle(self)));
  }
  PyObject *terms = PyTuple_New(n);
  gs_tensor list[GS_MAX_DIMS];
  for (Py_ssize_t i = 0; terms && i < n; i++) {
    PyObject *item = PyTuple_GET_ITEM(seq, i);
    if (!gsp_is_tensor(item)) { /* torch 1.13's binding takes no None here */
      PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %.200s",
                   i, Py_TYPE(item)->tp_name);
      Py_CLEAR(terms);
      break;
    }
    PyObject *term = index_term(item); /* a uint8 mask as bool, with torch's warning */
    if (!term) {
      Py_CLEAR(terms);
      break;
    }
    PyTuple_SET_ITEM(terms, i, term);
    list[i] = gsp_handle(term);
  }
  Py_DECREF(seq);
  if (!terms)
    return NULL;
  gs_tensor t = gsp_handle(self), v, temp;
  PyObject *r = NULL;
  if (value_tensor(values, t, true, &v, &temp) == 0) {
    gs_clear_error();
    if (in_place) {
      gs_index_put_tensors_(t, (int)n, list, v, accumulate);
      r = gsp_check_void() ? Py_NewRef(self) : NULL;
    } else {
      r = gsp_wrap(gs_index_put_tensors(t, (int)n, list, v, accumulate));
    }
    gs_dispose(temp);
  }
  Py_DECREF(terms);
  return r;
}

PyMappingMethods gsp_tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
