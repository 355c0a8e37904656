/* snapshot.c: the snapshot a log opens with when recording starts after the program has done
 * work (gs_trace_open, GS_TRACE_RING's ring, in a running program): what is alive now,
 * written as the events that would have made it, between snapshot_begin and snapshot_end
 * (doc/trace-format.md, "Snapshots").
 *
 * The writer knows nothing of tensors or scopes, so each layer that owns records walks them
 * itself: it registers a hook at start-up (the layer rule: a lower layer never calls upward
 * by name), and the hooks run in their order (scopes before the tensors they own, tensors
 * before the nodes that save them). A hook describes each record as a gs_trace_event and
 * hands it to gs__trace_snapshot_event, which writes it into this thread's stream with the
 * last number taken: snapshot events take no number, so numbering stays the same with the
 * log on or off. */
#include "trace-writer.h"
#include "writer-impl.h"

#define MAX_HOOKS 8

static struct {
  int order;
  gs__trace_snapshot_fn fn;
} hooks[MAX_HOOKS];
static int n_hooks;
static GS__THREAD_LOCAL uint64_t snapshot_seq; /* while a snapshot is written: its number */
/* Whether its snapshot_begin is written: at the first record a hook writes, so a program with
 * nothing alive (everything disposed, or only numbers taken) gets no snapshot at all. */
static GS__THREAD_LOCAL bool snapshot_begun;

/* Why the log opens with a snapshot (the string snapshot_begin names). */
static const char late_reason[] = "recording began after the program had started";

static void write_event(const gs_trace_event *e);

void gs__trace_add_snapshot_hook(int order, gs__trace_snapshot_fn fn) {
  if (n_hooks == MAX_HOOKS)
    return; /* the engine's layers register fewer: a bound, not a limit met */
  int at = n_hooks++;
  while (at > 0 && hooks[at - 1].order > order) {
    hooks[at] = hooks[at - 1];
    at--;
  }
  hooks[at].order = order;
  hooks[at].fn = fn;
}

void gs__trace_snapshot_event(const gs_trace_event *e) {
  if (!snapshot_begun) {
    snapshot_begun = true;
    /* How many objects are alive is known once the hooks have walked them: snapshot_end says
     * it, and snapshot_begin says 0, "not known yet" (doc/trace-format.md). */
    uint32_t reason = gs__trace_string(late_reason);
    write_event(&(gs_trace_event){.kind = GS_TRACE_SNAPSHOT_BEGIN, .name = reason});
  }
  write_event(e);
}

static void write_event(const gs_trace_event *e) {
  size_t max = gs__trace_max_event_size(e);
  if (max > GS__TW_BUFFER_BYTES / 2)
    return; /* beyond the format's limits on arrays and text: callers split such records */
  gs__tw_buffer *b = gs__tw_mine;
  if (!b && !(b = gs__tw_buffer_new()))
    return;
  uint8_t *p = gs__tw_begin_in(b, e->kind, snapshot_seq, max);
  if (p)
    gs__tw_end(gs__trace_encode_fields(p, e, GS__TRACE_SCHEMA_MINOR, &b->ids));
}

void gs__trace_write_snapshot(void) {
  snapshot_seq = gs__events_settle();
  if (snapshot_seq == 0 || n_hooks == 0)
    return; /* nothing has happened yet: the log begins at the run's start */
  gs__tw_emit_pending();
  snapshot_begun = false;
  uint64_t objects = 0;
  for (int i = 0; i < n_hooks; i++)
    objects += hooks[i].fn();
  if (!snapshot_begun)
    return; /* nothing is alive: the log needs no snapshot */
  write_event(&(gs_trace_event){.kind = GS_TRACE_SNAPSHOT_END, .count = objects});
  snapshot_begun = false;
  gs_trace_flush(); /* the snapshot reaches the log before anything else happens */
}
