/* rank-logs.c: several logs read as the ranks of one distributed run (format 1.7's
 * dist_init: rank, world size, run id), as `stats`, `explain` and `diff` take them: which
 * rank each file is, and a clear refusal of files that are not one run's. */
#include <errno.h>
#include <glib/gi18n.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

/* Reads path's start until its dist_init (it comes among the first events). FALSE if the file
 * cannot be opened. */
static gboolean read_run(const char *command, cli_rank_log *log) {
  FILE *f = fopen(log->path, "rb");
  if (!f) {
    g_autofree char *file = cli_printable(log->path);
    cli_error(_("%s: cannot read %s: %s"), command, file, g_strerror(errno));
    return FALSE;
  }
  gs_trace_reader *r = gs_trace_reader_new();
  static char buf[1 << 16];
  gs_trace_event e;
  gboolean found = FALSE, more = TRUE;
  while (!found && more) {
    size_t n = fread(buf, 1, sizeof buf, f);
    more = n > 0;
    gs_trace_reader_feed(r, buf, n);
    gs_trace_status st;
    while (!found && (st = gs_trace_reader_next(r, &e)) == GS_TRACE_EVENT)
      found = gs_trace_reader_run(r, &log->rank, &log->world, &log->run);
    if (!found && st == GS_TRACE_DAMAGED)
      more = FALSE;
  }
  log->has_run = found;
  gs_trace_reader_free(r);
  fclose(f);
  return TRUE;
}

static gint by_rank(gconstpointer a, gconstpointer b) {
  const cli_rank_log *x = a, *y = b;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

GArray *cli_rank_logs_read(const char *command, char **paths, int n) {
  GArray *logs = g_array_new(FALSE, TRUE, sizeof(cli_rank_log));
  for (int i = 0; i < n; i++) {
    cli_rank_log log = {.path = paths[i]};
    if (!read_run(command, &log)) {
      g_array_unref(logs);
      return NULL;
    }
    g_array_append_val(logs, log);
  }
  return logs;
}

gboolean cli_rank_logs_one_run(const char *command, GArray *logs) {
  for (guint i = 0; i < logs->len; i++) {
    const cli_rank_log *l = &g_array_index(logs, cli_rank_log, i);
    g_autofree char *file = cli_printable(l->path);
    if (!l->has_run) {
      cli_error(_("%s: %s holds no distributed run (no dist_init event: it is the log of a "
                  "program that never called gs_dist_init, or older than format 1.7); several "
                  "logs must be the ranks of one run"),
                command, file);
      return FALSE;
    }
    const cli_rank_log *first = &g_array_index(logs, cli_rank_log, 0);
    g_autofree char *first_file = cli_printable(first->path);
    if (l->run != first->run) {
      cli_error(_("%s: %s and %s are not logs of one run: %s is rank %u of run %016" PRIx64
                  " and %s is rank %u of run %016" PRIx64 " (give the logs of one run's ranks)"),
                command, first_file, file, first_file, first->rank, first->run, file, l->rank,
                l->run);
      return FALSE;
    }
    for (guint j = 0; j < i; j++) {
      const cli_rank_log *o = &g_array_index(logs, cli_rank_log, j);
      if (o->rank == l->rank) {
        g_autofree char *other = cli_printable(o->path);
        cli_error(
            _("%s: %s and %s are both rank %u of run %016" PRIx64 " (give each rank's log once)"),
            command, other, file, l->rank, l->run);
        return FALSE;
      }
    }
  }
  g_array_sort(logs, by_rank);
  return TRUE;
}
