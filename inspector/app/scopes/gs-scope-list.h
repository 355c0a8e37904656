/* gs-scope-list.h: one level of the scope tree as a lazy GListModel of GsScopeItem: under a
 * scope (or at the root), one row per name its child scopes have (a group row when the name
 * occurs more than once, else the one scope's own row), in order of first begin; under a
 * group row, the group's instances in begin order. Items are made when GTK asks for them, so a
 * run with 100 k step scopes costs nothing until rows are shown. The model is borrowed: the
 * scope tree view detaches every list before its model goes away. */
#pragma once

#include <gio/gio.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_SCOPE_LIST (gs_scope_list_get_type())
G_DECLARE_FINAL_TYPE(GsScopeList, gs_scope_list, GS, SCOPE_LIST, GObject)

/* The names of the scopes whose outer is parent_id (0: the roots) in model. */
GsScopeList *gs_scope_list_new(gs_trace_model *model, guint64 parent_id);
/* The instances of group. */
GsScopeList *gs_scope_list_new_group(gs_trace_model *model, guint group);
/* Picks up what the model gained since the last call: rows appended at the end, and a scope
 * row replaced by a group row when its name gains a second instance. */
void gs_scope_list_refresh(GsScopeList *self);
/* Forgets the model: the list becomes empty and stays so. */
void gs_scope_list_detach(GsScopeList *self);

G_END_DECLS
