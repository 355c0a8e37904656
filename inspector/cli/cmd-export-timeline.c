/* cmd-export-timeline.c: `gradscope export-timeline FILE -o timeline.png`: the memory
 * timeline as a PNG image, drawn with no display by the same renderer as the inspector's
 * timeline view (inspector/timeline/): bytes alive over the run stacked by scope or by
 * category, the peak marked, user marks on the time axis, outermost scopes and backward
 * passes shaded. `export-timeline A B ... -o lanes.png`, the logs of every rank of one
 * distributed run, draws the inspector's stacked rank lanes (rank-lanes.c) instead. */
#include <glib/gi18n.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rank-lanes.h"
#include "timeline-draw.h"

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

/* The image's height when not given: one log's timeline, or room for each rank's lane. */
static int default_height(int n_logs) { return n_logs == 1 ? 400 : MIN(120 + 200 * n_logs, 4000); }

/* Loads each rank's log whole; NULL after printing why. */
static gs_rank_run *load_ranks(GArray *logs) {
  g_autofree gs_trace_model **models = g_new0(gs_trace_model *, logs->len);
  for (guint i = 0; i < logs->len; i++) {
    models[i] = cli_load_model("export-timeline", g_array_index(logs, cli_rank_log, i).path);
    if (!models[i]) {
      for (guint j = 0; j < i; j++)
        gs_trace_model_free(models[j]);
      return NULL;
    }
  }
  return gs_rank_run_new(models, (const cli_rank_log *)logs->data, logs->len);
}

/* Several logs: every rank of one run, one lane per rank over the whole run's shared time
 * axis, as the inspector's Memory page shows a run opened with all its ranks. */
static int export_ranks(char **paths, int n, const char *output, int width, int height,
                        gboolean dark) {
  g_autoptr(GArray) logs = cli_rank_logs_read("export-timeline", paths, n);
  if (!logs || !cli_rank_logs_one_run("export-timeline", logs))
    return 1;
  g_autoptr(GError) error = NULL;
  if (!gs_rank_logs_every_rank(logs, &error)) {
    cli_error("export-timeline: %s", error->message);
    return 1;
  }
  g_autoptr(gs_rank_run) run = load_ranks(logs);
  if (!run)
    return 1;
  if (gs_rank_run_duration(run) == 0) {
    cli_error(_("export-timeline: the logs of run %016" PRIx64
                " hold no events over time: nothing to draw"),
              gs_rank_run_id(run));
    return 1;
  }
  gs_rank_lanes_view view = {.t0 = gs_rank_run_first_time(run),
                             .t1 = gs_rank_run_duration(run),
                             .width = width,
                             .height = height,
                             .dark = dark,
                             .hover_x = -1};
  if (!gs_rank_lanes_export_png(run, &view, output, &error)) {
    cli_error("export-timeline: %s", error->message);
    return 1;
  }
  int status = 0;
  for (guint lane = 0; lane < gs_rank_run_n_lanes(run); lane++) {
    const char *problem = gs_trace_model_problem(gs_rank_run_model(run, lane));
    if (problem) {
      fprintf(stderr, "gradscope: warning: %s: %s\n", gs_rank_run_path(run, lane), problem);
      status = CLI_EXIT_DAMAGED;
    }
  }
  return status;
}

int cli_export_timeline(int argc, char **argv) {
  char *output = NULL, *by = NULL, *first_text = NULL, *last_text = NULL;
  int width = 1200, height = G_MININT; /* G_MININT: not given */
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
      {"height", 'H', 0, G_OPTION_ARG_INT, &height,
       "Image height in pixels (default 400; for several ranks' logs, 120 + 200 per rank)", "H"},
      {"first", 0, 0, G_OPTION_ARG_STRING, &first_text,
       "First event shown, numbered from 1 as on the image's axis (default: 1)", "N"},
      {"last", 0, 0, G_OPTION_ARG_STRING, &last_text, "Last event shown (default: the log's last)",
       "N"},
      {"dark", 0, 0, G_OPTION_ARG_NONE, &dark, "Dark background", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "FILE [FILE...]", entries,
      "Draws the memory timeline of a log as a PNG image: bytes alive after each\n"
      "event, stacked by scope or by category, with the peak marked, user marks\n"
      "(epochs, steps) on the time axis and outermost scopes and backward passes\n"
      "shaded. Events are numbered from 1 in the log's order, as on the image's axis.\n\n"
      "Several logs, every rank's of one distributed run (GS_TRACE=run-%r.gstrace),\n"
      "are drawn as the inspector shows them: one lane per rank, stacked over the\n"
      "run's shared time axis, bytes alive by category, each collective a line across\n"
      "the lanes where it ended on each rank, and the time each rank waited for the\n"
      "others shaded.\n\n"
      "Example: gradscope export-timeline run.gstrace -o timeline.png --by category\n"
      "         gradscope export-timeline run-0.gstrace run-1.gstrace -o lanes.png");
  int files = cli_parse_files_args(context, &argc, &argv);
  g_autofree char *output_owned = output, *by_owned = by, *first_owned = first_text,
                  *last_owned = last_text;
  if (files < 0)
    return 1;
  const char *path = argv[1];
  if (height == G_MININT)
    height = default_height(files);
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
  if (files > 1 && (first_text || last_text)) {
    cli_error(_("export-timeline: %s numbers the events of one log, but several ranks' logs are "
                "drawn whole over their shared time axis: leave it out or give one log"),
              first_text ? "--first" : "--last");
    return 1;
  }
  if (files > 1 && by && strcmp(by, "category")) {
    cli_error(_("export-timeline: several ranks' lanes are stacked by category only, got --by "
                "'%s'"),
              by);
    return 1;
  }
  if (files > 1)
    return export_ranks(argv + 1, files, output, width, height, dark);
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
