/* gs-tensor-view.c: see gs-tensor-view.h.
 *
 * Selecting a tensor reads its life once (gs_trace_model_tensor_life) and its creation event;
 * life rows are decoded when bound. Moving the scrubber seeks the model once for the state
 * grid and rewrites only the rows on screen (dimmed or not). */
#include "gs-tensor-view.h"

#include "gs-view.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <gradscope/memory.h>
#include <string.h>

#include "dispose-reason.h"
#include "escape.h"
#include "gs-event-index-list.h"
#include "gs-event-ref.h"
#include "gs-tensor-life.h"
#include "gs-view-format.h"
#include "snapshot-note.h"
#include "worker-logs.h"

struct _GsTensorView {
  GtkWidget parent_instance;

  GtkStack *stack;
  AdwStatusPage *missing_page;
  GtkLabel *title_label, *subtitle_label, *life_heading;
  GtkButton *source_button;
  GtkLabel *alive_value, *owner_value, *category_value, *bytes_value, *storage_value,
      *version_value, *site_value;
  GtkListView *life_view;

  gs_trace_model *model; /* borrowed */
  guint64 position;
  guint64 selected;      /* what set_tensor was given */
  guint scroll_tick;     /* a pending scroll to the scrubber's entry */
  guint scroll_waits;    /* frames it has waited for the list's first layout */
  gs_tensor_handles handles;
  guint64 move_index;    /* where it was moved into a parameter, or G_MAXUINT64 */
  GsEventIndexList *life;
  GHashTable *bound;     /* GtkListItem* bound now */
  char *log_path;        /* the log's file, to find its workers' logs; NULL: not a file */
  GHashTable *worker_logs; /* sender pid -> its log's path ("" for none), looked up once */

  /* From its creation event (have_create FALSE if the log lacks it). */
  gboolean have_create;
  guint64 create_index, storage, source;
  guint32 dtype, origin;
  gboolean requires_grad;
  guint32 site;
  int ndim;
  gint64 shape[GS_MAX_DIMS];
  char *name;
};

GS_VIEW_IFACE_INIT_WITH_SELECT(GsTensorView, gs_tensor_view, gs_tensor_view_set_tensor)
G_DEFINE_FINAL_TYPE_WITH_CODE(GsTensorView, gs_tensor_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GS_TYPE_VIEW, gs_tensor_view_view_iface_init))


static gboolean is_me(GsTensorView *self, guint64 id) {
  return id && (id == self->handles.id || id == self->handles.moved_to);
}

/* ---- life rows ------------------------------------------------------------------------ */

typedef struct {
  GtkLabel *index, *text, *future;
} LifeRow;

static void setup_row(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                      gpointer user_data) {
  (void)factory, (void)user_data;
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_valign(box, GTK_ALIGN_CENTER); /* one-line rows centred, long ones top-aligned */
  GtkWidget *index = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(index), 1);
  gtk_label_set_yalign(GTK_LABEL(index), 0);
  gtk_label_set_width_chars(GTK_LABEL(index), 6);
  gtk_widget_add_css_class(index, "numeric");
  gtk_widget_add_css_class(index, "dim-label");
  GtkWidget *text = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(text), 0);
  gtk_label_set_yalign(GTK_LABEL(text), 0);
  gtk_widget_set_valign(text, GTK_ALIGN_START);
  gtk_widget_set_valign(index, GTK_ALIGN_START);
  gtk_label_set_wrap(GTK_LABEL(text), TRUE);
  gtk_label_set_wrap_mode(GTK_LABEL(text), PANGO_WRAP_WORD_CHAR);
  gtk_widget_set_hexpand(text, TRUE);
  /* TRANSLATORS: tag on a life entry that happens after the chosen event */
  GtkWidget *future = gtk_label_new(_("future"));
  gtk_label_set_yalign(GTK_LABEL(future), 0);
  gtk_widget_add_css_class(future, "caption");
  gtk_widget_add_css_class(future, "dim-label");
  gtk_box_append(GTK_BOX(box), index);
  gtk_box_append(GTK_BOX(box), text);
  gtk_box_append(GTK_BOX(box), future);
  gtk_list_item_set_child(list_item, box);
}

static LifeRow life_row(GtkListItem *list_item) {
  GtkWidget *box = gtk_list_item_get_child(list_item);
  GtkWidget *index = gtk_widget_get_first_child(box);
  GtkWidget *text = gtk_widget_get_next_sibling(index);
  return (LifeRow){GTK_LABEL(index), GTK_LABEL(text), GTK_LABEL(gtk_widget_get_next_sibling(text))};
}

/* Dims an entry after the scrubber's event and marks the one at it. */
static void update_row_time(GsTensorView *self, GtkListItem *list_item) {
  GsEventRef *ref = gtk_list_item_get_item(list_item);
  if (!ref)
    return;
  guint64 index = gs_event_ref_get_index(ref);
  LifeRow row = life_row(list_item);
  gboolean future = index > self->position;
  gtk_widget_set_visible(GTK_WIDGET(row.future), future);
  gtk_widget_set_opacity(GTK_WIDGET(row.text), future ? 0.45 : 1.0);
  if (index == self->position)
    gtk_widget_add_css_class(GTK_WIDGET(row.text), "heading");
  else
    gtk_widget_remove_css_class(GTK_WIDGET(row.text), "heading");
}

static void bind_row(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                     gpointer user_data) {
  (void)factory;
  GsTensorView *self = user_data;
  GsEventRef *ref = gtk_list_item_get_item(list_item);
  LifeRow row = life_row(list_item);
  guint64 index = gs_event_ref_get_index(ref);
  /* The engine's event number, as the event list and error messages show it. */
  g_autofree char *number =
      self->model ? g_strdup_printf("%" G_GUINT64_FORMAT, gs_trace_model_seq_at(self->model, index))
                  : g_strdup("");
  gtk_label_set_text(row.index, number);
  gs_trace_event e;
  if (self->model && gs_trace_model_event(self->model, index, &e)) {
    g_autofree char *text = gs_tensor_life_describe(self->model, &self->handles, &e);
    /* Only names make a line long; a hostile one is cut as the event list cuts it. */
    g_autofree char *shown = strlen(text) > 2 * GS_TEXT_SHOWN_MAX
                                 ? gs_text_clip(text, 2 * GS_TEXT_SHOWN_MAX)
                                 : NULL;
    gtk_label_set_text(row.text, shown ? shown : text);
  } else {
    gtk_label_set_text(row.text, "");
  }
  g_hash_table_add(self->bound, list_item);
  update_row_time(self, list_item);
}

static void unbind_row(GtkSignalListItemFactory *factory, GtkListItem *list_item,
                       gpointer user_data) {
  (void)factory;
  GsTensorView *self = user_data;
  g_hash_table_remove(self->bound, list_item);
}

static void on_entry_activated(GsTensorView *self, guint position) {
  if (self->life && position < g_list_model_get_n_items(G_LIST_MODEL(self->life)))
    gs_view_emit_event_selected(GS_VIEW(self),
                                gs_event_index_list_get_index(self->life, position));
}

static void on_source_clicked(GsTensorView *self) {
  if (self->source)
    gs_view_emit_tensor_selected(GS_VIEW(self), self->source);
}

/* ---- the tensor as created ------------------------------------------------------------ */

static void forget_tensor(GsTensorView *self) {
  self->handles = (gs_tensor_handles){0};
  self->move_index = G_MAXUINT64;
  self->have_create = FALSE;
  self->storage = self->source = 0;
  self->site = 0;
  g_clear_pointer(&self->name, g_free);
  gtk_list_view_set_model(self->life_view, NULL);
  g_clear_object(&self->life);
}

/* Reads, from the life, what does not change with the scrubber: creation, name, the move
 * into a parameter. Only events of those kinds are decoded. */
static void read_identity(GsTensorView *self) {
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->life));
  for (guint i = 0; i < n; i++) {
    guint64 index = gs_event_index_list_get_index(self->life, i);
    gs_trace_kind kind = gs_trace_model_kind_at(self->model, index);
    if (kind != GS_TRACE_TENSOR_CREATE && kind != GS_TRACE_TENSOR_NAME &&
        kind != GS_TRACE_TENSOR_MOVE && kind != GS_TRACE_MODULE_PARAMETER)
      continue;
    gs_trace_event e;
    if (!gs_trace_model_event(self->model, index, &e))
      continue;
    if (kind == GS_TRACE_TENSOR_CREATE && e.tensor == self->handles.id && !self->have_create) {
      self->have_create = TRUE;
      self->create_index = index;
      self->storage = e.storage;
      self->source = e.origin ? e.source : 0;
      self->dtype = e.dtype;
      self->origin = e.origin;
      self->requires_grad = e.requires_grad;
      self->site = e.site;
      self->ndim = MIN(e.ndim, GS_MAX_DIMS);
      memcpy(self->shape, e.shape, sizeof self->shape);
    } else if (kind == GS_TRACE_TENSOR_MOVE && e.tensor == self->handles.id &&
               !self->handles.moved_to) {
      self->handles.moved_to = e.target;
      self->move_index = index;
    } else if ((kind == GS_TRACE_TENSOR_NAME || kind == GS_TRACE_MODULE_PARAMETER) &&
               is_me(self, e.tensor)) {
      g_free(self->name);
      /* Clipped: the title label would have Pango shape all of a 64 KB name. */
      self->name = gs_text_clip(gs_trace_model_string(self->model, e.name), GS_TEXT_SHOWN_MAX);
    }
  }
}

static void show_identity(GsTensorView *self) {
  g_autofree char *handle = gs_view_handle(self->handles.id);
  g_autofree char *parameter = gs_view_handle(self->handles.moved_to);
  g_autofree char *title =
      self->handles.moved_to
          /* TRANSLATORS: the details panel's title: handle, then the parameter it became */
          ? (self->name && *self->name
                 ? g_strdup_printf(_("Tensor %s “%s”, now parameter %s"), handle, self->name,
                                   parameter)
                 : g_strdup_printf(_("Tensor %s, now parameter %s"), handle, parameter))
      : self->name && *self->name
          /* TRANSLATORS: the details panel's title: handle and name */
          ? g_strdup_printf(_("Tensor %s “%s”"), handle, self->name)
          : g_strdup_printf(_("Tensor %s"), handle);
  gtk_label_set_text(self->title_label, title);
  if (self->have_create) {
    g_autofree char *shape = gs_view_shape(self->shape, self->ndim);
    g_autofree char *subtitle =
        self->requires_grad
            /* TRANSLATORS: dtype and shape, e.g. "f32 [2, 3], requires grad" */
            ? g_strdup_printf(_("%s %s, requires grad"), gs_dtype_name((gs_dtype)self->dtype), shape)
            : g_strdup_printf("%s %s", gs_dtype_name((gs_dtype)self->dtype), shape);
    gtk_label_set_text(self->subtitle_label, subtitle);
  } else {
    gtk_label_set_text(self->subtitle_label, _("Its creation is not in this log"));
  }
  if (self->source) {
    g_autofree char *source = gs_view_handle(self->source);
    g_autofree char *label = self->origin == 1   ? g_strdup_printf(_("View of %s"), source)
                             : self->origin == 2 ? g_strdup_printf(_("Detach of %s"), source)
                                                 : g_strdup_printf(_("Clone of %s"), source);
    gtk_button_set_label(self->source_button, label);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->source_button),
                                _("Show the tensor it was made from"));
  }
  gtk_widget_set_visible(GTK_WIDGET(self->source_button), self->source != 0);
  gs_site_table *sites = gs_trace_model_sites(self->model);
  const char *site = self->have_create ? gs_site_table_text(sites, self->site) : NULL;
  gtk_label_set_text(self->site_value, site ? site : _("not recorded (a log before format 1.3)"));
  g_autofree char *stack = site ? gs_site_table_stack_text(sites, self->site) : NULL;
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->site_value), stack);
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->life));
  g_autofree char *heading = g_strdup_printf(
      ngettext("Life: %u event", "Life: %u events", n), n);
  gtk_label_set_text(self->life_heading, heading);
}

/* ---- the tensor at the scrubber's event ----------------------------------------------- */

/* The last event at or before the scrubber that set the storage's version (0 if none). */
/* The log the process that sent a received storage wrote beside this one (a DataLoader
 * worker's), or NULL; each pid is looked up once. */
static const char *sender_log(GsTensorView *self, guint pid) {
  if (!self->log_path || !pid)
    return NULL;
  if (!g_hash_table_contains(self->worker_logs, GUINT_TO_POINTER(pid))) {
    char *path = gs_worker_log_find(self->log_path, pid);
    g_hash_table_insert(self->worker_logs, GUINT_TO_POINTER(pid), path ? path : g_strdup(""));
  }
  const char *path = g_hash_table_lookup(self->worker_logs, GUINT_TO_POINTER(pid));
  return *path ? path : NULL;
}

/* The link to a worker's log opens it as the app opens any log: in a window of its own. */
static gboolean on_storage_link(GtkLabel *label, const char *uri, gpointer user_data) {
  (void)label;
  (void)user_data;
  GApplication *app = g_application_get_default();
  if (!app)
    return FALSE; /* let GTK show it */
  g_autoptr(GFile) file = g_file_new_for_uri(uri);
  g_application_open(app, &file, 1, "");
  return TRUE;
}

/* Why the tensor is not alive at the scrubber: not made yet, disposed, or moved. */
static char *why_not_alive(GsTensorView *self, guint upto) {
  if (upto == 0 || (self->have_create && self->position < self->create_index)) {
    guint64 create_seq = self->have_create
                             ? gs_trace_model_seq_at(self->model, self->create_index)
                             : 0,
            first_seq;
    if (self->have_create && gs_trace_model_snapshot(self->model, &first_seq, NULL, NULL) &&
        gs_snapshot_recreated(create_seq, first_seq))
      /* TRANSLATORS: the snapshot's event number; the tensor was made before the log began */
      return g_strdup_printf(_("Not yet: the snapshot re-creates it at event #%llu (it was made "
                               "before the recording began, at an event the log does not "
                               "know)"),
                             (unsigned long long)create_seq);
    if (self->have_create)
      return g_strdup_printf(_("Not yet: created at event #%llu"),
                             (unsigned long long)create_seq);
    return g_strdup(_("No"));
  }
  for (guint i = upto; i-- > 0;) {
    guint64 index = gs_event_index_list_get_index(self->life, i);
    if (gs_trace_model_kind_at(self->model, index) != GS_TRACE_TENSOR_DISPOSE)
      continue;
    gs_trace_event e;
    if (gs_trace_model_event(self->model, index, &e) && is_me(self, e.tensor)) {
      g_autofree char *reason =
          gs_dispose_reason_text(gs_trace_model_string(self->model, e.name));
      /* TRANSLATORS: event number, then why (e.g. "the end of scope “step”") */
      return g_strdup_printf(_("No: disposed at event #%llu (%s)"),
                             (unsigned long long)gs_trace_model_seq_at(self->model, index),
                             *reason ? reason : _("no reason recorded"));
    }
  }
  return g_strdup(_("No"));
}

static void set_unknown_state(GsTensorView *self, const char *alive) {
  gtk_label_set_text(self->alive_value, alive);
  gtk_label_set_text(self->owner_value, "—");
  gtk_label_set_text(self->category_value, "—");
  gtk_label_set_text(self->storage_value, "—");
  gtk_label_set_text(self->version_value, "—");
  gtk_label_set_text(self->bytes_value, "—");
}

static void show_state(GsTensorView *self) {
  if (!self->life || !self->model)
    return;
  guint upto = gs_event_index_list_count_upto(self->life, self->position);
  /* After a move into a parameter, the parameter's handle carries on the same tensor. */
  guint64 current = self->handles.moved_to && self->position >= self->move_index
                        ? self->handles.moved_to
                        : self->handles.id;
  const gs_replay *state = gs_trace_model_seek(self->model, self->position);
  const gs_replay_object *object = state ? gs_replay_object_find(state, current) : NULL;
  if (!object) {
    g_autofree char *why = why_not_alive(self, upto);
    set_unknown_state(self, why);
    return;
  }
  g_autofree char *owner = gs_trace_model_owner_label(self->model, state, object);
  const char *category = gs_mem_category_name(gs_trace_model_category(self->model, state, object));
  guint64 own_bytes = 0;
  guint saved_refs = 0;
  gboolean storage_alive = gs_replay_storage(state, object->storage, &own_bytes, &saved_refs);
  gsize numel = 1;
  for (int i = 0; i < object->ndim; i++)
    numel *= (gsize)object->shape[i];
  g_autofree char *size = gs_view_bytes(numel * gs_dtype_size((gs_dtype)object->dtype));
  g_autofree char *own = gs_view_bytes(own_bytes);
  /* Said from the replayed sharing itself, as `gradscope state` and the oracle check it. */
  guint64 shares = storage_alive ? gs_replay_storage_shares_bytes_with(state, object->storage) : 0;
  g_autofree char *storage =
      shares      ? g_strdup_printf(_("#%llu, sharing the bytes of storage #%llu copy-on-write"),
                                    (unsigned long long)object->storage,
                                    (unsigned long long)shares)
      : own_bytes ? g_strdup_printf(_("#%llu, holding %s of its own"),
                                    (unsigned long long)object->storage, own)
                  : g_strdup_printf("#%llu", (unsigned long long)object->storage);
  g_autofree char *current_handle = gs_view_handle(current);
  g_autofree char *alive = current != self->handles.id
                               ? g_strdup_printf(_("Yes, as parameter %s"), current_handle)
                               : g_strdup(_("Yes"));
  /* The replay's counter, as `gradscope state` and the oracle check it: unknown for a storage
   * a snapshot re-created, whose counter ran before the log began. */
  guint64 counter = 0;
  g_autofree char *version =
      gs_replay_storage_version(state, object->storage, &counter)
          ? g_strdup_printf("%llu", (unsigned long long)counter)
          : g_strdup(_("unknown (set before the recording began)"));
  gtk_label_set_text(self->alive_value, alive);
  gtk_label_set_text(self->owner_value, owner);
  gtk_label_set_text(self->category_value, category);
  gtk_label_set_text(self->bytes_value, size);
  guint memory = 0, peer = 0;
  const char *worker_log = NULL;
  if (storage_alive && gs_replay_storage_memory(state, object->storage, &memory, &peer) &&
      memory != 0) { /* the engine's own bytes go without saying */
    g_autofree char *from = gs_memory_origin_label(memory, peer);
    /* TRANSLATORS: a storage's description, then where its bytes come from ("a DLPack
     * producer", "a memory-mapped file", "shared memory received from process 4242") */
    g_autofree char *with = g_strdup_printf(_("%s; its bytes are %s"), storage, from);
    g_free(g_steal_pointer(&storage));
    storage = g_steal_pointer(&with);
    if (memory == GS_MEMORY_RECEIVED)
      worker_log = sender_log(self, peer);
  }
  if (worker_log) {
    /* A batch from a DataLoader worker: a link to the log where the worker collated it. */
    g_autofree char *uri = g_filename_to_uri(worker_log, NULL, NULL);
    g_autofree char *name = g_path_get_basename(worker_log);
    g_autofree char *shown = g_filename_display_name(name);
    g_autofree char *link = g_markup_printf_escaped("<a href=\"%s\">%s</a>", uri ? uri : "",
                                                    shown);
    g_autofree char *text = g_markup_escape_text(storage, -1);
    /* TRANSLATORS: a storage received from a DataLoader worker, then a link to the log that
     * worker process wrote ("run.worker-0.gstrace") */
    g_autofree char *markup = g_strdup_printf(_("%s (the sender’s log: %s)"), text, link);
    gtk_label_set_markup(self->storage_value, markup);
  } else {
    gtk_label_set_text(self->storage_value, storage);
  }
  gtk_label_set_text(self->version_value, version);
}

static void refresh_rows(GsTensorView *self) {
  GHashTableIter iter;
  gpointer list_item;
  g_hash_table_iter_init(&iter, self->bound);
  while (g_hash_table_iter_next(&iter, &list_item, NULL))
    update_row_time(self, list_item);
}

/* ---- public --------------------------------------------------------------------------- */

/* The handle a parameter was moved from, if tensor_id is a parameter's new handle: its life
 * starts with the move (the handle did not exist before). 0 otherwise. */
static guint64 moved_from(GsTensorView *self, const gs_tensor_life *life, guint64 tensor_id) {
  for (guint i = 0; i < MIN(gs_tensor_life_len(life), 4u); i++) {
    guint64 at = gs_tensor_life_at(life, i);
    gs_trace_event e;
    if (gs_trace_model_kind_at(self->model, at) == GS_TRACE_TENSOR_MOVE &&
        gs_trace_model_event(self->model, at, &e) && e.target == tensor_id)
      return e.tensor;
  }
  return 0;
}

/* Shows the life entry at the scrubber's event (the list opens at the top otherwise), once
 * the list has been laid out: scrolling needs its size. */
static gboolean scroll_on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  (void)clock, (void)data;
  GsTensorView *self = GS_TENSOR_VIEW(gtk_widget_get_ancestor(widget, GS_TYPE_TENSOR_VIEW));
  /* A few frames for the first layout; a panel kept collapsed is not polled forever. */
  if (self->life && gtk_widget_get_height(widget) == 0 && ++self->scroll_waits < 10)
    return G_SOURCE_CONTINUE;
  self->scroll_tick = 0;
  if (!self->life)
    return G_SOURCE_REMOVE;
  guint upto = gs_event_index_list_count_upto(self->life, self->position);
  if (upto > 1)
    gtk_widget_activate_action(widget, "list.scroll-to-item", "u", upto - 1);
  return G_SOURCE_REMOVE;
}

static void scroll_to_now(GsTensorView *self) {
  self->scroll_waits = 0;
  if (!self->scroll_tick)
    self->scroll_tick =
        gtk_widget_add_tick_callback(GTK_WIDGET(self->life_view), scroll_on_tick, NULL, NULL);
}

static void load_tensor(GsTensorView *self, guint64 tensor_id) {
  forget_tensor(self);
  self->selected = tensor_id;
  if (!tensor_id || !self->model) {
    self->selected = 0;
    gtk_stack_set_visible_child_name(self->stack, "empty");
    return;
  }
  self->handles.id = tensor_id;
  gs_tensor_life *life = gs_trace_model_tensor_life(self->model, tensor_id);
  /* A parameter's handle: show the whole tensor, from the handle it was moved from. */
  guint64 origin = moved_from(self, life, tensor_id);
  if (origin) {
    gs_tensor_life *whole = gs_trace_model_tensor_life(self->model, origin);
    if (gs_tensor_life_len(whole) > 0) {
      gs_tensor_life_free(life);
      life = whole;
      self->handles.id = origin;
    } else {
      gs_tensor_life_free(whole);
    }
  }
  guint n = gs_tensor_life_len(life);
  self->life = gs_event_index_list_new_take(life);
  if (n == 0) {
    g_autofree char *handle = gs_view_handle(tensor_id);
    g_autofree char *description =
        g_strdup_printf(_("No event of this log concerns tensor %s."), handle);
    adw_status_page_set_description(self->missing_page, description);
    gtk_stack_set_visible_child_name(self->stack, "missing");
    return;
  }
  read_identity(self);
  GtkNoSelection *selection = gtk_no_selection_new(G_LIST_MODEL(g_object_ref(self->life)));
  gtk_list_view_set_model(self->life_view, GTK_SELECTION_MODEL(selection));
  g_object_unref(selection);
  show_identity(self);
  show_state(self);
  gtk_stack_set_visible_child_name(self->stack, "details");
  scroll_to_now(self);
}

void gs_tensor_view_set_tensor(GsTensorView *self, guint64 tensor_id) {
  g_return_if_fail(GS_IS_TENSOR_VIEW(self));
  load_tensor(self, tensor_id);
}

guint64 gs_tensor_view_get_tensor(GsTensorView *self) {
  g_return_val_if_fail(GS_IS_TENSOR_VIEW(self), 0);
  return self->selected;
}

void gs_tensor_view_set_model(GsTensorView *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_TENSOR_VIEW(self));
  if (model == self->model)
    return;
  self->model = model;
  self->position = 0;
  load_tensor(self, 0);
}

void gs_tensor_view_set_position(GsTensorView *self, guint64 index) {
  g_return_if_fail(GS_IS_TENSOR_VIEW(self));
  self->position = index;
  show_state(self);
  refresh_rows(self);
}

void gs_tensor_view_model_grew(GsTensorView *self) {
  g_return_if_fail(GS_IS_TENSOR_VIEW(self));
  if (!self->model || !self->handles.id)
    return;
  gs_tensor_life *life = gs_trace_model_tensor_life(self->model, self->handles.id);
  if (!self->life || g_list_model_get_n_items(G_LIST_MODEL(self->life)) == 0) {
    guint n = gs_tensor_life_len(life);
    gs_tensor_life_free(life);
    if (n)
      load_tensor(self, self->selected); /* it has just appeared */
    return;
  }
  gs_event_index_list_update_take(self->life, life);
  g_clear_pointer(&self->name, g_free);
  self->have_create = FALSE;
  self->handles.moved_to = 0;
  self->move_index = G_MAXUINT64;
  read_identity(self);
  show_identity(self);
  show_state(self);
}

void gs_tensor_view_set_log_path(GsTensorView *self, const char *path) {
  g_return_if_fail(GS_IS_TENSOR_VIEW(self));
  g_free(self->log_path);
  self->log_path = g_strdup(path);
  g_hash_table_remove_all(self->worker_logs);
}

GtkWidget *gs_tensor_view_new(void) {
  return g_object_new(GS_TYPE_TENSOR_VIEW, NULL);
}

/* ---- GObject -------------------------------------------------------------------------- */

static void gs_tensor_view_dispose(GObject *object) {
  GsTensorView *self = GS_TENSOR_VIEW(object);
  if (self->scroll_tick) {
    gtk_widget_remove_tick_callback(GTK_WIDGET(self->life_view), self->scroll_tick);
    self->scroll_tick = 0;
  }
  if (self->life_view)
    gtk_list_view_set_model(self->life_view, NULL);
  g_clear_object(&self->life);
  self->model = NULL;
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_TENSOR_VIEW);
  G_OBJECT_CLASS(gs_tensor_view_parent_class)->dispose(object);
}

static void gs_tensor_view_finalize(GObject *object) {
  GsTensorView *self = GS_TENSOR_VIEW(object);
  g_hash_table_unref(self->bound);
  g_hash_table_unref(self->worker_logs);
  g_free(self->log_path);
  g_free(self->name);
  G_OBJECT_CLASS(gs_tensor_view_parent_class)->finalize(object);
}

static void gs_tensor_view_class_init(GsTensorViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_tensor_view_dispose;
  object_class->finalize = gs_tensor_view_finalize;


  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/gradscope/Inspector/gs-tensor-view.ui");
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, stack);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, missing_page);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, title_label);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, subtitle_label);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, source_button);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, alive_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, owner_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, category_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, bytes_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, storage_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, version_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, site_value);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, life_heading);
  gtk_widget_class_bind_template_child(widget_class, GsTensorView, life_view);
  gtk_widget_class_bind_template_callback(widget_class, on_entry_activated);
  gtk_widget_class_bind_template_callback(widget_class, on_source_clicked);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tensordetails");
}

static void gs_tensor_view_init(GsTensorView *self) {
  g_type_ensure(ADW_TYPE_STATUS_PAGE);
  self->bound = g_hash_table_new(g_direct_hash, g_direct_equal);
  self->worker_logs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  self->move_index = G_MAXUINT64;
  gtk_widget_init_template(GTK_WIDGET(self));
  g_signal_connect(self->storage_value, "activate-link", G_CALLBACK(on_storage_link), NULL);
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(setup_row), self);
  g_signal_connect(factory, "bind", G_CALLBACK(bind_row), self);
  g_signal_connect(factory, "unbind", G_CALLBACK(unbind_row), self);
  g_signal_connect(factory, "teardown", G_CALLBACK(unbind_row), self);
  gtk_list_view_set_factory(self->life_view, factory);
  g_object_unref(factory);
  gtk_stack_set_visible_child_name(self->stack, "empty");
}
