/* gradscope/types.h: the handle, dtype and limit types every other header uses.
 *
 * A gs_tensor is a handle passed by value: a 32-bit slot index (low bits) and a 32-bit
 * generation (high bits) into the engine's slot table. Id 0 is "no tensor". The same id
 * appears in the event log, so the inspector can name a tensor exactly as the program did.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GS_API
#else
#define GS_API __attribute__((visibility("default")))
#endif

/* Most dimensions a tensor can have. */
#define GS_MAX_DIMS 8

typedef struct gs_tensor {
  uint64_t id;
} gs_tensor;

/* The empty handle: returned by a call whose error handler returned instead of aborting. */
#define GS_NO_TENSOR ((gs_tensor){0})

static inline bool gs_tensor_is_none(gs_tensor t) { return t.id == 0; }

typedef enum gs_dtype {
  GS_F32 = 0,
  GS_F64 = 1,
  GS_I64 = 2,
  GS_BOOL = 3,
  GS_I32 = 4,
  GS_U8 = 5,
  GS_I8 = 6,
  GS_I16 = 7,
} gs_dtype;

#define GS_DTYPE_COUNT 8

/* "f32", "f64", "i64", "bool", "i32", "u8", "i8", "i16"; "invalid" for anything else. */
GS_API const char *gs_dtype_name(gs_dtype dtype);
/* Bytes per element; 0 for an invalid dtype. */
GS_API size_t gs_dtype_size(gs_dtype dtype);
GS_API bool gs_dtype_is_floating(gs_dtype dtype);
/* u8, i8, i16, i32 and i64 (not bool): the dtypes with integer arithmetic. */
GS_API bool gs_dtype_is_integer(gs_dtype dtype);

/* torch.set_default_dtype: the floating dtype integer operands compute in where an op needs a
 * floating result (true division, sqrt of an integer tensor, an integer tensor times 1.5), for
 * the whole process: GS_F32 (the start) or GS_F64; anything else is an error. */
GS_API void gs_set_default_dtype(gs_dtype dtype);
GS_API gs_dtype gs_default_dtype(void);

/* The dtype two tensor operands compute in, by PyTorch's promotion rules
 * (bool < integers < f32 < f64; among integers the narrowest that holds both, so u8 with i8
 * gives i16). */
GS_API gs_dtype gs_promote_types(gs_dtype a, gs_dtype b);

#ifdef __cplusplus
}
#endif
