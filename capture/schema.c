/* schema.c: which fields each event kind carries, and their encoding. The reader decodes with
 * the same table, so the two cannot disagree. */
#include "format.h"

#define S(...) (const uint8_t[]){__VA_ARGS__, GS__F_END}

/* A new event kind needs, before this compiles: its schema below, its writer
 * (engine/trace/events.c) and its function in each inspector table made from the kinds list
 * (gradscope/trace-kinds.h), and a look at the memory accounting's switch, which asserts the
 * same count (inspector/model/index/model-memory.c). */
_Static_assert(GS_TRACE_KIND_COUNT == 44, "a new event kind needs a schema and a name here");

const uint8_t *const gs__trace_schema[GS_TRACE_KIND_COUNT] = {
    [GS_TRACE_STRING] = S(GS__F_NAME, GS__F_TEXT),
    [GS_TRACE_STORAGE_ALLOC] = S(GS__F_STORAGE, GS__F_NBYTES, GS__F_SINCE_MINOR(4), GS__F_MEMORY,
                                 GS__F_SINCE_MINOR(4), GS__F_PEER),
    [GS_TRACE_STORAGE_SHARE] = S(GS__F_STORAGE, GS__F_SOURCE, GS__F_NBYTES),
    [GS_TRACE_STORAGE_MATERIALISE] =
        S(GS__F_STORAGE, GS__F_NBYTES, GS__F_SINCE_MINOR(4), GS__F_MEMORY),
    [GS_TRACE_STORAGE_FREE] = S(GS__F_STORAGE),
    [GS_TRACE_TENSOR_CREATE] =
        S(GS__F_TENSOR, GS__F_STORAGE, GS__F_DTYPE, GS__F_ORIGIN, GS__F_SOURCE, GS__F_OP,
          GS__F_REQUIRES_GRAD, GS__F_OFFSET, GS__F_SHAPE, GS__F_STRIDES, GS__F_HOLDER, GS__F_OWNER,
          GS__F_SINCE_MINOR(2), GS__F_ALLOC, GS__F_SINCE_MINOR(3), GS__F_SITE,
          GS__F_SINCE_MINOR(11), GS__F_SHARED, GS__F_SINCE_MINOR(11), GS__F_NBYTES),
    [GS_TRACE_TENSOR_DISPOSE] = S(GS__F_TENSOR, GS__F_NAME, GS__F_SINCE_MINOR(2), GS__F_FREED,
                                  GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_TENSOR_MOVE] = S(GS__F_TENSOR, GS__F_TARGET, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_TENSOR_NAME] = S(GS__F_TENSOR, GS__F_NAME),
    [GS_TRACE_INPLACE_WRITE] =
        S(GS__F_TENSOR, GS__F_STORAGE, GS__F_VERSION, GS__F_OP, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_OWNER_CHANGE] = S(GS__F_OBJECT, GS__F_PREVIOUS_HOLDER, GS__F_PREVIOUS_OWNER,
                                GS__F_HOLDER, GS__F_OWNER, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_SCOPE_BEGIN] =
        S(GS__F_SCOPE, GS__F_OUTER, GS__F_NAME, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_SCOPE_END] = S(GS__F_SCOPE, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_NODE_CREATE] = S(GS__F_NODE, GS__F_NAME, GS__F_TENSOR, GS__F_INPUTS, GS__F_SAVED),
    [GS_TRACE_NODE_FREE_SAVED] = S(GS__F_NODE),
    [GS_TRACE_NODE_RELEASE] = S(GS__F_NODE),
    [GS_TRACE_BACKWARD_BEGIN] = S(GS__F_TENSOR, GS__F_NODE, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_BACKWARD_END] = S(GS__F_TENSOR),
    [GS_TRACE_GRAD_ACCUMULATE] =
        S(GS__F_TENSOR, GS__F_TARGET, GS__F_SINCE_MINOR(11), GS__F_HOLDER, GS__F_SINCE_MINOR(11),
          GS__F_PREVIOUS_HOLDER, GS__F_SINCE_MINOR(11), GS__F_PREVIOUS_OWNER, GS__F_SINCE_MINOR(11),
          GS__F_SITE),
    [GS_TRACE_MODULE_CREATE] = S(GS__F_MODULE, GS__F_NAME, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_MODULE_PARAMETER] = S(GS__F_MODULE, GS__F_NAME, GS__F_TENSOR),
    [GS_TRACE_COMPOSITE_CREATE] =
        S(GS__F_OBJECT, GS__F_OBJECT_KIND, GS__F_PARTS, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_MARK] = S(GS__F_NAME, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_ERROR] = S(GS__F_CODE, GS__F_TEXT, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_VALUES] = S(GS__F_TENSOR, GS__F_VALUES),
    [GS_TRACE_MODULE_CHILD] = S(GS__F_MODULE, GS__F_CHILD, GS__F_NAME),
    [GS_TRACE_OPTIMIZER_CREATE] =
        S(GS__F_OPTIMIZER, GS__F_NAME, GS__F_PARAMS, GS__F_SINCE_MINOR(3), GS__F_SITE),
    [GS_TRACE_SITE] = S(GS__F_SITE, GS__F_FRAMES, GS__F_SINCE_MINOR(5), GS__F_NAME),
    [GS_TRACE_BINARY] = S(GS__F_ADDRESS, GS__F_OFFSET, GS__F_NBYTES, GS__F_NAME, GS__F_TEXT),
    [GS_TRACE_SNAPSHOT_BEGIN] = S(GS__F_NAME, GS__F_COUNT),
    [GS_TRACE_SNAPSHOT_END] = S(GS__F_COUNT),
    [GS_TRACE_REQUIRES_GRAD] = S(GS__F_TENSOR, GS__F_REQUIRES_GRAD, GS__F_SITE),
    [GS_TRACE_DIST_INIT] = S(GS__F_RANK, GS__F_WORLD, GS__F_RUN),
    [GS_TRACE_BUCKET_READY] =
        S(GS__F_BUCKET, GS__F_NBYTES, GS__F_PARAMS, GS__F_SINCE_MINOR(12), GS__F_IN_PLACE),
    [GS_TRACE_COLLECTIVE_BEGIN] = S(GS__F_OP, GS__F_COLLECTIVE, GS__F_NBYTES, GS__F_BUCKET),
    [GS_TRACE_COLLECTIVE_END] =
        S(GS__F_OP, GS__F_COLLECTIVE, GS__F_NBYTES, GS__F_BUCKET, GS__F_WAITED),
    [GS_TRACE_WAIT_BEGIN] = S(GS__F_NAME),
    [GS_TRACE_WAIT_END] = S(GS__F_NAME, GS__F_WAITED),
    [GS_TRACE_TENSOR_SET_DATA] = S(GS__F_TENSOR, GS__F_STORAGE, GS__F_DTYPE, GS__F_OP, GS__F_OFFSET,
                                   GS__F_SHAPE, GS__F_STRIDES, GS__F_SITE),
    [GS_TRACE_RANGE_BEGIN] = S(GS__F_NAME, GS__F_SITE),
    [GS_TRACE_RANGE_END] = S(GS__F_NAME, GS__F_SITE),
    [GS_TRACE_SAVED_PACK] = S(GS__F_NODE, GS__F_TENSOR, GS__F_STORAGE, GS__F_SITE),
    [GS_TRACE_SAVED_UNPACK] = S(GS__F_NODE, GS__F_TENSOR, GS__F_STORAGE, GS__F_SITE),
};

const char *gs_trace_kind_name(gs_trace_kind kind) {
  static const char *const names[GS_TRACE_KIND_COUNT] = {
#define KIND_NAME(KIND, kind, value, flags) [GS_TRACE_##KIND] = #kind,
      GS_TRACE_KINDS(KIND_NAME)
#undef KIND_NAME
  };
  return kind > 0 && kind < GS_TRACE_KIND_COUNT && names[kind] ? names[kind] : "unknown";
}

/* Id fields: plain uvarints in format 1, compact since 2.0 (format.h): a tensor id against
 * table, a storage or node id against *prev (both NULL in format 1). */
static inline uint8_t *put_id(uint8_t *p, uint64_t *table, uint64_t *prev, uint64_t id) {
  if (table)
    return gs__put_id(p, table, id);
  if (prev)
    return gs__put_counter_id(p, prev, id);
  return gs__put_uvarint(p, id);
}

static uint8_t *put_array(uint8_t *p, const uint64_t *a, uint32_t n, uint64_t *table,
                          uint64_t *prev) {
  p = gs__put_uvarint(p, n);
  for (uint32_t i = 0; i < n; i++)
    p = put_id(p, table, prev, a[i]);
  return p;
}

size_t gs__trace_max_event_size(const gs_trace_event *e) {
  /* Every scalar field fits in 10 bytes, a compact id in 11 (an escaped counter id); there
   * are fewer than 16 per kind. */
  return 1 + 10 + 20 + 16 * 11 + (size_t)2 * GS_MAX_DIMS * 10 +
         (size_t)(e->n_inputs + e->n_saved + e->n_parts + e->n_params + e->n_frames) * 11 + 60 +
         (size_t)e->n_values * 8 + e->text_len;
}

uint8_t *gs__trace_encode_body_as(uint8_t *p, const gs_trace_event *e, int64_t seq_delta,
                                  int64_t time_delta, unsigned minor, gs__trace_ids *ids) {
  p = gs__put_svarint(p, seq_delta);
  p = gs__put_svarint(p, time_delta);
  return gs__trace_encode_fields(p, e, minor, ids);
}

uint8_t *gs__trace_encode_fields(uint8_t *p, const gs_trace_event *e, unsigned minor,
                                 gs__trace_ids *ids) {
  uint64_t *tensors = ids ? ids->tensor : NULL, *storages = ids ? &ids->storage : NULL;
  uint64_t *nodes = ids ? &ids->node : NULL;
  /* storage_share's source is a storage; every other kind's a tensor. */
  bool share = e->kind == GS_TRACE_STORAGE_SHARE;
  /* Where the body can end: at the mark before a run of trailing optional fields that are all
   * 0 (a single 0 byte, whatever the field's type), which a reader takes as 0 when missing.
   * So a 1.2 tensor event with nothing folded into it is no longer than in 1.1. */
  uint8_t *cut = NULL;
  for (const uint8_t *f = gs__trace_schema[e->kind]; *f != GS__F_END; f++) {
    if (*f >= GS__F_SINCE) {
      if ((unsigned)(*f - GS__F_SINCE) > minor)
        break; /* this version's fields end here */
      if (!cut)
        cut = p;
      continue;
    }
    const uint8_t *field = p;
    switch ((gs__field)*f) {
    case GS__F_TENSOR: p = put_id(p, tensors, NULL, e->tensor); break;
    case GS__F_TARGET: p = put_id(p, tensors, NULL, e->target); break;
    case GS__F_STORAGE: p = put_id(p, NULL, storages, e->storage); break;
    case GS__F_SOURCE:
      p = put_id(p, share ? NULL : tensors, share ? storages : NULL, e->source);
      break;
    case GS__F_NODE: p = put_id(p, NULL, nodes, e->node); break;
    case GS__F_SCOPE: p = gs__put_uvarint(p, e->scope); break;
    case GS__F_OUTER: p = gs__put_uvarint(p, e->outer); break;
    case GS__F_OBJECT: p = put_id(p, tensors, NULL, e->object); break;
    case GS__F_MODULE: p = gs__put_uvarint(p, e->module); break;
    case GS__F_CHILD: p = gs__put_uvarint(p, e->child); break;
    case GS__F_OPTIMIZER: p = gs__put_uvarint(p, e->optimizer); break;
    case GS__F_NBYTES: p = gs__put_uvarint(p, e->nbytes); break;
    case GS__F_ALLOC: p = gs__put_uvarint(p, e->alloc); break;
    case GS__F_FREED: p = put_id(p, NULL, storages, e->freed); break;
    case GS__F_SHARED: p = put_id(p, NULL, storages, e->shared); break;
    case GS__F_IN_PLACE:
      p = gs__put_uvarint(p, e->in_place);
      break;
    case GS__F_OFFSET: p = gs__put_svarint(p, e->offset); break;
    case GS__F_VERSION: p = gs__put_uvarint(p, e->version); break;
    case GS__F_NAME: p = gs__put_uvarint(p, e->name); break;
    case GS__F_OP: p = gs__put_uvarint(p, e->op); break;
    case GS__F_DTYPE: p = gs__put_uvarint(p, e->dtype); break;
    case GS__F_ORIGIN: p = gs__put_uvarint(p, e->origin); break;
    case GS__F_HOLDER: p = gs__put_uvarint(p, e->holder); break;
    case GS__F_PREVIOUS_HOLDER: p = gs__put_uvarint(p, e->previous_holder); break;
    case GS__F_OWNER: p = gs__put_uvarint(p, e->owner); break;
    case GS__F_PREVIOUS_OWNER: p = gs__put_uvarint(p, e->previous_owner); break;
    case GS__F_OBJECT_KIND: p = gs__put_uvarint(p, e->object_kind); break;
    case GS__F_CODE: p = gs__put_uvarint(p, e->code); break;
    case GS__F_REQUIRES_GRAD: *p++ = e->requires_grad ? 1 : 0; break;
    case GS__F_SHAPE:
      p = gs__put_uvarint(p, (uint64_t)e->ndim);
      for (int i = 0; i < e->ndim; i++)
        p = gs__put_svarint(p, e->shape[i]);
      break;
    case GS__F_STRIDES:
      for (int i = 0; i < e->ndim; i++)
        p = gs__put_svarint(p, e->strides[i]);
      break;
    case GS__F_INPUTS: p = put_array(p, e->inputs, e->n_inputs, NULL, nodes); break;
    case GS__F_SAVED: p = put_array(p, e->saved, e->n_saved, tensors, NULL); break;
    case GS__F_PARTS: p = put_array(p, e->parts, e->n_parts, tensors, NULL); break;
    case GS__F_PARAMS: p = put_array(p, e->params, e->n_params, tensors, NULL); break;
    case GS__F_FRAMES: p = put_array(p, e->frames, e->n_frames, NULL, NULL); break;
    case GS__F_SITE: p = gs__put_uvarint(p, e->site); break;
    case GS__F_ADDRESS: p = gs__put_uvarint(p, e->address); break;
    case GS__F_MEMORY: p = gs__put_uvarint(p, e->memory); break;
    case GS__F_PEER: p = gs__put_uvarint(p, e->peer); break;
    case GS__F_COUNT: p = gs__put_uvarint(p, e->count); break;
    case GS__F_RANK: p = gs__put_uvarint(p, e->rank); break;
    case GS__F_WORLD: p = gs__put_uvarint(p, e->world); break;
    case GS__F_RUN: p = gs__put_uvarint(p, e->run); break;
    case GS__F_BUCKET: p = gs__put_svarint(p, e->bucket); break;
    case GS__F_COLLECTIVE: p = gs__put_uvarint(p, e->collective); break;
    case GS__F_WAITED: p = gs__put_uvarint(p, e->waited_ns); break;
    case GS__F_VALUES:
      p = gs__put_uvarint(p, e->n_values);
      for (uint32_t i = 0; i < e->n_values; i++) {
        uint64_t bits;
        memcpy(&bits, &e->values[i], sizeof bits);
        gs__put_u64(p, bits);
        p += 8;
      }
      break;
    case GS__F_TEXT:
      p = gs__put_uvarint(p, e->text_len);
      memcpy(p, e->text, e->text_len);
      p += e->text_len;
      break;
    case GS__F_SINCE:
    case GS__F_END: break;
    }
    if (cut && !(p == field + 1 && *field == 0))
      cut = NULL;
  }
  return cut ? cut : p;
}
