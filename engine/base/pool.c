/* pool.c: taking and releasing pooled slots, and the story each slot keeps of its past
 * tenants (pool.h says why). */
#include <stdlib.h>
#include <string.h>

#include "pool.h"

/* One ended tenancy. */
typedef struct tenancy {
  uint32_t generation;
  uint32_t how;
  const char *by;
  uint64_t event;
} tenancy;

/* A ring over the slot's last `capacity` tenancies, indexed by generation. */
struct gs__pool_history {
  uint32_t capacity; /* a power of two, at most GS__POOL_HISTORY */
  uint32_t filled;
  tenancy entries[];
};

gs__pool_slot *gs__pool_take(gs__pool *p, uint64_t *id) {
  gs__spin_lock(&p->lock);
  uint32_t index = p->free_head;
  gs__pool_slot *s;
  if (index != GS__POOL_NO_SLOT) {
    s = gs__pool_slot_at(p, index);
    p->free_head = s->next_free;
  } else {
    uint32_t count = (uint32_t)atomic_load_explicit(&p->count, memory_order_relaxed);
    uint32_t per_page = 1u << p->page_shift;
    if (count >= p->max_items || (count >> p->page_shift) >= GS__POOL_MAX_PAGES) {
      gs__spin_unlock(&p->lock);
      return NULL;
    }
    if ((count & (per_page - 1)) == 0) {
      char *page = calloc(per_page, p->item_size);
      if (!page) {
        gs__spin_unlock(&p->lock);
        return NULL;
      }
      for (uint32_t i = 0; i < per_page; i++)
        atomic_init(&((gs__pool_slot *)(page + (size_t)i * p->item_size))->generation, 1);
      atomic_store_explicit(&p->pages[count >> p->page_shift], page, memory_order_release);
    }
    index = count;
    atomic_store_explicit(&p->count, count + 1, memory_order_release);
    s = gs__pool_slot_at(p, index);
  }
  gs__spin_unlock(&p->lock);
  *id = gs__pool_id(p, s, index);
  return s;
}

/* Records a tenancy in the slot's history, growing it while it is small. Pool lock held. */
static void remember(gs__pool_slot *s, uint32_t generation, const char *by, uint64_t event,
                     int how) {
  gs__pool_history *h = s->history;
  if (!h || (h->filled == h->capacity && h->capacity < GS__POOL_HISTORY)) {
    uint32_t capacity = h ? h->capacity * 2 : 4;
    gs__pool_history *grown = malloc(sizeof *grown + capacity * sizeof(tenancy));
    if (!grown)
      return; /* the story is lost, not the program: the error will say it was dropped */
    grown->capacity = capacity;
    grown->filled = 0;
    if (h) { /* generations are consecutive: re-place the old ones by their number */
      for (uint32_t i = 0; i < h->capacity; i++)
        grown->entries[h->entries[i].generation & (capacity - 1)] = h->entries[i];
      grown->filled = h->filled;
      free(h);
    }
    s->history = h = grown;
  }
  h->entries[generation & (h->capacity - 1)] =
      (tenancy){.generation = generation, .how = (uint32_t)how, .by = by, .event = event};
  if (h->filled < h->capacity)
    h->filled++;
}

void gs__pool_release(gs__pool *p, uint64_t id, const char *by, uint64_t event, int how) {
  gs__pool_slot *s = gs__pool_slot_at(p, gs__pool_index(p, id));
  uint32_t generation = (uint32_t)(id >> 32);
  atomic_store_explicit(&s->live, false, memory_order_release);
  atomic_fetch_sub_explicit(&p->live, 1, memory_order_relaxed);
  gs__spin_lock(&p->lock);
  remember(s, generation, by, event, how);
  if (generation != UINT32_MAX) { /* else retired: never handed out again */
    atomic_store_explicit(&s->generation, generation + 1, memory_order_release);
    s->next_free = p->free_head;
    p->free_head = gs__pool_index(p, id);
  }
  gs__spin_unlock(&p->lock);
}

/* The remembered tenancy of generation, or NULL. Pool lock held. */
static tenancy *recall(gs__pool_slot *s, uint32_t generation) {
  gs__pool_history *h = s->history;
  if (!h)
    return NULL;
  tenancy *t = &h->entries[generation & (h->capacity - 1)];
  return t->by && t->generation == generation ? t : NULL;
}

gs__pool_story gs__pool_story_of(gs__pool *p, uint64_t id) {
  gs__pool_story story = {.verdict = GS__POOL_FORGED};
  if (id == 0 || ((uint32_t)id & p->tag) != p->tag)
    return story;
  gs__pool_slot *s = gs__pool_slot_at(p, gs__pool_index(p, id));
  uint32_t generation = (uint32_t)(id >> 32);
  if (!s || generation == 0)
    return story;
  gs__spin_lock(&p->lock);
  uint32_t current = (uint32_t)atomic_load_explicit(&s->generation, memory_order_acquire);
  bool live = atomic_load_explicit(&s->live, memory_order_acquire);
  /* A retired slot keeps its last generation: that tenant has ended although the number did
   * not advance. */
  bool ended = generation < current || (generation == current && !live && recall(s, generation));
  if (generation == current && live) {
    story.verdict = GS__POOL_LIVE;
  } else if (ended) {
    tenancy *t = recall(s, generation);
    story.reuses = generation == current ? 0 : current - generation - (live ? 0 : 1);
    if (t) {
      story.verdict = GS__POOL_ENDED;
      story.by = t->by, story.event = t->event, story.how = (int)t->how;
    } else {
      story.verdict = GS__POOL_FORGOTTEN;
    }
  }
  gs__spin_unlock(&p->lock);
  return story;
}

void gs__pool_rename(gs__pool *p, uint64_t id, const char *by) {
  gs__pool_slot *s = gs__pool_slot_at(p, gs__pool_index(p, id));
  if (!s)
    return;
  gs__spin_lock(&p->lock);
  tenancy *t = recall(s, (uint32_t)(id >> 32));
  if (t)
    t->by = by;
  gs__spin_unlock(&p->lock);
}
