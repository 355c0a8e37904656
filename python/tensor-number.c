/* tensor-number.c: Python's operators on tensors: + - * / ** @ // % & | ^ ~, unary -, abs,
 * comparisons,
 * and the in-place forms (+= ...), which write through the tensor and bump its version.
 *
 * A Python number with a floating tensor takes the engine's scalar fast path (gs_add_scalar,
 * ...): no temporary tensor, which keeps a small op cheap and the scope counters exact. With
 * an integer or bool tensor a number becomes a 0-dim tensor, so PyTorch's promotion applies
 * (int64 + 1 stays int64, int64 + 0.5 is float32).
 */
#include "gs-py.h"

typedef gs_tensor (*binary_fn)(gs_tensor, gs_tensor);
typedef gs_tensor (*scalar_fn)(gs_tensor, double);

static const binary_fn binary_ops[] = {
    gs_add,     gs_sub,        gs_mul,          gs_div,         gs_pow,
    gs_matmul,  gs_maximum,    gs_minimum,      gs_floor_divide, gs_remainder,
    gs_bitwise_and, gs_bitwise_or, gs_bitwise_xor, gs_atan2, gs_fmod,
    gs_logical_and, gs_logical_or, gs_logical_xor,
};
/* The ops with a scalar form; the others take a number as a 0-dim tensor. Sized as
 * binary_ops, so every op reads an entry (NULL past the last scalar form). */
static const scalar_fn scalar_ops[sizeof binary_ops / sizeof binary_ops[0]] = {
    [GSP_ADD] = gs_add_scalar,         [GSP_SUB] = gs_sub_scalar,
    [GSP_MUL] = gs_mul_scalar,         [GSP_DIV] = gs_div_scalar,
    [GSP_POW] = gs_pow_scalar,         [GSP_MAXIMUM] = gs_maximum_scalar,
    [GSP_MINIMUM] = gs_minimum_scalar, [GSP_REMAINDER] = gs_remainder_scalar,
    [GSP_FMOD] = gs_fmod_scalar,       [GSP_XOR] = NULL,
};

static PyObject *binary(PyObject *a, PyObject *b, int op);

/* NumPy scalars first become Python numbers, so they take the scalar paths below. */
PyObject *gsp_binary(PyObject *a, PyObject *b, int op) {
  GSP_SITE();
  PyObject *na = gsp_numpy_scalar_as_number(a), *nb = na || !PyErr_Occurred()
                                                         ? gsp_numpy_scalar_as_number(b) : NULL;
  if (PyErr_Occurred()) {
    Py_XDECREF(na);
    return NULL;
  }
  if (!na && !nb)
    return binary(a, b, op);
  PyObject *r = binary(na ? na : a, nb ? nb : b, op);
  Py_XDECREF(na);
  Py_XDECREF(nb);
  return r;
}

static PyObject *binary(PyObject *a, PyObject *b, int op) {
  bool a_tensor = gsp_is_tensor(a);
  if (!a_tensor && !gsp_is_tensor(b))
    Py_RETURN_NOTIMPLEMENTED;
  /* A number with a floating tensor keeps the tensor's dtype: the scalar forms, no temporary. */
  if (a_tensor && (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) && scalar_ops[op] &&
      gs_dtype_is_floating(gs_dtype_of(gsp_handle(a)))) {
    double s = PyFloat_CheckExact(b) ? PyFloat_AS_DOUBLE(b) : PyLong_AsDouble(b);
    if (s == -1.0 && PyErr_Occurred())
      return NULL;
    return gsp_wrap(scalar_ops[op](gsp_handle(a), s));
  }
  if (!a_tensor && (PyFloat_CheckExact(a) || PyLong_CheckExact(a)) &&
      gs_dtype_is_floating(gs_dtype_of(gsp_handle(b)))) {
    double s = PyFloat_CheckExact(a) ? PyFloat_AS_DOUBLE(a) : PyLong_AsDouble(a);
    if (s == -1.0 && PyErr_Occurred())
      return NULL;
    if (op == GSP_ADD || op == GSP_MUL || op == GSP_MAXIMUM || op == GSP_MINIMUM)
      return gsp_wrap(scalar_ops[op](gsp_handle(b), s));
    if (op == GSP_SUB)
      return gsp_wrap(gs_rsub_scalar(gsp_handle(b), s));
  }
  gs_tensor ta, tb, temp_a = GS_NO_TENSOR, temp_b = GS_NO_TENSOR;
  gs_dtype like_a = a_tensor ? gs_dtype_of(gsp_handle(a)) : gsp_default_dtype();
  gs_dtype like_b = gsp_is_tensor(b) ? gs_dtype_of(gsp_handle(b)) : like_a;
  if (!a_tensor)
    like_a = like_b;
  if (gsp_tensor_arg(a, &ta, &temp_a, like_b) < 0 || gsp_tensor_arg(b, &tb, &temp_b, like_a) < 0) {
    gs_dispose(temp_a);
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NULL;
  }
  gs_tensor r = binary_ops[op](ta, tb);
  PyObject *out = gsp_wrap(r);
  gs_dispose(temp_a);
  gs_dispose(temp_b);
  return out;
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_ADD); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_SUB); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_MUL); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_DIV); }
static PyObject *nb_matmul(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_MATMUL); }
static PyObject *nb_floordiv(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_FLOOR_DIV); }
static PyObject *nb_remainder(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_REMAINDER); }
static PyObject *nb_and(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_AND); }
static PyObject *nb_or(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_OR); }
static PyObject *nb_xor(PyObject *a, PyObject *b) { return gsp_binary(a, b, GSP_XOR); }

/* << and >>: gradscope.bitwise_left_shift / bitwise_right_shift (gradscope/pointwise.py), which
 * take a number on either side as torch's operators do. */
static PyObject *shift(PyObject *a, PyObject *b, const char *name) {
  GSP_SITE();
  PyObject *module = PyImport_ImportModule("gradscope");
  if (!module)
    return NULL;
  PyObject *r = PyObject_CallMethod(module, name, "OO", a, b);
  Py_DECREF(module);
  return r;
}
static PyObject *nb_lshift(PyObject *a, PyObject *b) { return shift(a, b, "bitwise_left_shift"); }
static PyObject *nb_rshift(PyObject *a, PyObject *b) { return shift(a, b, "bitwise_right_shift"); }
static PyObject *nb_ilshift(PyObject *a, PyObject *b) {
  return PyObject_CallMethod(a, "bitwise_left_shift_", "O", b);
}
static PyObject *nb_irshift(PyObject *a, PyObject *b) {
  return PyObject_CallMethod(a, "bitwise_right_shift_", "O", b);
}

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod) {
  GSP_SITE();
  if (mod != Py_None) {
    PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported for tensors");
    return NULL;
  }
  return gsp_binary(a, b, GSP_POW);
}

static PyObject *nb_neg(PyObject *a) { return gsp_wrap(gs_neg(gsp_handle(a))); }
static PyObject *nb_pos(PyObject *a) { return Py_NewRef(a); }
static PyObject *nb_abs(PyObject *a) { return gsp_wrap(gs_abs(gsp_handle(a))); }
static PyObject *nb_invert(PyObject *a) { return gsp_wrap(gs_bitwise_not(gsp_handle(a))); }

/* The single element, for float(t), int(t), bool(t) and `if t:`. */
static int item_of(PyObject *a, double *out) {
  gs_tensor t = gsp_handle(a);
  int64_t n = gs_numel(t);
  if (n < 0) {
    gsp_raise_engine_error();
    return -1;
  }
  if (n != 1) {
    PyErr_Format(PyExc_RuntimeError,
                 "a Tensor with %lld elements cannot be converted to a Python number (only "
                 "one-element tensors can)",
                 (long long)n);
    return -1;
  }
  gs_clear_error();
  *out = gs_item(t);
  if (gs_last_error_code() != GS_OK) {
    gsp_raise_engine_error();
    return -1;
  }
  return 0;
}

static PyObject *nb_float(PyObject *a) {
  GSP_SITE();
  double v;
  return item_of(a, &v) < 0 ? NULL : PyFloat_FromDouble(v);
}

static PyObject *nb_int(PyObject *a) {
  GSP_SITE();
  double v;
  return item_of(a, &v) < 0 ? NULL : PyLong_FromDouble(v);
}

static int nb_bool(PyObject *a) {
  GSP_SITE();
  double v;
  return item_of(a, &v) < 0 ? -1 : v != 0;
}

static PyObject *nb_index(PyObject *a) {
  GSP_SITE();
  gs_dtype d = gs_dtype_of(gsp_handle(a));
  if (!gs_dtype_is_integer(d) && d != GS_BOOL) {
    PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be an index");
    return NULL;
  }
  return nb_int(a);
}

/* ---- in place: a op= b writes through a and returns a ---------------------------------- */

typedef void (*inplace_fn)(gs_tensor, gs_tensor);

static PyObject *inplace(PyObject *a, PyObject *b, int op) {
  GSP_SITE();
  static const inplace_fn fns[] = {gs_add_, gs_sub_, gs_mul_, gs_div_};
  if (!gsp_is_tensor(a))
    Py_RETURN_NOTIMPLEMENTED;
  gs_tensor t = gsp_handle(a);
  gs_clear_error();
  if (PyFloat_CheckExact(b) && (op == GSP_ADD || op == GSP_SUB || op == GSP_MUL)) {
    double s = PyFloat_AS_DOUBLE(b);
    if (op == GSP_MUL)
      gs_mul_scalar_(t, s);
    else
      gs_add_scalar_(t, op == GSP_SUB ? -s : s);
  } else {
    gs_tensor tb, temp = GS_NO_TENSOR;
    if (gsp_tensor_arg(b, &tb, &temp, gs_dtype_of(t)) < 0)
      return NULL;
    fns[op](t, tb);
    gs_dispose(temp);
  }
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  return Py_NewRef(a);
}

static PyObject *nb_iadd(PyObject *a, PyObject *b) { return inplace(a, b, GSP_ADD); }
static PyObject *nb_isub(PyObject *a, PyObject *b) { return inplace(a, b, GSP_SUB); }
static PyObject *nb_imul(PyObject *a, PyObject *b) { return inplace(a, b, GSP_MUL); }
static PyObject *nb_idiv(PyObject *a, PyObject *b) { return inplace(a, b, GSP_DIV); }

PyNumberMethods gsp_tensor_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
    .nb_power = nb_pow,
    .nb_matrix_multiply = nb_matmul,
    .nb_floor_divide = nb_floordiv,
    .nb_remainder = nb_remainder,
    .nb_and = nb_and,
    .nb_or = nb_or,
    .nb_xor = nb_xor,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift,
    .nb_invert = nb_invert,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_absolute = nb_abs,
    .nb_float = nb_float,
    .nb_int = nb_int,
    .nb_bool = nb_bool,
    .nb_index = nb_index,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_true_divide = nb_idiv,
};

/* ---- comparisons: elementwise, bool results --------------------------------------------- */

PyObject *gsp_tensor_richcompare(PyObject *a, PyObject *b, int op) {
  GSP_SITE();
  static const binary_fn fns[] = {gs_lt, gs_le, gs_eq, gs_ne, gs_gt, gs_ge};
  static const scalar_fn sfns[] = {gs_lt_scalar, gs_le_scalar, gs_eq_scalar,
                                   gs_ne_scalar, gs_gt_scalar, gs_ge_scalar};
  if (!gsp_is_tensor(a))
    Py_RETURN_NOTIMPLEMENTED;
  if (PyFloat_CheckExact(b) ||
      (PyLong_CheckExact(b) && !gs_dtype_is_integer(gs_dtype_of(gsp_handle(a))))) {
    double s = PyFloat_Check(b) ? PyFloat_AS_DOUBLE(b) : PyLong_AsDouble(b);
    if (s == -1.0 && PyErr_Occurred())
      return NULL;
    return gsp_wrap(sfns[op](gsp_handle(a), s));
  }
  gs_tensor tb, temp = GS_NO_TENSOR;
  if (gsp_tensor_arg(b, &tb, &temp, gs_dtype_of(gsp_handle(a))) < 0) {
    if ((op == Py_EQ || op == Py_NE) && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    return NULL;
  }
  PyObject *out = gsp_wrap(fns[op](gsp_handle(a), tb));
  gs_dispose(temp);
  return out;
}
