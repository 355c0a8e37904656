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

/* Where a storage's bytes come from. */
typedef enum gs_memory_origin {
  GS_MEMORY_ENGINE = 0, /* the engine's caching allocator */
  GS_MEMORY_BLOB,       /* the caller's memory, wrapped by gs_from_blob */
  GS_MEMORY_DLPACK,     /* another framework's, wrapped by gs_from_dlpack */
  GS_MEMORY_MAPPED,     /* a memory-mapped .npy file (gs_npy_load_mode) */
  GS_MEMORY_SHARED,     /* a shared-memory segment made here (gs_share_memory_) */
  GS_MEMORY_RECEIVED,   /* a shared-memory segment received from another process */
  GS_MEMORY_ORIGIN_COUNT
} gs_memory_origin;

/* "engine", "blob", "dlpack", "mapped", "shared", "received"; "?" out of range. */
GS_API const char *gs_memory_origin_name(gs_memory_origin origin);

/* What a tensor's storage is and where its bytes live. */
typedef struct gs_storage_info {
  uint64_t id;             /* as gs_storage_id */
  uint64_t nbytes;         /* the bytes the storage spans */
  const void *data;        /* its first byte (not the tensor's first element) */
  gs_memory_origin origin;
  /* Code outside the engine sees these bytes and their writes (a DLPack consumer or
   * producer, another process, a file mapped for writing): a clone of such a storage copies
   * at once instead of sharing copy-on-write, so the storage never moves off them. */
  bool seen_outside;
  /* A mapped file: whether writes reach the file (opened for writing) or a private copy. */
  bool writes_reach_file;
  int64_t peer_pid;        /* GS_MEMORY_RECEIVED: the process that sent it; else 0 */
} gs_storage_info;

/* Fills *info for t's storage; 0, or -1 after reporting a stale handle or NULL info. */
GS_API int gs_storage_info_of(gs_tensor t, gs_storage_info *info);
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
