/* cmd-explain.c: `gradscope explain FILE [--at N]`: the inspector's sentences for a log, in
 * the user's language, with no display: every event's (one line each: number, kind,
 * sentence), or one event's by the engine's number (as error messages, `dump` and the
 * scrubber give it). --list-tours and --tour NAME [FILE] read the guided tours
 * (explain-tour.c). For reading a run in a terminal, and for tests and tutorials, which can
 * check what a learner will be told. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_sentence(gs_trace_model *m, guint64 index) {
  g_autofree char *sentence = gs_trace_model_explain(m, index);
  /* One line per event: names from the program may hold newlines or control bytes. */
  g_autofree char *printable = cli_printable(sentence ? sentence : "");
  printf("#%" G_GUINT64_FORMAT " %s: %s\n", gs_trace_model_seq_at(m, index),
         gs_trace_kind_name(gs_trace_model_kind_at(m, index)), printable);
}

/* --tour or --list-tours among the arguments (before a "--"). */
static gboolean wants_tour(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (g_str_has_prefix(argv[i], "--tour") || !strcmp(argv[i], "--list-tours"))
      return TRUE;
  return FALSE;
}

int cli_explain(int argc, char **argv) {
  char *at_text = NULL, *tour = NULL;
  gboolean list_tours = FALSE;
  const GOptionEntry entries[] = {
      {"at", 0, 0, G_OPTION_ARG_STRING, &at_text,
       "Only the event with this number (the engine's, as `gradscope dump` prints it)", "N"},
      {"tour", 0, 0, G_OPTION_ARG_STRING, &tour,
       "The guided tour NAME, step by step: each step's event, paragraph and sentence (FILE "
       "is optional: without it the tour's program runs and is recorded first)",
       "NAME"},
      {"list-tours", 0, 0, G_OPTION_ARG_NONE, &list_tours, "The guided tours, one per line",
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = cli_option_context(
      "FILE", entries,
      "Prints the sentence the inspector's scrubber shows for each event of a log, in\n"
      "the user's language (LANGUAGE=zh_CN for Chinese), one line per event:\n"
      "its number, its kind and the sentence.\n\n"
      "Example: gradscope explain run.gstrace --at 33\n"
      "         gradscope explain --tour micrograd");
  g_autofree char *tour_owned = NULL;
  if (wants_tour(argc, argv)) {
    /* A tour's FILE is optional, so the usual one-FILE check does not apply. */
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
      cli_error("explain: %s", error->message);
      return 1;
    }
    tour_owned = tour;
    g_autofree char *at_ignored = at_text;
    if (at_text) {
      cli_error("explain: --at and --tour/--list-tours do not go together (a tour picks its "
                "own events)");
      return 1;
    }
    if (list_tours)
      return cli_list_tours();
    if (argc > 2) {
      cli_error("explain: one log file expected, got also '%s'", argv[2]);
      return 1;
    }
    return cli_explain_tour(tour, argc == 2 ? argv[1] : NULL);
  }
  const char *path = cli_parse_file_args(context, &argc, &argv);
  g_autofree char *at_owned = at_text;
  if (!path)
    return 1;
  guint64 at = 0;
  if (at_text && !g_ascii_string_to_unsigned(at_text, 10, 0, G_MAXUINT64, &at, NULL)) {
    cli_error("explain: --at wants an event number (as `gradscope dump` prints it), got '%s'",
              at_text);
    return 1;
  }
  g_autoptr(gs_trace_model) m = cli_load_model("explain", path);
  if (!m)
    return 1;
  guint64 n = gs_trace_model_n_events(m);
  if (n == 0) {
    cli_note_no_events(path);
    return 0;
  }
  if (at_text) {
    guint64 index = gs_trace_model_find_seq(m, at);
    if (index == G_MAXUINT64) {
      cli_error("explain: %s has no event #%" G_GUINT64_FORMAT " (its events are #%"
                G_GUINT64_FORMAT " to #%" G_GUINT64_FORMAT ")",
                path, at, gs_trace_model_seq_at(m, 0), gs_trace_model_seq_at(m, n - 1));
      return 1;
    }
    print_sentence(m, index);
  } else {
    for (guint64 i = 0; i < n; i++)
      if (!gs_trace_kind_is_table(gs_trace_model_kind_at(m, i)))
        print_sentence(m, i);
  }
  return cli_warn_damaged(gs_trace_model_problem(m));
}
