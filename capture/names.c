/* names.c: the names of the values a log's fields carry (dtypes and their sizes, error codes,
 * memory origins), one copy for the engine and every reader: the engine's error messages and
 * the inspector's rows then say the same words. The event kinds' names are schema.c's, next
 * to their schemas. The enums themselves are the public API's (gradscope/types.h, error.h,
 * memory.h), which declare these functions; only those headers' enums are used here. */
#include "gradscope/error.h"
#include "gradscope/memory.h"
#include "gradscope/types.h"

const char *gs_dtype_name(gs_dtype dtype) {
  switch (dtype) {
  case GS_F32: return "f32";
  case GS_F64: return "f64";
  case GS_I64: return "i64";
  case GS_BOOL: return "bool";
  case GS_I32: return "i32";
  case GS_U8: return "u8";
  case GS_I8: return "i8";
  case GS_I16: return "i16";
  }
  return "invalid";
}

size_t gs_dtype_size(gs_dtype dtype) {
  switch (dtype) {
  case GS_F32: return 4;
  case GS_F64: return 8;
  case GS_I64: return 8;
  case GS_BOOL: return 1;
  case GS_I32: return 4;
  case GS_U8: return 1;
  case GS_I8: return 1;
  case GS_I16: return 2;
  }
  return 0;
}

const char *gs_error_code_name(gs_error_code code) {
  switch (code) {
  case GS_OK: return "ok";
  case GS_ERR_STALE_HANDLE: return "stale handle";
  case GS_ERR_SHAPE: return "shape mismatch";
  case GS_ERR_DTYPE: return "unsupported dtype";
  case GS_ERR_DIM: return "dimension out of range";
  case GS_ERR_INDEX: return "index out of range";
  case GS_ERR_ARGUMENT: return "invalid argument";
  case GS_ERR_OVERFLOW: return "size overflow";
  case GS_ERR_OUT_OF_MEMORY: return "out of memory";
  case GS_ERR_STATE: return "invalid state";
  case GS_ERR_SINGULAR: return "singular matrix";
  }
  return "unknown error";
}

const char *gs_memory_origin_name(gs_memory_origin origin) {
  static const char *const names[GS_MEMORY_ORIGIN_COUNT] = {
      "engine", "blob", "dlpack", "mapped", "shared", "received"};
  return (unsigned)origin < GS_MEMORY_ORIGIN_COUNT ? names[origin] : "?";
}
