/* fuzz-check.h: the fuzz targets' check (fuzz-trace-reader.c, fuzz-trace-model.c): a failed
 * condition is printed with its place and aborts, which libFuzzer reports as a crash and the
 * corpus replays as a failed test. Always on, whatever NDEBUG says. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                     \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)
