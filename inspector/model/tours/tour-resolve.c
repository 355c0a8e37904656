/* tour-resolve.c: finds each step of a guided tour in one event log. A step's query (tours.h)
 * is read against the log itself, never against remembered event numbers, so the same tour
 * plays on any run of its program: the CLI prints it, the inspector's Tour panel moves to it,
 * and the tours test fails the day a program stops producing what a step looks for. */
#include <glib/gi18n-lib.h>
#include <string.h>

#include "gs-config.h"
#include "tours.h"

#define NONE G_MAXUINT64

/* The kind whose name (as the reader spells it) is name; 0 if none. */
static gs_trace_kind kind_named(const char *name) {
  for (int k = 1; k < GS_TRACE_KIND_COUNT; k++)
    if (!strcmp(gs_trace_kind_name((gs_trace_kind)k), name))
      return (gs_trace_kind)k;
  return 0;
}

/* The first event of kind at or after from for which the decoded event passes test. */
typedef gboolean (*event_test)(gs_trace_model *m, const gs_trace_event *e, gconstpointer data);

static guint64 find_event(gs_trace_model *m, gs_trace_kind kind, guint64 from, event_test test,
                          gconstpointer data) {
  guint64 n = gs_trace_model_n_events(m);
  for (guint64 i = from; i < n; i++) {
    if (gs_trace_model_kind_at(m, i) != kind)
      continue;
    gs_trace_event e;
    if (gs_trace_model_event(m, i, &e) && (!test || test(m, &e, data)))
      return i;
  }
  return NONE;
}

static gboolean names_text(gs_trace_model *m, const gs_trace_event *e, gconstpointer text) {
  return !strcmp(gs_trace_model_string(m, e->name), text) ||
         (e->op && !strcmp(gs_trace_model_string(m, e->op), text));
}

/* The tensor user code named `name`: the first such name given at or after from (a tensor is
 * named just after its creation), else the last one given before from (a tensor made before
 * the step's mark). 0 if none. */
static guint64 tensor_named(gs_trace_model *m, const char *name, guint64 from) {
  guint64 at = find_event(m, GS_TRACE_TENSOR_NAME, from, names_text, name);
  if (at == NONE) {
    guint64 last = NONE;
    for (guint64 i = find_event(m, GS_TRACE_TENSOR_NAME, 0, names_text, name); i < from;
         i = find_event(m, GS_TRACE_TENSOR_NAME, i + 1, names_text, name))
      last = i;
    at = last;
  }
  gs_trace_event e;
  return at != NONE && gs_trace_model_event(m, at, &e) ? e.tensor : 0;
}

typedef struct step_match {
  const char *name; /* NULL: any */
  guint64 tensor;   /* 0: any */
} step_match;

static gboolean matches_step(gs_trace_model *m, const gs_trace_event *e, gconstpointer data) {
  const step_match *want = data;
  if (want->name && !names_text(m, e, want->name))
    return FALSE;
  return !want->tensor || e->tensor == want->tensor || e->target == want->tensor ||
         e->object == want->tensor;
}

/* The first event at or after from where the bytes alive reach their largest value in the
 * rest of the log: where a step's memory peaks. */
static guint64 peak_from(gs_trace_model *m, guint64 from) {
  guint64 n = gs_trace_model_n_events(m), best = NONE, most = 0;
  for (guint64 i = from; i < n; i++) {
    guint64 bytes = gs_trace_model_bytes_at(m, i);
    if (best == NONE || bytes > most)
      best = i, most = bytes;
  }
  return best;
}

static gboolean fail(char **error_message, const gs_tour *tour, guint step, char *what) {
  if (error_message)
    *error_message = g_strdup_printf(_("Step %u of the tour “%s” found nothing: %s"), step + 1,
                                     tour->name, what);
  g_free(what);
  return FALSE;
}

gboolean gs_tour_resolve(gs_trace_model *m, const gs_tour *tour, gs_tour_stop *stops,
                         char **error_message) {
  for (guint s = 0; s < tour->n_steps; s++) {
    const gs_tour_step *step = &tour->steps[s];
    guint64 from = 0;
    if (step->mark) {
      from = find_event(m, GS_TRACE_MARK, 0, names_text, step->mark);
      if (from == NONE)
        return fail(error_message, tour, s,
                    g_strdup_printf(_("the log has no mark “%s”"), step->mark));
    }
    step_match want = {step->name, 0};
    if (step->tensor) {
      want.tensor = tensor_named(m, step->tensor, from);
      if (!want.tensor)
        return fail(error_message, tour, s,
                    g_strdup_printf(_("no tensor is named “%s”"), step->tensor));
    }
    guint64 at;
    if (!step->kind)
      at = from;
    else if (!strcmp(step->kind, "peak")) {
      at = peak_from(m, from);
      /* A storage's allocation shares its number with the tensor event it was folded into:
       * stop on the one that number names (`explain --at`, the event list). */
      guint64 named = at == NONE ? NONE : gs_trace_model_find_seq(m, gs_trace_model_seq_at(m, at));
      if (named != NONE && gs_trace_model_bytes_at(m, named) == gs_trace_model_bytes_at(m, at))
        at = named;
    }
    else {
      gs_trace_kind kind = kind_named(step->kind);
      g_return_val_if_fail(kind != 0, FALSE); /* a typo in tours.c: the tours test catches it */
      at = find_event(m, kind, from, matches_step, &want);
    }
    if (at == NONE)
      return fail(error_message, tour, s,
                  step->mark ? g_strdup_printf(_("no %s event after the mark “%s”"), step->kind,
                                               step->mark)
                             : g_strdup_printf(_("no %s event"), step->kind));
    stops[s].index = at;
    stops[s].tensor = want.tensor;
  }
  return TRUE;
}

char *gs_tour_program_path(const gs_tour *tour) {
  return gs_config_tour_program(tour->program);
}

char **gs_tour_command(const gs_tour *tour, char ***env) {
  *env = NULL;
  g_autofree char *program = gs_tour_program_path(tour);
  if (!program)
    return NULL;
  GStrvBuilder *argv = g_strv_builder_new();
  if (tour->language == GS_TOUR_PYTHON) {
    /* The Python the module was built for: another one (a venv's) may lack NumPy or PyTorch,
     * or not load the extension at all. */
    const char *python = gs_config_python();
    if (!python) {
      g_strv_builder_unref(argv);
      return NULL;
    }
    g_strv_builder_add(argv, python);
    const char *module_dir = gs_config_python_module_dir();
    if (module_dir) {
      const char *outer = g_getenv("PYTHONPATH");
      g_autofree char *path = outer && *outer ? g_strjoin(":", module_dir, outer, NULL)
                                              : g_strdup(module_dir);
      g_autofree char *entry = g_strconcat("PYTHONPATH=", path, NULL);
      const char *const entries[] = {entry, NULL};
      *env = g_strdupv((char **)entries);
    }
  }
  g_strv_builder_add(argv, program);
  char **command = g_strv_builder_end(argv);
  g_strv_builder_unref(argv);
  return command;
}
