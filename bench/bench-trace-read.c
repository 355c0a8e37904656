/* bench-trace-read: how fast the event-log reader parses, on ~2 M events of a typical mix
 * (tensor create with a 2-D shape, a node with two inputs, an in-place write, a dispose),
 * built in memory by the tests' log builder as two threads' chunks of 4096 events, then fed to
 * the reader in 64 KB blocks as a file would be. Prints events/s parsed (the target is
 * >= 20 M/s) and the bytes per event of that log. */
#include <gradscope/trace.h>

#include "bench-util.h"
#include "trace-writer-test.h"

#define N_EVENTS (2 * 1000 * 1000)
#define EVENTS_PER_CHUNK 4096
#define FEED_BLOCK (64 * 1024)

/* A handle id the way the engine makes them: a slot, with its generation above it. */
static uint64_t handle(uint64_t slot, uint64_t generation) { return slot | generation << 32; }

/* Training-step-like events: every tensor is created, gets a node, is written once in place
 * and disposed; slots are reused with a new generation, as the engine does. */
static gs_trace_event *make_events(size_t n, uint64_t **inputs_out) {
  gs_trace_event *events = malloc(n * sizeof *events);
  uint64_t *inputs = malloc(n * sizeof *inputs); /* two per node, one node per four events */
  if (!events || !inputs)
    abort();
  uint64_t time = 0, storage = 1;
  for (size_t i = 0; i < n; i++) {
    gs_trace_event *e = &events[i];
    uint64_t step = i / 4, slot = 1 + step % 500, generation = 1 + step / 500;
    uint64_t tensor = handle(slot, generation);
    time += 40 + i % 7 * 10;
    switch (i % 4) {
    case 0:
      *e = (gs_trace_event){.kind = GS_TRACE_TENSOR_CREATE, .tensor = tensor,
                            .storage = storage++, .dtype = GS_F32,
                            .op = 1 + (uint32_t)(step % 20), .requires_grad = true, .ndim = 2,
                            .shape = {64, 128}, .strides = {128, 1},
                            .holder = GS_TRACE_HELD_BY_SCOPE, .owner = 1 + step % 3};
      break;
    case 1:
      inputs[2 * step] = 1 + (step + 7) % 300;
      inputs[2 * step + 1] = 1 + (step + 11) % 300;
      *e = (gs_trace_event){.kind = GS_TRACE_NODE_CREATE, .node = 1 + step % 300,
                            .name = 1 + (uint32_t)(step % 20), .tensor = tensor, .n_inputs = 2,
                            .inputs = &inputs[2 * step]};
      break;
    case 2:
      *e = (gs_trace_event){.kind = GS_TRACE_INPLACE_WRITE, .tensor = tensor,
                            .storage = storage - 1, .version = 1, .op = 21};
      break;
    default:
      *e = (gs_trace_event){.kind = GS_TRACE_TENSOR_DISPOSE, .tensor = tensor, .name = 22};
      break;
    }
    e->seq = i + 1;
    e->time_ns = time;
  }
  *inputs_out = inputs;
  return events;
}

/* Events alternate between two threads in runs of 8 (so each chunk's seqs have gaps, as with
 * real threads); each thread's buffer becomes a chunk when it holds EVENTS_PER_CHUNK. */
static tw_log make_log(const gs_trace_event *events, size_t n) {
  gs_trace_event *pending[2] = {malloc(EVENTS_PER_CHUNK * sizeof *events),
                                malloc(EVENTS_PER_CHUNK * sizeof *events)};
  size_t n_pending[2] = {0, 0};
  if (!pending[0] || !pending[1])
    abort();
  tw_log log = {0};
  tw_header(&log, GS_TRACE_VERSION_MAJOR, GS_TRACE_VERSION_MINOR, 0, 1);
  for (size_t i = 0; i < n; i++) {
    int t = (int)(i / 8 % 2);
    pending[t][n_pending[t]++] = events[i];
    if (n_pending[t] == EVENTS_PER_CHUNK || i + 1 == n) {
      tw_chunk(&log, (uint32_t)t + 1, pending[t], n_pending[t]);
      n_pending[t] = 0;
    }
  }
  if (n_pending[0] + n_pending[1] > 0) {
    for (int t = 0; t < 2; t++)
      if (n_pending[t])
        tw_chunk(&log, (uint32_t)t + 1, pending[t], n_pending[t]);
  }
  free(pending[0]);
  free(pending[1]);
  return log;
}

/* Parses the whole log; returns the number of events (and sums ids so none is skipped). */
static size_t parse(const tw_log *log, uint64_t *checksum) {
  gs_trace_reader *r = gs_trace_reader_new();
  gs_trace_event e;
  size_t n = 0;
  uint64_t sum = 0;
  for (size_t at = 0; at < log->len; at += FEED_BLOCK) {
    size_t len = log->len - at < FEED_BLOCK ? log->len - at : FEED_BLOCK;
    gs_trace_reader_feed(r, log->data + at, len);
    while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
      sum += e.tensor + e.seq;
      n++;
    }
  }
  if (gs_trace_reader_error(r, NULL) || gs_trace_reader_truncated(r, NULL)) {
    fprintf(stderr, "bench-trace-read: the log did not read cleanly\n");
    exit(1);
  }
  gs_trace_reader_free(r);
  *checksum = sum;
  return n;
}

int main(void) {
  uint64_t *inputs;
  gs_trace_event *events = make_events(N_EVENTS, &inputs);
  tw_log log = make_log(events, N_EVENTS);
  free(events);
  free(inputs);

  enum { RUNS = 7 };
  double rates[RUNS];
  for (int run = 0; run < RUNS; run++) {
    uint64_t checksum;
    double t0 = bench_now_s();
    size_t n = parse(&log, &checksum);
    double t1 = bench_now_s();
    bench_escape(&checksum);
    if (n != N_EVENTS) {
      fprintf(stderr, "bench-trace-read: parsed %zu events of %d\n", n, N_EVENTS);
      return 1;
    }
    rates[run] = (double)n / (t1 - t0);
  }
  printf("# %d events, %zu bytes, median of %d parses\n", N_EVENTS, log.len, RUNS);
  bench_result("trace_parse_events_per_s", bench_median(rates, RUNS), "");
  bench_result("trace_bytes_per_event", (double)log.len / N_EVENTS, "");
  tw_free(&log);
  return 0;
}
