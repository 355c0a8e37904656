/* gs-scope-item.c: see gs-scope-item.h. */
#include "gs-scope-item.h"

struct _GsScopeItem {
  GObject parent_instance;
  guint64 scope_id;
  guint position;
  guint group;
};

G_DEFINE_FINAL_TYPE(GsScopeItem, gs_scope_item, G_TYPE_OBJECT)

static void gs_scope_item_class_init(GsScopeItemClass *klass) { (void)klass; }

static void gs_scope_item_init(GsScopeItem *self) { self->group = G_MAXUINT; }

GsScopeItem *gs_scope_item_new(guint64 scope_id, guint position) {
  GsScopeItem *self = g_object_new(GS_TYPE_SCOPE_ITEM, NULL);
  self->scope_id = scope_id;
  self->position = position;
  return self;
}

GsScopeItem *gs_scope_item_new_group(guint group) {
  GsScopeItem *self = g_object_new(GS_TYPE_SCOPE_ITEM, NULL);
  self->position = G_MAXUINT;
  self->group = group;
  return self;
}

gboolean gs_scope_item_is_group(GsScopeItem *self) {
  g_return_val_if_fail(GS_IS_SCOPE_ITEM(self), FALSE);
  return self->group != G_MAXUINT;
}

guint gs_scope_item_get_group(GsScopeItem *self) {
  g_return_val_if_fail(GS_IS_SCOPE_ITEM(self), G_MAXUINT);
  return self->group;
}

guint64 gs_scope_item_get_scope_id(GsScopeItem *self) {
  g_return_val_if_fail(GS_IS_SCOPE_ITEM(self), 0);
  return self->scope_id;
}

guint gs_scope_item_get_position(GsScopeItem *self) {
  g_return_val_if_fail(GS_IS_SCOPE_ITEM(self), G_MAXUINT);
  return self->position;
}
