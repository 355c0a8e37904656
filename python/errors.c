/* errors.c: the engine's errors as Python exceptions.
 *
 * At import the extension installs the engine's returning error handler, so a bad call yields
 * the empty handle (or its documented error value) instead of aborting the interpreter, and
 * the message stays in gs_last_error(). The exception class follows what PyTorch raises for
 * the same mistake: wrong dtypes are TypeError, bad arguments ValueError, an index out of
 * range IndexError (so iteration and `in` work), and everything else (shapes, stale handles,
 * a backward through a tensor written in place) RuntimeError. The message is the engine's.
 */
#include "gs-py.h"

void gsp_errors_install(void) { gs_set_error_handler(gs_error_handler_return, NULL, NULL); }

PyObject *gsp_raise_engine_error(void) {
  gs_error_code code = gs_last_error_code();
  const char *message = gs_last_error();
  PyObject *kind = PyExc_RuntimeError;
  switch (code) {
  case GS_ERR_DTYPE: kind = PyExc_TypeError; break;
  case GS_ERR_ARGUMENT: kind = PyExc_ValueError; break;
  case GS_ERR_INDEX:
  case GS_ERR_DIM: kind = PyExc_IndexError; break;
  case GS_ERR_OUT_OF_MEMORY: kind = PyExc_MemoryError; break;
  default: break;
  }
  if (code == GS_OK || !message || !*message)
    message = "the engine call failed without a message";
  PyErr_SetString(kind, message);
  gs_clear_error();
  return NULL;
}

PyObject *gsp_check_void(void) {
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}
