/* gs-scope-list.h: the children of one scope (or the root scopes) as a lazy GListModel of
 * GsScopeItem, read from gs_trace_model_scope_children. Items are made when GTK asks for
 * them, so a run with 100 k step scopes costs nothing until rows are shown. The model is
 * borrowed: the scope tree view detaches every list before its model goes away. */
#pragma once

#include <gio/gio.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_SCOPE_LIST (gs_scope_list_get_type())
G_DECLARE_FINAL_TYPE(GsScopeList, gs_scope_list, GS, SCOPE_LIST, GObject)

/* The scopes whose outer is parent_id (0: the roots) in model, in begin order. */
GsScopeList *gs_scope_list_new(gs_trace_model *model, guint64 parent_id);
guint64 gs_scope_list_get_parent_id(GsScopeList *self);
/* Picks up scopes the model gained since the last call (items-changed at the end). */
void gs_scope_list_refresh(GsScopeList *self);
/* Forgets the model: the list becomes empty and stays so. */
void gs_scope_list_detach(GsScopeList *self);

G_END_DECLS
