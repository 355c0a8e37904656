/* gs-scope-list.c: see gs-scope-list.h. */
#include "gs-scope-list.h"

#include "gs-scope-item.h"

struct _GsScopeList {
  GObject parent_instance;
  gs_trace_model *model; /* borrowed; NULL once detached */
  guint64 parent_id;
  guint group;           /* G_MAXUINT: a list of names under parent_id */
  guint n_items;         /* what listeners were last told */
  guint n_grown;         /* gs_trace_model_scope_groups_grown entries already handled */
};

static void gs_scope_list_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(GsScopeList, gs_scope_list, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, gs_scope_list_model_init))

/* Group numbers (names under a parent) or scope positions (a group's instances). */
static const GArray *entries(GsScopeList *self) {
  if (!self->model)
    return NULL;
  return self->group == G_MAXUINT ? gs_trace_model_scope_groups(self->model, self->parent_id)
                                  : gs_trace_model_scope_group_instances(self->model, self->group);
}

static const GArray *grown(GsScopeList *self) {
  return self->model && self->group == G_MAXUINT
             ? gs_trace_model_scope_groups_grown(self->model, self->parent_id)
             : NULL;
}

static GType gs_scope_list_get_item_type(GListModel *list) {
  (void)list;
  return GS_TYPE_SCOPE_ITEM;
}

static guint gs_scope_list_get_n_items(GListModel *list) {
  return GS_SCOPE_LIST(list)->n_items;
}

static gpointer scope_item(GsScopeList *self, guint scope_position) {
  const gs_replay_scope *scope = gs_trace_model_scope_at(self->model, scope_position);
  return scope ? gs_scope_item_new(scope->id, scope_position) : NULL;
}

static gpointer gs_scope_list_get_item(GListModel *list, guint position) {
  GsScopeList *self = GS_SCOPE_LIST(list);
  const GArray *all = entries(self);
  if (position >= self->n_items || !all || position >= all->len)
    return NULL;
  guint entry = g_array_index(all, guint, position);
  if (self->group != G_MAXUINT)
    return scope_item(self, entry);
  /* A name that occurs once is its scope's own row. */
  const GArray *instances = gs_trace_model_scope_group_instances(self->model, entry);
  if (instances && instances->len == 1)
    return scope_item(self, g_array_index(instances, guint, 0));
  return gs_scope_item_new_group(entry);
}

static void gs_scope_list_model_init(GListModelInterface *iface) {
  iface->get_item_type = gs_scope_list_get_item_type;
  iface->get_n_items = gs_scope_list_get_n_items;
  iface->get_item = gs_scope_list_get_item;
}

static void gs_scope_list_class_init(GsScopeListClass *klass) { (void)klass; }

static void gs_scope_list_init(GsScopeList *self) { self->group = G_MAXUINT; }

static GsScopeList *list_new(gs_trace_model *model, guint64 parent_id, guint group) {
  GsScopeList *self = g_object_new(GS_TYPE_SCOPE_LIST, NULL);
  self->model = model;
  self->parent_id = parent_id;
  self->group = group;
  const GArray *all = entries(self), *g = grown(self);
  self->n_items = all ? all->len : 0;
  self->n_grown = g ? g->len : 0;
  return self;
}

GsScopeList *gs_scope_list_new(gs_trace_model *model, guint64 parent_id) {
  return list_new(model, parent_id, G_MAXUINT);
}

GsScopeList *gs_scope_list_new_group(gs_trace_model *model, guint group) {
  return list_new(model, 0, group);
}

void gs_scope_list_refresh(GsScopeList *self) {
  g_return_if_fail(GS_IS_SCOPE_LIST(self));
  /* Names that gained a second instance: their rows become group rows. Only those already
   * listed are replaced (newer ones arrive as group rows below). */
  const GArray *g = grown(self);
  for (; g && self->n_grown < g->len; self->n_grown++) {
    guint group = g_array_index(g, guint, self->n_grown);
    guint index = gs_trace_model_scope_group_index(self->model, group);
    if (index < self->n_items)
      g_list_model_items_changed(G_LIST_MODEL(self), index, 1, 1);
  }
  const GArray *all = entries(self);
  guint n = all ? all->len : 0;
  if (n <= self->n_items)
    return; /* rows are only ever added */
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
