/* gradscope/interop.h: memory that crosses boundaries: DLPack between frameworks, and
 * shared-memory storages handed to other processes over a Unix socket.
 *
 * Both share bytes, never copy them: a tensor and its DLPack twin, or a tensor and the one a
 * receiving process makes, point at the same memory, and a write through either is seen by
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

/* Moves t's storage into shared memory (a memfd mapping, as torch's share_memory_): every
 * view of the storage follows, the bytes are copied once, and from then on the storage can be
 * sent to other processes by gs_tensor_send without copying. Already shared: does nothing.
 * Bytes seen outside the engine (exported by gs_to_dlpack, a DLPack producer's, a file mapped
 * for writing) cannot move: an error (share a gs_clone of the tensor instead).
 * Not safe while another thread uses the storage. 0, or -1 after an error. */
GS_API int gs_share_memory_(gs_tensor t);
/* True if t's storage lives in shared memory (made here or received). */
GS_API bool gs_is_shared(gs_tensor t);

/* Sends t to the process at the other end of a connected Unix socket: its geometry in a
 * fixed-size message and its storage's descriptor passed with SCM_RIGHTS. t's storage is
 * moved into shared memory first if it is not there yet. Blocks until the message is written.
 * 0, or -1 after an error. */
GS_API int gs_tensor_send(int socket_fd, gs_tensor t);
/* Receives one tensor sent by gs_tensor_send: a new tensor over the same pages as the
 * sender's (a write on either side is seen by the other); the shared memory is freed when the
 * last process using it lets go. A malformed or truncated message, or the peer closing the
 * socket first, is an error (every descriptor that came with it is closed). Blocks until a
 * message arrives. GS_NO_TENSOR after an error. */
GS_API gs_tensor gs_tensor_recv(int socket_fd);

#ifdef __cplusplus
}
#endif
