/* linalg.c: the engine's torch.linalg ops (include/gradscope/linalg.h) for gradscope/linalg.py,
 * which gives them torch's signatures: these take already-decided arguments (ord as a number or
 * a matrix-norm code, dims as a tuple), and the Python module parses torch's forms (ord='fro',
 * dim=None, linalg.norm's dispatch) in one readable place. A singular matrix raises
 * gradscope.linalg.LinAlgError (errors.c), a RuntimeError as torch.linalg.LinAlgError is. */
#include "gs-py.h"

/* _linalg_vector_norm(x, ord, dim, keepdim) */
static PyObject *f_vector_norm(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *x, *dim;
  double ord;
  int keepdim;
  if (!PyArg_ParseTuple(args, "O!dOp:vector_norm", &gsp_tensor_type, &x, &ord, &dim, &keepdim))
    return NULL;
  int dims[GS_MAX_DIMS];
  int n = gsp_dims_from_object(dim, dims);
  if (n < 0)
    return NULL;
  return gsp_wrap(gs_linalg_vector_norm(gsp_handle(x), ord, dims, n, keepdim));
}

/* _linalg_matrix_norm(A, ord_code, dim0, dim1, keepdim): ord_code a gs_matrix_norm_ord. */
static PyObject *f_matrix_norm(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a;
  int ord, dim0, dim1, keepdim;
  if (!PyArg_ParseTuple(args, "O!iiip:matrix_norm", &gsp_tensor_type, &a, &ord, &dim0, &dim1,
                        &keepdim))
    return NULL;
  return gsp_wrap(
      gs_linalg_matrix_norm(gsp_handle(a), (gs_matrix_norm_ord)ord, dim0, dim1, keepdim));
}

static PyObject *f_solve(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "O!O!:solve", &gsp_tensor_type, &a, &gsp_tensor_type, &b))
    return NULL;
  return gsp_wrap(gs_linalg_solve(gsp_handle(a), gsp_handle(b)));
}

static PyObject *f_inv(PyObject *m, PyObject *a) {
  GSP_SITE();
  (void)m;
  if (!gsp_is_tensor(a))
    return PyErr_Format(PyExc_TypeError, "inv(): expected a Tensor, got %.200s",
                        Py_TYPE(a)->tp_name);
  return gsp_wrap(gs_linalg_inv(gsp_handle(a)));
}

static PyObject *f_det(PyObject *m, PyObject *a) {
  GSP_SITE();
  (void)m;
  if (!gsp_is_tensor(a))
    return PyErr_Format(PyExc_TypeError, "det(): expected a Tensor, got %.200s",
                        Py_TYPE(a)->tp_name);
  return gsp_wrap(gs_linalg_det(gsp_handle(a)));
}

/* _linalg_cholesky(A), _linalg_eigvalsh(A), _linalg_svdvals(A): one tensor each. */
#define ONE_MATRIX_OP(NAME, CALL)                                                                  \
  static PyObject *f_##NAME(PyObject *m, PyObject *a) {                                            \
    GSP_SITE();                                                                                    \
    (void)m;                                                                                       \
    if (!gsp_is_tensor(a))                                                                         \
      return PyErr_Format(PyExc_TypeError, #NAME "(): expected a Tensor, got %.200s",              \
                          Py_TYPE(a)->tp_name);                                                    \
    return gsp_wrap(CALL(gsp_handle(a)));                                                          \
  }
ONE_MATRIX_OP(cholesky, gs_linalg_cholesky)
ONE_MATRIX_OP(eigvalsh, gs_linalg_eigvalsh)
ONE_MATRIX_OP(svdvals, gs_linalg_svdvals)

/* _linalg_slogdet(A): the tuple (sign, logabsdet); linalg.py names its fields. */
static PyObject *f_slogdet(PyObject *m, PyObject *a) {
  GSP_SITE();
  (void)m;
  if (!gsp_is_tensor(a))
    return PyErr_Format(PyExc_TypeError, "slogdet(): expected a Tensor, got %.200s",
                        Py_TYPE(a)->tp_name);
  gs_tensor sign = GS_NO_TENSOR, logabs = GS_NO_TENSOR;
  if (!gs_linalg_slogdet(gsp_handle(a), &sign, &logabs))
    return gsp_raise_engine_error();
  PyObject *s = gsp_wrap(sign);
  PyObject *l = s ? gsp_wrap(logabs) : NULL;
  if (!s)
    gs_dispose(logabs);
  PyObject *pair = l ? PyTuple_Pack(2, s, l) : NULL;
  Py_XDECREF(s);
  Py_XDECREF(l);
  return pair;
}

/* _linalg_eigh(A): the tuple (eigenvalues, eigenvectors); linalg.py names its fields. */
static PyObject *f_eigh(PyObject *m, PyObject *a) {
  GSP_SITE();
  (void)m;
  if (!gsp_is_tensor(a))
    return PyErr_Format(PyExc_TypeError, "eigh(): expected a Tensor, got %.200s",
                        Py_TYPE(a)->tp_name);
  gs_tensor w = GS_NO_TENSOR, v = GS_NO_TENSOR;
  if (!gs_linalg_eigh(gsp_handle(a), &w, &v))
    return gsp_raise_engine_error();
  PyObject *pw = gsp_wrap(w);
  PyObject *pv = pw ? gsp_wrap(v) : NULL;
  if (!pw)
    gs_dispose(v);
  PyObject *pair = pv ? PyTuple_Pack(2, pw, pv) : NULL;
  Py_XDECREF(pw);
  Py_XDECREF(pv);
  return pair;
}

/* A tuple of n fresh handles (all disposed when one cannot be wrapped). */
static PyObject *wrap_tuple(gs_tensor *ts, int n) {
  PyObject *tuple = PyTuple_New(n);
  for (int i = 0; i < n; i++) {
    PyObject *w = tuple ? gsp_wrap(ts[i]) : NULL;
    if (!w) {
      for (int j = i + (tuple != NULL); j < n; j++)
        gs_dispose(ts[j]);
      Py_XDECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, w);
  }
  return tuple;
}

/* _linalg_svd(A, full_matrices): the tuple (U, S, Vh). */
static PyObject *f_svd(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a;
  int full;
  if (!PyArg_ParseTuple(args, "O!p:svd", &gsp_tensor_type, &a, &full))
    return NULL;
  gs_tensor out[3];
  if (!gs_linalg_svd(gsp_handle(a), full, &out[0], &out[1], &out[2]))
    return gsp_raise_engine_error();
  return wrap_tuple(out, 3);
}

/* _linalg_qr(A, mode_code): the tuple (Q, R); mode_code a gs_qr_mode. */
static PyObject *f_qr(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a;
  int mode;
  if (!PyArg_ParseTuple(args, "O!i:qr", &gsp_tensor_type, &a, &mode))
    return NULL;
  gs_tensor out[2];
  if (!gs_linalg_qr(gsp_handle(a), (gs_qr_mode)mode, &out[0], &out[1]))
    return gsp_raise_engine_error();
  return wrap_tuple(out, 2);
}

/* _linalg_lstsq(A, B, rcond): the tuple (solution, rank); rcond NaN for torch's default. */
static PyObject *f_lstsq(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a, *b;
  double rcond;
  if (!PyArg_ParseTuple(args, "O!O!d:lstsq", &gsp_tensor_type, &a, &gsp_tensor_type, &b, &rcond))
    return NULL;
  gs_tensor out[2] = {GS_NO_TENSOR, GS_NO_TENSOR};
  out[0] = gs_linalg_lstsq(gsp_handle(a), gsp_handle(b), rcond, &out[1]);
  if (!out[0].id)
    return gsp_raise_engine_error();
  return wrap_tuple(out, 2);
}

/* _linalg_pinv(A, atol, rtol) and _linalg_matrix_rank(A, atol, rtol): NaN for not given. */
static PyObject *f_pinv(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a;
  double atol, rtol;
  if (!PyArg_ParseTuple(args, "O!dd:pinv", &gsp_tensor_type, &a, &atol, &rtol))
    return NULL;
  return gsp_wrap(gs_linalg_pinv(gsp_handle(a), atol, rtol));
}

static PyObject *f_matrix_rank(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *a;
  double atol, rtol;
  if (!PyArg_ParseTuple(args, "O!dd:matrix_rank", &gsp_tensor_type, &a, &atol, &rtol))
    return NULL;
  return gsp_wrap(gs_linalg_matrix_rank(gsp_handle(a), atol, rtol));
}

/* _cholesky_solve(B, L, upper) */
static PyObject *f_cholesky_solve(PyObject *m, PyObject *args) {
  GSP_SITE();
  (void)m;
  PyObject *b, *l;
  int upper;
  if (!PyArg_ParseTuple(args, "O!O!p:cholesky_solve", &gsp_tensor_type, &b, &gsp_tensor_type, &l,
                        &upper))
    return NULL;
  return gsp_wrap(gs_cholesky_solve(gsp_handle(b), gsp_handle(l), upper));
}

/* Underscored: the public names, with torch's signatures and docstrings, are linalg.py's. */
PyMethodDef gsp_linalg_functions[] = {
    {"_linalg_vector_norm", GSP_FN(f_vector_norm), METH_VARARGS,
     "_linalg_vector_norm(x, ord, dim, keepdim): gradscope.linalg.vector_norm's engine call."},
    {"_linalg_matrix_norm", GSP_FN(f_matrix_norm), METH_VARARGS,
     "_linalg_matrix_norm(A, ord_code, dim0, dim1, keepdim): matrix_norm's engine call."},
    {"_linalg_solve", GSP_FN(f_solve), METH_VARARGS,
     "_linalg_solve(A, B): gradscope.linalg.solve's engine call."},
    {"_linalg_inv", GSP_FN(f_inv), METH_O, "_linalg_inv(A): gradscope.linalg.inv's engine call."},
    {"_linalg_det", GSP_FN(f_det), METH_O, "_linalg_det(A): gradscope.linalg.det's engine call."},
    {"_linalg_slogdet", GSP_FN(f_slogdet), METH_O,
     "_linalg_slogdet(A): (sign, logabsdet), gradscope.linalg.slogdet's engine call."},
    {"_linalg_cholesky", GSP_FN(f_cholesky), METH_O,
     "_linalg_cholesky(A): gradscope.linalg.cholesky's engine call."},
    {"_linalg_eigvalsh", GSP_FN(f_eigvalsh), METH_O,
     "_linalg_eigvalsh(A): gradscope.linalg.eigvalsh's engine call."},
    {"_linalg_eigh", GSP_FN(f_eigh), METH_O,
     "_linalg_eigh(A): (eigenvalues, eigenvectors), gradscope.linalg.eigh's engine call."},
    {"_linalg_svdvals", GSP_FN(f_svdvals), METH_O,
     "_linalg_svdvals(A): gradscope.linalg.svdvals's engine call."},
    {"_linalg_svd", GSP_FN(f_svd), METH_VARARGS,
     "_linalg_svd(A, full_matrices): (U, S, Vh), gradscope.linalg.svd's engine call."},
    {"_linalg_qr", GSP_FN(f_qr), METH_VARARGS,
     "_linalg_qr(A, mode_code): (Q, R), gradscope.linalg.qr's engine call."},
    {"_linalg_lstsq", GSP_FN(f_lstsq), METH_VARARGS,
     "_linalg_lstsq(A, B, rcond): (solution, rank), gradscope.linalg.lstsq's engine call."},
    {"_linalg_pinv", GSP_FN(f_pinv), METH_VARARGS,
     "_linalg_pinv(A, atol, rtol): gradscope.linalg.pinv's engine call."},
    {"_linalg_matrix_rank", GSP_FN(f_matrix_rank), METH_VARARGS,
     "_linalg_matrix_rank(A, atol, rtol): gradscope.linalg.matrix_rank's engine call."},
    {"_cholesky_solve", GSP_FN(f_cholesky_solve), METH_VARARGS,
     "_cholesky_solve(B, L, upper): gradscope.cholesky_solve's engine call."},
    {NULL, NULL, 0, NULL},
};
