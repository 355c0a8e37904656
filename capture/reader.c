/* reader.c: the only code that parses the event log (doc/trace-format.md, capture/format.h).
 *
 * Bytes are fed as they arrive, in any split, so a saved file, a growing file and a socket go
 * through the same code. The reader buffers bytes until a whole chunk is there, checks its CRC
 * and then decodes its events one per gs_trace_reader_next straight from that contiguous
 * buffer, walking the same per-kind schema table as the encoder (schema.c). A chunk is
 * dropped from the buffer once its events are delivered, so a long live log costs one chunk
 * plus what the caller feeds at a time.
 *
 * Since format 1.2 the writer folds a fresh storage's allocation into the tensor_create that
 * made it, and a storage's release into the tensor_dispose that freed it; since 2.2 a clone's
 * copy-on-write share into the clone's tensor_create, and the owner_change that makes a
 * gradient its leaf's into the grad_accumulate after it. The reader unfolds them
 * (unfold_events), so its callers see the same events from any log.
 *
 * A cut tail is normal (a crash, or a writer still running): it is NEED_MORE plus
 * gs_trace_reader_truncated. Anything wrong is DAMAGED at the first bad byte, with a message
 * naming what and where; every event before it has been delivered, none after. Every length
 * read from the log is bounded before it sizes anything.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "format.h"

/* String ids are small dense numbers handed out by the recorder; the bound keeps a damaged or
 * hostile id from sizing the table. Pages keep sparse ids cheap. */
#define STRING_ID_LIMIT (1u << 24)
#define STRING_PAGE_BITS 12
#define STRING_PAGE_SIZE (1u << STRING_PAGE_BITS)
#define STRING_PAGES (STRING_ID_LIMIT >> STRING_PAGE_BITS)

/* A newer minor version may grow the header; a reader skips what it does not know, up to
 * this much. */
#define MAX_HEADER_SIZE 4096

typedef enum read_state { READ_HEADER, READ_CHUNKS, READ_DAMAGED } read_state;

/* Reader-owned memory that decoded events point into; grows to the largest event seen. */
typedef struct scratch {
  void *data;
  size_t cap; /* bytes */
} scratch;

struct gs_trace_reader {
  /* Bytes fed and not yet consumed are buf[start..len); buf[0] is at log offset buf_offset. */
  uint8_t *buf;
  size_t cap, start, len;
  uint64_t buf_offset;
  read_state state;

  bool have_header;
  uint32_t major, minor, pid;
  uint64_t start_realtime_ns;
  /* The dist_init read so far (a distributed run's rank, world size and id). */
  bool have_run;
  uint32_t rank, world;
  uint64_t run;

  /* The chunk being delivered starts at buf[start] and is chunk_size bytes with padding. */
  bool in_chunk;
  size_t chunk_size;
  uint32_t payload_len;
  size_t cursor; /* the next event, from the payload's start */
  uint32_t thread;
  uint64_t seq, time_ns; /* of the last event decoded (the chunk's base before the first) */
  /* Events are decoded into ev, which the reader owns: gs_trace_reader_next_ref hands out a
   * pointer to it, so no event is copied. Only the words the last event's kind fills can be
   * non-zero, so only those are cleared before the next decode, not all of the struct's 500
   * bytes. */
  gs_trace_event ev;
  unsigned ev_words_of; /* 1 + the kind whose fields ev may hold; 0: ev is all zero */
  uint64_t kind_words[GS_TRACE_KIND_COUNT][2]; /* per kind: the words its fields fill */
  /* A storage event unfolded from ev (1.2's folds): only its storage and nbytes vary. */
  gs_trace_event derived;
  /* The owner_change unfolded from a 2.2 grad_accumulate: all its fields vary. */
  gs_trace_event folded_owner;
  /* The second of two events one log event unfolded into, delivered by the next call. */
  const gs_trace_event *queued;

  scratch inputs, saved, parts, params, frames, values, text;
  /* Format 2's compact ids: the open chunk's tables (format.h), reset at each chunk. */
  gs__trace_ids *ids;
  char ***string_pages; /* STRING_PAGES pointers, allocated with the first string */
  uint32_t string_ids_end; /* above the highest string id defined: freeing stops there */

  char error[256];
  uint64_t error_offset;
};

/* ---- bookkeeping -------------------------------------------------------------------------- */

static uint64_t log_offset(const gs_trace_reader *r, const uint8_t *p) {
  return r->buf_offset + (uint64_t)(p - r->buf);
}

/* Marks the log damaged at offset; always returns false so callers can `return damage(...)`. */
__attribute__((format(printf, 3, 4))) static bool damage(gs_trace_reader *r, uint64_t offset,
                                                        const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof r->error)
    snprintf(r->error + n, sizeof r->error - (size_t)n, " (at byte %" PRIu64 ")", offset);
  r->error_offset = offset;
  r->state = READ_DAMAGED;
  r->in_chunk = false;
  return false;
}

static void *reserve(gs_trace_reader *r, scratch *s, size_t bytes) {
  if (bytes > s->cap) {
    size_t cap = s->cap ? s->cap : 64;
    while (cap < bytes)
      cap *= 2;
    void *data = realloc(s->data, cap);
    if (!data) {
      damage(r, r->buf_offset + r->start, "out of memory decoding an event");
      return NULL;
    }
    s->data = data;
    s->cap = cap;
  }
  return s->data;
}

/* ---- the public surface ------------------------------------------------------------------- */

static void schema_words(const uint8_t *schema, uint64_t words[2]);

gs_trace_reader *gs_trace_reader_new(void) {
  gs_trace_reader *r = calloc(1, sizeof *r);
  for (unsigned k = 0; r && k < GS_TRACE_KIND_COUNT; k++)
    if (gs__trace_schema[k])
      schema_words(gs__trace_schema[k], r->kind_words[k]);
  return r;
}

void gs_trace_reader_free(gs_trace_reader *r) {
  if (!r)
    return;
  /* Only as far as the highest id: a log with a few strings frees a few, not 4,096 slots. */
  for (uint32_t id = 0; r->string_pages && id < r->string_ids_end; id += STRING_PAGE_SIZE) {
    char **page = r->string_pages[id >> STRING_PAGE_BITS];
    if (!page)
      continue;
    uint32_t end = r->string_ids_end - id < STRING_PAGE_SIZE ? r->string_ids_end - id
                                                              : STRING_PAGE_SIZE;
    for (uint32_t i = 0; i < end; i++)
      free(page[i]);
    free(page);
  }
  free(r->string_pages);
  free(r->inputs.data);
  free(r->saved.data);
  free(r->parts.data);
  free(r->params.data);
  free(r->frames.data);
  free(r->values.data);
  free(r->text.data);
  free(r->ids);
  free(r->buf);
  free(r);
}

/* Room for n more bytes at buf[len]; false after damage (or out of memory). */
static bool make_room(gs_trace_reader *r, size_t n) {
  /* Past damage nothing more is read: keeping the bytes would only grow memory. */
  if (r->state == READ_DAMAGED)
    return false;
  if (r->cap - r->len < n && r->start > 0) {
    /* Slide the unconsumed bytes down over what was delivered instead of growing. */
    memmove(r->buf, r->buf + r->start, r->len - r->start);
    r->buf_offset += r->start;
    r->len -= r->start;
    r->start = 0;
  }
  if (r->cap - r->len < n) {
    size_t cap = r->cap ? r->cap : 256; /* grows to one chunk plus one feed, no more */
    while (cap - r->len < n)
      cap *= 2;
    uint8_t *buf = realloc(r->buf, cap);
    if (!buf) {
      damage(r, r->buf_offset + r->len, "out of memory buffering %zu bytes", n);
      return false;
    }
    r->buf = buf;
    r->cap = cap;
  }
  return true;
}

void gs_trace_reader_feed(gs_trace_reader *r, const void *bytes, size_t n) {
  if (n == 0 || !make_room(r, n))
    return;
  memcpy(r->buf + r->len, bytes, n);
  r->len += n;
}

void *gs_trace_reader_feed_space(gs_trace_reader *r, size_t n) {
  return n && make_room(r, n) ? r->buf + r->len : NULL;
}

void gs_trace_reader_fed(gs_trace_reader *r, size_t n) {
  if (r->state != READ_DAMAGED && n <= r->cap - r->len)
    r->len += n;
}

const char *gs_trace_reader_error(const gs_trace_reader *r, uint64_t *offset) {
  if (r->state != READ_DAMAGED)
    return NULL;
  if (offset)
    *offset = r->error_offset;
  return r->error;
}

bool gs_trace_reader_truncated(const gs_trace_reader *r, uint64_t *offset) {
  if (r->state == READ_DAMAGED)
    return false;
  size_t from = r->start + (r->in_chunk ? r->chunk_size : 0);
  if (r->len <= from)
    return false;
  if (offset)
    *offset = r->buf_offset + from;
  return true;
}

const char *gs_trace_reader_string(const gs_trace_reader *r, uint32_t id) {
  if (id >= STRING_ID_LIMIT || !r->string_pages)
    return "";
  char **page = r->string_pages[id >> STRING_PAGE_BITS];
  const char *s = page ? page[id & (STRING_PAGE_SIZE - 1)] : NULL;
  return s ? s : "";
}

bool gs_trace_reader_chunk(const gs_trace_reader *r, uint64_t *offset, uint64_t *size) {
  if (r->state != READ_CHUNKS || !r->in_chunk)
    return false;
  if (offset)
    *offset = r->buf_offset + r->start;
  if (size)
    *size = r->chunk_size;
  return true;
}

bool gs_trace_reader_run(const gs_trace_reader *r, uint32_t *rank, uint32_t *world, uint64_t *run) {
  if (!r->have_run)
    return false;
  if (rank)
    *rank = r->rank;
  if (world)
    *world = r->world;
  if (run)
    *run = r->run;
  return true;
}

bool gs_trace_reader_header(const gs_trace_reader *r, uint32_t *major, uint32_t *minor,
                            uint64_t *start_realtime_ns, uint32_t *pid) {
  if (!r->have_header)
    return false;
  if (major)
    *major = r->major;
  if (minor)
    *minor = r->minor;
  if (start_realtime_ns)
    *start_realtime_ns = r->start_realtime_ns;
  if (pid)
    *pid = r->pid;
  return true;
}

/* ---- header and chunks -------------------------------------------------------------------- */

/* True once the header is read; false for NEED_MORE or damage (r->state tells which). The
 * checks run in byte order, each as soon as its bytes are there, so a live reader reports
 * garbage early and the verdict does not depend on how the bytes were split. */
static bool read_header(gs_trace_reader *r) {
  size_t avail = r->len - r->start;
  if (avail == 0)
    return false;
  const uint8_t *h = r->buf + r->start;
  size_t magic_len = avail < 8 ? avail : 8;
  if (memcmp(h, GS__TRACE_MAGIC, magic_len) != 0)
    return damage(r, 0, "not a Gradscope event log: bad magic");
  if (avail < GS__TRACE_HDR_MINOR)
    return false;
  uint32_t major = (uint32_t)h[GS__TRACE_HDR_MAJOR] | (uint32_t)h[GS__TRACE_HDR_MAJOR + 1] << 8;
  if (major < 1 || major > GS_TRACE_VERSION_MAJOR)
    return damage(r, GS__TRACE_HDR_MAJOR,
                  "unsupported major version %" PRIu32 "; this reader reads 1 to %d", major,
                  GS_TRACE_VERSION_MAJOR);
  if (avail < GS__TRACE_HEADER_SIZE)
    return false;
  uint32_t stored = gs__get_u32(h + GS__TRACE_HDR_CRC);
  uint32_t computed = gs__crc32c(0, h, GS__TRACE_HDR_CRC);
  if (stored != computed)
    return damage(r, 0, "header CRC mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                  stored, computed);
  if (h[GS__TRACE_HDR_LITTLE] != 1)
    return damage(r, GS__TRACE_HDR_LITTLE, "little-endian flag is %u, not 1",
                  (unsigned)h[GS__TRACE_HDR_LITTLE]);
  uint32_t size = gs__get_u32(h + GS__TRACE_HDR_SIZE);
  if (size < GS__TRACE_HEADER_SIZE || size > MAX_HEADER_SIZE || size % 8 != 0)
    return damage(r, GS__TRACE_HDR_SIZE, "header size %" PRIu32
                  " is not a multiple of 8 between %d and %d", size, GS__TRACE_HEADER_SIZE,
                  MAX_HEADER_SIZE);
  if (avail < size)
    return false;
  if (major >= 2 && !r->ids && !(r->ids = malloc(sizeof *r->ids)))
    return damage(r, 0, "out of memory for the id tables");
  r->major = major;
  r->minor = (uint32_t)h[GS__TRACE_HDR_MINOR] | (uint32_t)h[GS__TRACE_HDR_MINOR + 1] << 8;
  r->start_realtime_ns = gs__get_u64(h + GS__TRACE_HDR_REALTIME);
  r->pid = gs__get_u32(h + GS__TRACE_HDR_PID);
  r->have_header = true;
  r->start += size;
  r->state = READ_CHUNKS;
  return true;
}

/* True once a whole, CRC-checked chunk is at buf[start]; false for NEED_MORE or damage. The
 * payload length is bounded before the reader waits for (and so buffers) that many bytes. */
static bool open_chunk(gs_trace_reader *r) {
  size_t avail = r->len - r->start;
  if (avail == 0)
    return false;
  const uint8_t *c = r->buf + r->start;
  uint64_t at = r->buf_offset + r->start;
  uint8_t magic[4];
  gs__put_u32(magic, GS__TRACE_CHUNK_MAGIC);
  if (memcmp(c, magic, avail < 4 ? avail : 4) != 0)
    return damage(r, at, "bad chunk magic");
  if (avail < 8)
    return false;
  uint32_t payload_len = gs__get_u32(c + 4);
  if (payload_len > GS__TRACE_MAX_PAYLOAD)
    return damage(r, at + 4, "chunk payload length %" PRIu32 " exceeds the limit %u",
                  payload_len, GS__TRACE_MAX_PAYLOAD);
  size_t size = GS__TRACE_CHUNK_HEADER_SIZE + (((size_t)payload_len + 7) & ~(size_t)7);
  if (avail < size)
    return false;
  const uint8_t *payload = c + GS__TRACE_CHUNK_HEADER_SIZE;
  uint32_t stored = gs__get_u32(c + 8);
  uint32_t computed = gs__crc32c(gs__crc32c(0, c + 12, GS__TRACE_CHUNK_HEADER_SIZE - 12),
                                 payload, payload_len);
  if (stored != computed)
    return damage(r, at, "chunk CRC mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                  stored, computed);
  r->in_chunk = true;
  r->chunk_size = size;
  r->payload_len = payload_len;
  r->cursor = 0;
  r->thread = gs__get_u32(c + 12);
  r->seq = gs__get_u64(c + 16);
  r->time_ns = gs__get_u64(c + 24);
  if (r->ids)
    gs__trace_ids_reset(r->ids); /* compact ids refer within their chunk only */
  return true;
}

static void close_chunk(gs_trace_reader *r) {
  r->in_chunk = false;
  r->start += r->chunk_size;
  if (r->start == r->len) {
    /* Everything fed is consumed: the next feed starts at the buffer's beginning. */
    r->buf_offset += r->len;
    r->start = r->len = 0;
  }
}

/* ---- events ------------------------------------------------------------------------------- */

/* Most ids, counts and deltas fit in one byte. */
static inline const uint8_t *get_u(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p < end && *p < 0x80) {
    *v = *p;
    return p + 1;
  }
  return gs__get_uvarint(p, end, v);
}

static const char *kind_name(unsigned kind) { return gs_trace_kind_name((gs_trace_kind)kind); }

/* Why a varint at p could not be read within [p, end). */
static bool bad_varint(gs_trace_reader *r, const uint8_t *p, const uint8_t *end, unsigned kind) {
  if (end - p >= 10)
    return damage(r, log_offset(r, p), "malformed varint in %s event", kind_name(kind));
  return damage(r, log_offset(r, p), "%s event's field runs past its length", kind_name(kind));
}

/* A compact id (format 2, format.h) against table, into *id; NULL after damage. get_id is
 * the one-byte case inline (nearly every id: a small slot's same or next generation), this
 * the rest. */
__attribute__((noinline)) static const uint8_t *get_id_slow(gs_trace_reader *r, const uint8_t *p,
                                                            const uint8_t *end, uint64_t *table,
                                                            unsigned kind, const char *what,
                                                            uint64_t *id) {
  const uint8_t *field = p;
  uint64_t v, gen = 0;
  if (!(p = get_u(p, end, &v))) {
    bad_varint(r, field, end, kind);
    return NULL;
  }
  uint64_t slot = v >> 2;
  unsigned tag = (unsigned)(v & 3);
  if (slot > UINT32_MAX) {
    damage(r, log_offset(r, field), "%s event: %s id's slot %" PRIu64 " does not fit in 32 bits",
           kind_name(kind), what, slot);
    return NULL;
  }
  uint64_t *entry = &table[slot % GS__TRACE_ID_TABLE];
  if (tag == 1 || tag == 2) {
    if (*entry == 0 || (uint32_t)*entry != slot) {
      damage(r, log_offset(r, field),
             "%s event: %s id refers to the previous id of slot %" PRIu64
             ", but this chunk has none",
             kind_name(kind), what, slot);
      return NULL;
    }
    gen = (uint32_t)((uint32_t)(*entry >> 32) + (tag - 1));
  } else if (tag == 3) {
    const uint8_t *q = p;
    if (!(p = get_u(q, end, &gen))) {
      bad_varint(r, q, end, kind);
      return NULL;
    }
    if (gen > UINT32_MAX) {
      damage(r, log_offset(r, q),
             "%s event: %s id's generation %" PRIu64 " does not fit in 32 bits", kind_name(kind),
             what, gen);
      return NULL;
    }
  }
  *id = gen << 32 | slot;
  if (*id)
    *entry = *id;
  return p;
}

static inline __attribute__((always_inline)) const uint8_t *
get_id(gs_trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *table, unsigned kind,
       const char *what, uint64_t *id) {
  if (__builtin_expect(p < end && *p < 0x80, 1)) {
    unsigned v = *p, tag = v & 3, slot = v >> 2; /* slot < 32: its own table entry */
    uint64_t e = table[slot];
    if (tag == 0) {
      *id = slot;
      if (slot)
        table[slot] = slot;
      return p + 1;
    }
    if (tag != 3 && e != 0 && (uint32_t)e == slot) {
      uint64_t x = (uint64_t)((uint32_t)(e >> 32) + (tag - 1)) << 32 | slot;
      *id = table[slot] = x;
      return p + 1;
    }
  }
  return get_id_slow(r, p, end, table, kind, what, id);
}

/* A compact storage or node id (format 2, format.h) against *prev; NULL after damage. As
 * get_id: get_counter_id is the one-byte case inline. */
__attribute__((noinline)) static const uint8_t *
get_counter_id_slow(gs_trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *prev,
                    unsigned kind, const char *what, uint64_t *id) {
  const uint8_t *field = p;
  uint64_t v;
  if (!(p = get_u(p, end, &v))) {
    bad_varint(r, field, end, kind);
    return NULL;
  }
  switch (v & 3) {
  case 0: *id = v >> 2; break;
  case 1: *id = *prev + ((v >> 3) ^ -((v >> 2) & 1)); break; /* wraps modulo 2^64 */
  case 2:
    if (v != 2) {
      damage(r, log_offset(r, field), "%s event: %s id: escape byte %" PRIu64 " is not 2",
             kind_name(kind), what, v);
      return NULL;
    }
    if (!(p = get_u(p, end, id))) {
      bad_varint(r, field + 1, end, kind);
      return NULL;
    }
    break;
  default:
    damage(r, log_offset(r, field), "%s event: %s id has tag 3, which no writer writes",
           kind_name(kind), what);
    return NULL;
  }
  if (*id)
    *prev = *id;
  return p;
}

static inline __attribute__((always_inline)) const uint8_t *
get_counter_id(gs_trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *prev,
               unsigned kind, const char *what, uint64_t *id) {
  if (__builtin_expect(p < end && *p < 0x80 && (*p & 2) == 0, 1)) {
    unsigned v = *p;
    uint64_t x = v & 1 ? *prev + (uint64_t)(int64_t)((int)(v >> 3) ^ -(int)((v >> 2) & 1)) : v >> 2;
    *id = x;
    if (x)
      *prev = x;
    return p + 1;
  }
  return get_counter_id_slow(r, p, end, prev, kind, what, id);
}

/* decode_event and decode_fields run once per event, each from one place: inlined into
 * gs_trace_reader_next they save a fifth of its instructions, and GCC stops inlining them by
 * itself once they grow past its size limits (as the 1.2 fields made them). */
#define DECODE_INLINE inline __attribute__((always_inline))

/* An array field: count, then count uvarints, into reader-owned memory. */
static bool decode_array(gs_trace_reader *r, const uint8_t **pp, const uint8_t *end, unsigned kind,
                         scratch *s, const uint64_t **out, uint32_t *n_out, uint64_t *ids,
                         uint64_t *prev) {
  const uint8_t *p = *pp;
  uint64_t n;
  if (!(p = get_u(*pp, end, &n)))
    return bad_varint(r, *pp, end, kind);
  if (n > GS__TRACE_MAX_ARRAY)
    return damage(r, log_offset(r, *pp), "%s event: array of %" PRIu64 " elements exceeds %d",
                  kind_name(kind), n, GS__TRACE_MAX_ARRAY);
  if (n > (uint64_t)(end - p)) /* each element takes at least a byte */
    return damage(r, log_offset(r, *pp), "%s event: array of %" PRIu64
                  " elements runs past its length", kind_name(kind), n);
  *pp = p;
  if (n == 0)
    return true;
  uint64_t *a = reserve(r, s, (size_t)n * sizeof *a);
  if (!a)
    return false;
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *q = p;
    if (ids) {
      if (!(p = get_id(r, q, end, ids, kind, "an array's", &a[i])))
        return false;
    } else if (prev) {
      if (!(p = get_counter_id(r, q, end, prev, kind, "an array's", &a[i])))
        return false;
    } else if (!(p = get_u(q, end, &a[i]))) {
      return bad_varint(r, q, end, kind);
    }
  }
  *out = a;
  *n_out = (uint32_t)n;
  *pp = p;
  return true;
}

/* Fills ev's fields from [p, end) in schema order; bytes after the last field (trailing
 * fields of a newer minor version) are left unread, and the body may end at a
 * GS__F_SINCE_MINOR mark (before a field its older writer did not have yet): the fields
 * after it stay 0. */
static DECODE_INLINE bool decode_fields(gs_trace_reader *r, gs_trace_event *ev,
                                         const uint8_t *schema, const uint8_t *p,
                                         const uint8_t *end) {
  unsigned kind = ev->kind;
  /* Format 2's id tables; NULL: format 1's plain ids. */
  uint64_t *tensors = r->major >= 2 ? r->ids->tensor : NULL;
  uint64_t *storages = r->major >= 2 ? &r->ids->storage : NULL;
  uint64_t *nodes = r->major >= 2 ? &r->ids->node : NULL;
  for (const uint8_t *f = schema; *f != GS__F_END; f++) {
    const uint8_t *field = p;
    uint64_t u = 0;
    int64_t s = 0;
    /* Scalar fields: one varint each. */
#define GET_U()                                                                              \
  do {                                                                                       \
    if (!(p = get_u(field, end, &u)))                                                        \
      return bad_varint(r, field, end, kind);                                                \
  } while (0)
#define U64(member)                                                                          \
  GET_U();                                                                                   \
  ev->member = u;                                                                            \
  break
/* An id field: compact against table in format 2, else a plain uvarint. */
#define ID(member, table)                                                                          \
  if (table) {                                                                                     \
    if (!(p = get_id(r, field, end, table, kind, #member, &ev->member)))                           \
      return false;                                                                                \
    break;                                                                                         \
  }                                                                                                \
  U64(member)
#define COUNTER(member, prev)                                                                      \
  if (prev) {                                                                                      \
    if (!(p = get_counter_id(r, field, end, prev, kind, #member, &ev->member)))                    \
      return false;                                                                                \
    break;                                                                                         \
  }                                                                                                \
  U64(member)
#define U32(member)                                                                          \
  GET_U();                                                                                   \
  if (u > UINT32_MAX)                                                                        \
    return damage(r, log_offset(r, field), "%s event: " #member " %" PRIu64                 \
                  " does not fit in 32 bits", kind_name(kind), u);                          \
  ev->member = (uint32_t)u;                                                                  \
  break
    switch ((gs__field)*f) {
    case GS__F_TENSOR: ID(tensor, tensors);
    case GS__F_TARGET: ID(target, tensors);
    case GS__F_STORAGE: COUNTER(storage, storages);
    case GS__F_SOURCE:
      if (kind == GS_TRACE_STORAGE_SHARE) {
        COUNTER(source, storages);
      }
      ID(source, tensors);
    case GS__F_NODE: COUNTER(node, nodes);
    case GS__F_SCOPE: U64(scope);
    case GS__F_OUTER: U64(outer);
    case GS__F_OBJECT: ID(object, tensors);
    case GS__F_MODULE: U64(module);
    case GS__F_CHILD: U64(child);
    case GS__F_OPTIMIZER: U64(optimizer);
    case GS__F_NBYTES: U64(nbytes);
    case GS__F_ALLOC: U64(alloc);
    case GS__F_FREED: COUNTER(freed, storages);
    case GS__F_SHARED:
      COUNTER(shared, storages);
    case GS__F_VERSION: U64(version);
    case GS__F_OWNER: U64(owner);
    case GS__F_PREVIOUS_OWNER: U64(previous_owner);
    case GS__F_NAME: U32(name);
    case GS__F_OP: U32(op);
    case GS__F_DTYPE: U32(dtype);
    case GS__F_ORIGIN: U32(origin);
    case GS__F_HOLDER: U32(holder);
    case GS__F_PREVIOUS_HOLDER: U32(previous_holder);
    case GS__F_OBJECT_KIND: U32(object_kind);
    case GS__F_CODE: U32(code);
    case GS__F_OFFSET:
      if (!(p = gs__get_svarint(field, end, &s)))
        return bad_varint(r, field, end, kind);
      ev->offset = s;
      break;
    case GS__F_REQUIRES_GRAD:
      if (p >= end)
        return bad_varint(r, field, end, kind);
      if (*p > 1)
        return damage(r, log_offset(r, p), "%s event: requires_grad byte is %u, not 0 or 1",
                      kind_name(kind), (unsigned)*p);
      ev->requires_grad = *p++ != 0;
      break;
    case GS__F_SHAPE:
      GET_U();
      if (u > GS_MAX_DIMS)
        return damage(r, log_offset(r, field), "%s event: ndim %" PRIu64 " exceeds %d",
                      kind_name(kind), u, GS_MAX_DIMS);
      ev->ndim = (int)u;
      for (int i = 0; i < ev->ndim; i++) {
        const uint8_t *q = p;
        if (!(p = gs__get_svarint(q, end, &ev->shape[i])))
          return bad_varint(r, q, end, kind);
      }
      break;
    case GS__F_STRIDES:
      for (int i = 0; i < ev->ndim; i++) {
        const uint8_t *q = p;
        if (!(p = gs__get_svarint(q, end, &ev->strides[i])))
          return bad_varint(r, q, end, kind);
      }
      break;
    case GS__F_INPUTS:
      if (!decode_array(r, &p, end, kind, &r->inputs, &ev->inputs, &ev->n_inputs, NULL, nodes))
        return false;
      break;
    case GS__F_SAVED:
      if (!decode_array(r, &p, end, kind, &r->saved, &ev->saved, &ev->n_saved, tensors, NULL))
        return false;
      break;
    case GS__F_PARTS:
      if (!decode_array(r, &p, end, kind, &r->parts, &ev->parts, &ev->n_parts, tensors, NULL))
        return false;
      break;
    case GS__F_PARAMS:
      if (!decode_array(r, &p, end, kind, &r->params, &ev->params, &ev->n_params, tensors, NULL))
        return false;
      break;
    case GS__F_FRAMES:
      if (!decode_array(r, &p, end, kind, &r->frames, &ev->frames, &ev->n_frames, NULL, NULL))
        return false;
      break;
    case GS__F_SITE: U32(site);
    case GS__F_MEMORY: U32(memory);
    case GS__F_PEER: U32(peer);
    case GS__F_ADDRESS: U64(address);
    case GS__F_COUNT: U64(count);
    case GS__F_IN_PLACE:
      U64(in_place);
    case GS__F_RANK: U32(rank);
    case GS__F_WORLD: U32(world);
    case GS__F_RUN: U64(run);
    case GS__F_COLLECTIVE: U64(collective);
    case GS__F_WAITED: U64(waited_ns);
    case GS__F_BUCKET: {
      int64_t b;
      if (!(p = gs__get_svarint(field, end, &b)))
        return bad_varint(r, field, end, kind);
      if (b < -1 || b > INT32_MAX)
        return damage(r, log_offset(r, field), "%s event: bucket %" PRId64 " is not -1 or an index",
                      kind_name(kind), b);
      ev->bucket = (int32_t)b;
      break;
    }
    case GS__F_VALUES: {
      GET_U();
      if (u > GS__TRACE_MAX_ARRAY)
        return damage(r, log_offset(r, field), "%s event: %" PRIu64 " values exceed %d",
                      kind_name(kind), u, GS__TRACE_MAX_ARRAY);
      if (u * 8 > (uint64_t)(end - p))
        return damage(r, log_offset(r, field), "%s event: %" PRIu64
                      " values run past its length", kind_name(kind), u);
      if (u == 0)
        break;
      double *v = reserve(r, &r->values, (size_t)u * sizeof *v);
      if (!v)
        return false;
      for (uint64_t i = 0; i < u; i++, p += 8) {
        uint64_t bits = gs__get_u64(p);
        memcpy(&v[i], &bits, sizeof bits);
      }
      ev->values = v;
      ev->n_values = (uint32_t)u;
      break;
    }
    case GS__F_TEXT: {
      GET_U();
      if (u > GS__TRACE_MAX_TEXT)
        return damage(r, log_offset(r, field), "%s event: text of %" PRIu64
                      " bytes exceeds %d", kind_name(kind), u, GS__TRACE_MAX_TEXT);
      if (u > (uint64_t)(end - p))
        return damage(r, log_offset(r, field), "%s event: text of %" PRIu64
                      " bytes runs past its length", kind_name(kind), u);
      char *t = reserve(r, &r->text, (size_t)u + 1);
      if (!t)
        return false;
      memcpy(t, p, (size_t)u);
      t[u] = '\0';
      p += u;
      ev->text = t;
      ev->text_len = (uint32_t)u;
      break;
    }
    case GS__F_END:
      break;
    default: /* a GS__F_SINCE_MINOR mark */
      if (p == end)
        return true;
      break;
    }
#undef ID
#undef COUNTER
#undef U32
#undef U64
#undef GET_U
  }
  return true;
}

/* A STRING event enters the table; a later one with the same id replaces it. */
static bool define_string(gs_trace_reader *r, const gs_trace_event *ev, const uint8_t *at) {
  if (ev->name >= STRING_ID_LIMIT)
    return damage(r, log_offset(r, at), "string id %" PRIu32 " exceeds the limit %u", ev->name,
                  STRING_ID_LIMIT - 1);
  if (!r->string_pages && !(r->string_pages = calloc(STRING_PAGES, sizeof *r->string_pages)))
    return damage(r, log_offset(r, at), "out of memory for the string table");
  char ***page = &r->string_pages[ev->name >> STRING_PAGE_BITS];
  if (!*page && !(*page = calloc(STRING_PAGE_SIZE, sizeof **page)))
    return damage(r, log_offset(r, at), "out of memory for the string table");
  char *copy = malloc((size_t)ev->text_len + 1);
  if (!copy)
    return damage(r, log_offset(r, at), "out of memory for the string table");
  memcpy(copy, ev->text, (size_t)ev->text_len + 1);
  char **slot = &(*page)[ev->name & (STRING_PAGE_SIZE - 1)];
  free(*slot);
  *slot = copy;
  if (ev->name >= r->string_ids_end)
    r->string_ids_end = ev->name + 1;
  return true;
}

/* Where each field's members lie in gs_trace_event (an array field: its pointer and count). */
typedef struct field_span {
  uint16_t offset[2], size[2];
} field_span;

#define SPAN(m)                                                                                    \
  {                                                                                                \
    {offsetof(gs_trace_event, m)}, { sizeof(((gs_trace_event *)0)->m) }                            \
  }
#define SPAN2(m, n)                                                                                \
  {                                                                                                \
    {offsetof(gs_trace_event, m), offsetof(gs_trace_event, n)}, {                                  \
      sizeof(((gs_trace_event *)0)->m), sizeof(((gs_trace_event *)0)->n)                           \
    }                                                                                              \
  }
static const field_span field_spans[GS__F_SINCE] = {
    [GS__F_TENSOR] = SPAN(tensor),
    [GS__F_TARGET] = SPAN(target),
    [GS__F_STORAGE] = SPAN(storage),
    [GS__F_SOURCE] = SPAN(source),
    [GS__F_NODE] = SPAN(node),
    [GS__F_SCOPE] = SPAN(scope),
    [GS__F_OUTER] = SPAN(outer),
    [GS__F_OBJECT] = SPAN(object),
    [GS__F_MODULE] = SPAN(module),
    [GS__F_NBYTES] = SPAN(nbytes),
    [GS__F_OFFSET] = SPAN(offset),
    [GS__F_VERSION] = SPAN(version),
    [GS__F_NAME] = SPAN(name),
    [GS__F_OP] = SPAN(op),
    [GS__F_DTYPE] = SPAN(dtype),
    [GS__F_ORIGIN] = SPAN(origin),
    [GS__F_HOLDER] = SPAN(holder),
    [GS__F_PREVIOUS_HOLDER] = SPAN(previous_holder),
    [GS__F_OWNER] = SPAN(owner),
    [GS__F_PREVIOUS_OWNER] = SPAN(previous_owner),
    [GS__F_OBJECT_KIND] = SPAN(object_kind),
    [GS__F_CODE] = SPAN(code),
    [GS__F_REQUIRES_GRAD] = SPAN(requires_grad),
    /* A shape's and strides' words are cleared by ndim (clear_geometry), not by the mask. */
    [GS__F_SHAPE] = SPAN(ndim),
    [GS__F_INPUTS] = SPAN2(inputs, n_inputs),
    [GS__F_SAVED] = SPAN2(saved, n_saved),
    [GS__F_PARTS] = SPAN2(parts, n_parts),
    [GS__F_VALUES] = SPAN2(values, n_values),
    [GS__F_TEXT] = SPAN2(text, text_len),
    [GS__F_CHILD] = SPAN(child),
    [GS__F_OPTIMIZER] = SPAN(optimizer),
    [GS__F_PARAMS] = SPAN2(params, n_params),
    [GS__F_ALLOC] = SPAN(alloc),
    [GS__F_FREED] = SPAN(freed),
    [GS__F_SHARED] = SPAN(shared),
    [GS__F_IN_PLACE] = SPAN(in_place),
    [GS__F_SITE] = SPAN(site),
    [GS__F_FRAMES] = SPAN2(frames, n_frames),
    [GS__F_ADDRESS] = SPAN(address),
    [GS__F_MEMORY] = SPAN(memory),
    [GS__F_PEER] = SPAN(peer),
    [GS__F_COUNT] = SPAN(count),
    [GS__F_RANK] = SPAN(rank),
    [GS__F_WORLD] = SPAN(world),
    [GS__F_RUN] = SPAN(run),
    [GS__F_BUCKET] = SPAN(bucket),
    [GS__F_COLLECTIVE] = SPAN(collective),
    [GS__F_WAITED] = SPAN(waited_ns),
};
#undef SPAN
#undef SPAN2

/* The struct's first words hold kind, thread, seq and time, which every decode sets. */
_Static_assert(sizeof(gs_trace_event) % 8 == 0 && sizeof(gs_trace_event) <= 128 * 8,
               "gs_trace_event is whole words, at most two masks' worth");
_Static_assert(offsetof(gs_trace_event, tensor) == 24, "the fields start at word 3");

/* Marks in words the 8-byte words of ev a kind's fields can write. A word marked holds only
 * fields (and padding) that are zero for any other kind, so zeroing it whole is safe. */
static void schema_words(const uint8_t *schema, uint64_t words[2]) {
  words[0] = words[1] = 0;
  for (const uint8_t *f = schema; *f != GS__F_END; f++) {
    if (*f >= GS__F_SINCE)
      continue; /* a GS__F_SINCE_MINOR mark */
    const field_span *span = &field_spans[*f];
    for (int i = 0; i < 2 && span->size[i]; i++)
      for (size_t w = span->offset[i] / 8; w <= (span->offset[i] + span->size[i] - 1u) / 8u; w++)
        words[w / 64] |= 1ull << (w % 64);
  }
}

/* Zeroes the words of ev that the last kind's fields could have written (kind_words[kind]),
 * so that every field the next kind does not carry reads as zero without clearing all of the
 * struct: with the switch over a schema's fields that this replaced, clearing was half the
 * decoder's time. */
static inline void clear_words(gs_trace_event *ev, const uint64_t words[2]) {
  /* memset, not a store through a uint64_t pointer: the fields are other types, and the
   * compiler may not order such a store before theirs. It compiles to one 8-byte store. */
  char *bytes = (char *)ev;
  for (int half = 0; half < 2; half++)
    for (uint64_t bits = words[half]; bits; bits &= bits - 1)
      memset(bytes + 8 * (half * 64 + __builtin_ctzll(bits)), 0, 8);
}

/* A storage event the log folded into tensor event `from`: made with from's seq, time and
 * thread, and marked derived. r->derived's other fields stay zero. */
static void derive_storage_event(gs_trace_reader *r, const gs_trace_event *from, gs_trace_kind kind,
                                 uint64_t storage, uint64_t nbytes) {
  gs_trace_event *out = &r->derived;
  out->kind = kind;
  out->thread = from->thread;
  out->seq = from->seq;
  out->time_ns = from->time_ns;
  out->storage = storage;
  out->source = 0;
  out->nbytes = nbytes;
  out->derived = true;
}

/* A 1.2 tensor_create with alloc N stands for storage_alloc {storage, N} then the create; a
 * tensor_dispose with freed S for the dispose then storage_free {S}. The first of the two is
 * returned now and the second queued for the next call, as a 1.1 log would have had
 * them (with seqs of their own there; the same seq here). 2.2's folds follow. */
static inline const gs_trace_event *unfold_events(gs_trace_reader *r) {
  const gs_trace_event *ev = &r->ev;
  /* Only a tensor_create carries alloc, and only a tensor_dispose freed. */
  if (ev->alloc) {
    derive_storage_event(r, ev, GS_TRACE_STORAGE_ALLOC, ev->storage, ev->alloc);
    r->queued = ev;
    return &r->derived;
  }
  /* A 2.2 clone's tensor_create with shared S stands for storage_share {storage, S, nbytes}
   * then the create. The share kept its own number, the one just before the create's (the
   * engine takes both at once), so it is delivered as the 2.1 log's own event was: not
   * derived, and the create's nbytes (the share's) reads 0 again. */
  if (ev->shared) {
    derive_storage_event(r, ev, GS_TRACE_STORAGE_SHARE, ev->storage, ev->nbytes);
    r->derived.seq = ev->seq - 1;
    r->derived.source = ev->shared;
    r->derived.derived = false;
    r->ev.nbytes = 0;
    r->queued = ev;
    return &r->derived;
  }
  if (ev->freed) {
    derive_storage_event(r, ev, GS_TRACE_STORAGE_FREE, ev->freed, 0);
    r->queued = &r->derived;
  }
  /* A 2.2 grad_accumulate with holder H stands for the owner_change of its target to H
   * (owner: its tensor), numbered just before it as the share above, then the accumulation
   * with those fields 0 again. */
  if (__builtin_expect(ev->kind == GS_TRACE_GRAD_ACCUMULATE, 0) && ev->holder) {
    gs_trace_event *out = &r->folded_owner;
    *out = (gs_trace_event){.kind = GS_TRACE_OWNER_CHANGE,
                            .thread = ev->thread,
                            .seq = ev->seq - 1,
                            .time_ns = ev->time_ns,
                            .object = ev->target,
                            .previous_holder = ev->previous_holder,
                            .previous_owner = ev->previous_owner,
                            .holder = ev->holder,
                            .owner = ev->tensor,
                            .site = ev->site};
    r->ev.holder = 0, r->ev.previous_holder = 0, r->ev.previous_owner = 0, r->ev.site = 0;
    r->queued = ev;
    return out;
  }
  return ev;
}

/* Zeroes the shape and strides the last event filled: only its ndim entries of each, where
 * clearing all of both arrays by the mask was a tenth of decoding a tensor event. */
static inline void clear_geometry(gs_trace_event *ev) {
  int n = ev->ndim; /* at most GS_MAX_DIMS: decode_fields checks it before setting it */
  for (int i = 0; i < n; i++)
    ev->shape[i] = 0, ev->strides[i] = 0;
}

typedef enum { DECODED, CHUNK_DONE, DECODE_DAMAGED } decode_result;

/* The next event of the open chunk. Unknown kinds (a newer minor version) are skipped by
 * their length, but their seq and time deltas still count: later events are relative. */
static DECODE_INLINE decode_result decode_event(gs_trace_reader *r, gs_trace_event *ev) {
  const uint8_t *payload = r->buf + r->start + GS__TRACE_CHUNK_HEADER_SIZE;
  const uint8_t *end = payload + r->payload_len;
  const uint8_t *p = payload + r->cursor;
  while (p < end) {
    const uint8_t *at = p;
    unsigned kind = *p++;
    uint64_t len;
    const uint8_t *body = get_u(p, end, &len);
    if (!body) {
      damage(r, log_offset(r, p), "malformed event length");
      return DECODE_DAMAGED;
    }
    if (len > (uint64_t)(end - body)) {
      damage(r, log_offset(r, at), "event length %" PRIu64 " runs past its chunk", len);
      return DECODE_DAMAGED;
    }
    const uint8_t *body_end = body + len;
    uint64_t dseq, dtime;
    if (!(p = get_u(body, body_end, &dseq)) || !(p = get_u(p, body_end, &dtime))) {
      damage(r, log_offset(r, at), "event too short for its seq and time deltas");
      return DECODE_DAMAGED;
    }
    /* Zigzag-decoded deltas added in unsigned arithmetic: wraps, never overflows. */
    r->seq += (dseq >> 1) ^ -(dseq & 1);
    r->time_ns += (dtime >> 1) ^ -(dtime & 1);
    const uint8_t *schema = kind < GS_TRACE_KIND_COUNT ? gs__trace_schema[kind] : NULL;
    if (!schema) {
      p = body_end;
      continue;
    }
    if (r->ev_words_of) {
      clear_geometry(ev); /* before its ndim is cleared */
      clear_words(ev, r->kind_words[r->ev_words_of - 1]);
    }
    r->ev_words_of = kind + 1;
    ev->kind = (gs_trace_kind)kind;
    ev->thread = r->thread;
    ev->seq = r->seq;
    ev->time_ns = r->time_ns;
    if (!decode_fields(r, ev, schema, p, body_end) ||
        (kind == GS_TRACE_STRING && !define_string(r, ev, at)))
      return DECODE_DAMAGED;
    if (kind == GS_TRACE_DIST_INIT) {
      r->have_run = true;
      r->rank = ev->rank;
      r->world = ev->world;
      r->run = ev->run;
    }
    r->cursor = (size_t)(body_end - payload);
    return DECODED;
  }
  return CHUNK_DONE;
}

gs_trace_status gs_trace_reader_next_ref(gs_trace_reader *r, const gs_trace_event **event) {
  /* Before anything else: the chunk of a queued event is still the open one. */
  if (r->queued) {
    *event = r->queued;
    r->queued = NULL;
    return GS_TRACE_EVENT;
  }
  for (;;) {
    switch (r->state) {
    case READ_DAMAGED:
      return GS_TRACE_DAMAGED;
    case READ_HEADER:
      if (!read_header(r))
        return r->state == READ_DAMAGED ? GS_TRACE_DAMAGED : GS_TRACE_NEED_MORE;
      break;
    case READ_CHUNKS:
      if (!r->in_chunk && !open_chunk(r))
        return r->state == READ_DAMAGED ? GS_TRACE_DAMAGED : GS_TRACE_NEED_MORE;
      switch (decode_event(r, &r->ev)) {
      case DECODED:
        *event = unfold_events(r);
        return GS_TRACE_EVENT;
      case DECODE_DAMAGED: return GS_TRACE_DAMAGED;
      case CHUNK_DONE: close_chunk(r); break;
      }
      break;
    }
  }
}

gs_trace_status gs_trace_reader_next(gs_trace_reader *r, gs_trace_event *event) {
  const gs_trace_event *ev = NULL;
  gs_trace_status status = gs_trace_reader_next_ref(r, &ev);
  if (status == GS_TRACE_EVENT)
    *event = *ev;
  return status;
}
