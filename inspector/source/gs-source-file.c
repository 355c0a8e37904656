/* gs-source-file.c: a log file as a source. The worker loads what the file holds into a
 * model of its own (with progress, so a 10 M-event file never blocks the UI) and hands it
 * over; when following, it then polls the file for what a running program appends and
 * queues it for gs_trace_source_pump. Polling a read offset survives every way a writer
 * appends (partial chunks included: the reader waits for the rest). */
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
  return g_strdup_printf(_("cannot read %s: %s"), self->path, g_strerror(saved_errno));
}

/* Loads from fd until its current end into a new model; FALSE (with *failure set) if
 * reading failed. *offset receives the bytes read. */
static gs_trace_model *load(GsTraceSource *self, int fd, guint64 total, guint64 *offset,
                            char **failure) {
  gs_trace_model *m = gs_trace_model_new();
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
    if (gs_trace_model_damage(m, NULL))
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
    struct stat st;
    if (fstat(fd, &st) == 0 && (guint64)st.st_size < offset) {
      gs_trace_source_post_end(self, TRUE,
          g_strdup_printf(_("%s was truncated while being followed (at %" PRIu64
                            " of %" PRIu64 " bytes): a new recording may have "
                            "started; open it again to see it"),
                          self->path, (guint64)st.st_size, offset));
      return;
    }
    if (!gs_trace_source_wait(self, FOLLOW_POLL_US))
      break;
  }
  gs_trace_source_post_end(self, FALSE, g_strdup(_("stopped following the file")));
}

static gpointer file_worker(gpointer data) {
  GsTraceSource *self = data;
  int fd = open(self->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    gs_trace_source_post_end(self, TRUE, g_strdup_printf(_("cannot open %s: %s"), self->path,
                                                         g_strerror(saved)));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    gs_trace_source_post_end(self, TRUE,
        g_strdup_printf(_("cannot read %s: it is a folder, not a log file"), self->path));
    return NULL;
  }
  guint64 total = S_ISREG(st.st_mode) ? (guint64)st.st_size : 0;

  guint64 offset = 0;
  char *failure = NULL;
  gs_trace_model *m = load(self, fd, total, &offset, &failure);
  gboolean damaged = gs_trace_model_damage(m, NULL) != NULL;
  /* From here the UI thread owns m. */
  if (failure)
    gs_trace_source_post_loaded(self, m, TRUE, TRUE, failure);
  else if (damaged) /* the model says where: the state's message comes from it */
    gs_trace_source_post_loaded(self, m, TRUE, TRUE, NULL);
  else if (!self->follow || gs_trace_source_stopping(self))
    gs_trace_source_post_loaded(self, m, TRUE, FALSE, g_strdup(_("the whole log was read")));
  else {
    gs_trace_source_post_loaded(self, m, FALSE, FALSE, NULL);
    follow(self, fd, offset);
  }
  close(fd);
  return NULL;
}

GsTraceSource *gs_trace_source_new_file(const char *path, gboolean follow) {
  g_return_val_if_fail(path != NULL, NULL);
  GsTraceSource *self = gs_trace_source_new_of_kind(GS_TRACE_SOURCE_FILE, path,
                                                    GS_TRACE_SOURCE_LOADING,
                                                    _("loading the log"));
  self->path = g_strdup(path);
  self->follow = follow;
  gs_trace_source_start_worker(self, "gs-source-file", file_worker);
  return self;
}
