/* pool.c: taking and releasing pooled slots, and how each slot remembers its past ids
 * ended (pool.h says why). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"

uint32_t gs__pool_grow(gs__pool *p) {
  uint32_t count = (uint32_t)atomic_load_explicit(&p->count, memory_order_relaxed);
  uint32_t per_page = 1u << p->page_shift;
  if (count >= p->max_items || (count >> p->page_shift) >= GS__POOL_MAX_PAGES)
    return GS__POOL_NO_SLOT;
  if ((count & (per_page - 1)) == 0) {
    char *page = calloc(per_page, p->item_size);
    if (!page)
      return GS__POOL_NO_SLOT;
    atomic_store_explicit(&p->pages[count >> p->page_shift], page, memory_order_release);
  }
  /* The slot's first generation is written as it is handed out, not the whole page's when the
   * page is made: that wrote into every 4 KiB of the page (about 110 page faults for the
   * tensors' first page, 1 ms on these VMs) where a program may never use most of them. No
   * lookup reads a slot before count covers it. */
  char *page = atomic_load_explicit(&p->pages[count >> p->page_shift], memory_order_relaxed);
  atomic_init(
      &((gs__pool_slot *)(page + (size_t)(count & (per_page - 1)) * p->item_size))->generation, 1);
  atomic_store_explicit(&p->count, count + 1, memory_order_release);
  return count;
}

/* Histories come from slabs of their own, one free list per size (4 to GS__POOL_HISTORY
 * entries), so growing them never interleaves with the program's own small allocations: in a
 * training loop, glibc's heap then looks as it would without them (with them on the heap,
 * malloc took 1.7 times the instructions per graph node in the autograd micro-step). Never returned: a slot keeps
 * its history for the life of the process. */
#define HISTORY_CLASSES 6 /* 4, 8, ..., 128 entries */
#define SLAB_BYTES (64u * 1024u)
_Static_assert(4u << (HISTORY_CLASSES - 1) == GS__POOL_HISTORY, "a class per history size");

static gs__spinlock slab_lock = GS__SPINLOCK_INIT;
static gs__pool_history *free_histories[HISTORY_CLASSES];
static char *slab, *slab_end;

/* Pools whose locks gs__fork takes (gs__pool_guard_fork), then the slabs' lock: a pool's lock
 * is held while a history grows, never the other way round. */
#define MAX_GUARDED_POOLS 16
static gs__pool *guarded_pools[MAX_GUARDED_POOLS];
static int n_guarded_pools;

static void pools_take(void) {
  for (int i = 0; i < n_guarded_pools; i++)
    gs__spin_lock(&guarded_pools[i]->lock);
  gs__spin_lock(&slab_lock);
}

static void pools_give(void) {
  gs__spin_unlock(&slab_lock);
  for (int i = n_guarded_pools - 1; i >= 0; i--)
    gs__spin_unlock(&guarded_pools[i]->lock);
}

__attribute__((constructor)) static void guard_pools_across_fork(void) {
  gs__fork_guard_add(GS__FORK_RANK_POOLS, pools_take, pools_give);
}

void gs__pool_guard_fork(gs__pool *p) {
  /* Called from constructors, before any thread or fork: no lock needed. */
  if (n_guarded_pools < MAX_GUARDED_POOLS)
    guarded_pools[n_guarded_pools++] = p;
}

static int history_class(uint32_t capacity) { return __builtin_ctz(capacity) - 2; }

static size_t history_bytes(uint32_t capacity) {
  return (sizeof(gs__pool_history) + capacity * sizeof(gs__pool_ended_id) + 15) & ~(size_t)15;
}

static gs__pool_history *history_alloc(uint32_t capacity) {
  int c = history_class(capacity);
  size_t bytes = history_bytes(capacity);
  gs__spin_lock(&slab_lock);
  gs__pool_history *h = free_histories[c];
  if (h) {
    memcpy(&free_histories[c], h->entries, sizeof h); /* the free list's link */
  } else {
    if (!slab || (size_t)(slab_end - slab) < bytes) {
      char *fresh = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
      if (fresh == MAP_FAILED) {
        gs__spin_unlock(&slab_lock);
        return NULL;
      }
      slab = fresh, slab_end = fresh + SLAB_BYTES;
    }
    h = (gs__pool_history *)slab;
    slab += bytes;
  }
  gs__spin_unlock(&slab_lock);
  memset(h, 0, bytes);
  h->capacity = capacity;
  return h;
}

static void history_free(gs__pool_history *h) {
  int c = history_class(h->capacity);
  gs__spin_lock(&slab_lock);
  memcpy(h->entries, &free_histories[c], sizeof h);
  free_histories[c] = h;
  gs__spin_unlock(&slab_lock);
}

void gs__pool_remember_slow(gs__pool_slot *s, uint32_t generation, const char *by, uint64_t event,
                            gs__pool_ending ending) {
  gs__pool_history *h = s->history;
  gs__pool_history *grown = history_alloc(h ? h->capacity * 2 : 4);
  if (!grown)
    return; /* how it ended is lost, not the program: the error will say it was dropped */
  if (h) { /* generations are consecutive: re-place the old ones by their number */
    for (uint32_t i = 0; i < h->capacity; i++)
      grown->entries[h->entries[i].generation & (grown->capacity - 1)] = h->entries[i];
    grown->filled = h->filled;
    history_free(h);
  }
  s->history = grown;
  gs__pool_remember(s, generation, by, event, ending);
}

void gs__pool_release(gs__pool *p, uint64_t id, const char *by, uint64_t event,
                      gs__pool_ending ending) {
  gs__pool_release_slot(p, gs__pool_slot_of(p, gs__pool_index(p, id)), id, by, event, ending);
}

/* How the slot's id of generation ended, or NULL if forgotten. Pool lock held. */
static gs__pool_ended_id *recall(gs__pool_slot *s, uint32_t generation) {
  gs__pool_history *h = s->history;
  if (!h)
    return NULL;
  gs__pool_ended_id *t = &h->entries[generation & (h->capacity - 1)];
  return t->by && t->generation == generation ? t : NULL;
}

gs__pool_id_report gs__pool_report_of(gs__pool *p, uint64_t id) {
  gs__pool_id_report report = {.state = GS__POOL_FORGED};
  if (id == 0 || ((uint32_t)id & p->tag) != p->tag)
    return report;
  gs__pool_slot *s = gs__pool_slot_at(p, gs__pool_index(p, id));
  uint32_t generation = (uint32_t)(id >> 32);
  if (!s || generation == 0)
    return report;
  gs__spin_lock(&p->lock);
  uint32_t current = (uint32_t)atomic_load_explicit(&s->generation, memory_order_acquire);
  bool live = atomic_load_explicit(&s->live, memory_order_acquire);
  /* A retired slot keeps its last generation: that id has ended although the number did
   * not advance. */
  gs__pool_ended_id *t = recall(s, generation);
  bool ended = generation < current || (generation == current && !live && t);
  if (generation == current && live) {
    report.state = GS__POOL_LIVE;
  } else if (ended) {
    report.reuses = generation == current ? 0 : current - generation - (live ? 0 : 1);
    if (t) {
      report.state = GS__POOL_ENDED;
      report.by = t->by, report.event = t->event, report.ending = (gs__pool_ending)t->ending;
    } else {
      report.state = GS__POOL_FORGOTTEN;
    }
  }
  gs__spin_unlock(&p->lock);
  return report;
}

void gs__pool_rename(gs__pool *p, uint64_t id, const char *by) {
  gs__pool_slot *s = gs__pool_slot_at(p, gs__pool_index(p, id));
  if (!s)
    return;
  gs__spin_lock(&p->lock);
  gs__pool_ended_id *t = recall(s, (uint32_t)(id >> 32));
  if (t)
    t->by = by;
  gs__spin_unlock(&p->lock);
}
