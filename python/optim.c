/* optim.c: gradscope.optim.SGD, Adam, AdamW, Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop over
 * the engine's optimizers, with PyTorch's arguments (lr, momentum, betas=(b1, b2), eps,
 * weight_decay, ...), step() and zero_grad().
 * The optimizer borrows its parameters (a module owns them); its Python object keeps the
 * parameters' Python objects alive and disposes the engine optimizer (its state) on drop.
 * `lr` reads and sets the engine's learning rate; gradscope/optim/optimizer.py builds
 * PyTorch's param_groups on it (kept in the object's __dict__), which the learning-rate
 * schedulers of gradscope/optim/lr_scheduler.py change between steps. */
#include <stddef.h>

#include "gs-py.h"

typedef struct {
  PyObject_HEAD
  gs_optimizer o;
  PyObject *params; /* list of the Tensors it updates */
  PyObject *dict;   /* instance attributes (param_groups, a scheduler's bookkeeping) */
} gsp_optimizer;

static void optimizer_dealloc(PyObject *self) {
  GSP_SITE();
  gsp_optimizer *o = (gsp_optimizer *)self;
  if (o->o.id)
    gs_optimizer_dispose(o->o);
  gs_clear_error();
  Py_XDECREF(o->params);
  Py_XDECREF(o->dict);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *opt_step(PyObject *self, PyObject *args) {
  GSP_SITE();
  (void)args;
  gs_clear_error();
  gs_optimizer_step(((gsp_optimizer *)self)->o);
  return gsp_check_void();
}

static PyObject *opt_zero_grad(PyObject *self, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)args;
  (void)kwargs;
  gs_clear_error();
  gs_optimizer_zero_grad(((gsp_optimizer *)self)->o);
  return gsp_check_void();
}

static PyObject *opt_lr_get(PyObject *self, void *c) {
  (void)c;
  gs_clear_error();
  double lr = gs_optimizer_lr(((gsp_optimizer *)self)->o);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyFloat_FromDouble(lr);
}

static int opt_lr_set(PyObject *self, PyObject *value, void *c) {
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "the learning rate cannot be deleted");
    return -1;
  }
  double lr = PyFloat_AsDouble(value);
  if (lr == -1.0 && PyErr_Occurred())
    return -1;
  gs_clear_error();
  gs_optimizer_set_lr(((gsp_optimizer *)self)->o, lr);
  return gsp_check_void() ? 0 : -1;
}

static PyObject *opt_momentum_get(PyObject *self, void *c) {
  (void)c;
  gs_clear_error();
  double m = gs_optimizer_momentum(((gsp_optimizer *)self)->o);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyFloat_FromDouble(m);
}

static int opt_momentum_set(PyObject *self, PyObject *value, void *c) {
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "the momentum cannot be deleted");
    return -1;
  }
  double m = PyFloat_AsDouble(value);
  if (m == -1.0 && PyErr_Occurred())
    return -1;
  gs_clear_error();
  gs_optimizer_set_momentum(((gsp_optimizer *)self)->o, m);
  return gsp_check_void() ? 0 : -1;
}

static PyObject *opt_params_get(PyObject *self, void *c) {
  (void)c;
  return PySequence_List(((gsp_optimizer *)self)->params);
}

static PyGetSetDef optimizer_getset[] = {
    {"lr", opt_lr_get, opt_lr_set, "The learning rate of the next step.", NULL},
    {"momentum", opt_momentum_get, opt_momentum_set,
     "The momentum of the next step: SGD's momentum, Adam's beta1.", NULL},
    {"_params", opt_params_get, NULL, "The Tensors it updates.", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* _state(i, name): a copy of parameter i's state tensor (torch's state_dict values), or None
 * before its first step. */
static PyObject *opt_state(PyObject *self, PyObject *args) {
  GSP_SITE();
  int i;
  const char *name;
  if (!PyArg_ParseTuple(args, "is:_state", &i, &name))
    return NULL;
  gs_clear_error();
  gs_tensor t = gs_optimizer_state(((gsp_optimizer *)self)->o, i, name);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return t.id ? gsp_wrap(gs_clone(t)) : Py_NewRef(Py_None);
}

static PyObject *opt_state_step(PyObject *self, PyObject *args) {
  int i;
  if (!PyArg_ParseTuple(args, "i:_state_step", &i))
    return NULL;
  gs_clear_error();
  int64_t step = gs_optimizer_state_step(((gsp_optimizer *)self)->o, i);
  return step < 0 ? gsp_raise_engine_error() : PyLong_FromLongLong(step);
}

/* _load_state(i, name, tensor) and _load_state_step(i, step): load_state_dict's writes. */
static PyObject *opt_load_state(PyObject *self, PyObject *args) {
  GSP_SITE();
  int i;
  const char *name;
  PyObject *t;
  if (!PyArg_ParseTuple(args, "isO!:_load_state", &i, &name, &gsp_tensor_type, &t))
    return NULL;
  gs_clear_error();
  if (!gs_optimizer_load_state(((gsp_optimizer *)self)->o, i, name, gsp_handle(t)))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyObject *opt_load_state_step(PyObject *self, PyObject *args) {
  int i;
  long long step;
  if (!PyArg_ParseTuple(args, "iL:_load_state_step", &i, &step))
    return NULL;
  gs_clear_error();
  if (!gs_optimizer_load_state_step(((gsp_optimizer *)self)->o, i, step))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

/* _state_scalar(i, name) and _load_state_scalar(i, name, value): ASGD's eta and mu, NAdam's
 * mu_product. */
static PyObject *opt_state_scalar(PyObject *self, PyObject *args) {
  int i;
  const char *name;
  if (!PyArg_ParseTuple(args, "is:_state_scalar", &i, &name))
    return NULL;
  gs_clear_error();
  double v = gs_optimizer_state_scalar(((gsp_optimizer *)self)->o, i, name);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyFloat_FromDouble(v);
}

static PyObject *opt_load_state_scalar(PyObject *self, PyObject *args) {
  int i;
  const char *name;
  double v;
  if (!PyArg_ParseTuple(args, "isd:_load_state_scalar", &i, &name, &v))
    return NULL;
  gs_clear_error();
  if (!gs_optimizer_load_state_scalar(((gsp_optimizer *)self)->o, i, name, v))
    return gsp_raise_engine_error();
  Py_RETURN_NONE;
}

static PyMethodDef optimizer_methods[] = {
    {"_state_scalar", opt_state_scalar, METH_VARARGS,
     "Parameter i's scalar state (ASGD's eta, mu; NAdam's mu_product)."},
    {"_load_state_scalar", opt_load_state_scalar, METH_VARARGS, "Sets a scalar state."},
    {"_state", opt_state, METH_VARARGS, "A copy of parameter i's state tensor, or None."},
    {"_state_step", opt_state_step, METH_VARARGS, "The step count of parameter i."},
    {"_load_state", opt_load_state, METH_VARARGS, "Loads parameter i's state tensor."},
    {"_load_state_step", opt_load_state_step, METH_VARARGS, "Sets the step count."},
    {"step", opt_step, METH_VARARGS, NULL},
    {"zero_grad", GSP_FN(opt_zero_grad), METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject optimizer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.optim.Optimizer",
    .tp_doc = "The engine's optimizer over a list of parameters (SGD, Adam and AdamW make one).",
    .tp_basicsize = sizeof(gsp_optimizer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = optimizer_dealloc,
    .tp_methods = optimizer_methods,
    .tp_getset = optimizer_getset,
    .tp_dictoffset = offsetof(gsp_optimizer, dict),
};

/* The parameters (any iterable of Tensors) as a list and as handles. */
static int params_of(PyObject *iterable, PyObject **list, gs_tensor **handles) {
  *list = PySequence_List(iterable);
  if (!*list)
    return -1;
  int n = gsp_tensor_list(*list, handles);
  if (n < 0)
    Py_CLEAR(*list);
  return n;
}

static PyObject *wrap_optimizer(gs_optimizer o, PyObject *list) {
  if (o.id == 0) {
    Py_DECREF(list);
    return gsp_raise_engine_error();
  }
  gsp_optimizer *obj = PyObject_New(gsp_optimizer, &optimizer_type);
  if (!obj) {
    gs_optimizer_dispose(o);
    Py_DECREF(list);
    return NULL;
  }
  obj->o = o;
  obj->params = list;
  obj->dict = NULL;
  return (PyObject *)obj;
}

static PyObject *f_SGD(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params, *list;
  gs_sgd_options opt = {.lr = 1e-3};
  int nesterov = 0;
  static char *kwlist[] = {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dddd$p:SGD", kwlist, &params, &opt.lr,
                                   &opt.momentum, &opt.dampening, &opt.weight_decay, &nesterov))
    return NULL;
  opt.nesterov = nesterov;
  gs_tensor *handles;
  int n = params_of(params, &list, &handles);
  if (n < 0)
    return NULL;
  gs_optimizer o = gs_sgd_new(handles, n, &opt);
  PyMem_Free(handles);
  return wrap_optimizer(o, list);
}

static PyObject *adam(PyObject *args, PyObject *kwargs, bool decoupled) {
  GSP_SITE();
  PyObject *params, *list;
  gs_adam_options opt = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                         .weight_decay = decoupled ? 1e-2 : 0};
  int amsgrad = 0;
  static char *kwlist[] = {"params", "lr", "betas", "eps", "weight_decay", "amsgrad", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, decoupled ? "O|d(dd)dd$p:AdamW" : "O|d(dd)dd$p:Adam",
                                   kwlist, &params, &opt.lr, &opt.beta1, &opt.beta2, &opt.eps,
                                   &opt.weight_decay, &amsgrad))
    return NULL;
  opt.amsgrad = amsgrad;
  gs_tensor *handles;
  int n = params_of(params, &list, &handles);
  if (n < 0)
    return NULL;
  gs_optimizer o = decoupled ? gs_adamw_new(handles, n, &opt) : gs_adam_new(handles, n, &opt);
  PyMem_Free(handles);
  return wrap_optimizer(o, list);
}
static PyObject *f_Adam(PyObject *m, PyObject *a, PyObject *k) { (void)m; return adam(a, k, false); }
static PyObject *f_AdamW(PyObject *m, PyObject *a, PyObject *k) { (void)m; return adam(a, k, true); }

/* The engine optimizer made by make from handles, for each constructor below. */
#define MAKE_OPTIMIZER(params, make, opt)                                                          \
  do {                                                                                             \
    PyObject *list_;                                                                               \
    gs_tensor *handles_;                                                                           \
    int n_ = params_of(params, &list_, &handles_);                                                 \
    if (n_ < 0)                                                                                    \
      return NULL;                                                                                 \
    gs_optimizer o_ = make(handles_, n_, &(opt));                                                  \
    PyMem_Free(handles_);                                                                          \
    return wrap_optimizer(o_, list_);                                                              \
  } while (0)

static PyObject *f_Adadelta(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_adadelta_options opt = GS_ADADELTA_OPTIONS_DEFAULT;
  int maximize = 0;
  static char *kwlist[] = {"params", "lr", "rho", "eps", "weight_decay", "maximize", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|dddd$p:Adadelta", kwlist, &params, &opt.lr,
                                   &opt.rho, &opt.eps, &opt.weight_decay, &maximize))
    return NULL;
  opt.maximize = maximize;
  MAKE_OPTIMIZER(params, gs_adadelta_new, opt);
}

static PyObject *f_Adamax(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_adamax_options opt = GS_ADAMAX_OPTIONS_DEFAULT;
  int maximize = 0;
  static char *kwlist[] = {"params", "lr", "betas", "eps", "weight_decay", "maximize", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|d(dd)dd$p:Adamax", kwlist, &params, &opt.lr,
                                   &opt.beta1, &opt.beta2, &opt.eps, &opt.weight_decay, &maximize))
    return NULL;
  opt.maximize = maximize;
  MAKE_OPTIMIZER(params, gs_adamax_new, opt);
}

static PyObject *f_NAdam(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_nadam_options opt = GS_NADAM_OPTIONS_DEFAULT;
  static char *kwlist[] = {"params", "lr", "betas", "eps", "weight_decay", "momentum_decay", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|d(dd)ddd:NAdam", kwlist, &params, &opt.lr,
                                   &opt.beta1, &opt.beta2, &opt.eps, &opt.weight_decay,
                                   &opt.momentum_decay))
    return NULL;
  MAKE_OPTIMIZER(params, gs_nadam_new, opt);
}

static PyObject *f_RAdam(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_radam_options opt = GS_RADAM_OPTIONS_DEFAULT;
  static char *kwlist[] = {"params", "lr", "betas", "eps", "weight_decay", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|d(dd)dd:RAdam", kwlist, &params, &opt.lr,
                                   &opt.beta1, &opt.beta2, &opt.eps, &opt.weight_decay))
    return NULL;
  MAKE_OPTIMIZER(params, gs_radam_new, opt);
}

static PyObject *f_ASGD(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_asgd_options opt = GS_ASGD_OPTIONS_DEFAULT;
  int maximize = 0;
  static char *kwlist[] = {"params", "lr",           "lambd",    "alpha",
                           "t0",     "weight_decay", "maximize", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|ddddd$p:ASGD", kwlist, &params, &opt.lr,
                                   &opt.lambd, &opt.alpha, &opt.t0, &opt.weight_decay, &maximize))
    return NULL;
  opt.maximize = maximize;
  MAKE_OPTIMIZER(params, gs_asgd_new, opt);
}

static PyObject *f_Rprop(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *params;
  gs_rprop_options opt = GS_RPROP_OPTIONS_DEFAULT;
  int maximize = 0;
  static char *kwlist[] = {"params", "lr", "etas", "step_sizes", "maximize", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|d(dd)(dd)$p:Rprop", kwlist, &params, &opt.lr,
                                   &opt.eta_minus, &opt.eta_plus, &opt.step_size_min,
                                   &opt.step_size_max, &maximize))
    return NULL;
  opt.maximize = maximize;
  MAKE_OPTIMIZER(params, gs_rprop_new, opt);
}

static PyMethodDef optim_functions[] = {
    {"Adadelta", GSP_FN(f_Adadelta), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Adamax", GSP_FN(f_Adamax), METH_VARARGS | METH_KEYWORDS, NULL},
    {"NAdam", GSP_FN(f_NAdam), METH_VARARGS | METH_KEYWORDS, NULL},
    {"RAdam", GSP_FN(f_RAdam), METH_VARARGS | METH_KEYWORDS, NULL},
    {"ASGD", GSP_FN(f_ASGD), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Rprop", GSP_FN(f_Rprop), METH_VARARGS | METH_KEYWORDS, NULL},
    {"SGD", GSP_FN(f_SGD), METH_VARARGS | METH_KEYWORDS, NULL},
    {"Adam", GSP_FN(f_Adam), METH_VARARGS | METH_KEYWORDS, NULL},
    {"AdamW", GSP_FN(f_AdamW), METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

PyObject *gsp_optim_module(void);
PyObject *gsp_optim_module(void) {
  GSP_SITE();
  gsp_docs_fill(optim_functions, "optim");
  gsp_docs_fill(optimizer_methods, "Optimizer");
  if (PyType_Ready(&optimizer_type) < 0)
    return NULL;
  PyObject *o = PyModule_New("gradscope.optim");
  if (o && (PyModule_AddFunctions(o, optim_functions) < 0 ||
            PyModule_AddObjectRef(o, "Optimizer", (PyObject *)&optimizer_type) < 0))
    Py_CLEAR(o);
  return o;
}
