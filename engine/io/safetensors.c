/* checkpoint.c: safetensors and NumPy .npy files.
 *
 * Saving builds the whole header in memory, writes to "<path>.tmp" and renames it over path,
 * so a failed save leaves no file behind. Loading reads the header length, bounds it, parses
 * the JSON header with a small strict parser (objects, strings with escapes, non-negative
 * integer arrays: exactly what safetensors headers hold), validates every entry against the
 * file size before allocating anything, and only then creates tensors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "gradscope/gradscope.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint.c assumes a little-endian host"
#endif

#define MAX_HEADER_BYTES ((uint64_t)100 * 1000 * 1000)

/* ---- a growable byte string ----------------------------------------------------------- */

typedef struct sbuf {
  char *data;
  size_t len, cap;
  bool failed;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
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
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
/* prefix, then v in decimal (or as 4 hex digits when hex4). */
static void sb_int(sbuf *b, const char *prefix, long long v, bool hex4) {
  char tmp[64];
  int n = hex4 ? snprintf(tmp, sizeof tmp, "%s%04llx", prefix, v)
               : snprintf(tmp, sizeof tmp, "%s%lld", prefix, v);
  sb_put(b, tmp, (size_t)n);
}
/* A JSON string literal: quotes, backslashes and control characters escaped; other bytes
 * (UTF-8) as they are. */
static void sb_json_string(sbuf *b, const char *s) {
  sb_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"')
      sb_put(b, "\\\"", 2);
    else if (*p == '\\')
      sb_put(b, "\\\\", 2);
    else if (*p == '\n')
      sb_put(b, "\\n", 2);
    else if (*p == '\t')
      sb_put(b, "\\t", 2);
    else if (*p == '\r')
      sb_put(b, "\\r", 2);
    else if (*p < 0x20)
      sb_int(b, "\\u", *p, true);
    else
      sb_put(b, (const char *)p, 1);
  }
  sb_put(b, "\"", 1);
}

static const char *st_dtype_name(gs_dtype d) {
  switch (d) {
  case GS_F32: return "F32";
  case GS_F64: return "F64";
  case GS_I64: return "I64";
  case GS_BOOL: return "BOOL";
  }
  return "?";
}

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

/* Writes head then each tensor's data to path via a temporary file. */
static int write_file(const char *path, const char *head, size_t head_len,
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

/* ---- safetensors save ----------------------------------------------------------------- */

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
  sbuf b = {0};
  sb_put(&b, "        ", 8); /* the length, filled in below */
  sb_put(&b, "{", 1);
  bool first = true;
  if (metadata_kv) {
    sb_str(&b, "\"__metadata__\":{");
    for (int i = 0; metadata_kv[i]; i += 2) {
      if (!metadata_kv[i + 1]) {
        gs__error(GS_ERR_ARGUMENT, fn, "expected a value for metadata key \"%s\", got NULL "
                  "(the list ends after a key)", metadata_kv[i]);
        free(b.data);
        free(ts);
        return -1;
      }
      if (i)
        sb_put(&b, ",", 1);
      sb_json_string(&b, metadata_kv[i]);
      sb_put(&b, ":", 1);
      sb_json_string(&b, metadata_kv[i + 1]);
    }
    sb_put(&b, "}", 1);
    first = false;
  }
  int64_t offset = 0;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = ts[i];
    if (!first)
      sb_put(&b, ",", 1);
    first = false;
    sb_json_string(&b, names[i]);
    sb_str(&b, ":{\"dtype\":\"");
    sb_str(&b, st_dtype_name(t->dtype));
    sb_str(&b, "\",\"shape\":[");
    for (int d = 0; d < t->ndim; d++)
      sb_int(&b, d ? "," : "", (long long)t->shape[d], false);
    int64_t nbytes = t->numel * (int64_t)gs__elsize(t->dtype);
    sb_int(&b, "],\"data_offsets\":[", (long long)offset, false);
    offset += nbytes;
    sb_int(&b, ",", (long long)offset, false);
    sb_str(&b, "]}");
  }
  sb_put(&b, "}", 1);
  while (!b.failed && (b.len - 8) % 8 != 0)
    sb_put(&b, " ", 1);
  if (b.failed) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for the header");
    free(b.data);
    free(ts);
    return -1;
  }
  uint64_t n = b.len - 8;
  for (int i = 0; i < 8; i++)
    b.data[i] = (char)(n >> (8 * i));
  int rc = write_file(path, b.data, b.len, ts, tensors, count, fn);
  free(b.data);
  free(ts);
  return rc;
}

/* ---- the strict JSON parser ----------------------------------------------------------- */

typedef struct jp {
  const char *s;
  size_t len, pos;
  size_t base; /* file offset of s[0], for messages */
  const char *fn;
} jp;

/* "'x'", "end of header" or "byte 0x93" for the byte at pos. */
static const char *jp_found(const jp *p, char *buf, size_t size) {
  if (p->pos >= p->len)
    snprintf(buf, size, "the end of the header");
  else if ((unsigned char)p->s[p->pos] >= 0x20 && (unsigned char)p->s[p->pos] < 0x7f)
    snprintf(buf, size, "'%c'", p->s[p->pos]);
  else
    snprintf(buf, size, "byte 0x%02x", (unsigned char)p->s[p->pos]);
  return buf;
}
static bool jp_fail(const jp *p, const char *expected) {
  char found[32];
  gs__error(GS_ERR_ARGUMENT, p->fn, "header JSON at byte %zu: expected %s, found %s",
            p->base + p->pos, expected, jp_found(p, found, sizeof found));
  return false;
}
static void jp_ws(jp *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                             p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}
static bool jp_char(jp *p, char c, const char *expected) {
  jp_ws(p);
  if (p->pos < p->len && p->s[p->pos] == c) {
    p->pos++;
    return true;
  }
  return jp_fail(p, expected);
}
/* After a member: true and *more for ',', true and !*more for close. */
static bool jp_next(jp *p, char close, bool *more, const char *expected) {
  jp_ws(p);
  if (p->pos < p->len && p->s[p->pos] == ',') {
    p->pos++;
    *more = true;
    return true;
  }
  if (p->pos < p->len && p->s[p->pos] == close) {
    p->pos++;
    *more = false;
    return true;
  }
  return jp_fail(p, expected);
}
static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
static bool jp_hex4(jp *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
    if (h < 0)
      return jp_fail(p, "4 hex digits after \\u");
    v = v * 16 + (unsigned)h;
    p->pos++;
  }
  *out = v;
  return true;
}
/* A string into a malloc'd, NUL-terminated UTF-8 buffer (*out). */
static bool jp_string(jp *p, char **out, const char *expected) {
  jp_ws(p);
  if (p->pos >= p->len || p->s[p->pos] != '"')
    return jp_fail(p, expected);
  p->pos++;
  sbuf b = {0};
  sb_put(&b, "", 0);
  for (;;) {
    if (p->pos >= p->len) {
      free(b.data);
      return jp_fail(p, "a closing '\"'");
    }
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '"') {
      p->pos++;
      break;
    }
    if (c < 0x20) {
      free(b.data);
      return jp_fail(p, "a string character (control characters must be escaped)");
    }
    if (c != '\\') {
      sb_put(&b, (const char *)&p->s[p->pos], 1);
      p->pos++;
      continue;
    }
    p->pos++;
    char e = p->pos < p->len ? p->s[p->pos] : 0;
    const char *simple = NULL;
    switch (e) {
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case '/': simple = "/"; break;
    case 'b': simple = "\b"; break;
    case 'f': simple = "\f"; break;
    case 'n': simple = "\n"; break;
    case 'r': simple = "\r"; break;
    case 't': simple = "\t"; break;
    case 'u': break;
    default:
      free(b.data);
      return jp_fail(p, "an escape (one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
    }
    p->pos++;
    if (simple) {
      sb_put(&b, simple, 1);
      continue;
    }
    unsigned cp;
    if (!jp_hex4(p, &cp)) {
      free(b.data);
      return false;
    }
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      p->pos -= 4;
      free(b.data);
      return jp_fail(p, "a code point that is not a lone low surrogate");
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      unsigned lo;
      if (p->pos + 1 >= p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
        free(b.data);
        return jp_fail(p, "\\u and a low surrogate after a high surrogate");
      }
      p->pos += 2;
      if (!jp_hex4(p, &lo)) {
        free(b.data);
        return false;
      }
      if (lo < 0xdc00 || lo > 0xdfff) {
        p->pos -= 4;
        free(b.data);
        return jp_fail(p, "a low surrogate (DC00-DFFF)");
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0) {
      p->pos -= 6;
      free(b.data);
      return jp_fail(p, "a non-NUL character (\\u0000 is not allowed in names)");
    }
    char u[4];
    size_t n;
    if (cp < 0x80) {
      u[0] = (char)cp;
      n = 1;
    } else if (cp < 0x800) {
      u[0] = (char)(0xc0 | (cp >> 6));
      u[1] = (char)(0x80 | (cp & 0x3f));
      n = 2;
    } else if (cp < 0x10000) {
      u[0] = (char)(0xe0 | (cp >> 12));
      u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
      u[2] = (char)(0x80 | (cp & 0x3f));
      n = 3;
    } else {
      u[0] = (char)(0xf0 | (cp >> 18));
      u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
      u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
      u[3] = (char)(0x80 | (cp & 0x3f));
      n = 4;
    }
    sb_put(&b, u, n);
  }
  if (b.failed) {
    free(b.data);
    gs__error(GS_ERR_OUT_OF_MEMORY, p->fn, "out of memory");
    return false;
  }
  *out = b.data;
  return true;
}
/* A non-negative integer without leading zeros, below 2^63. */
static bool jp_uint(jp *p, int64_t *out) {
  jp_ws(p);
  size_t start = p->pos;
  if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
    return jp_fail(p, "a non-negative integer");
  if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
      p->s[p->pos + 1] <= '9') {
    p->pos++;
    return jp_fail(p, "no leading zeros in an integer");
  }
  int64_t v = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    int d = p->s[p->pos] - '0';
    if (v > (INT64_MAX - d) / 10) {
      p->pos = start;
      return jp_fail(p, "an integer below 2^63");
    }
    v = v * 10 + d;
    p->pos++;
  }
  if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
    return jp_fail(p, "an integer (no fraction or exponent)");
  *out = v;
  return true;
}
/* [int, ...] with at most max elements. */
static bool jp_int_array(jp *p, int64_t *out, int max, int *n, const char *what) {
  char expected[64];
  snprintf(expected, sizeof expected, "'[' starting %s", what);
  if (!jp_char(p, '[', expected))
    return false;
  *n = 0;
  jp_ws(p);
  if (p->pos < p->len && p->s[p->pos] == ']') {
    p->pos++;
    return true;
  }
  for (bool more = true; more;) {
    if (*n == max) {
      snprintf(expected, sizeof expected, "at most %d integers in %s", max, what);
      return jp_fail(p, expected);
    }
    if (!jp_uint(p, &out[(*n)++]))
      return false;
    if (!jp_next(p, ']', &more, "',' or ']' in an integer array"))
      return false;
  }
  return true;
}

typedef struct st_entry {
  char *name;
  gs_dtype dtype;
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  int64_t begin, end;
} st_entry;

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
static bool keep_metadata(jp *p, st_header *h, char *k, char *v) {
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
static bool jp_metadata(jp *p, st_header *h) {
  if (!jp_char(p, '{', "'{' starting __metadata__"))
    return false;
  jp_ws(p);
  if (p->pos < p->len && p->s[p->pos] == '}') {
    p->pos++;
    return true;
  }
  for (bool more = true; more;) {
    char *k = NULL, *v = NULL;
    jp_ws(p);
    size_t key_pos = p->pos;
    if (!jp_string(p, &k, "a string key in __metadata__"))
      return false;
    for (int i = 0; i < h->n_metadata; i++)
      if (strcmp(h->metadata[2 * i], k) == 0) {
        free(k);
        p->pos = key_pos;
        return jp_fail(p, "unique keys in __metadata__");
      }
    if (!jp_char(p, ':', "':' after a metadata key")) {
      free(k);
      return false;
    }
    if (!jp_string(p, &v, "a string value in __metadata__ (values must be strings)")) {
      free(k);
      return false;
    }
    if (!keep_metadata(p, h, k, v))
      return false;
    if (!jp_next(p, '}', &more, "',' or '}' in __metadata__"))
      return false;
  }
  return true;
}

/* {"dtype": .., "shape": [..], "data_offsets": [b, e]} into e (name set by the caller). */
static bool jp_entry(jp *p, st_entry *e) {
  if (!jp_char(p, '{', "'{' starting a tensor entry"))
    return false;
  bool have_dtype = false, have_shape = false, have_offsets = false;
  for (bool more = true; more;) {
    size_t key_pos;
    jp_ws(p);
    key_pos = p->pos;
    char *key = NULL;
    if (!jp_string(p, &key, "a key (\"dtype\", \"shape\" or \"data_offsets\")"))
      return false;
    bool *have = strcmp(key, "dtype") == 0          ? &have_dtype
                 : strcmp(key, "shape") == 0        ? &have_shape
                 : strcmp(key, "data_offsets") == 0 ? &have_offsets
                                                    : NULL;
    if (!have || *have) {
      p->pos = key_pos;
      free(key);
      return jp_fail(p, have ? "each of \"dtype\", \"shape\", \"data_offsets\" once"
                             : "\"dtype\", \"shape\" or \"data_offsets\"");
    }
    *have = true;
    if (!jp_char(p, ':', "':' after a key")) {
      free(key);
      return false;
    }
    bool ok = true;
    if (have == &have_dtype) {
      jp_ws(p);
      size_t vpos = p->pos;
      char *dt = NULL;
      ok = jp_string(p, &dt, "a dtype string");
      if (ok) {
        if (strcmp(dt, "F32") == 0) e->dtype = GS_F32;
        else if (strcmp(dt, "F64") == 0) e->dtype = GS_F64;
        else if (strcmp(dt, "I64") == 0) e->dtype = GS_I64;
        else if (strcmp(dt, "BOOL") == 0) e->dtype = GS_BOOL;
        else {
          gs__error(GS_ERR_DTYPE, p->fn, "header JSON at byte %zu: expected dtype F32, F64, "
                    "I64 or BOOL for tensor \"%s\", found \"%.40s\"", p->base + vpos,
                    e->name, dt);
          ok = false;
        }
        free(dt);
      }
    } else if (have == &have_shape) {
      ok = jp_int_array(p, e->shape, GS_MAX_DIMS, &e->ndim, "shape");
    } else {
      int64_t off[2];
      int n = 0;
      size_t vpos = (jp_ws(p), p->pos);
      ok = jp_int_array(p, off, 2, &n, "data_offsets");
      if (ok && n != 2) {
        p->pos = vpos;
        ok = jp_fail(p, "data_offsets with two integers [begin, end]");
      }
      if (ok) {
        e->begin = off[0];
        e->end = off[1];
      }
    }
    free(key);
    if (!ok || !jp_next(p, '}', &more, "',' or '}' in a tensor entry"))
      return false;
  }
  if (!(have_dtype && have_shape && have_offsets)) {
    p->pos--;
    return jp_fail(p, !have_dtype ? "\"dtype\" in the tensor entry before '}'"
                      : !have_shape ? "\"shape\" in the tensor entry before '}'"
                                    : "\"data_offsets\" in the tensor entry before '}'");
  }
  return true;
}

static bool jp_header(jp *p, st_header *h) {
  if (!jp_char(p, '{', "'{' starting the header"))
    return false;
  bool have_metadata = false;
  jp_ws(p);
  bool more = true;
  if (p->pos < p->len && p->s[p->pos] == '}') {
    p->pos++;
    more = false;
  }
  while (more) {
    jp_ws(p);
    size_t key_pos = p->pos;
    char *name = NULL;
    if (!jp_string(p, &name, "a tensor name string"))
      return false;
    if (!jp_char(p, ':', "':' after a tensor name")) {
      free(name);
      return false;
    }
    if (strcmp(name, "__metadata__") == 0) {
      free(name);
      if (have_metadata) {
        p->pos = key_pos;
        return jp_fail(p, "one \"__metadata__\"");
      }
      have_metadata = true;
      if (!jp_metadata(p, h))
        return false;
    } else {
      for (int i = 0; i < h->count; i++)
        if (strcmp(h->entries[i].name, name) == 0) {
          free(name);
          p->pos = key_pos;
          return jp_fail(p, "unique tensor names");
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
      if (!jp_entry(p, e))
        return false;
    }
    if (!jp_next(p, '}', &more, "',' or '}' after a tensor entry"))
      return false;
  }
  jp_ws(p);
  if (p->pos != p->len)
    return jp_fail(p, "only spaces after the header object");
  return true;
}

/* ---- safetensors load ----------------------------------------------------------------- */

static int cmp_by_begin(const void *a, const void *b) {
  const st_entry *x = *(st_entry *const *)a, *y = *(st_entry *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* Opens path and returns its size in *size; NULL after reporting. */
static FILE *open_sized(const char *path, int64_t *size, const char *fn) {
  if (!path) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a path, got NULL");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot open \"%s\": %s", path, strerror(errno));
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

static bool read_exact(FILE *f, void *buf, size_t n, const char *what, const char *fn) {
  if (n && fread(buf, 1, n, f) != n) {
    gs__error(GS_ERR_ARGUMENT, fn, "cannot read %s (%zu bytes)", what, n);
    return false;
  }
  return true;
}

/* Reads and checks the whole header of path (length, JSON, each entry's geometry, and the
 * layout of the data) into h. Returns the open file and the header length in *header_len, or
 * NULL after reporting (h is then freed). */
static FILE *st_read_checked(const char *path, st_header *h, uint64_t *header_len,
                             const char *fn) {
  int64_t size;
  FILE *f = open_sized(path, &size, fn);
  if (!f)
    return NULL;
  unsigned char lenbuf[8];
  if (size < 8) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an 8-byte header length, found a file of %lld "
              "bytes", (long long)size);
    fclose(f);
    return NULL;
  }
  if (!read_exact(f, lenbuf, 8, "the header length", fn)) {
    fclose(f);
    return NULL;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--)
    n = (n << 8) | lenbuf[i];
  if (n > MAX_HEADER_BYTES) {
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
  if (!read_exact(f, json, n, "the header", fn))
    goto out;
  jp p = {json, n, 0, 8, fn};
  if (!jp_header(&p, h))
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

int gs_safetensors_load(const char *path, char **names, gs_tensor *tensors, int max) {
  static const char fn[] = "safetensors_load";
  if (max < 0 || (max > 0 && (!names || !tensors))) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected max >= 0 and names and tensors when max > 0, "
              "got max %d", max);
    return -1;
  }
  st_header h = {0};
  uint64_t n;
  FILE *f = st_read_checked(path, &h, &n, fn);
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
        !read_exact(f, buf, nbytes, "tensor data", fn)) {
      free(buf);
      break;
    }
    if (e->dtype == GS_BOOL) {
      unsigned char *b = buf;
      for (size_t k = 0; k < nbytes; k++)
        b[k] = b[k] != 0;
    }
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
  if (max < 0 || (max > 0 && (!keys || !values))) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected max >= 0 and keys and values when max > 0, "
              "got max %d", max);
    return -1;
  }
  st_header h = {0};
  uint64_t n;
  FILE *f = st_read_checked(path, &h, &n, fn);
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



/* ---- NumPy .npy ----------------------------------------------------------------------- */

static const char *npy_descr(gs_dtype d) {
  switch (d) {
  case GS_F32: return "<f4";
  case GS_F64: return "<f8";
  case GS_I64: return "<i8";
  case GS_BOOL: return "|b1";
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
  sbuf b = {0};
  sb_put(&b, "\x93NUMPY\x01\x00\x00\x00", 10);
  sb_str(&b, "{'descr': '");
  sb_str(&b, npy_descr(t->dtype));
  sb_str(&b, "', 'fortran_order': False, 'shape': (");
  for (int d = 0; d < t->ndim; d++)
    sb_int(&b, d ? ", " : "", (long long)t->shape[d], false);
  if (t->ndim == 1)
    sb_put(&b, ",", 1);
  sb_str(&b, "), }");
  while (!b.failed && (b.len + 1) % 64 != 0)
    sb_put(&b, " ", 1);
  sb_put(&b, "\n", 1);
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
  int rc = write_file(path, b.data, b.len, &t, &h, 1, fn);
  free(b.data);
  return rc;
}

/* The dict of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * with keys in any order, each once. */
static bool npy_parse_dict(jp *p, gs_dtype *dtype, int64_t *shape, int *ndim) {
  if (!jp_char(p, '{', "'{' starting the header dict"))
    return false;
  bool have[3] = {false, false, false};
  for (;;) {
    jp_ws(p);
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
      return jp_fail(p, k < 0 ? "'descr', 'fortran_order', 'shape' or '}'"
                              : "each key once");
    have[k] = true;
    p->pos += strlen(keys[k]);
    if (!jp_char(p, ':', "':' after a key"))
      return false;
    jp_ws(p);
    if (k == 0) {
      static const char *const descrs[4] = {"'<f4'", "'<f8'", "'<i8'", "'|b1'"};
      static const gs_dtype dts[4] = {GS_F32, GS_F64, GS_I64, GS_BOOL};
      int m = -1;
      for (int i = 0; i < 4; i++)
        if (p->len - p->pos >= strlen(descrs[i]) &&
            memcmp(p->s + p->pos, descrs[i], strlen(descrs[i])) == 0)
          m = i;
      if (m < 0)
        return jp_fail(p, "descr '<f4', '<f8', '<i8' or '|b1'");
      *dtype = dts[m];
      p->pos += strlen(descrs[m]);
    } else if (k == 1) {
      if (p->len - p->pos < 5 || memcmp(p->s + p->pos, "False", 5) != 0)
        return jp_fail(p, "fortran_order False (Fortran-ordered arrays are not supported)");
      p->pos += 5;
    } else {
      if (!jp_char(p, '(', "'(' starting the shape tuple"))
        return false;
      *ndim = 0;
      for (;;) {
        jp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ')') {
          p->pos++;
          break;
        }
        if (*ndim == GS_MAX_DIMS)
          return jp_fail(p, "at most 8 dimensions");
        if (!jp_uint(p, &shape[(*ndim)++]))
          return false;
        jp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',')
          p->pos++;
        else if (p->pos >= p->len || p->s[p->pos] != ')')
          return jp_fail(p, "',' or ')' in the shape tuple");
      }
    }
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ',')
      p->pos++;
    else if (p->pos >= p->len || p->s[p->pos] != '}')
      return jp_fail(p, "',' or '}' in the header dict");
  }
  if (!(have[0] && have[1] && have[2])) {
    p->pos--;
    return jp_fail(p, !have[0] ? "'descr' before '}'"
                      : !have[1] ? "'fortran_order' before '}'" : "'shape' before '}'");
  }
  jp_ws(p);
  if (p->pos != p->len)
    return jp_fail(p, "only spaces and a newline after the header dict");
  return true;
}

gs_tensor gs_npy_load(const char *path) {
  static const char fn[] = "npy_load";
  int64_t size;
  FILE *f = open_sized(path, &size, fn);
  if (!f)
    return GS_NO_TENSOR;
  gs_tensor result = GS_NO_TENSOR;
  char *head = NULL;
  void *data = NULL;
  unsigned char pre[12];
  if (size < 10) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected at least 10 bytes (magic, version, header "
              "length), found a file of %lld bytes", (long long)size);
    goto out;
  }
  if (!read_exact(f, pre, 10, "the preamble", fn))
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
    if (!read_exact(f, pre + 10, 2, "the header length", fn))
      goto out;
    hl |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    pre_len = 12;
  }
  if (hl > MAX_HEADER_BYTES || hl > (uint64_t)(size - pre_len)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a header of %llu bytes, found only %lld bytes "
              "after the header length", (unsigned long long)hl, (long long)(size - pre_len));
    goto out;
  }
  head = malloc(hl ? hl : 1);
  if (!head) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    goto out;
  }
  if (!read_exact(f, head, hl, "the header", fn))
    goto out;
  if (hl == 0 || head[hl - 1] != '\n') {
    gs__error(GS_ERR_ARGUMENT, fn, "expected the header to end with a newline, found %s",
              hl == 0 ? "an empty header" : "another byte");
    goto out;
  }
  gs_dtype dtype = GS_F32;
  int64_t shape[GS_MAX_DIMS];
  int ndim = 0;
  jp p = {head, hl, 0, (size_t)pre_len, fn};
  if (!npy_parse_dict(&p, &dtype, shape, &ndim))
    goto out;
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] != 0 && numel > INT64_MAX / 8 / shape[d]) {
      char buf[GS__SHAPE_STR];
      gs__error(GS_ERR_OVERFLOW, fn, "expected a shape whose byte size fits in 64 bits, "
                "found %s", gs__shape_str(buf, shape, ndim));
      goto out;
    }
    numel *= shape[d];
  }
  int64_t nbytes = numel * (int64_t)gs__elsize(dtype);
  int64_t have = size - pre_len - (int64_t)hl;
  if (have != nbytes) {
    char buf[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected %lld data bytes for %s %s, found %lld",
              (long long)nbytes, npy_descr(dtype), gs__shape_str(buf, shape, ndim),
              (long long)have);
    goto out;
  }
  data = malloc(nbytes ? (size_t)nbytes : 1);
  if (!data) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld bytes", (long long)nbytes);
    goto out;
  }
  if (!read_exact(f, data, (size_t)nbytes, "the data", fn))
    goto out;
  if (dtype == GS_BOOL)
    for (int64_t k = 0; k < nbytes; k++)
      ((unsigned char *)data)[k] = ((unsigned char *)data)[k] != 0;
  result = gs_from_data(dtype, shape, ndim, data);
out:
  free(data);
  free(head);
  fclose(f);
  return result;
}
