/* gs-compare-page.c: the Compare view (see the header). The comparison itself is
 * model/analysis/run-diff.c's, the same `gradscope diff` prints; this file loads the pair, lays the
 * chart, the table and the two graph views out, and moves them together. */
#include "gs-compare-page.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>

#include "graph-render.h"
#include "gs-diff-row.h"

/* The differences table's height: a header and TABLE_SHORT_ROWS rows, or about ten. */
#define TABLE_HEIGHT 160
#define TABLE_SHORT_ROWS 6
#define TABLE_TALL_HEIGHT 280

struct _GsComparePage {
  GtkWidget parent_instance;

  GtkStack *stack;
  AdwStatusPage *error_page;
  GtkLabel *alignment;
  GsCompareChart *chart;
  GtkColumnView *table;
  GtkStack *table_stack; /* the table, or a note that the runs agree */
  GListStore *store;
  GtkDropDown *pass_choice;
  GtkLabel *graph_labels[2];
  GsGraphView *graphs[2];

  char *paths[2];
  char *names[2]; /* basenames, for labels */
  char *title, *subtitle;
  gboolean busy;
  char *error;
  GCancellable *cancellable;

  gs_trace_model *models[2];
  gs_run_summary *summaries[2];
  gs_run_diff *diff;
  GPtrArray *rows; /* gs_run_diff_row*, which the store's objects borrow */
  guint64 positions[2];
  gboolean choosing_pass; /* the pass menu is being set from code, not by the user */
};

G_DEFINE_FINAL_TYPE(GsComparePage, gs_compare_page, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_TITLE, PROP_SUBTITLE, PROP_BUSY, N_PROPS };
static GParamSpec *props[N_PROPS];
enum { SIGNAL_TOAST, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- moving both runs ------------------------------------------------------------------ */

static void show_graph_at(GsComparePage *self, guint run, guint64 seq, GHashTable *marks) {
  guint64 index = seq == G_MAXUINT64 ? G_MAXUINT64
                                     : gs_trace_model_find_seq(self->models[run], seq);
  gs_graph_view_set_marks(self->graphs[run], marks);
  if (index == G_MAXUINT64)
    return;
  self->positions[run] = index;
  gs_graph_view_set_position(self->graphs[run], index);
}

/* The marks of run's graph at pass (the graph's keys for op and leaf items are "n12"): the
 * nodes only this run's pass has, and the nodes alive then that the pass does not walk (a
 * detached branch stays alive until its scope ends: without this it would look like part of
 * the pass). */
static GHashTable *marks_for(GsComparePage *self, guint run, const gs_run_pass *pass,
                             const GArray *only, gs_graph_mark mark) {
  GHashTable *marks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  guint64 index = gs_trace_model_find_seq(self->models[run], pass->seq);
  const gs_replay *state =
      index == G_MAXUINT64 ? NULL : gs_trace_model_seek(self->models[run], index);
  g_autoptr(GHashTable) in_pass = g_hash_table_new(gs_id_hash, gs_id_equal);
  for (guint i = 0; i < pass->nodes->len; i++)
    g_hash_table_add(in_pass, &g_array_index(pass->nodes, gs_run_node, i).id);
  if (state) {
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, state->nodes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
      const gs_replay_node *node = value;
      if (!g_hash_table_contains(in_pass, &node->id))
        g_hash_table_insert(marks, g_strdup_printf("n%" G_GUINT64_FORMAT, node->id),
                            GINT_TO_POINTER(GS_GRAPH_MARK_OUTSIDE));
    }
  }
  for (guint i = 0; i < only->len; i++)
    g_hash_table_insert(marks,
                        g_strdup_printf("n%" G_GUINT64_FORMAT,
                                        g_array_index(only, gs_run_node, i).id),
                        GINT_TO_POINTER(mark));
  return marks;
}

static void set_graph_label(GsComparePage *self, guint run, const char *what) {
  /* Translators: a run ("A" or "B"), its file and what its graph shows */
  g_autofree char *text =
      g_strdup_printf(_("%s: %s — %s"), run ? "B" : "A", self->names[run], what);
  gtk_label_set_text(self->graph_labels[run], text);
}

void gs_compare_page_show_pass(GsComparePage *self, guint index) {
  g_return_if_fail(GS_IS_COMPARE_PAGE(self));
  if (!self->diff || index >= self->diff->passes->len)
    return;
  const gs_run_diff_pass *p = self->diff->passes->pdata[index];
  const gs_run_pass *side[2] = {p->a, p->b};
  const GArray *only[2] = {p->removed, p->added};
  for (guint run = 0; run < 2; run++) {
    g_autoptr(GHashTable) marks =
        side[run] ? marks_for(self, run, side[run], only[run],
                              run ? GS_GRAPH_MARK_ADDED : GS_GRAPH_MARK_REMOVED)
                  : NULL;
    show_graph_at(self, run, side[run] ? side[run]->seq : G_MAXUINT64, marks);
    g_autofree char *what = NULL;
    if (!side[run])
      what = g_strdup(_("no matching backward pass"));
    else if (run == 0)
      what = g_strdup_printf(_("%u nodes in the pass, %u removed in B"), side[run]->nodes->len,
                             only[run]->len);
    else
      what = g_strdup_printf(_("%u nodes in the pass, %u added in B"), side[run]->nodes->len,
                             only[run]->len);
    set_graph_label(self, run, what);
  }
  gs_compare_chart_set_cursor(self->chart, p->a ? (double)p->a->seq
                                                : gs_run_diff_align(self->diff, p->b->seq));
  self->choosing_pass = TRUE;
  gtk_drop_down_set_selected(self->pass_choice, index);
  self->choosing_pass = FALSE;
}

void gs_compare_page_activate_row(GsComparePage *self, guint position) {
  g_return_if_fail(GS_IS_COMPARE_PAGE(self));
  if (!self->rows || position >= self->rows->len)
    return;
  const gs_run_diff_row *row = self->rows->pdata[position];
  if (row->pass >= 0) {
    gs_compare_page_show_pass(self, (guint)row->pass);
    return;
  }
  guint64 seqs[2] = {row->a_seq, row->b_seq};
  for (guint run = 0; run < 2; run++) {
    show_graph_at(self, run, seqs[run], NULL);
    g_autofree char *what =
        seqs[run] == G_MAXUINT64
            ? g_strdup(_("no such place in this run"))
            : g_strdup_printf(_("the graph after event %" PRIu64), (uint64_t)seqs[run]);
    set_graph_label(self, run, what);
  }
  if (row->a_seq != G_MAXUINT64)
    gs_compare_chart_set_cursor(self->chart, (double)row->a_seq);
  else if (row->b_seq != G_MAXUINT64)
    gs_compare_chart_set_cursor(self->chart, gs_run_diff_align(self->diff, row->b_seq));
}

static void on_row_activated(GtkColumnView *view, guint position, GsComparePage *self) {
  (void)view;
  gs_compare_page_activate_row(self, position);
}

static void on_pass_chosen(GtkDropDown *choice, GParamSpec *pspec, GsComparePage *self) {
  (void)pspec;
  guint selected = gtk_drop_down_get_selected(choice);
  if (!self->choosing_pass && selected != GTK_INVALID_LIST_POSITION)
    gs_compare_page_show_pass(self, selected);
}

/* A click on the chart: both runs to that moment (B's through the shared marks). */
static void on_position_chosen(GsCompareChart *chart, double a_pos, GsComparePage *self) {
  gs_compare_chart_set_cursor(chart, a_pos);
  guint64 seqs[2] = {(guint64)a_pos, (guint64)MAX(gs_run_diff_unalign(self->diff, a_pos), 0)};
  for (guint run = 0; run < 2; run++) {
    /* The last event at or before the seq: seqs need not all be in the log. */
    gs_trace_model *m = self->models[run];
    guint64 n = gs_trace_model_n_events(m), index = G_MAXUINT64;
    for (guint64 i = 0; i < n; i++)
      if (gs_trace_model_seq_at(m, i) <= seqs[run])
        index = i;
    if (index == G_MAXUINT64)
      continue;
    show_graph_at(self, run, gs_trace_model_seq_at(m, index), NULL);
    g_autofree char *what = g_strdup_printf(_("the graph after event %" PRIu64),
                                            (uint64_t)gs_trace_model_seq_at(m, index));
    set_graph_label(self, run, what);
  }
}

/* ---- the table ------------------------------------------------------------------------- */

static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column) {
  (void)factory;
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), GPOINTER_TO_INT(column) == 0 ? 0 : 1);
  if (GPOINTER_TO_INT(column) == 0)
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_MIDDLE);
  else
    gtk_widget_add_css_class(label, "numeric");
  gtk_list_item_set_child(item, label);
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column) {
  (void)factory;
  const gs_run_diff_row *row = gs_diff_row_get(GS_DIFF_ROW(gtk_list_item_get_item(item)));
  const char *texts[] = {row->what, row->a_text, row->b_text, row->change};
  GtkLabel *label = GTK_LABEL(gtk_list_item_get_child(item));
  gtk_label_set_text(label, texts[GPOINTER_TO_INT(column)]);
  if (GPOINTER_TO_INT(column) == 0)
    gtk_widget_set_tooltip_text(GTK_WIDGET(label), row->what);
}

static void add_column(GtkColumnView *view, const char *title, int column, gboolean expand) {
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), GINT_TO_POINTER(column));
  g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), GINT_TO_POINTER(column));
  GtkColumnViewColumn *c = gtk_column_view_column_new(title, factory);
  gtk_column_view_column_set_expand(c, expand);
  gtk_column_view_column_set_resizable(c, TRUE);
  gtk_column_view_append_column(view, c);
  g_object_unref(c);
}

/* ---- loading --------------------------------------------------------------------------- */

typedef struct loaded {
  char *paths[2];
  gs_trace_model *models[2];
  gs_run_summary *summaries[2];
} loaded;

static void loaded_free(gpointer p) {
  loaded *l = p;
  for (guint run = 0; run < 2; run++) {
    g_free(l->paths[run]);
    g_clear_pointer(&l->models[run], gs_trace_model_free);
    g_clear_pointer(&l->summaries[run], gs_run_summary_free);
  }
  g_free(l);
}

static void load_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel) {
  (void)source;
  loaded *l = data;
  for (guint run = 0; run < 2; run++) {
    GError *error = NULL;
    l->summaries[run] = gs_run_summary_read(l->paths[run], &error);
    if (l->summaries[run])
      l->models[run] = gs_trace_model_load_file(l->paths[run], NULL, NULL, cancel, &error);
    if (error) {
      g_task_return_error(task, error);
      return;
    }
  }
  g_task_return_boolean(task, TRUE);
}

static void set_busy(GsComparePage *self, gboolean busy) {
  self->busy = busy;
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
}

static void show_pair(GsComparePage *self) {
  self->diff = gs_run_diff_new(self->summaries[0], self->summaries[1]);
  self->rows = gs_run_diff_rows(self->diff);
  for (guint i = 0; i < self->rows->len; i++) {
    g_autoptr(GsDiffRow) row = gs_diff_row_new(self->rows->pdata[i]);
    g_list_store_append(self->store, row);
  }
  gs_compare_chart_set_runs(self->chart, self->models[0], self->models[1], self->diff,
                            self->names[0], self->names[1]);
  guint shared = self->diff->anchors->len / 2 - 2;
  g_autofree char *aligned =
      shared ? g_strdup_printf(g_dngettext(NULL, "Aligned by %u step or epoch mark both runs have",
                                           "Aligned by %u step or epoch marks both runs have",
                                           shared),
                               shared)
             : g_strdup(_("No step or epoch marks in common: aligned by the fraction of each "
                          "run"));
  g_autofree char *summary = g_strdup_printf(
      g_dngettext(NULL, "%s · %u difference", "%s · %u differences", self->rows->len), aligned,
      self->rows->len);
  gtk_label_set_text(self->alignment, summary);
  gtk_stack_set_visible_child_name(self->table_stack, self->rows->len ? "rows" : "agree");
  /* The paned gives the table its least height: room for about ten rows when there are more
   * than the short table shows (at 160 px a pair's twenty showed as five and half a sixth,
   * as if cut); the handle gives it more, or the graphs. */
  gtk_widget_set_size_request(GTK_WIDGET(self->table_stack), -1,
                              self->rows->len > TABLE_SHORT_ROWS ? TABLE_TALL_HEIGHT
                                                                 : TABLE_HEIGHT);

  GtkStringList *passes = gtk_string_list_new(NULL);
  guint first_changed = G_MAXUINT;
  for (guint i = 0; i < self->diff->passes->len; i++) {
    const gs_run_diff_pass *p = self->diff->passes->pdata[i];
    g_autofree char *name = gs_run_diff_pass_name(p);
    gtk_string_list_append(passes, name);
    if (first_changed == G_MAXUINT && (p->removed->len || p->added->len || !p->a || !p->b))
      first_changed = i;
  }
  self->choosing_pass = TRUE;
  gtk_drop_down_set_model(self->pass_choice, G_LIST_MODEL(passes));
  self->choosing_pass = FALSE;
  g_object_unref(passes);
  gtk_widget_set_sensitive(GTK_WIDGET(self->pass_choice), self->diff->passes->len > 0);
  for (guint run = 0; run < 2; run++)
    gs_graph_view_set_model(self->graphs[run], self->models[run]);
  if (self->diff->passes->len)
    gs_compare_page_show_pass(self, first_changed == G_MAXUINT ? 0 : first_changed);
  else
    for (guint run = 0; run < 2; run++)
      set_graph_label(self, run, _("no backward passes"));
  gtk_stack_set_visible_child_name(self->stack, "pair");
}

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user_data) {
  (void)source, (void)user_data;
  GTask *task = G_TASK(result);
  GsComparePage *self = g_object_get_data(G_OBJECT(task), "page");
  g_autoptr(GError) error = NULL;
  gboolean ok = g_task_propagate_boolean(task, &error);
  if (g_cancellable_is_cancelled(self->cancellable))
    return; /* the page was closed while the logs were read */
  if (!ok) {
    self->error = g_strdup(error->message);
    adw_status_page_set_description(self->error_page, self->error);
    gtk_stack_set_visible_child_name(self->stack, "error");
    set_busy(self, FALSE);
    g_signal_emit(self, signals[SIGNAL_TOAST], 0, self->error);
    return;
  }
  loaded *l = g_task_get_task_data(task);
  for (guint run = 0; run < 2; run++) {
    self->models[run] = g_steal_pointer(&l->models[run]);
    self->summaries[run] = g_steal_pointer(&l->summaries[run]);
  }
  show_pair(self);
  set_busy(self, FALSE);
  /* A damaged log is compared up to the damage: say so, naming the file. */
  for (guint run = 0; run < 2; run++)
    if (self->summaries[run]->problem) {
      g_autofree char *message =
          g_strdup_printf("%s: %s", self->names[run], self->summaries[run]->problem);
      g_signal_emit(self, signals[SIGNAL_TOAST], 0, message);
    }
}

/* ---- construction ---------------------------------------------------------------------- */

static GtkWidget *legend_swatch(gs_graph_mark mark, const char *text) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *swatch = gtk_label_new("■");
  double r, g, b;
  gs_graph_mark_rgb(mark, &r, &g, &b);
  g_autofree char *markup = g_strdup_printf("<span foreground=\"#%02x%02x%02x\">■</span>",
                                            (int)(r * 255), (int)(g * 255), (int)(b * 255));
  gtk_label_set_markup(GTK_LABEL(swatch), markup);
  gtk_box_append(GTK_BOX(box), swatch);
  gtk_box_append(GTK_BOX(box), gtk_label_new(text));
  return box;
}

static GtkWidget *build_graphs(GsComparePage *self) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start(bar, 12);
  gtk_widget_set_margin_end(bar, 12);
  gtk_box_append(GTK_BOX(bar), gtk_label_new(_("Graphs of")));
  self->pass_choice = GTK_DROP_DOWN(gtk_drop_down_new(NULL, NULL));
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->pass_choice),
                              _("The backward pass whose graphs are shown side by side"));
  g_signal_connect(self->pass_choice, "notify::selected", G_CALLBACK(on_pass_chosen), self);
  gtk_box_append(GTK_BOX(bar), GTK_WIDGET(self->pass_choice));
  GtkWidget *spacer = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_hexpand(spacer, TRUE);
  gtk_box_append(GTK_BOX(bar), spacer);
  gtk_box_append(GTK_BOX(bar),
                 legend_swatch(GS_GRAPH_MARK_REMOVED, _("Removed in B (only in A)")));
  gtk_box_append(GTK_BOX(bar), legend_swatch(GS_GRAPH_MARK_ADDED, _("Added in B (only in B)")));
  gtk_box_append(GTK_BOX(bar), legend_swatch(GS_GRAPH_MARK_OUTSIDE, _("Alive, not in this pass")));
  gtk_box_append(GTK_BOX(box), bar);

  GtkWidget *pair = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_set_homogeneous(GTK_BOX(pair), TRUE);
  gtk_widget_set_vexpand(pair, TRUE);
  for (guint run = 0; run < 2; run++) {
    GtkWidget *column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    self->graph_labels[run] = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_ellipsize(self->graph_labels[run], PANGO_ELLIPSIZE_END);
    gtk_widget_add_css_class(GTK_WIDGET(self->graph_labels[run]), "heading");
    gtk_box_append(GTK_BOX(column), GTK_WIDGET(self->graph_labels[run]));
    self->graphs[run] = GS_GRAPH_VIEW(gs_graph_view_new());
    gtk_widget_set_vexpand(GTK_WIDGET(self->graphs[run]), TRUE);
    gtk_box_append(GTK_BOX(column), GTK_WIDGET(self->graphs[run]));
    gtk_box_append(GTK_BOX(pair), column);
  }
  gtk_box_append(GTK_BOX(box), pair);
  return box;
}

static GtkWidget *build_top(GsComparePage *self) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  self->alignment = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_xalign(self->alignment, 0);
  gtk_widget_add_css_class(GTK_WIDGET(self->alignment), "dim-label");
  gtk_widget_set_margin_start(GTK_WIDGET(self->alignment), 12);
  gtk_widget_set_margin_top(GTK_WIDGET(self->alignment), 6);
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->alignment));
  self->chart = GS_COMPARE_CHART(gs_compare_chart_new());
  gtk_widget_set_size_request(GTK_WIDGET(self->chart), -1, 150);
  g_signal_connect(self->chart, "position-chosen", G_CALLBACK(on_position_chosen), self);
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->chart));

  self->store = g_list_store_new(GS_TYPE_DIFF_ROW);
  GtkSingleSelection *selection = gtk_single_selection_new(G_LIST_MODEL(g_object_ref(self->store)));
  gtk_single_selection_set_autoselect(selection, FALSE);
  self->table = GTK_COLUMN_VIEW(gtk_column_view_new(GTK_SELECTION_MODEL(selection)));
  gtk_column_view_set_single_click_activate(self->table, TRUE);
  gtk_widget_add_css_class(GTK_WIDGET(self->table), "data-table");
  add_column(self->table, _("Difference"), 0, TRUE);
  add_column(self->table, "A", 1, FALSE);
  add_column(self->table, "B", 2, FALSE);
  add_column(self->table, _("Change"), 3, FALSE);
  g_signal_connect(self->table, "activate", G_CALLBACK(on_row_activated), self);
  GtkWidget *scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), GTK_WIDGET(self->table));
  self->table_stack = GTK_STACK(gtk_stack_new());
  gtk_stack_add_named(self->table_stack, scroller, "rows");
  GtkWidget *agree = gtk_label_new(_("The two runs agree in everything compared: memory, "
                                     "graphs, call sites, scopes and events by kind."));
  gtk_label_set_wrap(GTK_LABEL(agree), TRUE);
  gtk_widget_add_css_class(agree, "dim-label");
  gtk_stack_add_named(self->table_stack, agree, "agree");
  gtk_widget_set_vexpand(GTK_WIDGET(self->table_stack), TRUE);
  gtk_widget_set_size_request(GTK_WIDGET(self->table_stack), -1, TABLE_HEIGHT);
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->table_stack));
  return box;
}

static void build(GsComparePage *self) {
  self->stack = GTK_STACK(gtk_stack_new());
  gtk_widget_set_parent(GTK_WIDGET(self->stack), GTK_WIDGET(self));

  GtkWidget *spinner = gtk_spinner_new();
  gtk_spinner_start(GTK_SPINNER(spinner));
  gtk_widget_set_size_request(spinner, 32, 32);
  gtk_widget_set_halign(spinner, GTK_ALIGN_CENTER);
  gtk_widget_set_valign(spinner, GTK_ALIGN_CENTER);
  gtk_stack_add_named(self->stack, spinner, "loading");

  self->error_page = ADW_STATUS_PAGE(adw_status_page_new());
  adw_status_page_set_icon_name(self->error_page, "dialog-error-symbolic");
  adw_status_page_set_title(self->error_page, _("Cannot Compare These Captures"));
  gtk_stack_add_named(self->stack, GTK_WIDGET(self->error_page), "error");

  GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
  gtk_paned_set_start_child(GTK_PANED(paned), build_top(self));
  gtk_paned_set_end_child(GTK_PANED(paned), build_graphs(self));
  /* The graphs take what the window has beyond the chart and a short table: they need room
   * to be read; the handle gives the table more. */
  gtk_paned_set_resize_start_child(GTK_PANED(paned), FALSE);
  gtk_paned_set_resize_end_child(GTK_PANED(paned), TRUE);
  gtk_paned_set_shrink_start_child(GTK_PANED(paned), FALSE);
  gtk_paned_set_shrink_end_child(GTK_PANED(paned), FALSE);
  gtk_stack_add_named(self->stack, paned, "pair");
  gtk_stack_set_visible_child_name(self->stack, "loading");
}

GsComparePage *gs_compare_page_new(const char *path_a, const char *path_b) {
  g_return_val_if_fail(path_a && path_b, NULL);
  GsComparePage *self = g_object_new(GS_TYPE_COMPARE_PAGE, NULL);
  const char *paths[2] = {path_a, path_b};
  loaded *l = g_new0(loaded, 1);
  for (guint run = 0; run < 2; run++) {
    self->paths[run] = g_strdup(paths[run]);
    self->names[run] = g_path_get_basename(paths[run]);
    l->paths[run] = g_strdup(paths[run]);
  }
  self->title = g_strdup_printf("%s ↔ %s", self->names[0], self->names[1]);
  /* Translators: the Compare tab's subtitle: the two files compared */
  self->subtitle = g_strdup_printf(_("Comparing %s with %s"), path_a, path_b);
  set_busy(self, TRUE);
  GTask *task = g_task_new(NULL, self->cancellable, on_loaded, NULL);
  g_object_set_data_full(G_OBJECT(task), "page", g_object_ref(self), g_object_unref);
  g_task_set_task_data(task, l, loaded_free);
  g_task_run_in_thread(task, load_in_thread);
  g_object_unref(task);
  return self;
}

gboolean gs_compare_page_get_busy(GsComparePage *self) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self), FALSE);
  return self->busy;
}

const char *gs_compare_page_get_error(GsComparePage *self) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self), NULL);
  return self->error;
}

GListModel *gs_compare_page_get_rows(GsComparePage *self) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self), NULL);
  return G_LIST_MODEL(self->store);
}

GsCompareChart *gs_compare_page_get_chart(GsComparePage *self) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self), NULL);
  return self->chart;
}

GsGraphView *gs_compare_page_get_graph(GsComparePage *self, guint run) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self) && run < 2, NULL);
  return self->graphs[run];
}

const gs_run_diff *gs_compare_page_get_diff(GsComparePage *self) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self), NULL);
  return self->diff;
}

guint64 gs_compare_page_get_position(GsComparePage *self, guint run) {
  g_return_val_if_fail(GS_IS_COMPARE_PAGE(self) && run < 2, G_MAXUINT64);
  return self->positions[run];
}

static void gs_compare_page_get_property(GObject *object, guint id, GValue *value,
                                         GParamSpec *pspec) {
  GsComparePage *self = GS_COMPARE_PAGE(object);
  switch (id) {
  case PROP_TITLE:
    g_value_set_string(value, self->title);
    break;
  case PROP_SUBTITLE:
    g_value_set_string(value, self->subtitle);
    break;
  case PROP_BUSY:
    g_value_set_boolean(value, self->busy);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void gs_compare_page_dispose(GObject *object) {
  GsComparePage *self = GS_COMPARE_PAGE(object);
  g_cancellable_cancel(self->cancellable);
  /* The graph views borrow the models: they go first. */
  if (self->stack) {
    gtk_widget_unparent(GTK_WIDGET(self->stack));
    self->stack = NULL;
  }
  G_OBJECT_CLASS(gs_compare_page_parent_class)->dispose(object);
}

static void gs_compare_page_finalize(GObject *object) {
  GsComparePage *self = GS_COMPARE_PAGE(object);
  g_clear_object(&self->cancellable);
  g_clear_object(&self->store);
  g_clear_pointer(&self->rows, g_ptr_array_unref);
  g_clear_pointer(&self->diff, gs_run_diff_free);
  for (guint run = 0; run < 2; run++) {
    g_clear_pointer(&self->models[run], gs_trace_model_free);
    g_clear_pointer(&self->summaries[run], gs_run_summary_free);
    g_free(self->paths[run]);
    g_free(self->names[run]);
  }
  g_free(self->title);
  g_free(self->subtitle);
  g_free(self->error);
  G_OBJECT_CLASS(gs_compare_page_parent_class)->finalize(object);
}

static void gs_compare_page_class_init(GsComparePageClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = gs_compare_page_get_property;
  object_class->dispose = gs_compare_page_dispose;
  object_class->finalize = gs_compare_page_finalize;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  props[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_SUBTITLE] = g_param_spec_string("subtitle", NULL, NULL, NULL,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
                                              G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, props);
  signals[SIGNAL_TOAST] = g_signal_new("toast", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void gs_compare_page_init(GsComparePage *self) {
  self->cancellable = g_cancellable_new();
  self->positions[0] = self->positions[1] = G_MAXUINT64;
  build(self);
}
