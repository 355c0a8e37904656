/* test-tours.c: every guided tour is a test. Each tour's program (examples/tours/, found the
 * way `gradscope explain --tour` finds it) runs with tracing and values on; its log loads
 * whole; every step resolves to an event that exists, of the kind the step asks for, about
 * the tensor it names; each step has a sentence; and what a step's paragraph claims of its
 * moment holds in the log (a view shares its base's storage, contiguous() of a transpose
 * allocates, the peak holds saved activations and gradients together, the errors say what
 * the paragraphs say they say; tour 8's storages wrap NumPy's and PyTorch's bytes, and writes
 * on either side show in the recorded values). A tour the build left out (tour 8 without the
 * Python module or PyTorch) is skipped, saying why. The sentences themselves are checked fact
 * by fact against the same programs' logs in test-explain-truth.c. */
#include <glib/gstdio.h>
#include <gradscope/scope.h>
#include <string.h>

#include "tensor-values.h"
#include "tours.h"
#include "trace-model.h"

typedef struct recorded {
  char *dir, *path;
  gs_trace_model *model;
} recorded;

static recorded record_tour(const gs_tour *tour) {
  g_auto(GStrv) extra_env = NULL;
  g_auto(GStrv) argv = gs_tour_command(tour, &extra_env);
  g_assert_nonnull(argv);
  recorded r = {g_dir_make_tmp("gradscope-tour-XXXXXX", NULL), NULL, NULL};
  r.path = g_build_filename(r.dir, "tour.gstrace", NULL);
  g_autofree char *trace = g_strdup_printf("GS_TRACE=%s", r.path);
  /* A Python tour's PYTHONPATH too, the one `gradscope explain --tour` gives it. */
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
  const char *const fixed[] = {trace, "GS_TRACE_VALUES=16", "OPENBLAS_NUM_THREADS=1",
                               "OMP_NUM_THREADS=1", NULL};
  g_strv_builder_addv(builder, (const char **)fixed);
  if (extra_env)
    g_strv_builder_addv(builder, (const char **)extra_env);
  g_auto(GStrv) env = g_strv_builder_end(builder);
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                             NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, &error)); /* its own checks passed */
  r.model = gs_trace_model_load_file(r.path, NULL, NULL, NULL, &error);
  g_assert_no_error(error);
  g_assert_null(gs_trace_model_problem(r.model));
  return r;
}

static void recorded_clear(recorded *r) {
  gs_trace_model_free(r->model);
  g_remove(r->path);
  g_rmdir(r->dir);
  g_free(r->path);
  g_free(r->dir);
}

static gs_trace_event event_at(gs_trace_model *m, guint64 index) {
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, index, &e));
  return e;
}

/* The step's event is what the step asked for. */
static void assert_step(gs_trace_model *m, const gs_tour_step *step, const gs_tour_stop *stop) {
  g_assert_cmpuint(stop->index, <, gs_trace_model_n_events(m));
  gs_trace_kind kind = gs_trace_model_kind_at(m, stop->index);
  if (!step->kind)
    g_assert_cmpint(kind, ==, GS_TRACE_MARK);
  else if (strcmp(step->kind, "peak"))
    g_assert_cmpstr(gs_trace_kind_name(kind), ==, step->kind);
  gs_trace_event e = event_at(m, stop->index);
  if (step->name)
    g_assert_true(!strcmp(gs_trace_model_string(m, e.name), step->name) ||
                  !strcmp(gs_trace_model_string(m, e.op), step->name));
  if (step->tensor) {
    g_assert_cmpuint(stop->tensor, !=, 0);
    g_assert_true(e.tensor == stop->tensor || e.target == stop->tensor ||
                  e.object == stop->tensor);
    /* ...and that tensor is the one the program named so. */
    gboolean named = FALSE;
    for (guint64 i = 0; i < gs_trace_model_n_events(m) && !named; i++)
      if (gs_trace_model_kind_at(m, i) == GS_TRACE_TENSOR_NAME) {
        gs_trace_event n = event_at(m, i);
        named = n.tensor == stop->tensor && !strcmp(gs_trace_model_string(m, n.name), step->tensor);
      }
    g_assert_true(named);
  }
  g_autofree char *sentence = gs_trace_model_explain(m, stop->index);
  g_assert_nonnull(sentence);
  g_assert_cmpuint(strlen(sentence), >, 10);
  g_assert_cmpuint(strlen(step->paragraph), >, 20);
}

/* The values the log recorded for tensor at index, in words ("[0, 2, 4, 6]"). */
static char *values_text(gs_trace_model *m, guint64 tensor, guint64 index) {
  guint n = 0;
  guint64 numel = 0;
  g_autofree double *v = gs_trace_model_values_at(m, tensor, index, &n, &numel);
  g_assert_nonnull(v);
  return gs_tensor_values_text(v, n, numel);
}

/* What the paragraphs of some steps claim about their moment. */
static void assert_claims(gs_trace_model *m, const gs_tour *tour, const gs_tour_stop *stops) {
  if (!strcmp(tour->name, "storage")) {
    gs_trace_event x = event_at(m, stops[0].index), mview = event_at(m, stops[1].index);
    guint64 x_storage = x.storage;
    gs_trace_event t = event_at(m, stops[2].index), tc = event_at(m, stops[3].index);
    g_assert_cmpuint(mview.storage, ==, x_storage); /* views: one storage */
    g_assert_cmpuint(t.storage, ==, x_storage);
    g_assert_cmpuint(mview.origin, ==, 1);
    g_assert_cmpuint(tc.storage, !=, x_storage); /* contiguous() of t copies */
    g_assert_cmpuint(tc.alloc, >, 0);
  } else if (!strcmp(tour->name, "clone-detach")) {
    gs_trace_event c = event_at(m, stops[0].index), d = event_at(m, stops[2].index);
    g_assert_cmpuint(c.origin, ==, 3);
    g_assert_cmpuint(d.origin, ==, 2);
    gs_trace_event w = event_at(m, stops[3].index);
    g_assert_cmpuint(w.version, ==, 1); /* the shared counter went up */
    /* Values are recorded again after each in-place write: c after += 10, d after *= 2. */
    guint64 c_id = c.tensor, d_id = d.tensor;
    guint64 end = gs_trace_model_n_events(m) - 1;
    g_autofree char *c_before = values_text(m, c_id, stops[0].index + 1);
    g_autofree char *c_after = values_text(m, c_id, stops[2].index);
    g_autofree char *d_after = values_text(m, d_id, end);
    /* At the write itself, d already holds what the write made (the step shows it). */
    g_autofree char *d_at_write = values_text(m, d_id, stops[3].index);
    g_assert_cmpstr(d_at_write, ==, "[0, 2, 4, 6]");
    g_assert_cmpstr(c_before, ==, "[0, 1, 2, 3]");
    g_assert_cmpstr(c_after, ==, "[10, 11, 12, 13]");
    g_assert_cmpstr(d_after, ==, "[0, 2, 4, 6]");
  } else if (!strcmp(tour->name, "version") || !strcmp(tour->name, "packed")) {
    gs_trace_event e = event_at(m, stops[2].index); /* both tours' third step: the error */
    g_assert_nonnull(e.text);
    if (!strcmp(tour->name, "version"))
      g_assert_nonnull(strstr(e.text, "version"));
    else {
      g_assert_nonnull(strstr(e.text, "stale"));
      g_assert_nonnull(strstr(e.text, "collate"));
      /* The move: the packed sequence itself, from the collate scope to the program. */
      gs_trace_event made = event_at(m, stops[0].index), moved = event_at(m, stops[3].index);
      g_assert_cmpuint(made.object_kind, ==, GS_OBJECT_PACKED_SEQUENCE);
      g_assert_cmpuint(made.n_parts, ==, 4);
      g_assert_cmpuint(moved.previous_holder, ==, GS_TRACE_HELD_BY_SCOPE);
      g_assert_cmpuint(moved.holder, ==, GS_TRACE_HELD_BY_CALLER);
      g_assert_cmpint(gs_trace_model_kind_at(m, gs_trace_model_find_seq(m, made.seq)), ==,
                      GS_TRACE_COMPOSITE_CREATE);
    }
  } else if (!strcmp(tour->name, "micrograd")) {
    /* draw_dot's numbers: each leaf's data and grad once backward is done. */
    guint64 end = stops[tour->n_steps - 1].index;
    guint64 a = stops[3].tensor;
    g_autofree char *before = gs_trace_model_values_label(m, a, stops[2].index);
    g_autofree char *after = gs_trace_model_values_label(m, a, end);
    g_assert_cmpstr(before, ==, "data 2");
    g_assert_cmpstr(after, ==, "data 2\ngrad 6");
    guint64 L = stops[1].tensor;
    g_autofree char *loss = gs_trace_model_values_label(m, L, end);
    g_assert_cmpstr(loss, ==, "data -8");
  } else if (!strcmp(tour->name, "sharing")) {
    /* from_numpy wraps the array's bytes (gs_memory_origin 1, the program's own memory). */
    gs_trace_event wrap = event_at(m, stops[0].index);
    g_assert_cmpuint(wrap.memory, ==, 1);
    /* x += 1 after NumPy's a[0, 0] = 100: one version, both writes in the values. */
    gs_trace_event write = event_at(m, stops[1].index);
    g_assert_cmpuint(write.version, ==, 1);
    g_assert_cmpuint(write.storage, ==, wrap.storage);
    g_autofree char *x_values = values_text(m, stops[1].tensor, stops[1].index);
    g_assert_cmpstr(x_values, ==, "[101, 2, 3, 4, 5, 6]");
    /* x goes while x.numpy()'s array pins the storage: it is freed only at "let go". */
    g_assert_cmpuint(event_at(m, stops[3].index).storage, ==, wrap.storage);
    for (guint64 i = stops[2].index; i < stops[3].index; i++)
      g_assert_false(gs_trace_model_kind_at(m, i) == GS_TRACE_STORAGE_FREE &&
                     event_at(m, i).storage == wrap.storage);
    /* PyTorch's mul_(10) through torch.from_dlpack(y), then y += 1. */
    g_autofree char *y_values = values_text(m, stops[4].tensor, stops[4].index);
    g_assert_cmpstr(y_values, ==, "[11, 21, 31, 41]");
    /* from_dlpack wraps PyTorch's bytes (origin 2, a DLPack producer), given back with z. */
    gs_trace_event lent = event_at(m, stops[5].index);
    g_assert_cmpuint(lent.memory, ==, 2);
    /* z's dispose frees that storage in the same event (one number, a derived free). */
    guint64 seq = gs_trace_model_seq_at(m, stops[6].index);
    gboolean freed = FALSE;
    for (guint64 i = stops[6].index; i < gs_trace_model_n_events(m) && !freed; i++)
      freed = gs_trace_model_seq_at(m, i) == seq &&
              gs_trace_model_kind_at(m, i) == GS_TRACE_STORAGE_FREE &&
              event_at(m, i).storage == lent.storage;
    g_assert_true(freed);
  } else if (!strcmp(tour->name, "memory")) {
    /* A large tensor: its size and statistics of the first values recorded. */
    g_autofree char *hidden = values_text(m, stops[0].tensor, stops[1].index);
    g_assert_true(g_str_has_prefix(hidden, "32768 values; first 16: min/mean/max "));
    guint peak = 0;
    while (strcmp(tour->steps[peak].kind, "peak"))
      peak++;
    guint64 bytes[GS_MEM_N_CATEGORIES];
    const gs_replay *state = gs_trace_model_seek(m, stops[peak].index);
    gs_trace_model_category_bytes(m, state, bytes);
    g_assert_cmpuint(bytes[GS_MEM_SAVED], >, 0);
    g_assert_cmpuint(bytes[GS_MEM_GRADIENTS], >, 0);
    g_assert_cmpuint(bytes[GS_MEM_OTHER], >, 0); /* gradients between nodes, the engine's */
    /* The second layer's node saves the activation: it counts as saved from there on. */
    guint64 before[GS_MEM_N_CATEGORIES], after[GS_MEM_N_CATEGORIES];
    gs_trace_model_category_bytes(m, gs_trace_model_seek(m, stops[1].index - 1), before);
    gs_trace_model_category_bytes(m, gs_trace_model_seek(m, stops[1].index), after);
    g_assert_cmpuint(after[GS_MEM_SAVED], >=, before[GS_MEM_SAVED] + 128 * 256 * 4);
    for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
      g_assert_cmpuint(gs_trace_model_bytes_at(m, i), <=,
                       gs_trace_model_bytes_at(m, stops[peak].index));
    /* The saved band grows in the forward pass and shrinks during backward (tutorial 7). */
    guint64 at_forward[GS_MEM_N_CATEGORIES], at_backward[GS_MEM_N_CATEGORIES],
        at_free[GS_MEM_N_CATEGORIES];
    gs_trace_model_category_bytes(m, gs_trace_model_seek(m, stops[0].index - 1), at_forward);
    gs_trace_model_category_bytes(m, gs_trace_model_seek(m, stops[2].index), at_backward);
    gs_trace_model_category_bytes(m, gs_trace_model_seek(m, stops[5].index), at_free);
    g_assert_cmpuint(at_backward[GS_MEM_SAVED], >, at_forward[GS_MEM_SAVED]);
    g_assert_cmpuint(at_free[GS_MEM_SAVED], <, at_backward[GS_MEM_SAVED]);
  }
}

/* Why the build left this tour out (GS_TOUR_SKIP, "NAME: why", set by meson when the Python
 * module or PyTorch is missing), or NULL. */
static const char *left_out(const gs_tour *tour) {
  const char *skip = g_getenv("GS_TOUR_SKIP");
  gsize n = strlen(tour->name);
  return skip && !strncmp(skip, tour->name, n) && skip[n] == ':' ? skip : NULL;
}

static void test_tour(gconstpointer data) {
  const gs_tour *tour = data;
  if (left_out(tour)) {
    g_test_skip(left_out(tour));
    return;
  }
  recorded r = record_tour(tour);
  g_autofree gs_tour_stop *stops = g_new0(gs_tour_stop, tour->n_steps);
  g_autofree char *missing = NULL;
  if (!gs_tour_resolve(r.model, tour, stops, &missing))
    g_error("%s", missing);
  for (guint s = 0; s < tour->n_steps; s++)
    assert_step(r.model, &tour->steps[s], &stops[s]);
  assert_claims(r.model, tour, stops);
  recorded_clear(&r);
}

/* A log that is not the tour's: the step that finds nothing is named, with what it missed. */
static void test_wrong_log(void) {
  recorded r = record_tour(gs_tour_find("micrograd"));
  const gs_tour *storage = gs_tour_find("storage");
  g_autofree gs_tour_stop *stops = g_new0(gs_tour_stop, storage->n_steps);
  g_autofree char *missing = NULL;
  g_assert_false(gs_tour_resolve(r.model, storage, stops, &missing));
  g_assert_nonnull(strstr(missing, "Step 1"));
  g_assert_nonnull(strstr(missing, "views"));
  /* The micrograd log has the mark "forward" but no tensor called "b2". */
  const gs_tour *version = gs_tour_find("version");
  g_autofree gs_tour_stop *vstops = g_new0(gs_tour_stop, version->n_steps);
  g_autofree char *vmissing = NULL;
  g_assert_false(gs_tour_resolve(r.model, version, vstops, &vmissing));
  g_assert_nonnull(strstr(vmissing, "Step 1"));
  recorded_clear(&r);
}

static void test_catalogue(void) {
  g_assert_cmpuint(gs_tour_count(), ==, 8);
  for (guint i = 0; i < gs_tour_count(); i++) {
    const gs_tour *tour = gs_tour_at(i);
    g_assert_true(gs_tour_find(tour->name) == tour);
    /* A Python tour's program is its script, which gs_tour_command runs with Python. */
    g_assert_true(g_str_has_suffix(tour->program, ".py") == (tour->language == GS_TOUR_PYTHON));
    g_assert_cmpuint(tour->n_steps, >=, 4);
    for (guint s = 0; s < tour->n_steps; s++) {
      const gs_tour_step *step = &tour->steps[s];
      g_assert_cmpuint(step->page, <, GS_TOUR_PAGE_N);
      /* Each query names a kind the reader knows (or "peak"), a mark to start from (a kind
       * alone would find the first such event of the whole log), and a paragraph. */
      gboolean known = !step->kind || !strcmp(step->kind, "peak");
      for (int k = 1; k < GS_TRACE_KIND_COUNT && !known; k++)
        known = !strcmp(gs_trace_kind_name((gs_trace_kind)k), step->kind);
      g_assert_true(known);
      g_assert_nonnull(step->mark);
      g_assert_nonnull(step->paragraph);
    }
  }
  g_assert_null(gs_tour_find("no-such-tour"));
  g_assert_null(gs_tour_at(gs_tour_count()));
}

int main(int argc, char **argv) {
  g_setenv("LANGUAGE", "C", TRUE); /* the error messages above are read in English */
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tours/catalogue", test_catalogue);
  for (guint i = 0; i < gs_tour_count(); i++) {
    g_autofree char *path = g_strdup_printf("/tours/%s", gs_tour_at(i)->name);
    g_test_add_data_func(path, gs_tour_at(i), test_tour);
  }
  g_test_add_func("/tours/wrong-log", test_wrong_log);
  return g_test_run();
}
