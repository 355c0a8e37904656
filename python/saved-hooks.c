/* saved-hooks.c: the C half of torch.autograd.graph.saved_tensors_hooks (gradscope/
 * autograd_graph.py makes the Python face): a pair of Python functions as the engine's
 * saved-tensor hooks (gs_saved_tensor_hooks_push).
 *
 * pack runs inside the op that saves (the calling thread holds the GIL); unpack inside a
 * backward or a grad_fn access; packed values and the pair are freed with their nodes,
 * wherever that happens, so those take the GIL themselves. pack gets a Tensor of its own over
 * the saved tensor and may return any object; unpack gets that object back and must return a
 * Tensor. If either raises, the engine reports the failure and the exception stays set, so it
 * is what the program sees (the op's or backward's wrapper raises it, errors.c).
 */
#include "gs-py.h"

#include <string.h>

bool gsp_pack_failed;

/* user_data: a tuple (pack, unpack). */
static bool call_pack(gs_tensor t, void **packed, void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *arg = gsp_wrap(t); /* the object owns t */
  PyObject *result =
      arg ? PyObject_CallOneArg(PyTuple_GET_ITEM((PyObject *)user_data, 0), arg) : NULL;
  Py_XDECREF(arg);
  *packed = result;
  if (!result)
    gsp_pack_failed = true;
  PyGILState_Release(gil);
  return result != NULL;
}

static gs_tensor call_unpack(void *packed, void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  gs_tensor out = GS_NO_TENSOR;
  PyObject *result =
      PyObject_CallOneArg(PyTuple_GET_ITEM((PyObject *)user_data, 1), (PyObject *)packed);
  if (result && !gsp_is_tensor(result)) {
    /* torch's words */
    PyErr_Format(PyExc_TypeError,
                 "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                 "type %s",
                 Py_TYPE(result)->tp_name);
  } else if (result) {
    out = gs_alias(gsp_handle(result)); /* the engine disposes it */
    if (!out.id)
      gsp_raise_engine_error();
  }
  Py_XDECREF(result);
  PyGILState_Release(gil);
  return out;
}

static void free_packed(void *packed, void *user_data) {
  (void)user_data;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF((PyObject *)packed);
  PyGILState_Release(gil);
}

static void free_pair(void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF((PyObject *)user_data);
  PyGILState_Release(gil);
}

/* _saved_tensors_hooks_push(pack, unpack) */
static PyObject *f_push(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *pack, *unpack;
  if (!PyArg_ParseTuple(args, "OO:saved_tensors_hooks", &pack, &unpack))
    return NULL;
  if (!PyCallable_Check(pack) || !PyCallable_Check(unpack)) {
    PyErr_Format(PyExc_TypeError,
                 "saved_tensors_hooks(): expected two functions (pack_hook, unpack_hook), got "
                 "%s and %s",
                 Py_TYPE(pack)->tp_name, Py_TYPE(unpack)->tp_name);
    return NULL;
  }
  PyObject *pair = PyTuple_Pack(2, pack, unpack);
  if (!pair)
    return NULL;
  gs_clear_error();
  gs_saved_tensor_hooks h = {call_pack, call_unpack, free_packed, pair, free_pair};
  if (gs_saved_tensor_hooks_push(&h) < 0) {
    Py_DECREF(pair);
    /* disabled: torch raises the disabling code's message as it was given */
    static const char prefix[] = "saved_tensor_hooks_push: ";
    const char *message = gs_last_error();
    if (gs_last_error_code() == GS_ERR_STATE && message &&
        strncmp(message, prefix, sizeof prefix - 1) == 0) {
      PyErr_SetString(PyExc_RuntimeError, message + sizeof prefix - 1);
      return NULL;
    }
    return gsp_raise_engine_error();
  }
  Py_RETURN_NONE;
}

static PyObject *f_pop(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  gs_clear_error();
  gs_saved_tensor_hooks_pop();
  return gsp_check_void();
}

/* _saved_tensors_hooks_disable(message or None) */
static PyObject *f_disable(PyObject *mod, PyObject *args) {
  (void)mod;
  const char *message = NULL;
  if (!PyArg_ParseTuple(args, "z:disable_saved_tensors_hooks", &message))
    return NULL;
  gs_clear_error();
  gs_saved_tensor_hooks_disable(message);
  return gsp_check_void();
}

static PyObject *f_enable(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  gs_clear_error();
  gs_saved_tensor_hooks_enable();
  return gsp_check_void();
}

PyMethodDef gsp_saved_hook_functions[] = {
    {"_saved_tensors_hooks_push", f_push, METH_VARARGS,
     "Pushes (pack, unpack) as this thread's saved-tensor hooks."},
    {"_saved_tensors_hooks_pop", f_pop, METH_NOARGS, "Pops this thread's innermost pair."},
    {"_saved_tensors_hooks_disable", f_disable, METH_VARARGS,
     "Makes pushing a pair an error with this message until enabled again."},
    {"_saved_tensors_hooks_enable", f_enable, METH_NOARGS, "Ends the innermost disable."},
    {NULL, NULL, 0, NULL},
};
