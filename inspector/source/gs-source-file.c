/* gs-source-file.c: a log file as a source. The worker loads what the file holds into a
 * model of its own (with progress, so a 10 M-event file never blocks the UI) and hands it
 * over; when following, it then polls the file for what a running program appends and
 * queues it for gs_trace_source_pump. Polling a read offset survives every way a writer
 * appends (partial chunks included: the reader waits for the rest).
 *
 * A file read once goes through gs_trace_model_load_file, whose model re-reads event bytes
 * from the file instead of keeping them. A followed file is fed like a stream, because
 * load_file finishes its model and a followed one must go on; its model reads event bytes
 * back from the file too (gs_trace_model_read_back_from), so a long followed run costs no
 * more memory than the same log opened once. */
#include "gs-trace-source-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <inttypes.h> /* PRIu64, which xgettext understands in translatable formats */
#include <sys/stat.h>
#include <unistd.h>

/* Read at a time while loading: large enough to cost little per event, small enough that
 * progress moves and a stop is noticed quickly. */
#define LOAD_PIECE (1u << 20)
#define FOLLOW_PIECE (256u << 10)
/* How often a followed file is looked at when nothing new was there: well under the
 * 100 ms an event may take to appear, and only a read() each time. */
#define FOLLOW_POLL_US (10 * 1000)

/* read() that retries interruptions; -1 with errno on failure. */
static gssize read_some(int fd, void *buf, gsize n) {
  for (;;) {
    gssize got = read(fd, buf, n);
    if (got >= 0 || errno != EINTR)
      return got;
  }
}

static char *read_failed(GsTraceSource *self, int saved_errno) {
  return g_strdup_printf(_("Cannot read %s: %s"), self->path, g_strerror(saved_errno));
}

/* Feeds fd into a new model until its current end (or damage, or a stop); *offset receives
 * the bytes read, *failure what went wrong if reading failed (the model keeps what came
 * before). */
static gs_trace_model *load(GsTraceSource *self, int fd, guint64 total, guint64 *offset,
                            char **failure) {
  gs_trace_model *m = gs_trace_model_new();
  /* What we read from a regular file is still there to read again; a pipe's bytes are not. */
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    gs_trace_model_read_back_from(m, fd);
  g_autofree guint8 *piece = g_malloc(LOAD_PIECE);
  *offset = 0;
  while (!gs_trace_source_stopping(self)) {
    gssize n = read_some(fd, piece, LOAD_PIECE);
    if (n < 0) {
      *failure = read_failed(self, errno);
      break;
    }
    if (n == 0)
      break;
    gs_trace_model_feed(m, piece, (gsize)n);
    *offset += (guint64)n;
    /* The file may grow while it loads: progress is against the size seen at the start. */
    if (total > 0)
      gs_trace_source_post_progress(self, MIN(1.0, (double)*offset / (double)total));
    if (gs_trace_model_damaged(m))
      break; /* nothing after damage is read: the model says where it is */
  }
  return m;
}

/* Queues what a running program appends, until told to stop or the file shrinks under us
 * (the program restarted and truncated it: a new log, not a continuation of this one). */
static void follow(GsTraceSource *self, int fd, guint64 offset) {
  g_autofree guint8 *piece = g_malloc(FOLLOW_PIECE);
  for (;;) {
    gssize n = read_some(fd, piece, FOLLOW_PIECE);
    if (n < 0) {
      gs_trace_source_post_end(self, TRUE, read_failed(self, errno));
      return;
    }
    if (n > 0) {
      offset += (guint64)n;
      if (!gs_trace_source_push(self, piece, (gsize)n))
        break;
      continue;
    }
    struct stat st, at_path;
    if (fstat(fd, &st) == 0 && (guint64)st.st_size < offset) {
      gs_trace_source_post_end(self, TRUE,
          g_strdup_printf(_("The file was truncated to %" PRIu64 " bytes while %" PRIu64
                            " were read: a new recording may have started. Open the file "
                            "again to see it."), (guint64)st.st_size, offset));
      return;
    }
    /* Replaced (written elsewhere and renamed over it): what we follow is no longer what the
     * path shows. Merely deleted is fine: a writer may still append to what we hold. */
    if (stat(self->path, &at_path) == 0 &&
        (at_path.st_ino != st.st_ino || at_path.st_dev != st.st_dev)) {
      gs_trace_source_post_end(self, TRUE, g_strdup_printf(
          _("%s was replaced by another file: a new recording may have started. Open the file "
            "again to see it."), self->path));
      return;
    }
    if (!gs_trace_source_wait(self, FOLLOW_POLL_US))
      break;
  }
  gs_trace_source_post_end(self, FALSE, g_strdup(_("Stopped following the file.")));
}

static void on_load_progress(guint64 done, guint64 total, gpointer data) {
  if (total > 0) /* the file may grow while it loads: against the size seen at the start */
    gs_trace_source_post_progress(data, MIN(1.0, (double)done / (double)total));
}

/* A file read once: the model keeps its bytes on disk. */
static void read_once(GsTraceSource *self) {
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(self->path, on_load_progress, self,
                                               self->cancellable, &error);
  if (!m)
    gs_trace_source_post_end(self, !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED),
                             g_strdup(error->message));
  else /* the model says whether the log is whole */
    gs_trace_source_post_loaded(self, m, TRUE, FALSE, g_strdup(_("The whole log was read.")));
}

/* A followed file: loaded like a stream, then polled for more. */
static void read_and_follow(GsTraceSource *self) {
  int fd = open(self->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    gs_trace_source_post_end(self, TRUE, g_strdup_printf(_("Cannot open %s: %s"), self->path,
                                                         g_strerror(saved)));
    return;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    gs_trace_source_post_end(self, TRUE,
        g_strdup_printf(_("Cannot read %s: it is a folder, not an event log"), self->path));
    return;
  }
  guint64 total = S_ISREG(st.st_mode) ? (guint64)st.st_size : 0;
  guint64 offset = 0;
  char *failure = NULL;
  gs_trace_model *m = load(self, fd, total, &offset, &failure);
  /* From here the UI thread owns m. */
  if (failure)
    gs_trace_source_post_loaded(self, m, TRUE, TRUE, failure);
  else if (gs_trace_model_damaged(m)) /* the model's problem says where */
    gs_trace_source_post_loaded(self, m, TRUE, TRUE, NULL);
  else if (gs_trace_source_stopping(self))
    gs_trace_source_post_loaded(self, m, TRUE, FALSE, NULL);
  else {
    gs_trace_source_post_loaded(self, m, FALSE, FALSE, NULL);
    follow(self, fd, offset);
  }
  close(fd);
}

static gpointer file_worker(gpointer data) {
  GsTraceSource *self = data;
  if (self->follow)
    read_and_follow(self);
  else
    read_once(self);
  return NULL;
}

GsTraceSource *gs_trace_source_new_file(const char *path, gboolean follow) {
  g_return_val_if_fail(path != NULL, NULL);
  GsTraceSource *self = gs_trace_source_new_of_kind(GS_TRACE_SOURCE_FILE, path,
                                                    GS_TRACE_SOURCE_LOADING,
                                                    _("Loading the log…"));
  self->path = g_strdup(path);
  self->follow = follow;
  gs_trace_source_start_worker(self, "gs-source-file", file_worker);
  return self;
}
