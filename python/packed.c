/* packed.c: torch.nn.utils.rnn's PackedSequence over the engine's gs_packed_sequence, and the
 * functions that make and unmake one (pack_padded_sequence, pack_sequence,
 * pad_packed_sequence), as the C submodule gradscope._gradscope._rnn; the Python face is
 * python/gradscope/nn/utils/rnn.py, and nn.c's recurrent layers take a PackedSequence as
 * input and return one, as PyTorch's.
 *
 * The engine keeps the four tensors (data, batch_sizes, sorted_indices, unsorted_indices) as
 * one scoped object: the Python object owns that object (or leaves it to the dispose scope
 * that owns it, as a Tensor does), and its tensors are borrowed handles whose Python objects
 * keep the PackedSequence alive (`data = packed.data; del packed` stays valid). It is a
 * sequence of those four, so `data, batch_sizes, _, _ = packed` works as on PyTorch's
 * namedtuple, and PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices) builds
 * one from parts, as PyTorch's (a layer applied to p.data, re-packed). */
#include "gs-py.h"

typedef struct {
  PyObject_HEAD gs_packed_sequence ps;
} gsp_packed;

static PyTypeObject packed_type;

bool gsp_is_packed(PyObject *o) { return PyObject_TypeCheck(o, &packed_type); }

gs_packed_sequence gsp_packed_handle(PyObject *o) { return ((gsp_packed *)o)->ps; }

PyObject *gsp_wrap_packed(gs_packed_sequence ps) {
  if (ps.id == 0)
    return gsp_raise_engine_error();
  gsp_packed *o = (gsp_packed *)packed_type.tp_alloc(&packed_type, 0);
  if (!o) {
    gs_packed_sequence_dispose(ps);
    return NULL;
  }
  o->ps = ps;
  return (PyObject *)o;
}

static void packed_dealloc(PyObject *self) {
  GSP_SITE();
  gs_packed_sequence ps = ((gsp_packed *)self)->ps;
  /* As a Tensor's: what a scope owns is the scope's to dispose; at exit it stays for the
   * leak report. */
  if (!_Py_IsFinalizing() && gs_packed_sequence_is_alive(ps) && gs_packed_owner_scope(ps).id == 0)
    gs_packed_sequence_dispose(ps);
  gs_clear_error();
  Py_TYPE(self)->tp_free(self);
}

enum { PART_DATA, PART_BATCH_SIZES, PART_SORTED, PART_UNSORTED, PART_COUNT };
static const char *const part_names[PART_COUNT] = {"data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices"};

/* One of the four parts (None for absent indices), kept alive by the PackedSequence. */
static PyObject *part(PyObject *self, Py_ssize_t which) {
  GSP_SITE();
  gs_packed_sequence ps = ((gsp_packed *)self)->ps;
  gs_clear_error();
  gs_tensor t = which == PART_DATA          ? gs_packed_data(ps)
                : which == PART_BATCH_SIZES ? gs_packed_batch_sizes(ps)
                : which == PART_SORTED      ? gs_packed_sorted_indices(ps)
                                            : gs_packed_unsorted_indices(ps);
  if (gs_last_error_code() != GS_OK)
    return gsp_raise_engine_error();
  if (gs_tensor_is_none(t))
    Py_RETURN_NONE;
  return gsp_wrap_kept(t, self);
}

static PyObject *get_part(PyObject *self, void *which) { return part(self, (Py_ssize_t)which); }

static Py_ssize_t packed_len(PyObject *self) {
  (void)self;
  return PART_COUNT;
}

static PyObject *packed_item(PyObject *self, Py_ssize_t i) {
  if (i < 0 || i >= PART_COUNT) {
    PyErr_SetString(PyExc_IndexError, "PackedSequence index out of range (it has 4 fields)");
    return NULL;
  }
  return part(self, i);
}

static PyObject *packed_repr(PyObject *self) {
  PyObject *parts[PART_COUNT] = {NULL};
  PyObject *r = NULL;
  for (int i = 0; i < PART_COUNT; i++)
    if (!(parts[i] = part(self, i)))
      goto done;
  r = PyUnicode_FromFormat("PackedSequence(%s=%R, %s=%R, %s=%R, %s=%R)", part_names[0], parts[0],
                           part_names[1], parts[1], part_names[2], parts[2], part_names[3],
                           parts[3]);
done:
  for (int i = 0; i < PART_COUNT; i++)
    Py_XDECREF(parts[i]);
  return r;
}

static PyObject *get_is_alive(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(gs_packed_sequence_is_alive(((gsp_packed *)self)->ps));
}

static PyGetSetDef packed_getset[] = {
    {"data", get_part, NULL, "[sum(lengths), *]: the steps of all sequences, time-major",
     (void *)PART_DATA},
    {"batch_sizes", get_part, NULL, "int64 [max length]: how many sequences run at each step",
     (void *)PART_BATCH_SIZES},
    {"sorted_indices", get_part, NULL, "int64 [batch], or None when packed sorted",
     (void *)PART_SORTED},
    {"unsorted_indices", get_part, NULL, "int64 [batch], or None when packed sorted",
     (void *)PART_UNSORTED},
    {"is_alive", get_is_alive, NULL, "False once disposed (by its scope)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods packed_as_sequence = {.sq_length = packed_len, .sq_item = packed_item};

/* An index list's inverse permutation (its argsort), as a new Tensor object. */
static PyObject *inverse_permutation(PyObject *indices) {
  return PyObject_CallMethod(indices, "argsort", NULL);
}

/* PackedSequence(data, batch_sizes, sorted_indices=None, unsorted_indices=None), as PyTorch's:
 * a missing index list is the inverse of the other. The engine checks the parts fit together
 * and keeps O(1) clones of them (gradients reach data). */
static PyObject *packed_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  GSP_SITE();
  PyObject *data, *batch_sizes, *sorted = Py_None, *unsorted = Py_None;
  static char *kwlist[] = {"data", "batch_sizes", "sorted_indices", "unsorted_indices", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|OO:PackedSequence", kwlist, &gsp_tensor_type,
                                   &data, &gsp_tensor_type, &batch_sizes, &sorted, &unsorted))
    return NULL;
  if ((sorted != Py_None && !gsp_is_tensor(sorted)) ||
      (unsorted != Py_None && !gsp_is_tensor(unsorted))) {
    PyErr_SetString(
        PyExc_TypeError,
        "PackedSequence(): sorted_indices and unsorted_indices must be Tensors or None");
    return NULL;
  }
  /* Hold our own references: a computed inverse is new. */
  sorted =
      sorted == Py_None && unsorted != Py_None ? inverse_permutation(unsorted) : Py_NewRef(sorted);
  unsorted = unsorted == Py_None && sorted && sorted != Py_None ? inverse_permutation(sorted)
                                                                : Py_XNewRef(unsorted);
  PyObject *r = NULL;
  if (sorted && unsorted) {
    gs_clear_error();
    gs_packed_sequence ps =
        gs_packed_sequence_from(gsp_handle(data), gsp_handle(batch_sizes),
                                sorted == Py_None ? GS_NO_TENSOR : gsp_handle(sorted),
                                unsorted == Py_None ? GS_NO_TENSOR : gsp_handle(unsorted));
    if (ps.id == 0)
      gsp_raise_engine_error();
    else if (!(r = type->tp_alloc(type, 0)))
      gs_packed_sequence_dispose(ps);
    else
      ((gsp_packed *)r)->ps = ps;
  }
  Py_XDECREF(sorted);
  Py_XDECREF(unsorted);
  return r;
}

static PyTypeObject packed_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gradscope.nn.utils.rnn.PackedSequence",
    .tp_basicsize = sizeof(gsp_packed),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A batch of variable-length sequences packed for RNN, LSTM and GRU, as "
              "torch.nn.utils.rnn.PackedSequence (made by pack_padded_sequence or "
              "pack_sequence).",
    .tp_new = packed_new,
    .tp_dealloc = packed_dealloc,
    .tp_repr = packed_repr,
    .tp_as_sequence = &packed_as_sequence,
    .tp_getset = packed_getset,
};

/* pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True); lengths an
 * int64 Tensor (rnn.py turns lists into one). */
static PyObject *f_pack_padded_sequence(PyObject *mod, PyObject *args, PyObject *kwargs) {
  (void)mod;
  GSP_SITE();
  PyObject *input, *lengths;
  int batch_first = 0, enforce_sorted = 1;
  static char *kwlist[] = {"input", "lengths", "batch_first", "enforce_sorted", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|pp:pack_padded_sequence", kwlist,
                                   &gsp_tensor_type, &input, &gsp_tensor_type, &lengths,
                                   &batch_first, &enforce_sorted))
    return NULL;
  gs_clear_error();
  return gsp_wrap_packed(
      gs_pack_padded_sequence(gsp_handle(input), gsp_handle(lengths), batch_first, enforce_sorted));
}

static PyObject *f_pack_sequence(PyObject *mod, PyObject *args, PyObject *kwargs) {
  (void)mod;
  GSP_SITE();
  PyObject *sequences;
  int enforce_sorted = 1;
  static char *kwlist[] = {"sequences", "enforce_sorted", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:pack_sequence", kwlist, &sequences,
                                   &enforce_sorted))
    return NULL;
  gs_tensor *handles = NULL;
  int n = gsp_tensor_list(sequences, &handles);
  if (n < 0)
    return NULL;
  gs_clear_error();
  gs_packed_sequence ps = gs_pack_sequence(handles, n, enforce_sorted);
  PyMem_Free(handles);
  return gsp_wrap_packed(ps);
}

/* pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
 * (padded, lengths), as PyTorch's. */
static PyObject *f_pad_packed_sequence(PyObject *mod, PyObject *args, PyObject *kwargs) {
  (void)mod;
  GSP_SITE();
  PyObject *seq, *total_obj = Py_None;
  int batch_first = 0;
  double padding_value = 0.0;
  static char *kwlist[] = {"sequence", "batch_first", "padding_value", "total_length", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|pdO:pad_packed_sequence", kwlist, &packed_type,
                                   &seq, &batch_first, &padding_value, &total_obj))
    return NULL;
  int64_t total_length = -1;
  if (total_obj != Py_None) {
    total_length = PyLong_AsLongLong(total_obj);
    if (total_length == -1 && PyErr_Occurred())
      return NULL;
    if (total_length < 0) {
      PyErr_Format(PyExc_ValueError,
                   "pad_packed_sequence(): total_length must be None or >= 0, not %lld",
                   (long long)total_length);
      return NULL;
    }
  }
  gs_tensor lengths = GS_NO_TENSOR;
  gs_clear_error();
  gs_tensor padded = gs_pad_packed_sequence(gsp_packed_handle(seq), batch_first, padding_value,
                                            total_length, &lengths);
  if (gs_tensor_is_none(padded))
    return gsp_raise_engine_error();
  PyObject *py_padded = gsp_wrap(padded);
  PyObject *py_lengths = py_padded ? gsp_wrap(lengths) : (gs_dispose(lengths), NULL);
  if (!py_lengths) {
    Py_XDECREF(py_padded);
    return NULL;
  }
  return Py_BuildValue("(NN)", py_padded, py_lengths);
}

static PyMethodDef rnn_functions[] = {
    {"pack_padded_sequence", GSP_FN(f_pack_padded_sequence), METH_VARARGS | METH_KEYWORDS,
     "Packs input [T, B, *] ([B, T, *] with batch_first) of sequences of the given lengths."},
    {"pack_sequence", GSP_FN(f_pack_sequence), METH_VARARGS | METH_KEYWORDS,
     "Packs a list of tensors [L_i, *]."},
    {"pad_packed_sequence", GSP_FN(f_pad_packed_sequence), METH_VARARGS | METH_KEYWORDS,
     "(padded, lengths): the inverse of pack_padded_sequence."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef rnn_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gradscope._gradscope._rnn",
    .m_doc = "PackedSequence and its functions (gradscope.nn.utils.rnn re-exports them).",
    .m_size = -1,
    .m_methods = rnn_functions,
};

PyObject *gsp_rnn_module(void) {
  if (PyType_Ready(&packed_type) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&rnn_def);
  if (m && PyModule_AddObjectRef(m, "PackedSequence", (PyObject *)&packed_type) < 0)
    Py_CLEAR(m);
  return m;
}
