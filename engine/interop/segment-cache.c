/* segment-cache.c: the receiving side of segment-pool.c (a DataLoader's main process).
 *
 * A worker writes batch after batch into the same few memfd segments. Mapping each one afresh
 * for every batch made the first read of each 4 KiB page fault again (and, on a virtual
 * machine with shadow page tables, fault in the hypervisor too): summing a 1 MiB batch over a
 * fresh mapping cost 1.5-2 ms of CPU against 0.17 ms over one already mapped. So the mapping
 * of each pool slot is kept: a batch whose descriptor names the memory file already mapped for
 * its slot (same device and inode) gets a storage over that mapping, and its descriptor is
 * closed. A slot the sender filled with a new segment replaces the old mapping, which lives on
 * while storages still use it. A segment the sender already sent comes with no descriptor at
 * all (passing, checking and closing one cost five system calls per field, each a few
 * microseconds on a VM): the slot's mapping is used.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interop-impl.h"

typedef struct cached_segment {
  gs__segment_map *map; /* NULL: nothing received over this slot yet */
  dev_t dev;
  ino_t ino;
} cached_segment;

struct gs__segment_cache {
  int capacity;
  cached_segment slot[];
};

gs__segment_cache *gs__segment_cache_new(int capacity) {
  if (capacity < 1 || capacity > GS__SEGMENT_POOL_MAX)
    return NULL;
  gs__segment_cache *c = calloc(1, sizeof *c + (size_t)capacity * sizeof(cached_segment));
  if (c)
    c->capacity = capacity;
  return c;
}

void gs__segment_cache_free(gs__segment_cache *c) {
  if (!c)
    return;
  for (int i = 0; i < c->capacity; i++)
    gs__segment_map_unref(c->slot[i].map);
  free(c);
}

/* The mapping to use for a storage of nbytes sent with memory file fd (taken; st its fstat) in
 * slot; a reference the caller drops. NULL after reporting as fn. */
static gs__segment_map *map_for(gs__segment_cache *c, int slot, int fd, const struct stat *st,
                                uint64_t nbytes, const char *fn) {
  cached_segment *s = &c->slot[slot];
  if (s->map && s->dev == st->st_dev && s->ino == st->st_ino &&
      gs__segment_map_len(s->map) >= gs__shared_map_bytes(nbytes)) {
    close(fd); /* the mapping keeps its own descriptor of the same file */
    gs__segment_map_ref(s->map);
    return s->map;
  }
  /* The whole file (at least nbytes, as checked): a later, larger batch in the same segment
   * still fits. */
  gs__segment_map *map = gs__segment_map_new(fd, (uint64_t)st->st_size, fn);
  if (!map)
    return NULL;
  gs__segment_map_unref(s->map);
  s->map = map;
  s->dev = st->st_dev;
  s->ino = st->st_ino;
  gs__segment_map_ref(map);
  return map;
}

gs_tensor gs__segment_cache_take(gs__segment_cache *c, int slot, const gs__wire_tensor *w, int fd,
                                 const char *fn) {
  gs__tensor t;
  struct stat st;
  if (!gs__tensor_wire_check(w, &t, fn) ||
      (fd >= 0 && !gs__memory_file_check(fd, w->nbytes, &st, fn))) {
    if (fd >= 0)
      close(fd);
    return GS_NO_TENSOR;
  }
  gs__segment_map *map;
  if (fd >= 0 && (!c || slot < 0 || slot >= c->capacity)) {
    map = gs__segment_map_new(fd, w->nbytes, fn); /* no slot: a mapping of its own */
  } else if (fd >= 0) {
    map = map_for(c, slot, fd, &st, w->nbytes, fn);
  } else if (c && slot >= 0 && slot < c->capacity && c->slot[slot].map &&
             gs__segment_map_len(c->slot[slot].map) >= gs__shared_map_bytes(w->nbytes)) {
    map = c->slot[slot].map; /* written again by the sender: the pages are mapped here */
    gs__segment_map_ref(map);
  } else {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a shared-memory descriptor with the message, got "
              "none for slot %d, which holds no segment of at least %llu bytes here",
              slot, (unsigned long long)w->nbytes);
    return GS_NO_TENSOR;
  }
  if (!map)
    return GS_NO_TENSOR;
  gs__buffer *b = gs__shared_buffer_over(map, w->nbytes, GS_MEMORY_RECEIVED, fn);
  gs__segment_map_unref(map); /* the buffer and the cache hold theirs */
  if (!b)
    return GS_NO_TENSOR;
  return gs__tensor_over_received(&t, b, w->pid, fn);
}
