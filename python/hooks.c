/* hooks.c: the C half of Tensor.register_hook and of grad_fn's register_prehook and
 * register_hook: a Python function as an engine gradient hook (gs_register_grad_hook,
 * gs_node_register_pre_hook) or node post-hook (gs_node_register_post_hook), and their
 * removal. gradscope/autograd.py makes the Python face (RemovableHandle, torch's tuples).
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

/* A node's post-hook (Node.register_hook): hook(grad_inputs, grad_outputs), tuples of the
 * gradients the node made for its inputs (None where an input takes none) and of the one it
 * was given; it returns None (all kept), or a tuple of as many gradients, where None means
 * none for that input, as in PyTorch. */
static bool call_node_post_hook(const gs_tensor *grad_inputs, int n_inputs, gs_tensor grad_output,
                                gs_tensor *replacements, void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool ok = false;
  PyObject *inputs = PyTuple_New(n_inputs), *outputs = NULL, *result = NULL;
  for (int i = 0; inputs && i < n_inputs; i++) {
    PyObject *g = grad_inputs[i].id ? gsp_wrap(gs_detach(grad_inputs[i])) : Py_NewRef(Py_None);
    if (!g)
      Py_CLEAR(inputs);
    else
      PyTuple_SET_ITEM(inputs, i, g);
  }
  PyObject *out = inputs ? gsp_wrap(gs_detach(grad_output)) : NULL;
  outputs = out ? PyTuple_Pack(1, out) : NULL;
  Py_XDECREF(out);
  if (outputs)
    result = PyObject_CallFunctionObjArgs((PyObject *)user_data, inputs, outputs, NULL);
  if (result == Py_None) {
    ok = true;
  } else if (result && PyTuple_Check(result) && PyTuple_GET_SIZE(result) == n_inputs) {
    /* Written straight into replacements: on false the engine disposes what was set. */
    ok = true;
    for (int i = 0; ok && i < n_inputs; i++) {
      PyObject *r = PyTuple_GET_ITEM(result, i);
      if (r == Py_None) {
        replacements[i] = GS_NO_TENSOR;
      } else if (!gsp_is_tensor(r)) {
        PyErr_Format(PyExc_TypeError,
                     "a node hook must return a tuple of Tensors or None, "
                     "got a tuple holding %s",
                     Py_TYPE(r)->tp_name);
        ok = false;
      } else if (!(replacements[i] = gs_clone(gsp_handle(r))).id) { /* the engine disposes it */
        gsp_raise_engine_error();
        ok = false;
      }
    }
  } else if (result) {
    PyErr_Format(PyExc_TypeError,
                 "a node hook must return None or a tuple of %d gradients "
                 "(one per input), got %s",
                 n_inputs,
                 PyTuple_Check(result) ? "a tuple of another length" : Py_TYPE(result)->tp_name);
  }
  Py_XDECREF(result);
  Py_XDECREF(outputs);
  Py_XDECREF(inputs);
  PyGILState_Release(gil);
  return ok;
}

PyObject *gsp_node_hook_register(gs_node node, PyObject *fn, bool post) {
  const char *what = post ? "register_hook" : "register_prehook";
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "%s(): expected a function, got %s", what, Py_TYPE(fn)->tp_name);
    return NULL;
  }
  gs_clear_error();
  gs_grad_hook h =
      post ? gs_node_register_post_hook(node, call_node_post_hook, Py_NewRef(fn), free_hook)
           : gs_node_register_pre_hook(node, call_hook, Py_NewRef(fn), free_hook);
  if (!h.id) /* the engine freed our reference */
    return gsp_raise_engine_error();
  return Py_BuildValue("(KK)", (unsigned long long)h.node, (unsigned long long)h.id);
}

PyMethodDef gsp_hook_functions[] = {
    {"_register_grad_hook", f_register_grad_hook, METH_VARARGS,
     "Registers fn as a hook on the tensor's gradient; returns its (node, id)."},
    {"_remove_grad_hook", f_remove_grad_hook, METH_VARARGS, "Removes a hook by (node, id)."},
    {NULL, NULL, 0, NULL},
};
