/* events.c: the global event counter. Every event takes a number, with the log on or off, so
 * an error can say "disposed at event 412" and the log's event 412 is that disposal. */
#include "base.h"

#include "gradscope/tensor.h"

atomic_uint_fast64_t gs__event_counter;
GS__THREAD_LOCAL uint64_t gs__event_debt;

/* The count so far, as this thread sees it: with the numbers it skipped and not yet took. */
uint64_t gs_event_counter(void) {
  return atomic_load_explicit(&gs__event_counter, memory_order_relaxed) + gs__event_debt;
}
