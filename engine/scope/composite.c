/* composite.c: objects made of several tensors (a packed sequence; later, a data batch) that
 * take part in scopes as one unit.
 *
 * A composite's parts are held by the composite, not by a scope: only the composite is on the
 * scope's list and in the statistics. Moving, detaching or disposing it does that to all its
 * parts; when it is disposed, its parts' handles go stale naming the same disposer.
 */
#include <stdlib.h>
#include <string.h>

#include "scope-impl.h"
#include "trace-writer.h"

#define MAX_COMPOSITES 65536u

typedef struct composite {
  uint32_t index;
  uint32_t generation;
  bool live;
  uint32_t next_free;
  int kind;
  gs__owned own;
  int n_parts;
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  const char *disposed_by;
  uint64_t disposed_event;
} composite;

static composite *records[MAX_COMPOSITES];
static uint32_t record_count;
static uint32_t free_head = UINT32_MAX;

static const char *kind_name(int kind) {
  return kind == GS_OBJECT_PACKED_SEQUENCE ? "packed sequence"
         : kind == GS_OBJECT_BATCH        ? "batch"
                                          : "object";
}

static uint64_t id_of(const composite *c) {
  return ((uint64_t)c->generation << 32) | (c->index | GS__COMPOSITE_ID_BIT);
}

/* The record an id's slot holds now (any tenant); NULL if the id is not a composite's. */
static composite *record_at(uint64_t id) {
  if (!gs__is_composite_id(id))
    return NULL;
  uint32_t index = (uint32_t)(id & 0xffffffffu) & ~GS__COMPOSITE_ID_BIT;
  return index < record_count ? records[index] : NULL;
}

uint64_t gs__composite_new(int kind, const gs_tensor *parts, int n_parts, const char *fn) {
  gs__own_lock();
  composite *c;
  if (free_head != UINT32_MAX) {
    c = records[free_head];
    free_head = c->next_free;
  } else if (record_count < MAX_COMPOSITES && (c = calloc(1, sizeof *c))) {
    c->index = record_count;
    c->generation = 1;
    records[record_count++] = c;
  } else {
    gs__own_unlock();
    for (int i = 0; i < n_parts; i++)
      if (parts[i].id)
        gs__dispose_as(parts[i], "a failed composite creation");
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "too many %ss are alive", kind_name(kind));
    return 0;
  }
  c->kind = kind;
  c->n_parts = n_parts;
  uint64_t id = id_of(c);
  uint64_t bytes = 0;
  for (int i = 0; i < n_parts; i++) {
    c->parts[i] = parts[i];
    if (!parts[i].id)
      continue;
    gs__tensor *t = gs__lookup(parts[i], fn);
    gs__own_set_holder_locked(&gs__slot_of(t)->own, GS__HELD_BY_COMPOSITE, id);
    bytes += t->storage->nbytes;
  }
  gs__own_new_locked(&c->own, kind, id, bytes);
  c->live = true;
  gs__own_unlock();
  if (gs__trace_on())
    gs__trace_composite_create(id, kind, parts, n_parts);
  return id;
}

gs__owned *gs__composite_lookup(uint64_t id, int kind, const char *fn, gs_tensor *parts_out) {
  gs__own_lock();
  composite *c = record_at(id);
  uint32_t gen = (uint32_t)(id >> 32);
  bool ok = c && c->live && c->generation == gen && c->kind == kind;
  if (ok && parts_out)
    memcpy(parts_out, c->parts, sizeof c->parts);
  const char *by = c ? c->disposed_by : NULL;
  uint64_t when = c ? c->disposed_event : 0;
  bool stale = c && !ok && gen < c->generation;
  gs__own_unlock();
  if (ok)
    return &c->own;
  uint32_t index = (uint32_t)(id & 0x7fffffffu);
  if (!id)
    gs__error(GS_ERR_STALE_HANDLE, fn, "expected a %s, got the empty handle", kind_name(kind));
  else if (stale && by)
    gs__error(GS_ERR_STALE_HANDLE, fn, "%s #%u.%u is stale: it was disposed by %s at event %llu",
              kind_name(kind), index, gen, by, (unsigned long long)when);
  else
    gs__error(GS_ERR_STALE_HANDLE, fn, "%s handle %#llx was never created by this process",
              kind_name(kind), (unsigned long long)id);
  return NULL;
}

bool gs__composite_is_alive(uint64_t id) {
  gs__own_lock();
  composite *c = record_at(id);
  bool ok = c && c->live && c->generation == (uint32_t)(id >> 32);
  gs__own_unlock();
  return ok;
}

void gs__composite_dispose(uint64_t id, const char *reason) {
  gs__own_lock();
  composite *c = record_at(id);
  if (!c || !c->live || c->generation != (uint32_t)(id >> 32)) {
    gs__own_unlock();
    return;
  }
  gs__own_dispose_locked(&c->own);
  c->live = false;
  gs_tensor parts[GS__COMPOSITE_MAX_PARTS];
  int n = c->n_parts;
  memcpy(parts, c->parts, sizeof parts);
  c->disposed_by = reason;
  c->disposed_event = gs__next_event();
  uint64_t event = c->disposed_event;
  c->generation++;
  c->next_free = free_head;
  free_head = c->index;
  gs__own_unlock();
  /* The log says the composite itself is gone (before its parts), or a reader would keep it
   * alive forever. */
  if (gs__trace_on())
    gs__trace_tensor_dispose(event, id, reason, 0);
  for (int i = 0; i < n; i++)
    if (parts[i].id && gs_is_alive(parts[i]))
      gs__dispose_as(parts[i], reason);
}
