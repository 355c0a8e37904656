/* base.h: the bottom of the engine's stack: what every layer above may use and nothing here
 * uses anything of the engine: thread-local storage, a short spinlock, a loop shared with a
 * helper thread, the scheduling of the engine's background threads, interned strings and the
 * global event counter. (The generational handle pool is base/pool.h.)
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Thread-local storage for the library's own per-thread state. initial-exec: one instruction
 * to reach it instead of a call to __tls_get_addr per access (the general-dynamic model a
 * shared library gets by default), which showed up at 45 instructions per recorded event. */
/* A copy of the engine loaded with dlopen (the Python extension) is compiled with
 * -DGS__TLS_MODEL="global-dynamic": glibc keeps only a few hundred bytes of static TLS for
 * libraries loaded late, and the engine's per-thread state is several kilobytes
 * ("cannot allocate memory in static TLS block"). */
#ifndef GS__TLS_MODEL
#define GS__TLS_MODEL "initial-exec"
#endif
#define GS__THREAD_LOCAL _Thread_local __attribute__((tls_model(GS__TLS_MODEL)))

/* ---- spinlock.c ---------------------------------------------------------------------- */

/* A lock for critical sections of a few instructions with no system calls inside (the slot
 * free list, the allocator's free lists): cheaper than a mutex when uncontended, which is
 * nearly always. Under contention it yields rather than burning the other core. */
typedef struct gs__spinlock {
  atomic_flag flag;
} gs__spinlock;
#define GS__SPINLOCK_INIT {ATOMIC_FLAG_INIT}
void gs__spin_wait(gs__spinlock *lock);
/* One wait of a spin on anything: a pause for the first 64 spins, then a yield of the core. */
void gs__spin_pause(int spins);
static inline void gs__spin_lock(gs__spinlock *lock) {
  if (atomic_flag_test_and_set_explicit(&lock->flag, memory_order_acquire))
    gs__spin_wait(lock);
}
static inline void gs__spin_unlock(gs__spinlock *lock) {
  atomic_flag_clear_explicit(&lock->flag, memory_order_release);
}

/* ---- background.c -------------------------------------------------------------------- */

/* Called by whoever started an engine helper thread, as soon as pthread_create returns: the
 * thread no longer preempts the program's thread that wakes it (SCHED_BATCH where there is
 * one). */
void gs__thread_background(pthread_t thread);

/* ---- fork.c -------------------------------------------------------------------------- */

/* Where a lock sits in the engine's lock order, outermost first: gs__fork takes the locks in
 * this order, so a lock that is held while another is taken must rank lower than it. */
enum {
  GS__FORK_RANK_BACKWARD = 10,           /* backward/: held across a whole backward pass */
  GS__FORK_RANK_RANDOM = 20,             /* core/random.c: the default generator, across a fill */
  GS__FORK_RANK_ERROR = 25,              /* core/error.c: the handler (a leaf) */
  GS__FORK_RANK_OWNERSHIP = 30,          /* scope/ownership.c: takes pool locks inside */
  GS__FORK_RANK_TRACE_SITES = 40,        /* trace/sites.c: writes into a thread's buffer inside */
  GS__FORK_RANK_TRACE_STREAMS = 50,      /* trace/writer.c: registry, then buffers, then the sink */
  GS__FORK_RANK_TRACE_WRITE_BEHIND = 51, /* trace/write-behind.c: the queue of full buffers */
  GS__FORK_RANK_TRACE_RING = 52,         /* trace/flight-recorder.c: its applier's queue, state */
  GS__FORK_RANK_TRACE_STRINGS = 55,      /* trace/writer.c: the string table (a leaf) */
  GS__FORK_RANK_NODE_HANDLES = 58,       /* autograd/node-handle.c: takes a pool lock inside */
  GS__FORK_RANK_POOLS = 60,     /* base/pool.c: every pool's free list, then the history slabs */
  GS__FORK_RANK_ALLOCATOR = 70, /* core/allocator.c (a leaf) */
  GS__FORK_RANK_INTERN = 80,    /* base/intern.c (a leaf) */
};

/* Registers a lock (or an ordered group of locks) with gs__fork: take acquires it, give
 * releases it. Called by each lock's owner from a constructor. */
void gs__fork_guard_add(int rank, void (*take)(void), void (*give)(void));
/* fork(), with every registered engine lock taken around it, so that the child (which has
 * only the calling thread) finds them all free and their data consistent. As fork(): the
 * child's pid, 0 in the child, -1 with errno set. */
int gs__fork(void);
/* getpid(), read once per process: a child forked by any means that runs libc's fork handlers
 * (fork(), gs__fork) reads its own again. A system call costs 1-3 us on a VM, and the
 * DataLoader checks it on every byte its main process sends a worker. */
int gs__pid(void);

/* Registers one static lock with gs__fork from a constructor of the file that owns it. The
 * mutex form needs <pthread.h>. */
#define GS__FORK_GUARD_SPINLOCK(RANK, LOCK)                                                    \
  static void fork_take_##LOCK(void) { gs__spin_lock(&(LOCK)); }                              \
  static void fork_give_##LOCK(void) { gs__spin_unlock(&(LOCK)); }                            \
  __attribute__((constructor)) static void fork_guard_##LOCK(void) {                          \
    gs__fork_guard_add((RANK), fork_take_##LOCK, fork_give_##LOCK);                           \
  }
#define GS__FORK_GUARD_MUTEX(RANK, LOCK)                                                       \
  static void fork_take_##LOCK(void) { pthread_mutex_lock(&(LOCK)); }                         \
  static void fork_give_##LOCK(void) { pthread_mutex_unlock(&(LOCK)); }                       \
  __attribute__((constructor)) static void fork_guard_##LOCK(void) {                          \
    gs__fork_guard_add((RANK), fork_take_##LOCK, fork_give_##LOCK);                           \
  }

/* ---- split-run.c --------------------------------------------------------------------- */

/* Runs fn(ctx, lo, hi) over [0, n) in chunks of `chunk` (the last one shorter), in no given
 * order: on the calling thread alone when threads < 2, otherwise shared with one helper
 * thread, never waiting for the helper to start. Returns when all of [0, n) is done. For
 * passes whose elements are independent (the optimizers' updates). */
typedef void (*gs__split_fn)(void *ctx, int64_t lo, int64_t hi);
void gs__split_run(gs__split_fn fn, void *ctx, int64_t n, int64_t chunk, int threads);
/* How many times a caller has had to wake the sleeping helper (for the tests: jobs that come
 * back to back find it awake). */
unsigned long gs__split_run_signals(void);

/* ---- intern.c ------------------------------------------------------------------------ */

/* A copy of s that lives as long as the process, the same pointer for equal text: names in
 * stale-handle errors, leak reports and the event log's string table. */
const char *gs__intern(const char *s);

/* ---- events.c ------------------------------------------------------------------------ */

/* Takes the next global event number. Every event takes one, even with the log off (then
 * through gs__skip_events), so that errors can say which event disposed or wrote a tensor and
 * the log's event of that number is the one they mean. Inline: every tensor's creation and
 * disposal takes one. */
extern atomic_uint_fast64_t gs__event_counter;
/* Numbers this thread skipped (events not written, the log being off) and has not yet taken
 * from the counter: they are taken with its next numbered event, in one atomic add, so a
 * skipped event costs an increment of a thread-local instead of an atomic. Within a thread the
 * numbers come out as if each had been taken at once; across threads the interleaving is the
 * scheduler's anyway. */
extern GS__THREAD_LOCAL uint64_t gs__event_debt;
static inline uint64_t gs__next_event(void) {
  uint64_t n = 1 + gs__event_debt;
  gs__event_debt = 0;
  return atomic_fetch_add_explicit(&gs__event_counter, n, memory_order_relaxed) + n;
}
static inline void gs__skip_events(uint64_t n) { gs__event_debt += n; }
/* Takes this thread's skipped numbers now, without taking a new one, and returns the last
 * number taken: what a snapshot of the present repeats (it takes no number of its own). */
static inline uint64_t gs__events_settle(void) {
  uint64_t n = gs__event_debt;
  gs__event_debt = 0;
  return atomic_fetch_add_explicit(&gs__event_counter, n, memory_order_relaxed) + n;
}
