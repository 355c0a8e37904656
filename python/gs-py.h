/* gs-py.h: what the files of the `gradscope` Python extension share (private to python/).
 *
 * The extension is one CPython module written on the C API. A gradscope.Tensor is a Python
 * object holding one engine handle; everything else (operators, methods, NumPy and DLPack
 * bridges, scopes) calls the engine's public API on that handle. The engine reports errors
 * through gs_error_handler_return (installed at import), so every wrapper checks the empty
 * handle (or the last error) and turns the engine's message into a Python exception.
 */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gradscope/gradscope.h>

/* The Python object over a tensor handle. */
typedef struct gsp_tensor {
  PyObject_HEAD
  gs_tensor handle;
  /* True when this object owns the handle: dropping it disposes the tensor unless a scope owns
   * it then (the scope decides). False for borrowed handles (.grad, module parameters). */
  bool owned;
  /* What keeps a borrowed handle alive while this object lives, as Python expects: a module
   * parameter keeps its module tree (nn.c), a .grad its tensor's object. A strong reference
   * up the chain of owners, never back down, so it makes no cycle. NULL for owned handles. */
  PyObject *keeper;
} gsp_tensor;

extern PyTypeObject gsp_tensor_type;

static inline bool gsp_is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &gsp_tensor_type); }

/* ---- errors.c ---- */
void gsp_errors_install(void);
/* Raises the engine's last error as TypeError, ValueError, IndexError or RuntimeError; NULL. */
PyObject *gsp_raise_engine_error(void);
/* gradscope.linalg.LinAlgError (a RuntimeError, as torch.linalg.LinAlgError): what an engine
 * error of code GS_ERR_SINGULAR raises; added to the module as _LinAlgError. 0 or -1. */
int gsp_linalg_error_add(PyObject *module);
/* NULL with the engine's error raised if the last engine call failed; Py_None otherwise. */
PyObject *gsp_check_void(void);
PyObject *gsp_set_printoptions(PyObject *m, PyObject *args); /* repr.c */
/* A bool the engine just answered (after gs_clear_error), or its error raised. */
static inline PyObject *gsp_bool_or_error(bool value) {
  return gs_last_error_code() != GS_OK ? gsp_raise_engine_error() : PyBool_FromLong(value);
}

/* ---- tensor-object.c ---- */
/* Wraps a new handle (owned) or raises the engine's error when t is empty. */
PyObject *gsp_wrap(gs_tensor t);
/* An activation's inplace=True, as torch's: it computes r from in = gsp_activation_input(x,
 * inplace) (a copy-on-write clone of x with inplace, so what r's node saved is not
 * overwritten), then gsp_activation_result writes r into x and returns x; without inplace,
 * in is x and r comes back as a new tensor. */
gs_tensor gsp_activation_input(PyObject *x, int inplace);
PyObject *gsp_activation_result(PyObject *x, gs_tensor in, gs_tensor r, int inplace);
PyObject *gsp_wrap_borrowed(gs_tensor t);
/* A borrowed handle whose object holds keeper (a new reference) while it lives. */
PyObject *gsp_wrap_kept(gs_tensor t, PyObject *keeper);
/* The handle's object if it has one alive (a borrowed handle asked for again: a view's base,
 * a grad), as torch gives the same object; else a borrowed object holding keeper. */
PyObject *gsp_tensor_object(gs_tensor t, PyObject *keeper);
/* Makes o (a Tensor) borrowed and kept alive by keeper (a module tree that took it over). */
void gsp_tensor_keep(PyObject *o, PyObject *keeper);
void gsp_tensor_type_init(void);
/* A tuple of Python ints (sizes, strides), or NULL raised. */
PyObject *gsp_int_tuple(const int64_t *values, int n);

/* ---- size.c: gradscope.Size, a shape (a tuple subclass, as torch.Size) ---- */
extern PyTypeObject gsp_size_type;
int gsp_size_add_to_module(PyObject *module);
PyObject *gsp_size_new(const int64_t *values, int n);

/* ---- dtype.c ---- */
extern PyTypeObject gsp_dtype_type;
int gsp_dtype_add_to_module(PyObject *module);
PyObject *gsp_dtype_object(gs_dtype dtype);
/* Converts a gradscope dtype object (or None: *out unchanged) into *out; 0 or -1 raised. */
int gsp_dtype_from_object(PyObject *o, gs_dtype *out);
const char *gsp_dtype_torch_name(gs_dtype dtype);
/* torch.get_default_dtype(): float32 unless gradscope.set_default_dtype chose float64. */
gs_dtype gsp_default_dtype(void);
/* memory_format= (None: contiguous) as the engine's gs_memory_format, or GSP_PRESERVE_FORMAT
 * (torch.preserve_format); false after a TypeError naming fn (tensor-methods.c). The objects
 * are gradscope/memory_format.py's, each carrying its number as _code. */
#define GSP_PRESERVE_FORMAT 3
bool gsp_memory_format_of(PyObject *o, int *code, const char *fn);
PyObject *gsp_set_default_dtype(PyObject *module, PyObject *arg);
PyObject *gsp_get_default_dtype(PyObject *module, PyObject *unused);
/* Whether gradscope.as_torch has called _name_dtypes_as_torch(True): dtypes and grad_fn
 * names then print as torch's. */
bool gsp_named_as_torch(void);
/* "gradscope", or "torch" when gsp_named_as_torch(). */
const char *gsp_dtype_module_name(void);
PyObject *gsp_name_dtypes_as_torch(PyObject *module, PyObject *flag);
/* grad-fn.c: a node's name as torch 1.13 prints it ("MulBackward0"); NULL with an exception. */
PyObject *gsp_node_torch_name(gs_node n);
/* grad_fn._saved_<name> (grad-fn-saved.c): 1 when attr names one of n's (*out its value, or
 * NULL with an exception set), 0 when it does not (nothing set). */
int gsp_node_saved_attr(gs_node n, const char *attr, PyObject **out);

/* ---- convert.c ---- */
/* Shape from (*args) of ints or one tuple/list/torch.Size-like sequence. Returns ndim or -1. */
int gsp_shape_from_args(PyObject *args, int64_t *shape);
/* hooks.c: hook as a pre-hook (before the node runs) or post-hook (after) of node, as
 * Node.register_prehook / register_hook; returns its (node, id) key, NULL with an exception. */
PyObject *gsp_node_hook_register(gs_node node, PyObject *fn, bool post);
int gsp_shape_from_sequence(PyObject *seq, int64_t *shape);
/* At most max ints from a sequence into out: their count, or -1 with a TypeError or
 * RuntimeError naming fn and what the ints are. */
int gsp_ints_from_sequence(PyObject *seq, int64_t *out, int max, const char *fn, const char *what);
/* dim=None, an int or a tuple of ints: writes dims, returns how many (0 for None) or -1. */
int gsp_dims_from_object(PyObject *o, int *dims);
/* A tensor argument: a gradscope.Tensor (borrowed handle, *temp untouched) or a Python number
 * (a new 0-dim tensor in *temp that the caller disposes). 0, or -1 raised. */
int gsp_tensor_arg(PyObject *o, gs_tensor *out, gs_tensor *temp, gs_dtype like);
/* Wraps a new handle (owned) made with requires_grad set as asked; raises the engine's error
 * when t is empty or the flag cannot be set (t is then disposed). */
PyObject *gsp_wrap_new(gs_tensor t, bool requires_grad);
/* gradscope.tensor(data, dtype=): nested lists/tuples of numbers, a NumPy array, a Tensor. */
PyObject *gsp_tensor_from_data(PyObject *data, PyObject *dtype_obj, bool requires_grad);
/* A list of Tensors (tuple or list) into handles; returns count or -1. */
int gsp_tensor_list(PyObject *seq, gs_tensor **out);

/* ---- repr.c ---- */
PyObject *gsp_tensor_repr(PyObject *self);
PyObject *gsp_tensor_tolist(PyObject *self, PyObject *unused);

/* ---- tensor-number.c, tensor-index.c, tensor-methods.c ---- */
extern PyNumberMethods gsp_tensor_as_number;
extern PyMappingMethods gsp_tensor_as_mapping;
extern PyMethodDef gsp_tensor_methods[];
extern PyGetSetDef gsp_tensor_getset[];
PyObject *gsp_tensor_richcompare(PyObject *a, PyObject *b, int op);
/* Binary ops shared by operators, methods and module functions. */
PyObject *gsp_binary(PyObject *a, PyObject *b, int op);
/* clang-format off */
enum {
  GSP_ADD, GSP_SUB, GSP_MUL, GSP_DIV, GSP_POW, GSP_MATMUL, GSP_MAXIMUM, GSP_MINIMUM,
  GSP_FLOOR_DIV, GSP_REMAINDER, GSP_AND, GSP_OR, GSP_XOR, GSP_ATAN2, GSP_FMOD,
  GSP_LOGICAL_AND, GSP_LOGICAL_OR, GSP_LOGICAL_XOR
};
/* clang-format on */

/* ---- tensor-op-table.c, tensor-math.c, tensor-index-ops.c: methods added to the ready Tensor type
 * at import ---- */
int gsp_tensor_op_table_install(void);
int gsp_tensor_math_install(void);
int gsp_tensor_index_ops_install(void);
/* tensor-index.c: t.index_put_(indices, values, accumulate=False) (in_place) or
 * t.index_put(...). */
PyObject *gsp_tensor_index_put(PyObject *self, PyObject *args, PyObject *kwargs, bool in_place);
/* (values, indices) as torch.return_types.<op> (gradscope/return_types.py; steals both). */
PyObject *gsp_values_indices(const char *op, PyObject *values, PyObject *indices);
/* The same from an engine call's two results: ok false raises its error; a failed wrap
 * disposes what is not wrapped yet. */
PyObject *gsp_wrap_values_indices(const char *op, bool ok, gs_tensor values, gs_tensor indices);

/* ---- numpy-bridge.c, dlpack-bridge.c ---- */
int gsp_numpy_init(void);
/* A NumPy scalar (np.float32(2), np.int64(3), np.bool_) as a Python number (new reference), or
 * NULL without an error for anything else. */
PyObject *gsp_numpy_scalar_as_number(PyObject *o);
bool gsp_is_ndarray(PyObject *o);
/* An ndarray already in C order (asarray may return a view of another layout). */
bool gsp_is_c_contiguous_ndarray(PyObject *o);
/* The dtype name an array is copied as when the engine lacks its own ("int64" for int32), or
 * NULL when it has it. */
const char *gsp_numpy_copy_dtype(PyObject *array);
extern PyBufferProcs gsp_tensor_as_buffer;
PyObject *gsp_from_numpy(PyObject *module, PyObject *array);
PyObject *gsp_tensor_numpy(PyObject *self, PyObject *unused);
PyObject *gsp_from_dlpack(PyObject *module, PyObject *obj);
PyObject *gsp_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *gsp_tensor_dlpack_device(PyObject *self, PyObject *unused);

/* ---- scopes.c ---- */
int gsp_scopes_add_to_module(PyObject *module);

/* ---- functions.c ---- */
extern PyMethodDef gsp_module_functions[];

/* ---- docs.c: docstrings with text signatures ---- */
/* OWNER is "Tensor", "Optimizer" (methods), "gradscope", "F", "nn" or "optim" (functions). */
const char *gsp_doc(const char *owner, const char *name);
void gsp_docs_fill(PyMethodDef *defs, const char *owner);
/* A docstring's text signature ("($self, other, /)") or its text, as CPython splits them. */
PyObject *gsp_doc_part(const char *doc, bool signature);

/* ---- nn.c, data.c, distributed.c ---- */
bool gsp_is_module(PyObject *o);
/* The engine module of a gradscope nn.Module object (check gsp_is_module first). */
gs_module gsp_module_handle(PyObject *o);
/* Whether t is a module's buffer (an engine parameter that never requires grad, registered
 * with register_buffer or one of BatchNorm's running estimates): a Parameter in the engine,
 * a plain tensor to Python, as in torch (its repr, isinstance(t, nn.Parameter)). */
bool gsp_is_buffer(gs_tensor t);
/* The engine dataset of a TensorDataset object, or NULL (no exception) for anything else. */
const gs_dataset *gsp_dataset_of(PyObject *o);
/* The rank's shard (a dataset) of a DistributedSampler made over dataset, for
 * DataLoader(sampler=); NULL with TypeError or ValueError raised otherwise. */
const gs_dataset *gsp_sampler_shard(PyObject *sampler, PyObject *dataset);
PyObject *gsp_distributed_module(void);

/* ---- packed.c: PackedSequence (the C submodule _rnn) ---- */
PyObject *gsp_rnn_module(void);
bool gsp_is_packed(PyObject *o);
gs_packed_sequence gsp_packed_handle(PyObject *o);
/* Wraps a new packed sequence (owned) or raises the engine's error when ps is empty. */
PyObject *gsp_wrap_packed(gs_packed_sequence ps);

/* ---- serialization.c: what gradscope.save needs from the engine ---- */
extern PyMethodDef gsp_serialization_functions[];
/* torch.linalg's engine calls (linalg.c), for gradscope/linalg.py */
extern PyMethodDef gsp_linalg_functions[];
/* ---- grad-fn.c, hooks.c, autograd-grad.c: the autograd graph seen from Python ---- */
/* Tensor.grad_fn: its Node object, or None. */
PyObject *gsp_tensor_grad_fn(PyObject *self);
/* Readies the Node type, adds Tensor._base and gradscope.Node; 0 or -1 raised. */
int gsp_grad_fn_install(PyObject *module);
extern PyMethodDef gsp_hook_functions[];
/* saved-hooks.c: torch.autograd.graph.saved_tensors_hooks's C half. */
extern PyMethodDef gsp_saved_hook_functions[];
/* Set (under the GIL) when a Python pack hook raised inside an op: the op's result is then
 * dropped by gsp_wrap, which raises that exception instead. */
extern bool gsp_pack_failed;
extern PyMethodDef gsp_autograd_grad_functions[];
/* autograd-function.c: torch.autograd.Function's node (_function_record). */
extern PyMethodDef gsp_function_functions[];
/* trace-read.c: named ranges and the log read back, for gradscope.profiler. */
extern PyMethodDef gsp_trace_read_functions[];

/* ---- sites.c ---- */
/* Tells the engine the calling Python line ("function (file:line)") as the call site of the
 * events it records next, and of the tensors it makes while the leak report remembers sites
 * (GS_LEAK_REPORT). Every entry point calls GSP_SITE() first; with neither it costs two
 * calls. */
void gsp_site_from_frame(void);
#define GSP_SITE()                                                                             \
  do {                                                                                         \
    if (gs_trace_enabled() || gs_remembers_sites())                                           \
      gsp_site_from_frame();                                                                   \
  } while (0)

/* A method table entry's function pointer cast without -Wcast-function-type noise. */
#define GSP_FN(f) ((PyCFunction)(void (*)(void))(f))

/* The handle of a Tensor argument (no check: the engine checks it on use). */
static inline gs_tensor gsp_handle(PyObject *o) { return ((gsp_tensor *)o)->handle; }
