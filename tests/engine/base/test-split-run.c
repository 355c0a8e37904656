/* test-split-run.c: gs__split_run (engine/base/split-run.c), the loop the optimizers' passes
 * share with a helper thread: every index of [0, n) is run exactly once, whatever the chunk,
 * the thread count, several callers at once, or a forked child (which has no helper); and the
 * helper does take part when it can, and a job that follows another finds it awake. */
#include <glib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"

/* A loop's record: how often each index ran, and which threads ran chunks. */
typedef struct visits {
  int64_t n;
  atomic_int *count;
  pthread_t caller;
  atomic_int chunks_off_caller;
  atomic_int chunks;
} visits;

static void visit(void *ctx, int64_t lo, int64_t hi) {
  visits *v = ctx;
  g_assert_true(0 <= lo && lo < hi && hi <= v->n);
  for (int64_t i = lo; i < hi; i++)
    atomic_fetch_add(&v->count[i], 1);
  atomic_fetch_add(&v->chunks, 1);
  if (!pthread_equal(pthread_self(), v->caller))
    atomic_fetch_add(&v->chunks_off_caller, 1);
  g_usleep(20); /* long enough chunks that a woken helper finds some left */
}

/* Runs a split loop and checks each index ran once; returns the chunks run off the caller. */
static int run_and_check(int64_t n, int64_t chunk, int threads) {
  visits v = {.n = n, .count = g_new0(atomic_int, n > 0 ? n : 1), .caller = pthread_self()};
  gs__split_run(visit, &v, n, chunk, threads);
  for (int64_t i = 0; i < n; i++)
    if (atomic_load(&v.count[i]) != 1)
      g_error("n %" G_GINT64_FORMAT ", chunk %" G_GINT64_FORMAT
              ", %d threads: index %" G_GINT64_FORMAT " ran %d times",
              n, chunk, threads, i, atomic_load(&v.count[i]));
  int off = atomic_load(&v.chunks_off_caller);
  if (threads < 2)
    g_assert_cmpint(off, ==, 0);
  g_free(v.count);
  return off;
}

static void test_every_index_once(void) {
  const int64_t sizes[] = {0, 1, 7, 64, 1000, 4097};
  const int64_t chunks[] = {1, 3, 64, 5000};
  for (int t = 1; t <= 2; t++)
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
      for (size_t j = 0; j < G_N_ELEMENTS(chunks); j++)
        run_and_check(sizes[i], chunks[j], t);
}

/* With two threads the helper runs some chunks (on a busy machine maybe not every time: the
 * caller never waits for it, so this asks only that it joined in some of many loops). */
static void test_helper_takes_part(void) {
  int off = 0;
  for (int k = 0; k < 200 && off == 0; k++)
    off += run_and_check(4096, 16, 2);
  g_assert_cmpint(off, >, 0);
}

/* A job that comes right after another finds the helper still awake and does not have to
 * wake it (a futex wake costs a virtual machine's guest 10-25 us). On a busy machine the
 * helper may not have run since the first job's wake-up, so this asks only that a tenth of the
 * second jobs went without one (at load 6 on 2 cores: 68-89 of 100; with a helper that goes
 * back to sleep after each job: 0-1). */
static void test_back_to_back_jobs_need_no_wake(void) {
  int without_wake = 0;
  for (int k = 0; k < 100; k++) {
    run_and_check(256, 16, 2);
    unsigned long before = gs__split_run_signals();
    run_and_check(256, 16, 2);
    without_wake += gs__split_run_signals() == before;
  }
  g_assert_cmpint(without_wake, >=, 10);
}

static void *caller_thread(void *unused) {
  (void)unused;
  for (int k = 0; k < 50; k++)
    run_and_check(2000, 37, 2);
  return NULL;
}

/* Callers on several threads at once: one has the helper, the others run alone. */
static void test_concurrent_callers(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    g_assert_cmpint(pthread_create(&t[i], NULL, caller_thread, NULL), ==, 0);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
}

/* A forked child has no helper: its loops run alone, and complete. */
static void test_forked_child_runs_alone(void) {
  run_and_check(1000, 10, 2); /* the parent's helper exists */
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    int off = run_and_check(1000, 10, 2);
    _exit(off == 0 ? 0 : 3);
  }
  int status;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/base/split-run/every-index-once", test_every_index_once);
  g_test_add_func("/base/split-run/helper-takes-part", test_helper_takes_part);
  g_test_add_func("/base/split-run/back-to-back-jobs-need-no-wake",
                  test_back_to_back_jobs_need_no_wake);
  g_test_add_func("/base/split-run/concurrent-callers", test_concurrent_callers);
  g_test_add_func("/base/split-run/forked-child-runs-alone", test_forked_child_runs_alone);
  return g_test_run();
}
