/* cmd-stats.c: `gradscope stats FILE`: what happened in a run, in one screen: events by kind,
 * scopes with their accounts, the memory peak and when, what was still alive at the end
 * (leaks, grouped by where the program made them, op, shape and holder) and every error. The numbers come from
 * model/analysis/trace-stats.c; this file only prints them, in the user's language (event kind and error
 * code names stay as the log and `dump` spell them). */
#include <glib/gi18n.h>
#include <inttypes.h>
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
G_STATIC_ASSERT(MEMBERS_SHOWN == 5); /* --members' help says so, in words translators see */

static gboolean add_event(const gs_trace_event *event, const gs_trace_reader *reader,
                          gpointer user_data) {
  gs_trace_stats_add(user_data, event, reader);
  return TRUE;
}

static void print_header(const char *path, const gs_trace_stats *s,
                         const gs_trace_read_result *result) {
  g_autofree char *file = cli_printable(path);
  printf(_("log: %s\n"), file);
  if (result->has_header)
    printf(_("  format %u.%u, recorded by pid %u\n"), result->major, result->minor, result->pid);
  g_autoptr(GArray) threads = gs_trace_stats_threads(s);
  /* Table entries (strings, call sites, binaries) name things; they are not events of the run,
   * so a log of strings alone says 0 events here, as everywhere else. */
  guint64 table = 0;
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (gs_trace_kind_is_table((gs_trace_kind)k))
      table += s->by_kind[k];
  /* One time base, said: the log's clock, as `dump` prints it; its origin means nothing to a
   * reader, so the peak also says how far into the run it came. */
  guint64 events = s->events - table;
  g_autofree char *n_events = g_strdup_printf(
      ngettext("%" PRIu64 " event", "%" PRIu64 " events", (gulong)MIN(events, G_MAXULONG)),
      events);
  g_autofree char *n_threads =
      g_strdup_printf(ngettext("%u thread", "%u threads", threads->len), threads->len);
  /* TRANSLATORS: "557 events", "2 threads"; then the run's length and where it lies on the
   * log's clock, all in milliseconds */
  printf(_("  %s on %s over %.3f ms (%.3f to %.3f ms on the log's clock)\n"), n_events, n_threads,
         (double)(s->last_ns - s->first_ns) / 1e6, (double)s->first_ns / 1e6,
         (double)s->last_ns / 1e6);
  if (table)
    printf(ngettext("  and %" PRIu64 " table entry (strings, call sites, binaries)\n",
                    "  and %" PRIu64 " table entries (strings, call sites, binaries)\n",
                    (gulong)MIN(table, G_MAXULONG)),
           table);
  for (guint i = 0; threads->len > 1 && i < threads->len; i++) {
    guint32 t = g_array_index(threads, guint32, i);
    gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(s->by_thread, GUINT_TO_POINTER(t)));
    printf(ngettext("    thread %u: %" PRIu64 " event\n", "    thread %u: %" PRIu64 " events\n",
                    (gulong)n),
           t, (guint64)n);
  }
  if (s->has_run)
    printf(_("  rank %u of %u of distributed run %016" PRIx64 "\n"), s->rank, s->world, s->run);
  if (s->snapshot) {
    g_autofree char *note = gs_snapshot_note(s->snapshot_first_seq, s->snapshot_objects);
    printf("  %s\n", note);
  }
}

static void print_kinds(const gs_trace_stats *s) {
  printf("\n%s\n", _("events by kind:"));
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (s->by_kind[k])
      printf("  %-20s %10" G_GUINT64_FORMAT "\n", gs_trace_kind_name((gs_trace_kind)k),
             s->by_kind[k]);
  if (s->unknown_kinds) {
    g_autofree char *label = cli_align(_("unknown"), 20, FALSE);
    printf("  %s %10" G_GUINT64_FORMAT "  %s\n", label, s->unknown_kinds,
           _("(newer than this reader)"));
  }
}

static void print_scopes(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  g_autofree char *instances = g_strdup_printf(
      ngettext("%u instance", "%u instances", r->scope_list->len), r->scope_list->len);
  g_autofree char *names = g_strdup_printf(
      ngettext("%u name", "%u names", r->scope_group_list->len), r->scope_group_list->len);
  /* TRANSLATORS: "scopes: 10 instances, 5 names" */
  printf(_("\nscopes: %s, %s\n"), instances, names);
  if (!r->scope_group_list->len)
    return;
  /* Names last: user code may make them long. Headings are padded by the columns they take
   * on a terminal, so translated ones stay over their numbers. */
  g_autofree char *h_instances = cli_align(_("instances"), 9, TRUE);
  g_autofree char *h_created = cli_align(_("created"), 9, TRUE);
  g_autofree char *h_disposed = cli_align(_("disposed"), 9, TRUE);
  g_autofree char *h_peak = cli_align(_("peak bytes"), 12, TRUE);
  g_autofree char *h_time = cli_align(_("time (ms)"), 12, TRUE);
  printf("  %s %s %s %s %s  %s\n", h_instances, h_created, h_disposed, h_peak, h_time,
         _("name"));
  for (guint i = 0; i < r->scope_group_list->len; i++) {
    const gs_replay_scope_name *g = r->scope_group_list->pdata[i];
    g_autofree char *name = cli_printable(g->name);
    printf("  %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
           " %12" G_GUINT64_FORMAT " %12.3f  %s\n",
           g->instances, g->created, g->disposed, g->peak_bytes, (double)g->total_ns / 1e6,
           *name ? name : _("(unnamed)"));
  }
  guint open = 0;
  for (guint i = 0; i < r->scope_list->len; i++)
    open += !((gs_replay_scope *)r->scope_list->pdata[i])->ended;
  if (open)
    printf(ngettext("  %u scope still open at the end of the log\n",
                    "  %u scopes still open at the end of the log\n", open),
           open);
}

static void print_memory(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  g_autofree char *peak = cli_format_bytes(r->peak_bytes);
  g_autofree char *end = cli_format_bytes(r->live_bytes);
  printf("\n%s\n", _("memory (storage bytes alive):"));
  if (r->peak_bytes)
    /* TRANSLATORS: the peak's size, its event number, then when it came: on the log's clock
     * and since the run's first event, in milliseconds */
    printf(_("  peak %s at event %" PRIu64 " (%.3f ms on the log's clock, %.3f ms into the "
             "run)\n"),
           peak, r->peak_seq, (double)r->peak_ns / 1e6,
           (double)(r->peak_ns - MIN(r->peak_ns, s->first_ns)) / 1e6);
  else
    printf("%s\n", _("  peak 0 bytes"));
  printf(ngettext("  at the end %s in %" PRIu64 " storage\n",
                  "  at the end %s in %" PRIu64 " storages\n",
                  (gulong)MIN(r->live_storages, G_MAXULONG)),
         end, r->live_storages);
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
    g_string_append_printf(line, _(" made at event %" PRIu64), o->create_seq);
  if (o->scope_at_create) {
    g_autofree char *scope = cli_printable(o->scope_at_create);
    g_string_append_printf(line, _(" in scope \"%s\""), scope);
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
  g_autofree char *in_groups = g_strdup_printf(
      ngettext("%u in %u group", "%u in %u groups", groups->len), alive->len, groups->len);
  /* TRANSLATORS: "live objects at the end: 2 in 2 groups" */
  printf(_("\nlive objects at the end: %s"), in_groups);
  printf("%s\n",
         alive->len ? _(" (created and never disposed: leaks, unless the log was cut short)") : "");
  for (guint i = 0; i < groups->len && i < LIST_LIMIT; i++) {
    const gs_object_group *g = groups->pdata[i];
    g_autofree char *text = gs_object_group_text(g, s->sites);
    g_autofree char *safe = cli_printable(text);
    printf("  %s\n", safe);
    guint shown = every_member ? g->members->len : MIN(g->members->len, MEMBERS_SHOWN);
    for (guint j = 0; j < shown; j++)
      print_object(s, g->members->pdata[j]);
    if (shown < g->members->len)
      printf(_("      ... and %u more (--members lists every one)\n"), g->members->len - shown);
  }
  if (groups->len > LIST_LIMIT)
    printf(ngettext("  ... and %u more group\n", "  ... and %u more groups\n",
                    groups->len - LIST_LIMIT),
           groups->len - LIST_LIMIT);
  if (alive->len && !gs_site_table_size(s->sites))
    printf("%s\n", _("  (the log records no call sites: it was written before format 1.3)"));
  if (g_hash_table_size(r->nodes))
    printf(_("  graph nodes alive: %u\n"), g_hash_table_size(r->nodes));
}

static void print_errors(const gs_trace_stats *s) {
  printf(_("\nerrors: %u\n"), s->errors->len);
  for (guint i = 0; i < s->errors->len && i < LIST_LIMIT; i++) {
    const gs_trace_error_record *e = &g_array_index(s->errors, gs_trace_error_record, i);
    g_autofree char *message = cli_printable(e->message);
    /* TRANSLATORS: an error: its event, thread, code name (as the engine names it) and
     * message (the engine's, in English) */
    printf(_("  event %" PRIu64 " (thread %u) %s: %s\n"), e->seq, e->thread,
           gs_error_code_name((gs_error_code)e->code), message);
  }
  if (s->errors->len > LIST_LIMIT)
    printf(_("  ... and %u more\n"), s->errors->len - LIST_LIMIT);
}

/* What the replay met that a consistent log never holds (replay-warnings.h): counted, the
 * first ones told, so a reader knows how much of the above rests on the replay's rules. */
static void print_warnings(const gs_trace_stats *s) {
  const gs_replay *r = s->replay;
  printf(_("\nwarnings: %" PRIu64), r->n_warnings);
  printf("%s\n", r->n_warnings ? _(" (inconsistencies in the log, stepped over)") : "");
  for (guint i = 0; i < r->warnings->len && i < LIST_LIMIT; i++) {
    g_autofree char *text =
        gs_replay_warning_describe(&g_array_index(r->warnings, gs_replay_warning, i));
    g_autofree char *safe = cli_printable(text);
    printf("  %s\n", safe);
  }
  if (r->n_warnings > MIN(r->warnings->len, LIST_LIMIT))
    printf(_("  ... and %" PRIu64 " more\n"), r->n_warnings - MIN(r->warnings->len, LIST_LIMIT));
}

/* One rank's figures, as `stats A B ...` compares them. */
typedef struct rank_row {
  const cli_rank_log *log;
  gs_trace_stats *stats;
  guint64 steps, busy_ns;
} rank_row;

/* `stats A B ...`: the logs of one distributed run's ranks, compared rank by rank, and the
 * slowest named: the rank with the most time outside collectives, which the others waited
 * for. */
static int stats_of_ranks(char **paths, int n) {
  g_autoptr(GArray) logs = cli_rank_logs_read("stats", paths, n);
  if (!logs || !cli_rank_logs_one_run("stats", logs))
    return 1;
  int status = 0;
  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(rank_row));
  for (guint i = 0; i < logs->len; i++) {
    rank_row row = {.log = &g_array_index(logs, cli_rank_log, i), .stats = gs_trace_stats_new()};
    gs_trace_read_result result;
    gboolean ok = cli_read_log(row.log->path, add_event, row.stats, &result);
    if (ok) {
      int damaged = cli_report_damage(&result);
      status = MAX(status, damaged);
      gs_trace_read_result_clear(&result);
    }
    g_array_append_val(rows, row);
    if (!ok) {
      status = 1;
      break;
    }
  }
  const cli_rank_log *first = &g_array_index(logs, cli_rank_log, 0);
  if (status != 1) {
    if (logs->len < first->world)
      printf(_("ranks: %u of %u (run %016" PRIx64 "; the other ranks' logs were not given)\n"),
             logs->len, first->world, first->run);
    else
      printf(_("ranks: %u (run %016" PRIx64 ")\n"), logs->len, first->run);
    /* TRANSLATORS: the columns of `gradscope stats A B ...`: steps are synchronised DDP steps
     * (else backward passes); times in milliseconds */
    g_autofree char *h_rank = cli_align(_("rank"), 6, TRUE);
    g_autofree char *h_steps = cli_align(_("steps"), 7, TRUE);
    g_autofree char *h_backward = cli_align(_("backward ms"), 13, TRUE);
    g_autofree char *h_wait = cli_align(_("waiting ms"), 12, TRUE);
    g_autofree char *h_bytes = cli_align(_("allreduced"), 12, TRUE);
    g_autofree char *h_peak = cli_align(_("peak memory"), 12, TRUE);
    printf("%s %s %s %s %s %s  %s\n", h_rank, h_steps, h_backward, h_wait, h_bytes, h_peak,
           _("file"));
    guint slowest = 0;
    for (guint i = 0; i < rows->len; i++) {
      rank_row *row = &g_array_index(rows, rank_row, i);
      const gs_trace_stats *st = row->stats;
      row->steps = st->synced_steps ? st->synced_steps : st->by_kind[GS_TRACE_BACKWARD_BEGIN];
      guint64 span = st->last_ns - st->first_ns;
      row->busy_ns = span - MIN(span, st->collective_wait_ns);
      if (row->busy_ns > g_array_index(rows, rank_row, slowest).busy_ns)
        slowest = i;
      g_autofree char *bytes = g_format_size_full(st->allreduced_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *peak = g_format_size_full(st->replay->peak_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *file = cli_printable(row->log->path);
      printf("%6u %7" G_GUINT64_FORMAT " %13.3f %12.3f %12s %12s  %s\n", row->log->rank, row->steps,
             (double)st->backward_ns / 1e6, (double)st->collective_wait_ns / 1e6, bytes, peak,
             file);
    }
    const rank_row *slow = &g_array_index(rows, rank_row, slowest);
    /* TRANSLATORS: the rank, its time outside collectives, then how long it waited in them,
     * in milliseconds */
    printf(_("slowest rank: %u (%.3f ms of work outside collectives, the most; it waited "
             "%.3f ms in them, the others waited for it)\n"),
           slow->log->rank, (double)slow->busy_ns / 1e6,
           (double)slow->stats->collective_wait_ns / 1e6);
  }
  for (guint i = 0; i < rows->len; i++)
    gs_trace_stats_free(g_array_index(rows, rank_row, i).stats);
  return status;
}

int cli_stats(int argc, char **argv) {
  g_autoptr(GOptionContext) context = g_option_context_new(_("FILE [FILE...]"));
  cli_translate_options(context);
  g_option_context_set_summary(context,
                               _("Summarises an event log: events by kind, scopes with their "
                                 "statistics, peak memory and when,\nobjects alive at the end "
                                 "(leaks) and errors. A damaged log is summarised up to the\n"
                                 "damage, then a warning is printed and the exit status is 2.\n\n"
                                 "Several logs (the ranks of one distributed run, as\n"
                                 "GS_TRACE=run-%r.gstrace writes them) are compared rank by\n"
                                 "rank: steps, time in backward and waiting in collectives,\n"
                                 "bytes allreduced, peak memory, and the slowest rank."));
  gboolean members = FALSE;
  const GOptionEntry entries[] = {
      {"members", 0, 0, G_OPTION_ARG_NONE, &members,
       N_("List every member of each group of live objects (default: the first 5)"), NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_option_context_add_main_entries(context, entries, NULL);
  int files = cli_parse_files_args(context, &argc, &argv);
  if (files < 1)
    return 1;
  if (files > 1)
    return stats_of_ranks(argv + 1, files);
  const char *path = argv[1];
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
    printf(_("\ntime in backward: %.3f ms\n"), (double)stats->backward_ns / 1e6);
  int status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
