/* allocator.c: the caching allocator behind every tensor's bytes.
 *
 * Requests are rounded up to a size class and freed blocks are kept on a free list per class,
 * so a training loop that allocates the same shapes each step reuses its blocks instead of
 * asking the system (and page-faulting on fresh pages) every step. Classes: multiples of 64
 * bytes up to 4 KiB, then four classes per power of two (at most 25% rounding waste).
 * Each block starts with its gs__buffer header; data follows 64-byte aligned.
 */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"

#define HEADER_BYTES 64u
#define SMALL_LIMIT 4096u
#define SMALL_CLASSES (SMALL_LIMIT / 64u)
#define LARGE_CLASSES (4u * 64u)
#define CLASS_COUNT (SMALL_CLASSES + LARGE_CLASSES)

_Static_assert(sizeof(gs__buffer) <= HEADER_BYTES, "buffer header must fit before the data");

typedef struct free_block {
  struct free_block *next;
} free_block;

static gs__spinlock lock = GS__SPINLOCK_INIT;
GS__FORK_GUARD_SPINLOCK(GS__FORK_RANK_ALLOCATOR, lock)
static free_block *free_lists[CLASS_COUNT];
static uint64_t cached_bytes;
static uint64_t cache_limit = 1ull << 30;
static bool cache_limit_read;
static gs_memory_stats stats;

/* Class index and its size for a request of n data bytes. */
static unsigned size_class(uint64_t n, uint64_t *class_bytes) {
  if (n == 0)
    n = 1;
  if (n <= SMALL_LIMIT) {
    unsigned c = (unsigned)((n + 63) / 64);
    *class_bytes = (uint64_t)c * 64;
    return c - 1;
  }
  unsigned log2 = 63u - (unsigned)__builtin_clzll(n - 1); /* 2^log2 < n <= 2^(log2+1) */
  uint64_t base = 1ull << log2;
  uint64_t quarter = base / 4;
  uint64_t steps = (n - base + quarter - 1) / quarter; /* 1..4 */
  *class_bytes = base + steps * quarter;
  return SMALL_CLASSES + (log2 - 12) * 4 + (unsigned)(steps - 1);
}

uint64_t gs_memory_size_class(uint64_t nbytes) {
  uint64_t bytes;
  size_class(nbytes, &bytes);
  return bytes;
}

static void read_cache_limit_locked(void) {
  if (cache_limit_read)
    return;
  cache_limit_read = true;
  const char *env = getenv("GS_CACHE_LIMIT_MB");
  if (env && *env)
    cache_limit = strtoull(env, NULL, 10) << 20;
}

static void count_allocation_locked(uint64_t nbytes, uint64_t class_bytes) {
  stats.allocations++;
  stats.live_storages++;
  stats.bytes_in_use += class_bytes;
  stats.bytes_requested += nbytes;
  if (stats.bytes_in_use > stats.peak_bytes_in_use)
    stats.peak_bytes_in_use = stats.bytes_in_use;
}

gs__buffer *gs__alloc_buffer(uint64_t nbytes) {
  uint64_t class_bytes;
  if (nbytes > (1ull << 46))
    return NULL; /* beyond any machine's memory; also keeps the class arithmetic in range */
  unsigned c = size_class(nbytes, &class_bytes);
  char *block = NULL;

  /* One critical section on the hot (cache hit) path: pop and count together. */
  gs__spin_lock(&lock);
  if (free_lists[c]) {
    block = (char *)free_lists[c];
    free_lists[c] = free_lists[c]->next;
    cached_bytes -= class_bytes + HEADER_BYTES;
    stats.cache_hits++;
    count_allocation_locked(nbytes, class_bytes);
  }
  gs__spin_unlock(&lock);

  if (!block) {
    block = aligned_alloc(64, HEADER_BYTES + class_bytes);
    if (!block)
      return NULL;
    gs__spin_lock(&lock);
    stats.system_allocations++;
    stats.bytes_reserved += class_bytes + HEADER_BYTES;
    count_allocation_locked(nbytes, class_bytes);
    gs__spin_unlock(&lock);
  }

  gs__buffer *b = (gs__buffer *)block;
  atomic_init(&b->refcount, 1);
  b->data = block + HEADER_BYTES;
  b->nbytes = nbytes;
  b->release = NULL;
  b->release_user_data = NULL;
  b->external = false;
  b->origin = GS_MEMORY_ENGINE;
  b->seen_outside = false;
  b->writes_reach_file = false;
  b->fd = -1;
  b->peer_pid = 0;
  return b;
}

void gs__free_buffer(gs__buffer *b) {
  uint64_t class_bytes;
  unsigned c = size_class(b->nbytes, &class_bytes);
  uint64_t requested = b->nbytes;
  bool keep;

  gs__spin_lock(&lock);
  read_cache_limit_locked();
  stats.live_storages--;
  stats.bytes_in_use -= class_bytes;
  stats.bytes_requested -= requested;
  keep = cached_bytes + class_bytes + HEADER_BYTES <= cache_limit;
  if (keep) {
    free_block *fb = (free_block *)b;
    fb->next = free_lists[c];
    free_lists[c] = fb;
    cached_bytes += class_bytes + HEADER_BYTES;
  } else {
    stats.bytes_reserved -= class_bytes + HEADER_BYTES;
  }
  gs__spin_unlock(&lock);
  if (!keep)
    free(b);
}

void gs__count_external_storage(int delta) {
  gs__spin_lock(&lock);
  stats.live_storages = (uint64_t)((int64_t)stats.live_storages + delta);
  gs__spin_unlock(&lock);
}

void gs_memory_get_stats(gs_memory_stats *out) {
  if (!out)
    return;
  gs__spin_lock(&lock);
  *out = stats;
  gs__spin_unlock(&lock);
}

void gs_memory_empty_cache(void) {
  gs__spin_lock(&lock);
  free_block *lists[CLASS_COUNT];
  memcpy(lists, free_lists, sizeof lists);
  memset(free_lists, 0, sizeof free_lists);
  stats.bytes_reserved -= cached_bytes;
  cached_bytes = 0;
  gs__spin_unlock(&lock);
  for (unsigned c = 0; c < CLASS_COUNT; c++) {
    while (lists[c]) {
      free_block *next = lists[c]->next;
      free(lists[c]);
      lists[c] = next;
    }
  }
}

void gs_memory_reset_peak(void) {
  gs__spin_lock(&lock);
  stats.peak_bytes_in_use = stats.bytes_in_use;
  gs__spin_unlock(&lock);
}

void gs_memory_set_cache_limit(uint64_t bytes) {
  gs__spin_lock(&lock);
  cache_limit_read = true;
  cache_limit = bytes;
  gs__spin_unlock(&lock);
  if (bytes == 0)
    gs_memory_empty_cache();
}
