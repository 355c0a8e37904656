/* gs-handle-entry.h: reading an engine handle typed by a person ("#12.1", "12.1", "#12") in
 * the inspector's filter entries. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parses text into a handle id (slot | generation << 32; a missing generation means 1, the
 * first use of a slot). Empty text gives 0 and TRUE. Bad text gives FALSE and a translated
 * message saying what was expected and what was given. */
gboolean gs_parse_handle(const char *text, guint64 *id, char **message);

G_END_DECLS
