/* layout-worker.h: the one thread that runs Graphviz for a UI.
 *
 * Graphviz keeps global state and is not thread-safe, so a single worker thread owns the GVC
 * context and does every layout. Requests are queued; a newer request supersedes the ones
 * still waiting (a scrubber dragged over 200 events lays out the last one, not 200), the
 * one being laid out finishes. Results come back on the GMainContext that was current
 * (thread-default) when the request was made, so a layout never blocks the UI. */
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
/* Drops pending requests, waits for the one in progress, ends the thread. Results not yet
 * delivered are dropped (their callbacks do not run). */
void gs_layout_worker_free(gs_layout_worker *worker);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_layout_worker, gs_layout_worker_free)

/* Queues graph (taken) for layout; returns the request's serial (increasing from 1). destroy
 * (may be NULL) is called on user_data once the request is answered or dropped. */
guint64 gs_layout_worker_request(gs_layout_worker *worker, gs_graph *graph,
                                 const gs_layout_options *options, gs_layout_done_fn done,
                                 gpointer user_data, GDestroyNotify destroy);

/* Layouts finished so far and requests superseded (for tests and the view's status). */
guint64 gs_layout_worker_n_done(gs_layout_worker *worker);
guint64 gs_layout_worker_n_superseded(gs_layout_worker *worker);

G_END_DECLS
