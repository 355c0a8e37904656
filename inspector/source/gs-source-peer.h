/* gs-source-peer.h: who may send the inspector a log over its socket: only processes of the
 * user running the inspector (the kernel's SO_PEERCRED, read through GCredentials). Separate
 * from the socket code so the rule can be tested with made-up credentials. */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* TRUE if creds belong to user uid; otherwise FALSE with *reason (translated, newly
 * allocated) saying whose they are. */
gboolean gs_source_peer_allowed(GCredentials *creds, uid_t uid, char **reason);

G_END_DECLS
