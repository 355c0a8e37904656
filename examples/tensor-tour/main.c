/* tensor-tour: a guided walk through the Gradscope engine core, printed as it goes.
 *
 * Creation, views that share memory, broadcasting, clone (a copy that costs nothing until
 * someone writes), detach and the version counter that in-place writes bump, a write through
 * a view under autograd (CopySlices, as in PyTorch), the caching
 * allocator's statistics, and errors that come back as messages through an installed handler
 * instead of aborting. It disposes everything it made; its last lines are machine-readable
 * (name=value) and it exits non-zero if anything leaked or an expected error did not happen.
 */
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <string.h>

/* Each section is a mark in the event log (GS_TRACE=run.gstrace), so the inspector's
 * timeline and event list show where it starts. */
static void section(const char *title) {
  gs_trace_mark(title);
  printf("\n== %s ==\n", title);
}

/* The log calls t by its variable's name ("c", not "#12.1"). */
static gs_tensor named(gs_tensor t, const char *name) {
  gs_trace_name(t, name);
  return t;
}

static void show(const char *name, gs_tensor t) {
  char desc[128];
  printf("%s %s, strides", name, gs_describe(t, desc, sizeof desc));
  int64_t strides[GS_MAX_DIMS];
  int ndim = gs_strides(t, strides);
  for (int i = 0; i < ndim; i++)
    printf("%s%lld", i ? "," : " ", (long long)strides[i]);
  printf(", storage #%llu, version %lld%s\n", (unsigned long long)gs_storage_id(t),
         (long long)gs_version(t), gs_is_copy_on_write(t) ? ", copy-on-write" : "");
  gs_print(stdout, t);
}

/* The handler this program installs: it keeps the message and returns, so the failed call
 * yields the empty handle and the program carries on (what tests and bindings do). */
typedef struct caught_errors {
  int count;
  char last[1024];
} caught_errors;

static void keep_error(const gs_error *error, void *user_data) {
  caught_errors *caught = user_data;
  caught->count++;
  snprintf(caught->last, sizeof caught->last, "%s", error->message);
}

static void print_memory(const char *when) {
  gs_memory_stats s;
  gs_memory_get_stats(&s);
  printf("memory %s: %llu storages, %llu bytes in use (peak %llu), %llu reserved; "
         "%llu allocations, %llu from the cache\n",
         when, (unsigned long long)s.live_storages, (unsigned long long)s.bytes_in_use,
         (unsigned long long)s.peak_bytes_in_use, (unsigned long long)s.bytes_reserved,
         (unsigned long long)s.allocations, (unsigned long long)s.cache_hits);
}

int main(void) {
  int failures = 0;
#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "tensor-tour: check failed: %s (line %d)\n", #cond, __LINE__);         \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

  section("creation");
  int64_t shape23[] = {2, 3};
  gs_tensor range = named(gs_arange(0, 6, 1, GS_F32), "range");
  /* [[0 1 2] [3 4 5]] over range's storage */
  gs_tensor a = named(gs_view(range, shape23, 2), "a");
  show("a", a);
  const float row_values[] = {10, 20, 30};
  int64_t shape3[] = {3};
  gs_tensor row = named(gs_from_data(GS_F32, shape3, 1, row_values), "row");
  show("row", row);
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  gs_tensor noise = named(gs_randn(GS_F32, shape23, 2, &rng), "noise");
  show("noise (seed 42)", noise);

  section("views share the storage");
  gs_tensor at = named(gs_transpose(a, 0, 1), "at");
  show("a.T", at);
  gs_tensor col = named(gs_select(a, 1, 2), "col"); /* a[:, 2] */
  show("a[:, 2]", col);
  CHECK(gs_storage_id(at) == gs_storage_id(a) && gs_storage_id(col) == gs_storage_id(a));
  gs_fill_(col, -1.0); /* writes through the view into a */
  printf("after a[:, 2].fill_(-1):\n");
  gs_print(stdout, a);
  CHECK(gs_get(a, (int64_t[]){1, 2}) == -1.0);

  section("broadcasting");
  gs_tensor sum = named(gs_add(a, row), "sum"); /* [2, 3] + [3] */
  show("a + row", sum);
  int64_t shape31[] = {3, 1}, shape14[] = {1, 4};
  gs_tensor tall = named(gs_arange(1, 4, 1, GS_F32), "tall");
  gs_tensor wide = named(gs_arange(1, 5, 1, GS_F32), "wide");
  gs_tensor tall31 = named(gs_view(tall, shape31, 2), "tall31");
  gs_tensor wide14 = named(gs_view(wide, shape14, 2), "wide14");
  gs_tensor table = named(gs_mul(tall31, wide14), "table"); /* [3, 1] * [1, 4] -> [3, 4] */
  show("[3,1] * [1,4]", table);
  CHECK(gs_size(table, 0) == 3 && gs_size(table, 1) == 4 && gs_get(table, (int64_t[]){2, 3}) == 12);

  section("clone: a copy that costs O(1) until someone writes");
  gs_memory_stats before, after;
  gs_memory_get_stats(&before);
  gs_tensor c = named(gs_clone(a), "c");
  gs_memory_get_stats(&after);
  show("c = a.clone()", c);
  printf("cloning allocated %llu bytes\n",
         (unsigned long long)(after.bytes_in_use - before.bytes_in_use));
  CHECK(after.bytes_in_use == before.bytes_in_use && gs_is_copy_on_write(c));
  gs_add_scalar_(c, 100.0); /* the first write copies the bytes; a is untouched */
  show("c after c += 100", c);
  show("a", a);
  CHECK(!gs_is_copy_on_write(c) && !gs_is_copy_on_write(a));
  CHECK(gs_get(a, (int64_t[]){0, 0}) == 0.0 && gs_get(c, (int64_t[]){0, 0}) == 100.0);

  section("detach shares storage and version counter");
  gs_tensor d = named(gs_detach(a), "d");
  int64_t version_before = gs_version(a);
  gs_mul_scalar_(d, 2.0); /* an in-place write through the detached alias */
  printf("version of a: %lld before d *= 2, %lld after (c, a clone, stays at %lld)\n",
         (long long)version_before, (long long)gs_version(a), (long long)gs_version(c));
  gs_print(stdout, a);
  CHECK(gs_version(a) == version_before + 1 && gs_storage_id(d) == gs_storage_id(a));

  section("autograd: a write through a view rewrites its base's history");
  const float x_values[] = {1, 2, 3};
  gs_tensor leaf = named(gs_from_data(GS_F32, shape3, 1, x_values), "leaf");
  gs_set_requires_grad(leaf, true);
  gs_tensor h = named(gs_mul_scalar(leaf, 2.0), "h"); /* h = 2 leaf, a non-leaf */
  gs_tensor head = named(gs_narrow(h, 0, 0, 2), "head"); /* h[0:2], a view */
  gs_mul_scalar_(head, 10.0);                /* h[0:2] *= 10 */
  printf("h.grad_fn = %s, h[0:2].grad_fn = %s\n", gs_grad_fn_name(h), gs_grad_fn_name(head));
  gs_tensor loss = named(gs_sum(h, NULL, 0, false), "loss");
  gs_backward(loss);
  gs_tensor x_grad = gs_grad(leaf);
  show("d sum(h) / d leaf", x_grad);             /* 20, 20, 2 */
  CHECK(strcmp(gs_grad_fn_name(h), "CopySlices") == 0);
  CHECK(gs_get(x_grad, (int64_t[]){0}) == 20.0 && gs_get(x_grad, (int64_t[]){2}) == 2.0);

  section("errors come back through the installed handler");
  caught_errors caught = {0};
  void *previous_user_data;
  gs_error_handler previous = gs_set_error_handler(keep_error, &caught, &previous_user_data);
  int64_t shape4[] = {4};
  gs_tensor four = named(gs_ones(GS_F32, shape4, 1), "four");
  gs_tensor bad = gs_add(a, four); /* [2, 3] + [4] cannot broadcast */
  printf("gs_add([2, 3], [4]) -> %s handle; message: %s\n",
         gs_tensor_is_none(bad) ? "empty" : "a", caught.last);
  CHECK(gs_tensor_is_none(bad) && strstr(caught.last, "cannot be broadcast"));
  gs_dispose(four);
  gs_tensor again = gs_neg(four); /* a disposed handle is reported, never reused */
  printf("gs_neg(disposed) -> %s handle; message: %s\n",
         gs_tensor_is_none(again) ? "empty" : "a", caught.last);
  CHECK(gs_tensor_is_none(again) && strstr(caught.last, "stale"));
  gs_set_error_handler(previous, previous_user_data, NULL);
  CHECK(caught.count == 2);

  section("the caching allocator");
  print_memory("now");
  int64_t shape_big[] = {256, 256};
  for (int step = 0; step < 100; step++) { /* the same shapes every step, as in training */
    gs_tensor x = gs_ones(GS_F32, shape_big, 2);
    gs_tensor y = gs_mul_scalar(x, 0.5);
    gs_dispose(x);
    gs_dispose(y);
  }
  print_memory("after 100 steps of 2 x 256 KiB");

  gs_tensor all[] = {range, a, row, noise, at, col, sum, tall, wide, tall31, wide14, table,
                     c, d, leaf, h, head, loss};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    gs_dispose(all[i]);
  gs_memory_empty_cache();
  print_memory("after disposing everything and emptying the cache");

  gs_memory_stats end;
  gs_memory_get_stats(&end);
  uint64_t live = gs_live_tensor_count();
  CHECK(live == 0 && end.live_storages == 0 && end.bytes_in_use == 0);

  printf("\n");
  printf("errors_caught=%d\n", caught.count);
  printf("events=%llu\n", (unsigned long long)gs_event_counter());
  printf("live_storages=%llu\n", (unsigned long long)end.live_storages);
  printf("bytes_in_use=%llu\n", (unsigned long long)end.bytes_in_use);
  printf("live_tensors=%llu\n", (unsigned long long)live);
  printf("checks_failed=%d\n", failures);
  return failures ? 1 : 0;
}
