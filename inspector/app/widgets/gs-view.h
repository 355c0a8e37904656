/* gs-view.h: the contract every view of a capture follows, as a GInterface. A view shows one
 * trace model (set_model; borrowed, the capture page owns it and outlives its views), the
 * state just after the scrubber's event (set_position), keeps up with a live source
 * (model_grew), and may outline a tensor picked in another view (select_tensor). What the
 * user picks in a view comes out of two signals declared here once:
 *   tensor-selected (guint64 tensor id)   event-selected (guint64 event index)
 * The capture page drives its views through this interface in loops. */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_VIEW (gs_view_get_type())
G_DECLARE_INTERFACE(GsView, gs_view, GS, VIEW, GtkWidget)

struct _GsViewInterface {
  GTypeInterface parent_iface;
  void (*set_model)(GsView *self, gs_trace_model *model);
  void (*set_position)(GsView *self, guint64 index);
  void (*model_grew)(GsView *self);
  void (*select_tensor)(GsView *self, guint64 tensor); /* NULL: nothing to outline */
};

void gs_view_set_model(GsView *self, gs_trace_model *model);
void gs_view_set_position(GsView *self, guint64 index);
void gs_view_model_grew(GsView *self);
void gs_view_select_tensor(GsView *self, guint64 tensor);

/* Emit the interface's signals. */
void gs_view_emit_tensor_selected(GsView *self, guint64 tensor);
void gs_view_emit_event_selected(GsView *self, guint64 index);

/* Sets widget's tooltip (NULL: none) unless it already says text. GTK 4.8 asks the display
 * where the pointer is on every gtk_widget_set_tooltip_text (a round trip to the X server):
 * done for every cell bound, or every step of a scrub, that was half the cost. */
void gs_view_set_tooltip(GtkWidget *widget, const char *text);

/* Unparents widget's children: for a widget made from a template whose top box is its child.
 * gtk_widget_dispose_template lets go of the bound children only; the top box is not one. */
void gs_widget_unparent_children(GtkWidget *widget);

/* Defines prefix_view_iface_init for G_IMPLEMENT_INTERFACE from the view's typed functions
 * prefix_set_model, prefix_set_position and prefix_model_grew (wrappers, so no function is
 * called through a pointer of another type). The _WITH_SELECT form also takes the typed
 * function that outlines a tensor. */
#define GS_VIEW_WRAPPERS_(Type, prefix)                                                      \
  static void prefix##_view_set_model(GsView *view, gs_trace_model *model) {                 \
    prefix##_set_model((Type *)view, model);                                                 \
  }                                                                                          \
  static void prefix##_view_set_position(GsView *view, guint64 index) {                      \
    prefix##_set_position((Type *)view, index);                                              \
  }                                                                                          \
  static void prefix##_view_model_grew(GsView *view) {                                       \
    prefix##_model_grew((Type *)view);                                                       \
  }
#define GS_VIEW_IFACE_INIT(Type, prefix)                                                     \
  GS_VIEW_WRAPPERS_(Type, prefix)                                                            \
  static void prefix##_view_iface_init(GsViewInterface *iface) {                             \
    iface->set_model = prefix##_view_set_model;                                              \
    iface->set_position = prefix##_view_set_position;                                        \
    iface->model_grew = prefix##_view_model_grew;                                            \
  }
#define GS_VIEW_IFACE_INIT_WITH_SELECT(Type, prefix, select)                                 \
  GS_VIEW_WRAPPERS_(Type, prefix)                                                            \
  static void prefix##_view_select_tensor(GsView *view, guint64 tensor) {                    \
    select((Type *)view, tensor);                                                            \
  }                                                                                          \
  static void prefix##_view_iface_init(GsViewInterface *iface) {                             \
    iface->set_model = prefix##_view_set_model;                                              \
    iface->set_position = prefix##_view_set_position;                                        \
    iface->model_grew = prefix##_view_model_grew;                                            \
    iface->select_tensor = prefix##_view_select_tensor;                                      \
  }

G_END_DECLS
