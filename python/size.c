/* size.c: gradscope.Size, the type of Tensor.shape and Tensor.size(): a tuple of ints, as
 * torch.Size is, whose repr is torch's ("torch.Size([3, 4])") so a program that prints a
 * shape prints the same line on both, and with torch.Size's numel(). */
#include "gs-py.h"

static PyObject *size_repr(PyObject *self) {
  PyObject *list = PySequence_List(self);
  if (!list)
    return NULL;
  PyObject *r = PyUnicode_FromFormat("torch.Size(%R)", list);
  Py_DECREF(list);
  return r;
}

static PyObject *size_numel(PyObject *self, PyObject *unused) {
  (void)unused;
  long long n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
    if (v == -1 && PyErr_Occurred())
      return NULL;
    n *= v;
  }
  return PyLong_FromLongLong(n);
}

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "The number of elements a tensor of this shape holds."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject gsp_size_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.Size",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_doc = "A tensor's shape: a tuple of ints, as torch.Size.",
    .tp_repr = size_repr,
    .tp_methods = size_methods,
};

int gsp_size_add_to_module(PyObject *module) {
  gsp_size_type.tp_base = &PyTuple_Type;
  if (PyType_Ready(&gsp_size_type) < 0)
    return -1;
  return PyModule_AddObjectRef(module, "Size", (PyObject *)&gsp_size_type);
}

PyObject *gsp_size_new(const int64_t *values, int n) {
  PyObject *tuple = gsp_int_tuple(values, n);
  if (!tuple)
    return NULL;
  PyObject *size = PyObject_CallOneArg((PyObject *)&gsp_size_type, tuple);
  Py_DECREF(tuple);
  return size;
}
