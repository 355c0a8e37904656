/* io-impl.h: what the file formats (safetensors.c, npy.c) share, implemented in files.c: the
 * growable byte string a header is built in, the all-or-nothing write of a header and tensor
 * data, and the checked opening and reading that loading starts with.
 *
 * io/ uses core/ only (handles, tensors, errors) and the public API; nn/ uses io/, never the
 * other way round.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core-impl.h"

/* Both formats store elements in little-endian order and we read and write tensor bytes as
 * they are in memory. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "engine/io assumes a little-endian host"
#endif

/* The largest header either format accepts: a bound checked before allocating, so a damaged
 * length field cannot ask for gigabytes. */
#define GS__IO_MAX_HEADER_BYTES ((uint64_t)100 * 1000 * 1000)

/* A growable byte string, always NUL-terminated once anything was put. An allocation failure
 * sets failed and makes later puts do nothing, so a caller builds a whole header and checks
 * once at the end. */
typedef struct gs__sbuf {
  char *data;
  size_t len, cap;
  bool failed;
} gs__sbuf;

void gs__sbuf_put(gs__sbuf *b, const char *s, size_t n);
void gs__sbuf_str(gs__sbuf *b, const char *s);
/* prefix, then v in decimal (or as 4 hex digits when hex4). */
void gs__sbuf_int(gs__sbuf *b, const char *prefix, long long v, bool hex4);

/* Writes head, then the count tensors' values row-major, to "<path>.tmp" and renames it over
 * path, so a failed save leaves no file behind (and never half of one at path). 0, or -1
 * after reporting as fn. */
int gs__io_write_file(const char *path, const char *head, size_t head_len,
                      gs__tensor *const *ts, const gs_tensor *hs, int count, const char *fn);

/* Opens path for reading (and writing, for a mapping whose writes reach the file) and returns
 * its size in *size, so that every length in the file can be checked against it before
 * anything is allocated; NULL after reporting. */
FILE *gs__io_open_sized(const char *path, int64_t *size, bool for_writing, const char *fn);
/* Reads exactly n bytes (what names them in the message); false after reporting. */
bool gs__io_read_exact(FILE *f, void *buf, size_t n, const char *what, const char *fn);
/* Turns every nonzero byte into 1: a file may hold any byte for a bool, the engine's bools
 * are 0 or 1. */
void gs__io_normalize_bools(void *data, size_t n);

/* A storage over nbytes of fd's file from byte offset (size: the file's length), mapped
 * rather than read: pages come in as they are touched. shared: writes reach the file (fd open
 * for writing); else they go to a private copy. Unmapped when the storage goes; NULL after
 * reporting. */
gs__storage *gs__io_map_storage(int fd, int64_t size, int64_t offset, int64_t nbytes,
                                bool shared, const char *path, const char *fn);
