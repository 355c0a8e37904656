/* snapshot-note.h: what the user is told about a log that begins in the middle of a run (a
 * flight recorder's dump, or tracing switched on late): the one sentence `gradscope stats` and
 * the inspector's status line both show. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "recording began at event N; M objects were alive then", translated (g_free it). */
char *gs_snapshot_note(guint64 first_seq, guint64 objects);

/* Whether an object created at create_seq in a log whose recording began at event first_seq
 * (0: a log from the start) was re-created by the opening snapshot: made before the recording
 * began, at an event the log does not know. */
gboolean gs_snapshot_recreated(guint64 create_seq, guint64 first_seq);

/* "made before the recording began (event unknown)", translated: what is said instead of
 * "made at event N" of such an object. Static: do not free. */
const char *gs_snapshot_made_before(void);

G_END_DECLS
