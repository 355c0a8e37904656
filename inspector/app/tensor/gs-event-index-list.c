/* gs-event-index-list.c: see gs-event-index-list.h. */
#include "gs-event-index-list.h"

#include "gs-event-ref.h"

struct _GsEventIndexList {
  GObject parent_instance;
  gs_tensor_life *life;
};

static void gs_event_index_list_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(GsEventIndexList, gs_event_index_list, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL,
                                                    gs_event_index_list_model_init))

static GType get_item_type(GListModel *list) {
  (void)list;
  return GS_TYPE_EVENT_REF;
}

static guint get_n_items(GListModel *list) {
  return gs_tensor_life_len(GS_EVENT_INDEX_LIST(list)->life);
}

static gpointer get_item(GListModel *list, guint position) {
  GsEventIndexList *self = GS_EVENT_INDEX_LIST(list);
  return position < gs_tensor_life_len(self->life)
             ? gs_event_ref_new(gs_tensor_life_at(self->life, position))
             : NULL;
}

static void gs_event_index_list_model_init(GListModelInterface *iface) {
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void gs_event_index_list_finalize(GObject *object) {
  gs_tensor_life_free(GS_EVENT_INDEX_LIST(object)->life);
  G_OBJECT_CLASS(gs_event_index_list_parent_class)->finalize(object);
}

static void gs_event_index_list_class_init(GsEventIndexListClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = gs_event_index_list_finalize;
}

static void gs_event_index_list_init(GsEventIndexList *self) { (void)self; }

GsEventIndexList *gs_event_index_list_new_take(gs_tensor_life *life) {
  GsEventIndexList *self = g_object_new(GS_TYPE_EVENT_INDEX_LIST, NULL);
  self->life = life;
  return self;
}

void gs_event_index_list_update_take(GsEventIndexList *self, gs_tensor_life *life) {
  g_return_if_fail(GS_IS_EVENT_INDEX_LIST(self));
  guint old = gs_tensor_life_len(self->life), n = gs_tensor_life_len(life);
  gboolean prefix = n >= old && gs_tensor_life_starts_with(life, self->life);
  gs_tensor_life_free(self->life);
  self->life = life;
  if (prefix) {
    if (n > old)
      g_list_model_items_changed(G_LIST_MODEL(self), old, 0, n - old);
  } else {
    g_list_model_items_changed(G_LIST_MODEL(self), 0, old, n);
  }
}

guint64 gs_event_index_list_get_index(GsEventIndexList *self, guint position) {
  g_return_val_if_fail(GS_IS_EVENT_INDEX_LIST(self), 0);
  g_return_val_if_fail(position < gs_tensor_life_len(self->life), 0);
  return gs_tensor_life_at(self->life, position);
}

guint gs_event_index_list_count_upto(GsEventIndexList *self, guint64 index) {
  g_return_val_if_fail(GS_IS_EVENT_INDEX_LIST(self), 0);
  return gs_tensor_life_count_upto(self->life, index);
}
