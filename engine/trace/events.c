/* events.c: one writer per event kind, each encoding its fields straight into the thread's
 * buffer in the order the schema (schema.c) gives them, as format 1.3: no event struct filled
 * and walked field by field, which cost more than half of a recorded event. The reader decodes
 * with the schema table; tests/engine/trace/test-trace.c reads back what the engine records. */
#include <string.h>

#include "format.h"
#include "trace-writer.h"
#include "writer-impl.h"

/* Upper bounds on encoded sizes: a varint; a compact id (format.h) takes at most 11 bytes,
 * counted as two. */
#define VARINT 10

/* Arrays of ids, compact (format.h). */
static uint8_t *put_node_ids(uint8_t *p, const uint64_t *ids, uint32_t n) {
  p = gs__put_uvarint(p, n);
  for (uint32_t i = 0; i < n; i++)
    p = gs__tw_put_node(p, ids[i]);
  return p;
}

static uint8_t *put_tensor_ids(uint8_t *p, const uint64_t *ids, uint32_t n) {
  p = gs__put_uvarint(p, n);
  for (uint32_t i = 0; i < n; i++)
    p = gs__tw_put_tensor(p, ids[i]);
  return p;
}

static uint8_t *put_handles(uint8_t *p, const gs_tensor *handles, uint32_t n) {
  p = gs__put_uvarint(p, n);
  for (uint32_t i = 0; i < n; i++)
    p = gs__tw_put_tensor(p, handles[i].id);
  return p;
}

/* Appends a trailing since-1.3 site: left out when 0, as a reader reads it then. */
static inline uint8_t *put_site(uint8_t *p, uint32_t site) {
  return site ? gs__put_uvarint(p, site) : p;
}

void gs__trace_tensor_create(const gs__trace_tensor *t) {
  uint32_t op = gs__tw_string(t->op);
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_TENSOR_CREATE, t->seq, (16 + 2 * (size_t)t->ndim) * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, t->tensor);
  p = gs__tw_put_storage(p, t->storage);
  *p++ = (uint8_t)t->dtype; /* small enums: one-byte varints */
  *p++ = (uint8_t)t->origin;
  p = gs__tw_put_tensor(p, t->source);
  p = gs__put_uvarint(p, op);
  *p++ = t->requires_grad ? 1 : 0;
  p = gs__put_svarint(p, t->offset);
  *p++ = (uint8_t)t->ndim;
  for (int i = 0; i < t->ndim; i++)
    p = gs__put_svarint(p, t->shape[i]);
  for (int i = 0; i < t->ndim; i++)
    p = gs__put_svarint(p, t->strides[i]);
  *p++ = (uint8_t)t->holder;
  p = gs__put_uvarint(p, t->owner);
  if (__builtin_expect(t->shared != 0, 0)) { /* since 2.2: a clone's storage_share, folded */
    p = gs__put_uvarint(p, t->alloc_nbytes);
    p = gs__put_uvarint(p, site);
    p = gs__tw_put_storage(p, t->shared);
    p = gs__put_uvarint(p, t->shared_nbytes);
  } else {
    if (t->alloc_nbytes || site) /* since 1.2; left out when 0 and nothing follows */
      p = gs__put_uvarint(p, t->alloc_nbytes);
    p = put_site(p, site);
  }
  gs__tw_end(p);
  gs__tw_created_tensor = t->tensor; /* its op's node may share its time */
  gs__tw_created_seq = gs__tw_mine->last_seq;
}

void gs__trace_tensor_dispose(uint64_t seq, uint64_t tensor, const char *reason,
                              uint64_t freed_storage) {
  uint32_t name = gs__tw_string(reason);
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_TENSOR_DISPOSE, seq, 6 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, tensor);
  p = gs__put_uvarint(p, name);
  if (freed_storage || site) /* since 1.2; left out when 0 and nothing follows */
    p = gs__tw_put_storage(p, freed_storage);
  gs__tw_end(put_site(p, site));
}

/* What each of write_ids' values is: a plain uvarint, or a tensor or storage id (compact,
 * format.h). HOW(x, y, z) packs the first three. */
enum { PLAIN = 0, TID = 1, SID = 2, NID = 3 };
#define HOW(a, b, c) ((a) | (b) << 2 | (c) << 4)

static inline uint8_t *put_value(uint8_t *p, uint64_t v, unsigned how) {
  switch (how & 3) {
  case TID: return gs__tw_put_tensor(p, v);
  case SID: return gs__tw_put_storage(p, v);
  case NID: return gs__tw_put_node(p, v);
  default: return gs__put_uvarint(p, v);
  }
}

/* Kinds whose fields are one to three ids or numbers, and a site for those that have one. */
static void write_ids_at(gs_trace_kind kind, uint64_t seq, uint64_t a, uint64_t b, uint64_t c,
                         int n, unsigned how, uint32_t site) {
  uint8_t *p = gs__tw_begin(kind, seq, 4 * 2 * VARINT);
  if (!p)
    return;
  p = put_value(p, a, how);
  if (n > 1)
    p = put_value(p, b, how >> 2);
  if (n > 2)
    p = put_value(p, c, how >> 4);
  gs__tw_end(put_site(p, site));
}

static void write_ids(gs_trace_kind kind, uint64_t seq, uint64_t a, uint64_t b, uint64_t c, int n,
                      unsigned how) {
  write_ids_at(kind, seq, a, b, c, n, how, 0);
}

void gs__trace_tensor_move(uint64_t tensor, uint64_t target) {
  write_ids_at(GS_TRACE_TENSOR_MOVE, 0, tensor, target, 0, 2, HOW(TID, TID, 0), gs__tw_site());
}

void gs__trace_requires_grad(uint64_t tensor, bool requires_grad) {
  write_ids_at(GS_TRACE_REQUIRES_GRAD, 0, tensor, requires_grad ? 1 : 0, 0, 2, HOW(TID, 0, 0),
               gs__tw_site());
}

void gs__trace_tensor_set_data(uint64_t tensor, uint64_t storage, uint32_t dtype, const char *op,
                               int64_t offset, const int64_t *shape, const int64_t *strides,
                               int ndim) {
  gs_trace_event e = {.kind = GS_TRACE_TENSOR_SET_DATA,
                      .tensor = tensor,
                      .storage = storage,
                      .dtype = dtype,
                      .op = gs__tw_string(op),
                      .offset = offset,
                      .ndim = ndim,
                      .site = gs__tw_site()};
  memcpy(e.shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(e.strides, strides, sizeof(int64_t) * (size_t)ndim);
  uint8_t *p = gs__tw_begin(GS_TRACE_TENSOR_SET_DATA, 0, gs__trace_max_event_size(&e));
  if (!p)
    return;
  gs__tw_end(gs__trace_encode_fields(p, &e, GS__TRACE_SCHEMA_MINOR, &gs__tw_mine->ids));
}

void gs__trace_tensor_name(uint64_t tensor, const char *interned_name) {
  write_ids(GS_TRACE_TENSOR_NAME, 0, tensor, gs__tw_string(interned_name), 0, 2, HOW(TID, 0, 0));
}

void gs__trace_storage(gs_trace_kind kind, uint64_t storage, uint64_t source, uint64_t nbytes) {
  switch (kind) {
  case GS_TRACE_STORAGE_SHARE:
    write_ids(kind, 0, storage, source, nbytes, 3, HOW(SID, SID, 0));
    break;
  case GS_TRACE_STORAGE_FREE: write_ids(kind, 0, storage, 0, 0, 1, HOW(SID, 0, 0)); break;
  default:
    write_ids(kind, 0, storage, nbytes, 0, 2, HOW(SID, 0, 0));
    break; /* alloc, materialise */
  }
}

void gs__trace_storage_memory(gs_trace_kind kind, uint64_t storage, uint64_t nbytes,
                              uint32_t memory, uint32_t peer) {
  uint8_t *p = gs__tw_begin(kind, 0, 5 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_storage(p, storage);
  p = gs__put_uvarint(p, nbytes);
  p = gs__put_uvarint(p, memory);
  if (kind == GS_TRACE_STORAGE_ALLOC)
    p = gs__put_uvarint(p, peer);
  gs__tw_end(p);
}

void gs__trace_inplace_write(uint64_t seq, uint64_t tensor, uint64_t storage, uint64_t version,
                             const char *op) {
  uint32_t op_id = gs__tw_string(op);
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_INPLACE_WRITE, seq, 7 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, tensor);
  p = gs__tw_put_storage(p, storage);
  p = gs__put_uvarint(p, version);
  p = gs__put_uvarint(p, op_id);
  gs__tw_end(put_site(p, site));
}

void gs__trace_values(uint64_t seq, uint64_t tensor, const double *values, uint32_t n) {
  uint8_t *p = gs__tw_begin(GS_TRACE_VALUES, seq, 3 * VARINT + (size_t)n * 8);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, tensor);
  p = gs__put_uvarint(p, n);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &values[i], sizeof bits);
    gs__put_u64(p, bits);
    p += 8;
  }
  gs__tw_end(p);
}

void gs__trace_owner_change(uint64_t object, int previous_holder, uint64_t previous_owner,
                            int holder, uint64_t owner) {
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_OWNER_CHANGE, 0, 7 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, object);
  p = gs__put_uvarint(p, (uint64_t)previous_holder);
  p = gs__put_uvarint(p, previous_owner);
  p = gs__put_uvarint(p, (uint64_t)holder);
  p = gs__put_uvarint(p, owner);
  gs__tw_end(put_site(p, site));
}

void gs__trace_scope_begin(uint64_t scope, uint64_t outer, const char *interned_name) {
  uint32_t name = gs__tw_string(interned_name);
  write_ids_at(GS_TRACE_SCOPE_BEGIN, 0, scope, outer, name, 3, 0, gs__tw_site());
}

void gs__trace_scope_end(uint64_t scope, uint64_t seq) {
  write_ids_at(GS_TRACE_SCOPE_END, seq, scope, 0, 0, 1, 0, gs__tw_site());
}

void gs__trace_node_create(uint64_t seq, uint64_t node, const char *kind_name, uint64_t tensor,
                           const uint64_t *inputs, uint32_t n_inputs, const uint64_t *saved,
                           uint32_t n_saved) {
  uint32_t name = gs__tw_string(kind_name);
  uint8_t *p =
      gs__tw_begin(GS_TRACE_NODE_CREATE, seq, (6 + 2 * ((size_t)n_inputs + n_saved)) * VARINT);
  if (!p)
    return;
  p = gs__tw_put_node(p, node);
  p = gs__put_uvarint(p, name);
  p = gs__tw_put_tensor(p, tensor);
  p = put_node_ids(p, inputs, n_inputs);
  p = put_tensor_ids(p, saved, n_saved);
  gs__tw_end(p);
}

void gs__trace_node(gs_trace_kind kind, uint64_t node) { write_ids(kind, 0, node, 0, 0, 1, NID); }

void gs__trace_backward(gs_trace_kind kind, uint64_t tensor, uint64_t node) {
  if (kind == GS_TRACE_BACKWARD_BEGIN)
    write_ids_at(kind, 0, tensor, node, 0, 2, HOW(TID, NID, 0), gs__tw_site());
  else
    write_ids(kind, 0, tensor, 0, 0, 1, HOW(TID, 0, 0));
}

/* The site is written even when 0: these kinds' schemas have no mark before it. */
void gs__trace_saved(gs_trace_kind kind, uint64_t node, uint64_t tensor, uint64_t storage) {
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(kind, 0, 4 * 2 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_node(p, node);
  p = gs__tw_put_tensor(p, tensor);
  p = gs__tw_put_storage(p, storage);
  gs__tw_end(gs__put_uvarint(p, site));
}

void gs__trace_grad_accumulate(uint64_t tensor, uint64_t grad, int holder, int previous_holder,
                               uint64_t previous_owner) {
  if (!holder) {
    write_ids(GS_TRACE_GRAD_ACCUMULATE, 0, tensor, grad, 0, 2, HOW(TID, TID, 0));
    return;
  }
  uint32_t site = gs__tw_site(); /* the owner_change's: the call's */
  uint8_t *p = gs__tw_begin(GS_TRACE_GRAD_ACCUMULATE, 0, 8 * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, tensor);
  p = gs__tw_put_tensor(p, grad);
  *p++ = (uint8_t)holder; /* small enums: one-byte varints */
  *p++ = (uint8_t)previous_holder;
  p = gs__put_uvarint(p, previous_owner);
  gs__tw_end(gs__put_uvarint(p, site));
}

void gs__trace_module_create(uint64_t module, const char *interned_type) {
  uint32_t type = gs__tw_string(interned_type);
  write_ids_at(GS_TRACE_MODULE_CREATE, 0, module, type, 0, 2, 0, gs__tw_site());
}

void gs__trace_module_parameter(uint64_t module, const char *interned_name, uint64_t tensor) {
  write_ids(GS_TRACE_MODULE_PARAMETER, 0, module, gs__tw_string(interned_name), tensor, 3,
            HOW(0, 0, TID));
}

void gs__trace_module_child(uint64_t module, uint64_t child, const char *interned_name) {
  write_ids(GS_TRACE_MODULE_CHILD, 0, module, child, gs__tw_string(interned_name), 3, 0);
}

/* An optimizer with more parameters than an array field holds is recorded as several events
 * with the same id, each listing the next parameters (doc/trace-format.md). */
void gs__trace_optimizer_create(uint64_t optimizer, const char *type_name,
                                const gs_tensor *params, int n) {
  int done = 0;
  do {
    int count = n - done < GS__TRACE_MAX_ARRAY ? n - done : GS__TRACE_MAX_ARRAY;
    uint32_t name = gs__tw_string(type_name);
    uint32_t site = gs__tw_site();
    uint8_t *p = gs__tw_begin(GS_TRACE_OPTIMIZER_CREATE, 0, (4 + 2 * (size_t)count) * VARINT);
    if (!p)
      return;
    p = gs__put_uvarint(p, optimizer);
    p = gs__put_uvarint(p, name);
    p = put_handles(p, params + done, (uint32_t)count);
    gs__tw_end(put_site(p, site));
    done += count;
  } while (done < n);
}

uint64_t gs__trace_optimizer_events(int n) {
  return n > GS__TRACE_MAX_ARRAY ? ((uint64_t)n + GS__TRACE_MAX_ARRAY - 1) / GS__TRACE_MAX_ARRAY
                                 : 1;
}

void gs__trace_composite_create(uint64_t object, int kind, const gs_tensor *parts, int n) {
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_COMPOSITE_CREATE, 0, (5 + 2 * (size_t)n) * VARINT);
  if (!p)
    return;
  p = gs__tw_put_tensor(p, object);
  p = gs__put_uvarint(p, (uint64_t)kind);
  p = put_handles(p, parts, (uint32_t)n);
  gs__tw_end(put_site(p, site));
}

void gs__trace_mark(const char *interned_label) {
  uint32_t label = gs__tw_string(interned_label);
  write_ids_at(GS_TRACE_MARK, 0, label, 0, 0, 1, 0, gs__tw_site());
}

void gs__trace_range(gs_trace_kind kind, const char *interned_label) {
  uint32_t label = gs__tw_string(interned_label);
  write_ids_at(kind, 0, label, 0, 0, 1, 0, gs__tw_site());
}

void gs__trace_error(int code, const char *message) {
  size_t len = strlen(message);
  if (len > 4096)
    len = 4096;
  uint32_t site = gs__tw_site();
  uint8_t *p = gs__tw_begin(GS_TRACE_ERROR, 0, 3 * VARINT + len);
  if (!p)
    return;
  p = gs__put_uvarint(p, (uint64_t)code);
  p = gs__put_uvarint(p, len);
  memcpy(p, message, len);
  gs__tw_end(put_site(p + len, site));
}

void gs__trace_dist_init(uint32_t rank, uint32_t world, uint64_t run) {
  write_ids(GS_TRACE_DIST_INIT, 0, rank, world, run, 3, 0);
}

/* A bucket with more parameters than an array field holds is recorded as several events with
 * the same bucket, each listing the next ones, as an optimizer's list is. */
void gs__trace_bucket_ready(int bucket, uint64_t nbytes, uint64_t in_place, const uint64_t *params,
                            int n) {
  int done = 0;
  do {
    int count = n - done < GS__TRACE_MAX_ARRAY ? n - done : GS__TRACE_MAX_ARRAY;
    uint8_t *p = gs__tw_begin(GS_TRACE_BUCKET_READY, 0, (4 + 2 * (size_t)count) * VARINT);
    if (!p)
      return;
    p = gs__put_svarint(p, bucket);
    p = gs__put_uvarint(p, nbytes);
    p = put_tensor_ids(p, params + done, (uint32_t)count);
    p = gs__put_uvarint(p, in_place); /* since 2.3 */
    gs__tw_end(p);
    done += count;
  } while (done < n);
}

void gs__trace_collective(gs_trace_kind kind, const char *op, uint64_t collective, uint64_t nbytes,
                          int bucket, uint64_t waited_ns) {
  uint32_t op_id = gs__tw_string(op);
  uint8_t *p = gs__tw_begin(kind, 0, 5 * VARINT);
  if (!p)
    return;
  p = gs__put_uvarint(p, op_id);
  p = gs__put_uvarint(p, collective);
  p = gs__put_uvarint(p, nbytes);
  p = gs__put_svarint(p, bucket);
  if (kind == GS_TRACE_COLLECTIVE_END)
    p = gs__put_uvarint(p, waited_ns);
  gs__tw_end(p);
}

void gs__trace_wait(gs_trace_kind kind, const char *what, uint64_t waited_ns) {
  uint32_t name = gs__tw_string(what);
  write_ids(kind, 0, name, waited_ns, 0, kind == GS_TRACE_WAIT_END ? 2 : 1, 0);
}
