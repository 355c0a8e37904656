/* make-trace-corpus.c: writes the seed corpus of fuzz-trace-reader (small valid and damaged
 * logs) into a directory, with the tests' log builder:
 *   ninja -C build tests/fuzz/make-trace-corpus
 *   ./build/tests/fuzz/make-trace-corpus tests/fuzz/corpus/trace-reader
 * The files are committed; rerun only when the format changes. */
#include <stdio.h>
#include <stdlib.h>

#include "trace-writer-test.h"

static const char *dir;

static void save(const char *name, const tw_log *log, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(log->data, 1, len, f) != len || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static const uint64_t inputs[] = {3, 0};
static const uint64_t saved[] = {4};
static const uint64_t parts[] = {5, 6, 7};
static const double values[] = {0.5, -1.0, 3e10};

/* A small training-step-like stream touching every kind, with storage events of their own and
 * (format 1.2) folded into a tensor_create and a tensor_dispose, the latter the last event of
 * its chunk. */
static void every_kind(tw_log *log, unsigned major) {
  gs_trace_event e[] = {
      {.kind = GS_TRACE_STRING, .name = 1, .text = "AddBackward", .text_len = 11},
      {.kind = GS_TRACE_STRING, .name = 2, .text = "step", .text_len = 4},
      {.kind = GS_TRACE_SCOPE_BEGIN, .scope = 1, .outer = 0, .name = 2},
      {.kind = GS_TRACE_STORAGE_ALLOC, .storage = 1, .nbytes = 24},
      {.kind = GS_TRACE_TENSOR_CREATE, .tensor = 3, .storage = 1, .dtype = 0, .op = 1,
       .requires_grad = true, .ndim = 2, .shape = {2, 3}, .strides = {3, 1},
       .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 1},
      {.kind = GS_TRACE_TENSOR_CREATE, .tensor = 4, .storage = 1, .origin = 1, .source = 3,
       .offset = 2, .ndim = 2, .shape = {3, 2}, .strides = {-1, 3}},
      {.kind = GS_TRACE_STORAGE_SHARE, .storage = 2, .source = 1, .nbytes = 24},
      {.kind = GS_TRACE_STORAGE_MATERIALISE, .storage = 2, .nbytes = 24},
      {.kind = GS_TRACE_INPLACE_WRITE, .tensor = 4, .storage = 1, .version = 1, .op = 1},
      {.kind = GS_TRACE_TENSOR_CREATE, .tensor = 11, .storage = 3, .alloc = 16, .ndim = 1,
       .shape = {4}, .strides = {1}, .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 1},
      {.kind = GS_TRACE_NODE_CREATE, .node = 1, .name = 1, .tensor = 4, .n_inputs = 2,
       .inputs = inputs, .n_saved = 1, .saved = saved},
      {.kind = GS_TRACE_TENSOR_NAME, .tensor = 4, .name = 2},
      {.kind = GS_TRACE_VALUES, .tensor = 4, .n_values = 3, .values = values},
      {.kind = GS_TRACE_BACKWARD_BEGIN, .tensor = 4, .node = 1},
      {.kind = GS_TRACE_GRAD_ACCUMULATE, .tensor = 3, .target = 8},
      {.kind = GS_TRACE_NODE_FREE_SAVED, .node = 1},
      {.kind = GS_TRACE_TENSOR_DISPOSE, .tensor = 11, .name = 2, .freed = 3},
      {.kind = GS_TRACE_BACKWARD_END, .tensor = 4},
      {.kind = GS_TRACE_NODE_RELEASE, .node = 1},
      {.kind = GS_TRACE_MODULE_CREATE, .module = 1, .name = 1},
      {.kind = GS_TRACE_MODULE_PARAMETER, .module = 1, .name = 2, .tensor = 9},
      {.kind = GS_TRACE_TENSOR_MOVE, .tensor = 3, .target = 9},
      {.kind = GS_TRACE_OWNER_CHANGE, .object = 9, .previous_holder = 1, .previous_owner = 1,
       .holder = 2, .owner = 1},
      {.kind = GS_TRACE_COMPOSITE_CREATE, .object = 10, .object_kind = 2, .n_parts = 3,
       .parts = parts},
      {.kind = GS_TRACE_MODULE_CHILD, .module = 1, .child = 2, .name = 2},
      {.kind = GS_TRACE_OPTIMIZER_CREATE, .optimizer = 1, .name = 1, .n_params = 3,
       .params = parts},
      {.kind = GS_TRACE_MARK, .name = 2},
      {.kind = GS_TRACE_ERROR, .code = 2, .text = "shape mismatch", .text_len = 14},
      {.kind = GS_TRACE_TENSOR_DISPOSE, .tensor = 4, .name = 2},
      {.kind = GS_TRACE_STORAGE_FREE, .storage = 2},
      {.kind = GS_TRACE_SCOPE_END, .scope = 1},
  };
  size_t n = sizeof e / sizeof e[0];
  for (size_t i = 0; i < n; i++) {
    e[i].seq = 1 + i;
    e[i].time_ns = 1000 * (1 + i);
  }
  /* 1.9 (plain ids) or 2.0 (compact ids) */
  tw_header(log, (uint16_t)major, major == 1 ? GS__TRACE_SCHEMA_MINOR : GS_TRACE_VERSION_MINOR,
            1700000000000000000u, 1234);
  tw_chunk(log, 1, e, 10);
  tw_chunk(log, 2, e + 10, 7);
  tw_chunk(log, 1, e + 17, n - 17);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  tw_log log = {0};
  every_kind(&log, GS_TRACE_VERSION_MAJOR);
  save("every-kind-2.gst", &log, log.len);
  tw_free(&log);
  every_kind(&log, 1);
  save("every-kind.gst", &log, log.len);
  save("truncated-mid-chunk.gst", &log, log.len - 21);
  save("header-only.gst", &log, GS__TRACE_HEADER_SIZE);
  log.data[GS__TRACE_HEADER_SIZE + GS__TRACE_CHUNK_HEADER_SIZE + 9] ^= 0x10;
  save("bad-chunk-crc.gst", &log, log.len);
  tw_free(&log);

  tw_header(&log, GS_TRACE_VERSION_MAJOR + 1, 0, 0, 1);
  save("major-3.gst", &log, log.len);
  tw_free(&log);

  /* An older writer's shorter bodies: 1.1 tensor_create and tensor_dispose, which end before
   * 1.2's alloc and freed. */
  tw_header(&log, 1, 1, 0, 1);
  gs_trace_event older[] = {
      {.kind = GS_TRACE_STORAGE_ALLOC, .seq = 1, .storage = 1, .nbytes = 8},
      {.kind = GS_TRACE_TENSOR_CREATE, .seq = 2, .tensor = 1, .storage = 1, .alloc = 8,
       .ndim = 1, .shape = {2}, .strides = {1}},
      {.kind = GS_TRACE_TENSOR_DISPOSE, .seq = 3, .tensor = 1, .freed = 1},
      {.kind = GS_TRACE_STORAGE_FREE, .seq = 4, .storage = 1},
  };
  tw_chunk_as(&log, 1, older, sizeof older / sizeof older[0], 1);
  save("older-minor.gst", &log, log.len);
  tw_free(&log);

  /* A newer minor: an unknown kind and a known kind with a trailing field. */
  tw_header(&log, 1, 4, 0, 1);
  static const uint8_t newer[] = {
      200, 5, 2, 2, 0x81, 0x01, 'x',                     /* unknown kind, 3 field bytes */
      GS_TRACE_STORAGE_FREE, 4, 2, 2, 7, 0x2a,           /* storage 7, then an extra field */
      GS_TRACE_MARK, 3, 2, 2, 1,                         /* mark */
  };
  tw_chunk_raw(&log, 1, 0, 0, newer, sizeof newer);
  save("newer-minor.gst", &log, log.len);
  tw_free(&log);

  /* A chunk header claiming more than the limit. */
  tw_header(&log, 1, 0, 0, 1);
  uint8_t big[GS__TRACE_CHUNK_HEADER_SIZE] = {0};
  gs__put_u32(big, GS__TRACE_CHUNK_MAGIC);
  gs__put_u32(big + 4, UINT32_MAX);
  tw_append(&log, big, sizeof big);
  save("oversize-payload.gst", &log, log.len);
  tw_free(&log);

  /* An array count far over the limit inside a CRC-valid chunk. */
  tw_header(&log, 1, 0, 0, 1);
  static const uint8_t huge_array[] = {
      GS_TRACE_NODE_CREATE, 9, 0, 0, 1, 1, 1, 0xff, 0xff, 0xff, 0x0f,
  };
  tw_chunk_raw(&log, 1, 0, 0, huge_array, sizeof huge_array);
  save("oversize-array.gst", &log, log.len);
  tw_free(&log);
  return 0;
}
