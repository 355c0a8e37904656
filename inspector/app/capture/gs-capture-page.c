/* gs-capture-page.c: one capture (see the header). The page owns the model; its views borrow
 * it and are cleared before it is freed. A file source hands its model over once loaded; a
 * live source feeds a model the page makes at once. */
#include "gs-capture-page.h"

#include <adwaita.h>
#include <inttypes.h>
#include <glib/gi18n.h>
#include <string.h>

#include "gs-capture-ranks.h"
#include "gs-graph-pane.h"
#include "gs-output-view.h"
#include "gs-rank-lanes-view.h"
#include "gs-scope-tree-view.h"
#include "gs-tensor-view.h"
#include "gs-timeline-view.h"
#include "gs-tour-panel.h"
#include "gs-view.h"
#include "snapshot-note.h"

/* Work per frame spent feeding arrived bytes into the model: a quarter of a 60 Hz frame. */
#define PUMP_BUDGET_US 4000
/* How often a capture in a background tab takes what arrived. */
#define BACKGROUND_PUMP_MS 50
/* The Output pane's first height above its minimum, until the user drags its divider. */
#define OUTPUT_PANE_HEIGHT 170
/* What the pane keeps above its minimum when the window is too short for the views above
 * too (some eight lines): a failing program's last lines and its exit status. */
#define OUTPUT_PANE_LEAST 120

struct _GsCapturePage {
  GtkWidget parent_instance;

  GtkWidget *output_paned;
  GtkWidget *stack;
  AdwStatusPage *loading_page;
  GtkWidget *progress_bar;
  AdwStatusPage *waiting_page;
  GtkWidget *waiting_stop_button;
  GtkWidget *scope_tree;
  GtkWidget *event_list;
  GtkWidget *tensor_view;
  GtkWidget *timeline_view;
  GtkWidget *timeline_stack; /* the timeline, or a run's lanes (rank_lanes) */
  GtkWidget *rank_lanes;
  GtkWidget *graph_pane;
  AdwViewStack *view_stack;
  GsView *views[5]; /* the five above that follow the view contract (gs-view.h) */
  GtkWidget *scrubber;
  GtkWidget *status_revealer;
  GtkWidget *status_icon;
  GtkWidget *status_label;
  GtkWidget *stop_button;
  GtkWidget *output_button;
  GtkWidget *waiting_output_button;
  GtkWidget *output_view;
  GtkWidget *tour_panel;

  gs_trace_model *model;
  /* A distributed run's other ranks (NULL for a single log): loaded beside the first rank's
   * log, which is `model`; then the run over all of them, which the Events page lists and the
   * Memory page draws as lanes. */
  gs_capture_ranks *ranks;
  gs_rank_run *run;
  gs_trace_model *adopting; /* a whole log's model being handed to the views, one a turn */
  guint adopt_next;         /* the view it goes to next */
  gboolean adopt_stepping;  /* the event list is taking its rows in steps */
  guint adopt_id;
  GsTraceSource *source;
  char *title;
  char *subtitle;
  guint64 shown_warnings; /* the model's warnings the status line last told of */
  guint tick_id;       /* frame-clock pumping while shown */
  guint background_id;  /* timer pumping while in a background tab */
  GsTraceSourceState last_state;
  gboolean positioning; /* a view is moving the scrubber: do not echo back to it */
  gboolean tour_tried;  /* the tour was resolved in the whole log (or failed to be) */
};

G_DEFINE_FINAL_TYPE(GsCapturePage, gs_capture_page, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_TITLE, PROP_SUBTITLE, PROP_BUSY, PROP_SHOW_OUTPUT, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { SIGNAL_TOAST, N_SIGNALS };
static guint signals[N_SIGNALS];

const char *gs_capture_page_get_title(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->title;
}

const char *gs_capture_page_get_subtitle(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->subtitle;
}

const char *gs_capture_page_get_status(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->status_label));
}

gboolean gs_capture_page_get_busy(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), FALSE);
  if (self->adopting) /* the views are still taking a whole log's model */
    return TRUE;
  if (self->ranks && !self->run && !gs_capture_ranks_error(self->ranks))
    return TRUE; /* the other ranks are loading, or waiting for the first one's views */
  if (!self->source)
    return FALSE;
  GsTraceSourceState state = gs_trace_source_get_state(self->source);
  return state == GS_TRACE_SOURCE_LOADING || state == GS_TRACE_SOURCE_LIVE ||
         state == GS_TRACE_SOURCE_CONNECTING;
}

gs_trace_model *gs_capture_page_get_model(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->model;
}

gs_rank_run *gs_capture_page_get_run(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->run;
}

GtkWidget *gs_capture_page_get_rank_lanes(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->rank_lanes;
}

GsTraceSource *gs_capture_page_get_source(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->source;
}

GsScrubber *gs_capture_page_get_scrubber(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return GS_SCRUBBER(self->scrubber);
}

GsEventListView *gs_capture_page_get_event_list(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return GS_EVENT_LIST_VIEW(self->event_list);
}

GtkWidget *gs_capture_page_get_scope_tree(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->scope_tree;
}

GtkWidget *gs_capture_page_get_tensor_view(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->tensor_view;
}

GtkWidget *gs_capture_page_get_output_view(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->output_view;
}

/* Only a program the inspector runs has output to show. */
static gboolean has_output(GsCapturePage *self) {
  return self->source && gs_trace_source_get_kind(self->source) == GS_TRACE_SOURCE_SPAWN;
}

gboolean gs_capture_page_get_show_output(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), FALSE);
  return gtk_widget_get_visible(self->output_view);
}

void gs_capture_page_set_show_output(GsCapturePage *self, gboolean show) {
  g_return_if_fail(GS_IS_CAPTURE_PAGE(self));
  show = show && has_output(self);
  if (show == gs_capture_page_get_show_output(self))
    return;
  gtk_widget_set_visible(self->output_view, show);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_SHOW_OUTPUT]);
}

const char *gs_capture_page_get_state_name(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return gtk_stack_get_visible_child_name(GTK_STACK(self->stack));
}

void gs_capture_page_focus_search(GsCapturePage *self) {
  g_return_if_fail(GS_IS_CAPTURE_PAGE(self));
  gs_event_list_view_focus_search(GS_EVENT_LIST_VIEW(self->event_list));
}

static void set_subtitle(GsCapturePage *self, const char *subtitle) {
  if (g_strcmp0(self->subtitle, subtitle) == 0)
    return;
  g_free(self->subtitle);
  self->subtitle = g_strdup(subtitle);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_SUBTITLE]);
}

/* ---- views ---------------------------------------------------------------------------- */

static gboolean source_finished(GsCapturePage *self) {
  if (!self->source)
    return TRUE;
  GsTraceSourceState state = gs_trace_source_get_state(self->source);
  return state == GS_TRACE_SOURCE_ENDED || state == GS_TRACE_SOURCE_BROKEN;
}

/* The visible state: loading until a model exists, waiting until it has an event (or, if
 * the source ended with none, saying so). */
static void update_stack(GsCapturePage *self) {
  const char *name;
  if (self->adopting || (!self->model && !source_finished(self))) {
    name = "loading";
  } else if (!self->model || gs_trace_model_n_events(self->model) == 0) {
    name = "waiting";
    gboolean over = source_finished(self);
    adw_status_page_set_title(self->waiting_page,
                              over ? _("No Events") : _("Waiting for Events…"));
    adw_status_page_set_icon_name(self->waiting_page,
                                  over ? "dialog-warning-symbolic" : "content-loading-symbolic");
  } else {
    name = "content";
  }
  if (g_strcmp0(gtk_stack_get_visible_child_name(GTK_STACK(self->stack)), name) != 0)
    gtk_stack_set_visible_child_name(GTK_STACK(self->stack), name);
}

/* The views (gs-view.h), in the order they are told of changes. */
static GsView **views(GsCapturePage *self, guint *n) {
  *n = G_N_ELEMENTS(self->views);
  return self->views;
}

static void set_views_model(GsCapturePage *self, gs_trace_model *model) {
  guint n;
  GsView **all = views(self, &n);
  for (guint i = 0; i < n; i++)
    gs_view_set_model(all[i], model);
  gs_scrubber_set_model(GS_SCRUBBER(self->scrubber), model);
}

static void update_status(GsCapturePage *self);

/* The views let go of the model shown (or being handed over), which is freed. */
static void drop_models(GsCapturePage *self) {
  if (!self->model && !self->adopting)
    return;
  set_views_model(self, NULL);
  g_clear_pointer(&self->model, gs_trace_model_free);
  g_clear_pointer(&self->adopting, gs_trace_model_free);
}

static void adopt_model(GsCapturePage *self, gs_trace_model *model) {
  drop_models(self);
  g_clear_handle_id(&self->adopt_id, g_source_remove);
  self->model = model;
  set_views_model(self, model);
  update_stack(self);
  if (self->source)
    update_status(self);
}

static void maybe_start_tour(GsCapturePage *self);

/* Once the first rank's model is shown and the other ranks are loaded: the run, to the Events
 * page's list and the Memory page's lanes. */
static void maybe_make_run(GsCapturePage *self) {
  if (!self->ranks || self->run || gs_capture_ranks_loading(self->ranks) || !self->model ||
      self->adopting)
    return;
  const char *error = gs_capture_ranks_error(self->ranks);
  if (error) {
    g_autofree char *message =
        g_strdup_printf(_("The other ranks’ logs could not be read: %s"), error);
    g_signal_emit(self, signals[SIGNAL_TOAST], 0, message);
  } else {
    self->run = gs_capture_ranks_make_run(self->ranks, self->model);
    gs_event_list_view_set_run(GS_EVENT_LIST_VIEW(self->event_list), self->run);
    gs_rank_lanes_view_set_run(GS_RANK_LANES_VIEW(self->rank_lanes), self->run);
    gs_scrubber_set_rank(GS_SCRUBBER(self->scrubber), gs_rank_run_rank(self->run, 0));
    gs_graph_pane_set_rank(GS_GRAPH_PANE(self->graph_pane), gs_rank_run_rank(self->run, 0));
    gtk_stack_set_visible_child_name(GTK_STACK(self->timeline_stack), "ranks");
  }
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
}

static void on_ranks_loaded(gpointer data) { maybe_make_run(data); }

/* One view a turn of the main loop, then the page shows the model (its scrubber last: that
 * positions every view). */
static gboolean adopt_step(gpointer data) {
  GsCapturePage *self = data;
  guint n;
  GsView **all = views(self, &n);
  if (self->adopt_next < n) {
    GsView *view = all[self->adopt_next];
    if (GS_IS_EVENT_LIST_VIEW(view)) { /* its rows come in steps too, a turn each */
      GsEventListView *list = GS_EVENT_LIST_VIEW(view);
      if (!self->adopt_stepping) {
        gs_event_list_view_set_model_in_steps(list, self->adopting);
        self->adopt_stepping = TRUE;
        return G_SOURCE_CONTINUE;
      }
      if (!gs_event_list_view_step(list))
        return G_SOURCE_CONTINUE;
      self->adopt_stepping = FALSE;
    } else {
      gs_view_set_model(view, self->adopting);
    }
    self->adopt_next++;
    return G_SOURCE_CONTINUE;
  }
  /* The scope tree first follows the scrubber's first event (the last) in turns of its own:
   * the walk up a 100,000-deep scope's chain (50 ms), then the rows it opens (20 ms). The
   * scrubber below moves every view there, the tree then finding it done. */
  guint64 n_events = gs_trace_model_n_events(self->adopting);
  GsScopeTreeView *tree = GS_SCOPE_TREE_VIEW(self->scope_tree);
  if (self->adopt_next == n && n_events) {
    self->adopt_next++;
    gs_scope_tree_view_prepare_position(tree, n_events - 1);
    return G_SOURCE_CONTINUE;
  }
  if (self->adopt_next == n + 1 && n_events) {
    self->adopt_next++;
    gs_scope_tree_view_set_position(tree, n_events - 1);
    return G_SOURCE_CONTINUE;
  }
  self->adopt_id = 0;
  self->model = g_steal_pointer(&self->adopting);
  gs_scrubber_set_model(GS_SCRUBBER(self->scrubber), self->model);
  update_stack(self);
  if (self->source)
    update_status(self);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
  maybe_start_tour(self);
  maybe_make_run(self);
  return G_SOURCE_REMOVE;
}

/* A whole log's model, from a file. Each view's first look at a big one costs a burst (GTK
 * 4.8's lists make about 200 rows each whatever fits on screen; the timeline indexes the
 * log), and the frame after draws what they made: handed over all at once, the bursts add
 * up to one long freeze. Handed one view a turn, at idle priority, each burst gets a frame of
 * its own. The page shows "loading", is busy and has no model until the last view has it,
 * so nothing looks at a view half told. */
static void adopt_whole_model(GsCapturePage *self, gs_trace_model *model) {
  drop_models(self);
  self->adopting = model;
  self->adopt_next = 0;
  self->adopt_stepping = FALSE;
  if (!self->adopt_id)
    self->adopt_id = g_idle_add(adopt_step, self);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
}

/* The scrubber moved (a drag, a key, a click in a view, or following the live end). */
static void on_position(GsCapturePage *self) {
  if (!self->model || gs_trace_model_n_events(self->model) == 0)
    return;
  guint64 index = gs_scrubber_get_position(GS_SCRUBBER(self->scrubber));
  guint n;
  GsView **all = views(self, &n);
  for (guint i = 0; i < n; i++)
    /* A row picked in the event list moved the scrubber: the list does not scroll to it. */
    if (!(self->positioning && all[i] == GS_VIEW(self->event_list)))
      gs_view_set_position(all[i], index);
}

/* A view picked an event: the scrubber goes there, and so every view (the event list
 * follows too unless the pick came from it). */
static void on_event_selected(GsCapturePage *self, guint64 index, GsView *from) {
  self->positioning = from == GS_VIEW(self->event_list);
  gs_scrubber_set_position(GS_SCRUBBER(self->scrubber), index);
  self->positioning = FALSE;
}

/* A view picked a tensor: the details show its life, the graph and the timeline outline it. */
static void on_tensor_selected(GsCapturePage *self, guint64 tensor) {
  guint n;
  GsView **all = views(self, &n);
  for (guint i = 0; i < n; i++)
    gs_view_select_tensor(all[i], tensor);
}

static gboolean focus_wants(GtkWidget *widget, gboolean arrow);

/* Shows a page of the view stack (Ctrl+1/2/3, a tour step). When the old page had the focus,
 * the stack hands it to the new page's first focusable widget: on the Graph page the
 * "Backward pass" field, which would keep the arrows, Home and End from scrubbing. A text
 * field the user did not pick gives the focus to the scrubber's slider instead: those keys
 * are the scrubber's. */
static void show_page(GsCapturePage *self, const char *name) {
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
  GtkWidget *before = root ? gtk_root_get_focus(root) : NULL;
  adw_view_stack_set_visible_child_name(self->view_stack, name);
  GtkWidget *after = root ? gtk_root_get_focus(root) : NULL;
  if (after != before && focus_wants(GTK_WIDGET(self), FALSE))
    gs_scrubber_grab_focus(GS_SCRUBBER(self->scrubber));
}

/* The Tour panel's step: the scrubber to its event, its page, its tensor picked. The memory
 * steps talk about categories (saved for backward, gradients), so the timeline shows them. */
static void on_tour_step(GsCapturePage *self, guint64 index, guint64 tensor, const char *page) {
  show_page(self, page);
  if (!strcmp(page, "timeline"))
    gs_timeline_view_set_by_scope(GS_TIMELINE_VIEW(self->timeline_view), FALSE);
  gs_scrubber_set_position(GS_SCRUBBER(self->scrubber), index);
  if (tensor)
    on_tensor_selected(self, tensor);
}

static void on_scope_selected(GsCapturePage *self, guint64 scope) {
  gs_event_list_view_set_scope_filter(GS_EVENT_LIST_VIEW(self->event_list), scope);
}

static void model_grew(GsCapturePage *self) {
  guint n;
  GsView **all = views(self, &n);
  for (guint i = 0; i < n; i++)
    gs_view_model_grew(all[i]);
  /* Last: it may move to the new end, which positions the views above. */
  gs_scrubber_model_grew(GS_SCRUBBER(self->scrubber));
  update_stack(self);
  if (self->source && gs_trace_model_head(self->model)->n_warnings != self->shown_warnings)
    update_status(self);
}

/* ---- source --------------------------------------------------------------------------- */

/* The source's message, and what the model stepped over in the log (replay-warnings.h): the
 * views rest on the replay's rules there, and the user should know. The tooltip lists the
 * first ones with their events. */
static char *status_text(GsCapturePage *self, const char *message, char **tooltip) {
  const gs_replay *head = self->model ? gs_trace_model_head(self->model) : NULL;
  guint64 n = head ? head->n_warnings : 0;
  self->shown_warnings = n;
  if (!n) {
    *tooltip = g_strdup(message);
    return g_strdup(message);
  }
  g_autofree char *first =
      gs_replay_warning_describe(&g_array_index(head->warnings, gs_replay_warning, 0));
  g_autofree char *said = g_strdup_printf(
      ngettext("The log has %" PRIu64 " inconsistency, stepped over (%s)",
               "The log has %" PRIu64 " inconsistencies, stepped over (first: %s)", n),
      (uint64_t)n, first);
  GString *tip = g_string_new(message && *message ? message : NULL);
  for (guint i = 0; i < head->warnings->len && i < 10; i++) {
    g_autofree char *text =
        gs_replay_warning_describe(&g_array_index(head->warnings, gs_replay_warning, i));
    g_string_append_printf(tip, "%s%s", tip->len ? "\n" : "", text);
  }
  if (n > MIN(head->warnings->len, 10))
    g_string_append_printf(tip, "\n%s", _("…and more (gradscope stats lists them)"));
  *tooltip = g_string_free(tip, FALSE);
  return message && *message ? g_strdup_printf("%s · %s", message, said) : g_strdup(said);
}

static void update_status(GsCapturePage *self) {
  GsTraceSourceState state = gs_trace_source_get_state(self->source);
  const char *message = gs_trace_source_get_message(self->source);
  /* A log that begins mid-run says so for as long as it is shown: every view starts from
   * the snapshot, not from the run's start. */
  guint64 first_seq = 0, objects = 0;
  g_autofree char *note = NULL;
  if (self->model && gs_trace_model_snapshot(self->model, &first_seq, &objects, NULL)) {
    g_autofree char *began = gs_snapshot_note(first_seq, objects);
    note = message && *message ? g_strdup_printf("%s · %s", message, began)
                               : g_steal_pointer(&began);
    message = note;
  }
  g_autofree char *tooltip = NULL;
  g_autofree char *status = status_text(self, message, &tooltip);
  const char *icon = NULL;
  switch (state) {
  case GS_TRACE_SOURCE_CONNECTING:
  case GS_TRACE_SOURCE_LOADING:
    icon = "content-loading-symbolic";
    break;
  case GS_TRACE_SOURCE_LIVE:
    icon = "media-record-symbolic";
    break;
  case GS_TRACE_SOURCE_ENDED:
    icon = "object-select-symbolic";
    break;
  case GS_TRACE_SOURCE_BROKEN:
    icon = "dialog-warning-symbolic";
    break;
  }
  gtk_image_set_from_icon_name(GTK_IMAGE(self->status_icon), icon);
  gtk_label_set_text(GTK_LABEL(self->status_label), status ? status : "");
  gtk_widget_set_tooltip_text(self->status_label, tooltip);
  gtk_revealer_set_reveal_child(GTK_REVEALER(self->status_revealer), status && *status);
  gboolean running = state == GS_TRACE_SOURCE_LIVE || state == GS_TRACE_SOURCE_CONNECTING;
  gtk_widget_set_visible(self->stop_button, running);
  gtk_widget_set_visible(self->waiting_stop_button, running);
  /* A status page's description is markup: a command line's "2>&1" or a path's "&" is text. */
  g_autofree char *waiting = message ? g_markup_escape_text(message, -1) : NULL;
  g_autofree char *loading =
      g_markup_escape_text(gs_trace_source_get_description(self->source), -1);
  adw_status_page_set_description(self->waiting_page, waiting);
  adw_status_page_set_description(self->loading_page, loading);
  set_subtitle(self, message);
  update_stack(self);

  if (state != self->last_state) {
    /* A source that breaks says so once, loudly; its events stay. */
    if (state == GS_TRACE_SOURCE_BROKEN && message)
      g_signal_emit(self, signals[SIGNAL_TOAST], 0, message);
    self->last_state = state;
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_BUSY]);
  }
}

/* A tour plays once the log is whole: its steps are searched in all of it. */
static void maybe_start_tour(GsCapturePage *self) {
  GsTourPanel *panel = GS_TOUR_PANEL(self->tour_panel);
  if (self->tour_tried || !self->model || !gs_tour_panel_get_tour(panel) ||
      !source_finished(self) || gs_trace_source_get_bytes_pending(self->source) > 0)
    return;
  self->tour_tried = TRUE;
  /* The program's output was for the run; the tour needs the room (Ctrl+4 brings it back). */
  if (gs_tour_panel_start(panel, self->model))
    gs_capture_page_set_show_output(self, FALSE);
}

static void on_source_loaded(GsCapturePage *self) {
  gs_trace_model *model = gs_trace_source_take_model(self->source);
  if (model)
    adopt_whole_model(self, model); /* starts the tour once the views have it */
  else
    maybe_start_tour(self);
}

/* Takes what arrived, within the budget, and shows loading progress. FALSE once nothing
 * more can come (the source is over and drained, or its load failed). */
static gboolean pump_once(GsCapturePage *self) {
  if (!self->source || self->adopting)
    return TRUE;
  if (!self->model && source_finished(self)) /* the load failed: nothing will come */
    return FALSE;
  if (!self->model) {
    double progress = gs_trace_source_get_progress(self->source);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress_bar), progress);
    g_autofree char *text = g_strdup_printf(_("%.0f %%"), progress * 100);
    gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress_bar), text);
    return TRUE;
  }
  if (gs_trace_source_pump(self->source, self->model, PUMP_BUDGET_US) > 0)
    model_grew(self);
  if (!(source_finished(self) && gs_trace_source_get_bytes_pending(self->source) == 0))
    return TRUE;
  maybe_start_tour(self);
  return FALSE;
}

/* Each frame while the page is shown. */
static gboolean on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  (void)clock, (void)data;
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  if (pump_once(self))
    return G_SOURCE_CONTINUE;
  self->tick_id = 0; /* over and drained: stop waking every frame */
  return G_SOURCE_REMOVE;
}

/* A page in a background tab gets no frames: it is pumped by a timer instead, so a live
 * program is never held up by a capture nobody is looking at. */
static gboolean on_background_pump(gpointer data) {
  GsCapturePage *self = data;
  if (pump_once(self))
    return G_SOURCE_CONTINUE;
  self->background_id = 0;
  return G_SOURCE_REMOVE;
}

static void start_tick(GsCapturePage *self) {
  if (gtk_widget_get_mapped(GTK_WIDGET(self))) {
    if (!self->tick_id)
      self->tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(self), on_tick, NULL, NULL);
  } else if (!self->background_id) {
    self->background_id = g_timeout_add(BACKGROUND_PUMP_MS, on_background_pump, self);
  }
}

static void stop_pumping(GsCapturePage *self) {
  if (self->tick_id) {
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->tick_id);
    self->tick_id = 0;
  }
  g_clear_handle_id(&self->background_id, g_source_remove);
}

static void gs_capture_page_map(GtkWidget *widget) {
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  GTK_WIDGET_CLASS(gs_capture_page_parent_class)->map(widget);
  if (self->background_id || self->tick_id) {
    stop_pumping(self);
    start_tick(self); /* mapped now: frames again */
  }
}

static void gs_capture_page_unmap(GtkWidget *widget) {
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  gboolean pumping = self->tick_id != 0;
  stop_pumping(self);
  GTK_WIDGET_CLASS(gs_capture_page_parent_class)->unmap(widget);
  if (pumping)
    start_tick(self); /* unmapped now: the timer */
}

/* The Output pane's divider, after each allocation of the page. The pane first gets
 * OUTPUT_PANE_HEIGHT (at most half the page), then what the user drags it to; the views above
 * get back their minimum height where the pane can spare it down to OUTPUT_PANE_LEAST. In a
 * window too short for both, the pane keeps that much and the views slide under their bottom
 * edge (the paned may shrink them: it clips them and keeps their bottom, the scrubber, in
 * sight). With the views' minimum enforced instead, the window could not be made shorter than
 * some 670 pixels, and on a shorter screen the pane's last lines (a failing program's error
 * and exit status) were below its edge. TRUE if it moved the divider. */
static gboolean place_output_divider(GsCapturePage *self) {
  GtkPaned *paned = GTK_PANED(self->output_paned);
  int max;
  gboolean set;
  g_object_get(paned, "max-position", &max, "position-set", &set, NULL);
  if (max <= 0 || !gtk_widget_get_visible(self->output_view))
    return FALSE;
  int position = set ? gtk_paned_get_position(paned) : MAX(max - OUTPUT_PANE_HEIGHT, max / 2);
  int views_min = 0;
  gtk_widget_measure(self->stack, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width(self->stack),
                     &views_min, NULL, NULL, NULL);
  if (position < views_min)
    position = MAX(position, MIN(views_min, max - OUTPUT_PANE_LEAST));
  if (set && position == gtk_paned_get_position(paned))
    return FALSE;
  gtk_paned_set_position(paned, position);
  return TRUE;
}

/* The page holds the paned alone; the divider is checked after each allocation (the views'
 * minimum changes as the page goes from waiting to showing a run). */
static void gs_capture_page_measure(GtkWidget *widget, GtkOrientation orientation, int for_size,
                                    int *minimum, int *natural, int *minimum_baseline,
                                    int *natural_baseline) {
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  gtk_widget_measure(self->output_paned, orientation, for_size, minimum, natural,
                     minimum_baseline, natural_baseline);
}

static void gs_capture_page_size_allocate(GtkWidget *widget, int width, int height,
                                          int baseline) {
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  gtk_widget_allocate(self->output_paned, width, height, baseline, NULL);
  /* Moved, the paned is allocated again at once: it must not be drawn unallocated. Its
   * size is the same, so it keeps the position as set. */
  if (place_output_divider(self))
    gtk_widget_allocate(self->output_paned, width, height, baseline, NULL);
}

static void on_stop(GsCapturePage *self) {
  if (self->source)
    gs_trace_source_stop(self->source);
}

static void attach_source(GsCapturePage *self, GsTraceSource *source, const char *title) {
  self->source = source;
  self->title = g_strdup(title);
  /* A program's output shows from the start (its progress is what its user watches);
   * other captures have none, and no button for it. */
  gboolean output = has_output(self);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "capture.show-output", output);
  gtk_widget_set_visible(self->output_button, output);
  gtk_widget_set_visible(self->waiting_output_button, output);
  if (output) {
    gs_output_view_set_source(GS_OUTPUT_VIEW(self->output_view), source);
    gs_capture_page_set_show_output(self, TRUE);
  }
  self->last_state = gs_trace_source_get_state(source);
  g_signal_connect_object(source, "changed", G_CALLBACK(update_status), self,
                          G_CONNECT_SWAPPED);
  g_signal_connect_object(source, "loaded", G_CALLBACK(on_source_loaded), self,
                          G_CONNECT_SWAPPED);
  /* Live sources feed a model from the first byte; a file's comes with "loaded". */
  if (gs_trace_source_get_kind(source) != GS_TRACE_SOURCE_FILE)
    adopt_model(self, gs_trace_model_new());
  else
    update_stack(self);
  update_status(self);
  start_tick(self);
}

GsCapturePage *gs_capture_page_new_for_file(const char *path, gboolean follow) {
  g_return_val_if_fail(path != NULL, NULL);
  GsCapturePage *self = g_object_new(GS_TYPE_CAPTURE_PAGE, NULL);
  g_autofree char *base = g_path_get_basename(path);
  gs_tensor_view_set_log_path(GS_TENSOR_VIEW(self->tensor_view), path);
  attach_source(self, gs_trace_source_new_file(path, follow), base);
  return self;
}

GsCapturePage *gs_capture_page_new_for_run(const gs_rank_log *logs, guint n) {
  g_return_val_if_fail(logs && n > 0, NULL);
  GsCapturePage *self = gs_capture_page_new_for_file(logs[0].path, FALSE);
  if (n < 2)
    return self;
  g_autofree char *base = g_path_get_basename(logs[0].path);
  g_free(self->title);
  /* Translators: a tab's title: the first rank's log file and how many ranks are shown. */
  self->title = g_strdup_printf(ngettext("%s (%u rank)", "%s (%u ranks)", n), base, n);
  self->ranks = gs_capture_ranks_new(logs, n, on_ranks_loaded, self);
  return self;
}

GsCapturePage *gs_capture_page_new_for_program(const char *const *argv, const char *cwd,
                                               int echo_stdout, int echo_stderr,
                                               GError **error) {
  g_return_val_if_fail(argv && argv[0], NULL);
  GsTraceSource *source =
      gs_trace_source_new_spawn(argv, cwd, echo_stdout, echo_stderr, error);
  if (!source)
    return NULL;
  GsCapturePage *self = g_object_new(GS_TYPE_CAPTURE_PAGE, NULL);
  g_autofree char *base = g_path_get_basename(argv[0]);
  attach_source(self, source, base);
  return self;
}

GsCapturePage *gs_capture_page_new_for_tour(const gs_tour *tour, int echo_stdout,
                                            int echo_stderr, GError **error) {
  g_return_val_if_fail(tour, NULL);
  g_auto(GStrv) extra_env = NULL;
  g_auto(GStrv) argv = gs_tour_command(tour, &extra_env);
  if (!argv) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                _("The tour’s program %s is not installed"), tour->program);
    return NULL;
  }
  /* Values on: the tours' graphs show data and gradients, as micrograd's do. A Python tour
   * also gets the module's PYTHONPATH (gs_tour_command). */
  g_autoptr(GStrvBuilder) env_builder = g_strv_builder_new();
  g_strv_builder_add(env_builder, "GS_TRACE_VALUES=16");
  if (extra_env)
    g_strv_builder_addv(env_builder, (const char **)extra_env);
  g_auto(GStrv) env = g_strv_builder_end(env_builder);
  GsTraceSource *source = gs_trace_source_new_spawn_env(
      (const char *const *)argv, NULL, (const char *const *)env, echo_stdout, echo_stderr, error);
  if (!source)
    return NULL;
  GsCapturePage *self = g_object_new(GS_TYPE_CAPTURE_PAGE, NULL);
  attach_source(self, source, tour->program);
  gs_capture_page_set_tour(self, tour);
  return self;
}

void gs_capture_page_set_tour(GsCapturePage *self, const gs_tour *tour) {
  g_return_if_fail(GS_IS_CAPTURE_PAGE(self));
  gs_tour_panel_set_tour(GS_TOUR_PANEL(self->tour_panel), tour);
  self->tour_tried = FALSE;
  if (self->source)
    maybe_start_tour(self);
}

GtkWidget *gs_capture_page_get_tour_panel(GsCapturePage *self) {
  g_return_val_if_fail(GS_IS_CAPTURE_PAGE(self), NULL);
  return self->tour_panel;
}

GsCapturePage *gs_capture_page_new_listening(GError **error) {
  GsTraceSource *source = gs_trace_source_new_listen(NULL, error);
  if (!source)
    return NULL;
  GsCapturePage *self = g_object_new(GS_TYPE_CAPTURE_PAGE, NULL);
  attach_source(self, source, _("Listening"));
  return self;
}

/* ---- keys ----------------------------------------------------------------------------- */

/* Whether the focused widget uses the key itself: a text field its arrows and Home/End (the
 * cursor), the Output pane's text the same (scrolling), the graph its arrows (panning). */
static gboolean focus_wants(GtkWidget *widget, gboolean arrow) {
  GtkRoot *root = gtk_widget_get_root(widget);
  GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
  return focus && (GTK_IS_EDITABLE(focus) || GTK_IS_TEXT_VIEW(focus) ||
                   (arrow && GS_IS_GRAPH_VIEW(focus)));
}

static gboolean step_shortcut(GtkWidget *widget, GVariant *args, gpointer data) {
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  gboolean arrow = GPOINTER_TO_INT(data);
  if (!self->model || focus_wants(widget, arrow))
    return FALSE;
  gint64 delta = g_variant_get_int64(args);
  GsScrubber *scrubber = GS_SCRUBBER(self->scrubber);
  if (delta == G_MININT64)
    gs_scrubber_set_position(scrubber, 0);
  else if (delta == G_MAXINT64)
    gs_scrubber_set_position(scrubber, G_MAXUINT64);
  else
    gs_scrubber_step(scrubber, delta);
  return TRUE;
}

static gboolean page_shortcut(GtkWidget *widget, GVariant *args, gpointer data) {
  (void)data;
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  show_page(self, g_variant_get_string(args, NULL));
  return TRUE;
}

/* Alt+Right, Alt+Left: the tour's next and previous step (while a tour plays). */
static gboolean tour_shortcut(GtkWidget *widget, GVariant *args, gpointer data) {
  (void)data;
  GsTourPanel *panel = GS_TOUR_PANEL(GS_CAPTURE_PAGE(widget)->tour_panel);
  if (!gs_tour_panel_get_started(panel))
    return FALSE;
  if (g_variant_get_boolean(args))
    gs_tour_panel_next(panel);
  else
    gs_tour_panel_previous(panel);
  return TRUE;
}

/* Ctrl+4: the Output pane, shown or hidden (a capture with no program lets the key go). */
static gboolean output_shortcut(GtkWidget *widget, GVariant *args, gpointer data) {
  (void)args, (void)data;
  GsCapturePage *self = GS_CAPTURE_PAGE(widget);
  if (!has_output(self))
    return FALSE;
  gs_capture_page_set_show_output(self, !gs_capture_page_get_show_output(self));
  return TRUE;
}

static void add_shortcut(GtkShortcutController *keys, guint key, GdkModifierType mods,
                         GtkShortcutFunc fn, gpointer data, GVariant *args) {
  GtkShortcut *s = gtk_shortcut_new(gtk_keyval_trigger_new(key, mods),
                                    gtk_callback_action_new(fn, data, NULL));
  gtk_shortcut_set_arguments(s, args);
  gtk_shortcut_controller_add_shortcut(keys, s);
}

/* The page's keys are caught before the focused widget sees them (the capture phase), so
 * stepping works after a click on |<, an event row or the timeline; a text field keeps the
 * arrows and Home/End, the graph its arrows (it pans with them). Ctrl+1/2/3 show the
 * Events, Graph and Memory pages (Alt+1..9 are the tabs'), and Ctrl+4 the program's output
 * below them all. Alt+Left/Right step a tour (AdwTabView and the text fields leave them). */
static void add_page_keys(GsCapturePage *self) {
  GtkEventController *keys = gtk_shortcut_controller_new();
  gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE);
  GtkShortcutController *k = GTK_SHORTCUT_CONTROLLER(keys);
  static const struct {
    guint key;
    GdkModifierType mods;
    gint64 delta;
  } steps[] = {
      {GDK_KEY_Left, 0, -1},
      {GDK_KEY_Right, 0, 1},
      {GDK_KEY_Left, GDK_CONTROL_MASK, -100},
      {GDK_KEY_Right, GDK_CONTROL_MASK, 100},
      {GDK_KEY_Home, 0, G_MININT64},
      {GDK_KEY_End, 0, G_MAXINT64},
      {GDK_KEY_Home, GDK_CONTROL_MASK, G_MININT64},
      {GDK_KEY_End, GDK_CONTROL_MASK, G_MAXINT64},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(steps); i++)
    add_shortcut(k, steps[i].key, steps[i].mods, step_shortcut,
                 GINT_TO_POINTER(steps[i].key == GDK_KEY_Left || steps[i].key == GDK_KEY_Right),
                 g_variant_new_int64(steps[i].delta));
  static const char *const pages[] = {"events", "graph", "timeline"};
  for (guint i = 0; i < G_N_ELEMENTS(pages); i++)
    add_shortcut(k, GDK_KEY_1 + i, GDK_CONTROL_MASK, page_shortcut, NULL,
                 g_variant_new_string(pages[i]));
  add_shortcut(k, GDK_KEY_4, GDK_CONTROL_MASK, output_shortcut, NULL, NULL);
  add_shortcut(k, GDK_KEY_Right, GDK_ALT_MASK, tour_shortcut, NULL, g_variant_new_boolean(TRUE));
  add_shortcut(k, GDK_KEY_Left, GDK_ALT_MASK, tour_shortcut, NULL, g_variant_new_boolean(FALSE));
  gtk_widget_add_controller(GTK_WIDGET(self), keys);
}

/* ---- GObject -------------------------------------------------------------------------- */

/* Freeing the model of a log of a million events walks all its records: 0.4-0.8 s that
 * closing its tab held the UI thread for. Past this many events it is freed on a thread of
 * its own; nothing else holds it by then (the views and the source are gone). */
#define FREE_ASIDE_EVENTS 100000

static gpointer free_model(gpointer model) {
  gs_trace_model_free(model);
  return NULL;
}

static void gs_capture_page_dispose(GObject *object) {
  GsCapturePage *self = GS_CAPTURE_PAGE(object);
  stop_pumping(self);
  if (self->source) {
    g_signal_handlers_disconnect_by_data(self->source, self);
    gs_trace_source_stop(self->source);
    g_clear_object(&self->source);
  }
  /* The views borrow the model: they go (with the template) before it is freed. Clearing
   * their model first would make GTK 4.8's column views remove every row while unmapped,
   * which leaves row widgets behind and trips its list item manager at finalization. */
  g_clear_pointer(&self->ranks, gs_capture_ranks_free);
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_CAPTURE_PAGE);
  g_clear_pointer(&self->run, gs_rank_run_free); /* its first rank's model is ours: freed below */
  g_clear_handle_id(&self->adopt_id, g_source_remove);
  if (self->adopting && !self->model)
    self->model = g_steal_pointer(&self->adopting);
  g_clear_pointer(&self->adopting, gs_trace_model_free);
  gs_widget_unparent_children(GTK_WIDGET(self));
  if (self->model && gs_trace_model_n_events(self->model) >= FREE_ASIDE_EVENTS)
    g_thread_unref(g_thread_new("gs-model-free", free_model, g_steal_pointer(&self->model)));
  g_clear_pointer(&self->model, gs_trace_model_free);
  G_OBJECT_CLASS(gs_capture_page_parent_class)->dispose(object);
}

static void gs_capture_page_finalize(GObject *object) {
  GsCapturePage *self = GS_CAPTURE_PAGE(object);
  g_free(self->title);
  g_free(self->subtitle);
  G_OBJECT_CLASS(gs_capture_page_parent_class)->finalize(object);
}

static void gs_capture_page_get_property(GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec) {
  GsCapturePage *self = GS_CAPTURE_PAGE(object);
  switch (prop_id) {
  case PROP_TITLE:
    g_value_set_string(value, self->title);
    break;
  case PROP_SUBTITLE:
    g_value_set_string(value, self->subtitle);
    break;
  case PROP_BUSY:
    g_value_set_boolean(value, gs_capture_page_get_busy(self));
    break;
  case PROP_SHOW_OUTPUT:
    g_value_set_boolean(value, gs_capture_page_get_show_output(self));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_capture_page_set_property(GObject *object, guint prop_id, const GValue *value,
                                         GParamSpec *pspec) {
  GsCapturePage *self = GS_CAPTURE_PAGE(object);
  switch (prop_id) {
  case PROP_SHOW_OUTPUT:
    gs_capture_page_set_show_output(self, g_value_get_boolean(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_capture_page_class_init(GsCapturePageClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_capture_page_dispose;
  object_class->finalize = gs_capture_page_finalize;
  object_class->get_property = gs_capture_page_get_property;
  object_class->set_property = gs_capture_page_set_property;
  widget_class->map = gs_capture_page_map;
  widget_class->unmap = gs_capture_page_unmap;
  widget_class->measure = gs_capture_page_measure;
  widget_class->size_allocate = gs_capture_page_size_allocate;

  props[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_SUBTITLE] = g_param_spec_string(
      "subtitle", NULL, NULL, NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  props[PROP_BUSY] = g_param_spec_boolean(
      "busy", NULL, NULL, FALSE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /* The Output pane is shown (a program's capture only). */
  props[PROP_SHOW_OUTPUT] = g_param_spec_boolean(
      "show-output", NULL, NULL, FALSE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, props);
  /* The Output buttons' state and toggle (a stateful action over the property). */
  gtk_widget_class_install_property_action(widget_class, "capture.show-output", "show-output");

  /* Something the user should hear about (a broken source): the window shows a toast. */
  signals[SIGNAL_TOAST] = g_signal_new("toast", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  g_type_ensure(GS_TYPE_SCOPE_TREE_VIEW);
  g_type_ensure(GS_TYPE_TENSOR_VIEW);
  g_type_ensure(GS_TYPE_EVENT_LIST_VIEW);
  g_type_ensure(GS_TYPE_SCRUBBER);
  g_type_ensure(GS_TYPE_TIMELINE_VIEW);
  g_type_ensure(GS_TYPE_RANK_LANES_VIEW);
  g_type_ensure(GS_TYPE_GRAPH_PANE);
  g_type_ensure(GS_TYPE_OUTPUT_VIEW);
  g_type_ensure(GS_TYPE_TOUR_PANEL);
  gtk_widget_class_set_template_from_resource(
      widget_class, "/io/github/gradscope/Inspector/gs-capture-page.ui");
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, output_paned);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, stack);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, loading_page);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, progress_bar);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, waiting_page);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, waiting_stop_button);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, scope_tree);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, event_list);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, tensor_view);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, timeline_view);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, timeline_stack);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, rank_lanes);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, graph_pane);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, scrubber);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, view_stack);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, status_revealer);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, status_icon);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, status_label);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, stop_button);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, output_button);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, waiting_output_button);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, output_view);
  gtk_widget_class_bind_template_child(widget_class, GsCapturePage, tour_panel);
}

static void gs_capture_page_init(GsCapturePage *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  add_page_keys(self);
  g_signal_connect_swapped(self->scrubber, "notify::position", G_CALLBACK(on_position), self);
  GsView *all[] = {GS_VIEW(self->scope_tree), GS_VIEW(self->tensor_view),
                   GS_VIEW(self->event_list), GS_VIEW(self->timeline_view),
                   GS_VIEW(self->graph_pane)};
  G_STATIC_ASSERT(G_N_ELEMENTS(all) == G_N_ELEMENTS(self->views));
  for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
    self->views[i] = all[i];
    g_signal_connect_swapped(all[i], "event-selected", G_CALLBACK(on_event_selected), self);
    g_signal_connect_swapped(all[i], "tensor-selected", G_CALLBACK(on_tensor_selected), self);
  }
  g_signal_connect_swapped(self->scope_tree, "scope-selected", G_CALLBACK(on_scope_selected),
                           self);
  g_signal_connect_swapped(self->stop_button, "clicked", G_CALLBACK(on_stop), self);
  g_signal_connect_swapped(self->tour_panel, "show-step", G_CALLBACK(on_tour_step), self);
  g_signal_connect_swapped(self->waiting_stop_button, "clicked", G_CALLBACK(on_stop), self);
}
