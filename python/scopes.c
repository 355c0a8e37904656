/* scopes.c: context managers and counters for autograd and ownership:
 * `with gradscope.no_grad():`, `with gradscope.dispose_scope("step") as s:` (TorchSharp's
 * DisposeScope: tensors made inside belong to s and die when the block ends, unless moved out
 * with t.move_to_outer() or kept by s.dispose_everything_but(...)), TorchSharp's six counters
 * (gradscope.scope_stats()), and `with gradscope.trace("run.gstrace"):` for the event log.
 */
#include "gs-py.h"

#include <structmember.h>

/* ---- no_grad ----------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
} no_grad_object;

static PyObject *no_grad_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  gs_no_grad_begin();
  return Py_NewRef(self);
}

static PyObject *no_grad_exit(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  gs_no_grad_end();
  Py_RETURN_FALSE;
}

static PyMethodDef no_grad_methods[] = {
    {"__enter__", no_grad_enter, METH_NOARGS, NULL},
    {"__exit__", no_grad_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject no_grad_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.no_grad",
    .tp_basicsize = sizeof(no_grad_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "with gradscope.no_grad(): ops inside record no graph.",
    .tp_methods = no_grad_methods,
    .tp_new = PyType_GenericNew,
};

/* ---- dispose_scope ----------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  gs_scope scope;
  PyObject *name; /* for the error of a scope entered again after it ended */
} scope_object;

static PyObject *scope_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  const char *name = "scope";
  static char *kwlist[] = {"name", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|s:dispose_scope", kwlist, &name))
    return NULL;
  scope_object *o = (scope_object *)type->tp_alloc(type, 0);
  if (!o)
    return NULL;
  /* Begins at once, as TorchSharp's NewDisposeScope(): the with block only ends it. */
  o->scope = gs_scope_begin(name);
  o->name = PyUnicode_FromString(name);
  if (!o->name) {
    Py_DECREF(o);
    return NULL;
  }
  if (o->scope.id == 0) {
    Py_DECREF(o);
    return gsp_raise_engine_error();
  }
  return (PyObject *)o;
}

static void scope_dealloc(PyObject *self) {
  GSP_SITE();
  /* A scope dropped without being ended ends here, as a DisposeScope disposed by its owner. */
  scope_object *o = (scope_object *)self;
  if (gs_scope_is_active(o->scope))
    gs_scope_end(o->scope);
  Py_CLEAR(o->name);
  Py_TYPE(self)->tp_free(self);
}

/* A scope begins when it is made and ends once: entering it again after it ended would own
 * nothing and dispose nothing, so it is an error rather than a silent no-op. */
static PyObject *scope_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  scope_object *o = (scope_object *)self;
  if (!gs_scope_is_active(o->scope)) {
    PyErr_Format(PyExc_RuntimeError,
                 "dispose_scope '%U' was entered again after it ended: a scope begins when it is "
                 "made and ends once; make a new gradscope.dispose_scope() for each block",
                 o->name);
    return NULL;
  }
  return Py_NewRef(self);
}

static PyObject *scope_close(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_scope_end(((scope_object *)self)->scope);
  return gsp_check_void();
}

static PyObject *scope_exit(PyObject *self, PyObject *args) {
  GSP_SITE();
  (void)args;
  PyObject *r = scope_close(self, NULL);
  if (!r)
    return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

/* Ids of the tensors in args (tensors, or sequences of them). */
static int collect_ids(PyObject *args, uint64_t **ids_out) {
  Py_ssize_t cap = 16, n = 0;
  uint64_t *ids = PyMem_Malloc(sizeof(uint64_t) * (size_t)cap);
  if (!ids) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
    PyObject *a = PyTuple_GET_ITEM(args, i);
    PyObject *fast = gsp_is_tensor(a) ? PyTuple_Pack(1, a)
                                      : PySequence_Fast(a, "expected Tensors or sequences of them");
    if (!fast) {
      PyMem_Free(ids);
      return -1;
    }
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
      PyObject *item = PySequence_Fast_GET_ITEM(fast, k);
      if (!gsp_is_tensor(item)) {
        Py_DECREF(fast);
        PyMem_Free(ids);
        PyErr_Format(PyExc_TypeError, "expected Tensors, got %.200s", Py_TYPE(item)->tp_name);
        return -1;
      }
      if (n == cap) {
        cap *= 2;
        uint64_t *grown = PyMem_Realloc(ids, sizeof(uint64_t) * (size_t)cap);
        if (!grown) {
          Py_DECREF(fast);
          PyMem_Free(ids);
          PyErr_NoMemory();
          return -1;
        }
        ids = grown;
      }
      ids[n++] = gsp_handle(item).id;
    }
    Py_DECREF(fast);
  }
  *ids_out = ids;
  return (int)n;
}

static PyObject *scope_dispose_everything_but(PyObject *self, PyObject *args) {
  GSP_SITE();
  uint64_t *ids;
  int n = collect_ids(args, &ids);
  if (n < 0)
    return NULL;
  gs_clear_error();
  gs_scope_dispose_everything_but(((scope_object *)self)->scope, ids, n);
  PyMem_Free(ids);
  return gsp_check_void();
}

static PyObject *scope_dispose_everything(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  gs_scope_dispose_everything(((scope_object *)self)->scope);
  return gsp_check_void();
}

/* s.move_to_outer(t): TorchSharp's scope.MoveToOuter(t), a no-op unless s owns t. */
static PyObject *scope_move_to_outer(PyObject *self, PyObject *t) {
  GSP_SITE();
  if (!gsp_is_tensor(t)) {
    PyErr_SetString(PyExc_TypeError, "move_to_outer(): expected a Tensor");
    return NULL;
  }
  gs_clear_error();
  gs_scope_move_to_outer(((scope_object *)self)->scope, gsp_handle(t));
  if (!gsp_check_void())
    return NULL;
  return Py_NewRef(t);
}

static PyObject *scope_attach(PyObject *self, PyObject *t) {
  GSP_SITE();
  if (!gsp_is_tensor(t)) {
    PyErr_SetString(PyExc_TypeError, "attach(): expected a Tensor");
    return NULL;
  }
  gs_clear_error();
  gs_scope_attach(((scope_object *)self)->scope, gsp_handle(t));
  if (!gsp_check_void())
    return NULL;
  return Py_NewRef(t);
}

static PyObject *scope_info(PyObject *self, void *closure) {
  GSP_SITE();
  (void)closure;
  gs_clear_error();
  gs_scope_info i = gs_scope_get_info(((scope_object *)self)->scope);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_BuildValue("{sKsKsKsKsK}", "created", (unsigned long long)i.created, "disposed",
                       (unsigned long long)i.disposed, "alive", (unsigned long long)i.alive,
                       "bytes", (unsigned long long)i.bytes, "peak_bytes",
                       (unsigned long long)i.peak_bytes);
}

static PyObject *scope_name(PyObject *self, void *closure) {
  GSP_SITE();
  (void)closure;
  gs_scope s = ((scope_object *)self)->scope;
  if (!gs_scope_is_active(s))
    Py_RETURN_NONE;
  return PyUnicode_FromString(gs_scope_name(s));
}

static PyObject *scope_is_active(PyObject *self, void *closure) {
  GSP_SITE();
  (void)closure;
  return PyBool_FromLong(gs_scope_is_active(((scope_object *)self)->scope));
}

static PyMethodDef scope_methods[] = {
    {"__enter__", scope_enter, METH_NOARGS, NULL},
    {"__exit__", scope_exit, METH_VARARGS, NULL},
    {"close", scope_close, METH_NOARGS, "Ends the scope: disposes everything it still owns."},
    {"dispose_everything_but", scope_dispose_everything_but, METH_VARARGS,
     "Disposes everything the scope owns except the given tensors."},
    {"dispose_everything", scope_dispose_everything, METH_NOARGS, NULL},
    {"move_to_outer", scope_move_to_outer, METH_O, NULL},
    {"attach", scope_attach, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scope_getset[] = {
    {"info", scope_info, NULL, "created, disposed, alive, bytes, peak_bytes", NULL},
    {"name", scope_name, NULL, NULL, NULL},
    {"is_active", scope_is_active, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.dispose_scope",
    .tp_basicsize = sizeof(scope_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A dispose scope: owns the tensors made while it is the innermost one.",
    .tp_methods = scope_methods,
    .tp_getset = scope_getset,
    .tp_new = scope_new,
    .tp_dealloc = scope_dealloc,
};

/* ---- trace ------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject *dest;
} trace_object;

static PyObject *trace_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  /* gradscope.trace(t) with a Tensor is torch.trace(t), the sum of its diagonal: the name is
   * torch's too, and a program run by as_torch calls it so. */
  if (PyTuple_GET_SIZE(args) == 1 && !kwargs && gsp_is_tensor(PyTuple_GET_ITEM(args, 0)))
    return gsp_wrap(gs_trace(gsp_handle(PyTuple_GET_ITEM(args, 0))));
  PyObject *dest;
  static char *kwlist[] = {"dest", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&:trace", kwlist, PyUnicode_FSConverter,
                                   &dest))
    return NULL;
  trace_object *o = (trace_object *)type->tp_alloc(type, 0);
  if (!o) {
    Py_DECREF(dest);
    return NULL;
  }
  o->dest = dest;
  return (PyObject *)o;
}

static void trace_dealloc(PyObject *self) {
  Py_XDECREF(((trace_object *)self)->dest);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *trace_enter(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_clear_error();
  if (gs_trace_open(PyBytes_AS_STRING(((trace_object *)self)->dest)) < 0)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *trace_exit(PyObject *self, PyObject *args) {
  GSP_SITE();
  (void)self;
  (void)args;
  gs_trace_close();
  Py_RETURN_FALSE;
}

static PyMethodDef trace_methods[] = {
    {"__enter__", trace_enter, METH_NOARGS, NULL},
    {"__exit__", trace_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject trace_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.trace",
    .tp_basicsize = sizeof(trace_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "with gradscope.trace(\"run.gstrace\"): records the block's events to the file. "
              "gradscope.trace(t) with a Tensor is torch.trace(t): the sum of its diagonal.",
    .tp_methods = trace_methods,
    .tp_new = trace_new,
    .tp_dealloc = trace_dealloc,
};

/* ---- TorchSharp's counters ----------------------------------------------------------------- */

static PyStructSequence_Field stats_fields[] = {
    {"created_outside_scope", NULL}, {"disposed_outside_scope", NULL},
    {"created_in_scope", NULL},      {"disposed_in_scope", NULL},
    {"attached_to_scope", NULL},     {"detached_from_scope", NULL},
    {"live", NULL},                  {NULL, NULL},
};

static PyStructSequence_Desc stats_desc = {
    "gradscope.ScopeStats", "This thread's ownership counters for tensors (TorchSharp's six).",
    stats_fields, 7};

static PyTypeObject *stats_type;

static PyObject *scope_stats(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  gs_scope_stats s = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  PyObject *o = PyStructSequence_New(stats_type);
  if (!o)
    return NULL;
  uint64_t values[6] = {s.created_outside_scope, s.disposed_outside_scope, s.created_in_scope,
                        s.disposed_in_scope,     s.attached_to_scope,     s.detached_from_scope};
  for (int i = 0; i < 6; i++)
    PyStructSequence_SET_ITEM(o, i, PyLong_FromUnsignedLongLong(values[i]));
  PyStructSequence_SET_ITEM(o, 6, PyLong_FromLongLong(s.live));
  return o;
}

static PyObject *reset_scope_stats(PyObject *module, PyObject *unused) {
  (void)module;
  (void)unused;
  gs_thread_scope_stats_reset();
  Py_RETURN_NONE;
}

static PyMethodDef scope_functions[] = {
    {"scope_stats", scope_stats, METH_NOARGS, "This thread's tensor counters (TorchSharp's)."},
    {"reset_scope_stats", reset_scope_stats, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int gsp_scopes_add_to_module(PyObject *module) {
  PyTypeObject *types[] = {&no_grad_type, &scope_type, &trace_type};
  const char *names[] = {"no_grad", "dispose_scope", "trace"};
  for (int i = 0; i < 3; i++) {
    if (PyType_Ready(types[i]) < 0 || PyModule_AddObjectRef(module, names[i], (PyObject *)types[i]) < 0)
      return -1;
  }
  stats_type = PyStructSequence_NewType(&stats_desc);
  if (!stats_type || PyModule_AddObjectRef(module, "ScopeStats", (PyObject *)stats_type) < 0)
    return -1;
  gsp_docs_fill(scope_functions, "gradscope");
  return PyModule_AddFunctions(module, scope_functions);
}
