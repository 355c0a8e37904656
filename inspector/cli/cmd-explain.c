/* cmd-explain.c: `gradscope explain FILE [--at N]`: the inspector's sentences for a log, in
 * the user's language, with no display: every event's (one line each: number, kind,
 * sentence), or one event's by the engine's number (as error messages, `dump` and the
 * scrubber give it). --list-tours and --tour NAME [FILE] read the guided tours
 * (explain-tour.c). For reading a run in a terminal, and for tests and tutorials, which can
 * check what a learner will be told. */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* prefix: "rank 1 " when several ranks' logs are explained, else "". */
static void print_sentence(gs_trace_model *m, guint64 index, const char *prefix) {
  g_autofree char *sentence = gs_trace_model_explain(m, index);
  /* One line per event: names from the program may hold newlines or control bytes. */
  g_autofree char *printable = cli_printable(sentence ? sentence : "");
  printf("%s#%" G_GUINT64_FORMAT " %s: %s\n", prefix, gs_trace_model_seq_at(m, index),
         gs_trace_kind_name(gs_trace_model_kind_at(m, index)), printable);
}

/* Every event's sentence of the log at path, or event at's (has_at); 0, 1 or 2 (damaged) as
 * the command's status. */
static int explain_log(const char *path, gboolean has_at, guint64 at, const char *prefix) {
  g_autoptr(gs_trace_model) m = cli_load_model("explain", path);
  if (!m)
    return 1;
  guint64 n = gs_trace_model_n_events(m);
  if (n == 0) {
    cli_note_no_events(path);
    return 0;
  }
  if (has_at) {
    guint64 index = gs_trace_model_find_seq(m, at);
    if (index == G_MAXUINT64) {
      cli_error("explain: %s has no event #%" G_GUINT64_FORMAT
                " (its events are #%" G_GUINT64_FORMAT " to #%" G_GUINT64_FORMAT ")",
                path, at, gs_trace_model_seq_at(m, 0), gs_trace_model_seq_at(m, n - 1));
      return 1;
    }
    print_sentence(m, index, prefix);
  } else {
    for (guint64 i = 0; i < n; i++)
      if (!gs_trace_kind_is_table(gs_trace_model_kind_at(m, i)))
        print_sentence(m, i, prefix);
  }
  return cli_warn_damaged(gs_trace_model_problem(m));
}

/* Several logs, the ranks of one run: each rank's sentences in turn, each line starting with
 * its rank; or only rank `only`'s (>= 0). */
static int explain_ranks(char **paths, int n, gint64 only, gboolean has_at, guint64 at) {
  g_autoptr(GArray) logs = cli_rank_logs_read("explain", paths, n);
  if (!logs || !cli_rank_logs_one_run("explain", logs))
    return 1;
  int status = 0;
  gboolean found = FALSE;
  for (guint i = 0; i < logs->len && status != 1; i++) {
    const cli_rank_log *l = &g_array_index(logs, cli_rank_log, i);
    if (only >= 0 && l->rank != (guint64)only)
      continue;
    found = TRUE;
    /* TRANSLATORS: the start of each line of `explain A B ...`: whose log the event is in */
    g_autofree char *prefix = g_strdup_printf(_("rank %u "), l->rank);
    int got = explain_log(l->path, has_at, at, only >= 0 ? "" : prefix);
    status = MAX(status, got);
  }
  if (!found) {
    cli_error(_("explain: no log of rank %u among the %u given (ranks %u to %u)"), (guint)only,
              logs->len, g_array_index(logs, cli_rank_log, 0).rank,
              g_array_index(logs, cli_rank_log, logs->len - 1).rank);
    return 1;
  }
  return status;
}

/* --tour or --list-tours among the arguments (before a "--"). */
static gboolean wants_tour(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (g_str_has_prefix(argv[i], "--tour") || !strcmp(argv[i], "--list-tours"))
      return TRUE;
  return FALSE;
}

int cli_explain(int argc, char **argv) {
  char *at_text = NULL, *tour = NULL, *rank_text = NULL;
  gboolean list_tours = FALSE;
  const GOptionEntry entries[] = {
      {"rank", 0, 0, G_OPTION_ARG_STRING, &rank_text,
       N_("Of several ranks' logs, only rank R's events (without it, every rank's, each line "
          "starting with its rank)"),
       "R"},
      {"at", 0, 0, G_OPTION_ARG_STRING, &at_text,
       "Only the event with this number (the engine's, as `gradscope dump` prints it)", "N"},
      {"tour", 0, 0, G_OPTION_ARG_STRING, &tour,
       "The guided tour NAME, step by step: each step's event, paragraph and sentence (FILE "
       "is optional: without it the tour's program runs and is recorded first)",
       "NAME"},
      {"list-tours", 0, 0, G_OPTION_ARG_NONE, &list_tours, "The guided tours, one per line", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) context = g_option_context_new(_("FILE [FILE...]"));
  cli_translate_options(context);
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_set_summary(
      context, "Prints the sentence the inspector's scrubber shows for each event of a log, in\n"
               "the user's language (LANGUAGE=zh_CN for Chinese), one line per event:\n"
               "its number, its kind and the sentence.\n\n"
               "Several logs, the ranks of one distributed run (GS_TRACE=run-%r.gstrace),\n"
               "are explained rank after rank, each line starting with its rank.\n\n"
               "Example: gradscope explain run.gstrace --at 33\n"
               "         gradscope explain run-0.gstrace run-1.gstrace --rank 1\n"
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
  int files = cli_parse_files_args(context, &argc, &argv);
  g_autofree char *at_owned = at_text, *rank_owned = rank_text;
  if (files < 1)
    return 1;
  guint64 at = 0, rank = 0;
  if (at_text && !g_ascii_string_to_unsigned(at_text, 10, 0, G_MAXUINT64, &at, NULL)) {
    cli_error("explain: --at wants an event number (as `gradscope dump` prints it), got '%s'",
              at_text);
    return 1;
  }
  if (rank_text && !g_ascii_string_to_unsigned(rank_text, 10, 0, G_MAXUINT32, &rank, NULL)) {
    cli_error(_("explain: --rank wants a rank (0 or more), got '%s'"), rank_text);
    return 1;
  }
  if (files > 1 || rank_text)
    return explain_ranks(argv + 1, files, rank_text ? (gint64)rank : -1, at_text != NULL, at);
  return explain_log(argv[1], at_text != NULL, at, "");
}
