/* gradscope/memory.h: the caching allocator's counters.
 *
 * Tensor bytes come from a caching allocator that keeps freed buffers by size class and hands
 * them out again, so a training loop that allocates the same shapes every step does not touch
 * the operating system (or page-fault) after its first step.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_memory_stats {
  uint64_t bytes_in_use;      /* bytes handed out to live storages (size-class rounded) */
  uint64_t bytes_requested;   /* bytes live storages asked for */
  uint64_t bytes_reserved;    /* bytes held from the system: in use + cached */
  uint64_t peak_bytes_in_use; /* highest bytes_in_use since start or gs_memory_reset_peak */
  uint64_t allocations;       /* buffers handed out */
  uint64_t cache_hits;        /* of those, how many came from the cache */
  uint64_t system_allocations;/* of those, how many came from the system */
  uint64_t live_storages;     /* storages alive (wrapped external memory included) */
} gs_memory_stats;

GS_API void gs_memory_get_stats(gs_memory_stats *stats);
/* Returns every cached (free) buffer to the system. */
GS_API void gs_memory_empty_cache(void);
GS_API void gs_memory_reset_peak(void);
/* The most bytes the cache keeps free; beyond it freed buffers go back to the system.
 * Default 1 GiB, or GS_CACHE_LIMIT_MB from the environment. */
GS_API void gs_memory_set_cache_limit(uint64_t bytes);
/* The size a request of n bytes is rounded up to. */
GS_API uint64_t gs_memory_size_class(uint64_t nbytes);

#ifdef __cplusplus
}
#endif
