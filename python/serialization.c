/* serialization.c: what gradscope.save (python/gradscope/serialization.py, PyTorch's zip
 * format) needs from the engine and cannot get from a tensor's Python face: the bytes of the
 * whole storage a tensor views (PyTorch writes each storage once, and every view of it as
 * offset and strides into those bytes), and whether a tensor is an nn.Parameter (saved as
 * torch._utils._rebuild_parameter, as PyTorch saves its Parameters). */
#include "gs-py.h"

/* _storage_bytes(t): (storage id, the storage's bytes as bytes). A copy, so the file written
 * from it cannot change under a later in-place write. */
static PyObject *f_storage_bytes(PyObject *mod, PyObject *t) {
  (void)mod;
  GSP_SITE();
  if (!gsp_is_tensor(t)) {
    PyErr_Format(PyExc_TypeError, "_storage_bytes() expects a Tensor, not %.100s",
                 Py_TYPE(t)->tp_name);
    return NULL;
  }
  gs_storage_info info;
  gs_clear_error();
  if (gs_storage_info_of(gsp_handle(t), &info) < 0)
    return gsp_raise_engine_error();
  PyObject *bytes = PyBytes_FromStringAndSize(info.data, (Py_ssize_t)info.nbytes);
  if (!bytes)
    return NULL;
  return Py_BuildValue("(KN)", (unsigned long long)info.id, bytes);
}

static PyObject *f_is_parameter(PyObject *mod, PyObject *t) {
  (void)mod;
  if (!gsp_is_tensor(t)) {
    PyErr_Format(PyExc_TypeError, "_is_parameter() expects a Tensor, not %.100s",
                 Py_TYPE(t)->tp_name);
    return NULL;
  }
  gs_clear_error();
  bool is = gs_is_parameter(gsp_handle(t)) && !gsp_is_buffer(gsp_handle(t));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyBool_FromLong(is);
}

PyMethodDef gsp_serialization_functions[] = {
    {"_storage_bytes", f_storage_bytes, METH_O,
     "(storage id, bytes) of the whole storage t views (gradscope.save)."},
    {"_is_parameter", f_is_parameter, METH_O, "Whether t is an nn.Parameter (gradscope.save)."},
    {NULL, NULL, 0, NULL},
};
