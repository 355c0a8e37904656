/* trace-test-util.c: see trace-test-util.h. */
#include "trace-test-util.h"

#include <math.h>

/* ---- sample events: one per kind, every field it carries set and non-zero ---------------- */

/* Except alloc and freed (format 1.2): set, they make the reader deliver a storage event of
 * their own beside the tensor event (test_folded_storage_events), and the samples stand for
 * one event each. */

static const uint64_t node_inputs[] = {7, 0, UINT64_C(1) << 40};
static const uint64_t node_saved[] = {UINT64_C(0x100000002), 3};
static const uint64_t composite_parts[] = {11, 12, 13, 14};
static const uint64_t optimizer_params[] = {UINT64_C(0x100000040), UINT64_C(0x100000041), 46};
static const double tensor_values[] = {1.5, -0.0, -2.25e300, INFINITY, 4.9e-324, NAN};
static const uint64_t site_frames[] = {UINT64_C(0x55d0c0de1234), UINT64_C(0x7f0011223344), 1};
static const char build_id[] = "8a3f10c2e9d4b7a6f5e4d3c2b1a0998877665544";
static const char error_text[] = "add: shapes [2, 3] and [3, 2] do not broadcast";

gs_trace_event sample(gs_trace_kind kind) {
  switch (kind) {
  case GS_TRACE_STRING:
    return (gs_trace_event){.kind = kind, .name = 5, .text = "MulBackward", .text_len = 11};
  case GS_TRACE_STORAGE_ALLOC:
    return (gs_trace_event){.kind = kind, .storage = UINT64_C(0x300000001), .nbytes = 1 << 20};
  case GS_TRACE_STORAGE_SHARE:
    return (gs_trace_event){.kind = kind, .storage = 9, .source = 8, .nbytes = 96};
  case GS_TRACE_STORAGE_MATERIALISE:
    return (gs_trace_event){.kind = kind, .storage = 9, .nbytes = 96};
  case GS_TRACE_STORAGE_FREE:
    return (gs_trace_event){.kind = kind, .storage = UINT64_MAX};
  case GS_TRACE_TENSOR_CREATE:
    return (gs_trace_event){.kind = kind, .tensor = UINT64_C(0x200000005), .storage = 9,
                            .dtype = GS_F64, .origin = 1, .source = UINT64_C(0x100000004),
                            .op = 17, .requires_grad = true, .offset = -12, .ndim = 3,
                            .shape = {2, 3, 4}, .strides = {-12, 4, -1},
                            .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 77, .site = 3};
  case GS_TRACE_TENSOR_DISPOSE:
    return (gs_trace_event){.kind = kind, .tensor = 42, .name = 6};
  case GS_TRACE_TENSOR_MOVE:
    return (gs_trace_event){.kind = kind, .tensor = 42, .target = UINT64_C(0x700000042)};
  case GS_TRACE_TENSOR_NAME:
    return (gs_trace_event){.kind = kind, .tensor = 42, .name = 300};
  case GS_TRACE_REQUIRES_GRAD:
    return (gs_trace_event){.kind = kind, .tensor = 42, .requires_grad = true, .site = 5};
  case GS_TRACE_TENSOR_SET_DATA:
    return (gs_trace_event){.kind = kind, .tensor = 42, .storage = 10, .dtype = GS_F64, .op = 19,
                            .offset = 3, .ndim = 2, .shape = {4, 5}, .strides = {1, -4},
                            .site = 6};
  case GS_TRACE_SAVED_PACK:
    return (gs_trace_event){
        .kind = kind, .node = 31, .tensor = UINT64_C(0x100000002), .storage = 9, .site = 7};
  case GS_TRACE_SAVED_UNPACK:
    return (gs_trace_event){.kind = kind, .node = 31, .tensor = 46, .storage = 11, .site = 8};
  case GS_TRACE_INPLACE_WRITE:
    return (gs_trace_event){.kind = kind, .tensor = 42, .storage = 9, .version = 3, .op = 18,
                            .site = 70000};
  case GS_TRACE_OWNER_CHANGE:
    return (gs_trace_event){.kind = kind, .object = 42, .previous_holder = GS_TRACE_HELD_BY_SCOPE,
                            .previous_owner = 2, .holder = GS_TRACE_HELD_BY_MODULE, .owner = 5};
  case GS_TRACE_SCOPE_BEGIN:
    return (gs_trace_event){.kind = kind, .scope = 3, .outer = 2, .name = 7, .site = 4};
  case GS_TRACE_SCOPE_END:
    return (gs_trace_event){.kind = kind, .scope = 3};
  case GS_TRACE_NODE_CREATE:
    return (gs_trace_event){.kind = kind, .node = 31, .name = 5, .tensor = 43, .n_inputs = 3,
                            .inputs = node_inputs, .n_saved = 2, .saved = node_saved};
  case GS_TRACE_NODE_FREE_SAVED:
    return (gs_trace_event){.kind = kind, .node = 31};
  case GS_TRACE_NODE_RELEASE:
    return (gs_trace_event){.kind = kind, .node = 31};
  case GS_TRACE_BACKWARD_BEGIN:
    return (gs_trace_event){.kind = kind, .tensor = 44, .node = 32};
  case GS_TRACE_BACKWARD_END:
    return (gs_trace_event){.kind = kind, .tensor = 44};
  case GS_TRACE_GRAD_ACCUMULATE:
    return (gs_trace_event){.kind = kind, .tensor = 40, .target = 45};
  case GS_TRACE_MODULE_CREATE:
    return (gs_trace_event){.kind = kind, .module = 1, .name = 8};
  case GS_TRACE_MODULE_PARAMETER:
    return (gs_trace_event){.kind = kind, .module = 1, .name = 9, .tensor = 40};
  case GS_TRACE_COMPOSITE_CREATE:
    return (gs_trace_event){.kind = kind, .object = 50, .object_kind = 2, .n_parts = 4,
                            .parts = composite_parts};
  case GS_TRACE_MARK:
    return (gs_trace_event){.kind = kind, .name = 10};
  case GS_TRACE_ERROR:
    return (gs_trace_event){.kind = kind, .code = 3, .text = error_text,
                            .text_len = sizeof error_text - 1, .site = 1};
  case GS_TRACE_VALUES:
    return (gs_trace_event){.kind = kind, .tensor = 43, .n_values = G_N_ELEMENTS(tensor_values),
                            .values = tensor_values};
  case GS_TRACE_MODULE_CHILD:
    return (gs_trace_event){.kind = kind, .module = 1, .child = UINT64_C(0x200000003),
                            .name = 11};
  case GS_TRACE_OPTIMIZER_CREATE:
    return (gs_trace_event){.kind = kind, .optimizer = UINT64_C(0x100000002), .name = 12,
                            .n_params = G_N_ELEMENTS(optimizer_params),
                            .params = optimizer_params};
  case GS_TRACE_SITE:
    /* name since 1.5 (an interpreter's site text); a writer sets frames or name, the codec
     * carries both. */
    return (gs_trace_event){.kind = kind, .site = 3, .n_frames = G_N_ELEMENTS(site_frames),
                            .frames = site_frames, .name = 14};
  case GS_TRACE_BINARY:
    return (gs_trace_event){.kind = kind, .address = UINT64_C(0x7f1234560000), .offset = 0x1000,
                            .nbytes = 0x52000, .name = 13, .text = build_id,
                            .text_len = sizeof build_id - 1};
  case GS_TRACE_SNAPSHOT_BEGIN:
    return (gs_trace_event){.kind = kind, .name = 14, .count = 300000};
  case GS_TRACE_SNAPSHOT_END:
    return (gs_trace_event){.kind = kind, .count = 300000};
  case GS_TRACE_DIST_INIT:
    return (gs_trace_event){.kind = kind, .rank = 3, .world = 4,
                            .run = UINT64_C(0xfedcba9876543210)};
  case GS_TRACE_BUCKET_READY:
    return (gs_trace_event){.kind = kind,
                            .bucket = 2,
                            .nbytes = 2 << 20,
                            .n_params = G_N_ELEMENTS(optimizer_params),
                            .params = optimizer_params,
                            .in_place = (2 << 20) - 2048};
  case GS_TRACE_COLLECTIVE_BEGIN:
    return (gs_trace_event){.kind = kind, .op = 19, .collective = 70000, .nbytes = 2 << 20,
                            .bucket = -1};
  case GS_TRACE_COLLECTIVE_END:
    return (gs_trace_event){.kind = kind, .op = 19, .collective = 70000, .nbytes = 2 << 20,
                            .bucket = 5, .waited_ns = UINT64_C(123456789012)};
  case GS_TRACE_WAIT_BEGIN:
    return (gs_trace_event){.kind = kind, .name = 15};
  case GS_TRACE_WAIT_END:
    return (gs_trace_event){.kind = kind, .name = 15, .waited_ns = 999};
  case GS_TRACE_RANGE_BEGIN:
  case GS_TRACE_RANGE_END: return (gs_trace_event){.kind = kind, .name = 15, .site = 6};
  case GS_TRACE_KIND_COUNT:
    break;
  }
  g_assert_not_reached();
}

GArray *every_kind(void) {
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++) {
    gs_trace_event e = sample((gs_trace_kind)k);
    e.seq = 1000 + 3 * (uint64_t)k;
    e.time_ns = k == 7 ? 4000 : 5000 + 250 * (uint64_t)k;
    g_array_append_val(events, e);
  }
  return events;
}

/* ---- reading and comparing ---------------------------------------------------------------- */

static gs_trace_event *event_dup(const gs_trace_event *e) {
  gs_trace_event *c = g_memdup2(e, sizeof *e);
  c->inputs = e->n_inputs ? g_memdup2(e->inputs, e->n_inputs * sizeof *e->inputs) : NULL;
  c->saved = e->n_saved ? g_memdup2(e->saved, e->n_saved * sizeof *e->saved) : NULL;
  c->parts = e->n_parts ? g_memdup2(e->parts, e->n_parts * sizeof *e->parts) : NULL;
  c->params = e->n_params ? g_memdup2(e->params, e->n_params * sizeof *e->params) : NULL;
  c->frames = e->n_frames ? g_memdup2(e->frames, e->n_frames * sizeof *e->frames) : NULL;
  c->values = e->n_values ? g_memdup2(e->values, e->n_values * sizeof *e->values) : NULL;
  c->text = e->text ? g_memdup2(e->text, (gsize)e->text_len + 1) : NULL;
  return c;
}

static void event_free(gpointer p) {
  gs_trace_event *e = p;
  g_free((void *)e->inputs);
  g_free((void *)e->saved);
  g_free((void *)e->parts);
  g_free((void *)e->params);
  g_free((void *)e->frames);
  g_free((void *)e->values);
  g_free((void *)e->text);
  g_free(e);
}

void drain(read_result *res) {
  gs_trace_event e;
  while ((res->status = gs_trace_reader_next(res->reader, &e)) == GS_TRACE_EVENT)
    g_ptr_array_add(res->events, event_dup(&e));
}

read_result read_log(const uint8_t *data, size_t len, size_t step) {
  read_result res = {gs_trace_reader_new(), g_ptr_array_new_with_free_func(event_free), 0};
  for (size_t at = 0; at < len; at += step) {
    gs_trace_reader_feed(res.reader, data + at, MIN(step, len - at));
    drain(&res);
  }
  drain(&res);
  return res;
}

void read_result_clear(read_result *res) {
  gs_trace_reader_free(res->reader);
  g_ptr_array_unref(res->events);
}

static void assert_array_equal(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb) {
  g_assert_cmpuint(na, ==, nb);
  for (uint32_t i = 0; i < na; i++)
    g_assert_cmpuint(a[i], ==, b[i]);
}

void assert_event_equal(const gs_trace_event *want, const gs_trace_event *got) {
  g_assert_cmpstr(gs_trace_kind_name(got->kind), ==, gs_trace_kind_name(want->kind));
  g_assert_cmpuint(got->thread, ==, want->thread);
  g_assert_cmpuint(got->seq, ==, want->seq);
  g_assert_cmpuint(got->time_ns, ==, want->time_ns);
  g_assert_cmpuint(got->tensor, ==, want->tensor);
  g_assert_cmpuint(got->target, ==, want->target);
  g_assert_cmpuint(got->storage, ==, want->storage);
  g_assert_cmpuint(got->source, ==, want->source);
  g_assert_cmpuint(got->node, ==, want->node);
  g_assert_cmpuint(got->scope, ==, want->scope);
  g_assert_cmpuint(got->outer, ==, want->outer);
  g_assert_cmpuint(got->object, ==, want->object);
  g_assert_cmpuint(got->module, ==, want->module);
  g_assert_cmpuint(got->child, ==, want->child);
  g_assert_cmpuint(got->optimizer, ==, want->optimizer);
  g_assert_cmpuint(got->nbytes, ==, want->nbytes);
  g_assert_cmpuint(got->alloc, ==, want->alloc);
  g_assert_cmpuint(got->freed, ==, want->freed);
  g_assert_cmpuint(got->shared, ==, want->shared);
  g_assert_cmpint(got->derived, ==, want->derived);
  g_assert_cmpint(got->offset, ==, want->offset);
  g_assert_cmpuint(got->version, ==, want->version);
  g_assert_cmpuint(got->name, ==, want->name);
  g_assert_cmpuint(got->op, ==, want->op);
  g_assert_cmpuint(got->dtype, ==, want->dtype);
  g_assert_cmpuint(got->origin, ==, want->origin);
  g_assert_cmpuint(got->holder, ==, want->holder);
  g_assert_cmpuint(got->previous_holder, ==, want->previous_holder);
  g_assert_cmpuint(got->owner, ==, want->owner);
  g_assert_cmpuint(got->previous_owner, ==, want->previous_owner);
  g_assert_cmpuint(got->object_kind, ==, want->object_kind);
  g_assert_cmpuint(got->code, ==, want->code);
  g_assert_cmpint(got->requires_grad, ==, want->requires_grad);
  g_assert_cmpint(got->ndim, ==, want->ndim);
  for (int i = 0; i < GS_MAX_DIMS; i++) {
    g_assert_cmpint(got->shape[i], ==, want->shape[i]);
    g_assert_cmpint(got->strides[i], ==, want->strides[i]);
  }
  assert_array_equal(want->inputs, want->n_inputs, got->inputs, got->n_inputs);
  assert_array_equal(want->saved, want->n_saved, got->saved, got->n_saved);
  assert_array_equal(want->parts, want->n_parts, got->parts, got->n_parts);
  assert_array_equal(want->params, want->n_params, got->params, got->n_params);
  assert_array_equal(want->frames, want->n_frames, got->frames, got->n_frames);
  g_assert_cmpuint(got->site, ==, want->site);
  g_assert_cmpuint(got->address, ==, want->address);
  g_assert_cmpuint(got->memory, ==, want->memory);
  g_assert_cmpuint(got->peer, ==, want->peer);
  g_assert_cmpuint(got->count, ==, want->count);
  g_assert_cmpuint(got->rank, ==, want->rank);
  g_assert_cmpuint(got->world, ==, want->world);
  g_assert_cmpuint(got->run, ==, want->run);
  g_assert_cmpint(got->bucket, ==, want->bucket);
  g_assert_cmpuint(got->collective, ==, want->collective);
  g_assert_cmpuint(got->waited_ns, ==, want->waited_ns);
  g_assert_cmpuint(got->in_place, ==, want->in_place);
  g_assert_cmpuint(got->n_values, ==, want->n_values);
  /* Bit for bit: -0.0 and NaN must survive too. */
  if (want->n_values)
    g_assert_cmpmem(got->values, got->n_values * 8, want->values, want->n_values * 8);
  g_assert_cmpuint(got->text_len, ==, want->text_len);
  if (want->text) {
    g_assert_nonnull(got->text);
    g_assert_cmpmem(got->text, got->text_len, want->text, want->text_len);
    g_assert_cmpint(got->text[got->text_len], ==, '\0');
  } else {
    g_assert_null(got->text);
  }
}

void assert_events_equal(GArray *want, GPtrArray *got, guint n) {
  g_assert_cmpuint(got->len, ==, n);
  for (guint i = 0; i < n; i++)
    assert_event_equal(&g_array_index(want, gs_trace_event, i), got->pdata[i]);
}

tw_log make_log(GArray *events, guint per_chunk, uint32_t thread, GArray *chunk_ends) {
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 1700000000000000000u, 4242);
  for (guint i = 0; i < events->len; i += per_chunk) {
    for (guint j = i; j < MIN(i + per_chunk, events->len); j++)
      g_array_index(events, gs_trace_event, j).thread = thread;
    tw_chunk(&log, thread, &g_array_index(events, gs_trace_event, i),
             MIN(per_chunk, events->len - i));
    if (chunk_ends) {
      size_t end = log.len;
      g_array_append_val(chunk_ends, end);
    }
  }
  return log;
}

/* ---- hand-made payloads ------------------------------------------------------------------- */

void put_uv(GByteArray *b, uint64_t v) {
  uint8_t tmp[10];
  g_byte_array_append(b, tmp, (guint)(gs__put_uvarint(tmp, v) - tmp));
}

void put_bytes(GByteArray *b, const char *bytes, guint n) {
  g_byte_array_append(b, (const guint8 *)bytes, n);
}

GByteArray *body_new(int64_t seq_delta, int64_t time_delta) {
  GByteArray *b = g_byte_array_new();
  uint8_t tmp[20], *p = gs__put_svarint(gs__put_svarint(tmp, seq_delta), time_delta);
  g_byte_array_append(b, tmp, (guint)(p - tmp));
  return b;
}

void put_event(GByteArray *payload, unsigned kind, GByteArray *body) {
  guint8 k = (guint8)kind;
  g_byte_array_append(payload, &k, 1);
  put_uv(payload, body->len);
  g_byte_array_append(payload, body->data, body->len);
  g_byte_array_unref(body);
}

void put_sample(GByteArray *payload, gs_trace_kind kind, int64_t seq_delta) {
  put_sample_ids(payload, kind, seq_delta, NULL);
}

void put_sample_ids(GByteArray *payload, gs_trace_kind kind, int64_t seq_delta,
                    gs__trace_ids *ids) {
  gs_trace_event e = sample(kind);
  e.seq = (uint64_t)seq_delta;
  uint8_t *tmp = g_malloc(gs__trace_max_event_size(&e));
  uint8_t *body = tmp + 11;
  uint8_t *end = gs__trace_encode_body_as(body, &e, seq_delta, 0, GS__TRACE_SCHEMA_MINOR, ids);
  uint8_t *p = tmp;
  *p++ = (uint8_t)kind;
  p = gs__put_uvarint(p, (uint64_t)(end - body));
  memmove(p, body, (size_t)(end - body));
  g_byte_array_append(payload, tmp, (guint)(p + (end - body) - tmp));
  g_free(tmp);
}
