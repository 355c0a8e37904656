/* cmd-export-graph.c: `gradscope export-graph FILE [--at EVENT] -o graph.{png,svg}`: the
 * autograd graph at an event laid out by Graphviz dot and drawn by the same renderer as the
 * inspector's graph view (inspector/graph/layout/graph-render.c), with no display needed. */
#include <stdio.h>

#include "graph-layout.h"
#include "graph-render.h"
#include "graph-collapse.h"
#include "cli.h"

/* The layout's own size (one point a pixel) when no size is given, within sane bounds. */
static void natural_size(const gs_layout *l, int *width, int *height) {
  double w = l->width + 24, h = l->height + 24;
  double shrink = MAX(1.0, MAX(w, h) / 8000.0);
  *width = MAX(200, (int)(w / shrink));
  *height = MAX(120, (int)(h / shrink));
}

int cli_export_graph(int argc, char **argv) {
  char *backward_text = NULL, *at_text = NULL, *output = NULL;
  int width = 0, height = 0;
  gboolean flat = FALSE, expand_all = FALSE;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The image to write: NAME.png or NAME.svg",
       "FILE"},
      {"width", 'W', 0, G_OPTION_ARG_INT, &width, "Image width (pixels for PNG, points for SVG)",
       "W"},
      {"height", 'H', 0, G_OPTION_ARG_INT, &height, "Image height", "H"},
      {"flat", 0, 0, G_OPTION_ARG_NONE, &flat, "No cluster per scope", NULL},
      {"expand-all", 0, 0, G_OPTION_ARG_NONE, &expand_all,
       "Never collapse repeated scopes into \xc3\x97N groups (slow beyond ~2,000 nodes)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = g_option_context_new("FILE");
  cli_add_moment_options(context, &at_text, &backward_text);
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(
      context, "Draws the autograd graph alive at an event as a PNG or SVG image, as the\n"
               "inspector's graph view shows it: ops gray, leaves light blue, saved tensors\n"
               "orange, outputs green, views dotted, copy-on-write clones dashed, aliases that\n"
               "wrote into a drawn tensor's storage in place on a dark orange edge, failed\n"
               "version checks red, a box per scope. Ops are named as errors name them\n"
               "(MulBackward #4). Beyond 1,500 nodes repeated scopes are collapsed.\n"
               "Without --width/--height the image has the layout's natural size.\n\n"
               "Example: gradscope export-graph run.gstrace --at 4200 -o step.png");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *backward_owned = backward_text;
  g_autofree char *at_owned = at_text, *output_owned = output;
  if (!path)
    return 1;
  if (!output) {
    cli_error("export-graph: no output given: add -o graph.png or -o graph.svg");
    return 1;
  }
  g_autofree char *lower = g_ascii_strdown(output, -1);
  if (!g_str_has_suffix(lower, ".png") && !g_str_has_suffix(lower, ".svg")) {
    cli_error("export-graph: cannot tell the format of '%s': the name should end in .png or "
              ".svg",
              output);
    return 1;
  }
  if (width < 0 || height < 0 || width > 32767 || height > 32767) {
    cli_error("export-graph: --width and --height go from 1 to 32767, got %d x %d", width,
              height);
    return 1;
  }
  guint64 at = 0;
  g_autofree char *warning = NULL;
  g_autoptr(gs_graph) full =
      cli_graph_at("export-graph", TRUE, path, at_text, backward_text, &at, &warning);
  if (!full)
    return 1;
  gs_graph *graph = gs_graph_collapse(full, expand_all ? G_MAXUINT : GS_GRAPH_COLLAPSE_LIMIT, NULL);
  gs_graph_split_hubs(graph, GS_GRAPH_HUB_LIMIT);
  g_autofree char *title = g_strdup_printf("graph at event %" G_GUINT64_FORMAT, at);
  gs_layout_options options = {!flat, title};
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_layout) layout = gs_layout_compute(graph, &options, &error);
  if (!layout) {
    cli_error("export-graph: %s", error->message);
    return 1;
  }
  int natural_w, natural_h;
  natural_size(layout, &natural_w, &natural_h);
  /* One side given: keep the layout's proportions. */
  if (width && !height)
    height = MAX(1, (int)(width * (double)natural_h / natural_w));
  else if (height && !width)
    width = MAX(1, (int)(height * (double)natural_w / natural_h));
  else if (!width && !height) {
    width = natural_w;
    height = natural_h;
  }
  if (!gs_graph_render_to_file(layout, output, width, height, &error)) {
    cli_error("export-graph: %s", error->message);
    return 1;
  }
  return cli_warn_damaged(warning);
}
