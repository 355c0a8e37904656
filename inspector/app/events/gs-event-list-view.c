/* gs-event-list-view.c: the event list view (see the header). The columns read each row from
 * the model when bound; filters are applied by the list model in idle chunks. */
#include "gs-event-list-view.h"

#include "gs-view.h"

#include <glib/gi18n.h>
#include <inttypes.h>

#include "event-fields.h"
#include "gs-event-row.h"
#include "gs-thread-list.h"
#include "gs-handle-entry.h"
#include "gs-text-cell.h"

struct _GsEventListView {
  GtkWidget parent_instance;

  GtkWidget *search_entry;
  GtkWidget *kind_dropdown;
  GtkWidget *thread_dropdown;
  GtkWidget *rank_dropdown;
  GtkWidget *tensor_entry;
  GtkWidget *scope_entry;
  GtkWidget *scroller;
  GtkWidget *column_view;
  GtkWidget *spinner;
  GtkWidget *count_label;

  gs_trace_model *model;
  GsEventListModel *list;
  GtkSliceListModel *shown; /* the rows the column view has: all, except while a new model
                             * comes in steps (gs_event_list_view_set_model_in_steps) */
  GtkSingleSelection *selection;
  GsThreadList *threads;  /* the thread drop-down's choices */
  GtkColumnViewColumn *thread_column;
  GtkColumnViewColumn *rank_column; /* owned; in the view for a run of several ranks only */
  int thread_digits;      /* the longest thread number's, as the column was last fitted */
  gboolean updating;      /* set_position is moving the selection: emit nothing */
  guint scroll_target;    /* the row set_position chose: kept on screen as the list grows */
  gboolean scroll_pending;
  guint scroll_idle;
};

GS_VIEW_IFACE_INIT(GsEventListView, gs_event_list_view)
G_DEFINE_FINAL_TYPE_WITH_CODE(GsEventListView, gs_event_list_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GS_TYPE_VIEW, gs_event_list_view_view_iface_init))

static void show_rank_column(GsEventListView *self, gboolean show);

GtkWidget *gs_event_list_view_new(void) {
  return g_object_new(GS_TYPE_EVENT_LIST_VIEW, NULL);
}

GsEventListModel *gs_event_list_view_get_list(GsEventListView *self) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_VIEW(self), NULL);
  return self->list;
}

guint64 gs_event_list_view_get_selected_index(GsEventListView *self) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_VIEW(self), G_MAXUINT64);
  guint position = gtk_single_selection_get_selected(self->selection);
  if (position == GTK_INVALID_LIST_POSITION || !self->model)
    return G_MAXUINT64;
  return gs_event_list_model_index_at(self->list, position);
}

static void update_count(GsEventListView *self) {
  guint shown = g_list_model_get_n_items(G_LIST_MODEL(self->list));
  gs_rank_run *run = gs_event_list_model_get_run(self->list);
  guint64 total = run           ? gs_rank_run_n_events(run)
                  : self->model ? gs_trace_model_n_events(self->model)
                                : 0;
  g_autofree char *text = NULL;
  if (shown == total)
    text = g_strdup_printf(ngettext("%" PRIu64 " event",
                                    "%" PRIu64 " events", total), total);
  else
    text = g_strdup_printf(_("%u of %" PRIu64 " events match"), shown, total);
  gtk_label_set_text(GTK_LABEL(self->count_label), text);
  gboolean filtering = gs_event_list_model_get_filtering(self->list);
  gtk_spinner_set_spinning(GTK_SPINNER(self->spinner), filtering);
  gtk_widget_set_visible(self->spinner, filtering);
}

/* Counts change at most once per frame (a live run) or per filter chunk: cheap to show now. */
static void queue_count(GsEventListView *self) {
  update_count(self);
}

/* ---- filters -------------------------------------------------------------------------- */

static gboolean read_handle_entry(GtkWidget *entry, guint64 *id) {
  g_autofree char *message = NULL;
  gboolean ok = gs_parse_handle(gtk_editable_get_text(GTK_EDITABLE(entry)), id, &message);
  if (ok) {
    gtk_widget_remove_css_class(entry, "error");
    gtk_widget_set_tooltip_text(entry, NULL);
  } else {
    gtk_widget_add_css_class(entry, "error");
    gtk_widget_set_tooltip_text(entry, message);
  }
  return ok;
}

/* The kind dropdown lists "all kinds" and then the kinds that are events (not table entries),
 * in order. */
static gs_trace_kind kind_at_position(guint pos) {
  for (int k = GS_TRACE_STRING; k < GS_TRACE_KIND_COUNT; k++)
    if (!gs_trace_kind_is_table((gs_trace_kind)k) && --pos == 0)
      return (gs_trace_kind)k;
  return 0;
}

static guint position_of_kind(gs_trace_kind kind) {
  guint pos = 0;
  for (int k = GS_TRACE_STRING; k < GS_TRACE_KIND_COUNT; k++)
    if (!gs_trace_kind_is_table((gs_trace_kind)k)) {
      pos++;
      if ((gs_trace_kind)k == kind)
        return pos;
    }
  return 0;
}

static void apply_filters(GsEventListView *self) {
  gs_event_filter filter = {0};
  guint kind_pos = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->kind_dropdown));
  if (kind_pos != GTK_INVALID_LIST_POSITION && kind_pos > 0 && kind_at_position(kind_pos))
    filter.kinds = G_GUINT64_CONSTANT(1) << kind_at_position(kind_pos);
  guint thread_pos = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->thread_dropdown));
  if (self->model && thread_pos != GTK_INVALID_LIST_POSITION && thread_pos > 0) {
    const GArray *threads = gs_trace_model_threads(self->model);
    if (threads && thread_pos - 1 < threads->len)
      filter.thread = g_array_index(threads, guint32, thread_pos - 1);
  }
  if (!read_handle_entry(self->tensor_entry, &filter.tensor) ||
      !read_handle_entry(self->scope_entry, &filter.scope))
    return; /* keep the last good filter while the entry is being typed */
  filter.search = gtk_editable_get_text(GTK_EDITABLE(self->search_entry));
  gs_event_list_model_set_filter(self->list, &filter);
  /* "All ranks" is position 0, lane i position i + 1. */
  guint rank_pos = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->rank_dropdown));
  gs_event_list_model_set_lane(self->list, rank_pos == GTK_INVALID_LIST_POSITION || rank_pos == 0
                                               ? G_MAXUINT
                                               : rank_pos - 1);
  queue_count(self);
}

static void on_filter_changed(GsEventListView *self) {
  apply_filters(self);
}

/* A new model starts the thread choice over at "All threads"; new threads are appended. */
/* The thread column holds 4 digits; a log of 100,000 threads widens it to its longest number
 * (the column is otherwise fixed: its cells are not measured, gs-text-cell.h). */
#define THREAD_COLUMN_WIDTH 56
#define THREAD_COLUMN_DIGITS 4

static void fit_thread_column(GsEventListView *self) {
  const GArray *threads = self->model ? gs_trace_model_threads(self->model) : NULL;
  /* Ascending: the last is the longest number. */
  guint32 widest = threads && threads->len ? g_array_index(threads, guint32, threads->len - 1) : 0;
  int digits = 1;
  for (guint32 t = widest; t >= 10; t /= 10)
    digits++;
  /* Called each time a live model grows: the font is asked only when the number grows. */
  if (digits == self->thread_digits)
    return;
  self->thread_digits = digits;
  int width = THREAD_COLUMN_WIDTH;
  if (digits > THREAD_COLUMN_DIGITS) {
    PangoContext *context = gtk_widget_get_pango_context(self->column_view);
    PangoFontMetrics *metrics = pango_context_get_metrics(context, NULL, NULL);
    int digit = pango_font_metrics_get_approximate_digit_width(metrics);
    pango_font_metrics_unref(metrics);
    width += (digits - THREAD_COLUMN_DIGITS) * PANGO_PIXELS_CEIL(digit);
  }
  gtk_column_view_column_set_fixed_width(self->thread_column, width);
}

static void refresh_threads(GsEventListView *self, gboolean new_model) {
  fit_thread_column(self);
  if (!new_model) {
    gs_thread_list_model_grew(self->threads);
    return;
  }
  g_signal_handlers_block_by_func(self->thread_dropdown, on_filter_changed, self);
  gs_thread_list_set_model(self->threads, self->model);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->thread_dropdown), 0);
  g_signal_handlers_unblock_by_func(self->thread_dropdown, on_filter_changed, self);
}

void gs_event_list_view_set_scope_filter(GsEventListView *self, guint64 scope_id) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  char buf[32] = "";
  if (scope_id)
    gs_format_handle(scope_id, buf, sizeof buf);
  gtk_editable_set_text(GTK_EDITABLE(self->scope_entry), buf);
}

void gs_event_list_view_set_tensor_filter(GsEventListView *self, guint64 tensor_id) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  char buf[32] = "";
  if (tensor_id)
    gs_format_handle(tensor_id, buf, sizeof buf);
  gtk_editable_set_text(GTK_EDITABLE(self->tensor_entry), buf);
}

void gs_event_list_view_set_search(GsEventListView *self, const char *text) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gtk_editable_set_text(GTK_EDITABLE(self->search_entry), text ? text : "");
  /* The search entry reports changes after a delay; filter now for callers and tests. */
  apply_filters(self);
}

void gs_event_list_view_set_kind_filter(GsEventListView *self, gs_trace_kind kind) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  guint pos = position_of_kind(kind);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->kind_dropdown), pos);
}

void gs_event_list_view_focus_search(GsEventListView *self) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gtk_widget_grab_focus(self->search_entry);
}

/* ---- model ---------------------------------------------------------------------------- */

/* GTK 4.8's column view makes about 200 rows (1,400 widgets) when a model arrives, whatever
 * fits on screen: 55 ms to make and as long to measure on a shared core. In steps, its rows
 * come STEP_ROWS at a time, each step a turn of the main loop (the capture page takes them
 * while it shows "loading"), up to STEP_UNTIL (past the rows GTK makes and then reuses as it
 * scrolls), then all the rest at once. */
#define STEP_ROWS 40
#define STEP_UNTIL 240

void gs_event_list_view_set_model_in_steps(GsEventListView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gtk_slice_list_model_set_size(self->shown, 0);
  gs_event_list_view_set_model(self, model);
  gtk_slice_list_model_set_size(self->shown, STEP_ROWS);
}

gboolean gs_event_list_view_step(GsEventListView *self) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_VIEW(self), TRUE);
  guint size = gtk_slice_list_model_get_size(self->shown);
  if (size == G_MAXUINT)
    return TRUE;
  if (size < STEP_UNTIL - STEP_ROWS) {
    gtk_slice_list_model_set_size(self->shown, size + STEP_ROWS);
    return FALSE;
  }
  gtk_slice_list_model_set_size(self->shown, G_MAXUINT);
  return TRUE;
}

void gs_event_list_view_set_model(GsEventListView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  if (gtk_slice_list_model_get_size(self->shown) != 0) /* not the first of the steps */
    gtk_slice_list_model_set_size(self->shown, G_MAXUINT);
  self->model = model;
  gs_event_list_model_set_model(self->list, model); /* the run, if any, goes with it */
  gtk_widget_set_visible(self->rank_dropdown, FALSE);
  show_rank_column(self, FALSE);
  refresh_threads(self, TRUE);
  queue_count(self);
}

void gs_event_list_view_set_run(GsEventListView *self, gs_rank_run *run) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gboolean ranks = run && gs_rank_run_n_lanes(run) > 1;
  g_autoptr(GtkStringList) choices = gtk_string_list_new(NULL);
  gtk_string_list_append(choices, _("All ranks"));
  for (guint lane = 0; ranks && lane < gs_rank_run_n_lanes(run); lane++) {
    g_autofree char *name = g_strdup_printf(_("Rank %u"), gs_rank_run_rank(run, lane));
    gtk_string_list_append(choices, name);
  }
  g_signal_handlers_block_by_func(self->rank_dropdown, on_filter_changed, self);
  gtk_drop_down_set_model(GTK_DROP_DOWN(self->rank_dropdown), G_LIST_MODEL(choices));
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->rank_dropdown), 0);
  g_signal_handlers_unblock_by_func(self->rank_dropdown, on_filter_changed, self);
  /* A single log keeps today's columns: the rank only says something with several. */
  gtk_widget_set_visible(self->rank_dropdown, ranks);
  show_rank_column(self, ranks);
  gs_event_list_model_set_run(self->list, run);
  apply_filters(self);
}

void gs_event_list_view_set_rank_filter(GsEventListView *self, guint lane) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->rank_dropdown), lane == G_MAXUINT ? 0 : lane + 1);
}

void gs_event_list_view_model_grew(GsEventListView *self) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  gs_event_list_model_model_grew(self->list);
  refresh_threads(self, FALSE);
  queue_count(self);
}

/* GTK 4.8 has no gtk_column_view_scroll_to, and its inner "list.scroll-to-item" action
 * leaves the list drawn wrong while rows are being appended (a live run). Rows all have the
 * same height, so the position maps linearly onto the scrolled window's adjustment. The
 * adjustment learns about new rows only at the next layout, so the target is applied again
 * whenever it changes (see on_adjustment_changed). */
static void scroll_to(GsEventListView *self, guint position) {
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(self->scroller));
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->list));
  double upper = gtk_adjustment_get_upper(adj), page = gtk_adjustment_get_page_size(adj);
  if (n == 0 || upper <= page)
    return;
  double row = upper / n;
  double top = row * position, value = gtk_adjustment_get_value(adj);
  if (top >= value && top + row <= value + page)
    return; /* already on screen */
  gtk_adjustment_set_value(adj, CLAMP(top - (page - row) / 2, 0, upper - page));
}

static gboolean scroll_idle_cb(gpointer data) {
  GsEventListView *self = data;
  self->scroll_idle = 0;
  if (self->scroll_pending)
    scroll_to(self, self->scroll_target);
  return G_SOURCE_REMOVE;
}

/* Scrolls after the current layout: the list view sets the adjustment while it allocates,
 * and moving it from inside that leaves the rows drawn at the old place. A zero timeout
 * (not an idle) runs before the next frame even while a live run keeps frames coming. */
static void queue_scroll(GsEventListView *self) {
  if (!self->scroll_idle)
    self->scroll_idle = g_timeout_add(0, scroll_idle_cb, self);
}

static void on_adjustment_changed(GsEventListView *self) {
  if (self->scroll_pending)
    queue_scroll(self);
}

void gs_event_list_view_set_position(GsEventListView *self, guint64 index) {
  g_return_if_fail(GS_IS_EVENT_LIST_VIEW(self));
  /* The scrubber moves over the first rank's log: its event's place among every rank's. */
  gs_rank_run *run = gs_event_list_model_get_run(self->list);
  if (run)
    index = gs_rank_run_position_of(run, 0, index);
  guint position = gs_event_list_model_position_of(self->list, index);
  self->updating = TRUE;
  self->scroll_pending = position != G_MAXUINT;
  if (position == G_MAXUINT) {
    gtk_selection_model_unselect_all(GTK_SELECTION_MODEL(self->selection));
  } else {
    if (gtk_single_selection_get_selected(self->selection) != position)
      gtk_single_selection_set_selected(self->selection, position);
    self->scroll_target = position;
    queue_scroll(self);
  }
  self->updating = FALSE;
}

static void on_selection_changed(GsEventListView *self) {
  if (self->updating || !self->model)
    return;
  self->scroll_pending = FALSE; /* the user picked a row: it is on screen already */
  guint position = gtk_single_selection_get_selected(self->selection);
  if (position == GTK_INVALID_LIST_POSITION)
    return;
  guint64 index = gs_event_list_model_index_at(self->list, position);
  gs_rank_run *run = gs_event_list_model_get_run(self->list);
  if (run) {
    /* The other views show the first rank's log: another rank's event moves them to the
     * first rank's last event by then. */
    guint lane;
    gs_rank_run_event_at(run, index, &lane, &index);
    if (lane != 0) {
      guint64 after = gs_rank_run_lane_index_at(run, 0, gs_rank_run_time(run, lane, index) + 1);
      gs_view_emit_event_selected(GS_VIEW(self), after ? after - 1 : 0);
      return;
    }
  }
  gs_view_emit_event_selected(GS_VIEW(self), index);
  /* The event's tensor, if it is about one, goes to the details panel. */
  gs_trace_event e;
  if (gs_trace_model_event(self->model, index, &e)) {
    guint64 tensor = e.tensor ? e.tensor : (e.kind == GS_TRACE_OWNER_CHANGE ? e.object : 0);
    if (tensor)
      gs_view_emit_tensor_selected(GS_VIEW(self), tensor);
  }
}

static void on_items_changed(GsEventListView *self) {
  queue_count(self);
}

/* ---- columns -------------------------------------------------------------------------- */

typedef enum { COL_RANK, COL_SEQ, COL_TIME, COL_THREAD, COL_KIND, COL_SUMMARY, COL_SITE } column_id;

static void setup_label(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
  (void)factory;
  column_id col = GPOINTER_TO_INT(data);
  /* The summary and the place share the room left by the fixed columns by their texts'
   * lengths; the others have a fixed width. */
  GtkWidget *cell = gs_text_cell_new(col == COL_SEQ || col == COL_TIME ? 1.0f : 0.0f,
                                     col == COL_SUMMARY || col == COL_SITE);
  if (col == COL_SEQ || col == COL_TIME || col == COL_THREAD || col == COL_RANK)
    gtk_widget_add_css_class(cell, "numeric");
  if (col == COL_KIND)
    gtk_widget_add_css_class(cell, "gs-event-kind");
  gtk_list_item_set_child(item, cell);
}

/* The length of a site's leading "file:line" (in every language the site's text starts
 * with it, model/index/site-table.c), 0 if it has none (an interpreter's
 * "function (file:line)"). */
static gsize file_line_length(const char *site) {
  for (const char *p = site; *p && *p != ' '; p++)
    if (*p == ':' && g_ascii_isdigit(p[1])) {
      for (p++; g_ascii_isdigit(*p); p++)
        ;
      return (gsize)(p - site);
    }
  return 0;
}

static void bind_label(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data) {
  (void)factory;
  GsEventRow *row = gtk_list_item_get_item(item);
  GsTextCell *cell = GS_TEXT_CELL(gtk_list_item_get_child(item));
  g_autofree char *owned = NULL;
  const char *text = NULL;
  switch ((column_id)GPOINTER_TO_INT(data)) {
  case COL_RANK: text = owned = gs_event_row_dup_rank(row); break;
  case COL_SEQ:
    text = owned = gs_event_row_dup_seq(row);
    break;
  case COL_TIME:
    text = owned = gs_event_row_dup_time(row);
    break;
  case COL_THREAD:
    text = owned = gs_event_row_dup_thread(row);
    break;
  case COL_KIND:
    text = gs_event_row_get_kind(row);
    break;
  case COL_SUMMARY:
    text = gs_event_row_get_summary(row);
    break;
  case COL_SITE:
    text = gs_event_row_get_site(row);
    break;
  }
  /* The place is often ellipsized: its file:line stays whole (the column is at least that
   * wide, the summary gives way), the function after it may go; its tooltip has it whole
   * (the other columns have none). */
  if ((column_id)GPOINTER_TO_INT(data) == COL_SITE) {
    gs_text_cell_set_text_keeping(cell, text, file_line_length(text));
    gs_view_set_tooltip(GTK_WIDGET(cell), *text ? text : NULL);
  } else {
    gs_text_cell_set_text(cell, text);
  }
}

static GtkColumnViewColumn *new_column(const char *title, column_id col, int width,
                                       gboolean expand) {
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(setup_label), GINT_TO_POINTER(col));
  g_signal_connect(factory, "bind", G_CALLBACK(bind_label), GINT_TO_POINTER(col));
  GtkColumnViewColumn *column = gtk_column_view_column_new(title, factory);
  gtk_column_view_column_set_resizable(column, TRUE);
  gtk_column_view_column_set_expand(column, expand);
  if (width > 0)
    gtk_column_view_column_set_fixed_width(column, width);
  return column;
}

static GtkColumnViewColumn *add_column(GsEventListView *self, const char *title, column_id col,
                                       int width, gboolean expand) {
  GtkColumnViewColumn *column = new_column(title, col, width, expand);
  gtk_column_view_append_column(GTK_COLUMN_VIEW(self->column_view), column);
  g_object_unref(column);
  return column; /* the view holds it */
}

/* The Rank column is in the view only while it is shown: GTK 4.8's column view counts a
 * hidden column's fixed width in its own least width, which took 48 px from the views
 * beside the list. */
static void show_rank_column(GsEventListView *self, gboolean show) {
  GtkColumnView *view = GTK_COLUMN_VIEW(self->column_view);
  gboolean in = gtk_column_view_column_get_column_view(self->rank_column) == view;
  if (show && !in)
    gtk_column_view_insert_column(view, 0, self->rank_column);
  else if (!show && in)
    gtk_column_view_remove_column(view, self->rank_column);
}

static void fill_kinds(GsEventListView *self) {
  GtkStringList *kinds = gtk_string_list_new(NULL);
  gtk_string_list_append(kinds, _("All kinds"));
  for (guint pos = 1; kind_at_position(pos); pos++)
    gtk_string_list_append(kinds, gs_trace_kind_name(kind_at_position(pos)));
  gtk_drop_down_set_model(GTK_DROP_DOWN(self->kind_dropdown), G_LIST_MODEL(kinds));
  g_object_unref(kinds);
}

/* ---- GObject -------------------------------------------------------------------------- */

static void gs_event_list_view_dispose(GObject *object) {
  GsEventListView *self = GS_EVENT_LIST_VIEW(object);
  g_clear_handle_id(&self->scroll_idle, g_source_remove);
  self->scroll_pending = FALSE;
  if (self->scroller)
    g_signal_handlers_disconnect_by_data(
        gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(self->scroller)), self);
  /* GTK 4.8's column view asserts if it is finalized with rows still bound: drop them first. */
  if (self->column_view)
    gtk_column_view_set_model(GTK_COLUMN_VIEW(self->column_view), NULL);
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_EVENT_LIST_VIEW);
  gs_widget_unparent_children(GTK_WIDGET(self));
  if (self->list) {
    g_signal_handlers_disconnect_by_data(self->list, self);
    gs_event_list_model_set_model(self->list, NULL);
  }
  if (self->selection)
    g_signal_handlers_disconnect_by_data(self->selection, self);
  g_clear_object(&self->selection);
  g_clear_object(&self->shown);
  g_clear_object(&self->list);
  g_clear_object(&self->threads);
  g_clear_object(&self->rank_column);
  G_OBJECT_CLASS(gs_event_list_view_parent_class)->dispose(object);
}

static void gs_event_list_view_class_init(GsEventListViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_event_list_view_dispose;


  gtk_widget_class_set_template_from_resource(
      widget_class, "/io/github/gradscope/Inspector/gs-event-list-view.ui");
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, search_entry);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, kind_dropdown);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, thread_dropdown);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, rank_dropdown);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, tensor_entry);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, scope_entry);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, scroller);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, column_view);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, spinner);
  gtk_widget_class_bind_template_child(widget_class, GsEventListView, count_label);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "gs-event-list");
}

static void gs_event_list_view_init(GsEventListView *self) {
  gtk_widget_init_template(GTK_WIDGET(self));

  self->list = gs_event_list_model_new();
  self->shown = gtk_slice_list_model_new(g_object_ref(G_LIST_MODEL(self->list)), 0, G_MAXUINT);
  self->selection = gtk_single_selection_new(g_object_ref(G_LIST_MODEL(self->shown)));
  gtk_single_selection_set_autoselect(self->selection, FALSE);
  gtk_single_selection_set_can_unselect(self->selection, TRUE);
  gtk_column_view_set_model(GTK_COLUMN_VIEW(self->column_view),
                            GTK_SELECTION_MODEL(self->selection));
  g_signal_connect_swapped(self->selection, "notify::selected",
                           G_CALLBACK(on_selection_changed), self);
  g_signal_connect_swapped(self->list, "items-changed", G_CALLBACK(on_items_changed), self);
  g_signal_connect_swapped(
      gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(self->scroller)), "changed",
      G_CALLBACK(on_adjustment_changed), self);
  g_signal_connect_swapped(self->list, "notify::filtering", G_CALLBACK(on_items_changed),
                           self);

  /* Translators: column titles of the event list (Rank: the distributed run's rank whose log
   * holds the event, shown only for several ranks' logs). */
  self->rank_column = new_column(_("Rank"), COL_RANK, 48, FALSE); /* show_rank_column */
  add_column(self, _("#"), COL_SEQ, 72, FALSE);
  add_column(self, _("Time"), COL_TIME, 100, FALSE);
  self->thread_column = add_column(self, _("Thread"), COL_THREAD, THREAD_COLUMN_WIDTH, FALSE);
  add_column(self, _("Kind"), COL_KIND, 140, FALSE);
  add_column(self, _("Summary"), COL_SUMMARY, -1, TRUE);
  /* TRANSLATORS: column of the event list: where the program caused the event (file:line).
   * No fixed width: the list does not scroll sideways, so its columns' widths are the least
   * the capture page's views can be; this one is as wide as its file:line parts, and
   * ellipsizes the functions after them. */
  add_column(self, _("Where"), COL_SITE, -1, FALSE);

  fill_kinds(self);
  self->threads = gs_thread_list_new();
  gtk_drop_down_set_model(GTK_DROP_DOWN(self->thread_dropdown), G_LIST_MODEL(self->threads));

  g_signal_connect_swapped(self->search_entry, "search-changed",
                           G_CALLBACK(on_filter_changed), self);
  g_signal_connect_swapped(self->kind_dropdown, "notify::selected",
                           G_CALLBACK(on_filter_changed), self);
  g_signal_connect_swapped(self->thread_dropdown, "notify::selected",
                           G_CALLBACK(on_filter_changed), self);
  g_signal_connect_swapped(self->rank_dropdown, "notify::selected", G_CALLBACK(on_filter_changed),
                           self);
  g_signal_connect_swapped(self->tensor_entry, "changed", G_CALLBACK(on_filter_changed), self);
  g_signal_connect_swapped(self->scope_entry, "changed", G_CALLBACK(on_filter_changed), self);
  update_count(self);
}
