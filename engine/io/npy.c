/* npy.c: NumPy's .npy format for one tensor (what numpy.save and numpy.load read and write):
 * the magic "\x93NUMPY", a version, a header length, a Python dict literal naming the dtype,
 * the order and the shape, padded so the data starts 64-byte aligned, then the data.
 *
 * Only what the engine holds is accepted ('<f4', '<f8', '<i8', '|b1', '<i4', '|u1', '|i1', '<i2', C
 * order); versions 1.0
 * and 2.0 are read, 1.0 is written. The dict is walked with json.h's cursor (the literal is
 * close enough to JSON for its pieces), and the data size is checked against the file before
 * anything is allocated.
 */
#include <stdlib.h>
#include <string.h>

#include "gradscope/checkpoint.h"
#include "io-impl.h"
#include "json.h"

/* The descr numpy writes for each dtype: little-endian, and no byte order for a one-byte bool. */
static const char *npy_descr(gs_dtype d) {
  switch (d) {
  case GS_F32: return "<f4";
  case GS_F64: return "<f8";
  case GS_I64: return "<i8";
  case GS_BOOL: return "|b1";
  case GS_I32: return "<i4";
  case GS_U8: return "|u1";
  case GS_I8: return "|i1";
  case GS_I16: return "<i2";
  }
  return "?";
}

int gs_npy_save(const char *path, gs_tensor h) {
  static const char fn[] = "npy_save";
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return -1;
  if (!path) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a path, got NULL");
    return -1;
  }
  gs__sbuf b = {0};
  gs__sbuf_put(&b, "\x93NUMPY\x01\x00\x00\x00", 10);
  gs__sbuf_str(&b, "{'descr': '");
  gs__sbuf_str(&b, npy_descr(t->dtype));
  gs__sbuf_str(&b, "', 'fortran_order': False, 'shape': (");
  for (int d = 0; d < t->ndim; d++)
    gs__sbuf_int(&b, d ? ", " : "", (long long)t->shape[d], false);
  if (t->ndim == 1)
    gs__sbuf_put(&b, ",", 1);
  gs__sbuf_str(&b, "), }");
  while (!b.failed && (b.len + 1) % 64 != 0)
    gs__sbuf_put(&b, " ", 1);
  gs__sbuf_put(&b, "\n", 1);
  if (b.failed) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    free(b.data);
    return -1;
  }
  size_t hl = b.len - 10;
  if (hl > 65535) {
    gs__error(GS_ERR_SHAPE, fn, "expected a header below 64 KiB, got %zu bytes", hl);
    free(b.data);
    return -1;
  }
  b.data[8] = (char)(hl & 0xff);
  b.data[9] = (char)(hl >> 8);
  int rc = gs__io_write_file(path, b.data, b.len, &t, &h, 1, fn);
  free(b.data);
  return rc;
}

/* The dict of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * with keys in any order, each once. */
static bool npy_parse_dict(gs__json *p, gs_dtype *dtype, int64_t *shape, int *ndim) {
  if (!gs__json_char(p, '{', "'{' starting the header dict"))
    return false;
  bool have[3] = {false, false, false};
  for (;;) {
    gs__json_skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
      p->pos++;
      break;
    }
    static const char *const keys[3] = {"'descr'", "'fortran_order'", "'shape'"};
    int k = -1;
    for (int i = 0; i < 3; i++)
      if (p->len - p->pos >= strlen(keys[i]) &&
          memcmp(p->s + p->pos, keys[i], strlen(keys[i])) == 0)
        k = i;
    if (k < 0 || have[k])
      return gs__json_fail(p, k < 0 ? "'descr', 'fortran_order', 'shape' or '}'"
                              : "each key once");
    have[k] = true;
    p->pos += strlen(keys[k]);
    if (!gs__json_char(p, ':', "':' after a key"))
      return false;
    gs__json_skip_space(p);
    if (k == 0) {
      static const char *const descrs[GS_DTYPE_COUNT] = {"'<f4'", "'<f8'", "'<i8'", "'|b1'",
                                                         "'<i4'", "'|u1'", "'|i1'", "'<i2'"};
      static const gs_dtype dts[GS_DTYPE_COUNT] = {GS_F32, GS_F64, GS_I64, GS_BOOL,
                                                   GS_I32, GS_U8,  GS_I8,  GS_I16};
      int m = -1;
      for (int i = 0; i < GS_DTYPE_COUNT; i++)
        if (p->len - p->pos >= strlen(descrs[i]) &&
            memcmp(p->s + p->pos, descrs[i], strlen(descrs[i])) == 0)
          m = i;
      if (m < 0)
        return gs__json_fail(p, "descr '<f4', '<f8', '<i8', '|b1', '<i4', '|u1', '|i1' or '<i2'");
      *dtype = dts[m];
      p->pos += strlen(descrs[m]);
    } else if (k == 1) {
      if (p->len - p->pos < 5 || memcmp(p->s + p->pos, "False", 5) != 0)
        return gs__json_fail(p, "fortran_order False (Fortran-ordered arrays are not supported)");
      p->pos += 5;
    } else {
      if (!gs__json_char(p, '(', "'(' starting the shape tuple"))
        return false;
      *ndim = 0;
      for (;;) {
        gs__json_skip_space(p);
        if (p->pos < p->len && p->s[p->pos] == ')') {
          p->pos++;
          break;
        }
        if (*ndim == GS_MAX_DIMS)
          return gs__json_fail(p, "at most 8 dimensions");
        if (!gs__json_uint(p, &shape[(*ndim)++]))
          return false;
        gs__json_skip_space(p);
        if (p->pos < p->len && p->s[p->pos] == ',')
          p->pos++;
        else if (p->pos >= p->len || p->s[p->pos] != ')')
          return gs__json_fail(p, "',' or ')' in the shape tuple");
      }
    }
    gs__json_skip_space(p);
    if (p->pos < p->len && p->s[p->pos] == ',')
      p->pos++;
    else if (p->pos >= p->len || p->s[p->pos] != '}')
      return gs__json_fail(p, "',' or '}' in the header dict");
  }
  if (!(have[0] && have[1] && have[2])) {
    p->pos--;
    return gs__json_fail(p, !have[0] ? "'descr' before '}'"
                      : !have[1] ? "'fortran_order' before '}'" : "'shape' before '}'");
  }
  gs__json_skip_space(p);
  if (p->pos != p->len)
    return gs__json_fail(p, "only spaces and a newline after the header dict");
  return true;
}

/* What a .npy header says, checked against the file's size. */
typedef struct npy_header {
  gs_dtype dtype;
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  int64_t data_offset; /* where the data starts in the file */
  int64_t nbytes;
} npy_header;

/* Reads and checks f's preamble and header dict (f at its start, size bytes long), leaving f
 * at the data; false after reporting. */
static bool npy_read_header(FILE *f, int64_t size, npy_header *h, const char *fn) {
  bool ok = false;
  char *head = NULL;
  unsigned char pre[12];
  if (size < 10) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected at least 10 bytes (magic, version, header "
              "length), found a file of %lld bytes", (long long)size);
    goto out;
  }
  if (!gs__io_read_exact(f, pre, 10, "the preamble", fn))
    goto out;
  if (memcmp(pre, "\x93NUMPY", 6) != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected the magic \"\\x93NUMPY\", found bytes %02x %02x "
              "%02x %02x %02x %02x", pre[0], pre[1], pre[2], pre[3], pre[4], pre[5]);
    goto out;
  }
  if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected format version 1.0 or 2.0, found %d.%d", pre[6],
              pre[7]);
    goto out;
  }
  int64_t pre_len = 10;
  uint64_t hl = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
  if (pre[6] == 2) {
    if (size < 12) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected a 4-byte header length (version 2.0), found "
                "a file of %lld bytes", (long long)size);
      goto out;
    }
    if (!gs__io_read_exact(f, pre + 10, 2, "the header length", fn))
      goto out;
    hl |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    pre_len = 12;
  }
  if (hl > GS__IO_MAX_HEADER_BYTES || hl > (uint64_t)(size - pre_len)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a header of %llu bytes, found only %lld bytes "
              "after the header length", (unsigned long long)hl, (long long)(size - pre_len));
    goto out;
  }
  head = malloc(hl ? hl : 1);
  if (!head) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    goto out;
  }
  if (!gs__io_read_exact(f, head, hl, "the header", fn))
    goto out;
  if (hl == 0 || head[hl - 1] != '\n') {
    gs__error(GS_ERR_ARGUMENT, fn, "expected the header to end with a newline, found %s",
              hl == 0 ? "an empty header" : "another byte");
    goto out;
  }
  h->dtype = GS_F32;
  h->ndim = 0;
  gs__json p = {head, hl, 0, (size_t)pre_len, fn};
  if (!npy_parse_dict(&p, &h->dtype, h->shape, &h->ndim))
    goto out;
  int64_t numel = 1;
  for (int d = 0; d < h->ndim; d++) {
    if (h->shape[d] != 0 && numel > INT64_MAX / 8 / h->shape[d]) {
      char buf[GS__SHAPE_STR];
      gs__error(GS_ERR_OVERFLOW, fn, "expected a shape whose byte size fits in 64 bits, "
                "found %s", gs__shape_str(buf, h->shape, h->ndim));
      goto out;
    }
    numel *= h->shape[d];
  }
  h->nbytes = numel * (int64_t)gs__elsize(h->dtype);
  h->data_offset = pre_len + (int64_t)hl;
  int64_t have = size - h->data_offset;
  if (have != h->nbytes) {
    char buf[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected %lld data bytes for %s %s, found %lld",
              (long long)h->nbytes, npy_descr(h->dtype), gs__shape_str(buf, h->shape, h->ndim),
              (long long)have);
    goto out;
  }
  ok = true;
out:
  free(head);
  return ok;
}

/* Reads the data into engine memory. */
static gs_tensor npy_read_data(FILE *f, const npy_header *h, const char *fn) {
  void *data = malloc(h->nbytes ? (size_t)h->nbytes : 1);
  if (!data) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld bytes", (long long)h->nbytes);
    return GS_NO_TENSOR;
  }
  gs_tensor result = GS_NO_TENSOR;
  if (gs__io_read_exact(f, data, (size_t)h->nbytes, "the data", fn)) {
    if (h->dtype == GS_BOOL)
      gs__io_normalize_bools(data, (size_t)h->nbytes);
    result = gs_from_data(h->dtype, h->shape, h->ndim, data);
  }
  free(data);
  return result;
}

/* Maps the file's data as the tensor's storage. */
static gs_tensor npy_map(FILE *f, int64_t size, const npy_header *h, bool shared,
                         const char *path, const char *fn) {
  size_t elsize = gs__elsize(h->dtype);
  if (h->data_offset % (int64_t)elsize != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected the data at an offset aligned to %zu bytes to "
              "map it, found offset %lld (load it with GS_NPY_READ)", elsize,
              (long long)h->data_offset);
    return GS_NO_TENSOR;
  }
  gs__storage *s = gs__io_map_storage(fileno(f), size, h->data_offset, h->nbytes, shared,
                                      path, fn);
  if (!s)
    return GS_NO_TENSOR;
  if (h->dtype == GS_BOOL) {
    /* The engine's bools are 0 or 1; reading normalises them, a mapping cannot. */
    const unsigned char *b = s->buffer->data;
    for (int64_t i = 0; i < h->nbytes; i++) {
      if (b[i] > 1) {
        gs__error(GS_ERR_ARGUMENT, fn, "expected bool bytes 0 or 1 to map \"%s\", found %u "
                  "at element %lld (load it with GS_NPY_READ)", path, b[i], (long long)i);
        gs__storage_release(s);
        return GS_NO_TENSOR;
      }
    }
  }
  gs__tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = h->dtype;
  t.ndim = h->ndim;
  t.numel = h->nbytes / (int64_t)elsize;
  memcpy(t.shape, h->shape, sizeof t.shape);
  gs__contiguous_strides(t.shape, t.ndim, t.strides);
  t.storage = s;
  return gs__register(&t, fn);
}

gs_tensor gs_npy_load(const char *path) {
  return gs_npy_load_mode(path, GS_NPY_READ);
}

gs_tensor gs_npy_load_mode(const char *path, gs_npy_mode mode) {
  static const char fn[] = "npy_load";
  if ((unsigned)mode > GS_NPY_MAP_SHARED) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected mode GS_NPY_READ, GS_NPY_MAP_PRIVATE or "
              "GS_NPY_MAP_SHARED, got %d", (int)mode);
    return GS_NO_TENSOR;
  }
  int64_t size;
  FILE *f = gs__io_open_sized(path, &size, mode == GS_NPY_MAP_SHARED, fn);
  if (!f)
    return GS_NO_TENSOR;
  gs_tensor result = GS_NO_TENSOR;
  npy_header h;
  if (npy_read_header(f, size, &h, fn))
    result = mode == GS_NPY_READ ? npy_read_data(f, &h, fn)
                                 : npy_map(f, size, &h, mode == GS_NPY_MAP_SHARED, path, fn);
  fclose(f);
  return result;
}
