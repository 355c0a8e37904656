/* split-run.c: a loop over [0, n) shared by the calling thread and one helper thread, for
 * passes long enough that a second core pays (the optimizer's update of a large parameter
 * streams megabytes: one core's share of the memory bandwidth bounds it).
 *
 * The machine may be busy: the helper may not run for milliseconds after it is woken. So the
 * caller never waits for it to start: both claim chunks from one counter, the caller from the
 * first, and the caller waits only for chunks the helper has already claimed. A helper that
 * wakes late finds every chunk taken and goes back to sleep; at worst the caller did all the
 * work, as it would alone, plus one wake-up.
 *
 * Waking a sleeping thread is dear where system calls are (in the project's virtual machine a
 * system call takes about 2 us, the caller's futex wake 10-25 us and the helper starts 8-20 us
 * after it, against about 0.15 ms for the MLP's largest parameter's SGD pass on one core),
 * and an optimizer step asks for its jobs back to back, one per large parameter. So after a job the helper stays awake for HELPER_LINGER_NS, giving its core
 * away between looks (sched_yield, as OpenBLAS's own idle threads do, so that a product's
 * thread on that core is never held up), and a caller that finds it awake only publishes its
 * job: no system call on either side. A sleeping helper is woken after the caller lets go of
 * the lock, so that it does not wake only to wait for that lock.
 *
 * The counter holds the job's generation in its high 32 bits and the next chunk in its low
 * 32, claimed by compare-and-swap: a helper still holding an old job's description can never
 * claim a chunk of a newer one. One job at a time: a second thread that finds the helper busy
 * runs its loop alone. A process forked from this one has no helper (only the forking thread
 * survives a fork): there the loop runs alone too. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the one caller */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

/* The job, written by its caller under wake_lock before its generation is published. */
static gs__split_fn job_fn;
static void *job_ctx;
static int64_t job_n, job_chunk;
static uint32_t job_chunks;
static uint32_t job_generation;     /* under wake_lock */
static bool helper_sleeping;        /* under wake_lock: the helper waits on `wake` */
static atomic_uint announced;       /* job_generation, stored after wake_lock is let go */
static atomic_ulong signals;        /* wake-ups sent to a sleeping helper, for the tests */
static _Atomic uint64_t next_claim; /* generation << 32 | next chunk */
static atomic_uint chunks_done;
static pid_t helper_pid; /* under job_lock: the process the helper runs in, 0 before it starts */

static void run_chunk(gs__split_fn fn, void *ctx, int64_t n, int64_t chunk, uint32_t i) {
  int64_t lo = (int64_t)i * chunk, hi = lo + chunk < n ? lo + chunk : n;
  fn(ctx, lo, hi);
}

/* Claims the next chunk of generation gen: false when that job has no chunk left (or is over). */
static bool claim(uint32_t gen, uint32_t chunks, uint32_t *out) {
  uint64_t v = atomic_load_explicit(&next_claim, memory_order_relaxed);
  for (;;) {
    uint32_t i = (uint32_t)v;
    if ((uint32_t)(v >> 32) != gen || i >= chunks)
      return false;
    if (atomic_compare_exchange_weak_explicit(&next_claim, &v, v + 1, memory_order_acquire,
                                              memory_order_relaxed)) {
      *out = i;
      return true;
    }
  }
}

/* How long the helper stays awake after a job for the next one, in nanoseconds. */
enum { HELPER_LINGER_NS = 200 * 1000 };

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits up to HELPER_LINGER_NS for a job after `seen`, yielding its core between looks. */
static void linger(uint32_t seen) {
  int64_t until = now_ns() + HELPER_LINGER_NS;
  while (atomic_load_explicit(&announced, memory_order_acquire) == seen && now_ns() < until)
    sched_yield();
}

static void *helper_main(void *unused) {
  (void)unused;
  uint32_t seen = 0;
  for (;;) {
    pthread_mutex_lock(&wake_lock);
    if (job_generation == seen) {
      helper_sleeping = true;
      while (job_generation == seen)
        pthread_cond_wait(&wake, &wake_lock);
      helper_sleeping = false;
    }
    seen = job_generation;
    gs__split_fn fn = job_fn;
    void *ctx = job_ctx;
    int64_t n = job_n, chunk = job_chunk;
    uint32_t chunks = job_chunks;
    pthread_mutex_unlock(&wake_lock);
    uint32_t i;
    while (claim(seen, chunks, &i)) {
      run_chunk(fn, ctx, n, chunk, i);
      atomic_fetch_add_explicit(&chunks_done, 1, memory_order_release);
    }
    linger(seen);
  }
  return NULL;
}

/* Starts the helper once per process; false if it cannot run here (job_lock held). */
static bool helper_ready(void) {
  pid_t self = getpid();
  if (helper_pid == self)
    return true;
  if (helper_pid != 0)
    return false; /* a forked child: its parent's helper is not here */
  pthread_attr_t attr;
  pthread_t t;
  if (pthread_attr_init(&attr) != 0)
    return false;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  bool ok = pthread_create(&t, &attr, helper_main, NULL) == 0;
  pthread_attr_destroy(&attr);
  if (ok)
    helper_pid = self;
  return ok;
}

void gs__split_run(gs__split_fn fn, void *ctx, int64_t n, int64_t chunk, int threads) {
  if (n <= 0)
    return;
  if (chunk < 1)
    chunk = 1;
  int64_t chunks = (n + chunk - 1) / chunk;
  if (threads < 2 || chunks < 2 || chunks > UINT32_MAX || pthread_mutex_trylock(&job_lock) != 0) {
    fn(ctx, 0, n);
    return;
  }
  if (!helper_ready()) {
    pthread_mutex_unlock(&job_lock);
    fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&wake_lock);
  uint32_t gen = ++job_generation;
  if (gen == 0) /* the helper starts having seen 0 */
    gen = ++job_generation;
  job_fn = fn, job_ctx = ctx, job_n = n, job_chunk = chunk, job_chunks = (uint32_t)chunks;
  atomic_store_explicit(&chunks_done, 0, memory_order_relaxed);
  atomic_store_explicit(&next_claim, (uint64_t)gen << 32, memory_order_release);
  bool sleeping = helper_sleeping;
  pthread_mutex_unlock(&wake_lock);
  atomic_store_explicit(&announced, gen, memory_order_release);
  if (sleeping) {
    atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
    pthread_cond_signal(&wake);
  }
  uint32_t i, mine = 0;
  while (claim(gen, (uint32_t)chunks, &i)) {
    run_chunk(fn, ctx, n, chunk, i);
    mine++;
  }
  /* Every chunk is claimed: wait for the ones the helper took (it is running them now). */
  for (int spins = 0;
       atomic_load_explicit(&chunks_done, memory_order_acquire) + mine < (uint32_t)chunks; spins++)
    gs__spin_pause(spins);
  pthread_mutex_unlock(&job_lock);
}

unsigned long gs__split_run_signals(void) {
  return atomic_load_explicit(&signals, memory_order_relaxed);
}
