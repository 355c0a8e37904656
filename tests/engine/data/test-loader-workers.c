/* test-loader-workers.c: the DataLoader's worker processes (issue 18): the same batches in the
 * same order as without workers, in the caller's scope, received over shared memory with no
 * copy; per-worker seeds; a worker that crashes, hangs past timeout_ms or fails names itself
 * and the batch; ending early leaves no process and no segment; workers start while another
 * thread is inside the engine; each worker writes its own log and the main log says where the
 * batches' storages came from; persistent workers serve every epoch, and shuffle from a new
 * seed as the caller does; a worker writes later
 * batches into the segments the caller gave back, never into one it still holds or sent on,
 * nor into one a forked copy of the caller disposed; a worker's BLAS runs on one thread with no
 * pool thread beside it, and the caller keeps its own BLAS thread count. */
#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-util.h"

#define N_COLS 3

/* A dataset whose sample i is x = (i, i + 0.25, i + 0.5) (f32) and y = i (i64); the sample
 * named in `trap` misbehaves the way `how` says (in whichever process reads it). */
typedef enum { TRAP_NONE, TRAP_ABORT, TRAP_HANG, TRAP_FAIL } trap_kind;
typedef struct trap_set {
  trap_kind how;
  int64_t index;
  int stuck_fd; /* > 0: a pipe a hanging sample writes one byte to before it hangs */
} trap_set;

static bool get_sample(void *user, int64_t i, gs_tensor *out) {
  const trap_set *t = user;
  if (t->how != TRAP_NONE && i == t->index) {
    if (t->how == TRAP_ABORT)
      abort();
    if (t->how == TRAP_HANG) {
      if (t->stuck_fd > 0 && write(t->stuck_fd, "s", 1) != 1)
        abort();
      for (;;)
        pause();
    }
    return false;
  }
  float x[N_COLS] = {(float)i, (float)i + 0.25f, (float)i + 0.5f};
  out[0] = gs_from_data(GS_F32, (int64_t[]){N_COLS}, 1, x);
  out[1] = gs_scalar(GS_I64, (double)i);
  return true;
}

static gs_dataset dataset(int64_t n, trap_set *trap) {
  return (gs_dataset){.length = n, .n_fields = 2, .get_item = get_sample, .user = trap};
}

/* Every batch of an epoch, flattened: x values then y values, batch after batch. */
typedef struct epoch_values {
  GArray *x, *y;
  int batches;
} epoch_values;

static epoch_values read_epoch(gs_data_loader *l) {
  epoch_values e = {g_array_new(FALSE, FALSE, sizeof(float)),
                    g_array_new(FALSE, FALSE, sizeof(int64_t)), 0};
  gs_tensor b[2];
  while (gs_data_loader_next(l, b)) {
    int64_t n = gs_size(b[1], 0);
    float xs[64 * N_COLS];
    int64_t ys[64];
    g_assert_cmpint(n, <=, 64);
    g_assert_cmpint(gs_copy_to(b[0], xs, sizeof xs), ==, 0);
    g_assert_cmpint(gs_copy_to(b[1], ys, sizeof ys), ==, 0);
    g_array_append_vals(e.x, xs, (guint)(n * N_COLS));
    g_array_append_vals(e.y, ys, (guint)n);
    e.batches++;
    gs_dispose(b[0]);
    gs_dispose(b[1]);
  }
  return e;
}

static void epoch_values_free(epoch_values *e) {
  g_array_free(e->x, TRUE);
  g_array_free(e->y, TRUE);
}

static void assert_same_epoch(const epoch_values *a, const epoch_values *b) {
  g_assert_cmpint(a->batches, ==, b->batches);
  g_assert_cmpmem(a->x->data, a->x->len * sizeof(float), b->x->data, b->x->len * sizeof(float));
  g_assert_cmpmem(a->y->data, a->y->len * sizeof(int64_t), b->y->data,
                  b->y->len * sizeof(int64_t));
}

/* No child process at all, running or unreaped. */
static void assert_no_children(void) {
  errno = 0;
  g_assert_cmpint(waitpid(-1, NULL, WNOHANG), ==, -1);
  g_assert_cmpint(errno, ==, ECHILD);
}

/* The pids of this process's children (running or unreaped), from /proc. */
static GArray *child_pids(void) {
  GArray *pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
  DIR *d = opendir("/proc");
  g_assert_nonnull(d);
  for (struct dirent *e; (e = readdir(d));) {
    char path[300], stat[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
    if (!f)
      continue;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *after_name = strrchr(stat, ')'); /* "pid (comm) state ppid ..." */
    int ppid;
    char state;
    if (after_name && sscanf(after_name + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid()) {
      pid_t pid = (pid_t)atoi(e->d_name);
      g_array_append_val(pids, pid);
    }
  }
  closedir(d);
  return pids;
}

/* Descriptors of shared-memory segments this process holds. */
static int count_segments(void) {
  DIR *d = opendir("/proc/self/fd");
  g_assert_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char path[300], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0) {
      target[len] = '\0';
      n += g_str_has_prefix(target, "/memfd:gradscope-storage");
    }
  }
  closedir(d);
  return n;
}

static void test_same_batches_as_without_workers(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(37, &none);
  for (int workers = 1; workers <= 3; workers++) {
    gs_loader_options plain = {.batch_size = 5, .shuffle = true, .seed = 11};
    gs_loader_options forked = plain;
    forked.num_workers = workers;
    gs_data_loader *a = gs_data_loader_new(&ds, &plain);
    gs_data_loader *b = gs_data_loader_new(&ds, &forked);
    for (int epoch = 0; epoch < 2; epoch++) { /* a new shuffle and new workers each epoch */
      gs_data_loader_reset(a);
      gs_data_loader_reset(b);
      epoch_values ea = read_epoch(a), eb = read_epoch(b);
      g_assert_cmpint(ea.batches, ==, 8);
      g_assert_cmpint(ea.y->len, ==, 37);
      assert_same_epoch(&ea, &eb);
      epoch_values_free(&ea);
      epoch_values_free(&eb);
      assert_no_children(); /* the epoch's end took the workers down */
    }
    gs_data_loader_free(a);
    gs_data_loader_free(b);
  }
  /* drop_last and a batch larger than the worker count's share. */
  gs_loader_options plain = {.batch_size = 4, .drop_last = true};
  gs_loader_options forked = plain;
  forked.num_workers = 2;
  forked.prefetch = 1;
  gs_data_loader *a = gs_data_loader_new(&ds, &plain), *b = gs_data_loader_new(&ds, &forked);
  epoch_values ea = read_epoch(a), eb = read_epoch(b);
  g_assert_cmpint(eb.batches, ==, 9);
  assert_same_epoch(&ea, &eb);
  epoch_values_free(&ea);
  epoch_values_free(&eb);
  gs_data_loader_free(a);
  gs_data_loader_free(b);
  g_assert_cmpint(count_segments(), ==, 0);
}

static void test_batches_arrive_in_the_callers_scope(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(10, &none);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4,
                                                                   .num_workers = 2});
  gs_scope step = gs_scope_begin("step");
  gs_batch b = gs_data_loader_next_batch(l);
  g_assert_true(gs_batch_is_alive(b));
  g_assert_cmpuint(gs_batch_owner_scope(b).id, ==, step.id);
  g_assert_cmpint(gs_batch_field_count(b), ==, 2);
  g_assert_cmpint(gs_batch_size(b), ==, 4);
  gs_tensor t[2];
  g_assert_true(gs_data_loader_next(l, t));
  g_assert_cmpuint(gs_owner_scope(t[0]).id, ==, step.id);
  g_assert_cmpuint(gs_owner_scope(t[1]).id, ==, step.id);
  gs_scope_end(step); /* disposes the composite and the tensors, all received */
  g_assert_false(gs_batch_is_alive(b));
  g_assert_false(gs_is_alive(t[0]));
  gs_data_loader_free(l);
  assert_no_children();
  g_assert_cmpint(count_segments(), ==, 0);
}

/* Is address p inside a mapping of a gradscope memfd segment? */
/* The inode of the shared-memory segment mapped at p (0: none): two mappings of one segment
 * share it. */
static unsigned long segment_inode(const void *p) {
  FILE *f = fopen("/proc/self/maps", "r");
  g_assert_nonnull(f);
  char line[512];
  unsigned long inode = 0;
  while (!inode && fgets(line, sizeof line, f)) {
    unsigned long lo, hi, ino;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &ino) == 3 &&
        (uintptr_t)p >= lo && (uintptr_t)p < hi && strstr(line, "/memfd:gradscope-storage"))
      inode = ino;
  }
  fclose(f);
  return inode;
}

static bool mapped_from_segment(const void *p) {
  FILE *f = fopen("/proc/self/maps", "r");
  g_assert_nonnull(f);
  char line[512];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi)
      found = strstr(line, "/memfd:gradscope-storage") != NULL;
  }
  fclose(f);
  return found;
}

static void test_batches_are_received_without_copying(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(24, &none);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 6,
                                                                   .num_workers = 2});
  gs_data_loader_reset(l);
  for (int i = 0; i < 4; i++) {
    gs_memory_stats before, after;
    gs_memory_get_stats(&before);
    gs_tensor t[2];
    g_assert_true(gs_data_loader_next(l, t));
    gs_memory_get_stats(&after);
    /* The engine allocated nothing for the batch: its bytes are the worker's pages. */
    g_assert_cmpuint(after.allocations, ==, before.allocations);
    g_assert_cmpuint(after.bytes_in_use, ==, before.bytes_in_use);
    for (int f = 0; f < 2; f++) {
      gs_storage_info info;
      g_assert_cmpint(gs_storage_info_of(t[f], &info), ==, 0);
      g_assert_cmpint(info.origin, ==, GS_MEMORY_RECEIVED);
      g_assert_true(info.seen_outside);
      g_assert_true(gs_is_shared(t[f]));
      g_assert_true(mapped_from_segment(info.data));
      /* Sent by a worker: a child of this process, batch i from worker i % 2. */
      g_assert_cmpint(info.peer_pid, !=, getpid());
      char stat_path[64];
      snprintf(stat_path, sizeof stat_path, "/proc/%lld/stat", (long long)info.peer_pid);
      g_autofree char *stat = NULL;
      if (g_file_get_contents(stat_path, &stat, NULL, NULL)) { /* it may have left already */
        int ppid = 0;
        const char *close_paren = strrchr(stat, ')');
        g_assert_cmpint(sscanf(close_paren + 2, "%*c %d", &ppid), ==, 1);
        g_assert_cmpint(ppid, ==, getpid());
      }
    }
    gs_dispose(t[0]);
    gs_dispose(t[1]);
  }
  gs_data_loader_free(l);
  assert_no_children();
}

static bool get_seeded_sample(void *user, int64_t i, gs_tensor *out) {
  (void)user;
  gs_worker_info info;
  g_assert_true(gs_data_worker_info(&info)); /* only ever called in a worker here */
  out[0] = gs_rand(GS_F64, (int64_t[]){2}, 1, NULL);
  /* Which worker read the sample, and with which seed. */
  out[1] = gs_from_data(GS_I64, (int64_t[]){3}, 1,
                        (int64_t[]){i, info.id, (int64_t)info.seed});
  return true;
}

static void workers_are_seeded_per_epoch_and_id(bool persistent) {
  gs_worker_info info;
  g_assert_false(gs_data_worker_info(&info)); /* not a worker */
  gs_dataset ds = {.length = 12, .n_fields = 2, .get_item = get_seeded_sample};
  gs_loader_options opt = {.batch_size = 2, .num_workers = 3, .seed = 100,
                           .persistent_workers = persistent};
  gs_data_loader *a = gs_data_loader_new(&ds, &opt), *b = gs_data_loader_new(&ds, &opt);
  double first[2][12 * 2];
  for (int epoch = 0; epoch < 2; epoch++) {
    gs_data_loader_reset(a);
    gs_data_loader_reset(b);
    for (int k = 0; k < 6; k++) {
      gs_tensor ta[2], tb[2];
      g_assert_true(gs_data_loader_next(a, ta));
      g_assert_true(gs_data_loader_next(b, tb));
      int64_t ids[2][3];
      double va[4], vb[4];
      g_assert_cmpint(gs_copy_to(ta[1], ids, sizeof ids), ==, 0);
      g_assert_cmpint(gs_copy_to(ta[0], va, sizeof va), ==, 0);
      g_assert_cmpint(gs_copy_to(tb[0], vb, sizeof vb), ==, 0);
      for (int r = 0; r < 2; r++) {
        g_assert_cmpint(ids[r][0], ==, 2 * k + r);
        g_assert_cmpint(ids[r][1], ==, k % 3); /* batch k comes from worker k % 3 */
        g_assert_cmpint(ids[r][2], ==, 100 + epoch * GS_LOADER_MAX_WORKERS + k % 3);
      }
      /* Same seeds, same draws: two loaders agree. */
      g_assert_cmpmem(va, sizeof va, vb, sizeof vb);
      memcpy(&first[epoch][4 * k], va, sizeof va);
      for (int f = 0; f < 2; f++) {
        gs_dispose(ta[f]);
        gs_dispose(tb[f]);
      }
    }
  }
  /* A new epoch draws anew. */
  g_assert_true(memcmp(first[0], first[1], sizeof first[0]) != 0);
  gs_data_loader_free(a);
  gs_data_loader_free(b);
  assert_no_children();
}

/* Sample i: how many threads the worker reading it has, and how many BLAS would use. */
static bool get_thread_counts(void *user, int64_t i, gs_tensor *out) {
  (void)user;
  out[0] =
      gs_from_data(GS_I64, (int64_t[]){2}, 1,
                   (int64_t[]){test_count_entries("/proc/self/task"), openblas_get_num_threads()});
  out[1] = gs_scalar(GS_I64, (double)i);
  return true;
}

/* A worker runs BLAS on one thread (N workers share the cores with the caller), with no
 * OpenBLAS pool thread started beside it (a fresh one spins on sched_yield for about 130 ms,
 * taking the cores the workers collate on); the caller's own count is what it was, and no
 * pool thread runs in the caller either. */
/* Threads a process has besides its own: ThreadSanitizer's runtime starts a background thread
 * of its own (in a forked worker too), which is not the program's. */
#if defined(__SANITIZE_THREAD__)
enum { RUNTIME_THREADS = 1 };
#else
enum { RUNTIME_THREADS = 0 };
#endif

static void test_workers_run_blas_on_one_thread(void) {
  /* In a process of its own: starting OpenBLAS's pool here would leave one to restart in the
   * later tests' workers (ThreadSanitizer stops a forked child that starts a thread). */
  if (!g_test_subprocess()) {
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
    return;
  }
  int before = openblas_get_num_threads();
  openblas_set_num_threads(2); /* a pool thread in this process, even on one core */
  gs_dataset ds = {.length = 4, .n_fields = 2, .get_item = get_thread_counts};
  gs_loader_options opt = {.batch_size = 1, .num_workers = 2};
  gs_data_loader *l = gs_data_loader_new(&ds, &opt);
  gs_tensor b[2];
  int batches = 0;
  while (gs_data_loader_next(l, b)) {
    int64_t counts[2];
    g_assert_cmpint(gs_copy_to(b[0], counts, sizeof counts), ==, 0);
    g_assert_cmpint(counts[0], <=, 1 + RUNTIME_THREADS); /* the worker's thread alone */
    g_assert_cmpint(counts[1], ==, 1);
    g_assert_cmpint(openblas_get_num_threads(), ==, 2);
    /* Nor one in the caller: its pool waits for its next BLAS call, as after any fork. */
    g_assert_cmpint(test_count_entries("/proc/self/task"), <=, 1 + RUNTIME_THREADS);
    gs_dispose(b[0]);
    gs_dispose(b[1]);
    batches++;
  }
  g_assert_cmpint(batches, ==, 4);
  gs_data_loader_free(l);
  assert_no_children();
  openblas_set_num_threads(before);
}

static void test_workers_are_seeded_per_epoch_and_id(void) {
  workers_are_seeded_per_epoch_and_id(false);
  workers_are_seeded_per_epoch_and_id(true); /* the same seeds when they stay */
}

/* The worker that sent batch field t (its pid). */
static int64_t sender_of(gs_tensor t) {
  gs_storage_info info;
  g_assert_cmpint(gs_storage_info_of(t, &info), ==, 0);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_RECEIVED);
  return info.peer_pid;
}

static void test_persistent_workers_serve_every_epoch(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(37, &none);
  int segments = count_segments();
  gs_loader_options plain = {.batch_size = 5, .shuffle = true, .seed = 11};
  gs_loader_options kept = plain;
  kept.num_workers = 2;
  kept.persistent_workers = true;
  gs_data_loader *a = gs_data_loader_new(&ds, &plain), *b = gs_data_loader_new(&ds, &kept);
  int64_t pids[2] = {0, 0};
  for (int epoch = 0; epoch < 3; epoch++) {
    gs_data_loader_reset(a);
    gs_data_loader_reset(b);
    if (epoch == 1) { /* ended early: what the workers had sent of it goes, they go on */
      gs_tensor t[2];
      g_assert_true(gs_data_loader_next(b, t));
      gs_dispose(t[0]);
      gs_dispose(t[1]);
      gs_data_loader_reset(a); /* both on to the next epoch number and its shuffle */
      gs_data_loader_reset(b);
    }
    /* The same two processes send every epoch's first two batches. */
    gs_tensor t0[2], t1[2];
    g_assert_true(gs_data_loader_next(b, t0));
    g_assert_true(gs_data_loader_next(b, t1));
    if (epoch == 0) {
      pids[0] = sender_of(t0[0]);
      pids[1] = sender_of(t1[0]);
      g_assert_cmpint(pids[0], !=, pids[1]);
    }
    g_assert_cmpint(sender_of(t0[0]), ==, pids[0]);
    g_assert_cmpint(sender_of(t1[1]), ==, pids[1]);
    int64_t y0[5], y1[5];
    g_assert_cmpint(gs_copy_to(t0[1], y0, sizeof y0), ==, 0);
    g_assert_cmpint(gs_copy_to(t1[1], y1, sizeof y1), ==, 0);
    for (int f = 0; f < 2; f++) {
      gs_dispose(t0[f]);
      gs_dispose(t1[f]);
    }
    epoch_values ea = read_epoch(a), eb = read_epoch(b);
    /* The rest of b's epoch, after its first two batches, is a's. */
    g_assert_cmpint(ea.batches, ==, 8);
    g_assert_cmpint(eb.batches, ==, 6);
    g_assert_cmpmem(ea.y->data, 5 * sizeof(int64_t), y0, sizeof y0);
    g_assert_cmpmem(&g_array_index(ea.y, int64_t, 5), 5 * sizeof(int64_t), y1, sizeof y1);
    g_assert_cmpmem(&g_array_index(ea.y, int64_t, 10), (ea.y->len - 10) * sizeof(int64_t),
                    eb.y->data, eb.y->len * sizeof(int64_t));
    g_assert_cmpmem(&g_array_index(ea.x, float, 10 * N_COLS),
                    (ea.x->len - 10 * N_COLS) * sizeof(float), eb.x->data,
                    eb.x->len * sizeof(float));
    epoch_values_free(&ea);
    epoch_values_free(&eb);
    /* Still there between epochs: waiting, not reaped. */
    g_assert_cmpint(waitpid((pid_t)pids[0], NULL, WNOHANG), ==, 0);
    g_assert_cmpint(waitpid((pid_t)pids[1], NULL, WNOHANG), ==, 0);
  }
  gs_data_loader_free(a);
  gs_data_loader_free(b);
  assert_no_children();
  g_assert_cmpint(count_segments(), ==, segments);
}

/* A new seed (gs_data_loader_set_seed) shuffles the next epochs with persistent workers as
 * without workers, though each worker draws the order itself. */
static void test_persistent_workers_take_a_new_seed(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(100, &none);
  gs_loader_options plain = {.batch_size = 10, .shuffle = true, .seed = 7};
  gs_loader_options kept = plain;
  kept.num_workers = 2;
  kept.persistent_workers = true;
  gs_data_loader *a = gs_data_loader_new(&ds, &plain), *b = gs_data_loader_new(&ds, &kept);
  for (int epoch = 0; epoch < 3; epoch++) {
    if (epoch > 0) {
      gs_data_loader_set_seed(a, 1000 + (uint64_t)epoch);
      gs_data_loader_set_seed(b, 1000 + (uint64_t)epoch);
    }
    gs_data_loader_reset(a);
    gs_data_loader_reset(b);
    epoch_values ea = read_epoch(a), eb = read_epoch(b);
    assert_same_epoch(&ea, &eb);
    epoch_values_free(&ea);
    epoch_values_free(&eb);
  }
  gs_data_loader_free(a);
  gs_data_loader_free(b);
  assert_no_children();
}

/* A persistent worker stuck in get_item does not hang reset: past timeout_ms (or, with none,
 * the loader's own 10 s) the workers are stopped and the new epoch gets fresh ones. */
static void reset_past_a_stuck_persistent_worker(int timeout_ms) {
  int stuck[2];
  g_assert_cmpint(pipe(stuck), ==, 0);
  trap_set hang = {TRAP_HANG, 6, stuck[1]}; /* in batch 1, worker 1's */
  gs_dataset ds = dataset(40, &hang);
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 4, .num_workers = 2, .timeout_ms = timeout_ms,
                                .persistent_workers = true});
  gs_tensor t[2];
  g_assert_true(gs_data_loader_next(l, t));
  int64_t first_worker = sender_of(t[0]);
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  char c;
  g_assert_cmpint(read(stuck[0], &c, 1), ==, 1); /* worker 1 is stuck now, not before */
  close(stuck[0]);
  close(stuck[1]);
  /* The old epoch's workers, the stuck one among them, are gone (stopped and reaped) when
   * reset returns, before the new epoch's start. How long that takes is bench-loader's. */
  GArray *old_workers = child_pids();
  g_assert_cmpuint(old_workers->len, ==, 2);
  gs_data_loader_reset(l);
  for (guint i = 0; i < old_workers->len; i++) {
    errno = 0;
    g_assert_cmpint(waitpid(g_array_index(old_workers, pid_t, i), NULL, WNOHANG), ==, -1);
    g_assert_cmpint(errno, ==, ECHILD);
  }
  g_array_free(old_workers, TRUE);
  g_assert_true(gs_data_loader_next(l, t));
  int64_t y[4];
  g_assert_cmpint(gs_copy_to(t[1], y, sizeof y), ==, 0);
  g_assert_cmpint(y[0], ==, 0); /* the new epoch's first batch */
  g_assert_cmpint(sender_of(t[0]), !=, first_worker); /* from a fresh worker */
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  gs_data_loader_free(l);
  assert_no_children();
}

static void test_reset_past_a_stuck_persistent_worker(void) {
  reset_past_a_stuck_persistent_worker(500);
  reset_past_a_stuck_persistent_worker(0);
}

static void test_segments_are_used_again(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(400, &none);
  int segments = count_segments();
  gs_loader_options one = {.batch_size = 4, .num_workers = 1, .persistent_workers = true};
  gs_data_loader *l = gs_data_loader_new(&ds, &one);
  /* Batches given back as they are used: the worker writes a few segments over and over. */
  GHashTable *inodes = g_hash_table_new(NULL, NULL);
  gs_data_loader_reset(l);
  for (int i = 0; i < 40; i++) {
    gs_tensor t[2];
    g_assert_true(gs_data_loader_next(l, t));
    int64_t y[4];
    g_assert_cmpint(gs_copy_to(t[1], y, sizeof y), ==, 0);
    g_assert_cmpint(y[0], ==, 4 * i);
    g_assert_cmpint(y[3], ==, 4 * i + 3);
    for (int f = 0; f < 2; f++) {
      gs_storage_info info;
      g_assert_cmpint(gs_storage_info_of(t[f], &info), ==, 0);
      unsigned long inode = segment_inode(info.data);
      g_assert_cmpuint(inode, !=, 0);
      g_hash_table_add(inodes, GSIZE_TO_POINTER(inode));
      gs_dispose(t[f]);
    }
  }
  g_assert_cmpuint(g_hash_table_size(inodes), <=, 12); /* 80 fields over a few segments */
  g_hash_table_destroy(inodes);

  /* Batches the caller keeps are never written again, however many follow. */
  gs_data_loader_reset(l);
  gs_tensor kept[30][2];
  for (int i = 0; i < 30; i++)
    g_assert_true(gs_data_loader_next(l, kept[i]));
  for (int i = 0; i < 30; i++) {
    float x[4 * N_COLS];
    g_assert_cmpint(gs_copy_to(kept[i][0], x, sizeof x), ==, 0);
    g_assert_cmpfloat(x[0], ==, (float)(4 * i));
    g_assert_cmpfloat(x[4 * N_COLS - 1], ==, (float)(4 * i + 3) + 0.5f);
    gs_dispose(kept[i][0]);
    gs_dispose(kept[i][1]);
  }

  /* A batch sent on to another receiver (here this process, over a socket pair) keeps its
   * pages after the caller disposes its own handle: that receiver may still read them. */
  gs_data_loader_reset(l);
  int sv[2];
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
  gs_tensor t[2];
  g_assert_true(gs_data_loader_next(l, t));
  g_assert_cmpint(gs_tensor_send(sv[0], t[1]), ==, 0);
  gs_tensor forwarded = gs_tensor_recv(sv[1]);
  g_assert_true(gs_is_alive(forwarded));
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  for (int i = 1; i < 40; i++) {
    g_assert_true(gs_data_loader_next(l, t));
    gs_dispose(t[0]);
    gs_dispose(t[1]);
  }
  int64_t y[4];
  g_assert_cmpint(gs_copy_to(forwarded, y, sizeof y), ==, 0);
  g_assert_cmpint(y[0], ==, 0);
  g_assert_cmpint(y[3], ==, 3);
  gs_dispose(forwarded);
  close(sv[0]);
  close(sv[1]);
  gs_data_loader_free(l);
  assert_no_children();
  g_assert_cmpint(count_segments(), ==, segments);
}

/* A copy of the caller made by the program's own fork() shares the sockets to the workers, but
 * what it disposes is not the caller's to give back: a batch the caller still holds is never
 * written again because its copy in the child went. */
static void test_a_forked_copy_gives_nothing_back(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(400, &none);
  gs_loader_options one = {.batch_size = 4, .num_workers = 1, .persistent_workers = true};
  gs_data_loader *l = gs_data_loader_new(&ds, &one);
  gs_tensor held[2];
  g_assert_true(gs_data_loader_next(l, held));
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) { /* the child's copies go, and with them (were they the child's) the slots */
    gs_dispose(held[0]);
    gs_dispose(held[1]);
    _exit(0);
  }
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int i = 1; i < 40; i++) { /* enough batches to go round every segment of the pool */
    gs_tensor t[2];
    g_assert_true(gs_data_loader_next(l, t));
    gs_dispose(t[0]);
    gs_dispose(t[1]);
  }
  float x[4 * N_COLS];
  int64_t y[4];
  g_assert_cmpint(gs_copy_to(held[0], x, sizeof x), ==, 0);
  g_assert_cmpint(gs_copy_to(held[1], y, sizeof y), ==, 0);
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(y[i], ==, i);
    g_assert_cmpfloat(x[i * N_COLS], ==, (float)i);
  }
  gs_dispose(held[0]);
  gs_dispose(held[1]);
  gs_data_loader_free(l);
  assert_no_children();
}

/* Reads batches until the loader fails; returns how many came before, with the error
 * expected to contain every one of the substrings. */
static int read_until_failure(gs_data_loader *l, const char *const *expected) {
  int good = 0;
  gs_tensor t[2];
  gs_error_handler old = gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_clear_error();
  while (gs_data_loader_next(l, t)) {
    good++;
    gs_dispose(t[0]);
    gs_dispose(t[1]);
  }
  const char *message = gs_last_error();
  for (const char *const *e = expected; *e; e++)
    if (!strstr(message, *e))
      g_error("expected the error to contain \"%s\", got \"%s\"", *e, message);
  /* The epoch ended there: no more batches, no new error. */
  gs_clear_error();
  g_assert_false(gs_data_loader_next(l, t));
  g_assert_cmpstr(gs_last_error(), ==, "");
  gs_set_error_handler(old, NULL, NULL);
  return good;
}

static void test_a_crashing_worker_is_named(void) {
  trap_set trap = {TRAP_ABORT, 7}; /* batch 3 (samples 6, 7): worker 1 */
  gs_dataset ds = dataset(20, &trap);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 2,
                                                                   .num_workers = 2});
  int good = read_until_failure(
      l, (const char *const[]){"DataLoader worker 1 (pid ", "batch 3", "signal 6", NULL});
  g_assert_cmpint(good, ==, 3);
  assert_no_children(); /* the failure took the other worker down too */
  gs_data_loader_free(l);
  g_assert_cmpint(count_segments(), ==, 0);
}

static void test_a_hanging_worker_times_out(void) {
  trap_set trap = {TRAP_HANG, 4}; /* batch 2 (samples 4, 5): worker 0 */
  gs_dataset ds = dataset(20, &trap);
  /* The limit is per batch: long enough that the good batches never hit it on a loaded
   * machine under ASan (a worker's start is a fork). */
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 2, .num_workers = 2, .timeout_ms = 1500});
  gint64 start = g_get_monotonic_time();
  int good = read_until_failure(
      l, (const char *const[]){"DataLoader worker 0 (pid ", "batch 2", "timeout_ms = 1500",
                               NULL});
  gint64 waited_ms = (g_get_monotonic_time() - start) / 1000;
  g_assert_cmpint(good, ==, 2);
  /* Not before the limit. How little more the hang costs is a speed: bench-loader's. */
  g_assert_cmpint(waited_ms, >=, 1500);
  assert_no_children();
  gs_data_loader_free(l);
}

static void test_a_failing_worker_reports_its_error(void) {
  trap_set trap = {TRAP_FAIL, 5}; /* batch 1 (samples 3, 4, 5): worker 1 of 3 */
  gs_dataset ds = dataset(20, &trap);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 3,
                                                                   .num_workers = 3});
  int good = read_until_failure(
      l, (const char *const[]){"DataLoader worker 1 (pid ", "batch 1", "could not collate",
                               "get_item failed for sample 5", NULL});
  g_assert_cmpint(good, ==, 1);
  assert_no_children();
  /* A new epoch starts new workers, which fail at the same place. */
  gs_data_loader_reset(l);
  good = read_until_failure(l, (const char *const[]){"batch 1", "sample 5", NULL});
  g_assert_cmpint(good, ==, 1);
  gs_data_loader_free(l);
  assert_no_children();
}

static void test_ending_early_leaves_nothing_behind(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(200, &none);
  int segments = count_segments();
  /* Free with batches waiting in the sockets and workers blocked on credits. */
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 4, .num_workers = 3, .prefetch = 4});
  gs_tensor t[2];
  g_assert_true(gs_data_loader_next(l, t));
  g_assert_cmpint(count_segments(), ==, segments + 2); /* the batch's two fields */
  gs_data_loader_free(l);
  assert_no_children();
  g_assert_cmpint(count_segments(), ==, segments + 2); /* only what the caller still holds */
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  g_assert_cmpint(count_segments(), ==, segments);
  /* Reset mid-epoch: the old workers go, new ones start. */
  l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4, .num_workers = 2});
  g_assert_true(gs_data_loader_next(l, t));
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  gs_data_loader_reset(l);
  g_assert_true(gs_data_loader_next(l, t));
  int64_t first[4];
  g_assert_cmpint(gs_copy_to(t[1], first, sizeof first), ==, 0);
  g_assert_cmpint(first[0], ==, 0); /* the new epoch's first batch */
  gs_dispose(t[0]);
  gs_dispose(t[1]);
  gs_data_loader_free(l);
  assert_no_children();
  g_assert_cmpint(count_segments(), ==, segments);
}

/* Another thread takes the engine's locks (pools, allocator, scopes, the error handler's) as
 * fast as it can while the loader forks: a worker that inherited one held would hang, which
 * timeout_ms turns into a failure. */
static atomic_bool busy_stop;
static void *busy_engine(void *arg) {
  (void)arg;
  while (!atomic_load(&busy_stop)) {
    gs_scope s = gs_scope_begin("busy");
    gs_tensor a = gs_rand(GS_F32, (int64_t[]){64}, 1, NULL);
    gs_tensor b = gs_mul(a, a);
    (void)gs_sum(b, NULL, 0, false);
    gs_scope_end(s);
  }
  return NULL;
}

static void test_workers_start_while_threads_use_the_engine(void) {
#ifdef __SANITIZE_ADDRESS__
  /* GCC 12's AddressSanitizer does not hold its allocator's locks across fork() (LLVM added
   * that in 17; google/sanitizers#774): a worker forked while the busy thread is inside malloc
   * waits forever on the size class's lock that thread held. Seen here as a hung worker whose
   * only frame is __sanitizer::FutexWait at 0x640000000408 (the allocator's region). glibc's
   * malloc takes its arenas' locks around fork, so the plain and TSan builds run this test. */
  g_test_skip("AddressSanitizer's allocator is not fork-safe with other threads allocating "
              "(GCC 12, google/sanitizers#774); the plain and TSan builds run this test");
  return;
#endif
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(16, &none);
  gs_loader_options opt = {.batch_size = 4, .num_workers = 2, .timeout_ms = 20000};
  gs_data_loader *l = gs_data_loader_new(&ds, &opt);
  atomic_store(&busy_stop, false);
  pthread_t thread;
  g_assert_cmpint(pthread_create(&thread, NULL, busy_engine, NULL), ==, 0);
  for (int epoch = 0; epoch < 20; epoch++) {
    gs_data_loader_reset(l);
    epoch_values e = read_epoch(l);
    g_assert_cmpint(e.batches, ==, 4);
    g_assert_cmpint(e.y->len, ==, 16);
    epoch_values_free(&e);
  }
  atomic_store(&busy_stop, true);
  pthread_join(thread, NULL);
  gs_data_loader_free(l);
  assert_no_children();
}

static void free_key(gpointer key, gpointer value, gpointer user_data) {
  (void)value, (void)user_data;
  g_free(key);
}

/* The storage_alloc events of a log file with memory = received, and the log's pid. Every
 * scope the log begins has its outer scope in the same log. */
static int count_received(const char *path, GArray *peers, uint32_t *pid) {
  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  int received = 0, events = 0;
  GHashTable *scopes = g_hash_table_new(g_int64_hash, g_int64_equal);
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    events++;
    if (e.kind == GS_TRACE_SCOPE_BEGIN) {
      g_assert_true(e.outer == 0 || g_hash_table_contains(scopes, &e.outer));
      g_hash_table_add(scopes, g_memdup2(&e.scope, sizeof e.scope));
    }
    if (e.kind == GS_TRACE_STORAGE_ALLOC && e.memory == GS_MEMORY_RECEIVED) {
      received++;
      if (peers)
        g_array_append_val(peers, e.peer);
    }
  }
  g_assert_cmpint(events, >, 0);
  g_hash_table_foreach(scopes, (GHFunc)free_key, NULL);
  g_hash_table_destroy(scopes);
  uint32_t major, minor;
  uint64_t start;
  g_assert_true(gs_trace_reader_header(r, &major, &minor, &start, pid));
  gs_trace_reader_free(r);
  return received;
}

static void test_each_worker_writes_its_own_log(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-workers-XXXXXX", NULL);
  g_autofree char *main_log = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(main_log), ==, 0);
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(12, &none);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 3,
                                                                   .num_workers = 2});
  gs_scope epoch = gs_scope_begin("epoch"); /* the workers fork inside it */
  epoch_values e = read_epoch(l);
  gs_scope_end(epoch);
  g_assert_cmpint(e.batches, ==, 4);
  epoch_values_free(&e);
  gs_data_loader_free(l);
  gs_trace_close();
  assert_no_children();

  GArray *peers = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  uint32_t main_pid = 0, worker_pid[2] = {0};
  /* Each batch's two fields came from a worker. */
  g_assert_cmpint(count_received(main_log, peers, &main_pid), ==, 8);
  g_assert_cmpuint(main_pid, ==, (uint32_t)getpid());
  for (int w = 0; w < 2; w++) {
    g_autofree char *name = g_strdup_printf("run.worker-%d.gstrace", w);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
    /* A worker receives nothing; it made the batches it sent. */
    g_assert_cmpint(count_received(path, NULL, &worker_pid[w]), ==, 0);
    g_assert_cmpuint(worker_pid[w], !=, main_pid);
    g_unlink(path);
  }
  /* Batch b's storages name worker b % 2 as their sender. */
  for (guint i = 0; i < peers->len; i++)
    g_assert_cmpuint(g_array_index(peers, uint32_t, i), ==, worker_pid[(i / 2) % 2]);
  g_array_free(peers, TRUE);
  g_unlink(main_log);
  g_rmdir(dir);
}

static void test_bad_worker_options_are_refused(void) {
  trap_set none = {TRAP_NONE, 0};
  gs_dataset ds = dataset(4, &none);
  EXPECT_ERROR(g_assert_null(gs_data_loader_new(
                   &ds, &(gs_loader_options){.batch_size = 1, .num_workers = -1})),
               "expected num_workers in 0..64");
  EXPECT_ERROR(g_assert_null(gs_data_loader_new(
                   &ds, &(gs_loader_options){.batch_size = 1, .num_workers = 65})),
               "got 65");
  EXPECT_ERROR(g_assert_null(gs_data_loader_new(
                   &ds, &(gs_loader_options){.batch_size = 1, .timeout_ms = -5})),
               "expected timeout_ms >= 0");
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/loader-workers/same-batches-as-without", test_same_batches_as_without_workers);
  g_test_add_func("/loader-workers/callers-scope", test_batches_arrive_in_the_callers_scope);
  g_test_add_func("/loader-workers/no-copy", test_batches_are_received_without_copying);
  g_test_add_func("/loader-workers/seeds", test_workers_are_seeded_per_epoch_and_id);
  g_test_add_func("/loader-workers/blas-threads", test_workers_run_blas_on_one_thread);
  g_test_add_func("/loader-workers/persistent", test_persistent_workers_serve_every_epoch);
  g_test_add_func("/loader-workers/persistent-new-seed", test_persistent_workers_take_a_new_seed);
  g_test_add_func("/loader-workers/segments-used-again", test_segments_are_used_again);
  g_test_add_func("/loader-workers/forked-copy-gives-nothing-back",
                  test_a_forked_copy_gives_nothing_back);
  g_test_add_func("/loader-workers/persistent-stuck-worker",
                  test_reset_past_a_stuck_persistent_worker);
  g_test_add_func("/loader-workers/crash", test_a_crashing_worker_is_named);
  g_test_add_func("/loader-workers/hang", test_a_hanging_worker_times_out);
  g_test_add_func("/loader-workers/error", test_a_failing_worker_reports_its_error);
  g_test_add_func("/loader-workers/early-end", test_ending_early_leaves_nothing_behind);
  g_test_add_func("/loader-workers/busy-threads", test_workers_start_while_threads_use_the_engine);
  g_test_add_func("/loader-workers/worker-logs", test_each_worker_writes_its_own_log);
  g_test_add_func("/loader-workers/bad-options", test_bad_worker_options_are_refused);
  return g_test_run();
}
