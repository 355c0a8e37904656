/* handles.c: the tensor slot table behind gs_tensor handles, and the global event counter.
 *
 * A handle is (generation << 32 | slot index). Slots live in fixed pages that never move, so a
 * lookup needs no lock; creating and disposing take one short lock for the free list. A slot's
 * generation advances on every dispose, so a stale handle never matches the slot's next tenant.
 * A slot whose 32-bit generation is exhausted is retired rather than wrapped: an old handle can
 * then never alias a new tensor, however long a training loop runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "scope-impl.h"
#include "trace-impl.h"

#define SLOTS_PER_PAGE GS__SLOTS_PER_PAGE
#define MAX_PAGES GS__MAX_PAGES
#define NO_SLOT UINT32_MAX

typedef gs__slot slot;

_Atomic(gs__slot *) gs__slot_pages[GS__MAX_PAGES];
#define pages gs__slot_pages
atomic_uint_fast32_t gs__slot_count; /* slots ever handed out (pages filled in order) */
#define slot_count gs__slot_count
static uint32_t free_head = NO_SLOT;
static gs__spinlock table_lock = GS__SPINLOCK_INIT;
static atomic_uint_fast64_t live_count;
static atomic_uint_fast64_t event_counter;

uint64_t gs__next_event(void) {
  return atomic_fetch_add_explicit(&event_counter, 1, memory_order_relaxed) + 1;
}

uint64_t gs_event_counter(void) {
  return atomic_load_explicit(&event_counter, memory_order_relaxed);
}

uint64_t gs_live_tensor_count(void) {
  return atomic_load_explicit(&live_count, memory_order_relaxed);
}

static inline slot *slot_at(uint32_t index) {
  slot *page = atomic_load_explicit(&pages[index / SLOTS_PER_PAGE], memory_order_acquire);
  return page ? &page[index % SLOTS_PER_PAGE] : NULL;
}

/* For indices below slot_count, whose page was published before the count: never NULL. */
static inline slot *slot_of(uint32_t index) {
  return &atomic_load_explicit(&pages[index / SLOTS_PER_PAGE],
                               memory_order_acquire)[index % SLOTS_PER_PAGE];
}

static void report_stale(gs_tensor h, const char *fn) {
  uint32_t index = (uint32_t)(h.id & 0xffffffffu);
  uint32_t gen = (uint32_t)(h.id >> 32);
  slot *s = index < atomic_load(&slot_count) ? slot_at(index) : NULL;
  if (!s || gen == 0 || gen > atomic_load(&s->generation)) {
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "tensor handle %#llx was never created by this process (a forged or "
              "corrupted handle)",
              (unsigned long long)h.id);
    return;
  }
  uint32_t current = (uint32_t)atomic_load(&s->generation);
  if (gen + 1 == current && s->moved)
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "tensor #%u.%u is stale: it was moved into %s at event %llu; use that handle",
              index, gen, s->disposed_by, (unsigned long long)s->disposed_event);
  else if (gen + 1 == current || (gen == current && !atomic_load(&s->live)))
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "tensor #%u.%u is stale: it was disposed by %s at event %llu", index, gen,
              s->disposed_by, (unsigned long long)s->disposed_event);
  else
    gs__error(GS_ERR_STALE_HANDLE, fn,
              "tensor #%u.%u is stale: it was disposed before event %llu and its slot has "
              "been reused since",
              index, gen, (unsigned long long)s->disposed_event);
}

gs__tensor *gs__lookup_failed(gs_tensor h, const char *fn) {
  if (h.id == 0)
    gs__error(GS_ERR_STALE_HANDLE, fn, "expected a tensor, got the empty handle");
  else
    report_stale(h, fn);
  return NULL;
}

bool gs_is_alive(gs_tensor h) {
  uint32_t index = (uint32_t)(h.id & 0xffffffffu);
  if (h.id == 0 || index >= atomic_load(&slot_count))
    return false;
  slot *s = slot_at(index);
  return s && atomic_load(&s->generation) == (h.id >> 32) && atomic_load(&s->live);
}

/* Takes a free slot (or a new one) under the table lock; NO_SLOT when the table is full. */
static uint32_t take_slot(void) {
  gs__spin_lock(&table_lock);
  uint32_t index = free_head;
  if (index != NO_SLOT) {
    free_head = slot_of(index)->next_free;
  } else {
    uint32_t count = (uint32_t)atomic_load(&slot_count);
    if (count >= SLOTS_PER_PAGE * MAX_PAGES) {
      gs__spin_unlock(&table_lock);
      return NO_SLOT;
    }
    if (count % SLOTS_PER_PAGE == 0) {
      slot *page = calloc(SLOTS_PER_PAGE, sizeof(slot));
      if (!page) {
        gs__spin_unlock(&table_lock);
        return NO_SLOT;
      }
      for (uint32_t i = 0; i < SLOTS_PER_PAGE; i++)
        atomic_init(&page[i].generation, 1);
      atomic_store_explicit(&pages[count / SLOTS_PER_PAGE], page, memory_order_release);
    }
    index = count;
    atomic_store_explicit(&slot_count, count + 1, memory_order_release);
  }
  gs__spin_unlock(&table_lock);
  return index;
}

gs_tensor gs__register(const gs__tensor *t, const char *fn) {
  uint32_t index = take_slot();
  if (index == NO_SLOT) {
    gs__storage_release(t->storage);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "the tensor table is full (%u live tensors)",
              SLOTS_PER_PAGE * MAX_PAGES);
    return GS_NO_TENSOR;
  }
  slot *s = slot_of(index);
  uint32_t gen = (uint32_t)atomic_load_explicit(&s->generation, memory_order_relaxed);
  gs_tensor h = {((uint64_t)gen << 32) | index};
  s->tensor = *t;
  s->tensor.id = h.id;
  s->tensor.ag = (gs__autograd_meta){0}; /* graph links are set by the op, never copied */
  s->tensor.is_parameter = false;
  s->tensor.counted_view = false; /* a copy of a view is not counted until it says so */
  s->tensor.live_views = 0;
  s->tensor.created_by = fn;
  s->tensor.created_event = gs__next_event();
  /* Only a tensor with fresh bytes charges them to its scope: views share someone's. */
  uint64_t bytes = t->origin == GS__ORIGIN_NEW ? t->storage->nbytes : 0;
  gs__own_new(&s->own, GS_OBJECT_TENSOR, h.id, bytes);
  if (gs__trace_on())
    gs__trace_tensor_create(&s->tensor, &s->own);
  atomic_store_explicit(&s->live, true, memory_order_release);
  atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
  return h;
}

/* Ends the tenancy of a live slot: records who ended it, advances the generation and returns
 * the slot to the free list (unless its generations are used up). Returns the disposal's event
 * number: once the slot is free another thread may take it, so s is not read again. */
static uint64_t release_slot(uint32_t index, slot *s, const char *disposed_by, bool moved) {
  uint64_t event = gs__next_event();
  s->disposed_event = event;
  s->disposed_by = disposed_by;
  s->moved = moved;
  atomic_store_explicit(&s->live, false, memory_order_release);
  uint32_t gen = (uint32_t)atomic_load_explicit(&s->generation, memory_order_relaxed);
  atomic_fetch_sub_explicit(&live_count, 1, memory_order_relaxed);
  if (gen == UINT32_MAX)
    return event; /* retired: never handed out again */
  atomic_store_explicit(&s->generation, gen + 1, memory_order_release);
  gs__spin_lock(&table_lock);
  s->next_free = free_head;
  free_head = index;
  gs__spin_unlock(&table_lock);
  return event;
}

void gs__dispose_as(gs_tensor h, const char *reason) {
  gs__tensor *t = gs__lookup(h, "dispose");
  if (!t)
    return;
  slot *s = gs__slot_of(t);
  gs__own_dispose(&s->own);
  gs__autograd_on_dispose(t);
  gs__storage *storage = t->storage;
  t->storage = NULL;
  uint64_t event = release_slot((uint32_t)(h.id & 0xffffffffu), s, reason, false);
  if (gs__trace_on())
    gs__trace_tensor_dispose(h.id, reason, event);
  gs__storage_release(storage);
}

/* A handle whose tensor moved to another handle (a parameter): disposing it does nothing, as
 * in TorchSharp, where the moved-from tensor no longer holds anything. */
static bool was_moved(gs_tensor h) {
  uint32_t index = (uint32_t)(h.id & 0xffffffffu);
  if (index >= atomic_load(&slot_count))
    return false;
  slot *s = slot_at(index);
  return s && s->moved && (uint32_t)(h.id >> 32) + 1 == atomic_load(&s->generation);
}

void gs_dispose(gs_tensor h) {
  if (h.id == 0 || (!gs_is_alive(h) && was_moved(h)))
    return;
  gs__tensor *t = gs__lookup(h, "dispose");
  if (!t)
    return;
  const char *refusal = gs__own_refuses_dispose(&gs__slot_of(t)->own);
  if (refusal) {
    gs__error(GS_ERR_STATE, "dispose", "tensor #%u.%u %s", (unsigned)(h.id & 0xffffffffu),
              (unsigned)(h.id >> 32), refusal);
    return;
  }
  gs__dispose_as(h, "gs_dispose");
}

gs_tensor gs__move_handle(gs_tensor h, const char *reason) {
  gs__tensor *t = gs__lookup(h, "move_handle");
  if (!t)
    return GS_NO_TENSOR;
  uint32_t index = take_slot();
  if (index == NO_SLOT) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "move_handle", "the tensor table is full");
    return GS_NO_TENSOR;
  }
  slot *from = gs__slot_of(t), *to = slot_of(index);
  uint32_t gen = (uint32_t)atomic_load_explicit(&to->generation, memory_order_relaxed);
  gs_tensor moved = {((uint64_t)gen << 32) | index};
  to->tensor = from->tensor;
  to->tensor.id = moved.id;
  /* The new handle takes the old one's place with its owner: same scope, same position. */
  gs__own_lock();
  to->own = from->own;
  to->own.id = moved.id;
  if (to->own.holder == GS__HELD_BY_SCOPE) {
    to->own.prev->next = &to->own;
    to->own.next->prev = &to->own;
  }
  from->own = (gs__owned){.holder = GS__HELD_BY_ENGINE};
  gs__own_unlock();
  /* Gradient bookkeeping moves too: the AccumulateGrad node must name the new handle. */
  if (to->tensor.ag.grad_accumulator)
    to->tensor.ag.grad_accumulator->leaf = moved.id;
  from->tensor.ag = (gs__autograd_meta){0};
  from->tensor.storage = NULL;
  atomic_store_explicit(&to->live, true, memory_order_release);
  atomic_fetch_add_explicit(&live_count, 1, memory_order_relaxed);
  release_slot((uint32_t)(h.id & 0xffffffffu), from, reason, true);
  if (gs__trace_on())
    gs__trace_tensor_move(h.id, moved.id);
  return moved;
}

void gs__rename_disposer(gs_tensor h, const char *reason) {
  uint32_t index = (uint32_t)(h.id & 0xffffffffu);
  if (index >= atomic_load(&slot_count))
    return;
  slot *s = slot_of(index);
  if ((uint32_t)(h.id >> 32) + 1 == atomic_load(&s->generation))
    s->disposed_by = reason;
}
