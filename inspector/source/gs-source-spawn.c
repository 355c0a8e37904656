/* gs-source-spawn.c: a program the inspector runs as a source. Its log goes into a pipe
 * handed to it as GS_TRACE_FD (so no file or socket is left behind, and nothing else can
 * write into it); its stdout and stderr come through two more pipes, are echoed unchanged
 * to where the inspector was asked to (its own terminal), and are cut into lines for the
 * Output pane. Its exit status becomes the source's last word, and the output's last line. */
#include "gs-trace-source-private.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <glib/gi18n-lib.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gs-output-lines.h"

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

/* One of the program's output pipes. */
typedef struct output_pipe {
  int fd;
  gboolean open;
  int echo_fd; /* -1 once echoing failed (a closed terminal): the pane still gets it all */
  gs_line_cutter cutter;
} output_pipe;

/* Writes all n bytes to fd, waiting while it is full (a terminal scrolled back, a slow
 * pipe: like tee, the program waits for its reader) unless told to leave. FALSE if fd
 * cannot take them: the echo stops, not the program. */
static gboolean echo_write(GsTraceSource *self, int fd, const guint8 *bytes, gsize n,
                           int cancel_fd) {
  while (n > 0) {
    struct pollfd fds[2] = {{.fd = fd, .events = POLLOUT}, {.fd = cancel_fd, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return FALSE;
    }
    if (fds[1].revents || gs_trace_source_stopping(self))
      return FALSE;
    /* Up to PIPE_BUF at a time: what a pipe that polls writable takes without blocking. */
    gssize done = write(fd, bytes, MIN(n, (gsize)PIPE_BUF));
    if (done < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (done <= 0)
      return FALSE;
    bytes += done;
    n -= (gsize)done;
  }
  return TRUE;
}

/* Reads once from a pipe of output into the lines posted; FALSE at its end. */
static gboolean read_output(GsTraceSource *self, output_pipe *pipe, guint8 *piece,
                            int cancel_fd, char **failure) {
  gssize n = read(pipe->fd, piece, READ_PIECE);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  if (n < 0) {
    *failure = g_strdup_printf(_("Cannot read from the program: %s"), g_strerror(errno));
    return FALSE;
  }
  g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func((GDestroyNotify)gs_output_line_free);
  if (n == 0) {
    gs_line_cutter_finish(&pipe->cutter, lines); /* a last line without its newline */
  } else {
    if (pipe->echo_fd >= 0 && !echo_write(self, pipe->echo_fd, piece, (gsize)n, cancel_fd))
      pipe->echo_fd = -1;
    gs_line_cutter_feed(&pipe->cutter, piece, (gsize)n, lines);
  }
  gs_trace_source_post_output(self, lines);
  return n > 0;
}

/* Reads once from the log pipe into the queue; FALSE at its end. */
static gboolean read_trace(GsTraceSource *self, guint8 *piece, char **failure) {
  gssize n = read(self->trace_fd, piece, READ_PIECE);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return TRUE;
  if (n < 0) {
    *failure = g_strdup_printf(_("Cannot read from the program: %s"), g_strerror(errno));
    return FALSE;
  }
  return n > 0 && gs_trace_source_push(self, piece, (gsize)n);
}

static int pipe_fd(GInputStream *stream) {
  return g_unix_input_stream_get_fd(G_UNIX_INPUT_STREAM(stream));
}

static gpointer spawn_worker(gpointer data) {
  GsTraceSource *self = data;
  /* A closed terminal must end the echo with EPIPE, not the inspector with SIGPIPE: blocked
   * on this thread, the signal a failed write raises stays pending here and harmless. */
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, NULL);

  output_pipe outputs[2] = {
    {pipe_fd(g_subprocess_get_stdout_pipe(self->process)), TRUE, self->echo_fd[0], {0}},
    {pipe_fd(g_subprocess_get_stderr_pipe(self->process)), TRUE, self->echo_fd[1], {0}},
  };
  gs_line_cutter_init(&outputs[0].cutter, GS_OUTPUT_STDOUT);
  gs_line_cutter_init(&outputs[1].cutter, GS_OUTPUT_STDERR);
  GPollFD cancel_fd, exit_fd;
  gboolean can_cancel = g_cancellable_make_pollfd(self->cancellable, &cancel_fd);
  gboolean can_see_exit = g_cancellable_make_pollfd(self->exited, &exit_fd);
  g_autofree guint8 *piece = g_malloc(READ_PIECE);
  char *failure = NULL;
  gboolean trace_open = TRUE, exited = FALSE;

  /* Until the pipes close (the program exited or closed them) or stay quiet for a while
   * after it exited, or we are told to leave. */
  while ((trace_open || outputs[0].open || outputs[1].open) && !failure &&
         !gs_trace_source_stopping(self)) {
    struct pollfd fds[5] = {
      {.fd = trace_open ? self->trace_fd : -1, .events = POLLIN},
      {.fd = outputs[0].open ? outputs[0].fd : -1, .events = POLLIN},
      {.fd = outputs[1].open ? outputs[1].fd : -1, .events = POLLIN},
      {.fd = can_cancel ? cancel_fd.fd : -1, .events = POLLIN},
      {.fd = can_see_exit && !exited ? exit_fd.fd : -1, .events = POLLIN},
    };
    int ready = poll(fds, 5, exited ? AFTER_EXIT_QUIET_MS : -1);
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      failure = g_strdup_printf(_("Cannot wait for the program: %s"), g_strerror(errno));
      break;
    }
    if (ready == 0)
      break; /* exited, and what it left behind writes nothing */
    if (fds[4].revents)
      exited = TRUE;
    if (trace_open && fds[0].revents)
      trace_open = read_trace(self, piece, &failure);
    for (int i = 0; i < 2; i++)
      if (outputs[i].open && fds[1 + i].revents && !failure)
        outputs[i].open = read_output(self, &outputs[i], piece,
                                      can_cancel ? cancel_fd.fd : -1, &failure);
  }

  /* The unfinished last lines of pipes still open: shown, not lost. */
  g_autoptr(GPtrArray) last = g_ptr_array_new_with_free_func((GDestroyNotify)gs_output_line_free);
  for (int i = 0; i < 2; i++) {
    gs_line_cutter_finish(&outputs[i].cutter, last);
    gs_line_cutter_clear(&outputs[i].cutter);
  }
  gs_trace_source_post_output(self, last);
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
  g_autofree char *how = describe_exit(status, &broken);
  char *note = failure ? g_strdup_printf(_("%s %s"), how, failure) : g_strdup(how);
  g_ptr_array_add(last, gs_output_line_new(GS_OUTPUT_EXIT, note, strlen(note)));
  gs_trace_source_post_output(self, last);
  gs_trace_source_post_end(self, broken || failure, note);
  g_free(failure);
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
                                         int echo_stdout, int echo_stderr, GError **error) {
  return gs_trace_source_new_spawn_env(argv, cwd, NULL, echo_stdout, echo_stderr, error);
}

GsTraceSource *gs_trace_source_new_spawn_env(const char *const *argv, const char *cwd,
                                             const char *const *env, int echo_stdout,
                                             int echo_stderr, GError **error) {
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
      G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_fd(launcher, fds[1], TRACE_FD_IN_CHILD);
  /* GS_TRACE would win over GS_TRACE_FD in the recorder: the pipe must be the only sink. */
  g_subprocess_launcher_unsetenv(launcher, "GS_TRACE");
  g_autofree char *fd_text = g_strdup_printf("%d", TRACE_FD_IN_CHILD);
  g_subprocess_launcher_setenv(launcher, "GS_TRACE_FD", fd_text, TRUE);
  for (const char *const *v = env; v && *v; v++) {
    g_auto(GStrv) pair = g_strsplit(*v, "=", 2);
    if (pair[0] && pair[1] && strcmp(pair[0], "GS_TRACE") && strcmp(pair[0], "GS_TRACE_FD"))
      g_subprocess_launcher_setenv(launcher, pair[0], pair[1], TRUE);
  }
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
  self->echo_fd[0] = echo_stdout;
  self->echo_fd[1] = echo_stderr;
  /* The exit is seen on this (the UI) thread's context, and told to the worker's poll. */
  self->exited = g_cancellable_new();
  g_subprocess_wait_async(process, NULL, on_exited, g_object_ref(self->exited));
  gs_trace_source_start_worker(self, "gs-source-spawn", spawn_worker);
  return self;
}
