/* gs-event-index-list.c: see gs-event-index-list.h. */
#include "gs-event-index-list.h"

#include <string.h>

#include "gs-event-ref.h"

struct _GsEventIndexList {
  GObject parent_instance;
  guint64 *indices;
  guint n;
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
  return GS_EVENT_INDEX_LIST(list)->n;
}

static gpointer get_item(GListModel *list, guint position) {
  GsEventIndexList *self = GS_EVENT_INDEX_LIST(list);
  return position < self->n ? gs_event_ref_new(self->indices[position]) : NULL;
}

static void gs_event_index_list_model_init(GListModelInterface *iface) {
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void gs_event_index_list_finalize(GObject *object) {
  g_free(GS_EVENT_INDEX_LIST(object)->indices);
  G_OBJECT_CLASS(gs_event_index_list_parent_class)->finalize(object);
}

static void gs_event_index_list_class_init(GsEventIndexListClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = gs_event_index_list_finalize;
}

static void gs_event_index_list_init(GsEventIndexList *self) { (void)self; }

GsEventIndexList *gs_event_index_list_new_take(guint64 *indices, guint n) {
  GsEventIndexList *self = g_object_new(GS_TYPE_EVENT_INDEX_LIST, NULL);
  self->indices = indices;
  self->n = indices ? n : 0;
  return self;
}

void gs_event_index_list_update_take(GsEventIndexList *self, guint64 *indices, guint n) {
  g_return_if_fail(GS_IS_EVENT_INDEX_LIST(self));
  if (!indices)
    n = 0;
  guint old = self->n;
  gboolean prefix = n >= old && (old == 0 || memcmp(indices, self->indices, old * sizeof *indices) == 0);
  g_free(self->indices);
  self->indices = indices;
  self->n = n;
  if (prefix) {
    if (n > old)
      g_list_model_items_changed(G_LIST_MODEL(self), old, 0, n - old);
  } else {
    g_list_model_items_changed(G_LIST_MODEL(self), 0, old, n);
  }
}

guint64 gs_event_index_list_get_index(GsEventIndexList *self, guint position) {
  g_return_val_if_fail(GS_IS_EVENT_INDEX_LIST(self), 0);
  g_return_val_if_fail(position < self->n, 0);
  return self->indices[position];
}

guint gs_event_index_list_count_upto(GsEventIndexList *self, guint64 index) {
  g_return_val_if_fail(GS_IS_EVENT_INDEX_LIST(self), 0);
  guint lo = 0, hi = self->n; /* binary search: the first position past index */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (self->indices[mid] <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
