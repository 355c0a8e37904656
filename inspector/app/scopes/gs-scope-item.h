/* gs-scope-item.h: one row of the scope tree: a scope (its id and its place in the model's
 * list of scopes) or a group of sibling scopes with one name (its group number). Nothing else
 * is copied: every cell reads the model at the scrubber's event, so a row costs a few integers
 * however long the run. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define GS_TYPE_SCOPE_ITEM (gs_scope_item_get_type())
G_DECLARE_FINAL_TYPE(GsScopeItem, gs_scope_item, GS, SCOPE_ITEM, GObject)

GsScopeItem *gs_scope_item_new(guint64 scope_id, guint position);
/* A row standing for every instance of group (gs_trace_model_scope_groups). */
GsScopeItem *gs_scope_item_new_group(guint group);
gboolean gs_scope_item_is_group(GsScopeItem *self);
/* The group number of a group row, G_MAXUINT for a scope row. */
guint gs_scope_item_get_group(GsScopeItem *self);
/* A scope row's scope, 0 for a group row. */
guint64 gs_scope_item_get_scope_id(GsScopeItem *self);
/* The scope's position for gs_trace_model_scope_at (G_MAXUINT for a group row). */
guint gs_scope_item_get_position(GsScopeItem *self);

G_END_DECLS
