/* tensor-object.c: the gradscope.Tensor type itself: one engine handle per Python object, its
 * life, and its attributes (shape, dtype, requires_grad, grad, ...).
 *
 * Ownership follows the rule, which is TorchSharp's: when a Python object that owns its
 * handle is dropped, the tensor is disposed if the program owns it (no scope does); if a scope
 * owns it, the scope decides and the tensor lives until the scope ends. A handle disposed by a
 * scope while a Python object still holds it stays stale: using it raises the engine's
 * stale-handle error, which names the scope that disposed it. Borrowed handles (a tensor's
 * .grad, a module's parameters) are never disposed by their Python object. Objects freed while
 * the interpreter exits leave their tensors alive: the program never disposed them.
 *
 * A borrowed handle's object holds its keeper (gs-py.h): a grad taken from a tensor keeps that
 * tensor's object, so `g = x.grad; del x` leaves g usable, as in PyTorch.
 */
#include "gs-py.h"

#include <string.h>

static PyObject *wrap(gs_tensor t, bool owned) {
  if (gs_tensor_is_none(t))
    return gsp_raise_engine_error();
  if (__builtin_expect(gsp_pack_failed, 0)) { /* the op's saved-tensor pack hook raised */
    gsp_pack_failed = false;
    if (PyErr_Occurred()) {
      if (owned && gs_owner_scope(t).id == 0)
        gs_dispose(t);
      return NULL;
    }
  }
  gsp_tensor *o = PyObject_New(gsp_tensor, &gsp_tensor_type);
  if (!o) {
    if (owned && gs_owner_scope(t).id == 0)
      gs_dispose(t);
    return NULL;
  }
  o->handle = t;
  o->owned = owned;
  o->keeper = NULL;
  /* The handle's object from now on (tensor identity, gsp_tensor_object), unless it has one. */
  if (!gs_tensor_binding(t))
    gs_tensor_set_binding(t, o);
  return (PyObject *)o;
}

PyObject *gsp_wrap(gs_tensor t) { return wrap(t, true); }
PyObject *gsp_wrap_borrowed(gs_tensor t) { return wrap(t, false); }

PyObject *gsp_wrap_kept(gs_tensor t, PyObject *keeper) {
  PyObject *o = wrap(t, false);
  if (o)
    ((gsp_tensor *)o)->keeper = Py_XNewRef(keeper);
  return o;
}

PyObject *gsp_tensor_object(gs_tensor t, PyObject *keeper) {
  gsp_tensor *o = gs_tensor_is_none(t) ? NULL : gs_tensor_binding(t);
  if (o && o->handle.id == t.id)
    return Py_NewRef((PyObject *)o);
  return gsp_wrap_kept(t, keeper);
}

void gsp_tensor_keep(PyObject *o, PyObject *keeper) {
  ((gsp_tensor *)o)->owned = false;
  Py_XSETREF(((gsp_tensor *)o)->keeper, Py_XNewRef(keeper));
}

static void tensor_dealloc(PyObject *self) {
  GSP_SITE();
  gsp_tensor *o = (gsp_tensor *)self;
  /* gs_is_alive first: asking a stale handle its owner would record an error. */
  /* A parameter a module holds has a borrowed object (owned false): an owned parameter is
   * one nn.Parameter made and no module took. */
  /* At interpreter exit, what the program still held (a global, say) is alive at exit, as a
   * C program's tensors are: not disposed here, so the leak report (GS_LEAK_REPORT) and the
   * log's end list it, with its Python line. */
  bool alive = gs_is_alive(o->handle);
  if (gs_tensor_binding(o->handle) == self)
    gs_tensor_set_binding(o->handle, NULL);
  if (o->owned && !_Py_IsFinalizing() && alive && gs_owner_scope(o->handle).id == 0)
    gs_dispose(o->handle);
  Py_CLEAR(o->keeper);
  PyObject_Free(self);
}

/* Tensors compare elementwise (==), so hashing goes by identity, as torch.Tensor's. */
static Py_hash_t tensor_hash(PyObject *self) {
  Py_hash_t h = (Py_hash_t)((uintptr_t)self >> 4);
  return h == -1 ? -2 : h;
}

static Py_ssize_t tensor_length(PyObject *self) {
  gs_tensor t = gsp_handle(self);
  int nd = gs_ndim(t);
  if (nd < 0) {
    gsp_raise_engine_error();
    return -1;
  }
  if (nd == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return (Py_ssize_t)gs_size(t, 0);
}

/* for row in t: the views t[0], t[1], ... along the first dimension, as torch's iteration. */
static PyObject *tensor_iter(PyObject *self) {
  GSP_SITE();
  gs_tensor t = gsp_handle(self);
  int nd = gs_ndim(t);
  if (nd < 0)
    return gsp_raise_engine_error();
  if (nd == 0) {
    PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
    return NULL;
  }
  int64_t n = gs_size(t, 0);
  PyObject *rows = PyTuple_New((Py_ssize_t)n);
  for (int64_t i = 0; rows && i < n; i++) {
    PyObject *row = gsp_wrap(gs_select(t, 0, i));
    if (!row) {
      Py_CLEAR(rows);
      break;
    }
    PyTuple_SET_ITEM(rows, (Py_ssize_t)i, row);
  }
  PyObject *it = rows ? PyObject_GetIter(rows) : NULL;
  Py_XDECREF(rows);
  return it;
}

/* ---- attributes ---------------------------------------------------------------------- */

PyObject *gsp_int_tuple(const int64_t *values, int n) {
  PyObject *tuple = PyTuple_New(n);
  for (int i = 0; tuple && i < n; i++) {
    PyObject *v = PyLong_FromLongLong(values[i]);
    if (!v) {
      Py_CLEAR(tuple);
      break;
    }
    PyTuple_SET_ITEM(tuple, i, v);
  }
  return tuple;
}

static PyObject *shape_tuple(gs_tensor t) {
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(t, shape);
  return nd < 0 ? gsp_raise_engine_error() : gsp_size_new(shape, nd);
}

static PyObject *get_shape(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  return shape_tuple(gsp_handle(self));
}

static PyObject *get_dtype(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_tensor t = gsp_handle(self);
  if (gs_ndim(t) < 0)
    return gsp_raise_engine_error();
  return gsp_dtype_object(gs_dtype_of(t));
}

static PyObject *get_ndim(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  int nd = gs_ndim(gsp_handle(self));
  return nd < 0 ? gsp_raise_engine_error() : PyLong_FromLong(nd);
}

static PyObject *get_requires_grad(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_clear_error();
  bool flag = gs_requires_grad(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyBool_FromLong(flag);
}

static int set_requires_grad(PyObject *self, PyObject *value, void *c) {
  GSP_SITE();
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete requires_grad");
    return -1;
  }
  int flag = PyObject_IsTrue(value);
  if (flag < 0)
    return -1;
  gs_clear_error();
  gs_set_requires_grad(gsp_handle(self), flag);
  return gsp_check_void() ? 0 : -1;
}

static PyObject *get_is_leaf(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_tensor t = gsp_handle(self);
  gs_clear_error();
  bool leaf = gs_is_leaf(t);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyBool_FromLong(leaf);
}

static PyObject *get_grad(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_tensor t = gsp_handle(self);
  gs_clear_error();
  gs_tensor g = gs_grad(t);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  if (gs_tensor_is_none(g))
    Py_RETURN_NONE;
  return gsp_tensor_object(g, self); /* the grad outlives the name of its tensor */
}

/* t.grad = None clears the gradient; t.grad = g (a leaf that requires grad, g of its shape and
 * dtype) makes g the gradient as PyTorch does: the gradient shares g's storage (a detached
 * alias of it that t owns, since the Python object g keeps its own handle), so writes to
 * either show in both and later backwards add into it. */
static int set_grad(PyObject *self, PyObject *value, void *c) {
  GSP_SITE();
  (void)c;
  gs_tensor t = gsp_handle(self);
  if (value && value != Py_None) {
    if (!gsp_is_tensor(value)) {
      PyErr_Format(PyExc_TypeError,
                   "assigned grad expected to be a Tensor or None but got grad "
                   "of type %s",
                   Py_TYPE(value)->tp_name);
      return -1;
    }
    gs_tensor g = gsp_handle(value);
    int64_t ts[GS_MAX_DIMS], gsh[GS_MAX_DIMS];
    int tn = gs_shape(t, ts), gn = gs_shape(g, gsh);
    if (tn < 0 || gn < 0)
      return gsp_raise_engine_error(), -1;
    if (tn != gn || memcmp(ts, gsh, sizeof(int64_t) * (size_t)tn) != 0) {
      PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different size");
      return -1;
    }
    if (gs_dtype_of(t) != gs_dtype_of(g)) {
      PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different type");
      return -1;
    }
    if (!gs_requires_grad(t) || !gs_is_leaf(t)) {
      PyErr_SetString(PyExc_RuntimeError,
                      "gradscope assigns .grad only to a leaf that requires "
                      "grad (the gradient is accumulated into it, as backward would)");
      return -1;
    }
  }
  gs_clear_error();
  if (!value || value == Py_None) {
    gs_zero_grad(t);
    return gsp_check_void() ? 0 : -1;
  }
  gs_tensor alias = gs_detach(gsp_handle(value));
  if (!alias.id || gs_set_grad(t, alias) != 0) {
    if (alias.id)
      gs_dispose(alias);
    return gsp_raise_engine_error(), -1;
  }
  return 0;
}

static PyObject *get_grad_fn(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  return gsp_tensor_grad_fn(self); /* grad-fn.c */
}

static PyObject *get_version(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_clear_error();
  int64_t v = gs_version(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyLong_FromLongLong(v);
}

static PyObject *get_handle_id(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(gsp_handle(self).id);
}

static PyObject *get_is_alive(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(gs_is_alive(gsp_handle(self)));
}

static PyObject *get_T(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_tensor t = gsp_handle(self);
  int nd = gs_ndim(t);
  if (nd < 0)
    return gsp_raise_engine_error();
  int dims[GS_MAX_DIMS];
  for (int i = 0; i < nd; i++)
    dims[i] = nd - 1 - i;
  return gsp_wrap(gs_permute(t, dims, nd));
}

static PyObject *get_data(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  return gsp_wrap(gs_detach(gsp_handle(self)));
}

/* t.data = x, as torch's: t keeps its object, handle, requires_grad and grad, and views x's
 * storage (dtype and shape too) from now on (gs_tensor_set_data). */
static int set_data(PyObject *self, PyObject *value, void *c) {
  GSP_SITE();
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "cannot delete a tensor's data");
    return -1;
  }
  if (!gsp_is_tensor(value)) {
    PyErr_Format(PyExc_TypeError, "data: expected a Tensor, got %s", Py_TYPE(value)->tp_name);
    return -1;
  }
  gs_clear_error();
  gs_tensor_set_data(gsp_handle(self), gsp_handle(value), "set_data");
  if (gs_last_error_code() != GS_OK) {
    gsp_raise_engine_error();
    return -1;
  }
  return 0;
}

static PyObject *get_device(PyObject *self, void *c) {
  (void)c;
  (void)self;
  return PyUnicode_FromString("cpu");
}

PyGetSetDef gsp_tensor_getset[] = {
    {"shape", get_shape, NULL, "The sizes, as a tuple.", NULL},
    {"dtype", get_dtype, NULL, "The element type.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, "Whether autograd records ops on it.",
     NULL},
    {"is_leaf", get_is_leaf, NULL, "Not made by a recorded op.", NULL},
    {"grad", get_grad, set_grad, "The accumulated gradient (borrowed), or None.", NULL},
    {"grad_fn", get_grad_fn, NULL, "The node that made it (a gradscope.Node), or None.", NULL},
    {"_version", get_version, NULL, "The storage's version counter.", NULL},
    {"handle_id", get_handle_id, NULL, "The engine's handle id (as in the event log).", NULL},
    {"is_alive", get_is_alive, NULL, "False once the handle was disposed (by a scope).", NULL},
    {"T", get_T, NULL, "The dimensions reversed (a view).", NULL},
    {"data", get_data, set_data,
     "A detached view (shares storage and version); assigning a tensor makes this one view "
     "that tensor's storage, keeping its identity, requires_grad and grad.",
     NULL},
    {"device", get_device, NULL, "Always 'cpu'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Tensor(*sizes) or a torch.Size: zeros of that shape in float32, as torch's legacy
 * constructor (whose elements are uninitialised); NULL (nothing raised) when args are not
 * sizes. */
static PyObject *tensor_of_sizes(PyObject *args) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  PyObject *sizes = args;
  if (n == 1 && PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &gsp_size_type))
    sizes = PyTuple_GET_ITEM(args, 0), n = PyTuple_GET_SIZE(sizes);
  else if (n == 0)
    return gsp_wrap(gs_empty(GS_F32, (int64_t[]){0}, 1));
  if (n > GS_MAX_DIMS)
    return NULL;
  int64_t shape[GS_MAX_DIMS];
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *size = PyTuple_GET_ITEM(sizes, i);
    if (!PyLong_CheckExact(size))
      return NULL;
    shape[i] = PyLong_AsLongLong(size);
    if (shape[i] < 0) {
      PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %S",
                   (long long)shape[i], sizes);
      return NULL;
    }
  }
  return gsp_wrap(gs_zeros(GS_F32, shape, (int)n));
}

/* Tensor(data) as torch.Tensor: float32 whatever the data (torch.tensor infers the dtype);
 * Tensor(2, 3), Tensor(torch.Size) and Tensor() as sizes. dtype= and requires_grad= are
 * gradscope's own (torch's legacy constructor takes neither). */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)type;
  if (!kwargs || PyDict_GET_SIZE(kwargs) == 0) {
    PyObject *made = tensor_of_sizes(args);
    if (made || PyErr_Occurred())
      return made;
  }
  PyObject *data = NULL, *dtype = NULL;
  int requires_grad = 0;
  static char *kwlist[] = {"data", "dtype", "requires_grad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$p:Tensor", kwlist, &data, &dtype,
                                   &requires_grad))
    return NULL;
  if (!dtype && !gsp_is_tensor(data)) {
    PyObject *f32 = gsp_dtype_object(GS_F32);
    PyObject *made = f32 ? gsp_tensor_from_data(data, f32, requires_grad) : NULL;
    Py_XDECREF(f32);
    return made;
  }
  return gsp_tensor_from_data(data, dtype, requires_grad);
}

static PyMappingMethods *mapping(void) { return &gsp_tensor_as_mapping; }

PyTypeObject gsp_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.Tensor",
    .tp_basicsize = sizeof(gsp_tensor),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tensor: one handle into the Gradscope engine.",
    .tp_dealloc = tensor_dealloc,
    .tp_hash = tensor_hash,
    .tp_repr = gsp_tensor_repr,
    .tp_iter = tensor_iter,
    .tp_new = tensor_new,
};

void gsp_tensor_type_init(void) {
  gsp_tensor_type.tp_as_number = &gsp_tensor_as_number;
  gsp_tensor_type.tp_as_mapping = mapping();
  gsp_tensor_type.tp_as_mapping->mp_length = tensor_length;
  gsp_tensor_type.tp_as_buffer = &gsp_tensor_as_buffer;
  gsp_tensor_type.tp_richcompare = gsp_tensor_richcompare;
  gsp_tensor_type.tp_methods = gsp_tensor_methods;
  gsp_tensor_type.tp_getset = gsp_tensor_getset;
}
