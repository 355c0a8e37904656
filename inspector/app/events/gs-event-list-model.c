/* gs-event-list-model.c: the lazy, filterable list of events (see the header). Memory: nothing
 * per event unfiltered; one guint64 per matching event when filtered. With a distributed run
 * (rank-run.h), positions and "indices" are the run's merged positions over every rank. */
#include "gs-event-list-model.h"

#include "gs-event-row.h"

#include <string.h>

/* Work per idle callback while filtering: short enough to keep frames on time. */
#define SCAN_BUDGET_US 4000
/* Time between chunks. */
#define SCAN_PERIOD_MS 8
/* Check the clock every this many events. */
#define SCAN_STRIDE 1024

struct _GsEventListModel {
  GObject parent_instance;
  gs_trace_model *model;
  gs_rank_run *run; /* borrowed; NULL for a single log */
  guint lane;       /* the run's lane shown, G_MAXUINT for all */
  gboolean filtered;
  gs_event_filter filter;
  char *search;            /* owned copy of filter.search */
  GArray *matches;         /* guint64 event indices, ascending, when filtered */
  guint64 scanned;         /* events [0, scanned) were tested against the filter */
  guint64 shown;           /* unfiltered: the number of rows announced */
  guint scan_source;
};

enum { PROP_0, PROP_FILTERING, PROP_N_ITEMS, N_PROPS };
static GParamSpec *props[N_PROPS];

static GType list_get_item_type(GListModel *list) {
  (void)list;
  return GS_TYPE_EVENT_ROW;
}

/* Events the list ranges over: the model's, or every rank's of a run. */
static guint64 total_events(GsEventListModel *self) {
  if (self->run)
    return gs_rank_run_n_events(self->run);
  return self->model ? gs_trace_model_n_events(self->model) : 0;
}

static gboolean matches(GsEventListModel *self, guint64 i) {
  if (!self->run)
    return gs_trace_model_event_matches(self->model, i, &self->filter);
  guint lane;
  guint64 index;
  gs_rank_run_event_at(self->run, i, &lane, &index);
  return (self->lane == G_MAXUINT || lane == self->lane) &&
         gs_trace_model_event_matches(gs_rank_run_model(self->run, lane), index, &self->filter);
}

static guint list_get_n_items(GListModel *list) {
  GsEventListModel *self = GS_EVENT_LIST_MODEL(list);
  if (!self->model)
    return 0;
  return self->filtered ? self->matches->len : (guint)self->shown;
}

static gpointer list_get_item(GListModel *list, guint position) {
  GsEventListModel *self = GS_EVENT_LIST_MODEL(list);
  if (position >= list_get_n_items(list))
    return NULL;
  guint64 index = gs_event_list_model_index_at(self, position);
  if (!self->run)
    return gs_event_row_new(self->model, index);
  guint lane;
  gs_rank_run_event_at(self->run, index, &lane, &index);
  return gs_event_row_new_ranked(gs_rank_run_model(self->run, lane), index,
                                 gs_rank_run_rank(self->run, lane),
                                 gs_rank_run_offset(self->run, lane));
}

static void gs_event_list_model_list_init(GListModelInterface *iface) {
  iface->get_item_type = list_get_item_type;
  iface->get_n_items = list_get_n_items;
  iface->get_item = list_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE(GsEventListModel, gs_event_list_model, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL,
                                                    gs_event_list_model_list_init))

GsEventListModel *gs_event_list_model_new(void) {
  return g_object_new(GS_TYPE_EVENT_LIST_MODEL, NULL);
}

guint64 gs_event_list_model_index_at(GsEventListModel *self, guint position) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_MODEL(self), 0);
  if (!self->filtered)
    return position;
  g_return_val_if_fail(position < self->matches->len, 0);
  return g_array_index(self->matches, guint64, position);
}

guint gs_event_list_model_position_of(GsEventListModel *self, guint64 index) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_MODEL(self), G_MAXUINT);
  if (!self->model)
    return G_MAXUINT;
  if (!self->filtered)
    return index < self->shown ? (guint)index : G_MAXUINT;
  guint lo = 0, hi = self->matches->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    guint64 v = g_array_index(self->matches, guint64, mid);
    if (v == index)
      return mid;
    if (v < index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return G_MAXUINT;
}

gboolean gs_event_list_model_get_filtering(GsEventListModel *self) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_MODEL(self), FALSE);
  return self->scan_source != 0;
}

/* Tests events from `scanned` on, for at most budget_us (0: to the end), announcing the
 * matches found. Returns TRUE if events remain. */
static gboolean scan_some(GsEventListModel *self, gint64 budget_us) {
  guint64 n = total_events(self);
  gint64 deadline = g_get_monotonic_time() + budget_us;
  guint before = self->matches->len;
  while (self->scanned < n) {
    guint64 stop = MIN(n, self->scanned + SCAN_STRIDE);
    for (guint64 i = self->scanned; i < stop; i++)
      if (matches(self, i))
        g_array_append_val(self->matches, i);
    self->scanned = stop;
    if (budget_us > 0 && g_get_monotonic_time() >= deadline)
      break;
  }
  if (self->matches->len > before) {
    g_list_model_items_changed(G_LIST_MODEL(self), before, 0, self->matches->len - before);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_N_ITEMS]);
  }
  return self->scanned < n;
}

static gboolean scan_idle(gpointer data) {
  GsEventListModel *self = data;
  if (scan_some(self, SCAN_BUDGET_US))
    return G_SOURCE_CONTINUE;
  self->scan_source = 0;
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_FILTERING]);
  return G_SOURCE_REMOVE;
}

static void start_scan(GsEventListModel *self) {
  if (self->scan_source || !self->model || !self->filtered)
    return;
  if (self->scanned >= total_events(self))
    return;
  /* A chunk every SCAN_PERIOD_MS: an idle would starve while a live run keeps frames coming,
   * and frames get the time between chunks, so the rows found so far are drawn. */
  self->scan_source = g_timeout_add(SCAN_PERIOD_MS, scan_idle, self);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_FILTERING]);
}

static void stop_scan(GsEventListModel *self) {
  if (self->scan_source) {
    g_clear_handle_id(&self->scan_source, g_source_remove);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_FILTERING]);
  }
}

void gs_event_list_model_finish_filtering(GsEventListModel *self) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  if (!self->model || !self->filtered)
    return;
  stop_scan(self);
  scan_some(self, 0);
}

/* Replaces the whole list: removes the `old` rows shown before the model or filter changed,
 * resets the scan, announces the new rows. */
static void reset(GsEventListModel *self, guint old) {
  stop_scan(self);
  g_array_set_size(self->matches, 0);
  self->scanned = 0;
  self->shown = (!self->filtered && self->model) ? MIN(total_events(self), (guint64)G_MAXUINT) : 0;
  guint now = list_get_n_items(G_LIST_MODEL(self));
  if (old || now) {
    g_list_model_items_changed(G_LIST_MODEL(self), 0, old, now);
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_N_ITEMS]);
  }
  start_scan(self);
}

void gs_event_list_model_set_model(GsEventListModel *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  if (self->model == model)
    return;
  guint old = list_get_n_items(G_LIST_MODEL(self));
  self->model = model;
  self->run = NULL;
  self->lane = G_MAXUINT;
  reset(self, old);
}

void gs_event_list_model_set_run(GsEventListModel *self, gs_rank_run *run) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  if (self->run == run)
    return;
  guint old = list_get_n_items(G_LIST_MODEL(self));
  self->run = run;
  self->lane = G_MAXUINT;
  self->filtered = self->filter.kinds || self->filter.tensor || self->filter.scope ||
                   self->filter.thread || self->search;
  reset(self, old);
}

gs_rank_run *gs_event_list_model_get_run(GsEventListModel *self) {
  g_return_val_if_fail(GS_IS_EVENT_LIST_MODEL(self), NULL);
  return self->run;
}

void gs_event_list_model_set_lane(GsEventListModel *self, guint lane) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  if (!self->run || lane >= gs_rank_run_n_lanes(self->run))
    lane = G_MAXUINT;
  if (self->lane == lane)
    return;
  guint old = list_get_n_items(G_LIST_MODEL(self));
  self->lane = lane;
  self->filtered = self->filter.kinds || self->filter.tensor || self->filter.scope ||
                   self->filter.thread || self->search || lane != G_MAXUINT;
  reset(self, old);
}

void gs_event_list_model_model_grew(GsEventListModel *self) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  if (!self->model)
    return;
  if (self->filtered) {
    start_scan(self);
    return;
  }
  guint64 n = gs_trace_model_n_events(self->model);
  if (n > G_MAXUINT)
    n = G_MAXUINT; /* a GListModel counts in guint */
  if (n > self->shown) {
    guint old = (guint)self->shown;
    self->shown = n;
    g_list_model_items_changed(G_LIST_MODEL(self), old, 0, (guint)(n - old));
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_N_ITEMS]);
  }
}

void gs_event_list_model_set_filter(GsEventListModel *self, const gs_event_filter *filter) {
  g_return_if_fail(GS_IS_EVENT_LIST_MODEL(self));
  guint old = list_get_n_items(G_LIST_MODEL(self));
  g_clear_pointer(&self->search, g_free);
  memset(&self->filter, 0, sizeof self->filter);
  if (filter) {
    self->filter = *filter;
    self->search = (filter->search && *filter->search) ? g_strdup(filter->search) : NULL;
    self->filter.search = self->search;
  }
  self->filtered = self->filter.kinds || self->filter.tensor || self->filter.scope ||
                   self->filter.thread || self->search || self->lane != G_MAXUINT;
  reset(self, old);
}

static void gs_event_list_model_get_property(GObject *object, guint prop_id, GValue *value,
                                             GParamSpec *pspec) {
  GsEventListModel *self = GS_EVENT_LIST_MODEL(object);
  switch (prop_id) {
  case PROP_FILTERING:
    g_value_set_boolean(value, gs_event_list_model_get_filtering(self));
    break;
  case PROP_N_ITEMS:
    g_value_set_uint(value, list_get_n_items(G_LIST_MODEL(self)));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_event_list_model_finalize(GObject *object) {
  GsEventListModel *self = GS_EVENT_LIST_MODEL(object);
  g_clear_handle_id(&self->scan_source, g_source_remove);
  g_array_unref(self->matches);
  g_free(self->search);
  G_OBJECT_CLASS(gs_event_list_model_parent_class)->finalize(object);
}

static void gs_event_list_model_class_init(GsEventListModelClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = gs_event_list_model_get_property;
  object_class->finalize = gs_event_list_model_finalize;
  props[PROP_FILTERING] = g_param_spec_boolean(
      "filtering", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_N_ITEMS] = g_param_spec_uint("n-items", NULL, NULL, 0, G_MAXUINT, 0,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, props);
}

static void gs_event_list_model_init(GsEventListModel *self) {
  self->matches = g_array_new(FALSE, FALSE, sizeof(guint64));
  self->lane = G_MAXUINT;
}
