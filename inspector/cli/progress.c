/* progress.c: a one-line progress bar on stderr for reading big logs. Only on a terminal:
 * redirected stderr (tests, CI logs) stays free of carriage returns. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

struct cli_progress {
  char *label;
  gint64 started_us, last_draw_us;
  gboolean drawn;
};

cli_progress *cli_progress_new(const char *label) {
  if (!isatty(STDERR_FILENO))
    return NULL;
  cli_progress *p = g_new0(cli_progress, 1);
  p->label = g_strdup(label);
  p->started_us = g_get_monotonic_time();
  return p;
}

void cli_progress_update(guint64 done, guint64 total, gpointer user_data) {
  cli_progress *p = user_data;
  if (!p)
    return;
  gint64 now = g_get_monotonic_time();
  /* Quiet for the first half second (small logs never flash a bar), then ten redraws a second. */
  if (now - p->started_us < 500000 || now - p->last_draw_us < 100000)
    return;
  p->last_draw_us = now;
  p->drawn = TRUE;
  enum { WIDTH = 30 };
  double fraction = total ? MIN(1.0, (double)done / (double)total) : 0.0;
  int filled = (int)(fraction * WIDTH);
  char bar[WIDTH + 1];
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < filled ? '#' : '-';
  bar[WIDTH] = 0;
  g_autofree char *size = g_format_size(done);
  fprintf(stderr, "\r%s [%s] %3d%% %s ", p->label, bar, (int)(fraction * 100), size);
  fflush(stderr);
}

void cli_progress_free(cli_progress *p) {
  if (!p)
    return;
  if (p->drawn) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
  g_free(p->label);
  g_free(p);
}
