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

/* ---- tensor-socket.c: the parts of gs_tensor_send and gs_tensor_recv ---------------------- */

/* What gs_tensor_send writes for a tensor (its descriptor rides beside it). A DataLoader
 * worker sends a batch's records in one message of its own, with the descriptors of the
 * segments the receiver has not mapped yet. */
typedef struct gs__wire_tensor {
  char magic[4];
  uint32_t dtype;
  int32_t ndim;
  uint32_t reserved;
  int64_t offset; /* elements */
  int64_t shape[GS_MAX_DIMS];
  int64_t strides[GS_MAX_DIMS];
  uint64_t nbytes; /* the storage's */
  int64_t pid;     /* the sender */
} gs__wire_tensor;
_Static_assert(sizeof(gs__wire_tensor) == 16 + 8 + 2 * 8 * GS_MAX_DIMS + 16,
               "the message has no padding: both ends agree on every byte");

/* The most descriptors gs__send_with_fds sends with one message. */
#define GS__MAX_SENT_FDS 8
/* Sends all of buf, the n_fds (at most GS__MAX_SENT_FDS) descriptors riding with its first
 * byte; false after reporting as fn. */
bool gs__send_with_fds(int sock, const void *buf, size_t len, const int *fds, int n_fds,
                       const char *fn);
/* The descriptors that came with a message, all closed (gs__close_fds) unless one is taken
 * (its entry set to -1). */
typedef struct gs__received_fds {
  int fd[GS__MAX_SENT_FDS];
  int count;
  bool dropped; /* more came than fit, or the kernel discarded some: those are closed */
} gs__received_fds;
struct msghdr;
/* Adds the descriptors that came with a recvmsg() to r. */
void gs__keep_fds(gs__received_fds *r, struct msghdr *mh);
void gs__close_fds(gs__received_fds *r);
/* Fills w for sending h (its storage moved into shared memory first if it is not there), and
 * fd with the storage's descriptor (still the storage's). false after reporting as fn. */
bool gs__tensor_wire(gs_tensor h, gs__wire_tensor *w, int *fd, const char *fn);
/* Checks w against itself (magic, dtype, geometry inside w->nbytes): t gets the geometry, no
 * storage yet. false after reporting as fn. */
bool gs__tensor_wire_check(const gs__wire_tensor *w, gs__tensor *t, const char *fn);
/* Checks that fd is a memory file of at least nbytes (st gets its fstat); false after
 * reporting as fn. */
struct stat;
bool gs__memory_file_check(int fd, uint64_t nbytes, struct stat *st, const char *fn);

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
 * -1 if h is not over a segment of p (then nothing is to be given back); announced says
 * whether this segment was sent before (the receiver has its memory file already, if it keeps
 * one per slot: segment-cache.c). */
int gs__segment_pool_sent(gs__segment_pool *p, gs_tensor h, bool *announced);
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
/* The tensor of wire record w (checked here) that the sender wrote into its pool's slot: with
 * fd (a memory file, taken: closed or kept by the mapping), over the mapping this cache holds
 * of that slot when fd names the same file, else over a new one that replaces it; with fd -1
 * (a segment the sender sent before), over the mapping held of slot, which must exist and be
 * large enough. GS_NO_TENSOR after reporting as fn. */
gs_tensor gs__segment_cache_take(gs__segment_cache *c, int slot, const gs__wire_tensor *w, int fd,
                                 const char *fn);
