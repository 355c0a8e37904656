/* test-worker-logs.c: from a batch's storage in the main log to the log of the DataLoader
 * worker that collated it (inspector/model/index/worker-logs.c): a program records with two worker
 * processes, each received storage's peer pid leads to "run.worker-N.gstrace" of the worker
 * that sent it (whose header says that pid); an unknown pid, a file of the same pattern that
 * is no log, and names that only look alike lead nowhere; a log path without an extension
 * finds its workers' logs too. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker-logs.h"

static bool get_sample(void *user, int64_t i, gs_tensor *out) {
  (void)user;
  out[0] = gs_full(GS_F32, (int64_t[]){2}, 1, (double)i);
  return out[0].id != 0;
}

/* Records 4 batches from 2 workers into log_path; returns each batch's sender, in order. */
static GArray *record_with_workers(const char *log_path) {
  g_assert_cmpint(gs_trace_open(log_path), ==, 0);
  gs_dataset ds = {.length = 8, .n_fields = 1, .get_item = get_sample};
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 2,
                                                                   .num_workers = 2});
  GArray *senders = g_array_new(FALSE, FALSE, sizeof(guint32));
  gs_tensor t;
  while (gs_data_loader_next(l, &t)) {
    gs_storage_info info;
    g_assert_cmpint(gs_storage_info_of(t, &info), ==, 0);
    g_assert_cmpint(info.origin, ==, GS_MEMORY_RECEIVED);
    guint32 pid = (guint32)info.peer_pid;
    g_array_append_val(senders, pid);
    gs_dispose(t);
  }
  gs_data_loader_free(l);
  gs_trace_close();
  g_assert_cmpuint(senders->len, ==, 4);
  return senders;
}

static void remove_dir(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
  g_rmdir(dir);
}

static void test_a_batch_leads_to_its_workers_log(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-worker-logs-XXXXXX", NULL);
  g_autofree char *main_log = g_build_filename(dir, "run.gstrace", NULL);
  /* Decoys: a file of the pattern that is no log, and names that only look alike. */
  g_autofree char *junk = g_build_filename(dir, "run.worker-7.gstrace", NULL);
  g_assert_true(g_file_set_contents(junk, "not a log at all, but long enough to be read as one"
                                    " if nobody checked the header's magic bytes", -1, NULL));
  g_autoptr(GArray) senders = record_with_workers(main_log);
  for (guint b = 0; b < senders->len; b++) {
    guint32 pid = g_array_index(senders, guint32, b);
    g_autofree char *found = gs_worker_log_find(main_log, pid);
    g_autofree char *want_name = g_strdup_printf("run.worker-%u.gstrace", b % 2);
    g_autofree char *want = g_build_filename(dir, want_name, NULL);
    g_assert_cmpstr(found, ==, want);
  }
  g_assert_cmpuint(g_array_index(senders, guint32, 0), !=, g_array_index(senders, guint32, 1));
  /* The main process is no worker; an unknown pid and pid 0 lead nowhere. */
  g_assert_null(gs_worker_log_find(main_log, (guint32)getpid()));
  g_assert_null(gs_worker_log_find(main_log, 0));
  g_assert_null(gs_worker_log_find(main_log, 0x7ffffff0u));
  /* Another run's workers ("other.worker-0.gstrace") and non-numbers are not this log's. */
  g_autofree char *w0 = g_build_filename(dir, "run.worker-0.gstrace", NULL);
  guint32 pid0 = g_array_index(senders, guint32, 0);
  g_autofree char *other = g_build_filename(dir, "other.gstrace", NULL);
  g_assert_null(gs_worker_log_find(other, pid0));
  g_autofree char *odd = g_build_filename(dir, "run.worker-x.gstrace", NULL);
  g_assert_cmpint(g_rename(w0, odd), ==, 0);
  g_assert_null(gs_worker_log_find(main_log, pid0));
  remove_dir(dir);
}

static void test_a_log_without_extension(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-worker-logs-XXXXXX", NULL);
  g_autofree char *main_log = g_build_filename(dir, "run", NULL);
  g_autoptr(GArray) senders = record_with_workers(main_log);
  g_autofree char *found = gs_worker_log_find(main_log, g_array_index(senders, guint32, 1));
  g_autofree char *want = g_build_filename(dir, "run.worker-1", NULL);
  g_assert_cmpstr(found, ==, want);
  remove_dir(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/worker-logs/batch-to-worker-log", test_a_batch_leads_to_its_workers_log);
  g_test_add_func("/worker-logs/no-extension", test_a_log_without_extension);
  return g_test_run();
}
