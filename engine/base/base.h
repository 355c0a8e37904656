/* base.h: the bottom of the engine's stack: what every layer above may use and nothing here
 * uses anything of the engine: thread-local storage, a short spinlock, interned strings and
 * the global event counter. (The generational handle pool is base/pool.h.)
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Thread-local storage for the library's own per-thread state. initial-exec: one instruction
 * to reach it instead of a call to __tls_get_addr per access (the general-dynamic model a
 * shared library gets by default), which showed up at 45 instructions per recorded event. */
#define GS__THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))

/* ---- spinlock.c ---------------------------------------------------------------------- */

/* A lock for critical sections of a few instructions with no system calls inside (the slot
 * free list, the allocator's free lists): cheaper than a mutex when uncontended, which is
 * nearly always. Under contention it yields rather than burning the other core. */
typedef struct gs__spinlock {
  atomic_flag flag;
} gs__spinlock;
#define GS__SPINLOCK_INIT {ATOMIC_FLAG_INIT}
void gs__spin_wait(gs__spinlock *lock);
static inline void gs__spin_lock(gs__spinlock *lock) {
  if (atomic_flag_test_and_set_explicit(&lock->flag, memory_order_acquire))
    gs__spin_wait(lock);
}
static inline void gs__spin_unlock(gs__spinlock *lock) {
  atomic_flag_clear_explicit(&lock->flag, memory_order_release);
}

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
