/* test-graph.c: the graph view's engine (inspector/graph/, inspector/model/graph*.c) on logs
 * the engine records here: the graph at a model position, laid out on the worker thread
 * (counts match the graph, splines are beziers, newer requests supersede older ones), names
 * from user code through Graphviz and back, storage relations and failed version checks,
 * collapsing repeated scopes, and PNG/SVG export checked pixel by pixel. */
#include <cairo.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "graph-collapse.h"
#include "graph-dot.h"
#include "graph-layout.h"
#include "graph-render.h"
#include "graph-source.h"
#include "graph-versions.h"
#include "layout-worker.h"
#include "graph-workloads.h"
#include "trace-model.h"

static guint count_kind(const gs_graph *g, gs_graph_item_kind kind) {
  guint n = 0;
  for (guint i = 0; i < g->items->len; i++)
    n += g_array_index(g->items, gs_graph_item, i).kind == kind;
  return n;
}

/* ---- layout on the worker ------------------------------------------------------------- */

typedef struct answer {
  GMainLoop *loop;
  guint calls;
  guint64 serial;
  gs_layout *layout;
  gboolean on_main_thread;
} answer;

static void on_layout(guint64 serial, gs_layout *layout, const GError *error, gpointer data) {
  answer *a = data;
  g_assert_no_error(error);
  a->calls++;
  a->serial = serial;
  g_clear_pointer(&a->layout, gs_layout_free);
  a->layout = layout;
  a->on_main_thread = g_main_context_is_owner(g_main_context_default());
  g_main_loop_quit(a->loop);
}

static void assert_layout_matches(const gs_layout *l, guint items, guint edges) {
  g_assert_cmpuint(l->nodes->len, ==, items);
  g_assert_cmpuint(l->edges->len, ==, edges);
  g_assert_cmpfloat(l->width, >, 0);
  for (guint i = 0; i < l->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    g_assert_cmpfloat(n->width, >, 0);
    g_assert_cmpfloat(n->x, >=, 0);
    g_assert_cmpfloat(n->x, <=, l->width);
    g_assert_cmpfloat(n->y, >=, 0);
    g_assert_cmpfloat(n->y, <=, l->height);
    g_assert_cmpint(gs_layout_node_at(l, n->x, n->y), ==, (gint)i);
  }
  for (guint i = 0; i < l->edges->len; i++) {
    const gs_layout_edge *e = &g_array_index(l->edges, gs_layout_edge, i);
    g_assert_cmpuint(e->n_points, >=, 4);
    g_assert_cmpuint((e->n_points - 1) % 3, ==, 0); /* 1 + 3n bezier points */
  }
}

static void test_mlp_step_laid_out_on_the_worker(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(graph_workload_mlp_step, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  guint64 at = gs_graph_source_find_backward(source, 0);
  g_assert_cmpuint(at, ==, graph_workload_find_kind(m, GS_TRACE_BACKWARD_BEGIN, 0));
  gs_graph *g = gs_graph_source_build(source, at);
  /* Two Linear layers: their four parameters are leaves; the loss is the one output. */
  g_assert_cmpuint(count_kind(g, GS_GRAPH_LEAF), ==, 4);
  g_assert_cmpuint(count_kind(g, GS_GRAPH_OUTPUT), ==, 1);
  g_assert_cmpuint(count_kind(g, GS_GRAPH_OP), >=, 6);
  g_assert_cmpuint(count_kind(g, GS_GRAPH_SAVED), >=, 3);
  gboolean weight_named = FALSE;
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    weight_named |= item->kind == GS_GRAPH_LEAF && strstr(item->label, "weight") != NULL;
  }
  g_assert_true(weight_named);
  guint items = g->items->len, edges = g->edges->len;

  g_autoptr(gs_layout_worker) worker = gs_layout_worker_new();
  answer a = {g_main_loop_new(NULL, FALSE), 0, 0, NULL, FALSE};
  gs_layout_options options = {TRUE, "mlp"};
  guint64 serial = gs_layout_worker_request(worker, g, &options, on_layout, &a, NULL);
  g_main_loop_run(a.loop);
  g_assert_cmpuint(a.calls, ==, 1);
  g_assert_cmpuint(a.serial, ==, serial);
  g_assert_true(a.on_main_thread);
  assert_layout_matches(a.layout, items, edges);
  /* The tensors made in the step are in its cluster. */
  g_assert_cmpuint(a.layout->clusters->len, >=, 1);
  g_assert_cmpstr(g_array_index(a.layout->clusters, gs_layout_cluster, 0).label, ==, "step");

  /* The graph at the end of the log: backward released everything. */
  g_autoptr(gs_graph) after = gs_graph_source_build(source, gs_trace_model_n_events(m) - 1);
  g_assert_cmpuint(after->items->len, ==, 0);
  /* Back to the step: versions are tracked again from the start, same graph. */
  g_autoptr(gs_graph) again = gs_graph_source_build(source, at);
  g_assert_cmpuint(again->items->len, ==, items);

  /* Five requests in a row (graphs built first, so they come microseconds apart while a
   * layout takes milliseconds): each is either answered or superseded by a newer one, the
   * last is answered, and some were superseded. How many the layout thread took before the
   * next arrived depends on scheduling, so only the sum is exact. */
  gs_graph *graphs[5];
  for (int i = 0; i < 5; i++)
    graphs[i] = gs_graph_source_build(source, at);
  guint calls_before = a.calls;
  for (int i = 0; i < 5; i++)
    serial = gs_layout_worker_request(worker, graphs[i], &options, on_layout, &a, NULL);
  while (a.serial != serial)
    g_main_context_iteration(NULL, TRUE);
  guint answered = a.calls - calls_before;
  guint64 superseded = gs_layout_worker_n_superseded(worker);
  g_assert_cmpuint(answered + superseded, ==, 5);
  g_assert_cmpuint(superseded, >=, 1);
  assert_layout_matches(a.layout, items, edges);
  g_clear_pointer(&a.layout, gs_layout_free);
  g_main_loop_unref(a.loop);
  graph_workload_remove_dir(dir);
}

/* ---- hostile names -------------------------------------------------------------------- */

static void test_hostile_names_round_trip_through_graphviz(void) {
  /* What user code may name a tensor or scope, and what the drawing must show for it:
   * newlines kept as line breaks, other control bytes as spaces, bad UTF-8 as U+FFFD. */
  static const struct {
    const char *name, *shown;
  } cases[] = {
      {"say \"hi\"", "say \"hi\""},
      {"back\\slash \\N \\G \\l end\\", "back\\slash \\N \\G \\l end\\"},
      {"<b>html</b> & {record|field} [x]", "<b>html</b> & {record|field} [x]"},
      {"two\nlines", "two\nlines"},
      {"tab\tbell\x07", "tab bell "},
      {"bad \xff\xfe utf8 \xc3", "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd"},
      {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"},
      {"\"; node [shape=none]; \"x", "\"; node [shape=none]; \"x"},
      {"", ""},
  };
  gs_graph *g = gs_graph_new();
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    /* Keys are escaped too: give them the same hostile text. */
    gs_graph_item item = {GS_GRAPH_LEAF, i + 1, 0, g_strdup_printf("%s#%u", cases[i].name, i),
                          g_strdup(cases[i].name), 7, -1, -1, 0, 1, 0};
    g_array_append_val(g->items, item);
    if (i)
      gs_graph_add_edge(g, i - 1, i, GS_GRAPH_EDGE_GRAD);
  }
  gs_graph_scope scope = {7, 0, g_strdup("scope \"{|}\" \\ \xff")};
  g_array_append_val(g->scopes, scope);
  g_autoptr(GError) error = NULL;
  gs_layout_options options = {TRUE, "title \\ \" \n"};
  g_autoptr(gs_layout) l = gs_layout_compute(g, &options, &error);
  g_assert_no_error(error);
  assert_layout_matches(l, G_N_ELEMENTS(cases), G_N_ELEMENTS(cases) - 1);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    g_assert_cmpstr(g_array_index(l->nodes, gs_layout_node, i).label, ==, cases[i].shown);
  g_assert_cmpuint(l->clusters->len, ==, 1);
  g_assert_cmpstr(g_array_index(l->clusters, gs_layout_cluster, 0).label, ==,
                  "scope \"{|}\" \\ \xef\xbf\xbd");
  g_assert_cmpstr(l->title, ==, "title \\ \" \n");
}

/* The size of text as the renderer draws node labels: Monospace 10 at 72 dpi (points). */
static void label_size(const char *text, double *width, double *height) {
  PangoFontMap *map = pango_cairo_font_map_get_default();
  PangoContext *context = pango_font_map_create_context(map);
  pango_cairo_context_set_resolution(context, 72);
  PangoLayout *layout = pango_layout_new(context);
  PangoFontDescription *font = pango_font_description_from_string("Monospace 10");
  pango_layout_set_font_description(layout, font);
  pango_font_description_free(font);
  pango_layout_set_text(layout, text, -1);
  int w, h;
  pango_layout_get_size(layout, &w, &h);
  *width = (double)w / PANGO_SCALE;
  *height = (double)h / PANGO_SCALE;
  g_object_unref(layout);
  g_object_unref(context);
}

/* A node's box holds its label as the renderer draws it, in any script: Chinese labels
 * ("梯度 -3.0000", the value lines of a tour) were measured by Graphviz as Latin letters,
 * and their last line was cut by the border. */
static void test_labels_fit_their_boxes(void) {
  static const char *const labels[] = {
      "a\n数据 2.0000\n梯度 -3.0000",
      "保存的 #3.1\n(8, 4)\n版本 0",
      "a\ndata 2.0000\ngrad -3.0000",
  };
  gs_graph *g = gs_graph_new();
  for (guint i = 0; i < G_N_ELEMENTS(labels); i++) {
    gs_graph_item item = {i == 1 ? GS_GRAPH_SAVED : GS_GRAPH_LEAF, i + 1, 0,
                          g_strdup_printf("n%u", i), g_strcompress(labels[i]), 0, -1, -1, 0, 1, 0};
    g_array_append_val(g->items, item);
  }
  g_autoptr(GError) error = NULL;
  gs_layout_options options = {FALSE, NULL};
  g_autoptr(gs_layout) l = gs_layout_compute(g, &options, &error);
  g_assert_no_error(error);
  for (guint i = 0; i < l->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    double w, h;
    label_size(n->label, &w, &h);
    g_test_message("%s: box %.1f x %.1f, text %.1f x %.1f", n->label, n->width, n->height, w, h);
    /* an ellipse holds its text's box only when it is sqrt(2) times as large */
    double fit = i == 1 ? G_SQRT2 : 1.0;
    g_assert_cmpfloat(n->width, >=, w * fit);
    g_assert_cmpfloat(n->height, >=, h * fit);
  }
}

/* ---- storage relations and version checks --------------------------------------------- */

static gs_tensor keep[8];

/* y = x * t(c): saves x and a view of c; z = y * clone(c) * detach(x); then c is written in
 * place, so the saved view is stale and backward refuses. */
static void version_trouble(void) {
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  const int64_t shape[] = {2, 2};
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_set_requires_grad(x, true);
  gs_trace_name(x, "x");
  gs_tensor c = gs_ones(GS_F32, shape, 2);
  gs_trace_name(c, "c");
  gs_tensor y = gs_mul(x, gs_t(c));
  gs_tensor cl = gs_clone(c);
  gs_tensor z = gs_mul(gs_mul(y, cl), gs_detach(x));
  gs_tensor loss = gs_sum(z, NULL, 0, false);
  gs_trace_mark("before the write");
  gs_add_scalar_(c, 1.0);
  gs_trace_mark("after the write");
  gs_backward(loss); /* fails: the saved view of c moved from version 0 to 1 */
  keep[0] = x, keep[1] = c, keep[2] = loss, keep[3] = cl;
  gs_trace_flush();
  gs_set_error_handler(NULL, NULL, NULL);
}

static const gs_graph_item *item_for(const gs_graph *g, gs_graph_item_kind kind, guint64 tensor) {
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    if (item->kind == kind && item->tensor == tensor)
      return item;
  }
  return NULL;
}

static gboolean has_edge(const gs_graph *g, gs_graph_edge_kind kind, guint64 from_tensor) {
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *e = &g_array_index(g->edges, gs_graph_edge, i);
    if (e->kind == kind && g_array_index(g->items, gs_graph_item, e->from).tensor == from_tensor)
      return TRUE;
  }
  return FALSE;
}

static void test_storage_relations_and_failed_version_check(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(version_trouble, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  guint64 before = graph_workload_find_kind(m, GS_TRACE_MARK, 0);
  guint64 after = graph_workload_find_kind(m, GS_TRACE_MARK, 1);

  g_autoptr(gs_graph) g = gs_graph_source_build(source, before);
  /* The saved view of c, the clone sharing c's bytes, the detached x: each from its source. */
  g_assert_true(has_edge(g, GS_GRAPH_EDGE_VIEW, keep[1].id));
  g_assert_true(has_edge(g, GS_GRAPH_EDGE_COW, keep[1].id));
  g_assert_true(has_edge(g, GS_GRAPH_EDGE_DETACH, keep[0].id));
  g_assert_nonnull(item_for(g, GS_GRAPH_TENSOR, keep[1].id)); /* c itself, drawn as a source */
  for (guint i = 0; i < g->items->len; i++)
    g_assert_cmpuint(g_array_index(g->items, gs_graph_item, i).flags, ==, 0);
  g_assert_null(g->version_error);

  g_autoptr(gs_graph) stale = gs_graph_source_build(source, after);
  guint flagged_saved = 0, flagged_ops = 0;
  for (guint i = 0; i < stale->items->len; i++) {
    const gs_graph_item *item = &g_array_index(stale->items, gs_graph_item, i);
    if (!(item->flags & GS_GRAPH_VERSION_ERROR))
      continue;
    if (item->kind == GS_GRAPH_SAVED) {
      flagged_saved++;
      g_assert_cmpint(item->saved_version, ==, 0);
      g_assert_cmpint(item->version, ==, 1);
      g_autofree char *shown = gs_graph_item_display_label(item);
      g_assert_nonnull(strstr(shown, "saved v0, now v1"));
    }
    flagged_ops += item->kind == GS_GRAPH_OP;
  }
  g_assert_cmpuint(flagged_saved, ==, 1); /* the view of c (the clone has its own storage) */
  g_assert_cmpuint(flagged_ops, ==, 1);   /* the MulBackward that saved it */
  const gs_graph_item *writer = item_for(stale, GS_GRAPH_TENSOR, keep[1].id);
  if (!writer)
    g_assert_not_reached();
  g_assert_true(writer->flags & GS_GRAPH_VERSION_ERROR);
  g_assert_cmpint(writer->version, ==, 1);

  /* After backward refused, the engine's message comes with the graph. */
  g_autoptr(gs_graph) failed =
      gs_graph_source_build(source, graph_workload_find_kind(m, GS_TRACE_ERROR, 0));
  g_assert_nonnull(failed->version_error);
  g_assert_nonnull(strstr(failed->version_error, "expected version 0"));
  graph_workload_remove_dir(dir);
}

/* The version tour: backward refuses (a's detached alias wrote into what MulBackward saved),
 * then the program writes on a clone and a second backward succeeds. */
static void refused_then_fixed(void) {
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_tensor a = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_set_requires_grad(a, true);
  gs_tensor b = gs_mul(a, a), loss = gs_sum(b, NULL, 0, false);
  gs_tensor alias = gs_detach(a);
  gs_add_scalar_(alias, 1.0);
  gs_backward(loss); /* refused */
  gs_tensor b2 = gs_mul(a, a), loss2 = gs_sum(b2, NULL, 0, false);
  gs_backward(loss2); /* succeeds */
  gs_set_error_handler(gs_error_handler_abort, NULL, NULL);
  gs_tensor all[] = {a, b, loss, alias, b2, loss2};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* The engine's refusal is the graph's news until the next backward begins: after a later pass
 * succeeded, its banner would contradict what just happened (the old graph's red marks still
 * show what would fail). */
static void test_refusal_is_news_until_the_next_backward(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(refused_then_fixed, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  g_autoptr(gs_graph) refused =
      gs_graph_source_build(source, graph_workload_find_kind(m, GS_TRACE_ERROR, 0));
  g_assert_nonnull(refused->version_error);
  g_autoptr(gs_graph) fixed =
      gs_graph_source_build(source, graph_workload_find_kind(m, GS_TRACE_BACKWARD_END, 1));
  g_assert_null(fixed->version_error);
  gboolean still_marked = FALSE; /* the first graph is alive and would still fail */
  for (guint i = 0; i < fixed->items->len; i++)
    still_marked |= (g_array_index(fixed->items, gs_graph_item, i).flags & GS_GRAPH_VERSION_ERROR) != 0;
  g_assert_true(still_marked);
  /* Back at the refusal (a seek backwards rewinds the histories): news again. */
  g_autoptr(gs_graph) again =
      gs_graph_source_build(source, graph_workload_find_kind(m, GS_TRACE_ERROR, 0));
  g_assert_nonnull(again->version_error);
  graph_workload_remove_dir(dir);
}

/* ---- collapsing ----------------------------------------------------------------------- */

/* Ten time steps of 200 ops each inside "rnn", chained, plus one op outside. */
static gs_graph *repeated_graph(void) {
  gs_graph *g = gs_graph_new();
  gs_graph_scope outer = {1, 0, g_strdup("rnn")};
  g_array_append_val(g->scopes, outer);
  for (guint64 s = 0; s < 10; s++) {
    gs_graph_scope step = {2 + s, 1, g_strdup("t")};
    g_array_append_val(g->scopes, step);
    for (guint k = 0; k < 200; k++) {
      guint64 id = s * 200 + k + 1;
      gs_graph_item item = {GS_GRAPH_OP, id, 0, g_strdup_printf("n%" G_GUINT64_FORMAT, id),
                            g_strdup("AddBackward"), 2 + s, -1, -1,
                            s == 3 ? GS_GRAPH_VERSION_ERROR : 0, 1, 0};
      g_array_append_val(g->items, item);
      if (g->items->len > 1)
        gs_graph_add_edge(g, g->items->len - 2, g->items->len - 1, GS_GRAPH_EDGE_GRAD);
    }
  }
  gs_graph_item out = {GS_GRAPH_OUTPUT, 99999, 5, g_strdup("t5"), g_strdup("loss"),
                       0, -1, -1, 0, 1, 0};
  g_array_append_val(g->items, out);
  gs_graph_add_edge(g, g->items->len - 2, g->items->len - 1, GS_GRAPH_EDGE_GRAD);
  return g;
}

static void test_repeated_steps_collapse_and_expand(void) {
  g_autoptr(gs_graph) g = repeated_graph();
  g_assert_cmpuint(g->items->len, ==, 2001);
  g_autoptr(gs_graph) small = gs_graph_collapse(g, 1500, NULL);
  /* Nine older steps become one "t ×9"; the last step stays open. */
  g_assert_cmpuint(small->items->len, ==, 200 + 1 + 1);
  const gs_graph_item *group = &g_array_index(small->items, gs_graph_item, small->items->len - 1);
  g_assert_cmpint(group->kind, ==, GS_GRAPH_GROUP);
  g_assert_cmpuint(group->members, ==, 1800);
  g_assert_true(group->flags & GS_GRAPH_VERSION_ERROR); /* a member's error shows on the group */
  g_assert_nonnull(strstr(group->label, "t \xc3\x97" "9"));
  g_assert_cmpuint(group->scope, ==, 1);
  /* The chain: group -> first op of the last step, and no edges inside the group. */
  guint into_open = 0;
  for (guint i = 0; i < small->edges->len; i++) {
    const gs_graph_edge *e = &g_array_index(small->edges, gs_graph_edge, i);
    g_assert_cmpuint(e->from, !=, e->to);
    into_open += e->from == small->items->len - 1;
  }
  g_assert_cmpuint(into_open, ==, 1);
  g_assert_cmpuint(small->edges->len, ==, 199 + 1 + 1);

  /* Expanding it (the view's double-click) brings every node back. */
  g_autoptr(GHashTable) expanded = g_hash_table_new(g_str_hash, g_str_equal);
  g_hash_table_add(expanded, group->key);
  g_autoptr(gs_graph) full = gs_graph_collapse(g, 1500, expanded);
  g_assert_cmpuint(full->items->len, ==, 2001);
  g_assert_cmpuint(full->edges->len, ==, g->edges->len);
  /* Under the limit nothing changes. */
  g_autoptr(gs_graph) same = gs_graph_collapse(g, 5000, NULL);
  g_assert_cmpuint(same->items->len, ==, 2001);
}

/* A full graph handed to the worker comes back collapsed as the view shows it: the group is
 * made on the layout thread, and a key the caller adds to its own set afterwards does not
 * reach the request (the thread reads a copy). */
static void test_worker_collapses_a_full_graph(void) {
  g_autoptr(gs_graph) probe = repeated_graph();
  g_autoptr(gs_graph) small = gs_graph_collapse(probe, 1500, NULL);
  g_autoptr(GHashTable) expanded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(gs_layout_worker) worker = gs_layout_worker_new();
  answer a = {g_main_loop_new(NULL, FALSE), 0, 0, NULL, FALSE};
  gs_layout_options options = {TRUE, NULL};
  guint64 serial = gs_layout_worker_request_full(worker, repeated_graph(), 1500, expanded,
                                                 &options, on_layout, &a, NULL);
  const gs_graph_item *group =
      &g_array_index(small->items, gs_graph_item, small->items->len - 1);
  g_hash_table_add(expanded, g_strdup(group->key));
  g_main_loop_run(a.loop);
  g_assert_cmpuint(a.serial, ==, serial);
  g_assert_true(a.on_main_thread);
  g_assert_cmpuint(a.layout->nodes->len, ==, small->items->len);
  g_assert_cmpint(g_array_index(a.layout->graph->items, gs_graph_item,
                                a.layout->graph->items->len - 1).kind, ==, GS_GRAPH_GROUP);
  g_clear_pointer(&a.layout, gs_layout_free);
  g_main_loop_unref(a.loop);
}

/* A weight feeding six nodes in six scopes: drawn once per consumer, each copy in its
 * consumer's scope; a tensor used three times stays one item. */
static void test_hubs_are_split_per_consumer(void) {
  gs_graph *g = gs_graph_new();
  gs_graph_item w = {GS_GRAPH_LEAF, 100, 7, g_strdup("n100"), g_strdup("W"), 0, 3, -1, 0, 1, 0};
  g_array_append_val(g->items, w);
  gs_graph_item x = {GS_GRAPH_SAVED, 7, 7, g_strdup("s7"), g_strdup("saved x"), 0, -1, -1, 0, 1, 0};
  g_array_append_val(g->items, x);
  for (guint k = 0; k < 6; k++) {
    gs_graph_item op = {GS_GRAPH_OP, k + 1, 0, g_strdup_printf("n%u", k + 1),
                        g_strdup("MatmulBackward"), 10 + k, -1, -1, 0, 1, 0};
    g_array_append_val(g->items, op);
    gs_graph_add_edge(g, 0, 2 + k, GS_GRAPH_EDGE_GRAD);
    if (k < 3)
      gs_graph_add_edge(g, 1, 2 + k, GS_GRAPH_EDGE_SAVED);
  }
  g_autoptr(gs_graph) owned = g;
  gs_graph_split_hubs(g, GS_GRAPH_HUB_LIMIT);
  g_assert_cmpuint(g->items->len, ==, 2 + 6 + 5);
  g_assert_cmpuint(g->edges->len, ==, 9);
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *e = &g_array_index(g->edges, gs_graph_edge, i);
    const gs_graph_item *from = &g_array_index(g->items, gs_graph_item, e->from);
    const gs_graph_item *to = &g_array_index(g->items, gs_graph_item, e->to);
    if (e->kind == GS_GRAPH_EDGE_SAVED) {
      g_assert_cmpuint(e->from, ==, 1); /* three uses: not a hub */
      continue;
    }
    g_assert_cmpstr(from->label, ==, "W");
    g_assert_cmpuint(from->tensor, ==, 7);
    g_assert_cmpint(from->version, ==, 3);
    /* The first consumer keeps the original; the others get copies in their own scope. */
    if (to->id == 1)
      g_assert_cmpuint(e->from, ==, 0);
    else
      g_assert_cmpuint(from->scope, ==, to->scope);
  }
  g_assert_cmpint(gs_graph_find(g, "n100~5"), ==, 12);
  g_assert_cmpint(gs_graph_find(g, "n100~6"), ==, -1);
}

/* ---- export --------------------------------------------------------------------------- */

static gs_layout *mlp_layout(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(graph_workload_mlp_step, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  gs_graph *g = gs_graph_source_build(source, gs_graph_source_find_backward(source, 0));
  graph_workload_remove_dir(dir);
  gs_layout_options options = {TRUE, NULL};
  gs_layout *l = gs_layout_compute(g, &options, NULL);
  g_assert_nonnull(l);
  return l;
}

static void test_png_export_has_the_size_and_draws_the_nodes(void) {
  g_autoptr(gs_layout) l = mlp_layout();
  g_autofree char *dir = g_dir_make_tmp("gradscope-png-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "graph.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_graph_render_to_file(l, path, 640, 480, &error));
  g_assert_no_error(error);
  cairo_surface_t *png = cairo_image_surface_create_from_png(path);
  g_assert_cmpint(cairo_surface_status(png), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint(cairo_image_surface_get_width(png), ==, 640);
  g_assert_cmpint(cairo_image_surface_get_height(png), ==, 480);
  const unsigned char *data = cairo_image_surface_get_data(png);
  int stride = cairo_image_surface_get_stride(png);
  /* Pixels as 0xAARRGGBB; the background is white. */
#define PIXEL(x, y) (*(const guint32 *)(data + (y)*stride + 4 * (x)) & 0xffffff)
  g_assert_cmphex(PIXEL(0, 0), ==, 0xffffff);
  gs_graph_viewport vp;
  gs_graph_viewport_fit(l, 640, 480, &vp);
  for (guint i = 0; i < l->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    const gs_graph_item *item = &g_array_index(l->graph->items, gs_graph_item, n->item);
    /* The node's fill colour along its middle row, inside its border (an ellipse: inside its
     * curve). The label covers part of the row, and how much depends on the text, so the
     * fill must show in a few pixels of it, not at one fixed place. */
    double half = item->kind == GS_GRAPH_SAVED ? n->width * 0.35 : n->width / 2;
    int left = (int)floor((n->x - half - vp.x) * vp.scale) + 2;
    int right = (int)ceil((n->x + half - vp.x) * vp.scale) - 2;
    int py = (int)((n->y - vp.y) * vp.scale);
    g_assert_cmpint(left, >=, 0);
    g_assert_cmpint(right, <, 640);
    g_assert_cmpint(left, <, right);
    guint32 expected = item->kind == GS_GRAPH_LEAF     ? 0xadd8e6
                       : item->kind == GS_GRAPH_SAVED  ? 0xffa500
                       : item->kind == GS_GRAPH_OUTPUT ? 0xcaff70
                       : item->kind == GS_GRAPH_OP     ? 0xd3d3d3
                                                       : 0xffffff;
    int filled = 0;
    for (int px = left; px <= right; px++)
      filled += PIXEL(px, py) == expected;
    if (filled < 3)
      g_error("node %u (kind %d): fill 0x%06x in %d of the pixels %d..%d of row %d, expected at "
              "least 3",
              i, (int)item->kind, expected, filled, left, right, py);
  }
  cairo_surface_destroy(png);

  /* An unknown extension is refused, saying what is expected. */
  g_autofree char *jpg = g_build_filename(dir, "graph.jpg", NULL);
  g_assert_false(gs_graph_render_to_file(l, jpg, 100, 100, &error) || !error);
  g_assert_nonnull(strstr(error->message, ".png or .svg"));
  g_remove(path);
  g_rmdir(dir);
}

static void svg_start(GMarkupParseContext *c, const char *element, const char **names,
                      const char **values, gpointer data, GError **error) {
  (void)c, (void)names, (void)values, (void)error;
  guint *elements = data;
  if (*elements == 0)
    g_assert_cmpstr(element, ==, "svg");
  (*elements)++;
}

static void test_svg_export_is_well_formed(void) {
  g_autoptr(gs_layout) l = mlp_layout();
  g_autofree char *dir = g_dir_make_tmp("gradscope-svg-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "graph.svg", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_graph_render_to_file(l, path, 800, 600, &error));
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &text, &len, NULL));
  guint elements = 0;
  GMarkupParser parser = {svg_start, NULL, NULL, NULL, NULL};
  g_autoptr(GMarkupParseContext) c = g_markup_parse_context_new(&parser, 0, &elements, NULL);
  g_assert_true(g_markup_parse_context_parse(c, text, len, &error) &&
                g_markup_parse_context_end_parse(c, &error));
  g_assert_no_error(error);
  /* Shapes and glyphs for every node, not an empty page. */
  g_assert_cmpuint(elements, >, 3 * l->nodes->len);
  g_assert_nonnull(strstr(text, "width=\"800"));
  g_remove(path);
  g_rmdir(dir);
}

/* ---- versions going back ---------------------------------------------------------------- */

static void feed(gs_graph_versions *v, gs_trace_model *m, guint64 from, guint64 until) {
  for (guint64 i = from; i < until; i++) {
    gs_trace_event e;
    if (gs_graph_versions_wants(gs_trace_model_kind_at(m, i)) && gs_trace_model_event(m, i, &e))
      gs_graph_versions_apply(v, i, &e, gs_trace_model_string(m, e.op));
  }
}

/* Writes in place into storages that are then freed, a second write to one of them, and
 * version_trouble's failed check. */
static void writes_frees_and_trouble(void) {
  const int64_t shape[] = {3};
  for (int k = 0; k < 3; k++) {
    gs_scope s = gs_scope_begin("rewrite");
    gs_tensor a = gs_ones(GS_F32, shape, 1);
    gs_add_scalar_(a, 1.0);
    gs_add_scalar_(a, 2.0);
    gs_tensor b = gs_zeros(GS_F32, shape, 1);
    gs_add_scalar_(b, (double)k);
    gs_scope_end(s);
  }
  version_trouble();
  for (int k = 0; k < 4; k++)
    gs_dispose(keep[k]);
}

/* Rewinding the version tracker to any event gives what feeding it from the first event up
 * to there gives: versions now and just before each write, last writers, the last failed
 * check. */
static void test_versions_rewind_equals_replay(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(writes_frees_and_trouble, &dir);
  guint64 n = gs_trace_model_n_events(m);
  g_autoptr(GArray) storages = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autoptr(GArray) writes = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 i = 0; i < n; i++) {
    gs_trace_event e;
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_INPLACE_WRITE && gs_trace_model_event(m, i, &e)) {
      g_array_append_val(storages, e.storage);
      g_array_append_val(writes, e.seq);
    }
  }
  g_assert_cmpuint(storages->len, ==, 10);
  g_autoptr(gs_graph_versions) rewound = gs_graph_versions_new();
  feed(rewound, m, 0, n);
  guint64 error_seq = 0;
  g_assert_nonnull(gs_graph_versions_error(rewound, &error_seq));
  for (guint64 until = n + 1; until-- > 0;) {
    gs_graph_versions_rewind(rewound, until);
    g_autoptr(gs_graph_versions) fresh = gs_graph_versions_new();
    feed(fresh, m, 0, until);
    for (guint k = 0; k < storages->len; k++) {
      guint64 id = g_array_index(storages, guint64, k);
      g_assert_cmpuint(gs_graph_versions_now(rewound, id), ==, gs_graph_versions_now(fresh, id));
      for (guint w = 0; w < writes->len; w++) {
        guint64 seq = g_array_index(writes, guint64, w);
        g_assert_cmpuint(gs_graph_versions_before(rewound, id, seq), ==,
                         gs_graph_versions_before(fresh, id, seq));
      }
      const gs_graph_write *a = gs_graph_versions_last_write(rewound, id);
      const gs_graph_write *b = gs_graph_versions_last_write(fresh, id);
      g_assert_true((a == NULL) == (b == NULL));
      if (a)
        g_assert_cmpuint(a->seq, ==, b->seq);
    }
    guint64 sa = 0, sb = 0;
    g_assert_cmpstr(gs_graph_versions_error(rewound, &sa), ==,
                    gs_graph_versions_error(fresh, &sb));
    g_assert_cmpuint(sa, ==, sb);
  }
  /* Everything rewound: nothing is left, and feeding again rebuilds the same state. */
  g_assert_null(gs_graph_versions_error(rewound, NULL));
  feed(rewound, m, 0, n);
  g_assert_cmpstr(gs_graph_versions_error(rewound, NULL), !=, NULL);
  graph_workload_remove_dir(dir);
}

/* ---- saved tensors whose handles are gone ----------------------------------------------- */

/* A step that disposes an intermediate its graph saved before backward, as Sequential does
 * between layers: tanh saves its output h, mul saves h twice. */
static void disposed_saved_step(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  const int64_t shape[] = {3, 4};
  gs_tensor w = gs_randn(GS_F32, shape, 2, &rng);
  gs_set_requires_grad(w, true);
  gs_scope step = gs_scope_begin("step");
  gs_tensor h = gs_tanh(w);
  gs_tensor loss = gs_sum(gs_mul(h, h), NULL, 0, false);
  gs_dispose(h);
  gs_backward(loss);
  gs_scope_end(step);
  gs_dispose(w);
}

/* The replay no longer has h when backward begins; the graph still draws it in the step's
 * cluster (where it was made) with its shape, found through its creation. */
static void test_disposed_saved_tensor_keeps_shape_and_cluster(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(disposed_saved_step, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  guint64 at = gs_graph_source_find_backward(source, 0);
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  g_autoptr(gs_graph) g = gs_graph_source_build(source, at);
  guint saved = 0;
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    if (item->kind != GS_GRAPH_SAVED)
      continue;
    /* Tests before this one in the process leave graphs alive: the log opens with a snapshot
     * of them (format 1.5), outside any scope. This workload's saved tensor is the one in
     * "step". */
    const gs_graph_scope *scope = gs_graph_scope_find(g, item->scope);
    if (!scope)
      continue;
    saved++;
    g_assert_nonnull(strstr(item->label, "\n(3, 4)"));
    g_assert_cmpstr(scope->name, ==, "step");
  }
  g_assert_cmpuint(saved, ==, 1); /* h, once, though saved by two nodes three times */
}

/* ---- writes through views --------------------------------------------------------------- */

/* A buffer (no gradient of its own) filled through a row view from a leaf, then summed; a view
 * made before the write is used after it. */
static void write_through_view_step(void) {
  const int64_t shape[] = {3, 2}, row_shape[] = {2};
  gs_tensor w = gs_ones(GS_F32, row_shape, 1);
  gs_set_requires_grad(w, true);
  gs_tensor buffer = gs_zeros(GS_F32, shape, 2);
  gs_tensor early = gs_select(buffer, 0, 2);
  gs_tensor row = gs_select(buffer, 0, 1);
  gs_copy_(row, w);
  gs_tensor all_rows = gs_sum(buffer, NULL, 0, false), last = gs_sum(early, NULL, 0, false);
  gs_tensor total = gs_add(all_rows, last);
  gs_backward(total);
  gs_tensor all[] = {w, buffer, early, row, all_rows, last, total};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* The graph shows CopySlices where the write went and AsStridedBackward for the early view,
 * and the sentences say what they mean. */
static void test_write_through_view_in_graph_and_sentences(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) m = graph_workload_record(write_through_view_step, &dir);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  guint64 at = gs_graph_source_find_backward(source, 0);
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  g_autoptr(gs_graph) g = gs_graph_source_build(source, at);
  gboolean copy_slices = FALSE, as_strided = FALSE;
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    copy_slices |= item->kind == GS_GRAPH_OP && g_str_has_prefix(item->label, "CopySlices #");
    as_strided |= item->kind == GS_GRAPH_OP && g_str_has_prefix(item->label, "AsStridedBackward #");
  }
  g_assert_true(copy_slices);
  g_assert_true(as_strided);
  guint sentences = 0;
  for (guint64 i = 0; i < at; i++) {
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_NODE_CREATE)
      continue;
    g_autofree char *text = gs_trace_model_explain(m, i);
    if (g_str_has_prefix(text, "CopySlices #")) {
      g_assert_nonnull(strstr(text, ": a write through a view rewrote the history of its base "
                                    "tensor #"));
      sentences++;
    } else if (g_str_has_prefix(text, "AsStridedBackward #")) {
      g_assert_nonnull(strstr(text, "is a view made before its base was written in place"));
      sentences++;
    }
  }
  g_assert_cmpuint(sentences, ==, 2);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph/mlp-step-laid-out-on-the-worker", test_mlp_step_laid_out_on_the_worker);
  g_test_add_func("/graph/labels-fit-their-boxes", test_labels_fit_their_boxes);
  g_test_add_func("/graph/hostile-names-round-trip",
                  test_hostile_names_round_trip_through_graphviz);
  g_test_add_func("/graph/storage-relations-and-version-check",
                  test_storage_relations_and_failed_version_check);
  g_test_add_func("/graph/versions-rewind-equals-replay", test_versions_rewind_equals_replay);
  g_test_add_func("/graph/refusal-is-news-until-the-next-backward",
                  test_refusal_is_news_until_the_next_backward);
  g_test_add_func("/graph/repeated-steps-collapse-and-expand",
                  test_repeated_steps_collapse_and_expand);
  g_test_add_func("/graph/worker-collapses-a-full-graph", test_worker_collapses_a_full_graph);
  g_test_add_func("/graph/hubs-are-split-per-consumer", test_hubs_are_split_per_consumer);
  g_test_add_func("/graph/disposed-saved-tensor-keeps-shape-and-cluster",
                  test_disposed_saved_tensor_keeps_shape_and_cluster);
  g_test_add_func("/graph/write-through-view-in-graph-and-sentences",
                  test_write_through_view_in_graph_and_sentences);
  g_test_add_func("/graph/png-export", test_png_export_has_the_size_and_draws_the_nodes);
  g_test_add_func("/graph/svg-export", test_svg_export_is_well_formed);
  return g_test_run();
}
