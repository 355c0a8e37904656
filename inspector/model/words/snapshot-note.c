/* snapshot-note.c: the sentence for a log that begins with a snapshot (snapshot-note.h).
 * Objects are tensors and composites, what scopes own and what the alive list counts. */
#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "snapshot-note.h"

char *gs_snapshot_note(guint64 first_seq, guint64 objects) {
  return g_strdup_printf(ngettext("recording began at event %" PRIu64 "; %" PRIu64
                                  " object was alive then",
                                  "recording began at event %" PRIu64 "; %" PRIu64
                                  " objects were alive then",
                                  objects),
                         (uint64_t)first_seq, (uint64_t)objects);
}

gboolean gs_snapshot_recreated(guint64 create_seq, guint64 first_seq) {
  return first_seq != 0 && create_seq < first_seq;
}

const char *gs_snapshot_made_before(void) {
  /* TRANSLATORS: an object alive when a flight recorder's window (or a late recording)
   * began: the log re-creates it but does not know when it was made */
  return _("made before the recording began (event unknown)");
}
