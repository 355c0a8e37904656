/* nn.c: gradscope.nn: modules over the engine's gs_module (Linear, Sequential, ReLU, Tanh,
 * Sigmoid, GELU, Dropout, Embedding, LayerNorm, RNN, LSTM, GRU, Conv2d, BatchNorm1d/2d), called as model(x) (the
 * recurrent ones as rnn(x, hx) returning (output, h_n), as PyTorch's), with PyTorch's
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
 * dispose scope; Python objects for them borrow the handles. The engine disposes a module with
 * its whole tree, from the root, so lifetimes go by tree: every module object of a tree holds
 * the tree's object (module_tree), and the engine tree is disposed when the last Python object
 * holding it goes. A parameter's object holds the tree too, so `w = nn.Linear(2, 2).weight`
 * keeps the Linear alive, and `first = seq[0]; del seq` keeps the Sequential's tree. When a
 * root becomes a child (Sequential(...), self.fc = Linear(...)), its tree object joins the
 * parent's: it holds the parent's tree instead of disposing its own root. References only go
 * up (object -> tree -> joined tree), so they make no cycle and a dropped model goes at once.
 */
#include "gs-py.h"

#include <string.h>

/* The life of one engine module tree: disposed with its root when the last object holding it
 * goes, unless it joined a bigger tree (joined: that tree's object, held instead). */
typedef struct {
  PyObject_HEAD
  gs_module root;
  PyObject *joined;
} module_tree;

static void tree_dealloc(PyObject *self) {
  GSP_SITE();
  module_tree *t = (module_tree *)self;
  if (t->joined)
    Py_CLEAR(t->joined);
  else
    gs_module_dispose(t->root);
  gs_clear_error();
  PyObject_Free(self);
}

static PyTypeObject tree_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.nn._ModuleTree",
    .tp_basicsize = sizeof(module_tree),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "What keeps an engine module tree alive (held by its modules and parameters).",
    .tp_dealloc = tree_dealloc,
};

static PyObject *tree_new(gs_module root) {
  module_tree *t = PyObject_New(module_tree, &tree_type);
  if (!t)
    return NULL;
  t->root = root;
  t->joined = NULL;
  return (PyObject *)t;
}

typedef struct gsp_module {
  PyObject_HEAD
  gs_module m;
  PyObject *children; /* list: the Python objects of child modules, kept for seq[i] */
  PyObject *tree;     /* the module_tree it belongs to (joined into its parent's, if any) */
  int rnn_mode;       /* a gs_rnn_mode for RNN, LSTM and GRU (called as PyTorch's); -1 */
  PyObject *extra_repr; /* str: the constructor's arguments as PyTorch prints them, or NULL */
} gsp_module;

static PyTypeObject module_type;

/* child's tree joins parent's: from now on parent's root disposes child's module. */
static void tree_join(gsp_module *child, gsp_module *parent) {
  module_tree *t = (module_tree *)child->tree;
  while (t->joined)
    t = (module_tree *)t->joined;
  if ((PyObject *)t != parent->tree)
    t->joined = Py_NewRef(parent->tree);
}

static PyObject *wrap_module(gs_module m, PyObject *children) {
  if (m.id == 0) {
    Py_XDECREF(children);
    return gsp_raise_engine_error();
  }
  PyObject *tree = tree_new(m);
  if (!tree) {
    gs_module_dispose(m);
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
  o->extra_repr = NULL;
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
  Py_CLEAR(o->children);
  Py_CLEAR(o->extra_repr);
  Py_CLEAR(o->tree);
  Py_TYPE(self)->tp_free(self);
}

static int module_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(((gsp_module *)self)->children);
  return 0;
}

static int module_clear(PyObject *self) {
  Py_CLEAR(((gsp_module *)self)->children);
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

/* A Sequential holding a module written in Python (nn.Flatten, a user's subclass): the
 * engine cannot call Python, so the chain runs here, each child called as Python calls it. */
static bool sequential_needs_python(gsp_module *o) {
  const char *name = gs_module_type_name(o->m);
  if (!name || strcmp(name, "Sequential") != 0)
    return false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o->children); i++)
    if (Py_TYPE(PyList_GET_ITEM(o->children, i)) != &module_type)
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

static PyObject *module_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  if (sequential_needs_python((gsp_module *)self))
    return sequential_call_in_python((gsp_module *)self, args, kwargs);
  if (((gsp_module *)self)->rnn_mode >= 0)
    return recurrent_call((gsp_module *)self, args, kwargs);
  if (Py_TYPE(self) != &module_type) { /* a Python subclass: its forward, as PyTorch's */
    PyObject *forward = PyObject_GetAttrString(self, "forward");
    if (!forward)
      return NULL;
    PyObject *r = PyObject_Call(forward, args, kwargs);
    Py_DECREF(forward);
    return r;
  }
  PyObject *x;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "a module takes one Tensor");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "O!:forward", &gsp_tensor_type, &x))
    return NULL;
  return gsp_wrap(gs_module_forward(((gsp_module *)self)->m, gsp_handle(x)));
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

/* Parameters of the tree under dotted names (borrowed handles), or -1 raised. */
static int named(gs_module m, gs_tensor **params, const char ***names) {
  int n = gs_module_named_parameters(m, NULL, NULL, 0);
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
  return gs_module_named_parameters(m, *params, *names, n);
}

/* Whether the engine parameter under a dotted name is one of BatchNorm's running estimates,
 * which PyTorch keeps as buffers: never requiring grad, under a running-statistics name. */
static bool is_buffer(gs_tensor p, const char *name) {
  const char *dot = strrchr(name, '.');
  const char *last = dot ? dot + 1 : name;
  return !gs_requires_grad(p) && (strcmp(last, "running_mean") == 0 ||
                                  strcmp(last, "running_var") == 0 ||
                                  strcmp(last, "num_batches_tracked") == 0);
}

enum { WANT_PARAMETERS, WANT_BUFFERS, WANT_BOTH };

static PyObject *parameter_list(PyObject *self, bool with_names, bool detached, int want) {
  gs_tensor *params;
  const char **names;
  int n = named(((gsp_module *)self)->m, &params, &names);
  if (n < 0)
    return NULL;
  PyObject *out = with_names && detached ? PyDict_New() : PyList_New(0);
  for (int i = 0; out && i < n; i++) {
    if (want != WANT_BOTH && is_buffer(params[i], names[i]) != (want == WANT_BUFFERS))
      continue;
    PyObject *t = detached ? gsp_wrap(gs_detach(params[i]))
                           : gsp_wrap_kept(params[i], ((gsp_module *)self)->tree);
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
  int n = named(m, &params, &names);
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
    return gsp_wrap_kept(p, ((gsp_module *)self)->tree);
  }
  return NULL;
}

/* self.fc1 = nn.Linear(...) registers a child, self.w = nn.Parameter(t) a parameter, in the
 * engine's tree (so named_parameters, state_dict and safetensors see them), as PyTorch's
 * Module.__setattr__; the object is also kept as an ordinary attribute. */
static int module_setattro(PyObject *self, PyObject *name, PyObject *value) {
  gs_module m = ((gsp_module *)self)->m;
  if (value && (PyObject_TypeCheck(value, &module_type) || gsp_is_tensor(value))) {
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
      return -1;
    gs_clear_error();
    if (PyObject_TypeCheck(value, &module_type)) {
      gs_module child = ((gsp_module *)value)->m;
      if (gs_module_parent(child).id != m.id) {
        gs_module_register_child(m, s, child);
        if (!gsp_check_void())
          return -1;
        tree_join((gsp_module *)value, (gsp_module *)self);
        if (PyList_Append(((gsp_module *)self)->children, value) < 0)
          return -1;
      }
    } else if (gs_is_parameter(gsp_handle(value))) {
      gs_module_register_parameter(m, s, gsp_handle(value));
      if (!gsp_check_void())
        return -1;
      gsp_tensor_keep(value, ((gsp_module *)self)->tree); /* the module owns it now */
    }
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
  o->extra_repr = NULL;
  o->tree = tree_new(m);
  o->children = PyList_New(0);
  if (!o->children || !o->tree) {
    if (!o->tree)
      gs_module_dispose(m);
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
    {"forward", GSP_FN(module_call), METH_VARARGS | METH_KEYWORDS, NULL},
    {"parameters", m_parameters, METH_NOARGS, NULL},
    {"named_parameters", m_named_parameters, METH_NOARGS, NULL},
    {"buffers", m_buffers, METH_NOARGS, "BatchNorm's running estimates (PyTorch's buffers)."},
    {"named_buffers", m_named_buffers, METH_NOARGS, NULL},
    {"_named_children", m_named_children, METH_NOARGS, NULL},
    {"state_dict", m_state_dict, METH_NOARGS, "Detached views of the parameters by name."},
    {"load_state_dict", GSP_FN(m_load_state_dict), METH_VARARGS | METH_KEYWORDS, NULL},
    {"train", m_train, METH_VARARGS, NULL},
    {"eval", m_eval, METH_NOARGS, NULL},
    {"zero_grad", GSP_FN(m_zero_grad), METH_VARARGS | METH_KEYWORDS, NULL},
    {"save_safetensors", m_save_safetensors, METH_O, "The parameters as a safetensors file."},
    {"load_safetensors", GSP_FN(m_load_safetensors), METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef module_getset[] = {
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

static PyObject *f_linear_module(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long in, out;
  int bias = 1;
  static char *kwlist[] = {"in_features", "out_features", "bias", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL|p:Linear", kwlist, &in, &out, &bias))
    return NULL;
  PyObject *o = wrap_module(gs_linear_new(in, out, bias, NULL), NULL);
  return o ? with_extra_repr(o, PyUnicode_FromFormat("in_features=%lld, out_features=%lld, bias=%s",
                                                     in, out, bias ? "True" : "False"))
           : NULL;
}

int gsp_int_pair(PyObject *o, int64_t *out, const char *what);

/* nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
 * bias=True), initialised as PyTorch's (gs_conv2d_new). */
static PyObject *f_Conv2d(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long in, out, groups = 1;
  PyObject *kernel, *stride = Py_None, *padding = Py_None, *dilation = Py_None;
  PyObject *dtype_obj = Py_None;
  int bias = 1;
  const char *padding_mode = "zeros";
  static char *kwlist[] = {"in_channels", "out_channels", "kernel_size", "stride", "padding",
                           "dilation", "groups", "bias", "padding_mode", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLO|OOOLps$O:Conv2d", kwlist, &in, &out,
                                   &kernel, &stride, &padding, &dilation, &groups, &bias,
                                   &padding_mode, &dtype_obj))
    return NULL;
  if (strcmp(padding_mode, "zeros") != 0 || PyUnicode_Check(padding) || dtype_obj != Py_None) {
    PyErr_SetString(PyExc_ValueError, "Conv2d(): padding_mode other than 'zeros', padding as a "
                                      "string and dtype= are not supported by gradscope yet");
    return NULL;
  }
  int64_t k[2] = {0, 0};
  gs_conv2d_options opt = {{1, 1}, {0, 0}, {1, 1}, groups};
  if (gsp_int_pair(kernel, k, "kernel_size") < 0 || gsp_int_pair(stride, opt.stride, "stride") < 0 ||
      gsp_int_pair(padding, opt.padding, "padding") < 0 ||
      gsp_int_pair(dilation, opt.dilation, "dilation") < 0)
    return NULL;
  PyObject *o = wrap_module(gs_conv2d_new(in, out, k[0], k[1], &opt, bias, NULL), NULL);
  if (!o)
    return NULL;
  /* PyTorch's Conv2d.extra_repr: padding, dilation, groups and bias only when not default. */
  PyObject *e = PyUnicode_FromFormat("%lld, %lld, kernel_size=(%lld, %lld), stride=(%lld, %lld)",
                                     in, out, (long long)k[0], (long long)k[1],
                                     (long long)opt.stride[0], (long long)opt.stride[1]);
  if (e && (opt.padding[0] || opt.padding[1]))
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", padding=(%lld, %lld)",
                                                    (long long)opt.padding[0], (long long)opt.padding[1]));
  if (e && (opt.dilation[0] != 1 || opt.dilation[1] != 1))
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", dilation=(%lld, %lld)",
                                                    (long long)opt.dilation[0], (long long)opt.dilation[1]));
  if (e && groups != 1)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromFormat(", groups=%lld", groups));
  if (e && !bias)
    PyUnicode_AppendAndDel(&e, PyUnicode_FromString(", bias=False"));
  return with_extra_repr(o, e);
}

/* nn.BatchNorm1d / BatchNorm2d(num_features, eps=1e-5, momentum=0.1), affine with running
 * statistics (the only form the engine has). */
static PyObject *batch_norm_module(PyObject *args, PyObject *kwargs, int spatial, const char *fn) {
  GSP_SITE();
  long long features;
  double eps = 1e-5, momentum = 0.1;
  int affine = 1, track = 1;
  static char *kwlist[] = {"num_features", "eps", "momentum", "affine", "track_running_stats",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L|ddpp", kwlist, &features, &eps, &momentum,
                                   &affine, &track))
    return NULL;
  if (!affine || !track) {
    PyErr_Format(PyExc_ValueError, "%s(): affine=False and track_running_stats=False are not "
                                   "supported by gradscope yet", fn);
    return NULL;
  }
  PyObject *o = wrap_module(gs_batch_norm_new(spatial, features, eps, momentum), NULL);
  if (!o)
    return NULL;
  PyObject *e_s = PyFloat_FromDouble(eps), *m_s = PyFloat_FromDouble(momentum);
  PyObject *e = e_s && m_s ? PyUnicode_FromFormat("%lld, eps=%R, momentum=%R, affine=True, "
                                                  "track_running_stats=True", features, e_s, m_s)
                           : NULL;
  Py_XDECREF(e_s);
  Py_XDECREF(m_s);
  return with_extra_repr(o, e);
}
static PyObject *f_BatchNorm1d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return batch_norm_module(a, k, 1, "BatchNorm1d"); }
static PyObject *f_BatchNorm2d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return batch_norm_module(a, k, 2, "BatchNorm2d"); }

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
  static char *kwlist[] = {"p", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|d:Dropout", kwlist, &p))
    return NULL;
  return wrap_module(gs_dropout_new(p, NULL), NULL);
}

static PyObject *f_Embedding(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long n, dim;
  static char *kwlist[] = {"num_embeddings", "embedding_dim", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL:Embedding", kwlist, &n, &dim))
    return NULL;
  return wrap_module(gs_embedding_new(n, dim, NULL), NULL);
}

static PyObject *f_LayerNorm(PyObject *mod, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)mod;
  long long dim;
  double eps = 1e-5;
  static char *kwlist[] = {"normalized_shape", "eps", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L|d:LayerNorm", kwlist, &dim, &eps))
    return NULL;
  return wrap_module(gs_layer_norm_new(dim, eps), NULL);
}

/* nn.RNN, nn.LSTM, nn.GRU with PyTorch's arguments. */
static PyObject *recurrent(PyObject *args, PyObject *kwargs, int mode, const char *fn) {
  GSP_SITE();
  long long in, hidden, layers = 1;
  int bias = 1, batch_first = 0, bidirectional = 0;
  double dropout = 0.0;
  const char *nonlinearity = "tanh";
  PyObject *dtype_obj = Py_None;
  static char *kwlist[] = {"input_size", "hidden_size", "num_layers", "bias", "batch_first",
                           "dropout", "bidirectional", "nonlinearity", "dtype", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LL|Lppdp$sO", kwlist, &in, &hidden, &layers,
                                   &bias, &batch_first, &dropout, &bidirectional, &nonlinearity,
                                   &dtype_obj))
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
  if (o)
    ((gsp_module *)o)->rnn_mode = mode;
  return o;
}
static PyObject *f_RNN(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_TANH, "RNN"); }
static PyObject *f_LSTM(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_LSTM, "LSTM"); }
static PyObject *f_GRU(PyObject *m, PyObject *a, PyObject *k) { (void)m; return recurrent(a, k, GS_RNN_GRU, "GRU"); }

static PyObject *f_Sequential(PyObject *mod, PyObject *args) {
  GSP_SITE();
  (void)mod;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  gs_module *mods = PyMem_Malloc(sizeof(gs_module) * (size_t)(n ? n : 1));
  if (!mods)
    return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *c = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(c, &module_type)) {
      PyMem_Free(mods);
      PyErr_Format(PyExc_TypeError, "Sequential(): argument %zd is not a module", i);
      return NULL;
    }
    mods[i] = ((gsp_module *)c)->m;
  }
  gs_module seq = gs_sequential_new(mods, (int)n);
  PyMem_Free(mods);
  PyObject *o = wrap_module(seq, seq.id ? PySequence_List(args) : NULL);
  for (Py_ssize_t i = 0; o && i < n; i++)
    tree_join((gsp_module *)PyTuple_GET_ITEM(args, i), (gsp_module *)o);
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
    {"Parameter", GSP_FN(f_Parameter), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Linear", GSP_FN(f_linear_module), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Conv2d", GSP_FN(f_Conv2d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"BatchNorm1d", GSP_FN(f_BatchNorm1d), METH_VARARGS | METH_KEYWORDS, NULL},
    {"BatchNorm2d", GSP_FN(f_BatchNorm2d), METH_VARARGS | METH_KEYWORDS, NULL},
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
    {NULL, NULL, 0, NULL},
};

/* Makes gradscope.nn (and registers it in sys.modules so `import gradscope.nn` works). */
PyObject *gsp_nn_module(void);
PyObject *gsp_nn_module(void) {
  GSP_SITE();
  if (PyType_Ready(&module_type) < 0 || PyType_Ready(&tree_type) < 0)
    return NULL;
  PyObject *nn = PyModule_New("gradscope.nn");
  if (!nn)
    return NULL;
  gsp_docs_fill(nn_functions, "nn");
  if (PyModule_AddFunctions(nn, nn_functions) < 0 ||
      PyModule_AddObjectRef(nn, "Module", (PyObject *)&module_type) < 0) {
    Py_DECREF(nn);
    return NULL;
  }
  return nn;
}
