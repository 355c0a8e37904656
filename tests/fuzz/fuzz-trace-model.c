/* fuzz-trace-model.c: a structure-aware libFuzzer target for the inspector's model and
 * everything the `gradscope` commands run on it (issue 22). Random bytes almost never get
 * past the log's CRCs, so the input is not a log: it is a recipe that log_from_recipe()
 * turns into a well-formed one (valid header, chunks and CRCs) of events of real kinds whose
 * fields are drawn from the input, and whose ids point back at earlier ones, at nothing, at
 * themselves, or at ids chosen to collide, so every relation (scope outer, module parent, view
 * source, node inputs, composite parts, owners) gets its cycles. The log is then fed through
 * the model, every explanation sentence, the CLI's stats, the graph builder (collapse, hubs,
 * DOT; the Graphviz layout for small graphs), the timeline summary, a seek to every keyframe,
 * and the `dump` (text and JSON lines) and `chrome-trace` commands themselves (while fuzzing,
 * for one input in eight), checking that each finishes with work and memory bounded by the
 * log's size, and that what the commands write is valid UTF-8 with control characters
 * escaped.
 *
 * Build and run (clang with libFuzzer; coverage needs the libraries instrumented too):
 *   CC=clang meson setup build-fuzz -Db_sanitize=address,undefined -Db_lundef=false \
 *       -Dc_args=-fsanitize=fuzzer-no-link
 *   ninja -C build-fuzz tests/fuzz/fuzz-trace-model
 *   ./build-fuzz/tests/fuzz/fuzz-trace-model -max_total_time=600 -rss_limit_mb=2048 \
 *       -timeout=300 /tmp/model-corpus tests/fuzz/corpus/trace-model
 * That finds memory errors; the fast configuration (-Db_sanitize=undefined, c_args adding
 * -fno-sanitize-coverage=trace-cmp, run with -max_len=600 -entropic=0) runs about 1,000
 * inputs a second per core instead of 17. -timeout counts wall time: a paused or starved
 * fuzzer reports ordinary inputs as timeouts below a few minutes.
 * What it finds is copied into tests/fuzz/corpus/trace-model, which the test
 * `trace-model-corpus` replays through this same function on every `meson test`
 * (replay-corpus.c, any compiler; there the memory bound is checked with mallinfo2).
 */
#include <glib.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

#include "fuzz-check.h"

#include "graph-layout.h"
#include "graph-collapse.h"
#include "graph-dot.h"
#include "timeline-summary.h"
#include "graph-source.h"
#include "trace-model.h"
#include "trace-stats.h"
#include "trace-writer-test.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the recipe ------------------------------------------------------------------------ */

#define MAX_EVENTS 1500 /* per input: enough for every shape, fast enough to fuzz */
#define POOL 32         /* earlier ids an event may point back at */

typedef struct recipe {
  const uint8_t *p;
  size_t n;
  uint64_t pool[POOL];
  unsigned pooled;
  uint64_t fresh;
} recipe;

static uint8_t take(recipe *r) {
  if (!r->n)
    return 0;
  r->n--;
  return *r->p++;
}

static uint64_t take64(recipe *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | take(r);
  return v;
}

/* An id: none, the event's own, an earlier one, a fresh one, any number, or one of the ids
 * that collide under a multiplicative hash (k times the golden ratio's inverse). */
static uint64_t pick_id(recipe *r, uint64_t self) {
  uint64_t id;
  switch (take(r) % 8) {
  case 0: return 0;
  case 1: return self;
  case 2:
  case 3:
  case 4: id = r->pooled ? r->pool[take(r) % MIN(r->pooled, POOL)] : 1; break;
  case 5: id = ++r->fresh; break;
  case 6: id = take64(r); break;
  default: id = (uint64_t)(take(r) + 1) * UINT64_C(0xf1de83e19937733d); break;
  }
  r->pool[r->pooled++ % POOL] = id;
  return id;
}

static uint64_t pick_size(recipe *r) {
  switch (take(r) % 6) {
  case 0: return 0;
  case 1: return UINT64_C(1) << 63;
  case 2: return UINT64_MAX;
  case 3: return take64(r);
  default: return (uint64_t)take(r) * 8;
  }
}

static uint32_t pick_count(recipe *r) {
  uint8_t b = take(r);
  return b == 255 ? GS__TRACE_MAX_ARRAY : b % 6; /* rarely the format's longest array */
}

/* Arrays and texts the events of one chunk point at; freed after the chunk is written. */
typedef struct chunk_store {
  GPtrArray *blocks;
} chunk_store;

static uint64_t *id_array(recipe *r, chunk_store *st, uint32_t n, uint64_t self) {
  uint64_t *a = g_new(uint64_t, n ? n : 1);
  uint64_t repeat = pick_id(r, self);
  for (uint32_t i = 0; i < n; i++) /* a long array repeats one id: one node, 4,096 edges */
    a[i] = n > 64 ? repeat : pick_id(r, self);
  g_ptr_array_add(st->blocks, a);
  return a;
}

static void fill_event(recipe *r, chunk_store *st, gs_trace_event *e) {
  static const gs_trace_kind kinds[] = {
      GS_TRACE_STRING, GS_TRACE_STORAGE_ALLOC, GS_TRACE_STORAGE_SHARE,
      GS_TRACE_STORAGE_MATERIALISE, GS_TRACE_STORAGE_FREE, GS_TRACE_TENSOR_CREATE,
      GS_TRACE_TENSOR_CREATE, GS_TRACE_TENSOR_DISPOSE, GS_TRACE_TENSOR_MOVE,
      GS_TRACE_TENSOR_NAME, GS_TRACE_INPLACE_WRITE, GS_TRACE_OWNER_CHANGE,
      GS_TRACE_SCOPE_BEGIN, GS_TRACE_SCOPE_BEGIN, GS_TRACE_SCOPE_END, GS_TRACE_NODE_CREATE,
      GS_TRACE_NODE_CREATE, GS_TRACE_NODE_FREE_SAVED, GS_TRACE_NODE_RELEASE,
      GS_TRACE_BACKWARD_BEGIN, GS_TRACE_BACKWARD_END, GS_TRACE_GRAD_ACCUMULATE,
      GS_TRACE_MODULE_CREATE, GS_TRACE_MODULE_PARAMETER, GS_TRACE_COMPOSITE_CREATE,
      GS_TRACE_MARK, GS_TRACE_ERROR, GS_TRACE_VALUES, GS_TRACE_MODULE_CHILD,
      GS_TRACE_OPTIMIZER_CREATE,
  };
  e->kind = kinds[take(r) % (sizeof kinds / sizeof kinds[0])];
  uint64_t self = pick_id(r, 0);
  e->tensor = e->storage = e->node = e->scope = e->object = e->module = e->optimizer = self;
  e->target = pick_id(r, self);
  e->source = pick_id(r, self);
  e->outer = pick_id(r, self);
  e->child = pick_id(r, self);
  e->owner = pick_id(r, self);
  e->previous_owner = pick_id(r, self);
  if (take(r) & 1) /* sometimes the storage is not the tensor's own id */
    e->storage = pick_id(r, self);
  e->nbytes = pick_size(r);
  e->alloc = take(r) & 1 ? pick_size(r) : 0;
  e->freed = take(r) & 1 ? pick_id(r, self) : 0;
  e->offset = (int64_t)take64(r);
  e->version = take(r);
  e->name = take(r) % 8;
  e->op = take(r) % 8;
  e->dtype = take(r) % 4;
  e->origin = take(r) % 5;
  e->holder = take(r) % 8;
  e->previous_holder = take(r) % 8;
  e->object_kind = take(r) % 4;
  e->code = take(r) % 8;
  e->requires_grad = take(r) & 1;
  e->ndim = take(r) % (GS_MAX_DIMS + 1);
  for (int i = 0; i < e->ndim; i++) {
    uint8_t b = take(r);
    e->shape[i] = b < 200 ? b % 9 : (int64_t)take64(r);
    e->strides[i] = (int64_t)(take(r) % 9) - 2;
  }
  e->n_inputs = pick_count(r);
  e->inputs = id_array(r, st, e->n_inputs, self);
  e->n_saved = pick_count(r);
  e->saved = id_array(r, st, e->n_saved, self);
  e->n_parts = pick_count(r);
  e->parts = id_array(r, st, e->n_parts, self);
  e->n_params = pick_count(r);
  e->params = id_array(r, st, e->n_params, self);
  e->n_values = take(r) % 4;
  double *values = g_new0(double, 4);
  for (uint32_t i = 0; i < e->n_values; i++)
    values[i] = (double)(int8_t)take(r) / 3.0;
  g_ptr_array_add(st->blocks, values);
  e->values = values;
  /* Text: the input's own bytes (markup, NULs, invalid UTF-8), rarely 65,536 bytes (two
   * bytes ask for it: every long text slows the fuzzer's reader tenfold). */
  uint32_t len = take(r) == 255 && take(r) == 255 ? GS__TRACE_MAX_TEXT : take(r) % 24;
  char *text = g_malloc0(len + 1);
  for (uint32_t i = 0; i < len; i++)
    text[i] = i < 24 ? (char)take(r) : (char)('a' + i % 26);
  g_ptr_array_add(st->blocks, text);
  e->text = text;
  e->text_len = len;
}

/* The log the recipe describes: events in chunks of one thread each, in order. */
static void log_from_recipe(const uint8_t *data, size_t size, tw_log *log) {
  recipe r = {data, size, {0}, 0, 0};
  tw_header(log, 1, GS_TRACE_VERSION_MINOR, 1700000000000000000u, 7);
  gs_trace_event chunk[64];
  size_t n = 0;
  uint32_t thread = 1;
  uint64_t seq = 0, time = 0;
  chunk_store st = {g_ptr_array_new_with_free_func(g_free)};
  for (int i = 0; i < MAX_EVENTS && r.n; i++) {
    uint8_t control = take(&r);
    uint32_t next_thread = control < 192 ? thread : (uint32_t)(control % 16) + 1;
    if (n && (next_thread != thread || n == G_N_ELEMENTS(chunk))) {
      tw_chunk(log, thread, chunk, n);
      g_ptr_array_set_size(st.blocks, 0);
      n = 0;
    }
    thread = next_thread;
    gs_trace_event *e = &chunk[n++];
    *e = (gs_trace_event){0};
    fill_event(&r, &st, e);
    e->seq = ++seq;
    time += take(&r);
    e->time_ns = time;
  }
  if (n)
    tw_chunk(log, thread, chunk, n);
  g_ptr_array_unref(st.blocks);
}

/* ---- what runs on the log -------------------------------------------------------------- */

static gboolean add_to_stats(gs_trace_stats *stats, const tw_log *log) {
  gs_trace_reader *reader = gs_trace_reader_new();
  gs_trace_reader_feed(reader, log->data, log->len);
  gs_trace_event e;
  gs_trace_status status;
  while ((status = gs_trace_reader_next(reader, &e)) == GS_TRACE_EVENT)
    gs_trace_stats_add(stats, &e, reader);
  gs_trace_reader_free(reader);
  return status == GS_TRACE_NEED_MORE; /* the log is well-formed: never damaged */
}

/* The graph at index as the CLI builds it: collapsed, hubs split, as DOT (and laid out when
 * small: Graphviz is slow and not what is being fuzzed, so only now and then). */
static void check_graph(gs_graph_source *source, guint64 index, guint64 log_bytes,
                        gboolean lay_out) {
  gs_graph *full = gs_graph_source_build(source, index);
  CHECK(full);
  gs_graph *g = gs_graph_collapse(full, GS_GRAPH_COLLAPSE_LIMIT, NULL);
  gs_graph_split_hubs(g, GS_GRAPH_HUB_LIMIT);
  GString *dot = g_string_new(NULL);
  gs_graph_dot_options options = {"fuzz", TRUE, TRUE};
  gs_graph_write_dot(dot, g, &options);
  /* Names are clipped and scopes folded: DOT grows with the log, never with its nesting. */
  if (g_getenv("GS_FUZZ_VERBOSE"))
    fprintf(stderr, "graph at %" G_GUINT64_FORMAT ": %u items, %u edges, %u scopes, %zu DOT bytes\n", index,
            g->items->len, g->edges->len, g->scopes->len, dot->len);
  const char *write_dot = g_getenv("GS_FUZZ_WRITE_DOT"); /* the last graph's DOT, to read */
  if (write_dot && !g_file_set_contents(write_dot, dot->str, (gssize)dot->len, NULL))
    fprintf(stderr, "cannot write %s\n", write_dot);
  CHECK(dot->len <= 4096 + 600 * (guint64)(g->items->len + g->edges->len + g->scopes->len));
  CHECK(g->items->len <= 8 * log_bytes + 16);
  CHECK(g->scopes->len <= full->scopes->len);
  g_string_free(dot, TRUE);
  gs_graph_free(full);
  if (lay_out && g->items->len <= 24) {
    GError *error = NULL;
    gs_layout_options layout_options = {TRUE, "fuzz"};
    gs_layout *l = gs_layout_compute(g, &layout_options, &error); /* takes g */
    CHECK(l || (error && error->message[0]));
    gs_layout_free(l);
    g_clear_error(&error);
  } else {
    gs_graph_free(g);
  }
}

/* ---- the commands that write text ------------------------------------------------------ */

/* A memory file's path for the commands, which take file names. */
static int memory_file(const char *name, char path[static 64]) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  CHECK(fd >= 0);
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}

/* Runs a command with its standard output (and, unless GS_FUZZ_VERBOSE, its notes) in out. */
static int run_command(int (*command)(int, char **), const char *const *args, int out) {
  char *argv[8];
  int argc = 0;
  for (; args[argc]; argc++)
    argv[argc] = g_strdup(args[argc]);
  argv[argc] = NULL;
  char *owned[8];
  memcpy(owned, argv, sizeof owned); /* GOption reorders argv; these are what to free */
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
  dup2(out, STDOUT_FILENO);
  if (!g_getenv("GS_FUZZ_VERBOSE"))
    dup2(out, STDERR_FILENO); /* the notes say what the log holds: not the fuzzer's output */
  int status = command(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, STDOUT_FILENO);
  dup2(saved_err, STDERR_FILENO);
  close(saved_out);
  close(saved_err);
  for (int i = 0; i < argc; i++)
    g_free(owned[i]);
  return status;
}

/* What a command wrote: valid UTF-8, no control character but the line ends, and no more than
 * the log's size allows (every byte escaped as \u00XX, a line per event). */
static void check_written(int fd, const tw_log *log, guint64 events) {
  off_t len = lseek(fd, 0, SEEK_END);
  CHECK(len >= 0);
  if (g_getenv("GS_FUZZ_VERBOSE"))
    fprintf(stderr, "a command wrote %lld bytes\n", (long long)len);
  CHECK((guint64)len <= 4096 + 16 * (guint64)log->len + 1024 * events);
  char *text = g_malloc((gsize)len + 1);
  CHECK(pread(fd, text, (size_t)len, 0) == len);
  text[len] = '\0';
  CHECK(g_utf8_validate(text, len, NULL));
  for (off_t i = 0; i < len; i++)
    CHECK((unsigned char)text[i] >= 0x20 || text[i] == '\n' || text[i] == '\t');
  g_free(text);
  CHECK(ftruncate(fd, 0) == 0);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
}

/* dump (text and JSON lines) and chrome-trace on the log, as a user runs them: a well-formed
 * log, so each must succeed. */
static void check_commands(const tw_log *log, guint64 events) {
  char log_path[64], out_path[64];
  int log_fd = memory_file("fuzz-log", log_path), out_fd = memory_file("fuzz-out", out_path);
  CHECK(write(log_fd, log->data, log->len) == (ssize_t)log->len);
  CHECK(run_command(cli_dump, (const char *const[]){"dump", log_path, NULL}, out_fd) == 0);
  check_written(out_fd, log, events);
  CHECK(run_command(cli_dump, (const char *const[]){"dump", "--jsonl", log_path, NULL},
                    out_fd) == 0);
  check_written(out_fd, log, events);
  CHECK(run_command(cli_chrome_trace,
                    (const char *const[]){"chrome-trace", log_path, "-o", "-", NULL},
                    out_fd) == 0);
  check_written(out_fd, log, events);
  close(log_fd);
  close(out_fd);
}

/* Bytes malloc has handed out. Only in a plain gcc build: ASan's allocator is not malloc's,
 * and under libFuzzer (clang) -rss_limit_mb and -malloc_limit_mb bound memory instead. */
static size_t heap_in_use(void) {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__clang__)
  return mallinfo2().uordblks;
#else
  return 0;
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static gboolean once;
  if (!once) {
    g_setenv("LANGUAGE", "C", TRUE);
    once = TRUE;
  }
  size_t heap_before = heap_in_use();
  tw_log log = {0};
  log_from_recipe(data, size, &log);

  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_set_keyframe_interval(m, 64); /* many keyframes: copies of odd states */
  gs_trace_model_feed(m, log.data, log.len);
  gs_trace_model_finish(m);
  CHECK(!gs_trace_model_damaged(m));
  guint64 n = gs_trace_model_n_events(m);
  if (g_getenv("GS_FUZZ_VERBOSE")) /* what a recipe became: for reading the corpus */
    fprintf(stderr, "%zu recipe bytes: %zu log bytes, %" G_GUINT64_FORMAT " events\n", size,
            log.len, n);
  const char *write_log = g_getenv("GS_FUZZ_WRITE_LOG"); /* the log, for the CLI and inspector */
  if (write_log && !g_file_set_contents(write_log, (const char *)log.data, (gssize)log.len, NULL))
    fprintf(stderr, "cannot write %s\n", write_log);

  for (guint64 i = 0; i < n; i++) {
    char *sentence = gs_trace_model_explain(m, i);
    CHECK(sentence && g_utf8_validate(sentence, -1, NULL));
    /* A sentence names a few things, each at most the longest text the format allows. */
    CHECK(strlen(sentence) <= 8 * (GS__TRACE_MAX_TEXT + 256));
    g_free(sentence);
  }
  for (guint64 i = 0; i < n; i += 64)
    CHECK(gs_trace_model_seek(m, i));

  gs_trace_stats *stats = gs_trace_stats_new();
  CHECK(add_to_stats(stats, &log));

  gs_graph_source *source = gs_graph_source_new(m);
  gboolean lay_out = size > 0 && data[0] % 16 == 0;
  if (n) {
    check_graph(source, n - 1, log.len, lay_out);
    check_graph(source, n / 2, log.len, FALSE);
  }
  /* The commands read the log again through files and print every event: a third of an
   * input's time. While fuzzing, one input in eight runs them (its first byte says), enough
   * over millions; the corpus's replay runs them on every input. */
#ifdef GS_FUZZ_REPLAY
  gboolean commands = TRUE;
#else
  gboolean commands = size > 0 && (data[0] >> 4) % 8 == 0;
#endif
  if (commands)
    check_commands(&log, n);

  gs_timeline_summary *summary = gs_timeline_summary_new(16);
  gs_memory_column columns[64];
  if (n)
    for (int by_scope = 0; by_scope < 2; by_scope++)
      gs_timeline_summary_columns(summary, m, 0, n - 1, G_N_ELEMENTS(columns), by_scope,
                                  columns);

  /* Memory grows with the log's size, never with a number the log claims. */
  size_t heap_now = heap_in_use();
  if (heap_now > heap_before)
    CHECK(heap_now - heap_before <= 32u * 1024 * 1024 + 4096 * (size_t)log.len);

  gs_timeline_summary_free(summary);
  gs_graph_source_free(source);
  gs_trace_stats_free(stats);
  gs_trace_model_free(m);
  tw_free(&log);
  return 0;
}
