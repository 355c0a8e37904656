/* trace-writer-test.c: see trace-writer-test.h. */
#include "trace-writer-test.h"

#include <stdlib.h>

void tw_free(tw_log *log) {
  free(log->data);
  *log = (tw_log){0};
}

void tw_append(tw_log *log, const void *bytes, size_t n) {
  if (n == 0)
    return;
  if (log->cap - log->len < n) {
    size_t cap = log->cap ? log->cap : 256;
    while (cap - log->len < n)
      cap *= 2;
    log->data = realloc(log->data, cap);
    if (!log->data)
      abort();
    log->cap = cap;
  }
  memcpy(log->data + log->len, bytes, n);
  log->len += n;
}

void tw_header(tw_log *log, uint16_t major, uint16_t minor, uint64_t start_realtime_ns,
               uint32_t pid) {
  uint8_t h[GS__TRACE_HEADER_SIZE] = {0};
  memcpy(h, GS__TRACE_MAGIC, 8);
  h[GS__TRACE_HDR_MAJOR] = (uint8_t)major;
  h[GS__TRACE_HDR_MAJOR + 1] = (uint8_t)(major >> 8);
  h[GS__TRACE_HDR_MINOR] = (uint8_t)minor;
  h[GS__TRACE_HDR_MINOR + 1] = (uint8_t)(minor >> 8);
  h[GS__TRACE_HDR_LITTLE] = 1;
  gs__put_u32(h + GS__TRACE_HDR_SIZE, GS__TRACE_HEADER_SIZE);
  gs__put_u64(h + GS__TRACE_HDR_REALTIME, start_realtime_ns);
  gs__put_u64(h + GS__TRACE_HDR_MONOTONIC, 0);
  gs__put_u32(h + GS__TRACE_HDR_PID, pid);
  gs__put_u32(h + GS__TRACE_HDR_CRC, gs__crc32c(0, h, GS__TRACE_HDR_CRC));
  tw_append(log, h, sizeof h);
  log->major = major;
}

uint8_t *tw_event(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq, uint64_t prev_time) {
  return tw_event_as(p, e, prev_seq, prev_time, GS__TRACE_SCHEMA_MINOR);
}

static uint8_t *event_ids(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq,
                          uint64_t prev_time, unsigned minor, gs__trace_ids *ids);

uint8_t *tw_event_as(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq, uint64_t prev_time,
                     unsigned minor) {
  return event_ids(p, e, prev_seq, prev_time, minor, NULL);
}

static uint8_t *event_ids(uint8_t *p, const gs_trace_event *e, uint64_t prev_seq,
                          uint64_t prev_time, unsigned minor, gs__trace_ids *ids) {
  /* The length comes first but is known only after the body: encode the body after room for
   * the longest length varint, then slide it down next to the real one. */
  uint8_t *body = p + 1 + 10;
  uint8_t *end = gs__trace_encode_body_as(body, e, (int64_t)(e->seq - prev_seq),
                                          (int64_t)(e->time_ns - prev_time), minor, ids);
  size_t len = (size_t)(end - body);
  *p++ = (uint8_t)e->kind;
  p = gs__put_uvarint(p, len);
  memmove(p, body, len);
  return p + len;
}

void tw_chunk(tw_log *log, uint32_t thread, const gs_trace_event *events, size_t n) {
  tw_chunk_as(log, thread, events, n, GS__TRACE_SCHEMA_MINOR);
}

void tw_chunk_as(tw_log *log, uint32_t thread, const gs_trace_event *events, size_t n,
                 unsigned minor) {
  size_t room = 0;
  for (size_t i = 0; i < n; i++)
    room += gs__trace_max_event_size(&events[i]);
  uint8_t *payload = malloc(room + 1);
  if (!payload)
    abort();
  uint64_t seq = n ? events[0].seq : 0, time = n ? events[0].time_ns : 0;
  uint8_t *p = payload;
  /* A 2.x chunk's compact ids refer within the chunk: fresh tables for each. */
  gs__trace_ids *ids = log->major >= 2 ? calloc(1, sizeof *ids) : NULL;
  if (log->major >= 2 && !ids)
    abort();
  for (size_t i = 0; i < n; i++) {
    p = event_ids(p, &events[i], seq, time, minor, ids);
    seq = events[i].seq;
    time = events[i].time_ns;
  }
  tw_chunk_raw(log, thread, n ? events[0].seq : 0, n ? events[0].time_ns : 0, payload,
               (size_t)(p - payload));
  free(ids);
  free(payload);
}

void tw_chunk_raw(tw_log *log, uint32_t thread, uint64_t base_seq, uint64_t base_time,
                  const uint8_t *payload, size_t len) {
  uint8_t h[GS__TRACE_CHUNK_HEADER_SIZE];
  gs__put_u32(h, GS__TRACE_CHUNK_MAGIC);
  gs__put_u32(h + 4, (uint32_t)len);
  gs__put_u32(h + 12, thread);
  gs__put_u64(h + 16, base_seq);
  gs__put_u64(h + 24, base_time);
  gs__put_u32(h + 8, gs__crc32c(gs__crc32c(0, h + 12, sizeof h - 12), payload, len));
  tw_append(log, h, sizeof h);
  tw_append(log, payload, len);
  static const uint8_t zeros[8];
  tw_append(log, zeros, (8 - len % 8) % 8);
}
