/* numpy-bridge.c: zero copy with NumPy: gradscope.from_numpy(a), t.numpy() and the buffer
 * protocol, all over the same bytes.
 *
 * from_numpy wraps the array's memory with gs_from_blob, strides and all, and holds a
 * reference to the array until the engine releases the memory (when no tensor uses it), so the
 * array outlives every tensor over it. It refuses what the engine cannot express rather than
 * copying behind the caller's back: other dtypes, non-native byte order, negative strides,
 * strides that are not whole elements, misaligned data, read-only arrays (the engine writes in
 * place).
 *
 * t.numpy() and the buffer protocol export through gs_to_dlpack: the managed tensor it returns
 * pins the storage until its deleter runs, so the array's base (a capsule that calls the
 * deleter) keeps the bytes alive even after every handle is disposed. Like PyTorch, a tensor
 * that requires grad is refused (export t.detach()). Writes made through NumPy bypass the
 * engine's version counter, as writes through torch's .numpy() bypass torch's.
 */
#define PY_ARRAY_UNIQUE_SYMBOL gradscope_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "gs-py.h"

#include <dlpack/dlpack.h>
#include <numpy/arrayobject.h>

int gsp_numpy_init(void) {
  import_array1(-1);
  return 0;
}

/* NumPy scalars (and 0-d arrays) act as Python numbers in arithmetic, as PyTorch treats them: np.float32(2)
 * with a float32 tensor stays float32, and needs no export of the tensor. */
PyObject *gsp_numpy_scalar_as_number(PyObject *o) {
  /* A 0-d array is a number too: torch gives 0-dim operands a number's (lower) weight in
   * promotion, which for the engine's dtypes is what a Python number gets. */
  if (PyArray_Check(o) && PyArray_NDIM((PyArrayObject *)o) == 0) {
    int kind = PyArray_DESCR((PyArrayObject *)o)->kind;
    return kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f'
               ? PyObject_CallMethod(o, "item", NULL) : NULL;
  }
  if (!PyArray_IsScalar(o, Generic) || PyFloat_CheckExact(o) || PyLong_CheckExact(o))
    return NULL;
  if (PyArray_IsScalar(o, Bool))
    return PyBool_FromLong(PyObject_IsTrue(o));
  if (PyArray_IsScalar(o, Integer))
    return PyNumber_Long(o);
  if (PyArray_IsScalar(o, Floating))
    return PyNumber_Float(o);
  return NULL;
}

bool gsp_is_ndarray(PyObject *o) { return PyArray_Check(o); }

bool gsp_is_c_contiguous_ndarray(PyObject *o) {
  return PyArray_Check(o) && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o);
}

/* The dtype gradscope.tensor(array) copies an array into, as torch.tensor's: the array's own
 * when the engine has it (int32, int16, int8 and uint8 included); other integers (uint16..)
 * widen to int64 and float16 to float32, the nearest the engine has (the values are the
 * same). NULL (no error) for arrays NumPy must convert first (objects, complex). */
const char *gsp_numpy_copy_dtype(PyObject *array) {
  if (!PyArray_Check(array))
    return NULL;
  int kind = PyArray_DESCR((PyArrayObject *)array)->kind;
  int type = PyArray_TYPE((PyArrayObject *)array);
  if (type == NPY_FLOAT32 || type == NPY_FLOAT64 || type == NPY_INT64 || type == NPY_BOOL ||
      type == NPY_INT32 || type == NPY_UINT8 || type == NPY_INT8 || type == NPY_INT16)
    return NULL;
  if (kind == 'i' || kind == 'u')
    return "int64";
  if (kind == 'f')
    return "float32";
  return NULL;
}

static void release_array(void *data, void *user_data) {
  (void)data;
  if (!Py_IsInitialized())
    return; /* the interpreter is gone, and the array with it */
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF((PyObject *)user_data);
  PyGILState_Release(state);
}

PyObject *gsp_from_numpy(PyObject *module, PyObject *obj) {
  GSP_SITE();
  (void)module;
  if (!PyArray_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "from_numpy(): expected a numpy.ndarray, got %.200s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  PyArrayObject *a = (PyArrayObject *)obj;
  gs_dtype dtype;
  switch (PyArray_TYPE(a)) {
  case NPY_FLOAT32: dtype = GS_F32; break;
  case NPY_FLOAT64: dtype = GS_F64; break;
  case NPY_INT64: dtype = GS_I64; break;
  case NPY_INT32: dtype = GS_I32; break;
  case NPY_UINT8: dtype = GS_U8; break;
  case NPY_INT8: dtype = GS_I8; break;
  case NPY_INT16: dtype = GS_I16; break;
  case NPY_BOOL: dtype = GS_BOOL; break;
  default:
    PyErr_Format(PyExc_TypeError,
                 "from_numpy(): can't convert an array of dtype %R; the supported dtypes are "
                 "float32, float64, int64, int32, int16, int8, uint8 and bool",
                 (PyObject *)PyArray_DESCR(a));
    return NULL;
  }
  if (!PyArray_ISNOTSWAPPED(a)) {
    PyErr_SetString(PyExc_ValueError, "from_numpy(): the array is not in native byte order");
    return NULL;
  }
  int nd = PyArray_NDIM(a);
  if (nd > GS_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "from_numpy(): %d dimensions, the engine has at most %d", nd,
                 GS_MAX_DIMS);
    return NULL;
  }
  if (!PyArray_ISWRITEABLE(a)) {
    PyErr_SetString(PyExc_ValueError,
                    "from_numpy(): the array is read-only, and the engine writes in place; "
                    "pass a writeable array (or a.copy())");
    return NULL;
  }
  size_t item = gs_dtype_size(dtype);
  if ((uintptr_t)PyArray_DATA(a) % item != 0) {
    PyErr_SetString(PyExc_ValueError, "from_numpy(): the array's data is not aligned to its "
                                      "element size");
    return NULL;
  }
  int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    npy_intp s = PyArray_STRIDES(a)[i];
    shape[i] = PyArray_DIMS(a)[i];
    if (s < 0) {
      PyErr_SetString(PyExc_ValueError,
                      "from_numpy(): at least one stride is negative, which the engine cannot "
                      "express (pass a.copy())");
      return NULL;
    }
    if (s % (npy_intp)item != 0) {
      PyErr_Format(PyExc_ValueError,
                   "from_numpy(): stride %zd bytes of dimension %d is not a multiple of the "
                   "element size %zu",
                   (Py_ssize_t)s, i, item);
      return NULL;
    }
    strides[i] = s / (npy_intp)item;
  }
  Py_INCREF(obj);
  gs_tensor t = gs_from_blob(dtype, shape, nd, strides, PyArray_DATA(a), release_array, obj);
  if (gs_tensor_is_none(t)) {
    /* A refused call wrapped nothing, so release was not called: drop our reference. */
    Py_DECREF(obj);
    return gsp_raise_engine_error();
  }
  return gsp_wrap(t);
}

/* ---- export ---------------------------------------------------------------------------- */

/* The NumPy type of an engine tensor's DLPack dtype (the engine exports these only). */
static int numpy_type(const DLDataType *t) {
  if (t->code == kDLFloat)
    return t->bits == 32 ? NPY_FLOAT32 : NPY_FLOAT64;
  if (t->code == kDLInt)
    return t->bits == 64   ? NPY_INT64
           : t->bits == 32 ? NPY_INT32
           : t->bits == 16 ? NPY_INT16
                           : NPY_INT8;
  if (t->code == kDLUInt)
    return NPY_UINT8;
  return NPY_BOOL;
}

static void pin_capsule_destructor(PyObject *capsule) {
  DLManagedTensor *m = PyCapsule_GetPointer(capsule, "gradscope.storage");
  if (m && m->deleter)
    m->deleter(m);
}

PyObject *gsp_tensor_numpy(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  DLManagedTensor *m = gs_to_dlpack(gsp_handle(self));
  if (!m)
    return gsp_raise_engine_error();
  DLTensor *dl = &m->dl_tensor;
  int typenum = numpy_type(&dl->dtype);
  npy_intp dims[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  npy_intp item = dl->dtype.bits / 8;
  for (int i = 0; i < dl->ndim; i++) {
    dims[i] = dl->shape[i];
    strides[i] = (dl->strides ? dl->strides[i] : 1) * item;
  }
  if (!dl->strides && dl->ndim > 0) { /* row-major */
    npy_intp s = item;
    for (int i = dl->ndim - 1; i >= 0; i--) {
      strides[i] = s;
      s *= dims[i];
    }
  }
  PyObject *capsule = PyCapsule_New(m, "gradscope.storage", pin_capsule_destructor);
  if (!capsule) {
    m->deleter(m);
    return NULL;
  }
  char *data = (char *)dl->data + dl->byte_offset;
  PyObject *arr = PyArray_New(&PyArray_Type, dl->ndim, dims, typenum, strides, data, (int)item,
                              NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
  if (!arr) {
    Py_DECREF(capsule);
    return NULL;
  }
  if (PyArray_SetBaseObject((PyArrayObject *)arr, capsule) < 0) { /* steals capsule */
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}

/* ---- buffer protocol ------------------------------------------------------------------- */

typedef struct buffer_pin {
  DLManagedTensor *managed;
  Py_ssize_t shape[GS_MAX_DIMS];
  Py_ssize_t strides[GS_MAX_DIMS];
} buffer_pin;

static const char *buffer_format(const DLDataType *t) {
  if (t->code == kDLFloat)
    return t->bits == 32 ? "f" : "d";
  if (t->code == kDLInt)
    return t->bits == 64 ? "q" : t->bits == 32 ? "i" : t->bits == 16 ? "h" : "b";
  if (t->code == kDLUInt)
    return "B";
  return "?";
}

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  GSP_SITE();
  gs_tensor t = gsp_handle(self);
  gs_clear_error();
  bool contiguous = gs_is_contiguous(t);
  if (gs_last_error_code() != GS_OK) {
    gsp_raise_engine_error();
    return -1;
  }
  if (!contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous: its buffer needs strides");
    return -1;
  }
  if (!contiguous && ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
                      (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS ||
                      (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS)) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not C-contiguous");
    return -1;
  }
  buffer_pin *pin = PyMem_Calloc(1, sizeof *pin);
  if (!pin) {
    PyErr_NoMemory();
    return -1;
  }
  pin->managed = gs_to_dlpack(t);
  if (!pin->managed) {
    PyMem_Free(pin);
    PyErr_Format(PyExc_BufferError, "%s", gs_last_error());
    gs_clear_error();
    return -1;
  }
  DLTensor *dl = &pin->managed->dl_tensor;
  Py_ssize_t item = dl->dtype.bits / 8, len = item;
  for (int i = 0; i < dl->ndim; i++) {
    pin->shape[i] = dl->shape[i];
    len *= dl->shape[i];
  }
  Py_ssize_t s = item;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    pin->strides[i] = dl->strides ? dl->strides[i] * item : s;
    s *= dl->shape[i];
  }
  view->buf = (char *)dl->data + dl->byte_offset;
  view->obj = Py_NewRef(self);
  view->len = len;
  view->itemsize = item;
  view->readonly = 0;
  view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(&dl->dtype) : NULL;
  view->ndim = dl->ndim;
  view->shape = (flags & PyBUF_ND) ? pin->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? pin->strides : NULL;
  view->suboffsets = NULL;
  view->internal = pin;
  return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  buffer_pin *pin = view->internal;
  if (pin) {
    pin->managed->deleter(pin->managed);
    PyMem_Free(pin);
  }
}

PyBufferProcs gsp_tensor_as_buffer = {
    .bf_getbuffer = tensor_getbuffer,
    .bf_releasebuffer = tensor_releasebuffer,
};
