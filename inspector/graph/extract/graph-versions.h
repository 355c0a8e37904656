/* graph-versions.h: storage version counters over time, for the graph's "versions on tensors"
 * and its failed version checks.
 *
 * The replayed state (replay.h) knows what is alive but not versions: a storage's counter
 * moves only on inplace_write events. This tracker is fed those events (and errors) in log
 * order and answers "version of storage S now", "version of S when event seq happened" (what a
 * node saw when it saved a tensor), and "who wrote S last". Only inplace_write and error
 * events matter, so a model can feed it without decoding anything else.
 *
 * It can also go back: every write and error keeps its log index, and histories of freed
 * storages are kept (storage ids carry a generation, so they never come back), so rewinding
 * to an earlier index only drops what was applied at or after it, in one pass over the
 * written storages. That costs memory for every in-place write of the run (40 bytes each)
 * and saves replaying from the first event on every move back. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

G_BEGIN_DECLS

typedef struct gs_graph_versions gs_graph_versions;

/* The last in-place write to a storage. */
typedef struct gs_graph_write {
  guint64 index;  /* the inplace_write event's position in the log */
  guint64 seq;    /* its number */
  guint64 tensor; /* the tensor written through */
  guint64 version;
  const char *op; /* interned; "" if unknown */
} gs_graph_write;

gs_graph_versions *gs_graph_versions_new(void);
void gs_graph_versions_free(gs_graph_versions *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_graph_versions, gs_graph_versions_free)

/* TRUE for the kinds gs_graph_versions_apply uses: callers may skip decoding the others. */
gboolean gs_graph_versions_wants(gs_trace_kind kind);
/* Applies event e, at position index of the log (indices ascending from call to call); op_text
 * is the text of e->op for inplace_write ("" or NULL if unknown). */
void gs_graph_versions_apply(gs_graph_versions *v, guint64 index, const gs_trace_event *e,
                             const char *op_text);
/* Forgets every event applied at index until or later: the state just before until. */
void gs_graph_versions_rewind(gs_graph_versions *v, guint64 until);

/* The storage's version now (0 if never written). */
guint64 gs_graph_versions_now(const gs_graph_versions *v, guint64 storage);
/* Its version just before event seq (what a node created at seq saved). */
guint64 gs_graph_versions_before(const gs_graph_versions *v, guint64 storage, guint64 seq);
/* Every write to it so far, in log order (*n of them; NULL if never written). */
const gs_graph_write *gs_graph_versions_writes(const gs_graph_versions *v, guint64 storage,
                                               guint *n);
/* Its last write, or NULL if never written. */
const gs_graph_write *gs_graph_versions_last_write(const gs_graph_versions *v, guint64 storage);
/* The text of the last error event that reported a version mismatch, and its seq; NULL if
 * none was seen, or if a backward pass began after it (its failure is no longer the news: the
 * graph's red marks still show what would fail). */
const char *gs_graph_versions_error(const gs_graph_versions *v, guint64 *seq);

G_END_DECLS
