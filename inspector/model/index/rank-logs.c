/* rank-logs.c: several logs read as the ranks of one distributed run (see the header). Only
 * a log's start is read: its header and the events up to its dist_init. */
#include "rank-logs.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <gradscope/trace-reader.h>
#include <inttypes.h>
#include <stdio.h>

gboolean gs_rank_log_read(const char *path, gs_rank_log *out, GError **error) {
  *out = (gs_rank_log){.path = path};
  FILE *f = fopen(path, "rb");
  if (!f) {
    int err = errno;
    g_autofree char *file = g_filename_display_name(path);
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(err), _("cannot read %s: %s"), file,
                g_strerror(err));
    return FALSE;
  }
  gs_trace_reader *r = gs_trace_reader_new();
  char buf[1 << 14];
  gs_trace_event e;
  gboolean found = FALSE, more = TRUE;
  while (!found && more) {
    size_t n = fread(buf, 1, sizeof buf, f);
    more = n > 0;
    gs_trace_reader_feed(r, buf, n);
    gs_trace_status st;
    while (!found && (st = gs_trace_reader_next(r, &e)) == GS_TRACE_EVENT)
      found = gs_trace_reader_run(r, &out->rank, &out->world, &out->run);
    if (!found && st == GS_TRACE_DAMAGED)
      more = FALSE;
  }
  uint64_t start = 0;
  if (gs_trace_reader_header(r, NULL, NULL, &start, NULL))
    out->start_realtime_ns = start;
  out->has_run = found;
  gs_trace_reader_free(r);
  fclose(f);
  return TRUE;
}

gboolean gs_rank_logs_any_run(const GArray *logs) {
  for (guint i = 0; i < logs->len; i++)
    if (g_array_index(logs, gs_rank_log, i).has_run)
      return TRUE;
  return FALSE;
}

static gint by_rank(gconstpointer a, gconstpointer b) {
  const gs_rank_log *x = a, *y = b;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

gboolean gs_rank_logs_one_run(GArray *logs, GError **error) {
  for (guint i = 0; i < logs->len; i++) {
    const gs_rank_log *l = &g_array_index(logs, gs_rank_log, i);
    g_autofree char *file = g_filename_display_name(l->path);
    if (!l->has_run) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                  _("%s holds no distributed run (no dist_init event: it is the log of a "
                    "program that never called gs_dist_init, or older than format 1.7); several "
                    "logs must be the ranks of one run"),
                  file);
      return FALSE;
    }
    const gs_rank_log *first = &g_array_index(logs, gs_rank_log, 0);
    g_autofree char *first_file = g_filename_display_name(first->path);
    if (l->run != first->run) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                  _("%s and %s are not logs of one run: %s is rank %u of run %016" PRIx64
                    " and %s is rank %u of run %016" PRIx64 " (give the logs of one run's ranks)"),
                  first_file, file, first_file, first->rank, first->run, file, l->rank, l->run);
      return FALSE;
    }
    for (guint j = 0; j < i; j++) {
      const gs_rank_log *o = &g_array_index(logs, gs_rank_log, j);
      if (o->rank == l->rank) {
        g_autofree char *other = g_filename_display_name(o->path);
        g_set_error(
            error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
            _("%s and %s are both rank %u of run %016" PRIx64 " (give each rank's log once)"),
            other, file, l->rank, l->run);
        return FALSE;
      }
    }
  }
  g_array_sort(logs, by_rank);
  return TRUE;
}

gboolean gs_rank_logs_every_rank(const GArray *logs, GError **error) {
  const gs_rank_log *first = &g_array_index(logs, gs_rank_log, 0);
  if (logs->len == first->world)
    return TRUE; /* sorted, one run, no rank twice: 0..world-1 */
  g_autoptr(GString) missing = g_string_new(NULL);
  g_autoptr(GString) given = g_string_new(NULL);
  guint next = 0;
  for (guint i = 0; i <= logs->len; i++) {
    guint32 rank = i < logs->len ? g_array_index(logs, gs_rank_log, i).rank : first->world;
    for (; next < rank && next < first->world; next++)
      g_string_append_printf(missing, "%s%u", missing->len ? ", " : "", next);
    next = rank + 1;
    if (i < logs->len) {
      g_autofree char *file = g_filename_display_name(g_array_index(logs, gs_rank_log, i).path);
      if (given->len)
        g_string_append(given, ", ");
      /* TRANSLATORS: one file in the list of logs given: its name and its rank */
      g_string_append_printf(given, _("%s (rank %u)"), file, rank);
    }
  }
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
              _("run %016" PRIx64 " has %u ranks but these ranks' logs are missing: %s (given: "
                "%s); give the log of every rank"),
              first->run, first->world, missing->str, given->str);
  return FALSE;
}
