/* files.c: the file plumbing safetensors.c and npy.c share (see io-impl.h): building a header
 * in memory, writing a file all or nothing, the checked reads loading starts with, and mapping
 * a file's data as a storage. The formats themselves live in their own files; nothing here
 * knows either one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gradscope/gradscope.h"
#include "io-impl.h"

/* ---- a growable byte string ----------------------------------------------------------- */

void gs__sbuf_put(gs__sbuf *b, const char *s, size_t n) {
  if (b->failed)
    return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > cap)
      cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = true;
      return;
    }
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void gs__sbuf_str(gs__sbuf *b, const char *s) { gs__sbuf_put(b, s, strlen(s)); }

void gs__sbuf_int(gs__sbuf *b, const char *prefix, long long v, bool hex4) {
  char tmp[64];
  int n = hex4 ? snprintf(tmp, sizeof tmp, "%s%04llx", prefix, v)
               : snprintf(tmp, sizeof tmp, "%s%lld", prefix, v);
  gs__sbuf_put(b, tmp, (size_t)n);
}

/* ---- writing -------------------------------------------------------------------------- */

/* Writes t's values row-major to f. false after reporting. */
static bool write_tensor_data(FILE *f, const gs__tensor *t, gs_tensor h, const char *fn) {
  size_t nbytes = (size_t)t->numel * gs__elsize(t->dtype);
  if (nbytes == 0)
    return true;
  if (gs__is_contiguous(t)) {
    if (fwrite(gs__tensor_data(t), 1, nbytes, f) != nbytes) {
      gs__error(GS_ERR_STATE, fn, "write failed: %s", strerror(errno));
      return false;
    }
    return true;
  }
  void *tmp = malloc(nbytes);
  if (!tmp) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %zu bytes", nbytes);
    return false;
  }
  bool ok = gs_copy_to(h, tmp, nbytes) == 0;
  if (ok && fwrite(tmp, 1, nbytes, f) != nbytes) {
    gs__error(GS_ERR_STATE, fn, "write failed: %s", strerror(errno));
    ok = false;
  }
  free(tmp);
  return ok;
}

int gs__io_write_file(const char *path, const char *head, size_t head_len,
                      gs__tensor *const *ts, const gs_tensor *hs, int count, const char *fn) {
  size_t plen = strlen(path);
  char *tmp_path = malloc(plen + 5);
  if (!tmp_path) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return -1;
  }
  memcpy(tmp_path, path, plen);
  memcpy(tmp_path + plen, ".tmp", 5);
  FILE *f = fopen(tmp_path, "wb");
  if (!f) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot create \"%s\": %s", tmp_path, strerror(errno));
    free(tmp_path);
    return -1;
  }
  bool ok = fwrite(head, 1, head_len, f) == head_len;
  if (!ok)
    gs__error(GS_ERR_STATE, fn, "write failed: %s", strerror(errno));
  for (int i = 0; ok && i < count; i++)
    ok = write_tensor_data(f, ts[i], hs[i], fn);
  if (fclose(f) != 0 && ok) {
    gs__error(GS_ERR_STATE, fn, "write failed: %s", strerror(errno));
    ok = false;
  }
  if (ok && rename(tmp_path, path) != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot rename \"%s\" to \"%s\": %s", tmp_path, path,
              strerror(errno));
    ok = false;
  }
  if (!ok)
    remove(tmp_path);
  free(tmp_path);
  return ok ? 0 : -1;
}

/* ---- reading -------------------------------------------------------------------------- */

FILE *gs__io_open_sized(const char *path, int64_t *size, bool for_writing, const char *fn) {
  if (!path) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a path, got NULL");
    return NULL;
  }
  FILE *f = fopen(path, for_writing ? "r+b" : "rb");
  if (!f) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot open \"%s\"%s: %s", path,
              for_writing ? " for writing" : "", strerror(errno));
    return NULL;
  }
  long sz;
  if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot seek in \"%s\"", path);
    fclose(f);
    return NULL;
  }
  *size = sz;
  return f;
}

bool gs__io_read_exact(FILE *f, void *buf, size_t n, const char *what, const char *fn) {
  if (n && fread(buf, 1, n, f) != n) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot read %s (%zu bytes)", what, n);
    return false;
  }
  return true;
}

void gs__io_normalize_bools(void *data, size_t n) {
  unsigned char *b = data;
  for (size_t k = 0; k < n; k++)
    b[k] = b[k] != 0;
}

/* ---- mapping ------------------------------------------------------------------------- */

typedef struct io_mapping {
  void *base;
  size_t len;
} io_mapping;

static void io_unmap(void *data, void *user) {
  (void)data;
  io_mapping *m = user;
  munmap(m->base, m->len);
  free(m);
}

gs__storage *gs__io_map_storage(int fd, int64_t size, int64_t offset, int64_t nbytes,
                                bool shared, const char *path, const char *fn) {
  io_mapping *m = malloc(sizeof *m);
  if (!m) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  /* The whole file from offset 0: mmap wants a page-aligned file offset, the data is not. */
  m->len = (size_t)size;
  m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd,
                 0);
  if (m->base == MAP_FAILED) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot map \"%s\" (%lld bytes): %s", path,
              (long long)size, strerror(errno));
    free(m);
    return NULL;
  }
  gs__storage *s = gs__storage_wrap((char *)m->base + offset, (uint64_t)nbytes, io_unmap, m,
                                    GS_MEMORY_MAPPED);
  if (!s) {
    io_unmap(NULL, m);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return NULL;
  }
  s->buffer->writes_reach_file = shared;
  s->buffer->seen_outside = shared; /* other mappings of the file see its writes */
  return s;
}
