/* gradscope/interop.h: memory that crosses boundaries: DLPack between frameworks.
 *
 * Both share bytes, never copy them: a tensor and its DLPack twin point at the same memory, and a write through either is seen by
 * the other. The engine's version counter does not see writes made outside the engine, so an
 * autograd graph that saved such a tensor cannot detect them (as in PyTorch).
 *
 * Where a storage's bytes come from is gs_storage_info_of's origin (memory.h).
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DLPack's managed tensor (dlpack/dlpack.h, version 0.6 as Debian ships it). Only declared
 * here: a program that calls these functions includes <dlpack/dlpack.h> itself. */
struct DLManagedTensor;

/* A DLManagedTensor sharing t's storage: t's shape, its strides in elements, byte_offset for
 * its storage offset, its dtype (f32 and f64 as kDLFloat, i64 as kDLInt, bool as DLPack's
 * kDLBool = 6, which 0.6 headers do not name yet) and device kDLCPU. The storage stays alive
 * until the consumer calls the managed tensor's deleter, even if every handle to it is
 * disposed first. Bytes shared copy-on-write are copied first (the consumer may write), and
 * from then on clones of the storage copy at once instead of sharing. Refuses a tensor that
 * requires grad, as PyTorch does (export gs_detach(t)). NULL after an error. */
GS_API struct DLManagedTensor *gs_to_dlpack(gs_tensor t);

/* A tensor over a DLPack producer's memory, without copying. The engine takes over managed:
 * its deleter is called exactly once, when the last tensor over that memory is disposed (or
 * at once, when managed came from gs_to_dlpack: the result then shares the original storage
 * itself, its version counter included). A layout the engine cannot express (a dtype other
 * than float32, float64, int64 or bool, more than one lane, a device other than kDLCPU, a
 * negative stride, sizes or strides whose extent overflows, misaligned elements, more than
 * GS_MAX_DIMS dimensions) is an error, and the deleter is still called, before the error is
 * reported. */
GS_API gs_tensor gs_from_dlpack(struct DLManagedTensor *managed);

#ifdef __cplusplus
}
#endif
