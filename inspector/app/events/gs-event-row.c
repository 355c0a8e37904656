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
  char *summary;
  const char *site; /* the site table's text (decoded with the summary), or NULL */
};

G_DEFINE_FINAL_TYPE(GsEventRow, gs_event_row, G_TYPE_OBJECT)

GsEventRow *gs_event_row_new(gs_trace_model *model, guint64 index) {
  GsEventRow *self = g_object_new(GS_TYPE_EVENT_ROW, NULL);
  self->model = model;
  self->index = index;
  return self;
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
  return gs_format_event_time(gs_trace_model_time_at(self->model, self->index));
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

static char *summary_of(gs_trace_model *model, const gs_trace_event *ev) {
  const gs_trace_event e = *ev;
  GString *out = g_string_new(NULL);
  const char *name = e.name ? gs_trace_model_string(model, e.name) : NULL;
  const char *op = e.op ? gs_trace_model_string(model, e.op) : NULL;
  _Static_assert(GS_TRACE_KIND_COUNT == 39,
                 "gs-event-row.c: a new event kind needs its row summary here");
  switch (e.kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE:
    g_string_append_printf(out, _("storage %" PRIu64), e.storage);
    if (e.nbytes) {
      g_autofree char *size = g_format_size_full(e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf(out, " (%s)", size);
    }
    break;
  case GS_TRACE_STORAGE_SHARE:
    g_string_append_printf(out, _("storage %" PRIu64 " shares storage %" PRIu64),
                           e.storage, e.source);
    break;
  case GS_TRACE_TENSOR_CREATE:
    append_handle(out, _("tensor"), e.tensor);
    append_shape(out, &e);
    append_text(out, op);
    if (e.source)
      append_handle(out, _("from"), e.source);
    break;
  case GS_TRACE_TENSOR_DISPOSE: {
    g_autofree char *reason = gs_dispose_reason_text(name);
    append_handle(out, _("tensor"), e.tensor);
    append_text(out, reason);
    break;
  }
  case GS_TRACE_TENSOR_MOVE:
    append_handle(out, _("tensor"), e.tensor);
    append_handle(out, "→", e.target);
    break;
  case GS_TRACE_REQUIRES_GRAD:
    append_handle(out, _("tensor"), e.tensor);
    append_text(out, e.requires_grad ? _("requires grad") : _("no grad"));
    break;
  case GS_TRACE_TENSOR_NAME:
    append_handle(out, _("tensor"), e.tensor);
    if (name)
      g_string_append_printf(out, " “%s”", name);
    break;
  case GS_TRACE_INPLACE_WRITE:
    append_handle(out, _("tensor"), e.tensor);
    append_text(out, op);
    g_string_append_c(out, ' ');
    g_string_append_printf(out, _("version %" PRIu64), e.version);
    break;
  case GS_TRACE_OWNER_CHANGE:
    append_handle(out, _("object"), e.object);
    g_string_append_printf(out, " %s → %s", holder_label(e.previous_holder),
                           holder_label(e.holder));
    break;
  case GS_TRACE_SCOPE_BEGIN:
  case GS_TRACE_SCOPE_END:
    append_handle(out, _("scope"), e.scope);
    if (!name) {
      const gs_replay_scope *scope = gs_trace_model_scope(model, e.scope);
      name = scope ? scope->name : NULL;
    }
    append_text(out, name);
    break;
  case GS_TRACE_NODE_CREATE:
    append_text(out, name);
    g_string_append_printf(out, " #%" G_GUINT64_FORMAT, e.node);
    if (e.tensor)
      append_handle(out, "→", e.tensor);
    break;
  case GS_TRACE_NODE_FREE_SAVED:
  case GS_TRACE_NODE_RELEASE:
    g_string_append_printf(out, _("node #%" PRIu64), e.node);
    break;
  case GS_TRACE_BACKWARD_BEGIN:
  case GS_TRACE_BACKWARD_END:
  case GS_TRACE_VALUES:
    append_handle(out, _("tensor"), e.tensor);
    break;
  case GS_TRACE_GRAD_ACCUMULATE:
    append_handle(out, _("tensor"), e.tensor);
    append_handle(out, _("grad"), e.target);
    break;
  case GS_TRACE_MODULE_CREATE:
    append_handle(out, _("module"), e.module);
    append_text(out, name);
    break;
  case GS_TRACE_MODULE_PARAMETER:
    append_handle(out, _("module"), e.module);
    append_text(out, name);
    append_handle(out, "=", e.tensor);
    break;
  case GS_TRACE_MODULE_CHILD:
    append_handle(out, _("module"), e.module);
    append_text(out, name);
    append_handle(out, "=", e.child);
    break;
  case GS_TRACE_OPTIMIZER_CREATE:
    append_handle(out, _("optimizer"), e.optimizer);
    append_text(out, name);
    g_string_append_c(out, ' ');
    g_string_append_printf(out, ngettext("%u parameter", "%u parameters", e.n_params),
                           e.n_params);
    break;
  case GS_TRACE_COMPOSITE_CREATE:
    append_handle(out, gs_trace_object_kind_name(e.object_kind), e.object);
    break;
  case GS_TRACE_MARK:
    append_text(out, name);
    break;
  case GS_TRACE_ERROR:
    append_text(out, e.text);
    break;
  case GS_TRACE_SNAPSHOT_BEGIN:
  case GS_TRACE_SNAPSHOT_END:
    g_string_append_printf(out, ngettext("%" PRIu64 " object alive", "%" PRIu64 " objects alive",
                                         e.count), e.count);
    break;
  case GS_TRACE_DIST_INIT:
    g_string_append_printf(out, _("rank %u of %u, run %016" PRIx64), e.rank, e.world, e.run);
    break;
  case GS_TRACE_BUCKET_READY:
  case GS_TRACE_COLLECTIVE_BEGIN:
  case GS_TRACE_COLLECTIVE_END: {
    g_autofree char *size = g_format_size_full(e.nbytes, G_FORMAT_SIZE_IEC_UNITS);
    if (e.kind != GS_TRACE_BUCKET_READY)
      g_string_append_printf(out, "%s #%" PRIu64 " ", op ? op : "", e.collective);
    if (e.bucket >= 0)
      g_string_append_printf(out, _("bucket %d "), e.bucket);
    g_string_append(out, size);
    if (e.kind == GS_TRACE_COLLECTIVE_END)
      g_string_append_printf(out, _(", waited %.3f ms"), (double)e.waited_ns / 1e6);
    break;
  }
  case GS_TRACE_WAIT_BEGIN:
  case GS_TRACE_WAIT_END:
    append_text(out, name);
    if (e.kind == GS_TRACE_WAIT_END)
      g_string_append_printf(out, _(", waited %.3f ms"), (double)e.waited_ns / 1e6);
    break;
  default:
    break;
  }
  /* Only names make a summary long: a row shows GS_TEXT_SHOWN_MAX characters of a hostile
   * one, not the 64 KB Pango would shape whenever the row is bound. */
  if (out->len <= 2 * GS_TEXT_SHOWN_MAX)
    return g_string_free(out, FALSE);
  g_autofree char *whole = g_string_free(out, FALSE);
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
