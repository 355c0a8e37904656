/* test-graph-view.c: the graph view widget under Xvfb (GSK_RENDERER=cairo, GTK_A11Y=none): a
 * recorded MLP step shown at its backward, clicks on a parameter and on an op (what the click
 * gesture reports, at the node's on-screen position) select them and emit tensor-selected /
 * event-selected, a click on the background clears the selection, zoom keeps the point under
 * the pointer, the old layout stays drawn while a new one is computed, a graph too large to lay
 * out is replaced by the reason. Screenshots go to
 * GS_SCREENSHOT_DIR (default: the current directory). */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "graph-workloads.h"
#include "graph-source.h"
#include "gs-graph-view.h"
#include "hostile-logs.h"

static gboolean stop(gpointer loop) {
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for a few frames, so what changed is drawn. */
static void draw_frames(void) {
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(150, stop, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
}

static void save_screenshot(GtkWidget *widget, const char *name) {
  gtk_widget_queue_draw(widget);
  draw_frames();
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  GdkPaintable *paintable = gtk_widget_paintable_new(widget);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
  g_assert_nonnull(node);
  GskRenderer *renderer = gtk_native_get_renderer(gtk_widget_get_native(widget));
  GdkTexture *texture =
      gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  g_mkdir_with_parents(dir ? dir : ".", 0755);
  g_autofree char *path = g_build_filename(dir ? dir : ".", name, NULL);
  g_assert_true(gdk_texture_save_to_png(texture, path));
  g_test_message("screenshot: %s", path);
  g_object_unref(texture);
  gsk_render_node_unref(node);
  g_object_unref(paintable);
}

/* Runs the main loop until the view shows a layout for its last request. */
static void wait_for_layout(GsGraphView *view) {
  gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  while ((!gs_graph_view_get_layout(view) || gs_graph_view_is_busy(view)) &&
         g_get_monotonic_time() < deadline)
    g_main_context_iteration(NULL, TRUE);
  g_assert_nonnull(gs_graph_view_get_layout(view));
  g_assert_false(gs_graph_view_is_busy(view));
  draw_frames();
}

static GtkGesture *click_gesture(GtkWidget *widget) {
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(widget);
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_GESTURE_CLICK(c))
      return GTK_GESTURE(c);
  }
  g_assert_not_reached();
}

/* What GTK's click gesture reports for a press at (x, y) of the view. */
static void click_at(GsGraphView *view, double x, double y, int n_press) {
  g_signal_emit_by_name(click_gesture(GTK_WIDGET(view)), "pressed", n_press, x, y);
}

static gint find_node(const gs_layout *l, gs_graph_item_kind kind, const char *label_part) {
  for (guint i = 0; i < l->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    const gs_graph_item *item = &g_array_index(l->graph->items, gs_graph_item, n->item);
    if (item->kind == kind && (!label_part || strstr(item->label, label_part)))
      return (gint)i;
  }
  return -1;
}

typedef struct selections {
  guint64 tensor, event;
  guint tensor_calls, event_calls;
} selections;

static void on_tensor(GsGraphView *v, guint64 tensor, selections *s) {
  (void)v;
  s->tensor = tensor;
  s->tensor_calls++;
}

static void on_event(GsGraphView *v, guint64 index, selections *s) {
  (void)v;
  s->event = index;
  s->event_calls++;
}

static void test_click_selects_nodes(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(graph_workload_mlp_step, &dir);
  guint64 at = graph_workload_find_kind(m, GS_TRACE_BACKWARD_BEGIN, 0);

  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 900, 700);
  GsGraphView *view = GS_GRAPH_VIEW(gs_graph_view_new());
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(view));
  selections sel = {0};
  g_signal_connect(view, "tensor-selected", G_CALLBACK(on_tensor), &sel);
  g_signal_connect(view, "event-selected", G_CALLBACK(on_event), &sel);
  gtk_window_present(GTK_WINDOW(window));
  gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
  while ((!gtk_widget_get_mapped(GTK_WIDGET(view)) ||
          gtk_widget_get_width(GTK_WIDGET(view)) <= 0) &&
         g_get_monotonic_time() < deadline)
    g_main_context_iteration(NULL, TRUE);
  g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(view)), >, 0);
  gs_graph_view_set_model(view, m);
  gs_graph_view_set_position(view, at);
  wait_for_layout(view);
  save_screenshot(window, "graph-view.png");
  const gs_layout *l = gs_graph_view_get_layout(view);

  /* A parameter: tensor-selected with its tensor, and it is drawn selected. */
  gint weight = find_node(l, GS_GRAPH_LEAF, "weight");
  g_assert_cmpint(weight, >=, 0);
  const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, weight);
  double wx, wy;
  gs_graph_view_layout_to_widget(view, n->x, n->y, &wx, &wy);
  g_assert_cmpfloat(wx, >, 0);
  g_assert_cmpfloat(wx, <, gtk_widget_get_width(GTK_WIDGET(view)));
  click_at(view, wx, wy, 1);
  g_assert_cmpuint(sel.tensor_calls, ==, 1);
  g_assert_cmpuint(sel.tensor, ==, g_array_index(l->graph->items, gs_graph_item, n->item).tensor);
  g_assert_cmpint(gs_graph_view_get_selected(view), ==, weight);
  draw_frames();
  save_screenshot(window, "graph-view-selected.png");
  /* Dark style: the background follows the theme, nodes keep torchviz's colours. */
  g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme", TRUE, NULL);
  save_screenshot(window, "graph-view-dark.png");
  g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme", FALSE, NULL);

  /* An op: a click selects it and says nothing; a double-click emits event-selected with
   * the event that created it. */
  gint op = find_node(l, GS_GRAPH_OP, "Backward");
  g_assert_cmpint(op, >=, 0);
  n = &g_array_index(l->nodes, gs_layout_node, op);
  gs_graph_view_layout_to_widget(view, n->x, n->y, &wx, &wy);
  click_at(view, wx, wy, 1);
  g_assert_cmpint(gs_graph_view_get_selected(view), ==, op);
  g_assert_cmpuint(sel.event_calls, ==, 0);
  click_at(view, wx, wy, 2);
  g_assert_cmpuint(sel.event_calls, ==, 1);
  g_assert_cmpint(gs_trace_model_kind_at(m, sel.event), ==, GS_TRACE_NODE_CREATE);
  g_assert_cmpuint(sel.tensor_calls, ==, 1);

  /* The background: nothing selected, no signal. */
  click_at(view, 2, 2, 1);
  g_assert_cmpint(gs_graph_view_get_selected(view), ==, -1);
  g_assert_cmpuint(sel.tensor_calls + sel.event_calls, ==, 2);

  /* Zoom in around a node: it stays under the pointer. */
  n = &g_array_index(l->nodes, gs_layout_node, weight);
  gs_graph_view_layout_to_widget(view, n->x, n->y, &wx, &wy);
  gs_graph_view_zoom_at(view, 3.0, wx, wy);
  double after_x, after_y;
  gs_graph_view_layout_to_widget(view, n->x, n->y, &after_x, &after_y);
  g_assert_cmpfloat(fabs(after_x - wx), <, 0.5);
  g_assert_cmpfloat(fabs(after_y - wy), <, 0.5);
  draw_frames();
  save_screenshot(window, "graph-view-zoomed.png");
  /* The keyboard: "0" fits again (the layout's centre at the view's centre), "+" zooms. */
  GtkEventController *keys = NULL;
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(GTK_WIDGET(view));
  for (guint i = 0; i < g_list_model_get_n_items(controllers) && !keys; i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_EVENT_CONTROLLER_KEY(c))
      keys = GTK_EVENT_CONTROLLER(c);
  }
  g_assert_nonnull(keys);
  gboolean handled = FALSE;
  g_signal_emit_by_name(keys, "key-pressed", GDK_KEY_0, 0, 0, &handled);
  g_assert_true(handled);
  double cx, cy;
  gs_graph_view_layout_to_widget(view, l->width / 2, l->height / 2, &cx, &cy);
  g_assert_cmpfloat(fabs(cx - gtk_widget_get_width(GTK_WIDGET(view)) / 2.0), <, 1);
  g_assert_cmpfloat(fabs(cy - gtk_widget_get_height(GTK_WIDGET(view)) / 2.0), <, 1);
  double before_x, after_plus_x;
  gs_graph_view_layout_to_widget(view, 0, 0, &before_x, &cy);
  g_signal_emit_by_name(keys, "key-pressed", GDK_KEY_plus, 0, 0, &handled);
  gs_graph_view_layout_to_widget(view, 0, 0, &after_plus_x, &cy);
  g_assert_cmpfloat(after_plus_x, <, before_x); /* the left edge moved out: zoomed in */

  /* Another model while a layout is on its way: the old model's answer is dropped. */
  gs_graph_view_set_position(view, at - 1);
  gs_graph_view_set_model(view, NULL);
  g_assert_null(gs_graph_view_get_layout(view));
  g_assert_false(gs_graph_view_is_busy(view));
  draw_frames();
  g_assert_null(gs_graph_view_get_layout(view));
  gs_graph_view_set_model(view, m);
  gs_graph_view_set_position(view, at);
  wait_for_layout(view);
  l = gs_graph_view_get_layout(view);

  /* A new position: the old layout stays drawn until the new one arrives. */
  gs_graph_view_set_position(view, gs_trace_model_n_events(m) - 1);
  g_assert_true(gs_graph_view_get_layout(view) == l);
  g_assert_true(gs_graph_view_is_busy(view));
  wait_for_layout(view);
  g_assert_cmpuint(gs_graph_view_get_layout(view)->nodes->len, ==, 0); /* all released */
  save_screenshot(window, "graph-view-empty.png");

  gtk_window_destroy(GTK_WINDOW(window));
  graph_workload_remove_dir(dir);
}

static guint64 last_of_kind(gs_trace_model *m, gs_trace_kind kind) {
  for (guint64 i = gs_trace_model_n_events(m); i-- > 0;)
    if (gs_trace_model_kind_at(m, i) == kind)
      return i;
  g_assert_not_reached();
}

/* An unrolled RNN of 400 steps: beyond 1,500 items the older steps are one "t ×399" group;
 * a double-click on it lays the whole graph out. */
static void test_double_click_expands_a_group(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(graph_workload_rnn, &dir);
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 900, 700);
  GsGraphView *view = GS_GRAPH_VIEW(gs_graph_view_new());
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(view));
  gtk_window_present(GTK_WINDOW(window));
  gs_graph_view_set_model(view, m);
  gs_graph_view_set_position(view, last_of_kind(m, GS_TRACE_NODE_CREATE));
  wait_for_layout(view);
  const gs_layout *l = gs_graph_view_get_layout(view);
  gint group = find_node(l, GS_GRAPH_GROUP, "t \xc3\x97" "399");
  g_assert_cmpint(group, >=, 0);
  guint collapsed = l->nodes->len;
  g_assert_cmpuint(collapsed, <, 100);
  save_screenshot(window, "graph-view-collapsed.png");

  const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, group);
  double wx, wy;
  gs_graph_view_layout_to_widget(view, n->x, n->y, &wx, &wy);
  click_at(view, wx, wy, 1);
  click_at(view, wx, wy, 2);
  g_assert_true(gs_graph_view_is_busy(view));
  wait_for_layout(view);
  l = gs_graph_view_get_layout(view);
  g_assert_cmpuint(l->nodes->len, >, 1500);
  g_assert_cmpint(find_node(l, GS_GRAPH_GROUP, NULL), ==, -1);
  /* A cluster per time step. */
  g_assert_cmpuint(l->clusters->len, >=, GRAPH_WORKLOAD_RNN_STEPS);
  /* It opened in place, at the same zoom: the node next to the group is where it was. */
  gint kept = -1;
  for (guint i = 0; i < l->nodes->len && kept < 0; i++) {
    double x, y;
    const gs_layout_node *k = &g_array_index(l->nodes, gs_layout_node, i);
    gs_graph_view_layout_to_widget(view, k->x, k->y, &x, &y);
    if (fabs(x - wx) < 200 && fabs(y - wy) < 200)
      kept = (gint)i;
  }
  g_assert_cmpint(kept, >=, 0);
  save_screenshot(window, "graph-view-expanded.png");
  gtk_window_destroy(GTK_WINDOW(window));
  graph_workload_remove_dir(dir);
}

static void count_call(guint *calls) {
  (*calls)++;
}

/* Runs the main loop until the view answered its last request, drawn or not. */
static void wait_for_answer(GsGraphView *view) {
  gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  while (gs_graph_view_is_busy(view) && g_get_monotonic_time() < deadline)
    g_main_context_iteration(NULL, TRUE);
  g_assert_false(gs_graph_view_is_busy(view));
  draw_frames();
}

/* The hostile log of many names at scale, as a model read from a file (removed at once:
 * the model keeps its descriptor). */
static gs_trace_model *many_names_model(double scale) {
  const hostile_log *h = hostile_logs;
  while (h->name && !g_str_equal(h->name, "many-names"))
    h++;
  g_assert_nonnull(h->name);
  tw_log log = {0};
  h->build(&log, scale);
  g_autofree char *dir = g_dir_make_tmp("gs-graph-view-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "many-names.gst", NULL);
  g_assert_true(g_file_set_contents(path, (const char *)log.data, (gssize)log.len, NULL));
  tw_free(&log);
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  g_assert_no_error(error);
  g_unlink(path);
  g_rmdir(dir);
  return m;
}

/* A graph view over m in a window of its own, shown. */
static GsGraphView *show_graph_view(gs_trace_model *m, GtkWidget **window) {
  *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(*window), 900, 500);
  GsGraphView *view = GS_GRAPH_VIEW(gs_graph_view_new());
  gtk_window_set_child(GTK_WINDOW(*window), GTK_WIDGET(view));
  gtk_window_present(GTK_WINDOW(*window));
  gs_graph_view_set_model(view, m);
  return view;
}

/* The hostile many-names log, small: each of its thousands of scopes holds a node, more than
 * dot lays out in reasonable time. The view says so with the layout's numbers instead of
 * "move the scrubber"; an early event's small graph is drawn again and the reason goes. */
static void test_too_large_graph_says_why(void) {
  g_autoptr(gs_trace_model) m = many_names_model(0.015); /* 3,000 scopes, 6,000 items */
  GtkWidget *window;
  GsGraphView *view = show_graph_view(m, &window);
  g_assert_null(gs_graph_view_get_problem(view));
  guint layouts = 0;
  g_signal_connect_swapped(view, "layout-changed", G_CALLBACK(count_call), &layouts);
  gs_graph_view_set_position(view, gs_trace_model_n_events(m) - 1);
  wait_for_answer(view);
  g_assert_null(gs_graph_view_get_layout(view));
  const char *problem = gs_graph_view_get_problem(view);
  g_assert_nonnull(problem);
  g_test_message("problem: %s", problem);
  g_autofree char *limit = g_strdup_printf("%u", GS_LAYOUT_MAX_NODES);
  g_assert_nonnull(strstr(problem, limit));
  g_assert_cmpuint(layouts, ==, 1); /* the page's status follows the view's answers */
  save_screenshot(window, "graph-view-too-large.png");

  /* The first scope's node alone: drawn, and the reason is gone. */
  gs_graph_view_set_position(view, graph_workload_find_kind(m, GS_TRACE_NODE_CREATE, 0));
  wait_for_layout(view);
  g_assert_null(gs_graph_view_get_problem(view));
  g_assert_cmpuint(gs_graph_view_get_layout(view)->nodes->len, >, 0);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* Past GS_GRAPH_SOURCE_MAX_NODES live nodes the view builds nothing (the build would hold
 * the UI thread for seconds) and says why, with the count and the limit, at once: no layout
 * is requested. */
static void test_graph_past_the_build_limit_is_not_built(void) {
  /* 200,000 scopes at scale 1, one node each: 1,000 past the limit. */
  g_autoptr(gs_trace_model) m = many_names_model((GS_GRAPH_SOURCE_MAX_NODES + 1000) / 200000.0);
  GtkWidget *window;
  GsGraphView *view = show_graph_view(m, &window);
  draw_frames();
  gint64 start = g_get_monotonic_time();
  gs_graph_view_set_position(view, gs_trace_model_n_events(m) - 1);
  double seconds = (g_get_monotonic_time() - start) / 1e6;
  g_test_message("refused in %.3f s", seconds);
  g_assert_false(gs_graph_view_is_busy(view));
  g_assert_null(gs_graph_view_get_layout(view));
  const char *problem = gs_graph_view_get_problem(view);
  g_assert_nonnull(problem);
  g_test_message("problem: %s", problem);
  g_autofree char *limit = g_strdup_printf("%u", GS_GRAPH_SOURCE_MAX_NODES);
  g_assert_nonnull(strstr(problem, limit));
  save_screenshot(window, "graph-view-not-built.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

int main(int argc, char **argv) {
  gtk_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph-view/click-selects-nodes", test_click_selects_nodes);
  g_test_add_func("/graph-view/double-click-expands-a-group", test_double_click_expands_a_group);
  g_test_add_func("/graph-view/too-large-graph-says-why", test_too_large_graph_says_why);
  g_test_add_func("/graph-view/graph-past-the-build-limit-is-not-built",
                  test_graph_past_the_build_limit_is_not_built);
  return g_test_run();
}
