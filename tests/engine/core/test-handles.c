/* test-handles.c: handles are checked on every use: a stale, forged or empty handle is a
 * clear error naming what disposed it; slots are reused with a new generation; tensors are
 * created and disposed from two threads safely. */
#include <pthread.h>

#include "test-util.h"

static void test_create_dispose_counts(void) {
  uint64_t before = gs_live_tensor_count();
  int64_t shape[2] = {2, 3};
  gs_tensor t = gs_zeros(GS_F32, shape, 2);
  g_assert_true(gs_is_alive(t));
  g_assert_cmpuint(gs_live_tensor_count(), ==, before + 1);
  gs_dispose(t);
  g_assert_false(gs_is_alive(t));
  g_assert_cmpuint(gs_live_tensor_count(), ==, before);
  gs_dispose(GS_NO_TENSOR); /* disposing the empty handle does nothing */
}

static void test_stale_handle_names_its_disposal(void) {
  gs_tensor t = gs_ones(GS_F64, NULL, 0);
  gs_dispose(t);
  uint64_t disposed_at = gs_event_counter();
  char expected[128];
  g_snprintf(expected, sizeof expected, "it was disposed by gs_dispose at event %llu",
             (unsigned long long)disposed_at);
  EXPECT_ERROR(gs_item(t), expected);
  EXPECT_ERROR(gs_add(t, t), "add: tensor #");
  EXPECT_ERROR(gs_dispose(t), "dispose: tensor #");
  double v = 0.0;
  EXPECT_ERROR(v = gs_item(t), "item: tensor #");
  g_assert_true(isnan(v)); /* the documented error value */
}

static void test_reused_slot_keeps_old_handle_stale(void) {
  gs_tensor old = gs_zeros(GS_F32, NULL, 0);
  gs_dispose(old);
  /* The free list is LIFO: the next tensor takes the same slot with a new generation. */
  gs_tensor fresh = gs_ones(GS_F32, NULL, 0);
  g_assert_cmpuint(fresh.id & 0xffffffffu, ==, old.id & 0xffffffffu);
  g_assert_cmpuint(fresh.id, !=, old.id);
  g_assert_false(gs_is_alive(old));
  g_assert_true(gs_is_alive(fresh));
  EXPECT_ERROR(gs_item(old), "it was disposed by gs_dispose at event");
  g_assert_cmpfloat(gs_item(fresh), ==, 1.0);
  gs_dispose(fresh);
  gs_tensor third = gs_ones(GS_F32, NULL, 0);
  EXPECT_ERROR(gs_item(old), "it was disposed by gs_dispose at event");
  EXPECT_ERROR(gs_item(old), "(its slot has held 2 tensors since)");
  gs_dispose(third);
}

/* A training loop reuses its slots newest first, many times a step: a stale handle still names
 * who disposed its tensor, and when, after its slot has held 100 more tensors. */
static void test_stale_handle_keeps_its_story_after_100_reuses(void) {
  gs_scope s = gs_scope_begin("step 0");
  gs_tensor old = gs_zeros(GS_F32, NULL, 0);
  uint64_t created = gs_event_counter();
  gs_scope_end(s);
  uint64_t disposed_at = created + 1;
  for (int i = 0; i < 100; i++) {
    gs_tensor t = gs_ones(GS_F32, NULL, 0);
    g_assert_cmpuint(t.id & 0xffffffffu, ==, old.id & 0xffffffffu);
    gs_dispose(t);
  }
  char expected[160];
  g_snprintf(expected, sizeof expected,
             "it was disposed by the end of scope 'step 0' at event %llu (its slot has held 100 "
             "tensors since)",
             (unsigned long long)disposed_at);
  EXPECT_ERROR(gs_item(old), expected);
}

/* Beyond the kept history (128 tenants of a slot) the message says plainly that the record is
 * gone, rather than naming the wrong disposer. */
static void test_stale_handle_beyond_history_says_so(void) {
  gs_tensor old = gs_zeros(GS_F32, NULL, 0);
  gs_dispose(old);
  for (int i = 0; i < 200; i++)
    gs_dispose(gs_ones(GS_F32, NULL, 0));
  EXPECT_ERROR(gs_item(old), "its slot has held 200 tensors since and only the last 128 "
                             "disposals of a slot are remembered");
}

static void test_forged_and_empty_handles(void) {
  gs_tensor forged = {((uint64_t)7 << 32) | 0x7fffffffu};
  EXPECT_ERROR(gs_numel(forged), "was never created by this process");
  gs_tensor live = gs_zeros(GS_F32, NULL, 0);
  gs_tensor future = {live.id + ((uint64_t)5 << 32)}; /* a generation not reached yet */
  EXPECT_ERROR(gs_numel(future), "was never created");
  gs_dispose(live);
  EXPECT_ERROR(gs_numel(GS_NO_TENSOR), "numel: expected a tensor, got the empty handle");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
}

static void test_error_returns_empty_handle_and_keeps_state(void) {
  uint64_t before = gs_live_tensor_count();
  int64_t a_shape[2] = {3, 4}, b_shape[2] = {5, 6};
  gs_tensor a = gs_zeros(GS_F32, a_shape, 2), b = gs_zeros(GS_F32, b_shape, 2);
  gs_tensor r = GS_NO_TENSOR;
  EXPECT_ERROR(r = gs_add(a, b),
               "add: shapes [3, 4] and [5, 6] cannot be broadcast together (dim 1: 4 vs 6)");
  g_assert_true(gs_tensor_is_none(r));
  g_assert_cmpuint(gs_live_tensor_count(), ==, before + 2);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_SHAPE);
  gs_clear_error();
  g_assert_cmpstr(gs_last_error(), ==, "");
  gs_dispose(a);
  gs_dispose(b);
}

static void counting_handler(const gs_error *error, void *user_data) {
  int *count = user_data;
  (*count)++;
  g_assert_cmpint(error->code, ==, GS_ERR_DIM);
  g_assert_cmpstr(error->function, ==, "size");
}

static void test_installable_handler(void) {
  int count = 0;
  void *previous_data = NULL;
  gs_error_handler previous = gs_set_error_handler(counting_handler, &count, &previous_data);
  gs_tensor t = gs_zeros(GS_F32, (int64_t[]){2}, 1);
  g_assert_cmpint(gs_size(t, 3), ==, -1);
  g_assert_cmpint(count, ==, 1);
  g_assert_true(strstr(gs_last_error(), "expected a dimension in [-1, 0] for a 1-D tensor, got 3"));
  gs_set_error_handler(previous, previous_data, NULL);
  gs_dispose(t);
}

static void test_default_handler_aborts_with_message(void) {
  if (g_test_subprocess()) {
    gs_set_error_handler(NULL, NULL, NULL);
    int64_t a_shape[2] = {3, 4}, b_shape[2] = {5, 6};
    gs_tensor a = gs_zeros(GS_F32, a_shape, 2), b = gs_zeros(GS_F32, b_shape, 2);
    gs_sub(a, b);
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed();
  g_test_trap_assert_stderr("*gradscope: error: sub: shapes [3, 4] and [5, 6] cannot be "
                            "broadcast together*");
}

#define PER_THREAD 20000

static void *churn(void *arg) {
  gs_tensor *kept = arg;
  int64_t shape[1] = {4};
  for (int i = 0; i < PER_THREAD; i++) {
    gs_tensor a = gs_full(GS_F32, shape, 1, (double)i);
    gs_tensor b = gs_add_scalar(a, 1.0);
    if (gs_get(b, (int64_t[]){3}) != (double)i + 1.0)
      return (void *)1;
    gs_dispose(a);
    if (i % 100 == 0)
      kept[i / 100] = b; /* keep some alive so slots interleave between threads */
    else
      gs_dispose(b);
  }
  return NULL;
}

static void test_two_threads_create_and_dispose(void) {
  uint64_t before = gs_live_tensor_count();
  gs_tensor kept[2][PER_THREAD / 100];
  pthread_t threads[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&threads[i], NULL, churn, kept[i]);
  for (int i = 0; i < 2; i++) {
    void *result;
    pthread_join(threads[i], &result);
    g_assert_null(result);
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, before + 2 * (PER_THREAD / 100));
  /* Every kept handle is distinct and alive, with its own value. */
  GHashTable *ids = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < PER_THREAD / 100; i++) {
      g_assert_true(gs_is_alive(kept[t][i]));
      g_assert_cmpfloat(gs_get(kept[t][i], (int64_t[]){0}), ==, i * 100.0 + 1.0);
      g_assert_false(g_hash_table_contains(ids, &kept[t][i].id));
      g_hash_table_add(ids, &kept[t][i].id);
    }
  }
  g_hash_table_destroy(ids);
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < PER_THREAD / 100; i++)
      gs_dispose(kept[t][i]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, before);
}

static void test_event_counter_advances(void) {
  uint64_t e0 = gs_event_counter();
  gs_tensor t = gs_zeros(GS_F32, NULL, 0);
  uint64_t e1 = gs_event_counter();
  gs_fill_(t, 2.0);
  uint64_t e2 = gs_event_counter();
  gs_dispose(t);
  g_assert_cmpuint(e1, >, e0);
  g_assert_cmpuint(e2, >, e1);
  g_assert_cmpuint(gs_event_counter(), >, e2);
}

static void test_many_handles_across_pages(void) {
  enum { COUNT = 5000 }; /* more than one page of slots */
  uint64_t live = gs_live_tensor_count();
  gs_tensor *ts = g_new(gs_tensor, COUNT);
  for (int i = 0; i < COUNT; i++)
    ts[i] = gs_scalar(GS_I64, i);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + COUNT);
  for (int i = 0; i < COUNT; i += 97)
    g_assert_cmpfloat(gs_item(ts[i]), ==, (double)i);
  for (int i = 0; i < COUNT; i++)
    gs_dispose(ts[i]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  g_free(ts);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/handles/create-dispose-counts", test_create_dispose_counts);
  g_test_add_func("/handles/stale-handle-names-its-disposal", test_stale_handle_names_its_disposal);
  g_test_add_func("/handles/reused-slot-keeps-old-handle-stale",
                  test_reused_slot_keeps_old_handle_stale);
  g_test_add_func("/handles/stale-handle-keeps-its-story-after-100-reuses",
                  test_stale_handle_keeps_its_story_after_100_reuses);
  g_test_add_func("/handles/stale-handle-beyond-history-says-so",
                  test_stale_handle_beyond_history_says_so);
  g_test_add_func("/handles/forged-and-empty-handles", test_forged_and_empty_handles);
  g_test_add_func("/handles/error-returns-empty-handle-and-keeps-state",
                  test_error_returns_empty_handle_and_keeps_state);
  g_test_add_func("/handles/installable-handler", test_installable_handler);
  g_test_add_func("/handles/default-handler-aborts-with-message",
                  test_default_handler_aborts_with_message);
  g_test_add_func("/handles/two-threads-create-and-dispose", test_two_threads_create_and_dispose);
  g_test_add_func("/handles/event-counter-advances", test_event_counter_advances);
  g_test_add_func("/handles/many-handles-across-pages", test_many_handles_across_pages);
  return g_test_run();
}
