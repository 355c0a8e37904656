/* allocator.c: the caching allocator behind every tensor's bytes.
 *
 * Requests are rounded up to a size class and freed blocks are kept on a free list per class,
 * so a training loop that allocates the same shapes each step reuses its blocks instead of
 * asking the system (and page-faulting on fresh pages) every step. Classes: multiples of 64
 * bytes up to 4 KiB, then four classes per power of two (at most 25% rounding waste).
 * Each block starts with its gs__buffer header; data follows 64-byte aligned.
 *
 * Blocks of 64 KiB to 1 MiB are cut from 2 MiB chunks that the kernel is asked to back with
 * huge pages (madvise MADV_HUGEPAGE, where transparent huge pages are "madvise" or "always"):
 * the first write to such a block otherwise takes one page fault per 4 KiB, and a fault costs
 * 6-12 us on the project's virtual machines (a 736 KiB block took 1.1-1.3 ms to write once,
 * against 0.1-0.3 ms in a huge page; the digits example wrote about 1,000 fresh pages, a
 * sixth of its time). A chunk is carved front to back and unmapped when the last of its
 * blocks goes back to the system; its unused tail (under 1 MiB) is the only cost in memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* ---- huge-page chunks for large blocks (see the top of the file) ---- */
#define CHUNK_BYTES (2ull << 20)
#define CHUNK_MIN_BLOCK (64ull << 10)
#define CHUNK_MAX_BLOCK (1ull << 20)
/* AddressSanitizer checks only what malloc gives: under it, large blocks stay malloc's, so an
 * overrun past a tensor's bytes is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define CHUNKS_ALLOWED false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHUNKS_ALLOWED false
#endif
#endif
#ifndef CHUNKS_ALLOWED
#define CHUNKS_ALLOWED true
#endif

typedef struct chunk {
  struct chunk *next;
  char *base;    /* CHUNK_BYTES, CHUNK_BYTES-aligned */
  uint64_t used; /* bytes carved from the front */
  uint64_t live; /* blocks carved and not yet given back to the system */
} chunk;

static chunk *chunks;  /* all mapped chunks, under lock */
static chunk *carving; /* the one new blocks are cut from, or NULL */

/* A fresh chunk, mapped CHUNK_BYTES-aligned (a huge page must be) with the hint given; NULL
 * if the system has none. */
static chunk *chunk_map(void) {
  chunk *c = malloc(sizeof *c);
  if (!c)
    return NULL;
  char *raw =
      mmap(NULL, 2 * CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    free(c);
    return NULL;
  }
  char *base = (char *)(((uintptr_t)raw + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1));
  if (base > raw)
    munmap(raw, (size_t)(base - raw));
  munmap(base + CHUNK_BYTES, (size_t)(raw + 2 * CHUNK_BYTES - (base + CHUNK_BYTES)));
#ifdef MADV_HUGEPAGE
  madvise(base, CHUNK_BYTES, MADV_HUGEPAGE); /* a hint: without huge pages it is plain memory */
#endif
  *c = (chunk){.base = base};
  return c;
}

/* A block of bytes (a multiple of 64) cut from the carving chunk, or NULL when it has no room
 * (the caller maps another). Under lock. */
static char *chunk_carve_locked(uint64_t bytes) {
  if (!carving || carving->used + bytes > CHUNK_BYTES)
    return NULL;
  char *block = carving->base + carving->used;
  carving->used += bytes;
  carving->live++;
  return block;
}

/* A block of bytes from a chunk, mapping a new one when the carving chunk is full; NULL if
 * mapping failed. */
static char *chunk_alloc(uint64_t bytes) {
  gs__spin_lock(&lock);
  char *block = chunk_carve_locked(bytes);
  gs__spin_unlock(&lock);
  if (block)
    return block;
  chunk *c = chunk_map(); /* outside the lock: a system call */
  if (!c)
    return NULL;
  gs__spin_lock(&lock);
  c->next = chunks;
  chunks = c;
  carving = c;
  block = chunk_carve_locked(bytes);
  gs__spin_unlock(&lock);
  return block;
}

/* Gives block back to the system: to its chunk (unmapped when none of its blocks is left), or
 * to malloc. */
static void system_free(void *block) {
  chunk *gone = NULL;
  gs__spin_lock(&lock);
  for (chunk **at = &chunks; *at; at = &(*at)->next) {
    chunk *c = *at;
    if ((char *)block < c->base || (char *)block >= c->base + CHUNK_BYTES)
      continue;
    if (--c->live == 0) {
      *at = c->next;
      if (carving == c)
        carving = NULL;
      gone = c;
    }
    gs__spin_unlock(&lock);
    if (gone) {
      munmap(gone->base, CHUNK_BYTES);
      free(gone);
    }
    return;
  }
  gs__spin_unlock(&lock);
  free(block);
}

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
  read_cache_limit_locked();
  /* Chunks only while the cache keeps blocks: with a small limit each block would go back to
   * the system at once, and a chunk mapped per block costs more than malloc. */
  bool chunks_pay = CHUNKS_ALLOWED && cache_limit >= 4 * CHUNK_BYTES;
  if (free_lists[c]) {
    block = (char *)free_lists[c];
    free_lists[c] = free_lists[c]->next;
    cached_bytes -= class_bytes + HEADER_BYTES;
    stats.cache_hits++;
    count_allocation_locked(nbytes, class_bytes);
  }
  gs__spin_unlock(&lock);

  if (!block) {
    uint64_t bytes = HEADER_BYTES + class_bytes;
    bool from_chunk = chunks_pay && bytes >= CHUNK_MIN_BLOCK && bytes <= CHUNK_MAX_BLOCK;
    block = from_chunk ? chunk_alloc(bytes) : NULL;
    if (!block)
      block = aligned_alloc(64, bytes);
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
    system_free(b);
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
      system_free(lists[c]);
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
