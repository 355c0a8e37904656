/* segment-cache.c: the receiving side of segment-pool.c (a DataLoader's main process).
 *
 * A worker writes batch after batch into the same few memfd segments. Mapping each one afresh
 * for every batch made the first read of each 4 KiB page fault again (and, on a virtual
 * machine with shadow page tables, fault in the hypervisor too): summing a 1 MiB batch over a
 * fresh mapping cost 1.5-2 ms of CPU against 0.17 ms over one already mapped. So the mapping
 * of each pool slot is kept: a batch whose descriptor names the memory file already mapped for
 * its slot (same device and inode) gets a storage over that mapping, and its descriptor is
 * closed. A slot the sender filled with a new segment replaces the old mapping, which lives on
 * while storages still use it.
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

/* The mapping to use for a message of nbytes with descriptor fd (taken) in slot; a reference
 * the caller drops. NULL after reporting as fn. */
static gs__segment_map *map_for(gs__segment_cache *c, int slot, int fd, uint64_t nbytes,
                                const char *fn) {
  struct stat st;
  if (!c || slot < 0 || slot >= c->capacity || fstat(fd, &st) != 0)
    return gs__segment_map_new(fd, nbytes, fn);
  cached_segment *s = &c->slot[slot];
  if (s->map && s->dev == st.st_dev && s->ino == st.st_ino &&
      gs__segment_map_len(s->map) >= gs__shared_map_bytes(nbytes)) {
    close(fd); /* the mapping keeps its own descriptor of the same file */
    gs__segment_map *map = s->map;
    gs__segment_map_ref(map);
    return map;
  }
  /* The whole file (at least nbytes, as the message was checked): a later, larger batch in
   * the same segment still fits. */
  gs__segment_map *map = gs__segment_map_new(fd, (uint64_t)st.st_size, fn);
  if (!map)
    return NULL;
  gs__segment_map_unref(s->map);
  s->map = map;
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  gs__segment_map_ref(map);
  return map;
}

gs_tensor gs__segment_cache_recv(gs__segment_cache *c, int slot, int sock, const char *fn) {
  gs__tensor t;
  uint64_t nbytes;
  int fd;
  int64_t pid;
  if (!gs__tensor_recv_message(sock, &t, &nbytes, &fd, &pid, fn))
    return GS_NO_TENSOR;
  gs__segment_map *map = map_for(c, slot, fd, nbytes, fn);
  if (!map)
    return GS_NO_TENSOR;
  gs__buffer *b = gs__shared_buffer_over(map, nbytes, GS_MEMORY_RECEIVED, fn);
  gs__segment_map_unref(map); /* the buffer and the cache hold theirs */
  if (!b)
    return GS_NO_TENSOR;
  return gs__tensor_over_received(&t, b, pid, fn);
}
