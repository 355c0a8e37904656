/* test-tensor-view.c: the tensor details panel (inspector/app/tensor/gs-tensor-view.c) on a
 * recorded run in which one tensor "x" is viewed, cloned, written in place, moved to the outer scope
 * and disposed by that scope's end, and another is moved into a parameter, saved for backward
 * and given a gradient, and a third moves into shared memory. Checks the life entries in order, dimming of "future" entries and the
 * state at the scrubber's event, the contract's signals and the status pages; saves
 * screenshots. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>
#include <gradscope/gradscope.h>

#include "gs-tensor-life.h"
#include "gs-tensor-view.h"
#include "views-test-util.h"

static guint64 x_id, y_id, param_id, weight_id, z_id;

static void workload(void) {
  const int64_t shape[] = {2, 3};
  gs_scope epoch = gs_scope_begin("epoch");
  gs_scope work = gs_scope_begin("work");
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_trace_name(x, "x");
  gs_tensor v = gs_t(x);      /* viewed */
  gs_tensor c = gs_clone(x);  /* cloned: copy-on-write */
  gs_fill_(x, 3.0);           /* written in place: version 1 */
  gs_tensor kept = gs_move_to_outer(x);
  (void)v, (void)c;
  gs_scope_end(work);         /* disposes v and c */
  x_id = kept.id;
  gs_trace_flush();           /* a chunk boundary, for the live test */

  /* A tensor moved into a parameter, then used and differentiated. */
  gs_tensor y = gs_full(GS_F32, shape, 2, 0.5);
  y_id = y.id;
  gs_tensor p = gs_parameter_new(y, true);
  param_id = p.id;
  gs_tensor sq = gs_mul(p, p);  /* saves p for backward */
  gs_tensor loss = gs_sum(sq, NULL, 0, false);
  gs_backward(loss);            /* accumulates into p's .grad */
  gs_scope_end(epoch);          /* disposes x (kept), p, sq, loss */

  /* A module's parameter: its life names the module by type. The module is disposed before
   * the log ends, so the name must not depend on the module being alive at the end. */
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  gs_module lin = gs_linear_new(3, 2, true, &rng);
  weight_id = gs_module_parameter(lin, "weight").id;
  gs_module_dispose(lin);

  /* A tensor whose storage moves into shared memory (format 1.4 records where bytes are). */
  gs_tensor z = gs_ones(GS_F32, shape, 2);
  gs_share_memory_(z);
  z_id = z.id;
  gs_trace_mark("shared");
  gs_dispose(z);
}

typedef struct {
  gs_trace_model *model;
  GsTensorView *view;
  GtkWindow *window;
} Fixture;

static void fixture_set_up(Fixture *f, gconstpointer data) {
  (void)data;
  f->model = views_test_record(workload);
  f->view = GS_TENSOR_VIEW(gs_tensor_view_new());
  gs_tensor_view_set_model(f->view, f->model);
  f->window = views_test_show(GTK_WIDGET(f->view), 460, 820);
}

static void fixture_tear_down(Fixture *f, gconstpointer data) {
  (void)data;
  views_test_close(f->window, f->model);
}

typedef struct {
  guint64 index;
  const char *text;
  gboolean future;
  double opacity;
} Entry;

static int compare_entries(gconstpointer a, gconstpointer b);

/* The life entries on screen: each row is (index label, sentence, "future" tag). */
static GArray *entries(Fixture *f) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(Entry));
  GtkWidget *list = views_test_find(GTK_WIDGET(f->view), GTK_TYPE_LIST_VIEW);
  for (GtkWidget *row = gtk_widget_get_first_child(list); row; row = gtk_widget_get_next_sibling(row)) {
    if (!gtk_widget_get_visible(row))
      continue;
    GtkWidget *box = gtk_widget_get_first_child(row);
    if (!GTK_IS_BOX(box))
      continue;
    GtkWidget *index = gtk_widget_get_first_child(box);
    GtkWidget *text = gtk_widget_get_next_sibling(index);
    GtkWidget *future = gtk_widget_get_next_sibling(text);
    Entry e = {
        /* Rows show the engine's event number: back to the log position. */
        .index = gs_trace_model_find_seq(
            f->model, g_ascii_strtoull(gtk_label_get_text(GTK_LABEL(index)), NULL, 10)),
        .text = gtk_label_get_text(GTK_LABEL(text)),
        .future = gtk_widget_get_visible(future),
        .opacity = gtk_widget_get_opacity(text),
    };
    g_array_append_val(out, e);
  }
  return out;
}

static int compare_entries(gconstpointer a, gconstpointer b) {
  const Entry *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Row widgets are recycled out of order: sorted by event. */
static GArray *sorted_entries(Fixture *f) {
  GArray *out = entries(f);
  g_array_sort(out, compare_entries);
  return out;
}

/* The position of the first entry at or after from whose sentence starts with prefix and
 * contains part (may be NULL); fails the test if there is none. */
static guint expect_entry(GArray *list, guint from, const char *prefix, const char *part) {
  for (guint i = from; i < list->len; i++) {
    const Entry *e = &g_array_index(list, Entry, i);
    if (g_str_has_prefix(e->text, prefix) && (!part || strstr(e->text, part)))
      return i;
  }
  for (guint i = 0; i < list->len; i++)
    g_test_message("entry %u: #%llu %s", i, (unsigned long long)g_array_index(list, Entry, i).index,
                   g_array_index(list, Entry, i).text);
  g_error("no life entry \"%s…%s\" after entry %u", prefix, part ? part : "", from);
}

static void test_life_in_order(Fixture *f, gconstpointer data) {
  (void)data;
  gs_tensor_view_set_tensor(f->view, x_id);
  gs_tensor_view_set_position(f->view, gs_trace_model_n_events(f->model) - 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(gs_tensor_life) x_life = gs_trace_model_tensor_life(f->model, x_id);
  guint n = gs_tensor_life_len(x_life);
  g_autoptr(GArray) life = sorted_entries(f);
  g_assert_cmpuint(life->len, ==, n); /* all fit in the window */
  guint i = expect_entry(life, 0, "Created by ", "f32 [2, 3], new storage #");
  i = expect_entry(life, i + 1, "Named “x”", NULL);
  i = expect_entry(life, i + 1, "Viewed as #", "shape [3, 2]");
  i = expect_entry(life, i + 1, "Cloned into #", "nothing was copied");
  i = expect_entry(life, i + 1, "Written in place by ", ": version 1");
  i = expect_entry(life, i + 1, "Owner: scope work #", "moved to the outer scope epoch #");
  i = expect_entry(life, i + 1, "Disposed: ", "the end of scope “epoch”");
  i = expect_entry(life, i + 1, "Storage #", "freed");
  for (guint k = 0; k < life->len; k++)
    g_test_message("entry %u: #%llu %s", k, (unsigned long long)g_array_index(life, Entry, k).index,
                   g_array_index(life, Entry, k).text);
  g_assert_cmpuint(i, ==, life->len - 1);
  for (guint k = 0; k < life->len; k++)
    g_assert_false(g_array_index(life, Entry, k).future);
  g_assert_cmpstr(views_test_label_after(GTK_WIDGET(f->view), "Alive"), !=, "Yes");
  g_assert_true(g_str_has_prefix(views_test_label_after(GTK_WIDGET(f->view), "Alive"),
                                 "No: disposed at event #"));
  views_test_screenshot(GTK_WIDGET(f->window), "tensor-view-end.png");
}

static void test_scrubbing_dims_the_future(Fixture *f, gconstpointer data) {
  (void)data;
  gs_tensor_view_set_tensor(f->view, x_id);
  g_autoptr(GArray) all = sorted_entries(f);
  guint clone = expect_entry(all, 0, "Cloned into #", NULL);
  guint write = expect_entry(all, clone, "Written in place by ", NULL);
  guint64 at = g_array_index(all, Entry, clone).index;

  /* Just after the clone: the write and everything later is future, dimmed and tagged. */
  gs_tensor_view_set_position(f->view, at);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GArray) life = sorted_entries(f);
  for (guint k = 0; k < life->len; k++) {
    const Entry *e = &g_array_index(life, Entry, k);
    g_assert_cmpint(e->future, ==, e->index > at);
    if (e->future)
      g_assert_cmpfloat(e->opacity, <, 1.0);
    else
      g_assert_cmpfloat(e->opacity, ==, 1.0);
  }
  GtkWidget *root = GTK_WIDGET(f->view);
  g_assert_cmpstr(views_test_label_after(root, "Alive"), ==, "Yes");
  g_assert_cmpstr(views_test_label_after(root, "Version"), ==, "0");
  g_assert_cmpstr(views_test_label_after(root, "Bytes"), ==, "24 bytes");
  g_assert_true(g_str_has_prefix(views_test_label_after(root, "Owner"), "scope work #"));
  g_assert_cmpstr(views_test_label_after(root, "Category"), ==, "scope temporaries");
  views_test_screenshot(GTK_WIDGET(f->window), "tensor-view-scrubbed.png");

  /* After the write: version 1. Before its creation: not yet alive. */
  gs_tensor_view_set_position(f->view, g_array_index(all, Entry, write).index);
  g_assert_cmpstr(views_test_label_after(root, "Version"), ==, "1");
  const Entry *created = &g_array_index(all, Entry, expect_entry(all, 0, "Created by ", NULL));
  g_autofree char *not_yet = g_strdup_printf(
      "Not yet: created at event #%llu",
      (unsigned long long)gs_trace_model_seq_at(f->model, created->index));
  gs_tensor_view_set_position(f->view, created->index - 1);
  g_assert_cmpstr(views_test_label_after(root, "Alive"), ==, not_yet);
  g_assert_cmpstr(views_test_label_after(root, "Owner"), ==, "—");
}

/* The Storage line says where the bytes are when they are not the engine allocator's. */
static void test_storage_says_where_bytes_are(Fixture *f, gconstpointer data) {
  (void)data;
  guint64 mark = G_MAXUINT64;
  gs_trace_event e;
  for (guint64 i = 0; gs_trace_model_event(f->model, i, &e); i++)
    if (e.kind == GS_TRACE_MARK && !g_strcmp0(gs_trace_model_string(f->model, e.name), "shared"))
      mark = i;
  g_assert_cmpuint(mark, !=, G_MAXUINT64);
  gs_tensor_view_set_tensor(f->view, z_id);
  gs_tensor_view_set_position(f->view, mark);
  views_test_settle(GTK_WIDGET(f->view));
  const char *storage = views_test_label_after(GTK_WIDGET(f->view), "Storage");
  g_assert_true(g_str_has_prefix(storage, "#"));
  g_assert_true(g_str_has_suffix(storage, ", holding 24 bytes of its own; its bytes are shared "
                                          "memory made by this process"));
  /* Before the move, the engine's own bytes go without saying. */
  guint64 created = G_MAXUINT64;
  for (guint64 i = 0; created == G_MAXUINT64 && gs_trace_model_event(f->model, i, &e); i++)
    if (e.kind == GS_TRACE_TENSOR_CREATE && e.tensor == z_id)
      created = i;
  gs_tensor_view_set_position(f->view, created);
  views_test_settle(GTK_WIDGET(f->view));
  storage = views_test_label_after(GTK_WIDGET(f->view), "Storage");
  g_assert_true(g_str_has_suffix(storage, ", holding 24 bytes of its own"));
}

static bool one_sample(void *user, int64_t i, gs_tensor *out) {
  (void)user;
  out[0] = gs_full(GS_F32, (int64_t[]){4}, 1, (double)i);
  return out[0].id != 0;
}

/* A batch a DataLoader worker sent: the Storage line names the sender and links to the log
 * that worker wrote beside this one, which the app opens when the link is followed. */
static void test_worker_batch_links_to_its_log(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-views-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_autofree char *worker_path = g_build_filename(dir, "run.worker-0.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_dataset ds = {.length = 4, .n_fields = 1, .get_item = one_sample};
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 2,
                                                                   .num_workers = 1});
  gs_tensor batch;
  g_assert_true(gs_data_loader_next(l, &batch));
  gs_storage_info info;
  g_assert_cmpint(gs_storage_info_of(batch, &info), ==, 0);
  guint64 batch_id = batch.id;
  gs_trace_mark("batch");
  gs_dispose(batch);
  gs_data_loader_free(l);
  gs_trace_close();
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  gs_trace_model_feed(m, bytes, n);
  gs_trace_model_finish(m);
  guint64 mark = G_MAXUINT64;
  gs_trace_event e;
  for (guint64 i = 0; gs_trace_model_event(m, i, &e); i++)
    if (e.kind == GS_TRACE_MARK && !g_strcmp0(gs_trace_model_string(m, e.name), "batch"))
      mark = i;
  g_assert_cmpuint(mark, !=, G_MAXUINT64);

  GsTensorView *view = GS_TENSOR_VIEW(gs_tensor_view_new());
  gs_tensor_view_set_model(view, m);
  gs_tensor_view_set_tensor(view, batch_id);
  gs_tensor_view_set_position(view, mark);
  GtkWindow *window = views_test_show(GTK_WIDGET(view), 460, 820);
  views_test_settle(GTK_WIDGET(view));
  /* Without the log's file (a live program), the sender's pid is all there is. */
  g_autofree char *from = g_strdup_printf("its bytes are shared memory received from process "
                                          "%lld", (long long)info.peer_pid);
  const char *storage = views_test_label_after(GTK_WIDGET(view), "Storage");
  g_assert_true(g_str_has_suffix(storage, from));
  gs_tensor_view_set_log_path(view, path);
  gs_tensor_view_set_position(view, mark - 1);
  gs_tensor_view_set_position(view, mark);
  views_test_settle(GTK_WIDGET(view));
  storage = views_test_label_after(GTK_WIDGET(view), "Storage");
  g_autofree char *linked = g_strdup_printf("%s (the sender’s log: run.worker-0.gstrace)", from);
  g_assert_true(g_str_has_suffix(storage, linked));
  /* The file name is a link to the worker's log. */
  GPtrArray *labels = views_test_labels(GTK_WIDGET(view));
  gboolean found = FALSE;
  for (guint i = 0; i < labels->len; i++) {
    GtkLabel *label = labels->pdata[i];
    if (gtk_label_get_use_markup(label) && strstr(gtk_label_get_label(label), "<a href=\"file://") &&
        strstr(gtk_label_get_label(label), "run.worker-0.gstrace</a>"))
      found = TRUE;
  }
  g_ptr_array_unref(labels);
  g_assert_true(found);
  views_test_screenshot(GTK_WIDGET(window), "tensor-view-worker-batch.png");
  gtk_window_destroy(window);
  g_remove(worker_path);
  g_remove(path);
  g_rmdir(dir);
}

static void test_parameter_life(Fixture *f, gconstpointer data) {
  (void)data;
  gs_tensor_view_set_tensor(f->view, y_id);
  gs_tensor_view_set_position(f->view, gs_trace_model_n_events(f->model) - 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GArray) life = sorted_entries(f);
  guint i = expect_entry(life, 0, "Created by ", NULL);
  i = expect_entry(life, i + 1, "Moved into parameter #", NULL);
  guint leaf = expect_entry(life, i + 1, "Became a leaf of the graph: AccumulateGrad #", NULL);
  guint saved = expect_entry(life, leaf + 1, "Saved for backward by MulBackward", NULL);
  guint grad = expect_entry(life, i + 1, "Gradient accumulated into its .grad #", NULL);
  g_assert_cmpuint(grad, >, saved);
  expect_entry(life, grad + 1, "Disposed: ", NULL);
  /* Between the move and the end, the parameter handle carries the tensor on. */
  const Entry *moved = &g_array_index(life, Entry, i);
  gs_tensor_view_set_position(f->view, moved->index);
  const char *alive = views_test_label_after(GTK_WIDGET(f->view), "Alive");
  g_assert_true(g_str_has_prefix(alive, "Yes, as parameter #"));
  views_test_screenshot(GTK_WIDGET(f->window), "tensor-view-parameter.png");

  /* Selecting the parameter's handle shows the same whole life, from the tensor it was. */
  gs_tensor_view_set_tensor(f->view, param_id);
  views_test_settle(GTK_WIDGET(f->view));
  g_assert_cmpuint(gs_tensor_view_get_tensor(f->view), ==, param_id);
  g_autoptr(GArray) again = sorted_entries(f);
  g_assert_cmpuint(again->len, ==, life->len);
  expect_entry(again, 0, "Created by full: f32 [2, 3]", NULL);
  g_autoptr(GPtrArray) labels = views_test_labels(GTK_WIDGET(f->view));
  g_assert_true(strstr(gtk_label_get_text(labels->pdata[0]), ", now parameter #"));
}

static void test_module_parameter_life(Fixture *f, gconstpointer data) {
  (void)data;
  gs_tensor_view_set_tensor(f->view, weight_id);
  gs_tensor_view_set_position(f->view, gs_trace_model_n_events(f->model) - 1);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(GArray) life = sorted_entries(f);
  guint i = expect_entry(life, 0, "Owner: the program → module Linear #", NULL);
  expect_entry(life, i + 1, "Registered as parameter “weight” of module Linear #", NULL);
}

static void test_signals(Fixture *f, gconstpointer data) {
  (void)data;
  guint64 event = G_MAXUINT64, tensor = G_MAXUINT64;
  g_signal_connect(f->view, "event-selected", G_CALLBACK(views_test_store_u64), &event);
  g_signal_connect(f->view, "tensor-selected", G_CALLBACK(views_test_store_u64), &tensor);
  gs_tensor_view_set_tensor(f->view, x_id);
  views_test_settle(GTK_WIDGET(f->view));
  g_autoptr(gs_tensor_life) x_life = gs_trace_model_tensor_life(f->model, x_id);
  guint n = gs_tensor_life_len(x_life);
  g_assert_cmpuint(n, >, 3);
  g_signal_emit_by_name(views_test_find(GTK_WIDGET(f->view), GTK_TYPE_LIST_VIEW), "activate", 2u);
  g_assert_cmpuint(event, ==, gs_tensor_life_at(x_life, 2));

  /* A view's details link back to the tensor it was made from. */
  g_autoptr(GArray) life = sorted_entries(f);
  guint viewed = expect_entry(life, 0, "Viewed as #", NULL);
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(f->model, g_array_index(life, Entry, viewed).index, &e));
  guint64 view_id = e.tensor;
  gs_tensor_view_set_tensor(f->view, view_id);
  views_test_settle(GTK_WIDGET(f->view));
  GtkWidget *button = views_test_find(GTK_WIDGET(f->view), GTK_TYPE_BUTTON);
  g_assert_true(gtk_widget_get_visible(button));
  g_assert_true(g_str_has_prefix(gtk_button_get_label(GTK_BUTTON(button)), "View of #"));
  g_signal_emit_by_name(button, "clicked");
  g_assert_cmpuint(tensor, ==, x_id);
}

static gboolean shows_label(GtkWidget *root, const char *text) {
  g_autoptr(GPtrArray) labels = views_test_labels(root);
  for (guint i = 0; i < labels->len; i++)
    if (g_strcmp0(gtk_label_get_text(labels->pdata[i]), text) == 0)
      return TRUE;
  return FALSE;
}

static void test_status_pages(Fixture *f, gconstpointer data) {
  (void)data;
  GtkWidget *root = GTK_WIDGET(f->view);
  g_assert_true(shows_label(root, "Select a Tensor"));
  views_test_screenshot(GTK_WIDGET(f->window), "tensor-view-empty.png");
  gs_tensor_view_set_tensor(f->view, G_GUINT64_CONSTANT(0x7700000077)); /* never made */
  views_test_settle(root);
  g_assert_true(shows_label(root, "Not in This Log"));
  gs_tensor_view_set_tensor(f->view, x_id);
  views_test_settle(root);
  g_assert_false(shows_label(root, "Select a Tensor"));
  gs_tensor_view_set_model(f->view, NULL);
  views_test_settle(root);
  g_assert_true(shows_label(root, "Select a Tensor"));
  g_assert_cmpuint(gs_tensor_view_get_tensor(f->view), ==, 0);
}

/* A live source: the tensor's life grows (or begins) after it was selected. */
static void test_life_grows(void) {
  gsize n = 0;
  g_autofree char *bytes = views_test_record_bytes(workload, &n);
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  /* Feed until the first chunk (x's beginnings) has arrived, select x, then feed the rest. */
  gsize fed = 0;
  guint before = 0, after = 0;
  while (before == 0 && fed < n) {
    gsize piece = MIN(64, n - fed);
    gs_trace_model_feed(m, bytes + fed, piece);
    fed += piece;
    g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, x_id);
    before = gs_tensor_life_len(life);
  }
  GsTensorView *view = GS_TENSOR_VIEW(gs_tensor_view_new());
  gs_tensor_view_set_model(view, m);
  gs_tensor_view_set_tensor(view, x_id);
  GtkWindow *window = views_test_show(GTK_WIDGET(view), 460, 820);
  gs_trace_model_feed(m, bytes + fed, n - fed);
  gs_trace_model_finish(m);
  gs_tensor_view_model_grew(view);
  gs_tensor_view_set_position(view, gs_trace_model_n_events(m) - 1);
  views_test_settle(GTK_WIDGET(view));
  g_autoptr(gs_tensor_life) x_life = gs_trace_model_tensor_life(m, x_id);
  after = gs_tensor_life_len(x_life);
  g_test_message("life: %u entries after the first chunk, %u after all", before, after);
  g_assert_cmpuint(before, >, 0); /* the list grew rather than appeared */
  g_assert_cmpuint(after, >, before);
  Fixture f = {.model = m, .view = view, .window = window};
  g_autoptr(GArray) life = sorted_entries(&f);
  g_assert_cmpuint(life->len, ==, after);
  guint i = expect_entry(life, 0, "Created by ", NULL);
  expect_entry(life, i + 1, "Disposed: ", NULL);
  gtk_window_destroy(window);
}

/* A flight recorder's log: the ring keeps only the newest events, so it opens with a snapshot
 * that re-creates `kept`, made long before. */
static guint64 kept_id;

static gs_trace_model *record_ring(void) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-views-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "ring.gstrace", NULL);
  g_assert_cmpint(gs_trace_open_ring(path, 64 * 1024), ==, 0);
  gs_tensor kept = gs_ones(GS_F32, (int64_t[]){5}, 1);
  kept_id = kept.id;
  for (int i = 0; i < 5000; i++)
    gs_dispose(gs_mul_scalar(kept, 2.0));
  gs_trace_close();
  gs_dispose(kept);
  g_autofree char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  g_remove(path);
  g_rmdir(dir);
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_feed(m, bytes, n);
  gs_trace_model_finish(m);
  return m;
}

/* The life entry of a tensor the snapshot re-creates does not pass the snapshot's event for
 * its creation: when it was made, the log does not know, and the entry says so. */
static void test_snapshot_creation_is_unknown(void) {
  g_autoptr(gs_trace_model) m = record_ring();
  guint64 first_seq = 0;
  g_assert_true(gs_trace_model_snapshot(m, &first_seq, NULL, NULL));
  gs_tensor_handles handles = {kept_id, 0};
  gboolean seen = FALSE;
  for (guint64 i = 0; i < gs_trace_model_n_events(m) && !seen; i++) {
    gs_trace_event e;
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_CREATE ||
        !gs_trace_model_event(m, i, &e) || e.tensor != kept_id)
      continue;
    g_assert_cmpuint(e.seq, <, first_seq); /* re-created by the snapshot */
    g_autofree char *text = gs_tensor_life_describe(m, &handles, &e);
    g_assert_true(g_str_has_prefix(text, "Alive when the recording began (made before it, at an "
                                         "event the log does not know). Created by ones"));
    seen = TRUE;
  }
  g_assert_true(seen);
}

int main(int argc, char **argv) {
  views_test_init(&argc, &argv);
  g_test_add("/tensor-view/life-in-order", Fixture, NULL, fixture_set_up, test_life_in_order,
             fixture_tear_down);
  g_test_add("/tensor-view/scrubbing-dims-the-future", Fixture, NULL, fixture_set_up,
             test_scrubbing_dims_the_future, fixture_tear_down);
  g_test_add("/tensor-view/storage-says-where-bytes-are", Fixture, NULL, fixture_set_up,
             test_storage_says_where_bytes_are, fixture_tear_down);
  g_test_add("/tensor-view/parameter-life", Fixture, NULL, fixture_set_up, test_parameter_life,
             fixture_tear_down);
  g_test_add("/tensor-view/module-parameter-life", Fixture, NULL, fixture_set_up,
             test_module_parameter_life, fixture_tear_down);
  g_test_add("/tensor-view/signals", Fixture, NULL, fixture_set_up, test_signals,
             fixture_tear_down);
  g_test_add("/tensor-view/status-pages", Fixture, NULL, fixture_set_up, test_status_pages,
             fixture_tear_down);
  g_test_add_func("/tensor-view/life-grows", test_life_grows);
  g_test_add_func("/tensor-view/snapshot-creation-is-unknown", test_snapshot_creation_is_unknown);
  g_test_add_func("/tensor-view/worker-batch-links-to-its-log",
                  test_worker_batch_links_to_its_log);
  return g_test_run();
}
