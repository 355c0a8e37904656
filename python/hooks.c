/* hooks.c: Tensor.register_hook's C half: a Python function as an engine gradient hook
 * (gs_register_grad_hook), and its removal. gradscope/autograd.py makes the Python face
 * (Tensor.register_hook returning a RemovableHandle, as torch's).
 *
 * The hook runs during backward, on the thread that called it, which holds the GIL already;
 * the engine also frees hooks with their nodes, wherever that happens, so both take the GIL
 * themselves. The function is called with its own tensor over the gradient (a detached alias
 * it may keep); what it returns (a Tensor, or None to keep the gradient) replaces it. If it
 * raises, the backward stops and the exception is what the program sees (errors.c).
 */
#include "gs-py.h"

static bool call_hook(gs_tensor grad, gs_tensor *replacement, void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool ok = false;
  PyObject *arg = gsp_wrap(gs_detach(grad));
  PyObject *result = arg ? PyObject_CallOneArg((PyObject *)user_data, arg) : NULL;
  if (result == Py_None) {
    ok = true;
  } else if (result && gsp_is_tensor(result)) {
    *replacement = gs_clone(gsp_handle(result)); /* the engine disposes it */
    ok = replacement->id != 0;
    if (!ok)
      gsp_raise_engine_error();
  } else if (result) {
    PyErr_Format(PyExc_TypeError, "a gradient hook must return a Tensor or None, got %s",
                 Py_TYPE(result)->tp_name);
  }
  Py_XDECREF(result);
  Py_XDECREF(arg);
  PyGILState_Release(gil);
  return ok;
}

static void free_hook(void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF((PyObject *)user_data);
  PyGILState_Release(gil);
}

/* _register_grad_hook(tensor, fn) -> (node id, hook id) */
static PyObject *f_register_grad_hook(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  PyObject *tensor, *fn;
  if (!PyArg_ParseTuple(args, "O!O:register_hook", &gsp_tensor_type, &tensor, &fn))
    return NULL;
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "register_hook(): expected a function, got %s",
                 Py_TYPE(fn)->tp_name);
    return NULL;
  }
  gs_clear_error();
  gs_grad_hook h = gs_register_grad_hook(gsp_handle(tensor), call_hook, Py_NewRef(fn), free_hook);
  if (!h.id) /* the engine freed our reference */
    return gsp_raise_engine_error();
  return Py_BuildValue("(KK)", (unsigned long long)h.node, (unsigned long long)h.id);
}

static PyObject *f_remove_grad_hook(PyObject *mod, PyObject *args) {
  (void)mod;
  unsigned long long node, id;
  if (!PyArg_ParseTuple(args, "KK:remove", &node, &id))
    return NULL;
  gs_clear_error();
  gs_grad_hook_remove((gs_grad_hook){node, id});
  return gsp_check_void();
}

PyMethodDef gsp_hook_functions[] = {
    {"_register_grad_hook", f_register_grad_hook, METH_VARARGS,
     "Registers fn as a hook on the tensor's gradient; returns its (node, id)."},
    {"_remove_grad_hook", f_remove_grad_hook, METH_VARARGS, "Removes a hook by (node, id)."},
    {NULL, NULL, 0, NULL},
};
