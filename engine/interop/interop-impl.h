/* interop-impl.h: what shared-memory.c and tensor-socket.c share (a storage over a shared
 * memory descriptor's pages), and the shared tensors the DataLoader's workers collate into.
 */
#pragma once

#include "core-impl.h"

/* Maps fd's first nbytes (MAP_SHARED) as an external storage of origin GS_MEMORY_SHARED or
 * GS_MEMORY_RECEIVED that owns fd: unmapped and closed when the storage goes. On failure fd
 * is closed too and NULL is returned after reporting as fn. */
gs__buffer *gs__shared_buffer(int fd, uint64_t nbytes, gs_memory_origin origin, const char *fn);

/* One MAP_SHARED mapping of a memfd, refcounted: each storage over it holds a reference, and
 * so may a receiver's segment cache. */
typedef struct gs__segment_map gs__segment_map;
/* Maps fd's first len bytes (taking fd: closed with the mapping, or now on failure); one
 * reference. NULL after reporting as fn. */
gs__segment_map *gs__segment_map_new(int fd, uint64_t len, const char *fn);
/* The bytes it maps. */
uint64_t gs__segment_map_len(const gs__segment_map *map);
/* Takes one more reference. */
void gs__segment_map_ref(gs__segment_map *map);
/* Drops a reference: the last unmaps and closes. NULL is ignored. */
void gs__segment_map_unref(gs__segment_map *map);
/* As gs__shared_buffer, over the first nbytes of map (which it references: the caller keeps
 * its own reference). */
gs__buffer *gs__shared_buffer_over(gs__segment_map *map, uint64_t nbytes, gs_memory_origin origin,
                                   const char *fn);

/* The bytes a mapping of nbytes takes: mmap refuses an empty one. */
static inline uint64_t gs__shared_map_bytes(uint64_t nbytes) { return nbytes ? nbytes : 1; }

/* The element count of dtype and shape, checked: -1 after reporting as fn. */
int64_t gs__shared_numel(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn);
/* A new contiguous tensor of dtype, shape and numel over b (taken: released if the tensor
 * cannot be made); GS_NO_TENSOR after reporting as fn. */
gs_tensor gs__tensor_over_shared(gs__buffer *b, gs_dtype dtype, const int64_t *shape, int ndim,
                                 int64_t numel, const char *fn);
/* A new contiguous tensor of dtype and shape whose storage is a fresh memfd segment (origin
 * GS_MEMORY_SHARED, contents unset): what a DataLoader worker collates into, so that sending
 * the batch copies nothing. GS_NO_TENSOR after reporting as fn. */
gs_tensor gs__empty_shared(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn);

/* ---- tensor-socket.c: the parts of gs_tensor_recv -------------------------------------- */

/* Receives one tensor message on sock and checks it against itself and its descriptor: t gets
 * the geometry (no storage yet), nbytes the storage's size, fd the descriptor (the caller's to
 * close; its memory file holds at least nbytes) and pid the sender. false after reporting as
 * fn, with every descriptor that came closed. */
bool gs__tensor_recv_message(int sock, gs__tensor *t, uint64_t *nbytes, int *fd, int64_t *pid,
                             const char *fn);
/* Registers t over b (taken: released on failure), received from pid; GS_NO_TENSOR after
 * reporting as fn. */
gs_tensor gs__tensor_over_received(gs__tensor *t, gs__buffer *b, int64_t pid, const char *fn);

/* Calls on_release(user, tag, reusable) once the storage's last release has unmapped and
 * closed the received shared memory of h, with reusable false if the pages were sent on to
 * another process meanwhile (gs_tensor_send), which may still read them: the sender must not
 * write them again. false if h's storage is not shared memory this process mapped. */
typedef void (*gs__shared_release_fn)(void *user, uint32_t tag, bool reusable);
bool gs__shared_on_release(gs_tensor h, gs__shared_release_fn on_release, void *user,
                           uint32_t tag);
/* Marks b's pages as sent on to another process (see gs__shared_on_release). */
void gs__shared_mark_forwarded(gs__buffer *b);

/* ---- segment-pool.c: segments a worker writes again and again ----------------------------- */

#define GS__SEGMENT_POOL_MAX 254 /* 1 + a slot's number fits in a byte below the worker's 255 */
typedef struct gs__segment_pool gs__segment_pool;
/* A pool of capacity (1..GS__SEGMENT_POOL_MAX) slots; NULL if out of range or memory. */
gs__segment_pool *gs__segment_pool_new(int capacity);
/* Unmaps the idle segments; with some still busy, the pool stays until the process ends. */
void gs__segment_pool_free(gs__segment_pool *p);
/* As gs__empty_shared, over an idle segment of the pool big enough (or a new one in a free
 * slot; with every slot busy, an unpooled fresh segment). */
gs_tensor gs__segment_pool_empty(gs__segment_pool *p, gs_dtype dtype, const int64_t *shape,
                                 int ndim, const char *fn);
/* h's storage is about to be sent: its segment is busy until given back. Returns its slot, or
 * -1 if h is not over a segment of p (then nothing is to be given back). */
int gs__segment_pool_sent(gs__segment_pool *p, gs_tensor h);
/* The receiver let go of the segment in slot: it may be written again once ours is gone too.
 * false for a slot that was not out (a damaged or hostile message: ignored). */
bool gs__segment_pool_given_back(gs__segment_pool *p, int slot);

/* ---- segment-cache.c: a receiver's mappings of a sender's pooled segments ----------------- */

/* The mappings of a sender's pool slots that this process received batches over, kept between
 * batches: a segment written again by the sender is not mapped again here, so reading it
 * costs no page faults after the first time. Used by one thread; the mappings it holds live
 * on in the storages over them after it is freed. */
typedef struct gs__segment_cache gs__segment_cache;
/* A cache of capacity (1..GS__SEGMENT_POOL_MAX) slots; NULL if out of range or memory. */
gs__segment_cache *gs__segment_cache_new(int capacity);
void gs__segment_cache_free(gs__segment_cache *c);
/* gs_tensor_recv for a tensor the sender wrote into its pool's slot: over the mapping this
 * cache already holds of that slot when the descriptor names the same memory file, else over a
 * new one that replaces it. With no cache (NULL) or a slot out of range: a new mapping of its
 * own, as gs_tensor_recv (which is this). */
gs_tensor gs__segment_cache_recv(gs__segment_cache *c, int slot, int sock, const char *fn);
