/* module.c: PyInit__gradscope: makes gradscope._gradscope, the C half of the `gradscope`
 * package, and its C submodules (nn, nn.functional, optim, utils.data) as attributes; the
 * package's pure-Python modules (python/gradscope/) re-export them and add what is natural in
 * Python, so `import gradscope.nn.functional as F` finds the package's files. It also readies
 * the types, installs the engine's returning error handler (a bad call raises instead of
 * aborting the interpreter), and imports NumPy's C API. */
#include "gs-py.h"

#include <string.h>

int gsp_functions_add_forwarders(PyObject *module);
PyObject *gsp_nn_module(void);
PyObject *gsp_functional_module(void);
PyObject *gsp_optim_module(void);
PyObject *gsp_data_module(void);

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gradscope._gradscope",
    .m_doc = "Gradscope: an autograd/tensor engine that records its own insides, from Python.",
    .m_size = -1,
    .m_methods = NULL,
};

/* parent.attr = child. Steals child. Not in sys.modules: the package's files are the modules
 * Python imports (python/gradscope/nn/__init__.py re-exports this one). */
static int add_submodule(PyObject *parent, const char *attr, PyObject *child) {
  if (!child)
    return -1;
  int rc = PyModule_AddObjectRef(parent, attr, child);
  Py_DECREF(child);
  return rc;
}

/* _extend_type(type, name, value): puts value (a Python function, property...) into a type of
 * this extension, so the package's Python modules can add what is natural in Python
 * (Module.named_modules, Tensor.grad_fn objects) to the C types without subclassing them:
 * objects the C code makes get the additions too. Only the extension's own types. */
static PyObject *f_extend_type(PyObject *mod, PyObject *args) {
  (void)mod;
  PyTypeObject *type;
  PyObject *name, *value;
  if (!PyArg_ParseTuple(args, "O!UO:_extend_type", &PyType_Type, &type, &name, &value))
    return NULL;
  if (strncmp(type->tp_name, "gradscope.", 10) != 0 || (type->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    PyErr_SetString(PyExc_TypeError, "_extend_type(): only gradscope's own C types");
    return NULL;
  }
  if (PyDict_SetItem(type->tp_dict, name, value) < 0)
    return NULL;
  PyType_Modified(type);
  Py_RETURN_NONE;
}

static PyMethodDef extend_functions[] = {
    {"_extend_type", f_extend_type, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyMODINIT_FUNC PyInit__gradscope(void);
PyMODINIT_FUNC PyInit__gradscope(void) {
  gsp_errors_install();
  if (gsp_numpy_init() < 0)
    return NULL;
  gsp_tensor_type_init();
  gsp_docs_fill(gsp_tensor_methods, "Tensor");
  gsp_docs_fill(gsp_module_functions, "gradscope");
  if (PyType_Ready(&gsp_tensor_type) < 0)
    return NULL;
  /* NumPy defers `array + tensor` and `np.float64(2) * tensor` to the tensor's reflected
   * operator when the tensor's priority is higher, as for torch.Tensor (the same 1000). */
  PyObject *priority = PyFloat_FromDouble(1000.0);
  if (!priority || PyDict_SetItemString(gsp_tensor_type.tp_dict, "__array_priority__", priority) < 0) {
    Py_XDECREF(priority);
    return NULL;
  }
  Py_DECREF(priority);
  PyType_Modified(&gsp_tensor_type);
  if (gsp_tensor_math_install() < 0 || gsp_tensor_index_ops_install() < 0 ||
      gsp_tensor_op_table_install() < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&gsp_tensor_type) < 0 ||
      PyModule_AddFunctions(m, gsp_module_functions) < 0 ||
      PyModule_AddFunctions(m, extend_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_serialization_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_linalg_functions) < 0 || gsp_linalg_error_add(m) < 0 ||
      PyModule_AddFunctions(m, gsp_hook_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_trace_read_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_saved_hook_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_autograd_grad_functions) < 0 ||
      PyModule_AddFunctions(m, gsp_function_functions) < 0 || gsp_grad_fn_install(m) < 0 ||
      gsp_dtype_add_to_module(m) < 0 || gsp_size_add_to_module(m) < 0 ||
      gsp_scopes_add_to_module(m) < 0 || gsp_functions_add_forwarders(m) < 0)
    goto fail;
  PyObject *nn = gsp_nn_module();
  if (add_submodule(m, "nn", nn) < 0)
    goto fail;
  PyObject *functional = gsp_functional_module();
  /* F.relu, F.softmax, ... are the same forwarders as gradscope.relu. */
  if (!functional || gsp_functions_add_forwarders(functional) < 0 ||
      add_submodule(nn, "functional", functional) < 0)
    goto fail;
  if (add_submodule(m, "optim", gsp_optim_module()) < 0 ||
      add_submodule(m, "_distributed", gsp_distributed_module()) < 0 ||
      add_submodule(m, "_rnn", gsp_rnn_module()) < 0)
    goto fail;
  PyObject *utils = PyModule_New("gradscope.utils");
  if (add_submodule(m, "utils", utils) < 0 || add_submodule(utils, "data", gsp_data_module()) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
