/* dtype.c: element types and PyTorch's promotion lattice (bool < i64 < f32 < f64). */
#include "core-impl.h"

const char *gs_dtype_name(gs_dtype dtype) {
  switch (dtype) {
  case GS_F32: return "f32";
  case GS_F64: return "f64";
  case GS_I64: return "i64";
  case GS_BOOL: return "bool";
  }
  return "invalid";
}

size_t gs_dtype_size(gs_dtype dtype) {
  switch (dtype) {
  case GS_F32: return 4;
  case GS_F64: return 8;
  case GS_I64: return 8;
  case GS_BOOL: return 1;
  }
  return 0;
}

bool gs_dtype_is_floating(gs_dtype dtype) { return dtype == GS_F32 || dtype == GS_F64; }

static int rank(gs_dtype d) {
  switch (d) {
  case GS_BOOL: return 0;
  case GS_I64: return 1;
  case GS_F32: return 2;
  case GS_F64: return 3;
  }
  return 0;
}

gs_dtype gs_promote_types(gs_dtype a, gs_dtype b) { return rank(a) >= rank(b) ? a : b; }

void gs__store_f64(void *p, gs_dtype dtype, double v) {
  switch (dtype) {
  case GS_F32: *(float *)p = (float)v; break;
  case GS_F64: *(double *)p = v; break;
  case GS_I64: *(int64_t *)p = gs__f64_to_i64(v); break;
  case GS_BOOL: *(bool *)p = v != 0.0; break;
  }
}
