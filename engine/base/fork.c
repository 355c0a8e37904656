/* fork.c: a fork() after which the child can use the engine (DataLoader worker processes).
 *
 * After fork() only the forking thread exists in the child. A lock another thread held at that
 * moment (a pool's free list, the allocator, a trace buffer) would stay held forever, and the
 * child's first engine call would spin on it. So every engine lock registers here, with a rank
 * that says where it sits in the engine's lock order (outermost first: a lock held while others
 * are taken must rank before them), and gs__fork takes all of them in rank order, forks, and
 * gives them back on both sides. Taking them in the same order every other thread does means
 * the fork waits for critical sections in flight instead of deadlocking with them.
 *
 * Only gs__fork does this, not pthread_atfork: a program's own fork() keeps the behaviour it
 * always had (and libc's own atfork handlers, OpenBLAS's among them, run inside fork() as
 * usual). The process id gs__pid caches is the exception: every fork must forget it, so that
 * a child never takes itself for its parent, which is what its handler does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "base.h"

#define MAX_GUARDS 32

typedef struct guard {
  int rank;
  void (*take)(void);
  void (*give)(void);
} guard;

/* Serialises forks and registrations; taken before any guarded lock. */
static pthread_mutex_t guards_lock = PTHREAD_MUTEX_INITIALIZER;
static guard guards[MAX_GUARDS];
static int n_guards;

void gs__fork_guard_add(int rank, void (*take)(void), void (*give)(void)) {
  pthread_mutex_lock(&guards_lock);
  if (n_guards < MAX_GUARDS) { /* a static count of call sites: never full in practice */
    int i = n_guards++;
    for (; i > 0 && guards[i - 1].rank > rank; i--) /* stable: equal ranks keep their order */
      guards[i] = guards[i - 1];
    guards[i] = (guard){rank, take, give};
  }
  pthread_mutex_unlock(&guards_lock);
}

int gs__fork(void) {
  pthread_mutex_lock(&guards_lock);
  for (int i = 0; i < n_guards; i++)
    guards[i].take();
  pid_t pid = fork();
  int err = errno;
  /* In the child the forking thread is the holder of every lock it took (default mutexes and
   * spinlocks have no owner check), so giving them back works on both sides alike. */
  for (int i = n_guards - 1; i >= 0; i--)
    guards[i].give();
  pthread_mutex_unlock(&guards_lock);
  errno = err;
  return pid;
}

/* 0 until read in this process; the fork handler sets it back to 0 in every child. */
static atomic_int cached_pid;

static void forget_pid(void) { atomic_store_explicit(&cached_pid, 0, memory_order_relaxed); }

__attribute__((constructor)) static void forget_pid_in_children(void) {
  pthread_atfork(NULL, NULL, forget_pid);
}

int gs__pid(void) {
  int pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
  if (pid == 0) {
    pid = (int)getpid();
    atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
  }
  return pid;
}
