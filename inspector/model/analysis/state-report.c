/* state-report.c: `gradscope state`'s report of one moment (state-report.h), read off the
 * replayed state: nothing here infers, it only says what the replay holds. */
#include "state-report.h"

#include <glib/gi18n-lib.h>
#include <gradscope/scope.h>
#include <gradscope/types.h>
#include <inttypes.h>
#include <math.h>

#include "escape.h"
#include "event-fields.h"
#include "tensor-values.h"

const char *gs_state_owner_kind(guint32 holder) {
  switch (holder) {
  case GS_TRACE_HELD_BY_CALLER: return "program";
  case GS_TRACE_HELD_BY_SCOPE: return "scope";
  case GS_TRACE_HELD_BY_MODULE: return "module";
  case GS_TRACE_HELD_BY_COMPOSITE: return "composite";
  case GS_TRACE_HELD_BY_TENSOR: return "tensor";
  case GS_TRACE_HELD_BY_ENGINE: return "engine";
  case GS_TRACE_HELD_BY_OPTIMIZER: return "optimizer";
  default: return "unknown";
  }
}

/* The state at index, or an empty one (the caller frees *owned) before the first event. */
static const gs_replay *state_at(gs_trace_model *m, guint64 index, gs_replay **owned) {
  *owned = NULL;
  if (index == G_MAXUINT64 || gs_trace_model_n_events(m) == 0)
    return *owned = gs_replay_new();
  return gs_trace_model_seek(m, index);
}

static const char *dtype_name(guint32 dtype) {
  return dtype < GS_DTYPE_COUNT ? gs_dtype_name((gs_dtype)dtype) : "unknown";
}

static void append_dims(GString *out, const gint64 *dims, int n) {
  g_string_append_c(out, '[');
  for (int d = 0; d < n; d++)
    g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d ? ", " : "", dims[d]);
  g_string_append_c(out, ']');
}

/* JSON has no NaN or infinities: those are strings. */
static void append_json_number(GString *out, double v) {
  if (isnan(v))
    g_string_append(out, "\"nan\"");
  else if (isinf(v))
    g_string_append(out, v > 0 ? "\"inf\"" : "\"-inf\"");
  else
    g_string_append_printf(out, "%.17g", v);
}

/* What the owner's id names: a scope's name, a module's type or a parameter's path, an
 * optimizer's type (NULL when there is nothing to say). */
static const char *owner_name(gs_trace_model *m, const gs_replay *r, const gs_replay_object *o) {
  switch (o->holder) {
  case GS_TRACE_HELD_BY_SCOPE: {
    const gs_replay_scope *s = gs_trace_model_scope_in(m, r, o->owner);
    return s ? s->name : NULL;
  }
  case GS_TRACE_HELD_BY_MODULE: {
    if (o->parameter) {
      const char *path = gs_replay_tensor_name(r, o->id);
      if (path)
        return path;
    }
    const gs_replay_module *mod = gs_replay_module_get(r, o->owner);
    return mod ? mod->type : NULL;
  }
  case GS_TRACE_HELD_BY_OPTIMIZER: {
    const gs_replay_optimizer *opt = gs_replay_optimizer_get(r, o->owner);
    return opt ? opt->type : NULL;
  }
  default: return NULL;
  }
}

static void append_json_tensor(gs_trace_model *m, const gs_replay *r, const gs_replay_object *o,
                               GString *out) {
  g_string_append_printf(out, "{\"id\": %" G_GUINT64_FORMAT, o->id);
  const char *name = gs_replay_tensor_name(r, o->id);
  if (name) {
    g_string_append(out, ", \"name\": ");
    gs_escape_json(out, name);
  }
  g_string_append_printf(out, ", \"storage\": %" G_GUINT64_FORMAT ", \"offset\": %" G_GINT64_FORMAT
                         ", \"shape\": ", o->storage, o->offset);
  append_dims(out, o->shape, o->ndim);
  g_string_append(out, ", \"strides\": ");
  append_dims(out, o->strides, o->ndim);
  g_string_append_printf(out, ", \"dtype\": \"%s\"", dtype_name(o->dtype));
  guint64 version;
  if (gs_replay_storage_version(r, o->storage, &version))
    g_string_append_printf(out, ", \"version\": %" G_GUINT64_FORMAT, version);
  else
    g_string_append(out, ", \"version\": null");
  g_string_append_printf(out, ", \"copy_on_write\": %s, \"requires_grad\": %s",
                         gs_replay_storage_shares_bytes_with(r, o->storage) ? "true" : "false",
                         o->requires_grad ? "true" : "false");
  g_string_append_printf(out, ", \"owner\": {\"kind\": \"%s\"", gs_state_owner_kind(o->holder));
  if (o->holder != GS_TRACE_HELD_BY_CALLER && o->holder != GS_TRACE_HELD_BY_ENGINE)
    g_string_append_printf(out, ", \"id\": %" G_GUINT64_FORMAT, o->owner);
  const char *owner = owner_name(m, r, o);
  if (owner) {
    g_string_append(out, o->parameter ? ", \"parameter\": " : ", \"name\": ");
    gs_escape_json(out, owner);
  }
  g_string_append(out, "}, \"made_at\": {");
  if (o->before_recording) /* made before the log began: its event is not in the log */
    g_string_append(out, "\"event\": null, \"before_recording\": true");
  else
    g_string_append_printf(out, "\"event\": %" G_GUINT64_FORMAT, o->create_seq);
  g_string_append(out, ", \"op\": ");
  gs_escape_json(out, o->op ? o->op : "");
  const char *site = o->site ? gs_site_table_text(gs_trace_model_sites(m), o->site) : NULL;
  g_string_append(out, ", \"site\": ");
  if (site)
    gs_escape_json(out, site);
  else
    g_string_append(out, "null");
  g_string_append_c(out, '}');
  double values[GS_STATE_MAX_VALUES];
  guint n = gs_replay_tensor_values(r, o, values, GS_STATE_MAX_VALUES);
  if (n) {
    g_string_append(out, ", \"values\": [");
    for (guint i = 0; i < n; i++) {
      if (i)
        g_string_append(out, ", ");
      append_json_number(out, values[i]);
    }
    g_string_append_c(out, ']');
  }
  g_string_append_c(out, '}');
}

typedef struct storage_row {
  guint64 id, own_bytes;
} storage_row;

static void collect_storage(guint64 id, guint64 own_bytes, guint saved_refs, gpointer data) {
  (void)saved_refs;
  storage_row row = {id, own_bytes};
  g_array_append_val((GArray *)data, row);
}

static gint by_storage_id(gconstpointer a, gconstpointer b) {
  const storage_row *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static GArray *storages_of(const gs_replay *r) {
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(storage_row));
  gs_replay_foreach_storage(r, collect_storage, rows);
  g_array_sort(rows, by_storage_id);
  return rows;
}

/* The open scopes, in begin order. */
static GPtrArray *open_scopes(const gs_replay *r) {
  GPtrArray *open = g_ptr_array_new();
  for (guint i = 0; i < r->scope_list->len; i++) {
    gs_replay_scope *s = r->scope_list->pdata[i];
    if (!s->ended)
      g_ptr_array_add(open, s);
  }
  return open;
}

static guint64 alive_tensors(const GPtrArray *objects) {
  guint64 n = 0;
  for (guint i = 0; i < objects->len; i++)
    n += !((const gs_replay_object *)objects->pdata[i])->composite;
  return n;
}

void gs_state_report_json(gs_trace_model *m, guint64 index, guint64 seq, GString *out) {
  g_autoptr(gs_replay) owned = NULL;
  const gs_replay *r = state_at(m, index, &owned);
  g_autoptr(GPtrArray) objects = gs_replay_alive_objects(r);
  g_string_append_printf(out, "{\"event\": %" G_GUINT64_FORMAT ", \"tensors\": [", seq);
  gboolean first = TRUE;
  for (guint i = 0; i < objects->len; i++) {
    const gs_replay_object *o = objects->pdata[i];
    if (o->composite)
      continue;
    g_string_append(out, first ? "\n  " : ",\n  ");
    first = FALSE;
    append_json_tensor(m, r, o, out);
  }
  g_string_append(out, "],\n \"storages\": [");
  g_autoptr(GArray) storages = storages_of(r);
  for (guint i = 0; i < storages->len; i++) {
    const storage_row *s = &g_array_index(storages, storage_row, i);
    g_string_append_printf(out, "%s{\"id\": %" G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT,
                           i ? ",\n  " : "\n  ", s->id, s->own_bytes);
    guint64 shares = gs_replay_storage_shares_bytes_with(r, s->id);
    if (shares)
      g_string_append_printf(out, ", \"shares_bytes_with\": %" G_GUINT64_FORMAT "}", shares);
    else
      g_string_append(out, ", \"shares_bytes_with\": null}");
  }
  g_string_append(out, "],\n \"scopes\": [");
  g_autoptr(GPtrArray) scopes = open_scopes(r);
  for (guint i = 0; i < scopes->len; i++) {
    const gs_replay_scope *s = scopes->pdata[i];
    g_string_append_printf(out, "%s{\"id\": %" G_GUINT64_FORMAT ", \"name\": ", i ? ",\n  " : "\n  ",
                           s->id);
    gs_escape_json(out, s->name ? s->name : "");
    g_string_append_printf(out,
                           ", \"outer\": %" G_GUINT64_FORMAT ", \"thread\": %u, \"created\": %"
                           G_GUINT64_FORMAT ", \"disposed\": %" G_GUINT64_FORMAT
                           ", \"alive\": %" G_GUINT64_FORMAT ", \"bytes\": %" G_GUINT64_FORMAT
                           ", \"peak_bytes\": %" G_GUINT64_FORMAT "}",
                           s->outer, s->thread, s->created, s->disposed, s->alive, s->bytes,
                           s->peak_bytes);
  }
  g_string_append_printf(out,
                         "],\n \"totals\": {\"tensors\": %" G_GUINT64_FORMAT
                         ", \"composites\": %" G_GUINT64_FORMAT ", \"storages\": %u"
                         ", \"bytes\": %" G_GUINT64_FORMAT ", \"peak_bytes\": %" G_GUINT64_FORMAT
                         ", \"open_scopes\": %u}}\n",
                         alive_tensors(objects), objects->len - alive_tensors(objects),
                         storages->len, r->live_bytes, r->peak_bytes, scopes->len);
}

void gs_state_report_text(gs_trace_model *m, guint64 index, guint64 seq, GString *out) {
  g_autoptr(gs_replay) owned = NULL;
  const gs_replay *r = state_at(m, index, &owned);
  g_autoptr(GPtrArray) objects = gs_replay_alive_objects(r);
  g_autoptr(GArray) storages = storages_of(r);
  g_autoptr(GPtrArray) scopes = open_scopes(r);
  guint64 tensors = alive_tensors(objects);
  /* TRANSLATORS: the heading of `gradscope state`: an event number, then counts */
  g_string_append_printf(out, _("after event #%" PRIu64 ": %" PRIu64
                                " tensors, %u storages, %" PRIu64 " bytes, %u open scopes\n"),
                         seq, tensors, storages->len, r->live_bytes, scopes->len);
  if (tensors)
    g_string_append_printf(out, "\n%s\n", _("tensors:"));
  for (guint i = 0; i < objects->len; i++) {
    const gs_replay_object *o = objects->pdata[i];
    if (o->composite)
      continue;
    char h[32];
    gs_format_handle(o->id, h, sizeof h);
    g_autoptr(GString) dims = g_string_new(NULL);
    append_dims(dims, o->shape, o->ndim);
    const char *name = gs_replay_tensor_name(r, o->id);
    g_string_append_printf(out, "  %s%s%s%s %s %s", h, name ? " \"" : "", name ? name : "",
                           name ? "\"" : "", dims->str, dtype_name(o->dtype));
    g_string_set_size(dims, 0);
    append_dims(dims, o->strides, o->ndim);
    /* TRANSLATORS: a tensor's place in its storage: storage id, offset and strides */
    g_string_append_printf(out, _(" on storage #%" PRIu64 " at offset %" PRId64
                                  ", strides %s"), o->storage, o->offset, dims->str);
    guint64 version;
    if (gs_replay_storage_version(r, o->storage, &version))
      g_string_append_printf(out, _(", version %" PRIu64), version);
    else
      g_string_append(out, _(", version unknown (set before the recording began)"));
    guint64 shares = gs_replay_storage_shares_bytes_with(r, o->storage);
    if (shares)
      g_string_append_printf(out, _(", copy-on-write with storage #%" PRIu64), shares);
    if (o->requires_grad)
      g_string_append(out, _(", requires grad"));
    g_autofree char *owner = gs_trace_model_owner_label(m, r, o);
    g_string_append_printf(out, _(", held by %s"), owner);
    if (o->before_recording)
      g_string_append(out, _(", made before the recording began"));
    else
      g_string_append_printf(out, _(", made at event #%" PRIu64 " by %s"),
                             o->create_seq, o->op && *o->op ? o->op : "?");
    const char *site = o->site ? gs_site_table_text(gs_trace_model_sites(m), o->site) : NULL;
    if (site)
      g_string_append_printf(out, _(" in %s"), site);
    double values[GS_STATE_MAX_VALUES];
    guint n = gs_replay_tensor_values(r, o, values, GS_STATE_MAX_VALUES);
    if (n) {
      g_autofree char *text = gs_tensor_values_text(values, n, gs_replay_object_numel(o));
      g_string_append_printf(out, _(", values %s"), text);
    }
    g_string_append_c(out, '\n');
  }
  if (storages->len)
    g_string_append_printf(out, "\n%s\n", _("storages:"));
  for (guint i = 0; i < storages->len; i++) {
    const storage_row *s = &g_array_index(storages, storage_row, i);
    g_string_append_printf(out, _("  #%" PRIu64 ": %" PRIu64 " bytes of its own"),
                           s->id, s->own_bytes);
    guint64 shares = gs_replay_storage_shares_bytes_with(r, s->id);
    if (shares)
      g_string_append_printf(out, _(", shares its bytes with storage #%" PRIu64
                                    " copy-on-write"), shares);
    g_string_append_c(out, '\n');
  }
  if (scopes->len)
    g_string_append_printf(out, "\n%s\n", _("open scopes:"));
  for (guint i = 0; i < scopes->len; i++) {
    const gs_replay_scope *s = scopes->pdata[i];
    char h[32];
    gs_format_handle(s->id, h, sizeof h);
    g_string_append_printf(out,
                           _("  %s %s: created %" PRIu64 ", disposed %" PRIu64
                             ", alive %" PRIu64 ", %" PRIu64
                             " bytes (peak %" PRIu64 ")\n"),
                           h, s->name ? s->name : "", s->created, s->disposed, s->alive, s->bytes,
                           s->peak_bytes);
  }
}
