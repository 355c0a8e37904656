/* tours.h: guided tours, as data. A tour is an example program (examples/tours/) and a short
 * list of steps; each step names one event of the program's log by a query (a user mark, then
 * the first event of a kind after it, optionally with a given op or name), the inspector page
 * and tensor to show there, and a paragraph that explains what the learner sees. The queries
 * are resolved against a real log (gs_tour_resolve), so the CLI (`gradscope explain --tour`)
 * and the inspector's Tour panel show the same events with the model's own sentences, and a
 * test can check that every step still finds its event. GLib only. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

/* Where a step sends the inspector. */
typedef enum gs_tour_page {
  GS_TOUR_PAGE_EVENTS,
  GS_TOUR_PAGE_GRAPH,
  GS_TOUR_PAGE_MEMORY,
  GS_TOUR_PAGE_SCOPES,
  GS_TOUR_PAGE_N
} gs_tour_page;

typedef struct gs_tour_step {
  const char *mark;      /* search from the first mark with this label (NULL: the log's start) */
  const char *kind;      /* the first event of this kind there ("backward_begin", "error"...);
                          * NULL: the mark itself */
  const char *name;      /* if set, the event's op or name must be this ("MulBackward") */
  const char *tensor;    /* if set, the event must concern the tensor user code named so; it is
                          * also the tensor the inspector selects */
  gs_tour_page page;
  const char *paragraph; /* untranslated (N_): show it with g_dgettext / _() */
} gs_tour_step;

/* What the tour's program is written in, so the tours know how to run it. */
typedef enum gs_tour_language {
  GS_TOUR_C,      /* an executable, run as it is */
  GS_TOUR_PYTHON, /* a script, run by the Python the build found, with the gradscope module */
} gs_tour_language;

typedef struct gs_tour {
  const char *name;      /* what --tour takes: "storage" */
  const char *title;     /* untranslated (N_) */
  const char *program;   /* the example that records the log: "tour-storage", "tour-sharing.py" */
  gs_tour_language language;
  const gs_tour_step *steps;
  guint n_steps;
} gs_tour;

/* The tours, in teaching order. */
guint gs_tour_count(void);
const gs_tour *gs_tour_at(guint i);
/* The tour called name, or NULL. */
const gs_tour *gs_tour_find(const char *name);
/* The page's name as the inspector's stack names it ("events", "graph", "memory", "scopes"). */
const char *gs_tour_page_name(gs_tour_page page);

/* Where a step landed in one log. */
typedef struct gs_tour_stop {
  guint64 index;  /* the event (model index) */
  guint64 tensor; /* the tensor named by the step's `tensor`, alive or just disposed there;
                   * 0 if the step names none */
} gs_tour_stop;

/* Finds every step's event in m, in order (stops[n_steps]). FALSE with *error_message (a
 * translated sentence naming the step and what was not found; g_free) if one is missing. */
gboolean gs_tour_resolve(gs_trace_model *m, const gs_tour *tour, gs_tour_stop *stops,
                         char **error_message);

/* The tour's program (gs_config_tour_program finds it); NULL if it is not there. g_free. */
char *gs_tour_program_path(const gs_tour *tour);

/* The command line that runs the tour's program (g_strfreev): the program itself, or for a
 * Python tour the build's Python and the script. *env gets the NAME=VALUE entries to add to
 * the program's environment (g_strfreev; PYTHONPATH for the build tree's module when this is
 * an uninstalled gradscope, else none). NULL if the program or its interpreter is not there
 * (*env is then NULL too). */
char **gs_tour_command(const gs_tour *tour, char ***env);

G_END_DECLS
