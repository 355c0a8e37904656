/* nn.c: gradscope.nn: modules over the engine's gs_module (Linear, Sequential, ReLU, Tanh,
 * Sigmoid, GELU, Dropout, Embedding, LayerNorm, RNN, LSTM, GRU, Conv2d, BatchNorm1d/2d/3d), called as
 * model(x) (the recurrent ones as rnn(x, hx) returning (output, h_n), as PyTorch's), with PyTorch's
 * parameters(), named_parameters(), state_dict(), load_state_dict(), train()/eval(),
 * zero_grad(), attribute access to parameters (model.weight) and children (seq[0]), and
 * safetensors files PyTorch reads. BatchNorm's running estimates are parameters that never
 * require grad in the engine (modules have no buffers there); here they are buffers, as in
 * PyTorch: out of parameters(), in named_buffers() and state_dict(). The Python side of the
 * package (gradscope/nn/module.py) adds PyTorch's tree walks and print(model) text on top of
 * _named_children(), _type_name and _extra_repr.
 *
 * nn.Module can be subclassed as in PyTorch: attributes that are modules or nn.Parameter join
 * the engine's tree, and calling the module calls its Python forward.
 *
 * The engine owns parameters outside every scope, so they survive each training step's
 * dispose scope; Python objects for them borrow the handles. Engine modules are shared (a
 * module lives while a caller holds it or a parent slot names it), so lifetimes go by module:
 * each module object holds one engine hold on its module through a small hold object
 * (module_hold), let go when the last Python object holding it goes. Registering a child
 * (Sequential(...), self.fc = Linear(...), seq[1:]) gives the parent slot a hold of its own
 * (gs_module_retain, then the slot takes it), so `first = seq[0]; del seq` keeps the Linear,
 * `backbone = model[:-1]; del model` keeps the backbone's modules, and one module can sit in
 * two containers as in PyTorch. A parameter's object holds the hold of the module it came
 * from, so `w = nn.Linear(2, 2).weight` keeps the Linear alive. References only go up (object
 * -> hold), so they make no cycle and a dropped model goes at once.
 */
#include "gs-py.h"

#include <math.h>
#include <string.h>

/* One hold on an engine module (its creation's, or a gs_module_retain), let go when the last
 * object holding it (the module's object, its parameters' objects) goes. */
typedef struct {
  PyObject_HEAD gs_module m;
} module_hold;

static void hold_dealloc(PyObject *self) {
  GSP_SITE();
  gs_module_dispose(((module_hold *)self)->m); /* disposed if nothing else holds it */
  gs_clear_error();
  PyObject_Free(self);
}

static PyTypeObject hold_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.nn._ModuleHold",
    .tp_basicsize = sizeof(module_hold),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One hold on an engine module (held by its object and its parameters' objects).",
    .tp_dealloc = hold_dealloc,
};

/* A hold object for m, taking over the caller's hold (let go here if it cannot be made). */
static PyObject *tree_new(gs_module m) {
  module_hold *t = PyObject_New(module_hold, &hold_type);
  if (!t) {
    gs_module_dispose(m);
    return NULL;
  }
  t->m = m;
  return (PyObject *)t;
}

typedef struct gsp_module {
  PyObject_HEAD
  gs_module m;
  PyObject *children; /* list: the Python objects of child modules, kept for seq[i] */
  PyObject *tree;     /* its module_hold: what keeps the engine module alive */
  int rnn_mode;       /* a gs_rnn_mode for RNN, LSTM and GRU (called as PyTorch's); -1 */
  bool rnn_cell;      /* with rnn_mode: RNNCell, LSTMCell or GRUCell, one step */
  PyObject *extra_repr; /* str: the constructor's arguments as PyTorch prints them, or NULL */
  PyObject *dict;       /* instance attributes (a subclass's, hooks, a user's own) */
  bool python_defined;  /* made by Module.__new__ for a class written in Python: no forward of
                           the engine's own */
  PyObject *init_args;  /* a built-in's (args, kwargs) to __init__, which copy.deepcopy repeats */
  bool inplace;         /* Dropout(inplace=True): forward writes its result into its input */
} gsp_module;

static PyTypeObject module_type;

/* Puts child (a module object) into parent's slot name: the slot gets a hold of its own, so
 * the child's object keeps its hold. 0, or -1 with an exception. */
static int put_child(gsp_module *parent, const char *name, gsp_module *child, int at) {
  gs_clear_error();
  gs_module_retain(child->m);
  if (at < 0)
    gs_module_register_child(parent->m, name, child->m);
  else
    gs_module_insert_child(parent->m, at, name, child->m);
  if (gs_last_error_code() != GS_OK) {
    PyObject *raised = gsp_raise_engine_error();
    (void)raised;
    gs_module_dispose(child->m); /* the slot did not take the hold */
    gs_clear_error();
    return -1;
  }
  return 0;
}

/* parent->children again: one object per engine slot, in slot order, taken from the objects
 * known (the old list, plus extra if not NULL). 0, or -1 with an exception. */
static int sync_children(gsp_module *parent, PyObject *extra) {
  int n = gs_module_child_count(parent->m);
  if (n < 0) {
    gsp_raise_engine_error();
    return -1;
  }
  PyObject *list = PyList_New(0);
  for (int i = 0; list && i < n; i++) {
    gs_module c = gs_module_child_at(parent->m, i, NULL);
    PyObject *found = extra && ((gsp_module *)extra)->m.id == c.id ? extra : NULL;
    for (Py_ssize_t j = 0; !found && j < PyList_GET_SIZE(parent->children); j++)
      if (((gsp_module *)PyList_GET_ITEM(parent->children, j))->m.id == c.id)
        found = PyList_GET_ITEM(parent->children, j);
    if (found && PyList_Append(list, found) < 0)
      Py_CLEAR(list);
  }
  if (!list)
    return -1;
  Py_SETREF(parent->children, list);
  return 0;
}

static PyObject *wrap_module(gs_module m, PyObject *children) {
  if (m.id == 0) {
    Py_XDECREF(children);
    return gsp_raise_engine_error();
  }
  /* The engine makes layers' parameters in f32: after set_default_dtype(float64) they are
   * converted at birth, as torch makes them in the default dtype. */
  if (gsp_default_dtype() != GS_F32 && gs_module_to_dtype(m, gsp_default_dtype()) < 0) {
    gs_module_dispose(m);
    Py_XDECREF(children);
    return gsp_raise_engine_error();
  }
  PyObject *tree = tree_new(m); /* takes the creation's hold */
  if (!tree) {
    Py_XDECREF(children);
    return NULL;
  }
  gsp_module *o = PyObject_GC_New(gsp_module, &module_type);
  if (!o) {
    Py_DECREF(tree);
    Py_XDECREF(children);
    return NULL;
  }
  o->m = m;
  o->rnn_mode = -1;
  o->rnn_cell = false;
  o->extra_repr = NULL;
  o->dict = NULL;
  o->init_args = NULL;
  o->python_defined = false;
  o->inplace = false;
  o->tree = tree;
  o->children = children ? children : PyList_New(0);
  PyObject_GC_Track(o);
  return (PyObject *)o;
}

static void module_dealloc(PyObject *self) {
  GSP_SITE();
  gsp_module *o = (gsp_module *)self;
  PyObject_GC_UnTrack(self);
  /* Children first: their objects may hold the tree too; the tree goes with the last. */
  Py_CLEAR(o->dict);
  Py_CLEAR(o->init_args);
  Py_CLEAR(o->children);
  Py_CLEAR(o->extra_repr);
  Py_CLEAR(o->tree);
  Py_TYPE(self)->tp_free(self);
}

static int module_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((gsp_module *)self)->children);
  Py_VISIT(((gsp_module *)self)->dict);
  Py_VISIT(((gsp_module *)self)->init_args);
  return 0;
}

static int module_clear(PyObject *self) {
  Py_CLEAR(((gsp_module *)self)->children);
  Py_CLEAR(((gsp_module *)self)->dict);
  Py_CLEAR(((gsp_module *)self)->init_args);
  return 0;
}

/* rnn(input, hx=None) as PyTorch's: (output, h_n), or for LSTM hx = (h0, c0) and
 * (output, (h_n, c_n)); input a Tensor or a PackedSequence (then output is one too). */
static PyObject *recurrent_call(gsp_module *o, PyObject *args, PyObject *kwargs) {
  PyObject *x, *hx = Py_None, *h0 = Py_None, *c0 = Py_None;
  static char *kwlist[] = {"input", "hx", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:forward", kwlist, &x, &hx))
    return NULL;
  bool packed = gsp_is_packed(x);
  if (!packed && !gsp_is_tensor(x)) {
    PyErr_Format(PyExc_TypeError,
                 "forward(): input must be a Tensor or a PackedSequence, not %.100s",
                 Py_TYPE(x)->tp_name);
    return NULL;
  }
  bool lstm = o->rnn_mode == GS_RNN_LSTM;
  if (lstm && hx != Py_None) {
    if (!PyTuple_Check(hx) || PyTuple_GET_SIZE(hx) != 2) {
      PyErr_Format(PyExc_TypeError, "LSTM: hx must be a tuple (h0, c0) of Tensors, not %.100s",
                   Py_TYPE(hx)->tp_name);
      return NULL;
    }
    h0 = PyTuple_GET_ITEM(hx, 0);
    c0 = PyTuple_GET_ITEM(hx, 1);
  }
  if (!lstm)
    h0 = hx;
  if ((h0 != Py_None && !gsp_is_tensor(h0)) || (c0 != Py_None && !gsp_is_tensor(c0))) {
    PyErr_SetString(PyExc_TypeError, "hx must be a Tensor (for LSTM, a pair of Tensors) or None");
    return NULL;
  }
  gs_tensor h_n = GS_NO_TENSOR, c_n = GS_NO_TENSOR;
  gs_tensor h0_t = h0 == Py_None ? GS_NO_TENSOR : gsp_handle(h0);
  gs_tensor c0_t = c0 == Py_None ? GS_NO_TENSOR : gsp_handle(c0);
  PyObject *py_out =
      packed ? gsp_wrap_packed(gs_rnn_forward_packed(o->m, gsp_packed_handle(x), h0_t, c0_t, &h_n,
                                                     lstm ? &c_n : NULL))
             : gsp_wrap(gs_rnn_forward(o->m, gsp_handle(x), h0_t, c0_t, &h_n, lstm ? &c_n : NULL));
  if (!py_out)
    return NULL;
  PyObject *py_h = gsp_wrap(h_n);
  PyObject *py_c = lstm && py_h ? gsp_wrap(c_n) : NULL;
  if (!py_h || (lstm && !py_c)) {
    Py_DECREF(py_out);
    Py_XDECREF(py_h);
    return NULL;
  }
  return lstm ? Py_BuildValue("(N(NN))", py_out, py_h, py_c) : Py_BuildValue("(NN)", py_out, py_h);
}

/* cell(input, hx=None): one step of an RNNCell, LSTMCell or GRUCell, as PyTorch's: hx is h
 * (for LSTMCell the pair (h, c)) or None for zeros; returns the next h (LSTMCell: (h, c)). An
 * unbatched 1-D input (and state) gives unbatched results. */
static PyObject *cell_call(gsp_module *o, PyObject *args, PyObject *kwargs) {
  PyObject *x, *hx = Py_None, *h = Py_None, *c = Py_None;
  static char *kwlist[] = {"input", "hx", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O:forward", kwlist, &gsp_tensor_type, &x, &hx))
    return NULL;
  bool lstm = o->rnn_mode == GS_RNN_LSTM;
  if (lstm && hx != Py_None) {
    if (!PyTuple_Check(hx) || PyTuple_GET_SIZE(hx) != 2) {
      PyErr_Format(PyExc_TypeError, "LSTMCell: hx must be a tuple (h, c) of Tensors, not %.100s",
                   Py_TYPE(hx)->tp_name);
      return NULL;
    }
    h = PyTuple_GET_ITEM(hx, 0);
    c = PyTuple_GET_ITEM(hx, 1);
  } else if (!lstm) {
    h = hx;
  }
  if ((h != Py_None && !gsp_is_tensor(h)) || (c != Py_None && !gsp_is_tensor(c))) {
    PyErr_SetString(PyExc_TypeError,
                    "hx must be a Tensor (for LSTMCell, a pair of Tensors) or None");
    return NULL;
  }
  gs_tensor xt = gsp_handle(x);
  bool unbatched = gs_ndim(xt) == 1;
  /* an unbatched step runs as a batch of one, its results squeezed back */
  gs_tensor held[3] = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  gs_tensor ht = h == Py_None ? GS_NO_TENSOR : gsp_handle(h);
  gs_tensor ct = c == Py_None ? GS_NO_TENSOR : gsp_handle(c);
  gs_clear_error();
  if (unbatched) {
    xt = held[0] = gs_unsqueeze(xt, 0);
    if (ht.id)
      ht = held[1] = gs_unsqueeze(ht, 0);
    if (ct.id)
      ct = held[2] = gs_unsqueeze(ct, 0);
  }
  gs_tensor c_next = GS_NO_TENSOR;
  gs_tensor h_next = gs_last_error_code() == GS_OK
                         ? gs_rnn_cell_forward(o->m, xt, ht, ct, lstm ? &c_next : NULL)
                         : GS_NO_TENSOR;
  for (int i = 0; i < 3; i++)
    gs_dispose(held[i]);
  if (unbatched && h_next.id) {
    gs_tensor squeezed = gs_squeeze(h_next, 0);
    gs_dispose(h_next);
    h_next = squeezed;
    if (c_next.id) {
      squeezed = gs_squeeze(c_next, 0);
      gs_dispose(c_next);
      c_next = squeezed;
    }
  }
  PyObject *py_h = gsp_wrap(h_next);
  if (!lstm || !py_h)
    return py_h;
  PyObject *py_c = gsp_wrap(c_next);
  if (!py_c) {
    Py_DECREF(py_h);
    return NULL;
  }
  return Py_BuildValue("(NN)", py_h, py_c);
}

static PyObject *engine_forward; /* Module.forward, the C method: the engine's forward */
static PyObject *str_forward, *str_pre_hooks, *str_hooks;

/* The hooks of module o (Module.register_forward_pre_hook / register_forward_hook keep them in
 * the instance dict, gradscope/nn/module.py), or NULL when it has none. */
static PyObject *hooks_of(gsp_module *o, PyObject *key) {
  PyObject *hooks = o->dict ? PyDict_GetItemWithError(o->dict, key) : NULL;
  return hooks && PyDict_Check(hooks) && PyDict_GET_SIZE(hooks) ? hooks : NULL;
}

/* Whether calling o is the engine's forward alone: no Python forward (a subclass's), no hooks,
 * not a Module written in Python. Then a Sequential of such modules runs in the engine. */
static bool runs_in_engine(PyObject *obj) {
  gsp_module *o = (gsp_module *)obj;
  if (o->python_defined || o->inplace || hooks_of(o, str_pre_hooks) || hooks_of(o, str_hooks))
    return false;
  return Py_TYPE(obj) == &module_type ||
         _PyType_Lookup(Py_TYPE(obj), str_forward) == engine_forward;
}

/* A Sequential holding a module written in Python (nn.Flatten, a user's subclass) or one with
 * hooks: the engine cannot call Python, so the chain runs here, each child called as Python
 * calls it. */
static bool sequential_needs_python(gsp_module *o) {
  const char *name = gs_module_type_name(o->m);
  if (!name || strcmp(name, "Sequential") != 0)
    return false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o->children); i++)
    if (!runs_in_engine(PyList_GET_ITEM(o->children, i)))
      return true;
  return false;
}

static PyObject *sequential_call_in_python(gsp_module *o, PyObject *args, PyObject *kwargs) {
  PyObject *x;
  if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyArg_ParseTuple(args, "O:forward", &x))
    return kwargs && PyDict_GET_SIZE(kwargs)
               ? (PyErr_SetString(PyExc_TypeError, "Sequential takes one input"), NULL)
               : NULL;
  PyObject *children = PySequence_List(o->children); /* a child call may not change the walk */
  if (!children)
    return NULL;
  Py_INCREF(x);
  for (Py_ssize_t i = 0; x && i < PyList_GET_SIZE(children); i++) {
    PyObject *y = PyObject_CallOneArg(PyList_GET_ITEM(children, i), x);
    Py_DECREF(x);
    x = y;
  }
  Py_DECREF(children);
  return x;
}

/* Module.forward of the engine's modules: Linear's, a Sequential's chain, an RNN's. */
static PyObject *module_forward(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gsp_module *o = (gsp_module *)self;
  if (o->python_defined) {
    PyErr_Format(PyExc_NotImplementedError,
                 "Module [%s] is missing the required \"forward\" function",
                 Py_TYPE(self)->tp_name);
    return NULL;
  }
  if (sequential_needs_python(o))
    return sequential_call_in_python(o, args, kwargs);
  if (o->rnn_mode >= 0)
    return o->rnn_cell ? cell_call(o, args, kwargs) : recurrent_call(o, args, kwargs);
  PyObject *x;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "a module takes one Tensor");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O!:forward", &gsp_tensor_type, &x))
    return NULL;
  if (o->inplace) { /* from a copy-on-write clone, copied in (functional-activations.c) */
    gs_tensor in = gsp_activation_input(x, 1);
    gs_tensor r = in.id ? gs_module_forward(o->m, in) : GS_NO_TENSOR;
    if (r.id == in.id) /* passed through: one handle to let go, not two */
      r = gs_clone(in);
    return gsp_activation_result(x, in, r, 1);
  }
  gs_tensor y = gs_module_forward(o->m, gsp_handle(x));
  /* An in-place module (ReLU(inplace=True)) returns its input's handle: the same object, as
   * torch returns the tensor it wrote into. */
  return y.id && y.id == gsp_handle(x).id ? Py_NewRef(x) : gsp_wrap(y);
}

/* Runs each hook of a dict as hook(*call): a result that is not None replaces *value (for a
 * pre-hook, the input tuple: a non-tuple becomes a 1-tuple, as PyTorch wraps it). */
static bool run_hooks(PyObject *hooks, PyObject *self, PyObject **args, PyObject **value,
                      bool pre) {
  PyObject *list = PyDict_Values(hooks); /* a hook may remove itself */
  if (!list)
    return false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
    PyObject *r =
        pre ? PyObject_CallFunctionObjArgs(PyList_GET_ITEM(list, i), self, *args, NULL)
            : PyObject_CallFunctionObjArgs(PyList_GET_ITEM(list, i), self, *args, *value, NULL);
    if (!r) {
      Py_DECREF(list);
      return false;
    }
    if (r == Py_None) {
      Py_DECREF(r);
      continue;
    }
    PyObject **slot = pre ? args : value;
    if (pre && !PyTuple_Check(r)) {
      PyObject *t = PyTuple_Pack(1, r);
      Py_DECREF(r);
      if (!(r = t)) {
        Py_DECREF(list);
        return false;
      }
    }
    Py_SETREF(*slot, r);
  }
  Py_DECREF(list);
  return true;
}

/* model(x): forward (the class's own, if it has one, else the engine's), between the
 * module's forward pre-hooks and hooks, as torch.nn.Module.__call__. */
static PyObject *module_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  gsp_module *o = (gsp_module *)self;
  PyObject *pre = hooks_of(o, str_pre_hooks), *post = hooks_of(o, str_hooks);
  bool own =
      Py_TYPE(self) != &module_type && _PyType_Lookup(Py_TYPE(self), str_forward) != engine_forward;
  if (!pre && !post && !own)
    return module_forward(self, args, kwargs);
  Py_INCREF(args);
  PyObject *out = NULL;
  if (pre && !run_hooks(pre, self, &args, NULL, true))
    goto done;
  if (own) {
    PyObject *forward = PyObject_GetAttr(self, str_forward);
    out = forward ? PyObject_Call(forward, args, kwargs) : NULL;
    Py_XDECREF(forward);
  } else {
    out = module_forward(self, args, kwargs);
  }
  if (out && (post = hooks_of(o, str_hooks)) && !run_hooks(post, self, &args, &out, false))
    Py_CLEAR(out);
done:
  Py_DECREF(args);
  return out;
}

/* PyTorch's print(model) text, written in Python (gradscope/nn/module.py: _repr_text); the
 * type name alone until that module has run. */
static PyObject *module_repr(PyObject *self) {
  PyObject *text = PyObject_GetAttrString(self, "_repr_text");
  if (text) {
    PyObject *r = PyObject_CallNoArgs(text);
    Py_DECREF(text);
    return r;
  }
  PyErr_Clear();
  const char *name = gs_module_type_name(((gsp_module *)self)->m);
  return PyUnicode_FromFormat("%s()", name ? name : "<disposed module>");
}

/* Parameters of the tree under dotted names (borrowed handles), or -1 raised: each once under
 * its first path (named_parameters()), or with every path (all_paths: state_dict()'s keys,
 * where a shared module's parameters appear under each of its places). */
static int named_paths(gs_module m, gs_tensor **params, const char ***names, bool all_paths) {
  int (*list)(gs_module, gs_tensor *, const char **, int) =
      all_paths ? gs_module_parameter_paths : gs_module_named_parameters;
  int n = list(m, NULL, NULL, 0);
  if (n < 0) {
    gsp_raise_engine_error();
    return -1;
  }
  *params = PyMem_Malloc(sizeof(gs_tensor) * (size_t)(n + 1));
  *names = PyMem_Malloc(sizeof(char *) * (size_t)(n + 1));
  if (!*params || !*names) {
    PyMem_Free(*params);
    PyMem_Free(*names);
    PyErr_NoMemory();
    return -1;
  }
  return list(m, *params, *names, n);
}

static int named(gs_module m, gs_tensor **params, const char ***names) {
  return named_paths(m, params, names, false);
}

/* The tensors Module.register_buffer registered (engine parameters that never require grad):
 * handle id -> True if persistent (in state_dict), False if not. */
static PyObject *registered_buffers;

/* 1 if handle p was registered as a buffer, 2 if as one left out of state_dict, else 0. */
static int registered_buffer(gs_tensor p) {
  if (!registered_buffers || !PyDict_GET_SIZE(registered_buffers))
    return 0;
  PyObject *key = PyLong_FromUnsignedLongLong(p.id);
  PyObject *persistent = key ? PyDict_GetItemWithError(registered_buffers, key) : NULL;
  Py_XDECREF(key);
  PyErr_Clear();
  return !persistent ? 0 : persistent == Py_True ? 1 : 2;
}

/* Records handle b as a buffer (persistent: listed in state_dict); -1 with an exception. */
static int note_buffer(gs_tensor b, bool persistent) {
  if (!registered_buffers && !(registered_buffers = PyDict_New()))
    return -1;
  PyObject *key = PyLong_FromUnsignedLongLong(b.id);
  int rc = key ? PyDict_SetItem(registered_buffers, key, persistent ? Py_True : Py_False) : -1;
  Py_XDECREF(key);
  return rc;
}

bool gsp_is_buffer(gs_tensor t) { return registered_buffer(t) != 0; }

/* Whether the engine parameter under a dotted name is a buffer: one of BatchNorm's running
 * estimates, which PyTorch keeps as buffers (never requiring grad, under a running-statistics
 * name), or one a program registered. */
static bool is_buffer(gs_tensor p, const char *name) {
  const char *dot = strrchr(name, '.');
  const char *last = dot ? dot + 1 : name;
  return !gs_requires_grad(p) &&
         (strcmp(last, "running_mean") == 0 || strcmp(last, "running_var") == 0 ||
          strcmp(last, "num_batches_tracked") == 0 || registered_buffer(p));
}

/* A hold on the module that lists the parameter at a dotted path below o (o's own for a
 * name without a dot): what a parameter's object keeps, so it lives as long as Python holds
 * it even if its module leaves o's tree, as a torch Parameter does. */
static PyObject *hold_of_path(gsp_module *o, const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot)
    return Py_NewRef(o->tree);
  char *prefix = PyMem_Malloc((size_t)(dot - path) + 1);
  if (!prefix)
    return PyErr_NoMemory();
  memcpy(prefix, path, (size_t)(dot - path));
  prefix[dot - path] = '\0';
  gs_module owner = gs_module_child(o->m, prefix);
  PyMem_Free(prefix);
  if (!owner.id) {
    gs_clear_error();
    return Py_NewRef(o->tree);
  }
  return tree_new(gs_module_retain(owner));
}

enum { WANT_PARAMETERS, WANT_BUFFERS, WANT_BOTH };

static PyObject *parameter_list(PyObject *self, bool with_names, bool detached, int want) {
  gs_tensor *params;
  const char **names;
  int n = named_paths(((gsp_module *)self)->m, &params, &names, want == WANT_BOTH);
  if (n < 0)
    return NULL;
  PyObject *out = with_names && detached ? PyDict_New() : PyList_New(0);
  for (int i = 0; out && i < n; i++) {
    if (want != WANT_BOTH && is_buffer(params[i], names[i]) != (want == WANT_BUFFERS))
      continue;
    if (want == WANT_BOTH && registered_buffer(params[i]) == 2)
      continue; /* state_dict: a buffer registered with persistent=False is left out */
    PyObject *keeper = detached ? NULL : hold_of_path((gsp_module *)self, names[i]);
    PyObject *t = detached ? gsp_wrap(gs_detach(params[i]))
                  : keeper ? gsp_tensor_object(params[i], keeper)
                           : NULL;
    Py_XDECREF(keeper);
    PyObject *item = !t ? NULL : !with_names ? Py_NewRef(t) : detached ? NULL
                                                         : Py_BuildValue("(sO)", names[i], t);
    int rc = !t ? -1
             : with_names && detached ? PyDict_SetItemString(out, names[i], t)
                                      : (item ? PyList_Append(out, item) : -1);
    Py_XDECREF(item);
    Py_XDECREF(t);
    if (rc < 0)
      Py_CLEAR(out);
  }
  PyMem_Free(params);
  PyMem_Free(names);
  return out;
}

static PyObject *m_parameters(PyObject *s, PyObject *u) { (void)u; return parameter_list(s, false, false, WANT_PARAMETERS); }
static PyObject *m_named_parameters(PyObject *s, PyObject *u) { (void)u; return parameter_list(s, true, false, WANT_PARAMETERS); }
static PyObject *m_buffers(PyObject *s, PyObject *u) { (void)u; return parameter_list(s, false, false, WANT_BUFFERS); }
static PyObject *m_named_buffers(PyObject *s, PyObject *u) { (void)u; return parameter_list(s, true, false, WANT_BUFFERS); }
static PyObject *m_state_dict(PyObject *s, PyObject *u) { (void)u; return parameter_list(s, true, true, WANT_BOTH); }

/* Module.register_buffer(name, tensor, persistent=True), as PyTorch's: the tensor becomes the
 * engine module's own (an engine parameter that never requires grad, as BatchNorm's running
 * estimates), out of parameters(), in buffers() and, if persistent, in state_dict(). Its
 * handle moves to the module (gs_parameter_new), so the object passed in is stale afterwards;
 * module.NAME is the buffer. */
static PyObject *m_register_buffer(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *name, *tensor;
  int persistent = 1;
  static char *kwlist[] = {"name", "tensor", "persistent", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|p:register_buffer", kwlist, &name, &tensor,
                                   &persistent))
    return NULL;
  gsp_module *o = (gsp_module *)self;
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "buffer name should be a string. Got %s", Py_TYPE(name)->tp_name);
    return NULL;
  }
  const char *s = PyUnicode_AsUTF8(name);
  if (!s)
    return NULL;
  if (o->m.id == 0) {
    PyErr_SetString(PyExc_AttributeError, "cannot assign buffer before Module.__init__() call");
    return NULL;
  }
  if (strchr(s, '.') || !*s) {
    PyErr_Format(PyExc_KeyError, *s ? "buffer name can't contain \".\""
                                    : "buffer name can't be "
                                      "empty string \"\"");
    return NULL;
  }
  PyObject *existing = PyObject_GenericGetAttr(self, name);
  gs_tensor param = gs_module_parameter(o->m, s);
  gs_clear_error();
  /* A buffer registered before may be registered again (replaced), as in PyTorch. */
  if (existing || (!gs_tensor_is_none(param) && !registered_buffer(param))) {
    Py_XDECREF(existing);
    PyErr_Format(PyExc_KeyError, "attribute '%s' already exists", s);
    return NULL;
  }
  PyErr_Clear();
  if (tensor == Py_None)
    return PyObject_GenericSetAttr(self, name, Py_None) < 0 ? NULL : Py_NewRef(Py_None);
  if (!gsp_is_tensor(tensor)) {
    PyErr_Format(PyExc_TypeError,
                 "cannot assign '%s' object to buffer '%s' (torch Tensor or "
                 "None required)",
                 Py_TYPE(tensor)->tp_name, s);
    return NULL;
  }
  gs_clear_error();
  gs_tensor b = gs_parameter_new(gsp_handle(tensor), false);
  if (!b.id)
    return gsp_raise_engine_error();
  gs_module_register_parameter(o->m, s, b);
  if (!gsp_check_void())
    return NULL;
  return note_buffer(b, persistent) < 0 ? NULL : Py_NewRef(Py_None);
}

/* [(name, child object)] in the engine's registration order: the objects of children kept in
 * o->children, matched by handle (a replaced child's old object is no longer listed). */
static PyObject *m_named_children(PyObject *self, PyObject *unused) {
  (void)unused;
  gsp_module *o = (gsp_module *)self;
  int n = gs_module_child_count(o->m);
  if (n < 0)
    return gsp_raise_engine_error();
  PyObject *out = PyList_New(0);
  for (int i = 0; out && i < n; i++) {
    const char *name = NULL;
    gs_module c = gs_module_child_at(o->m, i, &name);
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(o->children); j++) {
      PyObject *obj = PyList_GET_ITEM(o->children, j);
      if (((gsp_module *)obj)->m.id == c.id) {
        PyObject *pair = Py_BuildValue("(sO)", name, obj);
        if (!pair || PyList_Append(out, pair) < 0)
          Py_CLEAR(out);
        Py_XDECREF(pair);
        break;
      }
    }
  }
  return out;
}

/* Module._remove_child(name): the slot emptied (torch's delattr of a child); its module lives
 * on while its object or another slot holds it. */
static PyObject *m_remove_child(PyObject *self, PyObject *name) {
  GSP_SITE();
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (!s)
    return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_TypeError, "expected a str"), NULL);
  gs_clear_error();
  gs_module_remove_child(((gsp_module *)self)->m, s);
  if (!gsp_check_void() || sync_children((gsp_module *)self, NULL) < 0)
    return NULL;
  Py_RETURN_NONE;
}

/* Module._rename_child(name, new_name): the slot under a new name, in the same place. */
static PyObject *m_rename_child(PyObject *self, PyObject *args) {
  GSP_SITE();
  const char *from, *to;
  if (!PyArg_ParseTuple(args, "ss:_rename_child", &from, &to))
    return NULL;
  gs_clear_error();
  gs_module_rename_child(((gsp_module *)self)->m, from, to);
  if (!gsp_check_void())
    return NULL;
  Py_RETURN_NONE;
}

/* Module._insert_child(index, name, module): a new slot at position index. */
static PyObject *m_insert_child(PyObject *self, PyObject *args) {
  GSP_SITE();
  int index;
  const char *name;
  PyObject *child;
  if (!PyArg_ParseTuple(args, "isO!:_insert_child", &index, &name, &module_type, &child))
    return NULL;
  if (put_child((gsp_module *)self, name, (gsp_module *)child, index) < 0 ||
      sync_children((gsp_module *)self, child) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *m_type_name(PyObject *self, void *c) {
  (void)c;
  const char *name = gs_module_type_name(((gsp_module *)self)->m);
  if (!name)
    return gsp_raise_engine_error();
  return PyUnicode_FromString(name);
}

static PyObject *m_extra_repr_get(PyObject *self, void *c) {
  (void)c;
  PyObject *e = ((gsp_module *)self)->extra_repr;
  return e ? Py_NewRef(e) : PyUnicode_FromString("");
}

/* Copies each tensor of the dict into the parameter of the same name, under no_grad, checking
 * every name and shape first so that a refused dict leaves the model unchanged. */
static PyObject *m_load_state_dict(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *dict;
  int strict = 1;
  static char *kwlist[] = {"state_dict", "strict", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p:load_state_dict", kwlist, &PyDict_Type,
                                   &dict, &strict))
    return NULL;
  gs_module m = ((gsp_module *)self)->m;
  gs_tensor *params;
  const char **names;
  int n = named_paths(m, &params, &names, true); /* state_dict's keys: every path */
  if (n < 0)
    return NULL;
  PyObject *result = NULL;
  for (int pass = 0; pass < 2; pass++) {
    int found = 0;
    for (int i = 0; i < n; i++) {
      PyObject *v = PyDict_GetItemString(dict, names[i]);
      if (!v) {
        if (strict) {
          PyErr_Format(PyExc_RuntimeError, "load_state_dict(): missing key \"%s\"", names[i]);
          goto done;
        }
        continue;
      }
      found++;
      if (!gsp_is_tensor(v)) {
        PyErr_Format(PyExc_TypeError, "load_state_dict(): \"%s\" is not a Tensor", names[i]);
        goto done;
      }
      if (pass == 0) {
        int64_t a[GS_MAX_DIMS], b[GS_MAX_DIMS];
        int na = gs_shape(params[i], a), nb = gs_shape(gsp_handle(v), b);
        if (nb < 0) {
          gsp_raise_engine_error();
          goto done;
        }
        if (na != nb || memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0) {
          PyErr_Format(PyExc_RuntimeError, "load_state_dict(): size mismatch for \"%s\"",
                       names[i]);
          goto done;
        }
      } else {
        gs_clear_error();
        gs_no_grad_begin();
        gs_copy_(params[i], gsp_handle(v));
        gs_no_grad_end();
        if (gs_last_error_code() != GS_OK) {
          gsp_raise_engine_error();
          goto done;
        }
      }
    }
    if (pass == 0 && strict && found != PyDict_GET_SIZE(dict)) {
      PyErr_SetString(PyExc_RuntimeError,
                      "load_state_dict(): the dict has keys that are not parameters");
      goto done;
    }
  }
  result = Py_NewRef(Py_None);
done:
  PyMem_Free(params);
  PyMem_Free(names);
  return result;
}

static PyObject *m_train(PyObject *self, PyObject *args) {
  GSP_SITE();
  int mode = 1;
  if (!PyArg_ParseTuple(args, "|p:train", &mode))
    return NULL;
  gs_clear_error();
  gs_module_train(((gsp_module *)self)->m, mode);
  if (!gsp_check_void())
    return NULL;
  return Py_NewRef(self);
}

static PyObject *m_eval(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  PyObject *args = Py_BuildValue("(i)", 0);
  PyObject *r = args ? m_train(self, args) : NULL;
  Py_XDECREF(args);
  return r;
}

static PyObject *m_training(PyObject *self, void *c) {
  GSP_SITE();
  (void)c;
  return PyBool_FromLong(gs_module_is_training(((gsp_module *)self)->m));
}

/* Module._to_dtype(dtype): every floating parameter, buffer and grad of the tree converted in
 * place (gs_module_to_dtype), the objects the program holds staying the same; returns self. */
static PyObject *m_to_dtype(PyObject *self, PyObject *arg) {
  GSP_SITE();
  gs_dtype dtype = GS_F32;
  if (gsp_dtype_from_object(arg, &dtype) < 0)
    return NULL;
  gs_clear_error();
  if (gs_module_to_dtype(((gsp_module *)self)->m, dtype) < 0)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *m_zero_grad(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)args;
  (void)kwargs;
  gs_tensor *params;
  const char **names;
  int n = named(((gsp_module *)self)->m, &params, &names);
  if (n < 0)
    return NULL;
  for (int i = 0; i < n; i++)
    gs_zero_grad(params[i]);
  PyMem_Free(params);
  PyMem_Free(names);
  Py_RETURN_NONE;
}

static PyObject *m_save_safetensors(PyObject *self, PyObject *path) {
  GSP_SITE();
  PyObject *bytes;
  if (!PyUnicode_FSConverter(path, &bytes))
    return NULL;
  gs_clear_error();
  int rc = gs_module_save_safetensors(((gsp_module *)self)->m, PyBytes_AS_STRING(bytes), NULL);
  Py_DECREF(bytes);
  return rc < 0 ? gsp_raise_engine_error() : Py_NewRef(Py_None);
}

static PyObject *m_load_safetensors(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *bytes;
  int strict = 1;
  static char *kwlist[] = {"path", "strict", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|p:load_safetensors", kwlist,
                                   PyUnicode_FSConverter, &bytes, &strict))
    return NULL;
  gs_clear_error();
  int rc = gs_module_load_safetensors(((gsp_module *)self)->m, PyBytes_AS_STRING(bytes), strict);
  Py_DECREF(bytes);
  return rc < 0 ? gsp_raise_engine_error() : Py_NewRef(Py_None);
}

/* model.weight, model.fc1: a parameter or child under that name (PyTorch's __getattr__). */
static PyObject *module_getattro(PyObject *self, PyObject *name) {
  GSP_SITE();
  PyObject *r = PyObject_GenericGetAttr(self, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError))
    return r;
  const char *s = PyUnicode_AsUTF8(name);
  if (!s)
    return NULL;
  gs_module m = ((gsp_module *)self)->m;
  gs_tensor p = gs_module_parameter(m, s);
  gs_clear_error();
  if (!gs_tensor_is_none(p)) {
    PyErr_Clear();
    return gsp_tensor_object(p, ((gsp_module *)self)->tree);
  }
  return NULL;
}

/* self.fc1 = nn.Linear(...) registers a child, self.w = nn.Parameter(t) a parameter, in the
 * engine's tree (so named_parameters, state_dict and safetensors see them), as PyTorch's
 * Module.__setattr__; the object is also kept as an ordinary attribute. */
/* del self.w of a parameter (torch's delattr, ParameterDict.pop): the engine's entry goes;
 * a parameter no other module lists is its Python object's again (disposed with it), as
 * torch hands the Parameter back to the program. */
static int remove_parameter(PyObject *self, PyObject *name, const char *slot) {
  bool callers = false;
  gs_clear_error();
  gs_tensor p = gs_module_remove_parameter(((gsp_module *)self)->m, slot, &callers);
  if (gs_tensor_is_none(p))
    return (void)gsp_raise_engine_error(), -1;
  gsp_tensor *o = gs_tensor_binding(p);
  if (callers && o && o->handle.id == p.id) {
    o->owned = true;
    Py_CLEAR(o->keeper);
  } else if (callers) {
    gs_dispose(p); /* no object holds it: nothing could use it again */
  }
  if (PyObject_GenericSetAttr(self, name, NULL) < 0 && PyErr_ExceptionMatches(PyExc_AttributeError))
    PyErr_Clear(); /* a parameter put by the engine has no attribute */
  return PyErr_Occurred() ? -1 : 0;
}

static int module_setattro(PyObject *self, PyObject *name, PyObject *value) {
  gs_module m = ((gsp_module *)self)->m;
  const char *slot = !value && m.id && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (slot && !strchr(slot, '.')) {
    gs_tensor p = gs_module_parameter(m, slot);
    gs_clear_error();
    if (!gs_tensor_is_none(p) && gs_is_parameter(p))
      return remove_parameter(self, name, slot);
    gs_module_set_computed(m, slot, GS_NO_TENSOR); /* del module.weight of a computed one */
    gs_clear_error();
  }
  if (slot && !strchr(slot, '.') && gs_module_child(m, slot).id) {
    /* del self.fc: the child slot goes too (the module lives on if something holds it) */
    gs_clear_error();
    gs_module_remove_child(m, slot);
    if (!gsp_check_void() || sync_children((gsp_module *)self, NULL) < 0)
      return -1;
    if (PyObject_GenericSetAttr(self, name, NULL) < 0 &&
        PyErr_ExceptionMatches(PyExc_AttributeError))
      PyErr_Clear(); /* a child put by the engine has no attribute */
    return PyErr_Occurred() ? -1 : 0;
  }
  gs_clear_error();
  if (value && (PyObject_TypeCheck(value, &module_type) || gsp_is_tensor(value))) {
    if (m.id == 0) { /* a built-in's subclass, before its __init__ made the engine module */
      PyErr_Format(PyExc_AttributeError,
                   "cannot assign module or parameter %R before "
                   "%s.__init__() call",
                   name, Py_TYPE(self)->tp_name);
      return -1;
    }
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
      return -1;
    gs_clear_error();
    if (PyObject_TypeCheck(value, &module_type)) {
      gs_module child = ((gsp_module *)value)->m;
      gs_module there =
          gs_module_child_count(m) >= 0 && !strchr(s, '.') ? gs_module_child(m, s) : GS_NO_MODULE;
      gs_clear_error();
      /* The same module under the same name again is nothing new; anything else gets a slot
       * (a module may be in several, as in PyTorch: self.a = lin; self.b = lin). */
      if (there.id != child.id && (put_child((gsp_module *)self, s, (gsp_module *)value, -1) < 0 ||
                                   sync_children((gsp_module *)self, value) < 0))
        return -1;
    } else if (gs_is_parameter(gsp_handle(value))) {
      gs_module_register_parameter(m, s, gsp_handle(value));
      if (!gsp_check_void())
        return -1;
      gsp_tensor_keep(value, ((gsp_module *)self)->tree); /* the module owns it now */
    } else if (!((gsp_module *)self)->python_defined && !strchr(s, '.')) {
      /* a plain tensor where a built-in's forward reads a parameter that is not there
       * (weight_norm's module.weight): the engine's forward reads it, as torch's does */
      gs_tensor existing = gs_module_parameter(m, s);
      gs_clear_error();
      bool parameter_slot = !gs_tensor_is_none(existing) && gs_is_parameter(existing);
      bool child_slot = gs_module_child(m, s).id != 0;
      gs_clear_error();
      if (!parameter_slot && !child_slot) {
        gs_module_set_computed(m, s, gsp_handle(value));
        if (!gsp_check_void())
          return -1;
      }
    }
  } else if (value && m.id && !((gsp_module *)self)->python_defined && PyUnicode_Check(name)) {
    const char *s = PyUnicode_AsUTF8(name);
    if (s && !strchr(s, '.'))
      gs_module_set_computed(m, s, GS_NO_TENSOR); /* module.weight = None, or any non-tensor */
    gs_clear_error();
  }
  return PyObject_GenericSetAttr(self, name, value);
}

static PyObject *module_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  GSP_SITE();
  gs_module m = gs_module_new(type->tp_name);
  if (m.id == 0)
    return gsp_raise_engine_error();
  gsp_module *o = (gsp_module *)type->tp_alloc(type, 0);
  if (!o) {
    gs_module_dispose(m);
    return NULL;
  }
  o->m = m;
  o->rnn_mode = -1;
  o->rnn_cell = false;
  o->extra_repr = NULL;
  o->dict = NULL;
  o->python_defined = true;
  o->inplace = false;
  o->tree = tree_new(m); /* takes the creation's hold, or lets it go */
  o->children = PyList_New(0);
  if (!o->children || !o->tree) {
    Py_DECREF(o);
    return NULL;
  }
  return (PyObject *)o;
}

static int module_init(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  (void)args;
  (void)kwargs;
  return 0; /* super().__init__(): the engine module was made by __new__ */
}

static Py_ssize_t module_len(PyObject *self) {
  return PyList_GET_SIZE(((gsp_module *)self)->children);
}

static PyObject *module_item(PyObject *self, Py_ssize_t i) {
  PyObject *children = ((gsp_module *)self)->children;
  if (i < 0)
    i += PyList_GET_SIZE(children);
  if (i < 0 || i >= PyList_GET_SIZE(children)) {
    PyErr_SetString(PyExc_IndexError, "module index out of range");
    return NULL;
  }
  return Py_NewRef(PyList_GET_ITEM(children, i));
}

static PySequenceMethods module_as_sequence = {.sq_length = module_len, .sq_item = module_item};

static PyMethodDef module_methods[] = {
    {"forward", GSP_FN(module_forward), METH_VARARGS | METH_KEYWORDS, NULL},
    {"parameters", m_parameters, METH_NOARGS, NULL},
    {"named_parameters", m_named_parameters, METH_NOARGS, NULL},
    {"buffers", m_buffers, METH_NOARGS, "BatchNorm's running estimates (PyTorch's buffers)."},
    {"register_buffer", GSP_FN(m_register_buffer), METH_VARARGS | METH_KEYWORDS,
     "register_buffer(name, tensor, persistent=True)\n--\n\nA tensor the module keeps that is "
     "not a parameter (out of parameters(), in buffers() and, if persistent, state_dict())."},
    {"named_buffers", m_named_buffers, METH_NOARGS, NULL},
    {"_named_children", m_named_children, METH_NOARGS, NULL},
    {"_remove_child", m_remove_child, METH_O, NULL},
    {"_rename_child", m_rename_child, METH_VARARGS, NULL},
    {"_insert_child", m_insert_child, METH_VARARGS, NULL},
    {"state_dict", m_state_dict, METH_NOARGS, "Detached views of the parameters by name."},
    {"load_state_dict", GSP_FN(m_load_state_dict), METH_VARARGS | METH_KEYWORDS, NULL},
    {"train", m_train, METH_VARARGS, NULL},
    {"eval", m_eval, METH_NOARGS, NULL},
    {"zero_grad", GSP_FN(m_zero_grad), METH_VARARGS | METH_KEYWORDS, NULL},
    {"_to_dtype", m_to_dtype, METH_O, NULL},
    {"save_safetensors", m_save_safetensors, METH_O, "The parameters as a safetensors file."},
    {"load_safetensors", GSP_FN(m_load_safetensors), METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

/* Module._init_args: a built-in's (args, kwargs or None) to __init__, or None. */
static PyObject *m_init_args(PyObject *self, void *c) {
  (void)c;
  PyObject *a = ((gsp_module *)self)->init_args;
  return Py_NewRef(a ? a : Py_None);
}

static PyGetSetDef module_getset[] = {
    {"_init_args", m_init_args, NULL, "A built-in module's (args, kwargs) to __init__.", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"training", m_training, NULL, NULL, NULL},
    {"_type_name", m_type_name, NULL, "The engine's type name (\"Linear\")", NULL},
    {"_extra_repr", m_extra_repr_get, NULL, "The arguments print(model) shows", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject module_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.nn.Module",
    .tp_doc = "The base of every layer, as torch.nn.Module: parameters, buffers and sub-modules "
              "registered by attribute, train()/eval(), state_dict(), print(model).",
    .tp_basicsize = sizeof(gsp_module),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_dealloc = module_dealloc,
    .tp_setattro = module_setattro,
    .tp_new = module_new,
    .tp_init = module_init,
    .tp_free = PyObject_GC_Del,
    .tp_traverse = module_traverse,
    .tp_clear = module_clear,
    .tp_call = module_call,
    .tp_repr = module_repr,
    .tp_getattro = module_getattro,
    .tp_as_sequence = &module_as_sequence,
    .tp_methods = module_methods,
    .tp_getset = module_getset,
    .tp_dictoffset = offsetof(gsp_module, dict),
};

/* ---- constructors -------------------------------------------------------------------------- */

/* o (a new module or NULL) with its print(model) arguments; steals extra. */
static PyObject *with_extra_repr(PyObject *o, PyObject *extra) {
  if (!o || !extra) {
    Py_XDECREF(o);
    Py_XDECREF(extra);
    return NULL;
  }
  ((gsp_module *)o)->extra_repr = extra;
  return o;
}

/* A layer's device= (torch's factory keyword): None, 'cpu' ('cpu:0'), or a device object of
 * type 'cpu'; anything else is refused by name, as gradscope computes on the CPU only. */
static bool layer_device_ok(PyObject *device, const char *fn) {
  if (device == Py_None)
    return true;
  PyObject *type =
      PyUnicode_Check(device) ? Py_NewRef(device) : PyObject_GetAttrString(device, "type");
  if (!type)
    PyErr_Clear();
  const char *s = type && PyUnicode_Check(type) ? PyUnicode_AsUTF8(type) : NULL;
  bool cpu = s && (strcmp(s, "cpu") == 0 || strncmp(s, "cpu:", 4) == 0);
  Py_XDECREF(type);
  if (!cpu)
    PyErr_Format(PyExc_RuntimeError,
                 "%s(): gradscope computes on the CPU only, got device=%R (use 'cpu')", fn, device);
  return cpu;
}

/* made (a new layer in the default dtype, or NULL) converted to dtype= (torch's factory
 * keyword; None keeps the default), or NULL raised. */
static PyObject *in_layer_dtype(PyObject *made, PyObject *dtype_obj) {
  gs_dtype dtype = gsp_default_dtype();
  if (!made || dtype_obj == Py_None)
    return made;
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0) {
    Py_DECREF(made);
    return NULL;
  }
  if (dtype != gsp_default_dtype() && gs_module_to_dtype(((gsp_module *)made)->m, dtype) < 0) {
    Py_DECREF(made);
    return gsp_raise_engine_error();
  }
  return made;
}

/* nn.Linear(in_features, out_features, bias=True, device=None, dtype=None). */
static PyObject *f_linear_module(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long in, out;
  int bias = 1;
  PyObject *device = Py_None, *dtype_obj = Py_None;
  static char *kwlist[] = {"in_features", "out_features", "bias", "device", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL|pOO:Linear", kwlist, &in, &out, &bias, &device,
                                   &dtype_obj) ||
      !layer_device_ok(device, "Linear"))
    return NULL;
  PyObject *o = in_layer_dtype(wrap_module(gs_linear_new(in, out, bias, NULL), NULL), dtype_obj);
  return o ? with_extra_repr(o, PyUnicode_FromFormat("in_features=%lld, out_features=%lld, bias=%s",
                                                     in, out, bias ? "True" : "False"))
           : NULL;
}

int gsp_int_pair(PyObject *o, int64_t *out, const char *what);
int gsp_conv2d_string_padding(const char *fn, PyObject *padding, const int64_t *kernel,
                              const int64_t *stride, const int64_t *dilation, int64_t *near,
                              int64_t *far_extra);

/* A plain attribute torch's layer has (conv.kernel_size, ...), kept in the made object's dict
 * for builtin_init to move into the instance; steals value. */
static int set_plain_attribute(PyObject *o, const char *name, PyObject *value) {
  PyObject *key = PyUnicode_FromString(name);
  int rc = key && value ? PyObject_GenericSetAttr(o, key, value) : -1;
  Py_XDECREF(key);
  Py_XDECREF(value);
  return rc;
}

static const char *const padding_modes[] = {"zeros", "reflect", "replicate", "circular"};

/* nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
 * bias=True, padding_mode='zeros', device=None, dtype=None), initialised as PyTorch's
 * (gs_conv2d_new_with). As torch's, a padding_mode other than zeros pads the input by
 * _reversed_padding_repeated_twice in F.pad's mode and convolves with padding 0, and
 * padding='same' whose zeros do not split evenly puts the odd one on the far side first; the
 * engine's layer does both (its border). torch's attributes are plain ones, as there. */
static PyObject *f_Conv2d(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long in, out, groups = 1;
  PyObject *kernel, *stride = Py_None, *padding = Py_None, *dilation = Py_None;
  PyObject *device = Py_None, *dtype_obj = Py_None;
  int bias = 1;
  const char *mode_name = "zeros";
  static char *kwlist[] = {"in_channels",  "out_channels", "kernel_size", "stride",
                           "padding",      "dilation",     "groups",      "bias",
                           "padding_mode", "device",       "dtype",       NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLO|OOOLpsOO:Conv2d", kwlist, &in, &out, &kernel,
                                   &stride, &padding, &dilation, &groups, &bias, &mode_name,
                                   &device, &dtype_obj) ||
      !layer_device_ok(device, "Conv2d"))
    return NULL;
  gs_conv2d_layer_options lo = {.conv = {{1, 1}, {0, 0}, {1, 1}, groups}};
  int mode = 0;
  while (mode < 4 && strcmp(mode_name, padding_modes[mode]) != 0)
    mode++;
  if (mode == 4) {
    PyErr_Format(PyExc_ValueError,
                 "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but "
                 "got padding_mode='%s'",
                 mode_name);
    return NULL;
  }
  lo.padding_mode = (gs_padding_mode)mode;
  gs_conv2d_options *opt = &lo.conv;
  int64_t k[2] = {0, 0}, far[2] = {0, 0};
  bool text = PyUnicode_Check(padding);
  if (gsp_int_pair(kernel, k, "kernel_size") < 0 ||
      gsp_int_pair(stride, opt->stride, "stride") < 0 ||
      (!text && gsp_int_pair(padding, opt->padding, "padding") < 0) ||
      gsp_int_pair(dilation, opt->dilation, "dilation") < 0)
    return NULL;
  if (text && gsp_conv2d_string_padding("Conv2d", padding, k, opt->stride, opt->dilation,
                                        opt->padding, far) < 0)
    return NULL;
  /* torch's _reversed_padding_repeated_twice: (left, right) of the width, then of the height */
  int64_t sides[4] = {opt->padding[1], opt->padding[1] + far[1], opt->padding[0],
                      opt->padding[0] + far[0]};
  if (lo.padding_mode == GS_PADDING_ZEROS) { /* only the uneven 'same' zero goes first */
    lo.pad[1] = far[1], lo.pad[3] = far[0];
  } else {
    memcpy(lo.pad, sides, sizeof sides);
    opt->padding[0] = opt->padding[1] = 0;
  }
  PyObject *o = in_layer_dtype(
      wrap_module(gs_conv2d_new_with(in, out, k[0], k[1], &lo, bias, NULL), NULL), dtype_obj);
  if (!o)
    return NULL;
  int64_t shown[2] = {sides[2], sides[0]}; /* the padding as given (near side) */
  if (set_plain_attribute(o, "in_channels", PyLong_FromLongLong(in)) < 0 ||
      set_plain_attribute(o, "out_channels", PyLong_FromLongLong(out)) < 0 ||
      set_plain_attribute(o, "kernel_size",
                          Py_BuildValue("(LL)", (long long)k[0], (long long)k[1])) < 0 ||
      set_plain_attribute(
          o, "stride",
          Py_BuildValue("(LL)", (long long)opt->stride[0], (long long)opt->stride[1])) < 0 ||
      set_plain_attribute(o, "padding",
                          text ? Py_NewRef(padding)
                               : Py_BuildValue("(LL)", (long long)shown[0], (long long)shown[1])) <
          0 ||
      set_plain_attribute(
          o, "dilation",
          Py_BuildValue("(LL)", (long long)opt->dilation[0], (long long)opt->dilation[1])) < 0 ||
      set_plain_attribute(o, "transposed", Py_NewRef(Py_False)) < 0 ||
      set_plain_attribute(o, "output_padding", Py_BuildValue("(ii)", 0, 0)) < 0 ||
      set_plain_attribute(o, "groups", PyLong_FromLongLong(groups)) < 0 ||
      set_plain_attribute(o, "padding_mode", PyUnicode_FromString(mode_name)) < 0 ||
      set_plain_attribute(o, "_reversed_padding_repeated_twice",
                          Py_BuildValue(text ? "[LLLL]" : "(LLLL)", (long long)sides[0],
                                        (long long)sides[1], (long long)sides[2],
                                        (long long)sides[3])) < 0) {
    Py_DECREF(o);
    return NULL;
  }
  /* PyTorch's Conv2d.extra_repr: padding, dilation, groups, bias and padding_mode only when not
   * default. */
  PyObject *e = PyUnicode_FromFormat("%lld, %lld, kernel_size=(%lld, %lld), stride=(%lld, %lld)",
                                     in, out, (long long)k[0], (long long)k[1],
                                     (long long)opt->stride[0], (long long)opt->stride[1]);
  if (e && text) /* torch shows the string it was given */
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", padding=%U", padding));
  else if (e && (shown[0] || shown[1]))
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", padding=(%lld, %lld)", (long long)shown[0],
                                                    (long long)shown[1]));
  if (e && (opt->dilation[0] != 1 || opt->dilation[1] != 1))
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", dilation=(%lld, %lld)",
                                                    (long long)opt->dilation[0],
                                                    (long long)opt->dilation[1]));
  if (e && groups != 1)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", groups=%lld", groups));
  if (e && !bias)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", bias=False"));
  if (e && lo.padding_mode != GS_PADDING_ZEROS)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", padding_mode=%s", mode_name));
  return with_extra_repr(o, e);
}

/* A momentum argument: a number in [0, 1] as given, None as NAN (a cumulative average). 1, or
 * 0 with an exception. */
static int momentum_converter(PyObject *o, void *out) {
  if (o == Py_None) {
    *(double *)out = NAN;
    return 1;
  }
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred())
    return 0;
  *(double *)out = v;
  return 1;
}

/* nn.BatchNorm1d / 2d / 3d(num_features, eps=1e-5, momentum=0.1, affine=True,
 * track_running_stats=True): torch's options (gs_batch_norm_options). The Python classes read
 * and change eps and momentum through _batch_norm_options and _batch_norm_configure, and print
 * them as they are then (nn/layer_attributes.py). */
static PyObject *batch_norm_module(PyObject *args, PyObject *kwargs, int spatial, const char *fn) {
  GSP_SITE();
  long long features;
  gs_batch_norm_options o = gs_batch_norm_defaults();
  int affine = 1, track = 1;
  PyObject *device = Py_None, *dtype_obj = Py_None;
  static char *kwlist[] = {"num_features",        "eps",    "momentum", "affine",
                           "track_running_stats", "device", "dtype",    NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L|dO&ppOO", kwlist, &features, &o.eps,
                                   momentum_converter, &o.momentum, &affine, &track, &device,
                                   &dtype_obj) ||
      !layer_device_ok(device, fn))
    return NULL;
  o.affine = affine;
  o.track_running_stats = track;
  gs_module m = gs_batch_norm_new_with(spatial, features, &o);
  /* Its running estimates are buffers to Python, as torch's (the engine keeps them as
   * parameters that never require grad). */
  static const char *const estimates[] = {"running_mean", "running_var", "num_batches_tracked"};
  for (size_t k = 0; m.id && track && k < sizeof estimates / sizeof *estimates; k++) {
    gs_tensor e = gs_module_parameter(m, estimates[k]);
    if (!gs_tensor_is_none(e) && note_buffer(e, true) < 0)
      return NULL;
  }
  gs_clear_error();
  return in_layer_dtype(wrap_module(m, NULL), dtype_obj);
}

/* _batch_norm_options(module): {"num_features", "eps", "momentum" (None for a cumulative
 * average), "affine", "track_running_stats"} of a BatchNorm layer as they are now. */
static PyObject *f_batch_norm_options(PyObject *mod, PyObject *layer) {
  (void)mod;
  GSP_SITE();
  gs_batch_norm_options o;
  gs_clear_error();
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a BatchNorm module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  int64_t features = gs_batch_norm_num_features(gsp_module_handle(layer));
  if (features < 0 || !gs_batch_norm_get_options(gsp_module_handle(layer), &o))
    return gsp_raise_engine_error();
  PyObject *momentum = isnan(o.momentum) ? Py_NewRef(Py_None) : PyFloat_FromDouble(o.momentum);
  if (!momentum)
    return NULL;
  return Py_BuildValue("{s:L,s:d,s:N,s:O,s:O}", "num_features", (long long)features, "eps", o.eps,
                       "momentum", momentum, "affine", o.affine ? Py_True : Py_False,
                       "track_running_stats", o.track_running_stats ? Py_True : Py_False);
}

/* _dropout_p(module) / _dropout_set_p(module, p): a Dropout's p, read and changed (torch
 * reads dropout.p at each call); _module_inplace(module): its inplace flag. */
static PyObject *f_dropout_p(PyObject *mod, PyObject *layer) {
  (void)mod;
  GSP_SITE();
  gs_clear_error();
  double p = gsp_is_module(layer) ? gs_dropout_p(gsp_module_handle(layer)) : -1.0;
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a Dropout module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  return p < 0 ? gsp_raise_engine_error() : PyFloat_FromDouble(p);
}

static PyObject *f_dropout_set_p(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *layer;
  double p;
  if (!PyArg_ParseTuple(args, "Od:_dropout_set_p", &layer, &p))
    return NULL;
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a Dropout module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  gs_clear_error();
  if (!gs_dropout_set_p(gsp_module_handle(layer), p))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyObject *f_module_inplace(PyObject *mod, PyObject *layer) {
  (void)mod;
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  return PyBool_FromLong(((gsp_module *)layer)->inplace);
}

/* _batch_norm_configure(module, eps, momentum): later forwards use them (momentum None: a
 * cumulative average), as torch reads bn.eps and bn.momentum at each forward. */
static PyObject *f_batch_norm_configure(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *layer;
  double eps, momentum;
  if (!PyArg_ParseTuple(args, "OdO&:_batch_norm_configure", &layer, &eps, momentum_converter,
                        &momentum))
    return NULL;
  gs_batch_norm_options o;
  gs_clear_error();
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a BatchNorm module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  if (!gs_batch_norm_get_options(gsp_module_handle(layer), &o))
    return gsp_raise_engine_error();
  o.eps = eps;
  o.momentum = momentum;
  if (!gs_batch_norm_set_options(gsp_module_handle(layer), &o))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}
static PyObject *f_BatchNorm1d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return batch_norm_module(a, k, 1, "BatchNorm1d"); }
static PyObject *f_BatchNorm2d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return batch_norm_module(a, k, 2, "BatchNorm2d"); }
static PyObject *f_BatchNorm3d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return batch_norm_module(a, k, 3, "BatchNorm3d"); }

#define SIMPLE_MODULE(name, call)                                                              \
  static PyObject *f_##name(PyObject *mod, PyObject *unused) {                                 \
    (void)mod;                                                                                 \
    (void)unused;                                                                              \
    GSP_SITE();                                                                                \
    return wrap_module(call(), NULL);                                                          \
  }
SIMPLE_MODULE(ReLU, gs_relu_new)
SIMPLE_MODULE(Tanh, gs_tanh_new)
SIMPLE_MODULE(Sigmoid, gs_sigmoid_new)
SIMPLE_MODULE(GELU, gs_gelu_new)

static PyObject *f_Dropout(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  double p = 0.5;
  int inplace = 0;
  static char *kwlist[] = {"p", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|dp:Dropout", kwlist, &p, &inplace))
    return NULL;
  PyObject *o = wrap_module(gs_dropout_new(p, NULL), NULL);
  if (!o)
    return NULL;
  ((gsp_module *)o)->inplace = inplace; /* writes into its input, as torch's */
  /* torch's text: Dropout(p=0.1, inplace=False) */
  PyObject *p_obj = PyFloat_FromDouble(p);
  PyObject *e =
      p_obj ? PyUnicode_FromFormat("p=%R, inplace=%s", p_obj, inplace ? "True" : "False") : NULL;
  Py_XDECREF(p_obj);
  return with_extra_repr(o, e);
}

/* Raises gradscope's "WHAT is not supported by gradscope yet" (gradscope._missing). */
static PyObject *raise_not_supported(const char *what) {
  PyObject *missing = PyImport_ImportModule("gradscope._missing");
  PyObject *e = missing ? PyObject_CallMethod(missing, "not_supported", "s", what) : NULL;
  Py_XDECREF(missing);
  if (e) {
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
  }
  return NULL;
}

/* Embedding's optional float (None or a number) into *out, NaN for None. */
static int optional_real(PyObject *o, void *out) {
  double v = o == Py_None ? (double)NAN : PyFloat_AsDouble(o);
  if (o != Py_None && v == -1.0 && PyErr_Occurred())
    return 0;
  *(double *)out = v;
  return 1;
}

/* nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
 * scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None,
 * dtype=None): torch's options (gs_embedding_options; a negative padding_idx counts from the
 * end). The Python class reads and changes them through _embedding_options and
 * _embedding_configure (nn/layer_attributes.py). sparse gradients are not supported. */
static PyObject *f_Embedding(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long n, dim;
  PyObject *padding = Py_None, *weight = Py_None, *device = Py_None, *dtype_obj = Py_None;
  double max_norm = NAN, norm_type = 2.0;
  int scale = 0, sparse = 0, freeze = 0;
  static char *kwlist[] = {"num_embeddings", "embedding_dim", "padding_idx",
                           "max_norm",       "norm_type",     "scale_grad_by_freq",
                           "sparse",         "_weight",       "_freeze",
                           "device",         "dtype",         NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL|OO&dppOpOO:Embedding", kwlist, &n, &dim,
                                   &padding, optional_real, &max_norm, &norm_type, &scale, &sparse,
                                   &weight, &freeze, &device, &dtype_obj) ||
      !layer_device_ok(device, "Embedding"))
    return NULL;
  if (sparse)
    return raise_not_supported("torch.nn.Embedding(sparse=True) (sparse gradients)");
  gs_embedding_options o = gs_embedding_defaults();
  if (padding != Py_None) {
    long long p = PyLong_AsLongLong(padding);
    if (p == -1 && PyErr_Occurred())
      return NULL;
    if (p < -n || p >= n) {
      PyErr_SetString(PyExc_AssertionError, "Padding_idx must be within num_embeddings");
      return NULL;
    }
    o.padding_idx = p < 0 ? p + n : p;
  }
  o.max_norm = isnan(max_norm) ? 0.0 : max_norm;
  o.norm_type = norm_type;
  o.scale_grad_by_freq = scale;
  gs_dtype dtype = gsp_default_dtype();
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0)
    return NULL;
  if (weight != Py_None && !gsp_is_tensor(weight)) {
    PyErr_Format(PyExc_TypeError, "Embedding(): _weight must be a Tensor, got %s",
                 Py_TYPE(weight)->tp_name);
    return NULL;
  }
  if (weight != Py_None) {
    gs_tensor w = gsp_handle(weight);
    if (gs_ndim(w) != 2 || gs_size(w, 0) != n || gs_size(w, 1) != dim) {
      PyErr_SetString(PyExc_AssertionError,
                      "Shape of weight does not match num_embeddings and embedding_dim");
      return NULL;
    }
    dtype = gs_dtype_of(w);
  }
  gs_module m = gs_embedding_new_with(n, dim, &o, NULL);
  PyObject *made = wrap_module(m, NULL); /* in the default dtype */
  if (made && dtype != gsp_default_dtype() && gs_module_to_dtype(m, dtype) < 0) {
    Py_DECREF(made);
    return gsp_raise_engine_error();
  }
  if (made && weight != Py_None) { /* torch's from_pretrained path: the given values */
    gs_tensor w = gs_module_parameter(m, "weight");
    gs_clear_error();
    gs_no_grad_begin();
    gs_copy_(w, gsp_handle(weight));
    gs_no_grad_end();
    if (freeze)
      gs_set_requires_grad(w, false);
    if (!gsp_check_void())
      Py_CLEAR(made);
  }
  return made;
}

/* _embedding_options(module): {"padding_idx" (None for none), "max_norm" (None for none),
 * "norm_type", "scale_grad_by_freq"} of an Embedding as they are now. */
static PyObject *f_embedding_options(PyObject *mod, PyObject *layer) {
  (void)mod;
  GSP_SITE();
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected an Embedding module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  gs_clear_error();
  gs_embedding_options o;
  if (!gs_embedding_get_options(gsp_module_handle(layer), &o))
    return gsp_raise_engine_error();
  PyObject *padding = o.padding_idx < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(o.padding_idx);
  PyObject *max_norm = o.max_norm > 0 ? PyFloat_FromDouble(o.max_norm) : Py_NewRef(Py_None);
  if (!padding || !max_norm) {
    Py_XDECREF(padding);
    Py_XDECREF(max_norm);
    return NULL;
  }
  return Py_BuildValue("{s:N,s:N,s:d,s:O}", "padding_idx", padding, "max_norm", max_norm,
                       "norm_type", o.norm_type, "scale_grad_by_freq",
                       o.scale_grad_by_freq ? Py_True : Py_False);
}

/* _embedding_configure(module, padding_idx, max_norm, norm_type, scale_grad_by_freq): later
 * forwards use them (padding_idx and max_norm None for none), as torch reads its attributes
 * at each forward. */
static PyObject *f_embedding_configure(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *layer, *padding;
  double max_norm, norm_type;
  int scale;
  if (!PyArg_ParseTuple(args, "OOO&dp:_embedding_configure", &layer, &padding, optional_real,
                        &max_norm, &norm_type, &scale))
    return NULL;
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected an Embedding module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  gs_embedding_options o = {.padding_idx = -1,
                            .max_norm = isnan(max_norm) ? 0.0 : max_norm,
                            .norm_type = norm_type,
                            .scale_grad_by_freq = scale};
  if (padding != Py_None && (o.padding_idx = PyLong_AsLongLong(padding)) == -1 && PyErr_Occurred())
    return NULL;
  gs_clear_error();
  if (!gs_embedding_set_options(gsp_module_handle(layer), &o))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

/* nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=None):
 * normalized_shape an int or a sequence of ints (the input's last dims). Its attributes and
 * print text come from the engine (_layer_norm_options, nn/layer_attributes.py). */
static PyObject *f_LayerNorm(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  PyObject *shape, *device = Py_None, *dtype_obj = Py_None;
  double eps = 1e-5;
  int affine = 1;
  static char *kwlist[] = {"normalized_shape", "eps",   "elementwise_affine",
                           "device",           "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dpOO:LayerNorm", kwlist, &shape, &eps, &affine,
                                   &device, &dtype_obj) ||
      !layer_device_ok(device, "LayerNorm"))
    return NULL;
  int64_t dims[GS_MAX_DIMS];
  int k = 1;
  if (PyLong_Check(shape)) {
    dims[0] = PyLong_AsLongLong(shape);
    if (PyErr_Occurred())
      return NULL;
  } else if ((k = gsp_shape_from_sequence(shape, dims)) < 0) {
    return NULL;
  }
  gs_dtype dtype = gsp_default_dtype();
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0)
    return NULL;
  gs_module m = gs_layer_norm_new_with(dims, k, affine, eps);
  PyObject *o = wrap_module(m, NULL); /* in the default dtype */
  if (o && dtype != gsp_default_dtype() && gs_module_to_dtype(m, dtype) < 0) {
    Py_DECREF(o);
    return gsp_raise_engine_error();
  }
  return o;
}

/* _layer_norm_options(module): {"normalized_shape" (a tuple), "eps", "elementwise_affine"} of a
 * LayerNorm as they are now. */
static PyObject *f_layer_norm_options(PyObject *mod, PyObject *layer) {
  (void)mod;
  GSP_SITE();
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a LayerNorm module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  gs_clear_error();
  gs_module m = gsp_module_handle(layer);
  int64_t dims[GS_MAX_DIMS];
  int k = gs_layer_norm_normalized_shape(m, dims);
  if (k < 0)
    return gsp_raise_engine_error();
  PyObject *shape = PyTuple_New(k);
  for (int d = 0; shape && d < k; d++) {
    PyObject *v = PyLong_FromLongLong(dims[d]);
    if (!v) {
      Py_CLEAR(shape);
      break;
    }
    PyTuple_SET_ITEM(shape, d, v);
  }
  if (!shape)
    return NULL;
  bool affine = gs_module_parameter(m, "weight").id != 0;
  return Py_BuildValue("{s:N,s:d,s:O}", "normalized_shape", shape, "eps", gs_layer_norm_eps(m),
                       "elementwise_affine", affine ? Py_True : Py_False);
}

/* _layer_norm_set_eps(module, eps): later forwards use it, as torch reads ln.eps at each. */
static PyObject *f_layer_norm_set_eps(PyObject *mod, PyObject *args) {
  (void)mod;
  GSP_SITE();
  PyObject *layer;
  double eps;
  if (!PyArg_ParseTuple(args, "Od:_layer_norm_set_eps", &layer, &eps))
    return NULL;
  if (!gsp_is_module(layer)) {
    PyErr_Format(PyExc_TypeError, "expected a LayerNorm module, got %s", Py_TYPE(layer)->tp_name);
    return NULL;
  }
  gs_clear_error();
  if (!gs_layer_norm_set_eps(gsp_module_handle(layer), eps))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

/* nn.RNN, nn.LSTM, nn.GRU with PyTorch's arguments. */
static PyObject *recurrent(PyObject *args, PyObject *kwargs, int mode, const char *fn) {
  GSP_SITE();
  long long in, hidden, layers = 1;
  int bias = 1, batch_first = 0, bidirectional = 0;
  double dropout = 0.0;
  const char *nonlinearity = "tanh";
  PyObject *device = Py_None, *dtype_obj = Py_None;
  static char *kwlist[] = {"input_size", "hidden_size",   "num_layers",   "bias",   "batch_first",
                           "dropout",    "bidirectional", "nonlinearity", "device", "dtype",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL|Lppdp$sOO", kwlist, &in, &hidden, &layers,
                                   &bias, &batch_first, &dropout, &bidirectional, &nonlinearity,
                                   &device, &dtype_obj) ||
      !layer_device_ok(device, fn))
    return NULL;
  gs_rnn_options opt = GS_RNN_OPTIONS_DEFAULT;
  opt.num_layers = layers, opt.bias = bias, opt.batch_first = batch_first;
  opt.dropout = dropout, opt.bidirectional = bidirectional;
  if (gsp_dtype_from_object(dtype_obj, &opt.dtype) < 0)
    return NULL;
  if (mode == GS_RNN_TANH && strcmp(nonlinearity, "relu") == 0)
    mode = GS_RNN_RELU;
  else if (mode == GS_RNN_TANH && strcmp(nonlinearity, "tanh") != 0) {
    PyErr_Format(PyExc_ValueError, "%s(): nonlinearity must be 'tanh' or 'relu', not '%s'", fn,
                 nonlinearity);
    return NULL;
  }
  PyObject *o = wrap_module(gs_rnn_new((gs_rnn_mode)mode, in, hidden, &opt), NULL);
  if (!o)
    return NULL;
  ((gsp_module *)o)->rnn_mode = mode;
  /* torch's RNNBase.extra_repr: the sizes, then what differs from the defaults */
  PyObject *e = PyUnicode_FromFormat("%lld, %lld", in, hidden);
  if (e && layers != 1)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", num_layers=%lld", layers));
  if (e && !bias)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", bias=False"));
  if (e && batch_first)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", batch_first=True"));
  if (e && dropout != 0.0) { /* the float's repr, as torch prints it (0.5, not 0.500000) */
    PyObject *p = PyFloat_FromDouble(dropout);
    PyUnicode_AppendAndDel(&e, p ? PyUnicode_FromFormat(", dropout=%R", p) : NULL);
    Py_XDECREF(p);
  }
  if (e && bidirectional)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", bidirectional=True"));
  return with_extra_repr(o, e);
}

/* nn.RNNCell, nn.LSTMCell, nn.GRUCell with PyTorch's arguments (RNNCell's nonlinearity only). */
static PyObject *cell(PyObject *args, PyObject *kwargs, int mode, const char *format) {
  GSP_SITE();
  long long in, hidden;
  int bias = 1;
  const char *nonlinearity = "tanh";
  PyObject *device = Py_None, *dtype_obj = Py_None;
  static char *kwlist[] = {"input_size", "hidden_size", "bias", "device", "dtype", NULL};
  static char *rnn_kwlist[] = {"input_size", "hidden_size", "bias", "nonlinearity",
                               "device",     "dtype",       NULL};
  bool rnn = mode == GS_RNN_TANH;
  if (rnn ? !PyArg_ParseTupleAndKeywords(args, kwargs, format, rnn_kwlist, &in, &hidden, &bias,
                                         &nonlinearity, &device, &dtype_obj)
          : !PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &in, &hidden, &bias, &device,
                                         &dtype_obj))
    return NULL;
  if (!layer_device_ok(device, rnn ? "RNNCell" : mode == GS_RNN_LSTM ? "LSTMCell" : "GRUCell"))
    return NULL;
  gs_dtype dtype = gsp_default_dtype();
  if (gsp_dtype_from_object(dtype_obj, &dtype) < 0)
    return NULL;
  if (rnn && strcmp(nonlinearity, "relu") == 0)
    mode = GS_RNN_RELU;
  else if (rnn && strcmp(nonlinearity, "tanh") != 0) {
    PyErr_Format(PyExc_ValueError, "Unknown nonlinearity: %s", nonlinearity);
    return NULL;
  }
  PyObject *o =
      wrap_module(gs_rnn_cell_new((gs_rnn_mode)mode, in, hidden, bias, dtype, NULL), NULL);
  if (!o)
    return NULL;
  ((gsp_module *)o)->rnn_mode = mode;
  ((gsp_module *)o)->rnn_cell = true;
  PyObject *e = PyUnicode_FromFormat("%lld, %lld", in, hidden);
  if (e && !bias)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", bias=False"));
  if (e && mode == GS_RNN_RELU)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", nonlinearity=relu"));
  return with_extra_repr(o, e);
}
static PyObject *f_RNNCell(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  return cell(a, k, GS_RNN_TANH, "LL|psOO:RNNCell");
}
static PyObject *f_LSTMCell(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  return cell(a, k, GS_RNN_LSTM, "LL|pOO:LSTMCell");
}
static PyObject *f_GRUCell(PyObject *m, PyObject *a, PyObject *k) {
  (void)m;
  return cell(a, k, GS_RNN_GRU, "LL|pOO:GRUCell");
}
static PyObject *f_RNN(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_TANH, "RNN"); }
static PyObject *f_LSTM(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_LSTM, "LSTM"); }
static PyObject *f_GRU(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_GRU, "GRU"); }

/* nn.Sequential(*modules) or nn.Sequential(OrderedDict) (children under its keys, as torch's;
 * what slicing a Sequential makes). Each slot gets a hold of its own (put_child), so a module
 * may be in several Sequentials, or twice in one, and its object keeps it. */
static PyObject *f_Sequential(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  PyObject *items = NULL; /* [(name or NULL, module)] */
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n == 1 && PyDict_Check(PyTuple_GET_ITEM(args, 0))) {
    items = PyDict_Items(PyTuple_GET_ITEM(args, 0));
  } else {
    items = PyList_New(n);
    for (Py_ssize_t i = 0; items && i < n; i++)
      PyList_SET_ITEM(items, i, Py_BuildValue("(OO)", Py_None, PyTuple_GET_ITEM(args, i)));
  }
  if (!items)
    return NULL;
  n = PyList_GET_SIZE(items);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *pair = PyList_GET_ITEM(items, i);
    if (!pair || !PyTuple_Check(pair) ||
        !PyObject_TypeCheck(PyTuple_GET_ITEM(pair, 1), &module_type)) {
      Py_DECREF(items);
      PyErr_Format(PyExc_TypeError, "Sequential(): argument %zd is not a module", i);
      return NULL;
    }
  }
  PyObject *o = wrap_module(gs_sequential_new(NULL, 0), NULL);
  for (Py_ssize_t i = 0; o && i < n; i++) {
    PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
    PyObject *child = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
    PyObject *name = key == Py_None ? PyUnicode_FromFormat("%zd", i) : PyObject_Str(key);
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    if (!s || put_child((gsp_module *)o, s, (gsp_module *)child, -1) < 0 ||
        sync_children((gsp_module *)o, child) < 0)
      Py_CLEAR(o);
    Py_XDECREF(name);
  }
  Py_DECREF(items);
  return o;
}

bool gsp_is_module(PyObject *o) { return PyObject_TypeCheck(o, &module_type); }
gs_module gsp_module_handle(PyObject *o) { return ((gsp_module *)o)->m; }

/* nn.Parameter(t, requires_grad=True): the engine's parameter, made by moving t's handle
 * (gs_parameter_new), so t's object is stale from now on, as the engine's rule says. */
static PyObject *f_Parameter(PyObject *mod, PyObject *args, PyObject *kwargs) {
  (void)mod;
  GSP_SITE();
  PyObject *t;
  int requires_grad = 1;
  static char *kwlist[] = {"data", "requires_grad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p:Parameter", kwlist, &gsp_tensor_type, &t,
                                   &requires_grad))
    return NULL;
  return gsp_wrap(gs_parameter_new(gsp_handle(t), requires_grad));
}

static PyMethodDef nn_functions[] = {
    {"_Parameter", GSP_FN(f_Parameter), METH_VARARGS | METH_KEYWORDS, NULL},
    {"_batch_norm_options", GSP_FN(f_batch_norm_options), METH_O, NULL},
    {"_layer_norm_options", GSP_FN(f_layer_norm_options), METH_O, NULL},
    {"_embedding_options", GSP_FN(f_embedding_options), METH_O, NULL},
    {"_embedding_configure", GSP_FN(f_embedding_configure), METH_VARARGS, NULL},
    {"_layer_norm_set_eps", GSP_FN(f_layer_norm_set_eps), METH_VARARGS, NULL},
    {"_batch_norm_configure", GSP_FN(f_batch_norm_configure), METH_VARARGS, NULL},
    {"_dropout_p", GSP_FN(f_dropout_p), METH_O, NULL},
    {"_dropout_set_p", GSP_FN(f_dropout_set_p), METH_VARARGS, NULL},
    {"_module_inplace", GSP_FN(f_module_inplace), METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- the built-in modules as classes ---------------------------------------------------------
 *
 * nn.Linear, nn.Conv2d, ... are classes, subclasses of nn.Module, so isinstance(m, nn.Linear)
 * and `class Head(nn.Linear)` work as in PyTorch. As there, the object is made empty and
 * __init__ makes the engine module: a subclass may take other arguments and call
 * super().__init__(in, out). The makers below build a module object; __init__ moves what it
 * holds (the engine module, its tree, children, print(model) text) into self. */
static PyMethodDef builtin_makers[] = {
    {"Linear", GSP_FN(f_linear_module), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Conv2d", GSP_FN(f_Conv2d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"BatchNorm1d", GSP_FN(f_BatchNorm1d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"BatchNorm2d", GSP_FN(f_BatchNorm2d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"BatchNorm3d", GSP_FN(f_BatchNorm3d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"ReLU", f_ReLU, METH_NOARGS, NULL},
    {"Tanh", f_Tanh, METH_NOARGS, NULL},
    {"Sigmoid", f_Sigmoid, METH_NOARGS, NULL},
    {"GELU", f_GELU, METH_NOARGS, NULL},
    {"Dropout", GSP_FN(f_Dropout), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Embedding", GSP_FN(f_Embedding), METH_VARARGS | METH_KEYWORDS, NULL},
    {"LayerNorm", GSP_FN(f_LayerNorm), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Sequential", f_Sequential, METH_VARARGS, NULL},
    {"RNN", GSP_FN(f_RNN), METH_VARARGS | METH_KEYWORDS, NULL},
    {"LSTM", GSP_FN(f_LSTM), METH_VARARGS | METH_KEYWORDS, NULL},
    {"GRU", GSP_FN(f_GRU), METH_VARARGS | METH_KEYWORDS, NULL},
    {"RNNCell", GSP_FN(f_RNNCell), METH_VARARGS | METH_KEYWORDS, NULL},
    {"LSTMCell", GSP_FN(f_LSTMCell), METH_VARARGS | METH_KEYWORDS, NULL},
    {"GRUCell", GSP_FN(f_GRUCell), METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

enum { N_BUILTINS = sizeof builtin_makers / sizeof builtin_makers[0] - 1 };
static PyTypeObject *builtin_types[N_BUILTINS];

static PyObject *builtin_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  gsp_module *o = (gsp_module *)type->tp_alloc(type, 0);
  if (!o)
    return NULL;
  o->m = (gs_module){0};
  o->rnn_mode = -1;
  o->rnn_cell = false;
  o->python_defined = false;
  o->inplace = false;
  if (!(o->children = PyList_New(0))) {
    Py_DECREF(o);
    return NULL;
  }
  return (PyObject *)o;
}

/* The maker of the built-in class nearest self's class (Linear for a subclass of Linear). */
static const PyMethodDef *maker_of(PyObject *self) {
  PyObject *mro = Py_TYPE(self)->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++)
    for (int k = 0; k < N_BUILTINS; k++)
      if (PyTuple_GET_ITEM(mro, i) == (PyObject *)builtin_types[k])
        return &builtin_makers[k];
  return NULL;
}

/* The activations' arguments PyTorch has: ReLU(inplace=False), GELU(approximate='none' or
 * 'tanh'; *approximate is set for GELU only). */
static bool activation_args(const char *name, PyObject *args, PyObject *kwargs, bool *inplace,
                            const char **approximate) {
  static char *relu_kw[] = {"inplace", NULL}, *gelu_kw[] = {"approximate", NULL}, *none[] = {NULL};
  int flag = 0;
  char format[64];
  *approximate = NULL;
  if (strcmp(name, "ReLU") == 0) {
    snprintf(format, sizeof format, "|p:%s", name);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, relu_kw, &flag))
      return false;
  } else if (strcmp(name, "GELU") == 0) {
    *approximate = "none";
    snprintf(format, sizeof format, "|s:%s", name);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, gelu_kw, approximate))
      return false;
    if (strcmp(*approximate, "none") != 0 && strcmp(*approximate, "tanh") != 0) {
      PyErr_SetString(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
      return false;
    }
  } else {
    snprintf(format, sizeof format, ":%s", name);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, none))
      return false;
  }
  *inplace = flag;
  return true;
}

static int builtin_init(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  const PyMethodDef *maker = maker_of(self);
  if (!maker) {
    PyErr_SetString(PyExc_TypeError, "not a built-in module class");
    return -1;
  }
  PyObject *made;
  bool inplace = false;
  const char *approximate = NULL;
  if (maker->ml_flags & METH_NOARGS) {
    if (!activation_args(maker->ml_name, args, kwargs, &inplace, &approximate))
      return -1;
    /* ReLU(inplace=True) is the engine's in-place ReLU: it writes into its input, as torch's */
    if (inplace)
      made = wrap_module(gs_relu_inplace_new(), NULL);
    else if (approximate && strcmp(approximate, "tanh") == 0)
      made = wrap_module(gs_gelu_tanh_new(), NULL);
    else
      made = maker->ml_meth(NULL, NULL);
  } else if (maker->ml_flags & METH_KEYWORDS) {
    made = ((PyCFunctionWithKeywords)(void (*)(void))maker->ml_meth)(NULL, args, kwargs);
  } else {
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
      PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", maker->ml_name);
      return -1;
    }
    made = maker->ml_meth(NULL, args);
  }
  if (!made)
    return -1;
  gsp_module *o = (gsp_module *)self, *from = (gsp_module *)made;
  Py_CLEAR(o->tree); /* __init__ again: a new module, as PyTorch's re-made parameters */
  o->m = from->m;
  o->tree = from->tree;
  Py_SETREF(o->children, from->children);
  Py_XSETREF(o->extra_repr, from->extra_repr);
  if (inplace)
    Py_XSETREF(o->extra_repr, PyUnicode_FromString("inplace=True"));
  if (approximate) /* torch's GELU.extra_repr, and its attribute */
    Py_XSETREF(o->extra_repr, PyUnicode_FromFormat("approximate='%s'", approximate));
  o->rnn_mode = from->rnn_mode;
  o->rnn_cell = from->rnn_cell;
  o->inplace = from->inplace;
  Py_XSETREF(o->init_args, Py_BuildValue("(OO)", args, kwargs ? kwargs : Py_None));
  if (from->dict && PyDict_GET_SIZE(from->dict)) { /* torch's plain attributes (Conv2d's) */
    PyObject *dict = PyObject_GenericGetDict(self, NULL);
    int rc = dict ? PyDict_Update(dict, from->dict) : -1;
    Py_XDECREF(dict);
    if (rc < 0) {
      Py_DECREF(made);
      return -1;
    }
  }
  from->m = (gs_module){0};
  from->tree = from->children = from->extra_repr = NULL;
  Py_DECREF(made);
  if (strcmp(maker->ml_name, "LayerNorm") == 0 && gs_module_parameter(o->m, "weight").id == 0) {
    /* torch's LayerNorm without elementwise_affine has weight and bias None */
    gs_clear_error();
    if (PyObject_SetAttrString(self, "weight", Py_None) < 0 ||
        PyObject_SetAttrString(self, "bias", Py_None) < 0)
      return -1;
  }
  if (approximate) {
    PyObject *value = PyUnicode_FromString(approximate);
    int rc = value ? PyObject_SetAttrString(self, "approximate", value) : -1;
    Py_XDECREF(value);
    return rc;
  }
  return 0;
}

static void builtin_dealloc(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  module_dealloc(self);
  Py_DECREF(type); /* a heap type's instances hold it */
}

static int builtin_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  return module_traverse(self, visit, arg);
}

static int add_builtin_classes(PyObject *nn) {
  for (int k = 0; k < N_BUILTINS; k++) {
    char name[64];
    snprintf(name, sizeof name, "gradscope.nn.%s", builtin_makers[k].ml_name);
    PyType_Slot slots[] = {
        {Py_tp_new, builtin_new},
        {Py_tp_init, builtin_init},
        {Py_tp_dealloc, builtin_dealloc},
        {Py_tp_traverse, builtin_traverse},
        {Py_tp_doc, (void *)gsp_doc("nn", builtin_makers[k].ml_name)},
        {0, NULL},
    };
    PyType_Spec spec = {name, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                        slots};
    PyObject *type = PyType_FromSpecWithBases(&spec, (PyObject *)&module_type);
    if (!type)
      return -1;
    builtin_types[k] = (PyTypeObject *)type;
    if (PyModule_AddObjectRef(nn, builtin_makers[k].ml_name, type) < 0)
      return -1; /* builtin_types keeps its reference for the process */
  }
  return 0;
}

/* Makes gradscope.nn (and registers it in sys.modules so `import gradscope.nn` works). */
PyObject *gsp_nn_module(void);
PyObject *gsp_nn_module(void) {
  GSP_SITE();
  if (PyType_Ready(&module_type) < 0 || PyType_Ready(&hold_type) < 0)
    return NULL;
  PyObject *nn = PyModule_New("gradscope.nn");
  if (!nn)
    return NULL;
  str_forward = PyUnicode_InternFromString("forward");
  str_pre_hooks = PyUnicode_InternFromString("_forward_pre_hooks");
  str_hooks = PyUnicode_InternFromString("_forward_hooks");
  engine_forward = PyDict_GetItemWithError(module_type.tp_dict, str_forward);
  if (!str_forward || !str_pre_hooks || !str_hooks || !engine_forward) {
    Py_DECREF(nn);
    return NULL;
  }
  Py_INCREF(engine_forward);
  if (PyModule_AddFunctions(nn, nn_functions) < 0 || add_builtin_classes(nn) < 0 ||
      PyModule_AddObjectRef(nn, "Module", (PyObject *)&module_type) < 0) {
    Py_DECREF(nn);
    return NULL;
  }
  return nn;
}
