/* autograd-grad.c: the C half of torch.autograd.grad and torch.autograd.backward over the
 * engine's gs_autograd_grad_with and gs_backward_many_with (create_graph: double backward);
 * gradscope/autograd.py gives them torch's signatures (a tensor or a sequence, grad_outputs
 * defaulting to None, retain_graph defaulting to create_graph). */
#include "gs-py.h"

/* A list or tuple of Tensors (or, with none_ok, None for "ones") into handles; the count, or
 * -1 raised. n_expected >= 0: it must have that many. */
static Py_ssize_t handles_of(PyObject *seq, const char *what, bool none_ok, Py_ssize_t n_expected,
                             gs_tensor **out) {
  PyObject *fast = PySequence_Fast(seq, "expected a sequence of Tensors");
  if (!fast)
    return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  gs_tensor *handles =
      n_expected < 0 || n == n_expected ? PyMem_Calloc((size_t)(n ? n : 1), sizeof *handles) : NULL;
  if (n_expected >= 0 && n != n_expected)
    PyErr_Format(PyExc_ValueError, "%s: expected %zd of them (one per output), got %zd", what,
                 n_expected, n);
  else if (!handles)
    PyErr_NoMemory();
  for (Py_ssize_t i = 0; handles && i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
    if (gsp_is_tensor(item)) {
      handles[i] = gsp_handle(item);
    } else if (!(none_ok && item == Py_None)) {
      PyErr_Format(PyExc_TypeError, "%s: expected Tensors%s, item %zd is %.200s", what,
                   none_ok ? " or None" : "", i, Py_TYPE(item)->tp_name);
      PyMem_Free(handles);
      handles = NULL;
    }
  }
  Py_DECREF(fast);
  *out = handles;
  return handles ? n : -1;
}

/* _autograd_grad(outputs, inputs, grad_outputs, retain_graph, allow_unused[, create_graph])
 * -> tuple */
static PyObject *f_autograd_grad(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  PyObject *outputs_o, *inputs_o, *grads_o;
  int retain_graph, allow_unused, create_graph = 0;
  if (!PyArg_ParseTuple(args, "OOOpp|p:grad", &outputs_o, &inputs_o, &grads_o, &retain_graph,
                        &allow_unused, &create_graph))
    return NULL;
  gs_tensor *outputs = NULL, *inputs = NULL, *grads = NULL, *result = NULL;
  PyObject *tuple = NULL;
  Py_ssize_t n_out = handles_of(outputs_o, "outputs", false, -1, &outputs);
  Py_ssize_t n_in = n_out < 0 ? -1 : handles_of(inputs_o, "inputs", false, -1, &inputs);
  if (n_in < 0)
    goto done;
  if (grads_o != Py_None && handles_of(grads_o, "grad_outputs", true, n_out, &grads) < 0)
    goto done;
  if (!(result = PyMem_Calloc((size_t)(n_in ? n_in : 1), sizeof *result))) {
    PyErr_NoMemory();
    goto done;
  }
  gs_clear_error();
  gs_backward_options options = {.retain_graph = retain_graph, .create_graph = create_graph};
  if (gs_autograd_grad_with(outputs, grads, (int)n_out, inputs, (int)n_in, &options, allow_unused,
                            result) < 0) {
    gsp_raise_engine_error();
    goto done;
  }
  tuple = PyTuple_New(n_in);
  for (Py_ssize_t i = 0; i < n_in; i++) {
    PyObject *g = result[i].id ? gsp_wrap(result[i]) : Py_NewRef(Py_None);
    result[i] = GS_NO_TENSOR; /* the object owns it now */
    if (!g || !tuple) {
      Py_XDECREF(g);
      Py_CLEAR(tuple);
      continue; /* the rest are still disposed below */
    }
    PyTuple_SET_ITEM(tuple, i, g);
  }
done:
  for (Py_ssize_t i = 0; result && i < n_in; i++)
    if (result[i].id)
      gs_dispose(result[i]);
  PyMem_Free(result);
  PyMem_Free(grads);
  PyMem_Free(inputs);
  PyMem_Free(outputs);
  return tuple;
}

/* _backward_many(tensors, grad_tensors or None, retain_graph[, inputs[, create_graph]]): with
 * inputs, only their .grad is accumulated into (torch.autograd.backward(inputs=...)). */
static PyObject *f_backward_many(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  PyObject *tensors_o, *grads_o, *inputs_o = Py_None;
  int retain_graph, create_graph = 0;
  if (!PyArg_ParseTuple(args, "OOp|Op:backward", &tensors_o, &grads_o, &retain_graph, &inputs_o,
                        &create_graph))
    return NULL;
  gs_tensor *tensors = NULL, *grads = NULL, *inputs = NULL;
  Py_ssize_t n = handles_of(tensors_o, "tensors", false, -1, &tensors), n_in = 0;
  if (n < 0 || (grads_o != Py_None && handles_of(grads_o, "grad_tensors", true, n, &grads) < 0) ||
      (inputs_o != Py_None && (n_in = handles_of(inputs_o, "inputs", false, -1, &inputs)) < 0)) {
    PyMem_Free(inputs);
    PyMem_Free(grads);
    PyMem_Free(tensors);
    return NULL;
  }
  gs_clear_error();
  gs_backward_options options = {.retain_graph = retain_graph, .create_graph = create_graph};
  if (inputs_o == Py_None)
    gs_backward_many_with(tensors, grads, (int)n, &options);
  else
    gs_backward_inputs_with(tensors, grads, (int)n, inputs, (int)n_in, &options);
  PyMem_Free(inputs);
  PyMem_Free(grads);
  PyMem_Free(tensors);
  return gsp_check_void();
}

PyMethodDef gsp_autograd_grad_functions[] = {
    {"_autograd_grad", f_autograd_grad, METH_VARARGS,
     "gs_autograd_grad: (outputs, inputs, grad_outputs, retain_graph, allow_unused[, "
     "create_graph]) -> tuple."},
    {"_backward_many", f_backward_many, METH_VARARGS,
     "gs_backward_many: one backward pass from several tensors."},
    {NULL, NULL, 0, NULL},
};
