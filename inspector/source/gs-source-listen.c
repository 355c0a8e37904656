/* gs-source-listen.c: a Unix socket as a source. The inspector listens in a private
 * directory (0700) on a socket only its user can open (0600), takes the first program of the
 * same user that connects (GS_TRACE=unix:PATH), refuses and logs any other, then stops
 * listening and reads that one program's log until it disconnects. */
#include "gs-source-peer.h"
#include "gs-trace-source-private.h"

#include <errno.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define RECEIVE_PIECE (256u << 10)

char *gs_trace_source_default_socket_path(void) {
  return g_build_filename(g_get_user_runtime_dir(), "gradscope", "inspector.sock", NULL);
}

/* The default socket's directory: ours alone, so nobody can swap the socket under us. */
static gboolean ensure_private_dir(const char *dir, GError **error) {
  if (g_mkdir_with_parents(dir, 0700) != 0) {
    int saved = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                _("Cannot create the folder %s for the inspector's socket: %s"), dir,
                g_strerror(saved));
    return FALSE;
  }
  struct stat st;
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                _("%s must be a folder owned by you (user %u) to hold the inspector's socket."),
                dir, (unsigned)getuid());
    return FALSE;
  }
  if ((st.st_mode & 0077) != 0 && chmod(dir, 0700) != 0) {
    int saved = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                _("Cannot make %s private (mode 0700): %s"), dir, g_strerror(saved));
    return FALSE;
  }
  return TRUE;
}

/* A socket file left by an inspector that crashed is removed; one that still answers
 * belongs to a running inspector and is left alone. */
static gboolean clear_stale_socket(const char *path, GError **error) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return TRUE;
  if (!S_ISSOCK(st.st_mode)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                _("%s exists and is not a socket: it was left as it is."), path);
    return FALSE;
  }
  g_autoptr(GSocket) probe = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                          G_SOCKET_PROTOCOL_DEFAULT, NULL);
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new(path);
  if (probe && g_socket_connect(probe, address, NULL, NULL)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE,
                _("Another inspector is already listening on %s."), path);
    return FALSE;
  }
  g_unlink(path);
  return TRUE;
}

static GSocket *listen_on(const char *path, GError **error) {
  if (strlen(path) >= sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                _("The socket path %s is %zu bytes long; at most %zu fit."), path, strlen(path),
                sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1);
    return NULL;
  }
  if (!clear_stale_socket(path, error))
    return NULL;
  g_autoptr(GSocket) socket = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_DEFAULT, error);
  if (!socket)
    return NULL;
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new(path);
  if (!g_socket_bind(socket, address, FALSE, error))
    return NULL;
  /* Before listen(), so no connection is possible while the mode is still wider. */
  if (chmod(path, 0600) != 0) {
    int saved = errno;
    g_unlink(path);
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                _("Cannot restrict %s to your user (mode 0600): %s"), path, g_strerror(saved));
    return NULL;
  }
  g_socket_set_listen_backlog(socket, 4);
  if (!g_socket_listen(socket, error)) {
    g_unlink(path);
    return NULL;
  }
  return g_steal_pointer(&socket);
}

/* Waits for a program of ours and its first bytes (into first, *first_n of them); NULL when
 * told to stop or accepting failed (said already). A connection that ends before sending
 * anything is another inspector checking whether this socket is taken (clear_stale_socket),
 * not a program: it must not take the source's one connection. */
static GSocket *accept_peer(GsTraceSource *self, guint8 *first, gssize *first_n) {
  for (;;) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) peer = g_socket_accept(self->listener, self->cancellable, &error);
    if (!peer) {
      if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gs_trace_source_post_end(self, FALSE, g_strdup(_("Stopped listening.")));
      else
        gs_trace_source_post_end(self, TRUE, g_strdup_printf(
            _("Cannot accept a connection on %s: %s"), self->socket_path, error->message));
      return NULL;
    }
    g_autoptr(GCredentials) credentials = g_socket_get_credentials(peer, &error);
    g_autofree char *reason = NULL;
    if (!credentials)
      reason = g_strdup(error->message);
    if (!credentials || !gs_source_peer_allowed(credentials, getuid(), &reason)) {
      /* A message, not a warning: another user's attempt is no fault of this program. */
      g_message(_("Refused a connection on %s: %s"), self->socket_path, reason);
      g_socket_close(peer, NULL);
      continue;
    }
    g_clear_error(&error);
    gssize n = g_socket_receive(peer, (char *)first, RECEIVE_PIECE, self->cancellable, &error);
    if (n > 0) {
      *first_n = n;
      return g_steal_pointer(&peer);
    }
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      gs_trace_source_post_end(self, FALSE, g_strdup(_("Stopped listening.")));
      return NULL;
    }
    g_socket_close(peer, NULL); /* nothing came: keep waiting for a program */
  }
}

static gpointer listen_worker(gpointer data) {
  GsTraceSource *self = data;
  g_autofree guint8 *piece = g_malloc(RECEIVE_PIECE);
  gssize first_n = 0;
  g_autoptr(GSocket) peer = accept_peer(self, piece, &first_n);
  if (!peer)
    return NULL;
  /* One program per source: later ones get "connection refused" instead of waiting. */
  g_socket_close(self->listener, NULL);
  g_unlink(self->socket_path);
  self->owns_socket_path = FALSE;

  g_autoptr(GCredentials) credentials = g_socket_get_credentials(peer, NULL);
  pid_t pid = credentials ? g_credentials_get_unix_pid(credentials, NULL) : -1;
  gs_trace_source_post_live(self, pid > 0
      ? g_strdup_printf(_("Receiving the log of process %d."), (int)pid)
      : g_strdup(_("Receiving the log of a program.")));

  if (!gs_trace_source_push(self, piece, (gsize)first_n)) {
    gs_trace_source_post_end(self, FALSE, g_strdup(_("Stopped receiving.")));
    return NULL;
  }
  for (;;) {
    g_autoptr(GError) error = NULL;
    gssize n = g_socket_receive(peer, (char *)piece, RECEIVE_PIECE, self->cancellable, &error);
    if (n > 0) {
      if (!gs_trace_source_push(self, piece, (gsize)n))
        break;
    } else if (n == 0) {
      gs_trace_source_post_end(self, FALSE, g_strdup(_("The program closed the connection.")));
      return NULL;
    } else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      break;
    } else {
      gs_trace_source_post_end(self, TRUE,
          g_strdup_printf(_("Connection lost: %s"), error->message));
      return NULL;
    }
  }
  gs_trace_source_post_end(self, FALSE, g_strdup(_("Stopped receiving.")));
  return NULL;
}

GsTraceSource *gs_trace_source_new_listen(const char *socket_path, GError **error) {
  g_autofree char *path = socket_path ? g_strdup(socket_path)
                                      : gs_trace_source_default_socket_path();
  if (!socket_path) {
    g_autofree char *dir = g_path_get_dirname(path);
    if (!ensure_private_dir(dir, error))
      return NULL;
  }
  GSocket *listener = listen_on(path, error);
  if (!listener)
    return NULL;
  g_autofree char *waiting = g_strdup_printf(
      _("Waiting for a program: run it with GS_TRACE=unix:%s"), path);
  GsTraceSource *self = gs_trace_source_new_of_kind(GS_TRACE_SOURCE_LISTEN, path,
                                                    GS_TRACE_SOURCE_CONNECTING, waiting);
  self->listener = listener;
  self->socket_path = g_steal_pointer(&path);
  self->owns_socket_path = TRUE;
  gs_trace_source_start_worker(self, "gs-source-listen", listen_worker);
  return self;
}
