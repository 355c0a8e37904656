/* trace-snapshot.c: the core's part of a late log's snapshot (trace/snapshot.c): every live
 * tensor as the tensor_create that would have made it, with its owner as it is now, after the
 * storages they view (an allocation per buffer, a copy-on-write share for each other storage
 * over the same buffer). Storages that only saved tensors keep alive are written by the
 * graph's walk through gs__snapshot_storage, once per snapshot; the walk marks the nodes it
 * wrote in the same map (gs__snapshot_first_node).
 *
 * Taken while the program stands still in the engine: records another thread changes during
 * the walk may be written as they were before or after the change. */
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "trace-writer.h"

/* Storages written in this snapshot, and the storage each buffer was first written with: a
 * small open-addressing map, reset by each snapshot (kept between, as a static). */
static struct {
  uint64_t *keys, *vals;
  size_t cap, len;
} written;

static size_t slot_for(uint64_t key) {
  size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (written.cap - 1);
  while (written.keys[j] && written.keys[j] != key)
    j = (j + 1) & (written.cap - 1);
  return j;
}

/* The value of key (0: none). */
static uint64_t written_get(uint64_t key) {
  return written.cap ? written.vals[slot_for(key)] : 0;
}

static void written_put(uint64_t key, uint64_t val) {
  if ((written.len + 1) * 2 > written.cap) {
    size_t old_cap = written.cap;
    uint64_t *old_keys = written.keys, *old_vals = written.vals;
    written.cap = old_cap ? old_cap * 2 : 256;
    written.keys = calloc(written.cap, sizeof *written.keys);
    written.vals = calloc(written.cap, sizeof *written.vals);
    if (!written.keys || !written.vals) { /* no memory: storages may be written twice */
      free(written.keys), free(written.vals);
      written.keys = old_keys, written.vals = old_vals, written.cap = old_cap;
      return;
    }
    written.len = 0;
    for (size_t i = 0; i < old_cap; i++)
      if (old_keys[i]) {
        size_t j = slot_for(old_keys[i]);
        written.keys[j] = old_keys[i], written.vals[j] = old_vals[i];
        written.len++;
      }
    free(old_keys), free(old_vals);
  }
  size_t j = slot_for(key);
  if (!written.keys[j])
    written.len++;
  written.keys[j] = key, written.vals[j] = val;
}

/* Keys: a storage id times 4, a graph node's id times 4 plus 2, a buffer's address plus 1
 * (odd: buffers are aligned), so the three never meet. */
static uint64_t buffer_key(const gs__buffer *b) { return (uint64_t)(uintptr_t)b | 1u; }

bool gs__snapshot_first_node(uint64_t node) {
  if (written_get(node << 2 | 2))
    return false;
  written_put(node << 2 | 2, 1);
  return true;
}

void gs__snapshot_storage(const gs__storage *s) {
  if (!s || written_get(s->id << 2))
    return;
  written_put(s->id << 2, 1);
  uint64_t sharing = s->buffer ? written_get(buffer_key(s->buffer)) : 0;
  if (sharing) { /* another storage over these bytes was written: this one shares them */
    gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_STORAGE_SHARE, .storage = s->id,
                                               .source = sharing, .nbytes = s->nbytes});
    return;
  }
  if (s->buffer)
    written_put(buffer_key(s->buffer), s->id);
  const gs__buffer *b = s->buffer;
  gs__trace_snapshot_event(&(gs_trace_event){
      .kind = GS_TRACE_STORAGE_ALLOC, .storage = s->id, .nbytes = s->nbytes,
      .memory = b ? (uint32_t)b->origin : 0,
      .peer = b && b->origin == GS_MEMORY_RECEIVED ? (uint32_t)b->peer_pid : 0});
}

static uint64_t snapshot_tensors(void) {
  written.len = 0;
  if (written.keys) {
    memset(written.keys, 0, written.cap * sizeof *written.keys);
    memset(written.vals, 0, written.cap * sizeof *written.vals);
  }
  uint32_t count = atomic_load_explicit(&gs__tensors.count, memory_order_acquire);
  uint64_t tensors = 0;
  for (uint32_t i = 0; i < count; i++) {
    gs__slot *s = (gs__slot *)gs__pool_slot_of(&gs__tensors, i);
    if (!atomic_load_explicit(&s->pool.live, memory_order_acquire))
      continue;
    const gs__tensor *t = &s->tensor;
    gs__snapshot_storage(t->storage);
    gs_trace_event e = {.kind = GS_TRACE_TENSOR_CREATE, .tensor = t->id,
                        .storage = t->storage ? t->storage->id : 0, .dtype = (uint32_t)t->dtype,
                        .origin = (uint32_t)t->origin, .source = t->source,
                        .op = gs__trace_string(t->created_by),
                        .requires_grad = t->ag.requires_grad, .offset = t->offset,
                        .ndim = t->ndim, .holder = (uint32_t)s->own.holder,
                        .owner = gs__owner_id(&s->own)};
    memcpy(e.shape, t->shape, sizeof e.shape);
    memcpy(e.strides, t->strides, sizeof e.strides);
    gs__trace_snapshot_event(&e);
    tensors++;
  }
  return tensors;
}

__attribute__((constructor)) static void register_tensor_snapshot(void) {
  gs__trace_add_snapshot_hook(20, snapshot_tensors);
}
