/* test-timeline.c: the memory timeline's renderer (inspector/timeline/) on a training run the
 * engine records in the test. Every pixel column of a frame must equal the exact sums of a
 * reference replay of the log (min, max, where the max is, each stack there); marks and spans
 * must equal a decode of every event, also while the log arrives in pieces; exported PNGs must
 * have the requested size, ink where bytes are alive, none above them, and the peak marker at
 * the peak's column. */
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-test-util.h"
#include "timeline-draw.h"
#include "timeline-palette.h"
#include "timeline-test-util.h"

#define N_STACK_SLOTS GS_MEMORY_MAX_STACKS

/* The reference: after each event, the total and every stack, by category and by scope. */
typedef struct reference {
  guint64 n;
  GArray *kinds;      /* gs_trace_kind per event */
  GArray *total;      /* guint64 per event */
  GArray *categories; /* GS_MEM_N_CATEGORIES guint64 per event */
  GArray *scopes;     /* N_STACK_SLOTS guint64 per event */
  guint n_scope_stacks;
} reference;

typedef struct fixture {
  char *path;
  GBytes *bytes;
  gs_trace_model *m;
  reference ref;
} fixture;

typedef struct reference_builder {
  reference *ref;
  gs_trace_model *m;
} reference_builder;

/* Appends the stacks at event e; a pair of events the reader unfolded from one counts as one
 * step, its result shown at both (event_opens_pair). */
static gboolean reference_step(const gs_replay *r, const gs_trace_event *e, gboolean joins_previous,
                               gpointer data) {
  reference *ref = ((reference_builder *)data)->ref;
  guint64 cats[GS_MEM_N_CATEGORIES];
  gs_trace_model_category_bytes(((reference_builder *)data)->m, r, cats);
  guint64 stacks[N_STACK_SLOTS] = {0}, in_scopes = 0;
  for (guint g = 0; g < r->scope_group_list->len; g++) {
    const gs_replay_scope_name *group = r->scope_group_list->pdata[g];
    stacks[MIN(1 + g, N_STACK_SLOTS - 1)] += group->bytes;
    in_scopes += group->bytes;
  }
  stacks[0] = r->live_bytes > in_scopes ? r->live_bytes - in_scopes : 0;
  if (joins_previous) { /* one step with the event before: its result shows there too */
    guint last = ref->total->len - 1;
    g_array_index(ref->total, guint64, last) = r->live_bytes;
    memcpy(&g_array_index(ref->categories, guint64, last * GS_MEM_N_CATEGORIES), cats, sizeof cats);
    memcpy(&g_array_index(ref->scopes, guint64, last * N_STACK_SLOTS), stacks, sizeof stacks);
  }
  g_array_append_val(ref->kinds, e->kind);
  g_array_append_val(ref->total, r->live_bytes);
  g_array_append_vals(ref->categories, cats, GS_MEM_N_CATEGORIES);
  g_array_append_vals(ref->scopes, stacks, N_STACK_SLOTS);
  return TRUE;
}

/* Replays the log from scratch (replay_each); the stacks follow trace-model.h's definitions:
 * a storage's bytes go to its category; by scope, stack 1 + g is scope group g's bytes (the
 * last stack summing groups that do not fit) and stack 0 the rest of the total. */
static void reference_build(reference *ref, GBytes *bytes, gs_trace_model *m) {
  ref->kinds = g_array_new(FALSE, FALSE, sizeof(gs_trace_kind));
  ref->total = g_array_new(FALSE, FALSE, sizeof(guint64));
  ref->categories = g_array_new(FALSE, FALSE, sizeof(guint64));
  ref->scopes = g_array_new(FALSE, FALSE, sizeof(guint64));
  reference_builder builder = {ref, m};
  g_autoptr(gs_replay) r = replay_each(bytes, reference_step, &builder);
  ref->n = ref->total->len;
  ref->n_scope_stacks = MIN(1 + r->scope_group_list->len, N_STACK_SLOTS);
}

static guint64 ref_total(const reference *ref, guint64 i) {
  return g_array_index(ref->total, guint64, i);
}

static guint64 ref_stack(const reference *ref, gboolean by_scope, guint64 i, guint s) {
  return by_scope ? g_array_index(ref->scopes, guint64, i * N_STACK_SLOTS + s)
                  : g_array_index(ref->categories, guint64, i * GS_MEM_N_CATEGORIES + s);
}

static void fixture_init(fixture *f) {
  f->path = record_log(timeline_training_work);
  f->bytes = read_log_bytes(f->path);
  f->m = model_from_bytes(f->bytes, 0);
  g_assert_null(gs_trace_model_problem(f->m));
  reference_build(&f->ref, f->bytes, f->m);
  g_assert_cmpuint(f->ref.n, ==, gs_trace_model_n_events(f->m));
  g_assert_cmpuint(f->ref.n, >, 200);
}

static void fixture_clear(fixture *f) {
  g_array_unref(f->ref.kinds);
  g_array_unref(f->ref.total);
  g_array_unref(f->ref.categories);
  g_array_unref(f->ref.scopes);
  gs_trace_model_free(f->m);
  g_bytes_unref(f->bytes);
  remove_log(f->path);
}

/* Every column of frame (computed over m, whose events are a prefix of the reference's)
 * against the reference. */
static void check_frame_columns(fixture *f, const gs_trace_model *m,
                                const gs_timeline_frame *frame, gboolean by_scope) {
  guint64 first = frame->request.first, last = frame->request.last;
  g_assert_cmpuint(frame->n_columns, ==, (guint)frame->plot_width);
  g_assert_cmpuint(frame->n_stacks, ==, gs_trace_model_n_stacks(m, by_scope));
  if (m == f->m)
    g_assert_cmpuint(frame->n_stacks, ==,
                     by_scope ? f->ref.n_scope_stacks : GS_MEM_N_CATEGORIES);
  guint64 span = last - first + 1, covered = 0, next = first;
  guint64 peak = 0, peak_at = G_MAXUINT64;
  for (guint c = 0; c < frame->n_columns; c++) {
    const gs_memory_column *col = &frame->columns[c];
    if (col->first > col->last) {
      g_assert_cmpuint(span, <, frame->n_columns); /* empty columns only when zoomed in */
      /* ...where they show the next column's event, the one event_at finds there. */
      int shown = gs_timeline_frame_column_at(frame, frame->plot_x + c + 0.5);
      g_assert_cmpint(shown, >, (int)c);
      g_assert_cmpuint(gs_timeline_frame_event_at(frame, frame->plot_x + c + 0.5), ==,
                       frame->columns[shown].first);
      continue;
    }
    /* Columns tile the viewport in order. */
    g_assert_cmpuint(col->first, ==, next);
    next = col->last + 1;
    covered += col->last - col->first + 1;
    guint64 lo = G_MAXUINT64, hi = 0, hi_at = col->first;
    for (guint64 i = col->first; i <= col->last; i++) {
      guint64 v = ref_total(&f->ref, i);
      lo = MIN(lo, v);
      if (v > hi || i == col->first) {
        hi = v;
        hi_at = i;
      }
    }
    g_assert_cmpuint(col->min_total, ==, lo);
    g_assert_cmpuint(col->max_total, ==, hi);
    g_assert_cmpuint(col->max_index, ==, hi_at);
    /* Stacks as of the event where the max is first reached, or, if that allocated a
     * tensor's storage, as of the tensor's creation right after. */
    guint64 stacks_at = hi_at;
    if (hi_at + 1 < f->ref.n &&
        g_array_index(f->ref.kinds, gs_trace_kind, hi_at) == GS_TRACE_STORAGE_ALLOC &&
        g_array_index(f->ref.kinds, gs_trace_kind, hi_at + 1) == GS_TRACE_TENSOR_CREATE &&
        ref_total(&f->ref, hi_at + 1) == hi)
      stacks_at = hi_at + 1;
    guint64 sum = 0;
    for (guint s = 0; s < frame->n_stacks; s++) {
      g_assert_cmpuint(col->stack[s], ==, ref_stack(&f->ref, by_scope, stacks_at, s));
      sum += col->stack[s];
    }
    g_assert_cmpuint(sum, ==, hi);
    if (hi > peak) {
      peak = hi;
      peak_at = hi_at;
    }
    /* Hit testing agrees with the columns: x maps into the column, events map back. */
    double x = frame->plot_x + c + 0.5;
    g_assert_cmpint(gs_timeline_frame_column_at(frame, x), ==, (int)c);
    guint64 e = gs_timeline_frame_event_at(frame, frame->plot_x + c);
    g_assert_cmpuint(e, ==, col->first);
    double xe = gs_timeline_frame_x_of(frame, col->first);
    g_assert_cmpint(gs_timeline_frame_column_at(frame, xe), ==, (int)c);
    g_assert_cmpuint(gs_timeline_frame_event_at(frame, xe), ==, col->first);
  }
  g_assert_cmpuint(covered, ==, span);
  g_assert_cmpuint(frame->peak_bytes, ==, peak);
  g_assert_cmpuint(frame->peak_index, ==, peak_at);
  g_assert_cmpint(frame->peak_column, >=, 0);
  const gs_memory_column *pc = &frame->columns[frame->peak_column];
  g_assert_cmpuint(pc->first, <=, peak_at);
  g_assert_cmpuint(pc->last, >=, peak_at);
  /* The byte scale holds the peak with a round top. */
  g_assert_cmpuint(frame->scale_max, >=, peak);
  g_assert_cmpuint(frame->scale_max % frame->scale_step, ==, 0);
  g_assert_cmpuint(frame->scale_max / frame->scale_step, <=, 6);
}

/* A frame over first..last of the whole log, with buckets of bucket events (0: none). */
static void check_frame(fixture *f, guint bucket, guint64 first, guint64 last, int width,
                        gboolean by_scope) {
  gs_timeline_request req = {.first = first, .last = last, .width = width, .height = 300,
                             .by_scope = by_scope};
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new_with_buckets(bucket);
  gs_timeline_frame_compute(frame, f->m, &req);
  g_assert_cmpuint(frame->request.first, ==, first);
  g_assert_cmpuint(frame->request.last, ==, last);
  check_frame_columns(f, f->m, frame, by_scope);
  /* Again from the filled cache, after the other stacking used it too. */
  req.by_scope = !by_scope;
  gs_timeline_frame_compute(frame, f->m, &req);
  check_frame_columns(f, f->m, frame, !by_scope);
}

static void test_columns_equal_exact_sums(void) {
  fixture f;
  fixture_init(&f);
  guint64 n = f.ref.n;
  const int widths[] = {100, 300, 777, (int)n + 94 + 2, (int)n * 3};
  /* No cache, one-event buckets, odd-sized buckets, and the default (too big to be used on
   * this run: the model answers). */
  const guint buckets[] = {0, 1, 3, 16, 512};
  for (gsize b = 0; b < G_N_ELEMENTS(buckets); b++)
    for (gsize w = 0; w < G_N_ELEMENTS(widths); w++)
      for (int by_scope = 0; by_scope < 2; by_scope++) {
        check_frame(&f, buckets[b], 0, n - 1, widths[w], by_scope);
        check_frame(&f, buckets[b], n / 3, n / 3 + n / 5, widths[w], by_scope); /* zoomed */
        check_frame(&f, buckets[b], 5, n - 7, widths[w], by_scope); /* unaligned ends */
      }
  /* A viewport past the end is clamped to the last event. */
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_request req = {.first = 0, .last = G_MAXUINT64, .width = 400, .height = 200};
  gs_timeline_frame_compute(frame, f.m, &req);
  g_assert_cmpuint(frame->request.last, ==, n - 1);
  fixture_clear(&f);
}

/* A live log: one frame (and its bucket cache) kept while the log arrives in pieces; every
 * layout equals the reference over the events that have arrived. */
static void test_columns_while_the_log_grows(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_trace_model) live = gs_trace_model_new();
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new_with_buckets(2);
  gsize len;
  const guint8 *data = g_bytes_get_data(f.bytes, &len);
  guint layouts = 0;
  for (gsize at = 0; at < len;) {
    gsize piece = MIN(len - at, 700 + at % 500);
    gs_trace_model_feed(live, data + at, piece);
    at += piece;
    guint64 n = gs_trace_model_n_events(live);
    if (n == 0)
      continue;
    for (int by_scope = 0; by_scope < 2; by_scope++) {
      gs_timeline_request req = {.first = 0, .last = n - 1, .width = 76 + 18 + 60,
                                 .height = 200, .by_scope = by_scope};
      gs_timeline_frame_compute(frame, live, &req);
      check_frame_columns(&f, live, frame, by_scope);
      layouts++;
    }
  }
  g_assert_cmpuint(gs_trace_model_n_events(live), ==, f.ref.n);
  g_assert_cmpuint(layouts, >, 4);
  fixture_clear(&f);
}

static void test_nice_scale(void) {
  struct { guint64 peak, max, step; } cases[] = {
      {0, 1024, 256},
      {3, 3, 1},
      {1000, 1000, 200},
      {1536, 1536, 512},                         /* 1.5 KiB: 0.5 KiB steps */
      {1024 * 1024 * 2 + 1, 5 * 524288, 524288}, /* just over 2 MiB: up to 2.5 */
      {(guint64)730 * 1024, 800 * 1024, 200 * 1024},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    guint64 max, step;
    gs_timeline_nice_scale(cases[i].peak, &max, &step);
    g_assert_cmpuint(max, ==, cases[i].max);
    g_assert_cmpuint(step, ==, cases[i].step);
  }
}

/* Marks and outermost spans by decoding every event (the index only reads kinds). */
static void expected_index(gs_trace_model *m, GArray *marks, GArray *scopes, GArray *backs) {
  GHashTable *open = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  gint64 open_backward = -1;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (e.kind == GS_TRACE_MARK) {
      g_array_append_val(marks, i);
    } else if (e.kind == GS_TRACE_SCOPE_BEGIN && e.outer == 0) {
      gs_timeline_span s = {i, G_MAXUINT64};
      g_array_append_val(scopes, s);
      gint64 *key = g_new(gint64, 1);
      *key = (gint64)e.scope;
      g_hash_table_insert(open, key, GUINT_TO_POINTER(scopes->len));
    } else if (e.kind == GS_TRACE_SCOPE_END) {
      gint64 key = (gint64)e.scope;
      guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(open, &key));
      if (pos)
        g_array_index(scopes, gs_timeline_span, pos - 1).last = i;
    } else if (e.kind == GS_TRACE_BACKWARD_BEGIN) {
      gs_timeline_span s = {i, G_MAXUINT64};
      g_array_append_val(backs, s);
      open_backward = backs->len - 1;
    } else if (e.kind == GS_TRACE_BACKWARD_END && open_backward >= 0) {
      g_array_index(backs, gs_timeline_span, open_backward).last = i;
      open_backward = -1;
    }
  }
  g_hash_table_unref(open);
}

static void assert_spans_equal(const GArray *a, const GArray *b) {
  g_assert_cmpuint(a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++) {
    g_assert_cmpuint(g_array_index(a, gs_timeline_span, i).first, ==,
                     g_array_index(b, gs_timeline_span, i).first);
    g_assert_cmpuint(g_array_index(a, gs_timeline_span, i).last, ==,
                     g_array_index(b, gs_timeline_span, i).last);
  }
}

static void assert_index_equal(const gs_timeline_index *index, gs_trace_model *m) {
  g_autoptr(GArray) marks = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autoptr(GArray) scopes = g_array_new(FALSE, FALSE, sizeof(gs_timeline_span));
  g_autoptr(GArray) backs = g_array_new(FALSE, FALSE, sizeof(gs_timeline_span));
  expected_index(m, marks, scopes, backs);
  const GArray *got = gs_timeline_index_marks(index);
  g_assert_cmpuint(got->len, ==, marks->len);
  for (guint i = 0; i < marks->len; i++)
    g_assert_cmpuint(g_array_index(got, guint64, i), ==, g_array_index(marks, guint64, i));
  assert_spans_equal(gs_timeline_index_scope_spans(index), scopes);
  assert_spans_equal(gs_timeline_index_backward_spans(index), backs);
}

static void test_index_marks_and_spans(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gs_timeline_index_update(index, f.m);
  assert_index_equal(index, f.m);
  /* The run's shape: 3 epoch marks, a step scope per step plus one evaluation, a backward
   * pass per step. */
  g_assert_cmpuint(gs_timeline_index_marks(index)->len, ==, (TRAIN_STEPS + 3) / 4);
  g_assert_cmpuint(gs_timeline_index_scope_spans(index)->len, ==, TRAIN_STEPS + 1);
  g_assert_cmpuint(gs_timeline_index_backward_spans(index)->len, ==, TRAIN_STEPS);
  const GArray *marks = gs_timeline_index_marks(index);
  guint64 second = g_array_index(marks, guint64, 1);
  g_assert_cmpuint(gs_timeline_index_first_mark(index, second), ==, 1);
  g_assert_cmpuint(gs_timeline_index_first_mark(index, second + 1), ==, 2);
  fixture_clear(&f);
}

/* A live source: the log arrives in odd pieces; the index extended after each equals a
 * decode of what has arrived, with spans still open where their end has not. */
static void test_index_grows_with_the_log(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_trace_model) live = gs_trace_model_new();
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gsize len;
  const guint8 *data = g_bytes_get_data(f.bytes, &len);
  for (gsize at = 0; at < len;) {
    gsize piece = MIN(len - at, 1000 + at % 777);
    gs_trace_model_feed(live, data + at, piece);
    at += piece;
    gs_timeline_index_update(index, live);
    assert_index_equal(index, live);
  }
  g_assert_cmpuint(gs_trace_model_n_events(live), ==, f.ref.n);
  fixture_clear(&f);
}

/* ---- exported images ---------------------------------------------------------------------- */

static cairo_surface_t *load_png(const char *path) {
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  /* An opaque image comes back as RGB24 (no alpha channel). */
  cairo_format_t format = cairo_image_surface_get_format(s);
  g_assert_true(format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24);
  return s;
}

static guint32 opaque(gs_rgba c) {
  return 0xff000000u | (guint32)(c.r * 255 + 0.5) << 16 | (guint32)(c.g * 255 + 0.5) << 8 |
         (guint32)(c.b * 255 + 0.5);
}

/* Near a colour: cairo's rasteriser and PNG round trip may differ by a step or two. */
static gboolean pixel_near(guint32 a, guint32 b) {
  for (int shift = 0; shift < 32; shift += 8) {
    int d = (int)(a >> shift & 0xff) - (int)(b >> shift & 0xff);
    if (d < -3 || d > 3)
      return FALSE;
  }
  return TRUE;
}

/* Whether row y is one of the byte scale's gridlines. */
static gboolean on_gridline(const gs_timeline_frame *frame, int y) {
  for (guint64 v = 0; v <= frame->scale_max; v += frame->scale_step)
    if ((int)(gs_timeline_frame_y_of(frame, v) + 0.5) == y)
      return TRUE;
  return FALSE;
}

/* Ink in every column where bytes are alive, background above the data; no index, so no
 * shading or marks: what is drawn in the plot is the data (and the peak's label). */
static void check_data_pixels(fixture *f, int width, int height, gboolean by_scope,
                              gboolean dark) {
  /* GS_TEST_SCREENSHOTS=DIR keeps the images there, to look at. */
  const char *keep = g_getenv("GS_TEST_SCREENSHOTS");
  g_autofree char *dir = keep ? g_strdup(keep) : g_dir_make_tmp("gradscope-timeline-XXXXXX", NULL);
  g_autofree char *name = g_strdup_printf("timeline-%dx%d-%s%s.png", width, height,
                                          by_scope ? "scope" : "category", dark ? "-dark" : "");
  g_autofree char *png = g_build_filename(dir, name, NULL);
  gs_timeline_request req = {.first = 0, .last = f->ref.n - 1, .width = width,
                             .height = height, .by_scope = by_scope};
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_timeline_export_png(f->m, NULL, &req, dark, png, &error));
  g_assert_no_error(error);
  cairo_surface_t *s = load_png(png);
  g_assert_cmpint(cairo_image_surface_get_width(s), ==, width);
  g_assert_cmpint(cairo_image_surface_get_height(s), ==, height);

  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_frame_compute(frame, f->m, &req);
  guint32 bg = opaque(gs_timeline_palette_get(dark)->background);
  g_assert_true(pixel_near(surface_pixel(s, width - 1, height - 1), bg));
  int bottom = frame->plot_y + frame->plot_height;
  guint inked = 0;
  for (guint c = 0; c < frame->n_columns; c++) {
    const gs_memory_column *col = &frame->columns[c];
    int x = frame->plot_x + (int)c;
    if (col->first > col->last)
      continue;
    int top = (int)(gs_timeline_frame_y_of(frame, col->max_total) + 0.5);
    if (bottom - top >= 3) {
      /* Inside the stacks, one pixel above the axis. */
      g_assert_false(pixel_near(surface_pixel(s, x, bottom - 2), bg));
      inked++;
    }
    /* Above the data, away from the peak's label: nothing but background and gridlines.
     * The outline joins neighbouring columns, so it may rise into this one up to half way
     * to a higher neighbour's top. */
    if (abs((int)c - frame->peak_column) < 260)
      continue;
    int above = top;
    for (int k = MAX((int)c - 1, 0); k <= MIN((int)c + 1, (int)frame->n_columns - 1); k++) {
      int shown = gs_timeline_frame_column_at(frame, frame->plot_x + k + 0.5);
      if (shown >= 0)
        above = MIN(above, (int)gs_timeline_frame_y_of(frame, frame->columns[shown].max_total));
    }
    for (int y = frame->plot_y + 2; y < above - 3; y += 7)
      if (!on_gridline(frame, y))
        g_assert_true(pixel_near(surface_pixel(s, x, y), bg));
  }
  g_assert_cmpuint(inked, >, frame->n_columns / 2);

  /* The peak marker: a triangle pointing at the peak, in the peak colour, in its column. */
  guint32 peak_color = opaque(gs_timeline_palette_get(dark)->peak);
  int px = frame->plot_x + frame->peak_column;
  int py = (int)gs_timeline_frame_y_of(frame, frame->peak_bytes);
  g_assert_true(pixel_near(surface_pixel(s, px, py - 6), peak_color));
  /* ...and nowhere else at that height near the plot's other end. */
  int far = frame->peak_column < frame->plot_width / 2 ? frame->plot_x + frame->plot_width - 5
                                                       : frame->plot_x + 5;
  g_assert_false(pixel_near(surface_pixel(s, far, py - 6), peak_color));

  cairo_surface_destroy(s);
  if (!keep) {
    g_remove(png);
    g_rmdir(dir);
  }
}

static void test_export_pixels(void) {
  fixture f;
  fixture_init(&f);
  check_data_pixels(&f, 900, 320, TRUE, FALSE);
  check_data_pixels(&f, 640, 240, FALSE, TRUE);
  check_data_pixels(&f, 1500, 500, FALSE, FALSE);
  fixture_clear(&f);
}

/* The pixel inside backward pass `pass` near the plot's top (below the strip, off the
 * gridlines), in an export of first..last at width with the index's shading. */
static guint32 pass_pixel(fixture *f, gs_timeline_index *index, const gs_timeline_span *pass,
                          guint64 first, guint64 last, int width, const char *name) {
  const char *keep = g_getenv("GS_TEST_SCREENSHOTS");
  g_autofree char *dir = keep ? g_strdup(keep) : g_dir_make_tmp("gradscope-timeline-XXXXXX", NULL);
  g_autofree char *png = g_build_filename(dir, name, NULL);
  gs_timeline_request req = {.first = first, .last = last, .width = width, .height = 300,
                             .by_scope = FALSE};
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_timeline_export_png(f->m, index, &req, FALSE, png, &error));
  g_assert_no_error(error);
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_frame_compute(frame, f->m, &req);
  int x = (int)gs_timeline_frame_x_of(frame, pass->first + (pass->last - pass->first) / 2);
  int y = frame->plot_y + 8;
  while (on_gridline(frame, y) || on_gridline(frame, y - 1) || on_gridline(frame, y + 1))
    y += 2;
  cairo_surface_t *s = load_png(png);
  guint32 pixel = surface_pixel(s, x, y);
  cairo_surface_destroy(s);
  if (!keep) {
    g_remove(png);
    g_rmdir(dir);
  }
  return pixel;
}

/* Backward passes and scopes are tinted over the plot's height only where few are in view:
 * zoomed out over many steps (12 in some 220 px here; word-language's hundred in 600 px) the
 * tints made a wall of stripes behind the data, and only the strip along the top is left. */
static void test_dense_spans_not_shaded(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gs_timeline_index_update(index, f.m);
  const GArray *passes = gs_timeline_index_backward_spans(index);
  g_assert_cmpuint(passes->len, ==, TRAIN_STEPS);
  const gs_timeline_span *pass = &g_array_index(passes, gs_timeline_span, TRAIN_STEPS / 2);
  guint32 bg = opaque(gs_timeline_palette_get(FALSE)->background);
  guint32 dense = pass_pixel(&f, index, pass, 0, f.ref.n - 1, 300, "timeline-dense-spans.png");
  g_assert_true(pixel_near(dense, bg));
  guint32 zoomed = pass_pixel(&f, index, pass, pass->first - 20, pass->last + 20, 900,
                             "timeline-one-pass.png");
  g_assert_false(pixel_near(zoomed, bg));
  fixture_clear(&f);
}

/* Whether colour c is in the rows from y to y + height (a legend's swatches). */
static gboolean color_in_rows(cairo_surface_t *s, int y, int height, guint32 c) {
  int width = cairo_image_surface_get_width(s);
  for (int yy = y; yy < y + height; yy++)
    for (int x = 0; x < width; x++)
      if (pixel_near(surface_pixel(s, x, yy), c))
        return TRUE;
  return FALSE;
}

/* Every category the chart stacks has its swatch in the legend, also in a narrow pane: what
 * does not fit on the top row goes on the bottom one (once hidden behind "+2 more"). */
static void test_legend_names_every_stack(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gs_timeline_index_update(index, f.m);
  const char *keep = g_getenv("GS_TEST_SCREENSHOTS");
  g_autofree char *dir = keep ? g_strdup(keep) : g_dir_make_tmp("gradscope-timeline-XXXXXX", NULL);
  static const int widths[] = {600, 900, 1200};
  for (guint w = 0; w < G_N_ELEMENTS(widths); w++) {
    g_autofree char *name = g_strdup_printf("timeline-legend-%d.png", widths[w]);
    g_autofree char *png = g_build_filename(dir, name, NULL);
    gs_timeline_request req = {.first = 0, .last = f.ref.n - 1, .width = widths[w],
                               .height = 300, .by_scope = FALSE};
    g_autoptr(GError) error = NULL;
    g_assert_true(gs_timeline_export_png(f.m, index, &req, FALSE, png, &error));
    g_assert_no_error(error);
    g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
    gs_timeline_frame_compute(frame, f.m, &req);
    cairo_surface_t *s = load_png(png);
    guint stacked = 0;
    for (guint k = 0; k < frame->n_stacks; k++) {
      if (frame->stack_peak[k] == 0)
        continue;
      stacked++;
      /* the swatch's colour over the background */
      gs_rgba sc = gs_timeline_stack_color(FALSE, FALSE, k);
      gs_rgba bg = gs_timeline_palette_get(FALSE)->background;
      gs_rgba over = {sc.r * sc.a + bg.r * (1 - sc.a), sc.g * sc.a + bg.g * (1 - sc.a),
                      sc.b * sc.a + bg.b * (1 - sc.a), 1};
      guint32 c = opaque(over);
      int bottom_row = frame->plot_y + frame->plot_height + 32;
      if (!color_in_rows(s, 12, 10, c) && !color_in_rows(s, bottom_row + 2, 10, c))
        g_error("%d px: no swatch for %s", widths[w], gs_trace_model_stack_name(f.m, FALSE, k));
    }
    g_assert_cmpuint(stacked, >=, 4);
    cairo_surface_destroy(s);
    if (!keep)
      g_remove(png);
  }
  if (!keep)
    g_rmdir(dir);
  fixture_clear(&f);
}

/* With the index: the evaluation's allocation is the peak, and the peak is inside the
 * "evaluate" scope's span; the scrubber-less export still marks it. */
static void test_peak_is_the_evaluation(void) {
  fixture f;
  fixture_init(&f);
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_request req = {.first = 0, .last = f.ref.n - 1, .width = 800, .height = 300,
                             .by_scope = TRUE};
  gs_timeline_frame_compute(frame, f.m, &req);
  g_assert_cmpuint(frame->peak_bytes, >=, EVAL_BYTES);
  guint64 eval_begin = find_event(f.m, 0, GS_TRACE_SCOPE_BEGIN, "evaluate");
  guint64 eval_end = find_event(f.m, eval_begin, GS_TRACE_SCOPE_END, NULL);
  g_assert_cmpuint(frame->peak_index, >, eval_begin);
  g_assert_cmpuint(frame->peak_index, <, eval_end);
  /* By scope, the peak column's "evaluate" stack holds the allocation. */
  guint eval_stack = 0;
  for (guint s = 1; s < frame->n_stacks; s++)
    if (!strcmp(gs_trace_model_stack_name(f.m, TRUE, s), "evaluate"))
      eval_stack = s;
  g_assert_cmpuint(eval_stack, >, 0);
  g_assert_cmpuint(frame->columns[frame->peak_column].stack[eval_stack], ==, EVAL_BYTES);
  fixture_clear(&f);
}

static void test_export_unwritable(void) {
  fixture f;
  fixture_init(&f);
  gs_timeline_request req = {.first = 0, .last = f.ref.n - 1, .width = 300, .height = 200};
  g_autoptr(GError) error = NULL;
  g_assert_false(gs_timeline_export_png(f.m, NULL, &req, FALSE,
                                        "/nonexistent-dir/timeline.png", &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
  g_assert_nonnull(strstr(error->message, "/nonexistent-dir/timeline.png"));
  fixture_clear(&f);
}

/* No events: an empty frame, drawn as a message, never a crash or a division by zero. */
static void test_empty_model(void) {
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_request req = {.first = 0, .last = G_MAXUINT64, .width = 300, .height = 200};
  gs_timeline_frame_compute(frame, m, &req);
  g_assert_cmpint(frame->peak_column, ==, -1);
  g_assert_cmpuint(gs_timeline_frame_event_at(frame, 150), ==, GS_TIMELINE_NO_EVENT);
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 300, 200);
  cairo_t *cr = cairo_create(s);
  gs_timeline_decor decor = {.position = GS_TIMELINE_NO_EVENT, .hover_column = -1};
  gs_timeline_draw(cr, frame, m, NULL, &decor);
  g_assert_cmpint(cairo_status(cr), ==, CAIRO_STATUS_SUCCESS);
  cairo_destroy(cr);
  cairo_surface_destroy(s);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/timeline/columns-equal-exact-sums", test_columns_equal_exact_sums);
  g_test_add_func("/timeline/columns-while-the-log-grows", test_columns_while_the_log_grows);
  g_test_add_func("/timeline/nice-scale", test_nice_scale);
  g_test_add_func("/timeline/index-marks-and-spans", test_index_marks_and_spans);
  g_test_add_func("/timeline/index-grows-with-the-log", test_index_grows_with_the_log);
  g_test_add_func("/timeline/export-pixels", test_export_pixels);
  g_test_add_func("/timeline/peak-is-the-evaluation", test_peak_is_the_evaluation);
  g_test_add_func("/timeline/dense-spans-not-shaded", test_dense_spans_not_shaded);
  g_test_add_func("/timeline/legend-names-every-stack", test_legend_names_every_stack);
  g_test_add_func("/timeline/export-unwritable", test_export_unwritable);
  g_test_add_func("/timeline/empty-model", test_empty_model);
  return g_test_run();
}
