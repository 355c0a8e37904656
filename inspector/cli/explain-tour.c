/* explain-tour.c: `gradscope explain --list-tours` and `gradscope explain --tour NAME [LOG]`:
 * a guided tour read in a terminal. Without LOG the tour's program runs first with tracing on
 * (and values recorded, as the inspector's tours record them) into a temporary log. Each step
 * prints the event it resolved to (the engine's number and kind, the page and the tensor the
 * inspector shows there), the tour's paragraph and the model's own sentence for that event,
 * what the inspector's Tour panel shows, so what a learner reads is what the log says. */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>

#include "event-fields.h"
#include "gs-config.h"
#include "tours.h"
#include "cli.h"

int cli_list_tours(void) {
  for (guint i = 0; i < gs_tour_count(); i++) {
    const gs_tour *tour = gs_tour_at(i);
    printf("%s\t%s\n", tour->name, _(tour->title));
  }
  return 0;
}

/* Runs the tour's program with its log going to a new temporary file; returns the path
 * (g_free, and delete the file) or NULL after saying why. */
static char *record_tour(const gs_tour *tour) {
  g_auto(GStrv) extra_env = NULL;
  g_auto(GStrv) argv = gs_tour_command(tour, &extra_env);
  if (!argv) {
    cli_error("explain: the program of the tour '%s' (%s) is not installed%s; set GS_TOUR_DIR "
              "to the directory that holds it, or give a log recorded from it",
              tour->name, tour->program,
              tour->language == GS_TOUR_PYTHON && !gs_config_python()
                  ? " (and this gradscope was built without Python)"
                  : "");
    return NULL;
  }
  const char *program = argv[g_strv_length(argv) - 1];
  g_autoptr(GError) error = NULL;
  g_autofree char *log = NULL;
  int fd = g_file_open_tmp("gradscope-tour-XXXXXX.gstrace", &log, &error);
  if (fd < 0) {
    cli_error("explain: cannot make a temporary log: %s", error->message);
    return NULL;
  }
  close(fd);
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "GS_TRACE", log, TRUE);
  env = g_environ_setenv(env, "GS_TRACE_VALUES", "16", FALSE);
  for (char **entry = extra_env; entry && *entry; entry++) { /* a Python tour's PYTHONPATH */
    g_auto(GStrv) pair = g_strsplit(*entry, "=", 2);
    env = g_environ_setenv(env, pair[0], pair[1], TRUE);
  }
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  /* The program's own output is not the tour's: keep it, and show it only if it failed. */
  if (!g_spawn_sync(NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                    &error) ||
      !g_spawn_check_wait_status(status, &error)) {
    cli_error("explain: running %s failed: %s", program, error->message);
    fprintf(stderr, "%s%s", out ? out : "", err ? err : "");
    g_unlink(log);
    return NULL;
  }
  return g_steal_pointer(&log);
}

/* The page a step opens, in the user's language (the step line's tag, "[graph, e #3.1]"). */
static const char *page_title(gs_tour_page page) {
  /* TRANSLATORS: `gradscope explain --tour`: the inspector's page a tour step opens, as its
   * tab is titled, in lower case where the language has it */
  switch (page) {
  case GS_TOUR_PAGE_GRAPH: return C_("tour page", "graph");
  case GS_TOUR_PAGE_MEMORY: return C_("tour page", "memory");
  case GS_TOUR_PAGE_SCOPES: return C_("tour page", "scopes");
  case GS_TOUR_PAGE_EVENTS:
  default: return C_("tour page", "events");
  }
}

static int print_tour(const gs_tour *tour, const char *path) {
  g_autoptr(gs_trace_model) m = cli_load_model("explain", path);
  if (!m)
    return 1;
  g_autofree gs_tour_stop *stops = g_new0(gs_tour_stop, tour->n_steps);
  g_autofree char *missing = NULL;
  if (!gs_tour_resolve(m, tour, stops, &missing)) {
    cli_error("explain: %s", missing);
    return 1;
  }
  printf("%s: %s\n", tour->name, _(tour->title));
  for (guint s = 0; s < tour->n_steps; s++) {
    guint64 index = stops[s].index;
    g_autofree char *sentence = gs_trace_model_explain(m, index);
    g_autofree char *printable = cli_printable(sentence ? sentence : "");
    /* The page the inspector opens, and the tensor it selects, by its name and handle. */
    char handle[32] = "";
    if (stops[s].tensor)
      gs_format_handle(stops[s].tensor, handle, sizeof handle);
    const char *page = page_title(tour->steps[s].page);
    g_autofree char *where =
        stops[s].tensor ? g_strdup_printf("%s, %s %s", page, tour->steps[s].tensor, handle)
                        : g_strdup(page);
    printf("\n%u/%u #%" G_GUINT64_FORMAT " %s [%s]\n  %s\n  #%" G_GUINT64_FORMAT " %s: %s\n",
           s + 1, tour->n_steps, gs_trace_model_seq_at(m, index),
           gs_trace_kind_name(gs_trace_model_kind_at(m, index)), where,
           _(tour->steps[s].paragraph),
           gs_trace_model_seq_at(m, index), gs_trace_kind_name(gs_trace_model_kind_at(m, index)),
           printable);
  }
  return cli_warn_damaged(gs_trace_model_problem(m));
}

int cli_explain_tour(const char *name, const char *log_path) {
  const gs_tour *tour = gs_tour_find(name);
  if (!tour) {
    cli_error("explain: no tour is called '%s' (gradscope explain --list-tours lists them)",
              name);
    return 1;
  }
  if (log_path)
    return print_tour(tour, log_path);
  g_autofree char *recorded = record_tour(tour);
  if (!recorded)
    return 1;
  int status = print_tour(tour, recorded);
  g_unlink(recorded);
  return status;
}
