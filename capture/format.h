/* format.h: the bytes of the event log, shared by the writing side (capture/writer.c's
 * framing, the engine's recorder in engine/trace/) and the reader (capture/reader.c), and
 * nothing else: doc/trace-format.md is the prose version of this file.
 *
 *   file   = header (64 bytes) chunk*
 *   chunk  = "GSCK" u32 payload_len u32 crc u32 thread u64 base_seq u64 base_time
 *            payload, zero-padded to a multiple of 8
 *   event  = u8 kind, uvarint length (of what follows), svarint seq delta, svarint time delta,
 *            then the kind's fields in schema order (those a later minor version added
 *            at the end may be left out)
 * Integers are little-endian; varints are LEB128 (svarint: zigzag first). The crc is CRC-32C
 * of the chunk header's bytes 12..32 followed by the payload.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gradscope/trace-reader.h"

#define GS__TRACE_MAGIC "GRADSCOP"
#define GS__TRACE_HEADER_SIZE 64
#define GS__TRACE_CHUNK_MAGIC 0x4b435347u /* "GSCK" little-endian */
#define GS__TRACE_CHUNK_HEADER_SIZE 32
/* A chunk's payload is at most this: bounds what a reader allocates for a damaged length. */
#define GS__TRACE_MAX_PAYLOAD (1u << 22)
#define GS__TRACE_MAX_ARRAY 4096 /* elements in one array field */
#define GS__TRACE_MAX_TEXT 65536

_Static_assert(GS__TRACE_CHUNK_HEADER_SIZE % 8 == 0, "chunks stay 8-byte aligned");
_Static_assert(GS__TRACE_HEADER_SIZE % 8 == 0, "the first chunk starts 8-byte aligned");

/* Header layout (offsets): magic 0..8, u16 major 8, u16 minor 10, u8 little-endian flag 12,
 * u32 header size 16, u64 start realtime ns 24, u64 start monotonic ns 32, u32 pid 40,
 * u32 crc of bytes 0..60 at 60. */
#define GS__TRACE_HDR_MAJOR 8
#define GS__TRACE_HDR_MINOR 10
#define GS__TRACE_HDR_LITTLE 12
#define GS__TRACE_HDR_SIZE 16
#define GS__TRACE_HDR_REALTIME 24
#define GS__TRACE_HDR_MONOTONIC 32
#define GS__TRACE_HDR_PID 40
#define GS__TRACE_HDR_CRC 60

/* The fields an event kind carries, in order. */
typedef enum gs__field {
  GS__F_END = 0,
  GS__F_TENSOR,
  GS__F_TARGET,
  GS__F_STORAGE,
  GS__F_SOURCE,
  GS__F_NODE,
  GS__F_SCOPE,
  GS__F_OUTER,
  GS__F_OBJECT,
  GS__F_MODULE,
  GS__F_NBYTES,
  GS__F_OFFSET,
  GS__F_VERSION,
  GS__F_NAME,
  GS__F_OP,
  GS__F_DTYPE,
  GS__F_ORIGIN,
  GS__F_HOLDER,
  GS__F_PREVIOUS_HOLDER,
  GS__F_OWNER,
  GS__F_PREVIOUS_OWNER,
  GS__F_OBJECT_KIND,
  GS__F_CODE,
  GS__F_REQUIRES_GRAD,
  GS__F_SHAPE,   /* uvarint ndim, then ndim svarints */
  GS__F_STRIDES, /* ndim svarints (ndim from the shape before it) */
  GS__F_INPUTS,
  GS__F_SAVED,
  GS__F_PARTS,  /* uvarint count, then count uvarints */
  GS__F_VALUES, /* uvarint count, then count raw little-endian f64 */
  GS__F_TEXT,   /* uvarint length, then the bytes (no NUL) */
  GS__F_CHILD,
  GS__F_OPTIMIZER, /* since 1.1 */
  GS__F_PARAMS,    /* as INPUTS */
  GS__F_ALLOC,
  GS__F_FREED,   /* since 1.2 */
  GS__F_SITE,    /* since 1.3: a call-site id (0: none) */
  GS__F_FRAMES,  /* as INPUTS: return addresses, innermost first */
  GS__F_ADDRESS, /* a uvarint address */
  GS__F_MEMORY,  /* since 1.4: where a storage's bytes come from (gs_memory_origin) */
  GS__F_PEER,    /* since 1.4: the process a storage's bytes were received from (a pid) */
  GS__F_COUNT,   /* since 1.5: a uvarint count (objects a snapshot re-creates) */
  GS__F_RANK,
  GS__F_WORLD,      /* since 1.7: uvarints (dist_init) */
  GS__F_RUN,        /* since 1.7: a uvarint run id, the same on every rank of one run */
  GS__F_BUCKET,     /* since 1.7: an svarint DDP bucket index (-1: none) */
  GS__F_COLLECTIVE, /* since 1.7: a uvarint, the collective's number on its rank */
  GS__F_WAITED,     /* since 1.7: uvarint nanoseconds */
  GS__F_SHARED,     /* since 2.2: a storage id (compact, as storage) */
  GS__F_IN_PLACE,   /* since 2.3: a uvarint, bytes */
  GS__F_SINCE,      /* keep last: see GS__F_SINCE_MINOR */
} gs__field;

/* Not a field but a mark in a schema, before a field that minor version m added to a known
 * kind: a body may end at the mark (its writer was older, or left the field out as 0), and
 * the fields after it then read as 0; a body that ends anywhere else, inside a field or
 * before one without a mark, is damaged. Each such field gets a mark of its own. */
#define GS__F_SINCE_MINOR(m) (GS__F_SINCE + (m))
/* The schema level a writer of this version writes: every field 2.3 has. Format 2.0 re-typed
 * the id fields (below) and kept 1.9's fields and their GS__F_SINCE_MINOR marks, so the marks
 * keep 1.x's numbering: a field 2.m adds is marked 9 + m (2.2's shared: 11). */
#define GS__TRACE_SCHEMA_MINOR 12
_Static_assert(GS__F_SINCE_MINOR(GS__TRACE_SCHEMA_MINOR) <= UINT8_MAX, "schemas are bytes");

/* The schema of each kind (GS__F_END-terminated); NULL for kinds this version does not know,
 * which readers skip using the event's length. Fields a minor version adds to a known kind go
 * at its end, each after a GS__F_SINCE_MINOR mark. */
extern const uint8_t *const gs__trace_schema[GS_TRACE_KIND_COUNT];

/* ---- varints --------------------------------------------------------------------------- */

static inline uint8_t *gs__put_uvarint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline uint8_t *gs__put_svarint(uint8_t *p, int64_t v) {
  return gs__put_uvarint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* Reads a uvarint from [p, end); NULL if it runs past end, is longer than 10 bytes or holds
 * more than 64 bits (a 10th byte above 1 would otherwise be silently cut to its low bit). */
static inline const uint8_t *gs__get_uvarint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    uint8_t b = *p++;
    if (shift == 63 && b > 1)
      return NULL;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return p;
    }
  }
  return NULL;
}

static inline const uint8_t *gs__get_svarint(const uint8_t *p, const uint8_t *end, int64_t *v) {
  uint64_t u;
  p = gs__get_uvarint(p, end, &u);
  if (p)
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
  return p;
}

/* ---- compact ids (format 2) ------------------------------------------------------------
 * Since 2.0 the id fields are written against what the same chunk said before, so that a
 * chunk still decodes on its own and most ids take one byte (doc/trace-format.md, "Compact
 * ids"). Two kinds of ids:
 *
 * Tensor ids (tensor, target, object, a view's source, saved, parts, params) are a slot in
 * their low 32 bits and the slot's generation in the high 32: one uvarint v = slot << 2 | tag
 * (slot below 2^32), and for tag 3 a second uvarint, the generation (below 2^32):
 *   tag 0: generation 0 (id 0 is the byte 0)        tag 1: the previous id's generation
 *   tag 2: the previous id's generation + 1          tag 3: the generation follows
 * "Previous" is entry slot % GS__TRACE_ID_TABLE of a table that is all 0 at the chunk's start
 * and takes every non-zero tensor id written or read; tags 1 and 2 need it to hold the slot.
 *
 * Storage and node ids (storage, freed, storage_share's source; node, inputs) are counters:
 * one uvarint v, tag = v & 3, against the previous non-zero id of the same kind in the chunk
 * (0 at its start):
 *   tag 0: the id is v >> 2 (id 0 is the byte 0)      tag 1: previous + zigzag-decoded v >> 2
 *   tag 2: v is 2 and the id follows as a uvarint     tag 3: damage */
#define GS__TRACE_ID_TABLE 1024u
typedef struct gs__trace_ids {
  uint64_t tensor[GS__TRACE_ID_TABLE];
  uint64_t storage, node; /* the previous non-zero storage and node id */
} gs__trace_ids;

static inline void gs__trace_ids_reset(gs__trace_ids *ids) { memset(ids, 0, sizeof *ids); }

static inline uint8_t *gs__put_id(uint8_t *p, uint64_t *table, uint64_t id) {
  uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
  if (id == 0) {
    *p = 0;
    return p + 1;
  }
  uint64_t *entry = &table[slot % GS__TRACE_ID_TABLE];
  uint64_t prev = *entry;
  *entry = id;
  uint64_t v = (uint64_t)slot << 2;
  /* Expected: within a chunk a slot comes back with the same or the next generation, and
   * the layout that says so keeps the writers' common path straight (instruction cache). */
  if (__builtin_expect(prev != 0 && (uint32_t)prev == slot, 1)) {
    uint32_t d = gen - (uint32_t)(prev >> 32);
    if (__builtin_expect(d <= 1, 1))
      return gs__put_uvarint(p, v | (1 + d));
  }
  if (gen == 0)
    return gs__put_uvarint(p, v);
  p = gs__put_uvarint(p, v | 3);
  return gs__put_uvarint(p, gen);
}

/* A counter id against *prev: the delta when it is small, else the id itself. */
static inline uint8_t *gs__put_counter_id(uint8_t *p, uint64_t *prev, uint64_t id) {
  if (id == 0) {
    *p = 0;
    return p + 1;
  }
  int64_t d = (int64_t)(id - *prev);
  uint64_t zz = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
  *prev = id;
  if (__builtin_expect(zz < id && zz < (UINT64_C(1) << 62), 1))
    return gs__put_uvarint(p, zz << 2 | 1);
  if (id < (UINT64_C(1) << 62))
    return gs__put_uvarint(p, id << 2);
  *p = 2;
  return gs__put_uvarint(p + 1, id);
}

static inline void gs__put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gs__put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t gs__get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t gs__get_u64(const uint8_t *p) {
  return (uint64_t)gs__get_u32(p) | (uint64_t)gs__get_u32(p + 4) << 32;
}

/* CRC-32C (Castagnoli), continuing from crc (0 to start). */
uint32_t gs__crc32c(uint32_t crc, const void *data, size_t n);

/* writer.c: a log's header (GS__TRACE_HEADER_SIZE bytes: this format version, when recording
 * started, the recording process), with its CRC. */
void gs__trace_file_header(uint8_t *header, uint64_t start_monotonic_ns,
                           uint64_t start_realtime_ns, uint32_t pid);
/* writer.c: a chunk's header (GS__TRACE_CHUNK_HEADER_SIZE bytes: magic, length, CRC of the
 * header's rest and the payload, thread, base seq and time) for len bytes of payload. */
void gs__trace_chunk_header(uint8_t *header, uint32_t thread, uint64_t base_seq,
                            uint64_t base_time, const uint8_t *payload, size_t len);

/* Encodes e's fields for its kind into p (room for gs__trace_max_event_size(e) bytes): the
 * part after the length (seq and time deltas included), as a writer of format 1.`minor` does
 * (ids NULL) or of 2.0 with 1.`minor`'s fields (ids: the chunk's tables)
 * (tests and tools build logs with it; the engine's writer has an encoder per kind, events.c):
 * fields a later minor version added are left out, and so are trailing ones that are 0 (a
 * reader takes them as 0 when missing). Returns the end. */
uint8_t *gs__trace_encode_body_as(uint8_t *p, const gs_trace_event *e, int64_t seq_delta,
                                  int64_t time_delta, unsigned minor, gs__trace_ids *ids);

/* The same without the deltas: e's fields only (a writer that puts the deltas itself). ids:
 * the chunk's compact-id tables (format 2, updated), or NULL for format 1's plain ids. */
uint8_t *gs__trace_encode_fields(uint8_t *p, const gs_trace_event *e, unsigned minor,
                                 gs__trace_ids *ids);

/* An upper bound on the encoded size of e. */
size_t gs__trace_max_event_size(const gs_trace_event *e);
