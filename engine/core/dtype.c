/* dtype.c: PyTorch's promotion lattice (bool < i32 < i64 < f32 < f64) and dtype conversions. The
 * dtypes' names and sizes are the capture library's (capture/names.c): the log names them too. */
#include "core-impl.h"

bool gs_dtype_is_floating(gs_dtype dtype) { return dtype == GS_F32 || dtype == GS_F64; }
bool gs_dtype_is_integer(gs_dtype dtype) { return dtype == GS_I64 || dtype == GS_I32; }

static int rank(gs_dtype d) {
  switch (d) {
  case GS_BOOL: return 0;
  case GS_I32: return 1;
  case GS_I64: return 2;
  case GS_F32: return 3;
  case GS_F64: return 4;
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
  case GS_I32: *(int32_t *)p = gs__f64_to_i32(v); break;
  }
}
