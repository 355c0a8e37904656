/* functional.c: gradscope.nn.functional: losses (cross_entropy, nll_loss, mse_loss,
 * binary_cross_entropy_with_logits) with PyTorch's reduction= strings, and the functional
 * layers (dropout, layer_norm, linear, embedding, leaky_relu, conv2d, max_pool2d, avg_pool2d,
 * batch_norm). Activations (relu, softmax,
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

/* weight=None or a tensor: the class weight (torch's weight=), GS_NO_TENSOR for none. */
static int class_weight_of(PyObject *o, gs_tensor *out) {
  if (o == Py_None) {
    *out = GS_NO_TENSOR;
    return 0;
  }
  if (!PyObject_TypeCheck(o, &gsp_tensor_type)) {
    PyErr_Format(PyExc_TypeError, "weight must be a Tensor or None, not %s", Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = gsp_handle(o);
  return 0;
}

static PyObject *f_cross_entropy(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *input, *target, *weight = Py_None;
  const char *reduction = "mean";
  double smoothing = 0.0;
  long long ignore_index = -100; /* torch's default */
  static char *kwlist[] = {"input",        "target", "reduction", "label_smoothing",
                           "ignore_index", "weight", NULL};
  gs_reduction r;
  gs_tensor w;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|$sdLO:cross_entropy", kwlist,
                                   &gsp_tensor_type, &input, &gsp_tensor_type, &target, &reduction,
                                   &smoothing, &ignore_index, &weight) ||
      reduction_of(reduction, &r) < 0 || class_weight_of(weight, &w) < 0)
    return NULL;
  return gsp_wrap(gs_cross_entropy_weighted(gsp_handle(input), gsp_handle(target), w, r, smoothing,
                                            ignore_index));
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
  PyObject *input, *target, *weight = Py_None;
  const char *reduction = "mean";
  long long ignore_index = -100;
  static char *kwlist[] = {"input", "target", "reduction", "ignore_index", "weight", NULL};
  gs_reduction r;
  gs_tensor w;
  if (!PyArg_ParseTupleAndKeywords(a, k, "O!O!|$sLO:nll_loss", kwlist, &gsp_tensor_type, &input,
                                   &gsp_tensor_type, &target, &reduction, &ignore_index, &weight) ||
      reduction_of(reduction, &r) < 0 || class_weight_of(weight, &w) < 0)
    return NULL;
  return gsp_wrap(gs_nll_loss_weighted(gsp_handle(input), gsp_handle(target), w, r, ignore_index));
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
  int training = 1, inplace = 0;
  static char *kwlist[] = {"input", "p", "training", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|dpp:dropout", kwlist, &gsp_tensor_type, &x, &p,
                                   &training, &inplace))
    return NULL;
  gs_tensor in = gsp_activation_input(x, inplace); /* inplace: written into x, as torch's */
  gs_tensor r = gs_dropout(in, p, training, NULL);
  if (inplace && r.id == in.id)
    r = gs_clone(in);
  return gsp_activation_result(x, in, r, inplace);
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
  int64_t dims[GS_MAX_DIMS];
  int nd = 1;
  if (PyLong_Check(shape)) {
    dims[0] = PyLong_AsLongLong(shape);
    if (PyErr_Occurred())
      return NULL;
  } else if ((nd = gsp_shape_from_sequence(shape, dims)) < 0) {
    return NULL;
  }
  gs_tensor tw = gsp_is_tensor(w) ? gsp_handle(w) : GS_NO_TENSOR;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_layer_norm_shape(gsp_handle(x), dims, nd, tw, tb, eps));
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
  return gsp_wrap(
      gs_linear(gsp_handle(x), gsp_handle(w), gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR));
}

/* F.embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
 * scale_grad_by_freq=False, sparse=False) as torch's: a negative padding_idx counts from the
 * end; max_norm renormalises the rows input names in place first (gs_embedding_renorm_). */
static PyObject *f_embedding(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *idx, *w, *padding = Py_None, *max_norm = Py_None;
  double norm_type = 2.0;
  int scale = 0, sparse = 0;
  static char *kwlist[] = {"input",    "weight",    "padding_idx",
                           "max_norm", "norm_type", "scale_grad_by_freq",
                           "sparse",   NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|OOdpp:embedding", kwlist, &gsp_tensor_type,
                                   &idx, &gsp_tensor_type, &w, &padding, &max_norm, &norm_type,
                                   &scale, &sparse))
    return NULL;
  if (sparse) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "embedding(sparse=True) is not supported by gradscope yet: it has no sparse "
                    "gradients");
    return NULL;
  }
  gs_tensor weight = gsp_handle(w), index = gsp_handle(idx);
  int64_t rows = gs_ndim(weight) == 2 ? gs_size(weight, 0) : 0, pad = -1;
  if (padding != Py_None) {
    long long p = PyLong_AsLongLong(padding);
    if (p == -1 && PyErr_Occurred())
      return NULL;
    if (p < -rows || p >= rows) {
      PyErr_SetString(PyExc_AssertionError, "Padding_idx must be within num_embeddings");
      return NULL;
    }
    pad = p < 0 ? p + rows : p;
  }
  gs_clear_error();
  if (max_norm != Py_None) {
    double limit = PyFloat_AsDouble(max_norm);
    if (limit == -1.0 && PyErr_Occurred())
      return NULL;
    if (!gs_embedding_renorm_(weight, index, limit, norm_type))
      return gsp_raise_engine_error();
  }
  return gsp_wrap(gs_embedding_with(weight, index, pad, scale));
}

static PyObject *f_leaky_relu(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  double slope = 0.01;
  int inplace = 0;
  static char *kwlist[] = {"input", "negative_slope", "inplace", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|dp:leaky_relu", kwlist, &gsp_tensor_type, &x,
                                   &slope, &inplace))
    return NULL;
  gs_tensor in = gsp_activation_input(x, inplace);
  return gsp_activation_result(x, in, gs_leaky_relu(in, slope), inplace);
}

/* An int or a pair of ints (PyTorch's _pair), into out[0..1]; None leaves out as it is. */
int gsp_int_pair(PyObject *o, int64_t *out, const char *what);
int gsp_int_pair(PyObject *o, int64_t *out, const char *what) {
  if (o == Py_None)
    return 0;
  if (PyLong_Check(o)) {
    out[0] = out[1] = PyLong_AsLongLong(o);
    return PyErr_Occurred() ? -1 : 0;
  }
  PyObject *seq = PySequence_Fast(o, what);
  if (!seq)
    return -1;
  int rc = 0;
  if (PySequence_Fast_GET_SIZE(seq) == 1 || PySequence_Fast_GET_SIZE(seq) == 2) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < 2 && rc == 0; i++) {
      out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, n == 1 ? 0 : i));
      if (PyErr_Occurred())
        rc = -1;
    }
  } else {
    PyErr_Format(PyExc_ValueError, "%s must be an int or a pair of ints", what);
    rc = -1;
  }
  Py_DECREF(seq);
  return rc;
}

/* torch's string paddings of a 2-D convolution: "valid" is none; "same" (stride 1 only) is, per
 * dim, dilation * (kernel - 1) zeros split with the odd one on the far side: near[] as the
 * convolution's padding, far_extra[] the zeros to add first on the far side. 0, or -1 with a
 * ValueError in torch's words. */
int gsp_conv2d_string_padding(const char *fn, PyObject *padding, const int64_t *kernel,
                              const int64_t *stride, const int64_t *dilation, int64_t *near,
                              int64_t *far_extra);
int gsp_conv2d_string_padding(const char *fn, PyObject *padding, const int64_t *kernel,
                              const int64_t *stride, const int64_t *dilation, int64_t *near,
                              int64_t *far_extra) {
  const char *s = PyUnicode_AsUTF8(padding);
  if (!s)
    return -1;
  near[0] = near[1] = far_extra[0] = far_extra[1] = 0;
  if (strcmp(s, "valid") == 0)
    return 0;
  if (strcmp(s, "same") != 0) {
    PyErr_Format(PyExc_ValueError,
                 "Invalid padding string '%s', should be one of {'valid', 'same'}", s);
    return -1;
  }
  if (stride[0] != 1 || stride[1] != 1) {
    PyErr_Format(PyExc_ValueError, "%s: padding='same' is not supported for strided convolutions",
                 fn);
    return -1;
  }
  for (int d = 0; d < 2; d++) {
    int64_t total = dilation[d] * (kernel[d] - 1);
    near[d] = total / 2;
    far_extra[d] = total - 2 * near[d];
  }
  return 0;
}

/* F.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1); padding may be
 * 'valid' or 'same' as in torch. */
static PyObject *f_conv2d(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b = Py_None, *stride = Py_None, *padding = Py_None, *dilation = Py_None;
  long long groups = 1;
  static char *kwlist[] = {"input", "weight", "bias", "stride", "padding", "dilation", "groups",
                           NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|OOOOL:conv2d", kwlist, &gsp_tensor_type,
                                   &x, &gsp_tensor_type, &w, &b, &stride, &padding, &dilation,
                                   &groups))
    return NULL;
  gs_conv2d_options opt = {{1, 1}, {0, 0}, {1, 1}, groups};
  bool text = PyUnicode_Check(padding);
  if (gsp_int_pair(stride, opt.stride, "stride") < 0 ||
      (!text && gsp_int_pair(padding, opt.padding, "padding") < 0) ||
      gsp_int_pair(dilation, opt.dilation, "dilation") < 0)
    return NULL;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  gs_tensor input = gsp_handle(x), weight = gsp_handle(w);
  int64_t far[2] = {0, 0};
  if (text) {
    int64_t kernel[2] = {gs_ndim(weight) == 4 ? gs_size(weight, 2) : 1,
                         gs_ndim(weight) == 4 ? gs_size(weight, 3) : 1};
    if (gsp_conv2d_string_padding("conv2d", padding, kernel, opt.stride, opt.dilation, opt.padding,
                                  far) < 0)
      return NULL;
  }
  if (!far[0] && !far[1])
    return gsp_wrap(gs_conv2d(input, weight, tb, &opt));
  /* an odd number of 'same' zeros: the extra one on the far side first, as torch */
  gs_clear_error();
  gs_tensor padded = gs_constant_pad_nd(input, (int64_t[]){0, far[1], 0, far[0]}, 4, 0.0);
  if (!padded.id)
    return gsp_raise_engine_error();
  gs_tensor y = gs_conv2d(padded, weight, tb, &opt);
  gs_dispose(padded);
  return gsp_wrap(y);
}

/* _conv1d(input, weight, bias, stride, padding, dilation, groups): the engine's conv1d, all
 * ints, for F.conv1d (nn/spatial.py), which reads torch's forms of the arguments. */
static PyObject *f_conv1d(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b;
  long long stride, padding, dilation, groups;
  if (!PyArg_ParseTuple(args, "O!O!OLLLL:_conv1d", &gsp_tensor_type, &x, &gsp_tensor_type, &w, &b,
                        &stride, &padding, &dilation, &groups))
    return NULL;
  gs_conv1d_options opt = {stride, padding, dilation, groups};
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_conv1d(gsp_handle(x), gsp_handle(w), tb, &opt));
}

/* F.conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
 * groups=1, dilation=1), torch's argument order. */
static PyObject *f_conv_transpose2d(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b = Py_None, *stride = Py_None, *padding = Py_None, *outpad = Py_None;
  PyObject *dilation = Py_None;
  long long groups = 1;
  static char *kwlist[] = {"input",          "weight", "bias",     "stride", "padding",
                           "output_padding", "groups", "dilation", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|OOOOLO:conv_transpose2d", kwlist,
                                   &gsp_tensor_type, &x, &gsp_tensor_type, &w, &b, &stride,
                                   &padding, &outpad, &groups, &dilation))
    return NULL;
  gs_conv_transpose2d_options opt = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, groups};
  if (gsp_int_pair(stride, opt.stride, "stride") < 0 ||
      gsp_int_pair(padding, opt.padding, "padding") < 0 ||
      gsp_int_pair(outpad, opt.output_padding, "output_padding") < 0 ||
      gsp_int_pair(dilation, opt.dilation, "dilation") < 0)
    return NULL;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_conv_transpose2d(gsp_handle(x), gsp_handle(w), tb, &opt));
}

/* A max pooling's result: the pooled tensor, or (pooled, indices) with return_indices. */
static PyObject *pool_result(gs_tensor pooled, gs_tensor indices, bool return_indices) {
  PyObject *out = gsp_wrap(pooled);
  if (!out || !return_indices)
    return out;
  PyObject *idx = gsp_wrap(indices);
  if (!idx) {
    Py_DECREF(out);
    return NULL;
  }
  return Py_BuildValue("(NN)", out, idx);
}

/* F.max_pool2d / F.avg_pool2d with PyTorch's arguments (stride None: the kernel size). */
static PyObject *pool2d(PyObject *args, PyObject *kwargs, bool is_max) {
  GSP_SITE();
  PyObject *x, *kernel, *stride = Py_None, *padding = Py_None, *dilation = Py_None;
  int ceil_mode = 0, return_indices = 0, count_include_pad = 1;
  PyObject *divisor_override = Py_None;
  gs_pool2d_options opt = {0};
  if (is_max) {
    static char *kwlist[] = {"input", "kernel_size", "stride", "padding", "dilation",
                             "ceil_mode", "return_indices", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|OOOpp:max_pool2d", kwlist,
                                     &gsp_tensor_type, &x, &kernel, &stride, &padding, &dilation,
                                     &ceil_mode, &return_indices))
      return NULL;
  } else {
    static char *kwlist[] = {"input", "kernel_size", "stride", "padding", "ceil_mode",
                             "count_include_pad", "divisor_override", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|OOppO:avg_pool2d", kwlist,
                                     &gsp_tensor_type, &x, &kernel, &stride, &padding,
                                     &ceil_mode, &count_include_pad, &divisor_override))
      return NULL;
    if (divisor_override != Py_None) {
      PyErr_SetString(PyExc_ValueError,
                      "avg_pool2d(): divisor_override is not supported by gradscope yet");
      return NULL;
    }
  }
  if (gsp_int_pair(kernel, opt.kernel, "kernel_size") < 0 ||
      gsp_int_pair(stride, opt.stride, "stride") < 0 ||
      gsp_int_pair(padding, opt.padding, "padding") < 0 ||
      gsp_int_pair(dilation, opt.dilation, "dilation") < 0)
    return NULL;
  /* An empty stride list (stride=[]) is PyTorch's "the kernel size" too. */
  opt.ceil_mode = ceil_mode;
  opt.count_exclude_pad = !count_include_pad;
  if (!is_max)
    return gsp_wrap(gs_avg_pool2d(gsp_handle(x), &opt));
  gs_tensor indices = GS_NO_TENSOR;
  return pool_result(gs_max_pool2d(gsp_handle(x), &opt, return_indices ? &indices : NULL), indices,
                     return_indices);
}
static PyObject *f_max_pool2d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return pool2d(a, k, true); }
static PyObject *f_avg_pool2d(PyObject *m, PyObject *a, PyObject *k) { (void)m; return pool2d(a, k, false); }

/* ---- volumetric ops: all ints, for nn/volumetric.py, which reads torch's forms ------------ */

/* _conv3d(input, weight, bias, stride, padding, dilation, groups), each spatial argument a
 * (d, h, w) triple of ints. */
static PyObject *f_conv3d(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b;
  gs_conv3d_options o;
  long long v[9], groups;
  if (!PyArg_ParseTuple(args, "O!O!O(LLL)(LLL)(LLL)L:_conv3d", &gsp_tensor_type, &x,
                        &gsp_tensor_type, &w, &b, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                        &v[7], &v[8], &groups))
    return NULL;
  for (int i = 0; i < 3; i++)
    o.stride[i] = v[i], o.padding[i] = v[3 + i], o.dilation[i] = v[6 + i];
  o.groups = groups;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_conv3d(gsp_handle(x), gsp_handle(w), tb, &o));
}

/* _conv_transpose3d(input, weight, bias, stride, padding, output_padding, dilation, groups). */
static PyObject *f_conv_transpose3d(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b;
  gs_conv_transpose3d_options o;
  long long v[12], groups;
  if (!PyArg_ParseTuple(args, "O!O!O(LLL)(LLL)(LLL)(LLL)L:_conv_transpose3d", &gsp_tensor_type, &x,
                        &gsp_tensor_type, &w, &b, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                        &v[7], &v[8], &v[9], &v[10], &v[11], &groups))
    return NULL;
  for (int i = 0; i < 3; i++)
    o.stride[i] = v[i], o.padding[i] = v[3 + i], o.output_padding[i] = v[6 + i],
    o.dilation[i] = v[9 + i];
  o.groups = groups;
  gs_tensor tb = gsp_is_tensor(b) ? gsp_handle(b) : GS_NO_TENSOR;
  return gsp_wrap(gs_conv_transpose3d(gsp_handle(x), gsp_handle(w), tb, &o));
}

/* _pool3d(input, is_max, kernel, stride, padding, dilation, ceil_mode, count_include_pad,
 * return_indices): max_pool3d or avg_pool3d. */
static PyObject *f_pool3d(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  int is_max, ceil_mode, count_include_pad, return_indices;
  long long v[12];
  if (!PyArg_ParseTuple(args, "O!p(LLL)(LLL)(LLL)(LLL)ppp:_pool3d", &gsp_tensor_type, &x, &is_max,
                        &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                        &v[10], &v[11], &ceil_mode, &count_include_pad, &return_indices))
    return NULL;
  gs_pool3d_options o = {.ceil_mode = ceil_mode, .count_exclude_pad = !count_include_pad};
  for (int i = 0; i < 3; i++)
    o.kernel[i] = v[i], o.stride[i] = v[3 + i], o.padding[i] = v[6 + i], o.dilation[i] = v[9 + i];
  if (!is_max)
    return gsp_wrap(gs_avg_pool3d(gsp_handle(x), &o));
  gs_tensor indices = GS_NO_TENSOR;
  return pool_result(gs_max_pool3d(gsp_handle(x), &o, return_indices ? &indices : NULL), indices,
                     return_indices);
}

static gs_tensor optional_tensor(PyObject *o) {
  return gsp_is_tensor(o) ? gsp_handle(o) : GS_NO_TENSOR;
}

/* F.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
 * momentum=0.1, eps=1e-5). */
static PyObject *f_batch_norm(PyObject *m, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  (void)m;
  PyObject *x, *rm, *rv, *w = Py_None, *b = Py_None;
  int training = 0;
  double momentum = 0.1, eps = 1e-5;
  static char *kwlist[] = {"input", "running_mean", "running_var", "weight", "bias", "training",
                           "momentum", "eps", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO|OOpdd:batch_norm", kwlist,
                                   &gsp_tensor_type, &x, &rm, &rv, &w, &b, &training, &momentum,
                                   &eps))
    return NULL;
  return gsp_wrap(gs_batch_norm(gsp_handle(x), optional_tensor(rm), optional_tensor(rv),
                                optional_tensor(w), optional_tensor(b), training, momentum, eps));
}

/* _group_norm(input, num_groups, weight, bias, eps): F.group_norm after its own checks, one
 * node (NativeGroupNormBackward0) */
static PyObject *f_group_norm(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *w, *b;
  long long groups;
  double eps;
  if (!PyArg_ParseTuple(args, "O!LOOd:_group_norm", &gsp_tensor_type, &x, &groups, &w, &b, &eps))
    return NULL;
  return gsp_wrap(
      gs_group_norm(gsp_handle(x), groups, optional_tensor(w), optional_tensor(b), eps));
}

/* F.pad's 'reflect', 'replicate' and 'circular' modes after pad's own checks:
 * _reflection_pad(input, pad), _replication_pad(input, pad), _circular_pad(input, pad), each
 * one op (ReflectionPad2DBackward0, ...) */
static PyObject *rows_pad(PyObject *args, gs_padding_mode mode) {
  GSP_SITE();
  static const char *const formats[] = {NULL, "O!O:_reflection_pad", "O!O:_replication_pad",
                                        "O!O:_circular_pad"};
  static const char *const fns[] = {NULL, "reflection_pad", "replication_pad", "circular_pad"};
  PyObject *x, *pad_obj;
  if (!PyArg_ParseTuple(args, formats[mode], &gsp_tensor_type, &x, &pad_obj))
    return NULL;
  int64_t pad[6];
  int n = gsp_ints_from_sequence(pad_obj, pad, 6, fns[mode], "pads");
  if (n < 0)
    return NULL;
  gs_tensor t = gsp_handle(x);
  return gsp_wrap(mode == GS_PADDING_REFLECT     ? gs_reflection_pad(t, pad, n)
                  : mode == GS_PADDING_REPLICATE ? gs_replication_pad(t, pad, n)
                                                 : gs_circular_pad(t, pad, n));
}
static PyObject *f_reflection_pad(PyObject *m, PyObject *a) {
  (void)m;
  return rows_pad(a, GS_PADDING_REFLECT);
}
static PyObject *f_replication_pad(PyObject *m, PyObject *a) {
  (void)m;
  return rows_pad(a, GS_PADDING_REPLICATE);
}
static PyObject *f_circular_pad(PyObject *m, PyObject *a) {
  (void)m;
  return rows_pad(a, GS_PADDING_CIRCULAR);
}

/* F.interpolate's 'nearest' mode after its checks: _upsample_nearest(input, sizes, scales),
 * scales a float (1 / scale_factor) or None per size; one op (UpsampleNearest2DBackward1) */
static PyObject *f_upsample_nearest(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *sizes_obj, *scales_obj;
  if (!PyArg_ParseTuple(args, "O!OO:_upsample_nearest", &gsp_tensor_type, &x, &sizes_obj,
                        &scales_obj))
    return NULL;
  int64_t sizes[3];
  double scales[3] = {0, 0, 0};
  int k = gsp_ints_from_sequence(sizes_obj, sizes, 3, "upsample_nearest", "sizes");
  if (k < 0)
    return NULL;
  PyObject *fast = PySequence_Fast(scales_obj, "_upsample_nearest(): scales must be a sequence");
  if (!fast)
    return NULL;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && i < k; i++) {
    PyObject *s = PySequence_Fast_GET_ITEM(fast, i);
    scales[i] = s == Py_None ? 0.0 : PyFloat_AsDouble(s);
    if (scales[i] == -1.0 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return NULL;
    }
  }
  Py_DECREF(fast);
  return gsp_wrap(gs_upsample_nearest(gsp_handle(x), sizes, scales, k));
}

/* F.interpolate's 'bicubic' mode after its checks: _upsample_bicubic2d(input, (h, w), scales,
 * align_corners), scales a float (1 / scale_factor) or None per size; one op
 * (UpsampleBicubic2DBackward1) */
static PyObject *f_upsample_bicubic2d(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *scale_h, *scale_w;
  long long h, w;
  int align;
  if (!PyArg_ParseTuple(args, "O!(LL)(OO)p:_upsample_bicubic2d", &gsp_tensor_type, &x, &h, &w,
                        &scale_h, &scale_w, &align))
    return NULL;
  double scales[2] = {0, 0};
  PyObject *given[2] = {scale_h, scale_w};
  for (int i = 0; i < 2; i++) {
    scales[i] = given[i] == Py_None ? 0.0 : PyFloat_AsDouble(given[i]);
    if (scales[i] == -1.0 && PyErr_Occurred())
      return NULL;
  }
  return gsp_wrap(gs_upsample_bicubic2d(gsp_handle(x), (int64_t[]){h, w}, scales, align != 0));
}

/* F.grid_sample after its checks: _grid_sample(input, grid, mode, padding_mode,
 * align_corners), mode and padding_mode as torch numbers them (0 bilinear, 1 nearest, 2
 * bicubic; 0 zeros, 1 border, 2 reflection); one op (GridSampler2DBackward0) */
static PyObject *f_grid_sample(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *grid;
  int mode, padding, align;
  if (!PyArg_ParseTuple(args, "O!O!iip:_grid_sample", &gsp_tensor_type, &x, &gsp_tensor_type, &grid,
                        &mode, &padding, &align))
    return NULL;
  return gsp_wrap(gs_grid_sample(gsp_handle(x), gsp_handle(grid), (gs_grid_sample_mode)mode,
                                 (gs_grid_padding)padding, align != 0));
}

/* F.ctc_loss after its checks: _ctc_loss(log_probs [T, N, C], targets (i64, concatenated),
 * input_lengths, target_lengths (i64 [N]), blank, zero_infinity): the per-sample losses, one op
 * (CtcLossBackward0) */
static PyObject *f_ctc_loss(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *lp, *targets, *il, *tl;
  long long blank;
  int zero_infinity;
  if (!PyArg_ParseTuple(args, "O!O!O!O!Lp:_ctc_loss", &gsp_tensor_type, &lp, &gsp_tensor_type,
                        &targets, &gsp_tensor_type, &il, &gsp_tensor_type, &tl, &blank,
                        &zero_infinity))
    return NULL;
  return gsp_wrap(gs_ctc_loss(gsp_handle(lp), gsp_handle(targets), gsp_handle(il), gsp_handle(tl),
                              blank, zero_infinity != 0));
}

/* F.affine_grid after its checks: _affine_grid(theta, size, align_corners), size 4 or 5 ints;
 * one op (AffineGridGeneratorBackward0) */
static PyObject *f_affine_grid(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *theta, *size_obj;
  int align;
  if (!PyArg_ParseTuple(args, "O!Op:_affine_grid", &gsp_tensor_type, &theta, &size_obj, &align))
    return NULL;
  int64_t size[5];
  int n = gsp_ints_from_sequence(size_obj, size, 5, "affine_grid", "size");
  if (n < 0)
    return NULL;
  return gsp_wrap(gs_affine_grid(gsp_handle(theta), size, n, align != 0));
}

/* _unfold(input, kernel, dilation, padding, stride), each an (h, w) pair of ints: the engine's
 * unfold (one Im2ColBackward0 node) for F.unfold (nn/spatial.py), which reads torch's forms */
static PyObject *f_unfold(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x;
  long long v[8];
  if (!PyArg_ParseTuple(args, "O!(LL)(LL)(LL)(LL):_unfold", &gsp_tensor_type, &x, &v[0], &v[1],
                        &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]))
    return NULL;
  int64_t k[2] = {v[0], v[1]}, d[2] = {v[2], v[3]}, p[2] = {v[4], v[5]}, s[2] = {v[6], v[7]};
  return gsp_wrap(gs_unfold(gsp_handle(x), k, d, p, s));
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
    {"embedding", GSP_FN(f_embedding), KW, NULL},
    {"leaky_relu", GSP_FN(f_leaky_relu), KW, NULL},
    {"conv2d", GSP_FN(f_conv2d), KW, NULL},
    {"conv_transpose2d", GSP_FN(f_conv_transpose2d), KW, NULL},
    {"_conv1d", f_conv1d, METH_VARARGS, NULL},
    {"_conv3d", f_conv3d, METH_VARARGS, NULL},
    {"_conv_transpose3d", f_conv_transpose3d, METH_VARARGS, NULL},
    {"_pool3d", f_pool3d, METH_VARARGS, NULL},
    {"_reflection_pad", f_reflection_pad, METH_VARARGS, NULL},
    {"_group_norm", f_group_norm, METH_VARARGS, NULL},
    {"_replication_pad", f_replication_pad, METH_VARARGS, NULL},
    {"_circular_pad", f_circular_pad, METH_VARARGS, NULL},
    {"_upsample_nearest", f_upsample_nearest, METH_VARARGS, NULL},
    {"_unfold", f_unfold, METH_VARARGS, NULL},
    {"_upsample_bicubic2d", f_upsample_bicubic2d, METH_VARARGS, NULL},
    {"_grid_sample", f_grid_sample, METH_VARARGS, NULL},
    {"_ctc_loss", f_ctc_loss, METH_VARARGS, NULL},
    {"_affine_grid", f_affine_grid, METH_VARARGS, NULL},
    {"max_pool2d", GSP_FN(f_max_pool2d), KW, NULL},
    {"avg_pool2d", GSP_FN(f_avg_pool2d), KW, NULL},
    {"batch_norm", GSP_FN(f_batch_norm), KW, NULL},
    {NULL, NULL, 0, NULL},
};

/* The activations' table (functional-activations.c). */
extern PyMethodDef gsp_activation_functions[];

PyObject *gsp_functional_module(void);
PyObject *gsp_functional_module(void) {
  GSP_SITE();
  PyObject *f = PyModule_New("gradscope.nn.functional");
  gsp_docs_fill(functional_functions, "F");
  gsp_docs_fill(gsp_activation_functions, "F");
  if (f && (PyModule_AddFunctions(f, functional_functions) < 0 ||
            PyModule_AddFunctions(f, gsp_activation_functions) < 0))
    Py_CLEAR(f);
  return f;
}
