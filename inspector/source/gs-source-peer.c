/* gs-source-peer.c: the socket's admission rule (see gs-source-peer.h). */
#include "gs-source-peer.h"

#include <glib/gi18n-lib.h>

gboolean gs_source_peer_allowed(GCredentials *creds, uid_t uid, char **reason) {
  g_return_val_if_fail(G_IS_CREDENTIALS(creds), FALSE);
  g_autoptr(GError) error = NULL;
  uid_t peer = g_credentials_get_unix_user(creds, &error);
  if (peer == (uid_t)-1) {
    if (reason)
      *reason = g_strdup_printf(_("the connecting process could not be identified: %s"),
                                error ? error->message : _("no user id"));
    return FALSE;
  }
  if (peer == uid)
    return TRUE;
  if (reason) {
    pid_t pid = g_credentials_get_unix_pid(creds, NULL);
    *reason = pid > 0
      ? g_strdup_printf(_("process %d belongs to user %u, and only programs of user %u may "
                          "connect"), (int)pid, (unsigned)peer, (unsigned)uid)
      : g_strdup_printf(_("the connecting process belongs to user %u, and only programs of "
                          "user %u may connect"), (unsigned)peer, (unsigned)uid);
  }
  return FALSE;
}
