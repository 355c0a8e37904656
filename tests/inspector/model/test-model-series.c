/* test-model-series.c: the model's compact series (model-series.c) answer as a plain array of
 * (index, value) points would: values at every index, points walked in order from any index,
 * across block boundaries, minimum and maximum over ranges (whole blocks read as summaries),
 * with changes of any size and sign (wrapping 64-bit ones included), and a change undone in
 * the same event leaving no point. */
#include <glib.h>

#include "model-private.h"

/* The reference: the value from each index on, for indices 0..n-1. */
typedef struct reference {
  guint64 *value;
  guint64 n;
} reference;

/* A point as a plain array keeps it. */
typedef struct point {
  guint64 at, value;
} point;

static void check(const model_series *s, const reference *ref, const GArray *points) {
  g_assert_cmpuint(model_series_len(s), ==, points->len);
  for (guint64 i = 0; i < ref->n; i++)
    g_assert_cmpuint(model_series_value(s, i), ==, ref->value[i]);
  /* From every index, the walk meets the points after it, in order. */
  for (guint64 i = 0; i < ref->n; i += 1 + i / 50) {
    model_series_cursor c;
    gboolean found = model_series_seek(s, i, &c);
    guint k = 0;
    while (k < points->len && g_array_index(points, point, k).at <= i)
      k++;
    g_assert_cmpint(found, ==, k > 0);
    if (found) {
      g_assert_cmpuint(c.at, ==, g_array_index(points, point, k - 1).at);
      g_assert_cmpuint(c.value, ==, g_array_index(points, point, k - 1).value);
    }
    for (; k < points->len; k++) {
      g_assert_true(model_series_next(&c));
      g_assert_cmpuint(c.at, ==, g_array_index(points, point, k).at);
      g_assert_cmpuint(c.value, ==, g_array_index(points, point, k).value);
    }
    g_assert_false(model_series_next(&c));
  }
  /* Ranges short and long (whole blocks read as summaries), against the values one by one. */
  for (guint64 first = 0; first < ref->n; first += 1 + first / 7)
    for (guint64 span = 1; first + span <= ref->n; span = span * 3 + 1) {
      guint64 last = first + span - 1, lo = G_MAXUINT64, hi = 0, hi_at = first;
      for (guint64 i = first; i <= last; i++) {
        lo = MIN(lo, ref->value[i]);
        if (ref->value[i] > hi || i == first) {
          hi = ref->value[i];
          hi_at = i;
        }
      }
      guint64 min, max, max_at;
      model_series_range(s, first, last, &min, &max, &max_at);
      g_assert_cmpuint(min, ==, lo);
      g_assert_cmpuint(max, ==, hi);
      g_assert_cmpuint(max_at, ==, hi_at);
    }
}

static void test_random_changes(void) {
  GRand *rand = g_rand_new_with_seed(20);
  enum { N = 20000 };
  reference ref = {g_new0(guint64, N), N};
  model_series s;
  model_series_init(&s);
  guint64 v = 0;
  for (guint64 i = 0; i < N; i++) {
    guint r = g_rand_int_range(rand, 0, 10);
    if (r < 4) { /* no change */
    } else if (r < 7) { /* small steps up and down */
      v += (guint64)(gint64)g_rand_int_range(rand, -4096, 4097);
      model_series_set(&s, i, v);
    } else if (r < 8) { /* anything, wrapping included */
      v = ((guint64)g_rand_int(rand) << 32) | g_rand_int(rand);
      model_series_set(&s, i, v);
    } else if (r < 9) { /* changed, then changed back in the same event */
      model_series_set(&s, i, v + 77);
      model_series_set(&s, i, v);
    } else { /* changed twice in one event */
      model_series_set(&s, i, v + 5);
      v += 9;
      model_series_set(&s, i, v);
    }
    ref.value[i] = v;
  }
  /* The points a plain array keeps: where the value differs from the index before. */
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(point));
  for (guint64 i = 0; i < N; i++)
    if (ref.value[i] != (i ? ref.value[i - 1] : 0)) {
      point p = {i, ref.value[i]};
      g_array_append_val(points, p);
    }
  g_assert_cmpuint(points->len, >, 2 * MODEL_SERIES_BLOCK); /* several blocks */
  check(&s, &ref, points);
  model_series_clear(&s);
  g_free(ref.value);
  g_rand_free(rand);
}

static void test_empty_and_one_point(void) {
  model_series s;
  model_series_init(&s);
  model_series_cursor c;
  g_assert_false(model_series_seek(&s, 5, &c));
  g_assert_false(model_series_next(&c));
  g_assert_cmpuint(model_series_value(&s, 5), ==, 0);
  model_series_set(&s, 3, 10);
  g_assert_cmpuint(model_series_value(&s, 2), ==, 0);
  g_assert_cmpuint(model_series_value(&s, 3), ==, 10);
  g_assert_false(model_series_seek(&s, 2, &c));
  g_assert_true(model_series_next(&c));
  g_assert_cmpuint(c.at, ==, 3);
  model_series_set(&s, 3, 0); /* undone: no point at all */
  g_assert_cmpuint(model_series_len(&s), ==, 0);
  model_series_clear(&s);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/model-series/random-changes", test_random_changes);
  g_test_add_func("/model-series/empty-and-one-point", test_empty_and_one_point);
  return g_test_run();
}
