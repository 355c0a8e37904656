/* test-scope-tree-live.c: the scope tree while a live source grows its model, the way
 * gs-capture-page.c feeds it: a chunk of the log per frame from a tick callback, then
 * model_grew and the scrubber moved to the new end. The run is shaped like the digits
 * example: thousands of "train step" scopes under no outer scope, and now and then an
 * "evaluate" scope whose "batch" scopes arrive while its row is expanded.
 *
 * After every frame: the root list has one row per name so far ("train step × N",
 * "evaluate"), the tree follows the scrubber at the live end (the open scope selected) until
 * the user picks a row, which then stays picked, every visible row's cells (group rows too) say
 * what the model says at the scrubber's event, and GTK printed no warning. At the end, the
 * groups nest: each "evaluate" holds one "batch × 40". The user follows the newest rows and
 * now and then scrolls back to the picked one, which GTK may keep
 * bound while out of view and maps again from inside size-allocate; the pane sits in a
 * GtkPaned that is now and then collapsed and reopened. Before the fix, cells rewritten on
 * that map made GTK print "Trying to snapshot GtkListItemWidget ... without a current
 * allocation" and the pane went blank; cells also lagged a frame behind the model, and
 * ended scopes lost their statistics once the log had several keyframes. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <string.h>

#include "gs-scope-item.h"
#include "gs-scope-tree-view.h"
#include "gs-view-format.h"
#include "views-test-util.h"

#define N_STEPS 3000
#define EVAL_EVERY 250 /* an "evaluate" scope after every this many steps */
#define N_BATCHES 40   /* "batch" scopes in each "evaluate" */
#define N_FRAMES 150   /* the log arrives in this many chunks */
#define PANE_WIDTH 780

static void workload(void) {
  const int64_t shape[] = {4, 4};
  for (int step = 0; step < N_STEPS; step++) {
    gs_scope s = gs_scope_begin("train step");
    gs_tensor a = gs_ones(GS_F32, shape, 2);
    gs_tensor b = gs_mul_scalar(a, 2.0);
    gs_dispose(b);
    gs_scope_end(s);
    if ((step + 1) % EVAL_EVERY == 0) {
      gs_scope e = gs_scope_begin("evaluate");
      for (int batch = 0; batch < N_BATCHES; batch++) {
        gs_scope inner = gs_scope_begin("batch");
        gs_tensor x = gs_zeros(GS_F32, shape, 2);
        gs_tensor y = gs_add_scalar(x, 1.0);
        (void)y;
        gs_scope_end(inner);
      }
      gs_scope_end(e);
    }
  }
}

static char *record_log(gsize *n) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-views-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  workload();
  gs_trace_close();
  char *bytes = NULL;
  g_assert_true(g_file_get_contents(path, &bytes, n, NULL));
  g_remove(path);
  g_rmdir(dir);
  return bytes;
}

/* Any warning fails the test, the one that comes with a blank pane first among them. */
static GLogWriterOutput fail_on_warnings(GLogLevelFlags level, const GLogField *fields,
                                         gsize n_fields, gpointer data) {
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING)) {
    for (gsize i = 0; i < n_fields; i++)
      if (g_strcmp0(fields[i].key, "MESSAGE") == 0)
        g_error("warned while the model grew: %s", (const char *)fields[i].value);
  }
  return g_log_writer_default(level, fields, n_fields, data);
}

typedef struct {
  gs_trace_model *model;
  char *bytes;
  gsize n, fed, chunk;
  GsScopeTreeView *view;
  GtkPaned *paned;
  GtkWindow *window;
  gboolean painted;
} Live;

/* One chunk of the log, as gs-capture-page.c's pump does on each frame. */
static gboolean feed_on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  (void)widget, (void)clock;
  Live *live = data;
  gsize take = MIN(live->chunk, live->n - live->fed);
  gs_trace_model_feed(live->model, live->bytes + live->fed, take);
  live->fed += take;
  if (live->fed == live->n)
    gs_trace_model_finish(live->model);
  gs_scope_tree_view_model_grew(live->view);
  guint64 events = gs_trace_model_n_events(live->model);
  if (events)
    gs_scope_tree_view_set_position(live->view, events - 1); /* following the live end */
  return G_SOURCE_REMOVE;
}

static void on_after_paint(GdkFrameClock *clock, gpointer data) {
  (void)clock;
  ((Live *)data)->painted = TRUE;
}

static void next_frame(Live *live) {
  live->painted = FALSE;
  gtk_widget_queue_draw(GTK_WIDGET(live->window));
  while (!live->painted)
    g_main_context_iteration(NULL, TRUE);
}

/* Rows under a scope (0: the roots): one per name. */
static guint n_children(gs_trace_model *m, guint64 scope) {
  const GArray *groups = gs_trace_model_scope_groups(m, scope);
  return groups ? groups->len : 0;
}

static GtkTreeListModel *tree_of(Live *live) {
  GtkColumnView *cv =
      GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(live->view), GTK_TYPE_COLUMN_VIEW));
  GtkSelectionModel *selection = gtk_column_view_get_model(cv);
  g_assert_nonnull(selection);
  return GTK_TREE_LIST_MODEL(gtk_single_selection_get_model(GTK_SINGLE_SELECTION(selection)));
}

static GtkSingleSelection *selection_of(Live *live) {
  GtkColumnView *cv =
      GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(live->view), GTK_TYPE_COLUMN_VIEW));
  return GTK_SINGLE_SELECTION(gtk_column_view_get_model(cv));
}

/* The cells of a row in the order the view shows them (thread, last, is hidden). */
enum { NAME, BYTES, PEAK, ALIVE, CREATED, MOVED_IN, DISPOSED, MOVED_OUT, DURATION, BEGIN, END, ID,
       N_CELLS };

/* The group named name under the roots. */
static guint root_group(gs_trace_model *m, const char *name) {
  const GArray *groups = gs_trace_model_scope_groups(m, 0);
  for (guint i = 0; groups && i < groups->len; i++)
    if (g_strcmp0(gs_trace_model_scope_group_name(m, g_array_index(groups, guint, i)), name) == 0)
      return g_array_index(groups, guint, i);
  return G_MAXUINT;
}

/* A group row says its name and count, and its instances' totals at the scrubber's event. */
static void check_group_row(Live *live, GPtrArray *labels, const gs_replay *state) {
  gs_trace_model *m = live->model;
  const char *name = gtk_label_get_text(labels->pdata[NAME]);
  const char *cross = strstr(name, " × ");
  g_assert_nonnull(cross);
  g_autofree char *base = g_strndup(name, cross - name);
  guint group = root_group(m, base);
  g_assert_cmpuint(group, !=, G_MAXUINT);
  g_autofree char *count =
      gs_view_count(gs_trace_model_scope_group_instances(m, group)->len);
  g_assert_cmpstr(cross + strlen(" × "), ==, count);
  gs_scope_group_stats st;
  guint64 position = gs_scope_tree_view_get_position(live->view);
  gs_trace_model_scope_group_stats(m, group, state, position, &st);
  g_autofree char *created = g_strdup_printf("%" G_GUINT64_FORMAT, st.created);
  g_autofree char *disposed = g_strdup_printf("%" G_GUINT64_FORMAT, st.disposed);
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[CREATED]), ==, created);
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[DISPOSED]), ==, disposed);
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[ID]), ==, "");
}

/* Every row on screen says what the model says at the scrubber's event; the number of rows
 * checked. */
static guint check_visible_rows(Live *live) {
  gs_trace_model *m = live->model;
  guint64 position = gs_scope_tree_view_get_position(live->view);
  const gs_replay *state = gs_trace_model_seek(m, position);
  GtkWidget *cv = views_test_find(GTK_WIDGET(live->view), GTK_TYPE_COLUMN_VIEW);
  GtkWidget *list = views_test_find(cv, GTK_TYPE_LIST_VIEW);
  guint checked = 0;
  for (GtkWidget *row = gtk_widget_get_first_child(list); row;
       row = gtk_widget_get_next_sibling(row)) {
    if (!gtk_widget_get_mapped(row) || gtk_widget_get_height(row) == 0)
      continue;
    g_autoptr(GPtrArray) labels = views_test_labels(row);
    if (labels->len < N_CELLS)
      continue;
    const char *handle = gtk_label_get_text(labels->pdata[ID]);
    if (!*handle) {
      check_group_row(live, labels, state);
      checked++;
      continue;
    }
    const gs_replay_scope *found = NULL;
    for (guint i = 0; i < gs_trace_model_n_scopes(m) && !found; i++) {
      g_autofree char *h = gs_view_handle(gs_trace_model_scope_at(m, i)->id);
      if (g_strcmp0(h, handle) == 0)
        found = gs_trace_model_scope_at(m, i);
    }
    g_assert_nonnull(found);
    const gs_replay_scope *now = gs_trace_model_scope_in(m, state, found->id);
    g_assert_nonnull(now); /* following the end: every row shown has begun */
    g_autofree char *alive = g_strdup_printf("%" G_GUINT64_FORMAT, now->alive);
    g_autofree char *created = g_strdup_printf("%" G_GUINT64_FORMAT, now->created);
    g_autofree char *moved_in = g_strdup_printf("%" G_GUINT64_FORMAT, now->moved_in);
    g_autofree char *moved_out = g_strdup_printf("%" G_GUINT64_FORMAT, now->moved_out);
    g_autofree char *bytes = gs_view_bytes(now->bytes);
    g_autofree char *peak = gs_view_bytes(now->peak_bytes);
    g_autofree char *end = now->ended ? g_strdup_printf("%" G_GUINT64_FORMAT, now->end_seq)
                                      : g_strdup("open");
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[NAME]), ==, found->name);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[ALIVE]), ==, alive);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[CREATED]), ==, created);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[MOVED_IN]), ==, moved_in);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[MOVED_OUT]), ==, moved_out);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[BYTES]), ==, bytes);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[PEAK]), ==, peak);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[END]), ==, end);
    /* Ended scopes are not greyed: only those not begun are. */
    g_assert_false(gtk_widget_has_css_class(labels->pdata[NAME], "dim-label"));
    g_assert_true(gtk_widget_has_css_class(labels->pdata[NAME], "gs-scope-open") == !now->ended);
    /* The expander shows an arrow only while the scope has children or may still get some
     * (open at the newest event). */
    GtkWidget *expander = gtk_widget_get_parent(labels->pdata[NAME]);
    gboolean arrow = FALSE;
    for (GtkWidget *c = gtk_widget_get_first_child(expander); c; c = gtk_widget_get_next_sibling(c))
      arrow |= g_strcmp0(gtk_widget_get_css_name(c), "expander") == 0;
    const gs_replay_scope *head = gs_trace_model_scope(m, found->id);
    g_assert_true(arrow == (n_children(m, found->id) > 0 || !head->ended));
    checked++;
  }
  return checked;
}

/* The scope of the selected row, 0 for none or a group row. */
static guint64 selected_scope_row(Live *live) {
  GtkSingleSelection *selection = selection_of(live);
  guint position = gtk_single_selection_get_selected(selection);
  if (position == GTK_INVALID_LIST_POSITION)
    return 0;
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(tree_of(live)), position);
  g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
  return gs_scope_item_get_scope_id(item);
}

/* Scrolls the tree so that row is near its top (G_MAXUINT: to the end). GTK 4.8 has no
 * gtk_list_view_scroll_to: rows have one height here. */
static void scroll_to(Live *live, guint row) {
  GtkWidget *cv = views_test_find(GTK_WIDGET(live->view), GTK_TYPE_COLUMN_VIEW);
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(cv));
  double upper = gtk_adjustment_get_upper(adj);
  guint n = g_list_model_get_n_items(G_LIST_MODEL(tree_of(live)));
  double end = upper - gtk_adjustment_get_page_size(adj);
  gtk_adjustment_set_value(adj, row == G_MAXUINT || n == 0 ? end : MIN(end, upper * row / n));
}

static void test_rows_follow_a_growing_model(void) {
  g_log_set_writer_func(fail_on_warnings, NULL, NULL);
  Live live = {0};
  live.bytes = record_log(&live.n);
  live.chunk = live.n / N_FRAMES + 1;
  live.model = gs_trace_model_new();
  live.view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_live_follow_interval(live.view, 0); /* every frame is checked */
  gs_scope_tree_view_set_model(live.view, live.model);
  /* Beside another pane, as on the capture page; shrinkable, so it can be collapsed. */
  live.paned = GTK_PANED(gtk_paned_new(GTK_ORIENTATION_HORIZONTAL));
  gtk_paned_set_start_child(live.paned, GTK_WIDGET(live.view));
  gtk_paned_set_end_child(live.paned, gtk_label_new("events"));
  gtk_paned_set_position(live.paned, PANE_WIDTH);
  live.window = views_test_show(GTK_WIDGET(live.paned), 1000, 420);
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(live.window));
  gulong paint_id = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &live);

  guint frames = 0, collapses = 0, rows_checked = 0, followed = 0;
  guint64 picked = 0;
  guint picked_row = G_MAXUINT;
  while (live.fed < live.n) {
    gboolean collapse = frames % 10 == 5;
    if (collapse) { /* the pane is dragged shut while the run goes on... */
      gtk_paned_set_position(live.paned, 0);
      collapses++;
    }
    gtk_widget_add_tick_callback(GTK_WIDGET(live.window), feed_on_tick, &live, NULL);
    next_frame(&live);
    frames++;
    if (collapse) { /* ...and opened again: GTK maps the tree inside size-allocate */
      gtk_paned_set_position(live.paned, PANE_WIDTH);
      next_frame(&live);
    }

    GtkTreeListModel *tree = tree_of(&live);
    /* One root row per name: "train step" and, once one began, "evaluate". */
    g_assert_cmpuint(g_list_model_get_n_items(gtk_tree_list_model_get_model(tree)), ==,
                     n_children(live.model, 0));
    g_assert_cmpuint(n_children(live.model, 0), <=, 2);
    GtkSingleSelection *selection = selection_of(&live);
    guint64 position = gs_scope_tree_view_get_position(live.view);
    if (!picked) {
      /* Following the live end: the scope open there is selected (its group and ancestors
       * expanded), which is not a pick: the event list is not filtered by it. */
      guint64 open = gs_trace_model_scope_of(live.model, position);
      if (open) {
        g_assert_cmpuint(selected_scope_row(&live), ==, open);
        followed++;
      }
      g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(live.view), ==, 0);
      /* Mid-run the user picks the first step: it stays picked while the run goes on. */
      guint steps = root_group(live.model, "train step");
      if (frames == N_FRAMES / 3 && steps != G_MAXUINT) {
        g_autoptr(GtkTreeListRow) group = gtk_tree_list_model_get_child_row(tree, 0);
        g_assert_true(gtk_tree_list_row_get_expanded(group)); /* by following */
        g_autoptr(GtkTreeListRow) first = gtk_tree_list_row_get_child_row(group, 0);
        gtk_single_selection_set_selected(selection, gtk_tree_list_row_get_position(first));
        picked = gs_trace_model_scope_at(
                     live.model,
                     g_array_index(gs_trace_model_scope_group_instances(live.model, steps), guint, 0))
                     ->id;
        g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(live.view), ==, picked);
      }
    } else { /* its row moves down when rows are inserted above it (an expanded row) */
      picked_row = gtk_single_selection_get_selected(selection);
      g_assert_cmpuint(picked_row, !=, GTK_INVALID_LIST_POSITION);
      g_assert_cmpuint(selected_scope_row(&live), ==, picked);
      g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(live.view), ==, picked);
    }
    rows_checked += check_visible_rows(&live);
    if (frames == N_FRAMES / 2) /* mid-run, following the end: the newest scope is open */
      views_test_screenshot(GTK_WIDGET(live.window), "scope-tree-live-running.png");
    /* The user follows the newest scopes, now and then going back to the picked one: GTK
     * shows its row again from inside size-allocate. */
    scroll_to(&live, picked && frames % 10 == 7 ? picked_row : G_MAXUINT);
  }
  next_frame(&live);
  rows_checked += check_visible_rows(&live);
  g_test_message("%u frames, %u collapses, %u scopes, %u rows checked, %u frames followed",
                 frames, collapses, gs_trace_model_n_scopes(live.model), rows_checked, followed);
  g_assert_cmpuint(followed, >, 5);
  g_assert_cmpuint(picked, !=, 0);
  g_assert_cmpuint(n_children(live.model, 0), ==, 2);
  /* Nested groups: an "evaluate" holds one row "batch × 40", which holds its 40 batches. */
  GtkTreeListModel *tree = tree_of(&live);
  g_autoptr(GtkTreeListRow) evaluates = gtk_tree_list_model_get_child_row(tree, 1);
  gtk_tree_list_row_set_expanded(evaluates, TRUE);
  g_assert_cmpuint(g_list_model_get_n_items(gtk_tree_list_row_get_children(evaluates)), ==,
                   N_STEPS / EVAL_EVERY);
  g_autoptr(GtkTreeListRow) evaluate = gtk_tree_list_row_get_child_row(evaluates, 0);
  gtk_tree_list_row_set_expanded(evaluate, TRUE);
  g_autoptr(GtkTreeListRow) batches = gtk_tree_list_row_get_child_row(evaluate, 0);
  g_assert_nonnull(batches);
  g_assert_cmpuint(g_list_model_get_n_items(gtk_tree_list_row_get_children(evaluate)), ==, 1);
  gtk_tree_list_row_set_expanded(batches, TRUE);
  g_assert_cmpuint(g_list_model_get_n_items(gtk_tree_list_row_get_children(batches)), ==,
                   N_BATCHES);
  g_assert_cmpuint(rows_checked, >=, frames * 5);
  views_test_screenshot(GTK_WIDGET(live.window), "scope-tree-live-ended.png");
  g_signal_handler_disconnect(clock, paint_id);
  gtk_window_destroy(live.window);
  gs_trace_model_free(live.model);
  g_free(live.bytes);
}

int main(int argc, char **argv) {
  views_test_init(&argc, &argv);
  g_test_add_func("/scope-tree-live/rows-follow-a-growing-model",
                  test_rows_follow_a_growing_model);
  return g_test_run();
}
