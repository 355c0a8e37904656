/* gs-recent.c: the recent captures list (see the header). */
#include "gs-recent.h"

/* Rewrites the list without path, then with it first if add. */
static void update(GSettings *settings, const char *path, gboolean add) {
  g_autofree char *absolute = g_canonicalize_filename(path, NULL);
  g_auto(GStrv) old = g_settings_get_strv(settings, "recent-files");
  guint max = g_settings_get_uint(settings, "max-recent-files");
  g_autoptr(GStrvBuilder) list = g_strv_builder_new();
  guint n = 0;
  if (add && max > 0) {
    g_strv_builder_add(list, absolute);
    n++;
  }
  for (guint i = 0; old[i] && n < max; i++) {
    if (g_str_equal(old[i], absolute))
      continue;
    g_strv_builder_add(list, old[i]);
    n++;
  }
  g_auto(GStrv) now = g_strv_builder_end(list);
  if (!g_strv_equal((const char *const *)old, (const char *const *)now))
    g_settings_set_strv(settings, "recent-files", (const char *const *)now);
}

void gs_recent_add(GSettings *settings, const char *path) {
  update(settings, path, TRUE);
}

void gs_recent_remove(GSettings *settings, const char *path) {
  update(settings, path, FALSE);
}
