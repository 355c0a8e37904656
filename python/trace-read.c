/* trace-read.c: what gradscope.profiler (torch.profiler) needs of the event log: named
 * ranges (gs_trace_range_begin/end, for record_function), opening and flushing the log, and
 * reading a log file back through the engine's reader (the only parser of the format) into
 * plain tuples, one per event the profiler uses. The profiler's arithmetic is Python's
 * (gradscope/profiler_events.py); the bytes stay the reader's. */
#include <stdio.h>

#include "gs-py.h"

static PyObject *range_call(PyObject *name, void (*call)(const char *)) {
  GSP_SITE();
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (!s) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "record_function: expected a name (str), got %s",
                   Py_TYPE(name)->tp_name);
    return NULL;
  }
  gs_clear_error();
  call(s);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyObject *f_range_begin(PyObject *m, PyObject *name) {
  (void)m;
  return range_call(name, gs_trace_range_begin);
}

static PyObject *f_range_end(PyObject *m, PyObject *name) {
  (void)m;
  return range_call(name, gs_trace_range_end);
}

static PyObject *f_trace_open(PyObject *m, PyObject *path) {
  (void)m;
  PyObject *bytes = NULL;
  if (!PyUnicode_FSConverter(path, &bytes))
    return NULL;
  gs_clear_error();
  int rc = gs_trace_open(PyBytes_AS_STRING(bytes));
  Py_DECREF(bytes);
  if (rc < 0)
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyObject *f_trace_enabled(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return PyBool_FromLong(gs_trace_enabled());
}

static PyObject *f_trace_flush(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  gs_trace_flush();
  Py_RETURN_NONE;
}

/* The kinds the profiler reads; the rest (most of a log) are not made into tuples. */
static bool profiler_kind(gs_trace_kind k) {
  switch (k) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_FREE:
  case GS_TRACE_TENSOR_CREATE:
  case GS_TRACE_INPLACE_WRITE:
  case GS_TRACE_NODE_CREATE:
  case GS_TRACE_BACKWARD_BEGIN:
  case GS_TRACE_BACKWARD_END:
  case GS_TRACE_GRAD_ACCUMULATE:
  case GS_TRACE_MARK:
  case GS_TRACE_RANGE_BEGIN:
  case GS_TRACE_RANGE_END:
  case GS_TRACE_SITE: return true;
  default: return false;
  }
}

/* (kind, seq, time_ns, thread, name, op, tensor, storage, nbytes, shape, origin, source, node,
 * inputs, site): site is the call site's id; a site event's own id is its `site`, its name
 * the Python site's text ("function (file:line)"), "" for an address site. */
static PyObject *event_tuple(const gs_trace_reader *r, const gs_trace_event *e) {
  bool is_node = e->kind == GS_TRACE_NODE_CREATE;
  PyObject *inputs = PyTuple_New(is_node ? e->n_inputs : 0);
  for (uint32_t i = 0; inputs && is_node && i < e->n_inputs; i++) {
    PyObject *id = PyLong_FromUnsignedLongLong(e->inputs[i]);
    if (!id)
      Py_CLEAR(inputs);
    else
      PyTuple_SET_ITEM(inputs, i, id);
  }
  PyObject *shape = inputs ? PyTuple_New(e->kind == GS_TRACE_TENSOR_CREATE ? e->ndim : 0) : NULL;
  if (!shape) {
    Py_XDECREF(inputs);
    return NULL;
  }
  for (int i = 0; e->kind == GS_TRACE_TENSOR_CREATE && i < e->ndim; i++) {
    PyObject *d = PyLong_FromLongLong(e->shape[i]);
    if (!d) {
      Py_DECREF(shape);
      Py_DECREF(inputs);
      return NULL;
    }
    PyTuple_SET_ITEM(shape, i, d);
  }
  return Py_BuildValue("(sKKIssKKKNIKKNI)", gs_trace_kind_name(e->kind), (unsigned long long)e->seq,
                       (unsigned long long)e->time_ns, e->thread,
                       gs_trace_reader_string(r, e->name), gs_trace_reader_string(r, e->op),
                       (unsigned long long)e->tensor, (unsigned long long)e->storage,
                       (unsigned long long)e->nbytes, shape, e->origin,
                       (unsigned long long)e->source, (unsigned long long)e->node, inputs, e->site);
}

/* _trace_events(path): the profiler's events of the log at path, in the log's order. A log
 * cut short (a writer still running) yields the events before the cut; a damaged one raises. */
static PyObject *f_trace_events(PyObject *m, PyObject *path) {
  (void)m;
  PyObject *bytes = NULL;
  if (!PyUnicode_FSConverter(path, &bytes))
    return NULL;
  FILE *f = fopen(PyBytes_AS_STRING(bytes), "rb");
  if (!f) {
    PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path);
    Py_DECREF(bytes);
    return NULL;
  }
  Py_DECREF(bytes);
  gs_trace_reader *r = gs_trace_reader_new();
  PyObject *list = PyList_New(0);
  char buf[1 << 16];
  size_t n;
  gs_trace_event e;
  gs_trace_status st = GS_TRACE_NEED_MORE;
  while (list && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    gs_trace_reader_feed(r, buf, n);
    while (list && (st = gs_trace_reader_next(r, &e)) == GS_TRACE_EVENT) {
      if (!profiler_kind(e.kind))
        continue;
      PyObject *t = event_tuple(r, &e);
      if (!t || PyList_Append(list, t) < 0)
        Py_CLEAR(list);
      Py_XDECREF(t);
    }
    if (st == GS_TRACE_DAMAGED)
      break;
  }
  fclose(f);
  if (list && st == GS_TRACE_DAMAGED) {
    uint64_t offset = 0;
    const char *why = gs_trace_reader_error(r, &offset);
    PyErr_Format(PyExc_RuntimeError, "profiler: the event log %S is damaged at byte %llu: %s", path,
                 (unsigned long long)offset, why ? why : "?");
    Py_CLEAR(list);
  }
  gs_trace_reader_free(r);
  return list;
}

PyMethodDef gsp_trace_read_functions[] = {
    {"_trace_range_begin", f_range_begin, METH_O,
     "_trace_range_begin(name, /)\n--\n\nOpens a named range in the event log "
     "(gs_trace_range_begin)."},
    {"_trace_range_end", f_range_end, METH_O,
     "_trace_range_end(name, /)\n--\n\nEnds the innermost named range, which must be name "
     "(gs_trace_range_end)."},
    {"_trace_open", f_trace_open, METH_O,
     "_trace_open(path, /)\n--\n\nStarts recording the event log to path (gs_trace_open)."},
    {"_trace_enabled", f_trace_enabled, METH_NOARGS,
     "_trace_enabled()\n--\n\nWhether the event log is recording."},
    {"_trace_flush", f_trace_flush, METH_NOARGS,
     "_trace_flush()\n--\n\nWrites every thread's buffered events now (gs_trace_flush)."},
    {"_trace_events", f_trace_events, METH_O,
     "_trace_events(path, /)\n--\n\nThe profiler's events of the log at path, as tuples "
     "(kind, seq, time_ns, thread, name, op, tensor, storage, nbytes, shape, origin, source, "
     "node, inputs, site)."},
    {NULL, NULL, 0, NULL},
};
