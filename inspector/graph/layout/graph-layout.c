/* graph-layout.c: gs_graph -> DOT text -> cgraph -> dot -> plain structs (see graph-layout.h).
 *
 * The graph goes to Graphviz as DOT text (graph-dot.c, the same writer `export-dot` uses), so
 * every user-supplied name passes through one escaping function before Graphviz sees it. */
#include "graph-layout.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>

#include "graph-dot.h"

G_DEFINE_QUARK(gs-layout-error-quark, gs_layout_error)

static void node_clear(gpointer p) {
  g_free(((gs_layout_node *)p)->label);
}

static void edge_clear(gpointer p) {
  gs_layout_edge *e = p;
  g_free(e->points);
  g_free(e->label);
}

static void cluster_clear(gpointer p) {
  g_free(((gs_layout_cluster *)p)->label);
}

void gs_layout_free(gs_layout *l) {
  if (!l)
    return;
  gs_graph_free(l->graph);
  g_array_unref(l->nodes);
  g_array_unref(l->edges);
  g_array_unref(l->clusters);
  g_free(l->title);
  g_free(l);
}

/* Graphviz keeps a label's text as written, escapes included (make_simple_label resolves
 * them only while measuring): \n, \l and \r end a line, a backslash quotes the next byte. */
static char *unescape_label(const char *text) {
  GString *s = g_string_new(NULL);
  for (const char *p = text ? text : ""; *p; p++) {
    if (*p != '\\' || !p[1]) {
      g_string_append_c(s, *p);
      continue;
    }
    p++;
    g_string_append_c(s, (*p == 'n' || *p == 'l' || *p == 'r') ? '\n' : *p);
  }
  return g_string_free(s, FALSE);
}

/* Graphviz without its Pango plugin sizes labels from Latin font tables: a Chinese character
 * counts as one narrow letter and the CJK font's taller lines are not seen, so a tour's
 * "梯度 -3.0000" line was cut by its box. Each node's least size is set from its label as the
 * renderer draws it (Monospace at the node's size, 72 dpi: points), with Graphviz's margins
 * (0.11 x 0.055 in), and an ellipse as much larger as Graphviz makes it (sqrt 2); Graphviz
 * keeps the larger of that and its own estimate. */
static void fit_node_sizes(Agraph_t *g) {
  PangoContext *context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  pango_cairo_context_set_resolution(context, 72);
  PangoLayout *layout = pango_layout_new(context);
  for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
    g_autofree char *text = unescape_label(agget(n, "label"));
    const char *size = agget(n, "fontsize");
    PangoFontDescription *font = pango_font_description_from_string("Monospace");
    pango_font_description_set_size(font, (int)((size && *size ? g_ascii_strtod(size, NULL) : 14) *
                                                PANGO_SCALE));
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    pango_layout_set_text(layout, text, -1);
    int w, h;
    pango_layout_get_size(layout, &w, &h);
    const char *shape = agget(n, "shape");
    double grow = shape && (!strcmp(shape, "ellipse") || !strcmp(shape, "oval")) ? G_SQRT2 : 1.0;
    double width = ((double)w / PANGO_SCALE + 2 * 0.11 * 72) * grow / 72;
    double height = ((double)h / PANGO_SCALE + 2 * 0.055 * 72) * grow / 72;
    const char *was_width = agget(n, "width"), *was_height = agget(n, "height");
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (!was_width || !*was_width || g_ascii_strtod(was_width, NULL) < width)
      agsafeset(n, "width", g_ascii_dtostr(buf, sizeof buf, width), "0.75");
    if (!was_height || !*was_height || g_ascii_strtod(was_height, NULL) < height)
      agsafeset(n, "height", g_ascii_dtostr(buf, sizeof buf, height), "0.5");
  }
  g_object_unref(layout);
  g_object_unref(context);
}

/* Graphviz's y grows up from bb.LL; ours grows down from the top. */
typedef struct flip {
  double x0, top;
} flip;

static double fx(const flip *f, double x) { return x - f->x0; }
static double fy(const flip *f, double y) { return f->top - y; }

static void add_clusters(gs_layout *l, Agraph_t *g, const flip *f, guint depth) {
  for (int i = 1; i <= GD_n_cluster(g); i++) {
    Agraph_t *sub = GD_clust(g)[i];
    boxf bb = GD_bb(sub);
    gs_layout_cluster c = {0};
    const char *name = agnameof(sub);
    /* "cluster_<scope id>", as graph-dot.c names them. */
    if (name && g_str_has_prefix(name, "cluster_"))
      c.scope = g_ascii_strtoull(name + 8, NULL, 10);
    c.x0 = fx(f, bb.LL.x);
    c.x1 = fx(f, bb.UR.x);
    c.y0 = fy(f, bb.UR.y);
    c.y1 = fy(f, bb.LL.y);
    if (GD_label(sub)) {
      c.label = unescape_label(GD_label(sub)->text);
      c.lx = fx(f, GD_label(sub)->pos.x);
      c.ly = fy(f, GD_label(sub)->pos.y);
    }
    c.depth = depth;
    g_array_append_val(l->clusters, c);
    add_clusters(l, sub, f, depth + 1);
  }
}

static void read_edge(gs_layout_edge *out, Agedge_t *e, const flip *f) {
  const splines *spl = ED_spl(e);
  if (spl && spl->size > 0) {
    /* One bezier per edge for dot's output; several would only come with concentrate. */
    const bezier *bz = &spl->list[0];
    out->n_points = (guint)bz->size;
    out->points = g_new(double, 2 * bz->size);
    for (int i = 0; i < bz->size; i++) {
      out->points[2 * i] = fx(f, bz->list[i].x);
      out->points[2 * i + 1] = fy(f, bz->list[i].y);
    }
    out->arrow_start = bz->sflag != 0;
    out->arrow_end = bz->eflag != 0;
    out->sx = fx(f, bz->sp.x);
    out->sy = fy(f, bz->sp.y);
    out->ex = fx(f, bz->ep.x);
    out->ey = fy(f, bz->ep.y);
  }
  if (ED_label(e)) {
    out->label = unescape_label(ED_label(e)->text);
    out->lx = fx(f, ED_label(e)->pos.x);
    out->ly = fy(f, ED_label(e)->pos.y);
  }
}

/* The process's Graphviz: its context and the lock every call into it holds. */
static GMutex graphviz_lock;
static GVC_t *graphviz_context;

/* What Graphviz said during one layout (it prints to stderr by default, where a command's
 * user reads "memory exhausted" and then finds a blank picture): collected under the lock and
 * turned into the layout's own error. */
static GString *graphviz_said;

static int collect_graphviz_message(char *message) {
  if (graphviz_said && graphviz_said->len < 1024)
    g_string_append(graphviz_said, message);
  return 0;
}

/* TRUE if Graphviz reported an error since the last reset; sets error with its words. */
static gboolean graphviz_failed(gboolean laying_out, GError **error) {
  if (agerrors() < AGERR)
    return FALSE;
  g_autofree char *said = g_strstrip(g_strdup(graphviz_said->str));
  for (char *p = said; *p; p++)
    if (*p == '\n')
      *p = ' ';
  /* TRANSLATORS: Graphviz's own message (English) follows. */
  const char *what = *said ? said : _("it reported an error without saying more");
  if (laying_out)
    /* TRANSLATORS: %s is Graphviz's own message (English). */
    g_set_error(error, GS_LAYOUT_ERROR, 3, _("Graphviz could not lay the graph out: %s"), what);
  else
    /* TRANSLATORS: %s is Graphviz's own message (English). */
    g_set_error(error, GS_LAYOUT_ERROR, 3, _("Graphviz could not read the graph: %s"), what);
  return TRUE;
}

static gs_layout *compute_locked(GVC_t *gvc, gs_graph *graph, const gs_layout_options *options,
                                 GError **error);

gs_layout *gs_layout_compute(gs_graph *graph, const gs_layout_options *options, GError **error) {
  g_mutex_lock(&graphviz_lock);
  if (!graphviz_context)
    graphviz_context = gvContext();
  graphviz_said = g_string_new(NULL);
  agusererrf previous = agseterrf(collect_graphviz_message);
  agseterr(AGWARN); /* with a callback set, nothing goes to stderr: it has it all */
  agreseterrors();
  gs_layout *l = compute_locked(graphviz_context, graph, options, error);
  agseterrf(previous);
  agseterr(AGWARN);
  g_string_free(graphviz_said, TRUE);
  graphviz_said = NULL;
  g_mutex_unlock(&graphviz_lock);
  return l;
}

static gs_layout *compute_locked(GVC_t *gvc, gs_graph *graph, const gs_layout_options *options,
                                 GError **error) {
  if (graph->items->len > GS_LAYOUT_MAX_NODES || graph->edges->len > GS_LAYOUT_MAX_EDGES) {
    g_set_error(error, GS_LAYOUT_ERROR, GS_LAYOUT_ERROR_TOO_LARGE,
                /* TRANSLATORS: a graph too big for Graphviz to lay out in reasonable time. */
                _("the graph has %u nodes and %u edges, more than can be laid out in reasonable "
                  "time (at most %u nodes and %u edges); pick an earlier moment or use "
                  "gradscope export-dot"),
                graph->items->len, graph->edges->len, GS_LAYOUT_MAX_NODES, GS_LAYOUT_MAX_EDGES);
    gs_graph_free(graph);
    return NULL;
  }
  g_autoptr(GString) dot = g_string_new(NULL);
  gs_graph_dot_options dot_options = {options->title, options->clusters, TRUE};
  gs_graph_write_dot(dot, graph, &dot_options);

  gs_layout *l = g_new0(gs_layout, 1);
  l->graph = graph;
  l->nodes = g_array_new(FALSE, TRUE, sizeof(gs_layout_node));
  g_array_set_clear_func(l->nodes, node_clear);
  l->edges = g_array_new(FALSE, TRUE, sizeof(gs_layout_edge));
  g_array_set_clear_func(l->edges, edge_clear);
  l->clusters = g_array_new(FALSE, TRUE, sizeof(gs_layout_cluster));
  g_array_set_clear_func(l->clusters, cluster_clear);

  Agraph_t *g = agmemread(dot->str);
  if (g && graphviz_failed(FALSE, error)) {
    agclose(g);
    gs_layout_free(l);
    return NULL;
  }
  if (!g) {
    const char *why = aglasterr();
    g_set_error(error, GS_LAYOUT_ERROR, 1, "Graphviz could not read the graph: %s",
                why ? why : "syntax error");
    gs_layout_free(l);
    return NULL;
  }
  gint64 start = g_get_monotonic_time();
  fit_node_sizes(g);
  if (gvLayout(gvc, g, "dot") != 0) {
    g_set_error(error, GS_LAYOUT_ERROR, 2,
                "Graphviz could not lay the graph out with dot (is its plugin config missing? "
                "run `dot -c` as root)");
    agclose(g);
    gs_layout_free(l);
    return NULL;
  }
  l->seconds = (g_get_monotonic_time() - start) / 1e6;
  if (graphviz_failed(TRUE, error)) {
    gvFreeLayout(gvc, g);
    agclose(g);
    gs_layout_free(l);
    return NULL;
  }

  boxf bb = GD_bb(g);
  flip f = {bb.LL.x, bb.UR.y};
  l->width = bb.UR.x - bb.LL.x;
  l->height = bb.UR.y - bb.LL.y;
  if (GD_label(g)) {
    l->title = unescape_label(GD_label(g)->text);
    l->title_x = fx(&f, GD_label(g)->pos.x);
    l->title_y = fy(&f, GD_label(g)->pos.y);
  }

  g_array_set_size(l->nodes, graph->items->len);
  for (guint i = 0; i < graph->items->len; i++) {
    gs_layout_node *out = &g_array_index(l->nodes, gs_layout_node, i);
    out->item = i;
    char id[24];
    g_snprintf(id, sizeof id, "i%u", i); /* graph-dot.c's node ids */
    Agnode_t *n = agnode(g, id, FALSE);
    if (!n)
      continue; /* cannot happen: graph-dot.c writes every item */
    out->x = fx(&f, ND_coord(n).x);
    out->y = fy(&f, ND_coord(n).y);
    out->width = ND_width(n) * 72.0;
    out->height = ND_height(n) * 72.0;
    out->label = unescape_label(ND_label(n) ? ND_label(n)->text : "");
  }

  g_array_set_size(l->edges, graph->edges->len);
  for (guint i = 0; i < graph->edges->len; i++)
    g_array_index(l->edges, gs_layout_edge, i).edge = i;
  for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
    for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
      const char *id = agget(e, "id");
      guint64 index;
      if (!id || id[0] != 'e' ||
          !g_ascii_string_to_unsigned(id + 1, 10, 0, graph->edges->len - 1, &index, NULL))
        continue;
      read_edge(&g_array_index(l->edges, gs_layout_edge, index), e, &f);
    }

  add_clusters(l, g, &f, 0);
  gvFreeLayout(gvc, g);
  agclose(g);
  return l;
}

gint gs_layout_node_at(const gs_layout *l, double x, double y) {
  /* Last drawn is on top: search backwards. */
  for (guint i = l->nodes->len; i-- > 0;) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    if (x >= n->x - n->width / 2 && x <= n->x + n->width / 2 && y >= n->y - n->height / 2 &&
        y <= n->y + n->height / 2)
      return (gint)i;
  }
  return -1;
}
