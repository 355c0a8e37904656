/* test-trace-model-feed.c: feeding the trace model: pieces of any size give the same model as
 * one piece or a file load, the per-event columns agree with full decoding, engine event
 * numbers map back to events, and damaged, truncated and empty sources keep what they got and
 * say what happened. The log comes from two engine threads, so chunks interleave. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <pthread.h>
#include <string.h>

#include "model-test-util.h"

/* The two threads take turns (a token passed under a mutex), each flushing its own events:
 * chunks interleave in the file, but no thread records while another flushes. (The recorder's
 * gs_trace_flush writes every thread's buffer, and a thread appending to its buffer at that
 * moment corrupts the chunk: seen here as "bad chunk magic"; reported to the engine.) */
static GMutex turn_lock;
static GCond turn_cond;
static int turn; /* 0: main, 1: worker */

static void wait_turn(int me) {
  g_mutex_lock(&turn_lock);
  while (turn != me)
    g_cond_wait(&turn_cond, &turn_lock);
  g_mutex_unlock(&turn_lock);
}

static void pass_turn(int to) {
  g_mutex_lock(&turn_lock);
  turn = to;
  g_cond_broadcast(&turn_cond);
  g_mutex_unlock(&turn_lock);
}

static void *worker(void *unused) {
  (void)unused;
  const int64_t shape[] = {5, 3};
  for (int i = 0; i < 30; i++) {
    if (i % 5 == 0)
      wait_turn(1);
    gs_scope s = gs_scope_begin("load batch");
    gs_tensor b = gs_ones(GS_F32, shape, 2);
    gs_dispose(gs_mul_scalar(b, 0.5));
    gs_scope_end(s);
    if (i % 5 == 4) {
      gs_trace_flush();
      pass_turn(0);
    }
  }
  return NULL;
}

static void two_threads_work(void) {
  turn = 0;
  pthread_t thread;
  pthread_create(&thread, NULL, worker, NULL);
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  const int64_t shape[] = {4, 4};
  gs_tensor w = gs_parameter_new(gs_randn(GS_F32, shape, 2, &rng), true);
  for (int step = 0; step < 24; step++) { /* six turns, as many as the worker takes */
    if (step % 4 == 0)
      wait_turn(0);
    gs_scope s = gs_scope_begin("step");
    gs_tensor y = gs_sum(gs_mul(w, gs_randn(GS_F32, shape, 2, &rng)), NULL, 0, false);
    gs_backward(y);
    gs_zero_grad(w);
    gs_scope_end(s);
    if (step % 4 == 3) {
      gs_trace_flush();
      pass_turn(1);
    }
  }
  wait_turn(0);
  pass_turn(1);
  pthread_join(thread, NULL);
  gs_dispose(w);
}

static char *log_path;
static GBytes *log_bytes;

static void assert_same_event(const gs_trace_event *a, const gs_trace_event *b) {
  g_assert_cmpint(a->kind, ==, b->kind);
  g_assert_cmpuint(a->seq, ==, b->seq);
  g_assert_cmpuint(a->time_ns, ==, b->time_ns);
  g_assert_cmpuint(a->thread, ==, b->thread);
  g_assert_cmpuint(a->tensor, ==, b->tensor);
  g_assert_cmpuint(a->storage, ==, b->storage);
  g_assert_cmpuint(a->node, ==, b->node);
  g_assert_cmpuint(a->scope, ==, b->scope);
  g_assert_cmpuint(a->object, ==, b->object);
  g_assert_cmpuint(a->name, ==, b->name);
  g_assert_cmpuint(a->op, ==, b->op);
  g_assert_cmpuint(a->n_saved, ==, b->n_saved);
  g_assert_cmpuint(a->n_inputs, ==, b->n_inputs);
}

/* b answers everything as a does. */
static void assert_same_model(gs_trace_model *a, gs_trace_model *b) {
  guint64 n = gs_trace_model_n_events(a);
  g_assert_cmpuint(gs_trace_model_n_events(b), ==, n);
  g_assert_cmpstr(gs_trace_model_problem(a), ==, gs_trace_model_problem(b));
  for (guint64 i = 0; i < n; i++) {
    g_assert_cmpint(gs_trace_model_kind_at(a, i), ==, gs_trace_model_kind_at(b, i));
    g_assert_cmpuint(gs_trace_model_seq_at(a, i), ==, gs_trace_model_seq_at(b, i));
    g_assert_cmpuint(gs_trace_model_time_at(a, i), ==, gs_trace_model_time_at(b, i));
    g_assert_cmpuint(gs_trace_model_thread_at(a, i), ==, gs_trace_model_thread_at(b, i));
    g_assert_cmpuint(gs_trace_model_bytes_at(a, i), ==, gs_trace_model_bytes_at(b, i));
    g_assert_cmpuint(gs_trace_model_scope_of(a, i), ==, gs_trace_model_scope_of(b, i));
    gs_trace_event ea, eb;
    g_assert_true(gs_trace_model_event(a, i, &ea));
    g_assert_true(gs_trace_model_event(b, i, &eb));
    assert_same_event(&ea, &eb);
  }
  assert_replay_equal(gs_trace_model_head(a), gs_trace_model_head(b));
  g_assert_cmpuint(gs_trace_model_n_scopes(a), ==, gs_trace_model_n_scopes(b));
  gs_memory_column ca[40], cb[40];
  for (int by_scope = 0; by_scope < 2; by_scope++) {
    gs_trace_model_memory_columns(a, 0, n - 1, 40, by_scope, ca);
    gs_trace_model_memory_columns(b, 0, n - 1, 40, by_scope, cb);
    g_assert_cmpmem(ca, sizeof ca, cb, sizeof cb);
  }
  for (guint64 i = 0; i < n; i += n / 17 + 1) { /* some tensors' lives */
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(a, i, &e));
    if (!e.tensor)
      continue;
    g_autofree guint64 *la = NULL, *lb = NULL;
    guint na = 0, nb = 0;
    la = life_indices(a, e.tensor, &na);
    lb = life_indices(b, e.tensor, &nb);
    g_assert_cmpuint(na, >, 0);
    g_assert_cmpmem(la, na * sizeof *la, lb, nb * sizeof *lb);
  }
}

/* The columns agree with decoding, and every seq maps back. */
static void test_columns_and_seqs(void) {
  g_autoptr(gs_trace_model) m = model_from_bytes(log_bytes, 0);
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(gs_trace_model_threads(m)->len, ==, 2);
  gs_trace_reader *reader = reader_of_bytes(log_bytes);
  guint64 i = 0;
  gs_trace_event want;
  while (gs_trace_reader_next(reader, &want) == GS_TRACE_EVENT) {
    if (gs_trace_kind_is_table(want.kind))
      continue;
    g_assert_cmpint(gs_trace_model_kind_at(m, i), ==, want.kind);
    g_assert_cmpuint(gs_trace_model_seq_at(m, i), ==, want.seq);
    g_assert_cmpuint(gs_trace_model_time_at(m, i), ==, want.time_ns);
    g_assert_cmpuint(gs_trace_model_thread_at(m, i), ==, want.thread);
    /* A storage event derived from a 1.2 tensor event shares its seq, which names the
     * tensor event: just after a derived storage_alloc, just before a derived storage_free. */
    guint64 named = !want.derived ? i : want.kind == GS_TRACE_STORAGE_ALLOC ? i + 1 : i - 1;
    if (gs_trace_model_find_seq(m, want.seq) != named) {
      guint64 j = gs_trace_model_find_seq(m, want.seq);
      g_test_message("seq %" G_GUINT64_FORMAT " at %" G_GUINT64_FORMAT " (%s, thread %u) found "
                     "at %" G_GUINT64_FORMAT " (%s, thread %u, seq %" G_GUINT64_FORMAT ")",
                     want.seq, i, gs_trace_kind_name(want.kind), want.thread, j,
                     gs_trace_kind_name(gs_trace_model_kind_at(m, j)),
                     gs_trace_model_thread_at(m, j), gs_trace_model_seq_at(m, j));
    }
    g_assert_cmpuint(gs_trace_model_find_seq(m, want.seq), ==, named);
    i++;
  }
  gs_trace_reader_free(reader);
  g_assert_cmpuint(i, ==, n);
  /* Backwards too (the decoder restarts its chunk), and out of range. */
  for (guint64 k = n; k-- > 0;) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, k, &e));
    g_assert_cmpuint(e.seq, ==, gs_trace_model_seq_at(m, k));
  }
  gs_trace_event e;
  g_assert_false(gs_trace_model_event(m, n, &e));
  g_assert_cmpint(gs_trace_model_kind_at(m, n), ==, 0);
  g_assert_cmpuint(gs_trace_model_find_seq(m, G_MAXUINT64 - 1), ==, G_MAXUINT64);
}

static void test_pieces_give_the_same_model(void) {
  g_autoptr(gs_trace_model) whole = model_from_bytes(log_bytes, 0);
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(log_bytes, &len);
  for (int round = 0; round < 3; round++) {
    GRand *rand = g_rand_new_with_seed(round);
    g_autoptr(gs_trace_model) m = gs_trace_model_new();
    guint64 added = 0;
    for (gsize at = 0; at < len;) {
      gsize want = (gsize)g_rand_int_range(rand, 1, round == 0 ? 9 : 5000);
      gsize piece = MIN(len - at, want);
      added += gs_trace_model_feed(m, data + at, piece);
      at += piece;
      if (gs_trace_model_problem(m))
        g_test_message("at %zu of %zu: %s", at, len, gs_trace_model_problem(m));
      g_assert_null(gs_trace_model_problem(m));
      /* Queries in between see a consistent prefix. */
      if (gs_trace_model_n_events(m) > 0 && g_rand_int_range(rand, 0, 50) == 0) {
        guint64 last = gs_trace_model_n_events(m) - 1;
        g_autoptr(gs_replay) prefix = replay_prefix(log_bytes, last + 1);
        assert_replay_equal(prefix, gs_trace_model_seek(m, last));
      }
    }
    g_rand_free(rand);
    gs_trace_model_finish(m);
    g_assert_cmpuint(added, ==, gs_trace_model_n_events(whole));
    assert_same_model(whole, m);
  }
}

static void on_progress(guint64 done, guint64 total, gpointer user_data) {
  guint64 *last = user_data;
  g_assert_cmpuint(done, >=, last[0]);
  last[0] = done;
  last[1] = total;
}

static void test_load_file(void) {
  g_autoptr(gs_trace_model) whole = model_from_bytes(log_bytes, 0);
  guint64 progress[2] = {0, 0};
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) m = gs_trace_model_load_file(log_path, on_progress, progress, NULL,
                                                         &error);
  g_assert_no_error(error);
  g_assert_nonnull(m);
  g_assert_cmpuint(progress[0], ==, g_bytes_get_size(log_bytes));
  g_assert_cmpuint(progress[1], ==, g_bytes_get_size(log_bytes));
  assert_same_model(whole, m);

  /* Through a pipe (not seekable: its bytes are kept in memory) it is the same model. */
  g_autofree char *fifo_dir = g_dir_make_tmp("gradscope-fifo-XXXXXX", NULL);
  g_autofree char *fifo = g_build_filename(fifo_dir, "log", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  GPid writer;
  const char *argv[] = {"cp", log_path, fifo, NULL};
  g_assert_true(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                              &writer, NULL));
  g_autoptr(GError) piped_error = NULL;
  g_autoptr(gs_trace_model) piped = gs_trace_model_load_file(fifo, NULL, NULL, NULL,
                                                             &piped_error);
  g_assert_no_error(piped_error);
  g_spawn_close_pid(writer);
  g_unlink(fifo);
  g_rmdir(fifo_dir);
  assert_same_model(whole, piped);

  /* Cancelled, missing, a folder: errors that say what. */
  g_autoptr(GCancellable) cancel = g_cancellable_new();
  g_cancellable_cancel(cancel);
  g_autoptr(GError) cancelled = NULL;
  g_assert_null(gs_trace_model_load_file(log_path, NULL, NULL, cancel, &cancelled));
  g_assert_error(cancelled, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_autoptr(GError) missing = NULL;
  g_assert_null(gs_trace_model_load_file("/nonexistent/run.gstrace", NULL, NULL, NULL, &missing));
  g_assert_error(missing, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull(strstr(missing->message, "/nonexistent/run.gstrace"));
  g_autoptr(GError) folder = NULL;
  g_assert_null(gs_trace_model_load_file("/", NULL, NULL, NULL, &folder));
  g_assert_error(folder, G_FILE_ERROR, G_FILE_ERROR_ISDIR);
}

/* How many events a plain reader delivers from data before it stops. */
static guint64 reader_events(const guint8 *data, gsize len) {
  gs_trace_reader *reader = gs_trace_reader_new();
  gs_trace_reader_feed(reader, data, len);
  guint64 n = 0;
  gs_trace_event e;
  while (gs_trace_reader_next(reader, &e) == GS_TRACE_EVENT)
    n += !gs_trace_kind_is_table(e.kind);
  gs_trace_reader_free(reader);
  return n;
}

static void test_damage_keeps_what_came_before(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(log_bytes, &len);
  g_autofree guint8 *copy = g_memdup2(data, len);
  /* A payload byte of the chunk that holds the middle of the log: its CRC fails. Chunks are
   * 32-byte headers (payload length at +4) after a 64-byte file header (doc/trace-format.md). */
  gsize at = 64;
  for (;;) {
    guint32 payload = (guint32)data[at + 4] | (guint32)data[at + 5] << 8 |
                      (guint32)data[at + 6] << 16 | (guint32)data[at + 7] << 24;
    gsize size = 32 + ((payload + 7) & ~7u);
    if (at + size > len / 2)
      break;
    at += size;
  }
  copy[at + 32 + 1] ^= 0x5a;
  guint64 want = reader_events(copy, len);
  g_autoptr(gs_trace_model) whole = model_from_bytes(log_bytes, 0);
  g_assert_cmpuint(want, <, gs_trace_model_n_events(whole));
  g_assert_cmpuint(want, >, 0);

  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  gs_trace_model_feed(m, copy, len / 3);
  g_assert_null(gs_trace_model_problem(m));
  gs_trace_model_feed(m, copy + len / 3, len - len / 3);
  g_assert_true(gs_trace_model_damaged(m));
  g_assert_cmpuint(gs_trace_model_n_events(m), ==, want);
  const char *problem = gs_trace_model_problem(m);
  g_assert_nonnull(problem);
  g_assert_true(g_str_has_prefix(problem, "The log is damaged: chunk CRC mismatch"));
  g_assert_nonnull(strstr(problem, "(at byte "));
  /* More bytes change nothing; what was kept answers as the whole log's prefix does. */
  g_assert_cmpuint(gs_trace_model_feed(m, data, len), ==, 0);
  gs_trace_model_finish(m);
  g_assert_cmpstr(gs_trace_model_problem(m), ==, problem);
  for (guint64 i = 0; i < want; i++) {
    g_assert_cmpuint(gs_trace_model_seq_at(m, i), ==, gs_trace_model_seq_at(whole, i));
    g_assert_cmpuint(gs_trace_model_bytes_at(m, i), ==, gs_trace_model_bytes_at(whole, i));
  }
  g_autoptr(gs_replay) prefix = replay_prefix(log_bytes, want);
  assert_replay_equal(prefix, gs_trace_model_seek(m, want - 1));
}

static void test_truncation_is_reported_at_the_end(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(log_bytes, &len);
  gsize cut = len - 100; /* inside the last chunk */
  guint64 want = reader_events(data, cut);
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  gs_trace_model_feed(m, data, cut);
  g_assert_null(gs_trace_model_problem(m)); /* a live source: more may come */
  g_assert_false(gs_trace_model_damaged(m));
  g_assert_cmpuint(gs_trace_model_n_events(m), ==, want);
  gs_trace_model_finish(m);
  const char *problem = gs_trace_model_problem(m);
  g_assert_nonnull(problem);
  g_assert_true(g_str_has_prefix(problem, "The log ends in the middle of a chunk at byte "));
  g_autoptr(gs_replay) prefix = replay_prefix(log_bytes, want);
  assert_replay_equal(prefix, gs_trace_model_seek(m, want - 1));

  /* An empty source, and one that is not a log. */
  g_autoptr(gs_trace_model) empty = gs_trace_model_new();
  gs_trace_model_finish(empty);
  g_assert_nonnull(strstr(gs_trace_model_problem(empty), "before a whole log header"));
  g_assert_null(gs_trace_model_seek(empty, 0));
  g_autoptr(gs_trace_model) text = gs_trace_model_new();
  const char *not_a_log = "name,value\nx,1\n";
  gs_trace_model_feed(text, not_a_log, strlen(not_a_log));
  g_assert_true(gs_trace_model_damaged(text));
  g_assert_nonnull(strstr(gs_trace_model_problem(text), "bad magic"));
  g_assert_cmpuint(gs_trace_model_n_events(text), ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  log_path = record_log(two_threads_work);
  log_bytes = read_log_bytes(log_path);
  g_test_add_func("/trace-model/columns-and-seqs", test_columns_and_seqs);
  g_test_add_func("/trace-model/pieces-give-the-same-model", test_pieces_give_the_same_model);
  g_test_add_func("/trace-model/load-file", test_load_file);
  g_test_add_func("/trace-model/damage-keeps-what-came-before",
                  test_damage_keeps_what_came_before);
  g_test_add_func("/trace-model/truncation-is-reported-at-the-end",
                  test_truncation_is_reported_at_the_end);
  int status = g_test_run();
  g_bytes_unref(log_bytes);
  remove_log(log_path);
  return status;
}
