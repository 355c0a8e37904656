/* test-source-listen.c: the per-user socket as a source: its place and permissions (folder
 * 0700, socket 0600), one inspector per socket and stale sockets replaced, a real engine
 * stream from cli-workload run with GS_TRACE=unix:PATH, a writer that dies in the middle of
 * a chunk, stopping, and the admission rule on made-up credentials of another user. */
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gs-source-peer.h"
#include "source-test-util.h"

static char *socket_in_test_dir(const char *name) {
  return g_build_filename(source_test_dir(), name, NULL);
}

/* Runs cli-workload with its log sent to the socket at path (GS_TRACE=unix:PATH). */
static GSubprocess *run_workload_into(const char *path) {
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(
      G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autofree char *dest = g_strconcat("unix:", path, NULL);
  g_subprocess_launcher_setenv(launcher, "GS_TRACE", dest, TRUE);
  const char *argv[] = {source_test_workload(), NULL};
  g_autoptr(GError) error = NULL;
  GSubprocess *program = g_subprocess_launcher_spawnv(launcher, argv, &error);
  g_assert_no_error(error);
  return program;
}

/* XDG_RUNTIME_DIR points into the test directory (set in main, before GLib reads it). */
/* A run of a source listening on path (gs_trace_source_new_listen), which must start. */
static source_run listen_run(const char *path) {
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_listen(path, &error)};
  g_assert_no_error(error);
  return run;
}

static void test_default_path_and_modes(void) {
  g_autofree char *expected = g_build_filename(source_test_dir(), "runtime", "gradscope",
                                               "inspector.sock", NULL);
  g_autofree char *path = gs_trace_source_default_socket_path();
  g_assert_cmpstr(path, ==, expected);

  g_autoptr(GError) error = NULL;
  g_autoptr(GsTraceSource) source = gs_trace_source_new_listen(NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(gs_trace_source_get_description(source), ==, expected);
  g_assert_cmpint(gs_trace_source_get_kind(source), ==, GS_TRACE_SOURCE_LISTEN);
  g_assert_cmpint(gs_trace_source_get_state(source), ==, GS_TRACE_SOURCE_CONNECTING);
  source_test_assert_message(source, "GS_TRACE=unix:");

  struct stat st;
  g_assert_cmpint(lstat(path, &st), ==, 0);
  g_assert_true(S_ISSOCK(st.st_mode));
  g_assert_cmpint(st.st_mode & 0777, ==, 0600);
  g_assert_cmpint(st.st_uid, ==, getuid());
  g_autofree char *dir = g_path_get_dirname(path);
  g_assert_cmpint(lstat(dir, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0700);

  /* A second inspector on the same socket is told, and the first keeps it. */
  g_autoptr(GsTraceSource) second = gs_trace_source_new_listen(NULL, &error);
  g_assert_null(second);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
  g_assert_nonnull(strstr(error->message, "already listening"));
  /* Its check (a connection that sends nothing) is not taken for a program: the first keeps
   * listening on its socket. */
  g_usleep(200 * 1000);
  while (g_main_context_iteration(NULL, FALSE))
    ;
  g_assert_cmpint(lstat(path, &st), ==, 0);
  g_assert_cmpint(gs_trace_source_get_state(source), ==, GS_TRACE_SOURCE_CONNECTING);

  /* The socket goes away with its source. */
  g_clear_object(&source);
  g_assert_cmpint(lstat(path, &st), !=, 0);
}

/* A folder for the default socket that others can read is made private. */
static void test_loose_folder_made_private(void) {
  g_autofree char *dir = g_build_filename(source_test_dir(), "runtime", "gradscope", NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
  g_assert_cmpint(chmod(dir, 0755), ==, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(GsTraceSource) source = gs_trace_source_new_listen(NULL, &error);
  g_assert_no_error(error);
  struct stat st;
  g_assert_cmpint(lstat(dir, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 0777, ==, 0700);
}

/* A socket file left behind by a crashed inspector is replaced; a file that is not a
 * socket never is. */
static void test_stale_socket(void) {
  g_autofree char *path = socket_in_test_dir("stale.sock");
  {
    g_autoptr(GSocket) dead = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_DEFAULT, NULL);
    g_autoptr(GSocketAddress) address = g_unix_socket_address_new(path);
    g_assert_true(g_socket_bind(dead, address, FALSE, NULL));
  } /* closed without unlinking, as a crash leaves it */
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
  g_autoptr(GError) error = NULL;
  g_autoptr(GsTraceSource) source = gs_trace_source_new_listen(path, &error);
  g_assert_no_error(error);
  g_clear_object(&source);

  g_autofree char *plain = socket_in_test_dir("plain-file");
  g_assert_true(g_file_set_contents(plain, "keep me", -1, NULL));
  source = gs_trace_source_new_listen(plain, &error);
  g_assert_null(source);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_assert_nonnull(strstr(error->message, "is not a socket"));
  g_autofree char *kept = NULL;
  g_assert_true(g_file_get_contents(plain, &kept, NULL, NULL));
  g_assert_cmpstr(kept, ==, "keep me");
}

static void test_path_too_long(void) {
  g_autofree char *name = g_strnfill(200, 'x');
  g_autofree char *path = socket_in_test_dir(name);
  g_autoptr(GError) error = NULL;
  g_autoptr(GsTraceSource) source = gs_trace_source_new_listen(path, &error);
  g_assert_null(source);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "at most 107 fit"));
}

/* The engine itself connects (GS_TRACE=unix:PATH) and streams a whole run. */
static void test_engine_stream(void) {
  g_autofree char *log_path = g_build_filename(source_test_dir(), "reference.gst", NULL);
  g_autoptr(GBytes) reference = source_test_record_workload(log_path);
  guint64 expected = source_test_count_events(g_bytes_get_data(reference, NULL),
                                              g_bytes_get_size(reference));

  g_autofree char *path = socket_in_test_dir("engine.sock");
  g_autoptr(GError) error = NULL;
  source_run run = {.source = gs_trace_source_new_listen(path, &error)};
  g_assert_no_error(error);

  g_autoptr(GSubprocess) program = run_workload_into(path);

  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  g_assert_true(g_subprocess_wait_check(program, NULL, &error));
  g_assert_no_error(error);
  source_test_assert_final(&run, GS_TRACE_SOURCE_ENDED, "The program closed the connection.",
                           expected);
  g_assert_cmpuint(gs_trace_source_get_bytes_received(run.source), >, 1000);
  g_assert_cmpuint(gs_trace_source_get_bytes_pending(run.source), ==, 0);
  /* Once a program is connected nobody else can reach this source. */
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  source_run_clear(&run);
}

typedef struct dying_writer {
  char *path;
  const guint8 *bytes;
  gsize n;
} dying_writer;

/* Connects and writes a log cut inside a chunk, then goes away like a crashed program. */
static gpointer write_and_die(gpointer data) {
  dying_writer *w = data;
  g_autoptr(GSocket) socket = g_socket_new(G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_DEFAULT, NULL);
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new(w->path);
  g_assert_true(g_socket_connect(socket, address, NULL, NULL));
  for (gsize at = 0; at < w->n;) {
    gssize sent = g_socket_send(socket, (const char *)w->bytes + at, MIN(w->n - at, 777), NULL,
                                NULL);
    g_assert_cmpint(sent, >, 0);
    at += (gsize)sent;
  }
  g_socket_close(socket, NULL);
  return NULL;
}

static void test_writer_dies_mid_chunk(void) {
  guint64 kept;
  g_autoptr(GBytes) log = source_test_record_cut("to-cut.gst", 11, &kept);
  gsize n;
  const guint8 *bytes = g_bytes_get_data(log, &n);
  gsize cut = n - 11;

  g_autofree char *path = socket_in_test_dir("dying.sock");
  source_run run = listen_run(path);
  dying_writer w = {.path = path, .bytes = bytes, .n = cut};
  GThread *writer = g_thread_new("dying writer", write_and_die, &w);
  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  g_thread_join(writer);
  source_test_assert_final(&run, GS_TRACE_SOURCE_BROKEN,
                           "The program closed the connection. The log ends in the middle of a chunk at byte ",
                           kept);
  source_run_clear(&run);
}

static void test_stop_while_waiting(void) {
  g_autofree char *path = socket_in_test_dir("stopped.sock");
  source_run run = listen_run(path);
  gs_trace_source_stop(run.source);
  g_assert_true(source_run_until(&run, NULL, NULL, 5000));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  source_test_assert_message(run.source, "Stopped. Everything received");
  source_run_clear(&run);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
}

/* SO_PEERCRED cannot be faked without root, so the rule is tested on credentials made up
 * here: another user is refused with a reason naming both users; ours is let in. */
static void test_peer_rule(void) {
  g_autoptr(GCredentials) ours = g_credentials_new();
  char *reason = NULL;
  g_assert_true(gs_source_peer_allowed(ours, getuid(), &reason));
  g_assert_null(reason);

  g_autoptr(GCredentials) other = g_credentials_new();
  uid_t stranger = getuid() + 1000;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_credentials_set_unix_user(other, stranger, &error));
  g_assert_no_error(error);
  g_assert_false(gs_source_peer_allowed(other, getuid(), &reason));
  g_autofree char *stranger_text = g_strdup_printf("belongs to user %u", (unsigned)stranger);
  g_autofree char *ours_text = g_strdup_printf("only programs of user %u", (unsigned)getuid());
  g_assert_nonnull(strstr(reason, stranger_text));
  g_assert_nonnull(strstr(reason, ours_text));
  g_free(reason);
}

/* What the source logged, from whichever thread. */
typedef struct logged {
  GMutex lock;
  GString *text;
} logged;

static void keep_message(const char *domain, GLogLevelFlags level, const char *message,
                         gpointer data) {
  (void)domain, (void)level;
  logged *l = data;
  g_mutex_lock(&l->lock);
  g_string_append_printf(l->text, "%s\n", message);
  g_mutex_unlock(&l->lock);
}

static gboolean logged_has(logged *l, const char *part) {
  g_mutex_lock(&l->lock);
  gboolean has = strstr(l->text->str, part) != NULL;
  g_mutex_unlock(&l->lock);
  return has;
}

/* A child of another user connects and writes; only raw system calls after fork. */
static pid_t connect_as(uid_t uid, const char *path) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  g_strlcpy(address.sun_path, path, sizeof address.sun_path);
  pid_t child = fork();
  if (child == 0) {
    if (setgid(uid) != 0 || setuid(uid) != 0)
      _exit(3);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0)
      _exit(4);
    static const char bytes[64] = "not a log, and not ours";
    ssize_t unused = write(fd, bytes, sizeof bytes);
    (void)unused;
    _exit(0);
  }
  return child;
}

/* The real SO_PEERCRED path: with the socket opened to everyone by mistake, a program of
 * another user is still refused (logged with its reason) and ours is taken after it. Needs
 * root, to run a process as another user. */
static void test_other_user_refused(void) {
  if (getuid() != 0) {
    g_test_skip("needs root to run a process as another user");
    return;
  }
  logged l = {.text = g_string_new(NULL)};
  g_mutex_init(&l.lock);
  guint handler = g_log_set_handler("gradscope", G_LOG_LEVEL_MESSAGE, keep_message, &l);

  g_autofree char *path = socket_in_test_dir("opened-by-mistake.sock");
  source_run run = listen_run(path);
  g_assert_cmpint(chmod(source_test_dir(), 0755), ==, 0);
  g_assert_cmpint(chmod(path, 0666), ==, 0);

  uid_t stranger = 65534;
  pid_t child = connect_as(stranger, path);
  int status = -1;
  g_assert_cmpint(waitpid(child, &status, 0), ==, child);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 0); /* it did connect and write */
  g_autofree char *reason = g_strdup_printf("belongs to user %u", (unsigned)stranger);
  for (int i = 0; i < 500 && !logged_has(&l, reason); i++)
    g_usleep(10000);
  g_assert_true(logged_has(&l, "Refused a connection on "));
  g_assert_true(logged_has(&l, reason));
  source_run_until(&run, NULL, NULL, 100);
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_CONNECTING);
  g_assert_cmpuint(gs_trace_source_get_bytes_received(run.source), ==, 0);

  /* Still listening: our own program gets in. */
  g_autoptr(GSubprocess) program = run_workload_into(path);
  g_assert_true(source_run_until(&run, NULL, NULL, 20000));
  g_assert_true(g_subprocess_wait_check(program, NULL, NULL));
  g_assert_cmpint(gs_trace_source_get_state(run.source), ==, GS_TRACE_SOURCE_ENDED);
  g_assert_cmpuint(gs_trace_model_n_events(run.model), >, 400);
  source_run_clear(&run);

  g_assert_cmpint(chmod(source_test_dir(), 0700), ==, 0);
  g_log_remove_handler("gradscope", handler);
  g_string_free(l.text, TRUE);
  g_mutex_clear(&l.lock);
}

int main(int argc, char **argv) {
  g_autofree char *runtime = g_build_filename(source_test_dir(), "runtime", NULL);
  g_assert_cmpint(g_mkdir(runtime, 0700), ==, 0);
  g_setenv("XDG_RUNTIME_DIR", runtime, TRUE);
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/source/listen/default-path-and-modes", test_default_path_and_modes);
  g_test_add_func("/source/listen/loose-folder-made-private", test_loose_folder_made_private);
  g_test_add_func("/source/listen/stale-socket", test_stale_socket);
  g_test_add_func("/source/listen/path-too-long", test_path_too_long);
  g_test_add_func("/source/listen/engine-stream", test_engine_stream);
  g_test_add_func("/source/listen/writer-dies-mid-chunk", test_writer_dies_mid_chunk);
  g_test_add_func("/source/listen/stop-while-waiting", test_stop_while_waiting);
  g_test_add_func("/source/listen/peer-rule", test_peer_rule);
  g_test_add_func("/source/listen/other-user-refused", test_other_user_refused);
  int status = g_test_run();
  source_test_cleanup();
  return status;
}
