/* bench-graph-layout: how long Graphviz dot takes to lay out autograd graphs of 500, 2,000
 * and 5,000 nodes, flat and with a cluster per scope, through the inspector's own path
 * (gs_graph -> DOT text -> agmemread -> dot -> plain structs: graph-layout.c), and how long
 * the cairo renderer then takes to draw the whole graph fitted into 1600x1000. The issue's
 * target: a 2,000-node step laid out in <= 1.5 s.
 *
 * The graphs look like a deep MLP's step: per layer a parameter leaf, a MatmulBackward taking
 * the previous layer's node and the leaf, a ReluBackward, and the two saved activations on
 * undirected edges (5 items per layer); a scope per 25 layers (125 items). Each size is laid
 * out once: dot is deterministic and the machine is shared.
 *
 * Then what the graph view does on the UI thread before dot runs: building the graph at an
 * event of a long recorded run (bench-training-log.h, ~10 M events; 1 M with --quick):
 * the first build at the last backward pass (the versions fed from the first event),
 * building pass after pass going forward (what following a live run or stepping with "next
 * backward pass" costs), "previous backward pass" at the end, and a jump to the start (the
 * versions rewind). */
#include <cairo.h>
#include <glib.h>

#include "bench-training-log.h"
#include "bench-util.h"
#include "graph-layout.h"
#include "graph-render.h"
#include "graph-source.h"

#include <glib/gstdio.h>

static void add_item(gs_graph *g, gs_graph_item_kind kind, guint64 id, const char *label,
                     guint64 scope) {
  gs_graph_item item = {kind, id, kind == GS_GRAPH_OP ? 0 : id,
                        g_strdup_printf("n%" G_GUINT64_FORMAT, id), g_strdup(label), scope,
                        -1, -1, 0, 1, 0};
  g_array_append_val(g->items, item);
}

static gs_graph *mlp_like(guint n_items) {
  gs_graph *g = gs_graph_new();
  guint layers = n_items / 5;
  for (guint s = 0; s * 25 < layers; s++) {
    gs_graph_scope scope = {s + 1, 0, g_strdup_printf("block %u", s)};
    g_array_append_val(g->scopes, scope);
  }
  gint prev = -1;
  for (guint k = 0; k < layers; k++) {
    guint64 scope = k / 25 + 1;
    guint base = g->items->len;
    add_item(g, GS_GRAPH_LEAF, base + 1, "layer.weight\n(256, 256)", scope);
    add_item(g, GS_GRAPH_SAVED, base + 2, "saved #12.3\n(64, 256)", scope);
    add_item(g, GS_GRAPH_OP, base + 3, "MatmulBackward", scope);
    add_item(g, GS_GRAPH_SAVED, base + 4, "saved #13.3\n(64, 256)", scope);
    add_item(g, GS_GRAPH_OP, base + 5, "ReluBackward", scope);
    gs_graph_add_edge(g, base, base + 2, GS_GRAPH_EDGE_GRAD);
    gs_graph_add_edge(g, base + 1, base + 2, GS_GRAPH_EDGE_SAVED);
    if (prev >= 0)
      gs_graph_add_edge(g, (guint)prev, base + 2, GS_GRAPH_EDGE_GRAD);
    gs_graph_add_edge(g, base + 2, base + 4, GS_GRAPH_EDGE_GRAD);
    gs_graph_add_edge(g, base + 3, base + 4, GS_GRAPH_EDGE_SAVED);
    prev = (gint)(base + 4);
  }
  return g;
}

static void run(guint n, gboolean clustered) {
  gs_graph *g = mlp_like(n);
  gs_layout_options options = {clustered, NULL};
  double start = bench_now_s();
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_layout) l = gs_layout_compute(g, &options, &error);
  double took = bench_now_s() - start;
  if (!l) {
    fprintf(stderr, "bench-graph-layout: %s\n", error->message);
    exit(1);
  }
  char name[64];
  g_snprintf(name, sizeof name, "layout_%u%s_s", n, clustered ? "_clustered" : "");
  bench_result(name, took, "s");
  /* Drawing the whole graph (the view's fit and the export): what a frame costs at worst. */
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1600, 1000);
  cairo_t *cr = cairo_create(surface);
  gs_graph_viewport vp;
  gs_graph_viewport_fit(l, 1600, 1000, &vp);
  gs_graph_style style = {-1, FALSE, FALSE, NULL};
  start = bench_now_s();
  gs_graph_render(cr, l, &vp, &style);
  cairo_surface_flush(surface);
  took = bench_now_s() - start;
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  g_snprintf(name, sizeof name, "render_%u%s_ms", n, clustered ? "_clustered" : "");
  bench_result(name, took * 1e3, "ms");
}

static double build_ms(gs_graph_source *source, guint64 index, guint *items) {
  double start = bench_now_s();
  g_autoptr(gs_graph) g = gs_graph_source_build(source, index);
  double took = (bench_now_s() - start) * 1e3;
  *items = g->items->len;
  return took;
}

static void run_build(guint64 target, const char *name) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-bench-graph-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  bench_record_training_log(path, target);
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  if (!m) {
    fprintf(stderr, "bench-graph-layout: %s\n", error->message);
    exit(1);
  }
  g_autoptr(GArray) passes = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_BACKWARD_BEGIN)
      g_array_append_val(passes, i);
  printf("# %s: %llu events, %u backward passes\n", name,
         (unsigned long long)gs_trace_model_n_events(m), passes->len);
  g_autoptr(gs_graph_source) source = gs_graph_source_new(m);
  guint items = 0;
  char key[64];
  double first = build_ms(source, g_array_index(passes, guint64, passes->len - 41), &items);
  g_snprintf(key, sizeof key, "graph_build_first_%s_ms", name);
  bench_result(key, first, "ms");
  double forward[40];
  for (guint k = 0; k < 40; k++)
    forward[k] =
        build_ms(source, g_array_index(passes, guint64, passes->len - 40 + k), &items);
  g_snprintf(key, sizeof key, "graph_build_next_pass_%s_ms", name);
  bench_result(key, bench_median(forward, 40), "ms");
  /* "Previous backward pass" at the end of the run, then a jump to the run's start. */
  double previous = build_ms(source, g_array_index(passes, guint64, passes->len - 2), &items);
  g_snprintf(key, sizeof key, "graph_build_previous_pass_%s_ms", name);
  bench_result(key, previous, "ms");
  double back = build_ms(source, g_array_index(passes, guint64, 10), &items);
  g_snprintf(key, sizeof key, "graph_build_jump_to_start_%s_ms", name);
  bench_result(key, back, "ms");
  printf("# %u items in a step's graph\n", items);
  g_unlink(path);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  /* --quick: the 500 and 2,000 sizes only (5,000 flat takes ~15 s). */
  gboolean quick = argc > 1 && !g_strcmp0(argv[1], "--quick");
  static const guint sizes[] = {500, 2000, 5000};
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    if (quick && sizes[i] > 2000)
      break;
    run(sizes[i], FALSE);
    run(sizes[i], TRUE);
  }
  if (quick)
    run_build(1000 * 1000, "1m");
  else
    run_build(10 * 1000 * 1000, "10m");
  return 0;
}
