/* cmd-export-timeline.c: `gradscope export-timeline FILE -o timeline.png`: the memory
 * timeline as a PNG image, drawn with no display by the same renderer as the inspector's
 * timeline view (inspector/timeline/): bytes alive over the run stacked by scope or by
 * category, the peak marked, user marks on the time axis, outermost scopes and backward
 * passes shaded. */
#include <stdio.h>
#include <string.h>

#include "timeline-draw.h"
#include "cli.h"

#define MIN_WIDTH 200
#define MIN_HEIGHT 120
#define MAX_SIDE 16384

static gboolean parse_by(const char *text, gboolean *by_scope) {
  if (!text || !strcmp(text, "scope"))
    *by_scope = TRUE;
  else if (!strcmp(text, "category"))
    *by_scope = FALSE;
  else
    return FALSE;
  return TRUE;
}

/* Event numbers count from 1, as the image's axis and the inspector's scrubber do. */
static gboolean parse_event(const char *option, const char *text, guint64 *out) {
  if (!text)
    return TRUE;
  if (!g_ascii_string_to_unsigned(text, 10, 1, G_MAXUINT64, out, NULL)) {
    cli_error("export-timeline: %s wants an event number (1 is the first event), got '%s'",
              option, text);
    return FALSE;
  }
  return TRUE;
}

int cli_export_timeline(int argc, char **argv) {
  char *output = NULL, *by = NULL, *first_text = NULL, *last_text = NULL;
  int width = 1200, height = 400;
  gboolean dark = FALSE;
  const GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The PNG file to write (required)",
       "FILE.png"},
      {"by", 'b', 0, G_OPTION_ARG_STRING, &by,
       "Stack bytes by 'scope' (default: each scope name, plus bytes outside any scope) or by "
       "'category' (parameters, gradients, optimizer state, data, batch data, saved for "
       "backward, held by the program, scope temporaries, other)",
       "scope|category"},
      {"width", 'W', 0, G_OPTION_ARG_INT, &width, "Image width in pixels (default 1200)", "W"},
      {"height", 'H', 0, G_OPTION_ARG_INT, &height, "Image height in pixels (default 400)",
       "H"},
      {"first", 0, 0, G_OPTION_ARG_STRING, &first_text,
       "First event shown, numbered from 1 as on the image's axis (default: 1)", "N"},
      {"last", 0, 0, G_OPTION_ARG_STRING, &last_text,
       "Last event shown (default: the log's last)", "N"},
      {"dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Dark background", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "FILE", entries,
      "Draws the memory timeline of a log as a PNG image: bytes alive after each\n"
      "event, stacked by scope or by category, with the peak marked, user marks\n"
      "(epochs, steps) on the time axis and outermost scopes and backward passes\n"
      "shaded. Events are numbered from 1 in the log's order, as on the image's axis.\n\n"
      "Example: gradscope export-timeline run.gstrace -o timeline.png --by category");
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *output_owned = output, *by_owned = by, *first_owned = first_text,
                  *last_owned = last_text;
  if (!path)
    return 1;
  if (!output) {
    cli_error("export-timeline: no output file given: add -o timeline.png");
    return 1;
  }
  if (!g_str_has_suffix(output, ".png") && !g_str_has_suffix(output, ".PNG")) {
    cli_error("export-timeline: the output is written as PNG and its name should end in "
              ".png, got '%s'", output);
    return 1;
  }
  gboolean by_scope;
  if (!parse_by(by, &by_scope)) {
    cli_error("export-timeline: --by wants 'scope' or 'category', got '%s'", by);
    return 1;
  }
  if (width < MIN_WIDTH || width > MAX_SIDE || height < MIN_HEIGHT || height > MAX_SIDE) {
    cli_error("export-timeline: the image must be %d..%d pixels wide and %d..%d high, got "
              "%d x %d", MIN_WIDTH, MAX_SIDE, MIN_HEIGHT, MAX_SIDE, width, height);
    return 1;
  }
  guint64 first = 1, last = G_MAXUINT64;
  if (!parse_event("--first", first_text, &first) || !parse_event("--last", last_text, &last))
    return 1;
  if (first > last) {
    cli_error("export-timeline: --first (%" G_GUINT64_FORMAT ") is after --last (%"
              G_GUINT64_FORMAT ")", first, last);
    return 1;
  }

  g_autoptr(gs_trace_model) model = cli_load_model("export-timeline", path);
  if (!model)
    return 1;
  guint64 n = gs_trace_model_n_events(model);
  if (n == 0) {
    cli_error("export-timeline: %s holds no events (only a header and strings): nothing to draw",
              path);
    return 1;
  }
  if (first > n) {
    cli_error("export-timeline: --first is %" G_GUINT64_FORMAT " but the log has only %"
              G_GUINT64_FORMAT " events (1..%" G_GUINT64_FORMAT ")", first, n, n);
    return 1;
  }
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gs_timeline_index_update(index, model);
  gs_timeline_request request = {.first = first - 1, .last = MIN(last, n) - 1, .width = width,
                                 .height = height, .by_scope = by_scope};
  g_autoptr(GError) error = NULL;
  if (!gs_timeline_export_png(model, index, &request, dark, output, &error)) {
    cli_error("export-timeline: %s", error->message);
    return 1;
  }
  const char *problem = gs_trace_model_problem(model);
  if (problem) {
    /* A whole sentence that already says how many events are drawn. */
    fprintf(stderr, "gradscope: warning: %s\n", problem);
    return CLI_EXIT_DAMAGED;
  }
  return 0;
}
