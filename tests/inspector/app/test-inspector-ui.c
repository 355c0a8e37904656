/* test-inspector-ui.c: the inspector's widgets on a real log, under Xvfb (suite
 * "inspector-ui"). The log is recorded by this test with the engine: scoped steps with
 * clones, detaches, in-place writes and moves. The tests open it through the window as a user
 * would, count rows against the reader, filter, move the scrubber and check the explanation
 * and the views, and save screenshots (GS_SCREENSHOT_DIR, default the build directory). One
 * test runs in Chinese (LANGUAGE=zh_CN, see meson.build). */
#include <adwaita.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <locale.h>
#include <string.h>

#include "gs-application.h"
#include "gs-capture-page.h"
#include "gs-config.h"
#include "gs-event-list-view.h"
#include "gs-event-row.h"
#include "gs-tensor-life.h"
#include "gs-graph-pane.h"
#include "gs-handle-entry.h"
#include "event-fields.h"
#include "gs-graph-view.h"
#include "graph-source.h"
#include "graph-workloads.h"
#include "hostile-logs.h"
#include "gs-scope-tree-view.h"
#include "gs-run-dialog.h"
#include "gs-scrubber.h"
#include "gs-text-cell.h"
#include "gs-alive-item.h"
#include "gs-tensor-view.h"
#include "gs-thread-list.h"
#include "gs-timeline-view.h"
#include "gs-window.h"
#include "trace-file.h"
#include "views-test-util.h"

static char *log_path;
static GsApplication *app;

/* ---- the recorded run ----------------------------------------------------------------- */

#define STEPS 3

/* Three scoped steps: a tensor, a view of it, a clone (copy-on-write), a detach written in
 * place (a version bump), and a result moved out to the caller, who disposes it. */
static void record_run(const char *path) {
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  const int64_t shape[] = {4, 8}, flat[] = {32};
  for (int step = 0; step < STEPS; step++) {
    gs_scope scope = gs_scope_begin("step");
    gs_tensor x = gs_ones(GS_F32, shape, 2);
    gs_trace_name(x, "weights");
    gs_tensor v = gs_view(x, flat, 1);
    gs_tensor c = gs_clone(x);
    gs_tensor d = gs_detach(c);
    gs_add_scalar_(d, 1.0);
    gs_tensor kept = gs_move_to_outer(gs_add(v, gs_view(c, flat, 1)));
    gs_scope_end(scope);
    gs_dispose(kept);
    gs_trace_flush(); /* a chunk per step: a log cut in the last one keeps the others */
  }
  gs_trace_close();
}

/* The event list's rows name a module's child and an optimizer with its parameter count (they
 * were empty once): checked in whatever language the test runs in. */
static void test_module_and_optimizer_rows(void) {
  g_autofree char *path = g_build_filename(g_get_tmp_dir(), "gradscope-test-rows.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  gs_module net = gs_sequential_new((gs_module[]){gs_linear_new(2, 3, true, &rng), gs_relu_new()}, 2);
  gs_tensor params[2];
  const char *names[2];
  g_assert_cmpint(gs_module_named_parameters(net, params, names, 2), ==, 2);
  gs_optimizer sgd = gs_sgd_new(params, 2, NULL);
  gs_trace_close();
  gs_optimizer_dispose(sgd);
  gs_module_dispose(net);

  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) model = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  g_assert_no_error(error);
  gboolean saw_child = FALSE, saw_optimizer = FALSE;
  for (guint64 i = 0; i < gs_trace_model_n_events(model); i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(model, i);
    if (kind != GS_TRACE_MODULE_CHILD && kind != GS_TRACE_OPTIMIZER_CREATE)
      continue;
    g_autofree char *summary = gs_event_summary(model, i);
    if (kind == GS_TRACE_MODULE_CHILD) {
      g_assert_nonnull(strstr(summary, _("module")));
      g_assert_nonnull(strstr(summary, "=")); /* the child's handle */
      saw_child = TRUE;
    } else {
      g_autofree char *count = g_strdup_printf(ngettext("%u parameter", "%u parameters", 2), 2u);
      g_assert_nonnull(strstr(summary, _("optimizer")));
      g_assert_nonnull(strstr(summary, "SGD"));
      g_assert_nonnull(strstr(summary, count));
      /* In a parameter's life, the optimizer's creation reads as a sentence, not its kind. */
      gs_trace_event e;
      g_assert_true(gs_trace_model_event(model, i, &e));
      gs_tensor_handles first = {.id = params[0].id};
      g_autofree char *life = gs_tensor_life_describe(model, &first, &e);
      g_assert_nonnull(strstr(life, "SGD"));
      g_assert_cmpstr(life, !=, "optimizer_create");
      saw_optimizer = TRUE;
    }
  }
  g_assert_true(saw_child);
  g_assert_true(saw_optimizer);
  g_unlink(path);
}

typedef struct counts {
  guint64 events;
  guint64 scope_begins;
  guint64 clone_index; /* the first tensor create with origin clone (3) */
  guint64 inplace_index;
  guint64 step_mentions; /* events the search "weights" must find: at least the name event */
} counts;

static gboolean count_event(const gs_trace_event *e, const gs_trace_reader *reader,
                            gpointer data) {
  (void)reader;
  counts *c = data;
  if (gs_trace_kind_is_table(e->kind))
    return TRUE;
  if (e->kind == GS_TRACE_SCOPE_BEGIN)
    c->scope_begins++;
  if (e->kind == GS_TRACE_TENSOR_CREATE && e->origin == 3 && c->clone_index == G_MAXUINT64)
    c->clone_index = c->events;
  if (e->kind == GS_TRACE_INPLACE_WRITE && c->inplace_index == G_MAXUINT64)
    c->inplace_index = c->events;
  c->events++;
  return TRUE;
}

/* What the reader (not the model) says the log holds. */
static counts count_log(void) {
  counts c = {0, 0, G_MAXUINT64, G_MAXUINT64, 0};
  gs_trace_read_result result = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_trace_file_read(log_path, count_event, NULL, &c, &result, &error));
  g_assert_no_error(error);
  g_assert_null(result.damage);
  gs_trace_read_result_clear(&result);
  return c;
}

/* ---- helpers -------------------------------------------------------------------------- */

static gboolean page_has_content(gpointer data) {
  return g_strcmp0(gs_capture_page_get_state_name(data), "content") == 0;
}

static gboolean list_done(gpointer data) {
  return !gs_event_list_model_get_filtering(data);
}

static gboolean idle_done(gpointer data) {
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Lets GTK lay out and draw what changed. */
static void settle(void) {
  for (int i = 0; i < 6; i++) { /* past the stack's 200 ms crossfade */
    gboolean done = FALSE;
    g_timeout_add(60, idle_done, &done);
    while (!done)
      g_main_context_iteration(NULL, TRUE);
  }
}

static void save_screenshot(GtkWidget *window, const char *name) {
  settle();
  int width = gtk_widget_get_width(window), height = gtk_widget_get_height(window);
  g_assert_cmpint(width, >, 0);
  GdkPaintable *paintable = gtk_widget_paintable_new(window);
  /* While a live source grows, the window is re-laid out every frame, and a widget waiting
   * for its allocation draws nothing: try again on the next frames. */
  GskRenderNode *node = NULL;
  for (int attempt = 0; attempt < 50 && !node; attempt++) {
    if (attempt) {
      gboolean done = FALSE;
      g_timeout_add(20, idle_done, &done);
      while (!done)
        g_main_context_iteration(NULL, TRUE);
    }
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    node = gtk_snapshot_free_to_node(snapshot);
  }
  g_assert_nonnull(node);
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(window));
  GdkTexture *texture =
      gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename(dir && *dir ? dir : ".", name, NULL);
  g_mkdir_with_parents(dir && *dir ? dir : ".", 0755);
  g_assert_true(gdk_texture_save_to_png(texture, path));
  g_test_message("screenshot: %s", path);
  /* A real picture: the file exists and is not tiny. */
  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_size, >, 10000);
  g_object_unref(texture);
  gsk_render_node_unref(node);
  g_object_unref(paintable);
}

static GsWindow *new_window(void) {
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 860);
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

/* Opens the log in a new window and waits until it is shown. */
static GsCapturePage *open_log(GsWindow *window) {
  g_autoptr(GFile) file = g_file_new_for_path(log_path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(page_has_content, page);
  return page;
}

/* The program meson.build passes in the environment variable var, or NULL after marking the
 * test skipped (the executable run by hand). */
static const char *program_or_skip(const char *var) {
  const char *program = g_getenv(var);
  if (!program) {
    g_autofree char *why = g_strdup_printf("%s is not set", var);
    g_test_skip(why);
  }
  return program;
}

static guint n_rows(GsEventListView *list) {
  return g_list_model_get_n_items(G_LIST_MODEL(gs_event_list_view_get_list(list)));
}

/* The page's source has reached its end (its program ended, not broken off). */
static void assert_source_ended(GsCapturePage *page) {
  g_assert_cmpint(gs_trace_source_get_state(gs_capture_page_get_source(page)), ==,
                  GS_TRACE_SOURCE_ENDED);
}

/* The page's log has more than 100 events, and its event list a row for every one. */
static void assert_all_listed(GsCapturePage *page) {
  guint64 n = gs_trace_model_n_events(gs_capture_page_get_model(page));
  g_assert_cmpuint(n, >, 100);
  g_assert_cmpuint(n_rows(gs_capture_page_get_event_list(page)), ==, n);
}

/* ---- tests ---------------------------------------------------------------------------- */

static gboolean page_loaded(gpointer data) {
  return gs_capture_page_get_model(data) && !gs_capture_page_get_busy(data);
}

/* The unusual-shape log h at scale, written as dir/file_name; its path (newly allocated). */
static char *write_hostile_log(const hostile_log *h, double scale, const char *dir,
                               const char *file_name) {
  tw_log log = {0};
  h->build(&log, scale);
  char *path = g_build_filename(dir, file_name, NULL);
  g_assert_true(g_file_set_contents(path, (const char *)log.data, (gssize)log.len, NULL));
  tw_free(&log);
  return path;
}

static const hostile_log *hostile_log_named(const char *name) {
  const hostile_log *h = hostile_logs;
  while (h->name && !g_str_equal(h->name, name))
    h++;
  g_assert_nonnull(h->name);
  return h;
}

/* The event list taking a model in steps: the column view has 40 rows, then 40 more a step,
 * then all; the list model has every row from the start; the plain set_model gives all at
 * once again. */
static void test_event_list_rows_in_steps(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-steps-ui-XXXXXX", NULL);
  /* 1,000 threads, 3,001 events */
  g_autofree char *path = write_hostile_log(hostile_log_named("many-threads"), 0.01, dir,
                                            "steps.gst");
  g_autoptr(gs_trace_model) model = gs_trace_model_load_file(path, NULL, NULL, NULL, NULL);
  g_assert_nonnull(model);
  guint n = (guint)gs_trace_model_n_events(model);
  g_assert_cmpuint(n, >, 240);
  GsEventListView *list = GS_EVENT_LIST_VIEW(gs_event_list_view_new());
  GtkWidget *window = gtk_window_new();
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(list));
  gtk_window_present(GTK_WINDOW(window));
  GListModel *shown = G_LIST_MODEL(gtk_column_view_get_model(
      GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(list), GTK_TYPE_COLUMN_VIEW))));
  gs_event_list_view_set_model_in_steps(list, model);
  g_assert_cmpuint(n_rows(list), ==, n);
  g_assert_cmpuint(g_list_model_get_n_items(shown), ==, 40);
  guint steps = 0;
  while (!gs_event_list_view_step(list)) {
    steps++;
    g_assert_cmpuint(g_list_model_get_n_items(shown), ==, 40 * (steps + 1));
  }
  g_assert_cmpuint(steps, ==, 4);
  g_assert_cmpuint(g_list_model_get_n_items(shown), ==, n);
  g_assert_true(gs_event_list_view_step(list)); /* done stays done */
  /* Halfway through steps, a plain set_model shows everything. */
  gs_event_list_view_set_model(list, NULL);
  gs_event_list_view_set_model_in_steps(list, model);
  g_assert_false(gs_event_list_view_step(list));
  gs_event_list_view_set_model(list, model);
  g_assert_cmpuint(g_list_model_get_n_items(shown), ==, n);
  gtk_window_destroy(GTK_WINDOW(window));
  g_unlink(path);
  g_rmdir(dir);
}

/* The event list's Thread column (4 digits wide) widens to the log's longest thread number:
 * 10,000 threads are numbered up to 5 digits. */
static int thread_column_width(GsCapturePage *page) {
  GtkWidget *list = views_test_find(GTK_WIDGET(page), GS_TYPE_EVENT_LIST_VIEW);
  GtkColumnView *cv = GTK_COLUMN_VIEW(views_test_find(list, GTK_TYPE_COLUMN_VIEW));
  GListModel *columns = gtk_column_view_get_columns(cv);
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) c = g_list_model_get_item(columns, i);
    if (g_strcmp0(gtk_column_view_column_get_title(c), "Thread") == 0)
      return gtk_column_view_column_get_fixed_width(c);
  }
  g_assert_not_reached();
}

static void test_thread_column_fits_numbers(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-threads-ui-XXXXXX", NULL);
  GsWindow *window = new_window();
  int width[2];
  const double scales[2] = {0.0005, 0.1}; /* 50 and 10,000 threads */
  for (int k = 0; k < 2; k++) {
    g_autofree char *name = g_strdup_printf("threads-%d.gst", k);
    g_autofree char *path =
        write_hostile_log(hostile_log_named("many-threads"), scales[k], dir, name);
    g_autoptr(GFile) file = g_file_new_for_path(path);
    gs_window_open_file(window, file, FALSE);
    GsCapturePage *page = gs_window_get_current_page(window);
    views_test_wait_for(page_loaded, page);
    const GArray *threads = gs_trace_model_threads(gs_capture_page_get_model(page));
    g_test_message("%u threads, the last %u: column %d px", threads->len,
                   g_array_index(threads, guint32, threads->len - 1), thread_column_width(page));
    width[k] = thread_column_width(page);
    g_unlink(path);
  }
  g_assert_cmpint(width[0], ==, 56);
  g_assert_cmpint(width[1], >, width[0]);
  gtk_window_destroy(GTK_WINDOW(window));
  g_rmdir(dir);
}

/* A file's model goes to the views one a turn of the main loop (so a big log's first look
 * costs no single long freeze): until the last has it the page says "loading", is busy and
 * has no model; then every view shows it. A window closed in between frees it all (ASan). */
typedef struct {
  GsCapturePage *page;
  GsWindow *window;
  char *state;      /* the page's state just after the model arrived */
  gboolean had_model;
  gboolean busy;
} adopt_watch;

static void on_loaded_watch(adopt_watch *w) {
  w->state = g_strdup(gs_capture_page_get_state_name(w->page));
  w->had_model = gs_capture_page_get_model(w->page) != NULL;
  w->busy = gs_capture_page_get_busy(w->page);
  if (w->window) {
    gtk_window_destroy(GTK_WINDOW(w->window));
    w->window = NULL;
  }
}

static GsCapturePage *open_watched(adopt_watch *w, gboolean close_at_once) {
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(log_path);
  gs_window_open_file(window, file, FALSE);
  w->page = gs_window_get_current_page(window);
  w->window = close_at_once ? window : NULL;
  g_assert_nonnull(w->page);
  /* Connected after the page's own handler: runs once the page took the model. */
  g_signal_connect_swapped(gs_capture_page_get_source(w->page), "loaded",
                           G_CALLBACK(on_loaded_watch), w);
  return close_at_once ? NULL : w->page;
}

static gboolean watch_fired(gpointer data) {
  return ((adopt_watch *)data)->state != NULL;
}

static void test_views_take_model_in_turns(void) {
  adopt_watch w = {0};
  GsCapturePage *page = open_watched(&w, FALSE);
  views_test_wait_for(watch_fired, &w);
  g_assert_cmpstr(w.state, ==, "loading");
  g_assert_false(w.had_model);
  g_assert_true(w.busy); /* the tab's spinner turns on until the views have it */
  views_test_wait_for(page_has_content, page);
  g_assert_false(gs_capture_page_get_busy(page));
  gs_trace_model *model = gs_capture_page_get_model(page);
  g_assert_nonnull(model);
  guint64 n = gs_trace_model_n_events(model);
  g_assert_cmpuint(n_rows(gs_capture_page_get_event_list(page)), ==, n);
  g_assert_cmpuint(gs_scrubber_get_position(gs_capture_page_get_scrubber(page)), ==, n - 1);
  gtk_window_destroy(GTK_WINDOW(gtk_widget_get_root(GTK_WIDGET(page))));
  g_free(w.state);

  /* Closed while the views take it. */
  adopt_watch closed = {0};
  open_watched(&closed, TRUE);
  views_test_wait_for(watch_fired, &closed);
  g_assert_cmpstr(closed.state, ==, "loading");
  g_assert_null(closed.window);
  for (int i = 0; i < 20; i++)
    g_main_context_iteration(NULL, FALSE);
  g_free(closed.state);
}

/* Every log of an unusual shape (issue 22), small: it opens, the views show it, and the
 * status line tells what the model stepped over in the nonsensical ones and nothing in the
 * others. */
static void test_hostile_logs(void) {
  g_autofree char *dir = g_dir_make_tmp("gs-hostile-ui-XXXXXX", NULL);
  GsWindow *window = new_window();
  for (const hostile_log *h = hostile_logs; h->name; h++) {
    g_autofree char *name = g_strconcat(h->name, ".gst", NULL);
    g_autofree char *path = write_hostile_log(h, 0.002, dir, name);
    g_autoptr(GFile) file = g_file_new_for_path(path);
    gs_window_open_file(window, file, FALSE);
    GsCapturePage *page = gs_window_get_current_page(window);
    g_assert_nonnull(page);
    views_test_wait_for(page_loaded, page);
    gs_trace_model *model = gs_capture_page_get_model(page);
    g_assert_nonnull(model);
    if (gs_trace_model_n_events(model) == 0) /* header or strings only: one rule everywhere */
      g_assert_cmpstr(gs_capture_page_get_state_name(page), ==, "waiting");
    else
      g_assert_cmpstr(gs_capture_page_get_state_name(page), ==, "content");
    guint64 warnings = gs_trace_model_head(model)->n_warnings;
    const char *status = gs_capture_page_get_status(page);
    g_test_message("%s: %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " warnings: %s",
                   h->name, gs_trace_model_n_events(model), warnings, status);
    gboolean nonsense = g_str_has_prefix(h->name, "scope-") && g_str_has_suffix(h->name, "-outer");
    if (nonsense || g_str_equal(h->name, "cycles-everywhere")) {
      g_assert_cmpuint(warnings, >, 0);
      g_assert_nonnull(strstr(status, "inconsistenc"));
      g_assert_nonnull(strstr(status, "names"));
    } else {
      g_assert_cmpuint(warnings, ==, 0);
      g_assert_null(strstr(status, "inconsistenc"));
    }
    if (g_str_equal(h->name, "long-name")) {
      /* The 64 KB name reaches no label whole: each row's summary and sentence shows its
       * start and how much was cut (Pango shapes a label's whole text, ellipsized or not). */
      for (guint64 i = 0; i < gs_trace_model_n_events(model); i++) {
        g_autofree char *summary = gs_event_summary(model, i);
        g_autofree char *sentence = gs_trace_model_explain(model, i);
        g_assert_cmpuint(strlen(summary), <, 4096);
        g_assert_cmpuint(strlen(sentence), <, 4096);
      }
      g_autofree char *mark = gs_trace_model_explain(model, gs_trace_model_n_events(model) - 1);
      g_assert_nonnull(strstr(mark, "abcdefghijklmnopqrstuvwxyz"));
      g_assert_nonnull(strstr(mark, "\xe2\x80\xa6"));
    }
    if (g_str_equal(h->name, "many-threads")) {
      /* The thread drop-down lists every thread, made on demand, and filters by one. */
      GtkDropDown *choice = NULL;
      GtkWidget *list = views_test_find(GTK_WIDGET(page), GS_TYPE_EVENT_LIST_VIEW);
      /* The event list has two drop-downs (kinds, threads): the threads' model says which. */
      GPtrArray *stack = g_ptr_array_new();
      g_ptr_array_add(stack, list);
      while (stack->len && !choice) {
        GtkWidget *w = g_ptr_array_steal_index(stack, stack->len - 1);
        if (GTK_IS_DROP_DOWN(w) && GS_IS_THREAD_LIST(gtk_drop_down_get_model(GTK_DROP_DOWN(w))))
          choice = GTK_DROP_DOWN(w);
        for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
          g_ptr_array_add(stack, c);
      }
      g_ptr_array_unref(stack);
      g_assert_nonnull(choice);
      const GArray *threads = gs_trace_model_threads(model);
      GListModel *choices = gtk_drop_down_get_model(choice);
      g_assert_cmpuint(g_list_model_get_n_items(choices), ==, 1 + threads->len);
      guint32 second = g_array_index(threads, guint32, 1);
      g_autoptr(GtkStringObject) item = g_list_model_get_item(choices, 2);
      g_autofree char *want = g_strdup_printf(_("Thread %u"), second);
      g_assert_cmpstr(gtk_string_object_get_string(item), ==, want);
      gtk_drop_down_set_selected(choice, 2);
      GsEventListModel *rows = gs_event_list_view_get_list(GS_EVENT_LIST_VIEW(list));
      views_test_wait_for(list_done, rows);
      guint64 on_thread = 0;
      for (guint64 i = 0; i < gs_trace_model_n_events(model); i++)
        on_thread += gs_trace_model_thread_at(model, i) == second;
      g_assert_cmpuint(on_thread, >, 0);
      g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(rows)), ==, on_thread);
    }
    if (g_str_equal(h->name, "scope-self-outer")) {
      /* The scope that is its own outer stands at the top of the tree. */
      g_assert_cmpuint(gs_trace_model_n_scopes(model), ==, 1);
      g_assert_cmpuint(gs_trace_model_scope_at(model, 0)->outer, ==, 0);
      save_screenshot(GTK_WIDGET(window), "hostile-scope-self-outer.png");
    }
    adw_tab_view_close_page(gs_window_get_tab_view(window),
                            adw_tab_view_get_selected_page(gs_window_get_tab_view(window)));
    settle();
  }
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_empty_window(void) {
  GsWindow *window = new_window();
  g_assert_null(gs_window_get_current_page(window));
  g_assert_cmpint(adw_tab_view_get_n_pages(gs_window_get_tab_view(window)), ==, 0);
  /* The shortcuts window (gtk/help-overlay.ui in the resource) is attached, for Ctrl+?. */
  g_assert_nonnull(gtk_application_window_get_help_overlay(GTK_APPLICATION_WINDOW(window)));
  g_assert_true(g_action_group_has_action(G_ACTION_GROUP(window), "show-help-overlay"));
  save_screenshot(GTK_WIDGET(window), "empty.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_open_counts_rows(void) {
  counts want = count_log();
  GsWindow *window = new_window();
  GsCapturePage *page = open_log(window);
  gs_trace_model *model = gs_capture_page_get_model(page);
  g_assert_cmpuint(gs_trace_model_n_events(model), ==, want.events);
  GsEventListView *list = gs_capture_page_get_event_list(page);
  g_assert_cmpuint(n_rows(list), ==, want.events);

  /* Rows are made on demand: each one reads its event from the model. */
  GListModel *rows = G_LIST_MODEL(gs_event_list_view_get_list(list));
  g_autoptr(GObject) first = g_list_model_get_item(rows, 0);
  g_assert_nonnull(first);
  g_assert_null(g_list_model_get_item(rows, (guint)want.events));

  /* Opened at the end, like a live run: the scrubber is on the last event. */
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.events - 1);
  g_autofree char *where = g_strdup_printf(
      "event %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " · #%" G_GUINT64_FORMAT, want.events,
      want.events, gs_trace_model_seq_at(model, want.events - 1));
  g_assert_cmpstr(gs_scrubber_get_position_text(scrubber), ==, where);

  /* The recent captures list remembers it. */
  g_auto(GStrv) recent =
      g_settings_get_strv(gs_application_get_settings(app), "recent-files");
  g_autofree char *canonical = g_canonicalize_filename(log_path, NULL);
  g_assert_cmpstr(recent[0], ==, canonical);

  save_screenshot(GTK_WIDGET(window), "loaded.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

/* A log opened in a running program begins with a snapshot: the status line says where
 * recording began and how many objects were alive then. */
static void test_late_log_status(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-ui-late-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "late.gstrace", NULL);
  const int64_t shape[] = {4, 8};
  gs_tensor early = gs_ones(GS_F32, shape, 2); /* alive before the log begins */
  uint64_t before = gs_event_counter();
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor later = gs_add_scalar(early, 1.0);
  gs_dispose(later);
  gs_dispose(early);
  gs_trace_close();

  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(page_has_content, page);
  guint64 first = 0, objects = 0;
  g_assert_true(gs_trace_model_snapshot(gs_capture_page_get_model(page), &first, &objects, NULL));
  g_assert_cmpuint(first, ==, before + 1);
  g_assert_cmpuint(objects, >=, 1);
  g_autofree char *said = g_strdup_printf(
      objects == 1 ? "recording began at event %" G_GUINT64_FORMAT "; %" G_GUINT64_FORMAT
                     " object was alive then"
                   : "recording began at event %" G_GUINT64_FORMAT "; %" G_GUINT64_FORMAT
                     " objects were alive then",
      first, objects);
  g_assert_nonnull(views_test_find_label_containing(GTK_WIDGET(page), said));
  gtk_window_destroy(GTK_WINDOW(window));
  g_unlink(path);
  g_rmdir(dir);
}

static void test_filter(void) {
  counts want = count_log();
  GsWindow *window = new_window();
  GsCapturePage *page = open_log(window);
  GsEventListView *list = gs_capture_page_get_event_list(page);
  GsEventListModel *rows = gs_event_list_view_get_list(list);

  gs_event_list_view_set_kind_filter(list, GS_TRACE_SCOPE_BEGIN);
  views_test_wait_for(list_done, rows);
  g_assert_cmpuint(n_rows(list), ==, want.scope_begins);
  g_assert_cmpuint(want.scope_begins, ==, STEPS);
  for (guint i = 0; i < n_rows(list); i++)
    g_assert_cmpint(gs_trace_model_kind_at(gs_capture_page_get_model(page),
                                           gs_event_list_model_index_at(rows, i)),
                    ==, GS_TRACE_SCOPE_BEGIN);

  /* Search text on top of the kind: the name "weights" appears in name events only. */
  gs_event_list_view_set_kind_filter(list, 0);
  gs_event_list_view_set_search(list, "weights");
  views_test_wait_for(list_done, rows);
  guint named = n_rows(list);
  g_assert_cmpuint(named, >=, STEPS);
  g_assert_cmpuint(named, <, want.events);

  /* A handle that does not parse keeps the last good filter and says why. */
  gs_event_list_view_set_tensor_filter(list, 0);
  gs_event_list_view_set_search(list, "");
  views_test_wait_for(list_done, rows);
  g_assert_cmpuint(n_rows(list), ==, want.events);

  gs_event_list_view_set_kind_filter(list, GS_TRACE_INPLACE_WRITE);
  views_test_wait_for(list_done, rows);
  g_assert_cmpuint(n_rows(list), ==, STEPS);
  save_screenshot(GTK_WIDGET(window), "filtered.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

static gboolean graph_shown(gpointer data) {
  return gs_graph_view_get_layout(data) && !gs_graph_view_is_busy(data);
}

static gboolean graph_drawn(gpointer data) {
  const gs_layout *l = gs_graph_view_get_layout(data);
  return l && l->nodes->len > 0 && !gs_graph_view_is_busy(data);
}

/* The Graph page of a capture: an MLP step's graph at its backward, drawn in the window; a
 * click on a parameter shows its life in the details panel. */
static void test_graph_page(void) {
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) recorded = graph_workload_record(graph_workload_mlp_step, &dir);
  guint64 at = graph_workload_find_kind(recorded, GS_TRACE_BACKWARD_BEGIN, 0);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(page_has_content, page);

  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "graph");
  GsGraphView *graph = GS_GRAPH_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_VIEW));
  gs_scrubber_set_position(gs_capture_page_get_scrubber(page), at);
  views_test_wait_for(graph_shown, graph);
  const gs_layout *l = gs_graph_view_get_layout(graph);
  g_assert_cmpuint(l->nodes->len, >, 10);
  save_screenshot(GTK_WIDGET(window), "graph-page.png");

  /* A click on the first layer's weight (what the click gesture reports there). */
  gint weight = -1;
  for (guint i = 0; i < l->nodes->len && weight < 0; i++) {
    const gs_graph_item *item = &g_array_index(
        l->graph->items, gs_graph_item, g_array_index(l->nodes, gs_layout_node, i).item);
    if (item->kind == GS_GRAPH_LEAF && strstr(item->label, "weight"))
      weight = (gint)i;
  }
  g_assert_cmpint(weight, >=, 0);
  const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, weight);
  double wx, wy;
  gs_graph_view_layout_to_widget(graph, n->x, n->y, &wx, &wy);
  GtkGesture *click = NULL;
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(GTK_WIDGET(graph));
  for (guint i = 0; i < g_list_model_get_n_items(controllers) && !click; i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_GESTURE_CLICK(c))
      click = GTK_GESTURE(c);
  }
  g_assert_nonnull(click);
  g_signal_emit_by_name(click, "pressed", 1, wx, wy);
  guint64 tensor = g_array_index(l->graph->items, gs_graph_item, n->item).tensor;
  GsTensorView *details = GS_TENSOR_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TENSOR_VIEW));
  g_assert_cmpuint(gs_tensor_view_get_tensor(details), ==, tensor);
  save_screenshot(GTK_WIDGET(window), "graph-page-selected.png");

  /* ...and from the graph to the timeline: the Memory page bands that tensor's life, from
   * its first event to its disposal (or the end of the run). */
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  guint64 first, last;
  g_assert_true(gs_timeline_view_get_tensor_life(timeline, &first, &last));
  g_autoptr(gs_tensor_life) life =
      gs_trace_model_tensor_life(gs_capture_page_get_model(page), tensor);
  guint n_life = gs_tensor_life_len(life);
  g_assert_cmpuint(n_life, >, 0);
  g_assert_cmpuint(first, ==, gs_tensor_life_at(life, 0));
  guint64 n_events = gs_trace_model_n_events(gs_capture_page_get_model(page));
  g_assert_cmpuint(last, >=, first);
  g_assert_cmpuint(last, <, n_events);
  g_assert_true(last == n_events - 1 || gs_trace_model_kind_at(gs_capture_page_get_model(page),
                                                               last) == GS_TRACE_TENSOR_DISPOSE);
  adw_view_stack_set_visible_child_name(stack, "timeline");
  save_screenshot(GTK_WIDGET(window), "memory-tensor-life.png");

  /* At the run's last event the backward has freed the graph: the page draws the last pass's
   * graph instead of "no graph is alive", and says so. */
  adw_view_stack_set_visible_child_name(stack, "graph");
  guint64 end = gs_trace_model_n_events(gs_capture_page_get_model(page)) - 1;
  g_autoptr(gs_graph_source) at_end = gs_graph_source_new(gs_capture_page_get_model(page));
  g_autoptr(gs_graph) nothing = gs_graph_source_build(at_end, end);
  g_assert_cmpuint(nothing->items->len, ==, 0); /* truly nothing alive there */
  gs_scrubber_set_position(gs_capture_page_get_scrubber(page), G_MAXUINT64);
  views_test_wait_for(graph_drawn, graph);
  g_assert_cmpuint(gs_graph_view_get_layout(graph)->nodes->len, >, 10);
  g_assert_nonnull(
      views_test_find_label_containing(GTK_WIDGET(page), "the last pass (graph freed)"));
  save_screenshot(GTK_WIDGET(window), "graph-page-after-run.png");
  gtk_window_destroy(GTK_WINDOW(window));
  graph_workload_remove_dir(dir);
}

static gboolean source_over(gpointer data);

static gboolean is_button_showing(GtkWidget *w, gconstpointer icon) {
  return GTK_IS_BUTTON(w) && g_strcmp0(gtk_button_get_icon_name(GTK_BUTTON(w)), icon) == 0;
}

/* The button under root showing icon. */
static GtkWidget *find_button(GtkWidget *root, const char *icon) {
  return views_test_find_where(root, is_button_showing, icon);
}

static gboolean graph_has_nodes(gpointer data) {
  const gs_layout *l = gs_graph_view_get_layout(data);
  return l && l->nodes->len > 0;
}

/* The README's main job: the digits example run live in the inspector. Its steps' graphs show
 * while it runs; afterwards each backward pass's graph is one click away, and the memory
 * timeline, the graph and the details lead to one another. */
static void test_live_digits(void) {
  const char *digits = program_or_skip("GS_DIGITS_EXAMPLE");
  if (!digits)
    return;
  GsWindow *window = new_window();
  const char *argv[] = {digits, NULL};
  gs_window_spawn(window, argv, NULL);
  GsCapturePage *page = gs_window_get_current_page(window);
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "graph");
  GsGraphPane *pane = GS_GRAPH_PANE(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_PANE));
  GsGraphView *graph = gs_graph_pane_get_view(pane);
  gs_trace_model *model = gs_capture_page_get_model(page);

  /* Live: a step's graph is drawn while events still arrive (at the end of the run no graph
   * is alive, so a graph with nodes was drawn before the end). */
  views_test_wait_for(graph_has_nodes, graph);
  guint64 seen_at = gs_trace_model_n_events(gs_capture_page_get_model(page));
  save_screenshot(GTK_WIDGET(window), "live-digits-graph.png");
  adw_view_stack_set_visible_child_name(stack, "timeline");
  settle();
  save_screenshot(GTK_WIDGET(window), "live-digits-memory.png");
  views_test_wait_for(source_over, page);
  assert_source_ended(page);
  g_assert_cmpint(gs_trace_source_get_exit_status(gs_capture_page_get_source(page)), ==, 0);
  model = gs_capture_page_get_model(page);
  guint64 n = gs_trace_model_n_events(model);
  g_assert_cmpuint(seen_at, <, n);

  /* Every backward pass of the run is counted, in order. */
  g_autoptr(GArray) begins = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 i = 0; i < n; i++)
    if (gs_trace_model_kind_at(model, i) == GS_TRACE_BACKWARD_BEGIN)
      g_array_append_val(begins, i);
  g_assert_cmpuint(begins->len, >, 1000);
  g_assert_cmpuint(gs_graph_pane_get_n_passes(pane), ==, begins->len);

  /* Replayed: the graph of pass 100, as it starts. */
  adw_view_stack_set_visible_child_name(stack, "graph");
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  g_assert_true(gs_graph_pane_go_to_pass(pane, 100));
  g_assert_false(gs_graph_pane_go_to_pass(pane, begins->len + 1));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, g_array_index(begins, guint64, 99));
  g_assert_cmpuint(gs_graph_pane_get_pass(pane), ==, 100);
  /* The step's batch comes from the DataLoader, so the timeline counts it as batch data:
   * x (16, 64) f32 and y (16) i64. */
  gs_memory_column col;
  guint64 pass_100 = g_array_index(begins, guint64, 99);
  gs_trace_model_memory_columns(model, pass_100, pass_100, 1, FALSE, &col);
  g_assert_cmpuint(col.stack[GS_MEM_BATCH], ==, 16 * 64 * 4 + 16 * 8);
  views_test_wait_for(graph_shown, graph);
  const gs_layout *l = gs_graph_view_get_layout(graph);
  gboolean weight = FALSE, output = FALSE;
  guint saved = 0;
  for (guint i = 0; i < l->graph->items->len; i++) {
    const gs_graph_item *item = &g_array_index(l->graph->items, gs_graph_item, i);
    weight |= item->kind == GS_GRAPH_LEAF && strstr(item->label, "0.weight") != NULL;
    output |= item->kind == GS_GRAPH_OUTPUT;
    saved += item->kind == GS_GRAPH_SAVED;
  }
  g_assert_true(weight);
  g_assert_true(output);
  g_assert_cmpuint(saved, >, 0);
  save_screenshot(GTK_WIDGET(window), "digits-graph.png");

  /* From the timeline to the graph: a click in the memory timeline moves the scrubber, and
   * the Graph page shows that moment: here pass 200 as it starts. */
  adw_view_stack_set_visible_child_name(stack, "timeline");
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  settle();
  guint64 target = g_array_index(begins, guint64, 199);
  gs_timeline_view_set_viewport(timeline, target - 200, target + 200);
  settle();
  guint64 clicked = gs_timeline_view_click(timeline, gs_timeline_view_x_of(timeline, target));
  g_assert_cmpuint(clicked, ==, target);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, target);
  settle();
  save_screenshot(GTK_WIDGET(window), "digits-memory-zoomed.png");
  adw_view_stack_set_visible_child_name(stack, "graph");
  g_assert_cmpuint(gs_graph_pane_get_pass(pane), ==, 200);
  views_test_wait_for(graph_shown, graph);
  l = gs_graph_view_get_layout(graph);
  g_assert_cmpuint(l->nodes->len, >, 10);

  /* From the timeline's alive list to the graph: the activated tensor is highlighted there
   * when it is drawn, and its life opens in the details. */
  GListModel *alive = gs_timeline_view_get_alive(timeline);
  GtkWidget *columns = views_test_find(GTK_WIDGET(timeline), GTK_TYPE_COLUMN_VIEW);
  GsTensorView *details = GS_TENSOR_VIEW(gs_capture_page_get_tensor_view(page));
  gboolean highlighted = FALSE;
  for (guint i = 0; i < g_list_model_get_n_items(alive) && !highlighted; i++) {
    g_autoptr(GsAliveItem) item = g_list_model_get_item(alive, i);
    g_signal_emit_by_name(columns, "activate",
                          views_test_alive_row(GTK_WIDGET(timeline), gs_alive_item_get_id(item)));
    g_assert_cmpuint(gs_tensor_view_get_tensor(details), ==, gs_alive_item_get_id(item));
    gint selected = gs_graph_view_get_selected(graph);
    if (selected >= 0) {
      const gs_graph_item *gi = &g_array_index(l->graph->items, gs_graph_item, selected);
      g_assert_cmpuint(gi->tensor, ==, gs_alive_item_get_id(item));
      highlighted = TRUE;
    }
  }
  g_assert_true(highlighted);

  /* The header's previous and next buttons move by one pass; at the end of the run no graph
   * is alive, so the last pass's graph is drawn, and the status says so. */
  GtkWidget *previous = find_button(GTK_WIDGET(pane), "go-previous-symbolic");
  GtkWidget *next = find_button(GTK_WIDGET(pane), "go-next-symbolic");
  g_signal_emit_by_name(previous, "clicked");
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, g_array_index(begins, guint64, 198));
  gs_scrubber_step(scrubber, 5); /* inside pass 199: previous goes to its start */
  g_signal_emit_by_name(previous, "clicked");
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, g_array_index(begins, guint64, 198));
  g_signal_emit_by_name(next, "clicked");
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, g_array_index(begins, guint64, 199));
  gs_scrubber_set_position(scrubber, n - 1);
  g_assert_cmpuint(gs_graph_pane_get_pass(pane), ==, begins->len);
  views_test_wait_for(graph_drawn, graph);
  g_assert_cmpuint(gs_graph_view_get_layout(graph)->nodes->len, >, 0);
  g_assert_nonnull(
      views_test_find_label_containing(GTK_WIDGET(pane), "the last pass (graph freed)"));
  save_screenshot(GTK_WIDGET(window), "digits-graph-end.png");

  /* By category over the whole run: the standardised dataset is data (449 KiB of pixels,
   * 14 KiB of labels), there at the click, and listed as data among what is alive. */
  adw_view_stack_set_visible_child_name(stack, "timeline");
  gs_timeline_view_set_by_scope(timeline, FALSE);
  gs_timeline_view_set_viewport(timeline, 0, n - 1);
  settle();
  clicked = gs_timeline_view_click(timeline, gs_timeline_view_x_of(timeline, target));
  gs_trace_model_memory_columns(model, clicked, clicked, 1, FALSE, &col);
  g_assert_cmpuint(col.stack[GS_MEM_DATA], ==, 1797 * 64 * 4 + 1797 * 8);
  GListModel *listed = gs_timeline_view_get_alive(timeline);
  guint data_rows = 0;
  for (guint i = 0; i < g_list_model_get_n_items(listed); i++) {
    g_autoptr(GsAliveItem) item = g_list_model_get_item(listed, i);
    data_rows += g_strcmp0(gs_alive_item_get_category(item),
                           gs_mem_category_name(GS_MEM_DATA)) == 0;
  }
  g_assert_cmpuint(data_rows, >=, 3); /* the dataset and the two tensors it reads */
  settle();
  save_screenshot(GTK_WIDGET(window), "digits-memory-by-category.png");
  gs_timeline_view_set_by_scope(timeline, TRUE);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* The word-language graph of backward pass `pass` in page: the packed LSTM drawn as one node
 * that folds its time steps, labelled with the steps and the sequences the first and last
 * step ran over (GS_TRACE_VALUES recorded the packed batch sizes), and the scrubber's
 * sentence at that node says what each step ran. Saves the page, then zoomed on the node. */
static void check_word_language_graph(GsWindow *window, GsCapturePage *page, guint pass,
                                      const char *name) {
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "graph");
  GsGraphPane *pane = GS_GRAPH_PANE(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_PANE));
  GsGraphView *graph = gs_graph_pane_get_view(pane);
  g_assert_true(gs_graph_pane_go_to_pass(pane, pass));
  views_test_wait_for(graph_drawn, graph);
  const gs_layout *l = gs_graph_view_get_layout(graph);
  const gs_graph_item *lstm = NULL;
  guint lstm_index = 0;
  for (guint i = 0; i < l->graph->items->len && !lstm; i++) {
    const gs_graph_item *item = &g_array_index(l->graph->items, gs_graph_item, i);
    if (item->kind == GS_GRAPH_OP && g_str_has_prefix(item->label, "LSTMRecurrenceBackward"))
      lstm = item, lstm_index = i;
  }
  g_assert_nonnull(lstm);
  g_assert_nonnull(strstr(lstm->label, "\nLSTM step \xc3\x97"));
  g_assert_nonnull(strstr(lstm->label, " \xe2\x86\x92 "));
  g_assert_true(g_str_has_suffix(lstm->label, " sequences"));
  g_autofree char *whole = g_strdup_printf("%s.png", name);
  save_screenshot(GTK_WIDGET(window), whole);
  /* Zoomed in on the LSTM node, so its label can be read in the picture. */
  const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, lstm_index);
  double wx, wy;
  gs_graph_view_layout_to_widget(graph, n->x, n->y, &wx, &wy);
  gs_graph_view_zoom_at(graph, 3.0, wx, wy);
  g_autofree char *zoomed = g_strdup_printf("%s-zoomed.png", name);
  save_screenshot(GTK_WIDGET(window), zoomed);
  gs_trace_model *model = gs_capture_page_get_model(page);
  guint64 position = gs_scrubber_get_position(gs_capture_page_get_scrubber(page));
  const gs_replay_node *node = gs_replay_node_get(gs_trace_model_seek(model, position), lstm->id);
  if (!node)
    g_error("the graph's LSTM node #%" G_GUINT64_FORMAT " is not alive at its pass", lstm->id);
  guint64 created = gs_trace_model_find_seq(model, node->create_seq);
  g_autofree char *sentence = gs_trace_model_explain(model, created);
  g_assert_nonnull(strstr(sentence, "LSTM step"));
  g_assert_nonnull(strstr(sentence, " ran 32 of 32 sequences"));
  /* The Memory page by category at that moment: the step's batch data and the LSTM's saved
   * work rows (saved for backward), the per-step working set. */
  adw_view_stack_set_visible_child_name(stack, "timeline");
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  gs_timeline_view_set_by_scope(timeline, FALSE);
  gs_memory_column col;
  gs_trace_model_memory_columns(model, position, position, 1, FALSE, &col);
  g_assert_cmpuint(col.stack[GS_MEM_SAVED], >, 0);
  g_assert_cmpuint(col.stack[GS_MEM_BATCH], >, 0);
  g_autofree char *memory = g_strdup_printf("%s-memory.png", name);
  save_screenshot(GTK_WIDGET(window), memory);
  gs_timeline_view_set_by_scope(timeline, TRUE);
}

static const char *const WORD_LANGUAGE_SHORT[] = {"--epochs", "1", "--train-words", "60",
                                                  "--test-words", "10"};

/* The second demo as the README runs it: examples/word-language live in the inspector. */
static void test_live_word_language(void) {
  const char *program = program_or_skip("GS_WORD_LANGUAGE_EXAMPLE");
  if (!program)
    return;
  g_setenv("GS_TRACE_VALUES", "64", TRUE); /* for the child: this process read it at load */
  GsWindow *window = new_window();
  const char *argv[] = {program, WORD_LANGUAGE_SHORT[0], WORD_LANGUAGE_SHORT[1],
                        WORD_LANGUAGE_SHORT[2], WORD_LANGUAGE_SHORT[3], WORD_LANGUAGE_SHORT[4],
                        WORD_LANGUAGE_SHORT[5], NULL};
  gs_window_spawn(window, argv, NULL);
  g_unsetenv("GS_TRACE_VALUES");
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(source_over, page);
  g_assert_cmpint(gs_trace_source_get_exit_status(gs_capture_page_get_source(page)), ==, 0);
  check_word_language_graph(window, page, 3, "word-language-live-graph");
  gtk_window_destroy(GTK_WINDOW(window));
}

/* A run recorded with GS_TRACE and opened afterwards shows the same. */
static void test_recorded_word_language(void) {
  const char *program = program_or_skip("GS_WORD_LANGUAGE_EXAMPLE");
  if (!program)
    return;
  g_autofree char *dir = g_dir_make_tmp("gradscope-word-language-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "GS_TRACE", path, TRUE);
  env = g_environ_setenv(env, "GS_TRACE_VALUES", "64", TRUE);
  const char *argv[] = {program, WORD_LANGUAGE_SHORT[0], WORD_LANGUAGE_SHORT[1],
                        WORD_LANGUAGE_SHORT[2], WORD_LANGUAGE_SHORT[3], WORD_LANGUAGE_SHORT[4],
                        WORD_LANGUAGE_SHORT[5], NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                             NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(page_has_content, page);
  check_word_language_graph(window, page, 5, "word-language-recorded-graph");
  gtk_window_destroy(GTK_WINDOW(window));
  g_remove(path);
  g_rmdir(dir);
}

/* The filter entries read handles as the engine writes them; composites print without their
 * marker bit, as the engine's messages name them. */
static void test_parse_handle(void) {
  guint64 id = 99;
  g_autofree char *message = NULL;
  g_assert_true(gs_parse_handle("#0.1", &id, NULL));
  g_assert_cmpuint(id, ==, G_GUINT64_CONSTANT(1) << 32);
  g_assert_true(gs_parse_handle(" 12.3 ", &id, NULL));
  g_assert_cmpuint(id, ==, 12 | (G_GUINT64_CONSTANT(3) << 32));
  g_assert_true(gs_parse_handle("#7", &id, NULL));
  g_assert_cmpuint(id, ==, 7 | (G_GUINT64_CONSTANT(1) << 32));
  g_assert_true(gs_parse_handle("", &id, NULL));
  g_assert_cmpuint(id, ==, 0);
  g_assert_false(gs_parse_handle("#4.0", &id, &message));
  g_assert_nonnull(strstr(message, "#4.0"));
  g_clear_pointer(&message, g_free);
  g_assert_false(gs_parse_handle("weights", &id, &message));
  g_assert_nonnull(strstr(message, "#12.1"));
  char buf[32];
  g_assert_cmpstr(gs_format_handle(12 | (G_GUINT64_CONSTANT(3) << 32), buf, sizeof buf), ==,
                  "#12.3");
  g_assert_cmpstr(gs_format_handle(0x80000002u | (G_GUINT64_CONSTANT(1) << 32), buf, sizeof buf),
                  ==, "#2.1");
}

static void collect_site_cells(GtkWidget *root, GPtrArray *out) {
  if (!gtk_widget_get_mapped(root))
    return;
  if (GS_IS_TEXT_CELL(root) && strstr(gs_text_cell_get_text(GS_TEXT_CELL(root)), ".c:"))
    g_ptr_array_add(out, root);
  for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c))
    collect_site_cells(c, out);
}

/* At the window's default size, the Where column shows each site's file:line whole (the
 * function after it may be cut): in English "file.c:52 in record_run", in Chinese the
 * translation keeps file:line first. */
static void test_where_column(void) {
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800); /* the schema's default */
  gtk_window_present(GTK_WINDOW(window));
  GsCapturePage *page = open_log(window);
  (void)page;
  settle();
  /* The list is not cut on either side: the page gives it the room it needs. */
  GtkWidget *list = GTK_WIDGET(gs_capture_page_get_event_list(page));
  int min_width;
  gtk_widget_measure(list, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
  g_test_message("event list: %d px, at least %d px", gtk_widget_get_width(list), min_width);
  GtkWidget *paned = gtk_widget_get_ancestor(list, GTK_TYPE_PANED);
  g_test_message("its pane: %d px", gtk_paned_get_position(GTK_PANED(paned)));
  g_assert_cmpint(min_width, <=, gtk_paned_get_position(GTK_PANED(paned)));
  g_autoptr(GPtrArray) cells = g_ptr_array_new();
  collect_site_cells(GTK_WIDGET(window), cells);
  g_assert_cmpuint(cells->len, >, 0);
  for (guint i = 0; i < cells->len; i++) {
    GtkWidget *cell = cells->pdata[i];
    const char *text = gs_text_cell_get_text(GS_TEXT_CELL(cell));
    const char *colon = strstr(text, ".c:");
    const char *end = colon + 3;
    while (g_ascii_isdigit(*end))
      end++;
    /* file:line is the text's start */
    g_assert_true(colon - text < 40 && !memchr(text, ' ', (gsize)(colon - text)));
    g_autofree char *file_line = g_strndup(text, (gsize)(end - text));
    g_autofree char *shown = g_strconcat(file_line, "…", NULL); /* the function is cut */
    PangoLayout *layout = gtk_widget_create_pango_layout(cell, shown);
    int width;
    pango_layout_get_pixel_size(layout, &width, NULL);
    g_object_unref(layout);
    if (i == 0)
      g_test_message("Where: \"%s\": %d px for \"%s\" (%d px)", text,
                     gtk_widget_get_width(cell), file_line, width);
    g_assert_cmpint(gtk_widget_get_width(cell), >=, width);
  }
  const char *language = g_getenv("LANGUAGE");
  save_screenshot(GTK_WIDGET(window), language && g_str_has_prefix(language, "zh")
                                          ? "where-column-zh_CN.png"
                                          : "where-column.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

/* The page's keys, as its shortcut controller takes them (views-test-util.c). */
static gboolean press_page_key(GsCapturePage *page, guint key, GdkModifierType mods) {
  return views_test_press_key(GTK_WIDGET(page), key, mods);
}

/* The arrows scrub wherever the focus is (after a click on a row, say), except in a text
 * field; Ctrl+1/2/3 show the Events, Graph and Memory pages. */
static void test_page_keys(void) {
  GsWindow *window = new_window();
  GsCapturePage *page = open_log(window);
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  GsEventListView *list = gs_capture_page_get_event_list(page);
  gs_scrubber_set_position(scrubber, 2);
  GtkWidget *columns = views_test_find(GTK_WIDGET(list), GTK_TYPE_COLUMN_VIEW);
  gtk_widget_grab_focus(columns);
  g_assert_true(press_page_key(page, GDK_KEY_Right, 0));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 3);
  g_assert_true(press_page_key(page, GDK_KEY_Left, 0));
  g_assert_true(press_page_key(page, GDK_KEY_Left, 0));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 1);
  g_assert_true(press_page_key(page, GDK_KEY_End, 0));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==,
                   gs_trace_model_n_events(gs_capture_page_get_model(page)) - 1);
  /* In the search field the arrows move the cursor, not the scrubber. */
  GtkWidget *search = views_test_find(GTK_WIDGET(list), GTK_TYPE_SEARCH_ENTRY);
  gtk_widget_grab_focus(search);
  g_assert_false(press_page_key(page, GDK_KEY_Home, 0));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), !=, 0);
  /* The graph keeps its arrows for panning; Home still goes to the first event. */
  GtkWidget *graph = views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_VIEW);
  adw_view_stack_set_visible_child_name(
      ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK)), "graph");
  g_assert_true(gtk_widget_grab_focus(graph));
  g_assert_false(press_page_key(page, GDK_KEY_Right, 0));
  g_assert_true(press_page_key(page, GDK_KEY_Home, 0));
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 0);

  GtkWidget *stack = views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK);
  g_assert_true(press_page_key(page, GDK_KEY_2, GDK_CONTROL_MASK));
  g_assert_cmpstr(adw_view_stack_get_visible_child_name(ADW_VIEW_STACK(stack)), ==, "graph");
  g_assert_true(press_page_key(page, GDK_KEY_3, GDK_CONTROL_MASK));
  g_assert_cmpstr(adw_view_stack_get_visible_child_name(ADW_VIEW_STACK(stack)), ==, "timeline");
  g_assert_true(press_page_key(page, GDK_KEY_1, GDK_CONTROL_MASK));
  g_assert_cmpstr(adw_view_stack_get_visible_child_name(ADW_VIEW_STACK(stack)), ==, "events");
  gtk_window_destroy(GTK_WINDOW(window));
}

/* From a row of the list, Ctrl+2 and Ctrl+3 leave the arrows, Home and End scrubbing: the
 * focus does not land in the Graph page's "Backward pass" field (the first field of that
 * page, where the view stack would put it). */
static void test_page_keys_keep_scrubbing(void) {
  /* One backward pass: the Graph page's Previous and Next are off, its field is its first
   * focusable widget. */
  g_autofree char *path =
      g_build_filename(g_get_tmp_dir(), "gradscope-test-page-keys.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_tensor a = gs_ones(GS_F32, (int64_t[]){3}, 1);
  gs_set_requires_grad(a, true);
  gs_tensor b = gs_mul(a, a);
  gs_tensor loss = gs_sum(b, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {a, b, loss};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
  gs_trace_close();
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(page_has_content, page);
  views_test_settle(GTK_WIDGET(window));
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  GtkWidget *columns =
      views_test_find(GTK_WIDGET(gs_capture_page_get_event_list(page)), GTK_TYPE_COLUMN_VIEW);
  GtkWidget *stack = views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK);
  static const char *const pages[] = {"graph", "timeline", "events", "graph"};
  guint64 last = gs_trace_model_n_events(gs_capture_page_get_model(page)) - 1;
  for (guint i = 0; i < 2 * G_N_ELEMENTS(pages); i++) {
    /* at the start (no backward pass before: the pane's Previous button is off) and at the end */
    gs_scrubber_set_position(scrubber, i < G_N_ELEMENTS(pages) ? 0 : last);
    gtk_widget_grab_focus(columns);
    gs_scrubber_set_position(scrubber, 2);
    const char *name = pages[i % G_N_ELEMENTS(pages)];
    guint key = !strcmp(name, "graph") ? GDK_KEY_2 : !strcmp(name, "timeline") ? GDK_KEY_3
                                                                              : GDK_KEY_1;
    g_assert_true(press_page_key(page, key, GDK_CONTROL_MASK));
    g_assert_cmpstr(adw_view_stack_get_visible_child_name(ADW_VIEW_STACK(stack)), ==, name);
    GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
    g_test_message("after Ctrl+%c: focus on %s", (char)gdk_keyval_to_unicode(key),
                   focus ? G_OBJECT_TYPE_NAME(focus) : "nothing");
    g_assert_true(press_page_key(page, GDK_KEY_Right, 0));
    g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 3);
    g_assert_true(press_page_key(page, GDK_KEY_Home, 0));
    g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 0);
    g_assert_true(press_page_key(page, GDK_KEY_End, 0));
    g_assert_cmpuint(gs_scrubber_get_position(scrubber), !=, 0);
  }
  gtk_window_destroy(GTK_WINDOW(window));
  g_unlink(path);
}

static void test_scrub(void) {
  counts want = count_log();
  g_assert_cmpuint(want.clone_index, !=, G_MAXUINT64);
  GsWindow *window = new_window();
  GsCapturePage *page = open_log(window);
  gs_trace_model *model = gs_capture_page_get_model(page);
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  GsEventListView *list = gs_capture_page_get_event_list(page);

  /* To the clone: the sentence is the model's explanation of it, and names the clone. */
  gs_scrubber_set_position(scrubber, want.clone_index);
  g_autofree char *explained = gs_trace_model_explain(model, want.clone_index);
  g_assert_cmpstr(gs_scrubber_get_explanation(scrubber), ==, explained);
  g_assert_nonnull(strstr(explained, "clone"));
  /* Every view followed. */
  g_assert_cmpuint(gs_scope_tree_view_get_position(
                       GS_SCOPE_TREE_VIEW(gs_capture_page_get_scope_tree(page))),
                   ==, want.clone_index);
  g_assert_cmpuint(gs_event_list_view_get_selected_index(list), ==, want.clone_index);
  /* Step one forward with the keys' action, then back. */
  gs_scrubber_step(scrubber, 1);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.clone_index + 1);
  gs_scrubber_step(scrubber, -1);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.clone_index);
  g_autofree char *where = g_strdup_printf(
      "event %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " · #%" G_GUINT64_FORMAT,
      want.clone_index + 1, want.events, gs_trace_model_seq_at(model, want.clone_index));
  g_assert_cmpstr(gs_scrubber_get_position_text(scrubber), ==, where);
  /* A click on the clone's row (what the selection does for a click): the scrubber goes
   * there and the details panel shows the clone. */
  gs_scrubber_set_position(scrubber, 0);
  GtkColumnView *columns = GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(list), GTK_TYPE_COLUMN_VIEW));
  GtkSelectionModel *selection = gtk_column_view_get_model(columns);
  guint row = gs_event_list_model_position_of(gs_event_list_view_get_list(list),
                                              want.clone_index);
  gtk_selection_model_select_item(selection, row, TRUE);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.clone_index);
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(model, want.clone_index, &e));
  GsTensorView *details = GS_TENSOR_VIEW(gs_capture_page_get_tensor_view(page));
  g_assert_cmpuint(gs_tensor_view_get_tensor(details), ==, e.tensor);
  save_screenshot(GTK_WIDGET(window), "scrubbed.png");

  /* The in-place write: explained with its version. */
  gs_scrubber_set_position(scrubber, want.inplace_index);
  g_autofree char *inplace = gs_trace_model_explain(model, want.inplace_index);
  g_assert_cmpstr(gs_scrubber_get_explanation(scrubber), ==, inplace);
  g_assert_nonnull(strstr(inplace, "version"));

  /* Clamped at both ends. */
  gs_scrubber_step(scrubber, -(gint64)want.events * 2);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, 0);
  gs_scrubber_set_position(scrubber, G_MAXUINT64);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.events - 1);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* The Memory page: a click in the timeline moves the scrubber there and lists what was
 * alive; a row of that list opens the tensor in the details panel. */
static void test_memory_timeline(void) {
  counts want = count_log();
  GsWindow *window = new_window();
  GsCapturePage *page = open_log(window);
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "timeline");
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  g_assert_nonnull(timeline);
  settle();
  guint64 first, last;
  gs_timeline_view_get_viewport(timeline, &first, &last);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(last, ==, want.events - 1);

  guint64 clicked =
      gs_timeline_view_click(timeline, gs_timeline_view_x_of(timeline, want.clone_index));
  g_assert_cmpuint(clicked, ==, want.clone_index);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, want.clone_index);
  GListModel *alive = gs_timeline_view_get_alive(timeline);
  g_assert_cmpuint(g_list_model_get_n_items(alive), >, 0);
  g_autoptr(GsAliveItem) item = g_list_model_get_item(alive, 0);
  GtkWidget *columns = views_test_find(GTK_WIDGET(timeline), GTK_TYPE_COLUMN_VIEW);
  g_signal_emit_by_name(columns, "activate",
                        views_test_alive_row(GTK_WIDGET(timeline), gs_alive_item_get_id(item)));
  GsTensorView *details = GS_TENSOR_VIEW(gs_capture_page_get_tensor_view(page));
  g_assert_cmpuint(gs_tensor_view_get_tensor(details), ==, gs_alive_item_get_id(item));
  settle();
  save_screenshot(GTK_WIDGET(window), "memory.png");
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_dark(void) {
  GsWindow *window = new_window();
  open_log(window);
  g_settings_set_enum(gs_application_get_settings(app), "color-scheme", 2);
  settle();
  g_assert_true(adw_style_manager_get_dark(adw_style_manager_get_default()));
  save_screenshot(GTK_WIDGET(window), "dark.png");
  g_settings_set_enum(gs_application_get_settings(app), "color-scheme", 1);
  settle();
  g_assert_false(adw_style_manager_get_dark(adw_style_manager_get_default()));
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_damaged_log_toast(void) {
  /* The log cut in the middle of its last chunk: what is whole opens, and a toast says so. */
  g_autofree char *contents = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(log_path, &contents, &len, NULL));
  g_autofree char *cut = g_strconcat(log_path, ".cut", NULL);
  g_assert_true(g_file_set_contents(cut, contents, (gssize)(len - 7), NULL));
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(cut);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(page_has_content, page);
  counts whole = count_log();
  guint64 kept = gs_trace_model_n_events(gs_capture_page_get_model(page));
  g_assert_cmpuint(kept, >, 0);
  g_assert_cmpuint(kept, <, whole.events);
  /* The source says the log was cut, and the page shows it (the window made it a toast). */
  GsTraceSource *source = gs_capture_page_get_source(page);
  g_assert_cmpint(gs_trace_source_get_state(source), ==, GS_TRACE_SOURCE_BROKEN);
  g_assert_cmpstr(gs_capture_page_get_subtitle(page), ==, gs_trace_source_get_message(source));
  g_assert_nonnull(strstr(gs_capture_page_get_subtitle(page), "chunk"));
  g_unlink(cut);
  gtk_window_destroy(GTK_WINDOW(window));
}

static gboolean source_over(gpointer data) {
  GsTraceSource *source = gs_capture_page_get_source(data);
  GsTraceSourceState state = gs_trace_source_get_state(source);
  return state == GS_TRACE_SOURCE_ENDED || state == GS_TRACE_SOURCE_BROKEN;
}

/* `gradscope-inspector -- PROGRAM`: the program runs with tracing pointed at the inspector;
 * its events arrive through the frame clock into the views, and its exit is reported. */
static void test_spawn(void) {
  const char *workload = program_or_skip("GS_CLI_WORKLOAD");
  if (!workload)
    return;
  /* As from the command line: the program starts before the window is shown. */
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 860);
  const char *argv[] = {workload, NULL};
  g_autofree char *cwd = g_get_current_dir();
  gs_window_spawn(window, argv, cwd);
  gtk_window_present(GTK_WINDOW(window));
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(source_over, page);
  views_test_wait_for(page_has_content, page);
  assert_source_ended(page);
  g_assert_cmpint(gs_trace_source_get_exit_status(gs_capture_page_get_source(page)), ==, 0);
  gs_trace_model *model = gs_capture_page_get_model(page);
  guint64 n = gs_trace_model_n_events(model);
  g_assert_cmpuint(n, >, 100);
  /* Every event reached the list, and the scrubber followed the live end. */
  g_assert_cmpuint(n_rows(gs_capture_page_get_event_list(page)), ==, n);
  g_assert_cmpuint(gs_scrubber_get_position(gs_capture_page_get_scrubber(page)), ==, n - 1);
  g_assert_cmpstr(gs_capture_page_get_title(page), ==, "cli-workload");
  save_screenshot(GTK_WIDGET(window), "spawned.png");
  /* ...and the list scrolled along: its last row is on screen. */
  GtkScrolledWindow *scroller = GTK_SCROLLED_WINDOW(
      views_test_find(GTK_WIDGET(gs_capture_page_get_event_list(page)), GTK_TYPE_SCROLLED_WINDOW));
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(scroller);
  double row = gtk_adjustment_get_upper(adj) / (double)n;
  g_assert_cmpfloat(gtk_adjustment_get_value(adj) + gtk_adjustment_get_page_size(adj), >=,
                    gtk_adjustment_get_upper(adj) - row);
  gtk_window_destroy(GTK_WINDOW(window));
}

static gboolean page_waiting(gpointer data) {
  return g_strcmp0(gs_capture_page_get_state_name(data), "waiting") == 0;
}

/* A program run in a tab that is then hidden behind another keeps being read: the hidden
 * page takes what arrives on a timer instead of frames. */
static void test_background_tab(void) {
  const char *workload = program_or_skip("GS_CLI_WORKLOAD");
  if (!workload)
    return;
  GsWindow *window = new_window();
  const char *argv[] = {workload, NULL};
  gs_window_spawn(window, argv, NULL);
  GsCapturePage *running = gs_window_get_current_page(window);
  g_autoptr(GFile) file = g_file_new_for_path(log_path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *front = gs_window_get_current_page(window);
  g_assert_true(front != running);
  views_test_wait_for(page_has_content, front);
  g_assert_false(gtk_widget_get_mapped(GTK_WIDGET(running)));

  views_test_wait_for(source_over, running);
  assert_source_ended(running);
  assert_all_listed(running);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* Listen for Programs: the page waits on the per-user socket (XDG_RUNTIME_DIR is a private
 * temporary folder here) until a program traced with GS_TRACE=unix:PATH connects. */
static void test_listen(void) {
  const char *workload = program_or_skip("GS_CLI_WORKLOAD");
  if (!workload)
    return;
  GsWindow *window = new_window();
  gs_window_listen(window);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(page_waiting, page);
  g_assert_cmpstr(gs_capture_page_get_title(page), ==, "Listening");
  save_screenshot(GTK_WIDGET(window), "waiting.png");

  g_autofree char *socket = gs_trace_source_default_socket_path();
  g_assert_true(g_file_test(socket, G_FILE_TEST_EXISTS));
  g_autofree char *trace = g_strconcat("GS_TRACE=unix:", socket, NULL);
  const char *argv[] = {workload, NULL};
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GS_TRACE", trace + 9, TRUE);
  g_autoptr(GError) error = NULL;
  GPid pid;
  g_assert_true(g_spawn_async(NULL, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                              &pid, &error));
  g_assert_no_error(error);
  views_test_wait_for(source_over, page);
  views_test_wait_for(page_has_content, page);
  g_spawn_close_pid(pid);
  assert_source_ended(page);
  assert_all_listed(page);
  gtk_window_destroy(GTK_WINDOW(window));
}

typedef struct follow_wait {
  GsCapturePage *page;
  guint64 want;
} follow_wait;

static gboolean followed_all(gpointer data) {
  follow_wait *w = data;
  gs_trace_model *model = gs_capture_page_get_model(w->page);
  return model && gs_trace_model_n_events(model) == w->want;
}

/* One scoped step of the recorded run, flushed so a follower sees it whole. */
static void record_step(void) {
  const int64_t shape[] = {4, 8};
  gs_scope scope = gs_scope_begin("step");
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_dispose(gs_clone(x));
  gs_scope_end(scope);
  gs_trace_flush();
}

/* What the reader finds in path now (the writer may still be going). */
static guint64 count_events_in(const char *path) {
  char *saved = log_path;
  log_path = (char *)path;
  counts c = count_log();
  log_path = saved;
  return c.events;
}

/* Follow: a log opened while the program (this test, through the engine) is still writing it
 * keeps growing in the window, and the scrubber stays on the newest event. */
static void test_follow(void) {
  g_autofree char *growing = g_strconcat(log_path, ".growing", NULL);
  g_assert_cmpint(gs_trace_open(growing), ==, 0);
  record_step();
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(growing);
  gs_window_open_file(window, file, TRUE);
  GsCapturePage *page = gs_window_get_current_page(window);
  follow_wait w = {page, count_events_in(growing)};
  views_test_wait_for(followed_all, &w);
  guint64 first = w.want;

  for (int i = 0; i < 3; i++)
    record_step();
  w.want = count_events_in(growing);
  g_assert_cmpuint(w.want, >, first);
  views_test_wait_for(followed_all, &w);
  g_assert_cmpint(gs_trace_source_get_state(gs_capture_page_get_source(page)), ==,
                  GS_TRACE_SOURCE_LIVE); /* still following: more may come */
  g_assert_cmpuint(n_rows(gs_capture_page_get_event_list(page)), ==, w.want);
  g_assert_cmpuint(gs_scrubber_get_position(gs_capture_page_get_scrubber(page)), ==,
                   w.want - 1);
  gs_trace_close();
  gtk_window_destroy(GTK_WINDOW(window));
  g_unlink(growing);
}

/* A log dropped on the window opens in a new tab (what the window's drop target does with
 * the file list a file manager sends). */
static void test_drop(void) {
  GsWindow *window = new_window();
  GListModel *controllers = gtk_widget_observe_controllers(GTK_WIDGET(window));
  GtkDropTarget *target = NULL;
  for (guint i = 0; i < g_list_model_get_n_items(controllers) && !target; i++) {
    g_autoptr(GObject) controller = g_list_model_get_item(controllers, i);
    if (GTK_IS_DROP_TARGET(controller))
      target = GTK_DROP_TARGET(controller);
  }
  g_object_unref(controllers);
  g_assert_nonnull(target);

  g_autoptr(GFile) file = g_file_new_for_path(log_path);
  GSList files = {file, NULL};
  GdkFileList *list = gdk_file_list_new_from_list(&files);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed(&value, list);
  gboolean accepted = FALSE;
  g_signal_emit_by_name(target, "drop", &value, 10.0, 10.0, &accepted);
  g_value_unset(&value);
  g_assert_true(accepted);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  g_assert_cmpstr(gs_capture_page_get_title(page), ==, "run.gstrace");
  views_test_wait_for(page_has_content, page);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* Run Program…: the dialog accepts a command line only when it parses and the program
 * exists, and says why not. */
static void test_run_dialog(void) {
  GsWindow *window = new_window();
  GsRunDialog *dialog = gs_run_dialog_new(GTK_WINDOW(window), gs_application_get_settings(app));
  GtkEntry *entry = GTK_ENTRY(views_test_find(GTK_WIDGET(dialog), GTK_TYPE_ENTRY));
  g_assert_nonnull(entry);
  AdwMessageDialog *message = ADW_MESSAGE_DIALOG(dialog);
  gtk_editable_set_text(GTK_EDITABLE(entry), "sh -c 'exit 0'");
  g_assert_true(adw_message_dialog_get_response_enabled(message, "run"));
  gtk_editable_set_text(GTK_EDITABLE(entry), "no-such-program-gradscope --x");
  g_assert_false(adw_message_dialog_get_response_enabled(message, "run"));
  gtk_editable_set_text(GTK_EDITABLE(entry), "sh -c 'unclosed");
  g_assert_false(adw_message_dialog_get_response_enabled(message, "run"));
  gtk_editable_set_text(GTK_EDITABLE(entry), "");
  g_assert_false(adw_message_dialog_get_response_enabled(message, "run"));
  gtk_window_destroy(GTK_WINDOW(dialog));
  gtk_window_destroy(GTK_WINDOW(window));
}

/* Run with LANGUAGE=zh_CN LANG=C.UTF-8: the empty window speaks Chinese. */
static void test_chinese(void) {
  GsWindow *window = new_window();
  g_assert_cmpstr(_("No Capture Open"), ==, "未打开捕获");
  GtkWidget *empty = views_test_find(GTK_WIDGET(window), ADW_TYPE_STATUS_PAGE);
  g_assert_nonnull(empty);
  g_assert_cmpstr(adw_status_page_get_title(ADW_STATUS_PAGE(empty)), ==, "未打开捕获");
  save_screenshot(GTK_WIDGET(window), "empty-zh_CN.png");

  GsCapturePage *page = open_log(window);
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  gs_scrubber_set_position(scrubber, 0);
  g_assert_nonnull(strstr(gs_scrubber_get_position_text(scrubber), "事件"));
  save_screenshot(GTK_WIDGET(window), "loaded-zh_CN.png");

  /* The Graph and Memory pages speak Chinese too (on an MLP step, which has a backward). */
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) recorded = graph_workload_record(graph_workload_mlp_step, &dir);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  page = gs_window_get_current_page(window);
  views_test_wait_for(page_has_content, page);
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "graph");
  GsGraphPane *pane = GS_GRAPH_PANE(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_PANE));
  g_assert_true(gs_graph_pane_go_to_pass(pane, 1));
  views_test_wait_for(graph_shown, gs_graph_pane_get_view(pane));
  g_assert_nonnull(views_test_find_label(GTK_WIDGET(pane), "反向传播"));
  save_screenshot(GTK_WIDGET(window), "graph-zh_CN.png");
  adw_view_stack_set_visible_child_name(stack, "timeline");
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  settle();
  guint64 clicked = gs_timeline_view_click(timeline, gs_timeline_view_x_of(timeline, 120));
  g_assert_cmpuint(clicked, ==, 120);
  g_assert_cmpuint(g_list_model_get_n_items(gs_timeline_view_get_alive(timeline)), >, 0);
  g_assert_nonnull(views_test_find_label(GTK_WIDGET(timeline), "按作用域"));
  save_screenshot(GTK_WIDGET(window), "memory-zh_CN.png");
  /* By category: the legend and the list name the categories in Chinese. */
  gs_timeline_view_set_by_scope(timeline, FALSE);
  settle();
  g_assert_cmpstr(gs_mem_category_name(GS_MEM_TEMPORARIES), ==, "作用域临时张量");
  GtkWidget *by_category = views_test_find_label(GTK_WIDGET(timeline), "按类别");
  g_assert_nonnull(by_category);
  g_assert_nonnull(strstr(gtk_widget_get_tooltip_text(gtk_widget_get_parent(by_category)),
                          "程序持有：程序在所有作用域"));
  save_screenshot(GTK_WIDGET(window), "memory-by-category-zh_CN.png");
  gtk_window_destroy(GTK_WINDOW(window));
  graph_workload_remove_dir(dir);
}

/* A training loop that leaks two tensors per step, in Chinese: at its end the alive list has
 * one row per leaking line ("20 × randn [64, 32] f32", made at graph-workloads.c:LINE), which
 * opens to the 20 leaked batches; picking one shows where it was made in the details. */
static void test_leaks_grouped_chinese(void) {
  GsWindow *window = new_window();
  g_autofree char *dir = NULL;
  g_autoptr(gs_trace_model) recorded = graph_workload_record(graph_workload_leaky_loop, &dir);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(page_has_content, page);
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  adw_view_stack_set_visible_child_name(stack, "timeline");
  GsTimelineView *timeline =
      GS_TIMELINE_VIEW(views_test_find(GTK_WIDGET(page), GS_TYPE_TIMELINE_VIEW));
  settle();
  /* The last column: after the "end" mark, where only the leaks are left (and the module's
   * parameters, until it is disposed). */
  guint64 end = graph_workload_find_kind(recorded, GS_TRACE_MARK, 0);
  guint64 last = gs_trace_model_n_events(recorded) - 1;
  g_assert_cmpuint(gs_timeline_view_click(timeline, gs_timeline_view_x_of(timeline, last)), >=,
                   end);
  GListModel *rows = gs_timeline_view_get_alive_rows(timeline);
  g_autofree char *batch_site = g_strdup_printf("graph-workloads.c:%d", graph_workload_leak_line);
  g_autofree char *loss_site =
      g_strdup_printf("graph-workloads.c:%d", graph_workload_leak_line + 1);
  guint batch_row = G_MAXUINT, loss_rows = 0;
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
    g_autoptr(GtkTreeListRow) row = g_list_model_get_item(rows, i);
    g_autoptr(GsAliveItem) item = gtk_tree_list_row_get_item(row);
    GListModel *members = gs_alive_item_get_members(item);
    if (strstr(gs_alive_item_get_site(item), batch_site)) {
      g_assert_nonnull(members);
      g_assert_cmpuint(g_list_model_get_n_items(members), ==, GRAPH_WORKLOAD_LEAK_STEPS);
      g_assert_cmpstr(gs_alive_item_get_label(item), ==, "20 × randn [64, 32] f32");
      g_assert_cmpstr(gs_alive_item_get_held_by(item), ==, "程序持有");
      batch_row = i;
    }
    loss_rows += strstr(gs_alive_item_get_site(item), loss_site) != NULL;
  }
  g_assert_cmpuint(batch_row, !=, G_MAXUINT);
  g_assert_cmpuint(loss_rows, ==, 1);
  GtkWidget *columns = views_test_find(GTK_WIDGET(timeline), GTK_TYPE_COLUMN_VIEW);
  g_signal_emit_by_name(columns, "activate", batch_row); /* opens the group */
  g_signal_emit_by_name(columns, "activate", batch_row + 1); /* picks its first member */
  GsTensorView *details = GS_TENSOR_VIEW(gs_capture_page_get_tensor_view(page));
  g_assert_cmpuint(gs_tensor_view_get_tensor(details), !=, 0);
  settle();
  const char *made_at = views_test_label_after(GTK_WIDGET(details), "创建位置");
  g_assert_nonnull(made_at);
  g_assert_nonnull(strstr(made_at, batch_site));
  save_screenshot(GTK_WIDGET(window), "leaks-grouped-zh_CN.png");
  gtk_window_destroy(GTK_WINDOW(window));
  graph_workload_remove_dir(dir);
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  gs_config_init_settings();
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  /* The listening socket goes in a private runtime folder of this test, not the user's. */
  g_autofree char *runtime = g_dir_make_tmp("gs-inspector-run-XXXXXX", NULL);
  g_setenv("XDG_RUNTIME_DIR", runtime, TRUE);
  gtk_test_init(&argc, &argv, NULL);
  adw_init();

  g_autofree char *dir = g_dir_make_tmp("gs-inspector-ui-XXXXXX", NULL);
  log_path = g_build_filename(dir, "run.gstrace", NULL);
  record_run(log_path);

  app = gs_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
  /* Spawned programs' output must not get into this test's TAP report on stdout. */
  gs_application_set_output_echo(app, -1, -1);

  if (g_str_has_prefix(g_getenv("LANGUAGE") ? g_getenv("LANGUAGE") : "", "zh")) {
    g_test_add_func("/inspector-ui/zh_CN", test_chinese);
    g_test_add_func("/inspector-ui/leaks-grouped-zh_CN", test_leaks_grouped_chinese);
    g_test_add_func("/inspector-ui/where-column-zh_CN", test_where_column);
  } else {
    g_test_add_func("/inspector-ui/parse-handle", test_parse_handle);
    g_test_add_func("/inspector-ui/module-and-optimizer-rows", test_module_and_optimizer_rows);
    g_test_add_func("/inspector-ui/empty-window", test_empty_window);
    g_test_add_func("/inspector-ui/open-counts-rows", test_open_counts_rows);
    g_test_add_func("/inspector-ui/filter", test_filter);
    g_test_add_func("/inspector-ui/late-log-status", test_late_log_status);
    g_test_add_func("/inspector-ui/scrub", test_scrub);
    g_test_add_func("/inspector-ui/page-keys", test_page_keys);
    g_test_add_func("/inspector-ui/where-column", test_where_column);
    g_test_add_func("/inspector-ui/page-keys-keep-scrubbing", test_page_keys_keep_scrubbing);
    g_test_add_func("/inspector-ui/memory-timeline", test_memory_timeline);
    g_test_add_func("/inspector-ui/graph-page", test_graph_page);
    g_test_add_func("/inspector-ui/live-digits", test_live_digits);
    g_test_add_func("/inspector-ui/live-word-language", test_live_word_language);
    g_test_add_func("/inspector-ui/recorded-word-language", test_recorded_word_language);
    g_test_add_func("/inspector-ui/dark", test_dark);
    g_test_add_func("/inspector-ui/damaged-log", test_damaged_log_toast);
    g_test_add_func("/inspector-ui/spawn", test_spawn);
    g_test_add_func("/inspector-ui/listen", test_listen);
    g_test_add_func("/inspector-ui/background-tab", test_background_tab);
    g_test_add_func("/inspector-ui/follow", test_follow);
    g_test_add_func("/inspector-ui/run-dialog", test_run_dialog);
    g_test_add_func("/inspector-ui/drop", test_drop);
    g_test_add_func("/inspector-ui/hostile-logs", test_hostile_logs);
    g_test_add_func("/inspector-ui/views-take-model-in-turns", test_views_take_model_in_turns);
    g_test_add_func("/inspector-ui/thread-column-fits-numbers", test_thread_column_fits_numbers);
    g_test_add_func("/inspector-ui/event-list-rows-in-steps", test_event_list_rows_in_steps);
  }
  int status = g_test_run();

  g_object_unref(app);
  g_unlink(log_path);
  g_rmdir(dir);
  g_autofree char *socket_dir = g_build_filename(runtime, "gradscope", NULL);
  g_autofree char *socket = g_build_filename(socket_dir, "inspector.sock", NULL);
  g_unlink(socket);
  g_rmdir(socket_dir);
  g_rmdir(runtime);
  g_free(log_path);
  return status;
}
