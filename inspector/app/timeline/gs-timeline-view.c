/* gs-timeline-view.c: the memory timeline view (see gs-timeline-view.h). The chart is a
 * GtkDrawingArea whose cairo drawing GTK records into a cairo render node; what it draws is a
 * gs_timeline_frame (the model's min/max summary, one column per pixel) kept between draws,
 * so hovering and the scrubber redraw without asking the model again, and a grown source or
 * a new viewport asks it once per frame. */
#include "gs-timeline-view.h"

#include "gs-view.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <gradscope/scope.h>
#include <inttypes.h>
#include <math.h>

#include "gs-alive-item.h"
#include "event-fields.h"
#include "object-groups.h"
#include "gs-view-format.h"
#include "timeline-draw.h"

/* Fewer events than this are not spread over the whole chart: zooming in stops there. */
#define MIN_SPAN 8
/* A drag shorter than this (pixels) is a click. */
#define DRAG_THRESHOLD 4

struct _GsTimelineView {
  GtkWidget parent_instance;

  GtkWidget *by_scope_button;
  GtkWidget *by_category_button;
  GtkWidget *viewport_label;
  GtkWidget *chart;
  GtkWidget *alive_heading;
  GtkWidget *alive_view;

  gs_trace_model *model; /* borrowed */
  gs_timeline_index *index;
  gs_timeline_frame *frame;
  gboolean frame_valid;

  gboolean by_scope;
  guint64 first, last; /* the viewport */
  gboolean whole;      /* the whole run is shown, and stays so while it grows */
  guint64 position;    /* the scrubber's event, or GS_TIMELINE_NO_EVENT */
  /* The life of the tensor chosen in another view: first and last event (the end of the run
   * while it is alive there), first GS_TIMELINE_NO_EVENT for none. */
  guint64 tensor, life_first, life_last;
  char *life_label;
  int hover_column;
  double pointer_x;

  /* Dragging: where it started, and the viewport then. */
  gboolean panning;
  double drag_x;
  guint64 drag_first, drag_last;

  GListStore *alive;        /* GsAliveItem: every alive object, largest first */
  GListStore *alive_groups; /* GsAliveItem: the rows shown, objects grouped (object-groups.h) */
  GtkTreeListModel *alive_rows; /* alive_groups with groups opened to their members */
  gulong dark_handler;
};

GS_VIEW_IFACE_INIT_WITH_SELECT(GsTimelineView, gs_timeline_view, gs_timeline_view_select_tensor)
G_DEFINE_FINAL_TYPE_WITH_CODE(GsTimelineView, gs_timeline_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GS_TYPE_VIEW, gs_timeline_view_view_iface_init))


/* Events are numbered from 1 wherever they are shown, as the scrubber counts them; indices
 * (from 0) are only used inside. */
static guint64 n_events(GsTimelineView *self) {
  return self->model ? gs_trace_model_n_events(self->model) : 0;
}

static char *format_bytes(guint64 bytes) {
  return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

static void update_viewport_label(GsTimelineView *self) {
  guint64 n = n_events(self);
  if (n == 0) {
    gtk_label_set_text(GTK_LABEL(self->viewport_label), "");
    return;
  }
  g_autofree char *text =
      g_strdup_printf(_("Events %" PRIu64 "–%" PRIu64 " of %" PRIu64),
                      (uint64_t)self->first + 1, (uint64_t)self->last + 1, (uint64_t)n);
  gtk_label_set_text(GTK_LABEL(self->viewport_label), text);
}

/* Something the frame depends on changed: recompute it at the next draw. */
static void invalidate(GsTimelineView *self) {
  self->frame_valid = FALSE;
  update_viewport_label(self);
  gtk_widget_queue_draw(self->chart);
}

/* Makes first..last a valid viewport of the current model and remembers whether it shows
 * everything. */
static void set_viewport_clamped(GsTimelineView *self, gint64 first, guint64 span) {
  guint64 n = n_events(self);
  if (n == 0) {
    self->first = self->last = 0;
    self->whole = TRUE;
    invalidate(self);
    return;
  }
  span = CLAMP(span, MIN(MIN_SPAN, n), n);
  if (first < 0)
    first = 0;
  if ((guint64)first + span > n)
    first = (gint64)(n - span);
  self->first = (guint64)first;
  self->last = self->first + span - 1;
  self->whole = span == n;
  invalidate(self);
}

/* The frame for the chart's current size, computed if anything changed since the last. */
static gs_timeline_frame *current_frame(GsTimelineView *self) {
  int width = gtk_widget_get_width(self->chart), height = gtk_widget_get_height(self->chart);
  const gs_timeline_request *r = &self->frame->request;
  if (!self->frame_valid || r->width != width || r->height != height ||
      self->frame->n_events != n_events(self)) {
    gs_timeline_request request = {.first = self->first, .last = self->last,
                                   .width = MAX(width, 1), .height = MAX(height, 1),
                                   .by_scope = self->by_scope};
    gs_timeline_frame_compute(self->frame, self->model, &request);
    self->frame_valid = TRUE;
  }
  return self->frame;
}

static void draw_chart(GtkDrawingArea *area, cairo_t *cr, int width, int height,
                       gpointer user_data) {
  (void)area, (void)width, (void)height;
  GsTimelineView *self = user_data;
  gs_timeline_frame *frame = current_frame(self);
  gs_timeline_decor decor = {
      .dark = adw_style_manager_get_dark(adw_style_manager_get_default()),
      .position = self->position,
      .hover_column = self->hover_column,
      .has_life = self->life_first != GS_TIMELINE_NO_EVENT,
      .life_first = self->life_first,
      .life_last = self->life_last,
      .life_label = self->life_label,
  };
  gs_timeline_draw(cr, frame, self->model, self->model ? self->index : NULL, &decor);
}

/* ---- hover ------------------------------------------------------------------------------- */

char *gs_timeline_view_describe_at(GsTimelineView *self, double x) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), NULL);
  if (!self->model)
    return NULL;
  gs_timeline_frame *frame = current_frame(self);
  int c = gs_timeline_frame_column_at(frame, x);
  if (c < 0)
    return NULL;
  const gs_memory_column *col = &frame->columns[c];
  GString *s = g_string_new(NULL);
  if (col->first == col->last)
    g_string_append_printf(s, _("After event #%" PRIu64),
                           (uint64_t)gs_trace_model_seq_at(self->model, col->first));
  else
    g_string_append_printf(s, _("Events #%" PRIu64 "–#%" PRIu64),
                           (uint64_t)gs_trace_model_seq_at(self->model, col->first),
                           (uint64_t)gs_trace_model_seq_at(self->model, col->last));
  g_autofree char *total = format_bytes(col->max_total);
  g_string_append_c(s, '\n');
  if (col->min_total == col->max_total) {
    g_string_append_printf(s, _("Total: %s"), total);
  } else {
    g_autofree char *lowest = format_bytes(col->min_total);
    g_string_append_printf(s, _("Total: %s at most, %s at least"), total, lowest);
  }
  for (guint i = 0; i < col->n_stacks; i++) {
    if (col->stack[i] == 0)
      continue;
    g_autofree char *bytes = format_bytes(col->stack[i]);
    g_string_append_printf(s, "\n%s: %s",
                           gs_trace_model_stack_name(self->model, self->by_scope, i), bytes);
  }
  return g_string_free(s, FALSE);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip, gpointer user_data) {
  (void)widget, (void)y, (void)keyboard;
  g_autofree char *text = gs_timeline_view_describe_at(user_data, x);
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void set_hover(GsTimelineView *self, int column) {
  if (column == self->hover_column)
    return;
  self->hover_column = column;
  gtk_widget_queue_draw(self->chart);
}

static void on_motion(GtkEventControllerMotion *controller, double x, double y,
                      gpointer user_data) {
  (void)controller, (void)y;
  GsTimelineView *self = user_data;
  self->pointer_x = x;
  if (self->model && self->frame_valid)
    set_hover(self, gs_timeline_frame_column_at(self->frame, x));
}

static void on_leave(GtkEventControllerMotion *controller, gpointer user_data) {
  (void)controller;
  set_hover(user_data, -1);
}

/* ---- alive list -------------------------------------------------------------------------- */

static int compare_alive(gconstpointer a, gconstpointer b, gpointer user_data) {
  (void)user_data;
  guint64 x = gs_alive_item_get_bytes((GsAliveItem *)a);
  guint64 y = gs_alive_item_get_bytes((GsAliveItem *)b);
  if (x != y)
    return x > y ? -1 : 1;
  guint64 i = gs_alive_item_get_id((GsAliveItem *)a), j = gs_alive_item_get_id((GsAliveItem *)b);
  return (i > j) - (i < j);
}

static GsAliveItem *alive_item(gs_trace_model *m, const gs_replay *state,
                               const gs_replay_object *o) {
  g_autofree char *handle = gs_view_handle(o->id);
  const char *name = gs_replay_tensor_name(state, o->id);
  g_autofree char *label =
      o->composite && o->object_kind == GS_OBJECT_DATASET
                   ? g_strdup_printf(_("dataset %s"), handle)
      : o->composite ? g_strdup_printf(_("composite %s"), handle)
      : name       ? g_strdup_printf(_("tensor %s \"%s\""), handle, name)
                   : g_strdup_printf(_("tensor %s"), handle);
  /* What it holds itself: a view, detach or unmaterialised clone shares its source's bytes. */
  guint64 held = o->bytes;
  g_autofree char *size = NULL;
  if (o->composite) {
    size = format_bytes(held);
  } else {
    g_autofree char *logical = format_bytes(gs_object_logical_bytes(o));
    size = held ? g_steal_pointer(&logical)
                : g_strdup_printf(_("%s (shares storage #%" PRIu64 ")"), logical,
                                  (uint64_t)o->storage);
  }
  const char *category = gs_mem_category_name(gs_trace_model_category(m, state, o));
  g_autofree char *held_by = gs_trace_model_owner_label(m, state, o);
  const char *op = o->op && o->op[0] ? o->op : "—";
  GsAliveItem *item = gs_alive_item_new(o->id, held, label, size, category, op, held_by);
  gs_alive_item_set_site(item, gs_site_table_where(gs_trace_model_sites(m), o->site));
  return item;
}

/* A group's row: "200 × randn [64, 32] f32", the bytes its members hold, their category
 * (when they share one), op, where they were made and who holds them; its members below. */
static GsAliveItem *group_item(const gs_object_group *g, GListStore *members, guint64 held,
                               gs_site_table *sites) {
  g_autofree char *what = gs_object_group_what(g);
  /* TRANSLATORS: a group of alive objects: how many, and what they are ("200 × randn
   * [64, 32] f32") */
  g_autofree char *label = g_strdup_printf(_("%u × %s"), g->members->len, what);
  g_autofree char *size = format_bytes(held);
  const char *category = NULL;
  guint n = g_list_model_get_n_items(G_LIST_MODEL(members));
  for (guint i = 0; i < n; i++) {
    g_autoptr(GsAliveItem) m = g_list_model_get_item(G_LIST_MODEL(members), i);
    const char *c = gs_alive_item_get_category(m);
    if (!category)
      category = c;
    else if (g_strcmp0(category, c) != 0) {
      /* TRANSLATORS: the category of a group of objects whose categories differ */
      category = _("mixed");
      break;
    }
  }
  const gs_replay_object *first = g->members->pdata[0];
  const char *op = first->op && first->op[0] ? first->op : "—";
  GsAliveItem *item = gs_alive_item_new_group(G_LIST_MODEL(members), held, label, size,
                                              category ? category : "—", op, g->holder);
  gs_alive_item_set_site(item, gs_site_table_where(sites, g->site));
  return item;
}

static int compare_groups(gconstpointer a, gconstpointer b, gpointer user_data) {
  (void)user_data;
  guint64 x = gs_alive_item_get_bytes((GsAliveItem *)a);
  guint64 y = gs_alive_item_get_bytes((GsAliveItem *)b);
  if (x != y)
    return x > y ? -1 : 1;
  return g_strcmp0(gs_alive_item_get_label((GsAliveItem *)a),
                   gs_alive_item_get_label((GsAliveItem *)b));
}

/* The rows: a group of one is its object's own row. */
static void fill_groups(GsTimelineView *self, const gs_replay *state, GPtrArray *objects,
                        GPtrArray *items) {
  g_autoptr(GHashTable) by_id = g_hash_table_new(gs_id_hash, gs_id_equal);
  for (guint i = 0; i < items->len; i++) {
    const gs_replay_object *o = objects->pdata[i];
    g_hash_table_insert(by_id, (gpointer)&o->id, items->pdata[i]);
  }
  gs_site_table *sites = gs_trace_model_sites(self->model);
  g_autoptr(GPtrArray) groups = gs_object_groups(state, objects, sites);
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint i = 0; i < groups->len; i++) {
    const gs_object_group *g = groups->pdata[i];
    if (g->members->len == 1) {
      const gs_replay_object *o = g->members->pdata[0];
      g_ptr_array_add(rows, g_object_ref(g_hash_table_lookup(by_id, &o->id)));
      continue;
    }
    g_autoptr(GListStore) members = g_list_store_new(GS_TYPE_ALIVE_ITEM);
    guint64 held = 0;
    for (guint j = 0; j < g->members->len; j++) {
      const gs_replay_object *o = g->members->pdata[j];
      GsAliveItem *item = g_hash_table_lookup(by_id, &o->id);
      held += gs_alive_item_get_bytes(item);
      g_list_store_append(members, item);
    }
    g_list_store_sort(members, compare_alive, NULL);
    g_ptr_array_add(rows, group_item(g, members, held, sites));
  }
  g_list_store_splice(self->alive_groups, 0, 0, rows->pdata, rows->len);
  g_list_store_sort(self->alive_groups, compare_groups, NULL);
}

static void fill_alive(GsTimelineView *self, guint64 index) {
  g_list_store_remove_all(self->alive);
  g_list_store_remove_all(self->alive_groups);
  const gs_replay *state = gs_trace_model_seek(self->model, index);
  if (!state)
    return;
  g_autoptr(GPtrArray) objects = gs_replay_alive_objects(state);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_object_unref);
  for (guint i = 0; i < objects->len; i++)
    g_ptr_array_add(items, alive_item(self->model, state, objects->pdata[i]));
  fill_groups(self, state, objects, items);
  g_list_store_splice(self->alive, 0, 0, items->pdata, items->len);
  g_list_store_sort(self->alive, compare_alive, NULL);
  g_autofree char *live = format_bytes(state->live_bytes);
  guint n_rows = g_list_model_get_n_items(G_LIST_MODEL(self->alive_groups));
  g_autofree char *objects_text = g_strdup_printf(
      g_dngettext(GETTEXT_PACKAGE, "%u object", "%u objects", objects->len), objects->len);
  g_autofree char *heading = g_strdup_printf(
      /* TRANSLATORS: "Alive after event #12: 402 objects in 3 rows, 1.6 MiB in storages" */
      g_dngettext(GETTEXT_PACKAGE, "Alive after event #%" PRIu64 ": %s in %u row, %s in storages",
                  "Alive after event #%" PRIu64 ": %s in %u rows, %s in storages", n_rows),
      (uint64_t)gs_trace_model_seq_at(self->model, index), objects_text, n_rows, live);
  gtk_label_set_text(GTK_LABEL(self->alive_heading), heading);
}

guint64 gs_timeline_view_click(GsTimelineView *self, double x) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), GS_TIMELINE_NO_EVENT);
  if (!self->model)
    return GS_TIMELINE_NO_EVENT;
  guint64 index = gs_timeline_frame_event_at(current_frame(self), x);
  if (index == GS_TIMELINE_NO_EVENT)
    return index;
  fill_alive(self, index);
  gs_view_emit_event_selected(GS_VIEW(self), index);
  return index;
}

double gs_timeline_view_x_of(GsTimelineView *self, guint64 index) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), 0);
  return gs_timeline_frame_x_of(current_frame(self), index);
}

GListModel *gs_timeline_view_get_alive(GsTimelineView *self) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), NULL);
  return G_LIST_MODEL(self->alive);
}

GListModel *gs_timeline_view_get_alive_rows(GsTimelineView *self) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), NULL);
  return G_LIST_MODEL(self->alive_rows);
}

/* A group's row opens or closes; an object's selects it for the other views. */
static void on_alive_activated(GsTimelineView *self, guint position) {
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(self->alive_rows), position);
  if (!row)
    return;
  g_autoptr(GsAliveItem) item = gtk_tree_list_row_get_item(row);
  if (gs_alive_item_get_members(item))
    gtk_tree_list_row_set_expanded(row, !gtk_tree_list_row_get_expanded(row));
  else
    gs_view_emit_tensor_selected(GS_VIEW(self), gs_alive_item_get_id(item));
}

static GListModel *alive_children(gpointer item, gpointer user_data) {
  (void)user_data;
  GListModel *members = gs_alive_item_get_members(item);
  return members ? g_object_ref(members) : NULL;
}

typedef const char *(*alive_text_fn)(GsAliveItem *item);

/* Cells ellipsize, but never below a width that keeps their usual text whole ("tensor
 * #12.3 \"weight\"", "449.2 KiB", "optimizer state"): the list scrolls sideways instead. */
static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                       gpointer user_data) {
  (void)factory;
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_width_chars(GTK_LABEL(label), GPOINTER_TO_INT(user_data));
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
  gtk_list_item_set_child(list_item, label);
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                      gpointer user_data) {
  (void)factory;
  alive_text_fn text = (alive_text_fn)user_data;
  GsAliveItem *item = gtk_tree_list_row_get_item(gtk_list_item_get_item(list_item));
  GtkWidget *label = gtk_list_item_get_child(list_item);
  const char *value = text(item);
  gtk_label_set_text(GTK_LABEL(label), value);
  gs_view_set_tooltip(label, value);
  g_object_unref(item);
}

/* The first column: an expander for groups, then the label. */
static void setup_first_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                             gpointer user_data) {
  (void)factory, (void)user_data;
  GtkWidget *expander = gtk_tree_expander_new();
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_width_chars(GTK_LABEL(label), 16);
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
  gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), label);
  gtk_list_item_set_child(list_item, expander);
}

static void bind_first_cell(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                            gpointer user_data) {
  (void)factory, (void)user_data;
  GtkTreeListRow *row = gtk_list_item_get_item(list_item);
  GtkWidget *expander = gtk_list_item_get_child(list_item);
  gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(expander), row);
  g_autoptr(GsAliveItem) item = gtk_tree_list_row_get_item(row);
  GtkWidget *label = gtk_tree_expander_get_child(GTK_TREE_EXPANDER(expander));
  const char *value = gs_alive_item_get_label(item);
  gtk_label_set_text(GTK_LABEL(label), value);
  gs_view_set_tooltip(label, gs_alive_item_get_members(item)
                                 ? _("Objects made at one place by one op, with one shape "
                                     "and one kind of holder: open to list them")
                                 : value);
}

static void add_column(GsTimelineView *self, const char *title, alive_text_fn text,
                       int min_chars, gboolean expand) {
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), GINT_TO_POINTER(min_chars));
  g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), (gpointer)text);
  GtkColumnViewColumn *column = gtk_column_view_column_new(title, factory);
  gtk_column_view_column_set_expand(column, expand);
  gtk_column_view_column_set_resizable(column, TRUE);
  gtk_column_view_append_column(GTK_COLUMN_VIEW(self->alive_view), column);
  g_object_unref(column);
}

/* ---- zoom and pan ------------------------------------------------------------------------ */

void gs_timeline_view_zoom(GsTimelineView *self, double factor, double x) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  guint64 n = n_events(self);
  if (n == 0)
    return;
  gs_timeline_frame *frame = current_frame(self);
  double span = (double)(self->last - self->first + 1);
  double new_span = CLAMP(round(span * factor), (double)MIN(MIN_SPAN, n), (double)n);
  /* The event under the pointer stays under the pointer. */
  double t = CLAMP((x - frame->plot_x) / MAX(frame->plot_width, 1), 0.0, 1.0);
  double anchor = (double)self->first + t * span;
  set_viewport_clamped(self, (gint64)llround(anchor - t * new_span), (guint64)new_span);
}

static void pan_by_events(GsTimelineView *self, double events) {
  gint64 first = (gint64)self->first + (gint64)llround(events);
  set_viewport_clamped(self, first, self->last - self->first + 1);
}

static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy,
                          gpointer user_data) {
  GsTimelineView *self = user_data;
  GdkModifierType state =
      gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(controller));
  if (state & GDK_CONTROL_MASK) {
    gs_timeline_view_zoom(self, pow(1.25, dy), self->pointer_x);
    return TRUE;
  }
  double span = (double)(self->last - self->first + 1);
  pan_by_events(self, (dx + dy) * span * 0.1);
  return TRUE;
}

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y, gpointer user_data) {
  (void)gesture, (void)y;
  GsTimelineView *self = user_data;
  self->panning = FALSE;
  self->drag_x = x;
  self->drag_first = self->first;
  self->drag_last = self->last;
  gtk_widget_grab_focus(self->chart);
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy, gpointer user_data) {
  (void)gesture, (void)dy;
  GsTimelineView *self = user_data;
  if (!self->panning && fabs(dx) < DRAG_THRESHOLD)
    return;
  self->panning = TRUE;
  const gs_timeline_frame *frame = current_frame(self);
  double span = (double)(self->drag_last - self->drag_first + 1);
  double events = -dx / MAX(frame->plot_width, 1) * span;
  set_viewport_clamped(self, (gint64)self->drag_first + (gint64)llround(events),
                       self->drag_last - self->drag_first + 1);
}

static void on_drag_end(GtkGestureDrag *gesture, double dx, double dy, gpointer user_data) {
  (void)gesture, (void)dx, (void)dy;
  GsTimelineView *self = user_data;
  if (!self->panning)
    gs_timeline_view_click(self, self->drag_x);
  self->panning = FALSE;
}

/* ---- header ------------------------------------------------------------------------------ */

static void on_stacking_toggled(GsTimelineView *self) {
  gs_timeline_view_set_by_scope(
      self, gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->by_scope_button)));
}

static void on_fit_clicked(GsTimelineView *self) {
  set_viewport_clamped(self, 0, n_events(self));
}

/* The span from the tensor's first to its last event, up to the end of the run if it was
 * never disposed (still alive, or moved into a parameter that outlives the log). */
static void update_life(GsTimelineView *self) {
  self->life_first = self->life_last = GS_TIMELINE_NO_EVENT;
  g_clear_pointer(&self->life_label, g_free);
  guint64 n = n_events(self);
  if (!self->tensor || n == 0)
    return;
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(self->model, self->tensor);
  guint count = gs_tensor_life_len(life);
  if (count == 0)
    return;
  self->life_first = gs_tensor_life_at(life, 0);
  self->life_last = n - 1;
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, count);
  guint64 at;
  while (gs_tensor_life_cursor_prev(&c, &at)) {
    if (gs_trace_model_kind_at(self->model, at) != GS_TRACE_TENSOR_DISPOSE)
      continue;
    gs_trace_event e;
    if (gs_trace_model_event(self->model, at, &e) && e.tensor == self->tensor) {
      self->life_last = at;
      break;
    }
  }
  char handle[32];
  /* Translators: the band over the timeline where a chosen tensor was alive. */
  self->life_label = g_strdup_printf(_("tensor %s alive"),
                                     gs_format_handle(self->tensor, handle, sizeof handle));
}

/* ---- the view contract ------------------------------------------------------------------- */

void gs_timeline_view_set_model(GsTimelineView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  self->model = model;
  /* A new index and frame (with its bucket cache): a new model may sit at the old one's
   * address, so nothing cached may survive by pointer identity. */
  g_clear_pointer(&self->index, gs_timeline_index_free);
  self->index = gs_timeline_index_new();
  g_clear_pointer(&self->frame, gs_timeline_frame_free);
  self->frame = gs_timeline_frame_new();
  self->frame_valid = FALSE;
  if (model)
    gs_timeline_index_update(self->index, model);
  self->position = GS_TIMELINE_NO_EVENT;
  self->hover_column = -1;
  self->tensor = 0;
  update_life(self);
  g_list_store_remove_all(self->alive);
  g_list_store_remove_all(self->alive_groups);
  gtk_label_set_text(GTK_LABEL(self->alive_heading),
                     _("Click the timeline to list what was alive at that moment and why."));
  set_viewport_clamped(self, 0, n_events(self));
}

void gs_timeline_view_set_position(GsTimelineView *self, guint64 index) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  guint64 n = n_events(self);
  if (n == 0)
    return;
  index = MIN(index, n - 1);
  self->position = index;
  if (index < self->first || index > self->last) {
    guint64 span = self->last - self->first + 1;
    set_viewport_clamped(self, (gint64)index - (gint64)(span / 2), span);
  } else {
    gtk_widget_queue_draw(self->chart);
  }
}

void gs_timeline_view_select_tensor(GsTimelineView *self, guint64 tensor) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  self->tensor = self->model ? tensor : 0;
  update_life(self);
  gtk_widget_queue_draw(self->chart);
}

gboolean gs_timeline_view_get_tensor_life(GsTimelineView *self, guint64 *first,
                                          guint64 *last) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), FALSE);
  *first = self->life_first;
  *last = self->life_last;
  return self->life_first != GS_TIMELINE_NO_EVENT;
}

void gs_timeline_view_model_grew(GsTimelineView *self) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  if (!self->model)
    return;
  guint64 old_last = self->last;
  /* A chosen tensor still alive at the old end: its band grows with the run. */
  gboolean life_open = self->tensor && (self->life_first == GS_TIMELINE_NO_EVENT ||
                                        self->life_last + 1 >= self->frame->n_events);
  gboolean showed_end = self->whole || self->frame->n_events == 0 ||
                        old_last + 1 >= self->frame->n_events;
  gs_timeline_index_update(self->index, self->model);
  if (life_open)
    update_life(self);
  guint64 n = n_events(self);
  if (self->whole)
    set_viewport_clamped(self, 0, n);
  else if (showed_end) /* follow the end, keeping the zoom */
    set_viewport_clamped(self, (gint64)n - (gint64)(self->last - self->first + 1),
                         self->last - self->first + 1);
  else
    invalidate(self);
}

void gs_timeline_view_set_by_scope(GsTimelineView *self, gboolean by_scope) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  by_scope = !!by_scope;
  gtk_toggle_button_set_active(
      GTK_TOGGLE_BUTTON(by_scope ? self->by_scope_button : self->by_category_button), TRUE);
  if (self->by_scope == by_scope)
    return;
  self->by_scope = by_scope;
  invalidate(self);
}

gboolean gs_timeline_view_get_by_scope(GsTimelineView *self) {
  g_return_val_if_fail(GS_IS_TIMELINE_VIEW(self), TRUE);
  return self->by_scope;
}

void gs_timeline_view_set_viewport(GsTimelineView *self, guint64 first, guint64 last) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  if (last < first)
    last = first;
  set_viewport_clamped(self, (gint64)MIN(first, (guint64)G_MAXINT64), last - first + 1);
}

void gs_timeline_view_get_viewport(GsTimelineView *self, guint64 *first, guint64 *last) {
  g_return_if_fail(GS_IS_TIMELINE_VIEW(self));
  *first = self->first;
  *last = self->last;
}

/* ---- GObject ----------------------------------------------------------------------------- */

static void on_dark_changed(GsTimelineView *self) { gtk_widget_queue_draw(self->chart); }

static void gs_timeline_view_dispose(GObject *object) {
  GsTimelineView *self = GS_TIMELINE_VIEW(object);
  g_clear_signal_handler(&self->dark_handler, adw_style_manager_get_default());
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_TIMELINE_VIEW);
  gs_widget_unparent_children(GTK_WIDGET(self));
  G_OBJECT_CLASS(gs_timeline_view_parent_class)->dispose(object);
}

static void gs_timeline_view_finalize(GObject *object) {
  GsTimelineView *self = GS_TIMELINE_VIEW(object);
  g_clear_pointer(&self->index, gs_timeline_index_free);
  g_clear_pointer(&self->frame, gs_timeline_frame_free);
  g_clear_object(&self->alive);
  g_clear_object(&self->alive_groups);
  g_clear_object(&self->alive_rows);
  g_free(self->life_label);
  G_OBJECT_CLASS(gs_timeline_view_parent_class)->finalize(object);
}

static void gs_timeline_view_class_init(GsTimelineViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_timeline_view_dispose;
  object_class->finalize = gs_timeline_view_finalize;


  gtk_widget_class_set_template_from_resource(
      widget_class, "/io/github/gradscope/Inspector/gs-timeline-view.ui");
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, by_scope_button);
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, by_category_button);
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, viewport_label);
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, chart);
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, alive_heading);
  gtk_widget_class_bind_template_child(widget_class, GsTimelineView, alive_view);
  gtk_widget_class_bind_template_callback(widget_class, on_stacking_toggled);
  gtk_widget_class_bind_template_callback(widget_class, on_fit_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_alive_activated);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "timelineview");
}

/* The categories and what each counts, one a line (gs_mem_category_description). */
static char *category_tooltip(void) {
  GString *s = g_string_new(_("Stack bytes by what they are:"));
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++) {
    g_string_append_c(s, '\n');
    /* TRANSLATORS: one line of a tooltip: a memory category and what it counts */
    g_string_append_printf(s, _("%s: %s"), gs_mem_category_name(c),
                           gs_mem_category_description(c));
  }
  return g_string_free(s, FALSE);
}

static void gs_timeline_view_init(GsTimelineView *self) {
  self->life_first = self->life_last = GS_TIMELINE_NO_EVENT;
  self->by_scope = TRUE;
  self->whole = TRUE;
  self->position = GS_TIMELINE_NO_EVENT;
  self->hover_column = -1;
  self->index = gs_timeline_index_new();
  self->frame = gs_timeline_frame_new();
  self->alive = g_list_store_new(GS_TYPE_ALIVE_ITEM);
  gtk_widget_init_template(GTK_WIDGET(self));
  g_autofree char *categories = category_tooltip();
  gtk_widget_set_tooltip_text(self->by_category_button, categories);

  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->chart), draw_chart, self, NULL);
  g_signal_connect(self->chart, "query-tooltip", G_CALLBACK(on_query_tooltip), self);

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(self->chart, motion);

  GtkEventController *scroll = gtk_event_controller_scroll_new(
      GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(self->chart, scroll);

  GtkGesture *drag = gtk_gesture_drag_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), GDK_BUTTON_PRIMARY);
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  g_signal_connect(drag, "drag-end", G_CALLBACK(on_drag_end), self);
  gtk_widget_add_controller(self->chart, GTK_EVENT_CONTROLLER(drag));

  self->alive_groups = g_list_store_new(GS_TYPE_ALIVE_ITEM);
  self->alive_rows = gtk_tree_list_model_new(G_LIST_MODEL(g_object_ref(self->alive_groups)),
                                             FALSE, FALSE, alive_children, NULL, NULL);
  GtkSingleSelection *selection =
      gtk_single_selection_new(G_LIST_MODEL(g_object_ref(self->alive_rows)));
  gtk_single_selection_set_autoselect(selection, FALSE);
  gtk_single_selection_set_can_unselect(selection, TRUE);
  gtk_column_view_set_model(GTK_COLUMN_VIEW(self->alive_view), GTK_SELECTION_MODEL(selection));
  g_object_unref(selection);
  gtk_column_view_set_single_click_activate(GTK_COLUMN_VIEW(self->alive_view), TRUE);
  GtkListItemFactory *first = gtk_signal_list_item_factory_new();
  g_signal_connect(first, "setup", G_CALLBACK(setup_first_cell), NULL);
  g_signal_connect(first, "bind", G_CALLBACK(bind_first_cell), NULL);
  GtkColumnViewColumn *column = gtk_column_view_column_new(_("Tensor"), first);
  gtk_column_view_column_set_expand(column, TRUE);
  gtk_column_view_column_set_resizable(column, TRUE);
  gtk_column_view_append_column(GTK_COLUMN_VIEW(self->alive_view), column);
  g_object_unref(column);
  add_column(self, _("Size"), gs_alive_item_get_size, 9, FALSE);
  add_column(self, _("Category"), gs_alive_item_get_category, 15, FALSE);
  add_column(self, _("Created by"), gs_alive_item_get_op, 10, FALSE);
  /* TRANSLATORS: column of the alive list: where the program made the object (file:line) */
  add_column(self, _("Made at"), gs_alive_item_get_site, 14, FALSE);
  add_column(self, _("Held by, and why still alive"), gs_alive_item_get_held_by, 28, TRUE);

  self->dark_handler = g_signal_connect_swapped(adw_style_manager_get_default(), "notify::dark",
                                                G_CALLBACK(on_dark_changed), self);
}

GtkWidget *gs_timeline_view_new(void) { return g_object_new(GS_TYPE_TIMELINE_VIEW, NULL); }
