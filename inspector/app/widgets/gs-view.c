/* gs-view.c: the view contract's interface (see gs-view.h): dispatch and its two signals. */
#include "gs-view.h"

G_DEFINE_INTERFACE(GsView, gs_view, GTK_TYPE_WIDGET)

enum { SIGNAL_TENSOR_SELECTED, SIGNAL_EVENT_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void gs_view_default_init(GsViewInterface *iface) {
  signals[SIGNAL_TENSOR_SELECTED] =
      g_signal_new("tensor-selected", G_TYPE_FROM_INTERFACE(iface), G_SIGNAL_RUN_LAST, 0, NULL,
                   NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
  signals[SIGNAL_EVENT_SELECTED] =
      g_signal_new("event-selected", G_TYPE_FROM_INTERFACE(iface), G_SIGNAL_RUN_LAST, 0, NULL,
                   NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
}

void gs_view_set_model(GsView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_VIEW(self));
  GS_VIEW_GET_IFACE(self)->set_model(self, model);
}

void gs_view_set_position(GsView *self, guint64 index) {
  g_return_if_fail(GS_IS_VIEW(self));
  GS_VIEW_GET_IFACE(self)->set_position(self, index);
}

void gs_view_model_grew(GsView *self) {
  g_return_if_fail(GS_IS_VIEW(self));
  GS_VIEW_GET_IFACE(self)->model_grew(self);
}

void gs_view_select_tensor(GsView *self, guint64 tensor) {
  g_return_if_fail(GS_IS_VIEW(self));
  GsViewInterface *iface = GS_VIEW_GET_IFACE(self);
  if (iface->select_tensor)
    iface->select_tensor(self, tensor);
}

void gs_view_emit_tensor_selected(GsView *self, guint64 tensor) {
  g_signal_emit(self, signals[SIGNAL_TENSOR_SELECTED], 0, tensor);
}

void gs_view_emit_event_selected(GsView *self, guint64 index) {
  g_signal_emit(self, signals[SIGNAL_EVENT_SELECTED], 0, index);
}

void gs_view_set_tooltip(GtkWidget *widget, const char *text) {
  if (g_strcmp0(gtk_widget_get_tooltip_text(widget), text) != 0)
    gtk_widget_set_tooltip_text(widget, text);
}

void gs_widget_unparent_children(GtkWidget *widget) {
  for (GtkWidget *child; (child = gtk_widget_get_first_child(widget));)
    gtk_widget_unparent(child);
}
