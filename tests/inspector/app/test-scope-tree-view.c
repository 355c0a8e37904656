/* test-scope-tree-view.c: the scope tree (inspector/app/scopes/gs-scope-tree-view.c) on a recorded
 * run: one "epoch" scope holding three "step" scopes and a "work" scope. Rows are lazy (one
 * root until expanded), statistics at the scrubber's event equal the engine's own account of
 * each scope, scopes not begun yet are greyed while ended ones look plain and open ones bold,
 * and selecting or activating a row emits the contract's signals. Saves screenshots. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <gradscope/gradscope.h>

#include "gs-config.h"
#include "gs-scope-item.h"
#include "gs-scope-tree-view.h"
#include "gs-view-format.h"
#include "views-test-util.h"

#define N_STEPS 3

/* The engine's account of "work" just before it ends, and of the last step. */
static gs_scope_info work_info, step_info;
static guint64 work_info_seq; /* the engine's event counter when work_info was taken */

static void workload(void) {
  const int64_t shape[] = {2, 3};
  gs_scope epoch = gs_scope_begin("epoch");
  for (int step = 0; step < N_STEPS; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor a = gs_ones(GS_F32, shape, 2);
    gs_tensor b = gs_mul_scalar(a, 2.0);
    gs_dispose(b);
    if (step == N_STEPS - 1)
      step_info = gs_scope_get_info(s);
    gs_scope_end(s);
  }
  gs_scope work = gs_scope_begin("work");
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_tensor c = gs_clone(x);
  gs_fill_(c, 2.0); /* materialises 24 bytes */
  gs_tensor kept = gs_move_to_outer(gs_zeros(GS_F32, shape, 2));
  work_info = gs_scope_get_info(work);
  work_info_seq = gs_event_counter();
  gs_scope_end(work);
  gs_dispose(kept);
  gs_scope_end(epoch);
}

typedef struct {
  gs_trace_model *model;
  GsScopeTreeView *view;
  GtkWindow *window;
} Fixture;

static void fixture_set_up(Fixture *f, gconstpointer data) {
  (void)data;
  f->model = views_test_record(workload);
  f->view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(f->view, f->model);
  f->window = views_test_show(GTK_WIDGET(f->view), 900, 400);
}

static void fixture_tear_down(Fixture *f, gconstpointer data) {
  (void)data;
  gtk_window_destroy(f->window);
  gs_trace_model_free(f->model);
}

static GListModel *rows(Fixture *f) {
  GtkColumnView *cv = GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW));
  return G_LIST_MODEL(gtk_column_view_get_model(cv));
}

static void expand(Fixture *f, guint position) {
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(rows(f), position);
  g_assert_true(gtk_tree_list_row_is_expandable(row));
  gtk_tree_list_row_set_expanded(row, TRUE);
  views_test_settle(GTK_WIDGET(f->view));
}

/* Epoch, then its "step × 3" group: rows epoch, the group, its steps, work. */
static void expand_steps(Fixture *f) {
  expand(f, 0);
  expand(f, 1);
}

/* The cells of a row, in the order the view shows them (the thread column, last, is hidden
 * in a one-thread run). */
enum { NAME, BYTES, PEAK, ALIVE, CREATED, MOVED_IN, DISPOSED, MOVED_OUT, DURATION, BEGIN, END, ID,
       N_CELLS };

/* The labels of the row on screen whose name cell says name (the n-th such row), as an
 * array of GtkLabel*, indexed by the enum above. */
static GPtrArray *row_labels(Fixture *f, const char *name, int nth) {
  GtkWidget *cv = views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW);
  /* The column view's list holds one widget per row, each with one cell per column. */
  GtkWidget *list = views_test_find(cv, GTK_TYPE_LIST_VIEW);
  for (GtkWidget *row = gtk_widget_get_first_child(list); row; row = gtk_widget_get_next_sibling(row)) {
    GPtrArray *labels = views_test_labels(row);
    if (labels->len >= N_CELLS && g_strcmp0(gtk_label_get_text(labels->pdata[0]), name) == 0 &&
        nth-- == 0)
      return labels;
    g_ptr_array_unref(labels);
  }
  return NULL;
}

static const char *cell(GPtrArray *labels, guint column) {
  return gtk_label_get_text(labels->pdata[column]);
}

static guint64 scope_begin_index(Fixture *f, const char *name, int nth) {
  for (guint i = 0; i < gs_trace_model_n_scopes(f->model); i++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(f->model, i);
    if (g_strcmp0(s->name, name) == 0 && nth-- == 0)
      return gs_trace_model_find_seq(f->model, s->begin_seq);
  }
  g_assert_not_reached();
}

static guint64 scope_id(Fixture *f, const char *name, int nth) {
  for (guint i = 0; i < gs_trace_model_n_scopes(f->model); i++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(f->model, i);
    if (g_strcmp0(s->name, name) == 0 && nth-- == 0)
      return s->id;
  }
  g_assert_not_reached();
}

static guint64 scope_end_index(Fixture *f, const char *name) {
  for (guint i = 0; i < gs_trace_model_n_scopes(f->model); i++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(f->model, i);
    if (g_strcmp0(s->name, name) == 0)
      return gs_trace_model_find_seq(f->model, s->end_seq);
  }
  g_assert_not_reached();
}

/* The last event the engine had numbered when its counter said seq. */
static guint64 index_at_seq(Fixture *f, guint64 seq) {
  guint64 found = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(f->model); i++)
    if (gs_trace_model_seq_at(f->model, i) <= seq)
      found = i;
  g_assert_cmpuint(found, !=, G_MAXUINT64);
  return found;
}

static void test_rows_are_lazy(Fixture *f, gconstpointer data) {
  (void)data;
  g_assert_cmpuint(gs_trace_model_n_scopes(f->model), ==, N_STEPS + 2);
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 1); /* epoch, collapsed */
  expand(f, 0);
  /* The steps are one group row; "work", alone of its name, its own row. */
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 3);
  expand(f, 1);
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, N_STEPS + 3);
  /* Steps and work end with no scope inside them: nothing to expand. */
  g_autoptr(GtkTreeListRow) last = g_list_model_get_item(rows(f), N_STEPS + 2);
  g_assert_false(gtk_tree_list_row_is_expandable(last));
  g_autoptr(GtkTreeListRow) step = g_list_model_get_item(rows(f), 2);
  g_assert_false(gtk_tree_list_row_is_expandable(step));
}

static void test_statistics_match_the_engine(Fixture *f, gconstpointer data) {
  (void)data;
  expand_steps(f);
  /* Where the engine reported the state of "work" from inside it. */
  gs_scope_tree_view_set_position(f->view, index_at_seq(f, work_info_seq));
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) work = row_labels(f, "work", 0);
  g_assert_nonnull(work);
  g_autofree char *created = g_strdup_printf("%llu", (unsigned long long)work_info.created);
  g_autofree char *alive = g_strdup_printf("%llu", (unsigned long long)work_info.alive);
  g_autofree char *bytes = gs_view_bytes(work_info.bytes);
  g_autofree char *peak = gs_view_bytes(work_info.peak_bytes);
  g_assert_cmpstr(cell(work, END), ==, "open");
  g_assert_cmpstr(cell(work, CREATED), ==, created);
  g_assert_cmpstr(cell(work, ALIVE), ==, alive);
  g_assert_cmpstr(cell(work, BYTES), ==, bytes);
  g_assert_cmpstr(cell(work, PEAK), ==, peak);
  g_assert_cmpuint(work_info.bytes, >, 0);

  /* At the last event every scope has ended: "work" owns nothing, its peak stays. */
  gs_scope_tree_view_set_position(f->view, gs_trace_model_n_events(f->model) - 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) ended = row_labels(f, "work", 0);
  /* Begin and end are the engine's event numbers. */
  g_autofree char *end = g_strdup_printf(
      "%llu", (unsigned long long)gs_trace_model_seq_at(f->model, scope_end_index(f, "work")));
  g_assert_cmpstr(cell(ended, END), ==, end);
  g_assert_cmpstr(cell(ended, ALIVE), ==, "0");
  g_assert_cmpstr(cell(ended, BYTES), ==, "0 bytes");
  g_assert_cmpstr(cell(ended, PEAK), ==, peak);
  g_autoptr(GPtrArray) step = row_labels(f, "step", N_STEPS - 1);
  g_autofree char *step_created = g_strdup_printf("%llu", (unsigned long long)step_info.created);
  /* Ending the step disposed what it still owned. */
  g_autofree char *step_disposed =
      g_strdup_printf("%llu", (unsigned long long)(step_info.disposed + step_info.alive));
  g_assert_cmpuint(step_info.alive, ==, 1);
  g_assert_cmpstr(cell(step, CREATED), ==, step_created);
  g_assert_cmpstr(cell(step, DISPOSED), ==, step_disposed);
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-view.png");
}

static gboolean is_dim(GtkLabel *label) {
  return gtk_widget_has_css_class(GTK_WIDGET(label), "dim-label");
}

static void test_scopes_not_begun_are_greyed(Fixture *f, gconstpointer data) {
  (void)data;
  expand_steps(f);
  /* Just after the second step began: the third step and "work" have not. */
  gs_scope_tree_view_set_position(f->view, scope_begin_index(f, "step", 1));
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) second = row_labels(f, "step", 1);
  g_autoptr(GPtrArray) third = row_labels(f, "step", 2);
  g_autoptr(GPtrArray) work = row_labels(f, "work", 0);
  g_assert_false(is_dim(second->pdata[NAME]));
  g_assert_cmpstr(cell(second, END), ==, "open");
  g_assert_cmpstr(cell(second, CREATED), ==, "0");
  g_assert_true(is_dim(third->pdata[NAME]));
  g_assert_true(is_dim(work->pdata[BYTES]));
  g_assert_cmpstr(cell(third, CREATED), ==, ""); /* no statistics before it began */
  g_autofree char *future = gs_scope_tree_view_describe_scope(f->view, scope_id(f, "step", 2));
  g_assert_cmpstr(future, ==, "Not begun yet at the chosen event");
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-view-greyed.png");
  /* Scrubbing on greys them no more. */
  gs_scope_tree_view_set_position(f->view, scope_begin_index(f, "work", 0));
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) later = row_labels(f, "work", 0);
  g_assert_false(is_dim(later->pdata[NAME]));
  g_assert_cmpstr(cell(later, END), ==, "open");
}

static gboolean has_class(GPtrArray *labels, guint column, const char *name) {
  return gtk_widget_has_css_class(GTK_WIDGET(labels->pdata[column]), name);
}

/* At the last event of a finished run every scope has ended: nothing is greyed (the tree
 * would look disabled), each row tells its end; inside "work", it and "epoch" are open. */
static void test_ended_scopes_are_not_greyed(Fixture *f, gconstpointer data) {
  (void)data;
  expand_steps(f);
  gs_scope_tree_view_set_position(f->view, gs_trace_model_n_events(f->model) - 1);
  views_test_settle(GTK_WIDGET(f->view));
  const char *names[] = {"epoch", "step", "step", "step", "work"};
  int nth[] = {0, 0, 1, 2, 0};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autoptr(GPtrArray) row = row_labels(f, names[i], nth[i]);
    g_assert_nonnull(row);
    for (guint c = 0; c < N_CELLS; c++)
      g_assert_false(has_class(row, c, "dim-label"));
    g_assert_false(has_class(row, NAME, "gs-scope-open"));
    g_autofree char *ended = g_strdup_printf("Ended at event %s", cell(row, END));
    g_autofree char *said = gs_scope_tree_view_describe_scope(f->view, scope_id(f, names[i], nth[i]));
    g_assert_cmpstr(said, ==, ended);
    g_assert_true(gtk_widget_get_has_tooltip(row->pdata[NAME]));
    g_assert_true(gtk_widget_get_has_tooltip(row->pdata[END]));
  }
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-view-ended.png");

  gs_scope_tree_view_set_position(f->view, index_at_seq(f, work_info_seq));
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) epoch = row_labels(f, "epoch", 0);
  g_autoptr(GPtrArray) work = row_labels(f, "work", 0);
  g_autoptr(GPtrArray) step = row_labels(f, "step", 0);
  g_assert_true(has_class(epoch, NAME, "gs-scope-open"));
  g_assert_true(has_class(work, NAME, "gs-scope-open"));
  g_assert_true(has_class(work, END, "accent"));
  g_assert_cmpstr(cell(work, END), ==, "open");
  g_autofree char *open = gs_scope_tree_view_describe_scope(f->view, scope_id(f, "work", 0));
  g_assert_cmpstr(open, ==, "Open at the chosen event");
  g_assert_null(gs_scope_tree_view_describe_scope(f->view, 999999)); /* no such scope */
  g_assert_false(has_class(step, NAME, "gs-scope-open"));
  g_assert_false(has_class(step, END, "accent"));
  g_assert_false(has_class(step, NAME, "dim-label"));
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-view-open.png");
}

static void on_scope_selected(GsScopeTreeView *view, guint64 id, gpointer data) {
  (void)view;
  *(guint64 *)data = id;
}

static void on_event_selected(GsScopeTreeView *view, guint64 index, gpointer data) {
  (void)view;
  *(guint64 *)data = index;
}

static void test_selection_signals(Fixture *f, gconstpointer data) {
  (void)data;
  guint64 selected = G_MAXUINT64, event = G_MAXUINT64;
  g_signal_connect(f->view, "scope-selected", G_CALLBACK(on_scope_selected), &selected);
  g_signal_connect(f->view, "event-selected", G_CALLBACK(on_event_selected), &event);
  expand_steps(f);
  GtkSelectionModel *selection = GTK_SELECTION_MODEL(rows(f));
  gtk_selection_model_select_item(selection, N_STEPS + 2, TRUE); /* "work" */
  const gs_replay_scope *work = gs_trace_model_scope_at(f->model, N_STEPS + 1);
  g_assert_cmpstr(work->name, ==, "work");
  g_assert_cmpuint(selected, ==, work->id);
  g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(f->view), ==, work->id);
  g_signal_emit_by_name(views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW), "activate",
                        (guint)(N_STEPS + 2));
  g_assert_cmpuint(event, ==, scope_begin_index(f, "work", 0));
  gtk_selection_model_unselect_item(selection, N_STEPS + 2); /* Ctrl+click */
  g_assert_cmpuint(selected, ==, 0);
  /* Clearing the model clears the selection and shows the empty state. */
  gs_scope_tree_view_set_model(f->view, NULL);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GPtrArray) labels = views_test_labels(GTK_WIDGET(f->view));
  gboolean empty_state = FALSE;
  for (guint i = 0; i < labels->len; i++)
    empty_state |= g_strcmp0(gtk_label_get_text(labels->pdata[i]), "No Scopes") == 0;
  g_assert_true(empty_state);
}

static GtkColumnViewColumn *column_titled(Fixture *f, const char *title) {
  GtkColumnView *cv = GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW));
  GListModel *columns = gtk_column_view_get_columns(cv);
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) c = g_list_model_get_item(columns, i);
    if (g_strcmp0(gtk_column_view_column_get_title(c), title) == 0)
      return c;
  }
  g_assert_not_reached();
}

static void test_header_menu_hides_columns(Fixture *f, gconstpointer data) {
  (void)data;
  GtkColumnViewColumn *bytes = column_titled(f, "Bytes");
  GtkColumnViewColumn *thread = column_titled(f, "Thread");
  GMenuModel *menu = gtk_column_view_column_get_header_menu(bytes);
  g_assert_nonnull(menu);
  g_assert_cmpint(g_menu_model_get_n_items(menu), ==, 12); /* every column but the name */
  g_assert_true(gtk_column_view_column_get_visible(bytes));
  g_assert_false(gtk_column_view_column_get_visible(thread)); /* one thread in this run */
  gtk_widget_activate_action(GTK_WIDGET(f->view), "scopes.show-bytes", NULL);
  g_assert_false(gtk_column_view_column_get_visible(bytes));
  gtk_widget_activate_action(GTK_WIDGET(f->view), "scopes.show-thread", NULL);
  g_assert_true(gtk_column_view_column_get_visible(thread));
}

/* A live source: the model grows while the view shows it. */
static void test_model_grows(void) {
  /* Record, then feed the log in two halves. */
  g_autofree char *dir = g_dir_make_tmp("gradscope-views-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  workload();
  gs_trace_close();
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  g_remove(path);
  g_rmdir(dir);
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  gsize half = n / 2;
  gs_trace_model_feed(m, bytes, half);
  GsScopeTreeView *view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(view, m);
  GtkWindow *window = views_test_show(GTK_WIDGET(view), 900, 400);
  GtkColumnView *cv = GTK_COLUMN_VIEW(views_test_find(GTK_WIDGET(view), GTK_TYPE_COLUMN_VIEW));
  GListModel *list = G_LIST_MODEL(gtk_column_view_get_model(cv));
  guint before_scopes = gs_trace_model_n_scopes(m);
  if (before_scopes > 0) {
    g_autoptr(GtkTreeListRow) epoch = g_list_model_get_item(list, 0);
    gtk_tree_list_row_set_expanded(epoch, TRUE); /* open at head: expandable */
  }
  gs_trace_model_feed(m, bytes + half, n - half);
  gs_trace_model_finish(m);
  gs_scope_tree_view_model_grew(view);
  views_test_settle(GTK_WIDGET(view));
  g_assert_cmpuint(gs_trace_model_n_scopes(m), ==, N_STEPS + 2);
  g_autoptr(GtkTreeListRow) epoch = g_list_model_get_item(list, 0);
  gtk_tree_list_row_set_expanded(epoch, TRUE);
  /* The steps became one group row as their second instance arrived. */
  g_assert_cmpuint(g_list_model_get_n_items(list), ==, 3);
  g_autoptr(GtkTreeListRow) steps = g_list_model_get_item(list, 1);
  gtk_tree_list_row_set_expanded(steps, TRUE);
  g_assert_cmpuint(g_list_model_get_n_items(list), ==, N_STEPS + 3);
  gtk_window_destroy(window);
}

/* ---- groups and following the scrubber ----------------------------------------------- */

#define N_EPOCHS 2
#define N_TRAIN 1200

/* Like a training loop: epochs of many "train step" scopes, each moving its loss out. */
static void training_workload(void) {
  const int64_t shape[] = {2, 3};
  for (int e = 0; e < N_EPOCHS; e++) {
    gs_scope epoch = gs_scope_begin("epoch");
    for (int i = 0; i < N_TRAIN; i++) {
      gs_scope step = gs_scope_begin("train step");
      gs_tensor x = gs_ones(GS_F32, shape, 2);
      gs_tensor loss = gs_mul_scalar(x, 2.0);
      gs_move_to_outer(loss);
      gs_scope_end(step);
    }
    gs_scope_end(epoch);
  }
}

static guint64 selected_row_scope(Fixture *f) {
  GtkSingleSelection *selection = GTK_SINGLE_SELECTION(rows(f));
  guint position = gtk_single_selection_get_selected(selection);
  if (position == GTK_INVALID_LIST_POSITION)
    return 0;
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(rows(f), position);
  g_autoptr(GsScopeItem) item = gtk_tree_list_row_get_item(row);
  return gs_scope_item_get_scope_id(item);
}

static void test_groups_follow_the_scrubber(void) {
  Fixture fx = {0}, *f = &fx;
  f->model = views_test_record(training_workload);
  f->view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(f->view, f->model);
  f->window = views_test_show(GTK_WIDGET(f->view), 1100, 420);
  guint64 selected = G_MAXUINT64;
  g_signal_connect(f->view, "scope-selected", G_CALLBACK(on_scope_selected), &selected);

  /* Two epochs: one group row at the root. */
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 1);
  /* The scrubber inside the 700th step of the second epoch: revealed and selected. */
  guint64 inside = scope_begin_index(f, "train step", N_TRAIN + 700) + 2;
  gs_scope_tree_view_set_position(f->view, inside);
  views_test_settle(GTK_WIDGET(f->view));
  guint64 step = scope_id(f, "train step", N_TRAIN + 700);
  g_assert_cmpuint(selected_row_scope(f), ==, step);
  g_assert_cmpuint(selected, ==, G_MAXUINT64); /* following is not a pick: no filter */
  /* Rows: "epoch × 2", epoch 1, epoch 2, "train step × 1,200", its steps. */
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 4 + N_TRAIN);
  views_test_settle(GTK_WIDGET(f->view));
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-followed.png");
  /* The user scrolls back to the top, where the group rows are. */
  GtkWidget *cv = views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW);
  gtk_adjustment_set_value(gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(cv)), 0);
  views_test_settle(GTK_WIDGET(f->view));
  views_test_screenshot(GTK_WIDGET(f->window), "scope-tree-grouped.png");
  g_autoptr(GPtrArray) group = row_labels(f, "train step × 1,200", 0);
  g_assert_nonnull(group);
  /* 700 steps ended (each moved one object out) and one open at the chosen event. */
  g_assert_cmpstr(cell(group, MOVED_OUT), ==, "700");
  g_assert_cmpstr(cell(group, END), ==, "open");
  /* 700 ended steps peaked at 48 bytes, the open one has 24 so far. */
  g_assert_cmpstr(cell(group, PEAK), ==, "24 bytes / 47 bytes / 48 bytes");
  g_autoptr(GPtrArray) epochs = row_labels(f, "epoch × 2", 0);
  g_assert_nonnull(epochs);
  g_assert_cmpstr(cell(epochs, MOVED_IN), ==, "1900"); /* 1,200 + 700 losses */

  /* The account of one step balances, in words. */
  g_autofree char *account = gs_scope_tree_view_describe_account(f->view, step);
  g_assert_true(g_str_has_prefix(account, "Created 1 + moved in 0 = disposed 0 + moved out 0 "
                                          "+ still held 1\n"));

  /* The user picks the group row: scrubbing inside its steps does not move the selection. */
  g_autoptr(GtkTreeListRow) group_row = g_list_model_get_item(rows(f), 3);
  g_autoptr(GsScopeItem) group_item = gtk_tree_list_row_get_item(group_row);
  g_assert_true(gs_scope_item_is_group(group_item));
  gtk_selection_model_select_item(GTK_SELECTION_MODEL(rows(f)), 3, TRUE);
  /* A group is no one scope to filter by. */
  g_assert_cmpuint(gs_scope_tree_view_get_selected_scope(f->view), ==, 0);
  gs_scope_tree_view_set_position(f->view, scope_begin_index(f, "train step", N_TRAIN + 5) + 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(gtk_single_selection_get_selected(GTK_SINGLE_SELECTION(rows(f))), ==, 3);
  /* A step of the first epoch is outside the pick: the tree follows again. */
  gs_scope_tree_view_set_position(f->view, scope_begin_index(f, "train step", 10) + 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(selected_row_scope(f), ==, scope_id(f, "train step", 10));

  /* The user picks a step: the event list would filter by it; activating it moves the
   * scrubber to its begin (inside it), which keeps the pick: no loop. */
  guint64 event = G_MAXUINT64;
  g_signal_connect(f->view, "event-selected", G_CALLBACK(on_event_selected), &event);
  guint pick = gtk_single_selection_get_selected(GTK_SINGLE_SELECTION(rows(f))) + 3;
  gtk_selection_model_select_item(GTK_SELECTION_MODEL(rows(f)), pick, TRUE);
  guint64 picked = selected_row_scope(f);
  g_assert_cmpuint(selected, ==, picked);
  g_signal_emit_by_name(views_test_find(GTK_WIDGET(f->view), GTK_TYPE_COLUMN_VIEW), "activate",
                        pick);
  gs_scope_tree_view_set_position(f->view, event); /* as the capture page does */
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(selected_row_scope(f), ==, picked);
  g_assert_cmpuint(selected, ==, picked);
  /* Scrubbing elsewhere ends the pick, and its filter. */
  gs_scope_tree_view_set_position(f->view, inside);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(selected_row_scope(f), ==, step);
  g_assert_cmpuint(selected, ==, 0);
  fixture_tear_down(f, NULL);
}

/* A scope that ends, then scopes nested DEEP_LEVELS deep after it at the top level, each named
 * for its level, a tensor in the innermost. */
#define DEEP_LEVELS 300
static guint64 deep_scope_ids[DEEP_LEVELS];

static void deep_workload(void) {
  const int64_t shape[] = {2};
  gs_scope_end(gs_scope_begin("before"));
  gs_scope scopes[DEEP_LEVELS];
  for (int d = 0; d < DEEP_LEVELS; d++) {
    char name[16];
    g_snprintf(name, sizeof name, "level%d", d);
    scopes[d] = gs_scope_begin(name);
    deep_scope_ids[d] = scopes[d].id;
  }
  gs_tensor t = gs_ones(GS_F32, shape, 1);
  gs_dispose(t);
  for (int d = DEEP_LEVELS; d-- > 0;)
    gs_scope_end(scopes[d]);
}

/* The scrubber inside a scope 300 deep: the tree opens the outermost levels down to a bound
 * and selects the deepest it opened, an ancestor of that scope (each level is a row expanded
 * on the UI thread; a log 100,000 deep must not open them all). It used to start the walk at
 * an ancestor 256 levels up and look it up among the top-level rows by its place among its
 * siblings: the scope "before" there, and no row of the chain was selected. */
static void test_deep_scope_reveals_its_outer_levels(void) {
  Fixture fx = {0}, *f = &fx;
  f->model = views_test_record(deep_workload);
  f->view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(f->view, f->model);
  f->window = views_test_show(GTK_WIDGET(f->view), 900, 400);
  guint64 inside = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(f->model); i++)
    if (gs_trace_model_kind_at(f->model, i) == GS_TRACE_TENSOR_CREATE)
      inside = i;
  g_assert_cmpuint(inside, !=, G_MAXUINT64);
  /* The walk up the chain done ahead (as the capture page does) changes nothing shown... */
  gs_scope_tree_view_prepare_position(f->view, inside);
  g_assert_cmpuint(selected_row_scope(f), ==, 0);
  gs_scope_tree_view_set_position(f->view, inside);
  views_test_settle(GTK_WIDGET(f->view));
  guint64 selected = selected_row_scope(f);
  g_assert_cmpuint(selected, !=, 0);
  guint level = DEEP_LEVELS;
  for (guint d = 0; d < DEEP_LEVELS; d++)
    if (deep_scope_ids[d] == selected)
      level = d;
  g_test_message("selected level %u of %u, %u rows", level, DEEP_LEVELS,
                 g_list_model_get_n_items(rows(f)));
  g_assert_cmpuint(level, <, DEEP_LEVELS);
  g_assert_cmpuint(level, >=, 16);  /* deep enough to see */
  g_assert_cmpuint(level, <=, 100); /* and bounded */
  /* "before", then the chain down to the selected level. */
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, level + 2);
  /* ...and the tree reveals the same, from the kept chain, after going elsewhere. */
  gs_scope_tree_view_set_position(f->view, 0);
  views_test_settle(GTK_WIDGET(f->view));
  gs_scope_tree_view_prepare_position(f->view, inside);
  gs_scope_tree_view_set_position(f->view, inside);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(selected_row_scope(f), ==, selected);
  fixture_tear_down(f, NULL);
}

/* Distinct top-level scope names, more than the tree lets in at once. */
#define MANY_NAMES 600
static guint64 last_name_scope;

static void many_names_workload(void) {
  const int64_t shape[] = {2};
  for (int i = 0; i < MANY_NAMES; i++) {
    char name[32];
    g_snprintf(name, sizeof name, "scope%d", i);
    gs_scope s = gs_scope_begin(name);
    gs_dispose(gs_ones(GS_F32, shape, 1));
    if (i == MANY_NAMES - 1) {
      last_name_scope = s.id;
      gs_tensor kept = gs_ones(GS_F32, shape, 1); /* the scrubber's event below is in here */
      gs_dispose(kept);
    }
    gs_scope_end(s);
  }
}

/* 600 top-level rows: GTK 4.8 would make ~200 rows of 12 labels in one go, so the tree lets
 * them in a few each frame (it says when it is complete); then every name has its row, and
 * the scope the scrubber was in, whose row came last, is revealed and selected. */
static void test_many_names_arrive_in_steps(void) {
  Fixture fx = {0}, *f = &fx;
  f->model = views_test_record(many_names_workload);
  f->view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(f->view, f->model);
  g_assert_false(gs_scope_tree_view_is_complete(f->view));
  guint64 inside = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(f->model); i++)
    if (gs_trace_model_kind_at(f->model, i) == GS_TRACE_TENSOR_CREATE)
      inside = i;
  gs_scope_tree_view_set_position(f->view, inside);
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), <, MANY_NAMES);
  f->window = views_test_show(GTK_WIDGET(f->view), 900, 400);
  for (int i = 0; i < 100 && !gs_scope_tree_view_is_complete(f->view); i++)
    views_test_settle(GTK_WIDGET(f->view));
  g_assert_true(gs_scope_tree_view_is_complete(f->view));
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, MANY_NAMES);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(selected_row_scope(f), ==, last_name_scope);
  /* A small tree is complete from the start. */
  gs_scope_tree_view_set_model(f->view, NULL);
  fixture_tear_down(f, NULL);
  Fixture small = {0};
  fixture_set_up(&small, NULL);
  g_assert_true(gs_scope_tree_view_is_complete(small.view));
  fixture_tear_down(&small, NULL);
}

/* One scope name, more instances than the tree opens by itself to follow the scrubber. */
#define MANY_INSTANCES 12000

static void many_instances_workload(void) {
  const int64_t shape[] = {2};
  for (int i = 0; i < MANY_INSTANCES; i++) {
    gs_scope s = gs_scope_begin("tick");
    gs_dispose(gs_ones(GS_F32, shape, 1));
    gs_scope_end(s);
  }
}

/* Following the scrubber into a group of 12,000 instances selects the group row and leaves
 * it closed (opening it makes 12,000 rows at once); once the user opens it, the scrubber is
 * followed to the instance. */
static void test_big_group_is_not_opened_to_follow(void) {
  Fixture fx = {0}, *f = &fx;
  f->model = views_test_record(many_instances_workload);
  f->view = GS_SCOPE_TREE_VIEW(gs_scope_tree_view_new());
  gs_scope_tree_view_set_model(f->view, f->model);
  f->window = views_test_show(GTK_WIDGET(f->view), 900, 400);
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 1);
  guint64 inside = scope_begin_index(f, "tick", MANY_INSTANCES - 10) + 1;
  gs_scope_tree_view_set_position(f->view, inside);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 1);
  g_assert_cmpuint(gtk_single_selection_get_selected(GTK_SINGLE_SELECTION(rows(f))), ==, 0);
  expand(f, 0);
  /* (In another instance: the tree follows when the innermost scope changes.) */
  gs_scope_tree_view_set_position(f->view, scope_begin_index(f, "tick", MANY_INSTANCES - 5) + 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(g_list_model_get_n_items(rows(f)), ==, 1 + MANY_INSTANCES);
  g_assert_cmpuint(selected_row_scope(f), ==, scope_id(f, "tick", MANY_INSTANCES - 5));
  fixture_tear_down(f, NULL);
}

int main(int argc, char **argv) {
  /* Translated when run with LANGUAGE=zh_CN for screenshots (the suite runs it in C);
   * gtk_test_init does not set the locale. */
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  views_test_init(&argc, &argv);
  g_test_add("/scope-tree/rows-are-lazy", Fixture, NULL, fixture_set_up, test_rows_are_lazy,
             fixture_tear_down);
  g_test_add("/scope-tree/statistics-match-the-engine", Fixture, NULL, fixture_set_up,
             test_statistics_match_the_engine, fixture_tear_down);
  g_test_add("/scope-tree/scopes-not-begun-are-greyed", Fixture, NULL, fixture_set_up,
             test_scopes_not_begun_are_greyed, fixture_tear_down);
  g_test_add("/scope-tree/ended-scopes-are-not-greyed", Fixture, NULL, fixture_set_up,
             test_ended_scopes_are_not_greyed, fixture_tear_down);
  g_test_add("/scope-tree/selection-signals", Fixture, NULL, fixture_set_up,
             test_selection_signals, fixture_tear_down);
  g_test_add("/scope-tree/header-menu-hides-columns", Fixture, NULL, fixture_set_up,
             test_header_menu_hides_columns, fixture_tear_down);
  g_test_add_func("/scope-tree/model-grows", test_model_grows);
  g_test_add_func("/scope-tree/many-names-arrive-in-steps", test_many_names_arrive_in_steps);
  g_test_add_func("/scope-tree/groups-follow-the-scrubber", test_groups_follow_the_scrubber);
  g_test_add_func("/scope-tree/deep-scope-reveals-its-outer-levels",
                  test_deep_scope_reveals_its_outer_levels);
  g_test_add_func("/scope-tree/big-group-is-not-opened-to-follow",
                  test_big_group_is_not_opened_to_follow);
  return g_test_run();
}
