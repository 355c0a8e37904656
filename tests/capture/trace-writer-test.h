/* trace-writer-test.h: builds event logs in memory for the reader's tests, fuzz seeds and
 * benchmark, with the format's own encoder (gs__trace_encode_body_as) and CRC. Deliberately tiny
 * and GLib-free: the recorder's chunk writer is the real one; this one only has to be
 * obviously right, plus let tests hand-craft payloads the encoder would never produce. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct tw_log {
  uint8_t *data;
  size_t len, cap;
  unsigned major; /* tw_header's: tw_chunk encodes ids as that version does */
} tw_log;

void tw_free(tw_log *log);
void tw_append(tw_log *log, const void *bytes, size_t n);

/* The 64-byte file header. */
void tw_header(tw_log *log, uint16_t major, uint16_t minor, uint64_t start_realtime_ns,
               uint32_t pid);

/* Appends one encoded event (kind, length, body) to p, deltas taken from (prev_seq,
 * prev_time); returns the end. Room: gs__trace_max_event_size(e). Every field of this format
 * version is written (with _as, those of version 1.minor: an older writer's shorter bodies),
 * with format 1's plain ids (tw_chunk writes a 2.x log's compact ids). */
uint8_t *tw_event(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq, uint64_t prev_time);
uint8_t *tw_event_as(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq, uint64_t prev_time,
                     unsigned minor);

/* A chunk of thread's events[0..n), base seq and time those of events[0]. */
void tw_chunk(tw_log *log, uint32_t thread, const gs_trace_event *events, size_t n);
void tw_chunk_as(tw_log *log, uint32_t thread, const gs_trace_event *events, size_t n,
                 unsigned minor);

/* A chunk around a payload encoded by hand (zero-padded to 8, CRC computed). */
void tw_chunk_raw(tw_log *log, uint32_t thread, uint64_t base_seq, uint64_t base_time,
                  const uint8_t *payload, size_t len);
