/* repr.c: repr(t) as PyTorch prints it, and t.tolist().
 *
 * PyTorch's rules, kept so that printed tensors read the same side by side: "tensor(" then the
 * nested rows aligned under each other (7 spaces of continuation), floats as "1." when every
 * value is whole, "%.4f" otherwise and "%.4e" when the magnitudes span too much; more than
 * 1000 elements are summarised with the first and last 3 per dimension and "..." (those
 * numbers, the precision, the line width and the choice of scientific notation are
 * torch.set_printoptions's, through _set_printoptions). Then
 * dtype= when it is not the default for its kind, requires_grad=True on leaves that require it,
 * grad_fn=<...> on results of recorded ops.
 */
#include "gs-py.h"

#include <math.h>
#include <string.h>

/* torch.set_printoptions's values (_set_printoptions below), torch's defaults at the start.
 * sci_mode: -1 chooses by torch's rule, 0 never, 1 always. */
static struct {
  int precision;
  int64_t threshold;
  int edgeitems, linewidth, sci_mode;
} opts = {4, 1000, 3, 80, -1};
#define EDGE opts.edgeitems
#define SUMMARISE_ABOVE opts.threshold
#define LINE_WIDTH opts.linewidth

typedef struct printer {
  gs_dtype dtype;
  const char *values; /* row-major copy */
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  bool summarise;
  int width;
  char fmt; /* 'i' whole floats, 'f' fixed, 'e' scientific */
  PyObject *out; /* list of str pieces */
} printer;

static double value_at(const printer *p, int64_t flat) {
  switch (p->dtype) {
  case GS_F32: return ((const float *)p->values)[flat];
  case GS_F64: return ((const double *)p->values)[flat];
  case GS_I64: return (double)((const int64_t *)p->values)[flat];
  case GS_BOOL: return ((const bool *)p->values)[flat];
  case GS_I32: return ((const int32_t *)p->values)[flat];
  case GS_U8: return ((const uint8_t *)p->values)[flat];
  case GS_I8: return ((const int8_t *)p->values)[flat];
  case GS_I16: return ((const int16_t *)p->values)[flat];
  }
  return 0;
}

static int format_value(const printer *p, int64_t flat, char *buf, size_t size) {
  if (p->dtype == GS_BOOL)
    return snprintf(buf, size, "%s", ((const bool *)p->values)[flat] ? "True" : "False");
  if (p->dtype == GS_I64)
    return snprintf(buf, size, "%lld", (long long)((const int64_t *)p->values)[flat]);
  if (gs_dtype_is_integer(p->dtype)) /* i32, u8, i8, i16: exact as doubles */
    return snprintf(buf, size, "%d", (int)value_at(p, flat));
  double v = value_at(p, flat);
  if (isnan(v))
    return snprintf(buf, size, "nan");
  if (isinf(v))
    return snprintf(buf, size, v > 0 ? "inf" : "-inf");
  if (p->fmt == 'i')
    return snprintf(buf, size, "%.0f.", v);
  if (p->fmt == 'e')
    return snprintf(buf, size, "%.*e", opts.precision, v);
  return snprintf(buf, size, "%.*f", opts.precision, v);
}

/* Whether index i of a dimension of size n is shown (summarised: the first and last EDGE). */
static bool shown(const printer *p, int64_t i, int64_t n) {
  return !p->summarise || n <= 2 * EDGE || i < EDGE || i >= n - EDGE;
}

/* Calls leaf(p, flat, data) for each shown element, in order: the walk behind choosing the
 * format and the width. */
static void each_shown(printer *p, int d, int64_t flat, void (*leaf)(printer *, int64_t, void *),
                       void *data) {
  if (d == p->ndim) {
    leaf(p, flat, data);
    return;
  }
  int64_t stride = 1;
  for (int k = d + 1; k < p->ndim; k++)
    stride *= p->shape[k];
  for (int64_t i = 0; i < p->shape[d]; i++)
    if (shown(p, i, p->shape[d]))
      each_shown(p, d + 1, flat + i * stride, leaf, data);
}

/* What the shown values say about the format: the largest and smallest non-zero magnitude,
 * and whether all are whole. */
typedef struct magnitudes {
  double max_abs, min_abs;
  bool whole;
} magnitudes;

static void measure(printer *p, int64_t flat, void *data) {
  magnitudes *m = data;
  double v = value_at(p, flat);
  if (isfinite(v)) {
    double a = fabs(v);
    if (a > m->max_abs)
      m->max_abs = a;
    if (a != 0 && a < m->min_abs)
      m->min_abs = a;
    if (v != floor(v))
      m->whole = false;
  }
}

/* torch 1.13 pads to the widest finite nonzero value of a floating tensor (every value of
 * an integer one): zeros, infinities and NaNs print as they are, wider or not. */
static void widen(printer *p, int64_t flat, void *data) {
  (void)data;
  if (gs_dtype_is_floating(p->dtype)) {
    double v = value_at(p, flat);
    if (!isfinite(v) || v == 0)
      return;
  }
  char buf[64];
  int w = format_value(p, flat, buf, sizeof buf);
  if (w > p->width)
    p->width = w;
}

static int emit(printer *p, const char *s) {
  PyObject *piece = PyUnicode_FromString(s);
  if (!piece)
    return -1;
  int rc = PyList_Append(p->out, piece);
  Py_DECREF(piece);
  return rc;
}

/* The length torch's _add_suffixes starts from: the characters after the output's last
 * newline, plus 2 (its len(s) - s.rfind('\n') + 1). */
static int last_line_len(printer *p) {
  Py_ssize_t after = 0;
  for (Py_ssize_t i = PyList_GET_SIZE(p->out) - 1; i >= 0; i--) {
    PyObject *piece = PyList_GET_ITEM(p->out, i);
    Py_ssize_t n = PyUnicode_GET_LENGTH(piece);
    Py_ssize_t nl = PyUnicode_FindChar(piece, '\n', 0, n, -1);
    if (nl >= 0)
      return (int)(after + n - nl - 1 + 2);
    after += n;
  }
  return (int)(after + 2);
}

/* A suffix (dtype=..., grad_fn=...) as torch's _add_suffixes places it: after ", " on the
 * same line, or on a new line indented under "tensor(" when the line would pass the width.
 * *line is torch's running last_line_len (negative: not yet measured). */
static int emit_suffix(printer *p, const char *suffix, int *line) {
  int len = (int)strlen(suffix);
  if (*line < 0)
    *line = last_line_len(p);
  if (*line + len + 2 > LINE_WIDTH) {
    *line = 7 + len;
    return emit(p, ",\n       ") < 0 ? -1 : emit(p, suffix);
  }
  *line += len + 2;
  return emit(p, ", ") < 0 ? -1 : emit(p, suffix);
}

static int emit_rows(printer *p, int d, int64_t flat, int indent) {
  char buf[96];
  if (d == p->ndim) {
    char v[64];
    format_value(p, flat, v, sizeof v);
    snprintf(buf, sizeof buf, "%*s", p->width, v);
    return emit(p, buf);
  }
  int64_t n = p->shape[d], stride = 1;
  for (int k = d + 1; k < p->ndim; k++)
    stride *= p->shape[k];
  if (emit(p, "[") < 0)
    return -1;
  bool last_dim = d == p->ndim - 1;
  int per_line = (LINE_WIDTH - indent - 1) / (p->width + 2);
  if (per_line < 1)
    per_line = 1;
  int on_line = 0;
  bool first = true;
  for (int64_t i = 0; i < n; i++) {
    if (!shown(p, i, n)) {
      if (i == EDGE) {
        if (emit(p, last_dim ? ",  ..." : ",\n") < 0) /* torch's " ..." item after ", " */
          return -1;
        if (!last_dim) {
          snprintf(buf, sizeof buf, "%*s...", indent + 1, "");
          if (emit(p, buf) < 0)
            return -1;
        }
      }
      continue;
    }
    if (!first) {
      if (last_dim) {
        if (++on_line >= per_line) {
          on_line = 0;
          snprintf(buf, sizeof buf, ",\n%*s", indent + 1, "");
        } else {
          snprintf(buf, sizeof buf, ", ");
        }
      } else {
        /* One blank line between blocks of 3 or more dimensions, as PyTorch. */
        int blank = p->ndim - d - 2;
        snprintf(buf, sizeof buf, ",%s%*s", blank >= 1 ? "\n\n" : "\n", indent + 1, "");
      }
      if (emit(p, buf) < 0)
        return -1;
    }
    first = false;
    if (emit_rows(p, d + 1, flat + i * stride, indent + 1) < 0)
      return -1;
  }
  return emit(p, "]");
}

/* A row-major copy of t's values (PyMem_Malloc'd), or NULL raised. */
static char *copy_values(gs_tensor t, int64_t *numel_out) {
  int64_t numel = gs_numel(t);
  if (numel < 0) {
    gsp_raise_engine_error();
    return NULL;
  }
  size_t bytes = (size_t)numel * gs_dtype_size(gs_dtype_of(t));
  char *values = PyMem_Malloc(bytes ? bytes : 1);
  if (!values) {
    PyErr_NoMemory();
    return NULL;
  }
  if (gs_copy_to(t, values, bytes) < 0) {
    PyMem_Free(values);
    gsp_raise_engine_error();
    return NULL;
  }
  *numel_out = numel;
  return values;
}

/* _set_printoptions(precision, threshold, edgeitems, linewidth, sci_mode): the repr's options
 * (surface.py's set_printoptions applies torch's profiles and keeps what is not given). */
PyObject *gsp_set_printoptions(PyObject *m, PyObject *args) {
  (void)m;
  int precision, edgeitems, linewidth, sci_mode;
  long long threshold;
  if (!PyArg_ParseTuple(args, "iLiii:_set_printoptions", &precision, &threshold, &edgeitems,
                        &linewidth, &sci_mode))
    return NULL;
  if (precision < 0 || precision > 30 || threshold < 0 || edgeitems < 0 || linewidth < 1 ||
      sci_mode < -1 || sci_mode > 1) {
    PyErr_Format(PyExc_ValueError,
                 "set_printoptions: expected precision in 0..30, threshold >= 0, edgeitems >= 0, "
                 "linewidth >= 1, got %d, %lld, %d, %d",
                 precision, threshold, edgeitems, linewidth);
    return NULL;
  }
  opts.precision = precision;
  opts.threshold = threshold;
  opts.edgeitems = edgeitems;
  opts.linewidth = linewidth;
  opts.sci_mode = sci_mode;
  Py_RETURN_NONE;
}

PyObject *gsp_tensor_repr(PyObject *self) {
  GSP_SITE();
  gs_tensor t = gsp_handle(self);
  if (!gs_is_alive(t)) {
    gs_clear_error();
    gs_ndim(t); /* the engine's stale-handle message, naming what disposed it */
    PyObject *r = PyUnicode_FromFormat("<gradscope.Tensor (disposed): %s>", gs_last_error());
    gs_clear_error();
    return r;
  }
  printer p = {.dtype = gs_dtype_of(t)};
  p.ndim = gs_shape(t, p.shape);
  int64_t numel;
  char *values = copy_values(t, &numel);
  if (!values)
    return NULL;
  p.values = values;
  p.summarise = numel > SUMMARISE_ABOVE;
  p.out = PyList_New(0);
  if (!p.out) {
    PyMem_Free(values);
    return NULL;
  }
  /* torch.nn.Parameter's repr: the tensor's under a first line that says what it is */
  int rc = gs_is_parameter(t) && !gsp_is_buffer(t) ? emit(&p, "Parameter containing:\n") : 0;
  rc = rc < 0 ? rc : emit(&p, "tensor(");
  if (numel == 0) {
    rc = rc < 0 ? rc : emit(&p, "[]");
  } else {
    magnitudes m = {0, INFINITY, true};
    each_shown(&p, 0, 0, measure, &m);
    double max_abs = m.max_abs, min_abs = m.min_abs;
    bool whole = m.whole;
    /* torch 1.13's rule (_tensor_str._Formatter), over the finite nonzero magnitudes: whole
     * numbers too go scientific past a ratio of 1000 or 1e8. */
    p.fmt = max_abs >= 1e8 || max_abs / min_abs > 1000 || (!whole && min_abs < 1e-4) ? 'e'
            : whole                                                                  ? 'i'
                                                                                     : 'f';
    if (whole && p.dtype != GS_F32 && p.dtype != GS_F64)
      p.fmt = 'i';
    each_shown(&p, 0, 0, widen, NULL);
    /* torch measures the column width in the format its rule chose and only then applies a
     * forced sci_mode, so forced values are padded to that width (often not at all) */
    if (opts.sci_mode == 1 && (p.dtype == GS_F32 || p.dtype == GS_F64))
      p.fmt = 'e';
    else if (opts.sci_mode == 0 && p.fmt == 'e')
      p.fmt = whole ? 'i' : 'f';
    rc = rc < 0 ? rc : emit_rows(&p, 0, 0, 7);
  }
  PyMem_Free(values);
  char suffix[160];
  int line = -1;
  if (rc == 0 && numel == 0 && p.ndim != 1) {
    int n = snprintf(suffix, sizeof suffix, "size=(");
    for (int i = 0; i < p.ndim; i++)
      n += snprintf(suffix + n, sizeof suffix - (size_t)n, i ? ", %lld" : "%lld",
                    (long long)p.shape[i]);
    snprintf(suffix + n, sizeof suffix - (size_t)n, p.ndim == 1 ? ",)" : ")");
    rc = emit_suffix(&p, suffix, &line);
  }
  /* torch names every dtype but its defaults (the default floating dtype; int64 and bool
   * unless empty). */
  bool named =
      p.dtype != gsp_default_dtype() && ((p.dtype != GS_I64 && p.dtype != GS_BOOL) || numel == 0);
  if (rc == 0 && named) {
    snprintf(suffix, sizeof suffix, "dtype=%s.%s", gsp_dtype_module_name(),
             gsp_dtype_torch_name(p.dtype));
    rc = emit_suffix(&p, suffix, &line);
  }
  const char *fn = gs_grad_fn_name(t);
  /* Under gradscope.as_torch the node is named as torch prints it (MulBackward0), so that a
   * program's printed tensors read as they do under torch; else by the engine's name, the
   * inspector's. */
  bool torch_names = fn && rc == 0 && gsp_named_as_torch();
  PyObject *torch_fn = torch_names ? gsp_node_torch_name(gs_grad_fn(t)) : NULL;
  const char *text = torch_fn ? PyUnicode_AsUTF8(torch_fn) : NULL;
  if (text)
    fn = text;
  else if (torch_names)
    PyErr_Clear(); /* a name that cannot be had falls back to the engine's */
  if (rc == 0 && fn) {
    snprintf(suffix, sizeof suffix, "grad_fn=<%s>", fn);
    rc = emit_suffix(&p, suffix, &line);
  } else if (rc == 0 && gs_requires_grad(t)) {
    rc = emit_suffix(&p, "requires_grad=True", &line);
  }
  Py_XDECREF(torch_fn);
  rc = rc < 0 ? rc : emit(&p, ")");
  PyObject *result = NULL;
  if (rc == 0) {
    PyObject *empty = PyUnicode_FromString("");
    if (empty)
      result = PyUnicode_Join(empty, p.out);
    Py_XDECREF(empty);
  }
  Py_DECREF(p.out);
  return result;
}

/* ---- tolist ------------------------------------------------------------------------------ */

static PyObject *to_python(gs_dtype dtype, const char *values, int64_t flat) {
  switch (dtype) {
  case GS_F32: return PyFloat_FromDouble(((const float *)values)[flat]);
  case GS_F64: return PyFloat_FromDouble(((const double *)values)[flat]);
  case GS_I64: return PyLong_FromLongLong(((const int64_t *)values)[flat]);
  case GS_BOOL: return PyBool_FromLong(((const bool *)values)[flat]);
  case GS_I32: return PyLong_FromLong(((const int32_t *)values)[flat]);
  case GS_U8: return PyLong_FromLong(((const uint8_t *)values)[flat]);
  case GS_I8: return PyLong_FromLong(((const int8_t *)values)[flat]);
  case GS_I16: return PyLong_FromLong(((const int16_t *)values)[flat]);
  }
  Py_RETURN_NONE;
}

static PyObject *nested_list(gs_dtype dtype, const char *values, const int64_t *shape, int ndim,
                             int d, int64_t flat) {
  if (d == ndim)
    return to_python(dtype, values, flat);
  int64_t stride = 1;
  for (int k = d + 1; k < ndim; k++)
    stride *= shape[k];
  PyObject *list = PyList_New(shape[d]);
  for (int64_t i = 0; list && i < shape[d]; i++) {
    PyObject *item = nested_list(dtype, values, shape, ndim, d + 1, flat + i * stride);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject *gsp_tensor_tolist(PyObject *self, PyObject *unused) {
  GSP_SITE();
  (void)unused;
  gs_tensor t = gsp_handle(self);
  int64_t numel, shape[GS_MAX_DIMS];
  char *values = copy_values(t, &numel);
  if (!values)
    return NULL;
  int nd = gs_shape(t, shape);
  PyObject *list = nested_list(gs_dtype_of(t), values, shape, nd, 0, 0);
  PyMem_Free(values);
  return list;
}
