/* test-timeline-view.c: the memory timeline view under Xvfb (suite 'inspector-ui'), on a
 * training run the engine records in the test: it shows the whole run, hovering describes a
 * column, clicking lists what was alive at that event (the evaluation's 32 KiB tensor first,
 * held by its scope; a saved tensor with why it is still alive) and emits event-selected,
 * activating a row emits tensor-selected, Ctrl+scroll zooms around the pointer, the
 * scrubber's event pans into view, a growing source stays followed, and the stacking toggle
 * switches to categories. Screenshots in light and dark go to GS_SCREENSHOT_DIR. */
#include <adwaita.h>
#include <gradscope/gradscope.h>
#include <math.h>
#include <string.h>

#include "gs-alive-item.h"
#include "gs-timeline-view.h"
#include "model-test-util.h"
#include "timeline-palette.h"
#include "timeline-test-util.h"
#include "views-test-util.h"

/* Saves a screenshot (views-test-util.c) and checks it is a real picture. */
static void assert_screenshot(GtkWidget *widget, const char *name) {
  views_test_screenshot(widget, name);
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename(dir ? dir : ".", name, NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_assert_cmpuint(len, >, 10000);
}

typedef struct selection {
  guint64 event, tensor;
  guint events, tensors;
} selection;

static void on_event_selected(GsTimelineView *view, guint64 index, selection *s) {
  (void)view;
  s->event = index;
  s->events++;
}

static void on_tensor_selected(GsTimelineView *view, guint64 id, selection *s) {
  (void)view;
  s->tensor = id;
  s->tensors++;
}

typedef struct fixture {
  gs_trace_model *m;
  GsTimelineView *view;
  GtkWindow *window;
  selection sel;
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  f->m = views_test_record(timeline_training_work);
  f->view = GS_TIMELINE_VIEW(gs_timeline_view_new());
  g_signal_connect(f->view, "event-selected", G_CALLBACK(on_event_selected), &f->sel);
  g_signal_connect(f->view, "tensor-selected", G_CALLBACK(on_tensor_selected), &f->sel);
  gs_timeline_view_set_model(f->view, f->m);
  f->window = views_test_show(GTK_WIDGET(f->view), 1000, 720);
}

static void fixture_clear(fixture *f) {
  gtk_window_destroy(f->window);
  gs_trace_model_free(f->m);
}

static guint64 n_events(fixture *f) { return gs_trace_model_n_events(f->m); }

/* ---- leaks grouped by where they were made ---------------------------------------------- */

#define LEAKS 40
static int leak_line; /* the line of the gs_randn below */

/* A loop that leaks LEAKS tensors from one line, and one more from another. */
static void leaky_work(void) {
  gs_scope step = gs_scope_begin("leaky step");
  gs_dispose(gs_ones(GS_F32, (int64_t[]){2}, 1));
  gs_scope_end(step);
  leak_line = __LINE__ + 2;
  for (int i = 0; i < LEAKS; i++)
    gs_randn(GS_F32, (int64_t[]){64, 32}, 2, NULL); /* leaked on purpose */
  gs_zeros(GS_F64, (int64_t[]){3}, 1);              /* and one more, alone */
  gs_trace_mark("end");
}

/* The alive list shows the loop's leaks as one row, "40 × randn [64, 32] f32", made at this
 * file's line, which opens to its 40 members; the lone leak is a row of its own. */
static void test_leaks_grouped_by_site(void) {
  gs_trace_model *m = views_test_record(leaky_work);
  GsTimelineView *view = GS_TIMELINE_VIEW(gs_timeline_view_new());
  selection sel = {0};
  g_signal_connect(view, "tensor-selected", G_CALLBACK(on_tensor_selected), &sel);
  gs_timeline_view_set_model(view, m);
  GtkWindow *window = views_test_show(GTK_WIDGET(view), 1200, 720);
  guint64 end = views_test_find_kind(m, GS_TRACE_MARK, 0);
  g_assert_cmpuint(end, !=, G_MAXUINT64);
  g_assert_cmpuint(gs_timeline_view_click(view, gs_timeline_view_x_of(view, end)), ==, end);
  GListModel *rows = gs_timeline_view_get_alive_rows(view);
  g_assert_cmpuint(g_list_model_get_n_items(rows), ==, 2);
  g_autoptr(GtkTreeListRow) top = g_list_model_get_item(rows, 0);
  g_autoptr(GsAliveItem) group = gtk_tree_list_row_get_item(top);
  g_assert_cmpstr(gs_alive_item_get_label(group), ==, "40 × randn [64, 32] f32");
  g_assert_cmpuint(gs_alive_item_get_bytes(group), ==, LEAKS * 64 * 32 * 4);
  g_assert_cmpstr(gs_alive_item_get_category(group), ==, "held by the program");
  g_assert_cmpstr(gs_alive_item_get_held_by(group), ==, "held by the program");
  g_autofree char *where = g_strdup_printf("test-timeline-view.c:%d in leaky_work", leak_line);
  g_assert_cmpstr(gs_alive_item_get_site(group), ==, where);
  GListModel *members = gs_alive_item_get_members(group);
  g_assert_nonnull(members);
  g_assert_cmpuint(g_list_model_get_n_items(members), ==, LEAKS);
  g_autoptr(GtkTreeListRow) alone_row = g_list_model_get_item(rows, 1);
  g_autoptr(GsAliveItem) alone = gtk_tree_list_row_get_item(alone_row);
  g_assert_null(gs_alive_item_get_members(alone));
  g_autofree char *alone_where =
      g_strdup_printf("test-timeline-view.c:%d in leaky_work", leak_line + 1);
  g_assert_cmpstr(gs_alive_item_get_site(alone), ==, alone_where);

  /* A click on the group opens it; a click on a member selects that tensor. */
  GtkWidget *columns = views_test_find(GTK_WIDGET(view), GTK_TYPE_COLUMN_VIEW);
  g_signal_emit_by_name(columns, "activate", 0u);
  g_assert_true(gtk_tree_list_row_get_expanded(top));
  g_assert_cmpuint(g_list_model_get_n_items(rows), ==, 2 + LEAKS);
  g_assert_cmpuint(sel.tensors, ==, 0);
  g_autoptr(GsAliveItem) member = g_list_model_get_item(members, 3);
  g_signal_emit_by_name(columns, "activate", 4u);
  g_assert_cmpuint(sel.tensors, ==, 1);
  g_assert_cmpuint(sel.tensor, ==, gs_alive_item_get_id(member));
  g_assert_cmpstr(gs_alive_item_get_site(member), ==, where);
  views_test_settle(GTK_WIDGET(window));
  assert_screenshot(GTK_WIDGET(window), "alive-grouped.png");
  gtk_window_destroy(window);
  gs_trace_model_free(m);
}

/* The largest alive item and, if any, one whose holder text contains needle. */
static GsAliveItem *alive_with(GsTimelineView *view, const char *needle) {
  GListModel *alive = gs_timeline_view_get_alive(view);
  for (guint i = 0; i < g_list_model_get_n_items(alive); i++) {
    g_autoptr(GsAliveItem) item = g_list_model_get_item(alive, i);
    if (strstr(gs_alive_item_get_held_by(item), needle))
      return item;
  }
  return NULL;
}

static void test_click_lists_alive(void) {
  fixture f;
  fixture_init(&f);
  guint64 first, last;
  gs_timeline_view_get_viewport(f.view, &first, &last);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(last, ==, n_events(&f) - 1);

  /* Inside the evaluation scope, after its big tensor was made. */
  guint64 eval = find_event(f.m, 0, GS_TRACE_SCOPE_BEGIN, "evaluate");
  guint64 made = find_event(f.m, eval, GS_TRACE_TENSOR_CREATE, NULL);
  g_assert_cmpuint(made, !=, G_MAXUINT64);
  double x = gs_timeline_view_x_of(f.view, made);
  guint64 clicked = gs_timeline_view_click(f.view, x);
  g_assert_cmpuint(clicked, ==, made);
  g_assert_cmpuint(f.sel.events, ==, 1);
  g_assert_cmpuint(f.sel.event, ==, made);

  /* The list holds every alive object, largest first: the evaluation's tensor. */
  GListModel *alive = gs_timeline_view_get_alive(f.view);
  const gs_replay *state = gs_trace_model_seek(f.m, made);
  g_assert_cmpuint(g_list_model_get_n_items(alive), ==, gs_replay_n_objects(state));
  g_assert_cmpuint(g_list_model_get_n_items(alive), >=, 2);
  g_autoptr(GsAliveItem) top = g_list_model_get_item(alive, 0);
  g_assert_cmpuint(gs_alive_item_get_bytes(top), ==, EVAL_BYTES);
  g_assert_true(g_str_has_prefix(gs_alive_item_get_held_by(top), "scope evaluate #"));
  g_assert_cmpstr(gs_alive_item_get_category(top), ==, "scope temporaries");
  g_autofree char *eval_size = g_format_size_full(EVAL_BYTES, G_FORMAT_SIZE_IEC_UNITS);
  g_assert_cmpstr(gs_alive_item_get_size(top), ==, eval_size);
  g_assert_cmpstr(gs_alive_item_get_op(top), ==, "ones");
  /* The module's weight is there too, held by its module. */
  g_assert_nonnull(alive_with(f.view, "module Linear #"));
  views_test_settle(GTK_WIDGET(f.window));
  assert_screenshot(GTK_WIDGET(f.window), "timeline-view.png");

  /* Activating a row selects its tensor for the other views. */
  GtkWidget *columns = views_test_find(GTK_WIDGET(f.view), GTK_TYPE_COLUMN_VIEW);
  g_signal_emit_by_name(columns, "activate",
                        views_test_alive_row(GTK_WIDGET(f.view), gs_alive_item_get_id(top)));
  g_assert_cmpuint(f.sel.tensors, ==, 1);
  g_assert_cmpuint(f.sel.tensor, ==, gs_alive_item_get_id(top));
  fixture_clear(&f);
}

/* Between a step's forward and its backward: the matmul's input is saved for backward, and
 * the list says so. */
static void test_saved_tensor_says_why(void) {
  fixture f;
  fixture_init(&f);
  guint64 node = find_event(f.m, 0, GS_TRACE_NODE_CREATE, "MatmulBackward");
  g_assert_cmpuint(node, !=, G_MAXUINT64);
  /* Zoomed in so the event has pixels of its own. */
  gs_timeline_view_set_viewport(f.view, node - 10, node + 10);
  guint64 clicked = gs_timeline_view_click(f.view, gs_timeline_view_x_of(f.view, node));
  g_assert_cmpuint(clicked, ==, node);
  GsAliveItem *saved = alive_with(f.view, "saved by MatmulBackward #");
  g_assert_nonnull(saved);
  g_assert_true(g_str_has_suffix(gs_alive_item_get_held_by(saved), " for backward"));
  g_assert_cmpstr(gs_alive_item_get_category(saved), ==, "saved for backward");
  fixture_clear(&f);
}

static void test_hover_describes_column(void) {
  fixture f;
  fixture_init(&f);
  guint64 eval = find_event(f.m, 0, GS_TRACE_SCOPE_BEGIN, "evaluate");
  guint64 made = find_event(f.m, eval, GS_TRACE_TENSOR_CREATE, NULL);
  g_autofree char *text = gs_timeline_view_describe_at(f.view, gs_timeline_view_x_of(f.view, made));
  g_assert_nonnull(text);
  g_assert_nonnull(strstr(text, "Total: "));
  g_autofree char *eval_size = g_format_size_full(EVAL_BYTES, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *eval_line = g_strdup_printf("evaluate: %s", eval_size);
  g_assert_nonnull(strstr(text, eval_line));
  /* Left of the plot (the byte axis): nothing to describe. */
  g_assert_null(gs_timeline_view_describe_at(f.view, 3));
  gs_timeline_view_set_by_scope(f.view, FALSE);
  g_autofree char *by_category =
      gs_timeline_view_describe_at(f.view, gs_timeline_view_x_of(f.view, made));
  g_assert_nonnull(strstr(by_category, "parameters: "));
  g_assert_nonnull(strstr(by_category, "temporaries: "));
  fixture_clear(&f);
}

static void test_zoom_pan_and_follow(void) {
  fixture f;
  fixture_init(&f);
  guint64 n = n_events(&f);
  guint64 anchor = n / 3;
  double x = gs_timeline_view_x_of(f.view, anchor);
  gs_timeline_view_zoom(f.view, 0.25, x);
  guint64 first, last;
  gs_timeline_view_get_viewport(f.view, &first, &last);
  g_assert_cmpuint(last - first + 1, <=, n / 4 + 1);
  g_assert_cmpuint(first, <=, anchor);
  g_assert_cmpuint(last, >=, anchor);
  /* The event under the pointer stays (within a pixel's worth of events) under it. */
  double x2 = gs_timeline_view_x_of(f.view, anchor);
  g_assert_cmpfloat(fabs(x2 - x), <, 6);
  /* The scrubber moves past the viewport: it pans to show it, keeping the zoom. */
  gs_timeline_view_set_position(f.view, n - 5);
  guint64 first2, last2;
  gs_timeline_view_get_viewport(f.view, &first2, &last2);
  g_assert_cmpuint(last2 - first2, ==, last - first);
  g_assert_cmpuint(last2, >=, n - 5);
  /* Zooming far out shows everything again; far in stops at a few events. */
  gs_timeline_view_zoom(f.view, 100, x);
  gs_timeline_view_get_viewport(f.view, &first, &last);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(last, ==, n - 1);
  for (int i = 0; i < 40; i++)
    gs_timeline_view_zoom(f.view, 0.5, x);
  gs_timeline_view_get_viewport(f.view, &first, &last);
  g_assert_cmpuint(last - first + 1, ==, 8);
  views_test_settle(GTK_WIDGET(f.window));
  assert_screenshot(GTK_WIDGET(f.window), "timeline-view-zoomed.png");
  fixture_clear(&f);
}

/* A live source: the log arrives in two halves; the whole-run view grows with it. */
static void test_follows_growing_source(void) {
  char *path = record_log(timeline_training_work);
  GBytes *bytes = read_log_bytes(path);
  gsize len;
  const guint8 *data = g_bytes_get_data(bytes, &len);
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_feed(m, data, len / 2);
  GsTimelineView *view = GS_TIMELINE_VIEW(gs_timeline_view_new());
  gs_timeline_view_set_model(view, m);
  GtkWindow *window = views_test_show(GTK_WIDGET(view), 900, 600);
  guint64 first, last, half = gs_trace_model_n_events(m);
  gs_timeline_view_get_viewport(view, &first, &last);
  g_assert_cmpuint(last, ==, half - 1);
  gs_trace_model_feed(m, data + len / 2, len - len / 2);
  gs_timeline_view_model_grew(view);
  gs_timeline_view_get_viewport(view, &first, &last);
  g_assert_cmpuint(first, ==, 0);
  g_assert_cmpuint(last, ==, gs_trace_model_n_events(m) - 1);
  g_assert_cmpuint(last, >, half);
  /* The new events are drawn: the evaluation (in the second half) is described. */
  guint64 eval = find_event(m, 0, GS_TRACE_SCOPE_BEGIN, "evaluate");
  views_test_settle(GTK_WIDGET(window));
  g_autofree char *text = gs_timeline_view_describe_at(view, gs_timeline_view_x_of(view, eval + 2));
  g_assert_nonnull(text);
  gtk_window_destroy(window);
  gs_trace_model_free(m);
  g_bytes_unref(bytes);
  remove_log(path);
}

/* An opaque colour as 0xAARRGGBB, over is drawn over under at its alpha (as cairo does). */
static guint32 composite(gs_rgba over, gs_rgba under) {
  double a = over.a;
  guint r = (guint)lround(255 * (over.r * a + under.r * (1 - a)));
  guint g = (guint)lround(255 * (over.g * a + under.g * (1 - a)));
  guint b = (guint)lround(255 * (over.b * a + under.b * (1 - a)));
  return 0xff000000u | r << 16 | g << 8 | b;
}

static gboolean near(guint32 a, guint32 b) {
  for (int shift = 0; shift < 32; shift += 8) {
    int d = (int)(a >> shift & 0xff) - (int)(b >> shift & 0xff);
    if (d < -3 || d > 3)
      return FALSE;
  }
  return TRUE;
}

/* Pixels of the picture whose colour is one of the palette's plot backgrounds (plain, or under
 * either scope band) or, with fills, one of its category fills over those backgrounds. */
static guint count_palette_pixels(cairo_surface_t *s, gboolean dark, gboolean fills) {
  const gs_timeline_palette *pal = gs_timeline_palette_get(dark);
  gs_rgba grounds[3] = {pal->background, pal->background, pal->background};
  guint32 bg = composite(pal->background, pal->background);
  for (int i = 0; i < 2; i++) {
    guint32 banded = composite(pal->scope_band[i], pal->background);
    grounds[i + 1] = (gs_rgba){(banded >> 16 & 0xff) / 255.0, (banded >> 8 & 0xff) / 255.0,
                               (banded & 0xff) / 255.0, 1};
  }
  guint32 wanted[3 * GS_MEM_N_CATEGORIES];
  guint n_wanted = 0;
  if (fills) {
    for (guint c = 0; c < GS_MEM_N_CATEGORIES; c++)
      for (int i = 0; i < 3; i++)
        wanted[n_wanted++] = composite(gs_timeline_stack_color(dark, FALSE, c), grounds[i]);
  } else {
    wanted[n_wanted++] = bg;
    for (int i = 1; i < 3; i++)
      wanted[n_wanted++] = composite(grounds[i], grounds[i]);
  }
  guint count = 0;
  int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      guint32 p = surface_pixel(s, x, y) | 0xff000000u;
      for (guint i = 0; i < n_wanted; i++)
        if (near(p, wanted[i])) {
          count++;
          break;
        }
    }
  return count;
}

/* The dark screenshot is drawn in the dark palette: a large part of it is the dark plot
 * background and the category stacks are the dark fills; the light palette's background and
 * fills are at most a trace of it. */
static void assert_dark_palette(const char *name) {
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename(dir ? dir : ".", name, NULL);
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  guint total = (guint)(cairo_image_surface_get_width(s) * cairo_image_surface_get_height(s));
  guint dark_ground = count_palette_pixels(s, TRUE, FALSE);
  guint dark_fill = count_palette_pixels(s, TRUE, TRUE);
  guint light_ground = count_palette_pixels(s, FALSE, FALSE);
  guint light_fill = count_palette_pixels(s, FALSE, TRUE);
  g_test_message("%s: %u pixels; dark background %u, dark fills %u; light background %u, "
                 "light fills %u", name, total, dark_ground, dark_fill, light_ground, light_fill);
  g_assert_cmpuint(dark_ground, >, total / 10);
  g_assert_cmpuint(dark_fill, >, total / 100);
  /* Widgets' white text and light tints near it match a little of the light palette. */
  g_assert_cmpuint(light_ground, <, dark_ground / 20);
  g_assert_cmpuint(light_fill, <, dark_fill / 20);
  cairo_surface_destroy(s);
}

static void test_dark_screenshot(void) {
  adw_style_manager_set_color_scheme(adw_style_manager_get_default(),
                                     ADW_COLOR_SCHEME_FORCE_DARK);
  fixture f;
  fixture_init(&f);
  gs_timeline_view_set_by_scope(f.view, FALSE);
  gs_timeline_view_set_position(f.view, n_events(&f) / 2);
  gs_timeline_view_click(f.view, gs_timeline_view_x_of(f.view, n_events(&f) / 2));
  views_test_settle(GTK_WIDGET(f.window));
  assert_screenshot(GTK_WIDGET(f.window), "timeline-view-dark.png");
  assert_dark_palette("timeline-view-dark.png");
  fixture_clear(&f);
  adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_DEFAULT);
}

int main(int argc, char **argv) {
  views_test_init(&argc, &argv);
  g_test_add_func("/timeline-view/click-lists-alive", test_click_lists_alive);
  g_test_add_func("/timeline-view/saved-tensor-says-why", test_saved_tensor_says_why);
  g_test_add_func("/timeline-view/leaks-grouped-by-site", test_leaks_grouped_by_site);
  g_test_add_func("/timeline-view/hover-describes-column", test_hover_describes_column);
  g_test_add_func("/timeline-view/zoom-pan-and-follow", test_zoom_pan_and_follow);
  g_test_add_func("/timeline-view/follows-growing-source", test_follows_growing_source);
  g_test_add_func("/timeline-view/dark-screenshot", test_dark_screenshot);
  return g_test_run();
}
