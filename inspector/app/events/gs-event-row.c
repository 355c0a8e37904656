/* gs-event-row.c: an event list row. It holds an index, not a decoded event: decoding
 * happens when a row is bound on screen, and the summary is kept while the row lives. */
#include "gs-event-row.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "dispose-reason.h"
#include "escape.h"
#include "event-fields.h"

struct _GsEventRow {
  GObject parent_instance;
  gs_trace_model *model;
  guint64 index;
  guint32 rank;        /* the rank whose log it is in, G_MAXUINT32 for a single log */
  guint64 time_offset; /* added to its log's time: a run's shared axis (rank-run.h) */
  char *summary;
  const char *site; /* the site table's text (decoded with the summary), or NULL */
};

G_DEFINE_FINAL_TYPE(GsEventRow, gs_event_row, G_TYPE_OBJECT)

GsEventRow *gs_event_row_new(gs_trace_model *model, guint64 index) {
  GsEventRow *self = g_object_new(GS_TYPE_EVENT_ROW, NULL);
  self->model = model;
  self->index = index;
  self->rank = G_MAXUINT32;
  return self;
}

GsEventRow *gs_event_row_new_ranked(gs_trace_model *model, guint64 index, guint32 rank,
                                    guint64 time_offset) {
  GsEventRow *self = gs_event_row_new(model, index);
  self->rank = rank;
  self->time_offset = time_offset;
  return self;
}

gs_trace_model *gs_event_row_get_model(GsEventRow *self) {
  g_return_val_if_fail(GS_IS_EVENT_ROW(self), NULL);
  return self->model;
}

char *gs_event_row_dup_rank(GsEventRow *self) {
  g_return_val_if_fail(GS_IS_EVENT_ROW(self), NULL);
  return self->rank == G_MAXUINT32 ? g_strdup("") : g_strdup_printf("%u", self->rank);
}

guint64 gs_event_row_get_index(GsEventRow *self) {
  g_return_val_if_fail(GS_IS_EVENT_ROW(self), 0);
  return self->index;
}

char *gs_event_row_dup_seq(GsEventRow *self) {
  return g_strdup_printf("%" G_GUINT64_FORMAT, gs_trace_model_seq_at(self->model, self->index));
}

char *gs_format_event_time(guint64 ns) {
  return g_strdup_printf("%" G_GUINT64_FORMAT ".%06u s", ns / 1000000000u,
                         (unsigned)(ns % 1000000000u / 1000u));
}

char *gs_event_row_dup_time(GsEventRow *self) {
  return gs_format_event_time(self->time_offset + gs_trace_model_time_at(self->model, self->index));
}

char *gs_event_row_dup_thread(GsEventRow *self) {
  return g_strdup_printf("%u", gs_trace_model_thread_at(self->model, self->index));
}

const char *gs_event_row_get_kind(GsEventRow *self) {
  return gs_trace_kind_name(gs_trace_model_kind_at(self->model, self->index));
}

static char *summary_of(gs_trace_model *model, const gs_trace_event *e);

/* Decodes the row's event once, for its summary and its site: the columns bind in any order,
 * and decoding events out of order re-reads their chunk from its start each time. */
static void decode(GsEventRow *self) {
  if (self->summary)
    return;
  gs_trace_event e;
  if (!gs_trace_model_event(self->model, self->index, &e)) {
    self->summary = g_strdup("");
    return;
  }
  self->summary = summary_of(self->model, &e);
  if (e.site)
    self->site = gs_site_table_where(gs_trace_model_sites(self->model), e.site);
}

const char *gs_event_row_get_summary(GsEventRow *self) {
  decode(self);
  return self->summary;
}

const char *gs_event_row_get_site(GsEventRow *self) {
  decode(self);
  return self->site ? self->site : "";
}

static void append_handle(GString *out, const char *what, guint64 id) {
  char buf[32];
  if (out->len)
    g_string_append_c(out, ' ');
  g_string_append_printf(out, "%s %s", what, gs_format_handle(id, buf, sizeof buf));
}

static void append_shape(GString *out, const gs_trace_event *e) {
  g_string_append(out, " [");
  for (int d = 0; d < e->ndim; d++)
    g_string_append_printf(out, d ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, e->shape[d]);
  g_string_append_c(out, ']');
}

static void append_text(GString *out, const char *text) {
  if (!text || !*text)
    return;
  if (out->len)
    g_string_append_c(out, ' ');
  g_string_append(out, text);
}

/* Who holds an object, translated (the CLI's gs_trace_holder_name stays English: it is a
 * machine-readable field there). */
static const char *holder_label(guint32 holder) {
  switch ((gs_trace_holder)holder) {
  case GS_TRACE_HELD_BY_CALLER:
    return _("the program");
  case GS_TRACE_HELD_BY_SCOPE:
    return _("scope");
  case GS_TRACE_HELD_BY_MODULE:
    return _("module");
  case GS_TRACE_HELD_BY_COMPOSITE:
    return _("composite");
  case GS_TRACE_HELD_BY_TENSOR:
    return _("tensor");
  case GS_TRACE_HELD_BY_ENGINE:
    return _("engine");
  default:
    return gs_trace_holder_name(holder); /* named by the log's reader, untranslated */
  }
}

/* Tensor, scope, op or name first: what a person scanning the list looks for. The nouns are
 * translated; op and scope names come from the program and are shown as they are. */
char *gs_event_summary(gs_trace_model *model, guint64 index) {
  gs_trace_event e;
  if (!gs_trace_model_event(model, index, &e))
    return g_strdup("");
  return summary_of(model, &e);
}

/* What one row's summary is made from: the event, its name and op strings (NULL if none). */
typedef struct {
  GString *out;
  gs_trace_model *model;
  const gs_trace_event *e;
  const char *name;
  const char *op;
} row_words;

static void storage_with_size(row_words *w) {
  g_string_append_printf(w->out, _("storage %" PRIu64), w->e->storage);
  if (w->e->nbytes) {
    g_autofree char *size = g_format_size_full(w->e->nbytes, G_FORMAT_SIZE_IEC_UNITS);
    g_string_append_printf(w->out, " (%s)", size);
  }
}

static void just_tensor(row_words *w) { append_handle(w->out, _("tensor"), w->e->tensor); }

static void just_node(row_words *w) {
  g_string_append_printf(w->out, _("node #%" PRIu64), w->e->node);
}

/* A scope's end names no scope: its name is the state's. */
static void scope_and_name(row_words *w) {
  append_handle(w->out, _("scope"), w->e->scope);
  const char *name = w->name;
  if (!name) {
    const gs_replay_scope *scope = gs_trace_model_scope(w->model, w->e->scope);
    name = scope ? scope->name : NULL;
  }
  append_text(w->out, name);
}

static void objects_alive(row_words *w) {
  g_string_append_printf(
      w->out, ngettext("%" PRIu64 " object alive", "%" PRIu64 " objects alive", w->e->count),
      w->e->count);
}

/* A table entry, not an event: the list never shows it. */
static void no_row(row_words *w) { (void)w; }

static void row_string(row_words *w) { no_row(w); }
static void row_site(row_words *w) { no_row(w); }
static void row_binary(row_words *w) { no_row(w); }
static void row_storage_alloc(row_words *w) { storage_with_size(w); }
static void row_storage_materialise(row_words *w) { storage_with_size(w); }
static void row_storage_free(row_words *w) { storage_with_size(w); }

static void row_storage_share(row_words *w) {
  g_string_append_printf(w->out, _("storage %" PRIu64 " shares storage %" PRIu64), w->e->storage,
                         w->e->source);
}

static void row_tensor_create(row_words *w) {
  just_tensor(w);
  append_shape(w->out, w->e);
  append_text(w->out, w->op);
  if (w->e->source)
    append_handle(w->out, _("from"), w->e->source);
}

static void row_tensor_dispose(row_words *w) {
  g_autofree char *reason = gs_dispose_reason_text(w->name);
  just_tensor(w);
  append_text(w->out, reason);
}

static void row_tensor_move(row_words *w) {
  just_tensor(w);
  append_handle(w->out, "→", w->e->target);
}

static void row_requires_grad(row_words *w) {
  just_tensor(w);
  append_text(w->out, w->e->requires_grad ? _("requires grad") : _("no grad"));
}

static void row_tensor_set_data(row_words *w) {
  just_tensor(w);
  append_text(w->out, gs_dtype_name((gs_dtype)w->e->dtype));
  append_handle(w->out, _("storage"), w->e->storage);
}

static void row_tensor_name(row_words *w) {
  just_tensor(w);
  if (w->name)
    g_string_append_printf(w->out, " “%s”", w->name);
}

static void row_inplace_write(row_words *w) {
  just_tensor(w);
  append_text(w->out, w->op);
  g_string_append_c(w->out, ' ');
  g_string_append_printf(w->out, _("version %" PRIu64), w->e->version);
}

static void row_owner_change(row_words *w) {
  append_handle(w->out, _("object"), w->e->object);
  g_string_append_printf(w->out, " %s → %s", holder_label(w->e->previous_holder),
                         holder_label(w->e->holder));
}

static void row_scope_begin(row_words *w) { scope_and_name(w); }
static void row_scope_end(row_words *w) { scope_and_name(w); }

static void row_node_create(row_words *w) {
  append_text(w->out, w->name);
  g_string_append_printf(w->out, " #%" G_GUINT64_FORMAT, w->e->node);
  if (w->e->tensor)
    append_handle(w->out, "→", w->e->tensor);
}

static void row_node_free_saved(row_words *w) { just_node(w); }

/* saved_pack, saved_unpack: the node, the tensor it saved (or got back), its storage. */
static void saved_tensor_of_node(row_words *w) {
  just_node(w);
  if (w->e->tensor)
    append_handle(w->out, _("tensor"), w->e->tensor);
  append_handle(w->out, _("storage"), w->e->storage);
}

static void row_saved_pack(row_words *w) { saved_tensor_of_node(w); }
static void row_saved_unpack(row_words *w) { saved_tensor_of_node(w); }
static void row_node_release(row_words *w) { just_node(w); }
static void row_backward_begin(row_words *w) { just_tensor(w); }
static void row_backward_end(row_words *w) { just_tensor(w); }
static void row_values(row_words *w) { just_tensor(w); }

static void row_grad_accumulate(row_words *w) {
  just_tensor(w);
  append_handle(w->out, _("grad"), w->e->target);
}

static void row_module_create(row_words *w) {
  append_handle(w->out, _("module"), w->e->module);
  append_text(w->out, w->name);
}

static void row_module_parameter(row_words *w) {
  row_module_create(w);
  append_handle(w->out, "=", w->e->tensor);
}

static void row_module_child(row_words *w) {
  row_module_create(w);
  append_handle(w->out, "=", w->e->child);
}

static void row_optimizer_create(row_words *w) {
  append_handle(w->out, _("optimizer"), w->e->optimizer);
  append_text(w->out, w->name);
  g_string_append_c(w->out, ' ');
  g_string_append_printf(w->out, ngettext("%u parameter", "%u parameters", w->e->n_params),
                         w->e->n_params);
}

static void row_composite_create(row_words *w) {
  append_handle(w->out, gs_trace_object_kind_name(w->e->object_kind), w->e->object);
}

static void row_mark(row_words *w) { append_text(w->out, w->name); }
static void row_error(row_words *w) { append_text(w->out, w->e->text); }
static void row_snapshot_begin(row_words *w) { objects_alive(w); }
static void row_snapshot_end(row_words *w) { objects_alive(w); }
static void row_dist_init(row_words *w) {
  g_string_append_printf(w->out, _("rank %u of %u, run %016" PRIx64), w->e->rank, w->e->world,
                         w->e->run);
}

/* A bucket's or a collective's bytes: "allreduce #3 bucket 0 2.6 MiB, waited 0.120 ms". */
static void collective_with_size(row_words *w) {
  const gs_trace_event *e = w->e;
  g_autofree char *size = g_format_size_full(e->nbytes, G_FORMAT_SIZE_IEC_UNITS);
  if (e->kind != GS_TRACE_BUCKET_READY)
    g_string_append_printf(w->out, "%s #%" PRIu64 " ", w->op ? w->op : "", e->collective);
  if (e->bucket >= 0)
    g_string_append_printf(w->out, _("bucket %d "), e->bucket);
  g_string_append(w->out, size);
  if (e->kind == GS_TRACE_COLLECTIVE_END)
    g_string_append_printf(w->out, _(", waited %.3f ms"), (double)e->waited_ns / 1e6);
}

static void row_bucket_ready(row_words *w) { collective_with_size(w); }
static void row_collective_begin(row_words *w) { collective_with_size(w); }
static void row_collective_end(row_words *w) { collective_with_size(w); }
static void row_wait_begin(row_words *w) { append_text(w->out, w->name); }

static void row_wait_end(row_words *w) {
  append_text(w->out, w->name);
  g_string_append_printf(w->out, _(", waited %.3f ms"), (double)w->e->waited_ns / 1e6);
}

/* A user's named range: its label, as the profiler's table lists it. */
static void row_range_begin(row_words *w) { append_text(w->out, w->name); }
static void row_range_end(row_words *w) { append_text(w->out, w->name); }

/* One summary function per kind, from the kinds list: a new kind without its row_ function
 * does not compile. */
typedef void (*kind_row)(row_words *w);
#define KIND_ROW(KIND, kind, value, flags) [GS_TRACE_##KIND] = row_##kind,
static const kind_row rows[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_ROW)};
#undef KIND_ROW

static char *summary_of(gs_trace_model *model, const gs_trace_event *e) {
  row_words w = {
      .out = g_string_new(NULL),
      .model = model,
      .e = e,
      .name = e->name ? gs_trace_model_string(model, e->name) : NULL,
      .op = e->op ? gs_trace_model_string(model, e->op) : NULL,
  };
  if (e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT) /* a newer kind: no summary */
    rows[e->kind](&w);
  /* Only names make a summary long: a row shows GS_TEXT_SHOWN_MAX characters of a hostile
   * one, not the 64 KB Pango would shape whenever the row is bound. */
  if (w.out->len <= 2 * GS_TEXT_SHOWN_MAX)
    return g_string_free(w.out, FALSE);
  g_autofree char *whole = g_string_free(w.out, FALSE);
  return gs_text_clip(whole, 2 * GS_TEXT_SHOWN_MAX);
}

static void gs_event_row_finalize(GObject *object) {
  GsEventRow *self = GS_EVENT_ROW(object);
  g_free(self->summary);
  G_OBJECT_CLASS(gs_event_row_parent_class)->finalize(object);
}

static void gs_event_row_class_init(GsEventRowClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = gs_event_row_finalize;
}

static void gs_event_row_init(GsEventRow *self) {
  (void)self;
}
