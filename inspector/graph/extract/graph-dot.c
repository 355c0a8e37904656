/* graph-dot.c: writing a gs_graph as DOT (see graph-dot.h). */
#include "graph-dot.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "escape.h"

char *gs_graph_item_display_label(const gs_graph_item *item) {
  GString *s = g_string_new(item->label);
  if (item->kind == GS_GRAPH_SAVED && item->saved_version >= 0) {
    if (item->version != item->saved_version)
      /* TRANSLATORS: a saved tensor's storage version when it was saved, and now. */
      g_string_append_printf(s, _("\nsaved v%" PRId64 ", now v%" PRId64),
                             (int64_t)item->saved_version, (int64_t)item->version);
    else
      g_string_append_printf(s, "\nv%" G_GINT64_FORMAT, item->version);
  } else if (item->version > 0) {
    g_string_append_printf(s, "\nv%" G_GINT64_FORMAT, item->version);
  }
  return g_string_free(s, FALSE);
}

static const char *item_style(const gs_graph_item *item) {
  switch (item->kind) {
  case GS_GRAPH_OP: return "";
  case GS_GRAPH_LEAF: return ", fillcolor=lightblue";
  case GS_GRAPH_SAVED: return ", shape=ellipse, fillcolor=orange";
  /* torchviz's green for outputs. */
  case GS_GRAPH_OUTPUT: return ", fillcolor=darkolivegreen1";
  case GS_GRAPH_TENSOR: return ", fillcolor=white";
  case GS_GRAPH_GROUP: return ", shape=box3d, fillcolor=lightyellow";
  }
  return "";
}

static const char *edge_style(const gs_graph_edge *edge) {
  switch (edge->kind) {
  case GS_GRAPH_EDGE_GRAD: return "";
  case GS_GRAPH_EDGE_SAVED: return "style=dashed, dir=none";
  case GS_GRAPH_EDGE_VIEW: return "style=dotted, color=gray40";
  case GS_GRAPH_EDGE_COW: return "style=dashed, color=gray40";
  case GS_GRAPH_EDGE_CLONE: return "color=gray40";
  case GS_GRAPH_EDGE_DETACH: return "style=dotted, color=gray40, arrowhead=odot";
  /* The write that a saved tensor's version check will refuse: it stands out. */
  case GS_GRAPH_EDGE_WROTE: return "color=darkorange3, fontcolor=darkorange3, penwidth=1.5";
  }
  return "";
}

/* The words of a storage relation edge. */
static const char *edge_relation(const gs_graph_edge *edge) {
  switch (edge->kind) {
  case GS_GRAPH_EDGE_GRAD:
  case GS_GRAPH_EDGE_SAVED:
  case GS_GRAPH_EDGE_WROTE: return NULL;
  /* TRANSLATORS: graph edge labels, from the tensor a storage came from to its view, its
   * clone that still shares the bytes copy-on-write, its materialised clone, its detach. */
  case GS_GRAPH_EDGE_VIEW: return _("view");
  case GS_GRAPH_EDGE_COW: return _("clone (shared)");
  case GS_GRAPH_EDGE_CLONE: return _("clone");
  case GS_GRAPH_EDGE_DETACH: return _("detached from");
  }
  return NULL;
}

/* What a storage edge says; gradient and saved-tensor edges say nothing. Newly allocated. */
static char *edge_label(const gs_graph_edge *edge) {
  switch (edge->kind) {
  case GS_GRAPH_EDGE_GRAD:
  case GS_GRAPH_EDGE_SAVED: return NULL;
  /* TRANSLATORS: graph edge label, from a tensor (a detached one, a view) to a tensor on the
   * same storage that it wrote in place, and the storage's version after its write. */
  case GS_GRAPH_EDGE_WROTE:
    return g_strdup_printf(_("shares storage,\nwrote v%" PRIu64), (uint64_t)edge->version);
  default: break;
  }
  return g_strdup(edge_relation(edge));
}

/* Node ids are "i<item index>": keys may hold scope names from user code, and Graphviz keeps a
 * quoted id's backslashes, so an escaped key would not find its node again. */
static void write_node(GString *s, const gs_graph *g, guint index, const char *indent) {
  const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, index);
  g_string_append_printf(s, "%s\"i%u\"", indent, index);
  g_autofree char *label = gs_graph_item_display_label(item);
  g_string_append(s, " [label=");
  gs_escape_dot(s, label);
  g_string_append(s, item_style(item));
  if (item->flags & GS_GRAPH_VERSION_ERROR)
    g_string_append(s, ", color=red, penwidth=3");
  g_string_append(s, "];\n");
}

/* Writes scope `id`'s cluster: its own items, then its inner scopes' clusters. */
static void write_cluster(GString *s, const gs_graph *g, guint64 id, GHashTable *children,
                          GHashTable *members, GHashTable *index, guint depth) {
  g_autofree char *indent = g_strnfill(2 * depth + 2, ' ');
  if (id) {
    const gs_graph_scope *scope = g_hash_table_lookup(index, &id);
    g_string_append_printf(s, "%ssubgraph \"cluster_%" G_GUINT64_FORMAT "\" {\n%s  label=", indent,
                           id, indent);
    gs_escape_dot(s, scope ? scope->name : "");
    g_string_append_printf(s, "; style=rounded; color=gray60;\n");
  }
  GArray *own = g_hash_table_lookup(members, &id);
  g_autofree char *inner = g_strnfill(2 * depth + (id ? 4 : 2), ' ');
  for (guint i = 0; own && i < own->len; i++)
    write_node(s, g, g_array_index(own, guint, i), inner);
  GArray *kids = g_hash_table_lookup(children, &id);
  /* The builder keeps scopes a forest GS_GRAPH_MAX_SCOPE_DEPTH deep; a graph made otherwise
   * stops nesting there rather than recurse without end. */
  for (guint i = 0; kids && depth <= GS_GRAPH_MAX_SCOPE_DEPTH && i < kids->len; i++)
    write_cluster(s, g, g_array_index(kids, guint64, i), children, members, index, depth + 1);
  if (id)
    g_string_append_printf(s, "%s}\n", indent);
}

static GArray *list_for(GHashTable *table, guint64 key, gsize size) {
  GArray *list = g_hash_table_lookup(table, &key);
  if (!list) {
    list = g_array_new(FALSE, FALSE, size);
    g_hash_table_insert(table, g_memdup2(&key, sizeof key), list);
  }
  return list;
}

gboolean gs_graph_dot_clusters(const gs_graph *g, const gs_graph_dot_options *options) {
  return options->clusters && g->scopes->len <= GS_GRAPH_DOT_MAX_CLUSTERS;
}

void gs_graph_write_dot(GString *s, const gs_graph *g, const gs_graph_dot_options *options) {
  g_string_append(s, "digraph autograd {\n  graph [fontname=\"monospace\"");
  if (options->title) {
    g_string_append(s, ", label=");
    gs_escape_dot(s, options->title);
  }
  g_string_append(s,
                  "];\n"
                  "  node [shape=box, style=filled, fillcolor=lightgray, "
                  "fontname=\"monospace\", fontsize=10, height=0.2];\n"
                  "  edge [fontname=\"monospace\", fontsize=8];\n");
  if (gs_graph_dot_clusters(g, options)) {
    /* Items by scope, scopes by outer scope; a scope the graph does not know is the root. */
    g_autoptr(GHashTable) members =
        g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, (GDestroyNotify)g_array_unref);
    g_autoptr(GHashTable) children =
        g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, (GDestroyNotify)g_array_unref);
    g_autoptr(GHashTable) index = gs_graph_scope_index(g);
    for (guint i = 0; i < g->items->len; i++) {
      guint64 scope = g_array_index(g->items, gs_graph_item, i).scope;
      if (!g_hash_table_contains(index, &scope))
        scope = 0;
      g_array_append_val(list_for(members, scope, sizeof(guint)), i);
    }
    for (guint i = 0; i < g->scopes->len; i++) {
      const gs_graph_scope *sc = &g_array_index(g->scopes, gs_graph_scope, i);
      guint64 outer = g_hash_table_contains(index, &sc->outer) && sc->outer != sc->id ? sc->outer : 0;
      g_array_append_val(list_for(children, outer, sizeof(guint64)), sc->id);
    }
    write_cluster(s, g, 0, children, members, index, 0);
  } else {
    for (guint i = 0; i < g->items->len; i++)
      write_node(s, g, i, "  ");
  }
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *edge = &g_array_index(g->edges, gs_graph_edge, i);
    g_string_append_printf(s, "  \"i%u\" -> \"i%u\"", edge->from, edge->to);
    const char *style = edge_style(edge);
    g_autofree char *label = edge_label(edge);
    if (*style || label || options->ids) {
      const char *sep = "";
      g_string_append(s, " [");
      if (options->ids)
        g_string_append_printf(s, "id=\"e%u\"", i), sep = ", ";
      if (*style)
        g_string_append_printf(s, "%s%s", sep, style), sep = ", ";
      if (label) {
        g_string_append_printf(s, "%slabel=", sep);
        gs_escape_dot(s, label);
      }
      g_string_append(s, "]");
    }
    g_string_append(s, ";\n");
  }
  g_string_append(s, "}\n");
}
