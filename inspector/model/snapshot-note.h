/* snapshot-note.h: what the user is told about a log that begins in the middle of a run (a
 * flight recorder's dump, or tracing switched on late): the one sentence `gradscope stats` and
 * the inspector's status line both show. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "recording began at event N; M objects were alive then", translated (g_free it). */
char *gs_snapshot_note(guint64 first_seq, guint64 objects);

G_END_DECLS
