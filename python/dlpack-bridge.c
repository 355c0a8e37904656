/* dlpack-bridge.c: the Python DLPack protocol over the engine's C DLPack support:
 * t.__dlpack__(), t.__dlpack_device__() and gradscope.from_dlpack(x), so that
 * torch.from_dlpack(t), numpy.from_dlpack(t) and gradscope.from_dlpack(torch_tensor) share
 * memory without copying.
 *
 * The capsule protocol: a producer's capsule is named "dltensor"; a consumer that takes the
 * managed tensor renames it "used_dltensor" and becomes responsible for calling its deleter.
 * A capsule nobody consumed calls the deleter when it is collected.
 */
#include "gs-py.h"

#include <dlpack/dlpack.h>

static void capsule_destructor(PyObject *capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor"))
    return; /* consumed: the consumer owns the managed tensor now */
  DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
  if (m && m->deleter)
    m->deleter(m);
}

PyObject *gsp_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *stream = Py_None;
  static char *kwlist[] = {"stream", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:__dlpack__", kwlist, &stream))
    return NULL;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__(): gradscope tensors live on the CPU, which "
                                       "has no streams: stream must be None");
    return NULL;
  }
  gs_clear_error();
  DLManagedTensor *m = gs_to_dlpack(gsp_handle(self));
  if (!m)
    return gsp_raise_engine_error();
  /* A bool tensor crosses as uint8 (one byte per element, 0 or 1: the same bytes): torch 1.13's
   * from_dlpack refuses DLPack's bool ("Unsupported code 6"), and so does NumPy 1.24's. The
   * consumer gets a uint8 tensor; .bool() (torch) or .astype(bool) (NumPy) makes it bool. */
  if (m->dl_tensor.dtype.code == 6 /* kDLBool, which dlpack.h 0.6 does not name */)
    m->dl_tensor.dtype = (DLDataType){.code = kDLUInt, .bits = 8, .lanes = 1};
  PyObject *capsule = PyCapsule_New(m, "dltensor", capsule_destructor);
  if (!capsule)
    m->deleter(m);
  return capsule;
}

PyObject *gsp_tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", (int)kDLCPU, 0);
}

PyObject *gsp_from_dlpack(PyObject *module, PyObject *obj) {
  GSP_SITE();
  (void)module;
  PyObject *capsule;
  if (PyCapsule_CheckExact(obj)) {
    capsule = Py_NewRef(obj);
  } else {
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    if (!method) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "from_dlpack(): expected an object with __dlpack__ or a DLPack capsule, got "
                   "%.200s",
                   Py_TYPE(obj)->tp_name);
      return NULL;
    }
    capsule = PyObject_CallNoArgs(method);
    Py_DECREF(method);
    if (!capsule)
      return NULL;
  }
  DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
  if (!m) {
    Py_DECREF(capsule);
    PyErr_SetString(PyExc_ValueError,
                    "from_dlpack(): the capsule is not an unconsumed \"dltensor\" (each one can "
                    "be consumed once)");
    return NULL;
  }
  /* From here the engine owns m: it calls the deleter, also on error. */
  if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
    Py_DECREF(capsule);
    return NULL;
  }
  Py_DECREF(capsule);
  return gsp_wrap(gs_from_dlpack(m));
}
