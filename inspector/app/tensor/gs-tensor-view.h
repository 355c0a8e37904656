/* gs-tensor-view.h: the details panel: the whole life of one tensor (creation and origin,
 * names, views, clones and detaches made from it, owners, in-place writes with versions,
 * graph nodes that saved it, gradients, its move into a parameter, disposal and why), and
 * its state at the scrubber's event (alive, owner, category, bytes, storage, version).
 * Entries after that event are dimmed as "future". A status page stands in while no tensor
 * is selected.
 *
 * Signals (the view contract): event-selected (guint64 index) when a life entry is clicked;
 * tensor-selected (guint64 tensor_id) when the tensor it was made from is clicked. */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_TENSOR_VIEW (gs_tensor_view_get_type())
G_DECLARE_FINAL_TYPE(GsTensorView, gs_tensor_view, GS, TENSOR_VIEW, GtkWidget)

GtkWidget *gs_tensor_view_new(void);
/* Borrowed: the capture page owns the model and outlives its views. NULL clears. */
void gs_tensor_view_set_model(GsTensorView *self, gs_trace_model *model);
/* The scrubber's event: the state shown is the state just after it. */
void gs_tensor_view_set_position(GsTensorView *self, guint64 index);
/* A live source appended events: the selected tensor's life may have grown. */
void gs_tensor_view_model_grew(GsTensorView *self);
/* Shows tensor_id's life (what the page calls on any view's tensor-selected); 0 clears. */
void gs_tensor_view_set_tensor(GsTensorView *self, guint64 tensor_id);
guint64 gs_tensor_view_get_tensor(GsTensorView *self);
/* The file the log was read from (NULL: a live program's socket): a storage received from a
 * DataLoader worker then links to the log that worker wrote beside it. */
void gs_tensor_view_set_log_path(GsTensorView *self, const char *path);

G_END_DECLS
