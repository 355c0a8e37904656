/* gs-recent.h: the recent captures list kept in GSettings ("recent-files", newest first). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Puts path first (made absolute, once), keeping at most "max-recent-files" entries. */
void gs_recent_add(GSettings *settings, const char *path);
/* Forgets path (a capture that can no longer be opened). */
void gs_recent_remove(GSettings *settings, const char *path);

G_END_DECLS
