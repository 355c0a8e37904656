/* gs-scope-tree-view.c: see gs-scope-tree-view.h.
 *
 * Cells are plain labels filled from the model at the scrubber's event. The view remembers
 * which cells are bound, so moving the scrubber or growing the model rewrites only the rows
 * GTK holds (a bounded number) instead of telling GTK that every row changed; a live run's new
 * scopes arrive as rows appended to their parent's list (gs-scope-list.c). A group row's
 * totals come from the model's running sums (gs_trace_model_scope_group_stats), never from
 * walking its instances. */
#include "gs-scope-tree-view.h"

#include "gs-view.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>
#include <string.h>

#include "gs-scope-item.h"
#include "gs-scope-list.h"
#include "escape.h"
#include "gs-view-format.h"

typedef enum {
  COLUMN_NAME,
  COLUMN_ID,
  COLUMN_THREAD,
  COLUMN_BEGIN,
  COLUMN_END,
  COLUMN_CREATED,
  COLUMN_MOVED_IN,
  COLUMN_DISPOSED,
  COLUMN_MOVED_OUT,
  COLUMN_ALIVE,
  COLUMN_BYTES,
  COLUMN_PEAK,
  COLUMN_DURATION,
  N_COLUMNS
} ScopeColumn;

struct _GsScopeTreeView {
  GtkWidget parent_instance;

  GtkStack *stack;
  GtkScrolledWindow *scroller;
  GtkColumnView *column_view;
  GtkColumnViewColumn *columns[N_COLUMNS];

  gs_trace_model *model; /* borrowed */
  guint64 position;
  GtkTreeListModel *tree;
  GtkSliceListModel *roots_shown; /* a big tree's top-level rows let in a frame at a time */
  guint grow_id;                  /* the tick callback letting them in */
  guint64 chain_scope;            /* the scope whose chain of outer scopes is in chain */
  GArray *chain;                  /* guint64 ids, that scope first (see outer_chain) */
  GtkSingleSelection *selection;
  GPtrArray *lists;       /* every GsScopeList alive (weak), to refresh or detach them */
  GHashTable *bound;      /* GtkListItem* bound now -> BoundCell */
  guint64 selected_scope;
  GdkFrameClock *clock;   /* while mapped: the clock whose update phase refreshes cells */
  gulong update_id;
  gboolean many_threads;  /* the thread column was shown for a second thread */
  gboolean cells_stale;   /* the position or the model moved while the view was unmapped */

  /* Following the scrubber (see follow_scrubber) */
  guint64 followed;       /* the innermost scope open at the scrubber's event, last seen */
  gboolean selecting;     /* the view itself is moving the selection */
  gboolean pinned;        /* the user picked the selected row... */
  guint64 pin_scope;      /* ...this scope's (0 for a group row)... */
  guint pin_group;        /* ...or this group's (G_MAXUINT for a scope row) */
  gboolean grew;          /* the model grew since the scrubber last moved */
  guint scroll_target;    /* the row revealed last, kept on screen as rows are added */
  gboolean scroll_pending;
  guint scroll_id;
  /* At a live run's end the innermost scope changes every frame; revealing each one (expand,
   * select, scroll, relayout) cost half a live run's frames: it follows at most this often,
   * catching up with a timeout. */
  gint64 live_interval_us, live_followed_at;
  guint live_follow_id;

  /* The last group's totals (see group_now), for this position and model size. */
  gboolean group_cached;
  guint cached_group;
  guint64 cached_position, cached_events;
  gboolean cached_finished;
  gs_scope_group_stats cached_stats;
};

GS_VIEW_IFACE_INIT(GsScopeTreeView, gs_scope_tree_view)
G_DEFINE_FINAL_TYPE_WITH_CODE(GsScopeTreeView, gs_scope_tree_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GS_TYPE_VIEW, gs_scope_tree_view_view_iface_init))

/* Besides the view contract's signals (gs-view.h). */
enum { SIGNAL_SCOPE_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- rows ----------------------------------------------------------------------------- */

static void list_finalized(gpointer data, GObject *where_the_object_was) {
  GsScopeTreeView *self = data;
  g_ptr_array_remove_fast(self->lists, where_the_object_was);
}

static GsScopeList *track_list(GsScopeTreeView *self, GsScopeList *list) {
  g_object_weak_ref(G_OBJECT(list), list_finalized, self);
  g_ptr_array_add(self->lists, list);
  return list;
}

static void forget_lists(GsScopeTreeView *self) {
  for (guint i = 0; i < self->lists->len; i++) {
    GsScopeList *list = g_ptr_array_index(self->lists, i);
    g_object_weak_unref(G_OBJECT(list), list_finalized, self);
    gs_scope_list_detach(list);
  }
  g_ptr_array_set_size(self->lists, 0);
}

/* GtkTreeListModel asks this when a row may be expanded: a group (its instances), a scope
 * that has children, or one still open at the newest event (a live run may begin scopes
 * inside it later). */
static GListModel *create_children(gpointer item, gpointer user_data) {
  GsScopeTreeView *self = user_data;
  if (!self->model)
    return NULL;
  if (gs_scope_item_is_group(item))
    return G_LIST_MODEL(
        track_list(self, gs_scope_list_new_group(self->model, gs_scope_item_get_group(item))));
  guint64 id = gs_scope_item_get_scope_id(item);
  const GArray *children = gs_trace_model_scope_groups(self->model, id);
  const gs_replay_scope *scope = gs_trace_model_scope(self->model, id);
  gboolean may_grow = scope && !scope->ended && !gs_trace_model_damaged(self->model);
  if ((!children || children->len == 0) && !may_grow)
    return NULL;
  return G_LIST_MODEL(track_list(self, gs_scope_list_new(self->model, id)));
}

/* ---- cells ---------------------------------------------------------------------------- */

/* Events are shown by the engine's own number (what its error messages and the event list
 * say), not by their position in the log. */
static char *event_number_text(guint64 seq) {
  return g_strdup_printf("%" G_GUINT64_FORMAT, seq);
}

/* Where a scope stands at the scrubber's event. */
typedef enum {
  SCOPE_FUTURE, /* not begun yet: greyed, no statistics */
  SCOPE_OPEN,   /* begun and not ended: its name in bold, "open" as its end */
  SCOPE_ENDED,  /* ended at or before it: shown plainly, its statistics final */
} ScopeMoment;

/* The scope as it was at the scrubber's event (NULL before it began). The state at a past
 * event keeps only its open scopes: ended ones come from the model's list (final records).
 * Following a live run, the scrubber is on the last event: that state is the model's head,
 * and seeking there would replay every event of the chunk just taken in a second time. */
static const gs_replay *state_now(GsScopeTreeView *self) {
  gs_trace_model *m = self->model;
  guint64 n = gs_trace_model_n_events(m);
  if (n == 0)
    return NULL;
  return self->position + 1 >= n ? gs_trace_model_head(m) : gs_trace_model_seek(m, self->position);
}

static const gs_replay_scope *scope_now(GsScopeTreeView *self, guint64 id) {
  const gs_replay *state = state_now(self);
  return state ? gs_trace_model_scope_in(self->model, state, id) : NULL;
}

/* A group's instances summed at the scrubber's event. Each cell of a group row asks, and the
 * sum walks the instances open then: once per row, not once per cell (100,000 open instances
 * of one name took milliseconds a walk, for every column of the row at every bind). */
static void group_now(GsScopeTreeView *self, guint group, gs_scope_group_stats *out) {
  guint64 events = gs_trace_model_n_events(self->model);
  gboolean finished = gs_trace_model_finished(self->model);
  if (self->group_cached && self->cached_group == group &&
      self->cached_position == self->position && self->cached_events == events &&
      self->cached_finished == finished) {
    *out = self->cached_stats;
    return;
  }
  const gs_replay *state = state_now(self);
  if (state)
    gs_trace_model_scope_group_stats(self->model, group, state, self->position, out);
  else
    memset(out, 0, sizeof *out);
  self->group_cached = TRUE;
  self->cached_group = group;
  self->cached_position = self->position;
  self->cached_events = events;
  self->cached_finished = finished;
  self->cached_stats = *out;
}

/* What a scope still held when the log ended and nothing will dispose: what an ended scope
 * was left holding, or what one never ended held at the last event of a finished log. */
static guint64 scope_leaked(GsScopeTreeView *self, const gs_replay_scope *now) {
  if (!now)
    return 0;
  if (now->ended)
    return now->alive;
  gboolean over = gs_trace_model_finished(self->model) &&
                  self->position + 1 >= gs_trace_model_n_events(self->model);
  return over ? now->alive : 0;
}

static ScopeMoment moment_of(const gs_replay_scope *now) {
  return !now ? SCOPE_FUTURE : now->ended ? SCOPE_ENDED : SCOPE_OPEN;
}

/* A group is open while any instance is, not begun before its first one. */
static ScopeMoment group_moment(const gs_scope_group_stats *st) {
  return st->instances == 0 ? SCOPE_FUTURE : st->open ? SCOPE_OPEN : SCOPE_ENDED;
}

static char *count_text(guint64 n) {
  return g_strdup_printf("%" G_GUINT64_FORMAT, n);
}

/* What a scope's row and its group's both show: its counters and the bytes it holds. */
typedef struct {
  guint64 created, moved_in, disposed, moved_out, alive, bytes;
} scope_counts;

/* The text of a counter's cell, or NULL for another column. */
static char *counts_cell(ScopeColumn column, scope_counts c) {
  switch (column) {
  case COLUMN_CREATED: return count_text(c.created);
  case COLUMN_MOVED_IN: return count_text(c.moved_in);
  case COLUMN_DISPOSED: return count_text(c.disposed);
  case COLUMN_MOVED_OUT: return count_text(c.moved_out);
  case COLUMN_ALIVE: return count_text(c.alive);
  case COLUMN_BYTES: return gs_view_bytes(c.bytes);
  default: return NULL;
  }
}

/* The text of one cell of a group row. */
static char *group_cell_text(GsScopeTreeView *self, guint group, const gs_scope_group_stats *st,
                             ScopeColumn column) {
  gs_trace_model *m = self->model;
  const GArray *instances = gs_trace_model_scope_group_instances(m, group);
  if (!instances || instances->len == 0)
    return g_strdup("");
  switch (column) {
  case COLUMN_NAME: {
    const char *name = gs_trace_model_scope_group_name(m, group);
    g_autofree char *count = gs_view_count(instances->len);
    /* TRANSLATORS: a row standing for every scope of one name, e.g. "train step × 2,700" */
    g_autofree char *shown = gs_text_clip(name && *name ? name : _("(unnamed)"),
                                          GS_TEXT_SHOWN_MAX);
    return g_strdup_printf(_("%s × %s"), shown, count);
  }
  case COLUMN_BEGIN: {
    const gs_replay_scope *first = gs_trace_model_scope_at(m, g_array_index(instances, guint, 0));
    return first ? event_number_text(first->begin_seq) : g_strdup("");
  }
  case COLUMN_END:
    return g_strdup(st->open ? C_("scope", "open") : "");
  default:
    break;
  }
  if (st->instances == 0)
    return g_strdup("");
  char *counted = counts_cell(column, (scope_counts){st->created, st->moved_in, st->disposed,
                                                     st->moved_out, st->alive, st->bytes});
  if (counted)
    return counted;
  if (column != COLUMN_PEAK)
    return g_strdup("");
  if (st->instances == 1 || st->peak_min == st->peak_max)
    return gs_view_bytes(st->peak_max);
  g_autofree char *lo = gs_view_bytes(st->peak_min);
  g_autofree char *mean = gs_view_bytes(st->peak_mean);
  g_autofree char *hi = gs_view_bytes(st->peak_max);
  /* TRANSLATORS: the smallest, mean and largest peak of a group's scopes */
  return g_strdup_printf(_("%s / %s / %s"), lo, mean, hi);
}

/* The text of one cell. */
static char *cell_text(GsScopeTreeView *self, GsScopeItem *item, const gs_replay_scope *now,
                       ScopeColumn column) {
  gs_trace_model *m = self->model;
  const gs_replay_scope *head = gs_trace_model_scope_at(m, gs_scope_item_get_position(item));
  if (!head)
    return g_strdup("");
  switch (column) {
  case COLUMN_NAME:
    /* Clipped: the label ellipsizes, but Pango shapes all of a 64 KB name first. */
    return gs_text_clip(head->name && *head->name ? head->name : _("(unnamed)"),
                        GS_TEXT_SHOWN_MAX);
  case COLUMN_ID:
    return gs_view_handle(gs_scope_item_get_scope_id(item));
  case COLUMN_THREAD:
    return g_strdup_printf("%u", head->thread);
  case COLUMN_BEGIN:
    return event_number_text(head->begin_seq);
  case COLUMN_END:
    if (now && now->ended)
      return event_number_text(now->end_seq);
    return g_strdup(now ? C_("scope", "open") : "");
  default:
    break;
  }
  if (!now)
    return g_strdup("");
  char *counted = counts_cell(column, (scope_counts){now->created, now->moved_in, now->disposed,
                                                     now->moved_out, now->alive, now->bytes});
  if (counted)
    return counted;
  switch (column) {
  case COLUMN_PEAK:
    return gs_view_bytes(now->peak_bytes);
  case COLUMN_DURATION: {
    guint64 end_ns = now->ended ? now->end_ns : gs_trace_model_time_at(m, self->position);
    return gs_view_duration(end_ns > now->begin_ns ? end_ns - now->begin_ns : 0);
  }
  default:
    return g_strdup("");
  }
}

static GtkLabel *cell_label(GtkListItem *list_item, ScopeColumn column) {
  GtkWidget *child = gtk_list_item_get_child(list_item);
  if (column == COLUMN_NAME)
    child = gtk_tree_expander_get_child(GTK_TREE_EXPANDER(child));
  return GTK_LABEL(child);
}

static void set_css_class(GtkWidget *widget, const char *name, gboolean on) {
  if (on == gtk_widget_has_css_class(widget, name))
    return;
  if (on)
    gtk_widget_add_css_class(widget, name);
  else
    gtk_widget_remove_css_class(widget, name);
}

/* What a row's tooltip says about a scope at the scrubber's event. */
static char *moment_text(const gs_replay_scope *now) {
  switch (moment_of(now)) {
  case SCOPE_FUTURE:
    return g_strdup(_("Not begun yet at the chosen event"));
  case SCOPE_OPEN:
    return g_strdup(_("Open at the chosen event"));
  case SCOPE_ENDED:
  default: {
    g_autofree char *end = event_number_text(now->end_seq);
    return g_strdup_printf(_("Ended at event %s"), end);
  }
  }
}

/* Where a scope's objects came from and went, as a sum that balances: every object it ever
 * held was created in it or moved in, and was disposed, moved out or is still held. */
static char *account_text(guint64 created, guint64 moved_in, guint64 disposed, guint64 moved_out,
                          guint64 alive, guint64 leaked) {
  g_autofree char *sum = g_strdup_printf(
      /* TRANSLATORS: the balance of a scope's objects; the numbers always add up */
      _("Created %" PRIu64 " + moved in %" PRIu64 " = disposed %" PRIu64
        " + moved out %" PRIu64 " + still held %" PRIu64),
      created, moved_in, disposed, moved_out, alive);
  g_autofree char *leak =
      leaked ? g_strdup_printf(ngettext("%" PRIu64 " object is leaked: nothing will "
                                        "dispose it (its scope ended or the log did first).",
                                        "%" PRIu64 " objects are leaked: nothing will "
                                        "dispose them (their scope ended or the log did first).",
                                        leaked),
                               leaked)
             : NULL;
  return g_strconcat(sum, "\n",
                     _("Moved in: objects handed over alive by another scope or the caller "
                       "(an inner scope's move to outer, an attach, a move between scopes)."),
                     "\n",
                     _("Moved out: objects that left alive, to an outer scope, another scope, "
                       "the caller, a module or an optimizer."),
                     leak ? "\n" : NULL, leak, NULL);
}

/* A group row's tooltip: its instances at the scrubber's event and their balance. */
static char *describe_group(GsScopeTreeView *self, guint group) {
  gs_scope_group_stats st;
  group_now(self, group, &st);
  if (st.instances == 0)
    return g_strdup(_("Not begun yet at the chosen event"));
  g_autofree char *which = g_strdup_printf(
      ngettext("%" PRIu64 " scope of this name had begun at the chosen event, "
               "%" PRIu64 " of them open; their totals:",
               "%" PRIu64 " scopes of this name had begun at the chosen event, "
               "%" PRIu64 " of them open; their totals:",
               st.instances),
      st.instances, st.open);
  g_autofree char *account =
      account_text(st.created, st.moved_in, st.disposed, st.moved_out, st.alive, st.leaked);
  g_autofree char *lo = gs_view_bytes(st.peak_min);
  g_autofree char *mean = gs_view_bytes(st.peak_mean);
  g_autofree char *hi = gs_view_bytes(st.peak_max);
  g_autofree char *peaks = g_strdup_printf(_("Peak bytes of one scope: smallest %s, mean %s, "
                                             "largest %s."),
                                           lo, mean, hi);
  return g_strjoin("\n", which, account, peaks, NULL);
}

/* The convention (README, "Scope tree"): a scope not begun yet at the scrubber's event is
 * greyed; an open one has its name in bold and "open" in the accent colour as its end; an
 * ended one looks like any other row, its end event in the End column and in the tooltip, so
 * the last event of a finished run does not look disabled. Tooltips are made when asked
 * (on_query_tooltip): setting one makes GTK 4.8 query the pointer, a round trip to the
 * display server per cell. */
static void style_cell(GtkWidget *label, ScopeColumn column, ScopeMoment moment,
                       gboolean leaked) {
  set_css_class(label, "dim-label", moment == SCOPE_FUTURE);
  if (column == COLUMN_ALIVE)
    set_css_class(label, "warning", leaked);
  if (column == COLUMN_NAME)
    set_css_class(label, "gs-scope-open", moment == SCOPE_OPEN); /* bold (style.css) */
  if (column == COLUMN_END)
    set_css_class(label, "accent", moment == SCOPE_OPEN);
}

/* A cell GTK has bound to a row, and what it shows. */
typedef struct {
  ScopeColumn column;
  guint group;         /* a group row's group, G_MAXUINT for a scope row */
  guint64 scope_id;    /* 0: no scope row */
  guint position;      /* the scope's, for gs_trace_model_scope_at */
  gboolean written;    /* the cell shows the scope as it was at some event... */
  ScopeMoment moment;  /* ...where it stood so */
  gboolean may_grow;   /* name cells: the expander was set up while the scope was open */
} BoundCell;

static GsScopeItem *row_item(GtkListItem *list_item) {
  GtkTreeListRow *row = gtk_list_item_get_item(list_item);
  return row ? gtk_tree_list_row_get_item(row) : NULL;
}

/* A label given its own text again queues nothing, so unchanged cells cost no layout. The
 * text of a scope not begun yet and of an ended one does not depend on the event (names,
 * begin, final statistics): while it stays so, the cell is left alone. */
static void update_cell(GsScopeTreeView *self, GtkListItem *list_item, BoundCell *cell) {
  GtkLabel *label = cell_label(list_item, cell->column);
  if (cell->group != G_MAXUINT && self->model) {
    /* A group's totals change whenever an instance begins or ends: always rewritten (a label
     * given its own text again costs nothing). */
    gs_scope_group_stats st;
    group_now(self, cell->group, &st);
    g_autofree char *text = group_cell_text(self, cell->group, &st, cell->column);
    gtk_label_set_text(label, text);
    style_cell(GTK_WIDGET(label), cell->column, group_moment(&st), st.leaked > 0);
    cell->written = FALSE;
    return;
  }
  if (!cell->scope_id || !self->model) {
    gtk_label_set_text(label, "");
    cell->written = FALSE;
    return;
  }
  if (cell->may_grow) {
    /* An open scope offers an expander (create_children); once it has ended (or the log
     * broke off) the expander must ask again, and GtkTreeExpander only asks on a new row. */
    const gs_replay_scope *head = gs_trace_model_scope_at(self->model, cell->position);
    if (!head || head->ended || gs_trace_model_damaged(self->model)) {
      cell->may_grow = FALSE;
      GtkTreeExpander *expander = GTK_TREE_EXPANDER(gtk_list_item_get_child(list_item));
      GtkTreeListRow *row = gtk_list_item_get_item(list_item);
      gtk_tree_expander_set_list_row(expander, NULL);
      gtk_tree_expander_set_list_row(expander, row);
    }
  }
  const gs_replay_scope *now = scope_now(self, cell->scope_id);
  ScopeMoment moment = moment_of(now);
  /* An open scope left at the end of a finished log becomes leaked: rewritten while open. */
  if (cell->written && moment == cell->moment && moment != SCOPE_OPEN)
    return;
  g_autoptr(GsScopeItem) item = row_item(list_item);
  if (!item)
    return;
  g_autofree char *text = cell_text(self, item, now, cell->column);
  gtk_label_set_text(label, text);
  style_cell(GTK_WIDGET(label), cell->column, moment, scope_leaked(self, now) > 0);
  cell->written = TRUE;
  cell->moment = moment;
}

/* Every bound cell, mapped or not: GTK keeps a bounded number of rows bound (those on
 * screen and a few beyond), so this costs the same however long the run. Cells must never be
 * rewritten when GTK maps them: GTK 4.8 maps rows from inside size-allocate (seen under gdb
 * in a live digits run: gtk_widget_allocate, gtk_widget_set_child_visible, map), and a label
 * that queues a resize there is a column width change the column view has already laid out:
 * its header and rows were left without an allocation, and the whole pane stayed blank
 * ("Trying to snapshot GtkListItemWidget ... without a current allocation"). */
static void refresh_cells(GsScopeTreeView *self) {
  GHashTableIter iter;
  gpointer list_item, cell;
  g_hash_table_iter_init(&iter, self->bound);
  while (g_hash_table_iter_next(&iter, &list_item, &cell))
    update_cell(self, list_item, cell);
  self->cells_stale = FALSE;
}

/* Runs in the frame clock's update phase after every tick callback (a live source's pump
 * among them), before layout: label changes made here are measured and allocated in the
 * same frame, and show the chunk just taken in. A tick callback added during a frame would
 * only run in the next one. Scrubbing with a held arrow key or following a live run moves the
 * position faster than frames are drawn: cells are rewritten at most once per frame. */
static void on_clock_update(GsScopeTreeView *self, GdkFrameClock *clock) {
  (void)clock;
  if (self->cells_stale && self->model)
    refresh_cells(self);
}

static void queue_refresh(GsScopeTreeView *self) {
  self->cells_stale = TRUE;
  /* Unmapped: refreshed on the first frame after it is mapped again. */
  if (self->clock)
    gdk_frame_clock_request_phase(self->clock, GDK_FRAME_CLOCK_PHASE_UPDATE);
}

static gboolean on_query_tooltip(GtkWidget *label, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip, GtkListItem *list_item) {
  (void)x, (void)y, (void)keyboard;
  GsScopeTreeView *self =
      GS_SCOPE_TREE_VIEW(gtk_widget_get_ancestor(label, GS_TYPE_SCOPE_TREE_VIEW));
  g_autoptr(GsScopeItem) item = row_item(list_item);
  if (!self || !item)
    return FALSE;
  gboolean account = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(label), "account"));
  g_autofree char *text = NULL;
  if (gs_scope_item_is_group(item))
    text = describe_group(self, gs_scope_item_get_group(item));
  else if (account)
    text = gs_scope_tree_view_describe_account(self, gs_scope_item_get_scope_id(item));
  else
    text = gs_scope_tree_view_describe_scope(self, gs_scope_item_get_scope_id(item));
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                       gpointer user_data) {
  (void)user_data;
  ScopeColumn column = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(factory), "column"));
  GtkWidget *label = gtk_label_new(NULL);
  if (column == COLUMN_NAME) {
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_width_chars(GTK_LABEL(label), 10); /* names stay readable in a narrow pane */
    GtkWidget *expander = gtk_tree_expander_new();
    gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), label);
    gtk_list_item_set_child(list_item, expander);
  } else {
    gtk_label_set_xalign(GTK_LABEL(label), 1);
    gtk_widget_add_css_class(label, "numeric");
    gtk_list_item_set_child(list_item, label);
  }
  gboolean account = column == COLUMN_CREATED || column == COLUMN_MOVED_IN ||
                     column == COLUMN_DISPOSED || column == COLUMN_MOVED_OUT ||
                     column == COLUMN_ALIVE;
  g_object_set_data(G_OBJECT(label), "account", GINT_TO_POINTER(account));
  if (column == COLUMN_NAME || column == COLUMN_END || account) {
    gtk_widget_set_has_tooltip(label, TRUE);
    g_signal_connect(label, "query-tooltip", G_CALLBACK(on_query_tooltip), list_item);
  }
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                      gpointer user_data) {
  GsScopeTreeView *self = user_data;
  ScopeColumn column = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(factory), "column"));
  if (column == COLUMN_NAME)
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(gtk_list_item_get_child(list_item)),
                                   gtk_list_item_get_item(list_item));
  BoundCell *cell = g_new0(BoundCell, 1);
  cell->column = column;
  g_autoptr(GsScopeItem) item = row_item(list_item);
  cell->group = item && gs_scope_item_is_group(item) ? gs_scope_item_get_group(item) : G_MAXUINT;
  cell->scope_id = item ? gs_scope_item_get_scope_id(item) : 0;
  cell->position = item && cell->group == G_MAXUINT ? gs_scope_item_get_position(item) : 0;
  const gs_replay_scope *head = item && self->model && cell->group == G_MAXUINT
                                   ? gs_trace_model_scope_at(self->model, cell->position)
                                   : NULL;
  cell->may_grow = column == COLUMN_NAME && head && !head->ended;
  g_hash_table_insert(self->bound, list_item, cell);
  update_cell(self, list_item, cell);
}

static void unbind_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                        gpointer user_data) {
  GsScopeTreeView *self = user_data;
  ScopeColumn column = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(factory), "column"));
  if (column == COLUMN_NAME)
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(gtk_list_item_get_child(list_item)), NULL);
  g_hash_table_remove(self->bound, list_item);
}

static void teardown_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                          gpointer user_data) {
  (void)factory;
  GsScopeTreeView *self = user_data;
  g_hash_table_remove(self->bound, list_item);
}

/* ---- selection ------------------------------------------------------------------------ */

static GsScopeItem *item_at(GsScopeTreeView *self, guint position) {
  if (!self->tree)
    return NULL;
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(self->tree), position);
  return row ? gtk_tree_list_row_get_item(row) : NULL;
}

/* scope-selected says which scope the user picked (the capture page filters the event list
 * by it); a row the view selects to follow the scrubber is not a pick. */
static void announce_scope(GsScopeTreeView *self, guint64 id) {
  if (id == self->selected_scope)
    return;
  self->selected_scope = id;
  g_signal_emit(self, signals[SIGNAL_SCOPE_SELECTED], 0, id);
}

static void on_selection_changed(GsScopeTreeView *self) {
  if (self->selecting)
    return;
  guint position = gtk_single_selection_get_selected(self->selection);
  g_autoptr(GsScopeItem) item =
      position == GTK_INVALID_LIST_POSITION ? NULL : item_at(self, position);
  /* The user's pick holds until they move the scrubber out of it (follow_scrubber). */
  self->pinned = item != NULL;
  self->pin_scope = item ? gs_scope_item_get_scope_id(item) : 0;
  self->pin_group = item ? gs_scope_item_get_group(item) : G_MAXUINT;
  self->scroll_pending = FALSE; /* a row the user picked is on screen already */
  announce_scope(self, self->pin_scope);
}

/* ---- following the scrubber ----------------------------------------------------------- */

/* The list view sets the adjustment while it allocates: scrolling from inside that leaves
 * rows drawn at the old place, so it waits for a zero timeout (which, unlike an idle, runs
 * before the next frame while a live run keeps frames coming). GTK 4.8 has no
 * gtk_column_view_scroll_to; rows all have one height, so whether the row is on screen
 * already is read from the adjustment. */
static gboolean scroll_cb(gpointer data) {
  GsScopeTreeView *self = data;
  self->scroll_id = 0;
  if (!self->scroll_pending || !self->tree)
    return G_SOURCE_REMOVE;
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(self->scroller);
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->tree));
  double upper = gtk_adjustment_get_upper(adj), page = gtk_adjustment_get_page_size(adj);
  if (n == 0 || upper <= page || self->scroll_target >= n)
    return G_SOURCE_REMOVE;
  double row = upper / n;
  double top = row * self->scroll_target, value = gtk_adjustment_get_value(adj);
  if (top >= value && top + row <= value + page)
    return G_SOURCE_REMOVE; /* already on screen */
  /* The list view's own action moves its anchor to the row: setting the adjustment this far
   * left GTK 4.8's list drawing no rows (seen in the groups test's screenshot). */
  for (GtkWidget *c = gtk_widget_get_first_child(GTK_WIDGET(self->column_view)); c;
       c = gtk_widget_get_next_sibling(c))
    if (GTK_IS_LIST_VIEW(c))
      gtk_widget_activate_action(c, "list.scroll-to-item", "u", self->scroll_target);
  return G_SOURCE_REMOVE;
}

static void queue_scroll(GsScopeTreeView *self) {
  if (!self->scroll_id)
    self->scroll_id = g_timeout_add(0, scroll_cb, self);
}

static void on_adjustment_changed(GsScopeTreeView *self) {
  if (self->scroll_pending)
    queue_scroll(self);
}

static void select_quietly(GsScopeTreeView *self, guint position) {
  self->selecting = TRUE;
  if (position == GTK_INVALID_LIST_POSITION)
    gtk_selection_model_unselect_all(GTK_SELECTION_MODEL(self->selection));
  else
    gtk_single_selection_set_selected(self->selection, position);
  self->selecting = FALSE;
}

/* Levels revealed at most: each is a row expanded (and rows bound) on the UI thread, and
 * indented (style.css keeps the scope tree's indent small): 64 levels made the first frame
 * of a 10,000-deep log 0.1 s longer and left the deepest name past the edge of the pane. */
#define MAX_DEPTH 24
/* A group of more instances than this is not opened to follow the scrubber (its row is
 * selected): opening makes a tree row per instance at once, 0.17 s for many-threads' 100,000.
 * One the user opened is followed into. */
#define FOLLOW_MAX_GROUP 10000

static void select_and_scroll(GsScopeTreeView *self, guint position) {
  select_quietly(self, position);
  self->scroll_target = position;
  self->scroll_pending = TRUE;
  queue_scroll(self);
}

/* Expands the rows down to scope (its ancestors and, where it has siblings of its name, its
 * group), selects its row and scrolls to it. A scope nested deeper than MAX_DEPTH is revealed
 * down to its ancestor MAX_DEPTH levels from the top, which is selected: the walk starts at a
 * top-level scope (starting MAX_DEPTH levels above the scope, as it did, looked a nested scope
 * up among the top-level rows by its place among its siblings, and opened the wrong ones),
 * and 100,000 levels opened one by one would hold the UI thread for seconds. A closed group
 * of more than FOLLOW_MAX_GROUP instances stays closed, and its row is selected. */
/* scope and its outer scopes up to a top-level one, kept for the last scope asked: the walk
 * up a 100,000-deep chain takes 50 ms (a lookup per level), so the capture page has it done
 * in a turn of its own before the tree follows (gs_scope_tree_view_prepare_position). A
 * scope's outer never changes, so the chain stays right while the model grows. */
static const GArray *outer_chain(GsScopeTreeView *self, guint64 scope) {
  if (self->chain && self->chain_scope == scope)
    return self->chain;
  if (!self->chain)
    self->chain = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_set_size(self->chain, 0);
  self->chain_scope = scope;
  /* The model cuts cycles of outer scopes; the bound keeps this walk finite regardless. */
  guint n_scopes = gs_trace_model_n_scopes(self->model);
  for (guint64 id = scope; id && self->chain->len <= n_scopes;) {
    g_array_append_val(self->chain, id);
    const gs_replay_scope *s = gs_trace_model_scope(self->model, id);
    id = s ? s->outer : 0;
  }
  return self->chain;
}

static void reveal_scope(GsScopeTreeView *self, guint64 scope) {
  gs_trace_model *m = self->model;
  const GArray *outward = outer_chain(self, scope);
  guint depth = MIN(outward->len, MAX_DEPTH);
  /* chain[depth - 1] is the top-level scope, chain[0] the deepest revealed. */
  const guint64 *chain = &g_array_index(outward, guint64, outward->len - depth);
  g_autoptr(GtkTreeListRow) row = NULL;
  for (guint k = depth; k-- > 0;) {
    guint group, instance;
    if (!gs_trace_model_scope_group_of(m, gs_trace_model_scope_position(m, chain[k]), &group,
                                       &instance))
      break;
    guint index = gs_trace_model_scope_group_index(m, group);
    if (row)
      gtk_tree_list_row_set_expanded(row, TRUE);
    GtkTreeListRow *child = row ? gtk_tree_list_row_get_child_row(row, index)
                                : gtk_tree_list_model_get_child_row(self->tree, index);
    g_autoptr(GsScopeItem) item = child ? gtk_tree_list_row_get_item(child) : NULL;
    if (item && gs_scope_item_is_group(item)) {
      const GArray *instances = gs_trace_model_scope_group_instances(m, group);
      if (!gtk_tree_list_row_get_expanded(child) && instances &&
          instances->len > FOLLOW_MAX_GROUP) {
        select_and_scroll(self, gtk_tree_list_row_get_position(child));
        g_object_unref(child);
        return;
      }
      gtk_tree_list_row_set_expanded(child, TRUE);
      GtkTreeListRow *inner = gtk_tree_list_row_get_child_row(child, instance);
      g_object_unref(child);
      child = inner;
    }
    g_clear_object(&row);
    row = child;
    if (!row)
      break;
    if (k == 0) {
      select_and_scroll(self, gtk_tree_list_row_get_position(row));
      return;
    }
  }
  select_quietly(self, GTK_INVALID_LIST_POSITION); /* no row for it (yet) */
}

/* Whether scope is the user's pick or inside it (one of its instances, for a group). */
static gboolean inside_pick(GsScopeTreeView *self, guint64 scope) {
  guint n_scopes = gs_trace_model_n_scopes(self->model); /* a bound, as in reveal_scope */
  for (guint depth = 0; scope && depth <= n_scopes; depth++) {
    guint group;
    if (scope == self->pin_scope ||
        (self->pin_group != G_MAXUINT &&
         gs_trace_model_scope_group_of(self->model, gs_trace_model_scope_position(self->model, scope),
                                       &group, NULL) &&
         group == self->pin_group))
      return TRUE;
    const gs_replay_scope *s = gs_trace_model_scope(self->model, scope);
    scope = s ? s->outer : 0;
  }
  return FALSE;
}

/* The scrubber moved: the tree shows the innermost scope open at its event, only when that
 * scope changes (so a row the user picked stays while they scrub inside one scope). A row the
 * user picked also stays while the scrubber only follows a live run's end, or moves inside the
 * picked scope (activating a row moves the scrubber to its scope's begin: inside); moving it
 * elsewhere ends the pick, and with it the event list's filter by that scope. */
static gboolean follow_live_later(gpointer data);

static void follow_scrubber(GsScopeTreeView *self, gboolean live) {
  guint64 scope = gs_trace_model_scope_of(self->model, self->position);
  if (scope == self->followed)
    return;
  if (live && !self->pinned) {
    gint64 now = g_get_monotonic_time();
    if (now - self->live_followed_at < self->live_interval_us) {
      if (!self->live_follow_id)
        self->live_follow_id =
            g_timeout_add((guint)(self->live_interval_us / 1000), follow_live_later, self);
      return;
    }
    self->live_followed_at = now;
  }
  self->followed = scope;
  if (self->pinned) {
    if (live || inside_pick(self, scope))
      return;
    self->pinned = FALSE;
    announce_scope(self, 0);
  }
  if (scope)
    reveal_scope(self, scope);
  else
    select_quietly(self, GTK_INVALID_LIST_POSITION);
}

static gboolean follow_live_later(gpointer data) {
  GsScopeTreeView *self = data;
  self->live_follow_id = 0;
  if (self->model && self->tree)
    follow_scrubber(self, TRUE);
  return G_SOURCE_REMOVE;
}

void gs_scope_tree_view_set_live_follow_interval(GsScopeTreeView *self, guint ms) {
  g_return_if_fail(GS_IS_SCOPE_TREE_VIEW(self));
  self->live_interval_us = (gint64)ms * 1000;
}

/* Activating a row (double click, Enter) takes the scrubber to where the scope began (a
 * group row: where its first instance began). */
static void on_row_activated(GsScopeTreeView *self, guint position) {
  g_autoptr(GsScopeItem) item = item_at(self, position);
  if (!item || !self->model)
    return;
  guint scope_position = gs_scope_item_get_position(item);
  if (gs_scope_item_is_group(item)) {
    const GArray *instances =
        gs_trace_model_scope_group_instances(self->model, gs_scope_item_get_group(item));
    scope_position = instances && instances->len ? g_array_index(instances, guint, 0) : G_MAXUINT;
  }
  const gs_replay_scope *scope = gs_trace_model_scope_at(self->model, scope_position);
  guint64 index = scope ? gs_trace_model_find_seq(self->model, scope->begin_seq) : G_MAXUINT64;
  if (index != G_MAXUINT64)
    gs_view_emit_event_selected(GS_VIEW(self), index);
}

/* ---- public --------------------------------------------------------------------------- */

static void update_shape(GsScopeTreeView *self) {
  gboolean any = self->model && gs_trace_model_n_scopes(self->model) > 0;
  gtk_stack_set_visible_child_name(self->stack, any ? "tree" : "empty");
  /* The thread column appears once a second thread does (the header menu can hide it). */
  const GArray *threads = self->model ? gs_trace_model_threads(self->model) : NULL;
  gboolean many = threads && threads->len > 1;
  if (many != self->many_threads) {
    self->many_threads = many;
    gtk_column_view_column_set_visible(self->columns[COLUMN_THREAD], many);
  }
}

/* A header menu on every column to show or hide the other columns, as in Sysprof and
 * GNOME's file manager. */
static void add_column_menu(GsScopeTreeView *self) {
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new();
  g_autoptr(GMenu) menu = g_menu_new();
  static const char *const action_names[N_COLUMNS] = {
      NULL,           "show-id",       "show-thread",    "show-begin",
      "show-end",     "show-created",  "show-moved-in",  "show-disposed",
      "show-moved-out", "show-alive",  "show-bytes",     "show-peak",
      "show-duration",
  };
  /* In the order the columns are shown. */
  GListModel *columns = gtk_column_view_get_columns(self->column_view);
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item(columns, i);
    for (int c = 1; c < N_COLUMNS; c++) {
      if (self->columns[c] != column)
        continue;
      g_autoptr(GPropertyAction) action = g_property_action_new(action_names[c], column, "visible");
      g_action_map_add_action(G_ACTION_MAP(group), G_ACTION(action));
      g_autofree char *detailed = g_strconcat("scopes.", action_names[c], NULL);
      g_menu_append(menu, gtk_column_view_column_get_title(column), detailed);
    }
  }
  gtk_widget_insert_action_group(GTK_WIDGET(self), "scopes", G_ACTION_GROUP(group));
  for (int c = 0; c < N_COLUMNS; c++)
    gtk_column_view_column_set_header_menu(self->columns[c], G_MENU_MODEL(menu));
}

/* GTK 4.8's list views make about 200 rows at once when a model arrives, whatever fits on
 * screen: 200 rows of this tree's 12 labels held the UI thread 0.25 s (many-names' 200,000
 * top-level scopes). A big tree's top-level rows are let in GROW_STEP a frame until the view
 * has all the rows it will make (it reuses them when scrolled), then the rest faster. A frame
 * that makes 24 rows took 60-120 ms on a shared core; 12, 40-55 ms. */
#define GROW_FROM 64   /* top-level rows: a tree this small arrives whole */
#define GROW_STEP 12
#define GROW_UNTIL 240 /* past the rows GTK makes */

static void stop_growing(GsScopeTreeView *self) {
  if (self->grow_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->grow_id);
  self->grow_id = 0;
}

/* A step each frame the view is drawn in, so that each step's rows are laid out in a frame
 * of their own (a timer let them in while a page was still hidden, to be laid out all in the
 * frame that showed it). A view never shown keeps only the first rows until it is. */
static gboolean grow_step(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  (void)clock, (void)data;
  GsScopeTreeView *self = GS_SCOPE_TREE_VIEW(widget);
  guint size = gtk_slice_list_model_get_size(self->roots_shown);
  if (size < GROW_UNTIL - GROW_STEP) {
    gtk_slice_list_model_set_size(self->roots_shown, size + GROW_STEP);
    return G_SOURCE_CONTINUE;
  }
  if (size != G_MAXUINT) {
    /* Rows past the view's make no widgets, but 200,000 of them at once are 25 ms of GTK's
     * bookkeeping: 16 times as many a frame, then all. */
    guint total = g_list_model_get_n_items(gtk_slice_list_model_get_model(self->roots_shown));
    gtk_slice_list_model_set_size(self->roots_shown,
                                  size < total / 16 ? size * 16 : G_MAXUINT);
    return G_SOURCE_CONTINUE; /* the reveal below gets a frame of its own */
  }
  self->grow_id = 0;
  /* The scope followed meanwhile may have had no row yet. */
  if (self->model && !self->pinned && self->followed)
    reveal_scope(self, self->followed);
  return G_SOURCE_REMOVE;
}

/* Whether the top-level rows are all in (something reading the rows of a big tree waits for
 * this). */
gboolean gs_scope_tree_view_is_complete(GsScopeTreeView *self) {
  g_return_val_if_fail(GS_IS_SCOPE_TREE_VIEW(self), TRUE);
  return self->grow_id == 0;
}

/* Lets go of the tree the column view shows, its selection and what grows it: before another
 * model, and at dispose. */
static void drop_tree(GsScopeTreeView *self) {
  if (self->column_view)
    gtk_column_view_set_model(self->column_view, NULL);
  if (self->selection)
    g_signal_handlers_disconnect_by_data(self->selection, self);
  g_clear_object(&self->selection);
  g_clear_object(&self->tree);
  stop_growing(self);
  g_clear_object(&self->roots_shown);
  g_clear_pointer(&self->chain, g_array_unref);
}

void gs_scope_tree_view_set_model(GsScopeTreeView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_SCOPE_TREE_VIEW(self));
  if (model == self->model)
    return;
  self->group_cached = FALSE;
  drop_tree(self);
  forget_lists(self);
  self->model = model;
  self->position = 0;
  self->followed = 0;
  self->pinned = FALSE;
  self->grew = FALSE;
  self->scroll_pending = FALSE;
  announce_scope(self, 0);
  if (model) {
    GsScopeList *roots = track_list(self, gs_scope_list_new(model, 0));
    GListModel *top = G_LIST_MODEL(roots);
    if (g_list_model_get_n_items(top) > GROW_FROM) {
      self->roots_shown = gtk_slice_list_model_new(top, 0, GROW_STEP); /* takes roots */
      top = G_LIST_MODEL(g_object_ref(self->roots_shown));
      self->grow_id = gtk_widget_add_tick_callback(GTK_WIDGET(self), grow_step, NULL, NULL);
    }
    self->tree = gtk_tree_list_model_new(top, FALSE, FALSE, create_children, self, NULL);
    self->selection = gtk_single_selection_new(G_LIST_MODEL(g_object_ref(self->tree)));
    gtk_single_selection_set_autoselect(self->selection, FALSE);
    gtk_single_selection_set_can_unselect(self->selection, TRUE);
    gtk_single_selection_set_selected(self->selection, GTK_INVALID_LIST_POSITION);
    g_signal_connect_swapped(self->selection, "selection-changed",
                             G_CALLBACK(on_selection_changed), self);
    gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
  }
  update_shape(self);
}

void gs_scope_tree_view_set_position(GsScopeTreeView *self, guint64 index) {
  g_return_if_fail(GS_IS_SCOPE_TREE_VIEW(self));
  self->position = index;
  if (!self->model)
    return;
  queue_refresh(self);
  /* The scrubber following a live run's end moves right after the model grew. */
  gboolean live = self->grew && index + 1 >= gs_trace_model_n_events(self->model);
  self->grew = FALSE;
  if (self->tree)
    follow_scrubber(self, live);
}

void gs_scope_tree_view_prepare_position(GsScopeTreeView *self, guint64 index) {
  g_return_if_fail(GS_IS_SCOPE_TREE_VIEW(self));
  if (!self->model)
    return;
  guint64 scope = gs_trace_model_scope_of(self->model, index);
  if (scope)
    outer_chain(self, scope);
}

guint64 gs_scope_tree_view_get_position(GsScopeTreeView *self) {
  g_return_val_if_fail(GS_IS_SCOPE_TREE_VIEW(self), 0);
  return self->position;
}

void gs_scope_tree_view_model_grew(GsScopeTreeView *self) {
  g_return_if_fail(GS_IS_SCOPE_TREE_VIEW(self));
  if (!self->model)
    return;
  /* Refreshing a list may make GTK create (and track) new lists: walk a copy. */
  g_autoptr(GPtrArray) lists = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint i = 0; i < self->lists->len; i++)
    g_ptr_array_add(lists, g_object_ref(g_ptr_array_index(self->lists, i)));
  for (guint i = 0; i < lists->len; i++)
    gs_scope_list_refresh(g_ptr_array_index(lists, i));
  self->grew = TRUE;
  update_shape(self);
  queue_refresh(self);
}

char *gs_scope_tree_view_describe_scope(GsScopeTreeView *self, guint64 scope_id) {
  g_return_val_if_fail(GS_IS_SCOPE_TREE_VIEW(self), NULL);
  if (!self->model || !gs_trace_model_scope(self->model, scope_id))
    return NULL;
  return moment_text(scope_now(self, scope_id));
}

char *gs_scope_tree_view_describe_account(GsScopeTreeView *self, guint64 scope_id) {
  g_return_val_if_fail(GS_IS_SCOPE_TREE_VIEW(self), NULL);
  if (!self->model || !gs_trace_model_scope(self->model, scope_id))
    return NULL;
  const gs_replay_scope *now = scope_now(self, scope_id);
  if (!now)
    return moment_text(now);
  return account_text(now->created, now->moved_in, now->disposed, now->moved_out, now->alive,
                      scope_leaked(self, now));
}

guint64 gs_scope_tree_view_get_selected_scope(GsScopeTreeView *self) {
  g_return_val_if_fail(GS_IS_SCOPE_TREE_VIEW(self), 0);
  return self->selected_scope;
}

GtkWidget *gs_scope_tree_view_new(void) {
  return g_object_new(GS_TYPE_SCOPE_TREE_VIEW, NULL);
}

/* ---- GObject -------------------------------------------------------------------------- */

static void disconnect_clock(GsScopeTreeView *self) {
  if (self->clock)
    g_clear_signal_handler(&self->update_id, self->clock);
  g_clear_object(&self->clock);
}

/* Mapping may happen inside an ancestor's size-allocate: stale cells are left to the next
 * frame's update phase (see refresh_cells). */
static void gs_scope_tree_view_map(GtkWidget *widget) {
  GsScopeTreeView *self = GS_SCOPE_TREE_VIEW(widget);
  GTK_WIDGET_CLASS(gs_scope_tree_view_parent_class)->map(widget);
  disconnect_clock(self);
  self->clock = g_object_ref(gtk_widget_get_frame_clock(widget));
  self->update_id = g_signal_connect_object(self->clock, "update", G_CALLBACK(on_clock_update),
                                            self, G_CONNECT_SWAPPED | G_CONNECT_AFTER);
  if (self->cells_stale)
    queue_refresh(self);
}

static void gs_scope_tree_view_unmap(GtkWidget *widget) {
  disconnect_clock(GS_SCOPE_TREE_VIEW(widget));
  GTK_WIDGET_CLASS(gs_scope_tree_view_parent_class)->unmap(widget);
}

static void gs_scope_tree_view_dispose(GObject *object) {
  GsScopeTreeView *self = GS_SCOPE_TREE_VIEW(object);
  drop_tree(self);
  if (self->lists)
    forget_lists(self);
  self->model = NULL;
  g_clear_handle_id(&self->scroll_id, g_source_remove);
  g_clear_handle_id(&self->live_follow_id, g_source_remove);
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_SCOPE_TREE_VIEW);
  disconnect_clock(self);
  G_OBJECT_CLASS(gs_scope_tree_view_parent_class)->dispose(object);
}

static void gs_scope_tree_view_finalize(GObject *object) {
  GsScopeTreeView *self = GS_SCOPE_TREE_VIEW(object);
  g_ptr_array_unref(self->lists);
  g_hash_table_unref(self->bound);
  G_OBJECT_CLASS(gs_scope_tree_view_parent_class)->finalize(object);
}

static void gs_scope_tree_view_class_init(GsScopeTreeViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_scope_tree_view_dispose;
  object_class->finalize = gs_scope_tree_view_finalize;
  widget_class->map = gs_scope_tree_view_map;
  widget_class->unmap = gs_scope_tree_view_unmap;

  signals[SIGNAL_SCOPE_SELECTED] =
      g_signal_new("scope-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                   NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
  /* Part of the view contract; this view has no tensor rows, so it never emits it. */

  gtk_widget_class_set_template_from_resource(
      widget_class, "/io/github/gradscope/Inspector/gs-scope-tree-view.ui");
  gtk_widget_class_bind_template_child(widget_class, GsScopeTreeView, stack);
  gtk_widget_class_bind_template_child(widget_class, GsScopeTreeView, scroller);
  gtk_widget_class_bind_template_child(widget_class, GsScopeTreeView, column_view);
  static const char *const column_ids[N_COLUMNS] = {
      "name_column",     "id_column",       "thread_column",   "begin_column",
      "end_column",      "created_column",  "moved_in_column", "disposed_column",
      "moved_out_column", "alive_column",   "bytes_column",    "peak_column",
      "duration_column",
  };
  for (int i = 0; i < N_COLUMNS; i++)
    gtk_widget_class_bind_template_child_full(widget_class, column_ids[i], FALSE,
                                              G_STRUCT_OFFSET(GsScopeTreeView, columns) +
                                                  i * (gssize)sizeof(GtkColumnViewColumn *));
  gtk_widget_class_bind_template_callback(widget_class, on_row_activated);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "scopetree");
}

static void gs_scope_tree_view_init(GsScopeTreeView *self) {
  g_type_ensure(ADW_TYPE_STATUS_PAGE);
  self->lists = g_ptr_array_new();
  self->bound = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  self->live_interval_us = 250000;
  gtk_widget_init_template(GTK_WIDGET(self));
  self->pin_group = G_MAXUINT;
  g_signal_connect_object(gtk_scrolled_window_get_vadjustment(self->scroller), "changed",
                          G_CALLBACK(on_adjustment_changed), self, G_CONNECT_SWAPPED);
  for (int i = 0; i < N_COLUMNS; i++) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_object_set_data(G_OBJECT(factory), "column", GINT_TO_POINTER(i));
    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), self);
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), self);
    g_signal_connect(factory, "unbind", G_CALLBACK(unbind_cell), self);
    g_signal_connect(factory, "teardown", G_CALLBACK(teardown_cell), self);
    gtk_column_view_column_set_factory(self->columns[i], factory);
    g_object_unref(factory);
  }
  add_column_menu(self);
}
