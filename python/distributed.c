/* distributed.c: gradscope._gradscope._distributed, the C half of gradscope.distributed: the
 * process group and the collectives over engine/distributed (gradscope/distributed.h), the
 * engine's DistributedDataParallel as a _Reducer that gradscope/distributed.py's
 * DistributedDataParallel module drives, and DistributedSampler, which gradscope's DataLoader
 * takes as sampler= (data.c asks gsp_sampler_shard for the rank's shard as a dataset).
 *
 * The collectives work in place on contiguous f32/f64 tensors, as the engine's; the engine's
 * errors (different shapes on two ranks, a parameter that got no gradient) come back as
 * exceptions in Python's words (errors.c). */
#include "gs-py.h"

#include <structmember.h>

/* ---- the process group ---------------------------------------------------------------- */

static PyObject *f_init(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  GSP_SITE();
  gs_clear_error();
  if (!gs_dist_init(NULL, NULL))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyObject *f_finalize(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  gs_dist_finalize();
  Py_RETURN_NONE;
}

static PyObject *f_is_initialized(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyBool_FromLong(gs_dist_is_initialized());
}

static PyObject *f_rank(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyLong_FromLong(gs_dist_rank());
}

static PyObject *f_world_size(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyLong_FromLong(gs_dist_world_size());
}

static PyObject *f_set_timeout(PyObject *mod, PyObject *arg) {
  (void)mod;
  double s = PyFloat_AsDouble(arg);
  if (s == -1.0 && PyErr_Occurred())
    return NULL;
  gs_clear_error();
  gs_dist_set_timeout(s);
  return gsp_check_void();
}

static PyObject *f_timeout(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  return PyFloat_FromDouble(gs_dist_timeout());
}

/* ---- collectives ----------------------------------------------------------------------- */

/* None, or raises the engine's error when the collective returned false. */
static PyObject *collective_result(bool ok) {
  if (ok)
    Py_RETURN_NONE;
  return gsp_raise_engine_error();
}

static PyObject *f_all_reduce(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *t;
  int op;
  if (!PyArg_ParseTuple(args, "O!i:all_reduce", &gsp_tensor_type, &t, &op))
    return NULL;
  gs_clear_error();
  return collective_result(gs_dist_all_reduce(gsp_handle(t), (gs_dist_op)op));
}

static PyObject *f_broadcast(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *t;
  int src;
  if (!PyArg_ParseTuple(args, "O!i:broadcast", &gsp_tensor_type, &t, &src))
    return NULL;
  gs_clear_error();
  return collective_result(gs_dist_broadcast(gsp_handle(t), src));
}

static PyObject *f_all_gather(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *out, *in;
  if (!PyArg_ParseTuple(args, "O!O!:all_gather_into_tensor", &gsp_tensor_type, &out,
                        &gsp_tensor_type, &in))
    return NULL;
  gs_clear_error();
  return collective_result(gs_dist_all_gather(gsp_handle(out), gsp_handle(in)));
}

static PyObject *f_reduce_scatter(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *out, *in;
  int op;
  if (!PyArg_ParseTuple(args, "O!O!i:reduce_scatter_tensor", &gsp_tensor_type, &out,
                        &gsp_tensor_type, &in, &op))
    return NULL;
  gs_clear_error();
  return collective_result(gs_dist_reduce_scatter(gsp_handle(out), gsp_handle(in), (gs_dist_op)op));
}

static PyObject *f_barrier(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  GSP_SITE();
  gs_clear_error();
  return collective_result(gs_dist_barrier());
}

/* ---- _Reducer: the engine's DDP over a module --------------------------------------------- */

typedef struct {
  PyObject_HEAD
  gs_ddp *ddp;
  PyObject *module; /* the wrapped module's object: its tree outlives the DDP */
} reducer_object;

static void reducer_dealloc(PyObject *self) {
  GSP_SITE();
  reducer_object *r = (reducer_object *)self;
  gs_ddp_free(r->ddp);
  Py_XDECREF(r->module);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *reducer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *module;
  double bucket_cap_mb = 25.0;
  int find_unused = 0, broadcast_buffers = 1, check_every = 0, bucket_view = 0;
  static char *kwlist[] = {"module",
                           "bucket_cap_mb",
                           "find_unused_parameters",
                           "broadcast_buffers",
                           "check_every",
                           "gradient_as_bucket_view",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dppip:_Reducer", kwlist, &module,
                                   &bucket_cap_mb, &find_unused, &broadcast_buffers, &check_every,
                                   &bucket_view))
    return NULL;
  if (!gsp_is_module(module)) {
    PyErr_Format(PyExc_TypeError,
                 "DistributedDataParallel(): expected a gradscope nn.Module, got %.100s",
                 Py_TYPE(module)->tp_name);
    return NULL;
  }
  gs_ddp_options opt = {.bucket_cap_mb = bucket_cap_mb,
                        .find_unused_parameters = find_unused,
                        .no_broadcast_buffers = !broadcast_buffers,
                        .check_every = check_every,
                        .gradient_as_bucket_view = bucket_view};
  gs_clear_error();
  gs_ddp *d = gs_ddp_new(gsp_module_handle(module), &opt);
  if (!d)
    return gsp_raise_engine_error();
  reducer_object *r = (reducer_object *)type->tp_alloc(type, 0);
  if (!r) {
    gs_ddp_free(d);
    return NULL;
  }
  r->ddp = d;
  r->module = Py_NewRef(module);
  return (PyObject *)r;
}

/* before_forward(file, line): the engine's part of DDP's forward (drift check, buffers, the
 * call site the unused-parameter error names); the module's forward is called by Python. */
static PyObject *reducer_before_forward(PyObject *self, PyObject *args) {
  GSP_SITE();
  const char *file;
  int line;
  if (!PyArg_ParseTuple(args, "si:before_forward", &file, &line))
    return NULL;
  gs_clear_error();
  return collective_result(gs_ddp_before_forward_at(((reducer_object *)self)->ddp, file, line));
}

static PyObject *reducer_set_no_sync(PyObject *self, PyObject *arg) {
  int on = PyObject_IsTrue(arg);
  if (on < 0)
    return NULL;
  if (on)
    gs_ddp_no_sync_begin(((reducer_object *)self)->ddp);
  else
    gs_ddp_no_sync_end(((reducer_object *)self)->ddp);
  Py_RETURN_NONE;
}

static PyObject *reducer_wait(PyObject *self, PyObject *unused) {
  (void)unused;
  GSP_SITE();
  gs_clear_error();
  gs_ddp_wait(((reducer_object *)self)->ddp);
  return gsp_check_void();
}

static PyObject *reducer_stats(PyObject *self, PyObject *unused) {
  (void)unused;
  gs_ddp_stats s = gs_ddp_get_stats(((reducer_object *)self)->ddp);
  return Py_BuildValue("{sKsKsdsdsiss}", "steps", (unsigned long long)s.steps,
                       "bytes_reduced", (unsigned long long)s.bytes_reduced, "backward_s",
                       s.backward_s, "wait_s", s.wait_s, "n_buckets", s.n_buckets, "transport",
                       s.shared_memory ? "shared-memory" : "mpi");
}

static PyObject *reducer_buckets(PyObject *self, PyObject *unused) {
  (void)unused;
  const gs_ddp *d = ((reducer_object *)self)->ddp;
  int n = gs_ddp_bucket_count(d);
  PyObject *out = PyList_New(0);
  for (int i = 0; out && i < n; i++) {
    gs_ddp_bucket_info b;
    if (!gs_ddp_bucket_info_at(d, i, &b))
      continue;
    PyObject *item = Py_BuildValue(
        "{sisisNsLsdsdsdsK}", "n_params", b.n_params, "first_param", b.first_param, "dtype",
        gsp_dtype_object(b.dtype), "bytes", (long long)b.bytes, "ready_s", b.ready_s, "launched_s",
        b.launched_s, "finished_s", b.finished_s, "reductions", (unsigned long long)b.reductions);
    if (!item || PyList_Append(out, item) < 0)
      Py_CLEAR(out);
    Py_XDECREF(item);
  }
  return out;
}

static PyMethodDef reducer_methods[] = {
    {"before_forward", reducer_before_forward, METH_VARARGS, NULL},
    {"set_no_sync", reducer_set_no_sync, METH_O, NULL},
    {"wait", reducer_wait, METH_NOARGS, NULL},
    {"stats", reducer_stats, METH_NOARGS, NULL},
    {"buckets", reducer_buckets, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject reducer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.distributed._Reducer",
    .tp_basicsize = sizeof(reducer_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The engine's DistributedDataParallel over one module (gs_ddp).",
    .tp_new = reducer_new,
    .tp_dealloc = reducer_dealloc,
    .tp_methods = reducer_methods,
};

/* ---- DistributedSampler ------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  PyObject *dataset; /* the TensorDataset whose shard this is */
  gs_dist_sampler *s;
  gs_dataset shard;
  int num_replicas, rank, shuffle, drop_last;
  unsigned long long seed;
  long long epoch;
} sampler_object;

static void sampler_dealloc(PyObject *self) {
  sampler_object *o = (sampler_object *)self;
  gs_dist_sampler_free(o->s);
  Py_XDECREF(o->dataset);
  Py_TYPE(self)->tp_free(self);
}

static const char not_initialized[] =
    "Default process group has not been initialized, please make sure to call "
    "init_process_group() (or pass num_replicas and rank)";

static PyObject *sampler_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dataset, *replicas_obj = Py_None, *rank_obj = Py_None;
  int shuffle = 1, drop_last = 0;
  unsigned long long seed = 0;
  static char *kwlist[] = {"dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOpKp:DistributedSampler", kwlist, &dataset,
                                   &replicas_obj, &rank_obj, &shuffle, &seed, &drop_last))
    return NULL;
  const gs_dataset *ds = gsp_dataset_of(dataset);
  if (!ds) {
    PyErr_Format(PyExc_TypeError,
                 "DistributedSampler(): expected a gradscope TensorDataset (what DataLoader "
                 "reads), got %.100s",
                 Py_TYPE(dataset)->tp_name);
    return NULL;
  }
  if ((replicas_obj == Py_None || rank_obj == Py_None) && !gs_dist_is_initialized()) {
    PyErr_SetString(PyExc_RuntimeError, not_initialized);
    return NULL;
  }
  long replicas = replicas_obj == Py_None ? gs_dist_world_size() : PyLong_AsLong(replicas_obj);
  long rank = rank_obj == Py_None ? gs_dist_rank() : PyLong_AsLong(rank_obj);
  if (PyErr_Occurred())
    return NULL;
  if (replicas < 1) {
    PyErr_Format(PyExc_ValueError, "DistributedSampler(): num_replicas must be >= 1, got %ld",
                 replicas);
    return NULL;
  }
  if (rank < 0 || rank >= replicas) {
    PyErr_Format(PyExc_ValueError, "Invalid rank %ld, rank should be in the interval [0, %ld]",
                 rank, replicas - 1);
    return NULL;
  }
  gs_clear_error();
  gs_dist_sampler *s = gs_dist_sampler_new(ds, (int)rank, (int)replicas, shuffle, seed);
  if (!s)
    return gsp_raise_engine_error();
  gs_dist_sampler_set_drop_last(s, drop_last);
  sampler_object *o = (sampler_object *)type->tp_alloc(type, 0);
  if (!o) {
    gs_dist_sampler_free(s);
    return NULL;
  }
  o->dataset = Py_NewRef(dataset);
  o->s = s;
  o->shard = gs_dist_sampler_dataset(s);
  o->num_replicas = (int)replicas;
  o->rank = (int)rank;
  o->shuffle = shuffle;
  o->drop_last = drop_last;
  o->seed = seed;
  return (PyObject *)o;
}

static PyObject *sampler_set_epoch(PyObject *self, PyObject *arg) {
  sampler_object *o = (sampler_object *)self;
  long long epoch = PyLong_AsLongLong(arg);
  if (epoch == -1 && PyErr_Occurred())
    return NULL;
  gs_dist_sampler_set_epoch(o->s, epoch);
  o->epoch = epoch;
  Py_RETURN_NONE;
}

static Py_ssize_t sampler_len(PyObject *self) {
  return (Py_ssize_t)gs_dist_sampler_length(((sampler_object *)self)->s);
}

/* iter(sampler): this epoch's dataset indices for the rank, as torch's. */
static PyObject *sampler_iter(PyObject *self) {
  sampler_object *o = (sampler_object *)self;
  int64_t n = gs_dist_sampler_length(o->s);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; list && i < n; i++) {
    PyObject *v = PyLong_FromLongLong(gs_dist_sampler_index(o->s, i));
    if (!v)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, (Py_ssize_t)i, v);
  }
  if (!list)
    return NULL;
  PyObject *it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
}

static PyObject *sampler_total_size(PyObject *self, void *c) {
  (void)c;
  sampler_object *o = (sampler_object *)self;
  return PyLong_FromLongLong(gs_dist_sampler_length(o->s) * o->num_replicas);
}

static PyObject *sampler_num_samples(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(gs_dist_sampler_length(((sampler_object *)self)->s));
}

static PyMemberDef sampler_members[] = {
    {"dataset", T_OBJECT_EX, offsetof(sampler_object, dataset), READONLY, NULL},
    {"num_replicas", T_INT, offsetof(sampler_object, num_replicas), READONLY, NULL},
    {"rank", T_INT, offsetof(sampler_object, rank), READONLY, NULL},
    {"shuffle", T_BOOL, offsetof(sampler_object, shuffle), READONLY, NULL},
    {"drop_last", T_BOOL, offsetof(sampler_object, drop_last), READONLY, NULL},
    {"seed", T_ULONGLONG, offsetof(sampler_object, seed), READONLY, NULL},
    {"epoch", T_LONGLONG, offsetof(sampler_object, epoch), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef sampler_getset[] = {
    {"num_samples", sampler_num_samples, NULL, NULL, NULL},
    {"total_size", sampler_total_size, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef sampler_methods[] = {
    {"set_epoch", sampler_set_epoch, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods sampler_as_sequence = {.sq_length = sampler_len};

static PyTypeObject sampler_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.distributed.DistributedSampler",
    .tp_basicsize = sizeof(sampler_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0, "
              "drop_last=False): this rank's shard of a TensorDataset, reshuffled by "
              "set_epoch(), for DataLoader(dataset, sampler=...).",
    .tp_new = sampler_new,
    .tp_dealloc = sampler_dealloc,
    .tp_iter = sampler_iter,
    .tp_as_sequence = &sampler_as_sequence,
    .tp_members = sampler_members,
    .tp_getset = sampler_getset,
    .tp_methods = sampler_methods,
};

const gs_dataset *gsp_sampler_shard(PyObject *sampler, PyObject *dataset) {
  if (!PyObject_TypeCheck(sampler, &sampler_type)) {
    PyErr_Format(PyExc_TypeError,
                 "DataLoader(): sampler must be a gradscope DistributedSampler, got %.100s",
                 Py_TYPE(sampler)->tp_name);
    return NULL;
  }
  sampler_object *o = (sampler_object *)sampler;
  if (o->dataset != dataset) {
    PyErr_SetString(PyExc_ValueError,
                    "DataLoader(): the sampler was made over another dataset than the loader's");
    return NULL;
  }
  return &o->shard;
}

/* ---- the module ------------------------------------------------------------------------- */

static PyMethodDef distributed_functions[] = {
    {"init", f_init, METH_NOARGS, NULL},
    {"finalize", f_finalize, METH_NOARGS, NULL},
    {"is_initialized", f_is_initialized, METH_NOARGS, NULL},
    {"rank", f_rank, METH_NOARGS, NULL},
    {"world_size", f_world_size, METH_NOARGS, NULL},
    {"set_timeout", f_set_timeout, METH_O, NULL},
    {"timeout", f_timeout, METH_NOARGS, NULL},
    {"all_reduce", f_all_reduce, METH_VARARGS, NULL},
    {"broadcast", f_broadcast, METH_VARARGS, NULL},
    {"all_gather_into_tensor", f_all_gather, METH_VARARGS, NULL},
    {"reduce_scatter_tensor", f_reduce_scatter, METH_VARARGS, NULL},
    {"barrier", f_barrier, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyObject *gsp_distributed_module(void) {
  if (PyType_Ready(&reducer_type) < 0 || PyType_Ready(&sampler_type) < 0)
    return NULL;
  PyObject *d = PyModule_New("gradscope._gradscope._distributed");
  if (d && (PyModule_AddFunctions(d, distributed_functions) < 0 ||
            PyModule_AddIntConstant(d, "SUM", GS_DIST_SUM) < 0 ||
            PyModule_AddIntConstant(d, "AVG", GS_DIST_AVG) < 0 ||
            PyModule_AddIntConstant(d, "MAX", GS_DIST_MAX) < 0 ||
            PyModule_AddIntConstant(d, "MIN", GS_DIST_MIN) < 0 ||
            PyModule_AddIntConstant(d, "PRODUCT", GS_DIST_PRODUCT) < 0 ||
            PyModule_AddObjectRef(d, "_Reducer", (PyObject *)&reducer_type) < 0 ||
            PyModule_AddObjectRef(d, "DistributedSampler", (PyObject *)&sampler_type) < 0))
    Py_CLEAR(d);
  return d;
}
