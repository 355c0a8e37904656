/* bench-util.h: what the benchmarks share: a monotonic clock, the process's CPU time, a
 * median, a barrier that keeps the compiler from deleting the work being timed, the
 * `name=value unit` result lines and the process's resident memory from /proc/self/status. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU time in seconds (all its threads). */
static inline double bench_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Tells the compiler that p's memory is used, so timed loops and malloc/free pairs stay. */
static inline void bench_escape(const void *p) { __asm__ volatile("" : : "g"(p) : "memory"); }

static int bench_compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of n samples (sorts them). */
static inline double bench_median(double *samples, int n) {
  qsort(samples, (size_t)n, sizeof *samples, bench_compare_doubles);
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

/* One machine-readable result line. */
static inline void bench_result(const char *name, double value, const char *unit) {
  printf("%s=%.4g%s%s\n", name, value, unit[0] ? " " : "", unit);
}

/* The environment settings that change what OpenBLAS and the CPU do, as comment lines. */
static inline void bench_print_setup(void) {
  const char *vars[] = {"OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "GS_CACHE_LIMIT_MB"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    printf("# %s=%s\n", vars[i], v ? v : "(unset)");
  }
}

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1 where there is no such file. */
static inline long bench_proc_status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long kib = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      kib = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return kib;
}
