/* cmd-dump.c: `gradscope dump FILE [--jsonl]`: every event, one per line, for reading or for
 * jq. Both forms list the same fields (model/text/event-fields.c); strings from user code are
 * escaped so that one event is always exactly one line. */
#include <math.h>
#include <stdio.h>

#include "escape.h"
#include "event-fields.h"
#include "cli.h"

typedef struct dump {
  gboolean jsonl;
  GString *line;
  int snapshot; /* 0 before the log's opening snapshot, 1 inside it, 2 after it */
} dump;

/* Whether e re-creates what was alive when the recording began (inside the opening snapshot of
 * a log that begins mid-run): its number is the snapshot's, not when it happened, which the
 * log does not know. */
static gboolean recreated(dump *d, const gs_trace_event *e) {
  if (e->kind == GS_TRACE_SNAPSHOT_BEGIN && d->snapshot == 0)
    d->snapshot = 1;
  else if (e->kind == GS_TRACE_SNAPSHOT_END && d->snapshot == 1)
    d->snapshot = 2;
  else
    return d->snapshot == 1 && !gs_trace_kind_is_table(e->kind);
  return FALSE;
}

static void append_ids(GString *out, const gs_event_field *f, gboolean json) {
  g_string_append_c(out, '[');
  for (guint i = 0; i < f->n; i++) {
    if (i)
      g_string_append_c(out, ',');
    if (f->type == GS_FIELD_DIMS)
      g_string_append_printf(out, "%" G_GINT64_FORMAT, f->dims[i]);
    else if (f->type == GS_FIELD_HANDLES && !json) { /* as the engine names them: #slot.gen */
      char handle[32];
      g_string_append(out, gs_format_handle(f->ids[i], handle, sizeof handle));
    } else if (f->type == GS_FIELD_IDS || f->type == GS_FIELD_HANDLES)
      g_string_append_printf(out, "%" G_GUINT64_FORMAT, f->ids[i]);
    else if (isfinite(f->reals[i]))
      g_string_append_printf(out, "%.17g", f->reals[i]);
    else /* JSON has no NaN or infinity */
      g_string_append(out, json ? "null" : (isnan(f->reals[i]) ? "nan" : "inf"));
  }
  g_string_append_c(out, ']');
}

static void append_json_field(const gs_event_field *f, gpointer user_data) {
  GString *out = user_data;
  g_string_append_printf(out, ",\"%s\":", f->key); /* keys are ours: plain ASCII */
  switch (f->type) {
  case GS_FIELD_HANDLE:
  case GS_FIELD_ID:
  case GS_FIELD_UINT: g_string_append_printf(out, "%" G_GUINT64_FORMAT, f->u); break;
  case GS_FIELD_INT: g_string_append_printf(out, "%" G_GINT64_FORMAT, f->i); break;
  case GS_FIELD_BOOL: g_string_append(out, f->b ? "true" : "false"); break;
  case GS_FIELD_STRING:
  case GS_FIELD_ENUM: gs_escape_json(out, f->s); break;
  case GS_FIELD_DIMS:
  case GS_FIELD_IDS:
  case GS_FIELD_HANDLES:
  case GS_FIELD_REALS: append_ids(out, f, TRUE); break;
  }
}

static void append_text_field(const gs_event_field *f, gpointer user_data) {
  GString *out = user_data;
  char handle[32];
  g_string_append_printf(out, " %s=", f->key);
  switch (f->type) {
  case GS_FIELD_HANDLE: g_string_append(out, gs_format_handle(f->u, handle, sizeof handle)); break;
  case GS_FIELD_ID:
  case GS_FIELD_UINT: g_string_append_printf(out, "%" G_GUINT64_FORMAT, f->u); break;
  case GS_FIELD_INT: g_string_append_printf(out, "%" G_GINT64_FORMAT, f->i); break;
  case GS_FIELD_BOOL: g_string_append(out, f->b ? "yes" : "no"); break;
  case GS_FIELD_ENUM: g_string_append(out, f->s); break;
  /* Quoted the JSON way: names may hold spaces, quotes or newlines. */
  case GS_FIELD_STRING: gs_escape_json(out, f->s); break;
  case GS_FIELD_DIMS:
  case GS_FIELD_IDS:
  case GS_FIELD_HANDLES:
  case GS_FIELD_REALS: append_ids(out, f, FALSE); break;
  }
}

static gboolean dump_event(const gs_trace_event *e, const gs_trace_reader *reader,
                           gpointer user_data) {
  dump *d = user_data;
  GString *line = d->line;
  g_string_truncate(line, 0);
  gboolean before_recording = recreated(d, e);
  if (d->jsonl) {
    g_string_append_printf(line,
                           "{\"seq\":%" G_GUINT64_FORMAT ",\"thread\":%u,\"time_ns\":%" G_GUINT64_FORMAT
                           ",\"kind\":\"%s\"",
                           e->seq, e->thread, e->time_ns, gs_trace_kind_name(e->kind));
    if (e->kind <= 0 || e->kind >= GS_TRACE_KIND_COUNT)
      g_string_append_printf(line, ",\"kind_number\":%d", (int)e->kind);
    gs_event_fields_foreach(e, reader, append_json_field, line);
    if (before_recording)
      g_string_append(line, ",\"before_recording\":true");
    g_string_append(line, "}\n");
  } else {
    g_string_append_printf(line, "%8" G_GUINT64_FORMAT " t%-2u %12.6f ms %-19s", e->seq, e->thread,
                           (double)e->time_ns / 1e6, gs_trace_kind_name(e->kind));
    gs_event_fields_foreach(e, reader, append_text_field, line);
    if (before_recording)
      g_string_append(line, " (re-created by the snapshot: it happened before the recording "
                            "began, at an event the log does not know)");
    g_string_append_c(line, '\n');
  }
  fwrite(line->str, 1, line->len, stdout);
  return TRUE;
}

int cli_dump(int argc, char **argv) {
  gboolean jsonl = FALSE;
  const GOptionEntry entries[] = {
      {"jsonl", 'j', 0, G_OPTION_ARG_NONE, &jsonl,
       "One JSON object per line, with every non-zero field", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context =
      cli_option_context("FILE", entries,
                         "Prints every event of a log, one per line: sequence number, "
                         "thread, time, kind and fields,\nwith string ids resolved. A "
                         "damaged log is printed up to the damage, then a warning\nis "
                         "printed and the exit status is 2.");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  if (!path)
    return 1;
  dump d = {jsonl, g_string_sized_new(256), 0};
  gs_trace_read_result result;
  gboolean ok = cli_read_log(path, dump_event, &d, &result);
  g_string_free(d.line, TRUE);
  if (!ok)
    return 1;
  int status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
