/* cmd-record.c: `gradscope record [-o FILE] -- PROGRAM ARGS...`: runs a program with the
 * recorder pointed at FILE (GS_TRACE in its environment), waits for it, says where the log is
 * and how many events it holds, and exits with the program's own status so scripts and CI
 * see its failures. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static gboolean count_event(const gs_trace_event *event, const gs_trace_reader *reader,
                            gpointer user_data) {
  (void)event;
  (void)reader;
  (void)user_data;
  return TRUE;
}

/* The program's exit status as a shell reports it: its code, or 128 + the signal. */
static int wait_status(GPid pid, const char *program) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      cli_error("record: waiting for %s failed: %s", program, g_strerror(errno));
      return 1;
    }
  if (WIFSIGNALED(status)) {
    g_autofree char *safe = cli_printable(program);
    fprintf(stderr, "gradscope: %s was killed by signal %d (%s)\n", safe, WTERMSIG(status),
            g_strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int cli_record(int argc, char **argv) {
  char *out_path = NULL;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
       "Where to write the log (default: gradscope-PID.gstrace here)", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "-- PROGRAM [ARGS...]", entries,
      "Runs PROGRAM with GS_TRACE=FILE in its environment, so a program linked with\n"
      "libgradscope records its event log there, then prints where the log is and how\n"
      "many events it holds. Exits with the program's status (128 + N if signal N\n"
      "killed it).");
  /* Options stop at "--": everything after it is the program's, untouched. */
  int split = argc;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--")) {
      split = i;
      break;
    }
  int own_argc = split;
  g_autofree char **own_argv = g_new0(char *, own_argc + 1);
  memcpy(own_argv, argv, sizeof(char *) * own_argc);
  char **parse_argv = own_argv;
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(context, &own_argc, &parse_argv, &error)) {
    cli_error("record: %s", error->message);
    return 1;
  }
  g_autofree char *out_owned = out_path;
  /* Without "--", whatever the options left is the program. */
  char **program = split < argc ? argv + split + 1 : parse_argv + 1;
  int program_argc = split < argc ? argc - split - 1 : own_argc - 1;
  if (split < argc && own_argc > 1) {
    cli_error("record: unexpected '%s' before -- (see gradscope record --help)", parse_argv[1]);
    return 1;
  }
  if (program_argc < 1) {
    cli_error("record: no program given: gradscope record [-o FILE] -- PROGRAM ARGS...");
    return 1;
  }
  g_autofree char *log_path =
      out_path ? g_strdup(out_path) : g_strdup_printf("gradscope-%d.gstrace", (int)getpid());

  char **env = g_get_environ();
  env = g_environ_setenv(env, "GS_TRACE", log_path, TRUE);
  env = g_environ_unsetenv(env, "GS_TRACE_FD"); /* one destination: ours */
  g_autofree char **child_argv = g_new0(char *, program_argc + 1);
  memcpy(child_argv, program, sizeof(char *) * program_argc);
  GPid pid;
  gboolean spawned = g_spawn_async(NULL, child_argv, env,
                                   G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                       G_SPAWN_CHILD_INHERITS_STDIN,
                                   NULL, NULL, &pid, &error);
  g_strfreev(env);
  if (!spawned) {
    cli_error("record: cannot run %s: %s", program[0], error->message);
    return 127;
  }
  /* Ctrl-C at the terminal reaches the program too: let it decide how to stop (the recorder
   * flushes on fatal signals), and stay to report where its log is. g_spawn_async returns
   * after the exec, so the program does not inherit these dispositions. */
  void (*old_int)(int) = signal(SIGINT, SIG_IGN);
  void (*old_quit)(int) = signal(SIGQUIT, SIG_IGN);
  int status = wait_status(pid, program[0]);
  signal(SIGINT, old_int);
  signal(SIGQUIT, old_quit);
  g_spawn_close_pid(pid);

  gs_trace_read_result result;
  g_autoptr(GError) read_error = NULL;
  g_autofree char *shown = cli_printable(log_path);
  if (!gs_trace_file_read(log_path, count_event, NULL, NULL, &result, &read_error)) {
    fprintf(stderr, "gradscope: no log at %s (%s): is %s linked with libgradscope?\n", shown,
            read_error->message, program[0]);
    return status ? status : 1;
  }
  fprintf(stderr, "gradscope: recorded %" G_GUINT64_FORMAT " events (%" G_GUINT64_FORMAT
                  " bytes) to %s\n",
          result.events, result.bytes, shown);
  cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
