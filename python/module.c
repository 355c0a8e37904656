/* module.c: PyInit_gradscope: makes the module, readies the types, installs the engine's
 * returning error handler (a bad call raises instead of aborting the interpreter), and
 * imports NumPy's C API. */
#include "gs-py.h"

int gsp_functions_add_forwarders(PyObject *module);

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gradscope",
    .m_doc = "Gradscope: an autograd/tensor engine that records its own insides, from Python.",
    .m_size = -1,
    .m_methods = NULL,
};

PyMODINIT_FUNC PyInit_gradscope(void);
PyMODINIT_FUNC PyInit_gradscope(void) {
  gsp_errors_install();
  if (gsp_numpy_init() < 0)
    return NULL;
  gsp_tensor_type_init();
  if (PyType_Ready(&gsp_tensor_type) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
  if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&gsp_tensor_type) < 0 ||
      PyModule_AddFunctions(m, gsp_module_functions) < 0 || gsp_dtype_add_to_module(m) < 0 ||
      gsp_scopes_add_to_module(m) < 0 || gsp_functions_add_forwarders(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
