/* cpu-features.c: which vector instructions this CPU has, asked once, for the ops that keep
 * a copy of a kernel for them (conv-direct.c, pool.c). A plain test, not target_clones: its
 * ifunc resolver runs before ThreadSanitizer's runtime is up and crashed every TSan test at
 * load. */
#include <stdatomic.h>

#include "ops-impl.h"

bool gs__cpu_has_avx512f(void) {
  static atomic_int known = -1; /* -1 until asked; then 0 or 1 (every thread finds the same) */
  int has = atomic_load_explicit(&known, memory_order_relaxed);
  if (has < 0) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    has = __builtin_cpu_supports("avx512f") ? 1 : 0;
#else
    has = 0;
#endif
    atomic_store_explicit(&known, has, memory_order_relaxed);
  }
  return has == 1;
}
