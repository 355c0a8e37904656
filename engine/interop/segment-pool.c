/* segment-pool.c: shared-memory segments written again and again (what a DataLoader worker
 * collates into).
 *
 * The first write to each 4 KiB of a fresh memfd costs a page fault, a zeroed page and a
 * memory-cgroup charge: for a 1 MiB batch about a third of what collating it costs. A worker
 * collates batch after batch of the same size, so it keeps its segments mapped and writes the
 * next batch into one the receiver has given back. A segment is busy while a storage of this
 * process is over it (`ours`) and from the moment it is sent until the receiver says its last
 * storage over the pages went (`theirs`). When every slot is busy a fresh, unpooled segment is
 * made, as without a pool: a receiver that keeps its batches costs memory, never correctness.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interop-impl.h"

typedef struct segment {
  gs__segment_pool *pool;
  int fd; /* -1: the slot is empty */
  void *base;
  size_t len; /* mapped, and the memfd's size */
  bool ours;
  bool theirs;
  bool announced; /* sent before: the receiver has the memory file */
} segment;

struct gs__segment_pool {
  int capacity;
  segment seg[];
};

gs__segment_pool *gs__segment_pool_new(int capacity) {
  if (capacity < 1 || capacity > GS__SEGMENT_POOL_MAX)
    return NULL;
  gs__segment_pool *p = calloc(1, sizeof *p + (size_t)capacity * sizeof(segment));
  if (!p)
    return NULL;
  p->capacity = capacity;
  for (int i = 0; i < capacity; i++)
    p->seg[i] = (segment){.pool = p, .fd = -1};
  return p;
}

static void drop_segment(segment *s) {
  if (s->fd < 0)
    return;
  munmap(s->base, s->len);
  close(s->fd);
  s->fd = -1;
}

/* The slots still busy are left to the process's end: a storage or the receiver still uses
 * their pages (a worker frees its pool only as it leaves). */
void gs__segment_pool_free(gs__segment_pool *p) {
  if (!p)
    return;
  bool busy = false;
  for (int i = 0; i < p->capacity; i++) {
    if (p->seg[i].ours || p->seg[i].theirs)
      busy = true;
    else
      drop_segment(&p->seg[i]);
  }
  if (!busy)
    free(p);
}

/* A storage of ours over the segment went: it is ours no more. */
static void segment_released(void *data, void *user) {
  (void)data;
  segment *s = user;
  s->ours = false;
}

/* The slot to write nbytes into: the smallest idle segment big enough (a batch's small field,
 * its labels, must not take the segment its next large one could have used, which would then
 * be made afresh), else an empty or idle slot made into a fresh one; NULL if every slot is
 * busy or making one fails. */
static segment *take_slot(gs__segment_pool *p, size_t len) {
  segment *refill = NULL, *fit = NULL;
  for (int i = 0; i < p->capacity; i++) {
    segment *s = &p->seg[i];
    if (s->ours || s->theirs)
      continue;
    if (s->fd >= 0 && s->len >= len) {
      if (!fit || s->len < fit->len)
        fit = s;
    } else if (!refill || refill->fd >= 0) {
      refill = s; /* an empty slot before an idle one too small */
    }
  }
  if (fit)
    return fit;
  if (!refill)
    return NULL;
  drop_segment(refill);
  int fd = memfd_create("gradscope-storage", MFD_CLOEXEC);
  if (fd < 0)
    return NULL;
  void *base = MAP_FAILED;
  if (ftruncate(fd, (off_t)len) == 0)
    base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    close(fd);
    return NULL;
  }
#ifdef MADV_POPULATE_WRITE
  /* The batch about to be stacked here writes every page: faulting them all in one call costs
   * 2.6-2.9 ms per MiB of CPU on the project's VMs, against 4.3-5.0 ms for a fault per 4 KiB.
   * A hint: on a kernel without it (before 5.14) the writes fault the pages in as before. */
  madvise(base, len, MADV_POPULATE_WRITE);
#endif
  refill->fd = fd;
  refill->base = base;
  refill->len = len;
  refill->announced = false;
  return refill;
}

gs_tensor gs__segment_pool_empty(gs__segment_pool *p, gs_dtype dtype, const int64_t *shape,
                                 int ndim, const char *fn) {
  int64_t numel = gs__shared_numel(dtype, shape, ndim, fn);
  if (numel < 0)
    return GS_NO_TENSOR;
  uint64_t nbytes = (uint64_t)numel * gs_dtype_size(dtype);
  segment *s = nbytes <= SIZE_MAX ? take_slot(p, (size_t)gs__shared_map_bytes(nbytes)) : NULL;
  if (!s) /* every slot busy (or no memory for a new one): a segment of its own, as unpooled */
    return gs__empty_shared(dtype, shape, ndim, fn);
  gs__buffer *b = gs__buffer_wrap(s->base, nbytes, segment_released, s, GS_MEMORY_SHARED);
  if (!b) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_TENSOR;
  }
  b->fd = s->fd;
  b->seen_outside = true; /* another process maps these pages */
  s->ours = true;
  /* On failure the buffer's release leaves the slot idle again. */
  return gs__tensor_over_shared(b, dtype, shape, ndim, numel, fn);
}

int gs__segment_pool_sent(gs__segment_pool *p, gs_tensor h, bool *announced) {
  *announced = false;
  gs__tensor *t = gs__lookup(h, "segment_pool_sent");
  if (!t || t->storage->buffer->release != segment_released)
    return -1;
  segment *s = t->storage->buffer->release_user_data;
  if (s->pool != p)
    return -1;
  s->theirs = true;
  *announced = s->announced;
  s->announced = true;
  return (int)(s - p->seg);
}

bool gs__segment_pool_given_back(gs__segment_pool *p, int slot) {
  if (slot < 0 || slot >= p->capacity || !p->seg[slot].theirs)
    return false;
  p->seg[slot].theirs = false;
  return true;
}
