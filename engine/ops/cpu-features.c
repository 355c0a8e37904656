/* cpu-features.c: which vector instructions the ops' kernels may use, asked once, for the ops
 * that keep a copy of a kernel for them (conv-direct.c: AVX-512 and AVX2+FMA; pool.c:
 * AVX-512). A plain test, not target_clones: its ifunc resolver runs before ThreadSanitizer's
 * runtime is up and crashed every TSan test at load.
 *
 * The environment variable GS_CPU_FEATURES, read once, caps the level below what the CPU has
 * (tests use it to run each kernel on one machine; a benchmark, to compare them):
 *   GS_CPU_FEATURES=avx512  the default: the best the CPU runs;
 *   GS_CPU_FEATURES=avx2    AVX2+FMA at most (no AVX-512 kernels);
 *   GS_CPU_FEATURES=none    the portable code only (f32 convolutions through im2col+sgemm).
 * It never raises the level above the CPU's. Any other value is reported on stderr and
 * ignored. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

/* What the CPU runs. */
static gs__cpu_level hardware_level(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return GS__CPU_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return GS__CPU_AVX2;
#endif
  return GS__CPU_NONE;
}

/* The cap GS_CPU_FEATURES asks for (AVX-512 when unset or not understood). */
static gs__cpu_level requested_level(void) {
  const char *v = getenv("GS_CPU_FEATURES");
  if (!v || !*v || strcmp(v, "avx512") == 0)
    return GS__CPU_AVX512;
  if (strcmp(v, "avx2") == 0)
    return GS__CPU_AVX2;
  if (strcmp(v, "none") == 0)
    return GS__CPU_NONE;
  fprintf(stderr,
          "gradscope: GS_CPU_FEATURES: expected avx512, avx2 or none, got \"%s\"; ignored\n", v);
  return GS__CPU_AVX512;
}

gs__cpu_level gs__cpu_level_get(void) {
  static atomic_int known = -1; /* -1 until asked; then the level (every thread finds the same) */
  int level = atomic_load_explicit(&known, memory_order_relaxed);
  if (level < 0) {
    gs__cpu_level hw = hardware_level(), cap = requested_level();
    level = (int)(hw < cap ? hw : cap);
    atomic_store_explicit(&known, level, memory_order_relaxed);
  }
  return (gs__cpu_level)level;
}

bool gs__cpu_has_avx512f(void) { return gs__cpu_level_get() >= GS__CPU_AVX512; }
