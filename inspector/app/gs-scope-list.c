/* gs-scope-list.c: see gs-scope-list.h. */
#include "gs-scope-list.h"

#include "gs-scope-item.h"

struct _GsScopeList {
  GObject parent_instance;
  gs_trace_model *model; /* borrowed; NULL once detached */
  guint64 parent_id;
  guint n_items;         /* what listeners were last told */
};

static void gs_scope_list_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(GsScopeList, gs_scope_list, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, gs_scope_list_model_init))

static const GArray *children(GsScopeList *self) {
  return self->model ? gs_trace_model_scope_children(self->model, self->parent_id) : NULL;
}

static GType gs_scope_list_get_item_type(GListModel *list) {
  (void)list;
  return GS_TYPE_SCOPE_ITEM;
}

static guint gs_scope_list_get_n_items(GListModel *list) {
  return GS_SCOPE_LIST(list)->n_items;
}

static gpointer gs_scope_list_get_item(GListModel *list, guint position) {
  GsScopeList *self = GS_SCOPE_LIST(list);
  const GArray *positions = children(self);
  if (position >= self->n_items || !positions || position >= positions->len)
    return NULL;
  guint scope_position = g_array_index(positions, guint, position);
  const gs_replay_scope *scope = gs_trace_model_scope_at(self->model, scope_position);
  if (!scope)
    return NULL;
  return gs_scope_item_new(scope->id, scope_position);
}

static void gs_scope_list_model_init(GListModelInterface *iface) {
  iface->get_item_type = gs_scope_list_get_item_type;
  iface->get_n_items = gs_scope_list_get_n_items;
  iface->get_item = gs_scope_list_get_item;
}

static void gs_scope_list_class_init(GsScopeListClass *klass) { (void)klass; }

static void gs_scope_list_init(GsScopeList *self) { (void)self; }

GsScopeList *gs_scope_list_new(gs_trace_model *model, guint64 parent_id) {
  GsScopeList *self = g_object_new(GS_TYPE_SCOPE_LIST, NULL);
  self->model = model;
  self->parent_id = parent_id;
  const GArray *positions = children(self);
  self->n_items = positions ? positions->len : 0;
  return self;
}

guint64 gs_scope_list_get_parent_id(GsScopeList *self) {
  g_return_val_if_fail(GS_IS_SCOPE_LIST(self), 0);
  return self->parent_id;
}

void gs_scope_list_refresh(GsScopeList *self) {
  g_return_if_fail(GS_IS_SCOPE_LIST(self));
  const GArray *positions = children(self);
  guint n = positions ? positions->len : 0;
  if (n <= self->n_items)
    return; /* scopes are only ever added */
  guint old = self->n_items;
  self->n_items = n;
  g_list_model_items_changed(G_LIST_MODEL(self), old, 0, n - old);
}

void gs_scope_list_detach(GsScopeList *self) {
  g_return_if_fail(GS_IS_SCOPE_LIST(self));
  guint old = self->n_items;
  self->model = NULL;
  self->n_items = 0;
  if (old)
    g_list_model_items_changed(G_LIST_MODEL(self), 0, old, 0);
}
