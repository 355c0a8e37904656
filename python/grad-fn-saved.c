/* grad-fn-saved.c: grad_fn._saved_self, _saved_other, _saved_result, ... as torch 1.13 names
 * what its common nodes save: the saved tensors (the engine's gs_node_saved, unpacked by
 * saved-tensor hooks when they were packed), and the numbers the node recorded with its op
 * (gs_node_scalars: a scalar operand, an exponent, addmm's alpha and beta, softmax's dim).
 *
 * One row per engine kind names its attributes and where each comes from. As in torch, a
 * saved tensor read after a backward freed it is torch's RuntimeError ("Trying to backward
 * through the graph a second time (or directly access saved tensors after they have already
 * been freed)..."), while the numbers stay readable. Differences from torch: the tensors
 * returned are new handles that require no grad (torch gives back the saved variable
 * itself), and a scalar operand comes back as an i64 tensor when it is integral and an f64
 * one otherwise (the engine keeps a double: `x * 2.0` reads as tensor(2)). */
#include "gs-py.h"

#include <math.h>
#include <string.h>

/* Where an attribute's value comes from. */
typedef enum saved_source {
  SLOT,          /* saved tensor `index` */
  NONE,          /* None: torch saves nothing there for this overload (x * 2's self) */
  SCALAR_TENSOR, /* reals[index] as a 0-d tensor (torch's wrapped number) */
  NUMBER,        /* reals[index] as an int when integral, else a float */
  BOUND,         /* reals[index] as a number, None when infinite (clamp's missing bound) */
  INT,           /* ints[index] */
  CONSTANT,      /* the number `index` */
  SIZES,         /* the shape input `index` had */
} saved_source;

typedef struct saved_attr {
  const char *name; /* after "_saved_" */
  saved_source source;
  int index;
} saved_attr;

#define MAX_ATTRS 6

typedef struct saved_row {
  const char *engine; /* the engine's kind */
  const char *torch;  /* torch's name when the kind stands for several (matmul), else NULL */
  saved_attr attrs[MAX_ATTRS];
} saved_row;

static const saved_row ROWS[] = {
    {"MulBackward", NULL, {{"self", SLOT, 0}, {"other", SLOT, 1}}},
    {"MulScalarBackward", NULL, {{"self", NONE, 0}, {"other", SCALAR_TENSOR, 0}}},
    {"DivBackward", NULL, {{"self", SLOT, 0}, {"other", SLOT, 1}}},
    {"DivScalarBackward", NULL, {{"self", NONE, 0}, {"other", SCALAR_TENSOR, 0}}},
    {"PowScalarBackward", NULL, {{"self", SLOT, 0}, {"exponent", NUMBER, 0}}},
    {"SquareBackward", NULL, {{"self", SLOT, 0}, {"exponent", CONSTANT, 2}}},
    {"PowBackward", NULL, {{"self", SLOT, 0}, {"exponent", SLOT, 1}, {"result", SLOT, 2}}},
    {"TanhBackward", NULL, {{"result", SLOT, 0}}},
    {"SigmoidBackward", NULL, {{"result", SLOT, 0}}},
    {"ExpBackward", NULL, {{"result", SLOT, 0}}},
    {"ReluBackward", NULL, {{"result", SLOT, 0}}},
    {"SqrtBackward", NULL, {{"result", SLOT, 0}}},
    {"LogBackward", NULL, {{"self", SLOT, 0}}},
    {"SinBackward", NULL, {{"self", SLOT, 0}}},
    {"CosBackward", NULL, {{"self", SLOT, 0}}},
    {"AbsBackward", NULL, {{"self", SLOT, 0}}},
    {"ClampBackward", NULL, {{"self", SLOT, 0}, {"min", BOUND, 0}, {"max", BOUND, 1}}},
    {"SoftmaxBackward", NULL, {{"result", SLOT, 0}, {"dim", INT, 0}}},
    {"LogSoftmaxBackward", NULL, {{"result", SLOT, 0}, {"dim", INT, 0}}},
    {"MatmulBackward",
     "MmBackward0",
     {{"self", SLOT, 0},
      {"mat2", SLOT, 1},
      {"self_sym_sizes", SIZES, 0},
      {"mat2_sym_sizes", SIZES, 1}}},
    {"MatmulBackward", "MvBackward0", {{"self", SLOT, 0}, {"vec", SLOT, 1}}},
    {"MatmulBackward", "DotBackward0", {{"self", SLOT, 0}, {"tensor", SLOT, 1}}},
    {"DotBackward", NULL, {{"self", SLOT, 0}, {"tensor", SLOT, 1}}},
    {"AddmmBackward",
     NULL,
     {{"mat1", SLOT, 0},
      {"mat2", SLOT, 1},
      {"beta", NUMBER, 0},
      {"alpha", NUMBER, 1},
      {"mat1_sym_sizes", SIZES, 1},
      {"mat2_sym_sizes", SIZES, 2}}},
};

static PyObject *number(double v) {
  if (v == floor(v) && fabs(v) < 9.0e15)
    return PyLong_FromLongLong((long long)v);
  return PyFloat_FromDouble(v);
}

static PyObject *freed_error(void) {
  PyErr_SetString(PyExc_RuntimeError,
                  "Trying to backward through the graph a second time (or directly access saved "
                  "tensors after they have already been freed). Saved intermediate values of the "
                  "graph are freed when you call .backward() or autograd.grad(). Specify "
                  "retain_graph=True if you need to backward through the graph a second time or "
                  "if you need to access saved tensors after calling backward.");
  return NULL;
}

static PyObject *sizes(gs_node n, int input) {
  int64_t shape[GS_MAX_DIMS];
  gs_clear_error();
  int ndim = gs_node_input_shape(n, input, shape, NULL);
  if (ndim < 0)
    return gsp_raise_engine_error();
  PyObject *t = PyTuple_New(ndim);
  for (int d = 0; t && d < ndim; d++) {
    PyObject *size = PyLong_FromLongLong((long long)shape[d]);
    if (!size) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, d, size);
  }
  return t;
}

static PyObject *value_of(gs_node n, const saved_attr *a) {
  double reals[GS_NODE_REALS];
  int64_t ints[GS_NODE_INTS];
  gs_clear_error();
  switch (a->source) {
  case SLOT: {
    if (gs_node_released(n))
      return freed_error();
    if (a->index >= gs_node_n_saved(n))
      Py_RETURN_NONE; /* the op did not save it (pow_ computes its result again) */
    return gsp_wrap(gs_node_saved(n, a->index));
  }
  case NONE: Py_RETURN_NONE;
  case CONSTANT: return PyLong_FromLong(a->index);
  case SIZES: return sizes(n, a->index);
  default: break;
  }
  if (gs_node_scalars(n, reals, ints) < 0)
    return gsp_raise_engine_error();
  switch (a->source) {
  case SCALAR_TENSOR: {
    double v = reals[a->index];
    if (v == floor(v) && fabs(v) < 9.0e15) {
      int64_t i = (int64_t)v;
      return gsp_wrap(gs_from_data(GS_I64, NULL, 0, &i));
    }
    return gsp_wrap(gs_from_data(GS_F64, NULL, 0, &v));
  }
  case NUMBER: return number(reals[a->index]);
  case BOUND:
    if (isinf(reals[a->index]))
      Py_RETURN_NONE;
    return number(reals[a->index]);
  case INT: return PyLong_FromLongLong((long long)ints[a->index]);
  default: Py_RETURN_NONE;
  }
}

int gsp_node_saved_attr(gs_node n, const char *attr, PyObject **out) {
  *out = NULL;
  if (strncmp(attr, "_saved_", 7) != 0)
    return 0;
  gs_clear_error();
  const char *engine = gs_node_name(n);
  if (!engine) {
    gsp_raise_engine_error();
    return 1;
  }
  PyObject *torch = NULL;
  for (size_t r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++) {
    const saved_row *row = &ROWS[r];
    if (strcmp(row->engine, engine) != 0)
      continue;
    if (row->torch) { /* one engine kind, several torch nodes: by torch's name for it */
      if (!torch && !(torch = gsp_node_torch_name(n)))
        return 1;
      if (PyUnicode_CompareWithASCIIString(torch, row->torch) != 0)
        continue;
    }
    for (int i = 0; i < MAX_ATTRS && row->attrs[i].name; i++)
      if (strcmp(attr + 7, row->attrs[i].name) == 0) {
        Py_XDECREF(torch);
        *out = value_of(n, &row->attrs[i]);
        return 1;
      }
  }
  Py_XDECREF(torch);
  return 0;
}
