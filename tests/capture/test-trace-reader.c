/* test-trace-reader.c: the event-log reader reads back what the format's own encoder wrote
 * (logs built in memory by trace-writer-test.c, no recorder): every kind with every field,
 * in any split of the bytes, across threads, with the string table and the rules for logs of
 * a newer minor version and of older ones (a committed 1.1 log among them), and the storage
 * events 1.2 folds into tensor events. test-trace-damage.c covers cut and damaged logs. */
#include <gradscope/memory.h>

#include "trace-test-util.h"

/* ---- round trips -------------------------------------------------------------------------- */

static void test_every_kind_has_a_schema(void) {
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++) {
    g_assert_nonnull(gs__trace_schema[k]);
    g_assert_cmpstr(gs_trace_kind_name((gs_trace_kind)k), !=, "unknown");
  }
}

/* CRC-32C's published check value, and that a CRC can be continued over pieces (the chunk
 * CRC covers the header's tail, then the payload). */
static void test_crc32c(void) {
  g_assert_cmphex(gs__crc32c(0, "123456789", 9), ==, 0xe3069283u);
  g_assert_cmphex(gs__crc32c(gs__crc32c(0, "1234", 4), "56789", 5), ==, 0xe3069283u);
  g_assert_cmphex(gs__crc32c(0, "", 0), ==, 0);
}

static void test_round_trip_every_kind(void) {
  GArray *events = every_kind();
  for (guint per_chunk = 1; per_chunk <= events->len; per_chunk += events->len - 1) {
    tw_log log = make_log(events, per_chunk, 1, NULL);
    read_result res = read_log(log.data, log.len, log.len);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(events, res.events, events->len);
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    g_assert_null(gs_trace_reader_error(res.reader, NULL));
    g_assert_cmpstr(gs_trace_reader_string(res.reader, 5), ==, "MulBackward");
    uint32_t major = 0, minor = 99, pid = 0;
    uint64_t realtime = 0;
    g_assert_true(gs_trace_reader_header(res.reader, &major, &minor, &realtime, &pid));
    g_assert_cmpuint(major, ==, GS_TRACE_VERSION_MAJOR);
    g_assert_cmpuint(minor, ==, GS_TRACE_VERSION_MINOR);
    g_assert_cmpuint(realtime, ==, 1700000000000000000u);
    g_assert_cmpuint(pid, ==, 4242);
    read_result_clear(&res);
    tw_free(&log);
  }
  g_array_unref(events);
}

/* Whatever the event struct holds in fields its kind does not carry, they read back as 0. */
static void test_round_trip_zeroes_other_fields(void) {
  GArray *events = every_kind();
  GArray *noisy = g_array_copy(events);
  static const uint64_t junk_array[] = {99, 98};
  static const double junk_values[] = {6.0};
  for (guint i = 0; i < noisy->len; i++) {
    gs_trace_event *e = &g_array_index(noisy, gs_trace_event, i);
#define JUNK(member, value)                                                                  \
  if (!e->member)                                                                            \
    e->member = value;
    JUNK(tensor, 1001)
    JUNK(target, 1002) JUNK(storage, 1003) JUNK(source, 1004) JUNK(node, 1005) JUNK(scope, 1006)
        JUNK(outer, 1007) JUNK(object, 1008) JUNK(module, 1009) JUNK(child, 1017)
            JUNK(optimizer, 1018) JUNK(offset, -1011) JUNK(version, 1012) JUNK(name, 1013)
                JUNK(op, 1014) JUNK(dtype, 3) JUNK(origin, 2) JUNK(owner, 1015) JUNK(object_kind, 7)
                    JUNK(code, 8) JUNK(requires_grad, true) JUNK(derived, true)
        /* Where the kind carries them, these would add storage events (see below). */
        if (e->kind != GS_TRACE_TENSOR_CREATE) {
      JUNK(alloc, 1019)
      JUNK(shared, 1021)
      JUNK(nbytes, 1010) /* a create's is its folded share's (2.2) */
    }
    if (e->kind != GS_TRACE_TENSOR_DISPOSE)
      JUNK(freed, 1020)
    if (e->kind != GS_TRACE_GRAD_ACCUMULATE) { /* its owner_change (2.2) */
      JUNK(holder, 4) JUNK(previous_holder, 5) JUNK(previous_owner, 1016)
    }
#undef JUNK
    if (!e->ndim) {
      e->ndim = 2;
      e->shape[0] = 5, e->shape[1] = 6;
      e->strides[0] = 6, e->strides[1] = 1;
    }
    if (!e->n_inputs)
      e->inputs = junk_array, e->n_inputs = 2;
    if (!e->n_saved)
      e->saved = junk_array, e->n_saved = 2;
    if (!e->n_parts)
      e->parts = junk_array, e->n_parts = 2;
    if (!e->n_params)
      e->params = junk_array, e->n_params = 2;
    if (!e->n_values)
      e->values = junk_values, e->n_values = 1;
    if (!e->text)
      e->text = "junk", e->text_len = 4;
  }
  tw_log log = make_log(noisy, 4, 1, NULL);
  for (guint i = 0; i < events->len; i++)
    g_array_index(events, gs_trace_event, i).thread = 1;
  read_result res = read_log(log.data, log.len, log.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
  assert_events_equal(events, res.events, events->len);
  read_result_clear(&res);
  tw_free(&log);
  g_array_unref(noisy);
  g_array_unref(events);
}

/* Bytes written into the reader's own room (gs_trace_reader_feed_space, then _fed), in any
 * split and with more room asked than used, read as the same events as bytes fed. */
static void test_feed_space_reads_the_same(void) {
  GArray *events = every_kind();
  tw_log log = make_log(events, 5, 2, NULL);
  static const size_t steps[] = {1, 3, 64, 4096};
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    read_result res = {gs_trace_reader_new(), g_ptr_array_new_with_free_func(g_free), 0};
    GPtrArray *got = g_ptr_array_new_with_free_func(g_free);
    for (size_t at = 0; at < log.len; at += steps[s]) {
      size_t n = MIN(steps[s], log.len - at);
      uint8_t *room = gs_trace_reader_feed_space(res.reader, n + 100);
      g_assert_nonnull(room);
      memcpy(room, log.data + at, n);
      gs_trace_reader_fed(res.reader, n);
      const gs_trace_event *e;
      while ((res.status = gs_trace_reader_next_ref(res.reader, &e)) == GS_TRACE_EVENT) {
        g_assert_cmpuint(got->len, <, events->len);
        assert_event_equal(&g_array_index(events, gs_trace_event, got->len), e);
        g_ptr_array_add(got, g_memdup2(e, sizeof *e));
      }
    }
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    g_assert_cmpuint(got->len, ==, events->len);
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    g_ptr_array_unref(got);
    read_result_clear(&res);
  }
  tw_free(&log);
  g_array_unref(events);
}

/* The reader clears only the fields the kind before could have set (clear_words): after every
 * kind, every other kind still reads with nothing left over, through both calls. */
static void test_every_pair_of_kinds(void) {
  GArray *kinds = every_kind();
  GArray *events = g_array_new(FALSE, FALSE, sizeof(gs_trace_event));
  for (guint i = 0; i < kinds->len; i++)
    for (guint j = 0; j < kinds->len; j++) {
      g_array_append_val(events, g_array_index(kinds, gs_trace_event, i));
      g_array_append_val(events, g_array_index(kinds, gs_trace_event, j));
    }
  for (guint i = 0; i < events->len; i++) /* deltas from one event to the next */
    g_array_index(events, gs_trace_event, i).seq = i + 1;
  tw_log log = make_log(events, 64, 1, NULL);
  read_result res = read_log(log.data, log.len, log.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
  assert_events_equal(events, res.events, events->len);
  /* The same through the reader's own event. */
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, log.data, log.len);
  const gs_trace_event *e = NULL;
  guint n = 0;
  while (gs_trace_reader_next_ref(r, &e) == GS_TRACE_EVENT) {
    g_assert_cmpuint(n, <, events->len);
    assert_event_equal(&g_array_index(events, gs_trace_event, n), e);
    n++;
  }
  g_assert_cmpuint(n, ==, events->len);
  gs_trace_reader_free(r);
  read_result_clear(&res);
  tw_free(&log);
  g_array_unref(events);
  g_array_unref(kinds);
}

/* Any split of the bytes reads the same events: a live socket delivers whatever it has. */
static void test_any_split_reads_the_same(void) {
  GArray *events = every_kind();
  tw_log log = make_log(events, 5, 2, NULL);
  static const size_t steps[] = {1, 2, 3, 7, 31, 64, 4096};
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    read_result res = read_log(log.data, log.len, steps[s]);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(events, res.events, events->len);
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    read_result_clear(&res);
  }
  tw_free(&log);
  g_array_unref(events);
}

/* A log much longer than the reader's buffer, fed in odd pieces: consumed chunks are dropped
 * and the rest slides down, without losing or reordering a byte. */
static void test_long_log_in_pieces(void) {
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  for (int i = 0; i < 20000; i++) {
    gs_trace_event e = sample((gs_trace_kind)(1 + i % (GS_TRACE_KIND_COUNT - 1)));
    e.seq = (uint64_t)i;
    e.time_ns = 10 * (uint64_t)i;
    g_array_append_val(events, e);
  }
  tw_log log = make_log(events, 97, 1, NULL);
  g_assert_cmpuint(log.len, >, 200000);
  static const size_t steps[] = {333, 4093, 65536};
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    read_result res = read_log(log.data, log.len, steps[s]);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(events, res.events, events->len);
    read_result_clear(&res);
  }
  tw_free(&log);
  g_array_unref(events);
}

/* Format 2's compact ids (format.h) round-trip at their edges: every tag of a tensor id (a
 * slot's table entry taken by another slot, generations that wrap), and of a storage and a
 * node id (deltas both ways, the id itself, the escape for ids of 2^62 and more), in events
 * and in arrays; and the micro-step's common cases take one byte. */
static void test_compact_ids_round_trip(void) {
  static const uint64_t tensors[] = {
      0, 5, 5, (uint64_t)1 << 32 | 5, (uint64_t)2 << 32 | 5, (uint64_t)2 << 32 | 1029,
      (uint64_t)3 << 32 | 5, (uint64_t)UINT32_MAX << 32 | 7, 7, UINT64_MAX, (uint64_t)9 << 32 | 1029,
      UINT32_MAX};
  static const uint64_t counters[] = {0, 1, 4446154, 4446153, 4446160, 3, (uint64_t)1 << 62,
                                      ((uint64_t)1 << 62) - 1, UINT64_MAX, 2, (uint64_t)1 << 63,
                                      5};
  const size_t n = G_N_ELEMENTS(tensors);
  g_assert_cmpuint(G_N_ELEMENTS(counters), ==, n);
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  for (size_t i = 0; i < n; i++) {
    gs_trace_event e = {.kind = GS_TRACE_TENSOR_DISPOSE, .seq = 1 + 3 * i,
                        .tensor = tensors[i], .freed = counters[i]};
    g_array_append_val(events, e);
    e = (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .seq = 2 + 3 * i, .node = counters[i],
                         .tensor = tensors[n - 1 - i], .n_inputs = (uint32_t)(n - i),
                         .inputs = counters + i, .n_saved = (uint32_t)(i + 1), .saved = tensors};
    g_array_append_val(events, e);
    e = (gs_trace_event){.kind = GS_TRACE_STORAGE_SHARE, .seq = 3 + 3 * i,
                         .storage = counters[n - 1 - i], .source = counters[i], .nbytes = 8};
    g_array_append_val(events, e);
  }
  for (guint per_chunk = 1; per_chunk <= events->len; per_chunk += events->len - 1) {
    tw_log log = make_log(events, per_chunk, 1, NULL);
    read_result res = read_log(log.data, log.len, log.len);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    guint got = 0;
    for (guint i = 0; i < res.events->len; i++) {
      const gs_trace_event *e = res.events->pdata[i];
      if (e->derived)
        continue; /* the storage_free a tensor_dispose's freed stands for */
      assert_event_equal(&g_array_index(events, gs_trace_event, got), e);
      got++;
    }
    g_assert_cmpuint(got, ==, events->len);
    read_result_clear(&res);
    tw_free(&log);
  }
  g_array_unref(events);

  /* One byte each: a slot's tensor again and its next one, a storage near the previous. */
  gs__trace_ids ids = {0};
  uint8_t buf[32], *p = buf;
  p = gs__put_id(p, ids.tensor, (uint64_t)940531 << 32 | 8);
  size_t first = (size_t)(p - buf);
  g_assert_cmpuint(first, ==, 1 + 3); /* said in full once */
  g_assert_cmpuint(gs__put_id(p, ids.tensor, (uint64_t)940531 << 32 | 8) - p, ==, 1);
  g_assert_cmpuint(gs__put_id(p, ids.tensor, (uint64_t)940532 << 32 | 8) - p, ==, 1);
  g_assert_cmpuint(gs__put_counter_id(p, &ids.storage, 4446154) - p, ==, 4);
  g_assert_cmpuint(gs__put_counter_id(p, &ids.storage, 4446160) - p, ==, 1);
  g_assert_cmpuint(gs__put_counter_id(p, &ids.storage, 4446150) - p, ==, 1);
}

/* Chunks of several threads interleave in the file; each event takes its chunk's thread and
 * seq runs globally across them. */
static void test_threads_interleaved(void) {
  GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 0, 1);
  uint64_t seq = 1;
  for (int round = 0; round < 4; round++) {
    for (uint32_t thread = 1; thread <= 3; thread++) {
      gs_trace_event chunk[3];
      for (int i = 0; i < 3; i++) {
        chunk[i] = sample(GS_TRACE_INPLACE_WRITE);
        chunk[i].thread = thread;
        chunk[i].tensor = 100 * thread + (uint64_t)i;
        chunk[i].seq = seq + 3 * (uint64_t)i; /* the other threads' events fall between */
        chunk[i].time_ns = chunk[i].seq * 10;
        g_array_append_val(want, chunk[i]);
      }
      seq++;
      tw_chunk(&log, thread, chunk, 3);
    }
    seq += 6;
  }
  read_result res = read_log(log.data, log.len, 13);
  assert_events_equal(want, res.events, want->len);
  read_result_clear(&res);
  tw_free(&log);
  g_array_unref(want);
}

/* seq and time are deltas from the previous event in the chunk: negative ones, and jumps
 * across the whole 64-bit range, come back exactly. */
static void test_seq_and_time_deltas(void) {
  static const uint64_t seqs[] = {5, 4, UINT64_MAX, 0, UINT64_C(1) << 63, 6};
  static const uint64_t times[] = {UINT64_MAX, 0, 17, 16, 1u << 31, UINT64_C(1) << 62};
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  for (size_t i = 0; i < G_N_ELEMENTS(seqs); i++) {
    gs_trace_event e = sample(GS_TRACE_MARK);
    e.seq = seqs[i];
    e.time_ns = times[i];
    g_array_append_val(events, e);
  }
  tw_log log = make_log(events, 6, 9, NULL);
  read_result res = read_log(log.data, log.len, 5);
  assert_events_equal(events, res.events, events->len);
  read_result_clear(&res);
  tw_free(&log);
  g_array_unref(events);
}

static gs_trace_event string_event(uint32_t id, const char *text, uint64_t seq) {
  return (gs_trace_event){.kind = GS_TRACE_STRING, .name = id, .text = text,
                          .text_len = (uint32_t)strlen(text), .seq = seq, .time_ns = seq};
}

/* STRING events fill the table as they are read; a later definition replaces; ids never
 * defined (or beyond the table) read as "". */
static void test_string_table(void) {
  gs_trace_event events[] = {
      string_event(1, "alpha", 1),          string_event(4095, "page end", 2),
      string_event(4096, "next page", 3),   string_event((1u << 24) - 1, "last", 4),
      string_event(1, "beta", 5),           string_event(2, "", 6),
  };
  tw_log log = {0};
  tw_header(&log, 1, 0, 0, 1);
  tw_chunk(&log, 1, events, G_N_ELEMENTS(events));
  gs_trace_reader *r = gs_trace_reader_new();
  g_assert_cmpstr(gs_trace_reader_string(r, 1), ==, "");
  gs_trace_reader_feed(r, log.data, log.len);
  gs_trace_event e;
  g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_EVENT);
  g_assert_cmpstr(gs_trace_reader_string(r, 1), ==, "alpha");
  g_assert_cmpstr(e.text, ==, "alpha");
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT)
    ;
  g_assert_cmpstr(gs_trace_reader_string(r, 1), ==, "beta");
  g_assert_cmpstr(gs_trace_reader_string(r, 4095), ==, "page end");
  g_assert_cmpstr(gs_trace_reader_string(r, 4096), ==, "next page");
  g_assert_cmpstr(gs_trace_reader_string(r, (1u << 24) - 1), ==, "last");
  g_assert_cmpstr(gs_trace_reader_string(r, 2), ==, "");
  g_assert_cmpstr(gs_trace_reader_string(r, 3), ==, "");
  g_assert_cmpstr(gs_trace_reader_string(r, 1u << 24), ==, "");
  g_assert_cmpstr(gs_trace_reader_string(r, UINT32_MAX), ==, "");
  gs_trace_reader_free(r);
  tw_free(&log);
}

/* Events of a newer minor version: unknown kinds are skipped by their length, but their seq
 * and time deltas still count; known kinds with extra trailing fields keep the known ones. */
static void newer_minor_version(unsigned major) {
  gs__trace_ids ids = {0};
  GByteArray *payload = g_byte_array_new();
  put_sample_ids(payload, GS_TRACE_STORAGE_FREE, 1, major >= 2 ? &ids : NULL);
  GByteArray *unknown = body_new(10, 100);
  put_bytes(unknown, "\xff\xff\xff\x01 whatever a newer writer puts here", 38);
  put_event(payload, GS_TRACE_KIND_COUNT, unknown);
  put_event(payload, 255, body_new(5, 50));
  put_event(payload, 0, body_new(1, 1));
  GByteArray *longer = body_new(2, 3);
  put_uv(longer, major >= 2 ? 77 << 2 : 77); /* storage (2.x: slot 77, generation 0) */
  put_bytes(longer, "\x80\x01\xff\x7f", 4); /* a field this version does not know */
  put_event(payload, GS_TRACE_STORAGE_FREE, longer);
  put_sample(payload, GS_TRACE_SCOPE_END, 1);

  tw_log log = {0};
  /* 1.x minors go on from 1.9; 2.x's from 2.0 */
  unsigned minor = (major >= 2 ? GS_TRACE_VERSION_MINOR : GS__TRACE_SCHEMA_MINOR) + 7;
  tw_header(&log, (uint16_t)major, (uint16_t)minor, 0, 1);
  tw_chunk_raw(&log, 3, 1000, 5000, payload->data, payload->len);
  for (size_t step = 1; step <= log.len; step += log.len - 1) {
    read_result res = read_log(log.data, log.len, step);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    g_assert_cmpuint(res.events->len, ==, 3);
    const gs_trace_event *first = res.events->pdata[0], *second = res.events->pdata[1];
    const gs_trace_event *third = res.events->pdata[2];
    g_assert_cmpuint(first->seq, ==, 1001);
    g_assert_cmpuint(first->storage, ==, UINT64_MAX);
    g_assert_cmpint(second->kind, ==, GS_TRACE_STORAGE_FREE);
    g_assert_cmpuint(second->storage, ==, 77);
    g_assert_cmpuint(second->seq, ==, 1001 + 10 + 5 + 1 + 2);
    g_assert_cmpuint(second->time_ns, ==, 5000 + 100 + 50 + 1 + 3);
    g_assert_cmpuint(second->thread, ==, 3);
    g_assert_cmpint(third->kind, ==, GS_TRACE_SCOPE_END);
    g_assert_cmpuint(third->seq, ==, second->seq + 1);
    uint32_t got_major = 0, got_minor = 0;
    g_assert_true(gs_trace_reader_header(res.reader, &got_major, &got_minor, NULL, NULL));
    g_assert_cmpuint(got_major, ==, major);
    g_assert_cmpuint(got_minor, ==, minor);
    read_result_clear(&res);
  }
  tw_free(&log);
  g_byte_array_unref(payload);
}

static void test_newer_minor_version(void) {
  newer_minor_version(1);
  newer_minor_version(GS_TRACE_VERSION_MAJOR);
}

/* ---- format versions ---------------------------------------------------------------------- */

/* The storage event the reader derives from tensor event `from`. */
static gs_trace_event derived_from(const gs_trace_event *from, gs_trace_kind kind,
                                   uint64_t storage, uint64_t nbytes) {
  return (gs_trace_event){.kind = kind, .thread = from->thread, .seq = from->seq,
                          .time_ns = from->time_ns, .storage = storage, .nbytes = nbytes,
                          .derived = true};
}

/* Since 1.2 a writer folds a fresh storage's allocation into the tensor_create it was made
 * for (alloc) and a storage's release into the tensor_dispose that freed it (freed). The
 * reader unfolds them into the storage_alloc just before the create and the storage_free just
 * after the dispose that a 1.1 log had, marked derived, with the tensor event's seq, time and
 * thread: at a chunk's first and last event too, in any split of the bytes. */
static void test_folded_storage_events(void) {
  gs_trace_event created = sample(GS_TRACE_TENSOR_CREATE);
  created.storage = 5, created.alloc = 64;
  gs_trace_event view = sample(GS_TRACE_TENSOR_CREATE);
  view.tensor = 43, view.storage = 5, view.source = created.tensor; /* alloc 0: storage existed */
  gs_trace_event view_gone = sample(GS_TRACE_TENSOR_DISPOSE);
  view_gone.tensor = view.tensor; /* freed 0: the storage lives on */
  gs_trace_event last_gone = sample(GS_TRACE_TENSOR_DISPOSE);
  last_gone.tensor = created.tensor, last_gone.freed = 5;
  gs_trace_event short_lived = created;
  short_lived.tensor = 44, short_lived.storage = 6, short_lived.alloc = UINT64_C(1) << 40;
  gs_trace_event short_gone = sample(GS_TRACE_TENSOR_DISPOSE);
  short_gone.tensor = 44, short_gone.freed = 6;
  gs_trace_event mark = sample(GS_TRACE_MARK);
  gs_trace_event chunk1[] = {created, view, view_gone, last_gone};
  gs_trace_event chunk2[] = {short_lived, short_gone, mark};
  for (guint i = 0; i < G_N_ELEMENTS(chunk1); i++)
    chunk1[i].thread = 4, chunk1[i].seq = 10 + i, chunk1[i].time_ns = 1000 + 10 * i;
  for (guint i = 0; i < G_N_ELEMENTS(chunk2); i++)
    chunk2[i].thread = 4, chunk2[i].seq = 20 + i, chunk2[i].time_ns = 2000 + 10 * i;
  tw_log log = {0};
  tw_header(&log, 1, 2, 0, 1);
  tw_chunk(&log, 4, chunk1, G_N_ELEMENTS(chunk1));
  size_t chunk2_at = log.len;
  tw_chunk(&log, 4, chunk2, G_N_ELEMENTS(chunk2));

  const gs_trace_event want_events[] = {
      derived_from(&chunk1[0], GS_TRACE_STORAGE_ALLOC, 5, 64),
      chunk1[0], chunk1[1], chunk1[2], chunk1[3],
      derived_from(&chunk1[3], GS_TRACE_STORAGE_FREE, 5, 0),
      derived_from(&chunk2[0], GS_TRACE_STORAGE_ALLOC, 6, UINT64_C(1) << 40),
      chunk2[0], chunk2[1],
      derived_from(&chunk2[1], GS_TRACE_STORAGE_FREE, 6, 0),
      chunk2[2],
  };
  GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  g_array_append_vals(want, want_events, G_N_ELEMENTS(want_events));
  static const size_t steps[] = {1, 7, SIZE_MAX};
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    read_result res = read_log(log.data, log.len, MIN(steps[s], log.len));
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(want, res.events, want->len);
    g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
    read_result_clear(&res);
  }

  /* A derived event belongs to its tensor event's chunk, which stays open until it is out:
   * a model re-reading that chunk finds it there again. */
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, log.data, log.len);
  gs_trace_event e;
  for (guint i = 0; i < want->len; i++) {
    g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_EVENT);
    uint64_t offset = 0;
    g_assert_true(gs_trace_reader_chunk(r, &offset, NULL));
    g_assert_cmpuint(offset, ==, i < 6 ? GS__TRACE_HEADER_SIZE : chunk2_at);
  }
  g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_NEED_MORE);
  gs_trace_reader_free(r);
  g_array_unref(want);
  tw_free(&log);
}

/* A log of this version with n events of thread 1 in one chunk, numbered 10, 12, 14... (a gap
 * before each, for what a fold leaves out) and 10 ns apart; their thread, seq and time set. */
static tw_log log_of_gapped(gs_trace_event *events, guint n) {
  for (guint i = 0; i < n; i++)
    events[i].thread = 1, events[i].seq = 10 + 2 * i, events[i].time_ns = 1000 + 10 * i;
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 0, 1);
  tw_chunk(&log, 1, events, n);
  return log;
}

/* The log read in splits of 1, 7 and all its bytes gives the events want. */
static void assert_log_reads_as(const tw_log *log, GArray *want) {
  static const size_t steps[] = {1, 7, SIZE_MAX};
  for (size_t s = 0; s < G_N_ELEMENTS(steps); s++) {
    read_result res = read_log(log->data, log->len, MIN(steps[s], log->len));
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    assert_events_equal(want, res.events, want->len);
    read_result_clear(&res);
  }
}

/* Since 2.2 a clone's storage_share is folded into the clone's tensor_create (shared, and the
 * share's nbytes). The reader delivers the share just before the create with the number the
 * engine gave it (the create's - 1), the create's time and thread, and not derived: the event
 * a 2.1 log held. The create keeps shared and reads nbytes 0; a create with nothing folded
 * (shared 0) is delivered alone. */
static void test_folded_clone_share(void) {
  gs_trace_event base = sample(GS_TRACE_TENSOR_CREATE);
  base.storage = 5, base.alloc = 64;
  gs_trace_event clone = sample(GS_TRACE_TENSOR_CREATE);
  clone.tensor = 43, clone.storage = 6, clone.source = base.tensor;
  clone.origin = 3, clone.shared = 5, clone.nbytes = 64;
  gs_trace_event view = sample(GS_TRACE_TENSOR_CREATE);
  view.tensor = 44, view.storage = 6, view.source = clone.tensor;
  gs_trace_event events[] = {base, clone, view};
  tw_log log = log_of_gapped(events, G_N_ELEMENTS(events));

  gs_trace_event share = {.kind = GS_TRACE_STORAGE_SHARE,
                          .thread = 1,
                          .seq = events[1].seq - 1,
                          .time_ns = events[1].time_ns,
                          .storage = 6,
                          .source = 5,
                          .nbytes = 64};
  gs_trace_event clone_read = events[1];
  clone_read.nbytes = 0;
  const gs_trace_event want_events[] = {derived_from(&events[0], GS_TRACE_STORAGE_ALLOC, 5, 64),
                                        events[0], share, clone_read, events[2]};
  GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  g_array_append_vals(want, want_events, G_N_ELEMENTS(want_events));
  assert_log_reads_as(&log, want);
  g_array_unref(want);
  tw_free(&log);
}

/* Since 2.2 the owner_change that makes a gradient its leaf's is folded into the
 * grad_accumulate after it (holder, previous_holder, previous_owner, site). The reader delivers
 * it just before, numbered one below, not derived, and the accumulation with those fields 0; an
 * accumulation into a gradient the leaf had (holder 0) is delivered alone. */
static void test_folded_gradient_owner_change(void) {
  gs_trace_event owned = sample(GS_TRACE_GRAD_ACCUMULATE);
  owned.tensor = 7, owned.target = 9;
  owned.holder = GS_TRACE_HELD_BY_TENSOR, owned.previous_holder = GS_TRACE_HELD_BY_ENGINE;
  owned.previous_owner = 0, owned.site = 3;
  gs_trace_event again = sample(GS_TRACE_GRAD_ACCUMULATE);
  again.tensor = 7, again.target = 9;
  gs_trace_event from_scope = owned;
  from_scope.target = 11, from_scope.previous_holder = GS_TRACE_HELD_BY_SCOPE;
  from_scope.previous_owner = 12;
  gs_trace_event events[] = {owned, again, from_scope};
  tw_log log = log_of_gapped(events, G_N_ELEMENTS(events));

  GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  for (guint i = 0; i < G_N_ELEMENTS(events); i++) {
    gs_trace_event accumulated = events[i];
    if (events[i].holder) {
      gs_trace_event change = {.kind = GS_TRACE_OWNER_CHANGE,
                               .thread = 1,
                               .seq = events[i].seq - 1,
                               .time_ns = events[i].time_ns,
                               .object = events[i].target,
                               .holder = events[i].holder,
                               .previous_holder = events[i].previous_holder,
                               .previous_owner = events[i].previous_owner,
                               .owner = events[i].tensor,
                               .site = events[i].site};
      g_array_append_val(want, change);
      accumulated.holder = accumulated.previous_holder = 0;
      accumulated.previous_owner = 0, accumulated.site = 0;
    }
    g_array_append_val(want, accumulated);
  }
  assert_log_reads_as(&log, want);
  g_array_unref(want);
  tw_free(&log);
}

/* Fields a minor version added at the end of a kind are left out by older writers: such a
 * shorter body (1.0 and 1.1 tensor_create and tensor_dispose without alloc, freed and site;
 * 1.2 without site) reads with them as 0, and so with no storage events derived before 1.2. */
static void test_older_writers_shorter_bodies(void) {
  GArray *events = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  gs_trace_event created = sample(GS_TRACE_TENSOR_CREATE);
  created.alloc = 96;
  gs_trace_event disposed = sample(GS_TRACE_TENSOR_DISPOSE);
  disposed.freed = 9;
  disposed.site = 5;
  g_array_append_val(events, created);
  g_array_append_val(events, disposed);
  for (guint i = 0; i < events->len; i++) {
    gs_trace_event *e = &g_array_index(events, gs_trace_event, i);
    e->thread = 1, e->seq = 7 + i, e->time_ns = 70 + i;
  }
  for (unsigned minor = 0; minor <= 2; minor++) {
    /* One byte shorter each per version's field: the 1.3 site, and before 1.2 alloc or freed
     * too, are not there at all. */
    uint8_t old_event[512], new_event[512];
    for (guint i = 0; i < events->len; i++) {
      const gs_trace_event *e = &g_array_index(events, gs_trace_event, i);
      g_assert_cmpuint(gs__trace_max_event_size(e), <=, sizeof old_event);
      size_t old_len = (size_t)(tw_event_as(old_event, e, 0, 0, minor) - old_event);
      size_t new_len = (size_t)(tw_event(new_event, e, 0, 0) - new_event);
      g_assert_cmpuint(old_len + 1 + (minor < 2), ==, new_len);
    }
    tw_log log = {0};
    tw_header(&log, 1, (uint16_t)minor, 0, 1);
    tw_chunk_as(&log, 1, &g_array_index(events, gs_trace_event, 0), events->len, minor);
    read_result res = read_log(log.data, log.len, 3);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    GArray *want = g_array_copy(events);
    for (guint i = 0; i < want->len; i++)
      g_array_index(want, gs_trace_event, i).site = 0;
    if (minor < 2) {
      g_array_index(want, gs_trace_event, 0).alloc = 0;
      g_array_index(want, gs_trace_event, 1).freed = 0;
    }
    for (guint i = res.events->len; i-- > 0;) /* 1.2's derived storage events: tested above */
      if (((gs_trace_event *)res.events->pdata[i])->derived)
        g_ptr_array_remove_index(res.events, i);
    assert_events_equal(want, res.events, want->len);
    g_array_unref(want);
    read_result_clear(&res);
    tw_free(&log);
  }
  g_array_unref(events);
}

/* 1.4's storage fields: where the bytes come from and who sent them. A 1.4 body carries them;
 * a 1.3 writer's body ends before them and reads with both 0 (the engine's memory). */
static void test_storage_memory_since_1_4(void) {
  gs_trace_event events[2] = {sample(GS_TRACE_STORAGE_ALLOC),
                              sample(GS_TRACE_STORAGE_MATERIALISE)};
  events[0].memory = GS_MEMORY_RECEIVED;
  events[0].peer = 4242;
  events[1].memory = GS_MEMORY_SHARED;
  for (guint i = 0; i < 2; i++)
    events[i].thread = 1, events[i].seq = 3 + i, events[i].time_ns = 30 + i;
  for (unsigned minor = 3; minor <= 4; minor++) {
    tw_log log = {0};
    tw_header(&log, 1, (uint16_t)minor, 0, 1);
    tw_chunk_as(&log, 1, events, 2, minor);
    read_result res = read_log(log.data, log.len, 2);
    g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
    GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
    g_array_append_vals(want, events, 2);
    if (minor < 4) {
      g_array_index(want, gs_trace_event, 0).memory = 0;
      g_array_index(want, gs_trace_event, 0).peer = 0;
      g_array_index(want, gs_trace_event, 1).memory = 0;
    }
    assert_events_equal(want, res.events, 2);
    g_array_unref(want);
    read_result_clear(&res);
    tw_free(&log);
  }
  /* Byte for byte: 1.4 adds one varint per field that is not 0 (4242 takes two bytes). */
  uint8_t now[512], older[512];
  size_t now_len = (size_t)(tw_event(now, &events[0], 0, 0) - now);
  size_t older_len = (size_t)(tw_event_as(older, &events[0], 0, 0, 3) - older);
  g_assert_cmpuint(now_len, ==, older_len + 1 + 2);
}

/* 1.2 and 1.3 fields that are 0 cost no byte at the end of a body: the encoder leaves it out, so a
 * tensor event with nothing folded into it is as long as in 1.1. Written out as a 0 byte (a
 * writer may), it reads the same. */
static void test_zero_trailing_fields_left_out(void) {
  gs_trace_event events[] = {sample(GS_TRACE_TENSOR_CREATE), sample(GS_TRACE_TENSOR_DISPOSE)};
  events[0].site = events[1].site = 0; /* 1.3's trailing field: 0 too */
  uint8_t now[512], older[512];
  for (guint i = 0; i < G_N_ELEMENTS(events); i++) {
    size_t now_len = (size_t)(tw_event(now, &events[i], 0, 0) - now);
    size_t older_len = (size_t)(tw_event_as(older, &events[i], 0, 0, 1) - older);
    g_assert_cmpmem(now, now_len, older, older_len);
  }
  GByteArray *payload = g_byte_array_new();
  GByteArray *body = body_new(1, 0);
  put_bytes(body, "\x2a\x06\x00", 3); /* tensor 42, reason 6, freed 0 */
  put_event(payload, GS_TRACE_TENSOR_DISPOSE, body);
  tw_log log = {0};
  tw_header(&log, 1, 2, 0, 1);
  tw_chunk_raw(&log, 1, 0, 0, payload->data, payload->len);
  read_result res = read_log(log.data, log.len, log.len);
  GArray *want = g_array_new(FALSE, TRUE, sizeof(gs_trace_event));
  gs_trace_event disposed = events[1];
  disposed.seq = 1, disposed.thread = 1;
  g_array_append_val(want, disposed);
  assert_events_equal(want, res.events, want->len);
  g_array_unref(want);
  read_result_clear(&res);
  tw_free(&log);
  g_byte_array_unref(payload);
}

/* The 1.1 log tests/data/trace-1.1.gstrace, recorded from examples/tensor-tour by the 1.1
 * recorder (every storage allocation and release an event of its own), reads whole: the
 * events `gradscope dump` shows for it, counted by kind, none of them derived. */
static void test_version_1_1_log(void) {
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(g_test_get_filename(G_TEST_DIST, "data", "trace-1.1.gstrace",
                                                        NULL),
                                    &contents, &len, NULL));
  read_result res = read_log((const uint8_t *)contents, len, 4096);
  g_assert_cmpint(res.status, ==, GS_TRACE_NEED_MORE);
  g_assert_null(gs_trace_reader_error(res.reader, NULL));
  g_assert_false(gs_trace_reader_truncated(res.reader, NULL));
  uint32_t major = 0, minor = 0;
  g_assert_true(gs_trace_reader_header(res.reader, &major, &minor, NULL, NULL));
  g_assert_cmpuint(major, ==, 1);
  g_assert_cmpuint(minor, ==, 1);

  static const guint want[GS_TRACE_KIND_COUNT] = {
      [GS_TRACE_STRING] = 32,         [GS_TRACE_STORAGE_ALLOC] = 220,
      [GS_TRACE_STORAGE_SHARE] = 2,   [GS_TRACE_STORAGE_MATERIALISE] = 1,
      [GS_TRACE_STORAGE_FREE] = 222,  [GS_TRACE_TENSOR_CREATE] = 235,
      [GS_TRACE_TENSOR_DISPOSE] = 235, [GS_TRACE_INPLACE_WRITE] = 4,
      [GS_TRACE_OWNER_CHANGE] = 1,    [GS_TRACE_NODE_CREATE] = 6,
      [GS_TRACE_NODE_RELEASE] = 6,    [GS_TRACE_BACKWARD_BEGIN] = 1,
      [GS_TRACE_BACKWARD_END] = 1,    [GS_TRACE_GRAD_ACCUMULATE] = 1,
      [GS_TRACE_ERROR] = 2,
  };
  guint got[GS_TRACE_KIND_COUNT] = {0};
  for (guint i = 0; i < res.events->len; i++) {
    const gs_trace_event *e = res.events->pdata[i];
    g_assert_cmpint(e->kind, >, 0);
    g_assert_cmpint(e->kind, <, GS_TRACE_KIND_COUNT);
    got[e->kind]++;
    g_assert_cmpuint(e->thread, ==, 1);
    /* Nothing folded in 1.1, so nothing derived. */
    g_assert_false(e->derived);
    g_assert_cmpuint(e->alloc, ==, 0);
    g_assert_cmpuint(e->freed, ==, 0);
  }
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (got[k] != want[k])
      g_error("%s: %u events, not %u", gs_trace_kind_name((gs_trace_kind)k), got[k], want[k]);
  g_assert_cmpuint(res.events->len, ==, 969);
  const gs_trace_event *first = res.events->pdata[0], *third = res.events->pdata[2];
  const gs_trace_event *last = res.events->pdata[res.events->len - 1];
  g_assert_cmpint(first->kind, ==, GS_TRACE_STORAGE_ALLOC);
  g_assert_cmpuint(first->seq, ==, 1);
  g_assert_cmpuint(first->storage, ==, 1);
  g_assert_cmpuint(first->nbytes, ==, 24); /* arange(6) in f32 */
  g_assert_cmpint(third->kind, ==, GS_TRACE_TENSOR_CREATE);
  g_assert_cmpuint(third->seq, ==, 2);
  g_assert_cmpuint(third->storage, ==, 1);
  g_assert_cmpstr(gs_trace_reader_string(res.reader, third->op), ==, "arange");
  g_assert_cmpint(last->kind, ==, GS_TRACE_STORAGE_FREE);
  g_assert_cmpuint(last->seq, ==, 941);
  read_result_clear(&res);
}

/* A valid log whose second chunk has this payload (a good MARK event, then damage) must
 * deliver the first chunk's event and the MARK, then be DAMAGED at payload offset `at` with a
 * message containing `what`, in any split. */
/* Format 1.7: which rank of which run wrote the log, from its dist_init, once read; a
 * bucket of -1 (no DDP bucket) and the other collective fields round-trip; an out-of-range
 * bucket is damage. */
static void test_distributed_run(void) {
  gs_trace_event events[] = {
      {.kind = GS_TRACE_MARK, .seq = 1, .name = 10},
      {.kind = GS_TRACE_DIST_INIT, .seq = 2, .rank = 1, .world = 2, .run = UINT64_MAX - 5},
      {.kind = GS_TRACE_COLLECTIVE_BEGIN,
       .seq = 3,
       .op = 19,
       .collective = 1,
       .nbytes = 664,
       .bucket = -1},
      {.kind = GS_TRACE_COLLECTIVE_END,
       .seq = 4,
       .op = 19,
       .collective = 1,
       .nbytes = 664,
       .bucket = -1,
       .waited_ns = 12345},
  };
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 1, 1);
  tw_chunk(&log, 1, events, G_N_ELEMENTS(events));
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_reader_feed(r, log.data, log.len);
  gs_trace_event e;
  uint32_t rank = 9, world = 9;
  uint64_t run = 9;
  g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_EVENT);
  g_assert_false(gs_trace_reader_run(r, &rank, &world, &run)); /* not yet read */
  g_assert_cmpuint(rank, ==, 9);
  for (guint i = 1; i < G_N_ELEMENTS(events); i++) {
    g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_EVENT);
    events[i].thread = 1;
    assert_event_equal(&events[i], &e);
    g_assert_true(gs_trace_reader_run(r, &rank, &world, &run));
    g_assert_cmpuint(rank, ==, 1);
    g_assert_cmpuint(world, ==, 2);
    g_assert_cmpuint(run, ==, UINT64_MAX - 5);
  }
  g_assert_true(gs_trace_reader_run(r, NULL, NULL, NULL));
  gs_trace_reader_free(r);
  tw_free(&log);

  /* A bucket below -1 cannot be written by the engine: the reader names it. */
  GByteArray *payload = g_byte_array_new();
  GByteArray *body = body_new(1, 0);
  put_uv(body, 19);        /* op */
  put_uv(body, 1);         /* collective */
  put_uv(body, 8);         /* nbytes */
  put_uv(body, 2 * 5 - 1); /* svarint -5 */
  put_event(payload, GS_TRACE_COLLECTIVE_BEGIN, body);
  tw_log bad = {0};
  tw_header(&bad, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 1, 1);
  tw_chunk_raw(&bad, 1, 0, 0, payload->data, payload->len);
  read_result res = read_log(bad.data, bad.len, bad.len);
  g_assert_cmpint(res.status, ==, GS_TRACE_DAMAGED);
  g_assert_nonnull(strstr(gs_trace_reader_error(res.reader, NULL), "bucket -5"));
  g_assert_false(gs_trace_reader_run(res.reader, NULL, NULL, NULL));
  read_result_clear(&res);
  tw_free(&bad);
  g_byte_array_unref(payload);
}

static void test_empty_input(void) {
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_event e;
  g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_NEED_MORE);
  gs_trace_reader_feed(r, NULL, 0);
  g_assert_cmpint(gs_trace_reader_next(r, &e), ==, GS_TRACE_NEED_MORE);
  g_assert_false(gs_trace_reader_truncated(r, NULL));
  g_assert_false(gs_trace_reader_header(r, NULL, NULL, NULL, NULL));
  g_assert_null(gs_trace_reader_error(r, NULL));
  gs_trace_reader_free(r);
  gs_trace_reader_free(NULL);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-reader/every-kind-has-a-schema", test_every_kind_has_a_schema);
  g_test_add_func("/trace-reader/crc32c", test_crc32c);
  g_test_add_func("/trace-reader/round-trip/every-kind", test_round_trip_every_kind);
  g_test_add_func("/trace-reader/round-trip/zeroes-other-fields",
                  test_round_trip_zeroes_other_fields);
  g_test_add_func("/trace-reader/round-trip/any-split", test_any_split_reads_the_same);
  g_test_add_func("/trace-reader/round-trip/every-pair-of-kinds", test_every_pair_of_kinds);
  g_test_add_func("/trace-reader/round-trip/feed-space", test_feed_space_reads_the_same);
  g_test_add_func("/trace-reader/round-trip/compact-ids", test_compact_ids_round_trip);
  g_test_add_func("/trace-reader/round-trip/long-log-in-pieces", test_long_log_in_pieces);
  g_test_add_func("/trace-reader/round-trip/threads-interleaved", test_threads_interleaved);
  g_test_add_func("/trace-reader/round-trip/seq-and-time-deltas", test_seq_and_time_deltas);
  g_test_add_func("/trace-reader/string-table", test_string_table);
  g_test_add_func("/trace-reader/newer-minor-version", test_newer_minor_version);
  g_test_add_func("/trace-reader/version/folded-storage-events", test_folded_storage_events);
  g_test_add_func("/trace-reader/version/folded-clone-share", test_folded_clone_share);
  g_test_add_func("/trace-reader/version/folded-gradient-owner-change",
                  test_folded_gradient_owner_change);
  g_test_add_func("/trace-reader/version/older-writers-shorter-bodies",
                  test_older_writers_shorter_bodies);
  g_test_add_func("/trace-reader/version/zero-trailing-fields-left-out",
                  test_zero_trailing_fields_left_out);
  g_test_add_func("/trace-reader/version/1.1-log", test_version_1_1_log);
  g_test_add_func("/trace-reader/empty-input", test_empty_input);
  g_test_add_func("/trace-reader/distributed-run", test_distributed_run);
  g_test_add_func("/trace-reader/storage-memory-since-1-4", test_storage_memory_since_1_4);
  return g_test_run();
}
