/* functions.c: the module's functions with PyTorch's names: creation (tensor, zeros, ones,
 * full, empty, arange, linspace, eye, rand, randn, randint, *_like), joins (cat, stack),
 * where, manual_seed, grad mode, the live count, the log's marks and tensor names
 * (trace_mark, trace_name), and the functional forms of Tensor methods
 * (gradscope.relu(t), gradscope.sum(t, dim=1), ...), which forward to the method so that the
 * two can never disagree. */
#include "gs-py.h"

#include <math.h> /* after Python.h, which must come first */

/* Parses dtype= and requires_grad= from kwargs (other keys are an error). */
static int creation_kwargs(PyObject *kwargs, gs_dtype *dtype, bool *requires_grad,
                           const char *fn) {
  if (!kwargs)
    return 0;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    if (PyUnicode_CompareWithASCIIString(key, "dtype") == 0) {
      if (gsp_dtype_from_object(value, dtype) < 0)
        return -1;
    } else if (PyUnicode_CompareWithASCIIString(key, "requires_grad") == 0) {
      int f = PyObject_IsTrue(value);
      if (f < 0)
        return -1;
      *requires_grad = f;
    } else if (PyUnicode_CompareWithASCIIString(key, "device") == 0) {
      if (value != Py_None && !(PyUnicode_Check(value) &&
                                PyUnicode_CompareWithASCIIString(value, "cpu") == 0)) {
        PyErr_Format(PyExc_ValueError, "%s(): only device='cpu' exists", fn);
        return -1;
      }
    } else {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
      return -1;
    }
  }
  return 0;
}

static PyObject *f_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *data, *dtype = Py_None, *device = Py_None;
  int requires_grad = 0;
  static char *kwlist[] = {"data", "dtype", "device", "requires_grad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOp:tensor", kwlist, &data, &dtype, &device,
                                   &requires_grad))
    return NULL;
  return gsp_tensor_from_data(data, dtype, requires_grad);
}

typedef gs_tensor (*shape_ctor)(gs_dtype, const int64_t *, int);

static PyObject *sized(PyObject *args, PyObject *kwargs, shape_ctor ctor, const char *fn) {
  GSP_SITE();
  int64_t shape[GS_MAX_DIMS];
  int nd = gsp_shape_from_args(args, shape);
  gs_dtype dtype = gsp_default_dtype();
  bool rg = false;
  if (nd < 0 || creation_kwargs(kwargs, &dtype, &rg, fn) < 0)
    return NULL;
  return gsp_wrap_new(ctor(dtype, shape, nd), rg);
}

static PyObject *f_zeros(PyObject *m, PyObject *a, PyObject *k) { (void)m; return sized(a, k, gs_zeros, "zeros"); }
static PyObject *f_ones(PyObject *m, PyObject *a, PyObject *k) { (void)m; return sized(a, k, gs_ones, "ones"); }
/* empty(*size, ..., memory_format=None): made with the format's strides (gs_empty_format) */
static gs_tensor empty_channels_last(gs_dtype dtype, const int64_t *shape, int nd) {
  return gs_empty_format(dtype, shape, nd, GS_CHANNELS_LAST);
}
static gs_tensor empty_channels_last_3d(gs_dtype dtype, const int64_t *shape, int nd) {
  return gs_empty_format(dtype, shape, nd, GS_CHANNELS_LAST_3D);
}
static PyObject *f_empty(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  PyObject *format = k ? PyDict_GetItemString(k, "memory_format") : NULL;
  if (!format)
    return sized(a, k, gs_empty, "empty");
  int code;
  if (!gsp_memory_format_of(format, &code, "empty"))
    return NULL;
  PyObject *rest = PyDict_Copy(k);
  if (!rest || PyDict_DelItemString(rest, "memory_format") < 0) {
    Py_XDECREF(rest);
    return NULL;
  }
  PyObject *t = sized(a, rest,
                      code == GS_CHANNELS_LAST      ? empty_channels_last
                      : code == GS_CHANNELS_LAST_3D ? empty_channels_last_3d
                                                    : gs_empty,
                      "empty");
  Py_DECREF(rest);
  return t;
}

static gs_tensor randn_default(gs_dtype d, const int64_t *s, int n) { return gs_randn(d, s, n, NULL); }
static gs_tensor rand_default(gs_dtype d, const int64_t *s, int n) { return gs_rand(d, s, n, NULL); }
static PyObject *f_randn(PyObject *m, PyObject *a, PyObject *k) { (void)m; return sized(a, k, randn_default, "randn"); }
static PyObject *f_rand(PyObject *m, PyObject *a, PyObject *k) { (void)m; return sized(a, k, rand_default, "rand"); }

static PyObject *f_full(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *size;
  double value;
  if (!PyArg_ParseTuple(args, "Od:full", &size, &value))
    return NULL;
  int64_t shape[GS_MAX_DIMS];
  int nd = gsp_shape_from_sequence(size, shape);
  gs_dtype dtype = gsp_default_dtype();
  bool rg = false;
  if (nd < 0 || creation_kwargs(kwargs, &dtype, &rg, "full") < 0)
    return NULL;
  return gsp_wrap_new(gs_full(dtype, shape, nd, value), rg);
}

static PyObject *f_randint(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  long long low, high;
  PyObject *size, *dtype_arg = NULL;
  static char *kwlist[] = {"low", "high", "size", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLO|$O:randint", kwlist, &low, &high, &size,
                                   &dtype_arg))
    return NULL;
  gs_dtype dtype = GS_I64;
  if (gsp_dtype_from_object(dtype_arg, &dtype) < 0)
    return NULL;
  int64_t shape[GS_MAX_DIMS];
  int nd = gsp_shape_from_sequence(size, shape);
  if (nd < 0)
    return NULL;
  gs_tensor t = gs_randint(low, high, shape, nd, NULL);
  if (t.id && dtype != GS_I64) { /* the same draws in the asked dtype, as torch's dtype= */
    gs_tensor wide = t;
    t = gs_to_dtype(wide, dtype);
    gs_dispose(wide);
  }
  return gsp_wrap(t);
}

/* The normal values torch's element-by-element kernel draws (a non-contiguous tensor's
 * normal_, whatever its size): the double sampler, its cached second value included. */
static gs_tensor normal_serial(gs_dtype dtype, const int64_t *shape, int nd, double mean,
                               double std) {
  if (dtype != GS_F32 && dtype != GS_F64)
    return gs_normal(dtype, shape, nd, mean, std, NULL); /* its error */
  if (!(std >= 0.0))
    return gs_normal(dtype, shape, nd, mean, std, NULL);
  gs_tensor t = gs_empty(dtype, shape, nd);
  if (!t.id)
    return t;
  int64_t n = gs_numel(t);
  void *p = gs_data_mut(t);
  gs_rng g;
  gs_get_rng_state(&g); /* drawn from a copy put back after: the GIL keeps it exclusive */
  for (int64_t i = 0; i < n; i++) {
    double v = fma(gs_rng_normal(&g), std, mean);
    if (dtype == GS_F32)
      ((float *)p)[i] = (float)v;
    else
      ((double *)p)[i] = v;
  }
  gs_set_rng_state(&g);
  return t;
}

/* _fill_random(size, kind, a, b, dtype[, serial]): torch's uniform_(a, b) (kind 0) or
 * normal_(a, b) (kind 1) drawn for a tensor of that size and floating dtype: nn.init and the
 * in-place methods draw through it, so their numbers are torch's. serial: normal values as
 * torch draws them for a non-contiguous tensor (one by one, never sixteen at a time). */
static PyObject *f_fill_random(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *size, *dtype_arg;
  int kind, serial = 0;
  double a, b;
  if (!PyArg_ParseTuple(args, "OiddO|p:_fill_random", &size, &kind, &a, &b, &dtype_arg, &serial))
    return NULL;
  int64_t shape[GS_MAX_DIMS];
  int nd = gsp_shape_from_sequence(size, shape);
  gs_dtype dtype = GS_F64;
  if (nd < 0 || gsp_dtype_from_object(dtype_arg, &dtype) < 0)
    return NULL;
  if (kind && serial)
    return gsp_wrap(normal_serial(dtype, shape, nd, a, b));
  return gsp_wrap(kind ? gs_normal(dtype, shape, nd, a, b, NULL)
                       : gs_uniform(dtype, shape, nd, a, b, NULL));
}

/* _random_int64(n): n draws of torch's int64 random_(): 64 bits modulo 2**63. */
static PyObject *f_random_int64(PyObject *m, PyObject *arg) {
  GSP_SITE();
  (void)m;
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred())
    return NULL;
  if (n < 0) {
    PyErr_Format(PyExc_ValueError, "_random_int64: expected n >= 0, got %lld", n);
    return NULL;
  }
  gs_tensor t = gs_empty(GS_I64, (int64_t[]){n}, 1);
  if (!t.id)
    return gsp_wrap(t);
  int64_t *p = gs_data_mut(t);
  gs_rng g;
  gs_get_rng_state(&g); /* drawn from a copy put back after: the GIL keeps it exclusive */
  for (long long i = 0; i < n; i++)
    p[i] = (int64_t)(gs_rng_next_u64(&g) & (uint64_t)INT64_MAX);
  gs_set_rng_state(&g);
  return gsp_wrap(t);
}

/* _randperm(n): torch.randperm's permutation from the default generator (int64). */
static PyObject *f_randperm(PyObject *m, PyObject *arg) {
  GSP_SITE();
  (void)m;
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred())
    return NULL;
  return gsp_wrap(gs_randperm(n, NULL));
}

static PyObject *f_arange(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *a = NULL, *b = Py_None, *c = NULL;
  gs_dtype dtype = gsp_default_dtype();
  bool rg = false;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (!PyArg_UnpackTuple(args, "arange", 1, 3, &a, &b, &c))
    return NULL;
  /* All integer arguments give int64, as torch.arange. */
  bool all_int = PyLong_Check(a) && (b == Py_None || PyLong_Check(b)) && (!c || PyLong_Check(c));
  if (all_int)
    dtype = GS_I64;
  if (creation_kwargs(kwargs, &dtype, &rg, "arange") < 0)
    return NULL;
  double start = 0, end, step = 1;
  if (n == 1) {
    end = PyFloat_AsDouble(a);
  } else {
    start = PyFloat_AsDouble(a);
    end = PyFloat_AsDouble(b);
    if (c)
      step = PyFloat_AsDouble(c);
  }
  if (PyErr_Occurred())
    return NULL;
  return gsp_wrap_new(gs_arange(start, end, step, dtype), rg);
}

static PyObject *f_linspace(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  double start, end;
  long long steps;
  if (!PyArg_ParseTuple(args, "ddL:linspace", &start, &end, &steps))
    return NULL;
  gs_dtype dtype = gsp_default_dtype();
  bool rg = false;
  if (creation_kwargs(kwargs, &dtype, &rg, "linspace") < 0)
    return NULL;
  return gsp_wrap_new(gs_linspace(start, end, steps, dtype), rg);
}

static PyObject *f_eye(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  long long n, cols = -1;
  if (!PyArg_ParseTuple(args, "L|L:eye", &n, &cols))
    return NULL;
  gs_dtype dtype = gsp_default_dtype();
  bool rg = false;
  if (creation_kwargs(kwargs, &dtype, &rg, "eye") < 0)
    return NULL;
  return gsp_wrap_new(gs_eye(n, cols < 0 ? n : cols, dtype), rg);
}

static PyObject *like(PyObject *args, PyObject *kwargs, int kind, const char *fn) {
  GSP_SITE();
  PyObject *t;
  double value = 0;
  if (kind == 2 ? !PyArg_ParseTuple(args, "O!d", &gsp_tensor_type, &t, &value)
                : !PyArg_ParseTuple(args, "O!", &gsp_tensor_type, &t))
    return NULL;
  gs_dtype dtype = gs_dtype_of(gsp_handle(t));
  gs_dtype given = dtype;
  bool rg = false;
  if (creation_kwargs(kwargs, &given, &rg, fn) < 0)
    return NULL;
  gs_tensor r = kind == 0 ? gs_zeros_like(gsp_handle(t))
                : kind == 1 ? gs_ones_like(gsp_handle(t))
                            : gs_full_like(gsp_handle(t), value);
  if (!gs_tensor_is_none(r) && given != dtype) {
    gs_tensor c = gs_to_dtype(r, given);
    gs_dispose(r);
    r = c;
  }
  return gsp_wrap_new(r, rg);
}
static PyObject *f_zeros_like(PyObject *m, PyObject *a, PyObject *k) { (void)m; return like(a, k, 0, "zeros_like"); }
static PyObject *f_ones_like(PyObject *m, PyObject *a, PyObject *k) { (void)m; return like(a, k, 1, "ones_like"); }
static PyObject *f_full_like(PyObject *m, PyObject *a, PyObject *k) { (void)m; return like(a, k, 2, "full_like"); }

static PyObject *join(PyObject *args, PyObject *kwargs, bool stack) {
  GSP_SITE();
  PyObject *seq;
  int dim = 0;
  static char *kwlist[] = {"tensors", "dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, stack ? "O|i:stack" : "O|i:cat", kwlist, &seq,
                                   &dim))
    return NULL;
  gs_tensor *handles;
  int n = gsp_tensor_list(seq, &handles);
  if (n < 0)
    return NULL;
  gs_tensor r = stack ? gs_stack(handles, n, dim) : gs_cat(handles, n, dim);
  PyMem_Free(handles);
  return gsp_wrap(r);
}
static PyObject *f_cat(PyObject *m, PyObject *a, PyObject *k) { (void)m; return join(a, k, false); }
static PyObject *f_stack(PyObject *m, PyObject *a, PyObject *k) { (void)m; return join(a, k, true); }

static PyObject *f_where(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *cond, *a, *b;
  /* where(condition): nonzero(condition, as_tuple=True), as torch's one-argument form. */
  if (PyTuple_GET_SIZE(args) == 1 && gsp_is_tensor(PyTuple_GET_ITEM(args, 0))) {
    PyObject *kw = Py_BuildValue("{s:O}", "as_tuple", Py_True);
    PyObject *nz = kw ? PyObject_GetAttrString(PyTuple_GET_ITEM(args, 0), "nonzero") : NULL;
    PyObject *none = nz ? PyTuple_New(0) : NULL;
    PyObject *r = none ? PyObject_Call(nz, none, kw) : NULL;
    Py_XDECREF(none);
    Py_XDECREF(nz);
    Py_XDECREF(kw);
    return r;
  }
  if (!PyArg_ParseTuple(args, "O!OO:where", &gsp_tensor_type, &cond, &a, &b))
    return NULL;
  gs_tensor ta, tb, temp_a = GS_NO_TENSOR, temp_b = GS_NO_TENSOR;
  gs_dtype like_dtype = gsp_is_tensor(a)   ? gs_dtype_of(gsp_handle(a))
                        : gsp_is_tensor(b) ? gs_dtype_of(gsp_handle(b))
                                           : gsp_default_dtype();
  if (gsp_tensor_arg(a, &ta, &temp_a, like_dtype) < 0 ||
      gsp_tensor_arg(b, &tb, &temp_b, like_dtype) < 0) {
    gs_dispose(temp_a);
    return NULL;
  }
  PyObject *r = gsp_wrap(gs_where(gsp_handle(cond), ta, tb));
  gs_dispose(temp_a);
  gs_dispose(temp_b);
  return r;
}

static PyObject *f_manual_seed(PyObject *m, PyObject *seed) {
  (void)m;
  unsigned long long s = PyLong_AsUnsignedLongLongMask(seed);
  if (PyErr_Occurred())
    return NULL;
  gs_manual_seed(s);
  Py_RETURN_NONE;
}

/* The default generator's state as bytes, in torch.get_rng_state()'s 5056-byte layout. */
static PyObject *f_get_rng_state(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  gs_rng r;
  gs_get_rng_state(&r);
  uint8_t b[GS_RNG_STATE_BYTES];
  gs_rng_state_save(&r, b);
  return PyBytes_FromStringAndSize((const char *)b, GS_RNG_STATE_BYTES);
}

static PyObject *f_set_rng_state(PyObject *m, PyObject *state) {
  (void)m;
  char *b;
  Py_ssize_t n;
  gs_rng r;
  if (!PyBytes_Check(state) || PyBytes_AsStringAndSize(state, &b, &n) < 0 ||
      !gs_rng_state_load(&r, (const uint8_t *)b, (size_t)n)) {
    PyErr_Format(PyExc_RuntimeError,
                 "set_rng_state: expected the %d-byte state get_rng_state() returned, got %.100s",
                 GS_RNG_STATE_BYTES, Py_TYPE(state)->tp_name);
    return NULL;
  }
  gs_set_rng_state(&r);
  Py_RETURN_NONE;
}

static PyObject *f_is_grad_enabled(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyBool_FromLong(gs_grad_enabled());
}

static PyObject *f_set_grad_enabled(PyObject *m, PyObject *flag) {
  (void)m;
  int f = PyObject_IsTrue(flag);
  if (f < 0)
    return NULL;
  return PyBool_FromLong(gs_set_grad_enabled(f));
}

static PyObject *f_live_tensor_count(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyLong_FromUnsignedLongLong(gs_live_tensor_count());
}

/* gradscope._engine_probe(values): what the engine itself says of every live tensor, for the
 * differential oracle (tests/python/oracle_run.py): (event counter, [(id, storage, version,
 * copy_on_write, owner_scope, requires_grad, dtype, shape, strides, offset, first values)]).
 * Read after the tensors, so the counter covers any event reading them caused. */
static PyObject *f_engine_probe(PyObject *m, PyObject *arg) {
  (void)m;
  long want = PyLong_AsLong(arg);
  if (want < 0 && PyErr_Occurred())
    return NULL;
  uint64_t n = gs_live_tensors(NULL, 0);
  gs_tensor *alive = PyMem_Malloc((size_t)(n + 1) * sizeof *alive);
  if (!alive)
    return PyErr_NoMemory();
  n = gs_live_tensors(alive, n);
  PyObject *list = PyList_New(0);
  for (uint64_t i = 0; list && i < n; i++) {
    gs_tensor t = alive[i];
    int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
    int ndim = gs_shape(t, shape);
    gs_strides(t, strides);
    int64_t numel = gs_numel(t);
    PyObject *dims = PyTuple_New(ndim), *steps = PyTuple_New(ndim);
    PyObject *values = PyList_New(0);
    for (int d = 0; dims && steps && d < ndim; d++) {
      PyTuple_SET_ITEM(dims, d, PyLong_FromLongLong(shape[d]));
      PyTuple_SET_ITEM(steps, d, PyLong_FromLongLong(strides[d]));
    }
    for (long k = 0; values && k < want && k < numel; k++) {
      int64_t index[GS_MAX_DIMS] = {0}, rest = k;
      for (int d = ndim - 1; d >= 0; d--) {
        index[d] = rest % (shape[d] > 0 ? shape[d] : 1);
        rest /= shape[d] > 0 ? shape[d] : 1;
      }
      PyObject *v = PyFloat_FromDouble(gs_get(t, index));
      if (!v || PyList_Append(values, v) < 0)
        Py_CLEAR(values);
      Py_XDECREF(v);
    }
    PyObject *row =
        dims && steps && values
            ? Py_BuildValue("(KKLiKisNNLN)", (unsigned long long)t.id,
                            (unsigned long long)gs_storage_id(t), (long long)gs_version(t),
                            gs_is_copy_on_write(t), (unsigned long long)gs_owner_scope(t).id,
                            gs_requires_grad(t), gs_dtype_name(gs_dtype_of(t)), dims, steps,
                            (long long)gs_storage_offset(t), values)
            : NULL;
    if (!row) {
      Py_XDECREF(dims), Py_XDECREF(steps), Py_XDECREF(values);
      Py_CLEAR(list);
    } else if (PyList_Append(list, row) < 0) {
      Py_CLEAR(list);
    }
    Py_XDECREF(row);
  }
  PyMem_Free(alive);
  if (!list)
    return NULL;
  return Py_BuildValue("(KN)", (unsigned long long)gs_event_counter(), list);
}

static PyObject *f_is_tensor(PyObject *m, PyObject *o) {
  (void)m;
  return PyBool_FromLong(gsp_is_tensor(o));
}

static PyObject *f_trace_mark(PyObject *m, PyObject *label) {
  GSP_SITE();
  (void)m;
  const char *s = PyUnicode_AsUTF8(label);
  if (!s)
    return NULL;
  gs_trace_mark(s);
  Py_RETURN_NONE;
}

/* gradscope.trace_name(t, "x") is gs_trace_name: the log, the inspector and `gradscope
 * explain` call the tensor "x" instead of its number. It returns t, so a tensor can be named
 * where it is made; a disposed tensor raises the engine's stale-handle error rather than being
 * skipped in silence, as the C call would. */
/* Tensor.share_memory_() (gradscope/tensor_extras.py): t's storage moved into memfd shared
 * memory (gs_share_memory_), as torch's; returns t. */
static PyObject *f_share_memory(PyObject *m, PyObject *t) {
  GSP_SITE();
  (void)m;
  if (!gsp_is_tensor(t)) {
    PyErr_Format(PyExc_TypeError, "share_memory_: expected a Tensor, got %s", Py_TYPE(t)->tp_name);
    return NULL;
  }
  gs_clear_error();
  if (gs_share_memory_(gsp_handle(t)) < 0)
    return gsp_raise_engine_error();
  return Py_NewRef(t);
}

static PyObject *f_is_shared(PyObject *m, PyObject *t) {
  (void)m;
  if (!gsp_is_tensor(t)) {
    PyErr_Format(PyExc_TypeError, "is_shared: expected a Tensor, got %s", Py_TYPE(t)->tp_name);
    return NULL;
  }
  return PyBool_FromLong(gs_is_shared(gsp_handle(t)));
}

static PyObject *f_trace_name(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *t;
  const char *name;
  if (!PyArg_ParseTuple(args, "O!s:trace_name", &gsp_tensor_type, &t, &name))
    return NULL;
  if (!gs_is_alive(gsp_handle(t))) {
    gs_clear_error();
    gs_ndim(gsp_handle(t)); /* records the engine's message, naming what disposed it */
    return gsp_raise_engine_error();
  }
  gs_trace_name(gsp_handle(t), name);
  return Py_NewRef(t);
}

/* ---- functional forms of methods ------------------------------------------------------------ */

/* gradscope.NAME(t, *args, **kwargs) is t.NAME(*args, **kwargs); self is the name. The tensor
 * may come as input=t, as torch.sum(input=t) allows. */
static PyObject *forward_to_method(PyObject *name, PyObject *args, PyObject *kwargs) {
  PyObject *input = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
  Py_ssize_t skip = 1;
  PyObject *rest_kwargs = kwargs;
  if (!input && kwargs && (input = PyDict_GetItemString(kwargs, "input"))) {
    skip = 0;
    if (!(rest_kwargs = PyDict_Copy(kwargs)) || PyDict_DelItemString(rest_kwargs, "input") < 0) {
      Py_XDECREF(rest_kwargs);
      return NULL;
    }
  }
  PyObject *r = NULL;
  if (!input || !gsp_is_tensor(input)) {
    PyErr_Format(PyExc_TypeError, "%U() expects a Tensor as its first argument (input), got %s",
                 name, input ? Py_TYPE(input)->tp_name : "nothing");
  } else {
    PyObject *method = PyObject_GetAttr(input, name);
    PyObject *rest = method ? PyTuple_GetSlice(args, skip, PyTuple_GET_SIZE(args)) : NULL;
    r = rest ? PyObject_Call(method, rest, rest_kwargs) : NULL;
    Py_XDECREF(rest);
    Py_XDECREF(method);
  }
  if (rest_kwargs != kwargs)
    Py_DECREF(rest_kwargs);
  return r;
}

/* clang-format off */
static const char *const forwarded[] = {
    "relu", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "neg", "gelu",
    "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp", "softmax",
    "log_softmax", "matmul", "transpose", "permute", "reshape", "flatten", "squeeze",
    "unsqueeze", "narrow", "select", "split", "chunk", "index_select", "gather", "clamp",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "clone", "detach", "t", "numel", "sin", "cos", "tan", "var", "std", "masked_fill",
    "cumsum", "sort", "argsort", "topk", "norm", "masked_select", "floor_divide", "remainder",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not", "floor",
    "as_strided", "mm", "bmm", "mv", "dot", "outer", "addmm", "ceil", "round", "trunc", "frac",
    "sign", "reciprocal", "square", "log1p", "expm1", "log2", "log10", "asin", "acos", "atan",
    "sinh", "cosh", "erf", "clip", "clamp_min", "clamp_max", "true_divide", "atan2", "fmod",
    "lerp", "logical_and", "logical_or", "logical_xor", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_reduce",
    "index_fill", "index_put", "take", "take_along_dim", "prod", "cumprod", "median", "cummax", "cummin",
    "unique", "unique_consecutive", "cross", "logcumsumexp", "asinh", "acosh", "atanh", "erfc",
    "erfinv", "exp2", "lgamma", "digamma", "i0", NULL};
/* clang-format on */

int gsp_functions_add_forwarders(PyObject *module);
int gsp_functions_add_forwarders(PyObject *module) {
  /* One definition per name, so each function has its own __name__ and docstring. */
  static PyMethodDef defs[sizeof forwarded / sizeof forwarded[0]];
  for (int i = 0; forwarded[i]; i++) {
    if (!defs[i].ml_name)
      defs[i] = (PyMethodDef){forwarded[i], GSP_FN(forward_to_method), METH_VARARGS | METH_KEYWORDS,
                              gsp_doc("gradscope", forwarded[i])};
    PyObject *name = PyUnicode_FromString(forwarded[i]);
    if (!name)
      return -1;
    PyObject *fn = PyCFunction_New(&defs[i], name);
    Py_DECREF(name);
    if (!fn || PyModule_AddObject(module, forwarded[i], fn) < 0) {
      Py_XDECREF(fn);
      return -1;
    }
  }
  return 0;
}

PyObject *gsp_inspect(PyObject *module, PyObject *args, PyObject *kwargs);

static PyObject *f_trace_close(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  gs_trace_close();
  Py_RETURN_NONE;
}

/* torch.nn.functional.one_hot(tensor, num_classes=-1) */
static PyObject *f_one_hot(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *index;
  long long num_classes = -1;
  static char *kwlist[] = {"tensor", "num_classes", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|L:one_hot", kwlist, &gsp_tensor_type, &index,
                                   &num_classes))
    return NULL;
  return gsp_wrap(gs_one_hot(gsp_handle(index), num_classes));
}

/* torch.constant_pad_nd(input, pad, value=0): F.pad's 'constant' mode as one op */
static PyObject *f_constant_pad_nd(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *pad_obj;
  double value = 0.0;
  static char *kwlist[] = {"input", "pad", "value", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|d:constant_pad_nd", kwlist, &gsp_tensor_type,
                                   &x, &pad_obj, &value))
    return NULL;
  int64_t pad[2 * GS_MAX_DIMS];
  int n = gsp_ints_from_sequence(pad_obj, pad, 2 * GS_MAX_DIMS, "constant_pad_nd", "pads");
  if (n < 0)
    return NULL;
  return gsp_wrap(gs_constant_pad_nd(gsp_handle(x), pad, n, value));
}

/* torch.prelu(input, weight): one op (PreluBackward0), as F.prelu */
static PyObject *f_prelu(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w;
  if (!PyArg_ParseTuple(args, "O!O!:prelu", &gsp_tensor_type, &x, &gsp_tensor_type, &w))
    return NULL;
  return gsp_wrap(gs_prelu(gsp_handle(x), gsp_handle(w)));
}

/* torch.pixel_shuffle(input, upscale_factor), torch.pixel_unshuffle(input, downscale_factor) */
static PyObject *rearrange(PyObject *args, PyObject *kwargs, bool shuffle) {
  GSP_SITE();
  PyObject *x;
  long long r;
  static char *shuffle_kw[] = {"input", "upscale_factor", NULL};
  static char *unshuffle_kw[] = {"input", "downscale_factor", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs,
                                   shuffle ? "O!L:pixel_shuffle" : "O!L:pixel_unshuffle",
                                   shuffle ? shuffle_kw : unshuffle_kw, &gsp_tensor_type, &x, &r))
    return NULL;
  return gsp_wrap(shuffle ? gs_pixel_shuffle(gsp_handle(x), r)
                          : gs_pixel_unshuffle(gsp_handle(x), r));
}
static PyObject *f_pixel_shuffle(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  return rearrange(a, k, true);
}
static PyObject *f_pixel_unshuffle(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  return rearrange(a, k, false);
}

#define KW (METH_VARARGS | METH_KEYWORDS)
PyMethodDef gsp_module_functions[] = {
    {"one_hot", GSP_FN(f_one_hot), KW, NULL},
    {"constant_pad_nd", GSP_FN(f_constant_pad_nd), KW, NULL},
    {"pixel_shuffle", GSP_FN(f_pixel_shuffle), KW, NULL},
    {"prelu", f_prelu, METH_VARARGS, NULL},
    {"pixel_unshuffle", GSP_FN(f_pixel_unshuffle), KW, NULL},
    {"inspect", GSP_FN(gsp_inspect), KW, NULL},
    {"trace_close", f_trace_close, METH_NOARGS, NULL},
    {"tensor", GSP_FN(f_tensor), KW, NULL},
    {"zeros", GSP_FN(f_zeros), KW, NULL},
    {"ones", GSP_FN(f_ones), KW, NULL},
    {"empty", GSP_FN(f_empty), KW, NULL},
    {"full", GSP_FN(f_full), KW, NULL},
    {"randn", GSP_FN(f_randn), KW, NULL},
    {"rand", GSP_FN(f_rand), KW, NULL},
    {"randint", GSP_FN(f_randint), KW, NULL},
    {"arange", GSP_FN(f_arange), KW, NULL},
    {"linspace", GSP_FN(f_linspace), KW, NULL},
    {"eye", GSP_FN(f_eye), KW, NULL},
    {"zeros_like", GSP_FN(f_zeros_like), KW, NULL},
    {"ones_like", GSP_FN(f_ones_like), KW, NULL},
    {"full_like", GSP_FN(f_full_like), KW, NULL},
    {"cat", GSP_FN(f_cat), KW, NULL},
    {"stack", GSP_FN(f_stack), KW, NULL},
    {"where", f_where, METH_VARARGS, NULL},
    {"manual_seed", f_manual_seed, METH_O, NULL},
    {"_set_printoptions", gsp_set_printoptions, METH_VARARGS,
     "_set_printoptions(precision, threshold, edgeitems, linewidth, sci_mode, /)\n--\n\n"
     "The tensor repr's options (sci_mode -1: automatic)."},
    {"_fill_random", f_fill_random, METH_VARARGS,
     "_fill_random(size, kind, a, b, dtype)\n--\n\ntorch's uniform_(a, b) (kind 0) or "
     "normal_(a, b) (kind 1) values."},
    {"_random_int64", f_random_int64, METH_O,
     "_random_int64(n)\n--\n\nn draws of torch's int64 random_()."},
    {"_randperm", f_randperm, METH_O,
     "_randperm(n)\n--\n\nA permutation of 0..n-1 drawn as torch.randperm draws it."},
    {"_get_rng_state", f_get_rng_state, METH_NOARGS,
     "_get_rng_state()\n--\n\nThe default generator's state as torch's 5056 bytes."},
    {"_set_rng_state", f_set_rng_state, METH_O,
     "_set_rng_state(state, /)\n--\n\nPuts back a state _get_rng_state() returned."},
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS, NULL},
    {"set_grad_enabled", f_set_grad_enabled, METH_O, NULL},
    {"live_tensor_count", f_live_tensor_count, METH_NOARGS, NULL},
    {"is_tensor", f_is_tensor, METH_O, NULL},
    {"_engine_probe", f_engine_probe, METH_O,
     "The engine's own answers about every live tensor, for tests/python/oracle_run.py."},
    {"trace_mark", f_trace_mark, METH_O, NULL},
    {"trace_name", f_trace_name, METH_VARARGS, NULL},
    {"from_numpy", gsp_from_numpy, METH_O, NULL},
    {"_name_dtypes_as_torch", gsp_name_dtypes_as_torch, METH_O,
     "Whether dtypes print as torch.X (gradscope.as_torch) or gradscope.X."},
    {"from_dlpack", gsp_from_dlpack, METH_O, NULL},
    {"_set_default_dtype", gsp_set_default_dtype, METH_O, NULL},
    {"_share_memory", f_share_memory, METH_O, NULL},
    {"_is_shared", f_is_shared, METH_O, NULL},
    {"get_default_dtype", gsp_get_default_dtype, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
