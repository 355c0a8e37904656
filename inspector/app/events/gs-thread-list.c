/* gs-thread-list.c: the event list's thread choices, made on demand (see gs-thread-list.h). */
#include "gs-thread-list.h"

#include <glib/gi18n.h>

struct _GsThreadList {
  GObject parent_instance;
  gs_trace_model *model; /* borrowed */
  guint n_threads;       /* threads announced */
};

static GType list_get_item_type(GListModel *list) {
  (void)list;
  return GTK_TYPE_STRING_OBJECT;
}

static guint list_get_n_items(GListModel *list) {
  return 1 + GS_THREAD_LIST(list)->n_threads;
}

static gpointer list_get_item(GListModel *list, guint position) {
  GsThreadList *self = GS_THREAD_LIST(list);
  if (position == 0)
    return gtk_string_object_new(_("All threads"));
  if (position > self->n_threads)
    return NULL;
  guint32 thread = g_array_index(gs_trace_model_threads(self->model), guint32, position - 1);
  g_autofree char *label = g_strdup_printf(_("Thread %u"), thread);
  return gtk_string_object_new(label);
}

static void gs_thread_list_list_init(GListModelInterface *iface) {
  iface->get_item_type = list_get_item_type;
  iface->get_n_items = list_get_n_items;
  iface->get_item = list_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE(GsThreadList, gs_thread_list, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, gs_thread_list_list_init))

static void gs_thread_list_class_init(GsThreadListClass *klass) {
  (void)klass;
}

static void gs_thread_list_init(GsThreadList *self) {
  (void)self;
}

GsThreadList *gs_thread_list_new(void) {
  return g_object_new(GS_TYPE_THREAD_LIST, NULL);
}

static guint threads_in(gs_trace_model *model) {
  const GArray *threads = model ? gs_trace_model_threads(model) : NULL;
  return threads ? threads->len : 0;
}

void gs_thread_list_set_model(GsThreadList *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_THREAD_LIST(self));
  guint old = self->n_threads;
  self->model = model;
  self->n_threads = threads_in(model);
  if (old || self->n_threads)
    g_list_model_items_changed(G_LIST_MODEL(self), 1, old, self->n_threads);
}

void gs_thread_list_model_grew(GsThreadList *self) {
  g_return_if_fail(GS_IS_THREAD_LIST(self));
  guint old = self->n_threads, now = threads_in(self->model);
  if (now <= old)
    return; /* threads are only ever added */
  self->n_threads = now;
  g_list_model_items_changed(G_LIST_MODEL(self), 1 + old, 0, now - old);
}
