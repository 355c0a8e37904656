/* hooks.c: the events the engine records, built from its own records. Called only while
 * tracing (each site tests gs__trace_on first). */
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "format.h"
#include "scope-impl.h"
#include "trace-impl.h"

/* The hottest hooks fill an event without zeroing all ~400 bytes of it (an inlined rep stos
 * per event): the encoder reads only the kind's schema fields, which each of these hooks sets,
 * and the array and text counts, set here. */
_Static_assert((int)GS__HELD_BY_OPTIMIZER == (int)GS_TRACE_HELD_BY_OPTIMIZER &&
                   (int)GS__HELD_BY_ENGINE == (int)GS_TRACE_HELD_BY_ENGINE,
               "the log's holder numbers are the engine's");

static inline void begin_event(gs_trace_event *e, gs_trace_kind kind, uint64_t seq) {
  e->kind = kind;
  e->seq = seq;
  e->n_inputs = e->n_saved = e->n_parts = e->n_values = e->n_params = e->text_len = 0;
  e->ndim = 0;
}

void gs__trace_storage(gs_trace_kind kind, uint64_t storage, uint64_t source, uint64_t nbytes) {
  gs_trace_event e;
  begin_event(&e, kind, 0);
  e.storage = storage, e.source = source, e.nbytes = nbytes;
  gs__trace_record(&e);
}

void gs__trace_tensor_create(const gs__tensor *t, const gs__owned *own) {
  gs_trace_event e;
  begin_event(&e, GS_TRACE_TENSOR_CREATE, t->created_event);
  e.tensor = t->id;
  e.storage = t->storage->id;
  e.dtype = (uint32_t)t->dtype;
  e.origin = (uint32_t)t->origin;
  e.source = t->source;
  e.op = gs__trace_string(t->created_by);
  e.requires_grad = t->ag.requires_grad;
  e.offset = t->offset;
  e.ndim = t->ndim;
  e.holder = (uint32_t)own->holder;
  e.owner = gs__owner_id(own);
  for (int i = 0; i < t->ndim; i++) {
    e.shape[i] = t->shape[i];
    e.strides[i] = t->strides[i];
  }
  gs__trace_record(&e);
  gs__trace_defer_values(t->id); /* its op computes the values next */
}

void gs__trace_emit_values(uint64_t id, int limit, uint64_t seq) {
  gs_tensor h = {id};
  if (!gs_is_alive(h))
    return;
  gs__tensor *t = gs__lookup(h, "trace");
  int64_t n = t->numel < limit ? t->numel : limit;
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v)
    return;
  int64_t index[GS_MAX_DIMS] = {0};
  const char *base = gs__tensor_data(t);
  for (int64_t k = 0; k < n; k++) { /* row-major order through the strides */
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++)
      off += index[d] * t->strides[d];
    v[k] = gs__load_f64(base + off * (int64_t)gs__elsize(t->dtype), t->dtype);
    for (int d = t->ndim - 1; d >= 0 && ++index[d] == t->shape[d]; d--)
      index[d] = 0;
  }
  gs_trace_event e = {.kind = GS_TRACE_VALUES, .seq = seq, .tensor = id, .values = v,
                      .n_values = (uint32_t)n};
  gs__trace_record_in(NULL, &e);
  free(v);
}

void gs__trace_tensor_dispose(uint64_t tensor, const char *reason, uint64_t seq) {
  gs_trace_event e;
  begin_event(&e, GS_TRACE_TENSOR_DISPOSE, seq);
  e.tensor = tensor;
  e.name = gs__trace_string(reason);
  gs__trace_record(&e);
}

void gs__trace_tensor_move(uint64_t tensor, uint64_t target) {
  gs_trace_event e = {.kind = GS_TRACE_TENSOR_MOVE, .tensor = tensor, .target = target};
  gs__trace_record(&e);
}

void gs__trace_inplace_write(const gs__tensor *t, const char *op, uint64_t seq) {
  gs_trace_event e = {.kind = GS_TRACE_INPLACE_WRITE, .seq = seq, .tensor = t->id,
                      .storage = t->storage->id,
                      .version = (uint64_t)atomic_load(&t->storage->version),
                      .op = gs__trace_string(op)};
  gs__trace_record(&e);
}

void gs__trace_owner_change(const gs__owned *o, int previous_holder, uint64_t previous_owner) {
  gs_trace_event e = {.kind = GS_TRACE_OWNER_CHANGE, .object = o->id,
                      .previous_holder = (uint32_t)previous_holder,
                      .previous_owner = previous_owner, .holder = (uint32_t)o->holder,
                      .owner = gs__owner_id(o)};
  gs__trace_record(&e);
}

void gs__trace_scope_begin(uint64_t scope, uint64_t outer, const char *interned_name) {
  gs_trace_event e = {.kind = GS_TRACE_SCOPE_BEGIN, .scope = scope, .outer = outer,
                      .name = gs__trace_string(interned_name)};
  gs__trace_record(&e);
}

void gs__trace_scope_end(uint64_t scope, uint64_t seq) {
  gs_trace_event e = {.kind = GS_TRACE_SCOPE_END, .seq = seq, .scope = scope};
  gs__trace_record(&e);
}

void gs__trace_emit_node(void *buffer, struct gs__node *n, uint64_t seq) {
  uint64_t stack_ids[16];
  uint64_t *ids = n->n_inputs + n->n_saved <= 16
                      ? stack_ids
                      : malloc((size_t)(n->n_inputs + n->n_saved) * sizeof *ids);
  if (!ids)
    return;
  for (int i = 0; i < n->n_inputs; i++)
    ids[i] = n->next[i] ? n->next[i]->id : 0;
  for (int i = 0; i < n->n_saved; i++)
    ids[n->n_inputs + i] = n->saved[i].tensor;
  gs_trace_event e;
  begin_event(&e, GS_TRACE_NODE_CREATE, seq);
  e.node = n->id;
  e.name = gs__trace_string(n->kind->name);
  e.tensor = n->output;
  e.inputs = ids, e.n_inputs = (uint32_t)n->n_inputs;
  e.saved = ids + n->n_inputs, e.n_saved = (uint32_t)n->n_saved;
  if (n->kind == &AccumulateGrad)
    e.tensor = n->leaf;
  gs__trace_record_in(buffer, &e);
  if (ids != stack_ids)
    free(ids);
}

void gs__trace_node(gs_trace_kind kind, uint64_t node) {
  gs_trace_event e;
  begin_event(&e, kind, 0);
  e.node = node;
  gs__trace_record(&e);
}

void gs__trace_backward(gs_trace_kind kind, uint64_t tensor, uint64_t node) {
  gs_trace_event e = {.kind = kind, .tensor = tensor, .node = node};
  gs__trace_record(&e);
}

void gs__trace_grad_accumulate(uint64_t tensor, uint64_t grad) {
  gs_trace_event e = {.kind = GS_TRACE_GRAD_ACCUMULATE, .tensor = tensor, .target = grad};
  gs__trace_record(&e);
}

void gs__trace_module_create(uint64_t module, const char *interned_type) {
  gs_trace_event e = {.kind = GS_TRACE_MODULE_CREATE, .module = module,
                      .name = gs__trace_string(interned_type)};
  gs__trace_record(&e);
}

void gs__trace_module_parameter(uint64_t module, const char *interned_name, uint64_t tensor) {
  gs_trace_event e = {.kind = GS_TRACE_MODULE_PARAMETER, .module = module,
                      .name = gs__trace_string(interned_name), .tensor = tensor};
  gs__trace_record(&e);
}

void gs__trace_module_child(uint64_t module, uint64_t child, const char *interned_name) {
  gs_trace_event e = {.kind = GS_TRACE_MODULE_CHILD, .module = module, .child = child,
                      .name = gs__trace_string(interned_name)};
  gs__trace_record(&e);
}

/* An optimizer with more parameters than an array field holds is recorded as several events
 * with the same id, each listing the next parameters (doc/trace-format.md). */
void gs__trace_optimizer_create(uint64_t optimizer, const char *type_name,
                                const gs_tensor *params, int n) {
  enum { MAX = GS__TRACE_MAX_ARRAY };
  uint64_t *ids = malloc((size_t)(n < MAX ? (n > 0 ? n : 1) : MAX) * sizeof *ids);
  if (!ids)
    return;
  int done = 0;
  do {
    int count = n - done < MAX ? n - done : MAX;
    for (int i = 0; i < count; i++)
      ids[i] = params[done + i].id;
    gs_trace_event e = {.kind = GS_TRACE_OPTIMIZER_CREATE, .optimizer = optimizer,
                        .name = gs__trace_string(type_name), .params = ids,
                        .n_params = (uint32_t)count};
    gs__trace_record(&e);
    done += count;
  } while (done < n);
  free(ids);
}

void gs__trace_composite_create(uint64_t object, int kind, const gs_tensor *parts, int n) {
  uint64_t ids[8];
  int count = n < 8 ? n : 8;
  for (int i = 0; i < count; i++)
    ids[i] = parts[i].id;
  gs_trace_event e = {.kind = GS_TRACE_COMPOSITE_CREATE, .object = object,
                      .object_kind = (uint32_t)kind, .parts = ids, .n_parts = (uint32_t)count};
  gs__trace_record(&e);
}

void gs__trace_error(int code, const char *message) {
  size_t len = strlen(message);
  gs_trace_event e = {.kind = GS_TRACE_ERROR, .code = (uint32_t)code, .text = message,
                      .text_len = (uint32_t)(len < 4096 ? len : 4096)};
  gs__trace_record(&e);
}
