/* inspect.c: gradscope.inspect(): starts the inspector listening on its per-user socket and
 * streams this process's events to it (GS_TRACE=unix:SOCKET, from inside the program).
 *
 * The inspector is `gradscope-inspector --listen` ($GRADSCOPE_INSPECTOR overrides the
 * program; command= replaces the whole command line). Its socket is
 * $XDG_RUNTIME_DIR/gradscope/inspector.sock, as the inspector's Listen for Programs uses
 * (socket= overrides it). inspect() waits up to wait= seconds for the socket to appear, then
 * opens the log on it, and returns the subprocess.Popen of the inspector. */
#include "gs-py.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static PyObject *default_socket(void) {
  const char *dir = getenv("XDG_RUNTIME_DIR");
  if (dir && *dir)
    return PyUnicode_FromFormat("%s/gradscope/inspector.sock", dir);
  const char *home = getenv("XDG_CACHE_HOME");
  if (home && *home)
    return PyUnicode_FromFormat("%s/gradscope/inspector.sock", home);
  home = getenv("HOME");
  return PyUnicode_FromFormat("%s/.cache/gradscope/inspector.sock", home ? home : "");
}

static bool is_socket(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

PyObject *gsp_inspect(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *gsp_inspect(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  PyObject *command = Py_None, *socket = Py_None;
  double wait = 10.0;
  static char *kwlist[] = {"command", "socket", "wait", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOd:inspect", kwlist, &command, &socket,
                                   &wait))
    return NULL;
  PyObject *path = socket == Py_None ? default_socket() : PyObject_Str(socket);
  if (!path)
    return NULL;
  PyObject *cmd;
  if (command == Py_None) {
    const char *program = getenv("GRADSCOPE_INSPECTOR");
    cmd = Py_BuildValue("[ss]", program && *program ? program : "gradscope-inspector",
                        "--listen");
  } else {
    cmd = PySequence_List(command);
  }
  PyObject *subprocess = cmd ? PyImport_ImportModule("subprocess") : NULL;
  PyObject *child = subprocess ? PyObject_CallMethod(subprocess, "Popen", "O", cmd) : NULL;
  Py_XDECREF(subprocess);
  Py_XDECREF(cmd);
  const char *p = child ? PyUnicode_AsUTF8(path) : NULL;
  if (!p)
    goto fail;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (is_socket(p))
      break;
    PyObject *rc = PyObject_CallMethod(child, "poll", NULL);
    if (!rc)
      goto fail;
    bool exited = rc != Py_None;
    Py_DECREF(rc);
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9;
    if (exited || waited > wait) {
      PyErr_Format(PyExc_RuntimeError,
                   "inspect(): the inspector %s before its socket %s appeared",
                   exited ? "exited" : "did not listen within the wait", p);
      goto fail;
    }
    Py_BEGIN_ALLOW_THREADS usleep(20000);
    Py_END_ALLOW_THREADS
  }
  PyObject *dest = PyUnicode_FromFormat("unix:%s", p);
  if (!dest)
    goto fail;
  /* The socket file appears at bind(), a moment before listen(): until then a connection is
   * refused. Try again while the inspector runs and the wait lasts (a probe connection of our
   * own would be the one connection the inspector accepts). */
  int rc;
  for (;;) {
    gs_clear_error();
    rc = gs_trace_open(PyUnicode_AsUTF8(dest));
    if (rc == 0)
      break;
    PyObject *polled = PyObject_CallMethod(child, "poll", NULL);
    bool exited = polled != Py_None;
    Py_XDECREF(polled);
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited =
        (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9;
    if (exited || waited > wait)
      break;
    Py_BEGIN_ALLOW_THREADS usleep(20000);
    Py_END_ALLOW_THREADS
  }
  Py_DECREF(dest);
  if (rc < 0) {
    gsp_raise_engine_error();
    goto fail;
  }
  Py_DECREF(path);
  return child;
fail:
  Py_XDECREF(child);
  Py_DECREF(path);
  return NULL;
}
