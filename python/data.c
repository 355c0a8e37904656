/* data.c: gradscope.utils.data.TensorDataset (over tensors, or NumPy arrays without copying)
 * and DataLoader over the engine's dataset and loader, as torch.utils.data's: iterating a loader starts an epoch (shuffled by seed + epoch
 * when shuffle=True) and yields tuples of batch tensors, owned by the scope current when each
 * batch is taken (so a training step's scope disposes its batch). */
#include "gs-py.h"

typedef struct {
  PyObject_HEAD
  PyObject *tensors; /* tuple: the dataset reads them without owning them */
  gs_dataset ds;
} dataset_object;

typedef struct {
  PyObject_HEAD
  PyObject *dataset;
  PyObject *sampler; /* a DistributedSampler whose shard the loader reads, or NULL */
  gs_data_loader *loader;
  int n_fields;
} loader_object;

static void dataset_dealloc(PyObject *self) {
  GSP_SITE();
  dataset_object *o = (dataset_object *)self;
  gs_dataset_release(&o->ds);
  Py_XDECREF(o->tensors);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *dataset_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "TensorDataset() takes only tensors");
    return NULL;
  }
  /* NumPy arrays join as tensors over their memory (from_numpy): a loader over arrays. */
  PyObject *tensors = PyTuple_New(PyTuple_GET_SIZE(args));
  for (Py_ssize_t i = 0; tensors && i < PyTuple_GET_SIZE(args); i++) {
    PyObject *a = PyTuple_GET_ITEM(args, i);
    PyObject *t = gsp_is_tensor(a) ? Py_NewRef(a) : gsp_from_numpy(NULL, a);
    if (!t) {
      Py_CLEAR(tensors);
      break;
    }
    PyTuple_SET_ITEM(tensors, i, t);
  }
  if (!tensors)
    return NULL;
  gs_tensor *handles;
  int n = gsp_tensor_list(tensors, &handles);
  if (n < 0) {
    Py_DECREF(tensors);
    return NULL;
  }
  gs_dataset ds = gs_tensor_dataset(handles, n);
  PyMem_Free(handles);
  if (ds.n_fields == 0) {
    Py_DECREF(tensors);
    return gsp_raise_engine_error();
  }
  dataset_object *o = (dataset_object *)type->tp_alloc(type, 0);
  if (!o) {
    gs_dataset_release(&ds);
    Py_DECREF(tensors);
    return NULL;
  }
  o->ds = ds;
  o->tensors = tensors;
  return (PyObject *)o;
}

static Py_ssize_t dataset_len(PyObject *self) { return (Py_ssize_t)((dataset_object *)self)->ds.length; }

/* dataset[i]: the tuple (t[i] for each tensor), as torch's TensorDataset.__getitem__. */
static PyObject *dataset_item(PyObject *self, Py_ssize_t i) {
  GSP_SITE();
  dataset_object *o = (dataset_object *)self;
  Py_ssize_t n = (Py_ssize_t)o->ds.length;
  if (i < 0 || i >= n) {
    PyErr_Format(PyExc_IndexError, "index %zd is out of range for a dataset of %zd samples", i, n);
    return NULL;
  }
  Py_ssize_t count = PyTuple_GET_SIZE(o->tensors);
  PyObject *index = PyLong_FromSsize_t(i);
  PyObject *sample = index ? PyTuple_New(count) : NULL;
  for (Py_ssize_t k = 0; sample && k < count; k++) {
    PyObject *row = PyObject_GetItem(PyTuple_GET_ITEM(o->tensors, k), index);
    if (!row)
      Py_CLEAR(sample);
    else
      PyTuple_SET_ITEM(sample, k, row);
  }
  Py_XDECREF(index);
  return sample;
}

static PyObject *dataset_tensors(PyObject *self, void *c) {
  (void)c;
  return Py_NewRef(((dataset_object *)self)->tensors);
}

static PyGetSetDef dataset_getset[] = {
    {"tensors", dataset_tensors, NULL, "The dataset's tensors, as a tuple.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods dataset_as_sequence = {.sq_length = dataset_len,
                                                .sq_item = dataset_item};

static PyTypeObject dataset_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.utils.data.TensorDataset",
    .tp_doc = "TensorDataset(*tensors)\n--\n\n"
              "Samples that are rows of tensors of the same length: dataset[i] is (t[i], ...).",
    .tp_basicsize = sizeof(dataset_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = dataset_new,
    .tp_dealloc = dataset_dealloc,
    .tp_as_sequence = &dataset_as_sequence,
    .tp_getset = dataset_getset,
};

const gs_dataset *gsp_dataset_of(PyObject *o) {
  return PyObject_TypeCheck(o, &dataset_type) ? &((dataset_object *)o)->ds : NULL;
}

static void loader_dealloc(PyObject *self) {
  GSP_SITE();
  loader_object *o = (loader_object *)self;
  if (o->loader)
    gs_data_loader_free(o->loader);
  Py_XDECREF(o->dataset);
  Py_XDECREF(o->sampler);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *loader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dataset, *sampler = Py_None;
  long long batch_size = 1, seed = 0;
  int shuffle = 0, drop_last = 0, prefetch = 0, num_workers = 0, persistent = 0;
  double timeout = 0.0;
  static char *kwlist[] = {"dataset",  "batch_size", "shuffle",     "drop_last",          "seed",
                           "prefetch", "sampler",    "num_workers", "persistent_workers", "timeout",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|Lp$pLiOipd:DataLoader", kwlist, &dataset_type,
                                   &dataset, &batch_size, &shuffle, &drop_last, &seed, &prefetch,
                                   &sampler, &num_workers, &persistent, &timeout))
    return NULL;
  if (!(timeout >= 0.0) || timeout > 2e6) {
    PyErr_Format(PyExc_ValueError,
                 "timeout option should be non-negative (seconds, at most 2e6), got %g", timeout);
    return NULL;
  }
  if (persistent && num_workers == 0) {
    PyErr_SetString(PyExc_ValueError, "persistent_workers option needs num_workers > 0");
    return NULL;
  }
  dataset_object *ds = (dataset_object *)dataset;
  /* sampler=DistributedSampler(...): the loader reads the rank's shard, in the sampler's order. */
  const gs_dataset *source = &ds->ds;
  if (sampler != Py_None && shuffle) {
    PyErr_SetString(PyExc_ValueError,
                    "DataLoader(): sampler option is mutually exclusive with shuffle");
    return NULL;
  }
  if (sampler != Py_None && !(source = gsp_sampler_shard(sampler, dataset)))
    return NULL;
  gs_loader_options opt = {.batch_size = batch_size,
                           .shuffle = shuffle,
                           .seed = (uint64_t)seed,
                           .drop_last = drop_last,
                           .prefetch = prefetch,
                           .num_workers = num_workers,
                           .persistent_workers = persistent,
                           .timeout_ms = (int)(timeout * 1000.0 + 0.5)};
  gs_clear_error();
  gs_data_loader *l = gs_data_loader_new(source, &opt);
  if (!l)
    return gsp_raise_engine_error();
  loader_object *o = (loader_object *)type->tp_alloc(type, 0);
  if (!o) {
    gs_data_loader_free(l);
    return NULL;
  }
  o->loader = l;
  o->dataset = Py_NewRef(dataset);
  o->sampler = sampler != Py_None ? Py_NewRef(sampler) : NULL;
  o->n_fields = ds->ds.n_fields;
  return (PyObject *)o;
}

static PyObject *loader_iter(PyObject *self) {
  gs_data_loader_reset(((loader_object *)self)->loader);
  return Py_NewRef(self);
}

static PyObject *loader_next(PyObject *self) {
  GSP_SITE();
  loader_object *o = (loader_object *)self;
  gs_tensor out[GS_DATASET_MAX_FIELDS];
  gs_clear_error();
  if (!gs_data_loader_next(o->loader, out)) {
    if (gs_last_error_code() != GS_OK)
      return gsp_raise_engine_error();
    return NULL; /* StopIteration */
  }
  PyObject *tuple = PyTuple_New(o->n_fields);
  for (int i = 0; i < o->n_fields; i++) {
    PyObject *t = tuple ? gsp_wrap(out[i]) : NULL;
    if (!t) {
      Py_XDECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, t);
  }
  return tuple;
}

/* _shuffle_next_epoch_from(seed): the next epoch's order is torch.randperm(n) from a
 * generator seeded with seed (the Python DataLoader draws seed as torch's RandomSampler). */
static PyObject *loader_shuffle_next_epoch_from(PyObject *self, PyObject *arg) {
  gs_data_loader *l = ((loader_object *)self)->loader;
  unsigned long long seed = PyLong_AsUnsignedLongLongMask(arg);
  if (PyErr_Occurred())
    return NULL;
  gs_data_loader_set_seed(l, (uint64_t)seed - (uint64_t)(gs_data_loader_epoch(l) + 1));
  Py_RETURN_NONE;
}

static PyMethodDef loader_methods[] = {
    {"_shuffle_next_epoch_from", loader_shuffle_next_epoch_from, METH_O,
     "_shuffle_next_epoch_from(seed)\n--\n\nThe next epoch shuffles as torch.randperm with a "
     "generator seeded with seed."},
    {NULL, NULL, 0, NULL},
};

static Py_ssize_t loader_len(PyObject *self) {
  return (Py_ssize_t)gs_data_loader_num_batches(((loader_object *)self)->loader);
}

static PySequenceMethods loader_as_sequence = {.sq_length = loader_len};

static PyTypeObject loader_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.utils.data.DataLoader",
    .tp_methods = loader_methods,
    .tp_doc = "DataLoader(dataset, batch_size=1, shuffle=False, *, drop_last=False, seed=0, "
              "prefetch=0, sampler=None, num_workers=0, persistent_workers=False, timeout=0)"
              "\n--\n\n"
              "Batches of a TensorDataset, shuffled per epoch from seed; prefetch batches are "
              "collated ahead on a thread (with workers: per worker), sampler (a "
              "DistributedSampler) picks this rank's shard; num_workers forked processes "
              "collate, kept across epochs with persistent_workers; timeout (seconds) per batch.",
    .tp_basicsize = sizeof(loader_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = loader_new,
    .tp_dealloc = loader_dealloc,
    .tp_iter = loader_iter,
    .tp_iternext = loader_next,
    .tp_as_sequence = &loader_as_sequence,
};

/* _worker_info(): (id, num_workers, seed) in a loader's worker process, None elsewhere. */
static PyObject *data_worker_info(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  gs_worker_info info;
  if (!gs_data_worker_info(&info))
    Py_RETURN_NONE;
  return Py_BuildValue("(iiK)", info.id, info.num_workers, (unsigned long long)info.seed);
}

static PyMethodDef data_methods[] = {
    {"_worker_info", data_worker_info, METH_NOARGS,
     "_worker_info()\n--\n\n(id, num_workers, seed) in a DataLoader worker process, else "
     "None."},
    {NULL, NULL, 0, NULL},
};

PyObject *gsp_data_module(void);
PyObject *gsp_data_module(void) {
  GSP_SITE();
  if (PyType_Ready(&dataset_type) < 0 || PyType_Ready(&loader_type) < 0)
    return NULL;
  PyObject *d = PyModule_New("gradscope.utils.data");
  if (d && (PyModule_AddObjectRef(d, "TensorDataset", (PyObject *)&dataset_type) < 0 ||
            PyModule_AddObjectRef(d, "DataLoader", (PyObject *)&loader_type) < 0 ||
            PyModule_AddFunctions(d, data_methods) < 0))
    Py_CLEAR(d);
  return d;
}
