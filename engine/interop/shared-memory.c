/* shared-memory.c: storages in shared memory (torch's share_memory_).
 *
 * The bytes move into a memfd mapped MAP_SHARED; the storage keeps the descriptor so that
 * tensor-socket.c can pass it to another process, which maps the same pages. A memfd has no
 * name in the file system, so nothing is left behind: the kernel frees the pages when the last
 * mapping and the last descriptor, in any process, are gone.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interop-impl.h"

/* One mapping of a memfd, shared by the storages over it and by a receiver's segment cache
 * (segment-cache.c): unmapped and closed when the last of them lets go. */
struct gs__segment_map {
  void *base;
  size_t len;
  int fd;
  atomic_int refs;
};

gs__segment_map *gs__segment_map_new(int fd, uint64_t len, const char *fn) {
  gs__segment_map *map = calloc(1, sizeof *map);
  if (!map) {
    close(fd);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  map->fd = fd;
  map->len = (size_t)gs__shared_map_bytes(len);
  map->base = mmap(NULL, map->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map->base == MAP_FAILED) {
    int err = errno;
    close(fd);
    free(map);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot map %llu bytes of shared memory: %s",
              (unsigned long long)len, strerror(err));
    return NULL;
  }
  atomic_init(&map->refs, 1);
  return map;
}

uint64_t gs__segment_map_len(const gs__segment_map *map) { return map->len; }

void gs__segment_map_ref(gs__segment_map *map) { atomic_fetch_add(&map->refs, 1); }

void gs__segment_map_unref(gs__segment_map *map) {
  if (map && atomic_fetch_sub(&map->refs, 1) == 1) {
    munmap(map->base, map->len);
    close(map->fd);
    free(map);
  }
}

typedef struct shared_mapping {
  gs__segment_map *map;
  gs__shared_release_fn on_release; /* the sender's give-back (a DataLoader worker), or NULL */
  void *on_release_user;
  uint32_t tag;
  bool forwarded; /* sent on to another process: the pages may still be read there */
} shared_mapping;

static void shared_unmap(void *data, void *user) {
  (void)data;
  shared_mapping *m = user;
  gs__segment_map_unref(m->map);
  if (m->on_release)
    m->on_release(m->on_release_user, m->tag, !m->forwarded);
  free(m);
}

bool gs__shared_on_release(gs_tensor h, gs__shared_release_fn on_release, void *user,
                           uint32_t tag) {
  gs__tensor *t = gs__lookup(h, "shared_on_release");
  if (!t || t->storage->buffer->release != shared_unmap)
    return false;
  shared_mapping *m = t->storage->buffer->release_user_data;
  m->on_release = on_release;
  m->on_release_user = user;
  m->tag = tag;
  return true;
}

void gs__shared_mark_forwarded(gs__buffer *b) {
  if (b->release == shared_unmap)
    ((shared_mapping *)b->release_user_data)->forwarded = true;
}

gs__buffer *gs__shared_buffer_over(gs__segment_map *map, uint64_t nbytes, gs_memory_origin origin,
                                   const char *fn) {
  shared_mapping *m = calloc(1, sizeof *m);
  if (!m) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  gs__segment_map_ref(map);
  m->map = map;
  gs__buffer *b = gs__buffer_wrap(map->base, nbytes, shared_unmap, m, origin);
  if (!b) {
    shared_unmap(NULL, m);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  b->fd = map->fd;
  b->seen_outside = true; /* other processes map these pages */
  return b;
}

gs__buffer *gs__shared_buffer(int fd, uint64_t nbytes, gs_memory_origin origin, const char *fn) {
  gs__segment_map *map = gs__segment_map_new(fd, nbytes, fn);
  if (!map)
    return NULL;
  gs__buffer *b = gs__shared_buffer_over(map, nbytes, origin, fn);
  gs__segment_map_unref(map); /* the buffer holds it now, or it goes */
  return b;
}

/* A fresh memfd of nbytes, mapped as a buffer of origin GS_MEMORY_SHARED; NULL after
 * reporting. */
static gs__buffer *new_segment(uint64_t nbytes, const char *fn) {
  int fd = memfd_create("gradscope-storage", MFD_CLOEXEC);
  if (fd < 0) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot create shared memory (memfd_create): %s",
              strerror(errno));
    return NULL;
  }
  if (ftruncate(fd, (off_t)gs__shared_map_bytes(nbytes)) != 0) {
    int err = errno;
    close(fd);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot size shared memory to %llu bytes: %s",
              (unsigned long long)nbytes, strerror(err));
    return NULL;
  }
  return gs__shared_buffer(fd, nbytes, GS_MEMORY_SHARED, fn);
}

int64_t gs__shared_numel(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn) {
  if (gs_dtype_size(dtype) == 0) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected a dtype (f32, f64, i64, bool, i32, u8, i8 or i16), got %d", (int)dtype);
    return -1;
  }
  return gs__checked_numel(shape, ndim, fn);
}

gs_tensor gs__tensor_over_shared(gs__buffer *b, gs_dtype dtype, const int64_t *shape, int ndim,
                                 int64_t numel, const char *fn) {
  gs__tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.ndim = ndim;
  t.numel = numel;
  if (ndim > 0)
    memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
  gs__contiguous_strides(t.shape, ndim, t.strides);
  t.storage = gs__storage_over_buffer(b); /* on failure it releases b */
  if (!t.storage) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return GS_NO_TENSOR;
  }
  return gs__register(&t, fn);
}

gs_tensor gs__empty_shared(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn) {
  int64_t numel = gs__shared_numel(dtype, shape, ndim, fn);
  if (numel < 0)
    return GS_NO_TENSOR;
  gs__buffer *b = new_segment((uint64_t)numel * gs_dtype_size(dtype), fn);
  if (!b)
    return GS_NO_TENSOR;
  return gs__tensor_over_shared(b, dtype, shape, ndim, numel, fn);
}

int gs_share_memory_(gs_tensor h) {
  static const char fn[] = "share_memory_";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return -1;
  gs__storage *s = t->storage;
  if (s->buffer->fd >= 0)
    return 0;
  if (s->buffer->seen_outside) {
    /* Moving would leave whoever looks at the old bytes (a DLPack consumer or producer, a
     * file's other mappings) with memory the engine no longer writes, or frees. */
    gs_memory_origin o = s->buffer->origin;
    gs__error(GS_ERR_STATE, fn, "expected a storage only the engine sees, got one whose "
              "bytes %s: it cannot move into shared memory (share a gs_clone of it instead)",
              o == GS_MEMORY_ENGINE   ? "a DLPack consumer sees (gs_to_dlpack)"
              : o == GS_MEMORY_DLPACK ? "a DLPack producer owns"
              : o == GS_MEMORY_MAPPED ? "are a file mapped for writing"
                                      : "are seen outside the engine");
    return -1;
  }
  gs__buffer *b = new_segment(s->nbytes, fn);
  if (!b)
    return -1;
  if (s->nbytes)
    memcpy(b->data, s->buffer->data, s->nbytes);
  gs__storage_replace_buffer(s, b);
  return 0;
}

bool gs_is_shared(gs_tensor h) {
  gs__tensor *t = gs__lookup(h, "is_shared");
  return t && t->storage->buffer->fd >= 0;
}
