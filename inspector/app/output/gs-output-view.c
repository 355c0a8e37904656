/* gs-output-view.c: the Output pane (see the header). A read-only GtkTextView holds the
 * lines; a tag per stream marks stderr and the exit line. */
#include "gs-output-view.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <inttypes.h>
#include <string.h>

/* How close to the end (pixels) still counts as "at the end" for following. */
#define AT_END_SLACK 4.0

struct _GsOutputView {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkWidget *dropped_label;
  GtkWidget *stack;
  GtkWidget *scroller;
  GtkTextView *text_view;
  GtkTextBuffer *buffer;
  GtkTextTag *tags[3]; /* by GsOutputStream; stdout's is NULL (plain text) */

  GsTraceSource *source;
  guint64 next_line; /* the source's number of the next line to take */
  guint n_lines;
  gsize n_bytes;    /* of the lines' text, for the GS_OUTPUT_KEPT_BYTES bound */
  guint64 n_dropped;
  gboolean following;
  gboolean dragging; /* a button is down on the scrollbar */
  double last_value;
  GdkFrameClock *clock; /* while realized */
};

G_DEFINE_FINAL_TYPE(GsOutputView, gs_output_view, GTK_TYPE_WIDGET)

/* ---- following the end ---------------------------------------------------------------- */

static GtkAdjustment *vadjustment(GsOutputView *self) {
  return gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(self->scroller));
}

static gboolean at_end(GtkAdjustment *adj) {
  return gtk_adjustment_get_value(adj) + gtk_adjustment_get_page_size(adj) >=
         gtk_adjustment_get_upper(adj) - AT_END_SLACK;
}

/* Goes to the end at once (a scroll to a mark would be animated, and new lines could
 * arrive mid-way). */
static void go_to_end(GtkAdjustment *adj) {
  gtk_adjustment_set_value(adj, gtk_adjustment_get_upper(adj) - gtk_adjustment_get_page_size(adj));
}

/* Only the user stops the following, by scrolling up: the text view moves the value itself
 * too, while it lays out and measures lines (keeping the visible ones in place as lines
 * above are dropped), at times no frame phase tells apart. Back at the end by any means,
 * it follows again. */
static void on_value_changed(GtkAdjustment *adj, GsOutputView *self) {
  double value = gtk_adjustment_get_value(adj);
  if (at_end(adj))
    self->following = TRUE;
  else if (self->dragging && value < self->last_value)
    self->following = FALSE;
  self->last_value = value;
}

/* The wheel or touchpad, up. */
static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy,
                          GsOutputView *self) {
  (void)controller, (void)dx;
  if (dy < 0)
    self->following = FALSE;
  return FALSE; /* the scrolled window scrolls */
}

/* The scrollbar, pressed and dragged or clicked in its trough. */
static gboolean on_scrollbar_event(GtkEventControllerLegacy *controller, GdkEvent *event,
                                   GsOutputView *self) {
  (void)controller;
  GdkEventType type = gdk_event_get_event_type(event);
  if (type == GDK_BUTTON_PRESS || type == GDK_TOUCH_BEGIN)
    self->dragging = TRUE;
  else if (type == GDK_BUTTON_RELEASE || type == GDK_TOUCH_END || type == GDK_TOUCH_CANCEL)
    self->dragging = FALSE;
  return FALSE;
}

/* The keys that move the text view up. */
static gboolean on_key(GtkEventControllerKey *controller, guint keyval, guint keycode,
                       GdkModifierType state, GsOutputView *self) {
  (void)controller, (void)keycode, (void)state;
  switch (keyval) {
  case GDK_KEY_Up:
  case GDK_KEY_KP_Up:
  case GDK_KEY_Page_Up:
  case GDK_KEY_KP_Page_Up:
  case GDK_KEY_Home:
  case GDK_KEY_KP_Home:
    self->following = FALSE;
    break;
  default:
    break;
  }
  return FALSE;
}

/* The text grew or the pane was resized: a following view goes to the new end. */
static void on_adjustment_changed(GtkAdjustment *adj, GsOutputView *self) {
  if (self->following)
    go_to_end(adj);
}

/* After the text view's layout, which may have moved the value with no change of size: a
 * following view is at the end before it is painted. */
static void on_layout_done(GdkFrameClock *clock, GsOutputView *self) {
  (void)clock;
  GtkAdjustment *adj = vadjustment(self);
  if (self->following && !at_end(adj))
    go_to_end(adj);
}

/* ---- text ------------------------------------------------------------------------------ */

static void update_dropped(GsOutputView *self) {
  gtk_widget_set_visible(self->dropped_label, self->n_dropped > 0);
  if (self->n_dropped == 0)
    return;
  g_autofree char *text = g_strdup_printf(
      ngettext("%'" PRIu64 " earlier line was dropped to save memory.",
               "%'" PRIu64 " earlier lines were dropped to save memory.",
               (gulong)MIN(self->n_dropped, G_MAXULONG)),
      self->n_dropped);
  gtk_label_set_text(GTK_LABEL(self->dropped_label), text);
}

/* Drops the oldest lines while more than the bounds are shown. */
static void drop_oldest(GsOutputView *self) {
  if (self->n_lines <= GS_OUTPUT_KEPT_LINES && self->n_bytes <= GS_OUTPUT_KEPT_BYTES)
    return;
  GtkTextIter start, cut;
  gtk_text_buffer_get_start_iter(self->buffer, &start);
  cut = start;
  guint dropped = 0;
  while (self->n_lines - dropped > GS_OUTPUT_KEPT_LINES || self->n_bytes > GS_OUTPUT_KEPT_BYTES) {
    GtkTextIter line_start = cut;
    if (!gtk_text_iter_forward_line(&cut)) {
      cut = line_start; /* the last line stays, however long */
      break;
    }
    g_autofree char *gone = gtk_text_iter_get_slice(&line_start, &cut);
    self->n_bytes -= MIN(self->n_bytes, strlen(gone) - 1); /* its text, not its newline */
    dropped++;
  }
  gtk_text_buffer_delete(self->buffer, &start, &cut);
  self->n_lines -= dropped;
  self->n_dropped += dropped;
}

/* Inserts a run of lines of one stream at the end, in one step. */
static void insert_run(GsOutputView *self, GString *run, GsOutputStream stream) {
  if (run->len == 0)
    return;
  GtkTextIter end;
  gtk_text_buffer_get_end_iter(self->buffer, &end);
  if (self->tags[stream])
    gtk_text_buffer_insert_with_tags(self->buffer, &end, run->str, (int)run->len,
                                     self->tags[stream], NULL);
  else
    gtk_text_buffer_insert(self->buffer, &end, run->str, (int)run->len);
  g_string_truncate(run, 0);
}

void gs_output_view_append(GsOutputView *self, GPtrArray *lines, guint64 lost) {
  g_return_if_fail(GS_IS_OUTPUT_VIEW(self));
  /* Lines that would be dropped at once are not inserted at all. */
  guint skip = lines->len > GS_OUTPUT_KEPT_LINES ? lines->len - GS_OUTPUT_KEPT_LINES : 0;
  self->n_dropped += lost + skip;
  if (skip == lines->len) {
    update_dropped(self);
    return;
  }

  g_autoptr(GString) run = g_string_new(NULL);
  GsOutputStream run_stream = GS_OUTPUT_STDOUT;
  for (guint i = skip; i < lines->len; i++) {
    const GsOutputLine *line = g_ptr_array_index(lines, i);
    if (line->stream != run_stream) {
      insert_run(self, run, run_stream);
      run_stream = line->stream;
    }
    /* The newline before a line goes with it: a tag's paragraph style (stderr's band, the
     * exit line's space above) is read at a line's start, so the line before keeps its own. */
    if (self->n_lines > 0)
      g_string_append_c(run, '\n');
    g_string_append(run, line->text);
    self->n_lines++;
    self->n_bytes += strlen(line->text);
  }
  insert_run(self, run, run_stream);
  drop_oldest(self);

  update_dropped(self);
  gtk_stack_set_visible_child_name(GTK_STACK(self->stack), self->n_lines ? "text" : "empty");
}

/* The source said something changed: takes the lines that arrived since the last time. */
static void on_source_changed(GsOutputView *self) {
  if (gs_trace_source_get_n_output(self->source) == self->next_line)
    return;
  guint64 first;
  g_autoptr(GPtrArray) lines = gs_trace_source_get_output(self->source, self->next_line, &first);
  gs_output_view_append(self, lines, first - self->next_line);
  self->next_line = first + lines->len;
}

void gs_output_view_set_source(GsOutputView *self, GsTraceSource *source) {
  g_return_if_fail(GS_IS_OUTPUT_VIEW(self));
  g_return_if_fail(GS_IS_TRACE_SOURCE(source));
  g_return_if_fail(self->source == NULL);
  self->source = g_object_ref(source);
  g_signal_connect_object(source, "changed", G_CALLBACK(on_source_changed), self,
                          G_CONNECT_SWAPPED);
  on_source_changed(self);
}

/* stderr in the error colour of the current style (light or dark), on a faint band so it
 * shows without colour too; the exit line in italics, set apart. */
static void style_tags(GsOutputView *self) {
  gboolean dark = adw_style_manager_get_dark(adw_style_manager_get_default());
  GdkRGBA error, band;
  gdk_rgba_parse(&error, dark ? "#ff7b63" : "#c01c28");
  band = error;
  band.alpha = 0.10f;
  g_object_set(self->tags[GS_OUTPUT_STDERR], "foreground-rgba", &error,
               "paragraph-background-rgba", &band, NULL);
}

/* ---- getters --------------------------------------------------------------------------- */

char *gs_output_view_dup_text(GsOutputView *self) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), NULL);
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds(self->buffer, &start, &end);
  return gtk_text_buffer_get_text(self->buffer, &start, &end, FALSE);
}

guint gs_output_view_get_n_lines(GsOutputView *self) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), 0);
  return self->n_lines;
}

GsOutputStream gs_output_view_get_line_stream(GsOutputView *self, guint line) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), GS_OUTPUT_STDOUT);
  g_return_val_if_fail(line < self->n_lines, GS_OUTPUT_STDOUT);
  GtkTextIter iter;
  gtk_text_buffer_get_iter_at_line(self->buffer, &iter, (int)line);
  for (GsOutputStream s = GS_OUTPUT_STDERR; s <= GS_OUTPUT_EXIT; s++)
    if (gtk_text_iter_has_tag(&iter, self->tags[s]))
      return s;
  return GS_OUTPUT_STDOUT;
}

guint64 gs_output_view_get_n_dropped(GsOutputView *self) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), 0);
  return self->n_dropped;
}

gboolean gs_output_view_get_following(GsOutputView *self) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), FALSE);
  return self->following;
}

GtkTextView *gs_output_view_get_text_view(GsOutputView *self) {
  g_return_val_if_fail(GS_IS_OUTPUT_VIEW(self), NULL);
  return self->text_view;
}

/* ---- GObject --------------------------------------------------------------------------- */

GtkWidget *gs_output_view_new(void) { return g_object_new(GS_TYPE_OUTPUT_VIEW, NULL); }

static void gs_output_view_realize(GtkWidget *widget) {
  GsOutputView *self = GS_OUTPUT_VIEW(widget);
  GTK_WIDGET_CLASS(gs_output_view_parent_class)->realize(widget);
  self->clock = g_object_ref(gtk_widget_get_frame_clock(widget));
  /* after: past the window's own handler, which allocates the widgets */
  g_signal_connect_after(self->clock, "layout", G_CALLBACK(on_layout_done), self);
}

static void gs_output_view_unrealize(GtkWidget *widget) {
  GsOutputView *self = GS_OUTPUT_VIEW(widget);
  if (self->clock) {
    g_signal_handlers_disconnect_by_data(self->clock, self);
    g_clear_object(&self->clock);
  }
  GTK_WIDGET_CLASS(gs_output_view_parent_class)->unrealize(widget);
}

static void gs_output_view_dispose(GObject *object) {
  GsOutputView *self = GS_OUTPUT_VIEW(object);
  if (self->source)
    g_signal_handlers_disconnect_by_data(self->source, self);
  g_clear_object(&self->source);
  g_clear_pointer(&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS(gs_output_view_parent_class)->dispose(object);
}

static void gs_output_view_class_init(GsOutputViewClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = gs_output_view_dispose;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->realize = gs_output_view_realize;
  widget_class->unrealize = gs_output_view_unrealize;
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "gs-output-view");
}

static void gs_output_view_init(GsOutputView *self) {
  self->following = TRUE;
  self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent(self->box, GTK_WIDGET(self));

  self->dropped_label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->dropped_label), 0);
  gtk_widget_add_css_class(self->dropped_label, "dim-label");
  gtk_widget_add_css_class(self->dropped_label, "caption");
  gtk_widget_set_margin_start(self->dropped_label, 12);
  gtk_widget_set_margin_top(self->dropped_label, 3);
  gtk_widget_set_margin_bottom(self->dropped_label, 3);
  gtk_widget_set_visible(self->dropped_label, FALSE);
  gtk_box_append(GTK_BOX(self->box), self->dropped_label);

  self->buffer = gtk_text_buffer_new(NULL);
  self->tags[GS_OUTPUT_STDERR] = gtk_text_buffer_create_tag(self->buffer, "stderr", NULL);
  self->tags[GS_OUTPUT_EXIT] = gtk_text_buffer_create_tag(
      self->buffer, "exit", "style", PANGO_STYLE_ITALIC, "pixels-above-lines", 6, NULL);
  style_tags(self);
  g_signal_connect_object(adw_style_manager_get_default(), "notify::dark",
                          G_CALLBACK(style_tags), self, G_CONNECT_SWAPPED);

  self->text_view = GTK_TEXT_VIEW(gtk_text_view_new_with_buffer(self->buffer));
  g_object_unref(self->buffer); /* the view holds it */
  gtk_text_view_set_editable(self->text_view, FALSE);
  gtk_text_view_set_cursor_visible(self->text_view, FALSE);
  gtk_text_view_set_monospace(self->text_view, TRUE);
  gtk_text_view_set_wrap_mode(self->text_view, GTK_WRAP_WORD_CHAR);
  gtk_text_view_set_left_margin(self->text_view, 12);
  gtk_text_view_set_right_margin(self->text_view, 12);
  gtk_text_view_set_top_margin(self->text_view, 6);
  gtk_text_view_set_bottom_margin(self->text_view, 6);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->text_view),
                                 GTK_ACCESSIBLE_PROPERTY_LABEL, _("Program output"), -1);

  self->scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller),
                                GTK_WIDGET(self->text_view));
  GtkAdjustment *adj = vadjustment(self);
  g_signal_connect_object(adj, "value-changed", G_CALLBACK(on_value_changed), self, 0);
  g_signal_connect_object(adj, "changed", G_CALLBACK(on_adjustment_changed), self, 0);
  /* What the user does to scroll up (see on_value_changed). Observed, never consumed. */
  GtkEventController *scroll = gtk_event_controller_scroll_new(
      GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  gtk_event_controller_set_propagation_phase(scroll, GTK_PHASE_CAPTURE);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(self->scroller, scroll);
  GtkEventController *bar = gtk_event_controller_legacy_new();
  gtk_event_controller_set_propagation_phase(bar, GTK_PHASE_CAPTURE);
  g_signal_connect(bar, "event", G_CALLBACK(on_scrollbar_event), self);
  gtk_widget_add_controller(
      gtk_scrolled_window_get_vscrollbar(GTK_SCROLLED_WINDOW(self->scroller)), bar);
  GtkEventController *keys = gtk_event_controller_key_new();
  gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE);
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
  gtk_widget_add_controller(GTK_WIDGET(self->text_view), keys);

  GtkWidget *empty = gtk_label_new(_("The program has printed nothing yet."));
  gtk_widget_add_css_class(empty, "dim-label");
  gtk_widget_set_margin_top(empty, 12);
  gtk_widget_set_margin_bottom(empty, 12);

  self->stack = gtk_stack_new();
  gtk_widget_set_vexpand(self->stack, TRUE);
  gtk_stack_add_named(GTK_STACK(self->stack), empty, "empty");
  gtk_stack_add_named(GTK_STACK(self->stack), self->scroller, "text");
  gtk_stack_set_visible_child_name(GTK_STACK(self->stack), "empty");
  gtk_box_append(GTK_BOX(self->box), self->stack);
}
