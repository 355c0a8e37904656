/* errors.c: the engine's errors as Python exceptions.
 *
 * At import the extension installs the engine's returning error handler, so a bad call yields
 * the empty handle (or its documented error value) instead of aborting the interpreter, and
 * the message stays in gs_last_error(). The exception class follows what PyTorch raises for
 * the same mistake: wrong dtypes are TypeError, bad arguments ValueError, an index out of
 * range IndexError (so iteration and `in` work), a singular matrix gradscope.linalg.LinAlgError
 * (a RuntimeError), and everything else (shapes, stale handles,
 * a backward through a tensor written in place) RuntimeError.
 *
 * The message is the engine's, in Python's words: the engine names its C functions (a message
 * begins with the failing call, "backward: ...", and may suggest another, "export
 * gs_detach(t) instead"), and a Python user has Tensor.backward and t.detach() instead. One
 * table maps the C spellings to Python's; a name missing from it stays as the engine wrote it.
 */
#include "gs-py.h"

#include <string.h>

/* C spelling -> Python spelling. Longer names first where one is a prefix of another. */
static const struct {
  const char *c, *python;
} python_words[] = {
    {"gs_backward_with", "Tensor.backward(gradient)"},
    {"linalg_vector_norm", "linalg.vector_norm"},
    {"linalg_matrix_norm", "linalg.matrix_norm"},
    {"linalg_solve", "linalg.solve"},
    {"linalg_inv", "linalg.inv"},
    {"linalg_det", "linalg.det"},
    {"linalg_slogdet", "linalg.slogdet"},
    {"linalg_cholesky", "linalg.cholesky"},
    {"linalg_eigvalsh", "linalg.eigvalsh"},
    {"linalg_eigh", "linalg.eigh"},
    {"linalg_svdvals", "linalg.svdvals"},
    {"linalg_svd", "linalg.svd"},
    {"linalg_qr", "linalg.qr"},
    {"linalg_lstsq", "linalg.lstsq"},
    {"linalg_pinv", "linalg.pinv"},
    {"linalg_matrix_rank", "linalg.matrix_rank"},
    {"gs_backward", "Tensor.backward()"},
    {"gs_detach(t)", "t.detach()"},
    {"gs_detach", "Tensor.detach()"},
    {"gs_set_requires_grad", "Tensor.requires_grad_()"},
    {"gs_zero_grad", "`t.grad = None`"},
    {"gs_clone", "Tensor.clone()"},
    {"gs_to_dlpack", "__dlpack__()"},
    {"gs_parameter_new", "nn.Parameter()"},
    {"gs_dispose", "Tensor.dispose()"},
    {"gs_move_to_outer", "Tensor.move_to_outer()"},
    {"gs_module_parameter", "Module.<name>"},
    {"call gs_dist_init first", "call gradscope.distributed.init_process_group() first"},
    {"construct it with find_unused_parameters", "construct it with find_unused_parameters=True"},
    {"pass gs_contiguous of it", "pass t.contiguous()"},
    {"GS_DIST_SUM, GS_DIST_AVG, GS_DIST_MAX, GS_DIST_MIN or GS_DIST_PRODUCT",
     "ReduceOp.SUM, AVG, MAX, MIN or PRODUCT"},
    {"pass allow_unused", "pass allow_unused=True"},
    {"pass retain_graph to the first backward", "pass retain_graph=True to the first backward"},
};

/* The failing call at the head of a message ("backward: ...") -> Python's name for it. */
static const struct {
  const char *c, *python;
} python_calls[] = {
    {"backward", "Tensor.backward"},
    {"set_requires_grad", "Tensor.requires_grad_"},
    {"retain_grad", "Tensor.retain_grad"},
    {"item", "Tensor.item"},
    {"clone", "Tensor.clone"},
    {"dispose", "Tensor.dispose"},
    {"to_dtype", "Tensor.to"},
    {"index", "Tensor.__getitem__"},
    {"index_put_", "Tensor.__setitem__ (index_put_)"},
    {"index_put", "Tensor.index_put"},
    {"module_forward", "Module.forward"},
    {"module_new", "nn.Module"},
    {"scope_begin", "dispose_scope"},
    {"from_data", "gradscope.tensor"},
    {"to_dlpack", "Tensor.__dlpack__"},
    {"ddp_backward", "Tensor.backward (DistributedDataParallel)"},
    {"autograd_grad", "autograd.grad"},
    {"backward_many", "autograd.backward"},
    {"register_grad_hook", "Tensor.register_hook"},
    {"grad_fn", "Tensor.grad_fn"},
    {"view_base", "Tensor._base"},
    {"node_name", "Node.name"},
    {"node_n_inputs", "Node.next_functions"},
    {"node_next", "Node.next_functions"},
    {"node_variable", "AccumulateGrad.variable"},
    {"node_retain", "Tensor.grad_fn"},
    {"ddp_forward", "DistributedDataParallel.forward"},
    {"ddp_new", "DistributedDataParallel"},
    {"dist_all_reduce", "distributed.all_reduce"},
    {"dist_broadcast", "distributed.broadcast"},
    {"dist_all_gather", "distributed.all_gather"},
    {"dist_reduce_scatter", "distributed.reduce_scatter"},
    {"dist_barrier", "distributed.barrier"},
    {"dist_init", "distributed.init_process_group"},
    {"dist_sampler_new", "DistributedSampler"},
};

/* The engine's message in Python's words (a new str), or NULL with an exception set. */
static PyObject *in_python_words(const char *message) {
  PyObject *s = NULL;
  const char *colon = strstr(message, ": ");
  for (size_t i = 0; colon && i < sizeof python_calls / sizeof python_calls[0]; i++) {
    size_t n = strlen(python_calls[i].c);
    if ((size_t)(colon - message) == n && strncmp(message, python_calls[i].c, n) == 0) {
      s = PyUnicode_FromFormat("%s%s", python_calls[i].python, colon);
      break;
    }
  }
  if (!s)
    s = PyUnicode_FromString(message);
  for (size_t i = 0; s && i < sizeof python_words / sizeof python_words[0]; i++) {
    if (!strstr(message, python_words[i].c))
      continue;
    PyObject *from = PyUnicode_FromString(python_words[i].c);
    PyObject *to = PyUnicode_FromString(python_words[i].python);
    PyObject *next = from && to ? PyUnicode_Replace(s, from, to, -1) : NULL;
    Py_XDECREF(from);
    Py_XDECREF(to);
    Py_SETREF(s, next);
  }
  return s;
}

void gsp_errors_install(void) { gs_set_error_handler(gs_error_handler_return, NULL, NULL); }

static PyObject *linalg_error;

int gsp_linalg_error_add(PyObject *module) {
  if (!linalg_error &&
      !(linalg_error = PyErr_NewExceptionWithDoc(
            "gradscope.linalg.LinAlgError",
            "A linear-algebra error: a singular matrix given to solve or inv, or one that is "
            "not positive-definite given to cholesky (as "
            "torch.linalg.LinAlgError, a RuntimeError).",
            PyExc_RuntimeError, NULL)))
    return -1;
  return PyModule_AddObjectRef(module, "_LinAlgError", linalg_error);
}

PyObject *gsp_raise_engine_error(void) {
  /* A Python exception raised by a callback the engine ran (a gradient hook) is the error the
   * program sees, as in torch; the engine's report of it is dropped. */
  if (PyErr_Occurred()) {
    gs_clear_error();
    return NULL;
  }
  gs_error_code code = gs_last_error_code();
  const char *message = gs_last_error();
  PyObject *kind = PyExc_RuntimeError;
  switch (code) {
  case GS_ERR_DTYPE: kind = PyExc_TypeError; break;
  case GS_ERR_ARGUMENT: kind = PyExc_ValueError; break;
  case GS_ERR_INDEX:
  case GS_ERR_DIM: kind = PyExc_IndexError; break;
  case GS_ERR_OUT_OF_MEMORY: kind = PyExc_MemoryError; break;
  case GS_ERR_SINGULAR: kind = linalg_error ? linalg_error : PyExc_RuntimeError; break;
  default: break;
  }
  if (code == GS_OK || !message || !*message)
    message = "the engine call failed without a message";
  PyObject *text = in_python_words(message);
  gs_clear_error();
  if (text) {
    PyErr_SetObject(kind, text);
    Py_DECREF(text);
  }
  return NULL;
}

PyObject *gsp_check_void(void) {
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}
