/* test-id-table: the replay's open-addressing id map (inspector/model/replay/id-table.h) against a
 * GHashTable over long random runs of inserts, replacements and removals: handles that share
 * a slot with new generations, clusters that wrap around the end, and removals in the middle
 * of probe runs (the backward shift must keep every other key reachable). */
#include <glib.h>

#include "id-table.h"

static int freed;
static void count_free(gpointer p) {
  freed++;
  g_free(p);
}

/* Same answers as a GHashTable for every id ever used, after every operation. */
static void test_matches_ghashtable(void) {
  GRand *rand = g_rand_new_with_seed(7);
  gs_id_table *t = gs_id_table_new(NULL);
  GHashTable *ref = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  guint64 ids[300];
  for (guint i = 0; i < G_N_ELEMENTS(ids); i++) /* few slots, many generations */
    ids[i] = ((guint64)g_rand_int_range(rand, 1, 40) << 32) | (guint64)(i % 23 + 1);
  for (int step = 0; step < 200000; step++) {
    guint64 id = ids[g_rand_int_range(rand, 0, G_N_ELEMENTS(ids))];
    gpointer value = GSIZE_TO_POINTER((gsize)step + 1);
    if (g_rand_int_range(rand, 0, 3) == 0) {
      gboolean had = g_hash_table_remove(ref, &id);
      g_assert_cmpint(gs_id_table_remove(t, id), ==, had);
    } else {
      gs_id_table_replace(t, id, value);
      guint64 *key = g_new(guint64, 1);
      *key = id;
      g_hash_table_replace(ref, key, value);
    }
    g_assert_cmpuint(gs_id_table_size(t), ==, g_hash_table_size(ref));
    if (step % 97 == 0)
      for (guint i = 0; i < G_N_ELEMENTS(ids); i++)
        g_assert_true(gs_id_table_lookup(t, ids[i]) == g_hash_table_lookup(ref, &ids[i]));
  }
  /* Iteration visits each value once. */
  guint seen = 0;
  gpointer value;
  for (guint at = 0; gs_id_table_next(t, &at, &value);)
    seen++;
  g_assert_cmpuint(seen, ==, g_hash_table_size(ref));
  gs_id_table_free(t);
  g_hash_table_destroy(ref);
  g_rand_free(rand);
}

/* Values are freed when replaced, removed, or with the table; an id of 0 is a key too. */
static void test_frees_values(void) {
  freed = 0;
  gs_id_table *t = gs_id_table_new(count_free);
  for (guint64 id = 0; id < 1000; id++)
    gs_id_table_replace(t, id, g_new0(int, 1));
  gs_id_table_replace(t, 5, g_new0(int, 1));
  g_assert_cmpint(freed, ==, 1);
  g_assert_true(gs_id_table_remove(t, 0));
  g_assert_false(gs_id_table_remove(t, 0));
  g_assert_null(gs_id_table_lookup(t, 0));
  g_assert_cmpint(freed, ==, 2);
  g_assert_cmpuint(gs_id_table_size(t), ==, 999);
  /* Stolen values come out unfreed (the replay recycles storage records so), the other keys
   * of their probe runs still found. */
  for (guint64 id = 1; id < 1000; id += 2) {
    int *v = gs_id_table_lookup(t, id);
    g_assert_true(gs_id_table_steal(t, id) == v);
    g_assert_null(gs_id_table_steal(t, id));
    g_free(v);
  }
  g_assert_cmpint(freed, ==, 2);
  g_assert_cmpuint(gs_id_table_size(t), ==, 499);
  for (guint64 id = 2; id < 1000; id += 2)
    g_assert_nonnull(gs_id_table_lookup(t, id));
  gs_id_table_free(t);
  g_assert_cmpint(freed, ==, 501);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/id-table/matches-ghashtable", test_matches_ghashtable);
  g_test_add_func("/id-table/frees-values", test_frees_values);
  return g_test_run();
}
