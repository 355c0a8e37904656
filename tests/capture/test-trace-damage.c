/* test-trace-damage.c: cut, flipped and hand-damaged event logs. The reader delivers every
 * event before the damage, then stops with what is wrong and at which byte, never crashing and
 * never delivering a wrong event; a cut tail is NEED_MORE plus truncated(), and reading resumes
 * when the rest arrives. Sizes read from the log are refused before they size anything. */
#include "trace-test-util.h"

/* A log of major version `major` whose second chunk is payload. */
static void check_damaged_payload_of(unsigned major, GByteArray *payload, size_t at,
                                     const char *what) {
  tw_log log = {0};
  tw_header(&log, (uint16_t)major, 0, 0, 1);
  gs_trace_event first = sample(GS_TRACE_SCOPE_END);
  tw_chunk(&log, 1, &first, 1);
  uint64_t payload_start = log.len + GS__TRACE_CHUNK_HEADER_SIZE;
  tw_chunk_raw(&log, 1, 0, 0, payload->data, payload->len);
  for (size_t step = 1; step <= log.len; step += log.len - 1) {
    read_result res = read_log(log.data, log.len, step);
    g_assert_cmpint(res.status, ==, GS_TRACE_DAMAGED);
    g_assert_cmpuint(res.events->len, ==, 2);
    g_assert_cmpint(((gs_trace_event *)res.events->pdata[1])->kind, ==, GS_TRACE_MARK);
    uint64_t offset = 0;
    const char *error = gs_trace_reader_error(res.reader, &offset);
    g_assert_nonnull(error);
    if (!strstr(error, what))
      g_error("error '%s' does not mention '%s'", error, what);
    g_assert_cmpuint(offset, ==, payload_start + at);
    g_autofree char *where = g_strdup_printf("at byte %" G_GUINT64_FORMAT, offset);
    g_assert_nonnull(strstr(error, where));
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    read_result_clear(&res);
  }
  tw_free(&log);
  g_byte_array_unref(payload);
}

static void check_damaged_payload(GByteArray *payload, size_t at, const char *what) {
  check_damaged_payload_of(1, payload, at, what);
}

static GByteArray *payload_with(unsigned kind, GByteArray *body) {
  GByteArray *payload = g_byte_array_new();
  put_sample(payload, GS_TRACE_MARK, 1); /* a good event first: 5 bytes */
  g_assert_cmpuint(payload->len, ==, 5);
  put_event(payload, kind, body);
  return payload;
}

/* One damaged event body: its bytes are the deltas (unless bare), head, the varint uv (when
 * has_uv), then tail; the reader must stop at byte `at` of the payload (the good event before
 * it is 5 bytes, the deltas 2) saying `what`. */
typedef struct bad_body {
  unsigned kind;
  gboolean bare;
  const char *head;
  guint n_head;
  gboolean has_uv;
  uint64_t uv;
  const char *tail;
  guint n_tail;
  size_t at;
  const char *what;
} bad_body;

/* A string literal as bytes and their count (NULs inside included). */
#define BYTES(s) s, sizeof(s) - 1
#define UV(v) .has_uv = TRUE, .uv = (v)

static void check_bad_bodies(const bad_body *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const bad_body *c = &cases[i];
    GByteArray *b = c->bare ? g_byte_array_new() : body_new(0, 0);
    if (c->head)
      put_bytes(b, c->head, c->n_head);
    if (c->has_uv)
      put_uv(b, c->uv);
    if (c->tail)
      put_bytes(b, c->tail, c->n_tail);
    check_damaged_payload(payload_with(c->kind, b), c->at, c->what);
  }
}

static const bad_body damaged_events[] = {
    /* A field runs past the event's length (storage_alloc with only its storage). */
    {GS_TRACE_STORAGE_ALLOC, UV(9), .at = 5 + 2 + 3, .what = "runs past its length"},
    /* A varint longer than 10 bytes. */
    {GS_TRACE_STORAGE_FREE, .head = BYTES("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
     .at = 5 + 2 + 2, .what = "malformed varint"},
    /* A 10-byte varint whose value does not fit in 64 bits. */
    {GS_TRACE_STORAGE_FREE, .head = BYTES("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
     .at = 5 + 2 + 2, .what = "malformed varint"},
    /* An event too short for its deltas. */
    {GS_TRACE_STORAGE_FREE, .bare = TRUE, .head = BYTES("\x02"), .at = 5, .what = "too short"},
    /* A 32-bit field (a string id) beyond 32 bits. */
    {GS_TRACE_MARK, UV(UINT64_C(1) << 32), .at = 5 + 2 + 2, .what = "does not fit in 32 bits"},
    /* requires_grad is a byte, 0 or 1. */
    {GS_TRACE_TENSOR_CREATE, .head = BYTES("\x01\x01\x00\x00\x00\x00\x02"), .at = 5 + 2 + 2 + 6,
     .what = "requires_grad"},
    /* A field 1.2 added (a dispose's freed) may be missing from a body's end, not cut short;
     * and a body may not stop before a field 1.0 had (the dispose's name). */
    {GS_TRACE_TENSOR_DISPOSE, .head = BYTES("\x2a\x06\x80"), .at = 5 + 2 + 2 + 2,
     .what = "runs past its length"},
    {GS_TRACE_TENSOR_DISPOSE, UV(42), .at = 5 + 2 + 2 + 1, .what = "runs past its length"},
    /* A string id beyond the table. */
    {GS_TRACE_STRING, UV(1u << 24), .tail = BYTES("\x01x"), .at = 5, .what = "string id 16777216"},
};

static void test_damaged_events(void) {
  /* The event's length runs past the chunk. */
  GByteArray *p = g_byte_array_new();
  put_sample(p, GS_TRACE_MARK, 1);
  put_bytes(p, "\x05\x09\x00\x00\x01", 5);
  check_damaged_payload(p, 5, "runs past its chunk");
  check_bad_bodies(damaged_events, G_N_ELEMENTS(damaged_events));
}

/* Counts and lengths read from the log are checked against the limits before anything is
 * sized by them. */
static const bad_body oversize_counts[] = {
    {GS_TRACE_TENSOR_CREATE, .head = BYTES("\x01\x01\x00\x00\x00\x00\x01\x00"), UV(GS_MAX_DIMS + 1),
     .at = 5 + 2 + 2 + 8, .what = "ndim 9"},
    {GS_TRACE_NODE_CREATE, .head = BYTES("\x01\x01\x01"), UV(GS__TRACE_MAX_ARRAY + 1),
     .at = 5 + 2 + 2 + 3, .what = "exceeds 4096"},
    {GS_TRACE_NODE_CREATE, .head = BYTES("\x01\x01\x01\x00"), UV(UINT64_MAX), .at = 5 + 2 + 2 + 4,
     .what = "exceeds 4096"},
    /* Within the limit, but more than the event holds. */
    {GS_TRACE_COMPOSITE_CREATE, .head = BYTES("\x01\x01"), UV(4000), .at = 5 + 2 + 2 + 2,
     .what = "runs past its length"},
    {GS_TRACE_VALUES, .head = BYTES("\x01"), UV(GS__TRACE_MAX_ARRAY + 1), .at = 5 + 2 + 2 + 1,
     .what = "values exceed"},
    {GS_TRACE_VALUES, .head = BYTES("\x01\x02"), .at = 5 + 2 + 2 + 1, .what = "run past"},
    {GS_TRACE_ERROR, .head = BYTES("\x01"), UV(GS__TRACE_MAX_TEXT + 1), .at = 5 + 2 + 2 + 1,
     .what = "exceeds 65536"},
    {GS_TRACE_ERROR, .head = BYTES("\x01\x05xy"), .at = 5 + 2 + 2 + 1,
     .what = "runs past its length"},
};

static void test_oversize_counts_rejected(void) {
  check_bad_bodies(oversize_counts, G_N_ELEMENTS(oversize_counts));
}

/* ---- format 2's compact ids ----------------------------------------------------------------- */

/* A 2.x event of kind whose fields start with the uvarints a (and b, when has_b). */
static GByteArray *id_payload(unsigned kind, uint64_t a, gboolean has_b, uint64_t b) {
  GByteArray *body = body_new(1, 0);
  put_uv(body, a);
  if (has_b)
    put_uv(body, b);
  put_uv(body, 0); /* the kind's next field (a name, nbytes) */
  return payload_with(kind, body);
}

/* Ids that refer to what the chunk has not said, or that do not fit, are damage at the id. */
static void test_compact_id_damage(void) {
  const size_t at = 5 + 2 + 2; /* the good mark, kind and length, the deltas */
  check_damaged_payload_of(2, id_payload(GS_TRACE_TENSOR_DISPOSE, 5 << 2 | 1, FALSE, 0), at,
                           "tensor_dispose event: tensor id refers to the previous id of slot 5, "
                           "but this chunk has none");
  check_damaged_payload_of(2, id_payload(GS_TRACE_TENSOR_DISPOSE, 5 << 2 | 2, FALSE, 0), at,
                           "previous id of slot 5");
  check_damaged_payload_of(2, id_payload(GS_TRACE_TENSOR_DISPOSE, (uint64_t)1 << 34, FALSE, 0), at,
                           "tensor id's slot 4294967296 does not fit in 32 bits");
  check_damaged_payload_of(2,
                           id_payload(GS_TRACE_TENSOR_DISPOSE, 5 << 2 | 3, TRUE, (uint64_t)1 << 32),
                           at + 1, "tensor id's generation 4294967296 does not fit in 32 bits");
  check_damaged_payload_of(2, id_payload(GS_TRACE_STORAGE_FREE, 3, FALSE, 0), at,
                           "storage_free event: storage id has tag 3");
  check_damaged_payload_of(2, id_payload(GS_TRACE_STORAGE_FREE, 6, FALSE, 0), at,
                           "storage id: escape byte 6 is not 2");
  check_damaged_payload_of(2, id_payload(GS_TRACE_NODE_RELEASE, 7, FALSE, 0), at,
                           "node_release event: node id has tag 3");
  /* The same bytes in a 1.x log are plain ids, and fine. */
  GByteArray *payload = id_payload(GS_TRACE_TENSOR_DISPOSE, 5 << 2 | 1, FALSE, 0);
  tw_log log = {0};
  tw_header(&log, 1, 9, 0, 1);
  tw_chunk_raw(&log, 1, 0, 0, payload->data, payload->len);
  read_result res = read_log(log.data, log.len, log.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
  g_assert_cmpuint(res.events->len, ==, 2);
  g_assert_cmpuint(((gs_trace_event *)res.events->pdata[1])->tensor, ==, 5 << 2 | 1);
  read_result_clear(&res);
  tw_free(&log);
  g_byte_array_unref(payload);
}

/* A chunk's ids refer within it only: the tables start empty at every chunk, so an id that
 * refers to a slot the previous chunk named is damage, and the same id named again in the
 * chunk reads right. */
static void test_compact_ids_reset_per_chunk(void) {
  gs_trace_event e = {.kind = GS_TRACE_TENSOR_DISPOSE, .seq = 1, .tensor = (uint64_t)7 << 32 | 5};
  tw_log log = {0};
  tw_header(&log, 2, 0, 0, 1);
  tw_chunk(&log, 1, &e, 1);
  GByteArray *payload = g_byte_array_new();
  GByteArray *body = body_new(1, 0);
  put_uv(body, 5 << 2 | 3); /* slot 5, generation 7: said in full */
  put_uv(body, 7);
  put_uv(body, 0);
  put_event(payload, GS_TRACE_TENSOR_DISPOSE, body);
  body = body_new(1, 0);
  put_uv(body, 5 << 2 | 2); /* the next generation of slot 5 */
  put_uv(body, 0);
  put_event(payload, GS_TRACE_TENSOR_DISPOSE, body);
  tw_chunk_raw(&log, 1, 1, 0, payload->data, payload->len);
  size_t good = log.len;
  g_byte_array_set_size(payload, 0);
  body = body_new(1, 0);
  put_uv(body, 5 << 2 | 1); /* slot 5 again: but this chunk has not named it */
  put_uv(body, 0);
  put_event(payload, GS_TRACE_TENSOR_DISPOSE, body);
  tw_chunk_raw(&log, 1, 3, 0, payload->data, payload->len);
  read_result res = read_log(log.data, log.len, 1);
  g_assert_cmpint(res.status, ==, GS_TRACE_DAMAGED);
  g_assert_cmpuint(res.events->len, ==, 3);
  g_assert_cmpuint(((gs_trace_event *)res.events->pdata[0])->tensor, ==, (uint64_t)7 << 32 | 5);
  g_assert_cmpuint(((gs_trace_event *)res.events->pdata[1])->tensor, ==, (uint64_t)7 << 32 | 5);
  g_assert_cmpuint(((gs_trace_event *)res.events->pdata[2])->tensor, ==, (uint64_t)8 << 32 | 5);
  uint64_t offset = 0;
  g_assert_nonnull(strstr(gs_trace_reader_error(res.reader, &offset), "previous id of slot 5"));
  g_assert_cmpuint(offset, ==, good + GS__TRACE_CHUNK_HEADER_SIZE + 4);
  read_result_clear(&res);
  tw_free(&log);
  g_byte_array_unref(payload);
}

/* ---- header and chunks -------------------------------------------------------------------- */

/* Reads bytes whole and one at a time: both must be DAMAGED at offset with `what`. */
static void check_damaged_log(const uint8_t *data, size_t len, guint n_events, uint64_t offset,
                              const char *what) {
  for (size_t step = 1; step <= len; step += len - 1) {
    read_result res = read_log(data, len, step);
    g_assert_cmpint(res.status, ==, GS_TRACE_DAMAGED);
    g_assert_cmpuint(res.events->len, ==, n_events);
    uint64_t at = 0;
    const char *error = gs_trace_reader_error(res.reader, &at);
    if (!strstr(error, what))
      g_error("error '%s' does not mention '%s'", error, what);
    g_assert_cmpuint(at, ==, offset);
    read_result_clear(&res);
    if (step == len)
      break;
  }
}

static void rewrite_header_crc(tw_log *log) {
  gs__put_u32(log->data + GS__TRACE_HDR_CRC, gs__crc32c(0, log->data, GS__TRACE_HDR_CRC));
}

static void test_header_checks(void) {
  gs_trace_event e = sample(GS_TRACE_SCOPE_END);
  tw_log log = {0};
  tw_header(&log, 3, 0, 0, 1);
  tw_chunk(&log, 1, &e, 1);
  check_damaged_log(log.data, log.len, 0, 8,
                    "unsupported major version 3; this reader reads 1 to 2");
  log.data[GS__TRACE_HDR_MAJOR] = 0;
  check_damaged_log(log.data, log.len, 0, 8, "unsupported major version 0");
  log.data[GS__TRACE_HDR_MAJOR] = 1;
  /* The version is checked before the CRC: a newer major may lay its header out otherwise. */
  log.data[GS__TRACE_HDR_MAJOR + 1] = 1;
  check_damaged_log(log.data, log.len, 0, 8, "unsupported major version 257");
  log.data[GS__TRACE_HDR_MAJOR + 1] = 0;
  check_damaged_log(log.data, log.len, 0, 0, "header CRC mismatch");
  rewrite_header_crc(&log);
  read_result ok = read_log(log.data, log.len, log.len);
  g_assert_cmpuint(ok.events->len, ==, 1);
  read_result_clear(&ok);

  log.data[3] ^= 0x20;
  check_damaged_log(log.data, log.len, 0, 0, "bad magic");
  log.data[3] ^= 0x20;
  log.data[GS__TRACE_HDR_LITTLE] = 0;
  rewrite_header_crc(&log);
  check_damaged_log(log.data, log.len, 0, GS__TRACE_HDR_LITTLE, "little-endian");
  log.data[GS__TRACE_HDR_LITTLE] = 1;
  gs__put_u32(log.data + GS__TRACE_HDR_SIZE, 60);
  rewrite_header_crc(&log);
  check_damaged_log(log.data, log.len, 0, GS__TRACE_HDR_SIZE, "header size 60");
  tw_free(&log);

  /* A bigger header (a newer minor's fields) is skipped. */
  tw_header(&log, 1, 3, 0, 1);
  gs__put_u32(log.data + GS__TRACE_HDR_SIZE, 80);
  rewrite_header_crc(&log);
  tw_append(&log, "new header fields", 16);
  tw_chunk(&log, 1, &e, 1);
  ok = read_log(log.data, log.len, 1);
  g_assert_cmpint(ok.status, ==, GS_TRACE_NEED_MORE);
  g_assert_cmpuint(ok.events->len, ==, 1);
  read_result_clear(&ok);
  tw_free(&log);

  /* Not a log at all: told at once, before a whole header arrives. */
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, "GRADX", 5);
  gs_trace_event ev;
  g_assert_cmpint(gs_trace_reader_next(r, &ev), ==, GS_TRACE_DAMAGED);
  gs_trace_reader_free(r);
}

static void test_chunk_checks(void) {
  gs_trace_event e = sample(GS_TRACE_SCOPE_END);
  tw_log log = {0};
  tw_header(&log, 1, 0, 0, 1);
  tw_chunk(&log, 1, &e, 1);
  size_t second = log.len;
  tw_chunk(&log, 1, &e, 1);
  log.data[second + 1] = 'X';
  check_damaged_log(log.data, log.len, 1, second, "bad chunk magic");
  log.data[second + 1] = 'S';
  log.data[second + GS__TRACE_CHUNK_HEADER_SIZE] ^= 1;
  check_damaged_log(log.data, log.len, 1, second, "chunk CRC mismatch");
  log.data[second + GS__TRACE_CHUNK_HEADER_SIZE] ^= 1;
  log.data[second + 12] ^= 1; /* the thread is covered by the CRC too */
  check_damaged_log(log.data, log.len, 1, second, "chunk CRC mismatch");
  tw_free(&log);
}

/* A damaged payload length is refused from the chunk header alone: the reader never waits
 * for, or buffers towards, more than GS__TRACE_MAX_PAYLOAD. */
static void test_oversize_chunk_rejected_before_allocation(void) {
  static const uint32_t lengths[] = {GS__TRACE_MAX_PAYLOAD + 1, UINT32_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(lengths); i++) {
    tw_log log = {0};
    tw_header(&log, 1, 0, 0, 1);
    uint8_t h[8];
    gs__put_u32(h, GS__TRACE_CHUNK_MAGIC);
    gs__put_u32(h + 4, lengths[i]);
    tw_append(&log, h, sizeof h);
    check_damaged_log(log.data, log.len, 0, GS__TRACE_HEADER_SIZE + 4, "exceeds the limit");
    tw_free(&log);
  }
  /* The limit itself is allowed: the reader waits for the rest. */
  tw_log log = {0};
  tw_header(&log, 1, 0, 0, 1);
  uint8_t h[8];
  gs__put_u32(h, GS__TRACE_CHUNK_MAGIC);
  gs__put_u32(h + 4, GS__TRACE_MAX_PAYLOAD);
  tw_append(&log, h, sizeof h);
  read_result res = read_log(log.data, log.len, log.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
  uint64_t at = 0;
  g_assert_true(gs_trace_reader_truncated(res.reader, &at));
  g_assert_cmpuint(at, ==, GS__TRACE_HEADER_SIZE);
  read_result_clear(&res);
  tw_free(&log);
}

/* Once damaged, always damaged: later good chunks are not read, fed bytes are dropped. */
static void test_damage_is_final(void) {
  GArray *events = every_kind();
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(size_t));
  tw_log log = make_log(events, 8, 1, ends);
  size_t second = g_array_index(ends, size_t, 0);
  log.data[second + 8] ^= 0x40;
  read_result res = read_log(log.data, log.len, log.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_DAMAGED);
  assert_events_equal(events, res.events, 8);
  gs_trace_reader_feed(res.reader, log.data, log.len);
  gs_trace_event e;
  g_assert_cmpint(gs_trace_reader_next(res.reader, &e), ==, GS_TRACE_DAMAGED);
  uint64_t at = 0;
  g_assert_nonnull(strstr(gs_trace_reader_error(res.reader, &at), "CRC"));
  g_assert_cmpuint(at, ==, second);
  read_result_clear(&res);
  tw_free(&log);
  g_array_unref(ends);
  g_array_unref(events);
}

/* ---- cut and flipped logs ----------------------------------------------------------------- */

/* A small log: header, then chunks of 3, 1 and 5 events across two threads. */
static tw_log small_log(GArray *events, GArray *chunk_ends) {
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, 0, 123, 77);
  static const guint sizes[] = {3, 1, 5};
  guint next = 0;
  for (size_t c = 0; c < G_N_ELEMENTS(sizes); c++) {
    for (guint i = 0; i < sizes[c]; i++) {
      gs_trace_event e = sample((gs_trace_kind)(1 + (next * 7) % (GS_TRACE_KIND_COUNT - 1)));
      e.thread = (uint32_t)c % 2 + 1;
      e.seq = 10 + next;
      e.time_ns = 1000 + 10 * next;
      g_array_append_val(events, e);
      next++;
    }
    tw_chunk(&log, (uint32_t)c % 2 + 1, &g_array_index(events, gs_trace_event, next - sizes[c]),
             sizes[c]);
    size_t end = log.len;
    g_array_append_val(chunk_ends, end);
  }
  return log;
}

/* Events in the chunks that end at or before byte `at`. */
static guint events_before(GArray *chunk_ends, size_t at) {
  static const guint sizes_sum[] = {3, 4, 9};
  guint n = 0;
  for (guint c = 0; c < chunk_ends->len; c++)
    if (g_array_index(chunk_ends, size_t, c) <= at)
      n = sizes_sum[c];
  return n;
}

/* Cut anywhere, a log reads as every whole chunk's events, then NEED_MORE with the cut
 * reported as a truncated tail; the rest, fed later, reads on as if never cut. */
static void test_truncation_at_every_byte(void) {
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(size_t));
  tw_log log = small_log(events, ends);
  for (size_t cut = 0; cut <= log.len; cut++) {
    read_result res = read_log(log.data, cut, cut ? cut : 1);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    guint n = events_before(ends, cut);
    assert_events_equal(events, res.events, n);
    size_t whole = cut < GS__TRACE_HEADER_SIZE ? 0 : GS__TRACE_HEADER_SIZE;
    for (guint c = 0; c < ends->len; c++)
      if (g_array_index(ends, size_t, c) <= cut)
        whole = g_array_index(ends, size_t, c);
    uint64_t at = 0;
    g_assert_cmpint(gs_trace_reader_truncated(res.reader, &at), ==, cut > whole);
    if (cut > whole)
      g_assert_cmpuint(at, ==, whole);
    g_assert_null(gs_trace_reader_error(res.reader, NULL));
    gs_trace_reader_feed(res.reader, log.data + cut, log.len - cut);
    drain(&res);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(events, res.events, events->len);
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    read_result_clear(&res);
  }
  tw_free(&log);
  g_array_unref(ends);
  g_array_unref(events);
}

/* Every byte flipped in turn (three ways): the reader never delivers a wrong event. It reads
 * every chunk before the flip and then reports damage at or before the flipped byte; a flip in
 * chunk padding changes nothing; a flip in the last chunk's payload length may instead make
 * the chunk look unfinished (a truncated tail), which a live reader cannot tell apart. */
static void test_flipped_bytes(void) {
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(size_t));
  tw_log log = small_log(events, ends);
  static const uint8_t flips[] = {0x01, 0x80, 0xff};
  for (size_t pos = 0; pos < log.len; pos++) {
    size_t chunk_start = GS__TRACE_HEADER_SIZE, chunk_end = 0, payload_end = 0;
    for (guint c = 0; c < ends->len; c++) {
      chunk_end = g_array_index(ends, size_t, c);
      if (pos < chunk_end)
        break;
      chunk_start = chunk_end;
    }
    if (pos >= GS__TRACE_HEADER_SIZE)
      payload_end = chunk_start + GS__TRACE_CHUNK_HEADER_SIZE +
                    gs__get_u32(log.data + chunk_start + 4);
    bool in_padding = pos >= GS__TRACE_HEADER_SIZE && pos >= payload_end;
    bool in_length = pos >= GS__TRACE_HEADER_SIZE && pos >= chunk_start + 4 &&
                     pos < chunk_start + 8;
    guint before = pos < GS__TRACE_HEADER_SIZE ? 0 : events_before(ends, chunk_start);
    for (size_t f = 0; f < G_N_ELEMENTS(flips); f++) {
      log.data[pos] ^= flips[f];
      read_result res = read_log(log.data, log.len, 64);
      if (in_padding) {
        g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
        assert_events_equal(events, res.events, events->len);
        g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
      } else if (res.status == GS_TRACE_DAMAGED) {
        assert_events_equal(events, res.events, before);
        uint64_t at = UINT64_MAX;
        g_assert_nonnull(gs_trace_reader_error(res.reader, &at));
        g_assert_cmpuint(at, <=, pos);
        g_assert_cmpuint(at, >=, pos < GS__TRACE_HEADER_SIZE ? 0 : chunk_start);
      } else {
        g_assert_true(in_length);
        assert_events_equal(events, res.events, before);
        uint64_t at = 0;
        g_assert_true(gs_trace_reader_truncated(res.reader, &at));
        g_assert_cmpuint(at, ==, chunk_start);
      }
      read_result_clear(&res);
      log.data[pos] ^= flips[f];
    }
  }
  tw_free(&log);
  g_array_unref(ends);
  g_array_unref(events);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-reader/damage/events", test_damaged_events);
  g_test_add_func("/trace-reader/damage/oversize-counts", test_oversize_counts_rejected);
  g_test_add_func("/trace-reader/damage/compact-ids", test_compact_id_damage);
  g_test_add_func("/trace-reader/damage/compact-ids-per-chunk", test_compact_ids_reset_per_chunk);
  g_test_add_func("/trace-reader/damage/header", test_header_checks);
  g_test_add_func("/trace-reader/damage/chunks", test_chunk_checks);
  g_test_add_func("/trace-reader/damage/oversize-chunk",
                  test_oversize_chunk_rejected_before_allocation);
  g_test_add_func("/trace-reader/damage/is-final", test_damage_is_final);
  g_test_add_func("/trace-reader/truncation-at-every-byte", test_truncation_at_every_byte);
  g_test_add_func("/trace-reader/flipped-bytes", test_flipped_bytes);
  return g_test_run();
}
