/* pool.h: the generational pool behind every kind of handle (tensors, scopes, composites,
 * modules, optimizers), in the spirit of sokol's _sg_pool_t.
 *
 * A handle is (generation << 32 | tag | slot index). Records live in fixed pages that never
 * move, so a lookup takes no lock: it finds the slot and compares the whole id (generation and
 * live flag). Taking and releasing a slot take one short lock for the free list. Releasing
 * advances the slot's generation, so a stale handle never matches the slot's next id; a
 * slot whose 32-bit generation is used up is retired, never wrapped.
 *
 * Each slot also remembers how its last GS__POOL_HISTORY ids ended (who ended each one, at
 * which event, and whether it was moved rather than disposed), so a stale handle can name its
 * disposer however many times its slot has been reused since, up to that bound; beyond it the
 * pool says plainly that the record was dropped. A slot's history grows from 4 entries as the
 * slot is reused (16 bytes each), so rarely reused slots cost little.
 */
#pragma once

#include <stddef.h>

#include "base.h"

/* Tenants of a slot whose disposal is remembered (at least 100, as the error messages
 * promise: a training loop reuses its slots newest first, many times a step). */
#define GS__POOL_HISTORY 128u
#define GS__POOL_MAX_PAGES 65536u
#define GS__POOL_NO_SLOT UINT32_MAX

/* How an id ended (gs__pool_release). */
typedef enum gs__pool_ending {
  GS__POOL_DISPOSED = 0,
  GS__POOL_MOVED = 1, /* the object moved to another handle (a tensor becoming a parameter) */
} gs__pool_ending;

/* How one of a slot's ids ended. */
typedef struct gs__pool_ended_id {
  uint32_t generation;
  uint32_t ending; /* a gs__pool_ending */
  const char *by;
  uint64_t event;
} gs__pool_ended_id;

/* A ring over how a slot's last `capacity` ids ended, indexed by generation. */
typedef struct gs__pool_history {
  uint32_t capacity; /* a power of two, at most GS__POOL_HISTORY */
  uint32_t filled;
  gs__pool_ended_id entries[];
} gs__pool_history;

/* The header each pooled record starts with. */
typedef struct gs__pool_slot {
  atomic_uint_fast32_t generation; /* of the current or next id */
  atomic_bool live;
  uint32_t next_free;
  gs__pool_history *history; /* how the slot's past ids ended (pool lock) */
} gs__pool_slot;

typedef struct gs__pool {
  const char *what;        /* "tensor", "scope": for messages */
  size_t item_size;        /* each record, gs__pool_slot first */
  uint32_t page_shift;     /* records per page = 1 << page_shift */
  uint32_t max_items;
  uint32_t tag;            /* bits every id of this pool carries in its low half */
  atomic_uint_fast32_t count; /* slots ever handed out (pages filled in order) */
  /* Taken and not yet released (each take is published in the call that takes it). Written
   * only under lock, as a load and a store: an atomic add would cost every object's life two
   * more locked instructions, which the lock already pays for. Read without it. */
  atomic_uint_fast64_t live;
  uint32_t free_head;
  gs__spinlock lock;
  _Atomic(char *) pages[GS__POOL_MAX_PAGES];
} gs__pool;

/* A pool of records of item_size bytes (a gs__pool_slot first), at most max_items of them, ids
 * carrying tag (0, or a high bit of the index half that keeps two pools' ids apart). */
#define GS__POOL_INIT(WHAT, ITEM_SIZE, PAGE_SHIFT, MAX_ITEMS, TAG)                            \
  {.what = (WHAT), .item_size = (ITEM_SIZE), .page_shift = (PAGE_SHIFT),                     \
   .max_items = (MAX_ITEMS), .tag = (TAG), .free_head = GS__POOL_NO_SLOT,                    \
   .lock = GS__SPINLOCK_INIT}

static inline uint32_t gs__pool_index(const gs__pool *p, uint64_t id) {
  return (uint32_t)id & ~p->tag;
}

/* The slot at an index below the count (its page was published before the count): never
 * NULL. */
static inline gs__pool_slot *gs__pool_slot_of(const gs__pool *p, uint32_t index) {
  char *page = atomic_load_explicit(&p->pages[index >> p->page_shift], memory_order_acquire);
  return (gs__pool_slot *)(page + (size_t)(index & ((1u << p->page_shift) - 1)) * p->item_size);
}

/* The slot at index (whatever its id), or NULL if it was never handed out. */
static inline gs__pool_slot *gs__pool_slot_at(const gs__pool *p, uint32_t index) {
  if (index >= atomic_load_explicit(&p->count, memory_order_acquire))
    return NULL;
  return gs__pool_slot_of(p, index);
}

/* The live record id names, or NULL (empty, stale or forged id), for a pool whose layout the
 * caller passes as constants (the tensor pool's lookup, on every public call, folds them). */
static inline void *gs__pool_get_as(const gs__pool *p, uint64_t id, uint32_t page_shift,
                                    size_t item_size, uint32_t tag) {
  uint32_t index = (uint32_t)id & ~tag;
  if (id == 0 || ((uint32_t)id & tag) != tag ||
      index >= atomic_load_explicit(&p->count, memory_order_acquire))
    return NULL;
  char *page = atomic_load_explicit(&p->pages[index >> page_shift], memory_order_acquire);
  gs__pool_slot *s =
      (gs__pool_slot *)(page + (size_t)(index & ((1u << page_shift) - 1)) * item_size);
  if (atomic_load_explicit(&s->generation, memory_order_acquire) == (id >> 32) &&
      atomic_load_explicit(&s->live, memory_order_acquire))
    return s;
  return NULL;
}

/* The live record id names, or NULL (empty, stale or forged id). No lock. */
static inline void *gs__pool_get(const gs__pool *p, uint64_t id) {
  return gs__pool_get_as(p, id, p->page_shift, p->item_size, p->tag);
}

/* A slot's current id. */
static inline uint64_t gs__pool_id(const gs__pool *p, const gs__pool_slot *s, uint32_t index) {
  return (uint64_t)atomic_load_explicit(&s->generation, memory_order_relaxed) << 32 |
         index | p->tag;
}

/* The slow paths of taking and releasing (pool.c): a slot never handed out yet (pool lock
 * held; GS__POOL_NO_SLOT when the pool is full or out of memory), and a history to make or
 * grow. */
uint32_t gs__pool_grow(gs__pool *p);
void gs__pool_remember_slow(gs__pool_slot *s, uint32_t generation, const char *by, uint64_t event,
                            gs__pool_ending ending);

/* Adds delta to the live count (pool lock held: the lock orders the writers). */
static inline void gs__pool_count_live_locked(gs__pool *p, int delta) {
  uint64_t live = atomic_load_explicit(&p->live, memory_order_relaxed);
  atomic_store_explicit(&p->live, live + (uint64_t)(int64_t)delta, memory_order_relaxed);
}

/* Takes a free slot (its record keeps whatever the last id's record left: the caller fills it) and
 * returns it, with its id in *id and the slot marked not yet live; NULL when the pool is full
 * or out of memory. The caller publishes it with gs__pool_publish once filled. Inline, as the
 * release: every tensor an op makes goes through both. */
static inline gs__pool_slot *gs__pool_take(gs__pool *p, uint64_t *id) {
  gs__spin_lock(&p->lock);
  uint32_t index = p->free_head;
  gs__pool_slot *s;
  if (index != GS__POOL_NO_SLOT) {
    s = gs__pool_slot_of(p, index);
    p->free_head = s->next_free;
  } else if ((index = gs__pool_grow(p)) != GS__POOL_NO_SLOT) {
    s = gs__pool_slot_of(p, index);
  } else {
    gs__spin_unlock(&p->lock);
    return NULL;
  }
  gs__pool_count_live_locked(p, 1);
  gs__spin_unlock(&p->lock);
  *id = gs__pool_id(p, s, index);
  return s;
}

static inline void gs__pool_publish(gs__pool *p, gs__pool_slot *s) {
  (void)p; /* counted live when taken */
  atomic_store_explicit(&s->live, true, memory_order_release);
}

/* Records how an id ended in the slot's history (pool lock held). */
static inline void gs__pool_remember(gs__pool_slot *s, uint32_t generation, const char *by,
                                     uint64_t event, gs__pool_ending ending) {
  gs__pool_history *h = s->history;
  if (__builtin_expect(!h || (h->filled == h->capacity && h->capacity < GS__POOL_HISTORY), 0)) {
    gs__pool_remember_slow(s, generation, by, event, ending);
    return;
  }
  h->entries[generation & (h->capacity - 1)] = (gs__pool_ended_id){
      .generation = generation, .ending = (uint32_t)ending, .by = by, .event = event};
  if (h->filled < h->capacity)
    h->filled++;
}

/* Ends id, whose slot is s: remembers who ended it (a static or interned
 * string), when, and how (ending: GS__POOL_DISPOSED or GS__POOL_MOVED), advances the generation and
 * frees the slot. Once free another thread may take it: the caller does not read the record
 * again. */
static inline void gs__pool_release_slot(gs__pool *p, gs__pool_slot *s, uint64_t id, const char *by,
                                         uint64_t event, gs__pool_ending ending) {
  uint32_t generation = (uint32_t)(id >> 32);
  atomic_store_explicit(&s->live, false, memory_order_release);
  gs__spin_lock(&p->lock);
  gs__pool_count_live_locked(p, -1);
  gs__pool_remember(s, generation, by, event, ending);
  if (generation != UINT32_MAX) { /* else retired: never handed out again */
    atomic_store_explicit(&s->generation, generation + 1, memory_order_release);
    s->next_free = p->free_head;
    p->free_head = gs__pool_index(p, id);
  }
  gs__spin_unlock(&p->lock);
}
/* Registers p's lock with gs__fork (base/fork.c), so a worker process never inherits it held.
 * Each pool's owner calls it from a constructor (GS__POOL_GUARD_FORK). */
void gs__pool_guard_fork(gs__pool *p);
#define GS__POOL_GUARD_FORK(POOL)                                                              \
  __attribute__((constructor)) static void fork_guard_##POOL(void) { gs__pool_guard_fork(&(POOL)); }

/* The same, finding the slot from the id. */
void gs__pool_release(gs__pool *p, uint64_t id, const char *by, uint64_t event,
                      gs__pool_ending ending);

/* Why an id names no live record. */
typedef enum gs__pool_id_state {
  GS__POOL_LIVE,      /* it does */
  GS__POOL_FORGED,    /* never handed out by this pool */
  GS__POOL_ENDED,     /* ended: by, event, ending and reuses say how and since when */
  GS__POOL_FORGOTTEN, /* ended, but more than GS__POOL_HISTORY ids ago: reuses says how many */
} gs__pool_id_state;

typedef struct gs__pool_id_report {
  gs__pool_id_state state;
  const char *by;
  uint64_t event;
  gs__pool_ending ending;
  uint32_t reuses; /* ids the slot has had since */
} gs__pool_id_report;

gs__pool_id_report gs__pool_report_of(gs__pool *p, uint64_t id);
/* Renames who ended an ended id, once the name is known (a module naming the parameter a
 * tensor became); nothing if its record was dropped. */
void gs__pool_rename(gs__pool *p, uint64_t id, const char *by);
/* Live records now. */
static inline uint64_t gs__pool_live(const gs__pool *p) {
  return atomic_load_explicit(&p->live, memory_order_relaxed);
}
