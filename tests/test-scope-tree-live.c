/* test-scope-tree-live.c: the scope tree while a live source grows its model, the way
 * gs-capture-page.c feeds it: a chunk of the log per frame from a tick callback, then
 * model_grew and the scrubber moved to the new end. The run is shaped like the digits
 * example: thousands of "train step" scopes under no outer scope, and now and then an
 * "evaluate" scope whose "batch" scopes arrive while its row is expanded.
 *
 * After every frame: the root list has one row per top-level scope so far, the expanded row
 * one child row per child so far, the selected scope stays selected, every visible row's
 * cells say what the model says at the scrubber's event, and GTK printed no warning. The user
 * follows the newest rows and now and then scrolls back to the selected one, which GTK may keep
 * bound while out of view and maps again from inside size-allocate; the pane sits in a
 * GtkPaned that is now and then collapsed and reopened. Before the fix, cells rewritten on
 * that map made GTK print "Trying to snapshot GtkListItemWidget ... without a current
 * allocation" and the pane went blank; cells also lagged a frame behind the model, and
 * ended scopes lost their statistics once the log had several keyframes. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

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

static guint n_children(gs_trace_model *m, guint64 scope) {
  const GArray *kids = gs_trace_model_scope_children(m, scope);
  return kids ? kids->len : 0;
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
enum { NAME, BYTES, PEAK, ALIVE, CREATED, DISPOSED, DURATION, BEGIN, END, ID, N_CELLS };

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
    g_autofree char *bytes = gs_view_bytes(now->bytes);
    g_autofree char *peak = gs_view_bytes(now->peak_bytes);
    g_autofree char *end = now->ended ? g_strdup_printf("%" G_GUINT64_FORMAT, now->end_seq)
                                      : g_strdup("open");
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[NAME]), ==, found->name);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[ALIVE]), ==, alive);
    g_assert_cmpstr(gtk_label_get_text(labels->pdata[CREATED]), ==, created);
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

/* The row of the first "evaluate" scope, or G_MAXUINT. */
static guint evaluate_row(Live *live) {
  GListModel *rows = G_LIST_MODEL(tree_of(live));
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
    g_autoptr(GtkTreeListRow) row = g_list_model_get_item(rows, i);
    g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
    const gs_replay_scope *scope =
        gs_trace_model_scope(live->model, gs_scope_item_get_scope_id(item));
    if (scope && g_strcmp0(scope->name, "evaluate") == 0 && gtk_tree_list_row_get_depth(row) == 0)
      return i;
  }
  return G_MAXUINT;
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
  gs_scope_tree_view_set_model(live.view, live.model);
  /* Beside another pane, as on the capture page; shrinkable, so it can be collapsed. */
  live.paned = GTK_PANED(gtk_paned_new(GTK_ORIENTATION_HORIZONTAL));
  gtk_paned_set_start_child(live.paned, GTK_WIDGET(live.view));
  gtk_paned_set_end_child(live.paned, gtk_label_new("events"));
  gtk_paned_set_position(live.paned, PANE_WIDTH);
  live.window = views_test_show(GTK_WIDGET(live.paned), 1000, 420);
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(live.window));
  gulong paint_id = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &live);

  guint frames = 0, collapses = 0, rows_checked = 0;
  guint64 selected = 0;
  guint selected_row = G_MAXUINT;
  gboolean expanded = FALSE;
  guint max_children_seen = 0;
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
    g_assert_cmpuint(g_list_model_get_n_items(gtk_tree_list_model_get_model(tree)), ==,
                     n_children(live.model, 0));
    GtkSingleSelection *selection = selection_of(&live);
    /* The newest scope is selected while it is open; it must stay selected while rows are
     * appended after it, and GTK keeps its row bound while it is scrolled out of view. */
    guint n_rows = g_list_model_get_n_items(G_LIST_MODEL(tree));
    if (!selected && n_rows > 3) {
      g_autoptr(GtkTreeListRow) last = g_list_model_get_item(G_LIST_MODEL(tree), n_rows - 1);
      g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(last);
      const gs_replay_scope *scope =
          gs_trace_model_scope(live.model, gs_scope_item_get_scope_id(item));
      if (!scope->ended) {
        gtk_single_selection_set_selected(selection, n_rows - 1);
        selected_row = n_rows - 1;
        selected = gs_scope_tree_view_get_selected_scope(live.view);
        g_assert_cmpuint(selected, ==, scope->id);
      }
    }
    if (selected) { /* its row moves down when rows are inserted above it (an expanded row) */
      selected_row = gtk_single_selection_get_selected(selection);
      g_assert_cmpuint(selected_row, !=, GTK_INVALID_LIST_POSITION);
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(tree), selected_row);
      g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
      g_assert_cmpuint(gs_scope_item_get_scope_id(item), ==, selected);
      g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(live.view), ==, selected);
    }
    /* The first "evaluate" is expanded as soon as it appears, before its batches do. */
    guint eval = evaluate_row(&live);
    if (eval != G_MAXUINT) {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(tree), eval);
      if (!expanded) {
        g_assert_true(gtk_tree_list_row_is_expandable(row));
        gtk_tree_list_row_set_expanded(row, TRUE);
        expanded = TRUE;
      }
      g_assert_true(gtk_tree_list_row_get_expanded(row));
      g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
      guint kids = n_children(live.model, gs_scope_item_get_scope_id(item));
      GListModel *children = gtk_tree_list_row_get_children(row);
      g_assert_nonnull(children);
      g_assert_cmpuint(g_list_model_get_n_items(children), ==, kids);
      max_children_seen = MAX(max_children_seen, kids);
      g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==,
                       n_children(live.model, 0) + kids);
    }
    rows_checked += check_visible_rows(&live);
    if (frames == N_FRAMES / 2) /* mid-run, following the end: the newest scope is open */
      views_test_screenshot(GTK_WIDGET(live.window), "scope-tree-live-running.png");
    /* The user follows the newest scopes, now and then going back to the selected one: GTK
     * shows its row again from inside size-allocate. */
    scroll_to(&live, selected && frames % 10 == 7 ? selected_row : G_MAXUINT);
  }
  next_frame(&live);
  rows_checked += check_visible_rows(&live);
  g_test_message("%u frames, %u collapses, %u scopes, %u rows checked", frames, collapses,
                 gs_trace_model_n_scopes(live.model), rows_checked);
  g_assert_cmpuint(n_children(live.model, 0), ==, N_STEPS + N_STEPS / EVAL_EVERY);
  g_assert_true(expanded);
  g_assert_cmpuint(max_children_seen, ==, N_BATCHES);
  /* A scope seen open (it might have gained children) offers no expander once it has ended
   * without any. */
  GListModel *roots = gtk_tree_list_model_get_model(tree_of(&live));
  guint stale_expanders = 0;
  for (guint i = 0; i < g_list_model_get_n_items(roots); i++) {
    g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_child_row(tree_of(&live), i);
    g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
    if (n_children(live.model, gs_scope_item_get_scope_id(item)) == 0 &&
        gtk_tree_list_row_is_expandable(row))
      stale_expanders++;
  }
  g_assert_cmpuint(stale_expanders, ==, 0);
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
