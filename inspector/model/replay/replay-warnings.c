/* replay-warnings.c: the words for what a replay met and stepped over (replay-warnings.h).
 * Counting happens where each rule is applied (replay-*.c, through replay_warn). */
#include "replay-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "event-fields.h"

void replay_warn(gs_replay *r, guint64 seq, gs_replay_warning_kind kind, guint64 id) {
  r->n_warnings++;
  if (r->warnings->len >= GS_REPLAY_WARNINGS_KEPT)
    return;
  gs_replay_warning w = {seq, kind, id};
  g_array_append_val(r->warnings, w);
}

char *gs_replay_warning_describe(const gs_replay_warning *w) {
  /* Handles are spelled as the engine spells them; storage ids are plain numbers. */
  char h[32];
  gs_format_handle(w->id, h, sizeof h);
  switch ((gs_replay_warning_kind)w->kind) {
  case GS_REPLAY_WARN_UNKNOWN_OBJECT:
    return g_strdup_printf(_("event %" PRIu64 ": %s is disposed, moved or given an owner, but it is "
                             "not alive: it was never made, or it is already gone; the event is "
                             "skipped"),
                           w->seq, h);
  case GS_REPLAY_WARN_OBJECT_TWICE:
    return g_strdup_printf(_("event %" PRIu64 ": %s is made again while it is alive; the new record "
                             "replaces the old one"),
                           w->seq, h);
  case GS_REPLAY_WARN_UNKNOWN_STORAGE:
    return g_strdup_printf(_("event %" PRIu64 ": storage #%" PRIu64 " is freed, but it is not alive; "
                             "the event is skipped"),
                           w->seq, w->id);
  case GS_REPLAY_WARN_STORAGE_TWICE:
    return g_strdup_printf(_("event %" PRIu64 ": storage #%" PRIu64 " is allocated again while it is "
                             "alive; the old one is taken as freed"),
                           w->seq, w->id);
  case GS_REPLAY_WARN_UNKNOWN_SCOPE:
    return g_strdup_printf(_("event %" PRIu64 ": scope %s ends, but it never began; the event is "
                             "skipped"),
                           w->seq, h);
  case GS_REPLAY_WARN_SCOPE_ENDED_TWICE:
    return g_strdup_printf(_("event %" PRIu64 ": scope %s ends a second time; the event is skipped"),
                           w->seq, h);
  case GS_REPLAY_WARN_SCOPE_TWICE:
    return g_strdup_printf(_("event %" PRIu64 ": scope %s begins again with the id of an earlier "
                             "scope; the new one replaces it"),
                           w->seq, h);
  case GS_REPLAY_WARN_SCOPE_OWN_OUTER:
    return g_strdup_printf(_("event %" PRIu64 ": scope %s names itself as its outer "
                             "scope; it is shown at the top"),
                           w->seq, h);
  case GS_REPLAY_WARN_UNKNOWN_OUTER:
    return g_strdup_printf(_("event %" PRIu64 ": scope %s names a scope that never began as its "
                             "outer scope; it is shown at the top"),
                           w->seq, h);
  case GS_REPLAY_WARN_NODE_TWICE:
    return g_strdup_printf(_("event %" PRIu64 ": graph node %s is made again while it is alive; the "
                             "new one replaces it"),
                           w->seq, h);
  default:
    break;
  }
  return g_strdup_printf(_("event %" PRIu64 ": an inconsistency of kind %u"), w->seq, w->kind);
}
