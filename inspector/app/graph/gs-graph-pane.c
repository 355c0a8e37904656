/* gs-graph-pane.c: the Graph page (see gs-graph-pane.h). The backward passes come from a
 * gs_timeline_index (the memory timeline's scan of per-event kinds, extended as a live source
 * grows), so finding pass N or the pass at an event is a binary search, never a walk over the
 * events. */
#include "gs-graph-pane.h"

#include "gs-view.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "timeline-index.h"

struct _GsGraphPane {
  GtkWidget parent_instance;

  GtkWidget *previous_button;
  GtkWidget *next_button;
  GtkWidget *pass_spin;
  GtkAdjustment *pass_adjustment;
  GtkWidget *pass_total_label;
  GtkWidget *fit_button;
  GtkWidget *status_label;
  GtkWidget *rank_label;
  GsGraphView *graph_view;

  gs_trace_model *model; /* borrowed */
  gs_timeline_index *index;
  guint64 position;
  gboolean has_position;
  gboolean updating; /* the spin button is being set from the position, not by the user */
  /* At the end of the run no graph was alive, so the last backward pass's is drawn. */
  gboolean showing_last_pass;
};

GS_VIEW_IFACE_INIT_WITH_SELECT(GsGraphPane, gs_graph_pane, gs_graph_pane_select_tensor)
G_DEFINE_FINAL_TYPE_WITH_CODE(GsGraphPane, gs_graph_pane, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GS_TYPE_VIEW, gs_graph_pane_view_iface_init))


static const GArray *passes(GsGraphPane *self) {
  return gs_timeline_index_backward_spans(self->index);
}

/* How many passes began at or before event index: the number (from 1) of the pass the graph
 * there belongs to, or was left by; 0 before the first. */
static guint passes_begun_by(GsGraphPane *self, guint64 index) {
  const GArray *spans = passes(self);
  guint lo = 0, hi = spans->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index(spans, gs_timeline_span, mid).first <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void update_status(GsGraphPane *self) {
  const gs_layout *l = gs_graph_view_get_layout(self->graph_view);
  g_autofree char *text = NULL;
  g_autofree char *tooltip = NULL;
  if (!self->model || !self->has_position || !l) {
    text = g_strdup("");
  } else if (l->nodes->len == 0) {
    text = g_strdup(_("No graph alive here"));
  } else {
    guint groups = 0;
    for (guint i = 0; i < l->graph->items->len; i++)
      if (g_array_index(l->graph->items, gs_graph_item, i).kind == GS_GRAPH_GROUP)
        groups++;
    /* Translators: the size of the graph drawn: nodes and edges. */
    text = g_strdup_printf(_("%u nodes, %u edges"), l->nodes->len, l->edges->len);
    if (self->showing_last_pass) {
      g_autofree char *size = g_steal_pointer(&text);
      /* Translators: short, it shares the page's header with the pass buttons and wraps onto
       * two lines when narrow, then is cut; the tooltip says it in full. */
      text = g_strdup_printf(_("%s · the last pass (graph freed)"), size);
      tooltip = g_strdup(_("The run is over and its last backward pass freed the graph: the "
                           "page shows that pass's graph, as it was when the pass began."));
    }
    if (groups) {
      g_autofree char *base = g_steal_pointer(&text);
      text = g_strdup_printf(_("%s; %u folded groups (double-click one to open it)"), base,
                             groups);
    }
  }
  gtk_label_set_text(GTK_LABEL(self->status_label), text);
  gtk_widget_set_tooltip_text(self->status_label, tooltip ? tooltip : text);
}

/* The header from the position and the passes known so far. */
static void update_passes(GsGraphPane *self) {
  guint n = passes(self)->len;
  guint at = self->has_position ? passes_begun_by(self, self->position) : 0;
  self->updating = TRUE;
  /* 0 stands for "before the first pass". */
  gtk_adjustment_configure(self->pass_adjustment, at, 0, n, 1, 10, 0);
  self->updating = FALSE;
  g_autofree char *total = g_strdup_printf(_("of %u"), n);
  gtk_label_set_text(GTK_LABEL(self->pass_total_label), total);
  gtk_widget_set_sensitive(self->pass_spin, n > 0);
  /* Previous: the begin of the pass at the position if we are past it, else the one before. */
  gboolean at_begin = at > 0 && g_array_index(passes(self), gs_timeline_span, at - 1).first ==
                                    self->position;
  gtk_widget_set_sensitive(self->previous_button, at > 1 || (at == 1 && !at_begin));
  gtk_widget_set_sensitive(self->next_button, at < n);
}

gboolean gs_graph_pane_go_to_pass(GsGraphPane *self, guint pass) {
  g_return_val_if_fail(GS_IS_GRAPH_PANE(self), FALSE);
  if (!self->model || pass == 0 || pass > passes(self)->len)
    return FALSE;
  guint64 begin = g_array_index(passes(self), gs_timeline_span, pass - 1).first;
  gs_view_emit_event_selected(GS_VIEW(self), begin);
  return TRUE;
}

static void on_previous_clicked(GsGraphPane *self) {
  guint at = passes_begun_by(self, self->position);
  if (at == 0)
    return;
  gboolean at_begin =
      g_array_index(passes(self), gs_timeline_span, at - 1).first == self->position;
  gs_graph_pane_go_to_pass(self, at_begin ? at - 1 : at);
}

static void on_next_clicked(GsGraphPane *self) {
  gs_graph_pane_go_to_pass(self, passes_begun_by(self, self->position) + 1);
}

static void on_pass_changed(GsGraphPane *self) {
  if (self->updating)
    return;
  gs_graph_pane_go_to_pass(self, (guint)gtk_adjustment_get_value(self->pass_adjustment));
}

static void on_fit_clicked(GsGraphPane *self) {
  gs_graph_view_fit(self->graph_view);
}

static void on_view_tensor_selected(GsGraphPane *self, guint64 tensor) {
  gs_view_emit_tensor_selected(GS_VIEW(self), tensor);
}

static void on_view_event_selected(GsGraphPane *self, guint64 index) {
  gs_view_emit_event_selected(GS_VIEW(self), index);
}

/* Whether the position is the run's last event. */
static gboolean at_end(GsGraphPane *self) {
  guint64 n = self->model ? gs_trace_model_n_events(self->model) : 0;
  return self->has_position && n > 0 && self->position >= n - 1;
}

static void on_layout_changed(GsGraphPane *self) {
  /* At the end of a run the last backward usually freed the graph: "no graph is alive" is
   * true but not what someone looking at the finished run wants; they get the last pass's
   * graph, and the status says which it is. Anywhere else the empty graph stays, truthfully. */
  const gs_layout *l = gs_graph_view_get_layout(self->graph_view);
  if (l && l->nodes->len == 0 && !self->showing_last_pass && at_end(self) &&
      passes(self)->len > 0) {
    self->showing_last_pass = TRUE;
    gs_graph_view_set_position(self->graph_view,
                               g_array_index(passes(self), gs_timeline_span,
                                             passes(self)->len - 1).first);
    return;
  }
  update_status(self);
}

/* ---- contract --------------------------------------------------------------------------- */

void gs_graph_pane_set_model(GsGraphPane *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_GRAPH_PANE(self));
  self->model = model;
  self->has_position = FALSE;
  g_clear_pointer(&self->index, gs_timeline_index_free);
  self->index = gs_timeline_index_new();
  if (model)
    gs_timeline_index_update(self->index, model);
  gs_graph_view_set_model(self->graph_view, model);
  update_passes(self);
  update_status(self);
}

void gs_graph_pane_set_position(GsGraphPane *self, guint64 index) {
  g_return_if_fail(GS_IS_GRAPH_PANE(self));
  self->position = index;
  self->has_position = TRUE;
  self->showing_last_pass = FALSE;
  gs_graph_view_set_position(self->graph_view, index);
  update_passes(self);
}

void gs_graph_pane_model_grew(GsGraphPane *self) {
  g_return_if_fail(GS_IS_GRAPH_PANE(self));
  if (self->model)
    gs_timeline_index_update(self->index, self->model);
  gs_graph_view_model_grew(self->graph_view);
  update_passes(self);
}

void gs_graph_pane_select_tensor(GsGraphPane *self, guint64 tensor) {
  g_return_if_fail(GS_IS_GRAPH_PANE(self));
  gs_graph_view_select_tensor(self->graph_view, tensor);
}

void gs_graph_pane_set_rank(GsGraphPane *self, gint64 rank) {
  g_return_if_fail(GS_IS_GRAPH_PANE(self));
  gtk_widget_set_visible(self->rank_label, rank >= 0);
  if (rank < 0)
    return;
  /* Translators: the Graph page's header in a distributed run: whose graphs are drawn. */
  g_autofree char *text = g_strdup_printf(_("Rank %" PRId64), rank);
  g_autofree char *tooltip =
      g_strdup_printf(_("This page draws rank %" PRId64 "’s graphs, as the scrubber walks its log; "
                        "the Events and Memory pages show every rank"),
                      rank);
  gtk_label_set_text(GTK_LABEL(self->rank_label), text);
  gtk_widget_set_tooltip_text(self->rank_label, tooltip);
}

const char *gs_graph_pane_get_rank_text(GsGraphPane *self) {
  g_return_val_if_fail(GS_IS_GRAPH_PANE(self), NULL);
  return gtk_widget_get_visible(self->rank_label) ? gtk_label_get_text(GTK_LABEL(self->rank_label))
                                                  : NULL;
}

GsGraphView *gs_graph_pane_get_view(GsGraphPane *self) {
  return self->graph_view;
}

guint gs_graph_pane_get_n_passes(GsGraphPane *self) {
  return passes(self)->len;
}

guint gs_graph_pane_get_pass(GsGraphPane *self) {
  return self->has_position ? passes_begun_by(self, self->position) : 0;
}

/* ---- life ------------------------------------------------------------------------------- */

static void gs_graph_pane_dispose(GObject *object) {
  gtk_widget_dispose_template(GTK_WIDGET(object), GS_TYPE_GRAPH_PANE);
  gs_widget_unparent_children(GTK_WIDGET(object));
  G_OBJECT_CLASS(gs_graph_pane_parent_class)->dispose(object);
}

static void gs_graph_pane_finalize(GObject *object) {
  GsGraphPane *self = GS_GRAPH_PANE(object);
  g_clear_pointer(&self->index, gs_timeline_index_free);
  G_OBJECT_CLASS(gs_graph_pane_parent_class)->finalize(object);
}

static void gs_graph_pane_class_init(GsGraphPaneClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_graph_pane_dispose;
  object_class->finalize = gs_graph_pane_finalize;
  g_type_ensure(GS_TYPE_GRAPH_VIEW);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/gradscope/Inspector/gs-graph-pane.ui");
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, previous_button);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, next_button);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, pass_spin);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, pass_adjustment);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, pass_total_label);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, fit_button);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, status_label);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, rank_label);
  gtk_widget_class_bind_template_child(widget_class, GsGraphPane, graph_view);
  gtk_widget_class_bind_template_callback(widget_class, on_previous_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_next_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_pass_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_fit_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_view_tensor_selected);
  gtk_widget_class_bind_template_callback(widget_class, on_view_event_selected);
  gtk_widget_class_bind_template_callback(widget_class, on_layout_changed);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void gs_graph_pane_init(GsGraphPane *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  self->index = gs_timeline_index_new();
  update_passes(self);
}

GtkWidget *gs_graph_pane_new(void) {
  return g_object_new(GS_TYPE_GRAPH_PANE, NULL);
}
