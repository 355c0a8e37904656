/* gs-scope-item.h: one row of the scope tree: a scope's id and its place in the model's list
 * of scopes. Nothing else is copied: every cell reads the model at the scrubber's event, so a
 * row costs two integers however long the run. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define GS_TYPE_SCOPE_ITEM (gs_scope_item_get_type())
G_DECLARE_FINAL_TYPE(GsScopeItem, gs_scope_item, GS, SCOPE_ITEM, GObject)

GsScopeItem *gs_scope_item_new(guint64 scope_id, guint position);
guint64 gs_scope_item_get_scope_id(GsScopeItem *self);
/* The scope's position for gs_trace_model_scope_at. */
guint gs_scope_item_get_position(GsScopeItem *self);

G_END_DECLS
