/* spinlock.c: the contended path of gs__spinlock (the uncontended path is inline in
 * core-impl.h). Spins briefly, then yields the core: on a 2-core machine the holder may need
 * this one to make progress. */
#include <sched.h>

#include "base.h"

void gs__spin_pause(int spins) {
#if defined(__x86_64__) || defined(__i386__)
  if (spins < 64) {
    __builtin_ia32_pause();
    return;
  }
#endif
  (void)spins;
  sched_yield();
}

void gs__spin_wait(gs__spinlock *lock) {
  for (int spins = 0; atomic_flag_test_and_set_explicit(&lock->flag, memory_order_acquire); spins++)
    gs__spin_pause(spins);
}
