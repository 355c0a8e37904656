/* event-fields.c: an event's fields as (key, value) pairs (see event-fields.h). The list
 * follows gs_trace_event's members in order, so a new member shows up here once. */
#include "event-fields.h"

#include <gradscope/error.h>
#include <gradscope/memory.h>
#include <gradscope/types.h>

const char *gs_trace_origin_name(guint32 origin) {
  static const char *const names[] = {"new", "view", "detach", "clone"};
  return origin < G_N_ELEMENTS(names) ? names[origin] : "unknown";
}

const char *gs_trace_holder_name(guint32 holder) {
  static const char *const names[] = {"caller", "scope",  "module",   "composite",
                                      "tensor", "engine", "optimizer"};
  return holder < G_N_ELEMENTS(names) ? names[holder] : "unknown";
}

const char *gs_trace_object_kind_name(guint32 object_kind) {
  static const char *const names[] = {"tensor", "packed_sequence", "batch", "dataset"};
  return object_kind < G_N_ELEMENTS(names) ? names[object_kind] : "unknown";
}

char *gs_format_handle(guint64 id, char *buf, gsize size) {
  /* A composite's or a dataset's index carries a marker bit (bit 31 or 30: their ids are
   * their own namespace); the engine leaves it out when it names one ("batch #3.1"), and so
   * does this. */
  g_snprintf(buf, size, "#%u.%u", (unsigned)(id & 0x3fffffffu), (unsigned)(id >> 32));
  return buf;
}

typedef struct walk {
  gs_event_field_fn fn;
  gpointer user_data;
} walk;

static void emit_u(const walk *w, const char *key, gs_field_type type, guint64 v) {
  if (!v)
    return;
  gs_event_field f = {.key = key, .type = type, .u = v};
  w->fn(&f, w->user_data);
}

static void emit_s(const walk *w, const char *key, gs_field_type type, const char *s) {
  gs_event_field f = {.key = key, .type = type, .s = s};
  w->fn(&f, w->user_data);
}

static void emit_ids(const walk *w, const char *key, gs_field_type type, const uint64_t *ids,
                     uint32_t n) {
  if (!n || !ids)
    return;
  gs_event_field f = {.key = key, .type = type, .n = n, .ids = (const guint64 *)ids};
  w->fn(&f, w->user_data);
}

void gs_event_fields_foreach(const gs_trace_event *e, const gs_trace_reader *reader,
                             gs_event_field_fn fn, gpointer user_data) {
  const walk w = {fn, user_data};
  gboolean is_tensor_create = e->kind == GS_TRACE_TENSOR_CREATE;
  gboolean has_holder = is_tensor_create || e->kind == GS_TRACE_OWNER_CHANGE;
  /* A tensor's layout: its creation's, and a replacement of its data's. */
  gboolean has_layout = is_tensor_create || e->kind == GS_TRACE_TENSOR_SET_DATA;

  if (e->kind == GS_TRACE_STRING) {
    /* A string-table entry: its name field is the id being defined, not a reference. */
    emit_u(&w, "id", GS_FIELD_ID, e->name);
    emit_s(&w, "text", GS_FIELD_STRING, e->text ? e->text : "");
    return;
  }
  if (e->kind == GS_TRACE_SITE) {
    emit_u(&w, "id", GS_FIELD_ID, e->site);
    GString *frames = g_string_new(NULL);
    for (guint i = 0; i < e->n_frames; i++)
      g_string_append_printf(frames, "%s0x%" G_GINT64_MODIFIER "x", i ? " " : "", e->frames[i]);
    emit_s(&w, "frames", GS_FIELD_STRING, frames->str);
    g_string_free(frames, TRUE);
    if (e->name) /* an interpreter's site (1.5) */
      emit_s(&w, "text", GS_FIELD_STRING, gs_trace_reader_string(reader, e->name));
    return;
  }
  if (e->kind == GS_TRACE_BINARY) {
    g_autofree char *bias = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", e->address);
    emit_s(&w, "bias", GS_FIELD_STRING, bias);
    emit_u(&w, "code_offset", GS_FIELD_ID, (guint64)e->offset);
    emit_u(&w, "code_size", GS_FIELD_ID, e->nbytes);
    emit_s(&w, "path", GS_FIELD_STRING, gs_trace_reader_string(reader, e->name));
    emit_s(&w, "build_id", GS_FIELD_STRING, e->text ? e->text : "");
    return;
  }
  emit_u(&w, "tensor", GS_FIELD_HANDLE, e->tensor);
  emit_u(&w, "target", GS_FIELD_HANDLE, e->target);
  emit_u(&w, "storage", GS_FIELD_ID, e->storage);
  /* A source is a tensor for views, clones and detaches, a storage for storage_share. */
  emit_u(&w, "source", is_tensor_create ? GS_FIELD_HANDLE : GS_FIELD_ID, e->source);
  emit_u(&w, "node", GS_FIELD_ID, e->node);
  emit_u(&w, "scope", GS_FIELD_HANDLE, e->scope);
  emit_u(&w, "outer", GS_FIELD_HANDLE, e->outer);
  emit_u(&w, "object", GS_FIELD_HANDLE, e->object);
  emit_u(&w, "module", GS_FIELD_HANDLE, e->module);
  emit_u(&w, "child", GS_FIELD_HANDLE, e->child);
  emit_u(&w, "optimizer", GS_FIELD_HANDLE, e->optimizer);
  emit_u(&w, "nbytes", GS_FIELD_UINT, e->nbytes);
  /* Not alloc and freed: the reader has turned them into the storage_alloc before the
   * tensor_create and the storage_free after the tensor_dispose, listed as events of their
   * own, as a 1.1 log had them. */
  if (e->offset) {
    gs_event_field f = {.key = "offset", .type = GS_FIELD_INT, .i = e->offset};
    fn(&f, user_data);
  }
  emit_u(&w, "version", GS_FIELD_UINT, e->version);
  if (e->name)
    emit_s(&w, "name", GS_FIELD_STRING, gs_trace_reader_string(reader, e->name));
  if (e->op)
    emit_s(&w, "op", GS_FIELD_STRING, gs_trace_reader_string(reader, e->op));
  if (e->dtype || has_layout)
    emit_s(&w, "dtype", GS_FIELD_ENUM, gs_dtype_name((gs_dtype)e->dtype));
  if (e->origin || is_tensor_create)
    emit_s(&w, "origin", GS_FIELD_ENUM, gs_trace_origin_name(e->origin));
  if (e->previous_holder || e->kind == GS_TRACE_OWNER_CHANGE)
    emit_s(&w, "previous_holder", GS_FIELD_ENUM, gs_trace_holder_name(e->previous_holder));
  emit_u(&w, "previous_owner", GS_FIELD_HANDLE, e->previous_owner);
  if (e->holder || has_holder)
    emit_s(&w, "holder", GS_FIELD_ENUM, gs_trace_holder_name(e->holder));
  emit_u(&w, "owner", GS_FIELD_HANDLE, e->owner); /* scope, module, composite or tensor */
  if (e->object_kind || e->kind == GS_TRACE_COMPOSITE_CREATE)
    emit_s(&w, "object_kind", GS_FIELD_ENUM, gs_trace_object_kind_name(e->object_kind));
  if (e->code)
    emit_s(&w, "code", GS_FIELD_ENUM, gs_error_code_name((gs_error_code)e->code));
  if (e->requires_grad || is_tensor_create || e->kind == GS_TRACE_REQUIRES_GRAD) {
    gs_event_field f = {.key = "requires_grad", .type = GS_FIELD_BOOL, .b = e->requires_grad};
    fn(&f, user_data);
  }
  int ndim = CLAMP(e->ndim, 0, GS_MAX_DIMS);
  if (ndim > 0 || has_layout) {
    gs_event_field f = {.key = "shape", .type = GS_FIELD_DIMS, .n = (guint)ndim,
                        .dims = (const gint64 *)e->shape};
    fn(&f, user_data);
    f.key = "strides";
    f.dims = (const gint64 *)e->strides;
    fn(&f, user_data);
  }
  emit_ids(&w, "inputs", GS_FIELD_IDS, e->inputs, e->n_inputs);
  emit_ids(&w, "saved", GS_FIELD_HANDLES, e->saved, e->n_saved);
  emit_ids(&w, "parts", GS_FIELD_HANDLES, e->parts, e->n_parts);
  emit_ids(&w, "params", GS_FIELD_HANDLES, e->params, e->n_params);
  emit_u(&w, "site", GS_FIELD_ID, e->site);
  if (e->memory) /* format 1.4: bytes the engine's allocator did not make */
    emit_s(&w, "memory", GS_FIELD_ENUM, gs_memory_origin_name((gs_memory_origin)e->memory));
  emit_u(&w, "peer", GS_FIELD_UINT, e->peer);
  if (e->kind == GS_TRACE_DIST_INIT) { /* format 1.7: rank 0 is a value, not "none" */
    gs_event_field f = {.key = "rank", .type = GS_FIELD_UINT, .u = e->rank};
    fn(&f, user_data);
    emit_u(&w, "world", GS_FIELD_UINT, e->world);
    g_autofree char *run = g_strdup_printf("%016" G_GINT64_MODIFIER "x", e->run);
    emit_s(&w, "run", GS_FIELD_STRING, run);
  }
  emit_u(&w, "collective", GS_FIELD_UINT, e->collective);
  if (e->bucket > 0 || (e->bucket == 0 &&
                        (e->kind == GS_TRACE_BUCKET_READY || e->kind == GS_TRACE_COLLECTIVE_BEGIN ||
                         e->kind == GS_TRACE_COLLECTIVE_END))) {
    gs_event_field f = {.key = "bucket", .type = GS_FIELD_INT, .i = e->bucket};
    fn(&f, user_data);
  }
  emit_u(&w, "waited_ns", GS_FIELD_UINT, e->waited_ns);
  emit_u(&w, "in_place", GS_FIELD_UINT, e->in_place);
  if (e->n_values && e->values) {
    gs_event_field f = {.key = "values", .type = GS_FIELD_REALS, .n = e->n_values,
                        .reals = e->values};
    fn(&f, user_data);
  }
  if (e->text)
    emit_s(&w, "text", GS_FIELD_STRING, e->text);
}
