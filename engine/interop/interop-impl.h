/* interop-impl.h: what shared-memory.c and tensor-socket.c share: a storage over a shared
 * memory descriptor's pages.
 */
#pragma once

#include "core-impl.h"

/* Maps fd's first nbytes (MAP_SHARED) as an external storage of origin GS_MEMORY_SHARED or
 * GS_MEMORY_RECEIVED that owns fd: unmapped and closed when the storage goes. On failure fd
 * is closed too and NULL is returned after reporting as fn. */
gs__buffer *gs__shared_buffer(int fd, uint64_t nbytes, gs_memory_origin origin, const char *fn);

/* The bytes a mapping of nbytes takes: mmap refuses an empty one. */
static inline uint64_t gs__shared_map_bytes(uint64_t nbytes) { return nbytes ? nbytes : 1; }
