/* test-handles.c: tensor handles: creation and disposal, stale and forged handles reported
 * with who disposed them, slot reuse that never revives an old handle, the live count and the
 * event counter, and handles used from several threads at once. */
#include <pthread.h>

#include "test-util.h"

static const int64_t shape4[] = {4};

static void test_create_dispose_alive(void) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor t = gs_zeros(GS_F32, shape4, 1);
  g_assert_true(t.id != 0);
  g_assert_true(gs_is_alive(t));
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + 1);
  gs_dispose(t);
  g_assert_false(gs_is_alive(t));
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_empty_handle(void) {
  gs_dispose(GS_NO_TENSOR); /* allowed, like free(NULL) */
  g_assert_false(gs_is_alive(GS_NO_TENSOR));
  g_assert_true(gs_tensor_is_none(GS_NO_TENSOR));
  EXPECT_ERROR(g_assert_cmpint(gs_numel(GS_NO_TENSOR), ==, -1), "got the empty handle");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
}

static void test_stale_handle_names_disposer(void) {
  gs_tensor t = gs_ones(GS_F32, shape4, 1);
  gs_dispose(t);
  uint64_t disposed_at = gs_event_counter();
  char expected[128];
  g_snprintf(expected, sizeof expected, "disposed by gs_dispose at event %" G_GUINT64_FORMAT,
             disposed_at);
  gs_tensor r = GS_NO_TENSOR;
  EXPECT_ERROR(r = gs_neg(t), expected);
  g_assert_true(gs_tensor_is_none(r));
  g_assert_true(g_str_has_prefix(gs_last_error(), "neg: "));
  EXPECT_ERROR(gs_dispose(t), "stale"); /* disposing twice is an error, not a double free */
}

static void test_reused_slot_keeps_old_handle_stale(void) {
  gs_tensor old = gs_ones(GS_F32, shape4, 1);
  gs_dispose(old);
  gs_tensor fresh = gs_zeros(GS_F32, shape4, 1); /* takes the freed slot */
  g_assert_cmpuint(fresh.id & 0xffffffffu, ==, old.id & 0xffffffffu);
  g_assert_cmpuint(fresh.id, !=, old.id);
  g_assert_false(gs_is_alive(old));
  EXPECT_ERROR(gs_fill_(old, 3.0), "stale");
  g_assert_cmpfloat(gs_get(fresh, (int64_t[]){0}), ==, 0.0); /* the write did not land */
  gs_dispose(fresh);
}

static void test_forged_handle(void) {
  gs_tensor forged = {((uint64_t)7 << 32) | 0x7fffffffu};
  g_assert_false(gs_is_alive(forged));
  EXPECT_ERROR(gs_ndim(forged), "never created");
  gs_tensor t = gs_ones(GS_F32, shape4, 1);
  gs_tensor future = {t.id + ((uint64_t)5 << 32)}; /* a generation the slot never had */
  EXPECT_ERROR(gs_ndim(future), "never created");
  gs_dispose(t);
}

static void test_event_counter_advances(void) {
  uint64_t e0 = gs_event_counter();
  gs_tensor t = gs_zeros(GS_F32, shape4, 1);
  uint64_t e1 = gs_event_counter();
  g_assert_cmpuint(e1, >, e0);
  gs_add_scalar_(t, 1.0);
  uint64_t e2 = gs_event_counter();
  g_assert_cmpuint(e2, >, e1);
  (void)gs_numel(t); /* reading is not an event */
  g_assert_cmpuint(gs_event_counter(), ==, e2);
  gs_dispose(t);
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

static void *churn(void *arg) {
  int id = GPOINTER_TO_INT(arg);
  for (int i = 0; i < 2000; i++) {
    gs_tensor a = gs_full(GS_F64, shape4, 1, id);
    gs_tensor b = gs_add_scalar(a, i);
    if (gs_get(b, (int64_t[]){3}) != (double)(id + i))
      return GINT_TO_POINTER(1);
    gs_dispose(a);
    gs_dispose(b);
  }
  return NULL;
}

static void test_threads_create_and_dispose(void) {
  enum { THREADS = 4 };
  pthread_t threads[THREADS];
  uint64_t live = gs_live_tensor_count();
  for (int i = 0; i < THREADS; i++)
    g_assert_cmpint(pthread_create(&threads[i], NULL, churn, GINT_TO_POINTER(i)), ==, 0);
  for (int i = 0; i < THREADS; i++) {
    void *result;
    pthread_join(threads[i], &result);
    g_assert_null(result);
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_last_error_is_per_thread_and_clearable(void) {
  EXPECT_ERROR(gs_ndim(GS_NO_TENSOR), "empty handle");
  g_assert_cmpstr(gs_last_error(), !=, "");
  gs_clear_error();
  g_assert_cmpstr(gs_last_error(), ==, "");
  g_assert_cmpint(gs_last_error_code(), ==, GS_OK);
  g_assert_cmpstr(gs_error_code_name(GS_ERR_SHAPE), ==, "shape mismatch");
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/handles/create-dispose-alive", test_create_dispose_alive);
  g_test_add_func("/handles/empty-handle", test_empty_handle);
  g_test_add_func("/handles/stale-handle-names-disposer", test_stale_handle_names_disposer);
  g_test_add_func("/handles/reused-slot-keeps-old-handle-stale",
                  test_reused_slot_keeps_old_handle_stale);
  g_test_add_func("/handles/forged-handle", test_forged_handle);
  g_test_add_func("/handles/event-counter-advances", test_event_counter_advances);
  g_test_add_func("/handles/many-handles-across-pages", test_many_handles_across_pages);
  g_test_add_func("/handles/threads-create-and-dispose", test_threads_create_and_dispose);
  g_test_add_func("/handles/last-error-clearable", test_last_error_is_per_thread_and_clearable);
  return g_test_run();
}
