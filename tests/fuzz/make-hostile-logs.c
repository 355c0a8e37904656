/* make-hostile-logs.c: writes the hostile and unusual logs of hostile-logs.c into a
 * directory, NAME.gst each, at a scale (1 = the sizes issue 22 measured; the cli suite uses a
 * small one, the benchmark 1). Usage: make-hostile-logs DIR [SCALE [NAME]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile-logs.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: %s DIR [SCALE [NAME]]\n", argv[0]);
    return 2;
  }
  double scale = argc > 2 ? strtod(argv[2], NULL) : 1.0;
  const char *only = argc > 3 ? argv[3] : NULL;
  int written = 0;
  for (const hostile_log *h = hostile_logs; h->name; h++) {
    if (only && strcmp(only, h->name) != 0)
      continue;
    tw_log log = {0};
    h->build(&log, scale);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.gst", argv[1], h->name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(log.data, 1, log.len, f) != log.len || fclose(f) != 0) {
      perror(path);
      return 1;
    }
    tw_free(&log);
    written++;
  }
  if (!written) {
    fprintf(stderr, "%s: no log is called %s\n", argv[0], only ? only : "(none)");
    return 1;
  }
  return 0;
}
