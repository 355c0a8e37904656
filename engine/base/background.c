/* background.c: how the engine's own helper threads (the log's write-behind writer, the flight
 * recorder's applier) share a core with the program's threads. */
#include <pthread.h>
#include <sched.h>

#include "base.h"

/* A thread woken by the program (a full buffer handed over) would, as an ordinary thread that
 * mostly sleeps, preempt the thread that woke it whenever the scheduler puts both on one core:
 * the program then waits for a chunk's CRC and write(2). A batch thread is never preferred at
 * its wakeup: it runs on a free core, or when the program's thread has had its slice; the
 * queue of full buffers is there to absorb that delay. */
void gs__thread_background(pthread_t thread) {
#ifdef SCHED_BATCH
  struct sched_param none = {0};
  pthread_setschedparam(thread, SCHED_BATCH, &none); /* where refused, it stays as it was */
#else
  (void)thread;
#endif
}
