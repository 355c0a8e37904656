/* dtype.c: PyTorch's promotion lattice and dtype conversions. bool < integers < f32 < f64;
 * among the integers u8, i8 < i16 < i32 < i64, and u8 with i8 gives i16 (the narrowest signed
 * dtype holding both). The dtypes' names and sizes are the capture library's
 * (capture/names.c): the log names them too. */
#include "core-impl.h"

bool gs_dtype_is_floating(gs_dtype dtype) { return dtype == GS_F32 || dtype == GS_F64; }
bool gs_dtype_is_integer(gs_dtype dtype) {
  return dtype == GS_I64 || dtype == GS_I32 || dtype == GS_U8 || dtype == GS_I8 || dtype == GS_I16;
}

/* A process-wide setting, as torch's; read on every integer op that needs a floating result. */
static _Atomic int default_dtype = GS_F32;

void gs_set_default_dtype(gs_dtype dtype) {
  if (dtype != GS_F32 && dtype != GS_F64) {
    gs__error(GS_ERR_DTYPE, "set_default_dtype", "expected f32 or f64, got %s",
              gs_dtype_name(dtype));
    return;
  }
  default_dtype = (int)dtype;
}

gs_dtype gs_default_dtype(void) { return (gs_dtype)default_dtype; }

gs_dtype gs_promote_types(gs_dtype a, gs_dtype b) {
  enum {
    F4 = GS_F32,
    F8 = GS_F64,
    L = GS_I64,
    B = GS_BOOL,
    I = GS_I32,
    U1 = GS_U8,
    C = GS_I8,
    S = GS_I16
  };
  /* torch.promote_types in 1.13, indexed in gs_dtype order (f32 f64 i64 bool i32 u8 i8 i16);
   * tests/engine/core/test-promote.c checks it against values captured from torch. */
  static const unsigned char table[GS_DTYPE_COUNT][GS_DTYPE_COUNT] = {
      /* f32  */ {F4, F8, F4, F4, F4, F4, F4, F4},
      /* f64  */ {F8, F8, F8, F8, F8, F8, F8, F8},
      /* i64  */ {F4, F8, L, L, L, L, L, L},
      /* bool */ {F4, F8, L, B, I, U1, C, S},
      /* i32  */ {F4, F8, L, I, I, I, I, I},
      /* u8   */ {F4, F8, L, U1, I, U1, S, S},
      /* i8   */ {F4, F8, L, C, I, S, C, S},
      /* i16  */ {F4, F8, L, S, I, S, S, S},
  };
  if ((unsigned)a >= GS_DTYPE_COUNT || (unsigned)b >= GS_DTYPE_COUNT)
    return a;
  return (gs_dtype)table[a][b];
}

void gs__store_f64(void *p, gs_dtype dtype, double v) {
  switch (dtype) {
  case GS_F32: *(float *)p = (float)v; break;
  case GS_F64: *(double *)p = v; break;
  case GS_I64: *(int64_t *)p = gs__f64_to_i64(v); break;
  case GS_BOOL: *(bool *)p = v != 0.0; break;
  case GS_I32: *(int32_t *)p = gs__f64_to_i32(v); break;
  case GS_U8: *(uint8_t *)p = gs__f64_to_u8(v); break;
  case GS_I8: *(int8_t *)p = gs__f64_to_i8(v); break;
  case GS_I16: *(int16_t *)p = gs__f64_to_i16(v); break;
  }
}
