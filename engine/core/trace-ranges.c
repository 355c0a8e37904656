/* trace-ranges.c: a user's named ranges in the event log (gs_trace_range_begin/end):
 * torch.profiler.record_function's spans, which the Python profiler reads back. Each thread
 * keeps the stack of its open ranges so that an end without its begin, or out of order, is
 * reported when the program makes it, not discovered by a reader of the log. */
#include "core-impl.h"
#include "trace-writer.h"

/* Deeper than any real program nests record_function; a runaway recursion gets an error. */
#define MAX_OPEN_RANGES 256

/* Interned labels, so an end matches its begin by pointer. */
static _Thread_local const char *open_ranges[MAX_OPEN_RANGES];
static _Thread_local int n_open_ranges;

void gs_trace_range_begin(const char *name) {
  if (!name || !*name) {
    gs__error(GS_ERR_ARGUMENT, "trace_range_begin", "expected a range's name, got %s",
              name ? "\"\"" : "NULL");
    return;
  }
  if (n_open_ranges == MAX_OPEN_RANGES) {
    gs__error(GS_ERR_STATE, "trace_range_begin",
              "expected at most %d ranges open on a thread, \"%s\" would be range %d",
              MAX_OPEN_RANGES, name, MAX_OPEN_RANGES + 1);
    return;
  }
  const char *label = gs__intern(name);
  open_ranges[n_open_ranges++] = label;
  if (gs__trace_on())
    gs__trace_range(GS_TRACE_RANGE_BEGIN, label);
  else
    gs__trace_skip(1);
}

void gs_trace_range_end(const char *name) {
  if (!name || !*name) {
    gs__error(GS_ERR_ARGUMENT, "trace_range_end", "expected a range's name, got %s",
              name ? "\"\"" : "NULL");
    return;
  }
  const char *label = gs__intern(name);
  if (n_open_ranges == 0) {
    gs__error(GS_ERR_STATE, "trace_range_end",
              "expected an open range to end, got the end of \"%s\" with none open on this "
              "thread",
              name);
    return;
  }
  if (open_ranges[n_open_ranges - 1] != label) {
    gs__error(GS_ERR_STATE, "trace_range_end",
              "expected the end of the innermost open range \"%s\", got the end of \"%s\"",
              open_ranges[n_open_ranges - 1], name);
    return;
  }
  n_open_ranges--;
  if (gs__trace_on())
    gs__trace_range(GS_TRACE_RANGE_END, label);
  else
    gs__trace_skip(1);
}

int gs_trace_ranges_open(void) { return n_open_ranges; }

const char *gs_trace_range_name(int i) {
  return i >= 0 && i < n_open_ranges ? open_ranges[i] : NULL;
}
