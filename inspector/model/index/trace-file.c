/* trace-file.c: a saved log, read in pieces through the trace reader (see trace-file.h). */
#include "trace-file.h"

#include <errno.h>
#include <inttypes.h>
#include <glib/gi18n-lib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Big enough that reading costs little per event, small enough that progress moves. */
#define PIECE_SIZE (1u << 20)

void gs_trace_read_result_clear(gs_trace_read_result *result) {
  g_clear_pointer(&result->damage, g_free);
  memset(result, 0, sizeof *result);
}

/* Hands every whole event to the callback; FALSE once the log is damaged or the callback
 * stopped, since nothing after that point can be trusted or is wanted. */
static gboolean drain(gs_trace_reader *reader, gs_trace_event_fn on_event, gpointer user_data,
                      gs_trace_read_result *result) {
  for (;;) {
    gs_trace_event event;
    gs_trace_status status = gs_trace_reader_next(reader, &event);
    if (status == GS_TRACE_NEED_MORE)
      return TRUE;
    if (status == GS_TRACE_DAMAGED) {
      uint64_t offset = 0;
      const char *what = gs_trace_reader_error(reader, &offset);
      result->damage = g_strdup(what ? what : "unknown damage");
      result->damage_offset = offset;
      return FALSE;
    }
    result->events++;
    result->counted += !gs_trace_kind_is_table(event.kind);
    if (!on_event(&event, reader, user_data)) {
      result->stopped = TRUE;
      return FALSE;
    }
  }
}

gboolean gs_trace_file_read(const char *path, gs_trace_event_fn on_event,
                            gs_trace_progress_fn progress, gpointer user_data,
                            gs_trace_read_result *result, GError **error) {
  memset(result, 0, sizeof *result);
  FILE *file = fopen(path, "rb");
  if (!file) {
    int saved = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "cannot open %s: %s", path,
                g_strerror(saved));
    return FALSE;
  }
  struct stat st;
  if (fstat(fileno(file), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(file);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "cannot read %s: it is a directory",
                path);
    return FALSE;
  }
  guint64 total = S_ISREG(st.st_mode) ? (guint64)st.st_size : 0;

  gs_trace_reader *reader = gs_trace_reader_new();
  guint8 *piece = g_malloc(PIECE_SIZE);
  gboolean ok = TRUE, more = TRUE;
  while (more) {
    size_t n = fread(piece, 1, PIECE_SIZE, file);
    if (n > 0) {
      gs_trace_reader_feed(reader, piece, n);
      result->bytes += n;
      more = drain(reader, on_event, user_data, result);
      if (progress)
        progress(result->bytes, total, user_data);
    }
    if (n < PIECE_SIZE) {
      if (ferror(file)) {
        int saved = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
                    "cannot read %s: %s", path, g_strerror(saved));
        ok = FALSE;
      }
      break;
    }
  }
  if (ok && !result->damage && !result->stopped) {
    uint64_t offset = 0;
    if (gs_trace_reader_truncated(reader, &offset)) {
      result->truncated = TRUE;
      result->truncated_offset = offset;
    }
  }
  uint64_t start_realtime = 0;
  result->has_header = gs_trace_reader_header(reader, &result->major, &result->minor,
                                              &start_realtime, &result->pid);
  /* An empty file or one shorter than the header: the reader has nothing to complain about,
   * but there is no log either. */
  if (ok && !result->has_header && !result->damage && !result->truncated) {
    result->truncated = TRUE;
    result->truncated_offset = 0;
  }
  g_free(piece);
  gs_trace_reader_free(reader);
  fclose(file);
  return ok;
}

char *gs_trace_problem_damaged(const char *what, guint64 events) {
  return g_strdup_printf(_("The log is damaged: %s. The %" PRIu64
                           " events before the damage are shown."),
                         what ? what : "?", (uint64_t)events);
}

char *gs_trace_problem_truncated(guint64 at, guint64 events) {
  return g_strdup_printf(_("The log ends in the middle of a chunk at byte %" PRIu64
                           ": the program was killed or is still "
                           "writing. The %" PRIu64 " events before it are "
                           "shown."), (uint64_t)at, (uint64_t)events);
}

char *gs_trace_read_result_problem(const gs_trace_read_result *result) {
  if (result->damage)
    return gs_trace_problem_damaged(result->damage, result->counted);
  if (result->truncated && !result->has_header)
    return g_strdup_printf("log ends at byte %" G_GUINT64_FORMAT " before its header is complete: "
                           "empty, not a gradscope log, or the writer has not started",
                           result->bytes);
  if (result->truncated)
    return gs_trace_problem_truncated(result->truncated_offset, result->counted);
  return NULL;
}

char *gs_trace_file_not_a_log(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return NULL; /* a folder, a device, a socket: the caller says what it is */
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char head[64];
  size_t n = fread(head, 1, sizeof head, f);
  gboolean failed = ferror(f) != 0;
  fclose(f);
  if (failed)
    return NULL;
  static const char magic[8] = {'G', 'R', 'A', 'D', 'S', 'C', 'O', 'P'};
  if (n == 0)
    return g_strdup_printf(_("%s is empty: a Gradscope log starts with a 64-byte GRADSCOP "
                             "header"), path);
  if (n < sizeof magic || memcmp(head, magic, sizeof magic) != 0) {
    GString *start = g_string_new(NULL);
    for (size_t i = 0; i < n && i < 8; i++)
      g_string_append_printf(start, "%s%02x", i ? " " : "", head[i]);
    char *text = g_strdup_printf(_("%s is not a Gradscope log (no GRADSCOP header: it starts "
                                   "with the bytes %s)"), path, start->str);
    g_string_free(start, TRUE);
    return text;
  }
  if (n < sizeof head)
    return g_strdup_printf(_("%s ends inside its log header (%zu of 64 bytes): the program "
                             "recording it has only just started, or the file was cut"),
                           path, n);
  return NULL;
}
