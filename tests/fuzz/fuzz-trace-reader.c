/* fuzz-trace-reader.c: libFuzzer target for the event-log reader (capture/reader.c).
 *
 * Build and run (clang with libFuzzer: Debian's clang + libclang-rt-14-dev):
 *   CC=clang meson setup build-fuzz
 *   ninja -C build-fuzz tests/fuzz/fuzz-trace-reader
 *   ./build-fuzz/tests/fuzz/fuzz-trace-reader -max_total_time=300 \
 *       -dict=tests/fuzz/trace-reader.dict /tmp/trace-corpus tests/fuzz/corpus/trace-reader
 * (the first directory collects what the fuzzer finds; copy inputs that crashed into the
 * committed corpus, which the test `trace-reader-corpus` replays on every `meson test`, with
 * any compiler, through this same function: replay-corpus.c).
 *
 * Beyond "never crash", each input checks what the reader promises: the same events, status,
 * error and truncation whether the bytes come whole or in pieces of any size; decoded events
 * within the format's limits, with NUL-terminated text; an error only with DAMAGED, and an
 * offset inside the input; a derived storage event right beside the tensor event it comes
 * from. Random bytes almost never carry a right CRC, so each input is also
 * read with its CRCs recomputed, which lets the fuzzer reach the event decoder.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format.h"
#include "fuzz-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v;
  h *= UINT64_C(0x100000001b3);
  return h ^ (h >> 29);
}

/* A fingerprint of everything an event says, checking on the way that what it points to is
 * readable and within the format's limits. */
static uint64_t event_digest(const gs_trace_reader *r, const gs_trace_event *e) {
  CHECK(e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT && gs__trace_schema[e->kind]);
  CHECK(e->ndim >= 0 && e->ndim <= GS_MAX_DIMS);
  CHECK(e->n_inputs <= GS__TRACE_MAX_ARRAY && e->n_saved <= GS__TRACE_MAX_ARRAY);
  CHECK(e->n_parts <= GS__TRACE_MAX_ARRAY && e->n_values <= GS__TRACE_MAX_ARRAY);
  CHECK(e->n_params <= GS__TRACE_MAX_ARRAY);
  CHECK(e->text_len <= GS__TRACE_MAX_TEXT);
  uint64_t scalars[] = {
      e->kind, e->thread, e->seq, e->time_ns, e->tensor, e->target, e->storage, e->source,
      e->node, e->scope, e->outer, e->object, e->module, e->nbytes, (uint64_t)e->offset,
      e->version, e->name, e->op, e->dtype, e->origin, e->holder, e->previous_holder, e->owner,
      e->previous_owner, e->object_kind, e->code, e->requires_grad, (uint64_t)e->ndim,
      e->child, e->optimizer, e->alloc, e->freed, e->derived,
  };
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
    h = mix(h, scalars[i]);
  for (int i = 0; i < GS_MAX_DIMS; i++)
    h = mix(mix(h, (uint64_t)e->shape[i]), (uint64_t)e->strides[i]);
  const struct {
    const uint64_t *a;
    uint32_t n;
  } arrays[] = {{e->inputs, e->n_inputs}, {e->saved, e->n_saved}, {e->parts, e->n_parts},
                {e->params, e->n_params}};
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
    h = mix(h, arrays[k].n);
    for (uint32_t i = 0; i < arrays[k].n; i++)
      h = mix(h, arrays[k].a[i]);
  }
  h = mix(h, e->n_values);
  for (uint32_t i = 0; i < e->n_values; i++) {
    uint64_t bits;
    memcpy(&bits, &e->values[i], sizeof bits);
    h = mix(h, bits);
  }
  h = mix(h, e->text_len);
  if (e->text) {
    CHECK(e->text[e->text_len] == '\0');
    for (uint32_t i = 0; i < e->text_len; i++)
      h = mix(h, (uint8_t)e->text[i]);
  }
  /* String lookups must always give a readable string. */
  h = mix(h, strlen(gs_trace_reader_string(r, e->name)));
  h = mix(h, strlen(gs_trace_reader_string(r, e->op)));
  return h;
}

typedef struct outcome {
  uint64_t digest, n_events;
  gs_trace_status status;
  uint64_t error_offset, truncated_at;
  bool truncated;
  char error[256];
} outcome;

/* A storage_alloc derived from a 1.2 tensor_create comes just before it, a storage_free
 * derived from a tensor_dispose just after it, with its seq, time and thread. prev is the
 * event before e (its scalars only), if any. */
static void check_same_moment(const gs_trace_event *a, const gs_trace_event *b) {
  CHECK(a->seq == b->seq && a->time_ns == b->time_ns && a->thread == b->thread);
}

static void check_derived(const gs_trace_event *prev, const gs_trace_event *e) {
  if (prev && prev->derived && prev->kind == GS_TRACE_STORAGE_ALLOC) {
    CHECK(e->kind == GS_TRACE_TENSOR_CREATE && e->alloc == prev->nbytes && e->alloc);
    CHECK(e->storage == prev->storage);
    check_same_moment(prev, e);
  }
  if (e->derived && e->kind == GS_TRACE_STORAGE_FREE) {
    CHECK(prev && prev->kind == GS_TRACE_TENSOR_DISPOSE && prev->freed == e->storage);
    CHECK(e->storage != 0);
    check_same_moment(prev, e);
  } else if (e->derived) {
    CHECK(e->kind == GS_TRACE_STORAGE_ALLOC);
  }
}

static void drain(gs_trace_reader *r, outcome *o) {
  gs_trace_event e, prev = {0};
  bool have_prev = false;
  while ((o->status = gs_trace_reader_next(r, &e)) == GS_TRACE_EVENT) {
    check_derived(have_prev ? &prev : NULL, &e);
    o->digest = mix(o->digest, event_digest(r, &e));
    o->n_events++;
    prev = e;
    have_prev = true;
  }
}

/* Reads data in pieces of 1..64 bytes drawn from seed, or whole if seed is 0. */
static outcome read_in_pieces(const uint8_t *data, size_t size, uint64_t seed) {
  outcome o = {0};
  gs_trace_reader *r = gs_trace_reader_new();
  CHECK(r);
  for (size_t at = 0; at < size;) {
    size_t n = size - at;
    if (seed) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      n = n < 1 + seed % 64 ? n : 1 + seed % 64;
    }
    gs_trace_reader_feed(r, data + at, n);
    at += n;
    drain(r, &o);
  }
  drain(r, &o);
  const char *error = gs_trace_reader_error(r, &o.error_offset);
  CHECK((error != NULL) == (o.status == GS_TRACE_DAMAGED));
  if (error) {
    CHECK(o.error_offset <= size);
    snprintf(o.error, sizeof o.error, "%s", error);
  }
  uint32_t major = 0, minor = 0, pid = 0;
  uint64_t realtime = 0;
  if (gs_trace_reader_header(r, &major, &minor, &realtime, &pid)) {
    CHECK(major >= 1 && major <= GS_TRACE_VERSION_MAJOR && size >= GS__TRACE_HEADER_SIZE);
    o.digest = mix(mix(mix(o.digest, minor), realtime), pid);
  } else {
    CHECK(o.n_events == 0);
  }
  o.truncated = gs_trace_reader_truncated(r, &o.truncated_at);
  CHECK(!(o.truncated && error));
  CHECK(!o.truncated || o.truncated_at < size);
  gs_trace_reader_free(r);
  return o;
}

static void check_any_split(const uint8_t *data, size_t size) {
  outcome whole = read_in_pieces(data, size, 0);
  outcome split = read_in_pieces(data, size, mix(size, 0x9e3779b97f4a7c15u) | 1);
  CHECK(whole.n_events == split.n_events && whole.digest == split.digest);
  CHECK(whole.status == split.status && strcmp(whole.error, split.error) == 0);
  CHECK(whole.error_offset == split.error_offset);
  CHECK(whole.truncated == split.truncated && whole.truncated_at == split.truncated_at);
}

/* Recomputes the header's and every whole chunk's CRC in place, as far as the lengths make
 * sense, so mutations inside events are read instead of stopping at the CRC. */
static void fix_crcs(uint8_t *data, size_t size) {
  if (size < GS__TRACE_HEADER_SIZE)
    return;
  gs__put_u32(data + GS__TRACE_HDR_CRC, gs__crc32c(0, data, GS__TRACE_HDR_CRC));
  size_t at = gs__get_u32(data + GS__TRACE_HDR_SIZE);
  if (at < GS__TRACE_HEADER_SIZE || at % 8 != 0)
    at = GS__TRACE_HEADER_SIZE;
  while (at <= size && size - at >= GS__TRACE_CHUNK_HEADER_SIZE) {
    uint8_t *c = data + at;
    uint32_t len = gs__get_u32(c + 4);
    size_t chunk = GS__TRACE_CHUNK_HEADER_SIZE + (((size_t)len + 7) & ~(size_t)7);
    if (len > GS__TRACE_MAX_PAYLOAD || chunk > size - at)
      return;
    gs__put_u32(c + 8, gs__crc32c(gs__crc32c(0, c + 12, GS__TRACE_CHUNK_HEADER_SIZE - 12),
                                  c + GS__TRACE_CHUNK_HEADER_SIZE, len));
    at += chunk;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_any_split(data, size);
  uint8_t *fixed = malloc(size ? size : 1);
  CHECK(fixed);
  if (size)
    memcpy(fixed, data, size);
  fix_crcs(fixed, size);
  check_any_split(fixed, size);
  free(fixed);
  return 0;
}
