/* gs-graph-view.c: the computation-graph view (see gs-graph-view.h).
 *
 * The graph is built on the UI thread (a model seek and a walk over the live nodes), then
 * handed to the layout worker, which collapses it and lays it out; until its answer arrives
 * the old layout stays drawn with a "laying out" note. A graph refused for its size (before
 * the build, or by the layout) is replaced by the reason. Drawing is the shared cairo
 * renderer inside a cairo render node, culled to what is visible; the minimap is the same
 * renderer without text. */
#include "gs-graph-view.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>

#include "graph-collapse.h"
#include "graph-render.h"
#include "event-fields.h"
#include "graph-source.h"
#include "layout-worker.h"

#define MINIMAP_SIZE 160.0
#define MIN_SCALE 0.02
#define MAX_SCALE 8.0

struct _GsGraphView {
  GtkWidget parent_instance;

  gs_trace_model *model;     /* borrowed */
  gs_graph_source *source;
  guint64 position;
  gboolean has_position;

  gs_layout_worker *worker;
  guint64 wanted_serial;     /* the last request */
  guint64 shown_serial;      /* the request whose layout is drawn */
  guint64 discard_upto;      /* requests made for a previous model: their answers are dropped */
  double pointer_x, pointer_y; /* where the pointer is, for zooming around it */
  gboolean stale;            /* the position changed while hidden */
  gs_layout *layout;
  /* Why nothing is drawn at the position (too many live nodes to build, too large for dot,
   * Graphviz refused it), shown in the view's place; NULL once a layout arrives. */
  char *problem;
  GHashTable *expanded;      /* group keys the user opened (owned strings) */

  /* Viewport: layout point (x, y) at the widget's top-left, `scale` pixels per point. */
  double x, y, scale;
  gboolean fitted;           /* follow fits until the user zooms or pans */
  double drag_x, drag_y;     /* viewport origin when a drag began */
  double zoom_start_scale;

  GHashTable *marks;         /* item key -> gs_graph_mark (owned keys), or NULL */
  gint selected;
  char *selected_key;        /* kept across layouts of nearby events */
  /* After an expansion: keep this node where it was on screen, so the graph opens in place. */
  char *anchor_key;
  double anchor_wx, anchor_wy;

  /* Requests are paced: one at a time on the worker, and at most one built per interval. */
  guint pace_timer;
  gboolean pending; /* a position waits for the worker or the pace timer */
};

/* Building a graph takes a model seek on the UI thread, and dot a few milliseconds or more on
 * the worker: a live run that moves the position every frame, or a scrubber dragged across
 * thousands of events, gets a new graph at most this often (always the latest position). */
#define PACE_MS 100

G_DEFINE_FINAL_TYPE(GsGraphView, gs_graph_view, GTK_TYPE_WIDGET)

enum { SIGNAL_TENSOR_SELECTED, SIGNAL_EVENT_SELECTED, SIGNAL_LAYOUT_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- layout requests -------------------------------------------------------------------- */

/* Requests hold a weak reference: the view may be gone when the worker answers. */
static void on_layout_done(guint64 serial, gs_layout *layout, const GError *error,
                           gpointer user_data);
static void show_problem(GsGraphView *self, const char *problem);

static void weak_ref_free(gpointer ref) {
  g_weak_ref_clear(ref);
  g_free(ref);
}

static gboolean on_pace_timer(gpointer data);

static void request_layout(GsGraphView *self) {
  if (!self->model || !self->has_position)
    return;
  /* Hidden (another page of the stack): build the graph when shown, not on every scrub. */
  if (!gtk_widget_get_mapped(GTK_WIDGET(self))) {
    self->stale = TRUE;
    return;
  }
  self->stale = FALSE;
  if (self->shown_serial != self->wanted_serial || self->pace_timer) {
    self->pending = TRUE;
    gtk_widget_queue_draw(GTK_WIDGET(self));
    return;
  }
  self->pending = FALSE;
  self->pace_timer = g_timeout_add(PACE_MS, on_pace_timer, self);
  g_autoptr(GError) error = NULL;
  gs_graph *full = gs_graph_source_build_at_most(self->source, self->position,
                                                 GS_GRAPH_SOURCE_MAX_NODES, &error);
  if (!full) {
    show_problem(self, error->message); /* nothing was requested: the view is not busy */
    return;
  }
  GWeakRef *ref = g_new0(GWeakRef, 1);
  g_weak_ref_init(ref, self);
  /* The engine's event number, as the event list, the CLI and error messages give it. */
  guint64 number = gs_trace_model_seq_at(
      self->model, MIN(self->position, gs_trace_model_n_events(self->model) - 1));
  g_autofree char *title = g_strdup_printf(_("graph after event #%" PRIu64), number);
  gs_layout_options options = {TRUE, title};
  /* Collapsing and splitting hubs need no model: the layout thread does them. */
  self->wanted_serial =
      gs_layout_worker_request_full(self->worker, full, GS_GRAPH_COLLAPSE_LIMIT, self->expanded,
                                    &options, on_layout_done, ref, weak_ref_free);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static gboolean on_pace_timer(gpointer data) {
  GsGraphView *self = data;
  self->pace_timer = 0;
  if (self->pending && self->shown_serial == self->wanted_serial)
    request_layout(self);
  return G_SOURCE_REMOVE;
}

static void select_key(GsGraphView *self, const char *key) {
  self->selected = -1;
  if (!self->layout || !key)
    return;
  gint found = gs_graph_find(self->layout->graph, key);
  self->selected = found;
}

/* Nothing is drawn at the position, for the reason given (the layout's words): the old
 * picture belongs to another event, so it goes too. */
static void show_problem(GsGraphView *self, const char *problem) {
  g_clear_pointer(&self->layout, gs_layout_free);
  g_free(self->problem);
  self->problem = g_strdup(problem);
  self->selected = -1;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_signal_emit(self, signals[SIGNAL_LAYOUT_CHANGED], 0);
}

/* The worker answers in request order and drops superseded requests, so every answer is
 * newer than the layout drawn. */
static void on_layout_done(guint64 serial, gs_layout *layout, const GError *error,
                           gpointer user_data) {
  g_autoptr(GsGraphView) self = g_weak_ref_get(user_data);
  if (!self || serial <= self->discard_upto) {
    gs_layout_free(layout);
    return;
  }
  if (error) {
    /* Said in the view, in the layout's words (the limit and the reason the CLI gives too). */
    g_debug("graph layout failed: %s", error->message);
    self->shown_serial = serial;
    show_problem(self, error->message);
    if (self->pending && !self->pace_timer)
      request_layout(self);
    return;
  }
  g_clear_pointer(&self->problem, g_free);
  gs_layout_free(self->layout);
  self->layout = layout;
  self->shown_serial = serial;
  select_key(self, self->selected_key);
  gint anchor = self->anchor_key ? gs_graph_find(layout->graph, self->anchor_key) : -1;
  g_clear_pointer(&self->anchor_key, g_free);
  if (anchor >= 0 && self->scale) {
    const gs_layout_node *n = &g_array_index(layout->nodes, gs_layout_node, anchor);
    self->x = n->x - self->anchor_wx / self->scale;
    self->y = n->y - self->anchor_wy / self->scale;
  } else if (self->fitted || !self->scale) {
    gs_graph_view_fit(self);
  }
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_signal_emit(self, signals[SIGNAL_LAYOUT_CHANGED], 0);
  if (self->pending && !self->pace_timer)
    request_layout(self);
}

/* ---- contract --------------------------------------------------------------------------- */

void gs_graph_view_set_model(GsGraphView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  g_clear_pointer(&self->source, gs_graph_source_free);
  g_clear_pointer(&self->layout, gs_layout_free);
  g_clear_pointer(&self->problem, g_free);
  g_hash_table_remove_all(self->expanded);
  g_clear_pointer(&self->selected_key, g_free);
  self->selected = -1;
  self->model = model;
  self->has_position = FALSE;
  self->discard_upto = self->shown_serial = self->wanted_serial;
  self->stale = self->pending = FALSE;
  self->fitted = TRUE;
  if (model)
    self->source = gs_graph_source_new(model);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void gs_graph_view_set_position(GsGraphView *self, guint64 index) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  if (self->has_position && self->position == index)
    return;
  self->position = index;
  self->has_position = TRUE;
  request_layout(self);
}

void gs_graph_view_model_grew(GsGraphView *self) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  /* A position past the old end was clamped: the graph there is new now. */
  if (self->model && self->has_position &&
      self->position + 1 >= gs_trace_model_n_events(self->model))
    request_layout(self);
}

void gs_graph_view_select_tensor(GsGraphView *self, guint64 tensor) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  g_clear_pointer(&self->selected_key, g_free);
  self->selected = -1;
  if (self->layout && tensor) {
    /* The tensor itself (a leaf, output or saved tensor) before a node merely holding it. */
    for (guint i = 0; i < self->layout->graph->items->len; i++) {
      const gs_graph_item *item = &g_array_index(self->layout->graph->items, gs_graph_item, i);
      if (item->tensor == tensor) {
        self->selected = (gint)i;
        self->selected_key = g_strdup(item->key);
        break;
      }
    }
  }
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

const gs_layout *gs_graph_view_get_layout(GsGraphView *self) {
  return self->layout;
}

const char *gs_graph_view_get_problem(GsGraphView *self) {
  g_return_val_if_fail(GS_IS_GRAPH_VIEW(self), NULL);
  return self->problem;
}

gboolean gs_graph_view_is_busy(GsGraphView *self) {
  return self->shown_serial != self->wanted_serial || self->pending || self->stale;
}

void gs_graph_view_set_marks(GsGraphView *self, GHashTable *marks) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  g_clear_pointer(&self->marks, g_hash_table_unref);
  self->marks = marks ? g_hash_table_ref(marks) : NULL;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

gint gs_graph_view_get_selected(GsGraphView *self) {
  return self->selected;
}

/* ---- viewport --------------------------------------------------------------------------- */

void gs_graph_view_fit(GsGraphView *self) {
  int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  self->fitted = TRUE;
  if (!self->layout || w <= 0 || h <= 0)
    return;
  gs_graph_viewport vp;
  gs_graph_viewport_fit(self->layout, w, h, &vp);
  /* Never blow a small graph up past 1.5x: it reads better at its own size. */
  double scale = MIN(vp.scale, 1.5);
  self->scale = scale;
  self->x = self->layout->width / 2 - w / 2.0 / scale;
  self->y = self->layout->height / 2 - h / 2.0 / scale;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void gs_graph_view_layout_to_widget(GsGraphView *self, double x, double y, double *wx,
                                    double *wy) {
  *wx = (x - self->x) * self->scale;
  *wy = (y - self->y) * self->scale;
}

static void widget_to_layout(GsGraphView *self, double wx, double wy, double *x, double *y) {
  *x = self->x + wx / self->scale;
  *y = self->y + wy / self->scale;
}

void gs_graph_view_zoom_at(GsGraphView *self, double factor, double wx, double wy) {
  double lx, ly;
  widget_to_layout(self, wx, wy, &lx, &ly);
  self->scale = CLAMP(self->scale * factor, MIN_SCALE, MAX_SCALE);
  self->x = lx - wx / self->scale;
  self->y = ly - wy / self->scale;
  self->fitted = FALSE;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, gpointer data) {
  (void)c;
  GsGraphView *self = data;
  self->pointer_x = x;
  self->pointer_y = y;
}

static gboolean on_scroll(GtkEventControllerScroll *c, double dx, double dy, gpointer data) {
  (void)c, (void)dx;
  GsGraphView *self = data;
  if (!self->layout)
    return FALSE;
  gs_graph_view_zoom_at(self, pow(1.1, -dy), self->pointer_x, self->pointer_y);
  return TRUE;
}

static void on_zoom_begin(GtkGesture *g, GdkEventSequence *s, gpointer data) {
  (void)g, (void)s;
  GsGraphView *self = data;
  self->zoom_start_scale = self->scale;
}

static void on_zoom_changed(GtkGestureZoom *g, double scale, gpointer data) {
  GsGraphView *self = data;
  double cx, cy;
  if (!self->layout || !gtk_gesture_get_bounding_box_center(GTK_GESTURE(g), &cx, &cy))
    return;
  gs_graph_view_zoom_at(self, self->zoom_start_scale * scale / self->scale, cx, cy);
}

static void on_drag_begin(GtkGestureDrag *g, double x, double y, gpointer data) {
  (void)g, (void)x, (void)y;
  GsGraphView *self = data;
  self->drag_x = self->x;
  self->drag_y = self->y;
}

static void on_drag_update(GtkGestureDrag *g, double dx, double dy, gpointer data) {
  (void)g;
  GsGraphView *self = data;
  if (!self->layout || (dx == 0 && dy == 0))
    return;
  self->x = self->drag_x - dx / self->scale;
  self->y = self->drag_y - dy / self->scale;
  self->fitted = FALSE;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* ---- selection -------------------------------------------------------------------------- */

static void select_node(GsGraphView *self, gint node) {
  self->selected = node;
  g_clear_pointer(&self->selected_key, g_free);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (node < 0)
    return;
  const gs_layout_node *n = &g_array_index(self->layout->nodes, gs_layout_node, node);
  const gs_graph_item *item = &g_array_index(self->layout->graph->items, gs_graph_item, n->item);
  self->selected_key = g_strdup(item->key);
  if (item->tensor) {
    g_signal_emit(self, signals[SIGNAL_TENSOR_SELECTED], 0, item->tensor);
    return;
  }
}

/* A double-click on an op goes to the event that created it, so the other views (and the
 * sentence) show that moment. Only on a double-click: the graph there is smaller (later ops
 * do not exist yet), which a plain click to select must not cause. */
static void go_to_creation(GsGraphView *self, const gs_graph_item *item) {
  if (item->kind != GS_GRAPH_OP || !self->model)
    return;
  const gs_replay *state = gs_trace_model_seek(self->model, self->position);
  const gs_replay_node *rn = state ? g_hash_table_lookup(state->nodes, &item->id) : NULL;
  guint64 index = rn ? gs_trace_model_find_seq(self->model, rn->create_seq) : G_MAXUINT64;
  if (index != G_MAXUINT64)
    g_signal_emit(self, signals[SIGNAL_EVENT_SELECTED], 0, index);
}

/* Remembers the ordinary node nearest to node and where it is on screen: after the group
 * opens, the view puts it back there instead of fitting a much bigger graph. */
static void anchor_near(GsGraphView *self, gint node) {
  const gs_layout_node *g = &g_array_index(self->layout->nodes, gs_layout_node, node);
  gint best = -1;
  double best_d = G_MAXDOUBLE;
  for (guint i = 0; i < self->layout->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(self->layout->nodes, gs_layout_node, i);
    const gs_graph_item *item = &g_array_index(self->layout->graph->items, gs_graph_item, n->item);
    double d = (n->x - g->x) * (n->x - g->x) + (n->y - g->y) * (n->y - g->y);
    if (item->kind != GS_GRAPH_GROUP && d < best_d) {
      best = (gint)i;
      best_d = d;
    }
  }
  g_clear_pointer(&self->anchor_key, g_free);
  if (best < 0)
    return;
  const gs_layout_node *n = &g_array_index(self->layout->nodes, gs_layout_node, best);
  self->anchor_key =
      g_strdup(g_array_index(self->layout->graph->items, gs_graph_item, n->item).key);
  gs_graph_view_layout_to_widget(self, n->x, n->y, &self->anchor_wx, &self->anchor_wy);
  self->fitted = FALSE;
}

static void on_pressed(GtkGestureClick *g, int n_press, double wx, double wy, gpointer data) {
  (void)g;
  GsGraphView *self = data;
  if (!self->layout)
    return;
  gtk_widget_grab_focus(GTK_WIDGET(self));
  double x, y;
  widget_to_layout(self, wx, wy, &x, &y);
  gint node = gs_layout_node_at(self->layout, x, y);
  if (n_press == 2) {
    if (node < 0) {
      gs_graph_view_fit(self);
      return;
    }
    const gs_layout_node *n = &g_array_index(self->layout->nodes, gs_layout_node, node);
    const gs_graph_item *item =
        &g_array_index(self->layout->graph->items, gs_graph_item, n->item);
    if (item->kind == GS_GRAPH_GROUP) {
      anchor_near(self, node);
      gs_graph_view_expand(self, item->key);
    } else {
      go_to_creation(self, item);
    }
    return;
  }
  select_node(self, node);
}

void gs_graph_view_expand(GsGraphView *self, const char *group_key) {
  g_return_if_fail(GS_IS_GRAPH_VIEW(self));
  g_hash_table_add(self->expanded, g_strdup(group_key));
  request_layout(self);
}

/* ---- keys and tooltips ------------------------------------------------------------------ */

/* +/- zoom around the centre, 0 or F fits, the arrows pan by a tenth of the view. */
static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint keycode,
                       GdkModifierType state, gpointer data) {
  (void)c, (void)keycode, (void)state;
  GsGraphView *self = data;
  if (!self->layout)
    return FALSE;
  double w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  switch (keyval) {
  case GDK_KEY_plus:
  case GDK_KEY_equal:
  case GDK_KEY_KP_Add: gs_graph_view_zoom_at(self, 1.25, w / 2, h / 2); return TRUE;
  case GDK_KEY_minus:
  case GDK_KEY_KP_Subtract: gs_graph_view_zoom_at(self, 0.8, w / 2, h / 2); return TRUE;
  case GDK_KEY_0:
  case GDK_KEY_f: gs_graph_view_fit(self); return TRUE;
  case GDK_KEY_Left: self->x -= w / 10 / self->scale; break;
  case GDK_KEY_Right: self->x += w / 10 / self->scale; break;
  case GDK_KEY_Up: self->y -= h / 10 / self->scale; break;
  case GDK_KEY_Down: self->y += h / 10 / self->scale; break;
  default: return FALSE;
  }
  self->fitted = FALSE;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  return TRUE;
}

/* The node under the pointer in words: its whole label (names can be long), what it is, and
 * for tensors their handle, for a failed version check what went wrong. */
static gboolean on_query_tooltip(GtkWidget *widget, int wx, int wy, gboolean keyboard,
                                 GtkTooltip *tooltip, gpointer data) {
  (void)widget, (void)keyboard, (void)data;
  GsGraphView *self = GS_GRAPH_VIEW(widget);
  if (!self->layout)
    return FALSE;
  double x, y;
  widget_to_layout(self, wx, wy, &x, &y);
  gint node = gs_layout_node_at(self->layout, x, y);
  if (node < 0)
    return FALSE;
  const gs_layout_node *n = &g_array_index(self->layout->nodes, gs_layout_node, node);
  const gs_graph_item *item = &g_array_index(self->layout->graph->items, gs_graph_item, n->item);
  g_autoptr(GString) text = g_string_new(n->label);
  char handle[32];
  const char *what = "";
  switch (item->kind) {
  case GS_GRAPH_OP: what = _("A backward node: double-click to go to the event that made it"); break;
  case GS_GRAPH_LEAF: what = _("A leaf: its gradient accumulates here"); break;
  case GS_GRAPH_SAVED: what = _("Saved for backward"); break;
  case GS_GRAPH_OUTPUT: what = _("An output of the graph"); break;
  case GS_GRAPH_TENSOR: what = _("A tensor sharing storage with the graph's tensors"); break;
  case GS_GRAPH_GROUP: what = _("Repeated steps: double-click to expand"); break;
  }
  g_string_append_printf(text, "\n%s", what);
  if (item->tensor)
    g_string_append_printf(text, _("\nTensor %s"),
                           gs_format_handle(item->tensor, handle, sizeof handle));
  const char *site =
      self->model ? gs_site_table_text(gs_trace_model_sites(self->model), item->site) : NULL;
  if (site)
    /* TRANSLATORS: in a graph node's tooltip: where the program made it, "main (leak.c:17)" */
    g_string_append_printf(text, _("\nMade at %s"), site);
  if (item->flags & GS_GRAPH_VERSION_ERROR)
    g_string_append_printf(text, "\n%s",
                           _("Part of a failed version check: written in place after it was "
                             "saved for backward"));
  gtk_tooltip_set_text(tooltip, text->str);
  return TRUE;
}

/* ---- drawing ---------------------------------------------------------------------------- */

static gboolean dark_style(GsGraphView *self) {
  GdkRGBA fg;
  gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(self)), &fg);
  /* Light text means a dark theme (libadwaita's dark style or a high-contrast inverse). */
  return fg.red + fg.green + fg.blue > 1.5f;
}

static void draw_note(GtkSnapshot *snapshot, GsGraphView *self, const char *text, double x,
                      double y) {
  PangoLayout *layout = gtk_widget_create_pango_layout(GTK_WIDGET(self), text);
  /* Wrapped to the view, which may be narrower than a sentence. */
  int width = gtk_widget_get_width(GTK_WIDGET(self)) - (int)x - 16;
  if (width > 0) {
    pango_layout_set_width(layout, width * PANGO_SCALE);
    pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
  }
  GdkRGBA color;
  gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(self)), &color);
  gtk_snapshot_save(snapshot);
  gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT((float)x, (float)y));
  gtk_snapshot_append_layout(snapshot, layout, &color);
  gtk_snapshot_restore(snapshot);
  g_object_unref(layout);
}

static void gs_graph_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  GsGraphView *self = GS_GRAPH_VIEW(widget);
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w <= 0 || h <= 0)
    return;
  gboolean dark = dark_style(self);
  if (self->model && !self->layout && self->problem) {
    /* TRANSLATORS: %s says why, e.g. "the graph has 400000 nodes and 200000 edges, more than
     * can be laid out in reasonable time (…)". */
    g_autofree char *text = g_strdup_printf(_("The graph is not drawn: %s."), self->problem);
    draw_note(snapshot, self, text, 16, 16);
    if (gs_graph_view_is_busy(self))
      draw_note(snapshot, self, _("Laying out the graph\xe2\x80\xa6"), 12, h - 28);
    return;
  }
  if (!self->model || !self->layout) {
    const char *text = !self->model                  ? _("No capture open")
                       : gs_graph_view_is_busy(self) ? _("Laying out the graph\xe2\x80\xa6")
                                                     : _("Move the scrubber to see the graph");
    draw_note(snapshot, self, text, 16, 16);
    return;
  }
  if (self->layout->nodes->len == 0) {
    guint64 number = gs_trace_model_seq_at(
        self->model, MIN(self->position, gs_trace_model_n_events(self->model) - 1));
    g_autofree char *text = g_strdup_printf(
        _("No autograd graph is alive after event #%" PRIu64 ".\n"
          "A step's graph exists from its forward pass until its backward frees it: pick a "
          "backward pass above, or move the scrubber into a step."),
        number);
    draw_note(snapshot, self, text, 16, 16);
    return;
  }
  gs_graph_viewport vp = {self->x, self->y, self->scale, w, h};
  gs_graph_style style = {self->selected, dark, FALSE, self->marks};
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));
  gs_graph_render(cr, self->layout, &vp, &style);

  /* The minimap: the whole graph small, the visible part outlined. */
  double mw = MIN(MINIMAP_SIZE, w / 4.0), mh = MIN(MINIMAP_SIZE, h / 4.0);
  gboolean whole_visible = self->x <= 0 && self->y <= 0 &&
                           self->x + w / self->scale >= self->layout->width &&
                           self->y + h / self->scale >= self->layout->height;
  if (!whole_visible && mw > 40 && mh > 40) {
    double mx = w - mw - 12, my = h - mh - 12;
    cairo_save(cr);
    cairo_translate(cr, mx, my);
    cairo_rectangle(cr, 0, 0, mw, mh);
    cairo_clip(cr);
    gs_graph_viewport mini;
    gs_graph_viewport_fit(self->layout, mw, mh, &mini);
    gs_graph_style mini_style = {self->selected, dark, TRUE, self->marks};
    gs_graph_render(cr, self->layout, &mini, &mini_style);
    cairo_scale(cr, mini.scale, mini.scale);
    cairo_translate(cr, -mini.x, -mini.y);
    cairo_rectangle(cr, self->x, self->y, w / self->scale, h / self->scale);
    cairo_set_source_rgba(cr, 0.21, 0.52, 0.89, 0.9);
    cairo_set_line_width(cr, 2 / mini.scale);
    cairo_stroke(cr);
    cairo_restore(cr);
    cairo_rectangle(cr, mx + 0.5, my + 0.5, mw - 1, mh - 1);
    cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.8);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
  }
  cairo_destroy(cr);
  if (gs_graph_view_is_busy(self))
    draw_note(snapshot, self, _("Laying out the graph\xe2\x80\xa6"), 12, h - 28);
}

static void gs_graph_view_map(GtkWidget *widget) {
  GTK_WIDGET_CLASS(gs_graph_view_parent_class)->map(widget);
  GsGraphView *self = GS_GRAPH_VIEW(widget);
  if (self->stale)
    request_layout(self);
}

static void gs_graph_view_size_allocate(GtkWidget *widget, int width, int height, int baseline) {
  (void)width, (void)height, (void)baseline;
  GsGraphView *self = GS_GRAPH_VIEW(widget);
  if (self->fitted)
    gs_graph_view_fit(self);
}

/* ---- life ------------------------------------------------------------------------------- */

static void gs_graph_view_dispose(GObject *object) {
  GsGraphView *self = GS_GRAPH_VIEW(object);
  g_clear_handle_id(&self->pace_timer, g_source_remove);
  g_clear_pointer(&self->worker, gs_layout_worker_free);
  g_clear_pointer(&self->source, gs_graph_source_free);
  g_clear_pointer(&self->layout, gs_layout_free);
  g_clear_pointer(&self->problem, g_free);
  self->model = NULL;
  G_OBJECT_CLASS(gs_graph_view_parent_class)->dispose(object);
}

static void gs_graph_view_finalize(GObject *object) {
  GsGraphView *self = GS_GRAPH_VIEW(object);
  g_hash_table_unref(self->expanded);
  g_free(self->selected_key);
  g_clear_pointer(&self->marks, g_hash_table_unref);
  g_free(self->anchor_key);
  G_OBJECT_CLASS(gs_graph_view_parent_class)->finalize(object);
}

static void gs_graph_view_class_init(GsGraphViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_graph_view_dispose;
  object_class->finalize = gs_graph_view_finalize;
  widget_class->snapshot = gs_graph_view_snapshot;
  widget_class->size_allocate = gs_graph_view_size_allocate;
  widget_class->map = gs_graph_view_map;
  gtk_widget_class_set_css_name(widget_class, "graphview");
  signals[SIGNAL_TENSOR_SELECTED] =
      g_signal_new("tensor-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
  signals[SIGNAL_EVENT_SELECTED] =
      g_signal_new("event-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
  /* A new layout is drawn (gs_graph_view_get_layout has it). */
  signals[SIGNAL_LAYOUT_CHANGED] =
      g_signal_new("layout-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 0);
}

static void gs_graph_view_init(GsGraphView *self) {
  self->worker = gs_layout_worker_new();
  self->expanded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  self->selected = -1;
  self->fitted = TRUE;
  gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);
  gtk_widget_set_hexpand(GTK_WIDGET(self), TRUE);
  gtk_widget_set_vexpand(GTK_WIDGET(self), TRUE);
  gtk_widget_set_overflow(GTK_WIDGET(self), GTK_OVERFLOW_HIDDEN);

  GtkEventController *scroll =
      gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(GTK_WIDGET(self), scroll);

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  gtk_widget_add_controller(GTK_WIDGET(self), motion);

  GtkGesture *zoom = gtk_gesture_zoom_new();
  g_signal_connect(zoom, "begin", G_CALLBACK(on_zoom_begin), self);
  g_signal_connect(zoom, "scale-changed", G_CALLBACK(on_zoom_changed), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(zoom));

  GtkGesture *drag = gtk_gesture_drag_new();
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drag));

  GtkEventController *keys = gtk_event_controller_key_new();
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
  gtk_widget_add_controller(GTK_WIDGET(self), keys);

  gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
  g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);

  GtkGesture *click = gtk_gesture_click_new();
  g_signal_connect(click, "pressed", G_CALLBACK(on_pressed), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));
}

GtkWidget *gs_graph_view_new(void) {
  return g_object_new(GS_TYPE_GRAPH_VIEW, NULL);
}
