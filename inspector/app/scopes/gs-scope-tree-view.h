/* gs-scope-tree-view.h: the dispose scopes of a run as a tree (a scope's children are the
 * scopes begun inside it; siblings with one name are grouped under a row "train step × 2,700"
 * with their totals and min / mean / max peak), with each scope's statistics at the
 * scrubber's event: objects created, moved in, disposed, moved out and alive, bytes owned now
 * and at peak, begin and end events, duration. The tree follows the scrubber: it reveals and
 * selects the innermost scope open at its event, unless the user picked a row that holds it.
 * Scopes not yet begun at that event are greyed, open ones have their name in bold, ended
 * ones look plain with their end event in the End column and a tooltip. Rows are made lazily (GtkTreeListModel over
 * the model's scope-children query), so 100 k step scopes cost nothing until shown.
 *
 * Signals: scope-selected (guint64 scope_id, 0 when the selection is cleared), so the capture
 * page can filter the event list; tensor-selected and event-selected (the view contract; this
 * view emits event-selected with a scope's begin event when a row is activated). */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_SCOPE_TREE_VIEW (gs_scope_tree_view_get_type())
G_DECLARE_FINAL_TYPE(GsScopeTreeView, gs_scope_tree_view, GS, SCOPE_TREE_VIEW, GtkWidget)

GtkWidget *gs_scope_tree_view_new(void);
/* Borrowed: the capture page owns the model and outlives its views. NULL clears. */
void gs_scope_tree_view_set_model(GsScopeTreeView *self, gs_trace_model *model);
/* The scrubber's event: statistics are those just after it. */
void gs_scope_tree_view_set_position(GsScopeTreeView *self, guint64 index);
guint64 gs_scope_tree_view_get_position(GsScopeTreeView *self);
/* A live source appended events: new scopes appear, open ones may gain children. */
void gs_scope_tree_view_model_grew(GsScopeTreeView *self);
/* What the scope's row says in its tooltip at the scrubber's event: not begun yet, open, or
 * "Ended at event N". NULL for a scope the model does not have. Free with g_free. */
char *gs_scope_tree_view_describe_scope(GsScopeTreeView *self, guint64 scope_id);
/* FALSE while a big tree's top-level rows are still being let in, a few each frame (GTK 4.8
 * makes a list's rows all at once otherwise); TRUE for a small tree from the start. */
gboolean gs_scope_tree_view_is_complete(GsScopeTreeView *self);
/* Does now what set_position(index) would do first and at most once per scope (walk up the
 * chain of outer scopes of the scope open there), so that a caller can spend that time in a
 * turn of the main loop of its own. */
void gs_scope_tree_view_prepare_position(GsScopeTreeView *self, guint64 index);
/* Where the scope's objects came from and went at the scrubber's event, in words: created +
 * moved in = disposed + moved out + still held, what moving in and out means, and how many
 * are leaked. NULL for a scope the model does not have. Free with g_free. */
char *gs_scope_tree_view_describe_account(GsScopeTreeView *self, guint64 scope_id);
/* The scope the user picked (a click, a key), or 0: rows selected to follow the scrubber are
 * not picks. */
guint64 gs_scope_tree_view_get_selected_scope(GsScopeTreeView *self);

/* At a live run's end the tree reveals the newest scope at most every ms milliseconds
 * (default 250; 0: on every frame, as the live tree's test checks it). */
void gs_scope_tree_view_set_live_follow_interval(GsScopeTreeView *self, guint ms);

G_END_DECLS
