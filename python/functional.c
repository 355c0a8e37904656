/* functional.c: gradscope.nn.functional: losses (cross_entropy, nll_loss, mse_loss,
 * binary_cross_entropy_with_logits) with PyTorch's reduction= strings, and the functional
 * layers (dropout, layer_norm, linear, embedding, leaky_relu). Activations (relu, softmax,
 * ...) are the same forwarders as gradscope.relu, added by module.c. */
#include "gs-py.h"

#include <string.h>

static int reduction_of(const char *s, gs_reduction *out) {
  if (strcmp(s, "mean") == 0)
    *out = GS_REDUCTION_MEAN;
  else if (strcmp(s, "sum") == 0)
    *out = GS_REDUCTION_SUM;
  else if (strcmp(s, "none") == 0)
    *out = GS_REDUCTION_NONE;
  else {
    PyErr_Format(PyExc_ValueError, "reduction must be 'mean', 'sum' or 'none', not '%s'", s);
    return -1;
  }
  return 0;
}

static PyObject *f_cross_entropy(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *input, *target;
  const char *reduction = "mean";
  double smoothing = 0.0;
  static char *kwlist[] = {"input", "target", "reduction", "label_smoothing", NULL};
  gs_reduction r;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|$sd:cross_entropy", kwlist,
                                   &gsp_tensor_type, &input, &gsp_tensor_type, &target,
                                   &reduction, &smoothing) ||
      reduction_of(reduction, &r) < 0)
    return NULL;
  return gsp_wrap(gs_cross_entropy(gsp_handle(input), gsp_handle(target), r, smoothing));
}

typedef gs_tensor (*loss_fn)(gs_tensor, gs_tensor, gs_reduction);

static PyObject *pair_loss(PyObject *args, PyObject *kwargs, loss_fn fn, const char *format) {
  GSP_SITE();
  PyObject *input, *target;
  const char *reduction = "mean";
  static char *kwlist[] = {"input", "target", "reduction", NULL};
  gs_reduction r;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &gsp_tensor_type, &input,
                                   &gsp_tensor_type, &target, &reduction) ||
      reduction_of(reduction, &r) < 0)
    return NULL;
  return gsp_wrap(fn(gsp_handle(input), gsp_handle(target), r));
}
static PyObject *f_nll_loss(PyObject *m, PyObject *a, PyObject *k) {
  GSP_SITE();
  (void)m;
  return pair_loss(a, k, gs_nll_loss, "O!O!|$s:nll_loss");
}
static PyObject *f_mse_loss(PyObject *m, PyObject *a, PyObject *k) {
  GSP_SITE();
  (void)m;
  return pair_loss(a, k, gs_mse_loss, "O!O!|$s:mse_loss");
}
static PyObject *f_bce_logits(PyObject *m, PyObject *a, PyObject *k) {
  GSP_SITE();
  (void)m;
  return pair_loss(a, k, gs_binary_cross_entropy_with_logits,
                   "O!O!|$s:binary_cross_entropy_with_logits");
}

static PyObject *f_dropout(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double p = 0.5;
  int training = 1;
  static char *kwlist[] = {"input", "p", "training", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|dp:dropout", kwlist, &gsp_tensor_type, &x,
                                   &p, &training))
    return NULL;
  return gsp_wrap(gs_dropout(gsp_handle(x), p, training, NULL));
}

static PyObject *f_layer_norm(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *shape, *w = Py_None, *b = Py_None;
  double eps = 1e-5;
  static char *kwlist[] = {"input", "normalized_shape", "weight", "bias", "eps", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|OOd:layer_norm", kwlist, &gsp_tensor_type,
                                   &x, &shape, &w, &b, &eps))
    return NULL;
  /* The engine normalises over the last dimension: normalized_shape must name just it. */
  int64_t dims[GS_MAX_DIMS];
  int nd = PyLong_Check(shape) ? 1 : gsp_shape_from_sequence(shape, dims);
  if (nd < 0)
    return NULL;
  if (nd != 1) {
    PyErr_SetString(PyExc_ValueError, "layer_norm(): only the last dimension can be normalised");
    return NULL;
  }
  gs_tensor tw = gsp_is_tensor(w) ? gsp_handle(w) : GS_NO_TENSOR;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_layer_norm(gsp_handle(x), tw, tb, eps));
}

/* x @ w.T + b, as F.linear. */
static PyObject *f_linear(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b = Py_None;
  static char *kwlist[] = {"input", "weight", "bias", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|O:linear", kwlist, &gsp_tensor_type, &x,
                                   &gsp_tensor_type, &w, &b))
    return NULL;
  gs_tensor wt = gs_t(gsp_handle(w));
  if (gs_tensor_is_none(wt))
    return gsp_raise_engine_error();
  gs_tensor y = gs_matmul(gsp_handle(x), wt);
  gs_dispose(wt);
  if (gsp_is_tensor(b) && !gs_tensor_is_none(y)) {
    gs_tensor yb = gs_add(y, gsp_handle(b));
    gs_dispose(y);
    y = yb;
  }
  return gsp_wrap(y);
}

static PyObject *f_embedding(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *idx, *w;
  if (!PyArg_ParseTuple(args, "O!O!:embedding", &gsp_tensor_type, &idx, &gsp_tensor_type, &w))
    return NULL;
  return gsp_wrap(gs_embedding(gsp_handle(w), gsp_handle(idx)));
}

static PyObject *f_leaky_relu(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double slope = 0.01;
  static char *kwlist[] = {"input", "negative_slope", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|d:leaky_relu", kwlist, &gsp_tensor_type, &x,
                                   &slope))
    return NULL;
  return gsp_wrap(gs_leaky_relu(gsp_handle(x), slope));
}

#define KW (METH_VARARGS | METH_KEYWORDS)
static PyMethodDef functional_functions[] = {
    {"cross_entropy", GSP_FN(f_cross_entropy), KW, NULL},
    {"nll_loss", GSP_FN(f_nll_loss), KW, NULL},
    {"mse_loss", GSP_FN(f_mse_loss), KW, NULL},
    {"binary_cross_entropy_with_logits", GSP_FN(f_bce_logits), KW, NULL},
    {"dropout", GSP_FN(f_dropout), KW, NULL},
    {"layer_norm", GSP_FN(f_layer_norm), KW, NULL},
    {"linear", GSP_FN(f_linear), KW, NULL},
    {"embedding", f_embedding, METH_VARARGS, NULL},
    {"leaky_relu", GSP_FN(f_leaky_relu), KW, NULL},
    {NULL, NULL, 0, NULL},
};

PyObject *gsp_functional_module(void);
PyObject *gsp_functional_module(void) {
  GSP_SITE();
  PyObject *f = PyModule_New("gradscope.nn.functional");
  if (f && PyModule_AddFunctions(f, functional_functions) < 0)
    Py_CLEAR(f);
  return f;
}
