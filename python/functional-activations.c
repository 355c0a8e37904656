/* functional-activations.c: the activations of gradscope.nn.functional beyond relu, gelu and
 * leaky_relu (silu, elu, selu, softplus, hardtanh, relu6, hardsigmoid, hardswish, logsigmoid,
 * mish), with torch's parameters. inplace=True writes the values into the input and returns
 * it, as torch's do: computed from a copy-on-write clone of the input (so what the op saved
 * is not overwritten) and copied in, so its grad_fn is the copy's. */
#include "gs-py.h"

typedef gs_tensor (*unary_fn)(gs_tensor);

gs_tensor gsp_activation_input(PyObject *x, int inplace) {
  return inplace ? gs_clone(gsp_handle(x)) : gsp_handle(x);
}

PyObject *gsp_activation_result(PyObject *x, gs_tensor in, gs_tensor r, int inplace) {
  if (!inplace)
    return gsp_wrap(r);
  gs_clear_error();
  if (r.id)
    gs_copy_(gsp_handle(x), r);
  gs_dispose(r);
  gs_dispose(in);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(x);
}

/* fn(input), for the activations whose only other parameter is inplace (or none: format). */
static PyObject *plain(PyObject *args, PyObject *kwargs, unary_fn fn, const char *format) {
  GSP_SITE();
  PyObject *x;
  int inplace = 0;
  static char *kwlist[] = {"input", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, kwlist, &gsp_tensor_type, &x, &inplace))
    return NULL;
  gs_tensor in = gsp_activation_input(x, inplace);
  return gsp_activation_result(x, in, fn(in), inplace);
}

#define PLAIN(NAME, FN)                                                                            \
  static PyObject *f_##NAME(PyObject *m, PyObject *a, PyObject *k) {                               \
    GSP_SITE();                                                                                    \
    (void)m;                                                                                       \
    return plain(a, k, FN, "O!|p:" #NAME);                                                         \
  }

PLAIN(silu, gs_silu)
PLAIN(selu, gs_selu)
PLAIN(relu6, gs_relu6)
PLAIN(hardsigmoid, gs_hardsigmoid)
PLAIN(hardswish, gs_hardswish)
PLAIN(mish, gs_mish)

static PyObject *f_logsigmoid(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  if (!PyArg_ParseTuple(args, "O!:logsigmoid", &gsp_tensor_type, &x))
    return NULL;
  return gsp_wrap(gs_logsigmoid(gsp_handle(x)));
}

static PyObject *f_elu(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double alpha = 1.0;
  int inplace = 0;
  static char *kwlist[] = {"input", "alpha", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|dp:elu", kwlist, &gsp_tensor_type, &x, &alpha,
                                   &inplace))
    return NULL;
  gs_tensor in = gsp_activation_input(x, inplace);
  return gsp_activation_result(x, in, gs_elu(in, alpha), inplace);
}

static PyObject *f_softplus(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double beta = 1.0, threshold = 20.0;
  static char *kwlist[] = {"input", "beta", "threshold", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|dd:softplus", kwlist, &gsp_tensor_type, &x,
                                   &beta, &threshold))
    return NULL;
  return gsp_wrap(gs_softplus(gsp_handle(x), beta, threshold));
}

static PyObject *f_hardtanh(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double min_val = -1.0, max_val = 1.0;
  int inplace = 0;
  static char *kwlist[] = {"input", "min_val", "max_val", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|ddp:hardtanh", kwlist, &gsp_tensor_type, &x,
                                   &min_val, &max_val, &inplace))
    return NULL;
  gs_tensor in = gsp_activation_input(x, inplace);
  return gsp_activation_result(x, in, gs_hardtanh(in, min_val, max_val), inplace);
}

#define KW (METH_VARARGS | METH_KEYWORDS)
PyMethodDef gsp_activation_functions[] = {
    {"silu", GSP_FN(f_silu), KW, NULL},
    {"elu", GSP_FN(f_elu), KW, NULL},
    {"selu", GSP_FN(f_selu), KW, NULL},
    {"softplus", GSP_FN(f_softplus), KW, NULL},
    {"hardtanh", GSP_FN(f_hardtanh), KW, NULL},
    {"relu6", GSP_FN(f_relu6), KW, NULL},
    {"hardsigmoid", GSP_FN(f_hardsigmoid), KW, NULL},
    {"hardswish", GSP_FN(f_hardswish), KW, NULL},
    {"logsigmoid", f_logsigmoid, METH_VARARGS, NULL},
    {"mish", GSP_FN(f_mish), KW, NULL},
    {NULL, NULL, 0, NULL},
};
