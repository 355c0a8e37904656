/* json.c: the strict JSON reader behind safetensors headers (see json.h), and the string
 * writer for them. It accepts exactly what those headers hold (objects, strings with escapes,
 * arrays of non-negative integers) and, at the first thing it does not, reports the byte
 * offset and what it expected there, so that a damaged file can be found and fixed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

/* ---- reading -------------------------------------------------------------------------- */

/* "'x'", "the end of the header" or "byte 0x93" for the byte at pos. */
static const char *describe_found(const gs__json *p, char *buf, size_t size) {
  if (p->pos >= p->len)
    snprintf(buf, size, "the end of the header");
  else if ((unsigned char)p->s[p->pos] >= 0x20 && (unsigned char)p->s[p->pos] < 0x7f)
    snprintf(buf, size, "'%c'", p->s[p->pos]);
  else
    snprintf(buf, size, "byte 0x%02x", (unsigned char)p->s[p->pos]);
  return buf;
}

bool gs__json_fail(const gs__json *p, const char *expected) {
  char found[32];
  gs__error(GS_ERR_ARGUMENT, p->fn, "header JSON at byte %zu: expected %s, found %s",
            p->base + p->pos, expected, describe_found(p, found, sizeof found));
  return false;
}

void gs__json_skip_space(gs__json *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                             p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}

bool gs__json_char(gs__json *p, char c, const char *expected) {
  gs__json_skip_space(p);
  if (p->pos < p->len && p->s[p->pos] == c) {
    p->pos++;
    return true;
  }
  return gs__json_fail(p, expected);
}

bool gs__json_next(gs__json *p, char close, bool *more, const char *expected) {
  gs__json_skip_space(p);
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
  return gs__json_fail(p, expected);
}

bool gs__json_open(gs__json *p, char open, char close, bool *more, const char *expected) {
  if (!gs__json_char(p, open, expected))
    return false;
  gs__json_skip_space(p);
  *more = !(p->pos < p->len && p->s[p->pos] == close);
  if (!*more)
    p->pos++;
  return true;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool read_hex4(gs__json *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
    if (h < 0)
      return gs__json_fail(p, "4 hex digits after \\u");
    v = v * 16 + (unsigned)h;
    p->pos++;
  }
  *out = v;
  return true;
}

bool gs__json_string(gs__json *p, char **out, const char *expected) {
  gs__json_skip_space(p);
  if (p->pos >= p->len || p->s[p->pos] != '"')
    return gs__json_fail(p, expected);
  p->pos++;
  gs__sbuf b = {0};
  gs__sbuf_put(&b, "", 0);
  for (;;) {
    if (p->pos >= p->len) {
      free(b.data);
      return gs__json_fail(p, "a closing '\"'");
    }
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '"') {
      p->pos++;
      break;
    }
    if (c < 0x20) {
      free(b.data);
      return gs__json_fail(p, "a string character (control characters must be escaped)");
    }
    if (c != '\\') {
      gs__sbuf_put(&b, (const char *)&p->s[p->pos], 1);
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
      return gs__json_fail(p, "an escape (one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
    }
    p->pos++;
    if (simple) {
      gs__sbuf_put(&b, simple, 1);
      continue;
    }
    unsigned cp;
    if (!read_hex4(p, &cp)) {
      free(b.data);
      return false;
    }
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      p->pos -= 4;
      free(b.data);
      return gs__json_fail(p, "a code point that is not a lone low surrogate");
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      unsigned lo;
      if (p->pos + 1 >= p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
        free(b.data);
        return gs__json_fail(p, "\\u and a low surrogate after a high surrogate");
      }
      p->pos += 2;
      if (!read_hex4(p, &lo)) {
        free(b.data);
        return false;
      }
      if (lo < 0xdc00 || lo > 0xdfff) {
        p->pos -= 4;
        free(b.data);
        return gs__json_fail(p, "a low surrogate (DC00-DFFF)");
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0) {
      p->pos -= 6;
      free(b.data);
      return gs__json_fail(p, "a non-NUL character (\\u0000 is not allowed in names)");
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
    gs__sbuf_put(&b, u, n);
  }
  if (b.failed) {
    free(b.data);
    gs__error(GS_ERR_OUT_OF_MEMORY, p->fn, "out of memory");
    return false;
  }
  *out = b.data;
  return true;
}

bool gs__json_uint(gs__json *p, int64_t *out) {
  gs__json_skip_space(p);
  size_t start = p->pos;
  if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
    return gs__json_fail(p, "a non-negative integer");
  if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
      p->s[p->pos + 1] <= '9') {
    p->pos++;
    return gs__json_fail(p, "no leading zeros in an integer");
  }
  int64_t v = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    int d = p->s[p->pos] - '0';
    if (v > (INT64_MAX - d) / 10) {
      p->pos = start;
      return gs__json_fail(p, "an integer below 2^63");
    }
    v = v * 10 + d;
    p->pos++;
  }
  if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
    return gs__json_fail(p, "an integer (no fraction or exponent)");
  *out = v;
  return true;
}

bool gs__json_uint_array(gs__json *p, int64_t *out, int max, int *n, const char *what) {
  char expected[64];
  snprintf(expected, sizeof expected, "'[' starting %s", what);
  bool more;
  if (!gs__json_open(p, '[', ']', &more, expected))
    return false;
  *n = 0;
  while (more) {
    if (*n == max) {
      snprintf(expected, sizeof expected, "at most %d integers in %s", max, what);
      return gs__json_fail(p, expected);
    }
    if (!gs__json_uint(p, &out[(*n)++]))
      return false;
    if (!gs__json_next(p, ']', &more, "',' or ']' in an integer array"))
      return false;
  }
  return true;
}

/* ---- writing -------------------------------------------------------------------------- */

void gs__json_put_string(gs__sbuf *b, const char *s) {
  gs__sbuf_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"')
      gs__sbuf_put(b, "\\\"", 2);
    else if (*p == '\\')
      gs__sbuf_put(b, "\\\\", 2);
    else if (*p == '\n')
      gs__sbuf_put(b, "\\n", 2);
    else if (*p == '\t')
      gs__sbuf_put(b, "\\t", 2);
    else if (*p == '\r')
      gs__sbuf_put(b, "\\r", 2);
    else if (*p < 0x20)
      gs__sbuf_int(b, "\\u", *p, true);
    else
      gs__sbuf_put(b, (const char *)p, 1);
  }
  gs__sbuf_put(b, "\"", 1);
}
