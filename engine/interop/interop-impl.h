/* interop-impl.h: what shared-memory.c and tensor-socket.c share (a storage over a shared
 * memory descriptor's pages), and the shared tensors the DataLoader's workers collate into.
 */
#pragma once

#include "core-impl.h"

/* Maps fd's first nbytes (MAP_SHARED) as an external storage of origin GS_MEMORY_SHARED or
 * GS_MEMORY_RECEIVED that owns fd: unmapped and closed when the storage goes. On failure fd
 * is closed too and NULL is returned after reporting as fn. */
gs__buffer *gs__shared_buffer(int fd, uint64_t nbytes, gs_memory_origin origin, const char *fn);

/* The bytes a mapping of nbytes takes: mmap refuses an empty one. */
static inline uint64_t gs__shared_map_bytes(uint64_t nbytes) { return nbytes ? nbytes : 1; }

/* A new contiguous tensor of dtype and shape whose storage is a fresh memfd segment (origin
 * GS_MEMORY_SHARED, contents unset): what a DataLoader worker collates into, so that sending
 * the batch copies nothing. GS_NO_TENSOR after reporting as fn. */
gs_tensor gs__empty_shared(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn);
