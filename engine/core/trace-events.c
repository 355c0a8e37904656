/* trace-events.c: the parts of recording that need the core: the public calls that report
 * errors or take handles (gs_trace_open, gs_trace_mark, gs_trace_name), and a new tensor's
 * values (GS_TRACE_VALUES=N), read from its storage once its op has computed them. The
 * writer below (engine/trace) takes plain values only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "trace-writer.h"

int gs_trace_open(const char *dest) {
  if (!dest || !*dest) {
    gs__error(GS_ERR_ARGUMENT, "trace_open",
              "expected a destination (a path, unix:SOCKET or fd:N), got %s", dest ? "\"\"" : "NULL");
    return -1;
  }
  int err = gs__trace_start(dest);
  if (err) {
    gs__error(GS_ERR_ARGUMENT, "trace_open", "cannot open the event log at %s: %s", dest,
              strerror(err));
    return -1;
  }
  return 0;
}

int gs_trace_open_ring(const char *path, uint64_t bytes) {
  if (!path || !*path || strncmp(path, "unix:", 5) == 0 || strncmp(path, "fd:", 3) == 0) {
    gs__error(GS_ERR_ARGUMENT, "trace_open_ring",
              "expected the path of a file to dump the flight recorder into, got %s",
              path ? (*path ? path : "\"\"") : "NULL");
    return -1;
  }
  if (bytes < 64 * 1024) { /* a chunk is up to 64 KiB: a smaller ring could keep none */
    gs__error(GS_ERR_ARGUMENT, "trace_open_ring",
              "expected a ring of at least 64 KiB (65536 bytes), got %llu bytes",
              (unsigned long long)bytes);
    return -1;
  }
  int err = gs__trace_start_ring(path, bytes);
  if (err) {
    gs__error(GS_ERR_ARGUMENT, "trace_open_ring", "cannot keep a flight recorder for %s: %s",
              path, strerror(err));
    return -1;
  }
  gs__trace_dump_at_exit();
  return 0;
}

void gs_trace_mark(const char *label) {
  if (gs__trace_on())
    gs__trace_mark(gs__intern(label ? label : ""));
  else
    gs__trace_skip(1);
}

void gs_trace_name(gs_tensor t, const char *name) {
  if (!gs_is_alive(t))
    return;
  if (gs__trace_on())
    gs__trace_tensor_name(t.id, gs__intern(name ? name : ""));
  else
    gs__trace_skip(1);
}

/* Writes the first values of a tensor, if it still exists, in row-major order through its
 * strides. */
static void emit_values(void *ctx, uint64_t seq) {
  gs__tensor *t = gs__lookup_quiet((uint64_t)(uintptr_t)ctx);
  if (!t)
    return;
  int limit = gs__trace_values_limit();
  int64_t n = t->numel < limit ? t->numel : limit;
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v)
    return;
  int64_t index[GS_MAX_DIMS] = {0};
  const char *base = gs__tensor_data(t);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++)
      off += index[d] * t->strides[d];
    v[k] = gs__load_f64(base + off * (int64_t)gs__elsize(t->dtype), t->dtype);
    for (int d = t->ndim - 1; d >= 0 && ++index[d] == t->shape[d]; d--)
      index[d] = 0;
  }
  gs__trace_values(seq, t->id, v, (uint32_t)n);
  free(v);
}

void gs__trace_defer_values(uint64_t tensor) {
  _Static_assert(sizeof(uintptr_t) >= sizeof(uint64_t), "a tensor id fits in a pointer");
  gs__trace_defer(emit_values, (void *)(uintptr_t)tensor);
}
