/* cmd-chrome-trace.c: `gradscope chrome-trace FILE -o OUT.json`: the log in the Chrome trace
 * event format ({"traceEvents": [...]}), so chrome://tracing and ui.perfetto.dev open a run:
 * scopes and backward passes as complete slices per thread, live storage bytes and bytes
 * owned per scope name as counter tracks, marks and errors as instants. Timestamps are
 * microseconds from the recorder's start. The scope numbers come from model/replay/replay.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "escape.h"
#include "replay.h"
#include "cli.h"

typedef struct chrome {
  FILE *out;
  GString *buf;
  gboolean first;
  guint32 pid;
  gs_replay *replay;
  GHashTable *threads_named; /* set of threads */
  GHashTable *backward;      /* thread -> GArray of begin times (a stack: passes may nest) */
} chrome;

static double us(guint64 ns) { return (double)ns / 1000.0; }

/* Starts one trace event object; the caller appends its fields and closes it. */
static GString *begin_event(chrome *c, const char *ph, const char *name, guint32 tid,
                            guint64 ns) {
  GString *b = c->buf;
  g_string_truncate(b, 0);
  g_string_append(b, c->first ? "\n" : ",\n");
  c->first = FALSE;
  g_string_append_printf(b, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"name\":", ph,
                         c->pid, tid, us(ns));
  gs_escape_json(b, name);
  return b;
}

static void end_event(chrome *c) {
  g_string_append_c(c->buf, '}');
  fwrite(c->buf->str, 1, c->buf->len, c->out);
}

static void name_thread(chrome *c, guint32 thread) {
  if (g_hash_table_contains(c->threads_named, GUINT_TO_POINTER(thread)))
    return;
  g_hash_table_add(c->threads_named, GUINT_TO_POINTER(thread));
  g_autofree char *name = g_strdup_printf("gradscope thread %u", thread);
  GString *b = begin_event(c, "M", "thread_name", thread, 0);
  g_string_append(b, ",\"args\":{\"name\":");
  gs_escape_json(b, name);
  g_string_append(b, "}");
  end_event(c);
}

static void write_scope(chrome *c, const gs_replay_scope *s, guint64 end_ns, gboolean open) {
  GString *b = begin_event(c, "X", *s->name ? s->name : "(unnamed scope)", s->thread, s->begin_ns);
  g_string_append_printf(b,
                         ",\"cat\":\"scope\",\"dur\":%.3f,\"args\":{\"scope\":%" G_GUINT64_FORMAT
                         ",\"created\":%" G_GUINT64_FORMAT ",\"disposed\":%" G_GUINT64_FORMAT
                         ",\"peak_bytes\":%" G_GUINT64_FORMAT ",\"begin_event\":%" G_GUINT64_FORMAT
                         "%s}",
                         us(end_ns >= s->begin_ns ? end_ns - s->begin_ns : 0), s->id, s->created,
                         s->disposed, s->peak_bytes, s->begin_seq,
                         open ? ",\"still_open_at_end_of_log\":true" : "");
  end_event(c);
}

static void write_counter(chrome *c, const char *name, guint64 ns, guint64 bytes) {
  GString *b = begin_event(c, "C", name, 0, ns);
  g_string_append_printf(b, ",\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}", bytes);
  end_event(c);
}

static void on_backward(chrome *c, const gs_trace_event *e) {
  GArray *stack = g_hash_table_lookup(c->backward, GUINT_TO_POINTER(e->thread));
  if (e->kind == GS_TRACE_BACKWARD_BEGIN) {
    if (!stack) {
      stack = g_array_new(FALSE, FALSE, sizeof(guint64));
      g_hash_table_insert(c->backward, GUINT_TO_POINTER(e->thread), stack);
    }
    g_array_append_val(stack, e->time_ns);
    return;
  }
  if (!stack || !stack->len)
    return; /* an end whose begin was not in the log */
  guint64 begin = g_array_index(stack, guint64, stack->len - 1);
  g_array_set_size(stack, stack->len - 1);
  GString *b = begin_event(c, "X", "backward", e->thread, begin);
  g_string_append_printf(b, ",\"cat\":\"autograd\",\"dur\":%.3f,\"args\":{\"root\":%" G_GUINT64_FORMAT
                            "}",
                         us(e->time_ns >= begin ? e->time_ns - begin : 0), e->tensor);
  end_event(c);
}

static gboolean convert_event(const gs_trace_event *e, const gs_trace_reader *reader,
                              gpointer user_data) {
  chrome *c = user_data;
  if (!c->pid) {
    uint32_t major, minor, pid = 0;
    uint64_t start;
    if (gs_trace_reader_header(reader, &major, &minor, &start, &pid) && pid)
      c->pid = pid;
    else
      c->pid = 1;
    g_autofree char *name = g_strdup_printf("gradscope: pid %u", c->pid);
    GString *b = begin_event(c, "M", "process_name", 0, 0);
    g_string_append(b, ",\"args\":{\"name\":");
    gs_escape_json(b, name);
    g_string_append(b, "}");
    end_event(c);
  }
  name_thread(c, e->thread);
  gs_replay_apply(c->replay, e, reader);
  switch (e->kind) {
  case GS_TRACE_SCOPE_END: {
    const gs_replay_scope *s = g_hash_table_lookup(c->replay->scopes, &e->scope);
    if (s && s->end_seq == e->seq)
      write_scope(c, s, e->time_ns, FALSE);
    break;
  }
  case GS_TRACE_BACKWARD_BEGIN:
  case GS_TRACE_BACKWARD_END: on_backward(c, e); break;
  case GS_TRACE_MARK: {
    GString *b = begin_event(c, "i", gs_trace_reader_string(reader, e->name), e->thread, e->time_ns);
    g_string_append(b, ",\"cat\":\"mark\",\"s\":\"p\"");
    end_event(c);
    break;
  }
  case GS_TRACE_ERROR: {
    g_autofree char *name = g_strdup_printf("error: %s", e->text ? e->text : "");
    GString *b = begin_event(c, "i", name, e->thread, e->time_ns);
    g_string_append_printf(b, ",\"cat\":\"error\",\"s\":\"t\",\"args\":{\"event\":%" G_GUINT64_FORMAT
                              "}",
                           e->seq);
    end_event(c);
    break;
  }
  default: break;
  }
  if (c->replay->memory_changed)
    write_counter(c, "memory (storage bytes)", e->time_ns, c->replay->live_bytes);
  for (guint i = 0; i < c->replay->changed_groups->len; i++) {
    const gs_replay_scope_name *g = c->replay->changed_groups->pdata[i];
    g_autofree char *name = g_strdup_printf("scope bytes: %s", g->name);
    write_counter(c, name, e->time_ns, g->bytes);
  }
  return TRUE;
}

/* Scopes still open when the log ends are drawn up to its last event, and marked so. */
static void close_open_scopes(chrome *c) {
  for (guint i = 0; i < c->replay->scope_list->len; i++) {
    const gs_replay_scope *s = c->replay->scope_list->pdata[i];
    if (!s->ended)
      write_scope(c, s, c->replay->last_ns, TRUE);
  }
}

static void array_unref(gpointer p) { g_array_unref(p); }

int cli_chrome_trace(int argc, char **argv) {
  char *out_path = NULL;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
       "Where to write the JSON (required; - for standard output)", "OUT.json"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "FILE -o OUT.json", entries,
      "Converts a log to Chrome trace / Perfetto JSON for chrome://tracing and\n"
      "ui.perfetto.dev: scopes and backward passes as slices per thread, storage\n"
      "bytes and bytes owned per scope name as counters, marks and errors as instants.");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *out_owned = out_path;
  if (!path)
    return 1;
  if (!out_path) {
    cli_error("chrome-trace: no output file given: use -o OUT.json");
    return 1;
  }
  gboolean to_stdout = !strcmp(out_path, "-");
  FILE *out = to_stdout ? stdout : fopen(out_path, "w");
  if (!out) {
    cli_error("chrome-trace: cannot write %s: %s", out_path, g_strerror(errno));
    return 1;
  }
  chrome c = {.out = out, .buf = g_string_sized_new(256), .first = TRUE,
              .replay = gs_replay_new(),
              .threads_named = g_hash_table_new(g_direct_hash, g_direct_equal),
              .backward = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, array_unref)};
  fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out);
  gs_trace_read_result result;
  gboolean ok = cli_read_log(path, convert_event, &c, &result);
  close_open_scopes(&c);
  /* Even a damaged log gives a whole JSON document: its valid part. */
  fputs("\n]}\n", out);
  gboolean write_failed = ferror(out) != 0;
  if (!to_stdout && fclose(out) != 0)
    write_failed = TRUE;
  g_string_free(c.buf, TRUE);
  gs_replay_free(c.replay);
  g_hash_table_destroy(c.threads_named);
  g_hash_table_destroy(c.backward);
  if (!ok) {
    if (!to_stdout)
      g_remove(out_path);
    return 1;
  }
  if (write_failed) {
    cli_error("chrome-trace: writing %s failed", out_path);
    gs_trace_read_result_clear(&result);
    return 1;
  }
  int status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
