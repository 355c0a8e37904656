/* convert.c: Python arguments into engine arguments: shapes, dims, scalars as 0-dim tensors,
 * lists of tensors, and gradscope.tensor(data) from nested sequences or arrays.
 *
 * gradscope.tensor copies, as torch.tensor does (gradscope.from_numpy is the zero-copy way).
 * Without dtype= the values decide it as in PyTorch: all bools give bool, all integers int64,
 * any float float32. An array keeps its dtype, or the nearest the engine has (uint16 -> int64).
 * NumPy scalars and arrays are accepted wherever a tensor operand is, as in PyTorch.
 */
#include "gs-py.h"

int gsp_shape_from_sequence(PyObject *seq, int64_t *shape) {
  PyObject *fast = PySequence_Fast(seq, "a shape must be a sequence of ints");
  if (!fast)
    return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  if (n > GS_MAX_DIMS) {
    Py_DECREF(fast);
    PyErr_Format(PyExc_ValueError, "a shape has at most %d dimensions, got %zd", GS_MAX_DIMS, n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      PyErr_SetString(PyExc_TypeError, "a shape must be a sequence of ints");
      return -1;
    }
    shape[i] = v;
  }
  Py_DECREF(fast);
  return (int)n;
}

int gsp_ints_from_sequence(PyObject *seq, int64_t *out, int max, const char *fn, const char *what) {
  PyObject *fast = PySequence_Fast(seq, "");
  if (!fast) {
    PyErr_Format(PyExc_TypeError, "%s(): %s must be a sequence of ints", fn, what);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  if (n > max) {
    Py_DECREF(fast);
    PyErr_Format(PyExc_RuntimeError, "%s(): expected at most %d %s, got %zd", fn, max, what, n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      PyErr_Format(PyExc_TypeError, "%s(): %s must be a sequence of ints", fn, what);
      return -1;
    }
    out[i] = v;
  }
  Py_DECREF(fast);
  return (int)n;
}

int gsp_shape_from_args(PyObject *args, int64_t *shape) {
  if (PyTuple_GET_SIZE(args) == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, 0)))
    return gsp_shape_from_sequence(PyTuple_GET_ITEM(args, 0), shape);
  return gsp_shape_from_sequence(args, shape);
}

int gsp_dims_from_object(PyObject *o, int *dims) {
  if (!o || o == Py_None)
    return 0;
  if (PyLong_Check(o)) {
    dims[0] = (int)PyLong_AsLong(o);
    return PyErr_Occurred() ? -1 : 1;
  }
  int64_t d64[GS_MAX_DIMS];
  int n = gsp_shape_from_sequence(o, d64);
  for (int i = 0; i < n; i++)
    dims[i] = (int)d64[i];
  return n;
}

int gsp_tensor_arg(PyObject *o, gs_tensor *out, gs_tensor *temp, gs_dtype like) {
  if (gsp_is_tensor(o)) {
    *out = gsp_handle(o);
    return 0;
  }
  PyObject *number = gsp_numpy_scalar_as_number(o);
  if (number) {
    int rc = gsp_tensor_arg(number, out, temp, like);
    Py_DECREF(number);
    return rc;
  }
  if (PyErr_Occurred())
    return -1;
  if (gsp_is_ndarray(o)) {
    /* An array operand is copied into a tensor of its dtype, as torch does with t + array. */
    PyObject *t = gsp_tensor_from_data(o, NULL, false);
    if (!t)
      return -1;
    *temp = *out = gsp_handle(t);
    ((gsp_tensor *)t)->owned = false; /* the handle is the caller's temporary now */
    Py_DECREF(t);
    return 0;
  }
  gs_dtype dtype;
  double v;
  if (PyBool_Check(o)) {
    dtype = GS_BOOL;
    v = o == Py_True;
  } else if (PyLong_Check(o)) {
    dtype = GS_I64;
    v = PyLong_AsDouble(o);
  } else if (PyFloat_Check(o)) {
    /* A Python float is a floating 0-dim operand: it keeps a floating tensor's dtype. */
    dtype = gs_dtype_is_floating(like) ? like : gsp_default_dtype();
    v = PyFloat_AS_DOUBLE(o);
  } else {
    PyErr_Format(PyExc_TypeError, "expected a Tensor or a number, got %.200s",
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  if (PyErr_Occurred())
    return -1;
  *temp = *out = gs_scalar(dtype, v);
  if (gs_tensor_is_none(*out)) {
    gsp_raise_engine_error();
    return -1;
  }
  return 0;
}

int gsp_tensor_list(PyObject *seq, gs_tensor **out) {
  PyObject *fast = PySequence_Fast(seq, "expected a sequence of Tensors");
  if (!fast)
    return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  gs_tensor *handles = PyMem_Malloc(sizeof(gs_tensor) * (size_t)(n ? n : 1));
  if (!handles) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
    if (!gsp_is_tensor(item)) {
      PyErr_Format(PyExc_TypeError, "expected a sequence of Tensors, item %zd is %.200s", i,
                   Py_TYPE(item)->tp_name);
      PyMem_Free(handles);
      Py_DECREF(fast);
      return -1;
    }
    handles[i] = gsp_handle(item);
  }
  Py_DECREF(fast);
  *out = handles;
  return (int)n;
}

/* ---- gradscope.tensor(nested sequences) ---------------------------------------------- */

typedef struct nested {
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  bool any_float, any_int;
  int64_t count;
} nested;

static bool is_number(PyObject *o) {
  return PyFloat_Check(o) || PyLong_Check(o) || (gsp_is_tensor(o) && gs_ndim(gsp_handle(o)) == 0);
}

/* First pass: the shape (from the first element at each depth) and which kinds of numbers. */
static int nested_scan(PyObject *o, int depth, nested *n) {
  if (is_number(o)) {
    if (depth != n->ndim && n->count > 0)
      goto ragged;
    if (n->count == 0)
      n->ndim = depth;
    if (PyFloat_Check(o) || (gsp_is_tensor(o) && gs_dtype_is_floating(gs_dtype_of(gsp_handle(o)))))
      n->any_float = true;
    else if (!PyBool_Check(o))
      n->any_int = true;
    n->count++;
    return 0;
  }
  if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) {
    PyErr_Format(PyExc_TypeError, "tensor(): expected numbers or sequences of them, got %.200s",
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  if (depth >= GS_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "tensor(): more than %d dimensions", GS_MAX_DIMS);
    return -1;
  }
  Py_ssize_t len = PySequence_Size(o);
  if (len < 0)
    return -1;
  if (n->count == 0 && depth >= n->ndim) {
    n->shape[depth] = len;
    n->ndim = depth + 1;
  } else if (depth >= n->ndim || n->shape[depth] != len) {
    goto ragged;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *item = PySequence_GetItem(o, i);
    if (!item)
      return -1;
    int rc = nested_scan(item, depth + 1, n);
    Py_DECREF(item);
    if (rc < 0)
      return -1;
  }
  return 0;
ragged:
  PyErr_Format(PyExc_ValueError,
               "tensor(): expected a sequence of length %lld at dim %d (the data is ragged)",
               (long long)(depth < n->ndim ? n->shape[depth] : 0), depth);
  return -1;
}

/* Second pass: the values, row-major, converted to dtype. */
static int nested_fill(PyObject *o, gs_dtype dtype, char **cursor) {
  if (is_number(o)) {
    double d = 0;
    long long i = 0;
    if (gsp_is_tensor(o)) {
      d = gs_item(gsp_handle(o));
      i = (long long)d;
    } else if (PyFloat_Check(o)) {
      d = PyFloat_AS_DOUBLE(o);
      i = (long long)d;
    } else {
      i = PyLong_AsLongLong(o);
      if (i == -1 && PyErr_Occurred())
        return -1;
      d = (double)i;
    }
    switch (dtype) {
    case GS_F32: *(float *)*cursor = (float)d; break;
    case GS_F64: *(double *)*cursor = d; break;
    case GS_I64: *(int64_t *)*cursor = PyFloat_Check(o) ? (int64_t)d : i; break;
    case GS_BOOL: *(bool *)*cursor = d != 0; break;
    case GS_I32: /* floats truncate (INT32_MIN out of range, as x86), ints keep their low bits */
    case GS_U8:  /* u8, i8, i16: the i32 value's low bits, as the engine's casts */
    case GS_I8:
    case GS_I16: {
      int32_t w = !PyFloat_Check(o)                       ? (int32_t)(uint32_t)i
                  : d > -2147483649.0 && d < 2147483648.0 ? (int32_t)d
                                                          : INT32_MIN;
      if (dtype == GS_I32)
        *(int32_t *)*cursor = w;
      else if (dtype == GS_U8)
        *(uint8_t *)*cursor = (uint8_t)w;
      else if (dtype == GS_I8)
        *(int8_t *)*cursor = (int8_t)(uint8_t)w;
      else
        *(int16_t *)*cursor = (int16_t)(uint16_t)w;
      break;
    }
    }
    *cursor += gs_dtype_size(dtype);
    return 0;
  }
  Py_ssize_t len = PySequence_Size(o);
  for (Py_ssize_t k = 0; k < len; k++) {
    PyObject *item = PySequence_GetItem(o, k);
    if (!item)
      return -1;
    int rc = nested_fill(item, dtype, cursor);
    Py_DECREF(item);
    if (rc < 0)
      return -1;
  }
  return 0;
}

PyObject *gsp_wrap_new(gs_tensor t, bool requires_grad) {
  if (!gs_tensor_is_none(t) && requires_grad) {
    gs_clear_error();
    gs_set_requires_grad(t, true);
    if (gs_last_error_code() != GS_OK) {
      PyObject *err = gsp_raise_engine_error();
      gs_dispose(t);
      return err;
    }
  }
  return gsp_wrap(t);
}

PyObject *gsp_tensor_from_data(PyObject *data, PyObject *dtype_obj, bool requires_grad) {
  gs_dtype dtype = GS_F32;
  bool dtype_given = dtype_obj && dtype_obj != Py_None;
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0)
    return NULL;
  if (gsp_is_tensor(data)) {
    /* torch.tensor(t) copies t's values, detached from its graph. */
    gs_tensor src = gsp_handle(data);
    gs_tensor d = gs_detach(src);
    if (gs_tensor_is_none(d))
      return gsp_raise_engine_error();
    /* Same dtype: an O(1) copy-on-write clone, semantically the copy torch.tensor makes. */
    gs_tensor t = gs_to_dtype(d, dtype_given ? dtype : gs_dtype_of(src));
    gs_dispose(d);
    return gsp_wrap_new(t, requires_grad);
  }
  if (PyObject_CheckBuffer(data) && !PyBytes_Check(data)) {
    /* An array: copy it through NumPy's own conversion to a contiguous buffer. */
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
      return NULL;
    const char *widen = gsp_numpy_copy_dtype(data);
    /* asarray, not ascontiguousarray: that one makes a 0-d array 1-d, and torch.tensor keeps
     * np.array(3.0) a 0-d tensor. */
    PyObject *arr = widen ? PyObject_CallMethod(np, "asarray", "Os", data, widen)
                          : PyObject_CallMethod(np, "asarray", "O", data);
    if (arr && !gsp_is_c_contiguous_ndarray(arr)) {
      PyObject *packed = PyObject_CallMethod(np, "ascontiguousarray", "O", arr);
      Py_SETREF(arr, packed);
    }
    Py_DECREF(np);
    if (!arr)
      return NULL;
    PyObject *t = gsp_from_numpy(NULL, arr);
    Py_DECREF(arr);
    if (!t)
      return NULL;
    /* A fresh buffer, not a clone: the result must not see later writes to the array. */
    gs_tensor src = gsp_handle(t);
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(src, shape);
    gs_tensor fresh = gs_empty(dtype_given ? dtype : gs_dtype_of(src), shape, nd);
    if (!gs_tensor_is_none(fresh)) {
      gs_clear_error();
      gs_copy_(fresh, src);
    }
    Py_DECREF(t);
    return gsp_wrap_new(fresh, requires_grad);
  }
  nested n = {0};
  if (nested_scan(data, 0, &n) < 0)
    return NULL;
  if (!dtype_given)
    dtype = n.any_float   ? gsp_default_dtype()
            : n.any_int   ? GS_I64
            : n.count > 0 ? GS_BOOL
                          : gsp_default_dtype();
  int64_t numel = 1;
  for (int i = 0; i < n.ndim; i++)
    numel *= n.shape[i];
  char *buf = PyMem_Malloc((size_t)(numel ? numel : 1) * gs_dtype_size(dtype));
  if (!buf)
    return PyErr_NoMemory();
  char *cursor = buf;
  if (nested_fill(data, dtype, &cursor) < 0) {
    PyMem_Free(buf);
    return NULL;
  }
  gs_tensor t = gs_from_data(dtype, n.shape, n.ndim, buf);
  PyMem_Free(buf);
  return gsp_wrap_new(t, requires_grad);
}
