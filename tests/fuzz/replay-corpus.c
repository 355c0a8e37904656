/* replay-corpus.c: runs every file of a fuzz corpus directory through a libFuzzer target's
 * LLVMFuzzerTestOneInput, so seeds and past crashes are re-checked by every `meson test`,
 * built by any compiler, without libFuzzer. Usage: replay-corpus DIR... */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint8_t *data = NULL;
  size_t cap = 0, n = 0, got;
  do {
    if (cap - n < 4096) {
      cap = cap ? 2 * cap : 65536;
      uint8_t *bigger = realloc(data, cap);
      if (!bigger) {
        free(data);
        fclose(f);
        return NULL;
      }
      data = bigger;
    }
    got = fread(data + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(data);
    return NULL;
  }
  *size = n;
  return data;
}

int main(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    DIR *dir = opendir(argv[i]);
    if (!dir) {
      perror(argv[i]);
      return 1;
    }
    struct dirent *entry;
    while ((entry = readdir(dir))) {
      char path[4096];
      struct stat st;
      snprintf(path, sizeof path, "%s/%s", argv[i], entry->d_name);
      if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      size_t size = 0;
      uint8_t *data = read_file(path, &size);
      if (!data) {
        perror(path);
        return 1;
      }
      LLVMFuzzerTestOneInput(data, size);
      free(data);
      files++;
    }
    closedir(dir);
  }
  printf("replayed %d files\n", files);
  /* An empty corpus means the path is wrong, not that all is well. */
  return files > 0 ? 0 : 1;
}
