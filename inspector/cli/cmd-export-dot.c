/* cmd-export-dot.c: `gradscope export-dot FILE [--at EVENT]`: the autograd graph alive at an
 * event, as Graphviz DOT text, drawn in torchviz's colours so it reads like what people know:
 * ops gray, leaves light blue with their names, saved tensors orange on dashed undirected
 * edges, outputs green.
 *
 * Without --at, the moment is the last node_create event of the log: the last time a graph
 * grew, so the last step's graph is complete there. (The end of a log usually has no graph at
 * all: every node is released when its outputs are disposed; and the last moment any node
 * existed is midway through that teardown, one node left.) */
#include <stdio.h>
#include <stdlib.h>

#include "../model/escape.h"
#include "../model/graph.h"
#include "cli.h"

typedef struct replay_until {
  gs_replay *replay;
  guint64 at;
} replay_until;

/* Events are applied up to and including seq `at`. Later ones are skipped rather than ending
 * the read, since threads' chunks interleave and a later chunk may hold earlier events. */
static gboolean replay_event(const gs_trace_event *e, const gs_trace_reader *reader,
                             gpointer user_data) {
  replay_until *u = user_data;
  if (e->seq <= u->at)
    gs_replay_apply(u->replay, e, reader);
  return TRUE;
}

typedef struct last_graph {
  gboolean found;
  guint64 seq;
} last_graph;

static gboolean find_last_node_create(const gs_trace_event *e, const gs_trace_reader *reader,
                                      gpointer user_data) {
  (void)reader;
  last_graph *last = user_data;
  if (e->kind == GS_TRACE_NODE_CREATE && (!last->found || e->seq > last->seq)) {
    last->found = TRUE;
    last->seq = e->seq;
  }
  return TRUE;
}

static void write_dot(FILE *out, const gs_graph *g, guint64 at) {
  GString *s = g_string_new(NULL);
  g_string_append_printf(s,
                         "// The autograd graph alive at event %" G_GUINT64_FORMAT
                         ", written by gradscope export-dot.\n"
                         "digraph autograd {\n"
                         "  graph [fontname=\"monospace\", label=\"graph at event %" G_GUINT64_FORMAT
                         "\"];\n"
                         "  node [shape=box, style=filled, fillcolor=lightgray, "
                         "fontname=\"monospace\", fontsize=10, height=0.2];\n"
                         "  edge [fontname=\"monospace\"];\n",
                         at, at);
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    g_string_append(s, "  ");
    gs_escape_dot(s, item->key);
    g_string_append(s, " [label=");
    gs_escape_dot(s, item->label);
    switch (item->kind) {
    case GS_GRAPH_OP: break;
    case GS_GRAPH_LEAF: g_string_append(s, ", fillcolor=lightblue"); break;
    case GS_GRAPH_SAVED: g_string_append(s, ", shape=ellipse, fillcolor=orange"); break;
    /* torchviz's green for outputs. */
    case GS_GRAPH_OUTPUT: g_string_append(s, ", fillcolor=darkolivegreen1"); break;
    }
    g_string_append(s, "];\n");
  }
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *edge = &g_array_index(g->edges, gs_graph_edge, i);
    g_string_append(s, "  ");
    gs_escape_dot(s, g_array_index(g->items, gs_graph_item, edge->from).key);
    g_string_append(s, " -> ");
    gs_escape_dot(s, g_array_index(g->items, gs_graph_item, edge->to).key);
    g_string_append(s, edge->undirected ? " [style=dashed, dir=none];\n" : ";\n");
  }
  g_string_append(s, "}\n");
  fwrite(s->str, 1, s->len, out);
  g_string_free(s, TRUE);
}

static gboolean parse_event_number(const char *text, guint64 *out) {
  guint64 value;
  if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &value, NULL))
    return FALSE;
  *out = value;
  return TRUE;
}

int cli_export_dot(int argc, char **argv) {
  char *at_text = NULL;
  const GOptionEntry entries[] = {
      {"at", 'a', 0, G_OPTION_ARG_STRING, &at_text,
       "The event (sequence number) at which to show the graph; default: the last node_create",
       "EVENT"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = g_option_context_new("FILE");
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(
      context, "Writes the autograd graph alive at an event as Graphviz DOT on standard output:\n"
               "ops gray, leaves (AccumulateGrad) light blue with their names, saved tensors\n"
               "orange (dashed undirected edges to their node), outputs green. Nodes released\n"
               "before the event are not drawn. Without --at, the event is the log's last\n"
               "node_create: the moment the last graph was complete.\n\n"
               "Example: gradscope export-dot run.gstrace | dot -Tsvg > graph.svg");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *at_owned = at_text;
  if (!path)
    return 1;
  guint64 at = 0;
  if (at_text && !parse_event_number(at_text, &at)) {
    cli_error("export-dot: --at wants an event number, got '%s'", at_text);
    return 1;
  }
  gs_trace_read_result result;
  if (!at_text) {
    last_graph last = {FALSE, 0};
    if (!cli_read_log(path, find_last_node_create, &last, &result))
      return 1;
    gs_trace_read_result_clear(&result);
    if (!last.found)
      fprintf(stderr, "gradscope: note: the log has no graph nodes; the graph is empty\n");
    at = last.found ? last.seq : G_MAXUINT64;
  }
  g_autoptr(gs_replay) replay = gs_replay_new();
  replay_until until = {replay, at};
  if (!cli_read_log(path, replay_event, &until, &result))
    return 1;
  g_autoptr(gs_graph) graph = gs_graph_build(replay);
  write_dot(stdout, graph, at == G_MAXUINT64 ? replay->last_seq : at);
  int status = cli_report_damage(&result);
  gs_trace_read_result_clear(&result);
  return status;
}
