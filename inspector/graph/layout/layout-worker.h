/* layout-worker.h: layouts for a UI, off its thread.
 *
 * One layout thread per process runs every Graphviz layout a UI asks for (Graphviz is not
 * thread-safe; graph-layout.c keeps its one context). Each view owns a gs_layout_worker: its
 * queue on that thread. A newer request supersedes the view's request still waiting (a
 * scrubber dragged over 200 events lays out the last one, not 200); the one being laid out
 * finishes. Views take turns, so one view's huge graph does not starve another's queue for
 * more than one layout. Results come back on the GMainContext that was thread-default when the
 * request was made, always through an idle source, so a layout never blocks the UI. */
#pragma once

#include <glib.h>

#include "graph-layout.h"

G_BEGIN_DECLS

typedef struct gs_layout_worker gs_layout_worker;

/* Called on the requester's main context with the layout (caller owns it) or an error. serial
 * is the request's, from gs_layout_worker_request. Superseded requests are never answered. */
typedef void (*gs_layout_done_fn)(guint64 serial, gs_layout *layout, const GError *error,
                                  gpointer user_data);

gs_layout_worker *gs_layout_worker_new(void);
/* Drops the pending request; a layout in progress finishes but is not delivered, nor is any
 * result not yet delivered (their callbacks do not run; their destroy notifies do). */
void gs_layout_worker_free(gs_layout_worker *worker);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_layout_worker, gs_layout_worker_free)

/* Queues graph (taken) for layout; returns the request's serial (increasing from 1). destroy
 * (may be NULL) is called on user_data on the requester's context once the request is
 * answered or dropped. */
guint64 gs_layout_worker_request(gs_layout_worker *worker, gs_graph *graph,
                                 const gs_layout_options *options, gs_layout_done_fn done,
                                 gpointer user_data, GDestroyNotify destroy);

/* As gs_layout_worker_request for a graph as built (gs_graph_source_build): the thread first
 * collapses it (gs_graph_collapse with collapse_limit and a copy of expanded, a set of group
 * keys that may be NULL) and splits its hubs (GS_GRAPH_HUB_LIMIT), as the view shows it. On a
 * graph of hundreds of thousands of items that is a second the UI thread does not wait. */
guint64 gs_layout_worker_request_full(gs_layout_worker *worker, gs_graph *full,
                                      guint collapse_limit, GHashTable *expanded,
                                      const gs_layout_options *options, gs_layout_done_fn done,
                                      gpointer user_data, GDestroyNotify destroy);

/* Layouts finished so far and requests superseded (tests, status). */
guint64 gs_layout_worker_n_done(gs_layout_worker *worker);
guint64 gs_layout_worker_n_superseded(gs_layout_worker *worker);

G_END_DECLS
