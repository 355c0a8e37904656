/* autograd-function.c: the C half of torch.autograd.Function (gradscope/function.py).
 * _function_record gives a Function's output a node of its own (gs_function_record) whose backward
 * calls back into Python: the node holds the Python callable, and the tensors the forward saved are
 * the engine's saved tensors, so an in-place write to one is caught at backward and the event log
 * lists them.
 *
 * The callable gets the output's gradient and the saved tensors as tensors of its own (over
 * the same storage; with history under create_graph, so a backward written with ops can be
 * differentiated again) and the tuple of which inputs need a gradient. It returns one entry
 * per input: a Tensor already shaped as that input (function.py checks and reduces), or None.
 * If it raises, the backward stops and the exception is what the program sees (errors.c). */
#include "gs-py.h"

/* The engine's handle as a tensor Python owns: an alias over the same storage, keeping the
 * handle's history when the pass records one. */
static PyObject *own(gs_tensor t) {
  return gsp_wrap(gs_grad_enabled() ? gs_clone(t) : gs_detach(t));
}

static bool call_backward(const gs_function_call *call) {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool ok = false;
  PyObject *grad = own(call->grad_output), *saved = PyTuple_New(call->n_saved),
           *needs = PyTuple_New(call->n_inputs), *result = NULL;
  if (!grad || !saved || !needs)
    goto done;
  for (int i = 0; i < call->n_saved; i++) {
    PyObject *t = own(call->saved[i]);
    if (!t)
      goto done;
    PyTuple_SET_ITEM(saved, i, t);
  }
  for (int i = 0; i < call->n_inputs; i++)
    PyTuple_SET_ITEM(needs, i, Py_NewRef(call->needs[i] ? Py_True : Py_False));
  result = PyObject_CallFunctionObjArgs((PyObject *)call->user_data, grad, saved, needs, NULL);
  if (!result)
    goto done;
  if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != call->n_inputs) {
    PyErr_Format(PyExc_RuntimeError,
                 "a Function's backward trampoline returned %R, expected a "
                 "tuple of %d gradients",
                 result, call->n_inputs);
    goto done;
  }
  ok = true;
  for (int i = 0; i < call->n_inputs && ok; i++) {
    PyObject *g = PyTuple_GET_ITEM(result, i);
    if (g == Py_None || !call->needs[i])
      continue;
    if (!gsp_is_tensor(g)) {
      PyErr_Format(PyExc_TypeError, "a Function's gradient must be a Tensor or None, got %s",
                   Py_TYPE(g)->tp_name);
      ok = false;
      break;
    }
    /* A copy-on-write clone: the engine may accumulate into what it is given in place. */
    call->grad_inputs[i] = gs_clone(gsp_handle(g));
    if (!call->grad_inputs[i].id) {
      gsp_raise_engine_error();
      ok = false;
    }
  }
done:
  Py_XDECREF(result);
  Py_XDECREF(needs);
  Py_XDECREF(saved);
  Py_XDECREF(grad);
  PyGILState_Release(gil);
  return ok;
}

static void free_backward(void *user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF((PyObject *)user_data);
  PyGILState_Release(gil);
}

/* A tuple of Tensors as handles (malloc'd; *n its length); NULL with an exception set. */
static gs_tensor *handles_of(PyObject *tuple, const char *what, int *n) {
  if (!PyTuple_Check(tuple)) {
    PyErr_Format(PyExc_TypeError, "_function_record(): expected a tuple of %s, got %s", what,
                 Py_TYPE(tuple)->tp_name);
    return NULL;
  }
  *n = (int)PyTuple_GET_SIZE(tuple);
  gs_tensor *h = PyMem_Calloc((size_t)(*n > 0 ? *n : 1), sizeof *h);
  if (!h)
    return (gs_tensor *)PyErr_NoMemory();
  for (int i = 0; i < *n; i++) {
    PyObject *t = PyTuple_GET_ITEM(tuple, i);
    if (!gsp_is_tensor(t)) {
      PyErr_Format(PyExc_TypeError, "_function_record(): %s %d is a %s, not a Tensor", what, i,
                   Py_TYPE(t)->tp_name);
      PyMem_Free(h);
      return NULL;
    }
    h[i] = gsp_handle(t);
  }
  return h;
}

/* _function_record(output, inputs, saved, name, backward) -> bool: whether a node was made. */
static PyObject *f_function_record(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  PyObject *output, *inputs, *saved, *backward;
  const char *name;
  if (!PyArg_ParseTuple(args, "O!OOsO:_function_record", &gsp_tensor_type, &output, &inputs, &saved,
                        &name, &backward))
    return NULL;
  if (!PyCallable_Check(backward))
    return PyErr_Format(PyExc_TypeError, "_function_record(): expected a callable, got %s",
                        Py_TYPE(backward)->tp_name);
  int n_inputs = 0, n_saved = 0;
  gs_tensor *in = handles_of(inputs, "inputs", &n_inputs);
  gs_tensor *keep = in ? handles_of(saved, "saved tensors", &n_saved) : NULL;
  if (!keep) {
    PyMem_Free(in);
    return NULL;
  }
  gs_clear_error();
  gs_function fn = {.name = name,
                    .backward = call_backward,
                    .saved = keep,
                    .n_saved = n_saved,
                    .user_data = Py_NewRef(backward),
                    .free_user_data = free_backward};
  int made = gs_function_record(gsp_handle(output), in, n_inputs, &fn);
  PyMem_Free(in);
  PyMem_Free(keep);
  if (made < 0) /* the engine freed our reference */
    return gsp_raise_engine_error();
  return PyBool_FromLong(made);
}

PyMethodDef gsp_function_functions[] = {
    {"_function_record", f_function_record, METH_VARARGS,
     "Gives a Function's output its node; returns whether one was made."},
    {NULL, NULL, 0, NULL},
};
