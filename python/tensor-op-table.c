/* tensor-op-table.c: the Tensor methods that are one engine call each (t.relu(), t.float(),
 * t.add(b), t.eq(b), t.sub_(b), t.numel(), ...), as rows of one table behind one shared
 * trampoline, instead of a C wrapper per method.
 *
 * Each row becomes a method descriptor of its own small type (op_method) in Tensor's dict. The
 * type is a method descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR) with vectorcall, so `t.relu()`
 * calls the trampoline directly with (t,) as a built-in method's call does: no bound object,
 * no extra cost. The argument checks and their messages are CPython's own for METH_NOARGS and
 * METH_O methods, so the errors are what they were when each row was a PyMethodDef.
 */
#include "gs-py.h"

typedef enum {
  ROW_UNARY,          /* t.relu(): a new tensor from t */
  ROW_CONVERT,        /* t.float(): t as another dtype */
  ROW_BINARY,         /* t.add(b): gsp_binary's op (numbers, arrays and tensors as b) */
  ROW_COMPARE,        /* t.eq(b): the rich comparison */
  ROW_INPLACE,        /* t.sub_(b): writes into t, returns t */
  ROW_INFO,           /* t.numel(): an integer about t */
  ROW_SHAPE,          /* t.view(2, -1) or t.view((2, -1)): a new tensor from t and a shape */
  ROW_UNARY_INPLACE,  /* t.relu_(): the unary op's result copied into t, returns t */
  ROW_BINARY_INPLACE, /* t.fmod_(b): the binary op's result copied into t, returns t */
  ROW_OWN_INPLACE,    /* t.sin_(): the engine's in-place form (its own node becomes t's
                         grad_fn, as in torch), returns t */
} row_kind;

typedef struct op_row {
  const char *name;
  row_kind kind;
  gs_tensor (*unary)(gs_tensor);
  gs_dtype dtype;
  int op; /* GSP_ADD..., or Py_EQ... */
  void (*inplace)(gs_tensor, gs_tensor);
  int64_t (*info)(gs_tensor);
  gs_tensor (*shaped)(gs_tensor, const int64_t *, int);
  void (*own_inplace)(gs_tensor);
} op_row;

static int64_t ndim_info(gs_tensor t) { return gs_ndim(t); }
/* torch.logical_not: true where t is zero (false), for any dtype. */
static gs_tensor logical_not(gs_tensor t) { return gs_eq_scalar(t, 0); }
static int64_t storage_id_info(gs_tensor t) { return (int64_t)gs_storage_id(t); }

#define UNARY(n, f) {.name = #n, .kind = ROW_UNARY, .unary = f}
#define CONVERT(n, d) {.name = #n, .kind = ROW_CONVERT, .dtype = d}
#define BINARY(n, o) {.name = #n, .kind = ROW_BINARY, .op = o}
#define COMPARE(n, o) {.name = #n, .kind = ROW_COMPARE, .op = o}
#define INPLACE(n, f) {.name = #n, .kind = ROW_INPLACE, .inplace = f}
#define INFO(n, f) {.name = #n, .kind = ROW_INFO, .info = f}
#define SHAPE(n, f) {.name = #n, .kind = ROW_SHAPE, .shaped = f}
#define UNARY_INPLACE(n, f) {.name = #n, .kind = ROW_UNARY_INPLACE, .unary = f}
#define BINARY_INPLACE(n, o)                                                                       \
  { .name = #n, .kind = ROW_BINARY_INPLACE, .op = o }
/* The out-of-place op too: integer tensors take the copying path (its dtype check). */
#define OWN_INPLACE(n, f)                                                                          \
  { .name = #n "_", .kind = ROW_OWN_INPLACE, .unary = f, .own_inplace = f##_ }
/* Each unary math op with its in-place form: copying the result in (ops without a node, as
 * ceil), or the engine's own in-place form. */
#define UNARY_AND_INPLACE(n, f) UNARY(n, f), UNARY_INPLACE(n##_, f)
#define UNARY_AND_OWN_INPLACE(n, f) UNARY(n, f), OWN_INPLACE(n, f)

static const op_row op_rows[] = {
    UNARY(relu, gs_relu),
    UNARY(exp, gs_exp),
    UNARY(log, gs_log),
    UNARY(sqrt, gs_sqrt),
    UNARY(rsqrt, gs_rsqrt),
    UNARY(tanh, gs_tanh),
    UNARY(sigmoid, gs_sigmoid),
    UNARY(abs, gs_abs),
    UNARY(neg, gs_neg),
    UNARY(gelu, gs_gelu),
    UNARY(_gelu_tanh, gs_gelu_tanh), /* F.gelu(approximate='tanh') */
    UNARY(sin, gs_sin),
    UNARY(cos, gs_cos),
    UNARY(tan, gs_tan),
    UNARY(detach, gs_detach),
    UNARY(t, gs_t),
    UNARY(floor, gs_floor),
    UNARY(bitwise_not, gs_bitwise_not),
    UNARY(logical_not, logical_not),
    UNARY_AND_INPLACE(ceil, gs_ceil),
    UNARY_AND_INPLACE(trunc, gs_trunc),
    UNARY_AND_OWN_INPLACE(frac, gs_frac),
    UNARY_AND_INPLACE(sign, gs_sign),
    UNARY_AND_OWN_INPLACE(reciprocal, gs_reciprocal),
    UNARY_AND_OWN_INPLACE(square, gs_square),
    UNARY_AND_OWN_INPLACE(log1p, gs_log1p),
    UNARY_AND_OWN_INPLACE(expm1, gs_expm1),
    UNARY_AND_OWN_INPLACE(log2, gs_log2),
    UNARY_AND_OWN_INPLACE(log10, gs_log10),
    UNARY_AND_OWN_INPLACE(asin, gs_asin),
    UNARY_AND_OWN_INPLACE(acos, gs_acos),
    UNARY_AND_OWN_INPLACE(atan, gs_atan),
    UNARY_AND_OWN_INPLACE(sinh, gs_sinh),
    UNARY_AND_OWN_INPLACE(cosh, gs_cosh),
    UNARY_AND_OWN_INPLACE(erf, gs_erf),
    UNARY_AND_OWN_INPLACE(asinh, gs_asinh),
    UNARY_AND_OWN_INPLACE(acosh, gs_acosh),
    UNARY_AND_OWN_INPLACE(atanh, gs_atanh),
    UNARY_AND_OWN_INPLACE(erfc, gs_erfc),
    UNARY_AND_OWN_INPLACE(erfinv, gs_erfinv),
    UNARY_AND_OWN_INPLACE(exp2, gs_exp2),
    UNARY_AND_OWN_INPLACE(lgamma, gs_lgamma),
    UNARY_AND_OWN_INPLACE(digamma, gs_digamma),
    UNARY(i0, gs_i0),
    UNARY_INPLACE(i0_, gs_i0),
    /* torch.special's other Bessel functions and erfcx, for gradscope.special */
    UNARY(_special_i0e, gs_i0e),
    UNARY(_special_i1, gs_i1),
    UNARY(_special_i1e, gs_i1e),
    UNARY(_special_erfcx, gs_erfcx),
    OWN_INPLACE(sin, gs_sin),
    OWN_INPLACE(cos, gs_cos),
    OWN_INPLACE(tan, gs_tan),
    OWN_INPLACE(relu, gs_relu),
    OWN_INPLACE(sigmoid, gs_sigmoid),
    OWN_INPLACE(tanh, gs_tanh),
    OWN_INPLACE(exp, gs_exp),
    OWN_INPLACE(log, gs_log),
    OWN_INPLACE(sqrt, gs_sqrt),
    OWN_INPLACE(abs, gs_abs),
    OWN_INPLACE(neg, gs_neg),
    OWN_INPLACE(rsqrt, gs_rsqrt),
    UNARY_INPLACE(floor_, gs_floor),
    CONVERT(float, GS_F32),
    CONVERT(double, GS_F64),
    CONVERT(long, GS_I64),
    CONVERT(int, GS_I32),
    CONVERT(short, GS_I16),
    CONVERT(char, GS_I8),
    CONVERT(byte, GS_U8),
    CONVERT(bool, GS_BOOL),
    BINARY(add, GSP_ADD),
    BINARY(sub, GSP_SUB),
    BINARY(mul, GSP_MUL),
    BINARY(div, GSP_DIV),
    BINARY(pow, GSP_POW),
    BINARY(matmul, GSP_MATMUL),
    BINARY(maximum, GSP_MAXIMUM),
    BINARY(minimum, GSP_MINIMUM),
    BINARY(floor_divide, GSP_FLOOR_DIV),
    BINARY(remainder, GSP_REMAINDER),
    BINARY(bitwise_and, GSP_AND),
    BINARY(bitwise_or, GSP_OR),
    BINARY(bitwise_xor, GSP_XOR),
    BINARY(true_divide, GSP_DIV),
    BINARY(atan2, GSP_ATAN2),
    BINARY(fmod, GSP_FMOD),
    BINARY(logical_and, GSP_LOGICAL_AND),
    BINARY(logical_or, GSP_LOGICAL_OR),
    BINARY(logical_xor, GSP_LOGICAL_XOR),
    BINARY_INPLACE(atan2_, GSP_ATAN2),
    BINARY_INPLACE(fmod_, GSP_FMOD),
    BINARY_INPLACE(logical_and_, GSP_LOGICAL_AND),
    BINARY_INPLACE(logical_or_, GSP_LOGICAL_OR),
    BINARY_INPLACE(logical_xor_, GSP_LOGICAL_XOR),
    COMPARE(eq, Py_EQ),
    COMPARE(ne, Py_NE),
    COMPARE(lt, Py_LT),
    COMPARE(le, Py_LE),
    COMPARE(gt, Py_GT),
    COMPARE(ge, Py_GE),
    INPLACE(sub_, gs_sub_),
    INPLACE(mul_, gs_mul_),
    INPLACE(div_, gs_div_),
    INPLACE(true_divide_, gs_div_),
    INPLACE(pow_, gs_pow_),
    INPLACE(copy_, gs_copy_),
    SHAPE(view, gs_view),
    SHAPE(reshape, gs_reshape),
    SHAPE(expand, gs_expand),
    INFO(dim, ndim_info),
    INFO(numel, gs_numel),
    INFO(storage_offset, gs_storage_offset),
    INFO(storage_id, storage_id_info),
};

static PyObject *inplace_call(PyObject *self, PyObject *other, void (*fn)(gs_tensor, gs_tensor)) {
  gs_tensor t = gsp_handle(self), b, temp = GS_NO_TENSOR;
  if (gsp_tensor_arg(other, &b, &temp, gs_dtype_of(t)) < 0)
    return NULL;
  gs_clear_error();
  fn(t, b);
  gs_dispose(temp);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

/* Writes the result r of an op on self into self, as torch's in-place forms: a floating result
 * cannot go into an integer or bool tensor (torch: "result type Float can't be cast to the
 * desired output type Long"). r stays the caller's. */
/* A dtype as torch's messages name it (its ScalarType). */
static const char *scalar_type_name(gs_dtype dt) {
  switch (dt) {
  case GS_F32: return "Float";
  case GS_F64: return "Double";
  case GS_I64: return "Long";
  case GS_I32: return "Int";
  case GS_I16: return "Short";
  case GS_I8: return "Char";
  case GS_U8: return "Byte";
  case GS_BOOL: return "Bool";
  default: return gs_dtype_name(dt);
  }
}

static PyObject *write_result(PyObject *self, gs_tensor r) {
  gs_tensor t = gsp_handle(self);
  if (r.id && gs_dtype_is_floating(gs_dtype_of(r)) && !gs_dtype_is_floating(gs_dtype_of(t))) {
    PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                 scalar_type_name(gs_dtype_of(r)), scalar_type_name(gs_dtype_of(t)));
    return NULL;
  }
  if (r.id)
    gs_copy_(t, r);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

static PyObject *unary_inplace_call(PyObject *self, gs_tensor (*fn)(gs_tensor)) {
  gs_clear_error();
  gs_tensor r = fn(gsp_handle(self));
  PyObject *out = write_result(self, r);
  gs_dispose(r);
  return out;
}

static PyObject *own_inplace_call(PyObject *self, const op_row *row) {
  gs_tensor t = gsp_handle(self);
  if (!gs_dtype_is_floating(gs_dtype_of(t))) /* torch's message for a floating result */
    return unary_inplace_call(self, row->unary);
  gs_clear_error();
  row->own_inplace(t);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(self);
}

/* self op other (gsp_binary's rules for numbers and arrays), written into self. */
static PyObject *binary_inplace_call(PyObject *self, PyObject *other, int op) {
  PyObject *r = gsp_binary(self, other, op);
  if (!r)
    return NULL;
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    PyErr_Format(PyExc_TypeError, "expected a tensor, number or array, got %s",
                 Py_TYPE(other)->tp_name);
    return NULL;
  }
  gs_clear_error();
  PyObject *out = write_result(self, gsp_handle(r));
  Py_DECREF(r);
  return out;
}

static PyObject *info_call(PyObject *self, int64_t (*fn)(gs_tensor)) {
  gs_clear_error();
  long long v = (long long)fn(gsp_handle(self));
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return PyLong_FromLongLong(v);
}

/* The shape rows' arguments (sizes, or one tuple of them) as gsp_shape_from_args reads them. */
static PyObject *shape_call(PyObject *self, PyObject *const *args, Py_ssize_t n,
                            gs_tensor (*fn)(gs_tensor, const int64_t *, int)) {
  PyObject *tuple = PyTuple_New(n);
  if (!tuple)
    return NULL;
  for (Py_ssize_t i = 0; i < n; i++)
    PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
  int64_t shape[GS_MAX_DIMS];
  int nd = gsp_shape_from_args(tuple, shape);
  Py_DECREF(tuple);
  return nd < 0 ? NULL : gsp_wrap(fn(gsp_handle(self), shape, nd));
}

/* One row's work, once the arguments are checked: self is a Tensor, other the argument of
 * the rows that take one. */
static PyObject *run_row(const op_row *row, PyObject *self, PyObject *other) {
  GSP_SITE();
  switch (row->kind) {
  case ROW_UNARY: return gsp_wrap(row->unary(gsp_handle(self)));
  case ROW_CONVERT: /* t itself when already of the dtype, as torch's t.byte() is t */
    if (gs_dtype_of(gsp_handle(self)) == row->dtype)
      return Py_NewRef(self);
    return gsp_wrap(gs_to_dtype(gsp_handle(self), row->dtype));
  case ROW_BINARY: return gsp_binary(self, other, row->op);
  case ROW_COMPARE: return gsp_tensor_richcompare(self, other, row->op);
  case ROW_INPLACE: return inplace_call(self, other, row->inplace);
  case ROW_INFO: return info_call(self, row->info);
  case ROW_UNARY_INPLACE: return unary_inplace_call(self, row->unary);
  case ROW_OWN_INPLACE: return own_inplace_call(self, row);
  case ROW_BINARY_INPLACE: return binary_inplace_call(self, other, row->op);
  case ROW_SHAPE: break; /* op_method_vectorcall calls shape_call with all its arguments */
  }
  PyErr_SetString(PyExc_SystemError, "tensor-op-table: unknown row kind");
  return NULL;
}

static bool row_takes_argument(const op_row *row) {
  return row->kind == ROW_BINARY || row->kind == ROW_COMPARE || row->kind == ROW_INPLACE ||
         row->kind == ROW_BINARY_INPLACE;
}

/* ---- the descriptor type ------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  const op_row *row;
} op_method;

/* The shared trampoline: checks as CPython checks a METH_NOARGS or METH_O method. */
static PyObject *op_method_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames) {
  const op_row *row = ((op_method *)callable)->row;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 1) {
    PyErr_Format(PyExc_TypeError, "unbound method Tensor.%s() needs an argument", row->name);
    return NULL;
  }
  if (!gsp_is_tensor(args[0])) {
    PyErr_Format(PyExc_TypeError,
                 "descriptor '%s' for 'gradscope.Tensor' objects doesn't apply to a '%s' object",
                 row->name, Py_TYPE(args[0])->tp_name);
    return NULL;
  }
  if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_Format(PyExc_TypeError, "Tensor.%s() takes no keyword arguments", row->name);
    return NULL;
  }
  if (row->kind == ROW_SHAPE) {
    GSP_SITE();
    return shape_call(args[0], args + 1, n - 1, row->shaped);
  }
  if (row_takes_argument(row)) {
    if (n != 2) {
      PyErr_Format(PyExc_TypeError, "Tensor.%s() takes exactly one argument (%zd given)",
                   row->name, n - 1);
      return NULL;
    }
    return run_row(row, args[0], args[1]);
  }
  if (n != 1) {
    PyErr_Format(PyExc_TypeError, "Tensor.%s() takes no arguments (%zd given)", row->name, n - 1);
    return NULL;
  }
  return run_row(row, args[0], NULL);
}

static PyObject *op_method_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj)
    return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

static PyObject *op_method_repr(PyObject *self) {
  return PyUnicode_FromFormat("<method '%s' of 'gradscope.Tensor' objects>",
                              ((op_method *)self)->row->name);
}

static PyObject *get_name(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(((op_method *)self)->row->name);
}

static PyObject *get_qualname(PyObject *self, void *c) {
  (void)c;
  return PyUnicode_FromFormat("Tensor.%s", ((op_method *)self)->row->name);
}

/* __doc__ and __text_signature__ as a built-in method's: docs.c's string, split at "--". */
static PyObject *get_doc(PyObject *self, void *c) {
  (void)c;
  return gsp_doc_part(gsp_doc("Tensor", ((op_method *)self)->row->name), false);
}

static PyObject *get_text_signature(PyObject *self, void *c) {
  (void)c;
  return gsp_doc_part(gsp_doc("Tensor", ((op_method *)self)->row->name), true);
}

static PyObject *get_objclass(PyObject *self, void *c) {
  (void)self;
  (void)c;
  return Py_NewRef((PyObject *)&gsp_tensor_type);
}

static PyGetSetDef op_method_getset[] = {
    {"__name__", get_name, NULL, NULL, NULL},
    {"__qualname__", get_qualname, NULL, NULL, NULL},
    {"__doc__", get_doc, NULL, NULL, NULL},
    {"__text_signature__", get_text_signature, NULL, NULL, NULL},
    {"__objclass__", get_objclass, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject op_method_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope._tensor_method",
    .tp_basicsize = sizeof(op_method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(op_method, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = op_method_get,
    .tp_repr = op_method_repr,
    .tp_getset = op_method_getset,
};

/* Puts one descriptor per row into the ready Tensor type's dict (as tp_methods would). */
int gsp_tensor_op_table_install(void) {
  if (PyType_Ready(&op_method_type) < 0)
    return -1;
  PyObject *dict = gsp_tensor_type.tp_dict;
  for (size_t i = 0; i < sizeof op_rows / sizeof op_rows[0]; i++) {
    op_method *m = PyObject_New(op_method, &op_method_type);
    if (!m)
      return -1;
    m->vectorcall = op_method_vectorcall;
    m->row = &op_rows[i];
    int rc = PyDict_SetItemString(dict, op_rows[i].name, (PyObject *)m);
    Py_DECREF(m);
    if (rc < 0)
      return -1;
  }
  PyType_Modified(&gsp_tensor_type);
  return 0;
}
