/* rank-logs.c: several logs read as the ranks of one distributed run, as `stats`, `explain`
 * and `diff` take them: model/index/rank-logs.c reads and checks them (the inspector's window
 * does the same); this prefixes its refusals with the command. */

#include "cli.h"

GArray *cli_rank_logs_read(const char *command, char **paths, int n) {
  GArray *logs = g_array_new(FALSE, TRUE, sizeof(cli_rank_log));
  for (int i = 0; i < n; i++) {
    cli_rank_log log;
    g_autoptr(GError) error = NULL;
    if (!gs_rank_log_read(paths[i], &log, &error)) {
      cli_error("%s: %s", command, error->message);
      g_array_unref(logs);
      return NULL;
    }
    g_array_append_val(logs, log);
  }
  return logs;
}

gboolean cli_rank_logs_one_run(const char *command, GArray *logs) {
  g_autoptr(GError) error = NULL;
  if (gs_rank_logs_one_run(logs, &error))
    return TRUE;
  cli_error("%s: %s", command, error->message);
  return FALSE;
}
