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
    {NULL, NULL, 0, NULL},
};
