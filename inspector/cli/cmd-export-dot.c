/* cmd-export-dot.c: `gradscope export-dot FILE [--at EVENT]`: the autograd graph alive at an
 * event, as Graphviz DOT text, drawn in torchviz's colours so it reads like what people know:
 * ops gray, leaves light blue with their names, saved tensors orange on dashed undirected
 * edges, outputs green.
 * Views, clones and detaches of drawn tensors are drawn too, and the aliases that wrote into
 * their storage in place, with versions and failed version checks in red; a cluster per scope. The moment is chosen as in graph-at.c. */
#include <stdio.h>

#include "graph-dot.h"
#include "cli.h"

static void write_dot(FILE *out, const gs_graph *g, guint64 at) {
  g_autoptr(GString) s = g_string_new(NULL);
  g_string_append_printf(s,
                         "// The autograd graph alive at event %" G_GUINT64_FORMAT
                         ", written by gradscope export-dot.\n",
                         at);
  g_autofree char *title = g_strdup_printf("graph at event %" G_GUINT64_FORMAT, at);
  gs_graph_dot_options options = {title, TRUE, FALSE};
  if (!gs_graph_dot_clusters(g, &options))
    fprintf(stderr,
            "gradscope: note: the graph is in %u scopes, more than the %u boxes Graphviz can "
            "read in reasonable time: it is drawn without them\n",
            g->scopes->len, GS_GRAPH_DOT_MAX_CLUSTERS);
  gs_graph_write_dot(s, g, &options);
  fwrite(s->str, 1, s->len, out);
}

int cli_export_dot(int argc, char **argv) {
  char *backward_text = NULL, *at_text = NULL;
  g_autoptr(GOptionContext) context = g_option_context_new("FILE");
  cli_add_moment_options(context, &at_text, &backward_text);
  g_option_context_set_summary(
      context, "Writes the autograd graph alive at an event as Graphviz DOT on standard output:\n"
               "ops gray, leaves (AccumulateGrad) light blue with their names, saved tensors\n"
               "orange (dashed undirected edges to their node), outputs green. Nodes released\n"
               "before the event are not drawn; ops are named as errors name them\n"
               "(MulBackward #4). Views, clones and detaches of drawn tensors, the aliases\n"
               "that wrote into their storage in place (\"shares storage, wrote v1\"),\n"
               "versions and failed version checks (red) are shown, a cluster per scope.\n"
               "Without --at or --backward, the event is the log's last node_create: the\n"
               "moment the last graph was complete.\n\n"
               "Example: gradscope export-dot run.gstrace | dot -Tsvg > graph.svg");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *backward_owned = backward_text;
  g_autofree char *at_owned = at_text;
  if (!path)
    return 1;
  guint64 at = 0;
  g_autofree char *warning = NULL;
  g_autoptr(gs_graph) graph =
      cli_graph_at("export-dot", FALSE, path, at_text, backward_text, &at, &warning);
  if (!graph)
    return 1;
  write_dot(stdout, graph, at);
  return cli_warn_damaged(warning);
}
