/* safetensors.c: the safetensors format (Hugging Face's; what safetensors.torch's save_file
 * and load_file read and write): an 8-byte little-endian header length, a JSON header naming
 * each tensor's dtype, shape and byte range, then the tensors' bytes.
 *
 * Saving builds the whole header in memory and writes through io-impl.h's all-or-nothing
 * writer, so a failed save leaves no file behind. Loading reads the header length, bounds it,
 * parses the header with json.h's strict reader, validates every entry against the file size
 * before allocating anything, and only then creates tensors: a refused file creates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "gradscope/checkpoint.h"
#include "io-impl.h"
#include "json.h"

/* The dtype names of the safetensors specification. */
static const char *st_dtype_name(gs_dtype d) {
  switch (d) {
  case GS_F32: return "F32";
  case GS_F64: return "F64";
  case GS_I64: return "I64";
  case GS_BOOL: return "BOOL";
  case GS_I32: return "I32";
  case GS_U8: return "U8";
  case GS_I8: return "I8";
  case GS_I16: return "I16";
  }
  return "?";
}

/* ---- saving --------------------------------------------------------------------------- */

int gs_safetensors_save(const char *path, const char *const *names, const gs_tensor *tensors,
                        int count, const char *const *metadata_kv) {
  static const char fn[] = "safetensors_save";
  if (!path || count < 0 || (count > 0 && (!names || !tensors))) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a path, count >= 0 and names and tensors, got "
              "path %s, count %d", path ? "set" : "NULL", count);
    return -1;
  }
  gs__tensor **ts = malloc(sizeof *ts * (size_t)(count ? count : 1));
  if (!ts) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return -1;
  }
  for (int i = 0; i < count; i++) {
    if (!(ts[i] = gs__lookup(tensors[i], fn))) {
      free(ts);
      return -1;
    }
    if (!names[i] || !names[i][0] || strcmp(names[i], "__metadata__") == 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected a non-empty name other than \"__metadata__\" "
                "for tensor %d, got %s%s%s", i, names[i] ? "\"" : "",
                names[i] ? names[i] : "NULL", names[i] ? "\"" : "");
      free(ts);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0) {
        gs__error(GS_ERR_ARGUMENT, fn, "expected unique names, got \"%s\" twice (tensors %d "
                  "and %d)", names[i], j, i);
        free(ts);
        return -1;
      }
  }
  gs__sbuf b = {0};
  gs__sbuf_put(&b, "        ", 8); /* the length, filled in below */
  gs__sbuf_put(&b, "{", 1);
  bool first = true;
  if (metadata_kv) {
    gs__sbuf_str(&b, "\"__metadata__\":{");
    for (int i = 0; metadata_kv[i]; i += 2) {
      if (!metadata_kv[i + 1]) {
        gs__error(GS_ERR_ARGUMENT, fn, "expected a value for metadata key \"%s\", got NULL "
                  "(the list ends after a key)", metadata_kv[i]);
        free(b.data);
        free(ts);
        return -1;
      }
      if (i)
        gs__sbuf_put(&b, ",", 1);
      gs__json_put_string(&b, metadata_kv[i]);
      gs__sbuf_put(&b, ":", 1);
      gs__json_put_string(&b, metadata_kv[i + 1]);
    }
    gs__sbuf_put(&b, "}", 1);
    first = false;
  }
  int64_t offset = 0;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = ts[i];
    if (!first)
      gs__sbuf_put(&b, ",", 1);
    first = false;
    gs__json_put_string(&b, names[i]);
    gs__sbuf_str(&b, ":{\"dtype\":\"");
    gs__sbuf_str(&b, st_dtype_name(t->dtype));
    gs__sbuf_str(&b, "\",\"shape\":[");
    for (int d = 0; d < t->ndim; d++)
      gs__sbuf_int(&b, d ? "," : "", (long long)t->shape[d], false);
    int64_t nbytes = t->numel * (int64_t)gs__elsize(t->dtype);
    gs__sbuf_int(&b, "],\"data_offsets\":[", (long long)offset, false);
    offset += nbytes;
    gs__sbuf_int(&b, ",", (long long)offset, false);
    gs__sbuf_str(&b, "]}");
  }
  gs__sbuf_put(&b, "}", 1);
  while (!b.failed && (b.len - 8) % 8 != 0)
    gs__sbuf_put(&b, " ", 1);
  if (b.failed) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for the header");
    free(b.data);
    free(ts);
    return -1;
  }
  uint64_t n = b.len - 8;
  for (int i = 0; i < 8; i++)
    b.data[i] = (char)(n >> (8 * i));
  int rc = gs__io_write_file(path, b.data, b.len, ts, tensors, count, fn);
  free(b.data);
  free(ts);
  return rc;
}

/* ---- reading the header --------------------------------------------------------------- */

/* One tensor of the header: where its bytes are in the data that follows the header. */
typedef struct st_entry {
  char *name;
  gs_dtype dtype;
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  int64_t begin, end;
} st_entry;

/* The parsed header, in the file's order (the order load returns the tensors in). */
typedef struct st_header {
  st_entry *entries;
  int count, cap;
  char **metadata; /* key, value, key, value... in the file's order */
  int n_metadata, metadata_cap; /* pairs */
} st_header;

static void st_header_free(st_header *h) {
  for (int i = 0; i < h->count; i++)
    free(h->entries[i].name);
  free(h->entries);
  for (int i = 0; i < 2 * h->n_metadata; i++)
    free(h->metadata[i]);
  free(h->metadata);
}

/* Keeps one metadata pair (taking k and v); false after reporting. */
static bool keep_metadata(gs__json *p, st_header *h, char *k, char *v) {
  if (h->n_metadata == h->metadata_cap) {
    int cap = h->metadata_cap ? h->metadata_cap * 2 : 8;
    char **grown = realloc(h->metadata, sizeof *grown * 2 * (size_t)cap);
    if (!grown) {
      free(k), free(v);
      gs__error(GS_ERR_OUT_OF_MEMORY, p->fn, "out of memory");
      return false;
    }
    h->metadata = grown;
    h->metadata_cap = cap;
  }
  h->metadata[2 * h->n_metadata] = k;
  h->metadata[2 * h->n_metadata + 1] = v;
  h->n_metadata++;
  return true;
}

/* {"k": "v", ...}: string values only, each key once (a JSON object with a repeated key means
 * different things to different readers, so it is refused). */
static bool parse_metadata(gs__json *p, st_header *h) {
  bool more;
  if (!gs__json_open(p, '{', '}', &more, "'{' starting __metadata__"))
    return false;
  while (more) {
    char *k = NULL, *v = NULL;
    gs__json_skip_space(p);
    size_t key_pos = p->pos;
    if (!gs__json_string(p, &k, "a string key in __metadata__"))
      return false;
    for (int i = 0; i < h->n_metadata; i++)
      if (strcmp(h->metadata[2 * i], k) == 0) {
        free(k);
        p->pos = key_pos;
        return gs__json_fail(p, "unique keys in __metadata__");
      }
    if (!gs__json_char(p, ':', "':' after a metadata key")) {
      free(k);
      return false;
    }
    if (!gs__json_string(p, &v, "a string value in __metadata__ (values must be strings)")) {
      free(k);
      return false;
    }
    if (!keep_metadata(p, h, k, v))
      return false;
    if (!gs__json_next(p, '}', &more, "',' or '}' in __metadata__"))
      return false;
  }
  return true;
}

/* {"dtype": .., "shape": [..], "data_offsets": [b, e]} into e (name set by the caller). */
static bool parse_entry(gs__json *p, st_entry *e) {
  if (!gs__json_char(p, '{', "'{' starting a tensor entry"))
    return false;
  bool have_dtype = false, have_shape = false, have_offsets = false;
  for (bool more = true; more;) {
    size_t key_pos;
    gs__json_skip_space(p);
    key_pos = p->pos;
    char *key = NULL;
    if (!gs__json_string(p, &key, "a key (\"dtype\", \"shape\" or \"data_offsets\")"))
      return false;
    bool *have = strcmp(key, "dtype") == 0          ? &have_dtype
                 : strcmp(key, "shape") == 0        ? &have_shape
                 : strcmp(key, "data_offsets") == 0 ? &have_offsets
                                                    : NULL;
    if (!have || *have) {
      p->pos = key_pos;
      free(key);
      return gs__json_fail(p, have ? "each of \"dtype\", \"shape\", \"data_offsets\" once"
                             : "\"dtype\", \"shape\" or \"data_offsets\"");
    }
    *have = true;
    if (!gs__json_char(p, ':', "':' after a key")) {
      free(key);
      return false;
    }
    bool ok = true;
    if (have == &have_dtype) {
      gs__json_skip_space(p);
      size_t vpos = p->pos;
      char *dt = NULL;
      ok = gs__json_string(p, &dt, "a dtype string");
      if (ok) {
        if (strcmp(dt, "F32") == 0) e->dtype = GS_F32;
        else if (strcmp(dt, "F64") == 0) e->dtype = GS_F64;
        else if (strcmp(dt, "I64") == 0) e->dtype = GS_I64;
        else if (strcmp(dt, "BOOL") == 0) e->dtype = GS_BOOL;
        else if (strcmp(dt, "I32") == 0)
          e->dtype = GS_I32;
        else if (strcmp(dt, "U8") == 0)
          e->dtype = GS_U8;
        else if (strcmp(dt, "I8") == 0)
          e->dtype = GS_I8;
        else if (strcmp(dt, "I16") == 0)
          e->dtype = GS_I16;
        else {
          gs__error(GS_ERR_DTYPE, p->fn,
                    "header JSON at byte %zu: expected dtype F32, F64, "
                    "I64, BOOL, I32, U8, I8 or I16 for tensor \"%s\", found \"%.40s\"",
                    p->base + vpos, e->name, dt);
          ok = false;
        }
        free(dt);
      }
    } else if (have == &have_shape) {
      ok = gs__json_uint_array(p, e->shape, GS_MAX_DIMS, &e->ndim, "shape");
    } else {
      int64_t off[2];
      int n = 0;
      size_t vpos = (gs__json_skip_space(p), p->pos);
      ok = gs__json_uint_array(p, off, 2, &n, "data_offsets");
      if (ok && n != 2) {
        p->pos = vpos;
        ok = gs__json_fail(p, "data_offsets with two integers [begin, end]");
      }
      if (ok) {
        e->begin = off[0];
        e->end = off[1];
      }
    }
    free(key);
    if (!ok || !gs__json_next(p, '}', &more, "',' or '}' in a tensor entry"))
      return false;
  }
  if (!(have_dtype && have_shape && have_offsets)) {
    p->pos--;
    return gs__json_fail(p, !have_dtype ? "\"dtype\" in the tensor entry before '}'"
                      : !have_shape ? "\"shape\" in the tensor entry before '}'"
                                    : "\"data_offsets\" in the tensor entry before '}'");
  }
  return true;
}

/* The header object: tensor entries under unique names and at most one "__metadata__",
 * nothing after it but spaces. */
static bool parse_header(gs__json *p, st_header *h) {
  bool more;
  if (!gs__json_open(p, '{', '}', &more, "'{' starting the header"))
    return false;
  bool have_metadata = false;
  while (more) {
    gs__json_skip_space(p);
    size_t key_pos = p->pos;
    char *name = NULL;
    if (!gs__json_string(p, &name, "a tensor name string"))
      return false;
    if (!gs__json_char(p, ':', "':' after a tensor name")) {
      free(name);
      return false;
    }
    if (strcmp(name, "__metadata__") == 0) {
      free(name);
      if (have_metadata) {
        p->pos = key_pos;
        return gs__json_fail(p, "one \"__metadata__\"");
      }
      have_metadata = true;
      if (!parse_metadata(p, h))
        return false;
    } else {
      for (int i = 0; i < h->count; i++)
        if (strcmp(h->entries[i].name, name) == 0) {
          free(name);
          p->pos = key_pos;
          return gs__json_fail(p, "unique tensor names");
        }
      if (h->count == h->cap) {
        int cap = h->cap ? h->cap * 2 : 16;
        st_entry *n = realloc(h->entries, sizeof *n * (size_t)cap);
        if (!n) {
          free(name);
          gs__error(GS_ERR_OUT_OF_MEMORY, p->fn, "out of memory");
          return false;
        }
        h->entries = n;
        h->cap = cap;
      }
      st_entry *e = &h->entries[h->count++];
      memset(e, 0, sizeof *e);
      e->name = name;
      if (!parse_entry(p, e))
        return false;
    }
    if (!gs__json_next(p, '}', &more, "',' or '}' after a tensor entry"))
      return false;
  }
  gs__json_skip_space(p);
  if (p->pos != p->len)
    return gs__json_fail(p, "only spaces after the header object");
  return true;
}

/* ---- loading -------------------------------------------------------------------------- */

/* Orders entries by where their data starts, for the check that they tile the data. */
static int cmp_by_begin(const void *a, const void *b) {
  const st_entry *x = *(st_entry *const *)a, *y = *(st_entry *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* Reads and checks the whole header of path (length, JSON, each entry's geometry, and the
 * layout of the data) into h. Returns the open file and the header length in *header_len, or
 * NULL after reporting (h is then freed). */
static FILE *st_read_checked(const char *path, st_header *h, uint64_t *header_len,
                             const char *fn) {
  int64_t size;
  FILE *f = gs__io_open_sized(path, &size, false, fn);
  if (!f)
    return NULL;
  unsigned char lenbuf[8];
  if (size < 8) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an 8-byte header length, found a file of %lld "
              "bytes", (long long)size);
    fclose(f);
    return NULL;
  }
  if (!gs__io_read_exact(f, lenbuf, 8, "the header length", fn)) {
    fclose(f);
    return NULL;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--)
    n = (n << 8) | lenbuf[i];
  if (n > GS__IO_MAX_HEADER_BYTES) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a header length of at most 100000000 bytes, "
              "found %llu", (unsigned long long)n);
    fclose(f);
    return NULL;
  }
  if (n > (uint64_t)(size - 8)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a header of %llu bytes, found only %lld bytes "
              "after the header length", (unsigned long long)n, (long long)(size - 8));
    fclose(f);
    return NULL;
  }
  if (n < 2) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a header length of at least 2 (\"{}\"), found "
              "%llu", (unsigned long long)n);
    fclose(f);
    return NULL;
  }
  char *json = malloc(n);
  if (!json) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for a %llu-byte header",
              (unsigned long long)n);
    fclose(f);
    return NULL;
  }
  st_entry **order = NULL;
  int64_t data_size = size - 8 - (int64_t)n;
  bool ok = false;
  if (!gs__io_read_exact(f, json, n, "the header", fn))
    goto out;
  gs__json p = {json, n, 0, 8, fn};
  if (!parse_header(&p, h))
    goto out;
  /* Geometry: each entry's bytes match its dtype and shape. */
  for (int i = 0; i < h->count; i++) {
    st_entry *e = &h->entries[i];
    int64_t numel = 1;
    bool overflow = false;
    for (int d = 0; d < e->ndim; d++) {
      if (e->shape[d] != 0 && numel > INT64_MAX / e->shape[d])
        overflow = true;
      else
        numel *= e->shape[d];
    }
    int64_t es = (int64_t)gs__elsize(e->dtype);
    if (overflow || numel > INT64_MAX / es) {
      char buf[GS__SHAPE_STR];
      gs__error(GS_ERR_OVERFLOW, fn, "tensor \"%s\": expected a shape whose byte size fits "
                "in 64 bits, found %s", e->name, gs__shape_str(buf, e->shape, e->ndim));
      goto out;
    }
    if (e->end < e->begin) {
      gs__error(GS_ERR_ARGUMENT, fn, "tensor \"%s\": expected data_offsets [begin, end] with "
                "begin <= end, found [%lld, %lld]", e->name, (long long)e->begin,
                (long long)e->end);
      goto out;
    }
    if (e->end - e->begin != numel * es) {
      char buf[GS__SHAPE_STR];
      gs__error(GS_ERR_SHAPE, fn, "tensor \"%s\": expected %lld bytes for %s %s, found "
                "data_offsets [%lld, %lld] (%lld bytes)", e->name, (long long)(numel * es),
                st_dtype_name(e->dtype), gs__shape_str(buf, e->shape, e->ndim),
                (long long)e->begin, (long long)e->end, (long long)(e->end - e->begin));
      goto out;
    }
    if (e->end > data_size) {
      gs__error(GS_ERR_ARGUMENT, fn, "tensor \"%s\": expected data_offsets within the %lld "
                "data bytes, found [%lld, %lld]", e->name, (long long)data_size,
                (long long)e->begin, (long long)e->end);
      goto out;
    }
  }
  /* Layout: sorted by offset, the entries cover the data exactly, with no holes or
   * overlaps (as the specification requires). */
  order = malloc(sizeof *order * (h->count > 0 ? (size_t)h->count : 1));
  if (!order) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    goto out;
  }
  for (int i = 0; i < h->count; i++)
    order[i] = &h->entries[i];
  qsort(order, (size_t)h->count, sizeof *order, cmp_by_begin);
  int64_t expect = 0;
  for (int i = 0; i < h->count; i++) {
    if (order[i]->begin != expect) {
      gs__error(GS_ERR_ARGUMENT, fn, "tensor \"%s\": expected data to start at offset %lld "
                "(%s), found data_offsets [%lld, %lld]", order[i]->name, (long long)expect,
                order[i]->begin < expect ? "it overlaps the previous tensor"
                                         : "there is a hole before it",
                (long long)order[i]->begin, (long long)order[i]->end);
      goto out;
    }
    expect = order[i]->end;
  }
  if (expect != data_size) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected %lld data bytes after the header (the tensors' "
              "data_offsets), found %lld", (long long)expect, (long long)data_size);
    goto out;
  }
  ok = true;
out:
  free(order);
  free(json);
  if (!ok) {
    st_header_free(h);
    memset(h, 0, sizeof *h);
    fclose(f);
    return NULL;
  }
  *header_len = n;
  return f;
}

/* What both loaders do first: check max and that the arrays to fill were given (arrays names
 * them in the error), then read and check the header. */
static FILE *st_open_for_load(const char *path, int max, bool have_arrays, const char *arrays,
                              st_header *h, uint64_t *n, const char *fn) {
  if (max < 0 || (max > 0 && !have_arrays)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected max >= 0 and %s when max > 0, got max %d", arrays,
              max);
    return NULL;
  }
  return st_read_checked(path, h, n, fn);
}

int gs_safetensors_load(const char *path, char **names, gs_tensor *tensors, int max) {
  static const char fn[] = "safetensors_load";
  st_header h = {0};
  uint64_t n;
  FILE *f = st_open_for_load(path, max, names && tensors, "names and tensors", &h, &n, fn);
  if (!f)
    return -1;
  int result = -1;
  /* Everything checks out: create the first max tensors. */
  int made = 0;
  int want = max < h.count ? max : h.count;
  for (; made < want; made++) {
    st_entry *e = &h.entries[made];
    size_t nbytes = (size_t)(e->end - e->begin);
    void *buf = malloc(nbytes ? nbytes : 1);
    if (!buf) {
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for tensor \"%s\" (%zu bytes)",
                e->name, nbytes);
      break;
    }
    if (fseek(f, (long)(8 + (int64_t)n + e->begin), SEEK_SET) != 0 ||
        !gs__io_read_exact(f, buf, nbytes, "tensor data", fn)) {
      free(buf);
      break;
    }
    if (e->dtype == GS_BOOL)
      gs__io_normalize_bools(buf, nbytes);
    gs_tensor t = gs_from_data(e->dtype, e->shape, e->ndim, buf);
    free(buf);
    if (t.id == 0)
      break;
    tensors[made] = t;
    names[made] = e->name;
    e->name = NULL; /* now the caller's */
  }
  if (made < want) {
    for (int i = 0; i < made; i++) {
      gs_dispose(tensors[i]);
      free(names[i]);
      tensors[i] = GS_NO_TENSOR;
      names[i] = NULL;
    }
    goto out;
  }
  result = h.count;
out:
  st_header_free(&h);
  fclose(f);
  return result;
}

int gs_safetensors_load_metadata(const char *path, char **keys, char **values, int max) {
  static const char fn[] = "safetensors_load_metadata";
  st_header h = {0};
  uint64_t n;
  FILE *f = st_open_for_load(path, max, keys && values, "keys and values", &h, &n, fn);
  if (!f)
    return -1;
  fclose(f);
  int result = h.n_metadata;
  for (int i = 0; i < h.n_metadata && i < max; i++) {
    keys[i] = h.metadata[2 * i];
    values[i] = h.metadata[2 * i + 1];
    h.metadata[2 * i] = h.metadata[2 * i + 1] = NULL; /* now the caller's */
  }
  st_header_free(&h);
  return result;
}
