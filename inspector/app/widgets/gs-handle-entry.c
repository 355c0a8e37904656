/* gs-handle-entry.c: handle parsing for filter entries (see the header). */
#include "gs-handle-entry.h"

#include <glib/gi18n.h>

gboolean gs_parse_handle(const char *text, guint64 *id, char **message) {
  *id = 0;
  if (message)
    *message = NULL;
  g_autofree char *s = g_strstrip(g_strdup(text ? text : ""));
  if (!*s)
    return TRUE;
  const char *p = s[0] == '#' ? s + 1 : s;
  guint64 slot = 0, generation = 1;
  char *end = NULL;
  gboolean ok = g_ascii_isdigit(*p);
  if (ok) {
    slot = g_ascii_strtoull(p, &end, 10);
    ok = slot <= G_MAXUINT32;
  }
  if (ok && *end == '.') {
    const char *g = end + 1;
    ok = g_ascii_isdigit(*g);
    if (ok) {
      generation = g_ascii_strtoull(g, &end, 10);
      /* Generations start at 1: "#0.1" is the first slot's first handle, "#0.0" none. */
      ok = generation > 0 && generation <= G_MAXUINT32;
    }
  }
  if (ok && *end != '\0')
    ok = FALSE;
  if (!ok) {
    if (message)
      *message = g_strdup_printf(_("Expected a handle such as #12.1 (slot.generation), got “%s”."),
                                 s);
    return FALSE;
  }
  *id = slot | (generation << 32);
  return TRUE;
}
