/* events.c: the global event counter. Numbers are taken by what the log and error messages
 * both name (a tensor's creation, a disposal, an in-place write), with the log on or off, so an
 * error can say "disposed at event 412" and the log's event 412 is that disposal. */
#include "base.h"

#include "gradscope/tensor.h"

atomic_uint_fast64_t gs__event_counter;

uint64_t gs_event_counter(void) {
  return atomic_load_explicit(&gs__event_counter, memory_order_relaxed);
}
