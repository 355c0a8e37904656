/* trace-file.h: reading a saved log from start to end through the trace reader.
 *
 * The file is read in 1 MiB pieces and fed to gs_trace_reader_feed; every whole event is
 * handed to a callback. Damage and truncation are not failures: every valid event before
 * them is delivered, then the result says what and where, so each caller can decide how loud
 * to be (the CLI warns and exits 2; the inspector shows a toast). */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

G_BEGIN_DECLS

/* Called for each event in log order; the reader resolves string ids. Return FALSE to stop. */
typedef gboolean (*gs_trace_event_fn)(const gs_trace_event *event, const gs_trace_reader *reader,
                                      gpointer user_data);
/* Called after each piece read: bytes done of total (total 0 when the size is unknown). */
typedef void (*gs_trace_progress_fn)(guint64 done, guint64 total, gpointer user_data);

typedef struct gs_trace_read_result {
  guint64 events;     /* delivered to the callback */
  guint64 counted;    /* of those, the ones the model counts: all but string-table entries */
  guint64 bytes;      /* read from the file */
  gboolean stopped;   /* the callback asked to stop */
  gboolean has_header;
  guint32 major, minor, pid;
  /* The reader found damage: what (owned) and at which byte. */
  char *damage;
  guint64 damage_offset;
  /* The log ends inside a chunk (or its header): a crashed or still-running writer. */
  gboolean truncated;
  guint64 truncated_offset;
} gs_trace_read_result;

void gs_trace_read_result_clear(gs_trace_read_result *result);

/* Reads path through a new reader. Returns FALSE (with error set) only if the file cannot be
 * opened or read; damage is reported in result. progress may be NULL. */
gboolean gs_trace_file_read(const char *path, gs_trace_event_fn on_event,
                            gs_trace_progress_fn progress, gpointer user_data,
                            gs_trace_read_result *result, GError **error);

/* The one sentence every command and the inspector give for a file that holds no Gradscope
 * log, from its first bytes: empty; not a log at all (no GRADSCOP header, with what it starts
 * with); or a log header cut short. NULL if the file starts with a whole header (or cannot be
 * read: the caller reports that). Translated; newly allocated. */
char *gs_trace_file_not_a_log(const char *path);

/* One line for a damaged or truncated result, or NULL if the log was whole: the same sentence,
 * with the same count of events, as the model's (gs_trace_problem_damaged, _truncated). Free
 * with g_free. */
char *gs_trace_read_result_problem(const gs_trace_read_result *result);

/* The sentences for a damaged log (what the reader says, at the damage) and a log that ends
 * inside a chunk, each with the number of events before it (string-table entries not
 * counted): shared by the model, the CLI and the inspector, so a log is described the same
 * everywhere. Translated; newly allocated. */
char *gs_trace_problem_damaged(const char *what, guint64 events);
char *gs_trace_problem_truncated(guint64 at, guint64 events);

G_END_DECLS
