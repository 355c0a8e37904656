/* trace-test-util.h: what the event-log reader's GLib tests share: one sample event of every
 * kind, reading a log in any split into owned copies of its events, field-by-field comparison,
 * and builders for hand-made (often damaged) payloads. Logs themselves come from
 * trace-writer-test.h. */
#pragma once

#include <glib.h>

#include "trace-writer-test.h"

/* The sample of kind: every field the kind carries set, and non-zero (but alloc and freed, which
 * would add storage events). */
gs_trace_event sample(gs_trace_kind kind);
/* One sample of every kind, seq and time rising with gaps (and time once going back). */
GArray *every_kind(void);

typedef struct read_result {
  gs_trace_reader *reader;
  GPtrArray *events; /* owned copies */
  gs_trace_status status;
} read_result;

/* Drains every event available now into res. */
void drain(read_result *res);
/* Feeds data step bytes at a time, draining after each piece, like a live reader. */
read_result read_log(const uint8_t *data, size_t len, size_t step);
void read_result_clear(read_result *res);

/* got must equal want in every field (so fields the kind does not carry must be zero). */
void assert_event_equal(const gs_trace_event *want, const gs_trace_event *got);
/* got holds exactly want's first n events. */
void assert_events_equal(GArray *want, GPtrArray *got, guint n);

/* A log of events in chunks of per_chunk, all of thread `thread` (set on each event too);
 * chunk_ends (if given) receives where each chunk ends. */
tw_log make_log(GArray *events, guint per_chunk, uint32_t thread, GArray *chunk_ends);

/* Hand-made payloads. */
void put_uv(GByteArray *b, uint64_t v);
void put_bytes(GByteArray *b, const char *bytes, guint n);
/* A body: seq and time deltas; the fields are put after. */
GByteArray *body_new(int64_t seq_delta, int64_t time_delta);
/* Appends kind, the body's length and the body to payload; frees the body. */
void put_event(GByteArray *payload, unsigned kind, GByteArray *body);
/* Appends sample(kind), encoded with this seq delta and no time delta. */
void put_sample(GByteArray *payload, gs_trace_kind kind, int64_t seq_delta);
/* The same with format 2's compact ids against the chunk's tables ids (NULL: format 1). */
void put_sample_ids(GByteArray *payload, gs_trace_kind kind, int64_t seq_delta, gs__trace_ids *ids);
