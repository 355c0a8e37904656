/* gs-source-spawn.c: a program the inspector runs as a source. Its log goes into a pipe
 * handed to it as GS_TRACE_FD (so no file or socket is left behind, and nothing else can
 * write into it); its stdout and stderr are collected for display, and its exit status
 * becomes the source's last word. */
#include "gs-trace-source-private.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <glib/gi18n-lib.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The descriptor number the program finds its log pipe on. */
#define TRACE_FD_IN_CHILD 3
#define READ_PIECE (256u << 10)
/* After the program exited, how long its pipes may stay quiet before we stop reading them:
 * a child it left behind may hold them open for ever. */
#define AFTER_EXIT_QUIET_MS 200

/* How the program ended, in words; broken when a signal ended it. */
static char *describe_exit(int wait_status, gboolean *broken) {
  *broken = FALSE;
  if (WIFEXITED(wait_status))
    return g_strdup_printf(_("The program exited with status %d."), WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    *broken = TRUE;
    int sig = WTERMSIG(wait_status);
    return g_strdup_printf(_("The program was killed by signal %d (%s)."), sig, g_strsignal(sig));
  }
  *broken = TRUE;
  return g_strdup(_("The program ended in an unknown way."));
}

/* Reads once from fd into the log queue (trace) or the output; FALSE at its end. */
static gboolean read_ready(GsTraceSource *self, int fd, gboolean trace, guint8 *piece,
                           char **failure) {
  gssize n = read(fd, piece, READ_PIECE);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  if (n < 0) {
    *failure = g_strdup_printf(_("Cannot read from the program: %s"), g_strerror(errno));
    return FALSE;
  }
  if (n == 0)
    return FALSE;
  if (trace)
    return gs_trace_source_push(self, piece, (gsize)n);
  gs_trace_source_post_output(self, (const char *)piece, (gsize)n);
  return TRUE;
}

static gpointer spawn_worker(gpointer data) {
  GsTraceSource *self = data;
  GInputStream *output = g_subprocess_get_stdout_pipe(self->process);
  int output_fd = g_unix_input_stream_get_fd(G_UNIX_INPUT_STREAM(output));
  GPollFD cancel_fd, exit_fd;
  gboolean can_cancel = g_cancellable_make_pollfd(self->cancellable, &cancel_fd);
  gboolean can_see_exit = g_cancellable_make_pollfd(self->exited, &exit_fd);
  g_autofree guint8 *piece = g_malloc(READ_PIECE);
  char *failure = NULL;
  gboolean trace_open = TRUE, output_open = TRUE, exited = FALSE;

  /* Until both pipes close (the program exited or closed them) or stay quiet for a while
   * after it exited, or we are told to leave. */
  while ((trace_open || output_open) && !failure && !gs_trace_source_stopping(self)) {
    struct pollfd fds[4] = {
      {.fd = trace_open ? self->trace_fd : -1, .events = POLLIN},
      {.fd = output_open ? output_fd : -1, .events = POLLIN},
      {.fd = can_cancel ? cancel_fd.fd : -1, .events = POLLIN},
      {.fd = can_see_exit && !exited ? exit_fd.fd : -1, .events = POLLIN},
    };
    int ready = poll(fds, 4, exited ? AFTER_EXIT_QUIET_MS : -1);
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      failure = g_strdup_printf(_("Cannot wait for the program: %s"), g_strerror(errno));
      break;
    }
    if (ready == 0)
      break; /* exited, and what it left behind writes nothing */
    if (fds[3].revents)
      exited = TRUE;
    if (trace_open && fds[0].revents)
      trace_open = read_ready(self, self->trace_fd, TRUE, piece, &failure);
    if (output_open && fds[1].revents && !failure)
      output_open = read_ready(self, output_fd, FALSE, piece, &failure);
  }
  if (can_cancel)
    g_cancellable_release_fd(self->cancellable);
  if (can_see_exit)
    g_cancellable_release_fd(self->exited);

  /* The exit status is wanted even when told to leave: dispose has killed the program. */
  g_subprocess_wait(self->process, NULL, NULL);
  int status = g_subprocess_get_status(self->process);
  if (WIFEXITED(status))
    gs_trace_source_post_exit_status(self, WEXITSTATUS(status));
  gboolean broken;
  char *how = describe_exit(status, &broken);
  if (failure) {
    gs_trace_source_post_end(self, TRUE, g_strdup_printf(_("%s %s"), how, failure));
    g_free(how);
    g_free(failure);
  } else {
    gs_trace_source_post_end(self, broken, how);
  }
  return NULL;
}

static void on_exited(GObject *process, GAsyncResult *result, gpointer data) {
  GCancellable *exited = data;
  g_subprocess_wait_finish(G_SUBPROCESS(process), result, NULL);
  g_cancellable_cancel(exited);
  g_object_unref(exited);
}

/* "prog arg 'two words'": how the source describes itself. */
static char *command_line(const char *const *argv) {
  GString *text = g_string_new(NULL);
  for (const char *const *arg = argv; *arg; arg++) {
    if (text->len)
      g_string_append_c(text, ' ');
    g_autofree char *quoted = g_shell_quote(*arg);
    gboolean plain = **arg && strpbrk(*arg, " \t\n'\"\\$`*?[]{}()<>|&;#~") == NULL;
    g_string_append(text, plain ? *arg : quoted);
  }
  return g_string_free(text, FALSE);
}

GsTraceSource *gs_trace_source_new_spawn(const char *const *argv, const char *cwd,
                                         GError **error) {
  if (!argv || !argv[0] || !*argv[0]) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                _("Expected a program to run (a command line with at least a program name), "
                  "got an empty one."));
    return NULL;
  }
  int fds[2];
  if (!g_unix_open_pipe(fds, FD_CLOEXEC, error))
    return NULL;

  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
      G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_take_fd(launcher, fds[1], TRACE_FD_IN_CHILD);
  /* GS_TRACE would win over GS_TRACE_FD in the recorder: the pipe must be the only sink. */
  g_subprocess_launcher_unsetenv(launcher, "GS_TRACE");
  g_autofree char *fd_text = g_strdup_printf("%d", TRACE_FD_IN_CHILD);
  g_subprocess_launcher_setenv(launcher, "GS_TRACE_FD", fd_text, TRUE);
  if (cwd)
    g_subprocess_launcher_set_cwd(launcher, cwd);
  GSubprocess *process = g_subprocess_launcher_spawnv(launcher, argv, error);
  /* Our copy of the write end must go, or the pipe never reports the program's end. */
  g_subprocess_launcher_close(launcher);
  if (!process) {
    close(fds[0]);
    return NULL;
  }

  g_autofree char *description = command_line(argv);
  const char *pid = g_subprocess_get_identifier(process); /* NULL once it has exited */
  g_autofree char *running = pid ? g_strdup_printf(_("Running %s (process %s)."), description, pid)
                                 : g_strdup_printf(_("Running %s."), description);
  GsTraceSource *self = gs_trace_source_new_of_kind(GS_TRACE_SOURCE_SPAWN, description,
                                                    GS_TRACE_SOURCE_LIVE, running);
  self->process = process;
  self->trace_fd = fds[0];
  /* The exit is seen on this (the UI) thread's context, and told to the worker's poll. */
  self->exited = g_cancellable_new();
  g_subprocess_wait_async(process, NULL, on_exited, g_object_ref(self->exited));
  gs_trace_source_start_worker(self, "gs-source-spawn", spawn_worker);
  return self;
}
