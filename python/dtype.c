/* dtype.c: gradscope.float32, float64, int64, bool, int32, uint8, int8 and int16, PyTorch's
 * dtype names for the engine's eight dtypes, so `dtype=gradscope.float64` ports from
 * `dtype=torch.float64`. Each is one immortal object of type gradscope.dtype (compared by identity,
 * as torch's). NumPy dtypes and their names ("float32") are accepted wherever a dtype is, since
 * arrays come from NumPy. */
#include "gs-py.h"

typedef struct gsp_dtype {
  PyObject_HEAD
  gs_dtype dtype;
} gsp_dtype;

static const char *const torch_names[GS_DTYPE_COUNT] = {"float32", "float64", "int64", "bool",
                                                        "int32",   "uint8",   "int8",  "int16"};
static PyObject *dtype_objects[GS_DTYPE_COUNT];

/* The module dtypes print as part of: "torch" under gradscope.as_torch, so that a program's
 * printed dtypes and tensors read exactly as under PyTorch. */
static bool named_as_torch;

const char *gsp_dtype_torch_name(gs_dtype dtype) {
  return (unsigned)dtype < GS_DTYPE_COUNT ? torch_names[dtype] : "invalid";
}

bool gsp_named_as_torch(void) { return named_as_torch; }

const char *gsp_dtype_module_name(void) { return named_as_torch ? "torch" : "gradscope"; }

/* torch.set_default_dtype's: what floating tensors are made in when no dtype is given (Python
 * floats, zeros(), randn(), a module's parameters), float32 or float64: the engine's setting,
 * which its integer ops that need a floating result follow too. */
gs_dtype gsp_default_dtype(void) { return gs_default_dtype(); }

PyObject *gsp_set_default_dtype(PyObject *module, PyObject *arg) {
  (void)module;
  gs_dtype d = GS_F32;
  if (gsp_dtype_from_object(arg, &d) < 0)
    return NULL;
  if (d != GS_F32 && d != GS_F64) {
    PyErr_SetString(PyExc_TypeError, "only floating-point types are supported as the default type");
    return NULL;
  }
  gs_set_default_dtype(d);
  Py_RETURN_NONE;
}

PyObject *gsp_get_default_dtype(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  return gsp_dtype_object(gs_default_dtype());
}

PyObject *gsp_name_dtypes_as_torch(PyObject *module, PyObject *flag) {
  (void)module;
  int on = PyObject_IsTrue(flag);
  if (on < 0)
    return NULL;
  named_as_torch = on;
  Py_RETURN_NONE;
}

static PyObject *dtype_repr(PyObject *self) {
  return PyUnicode_FromFormat("%s.%s", gsp_dtype_module_name(),
                              torch_names[((gsp_dtype *)self)->dtype]);
}

static PyObject *dtype_is_floating_point(PyObject *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(gs_dtype_is_floating(((gsp_dtype *)self)->dtype));
}

static PyObject *dtype_itemsize(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(gs_dtype_size(((gsp_dtype *)self)->dtype));
}

/* A dtype reduces to its name in the module, so copy.copy, copy.deepcopy (a module's
 * constructor arguments, Conv2d(dtype=...)) and pickle give the one object back, as torch's. */
static PyObject *dtype_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyUnicode_FromString(torch_names[((gsp_dtype *)self)->dtype]);
}

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject gsp_dtype_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.dtype",
    .tp_basicsize = sizeof(gsp_dtype),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
    .tp_doc = "A tensor's element type: gradscope.float32, float64, int64, bool, int32, uint8, "
              "int8 or int16.",
};

int gsp_dtype_add_to_module(PyObject *module) {
  if (PyType_Ready(&gsp_dtype_type) < 0)
    return -1;
  for (int d = 0; d < GS_DTYPE_COUNT; d++) {
    gsp_dtype *o = PyObject_New(gsp_dtype, &gsp_dtype_type);
    if (!o)
      return -1;
    o->dtype = (gs_dtype)d;
    dtype_objects[d] = (PyObject *)o;
    if (PyModule_AddObjectRef(module, torch_names[d], (PyObject *)o) < 0)
      return -1;
  }
  /* PyTorch's aliases. */
  if (PyModule_AddObjectRef(module, "float", dtype_objects[GS_F32]) < 0 ||
      PyModule_AddObjectRef(module, "double", dtype_objects[GS_F64]) < 0 ||
      PyModule_AddObjectRef(module, "long", dtype_objects[GS_I64]) < 0 ||
      PyModule_AddObjectRef(module, "int", dtype_objects[GS_I32]) < 0 ||
      PyModule_AddObjectRef(module, "short", dtype_objects[GS_I16]) < 0)
    return -1;
  return PyModule_AddObjectRef(module, "dtype", (PyObject *)&gsp_dtype_type);
}

PyObject *gsp_dtype_object(gs_dtype dtype) {
  PyObject *o = dtype_objects[(unsigned)dtype < GS_DTYPE_COUNT ? dtype : 0];
  return Py_NewRef(o);
}

int gsp_dtype_from_object(PyObject *o, gs_dtype *out) {
  if (!o || o == Py_None)
    return 0;
  if (PyObject_TypeCheck(o, &gsp_dtype_type)) {
    *out = ((gsp_dtype *)o)->dtype;
    return 0;
  }
  /* A NumPy dtype, a NumPy scalar type or a name: compare by name. */
  PyObject *name = NULL;
  if (PyUnicode_Check(o))
    name = Py_NewRef(o);
  else if (PyObject_HasAttrString(o, "name") && !PyType_Check(o))
    name = PyObject_GetAttrString(o, "name");
  else if (PyType_Check(o))
    name = PyObject_GetAttrString(o, "__name__");
  if (name && PyUnicode_Check(name)) {
    for (int d = 0; d < GS_DTYPE_COUNT; d++) {
      if (PyUnicode_CompareWithASCIIString(name, torch_names[d]) == 0) {
        *out = (gs_dtype)d;
        Py_DECREF(name);
        return 0;
      }
    }
  }
  Py_XDECREF(name);
  PyErr_Clear();
  PyErr_Format(PyExc_TypeError,
               "dtype must be gradscope.float32, float64, int64, bool, int32, uint8, int8 or "
               "int16, not %R",
               o);
  return -1;
}
