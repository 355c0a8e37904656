/* cmd-stats.c: `gradscope stats FILE`: what happened in a run, in one screen: events by kind,
 * scopes with their accounts, the memory peak and when, what was still alive at the end
 * (leaks, grouped by where the program made them, op, shape and holder) and every error. The numbers come from
 * model/analysis/trace-stats.c; this file only prints them. */
#include <stdio.h>

#include <gradscope/error.h>
#include <gradscope/types.h>

#include "event-fields.h"
#include "object-groups.h"
#include "snapshot-note.h"
#include "trace-stats.h"
#include "cli.h"

/* Beyond this many leaks or errors, a count says how many more (the log has them all). */
#define LIST_LIMIT 50
#define MEMBERS_SHOWN 5

static gboolean add_event(const gs_trace_event *event, const gs_trace_reader *reader,
                          gpointer user_data) {
  gs_trace_stats_add(user_data, event, reader);
  return TRUE;
}

static void print_header(const char *path, const gs_trace_stats *s,
                         const gs_trace_read_result *result) {
  g_autofree char *file = cli_printable(path);
  printf("log: %s\n", file);
  if (result->has_header)
    printf("  format %u.%u, recorded by pid %u\n", result->major, result->minor, result->pid);
  g_autoptr(GArray) threads = gs_trace_stats_threads(s);
  /* Table entries (strings, call sites, binaries) name things; they are not events of the run,
   * so a log of strings alone says 0 events here, as everywhere else. */
  guint64 table = 0;
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (gs_trace_kind_is_table((gs_trace_kind)k))
      table += s->by_kind[k];
  /* One time base, said: the log's clock, as `dump` prints it; its origin means nothing to a
   * reader, so the peak also says how far into the run it came. */
  printf("  %" G_GUINT64_FORMAT " events on %u thread%s over %.3f ms (%.3f to %.3f ms on the "
         "log's clock)\n",
         s->events - table, threads->len, threads->len == 1 ? "" : "s",
         (double)(s->last_ns - s->first_ns) / 1e6, (double)s->first_ns / 1e6,
         (double)s->last_ns / 1e6);
  if (table)
    printf("  and %" G_GUINT64_FORMAT " table entries (strings, call sites, binaries)\n", table);
  for (guint i = 0; threads->len > 1 && i < threads->len; i++) {
    guint32 t = g_array_index(threads, guint32, i);
    printf("    thread %u: %zu events\n", t,
           GPOINTER_TO_SIZE(g_hash_table_lookup(s->by_thread, GUINT_TO_POINTER(t))));
  }
  if (s->snapshot) {
    g_autofree char *note = gs_snapshot_note(s->snapshot_first_seq, s->snapshot_objects);
    printf("  %s\n", note);
  }
}

static void print_kinds(const gs_trace_stats *s) {
  printf("\nevents by kind:\n");
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (s->by_kind[k])
      printf("  %-20s %10" G_GUINT64_FORMAT "\n", gs_trace_kind_name((gs_trace_kind)k),
             s->by_kind[k]);
  if (s->unknown_kinds)
    printf("  %-20s %10" G_GUINT64_FORMAT "  (newer than this reader)\n", "unknown",
           s->unknown_kinds);
}

static void print_scopes(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  printf("\nscopes: %u instances, %u names\n", r->scope_list->len, r->scope_group_list->len);
  if (!r->scope_group_list->len)
    return;
  /* Names last: user code may make them long. */
  printf("  %9s %9s %9s %12s %12s  %s\n", "instances", "created", "disposed", "peak bytes",
         "time (ms)", "name");
  for (guint i = 0; i < r->scope_group_list->len; i++) {
    const gs_replay_scope_name *g = r->scope_group_list->pdata[i];
    g_autofree char *name = cli_printable(g->name);
    printf("  %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %12" G_GUINT64_FORMAT " %12.3f  %s\n",
           g->instances, g->created, g->disposed, g->peak_bytes, (double)g->total_ns / 1e6,
           *name ? name : "(unnamed)");
  }
  guint open = 0;
  for (guint i = 0; i < r->scope_list->len; i++)
    open += !((gs_replay_scope *)r->scope_list->pdata[i])->ended;
  if (open)
    printf("  %u scope%s still open at the end of the log\n", open, open == 1 ? "" : "s");
}

static void print_memory(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  g_autofree char *peak = cli_format_bytes(r->peak_bytes);
  g_autofree char *end = cli_format_bytes(r->live_bytes);
  printf("\nmemory (storage bytes alive):\n");
  if (r->peak_bytes)
    printf("  peak %s at event %" G_GUINT64_FORMAT " (%.3f ms on the log's clock, %.3f ms "
           "into the run)\n",
           peak, r->peak_seq, (double)r->peak_ns / 1e6,
           (double)(r->peak_ns - MIN(r->peak_ns, s->first_ns)) / 1e6);
  else
    printf("  peak 0 bytes\n");
  printf("  at the end %s in %" G_GUINT64_FORMAT " storage%s\n", end, r->live_storages,
         r->live_storages == 1 ? "" : "s");
}

static void print_object(const gs_trace_stats *s, const gs_replay_object *o) {
  const gs_replay *r = s->replay;
  char handle[32];
  GString *line = g_string_new(NULL);
  g_string_append_printf(line, "      %s", gs_format_handle(o->id, handle, sizeof handle));
  const char *name = gs_replay_tensor_name(r, o->id);
  if (name) {
    g_autofree char *safe = cli_printable(name);
    g_string_append_printf(line, " \"%s\"", safe);
  }
  if (s->snapshot && gs_snapshot_recreated(o->create_seq, s->snapshot_first_seq))
    g_string_append_printf(line, " %s", gs_snapshot_made_before());
  else
    g_string_append_printf(line, " made at event %" G_GUINT64_FORMAT, o->create_seq);
  if (o->scope_at_create) {
    g_autofree char *scope = cli_printable(o->scope_at_create);
    g_string_append_printf(line, " in scope \"%s\"", scope);
  }
  printf("%s\n", line->str);
  g_string_free(line, TRUE);
}

/* Live objects grouped by call site, op, shape and holder, the most bytes first; each group's
 * members follow it (all of them with --members, else the first few). */
static void print_alive(const gs_trace_stats *s, gboolean every_member) {
  const gs_replay *r = s->replay;
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  g_autoptr(GPtrArray) groups = gs_object_groups(r, alive, s->sites);
  printf("\nlive objects at the end: %u in %u group%s%s\n", alive->len, groups->len,
         groups->len == 1 ? "" : "s",
         alive->len ? " (created and never disposed: leaks, unless the log was cut short)" : "");
  for (guint i = 0; i < groups->len && i < LIST_LIMIT; i++) {
    const gs_object_group *g = groups->pdata[i];
    g_autofree char *text = gs_object_group_text(g, s->sites);
    g_autofree char *safe = cli_printable(text);
    printf("  %s\n", safe);
    guint shown = every_member ? g->members->len : MIN(g->members->len, MEMBERS_SHOWN);
    for (guint j = 0; j < shown; j++)
      print_object(s, g->members->pdata[j]);
    if (shown < g->members->len)
      printf("      ... and %u more (--members lists every one)\n", g->members->len - shown);
  }
  if (groups->len > LIST_LIMIT)
    printf("  ... and %u more groups\n", groups->len - LIST_LIMIT);
  if (alive->len && !gs_site_table_size(s->sites))
    printf("  (the log records no call sites: it was written before format 1.3)\n");
  if (g_hash_table_size(r->nodes))
    printf("  graph nodes alive: %u\n", g_hash_table_size(r->nodes));
}

static void print_errors(const gs_trace_stats *s) {
  printf("\nerrors: %u\n", s->errors->len);
  for (guint i = 0; i < s->errors->len && i < LIST_LIMIT; i++) {
    const gs_trace_error_record *e = &g_array_index(s->errors, gs_trace_error_record, i);
    g_autofree char *message = cli_printable(e->message);
    printf("  event %" G_GUINT64_FORMAT " (thread %u) %s: %s\n", e->seq, e->thread,
           gs_error_code_name((gs_error_code)e->code), message);
  }
  if (s->errors->len > LIST_LIMIT)
    printf("  ... and %u more\n", s->errors->len - LIST_LIMIT);
}

/* What the replay met that a consistent log never holds (replay-warnings.h): counted, the
 * first ones told, so a reader knows how much of the above rests on the replay's rules. */
static void print_warnings(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  printf("\nwarnings: %" G_GUINT64_FORMAT "%s\n", r->n_warnings,
         r->n_warnings ? " (inconsistencies in the log, stepped over)" : "");
  for (guint i = 0; i < r->warnings->len && i < LIST_LIMIT; i++) {
    g_autofree char *text =
        gs_replay_warning_describe(&g_array_index(r->warnings, gs_replay_warning, i));
    g_autofree char *safe = cli_printable(text);
    printf("  %s\n", safe);
  }
  if (r->n_warnings > MIN(r->warnings->len, LIST_LIMIT))
    printf("  ... and %" G_GUINT64_FORMAT " more\n",
           r->n_warnings - MIN(r->warnings->len, LIST_LIMIT));
}

int cli_stats(int argc, char **argv) {
  g_autoptr(GOptionContext) context = g_option_context_new("FILE");
  g_option_context_set_summary(context,
                               "Summarises an event log: events by kind, scopes with their "
                               "statistics, peak memory and when,\nobjects alive at the end "
                               "(leaks) and errors. A damaged log is summarised up to the\n"
                               "damage, then a warning is printed and the exit status is 2.");
  gboolean members = FALSE;
  const GOptionEntry entries[] = {
      {"members", 0, 0, G_OPTION_ARG_NONE, &members,
       "List every member of each group of live objects (default: the first " G_STRINGIFY(
           MEMBERS_SHOWN) ")", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_add_main_entries(context, entries, NULL);
  const char *path = cli_parse_file_args(context, &argc, &argv);
  if (!path)
    return 1;
  g_autoptr(gs_trace_stats) stats = gs_trace_stats_new();
  gs_trace_read_result result;
  if (!cli_read_log(path, add_event, stats, &result))
    return 1;
  print_header(path, stats, &result);
  print_kinds(stats);
  print_scopes(stats);
  print_memory(stats);
  print_alive(stats, members);
  print_errors(stats);
  print_warnings(stats);
  if (stats->replay->events && stats->backward_ns)
    printf("\ntime in backward: %.3f ms\n", (double)stats->backward_ns / 1e6);
  int status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
