/* grad-fn.c: Tensor.grad_fn as an object, as PyTorch shows it: a node of the autograd graph
 * (the engine's gs_node) with name(), next_functions, AccumulateGrad's variable and metadata;
 * and Tensor._base.
 *
 * Its _saved_* attributes (torch's names for what a node saved) are in grad-fn-saved.c.
 *
 * A Node object holds its node (gs_node_retain), as torch's Python grad_fn holds its C++
 * node, so a node stays inspectable however the tensors that led to it go. One Python object
 * per node while it lives (a table of weak references by handle), so `t.grad_fn is
 * t.grad_fn` holds as in torch, and == and hash go by the node.
 *
 * name() gives PyTorch 1.13's name for the op the node records (NAMES below): the engine's
 * kinds are named after its own ops ("MulScalarBackward"), torch's after its overloads
 * ("MulBackward0"), and a few depend on how the op was called, which the node's shapes tell
 * (a reduction with no dims named is SumBackward0, one over named dims SumBackward1; matmul is
 * Mm, Mv, Dot, or the view or copy that ends torch's decomposition of it, by its operands). Most
 * kinds are named as torch names the same op, with its overload's number
 * ("ExpBackward" is "ExpBackward0"): only the others are in the table, and kinds torch has no
 * counterpart for (the fused recurrences) keep the engine's name there.
 */
#include "gs-py.h"

#include <stddef.h>
#include <string.h>

typedef struct gsp_node {
  PyObject_HEAD
  gs_node handle;
  PyObject *weakrefs;
} gsp_node;

static PyTypeObject gsp_node_type;
/* handle id -> weak reference to the node's one Python object */
static PyObject *live_nodes;
/* handle id -> the dict torch gives each node for the user (Node.metadata): kept with the node,
 * not its Python object, which may come and go; dropped once the node is freed (pruned as the
 * table grows). */
static PyObject *node_metadata;
static Py_ssize_t metadata_prune_at = 64;

/* ---- PyTorch's names ----------------------------------------------------------------------- */

/* How a torch name depends on the node, when it does. */
typedef enum name_rule {
  SAME,      /* always `torch` */
  REDUCTION, /* `torch` + "0" when no dims were named (sum()), `other` when they were */
  EXTREME,   /* max/min: a full reduction is "...Backward1", over a dim "...Backward0" */
  MATMUL,    /* by the operands' dims: Dot, Mv, Mm, or the view or copy matmul ends with */
  SQUEEZE,   /* squeeze() of every size-1 dim is SqueezeBackward0, of one dim SqueezeBackward1 */
} name_rule;

typedef struct torch_name {
  const char *engine, *torch;
  name_rule rule;
  const char *other;
  /* torch records the scalar operand of `x * 2` (a wrapped number) as an input needing no
   * gradient: next_functions shows one more (None, 0) than the engine's node has inputs. */
  int scalar_edges;
} torch_name;

static const torch_name NAMES[] = {
    {"AccumulateGrad", "torch::autograd::AccumulateGrad", SAME, NULL, 0},
    {"AddScalarBackward", "AddBackward0", SAME, NULL, 1},
    {"AddScaledBackward", "AddBackward0", SAME, NULL, 0},
    {"AvgPool2dBackward", "AvgPool2DBackward0", SAME, NULL, 0},
    {"AvgPool3dBackward", "AvgPool3DBackward0", SAME, NULL, 0},
    {"BatchNormBackward", "NativeBatchNormBackward0", SAME, NULL, 0},
    {"ClampBackward", "ClampBackward1", SAME, NULL, 0},
    {"ContiguousBackward", "CloneBackward0", SAME, NULL, 0},
    {"Conv1dBackward", "ConvolutionBackward0", SAME, NULL, 0},
    {"Conv2dBackward", "ConvolutionBackward0", SAME, NULL, 0},
    {"Conv3dBackward", "ConvolutionBackward0", SAME, NULL, 0},
    {"ConvTranspose2dBackward", "ConvolutionBackward0", SAME, NULL, 0},
    {"ConvTranspose3dBackward", "ConvolutionBackward0", SAME, NULL, 0},
    {"CopyBackward", "torch::autograd::CopyBackwards", SAME, NULL, 0},
    {"CopySlices", "torch::autograd::CopySlices", SAME, NULL, 0},
    {"CrossBackward", "LinalgCrossBackward0", SAME, NULL, 0},
    {"DivScalarBackward", "DivBackward0", SAME, NULL, 1},
    {"FillBackward", "FillBackward2", SAME, NULL, 0}, /* fill_ */
    {"FmodBackward", "FmodBackward1", SAME, NULL, 0},
    {"FmodScalarBackward", "FmodBackward0", SAME, NULL, 0},
    {"GRURecurrenceBackward", "GRURecurrenceBackward", SAME, NULL, 0},
    {"LSTMRecurrenceBackward", "LSTMRecurrenceBackward", SAME, NULL, 0},
    {"MatmulBackward", "MmBackward0", MATMUL, NULL, 0},
    {"MaxBackward", "MaxBackward", EXTREME, NULL, 0},
    {"Log1pBackward", "Log1PBackward0", SAME, NULL, 0},
    {"MaxPool2dBackward", "MaxPool2DWithIndicesBackward0", SAME, NULL, 0},
    {"MaxPool3dBackward", "MaxPool3DWithIndicesBackward0", SAME, NULL, 0},
    {"MedianBackward", "MedianBackward0", SAME, NULL, 0},
    {"MedianDimBackward", "MedianBackward1", SAME, NULL, 0},
    {"MeanBackward", "MeanBackward", REDUCTION, "MeanBackward1", 0},
    {"MinBackward", "MinBackward", EXTREME, NULL, 0},
    {"MulScalarBackward", "MulBackward0", SAME, NULL, 1},
    {"NormBackward", "NormBackward1", SAME, NULL, 0}, /* Tensor.norm, torch.norm */
    /* torch's one eigh node, which the engine records as one node per output */
    {"LinalgEighVectorsBackward", "LinalgEighBackward0", SAME, NULL, 0},
    /* torch's one svd node and one qr node, likewise split per output */
    {"LinalgSvdUBackward", "LinalgSvdBackward0", SAME, NULL, 0},
    {"LinalgSvdVhBackward", "LinalgSvdBackward0", SAME, NULL, 0},
    {"LinalgQrRBackward", "LinalgQrBackward0", SAME, NULL, 0},
    {"PowBackward", "PowBackward1", SAME, NULL, 0},
    {"PowScalarBackward", "PowBackward0", SAME, NULL, 0},
    {"ProdBackward", "ProdBackward0", SAME, NULL, 0},
    {"PolygammaBackward", "PolygammaBackward0", SAME, NULL, 0},
    {"ProdDimBackward", "ProdBackward1", SAME, NULL, 0},
    {"RNNReluRecurrenceBackward", "RNNReluRecurrenceBackward", SAME, NULL, 0},
    {"RNNTanhRecurrenceBackward", "RNNTanhRecurrenceBackward", SAME, NULL, 0},
    {"ReflectionPad1dBackward", "ReflectionPad1DBackward0", SAME, NULL, 0},
    {"ReflectionPad2dBackward", "ReflectionPad2DBackward0", SAME, NULL, 0},
    {"ReflectionPad3dBackward", "ReflectionPad3DBackward0", SAME, NULL, 0},
    {"ReplicationPad1dBackward", "ReplicationPad1DBackward0", SAME, NULL, 0},
    {"ReplicationPad2dBackward", "ReplicationPad2DBackward0", SAME, NULL, 0},
    {"ReplicationPad3dBackward", "ReplicationPad3DBackward0", SAME, NULL, 0},
    /* torch 1.13 pads circularly by copying slices into a new tensor */
    {"CircularPad1dBackward", "torch::autograd::CopySlices", SAME, NULL, 0},
    {"CircularPad2dBackward", "torch::autograd::CopySlices", SAME, NULL, 0},
    {"CircularPad3dBackward", "torch::autograd::CopySlices", SAME, NULL, 0},
    {"RemainderBackward", "RemainderBackward1", SAME, NULL, 0},       /* of two tensors */
    {"RemainderScalarBackward", "RemainderBackward0", SAME, NULL, 0}, /* t % 2 */
    {"ReshapeBackward", "ReshapeAliasBackward0", SAME, NULL, 0},
    {"RsubScalarBackward", "RsubBackward1", SAME, NULL, 0},
    {"ScatterValueBackward", "ScatterBackward1", SAME, NULL, 0},
    {"IndexTensorsBackward", "IndexBackward0", SAME, NULL, 0},
    {"SquareBackward", "PowBackward0", SAME, NULL, 0}, /* torch's square is pow(t, 2) */
    {"SqueezeBackward", "SqueezeBackward", SQUEEZE, NULL, 0},
    {"SubScalarBackward", "SubBackward0", SAME, NULL, 1},
    {"SumBackward", "SumBackward", REDUCTION, "SumBackward1", 0},
    {"SumToBackward", "SumBackward1", SAME, NULL, 0},
    {"ToDtypeBackward", "ToCopyBackward0", SAME, NULL, 0},
    /* F.interpolate's nearest mode: torch's overload with output size and scales */
    {"UpsampleNearest1dBackward", "UpsampleNearest1DBackward1", SAME, NULL, 0},
    {"UpsampleNearest2dBackward", "UpsampleNearest2DBackward1", SAME, NULL, 0},
    {"UpsampleNearest3dBackward", "UpsampleNearest3DBackward1", SAME, NULL, 0},
    /* and its bicubic mode (the same overload); F.grid_sample's 4-D sampler */
    {"UpsampleBicubic2dBackward", "UpsampleBicubic2DBackward1", SAME, NULL, 0},
    {"GridSampler2dBackward", "GridSampler2DBackward0", SAME, NULL, 0},
    {"GridSampler3dBackward", "GridSampler3DBackward0", SAME, NULL, 0},
    {"CtcLossBackward", "CtcLossBackward0", SAME, NULL, 0},
};

static const torch_name *torch_name_of(const char *engine) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (strcmp(NAMES[i].engine, engine) == 0)
      return &NAMES[i];
  return NULL;
}

/* The node's name as torch 1.13 prints it; NULL with the engine's error raised. */
PyObject *gsp_node_torch_name(gs_node n) {
  gs_clear_error();
  const char *engine = gs_node_name(n);
  if (!engine)
    return gsp_raise_engine_error();
  if (gs_node_is_function(n)) /* a Function's node: its own name, as torch's "SquareBackward" */
    return PyUnicode_FromString(engine);
  const torch_name *t = torch_name_of(engine);
  if (!t) /* torch names its op's node as the engine does, with the overload's number */
    return PyUnicode_FromFormat("%s0", engine);
  int64_t shape[GS_MAX_DIMS];
  switch (t->rule) {
  case REDUCTION: {
    bool dims_given = false;
    if (gs_node_reduction(n, NULL, NULL, &dims_given) < 0)
      return gsp_raise_engine_error();
    return dims_given ? PyUnicode_FromString(t->other) : PyUnicode_FromFormat("%s0", t->torch);
  }
  case EXTREME:
    return PyUnicode_FromFormat("%s%d", t->torch, gs_node_output_shape(n, shape) == 0 ? 1 : 0);
  case SQUEEZE: {
    int removed = gs_node_input_shape(n, 0, shape, NULL) - gs_node_output_shape(n, shape);
    return PyUnicode_FromFormat("%s%d", t->torch, removed == 1 ? 1 : 0);
  }
  case MATMUL: { /* torch.matmul's decomposition into mm, mv, dot, views and copies */
    int a = gs_node_input_shape(n, 0, shape, NULL), b = gs_node_input_shape(n, 1, shape, NULL);
    const char *name = a == 1 && b == 1   ? "DotBackward0"
                       : a == 2 && b == 1 ? "MvBackward0"
                       : a == 2 && b == 2 ? t->torch
                       : a == 1 && b == 2 ? "SqueezeBackward3"
                       : a == 2           ? "CloneBackward0"
                                          : "UnsafeViewBackward0";
    return PyUnicode_FromString(name);
  }
  default: return PyUnicode_FromString(t->torch);
  }
}

/* ---- the Node object ------------------------------------------------------------------------ */

/* One class per node name, as torch's: type(y.grad_fn).__name__ is "MulBackward0" (a custom
 * Function's "MyFnBackward"), each a subclass of Node made on first use and kept, so equal
 * names give the same class. NULL with an exception on failure. */
static PyTypeObject *node_class(gs_node n) {
  static PyObject *classes; /* name -> class, for the process */
  if (!classes && !(classes = PyDict_New()))
    return NULL;
  PyObject *name = gsp_node_torch_name(n);
  if (!name)
    return NULL;
  PyObject *cls = PyDict_GetItemWithError(classes, name); /* borrowed */
  if (cls || PyErr_Occurred()) {
    Py_DECREF(name);
    return (PyTypeObject *)cls;
  }
  /* The class is named as torch's: "AccumulateGrad" for the node whose name() is
   * "torch::autograd::AccumulateGrad" (type(...).__name__ has no namespace). */
  const char *full = PyUnicode_AsUTF8(name), *last = full ? strrchr(full, ':') : NULL;
  cls = full ? PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){s:(),s:s,s:s}",
                                     last ? last + 1 : full, (PyObject *)&gsp_node_type,
                                     "__slots__", "__module__", "builtins", "__doc__",
                                     "A node of the autograd graph, named as torch names it.")
             : NULL;
  int rc = cls ? PyDict_SetItem(classes, name, cls) : -1;
  Py_DECREF(name);
  Py_XDECREF(cls); /* the dict keeps it */
  return rc < 0 ? NULL : (PyTypeObject *)cls;
}

static PyObject *gsp_node_wrap(gs_node n) {
  if (gs_node_is_none(n))
    Py_RETURN_NONE;
  PyObject *key = PyLong_FromUnsignedLongLong(n.id);
  if (!key)
    return NULL;
  PyObject *ref = PyDict_GetItemWithError(live_nodes, key); /* borrowed */
  PyObject *o = ref ? PyWeakref_GetObject(ref) : NULL;
  if (o && o != Py_None) {
    Py_DECREF(key);
    return Py_NewRef(o);
  }
  if (PyErr_Occurred()) {
    Py_DECREF(key);
    return NULL;
  }
  PyTypeObject *cls = node_class(n);
  /* tp_alloc: the per-name classes are heap types, whose instances the collector tracks */
  gsp_node *node = cls ? (gsp_node *)cls->tp_alloc(cls, 0) : NULL;
  if (!node) {
    Py_DECREF(key);
    return NULL;
  }
  node->handle = n;
  node->weakrefs = NULL;
  gs_clear_error();
  gs_node_retain(n);
  if (gs_last_error_code() != GS_OK) {
    node->handle = GS_NO_NODE; /* nothing to release */
    Py_DECREF(node);
    Py_DECREF(key);
    return gsp_raise_engine_error();
  }
  ref = PyWeakref_NewRef((PyObject *)node, NULL);
  if (!ref || PyDict_SetItem(live_nodes, key, ref) < 0) {
    Py_XDECREF(ref);
    Py_DECREF(key);
    Py_DECREF(node);
    return NULL;
  }
  Py_DECREF(ref);
  Py_DECREF(key);
  return (PyObject *)node;
}

static void node_dealloc(PyObject *self) {
  gsp_node *o = (gsp_node *)self;
  if (o->weakrefs)
    PyObject_ClearWeakRefs(self);
  if (o->handle.id) {
    /* A temporary node dies while the exception of a call on it is pending
     * (`t.grad_fn._saved_self` after backward): the table's upkeep must not clear it. */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *key = PyLong_FromUnsignedLongLong(o->handle.id);
    PyObject *ref = key && live_nodes ? PyDict_GetItemWithError(live_nodes, key) : NULL;
    if (ref && PyWeakref_GetObject(ref) == Py_None) /* ours, now dead (not a newer one's) */
      PyDict_DelItem(live_nodes, key);
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    Py_XDECREF(key);
    if (gs_node_is_alive(o->handle))
      gs_node_release(o->handle);
  }
  Py_TYPE(self)->tp_free(self); /* a per-name class's: the collector's free */
}

static gs_node node_handle(PyObject *self) { return ((gsp_node *)self)->handle; }

static PyObject *node_repr(PyObject *self) {
  PyObject *name = gsp_node_torch_name(node_handle(self));
  if (!name)
    return NULL;
  /* torch's AccumulateGrad prints its class name, not its C++ name() */
  const char *text = PyUnicode_AsUTF8(name);
  const char *shown = text && strncmp(text, "torch::autograd::", 17) == 0 ? text + 17 : text;
  PyObject *r = shown ? PyUnicode_FromFormat("<%s object at %p>", shown, self) : NULL;
  Py_DECREF(name);
  return r;
}

static Py_hash_t node_hash(PyObject *self) {
  Py_hash_t h = (Py_hash_t)(node_handle(self).id ^ (node_handle(self).id >> 32));
  return h == -1 ? -2 : h;
}

static PyObject *node_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &gsp_node_type))
    Py_RETURN_NOTIMPLEMENTED;
  bool same = node_handle(a).id == node_handle(b).id;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static PyObject *m_name(PyObject *self, PyObject *unused) {
  (void)unused;
  return gsp_node_torch_name(node_handle(self));
}

/* ((node or None, input_nr), ...): one pair per input of the op, torch's scalar operands
 * included; torch leaves out integer and bool tensor inputs (indices, masks, conditions),
 * which the engine's nodes list. Every engine node has one output, so input_nr is 0. */
static PyObject *get_next_functions(PyObject *self, void *c) {
  (void)c;
  gs_node n = node_handle(self);
  gs_clear_error();
  int count = gs_node_n_inputs(n);
  const char *engine = gs_node_name(n);
  if (count < 0 || !engine)
    return gsp_raise_engine_error();
  const torch_name *t = torch_name_of(engine);
  int extra = t ? t->scalar_edges : 0;
  if (t && strcmp(t->torch, "ConvolutionBackward0") == 0 && count < 3)
    extra = 3 - count; /* torch's convolution node has a bias edge, None without a bias */
  PyObject *pairs = PyList_New(0);
  for (int i = 0; pairs && i < count + extra; i++) {
    int64_t shape[GS_MAX_DIMS];
    gs_dtype dtype = GS_F32;
    if (i < count && gs_node_input_shape(n, i, shape, &dtype) > 0 && !gs_dtype_is_floating(dtype))
      continue; /* an index or a mask; a 0-d one is a wrapped Python number, as in `2 ** x` */
    PyObject *next = i < count ? gsp_node_wrap(gs_node_next(n, i)) : Py_NewRef(Py_None);
    PyObject *pair = next ? Py_BuildValue("(Ni)", next, 0) : NULL;
    if (!pair || PyList_Append(pairs, pair) < 0)
      Py_CLEAR(pairs);
    Py_XDECREF(pair);
  }
  PyObject *tuple = pairs ? PyList_AsTuple(pairs) : NULL;
  Py_XDECREF(pairs);
  return tuple;
}

/* AccumulateGrad's leaf; other nodes have no `variable`, as in torch. */
static PyObject *node_getattro(PyObject *self, PyObject *name) {
  if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "variable") == 0) {
    gs_node n = node_handle(self);
    gs_clear_error();
    const char *engine = gs_node_name(n);
    if (!engine)
      return gsp_raise_engine_error();
    if (strcmp(engine, "AccumulateGrad") == 0) {
      gs_tensor leaf = gs_node_variable(n);
      return leaf.id ? gsp_tensor_object(leaf, self) : gsp_raise_engine_error();
    }
    PyObject *shown = gsp_node_torch_name(n);
    if (shown) {
      PyErr_Format(PyExc_AttributeError, "'%U' object has no attribute 'variable'", shown);
      Py_DECREF(shown);
    }
    return NULL;
  }
  const char *attr = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (attr && strncmp(attr, "_saved_", 7) == 0) { /* grad-fn-saved.c */
    gs_node n = node_handle(self);
    PyObject *value;
    if (gsp_node_saved_attr(n, attr, &value))
      return value;
    PyObject *shown = gsp_node_torch_name(n);
    if (shown) {
      PyErr_Format(PyExc_AttributeError, "'%U' object has no attribute '%s'", shown, attr);
      Py_DECREF(shown);
    }
    return NULL;
  }
  return PyObject_GenericGetAttr(self, name);
}

/* Drops the metadata of freed nodes; 0 or -1 raised. */
static int prune_metadata(void) {
  PyObject *keys = PyDict_Keys(node_metadata);
  for (Py_ssize_t i = 0; keys && i < PyList_GET_SIZE(keys); i++) {
    PyObject *key = PyList_GET_ITEM(keys, i);
    if (!gs_node_is_alive((gs_node){PyLong_AsUnsignedLongLong(key)}) &&
        PyDict_DelItem(node_metadata, key) < 0)
      Py_CLEAR(keys);
  }
  if (!keys)
    return -1;
  Py_DECREF(keys);
  metadata_prune_at = 2 * PyDict_GET_SIZE(node_metadata) + 64;
  return 0;
}

static PyObject *get_metadata(PyObject *self, void *c) {
  (void)c;
  PyObject *key = PyLong_FromUnsignedLongLong(node_handle(self).id);
  PyObject *dict = key ? PyDict_GetItemWithError(node_metadata, key) : NULL;
  if (dict || !key || PyErr_Occurred()) {
    Py_XDECREF(key);
    return Py_XNewRef(dict);
  }
  if (PyDict_GET_SIZE(node_metadata) >= metadata_prune_at && prune_metadata() < 0) {
    Py_DECREF(key);
    return NULL;
  }
  dict = PyDict_New();
  if (dict && PyDict_SetItem(node_metadata, key, dict) < 0)
    Py_CLEAR(dict);
  Py_DECREF(key);
  return dict;
}

static PyObject *get_engine_name(PyObject *self, void *c) {
  (void)c;
  gs_clear_error();
  const char *name = gs_node_name(node_handle(self));
  return name ? PyUnicode_FromString(name) : gsp_raise_engine_error();
}

static PyObject *get_number(PyObject *self, void *c) {
  (void)c;
  gs_clear_error();
  uint64_t number = gs_node_number(node_handle(self));
  return number ? PyLong_FromUnsignedLongLong(number) : gsp_raise_engine_error();
}

static PyObject *get_released(PyObject *self, void *c) {
  (void)c;
  gs_clear_error();
  return gsp_bool_or_error(gs_node_released(node_handle(self)));
}

static PyObject *m_register_pre(PyObject *self, PyObject *fn) {
  return gsp_node_hook_register(node_handle(self), fn, false);
}

static PyObject *m_register_post(PyObject *self, PyObject *fn) {
  return gsp_node_hook_register(node_handle(self), fn, true);
}

static PyMethodDef node_methods[] = {
    {"name", m_name, METH_NOARGS, "The op's backward name, as PyTorch 1.13 prints it."},
    {"_register_prehook", m_register_pre, METH_O,
     "Registers hook(grad), a gradient hook, before the node runs (autograd.py's register_prehook "
     "passes torch's tuples); returns its (node, id)."},
    {"_register_hook", m_register_post, METH_O,
     "Registers hook(grad_inputs, grad_outputs) after the node runs; returns its (node, id)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", get_next_functions, NULL,
     "((node or None, input_nr), ...): where each input's gradient goes.", NULL},
    {"metadata", get_metadata, NULL, "A dict for the user, kept with the node.", NULL},
    {"engine_name", get_engine_name, NULL, "The engine's name for the node's kind.", NULL},
    {"number", get_number, NULL, "The node's number in the event log and in messages.", NULL},
    {"released", get_released, NULL,
     "True once a backward without retain_graph freed its saved tensors.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject gsp_node_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.autograd.Node",
    .tp_basicsize = sizeof(gsp_node),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, /* node_class's per-name classes */
    .tp_doc = "A node of the autograd graph (Tensor.grad_fn), as torch's.",
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_hash = node_hash,
    .tp_richcompare = node_richcompare,
    .tp_getattro = node_getattro,
    .tp_weaklistoffset = offsetof(gsp_node, weakrefs),
    .tp_methods = node_methods,
    .tp_getset = node_getset,
};

/* ---- on Tensor ------------------------------------------------------------------------------ */

PyObject *gsp_tensor_grad_fn(PyObject *self) {
  gs_clear_error();
  gs_node n = gs_grad_fn(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return gsp_node_wrap(n);
}

static PyObject *get_base(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_clear_error();
  gs_tensor base = gs_view_base(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  if (!base.id)
    Py_RETURN_NONE;
  return gsp_tensor_object(base, self);
}

static PyObject *get_retains_grad(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  gs_clear_error();
  return gsp_bool_or_error(gs_retains_grad(gsp_handle(self)));
}

static PyGetSetDef tensor_getset[] = {
    {"retains_grad", get_retains_grad, NULL,
     "Whether retain_grad() was called on this non-leaf (False for leaves).", NULL},
    {"_base", get_base, NULL, "The tensor this one is a view of (the root of its views), or None.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

int gsp_grad_fn_install(PyObject *module) {
  if (!(live_nodes = PyDict_New()) || !(node_metadata = PyDict_New()) ||
      PyType_Ready(&gsp_node_type) < 0)
    return -1;
  for (PyGetSetDef *d = tensor_getset; d->name; d++) {
    PyObject *descr = PyDescr_NewGetSet(&gsp_tensor_type, d);
    if (!descr || PyDict_SetItemString(gsp_tensor_type.tp_dict, d->name, descr) < 0) {
      Py_XDECREF(descr);
      return -1;
    }
    Py_DECREF(descr);
  }
  PyType_Modified(&gsp_tensor_type);
  return PyModule_AddObjectRef(module, "Node", (PyObject *)&gsp_node_type);
}
