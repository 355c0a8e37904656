/* sites.c: the Python lines that call the engine, as the event log's call sites.
 *
 * The engine finds a C program's call site by walking its own frames up to the program's
 * return address; from Python that address is the interpreter's eval loop, the same for every
 * line. So while the log is on, each entry point of the module first tells the engine the
 * current Python line as "function (file:line)" (gs_trace_set_site_text, format 1.5), and the
 * inspector shows the user's file, line and function. With the log off, GSP_SITE() costs one
 * call of gs_trace_enabled(). The last (code, line) is remembered so a loop calling from one
 * line formats its text once; the code object is held so its address cannot be reused. */
#include "gs-py.h"

#include <stdio.h>

static _Thread_local PyCodeObject *last_code;
static _Thread_local int last_line = -1;

void gsp_site_from_frame(void) {
  if (PyErr_Occurred())
    return; /* formatting must not disturb a pending exception (a dealloc during unwinding) */
  PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
  if (!frame) {
    gs_trace_set_site_text(NULL);
    return;
  }
  PyCodeObject *code = PyFrame_GetCode(frame); /* new reference */
  int line = PyFrame_GetLineNumber(frame);
  if (code == last_code && line == last_line) {
    Py_DECREF(code);
    return;
  }
  const char *function = PyUnicode_AsUTF8(code->co_qualname);
  const char *file = PyUnicode_AsUTF8(code->co_filename);
  if (!function || !file) {
    PyErr_Clear();
    Py_DECREF(code);
    return;
  }
  char text[1024];
  snprintf(text, sizeof text, "%s (%s:%d)", function, file, line);
  gs_trace_set_site_text(text);
  Py_XSETREF(last_code, code);
  last_line = line;
}
