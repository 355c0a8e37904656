/* gradscope/checkpoint.h: saving and loading tensors in the safetensors and NumPy .npy formats.
 *
 * safetensors (https://github.com/huggingface/safetensors): an 8-byte little-endian header
 * length N, N bytes of JSON
 *   {"name": {"dtype": "F32"|"F64"|"I64"|"BOOL", "shape": [..], "data_offsets": [begin, end]},
 *    ..., optional "__metadata__": {"k": "v"}}
 * padded with spaces to a multiple of 8 bytes, then the raw little-endian data (offsets relative
 * to the data start, tensors contiguous with no holes, in the order written). Files interoperate
 * with Python's safetensors. Non-contiguous tensors are written contiguously.
 *
 * The "__metadata__" map is written from a key/value list and read back by
 * gs_safetensors_load_metadata.
 *
 * Loading checks everything it reads before allocating (header length at most 100 MB, shapes,
 * offsets within the file and consistent with dtype and shape, no holes or overlaps) and
 * reports a damaged file as an error naming what was expected and what was found, creating
 * nothing.
 */
#pragma once

#include "scope.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes count tensors under names (unique, non-empty, not "__metadata__"). metadata_kv is
 * NULL or {k1, v1, k2, v2, ..., NULL}. Returns 0, or -1 after an error (no file is left). */
GS_API int gs_safetensors_save(const char *path, const char *const *names,
                               const gs_tensor *tensors, int count,
                               const char *const *metadata_kv);
/* Loads every tensor of the file: returns how many it holds and writes the first max of them
 * (in the file's header order) to names and tensors. Names are malloc'd strings the caller
 * frees with free(); tensors are new handles the caller disposes. -1 after an error (nothing
 * created). names and tensors may be NULL when max is 0 (to count). */
GS_API int gs_safetensors_load(const char *path, char **names, gs_tensor *tensors, int max);
/* The file's "__metadata__" string map (what gs_safetensors_save's metadata_kv wrote, or
 * Python's save_file(..., metadata=...)): returns how many pairs it holds (0 without one) and
 * writes the first max keys and values, in the file's order, as malloc'd strings the caller
 * frees. The whole file is checked as gs_safetensors_load checks it (a damaged file is -1,
 * after an error saying what was expected and found); metadata values must be strings and
 * keys unique. keys and values may be NULL when max is 0 (to count). */
GS_API int gs_safetensors_load_metadata(const char *path, char **keys, char **values, int max);

/* A module tree's parameters (model.state_dict() in PyTorch) under their dotted names
 * ("0.weight", "fc2.bias"), as safetensors: what Python reads with
 * safetensors.torch.load_file and loads with model.load_state_dict. 0 or -1. */
GS_API int gs_module_save_safetensors(gs_module m, const char *path,
                                      const char *const *metadata_kv);
/* model.load_state_dict(load_file(path), strict): copies each file tensor into the parameter
 * of the same dotted name, in place (converting the dtype, under no_grad), so optimizers and
 * other holders of the parameters see the new values. Shapes must match. strict: every
 * parameter must be in the file and every tensor of the file must be a parameter (PyTorch's
 * missing and unexpected keys); otherwise absent ones are left as they are and extra ones
 * ignored. Everything is checked before anything is written: on -1 the model is unchanged. */
GS_API int gs_module_load_safetensors(gs_module m, const char *path, bool strict);

/* NumPy .npy version 1.0 for one tensor ('<f4', '<f8', '<i8', '|b1'; fortran_order False).
 * Save returns 0 or -1; load returns a new tensor or GS_NO_TENSOR (version 2.0 files are read
 * too). */
GS_API int gs_npy_save(const char *path, gs_tensor t);
GS_API gs_tensor gs_npy_load(const char *path);

/* How gs_npy_load_mode brings the data in. */
typedef enum gs_npy_mode {
  GS_NPY_READ = 0,    /* read into engine memory (gs_npy_load) */
  /* Map the file: opening costs the same for any size, pages come in as they are read, and
   * writes go to a private copy (the file never changes). */
  GS_NPY_MAP_PRIVATE,
  /* Map the file opened for writing: writes reach the file (and other mappings of it). */
  GS_NPY_MAP_SHARED,
} gs_npy_mode;

/* gs_npy_load, with the data read or mapped. A mapped tensor's storage says so
 * (gs_storage_info_of: origin GS_MEMORY_MAPPED, writes_reach_file) and is unmapped when its
 * last view goes. Mapping needs the data at an offset aligned to the element size (numpy pads
 * headers to 64 bytes) and, for bool, bytes 0 or 1 (reading turns any nonzero byte into 1). */
GS_API gs_tensor gs_npy_load_mode(const char *path, gs_npy_mode mode);

#ifdef __cplusplus
}
#endif
