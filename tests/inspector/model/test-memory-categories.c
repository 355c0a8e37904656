/* test-memory-categories.c: the memory categories mean what they say, on logs the real engine
 * records: the digits example's standardised dataset is data (its exact byte size) while
 * its dataset lives and the program's after; tensors a loop leaks are held by the program;
 * a leaked softmax output is saved for backward only while a graph that can still run leads
 * to it; and at every event the series the timeline draws equals the bytes counted from
 * scratch (a pair of events unfolded from one counted as one step), and every seek equals a
 * fresh replay. */
#include <glib/gstdio.h>
#include <string.h>

#include "model-test-util.h"
#include "object-groups.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void categories_at(gs_trace_model *m, guint64 at, guint64 *cats) {
  /* The series show a pair of events the reader unfolded from one as one step, its result at
   * the first: the count from scratch is taken after the pair. */
  gs_trace_event e;
  guint64 step_end = at;
  if (at + 1 < gs_trace_model_n_events(m) && gs_trace_model_event(m, at, &e) &&
      event_opens_pair(&e))
    step_end = at + 1;
  const gs_replay *r = gs_trace_model_seek(m, step_end);
  gs_trace_model_category_bytes(m, r, cats);
  guint64 sum = 0;
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    sum += cats[c];
  g_assert_cmpuint(sum, ==, r->live_bytes);
  /* The series the timeline draws holds the same at that event. */
  gs_memory_column col;
  gs_trace_model_memory_columns(m, at, at, 1, FALSE, &col);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    g_assert_cmpuint(col.stack[c], ==, cats[c]);
}

static guint64 mark(gs_trace_model *m, const char *label) {
  guint64 at = find_event(m, 0, GS_TRACE_MARK, label);
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  return at;
}

/* The bytes of the distinct storages the objects view, at the model's current moment. */
static guint64 storage_bytes(const gs_replay *r, const guint64 *ids, guint n) {
  g_autoptr(GHashTable) seen = g_hash_table_new(gs_id_hash, gs_id_equal);
  guint64 total = 0;
  for (guint i = 0; i < n; i++) {
    const gs_replay_object *o = gs_replay_object_get(r, ids[i]);
    g_assert_nonnull(o);
    if (g_hash_table_contains(seen, &o->storage))
      continue;
    g_hash_table_add(seen, (gpointer)&o->storage);
    guint64 bytes = 0;
    g_assert_true(gs_replay_storage(r, o->storage, &bytes, NULL));
    total += bytes;
  }
  return total;
}

/* ---- the digits example ------------------------------------------------------------------- */

#define DIGITS_ROWS 1797
#define DIGITS_PIXELS 64

static gs_trace_model *record_digits(char **path_out) {
  const char *example = g_getenv("GS_DIGITS_EXAMPLE");
  g_assert_nonnull(example); /* meson.build sets it */
  g_autofree char *dir = g_dir_make_tmp("gradscope-digits-XXXXXX", NULL);
  char *path = g_build_filename(dir, "digits.gstrace", NULL);
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GS_TRACE", path, TRUE);
  const char *argv[] = {example, NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                             NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));
  *path_out = path;
  return m;
}

static void test_digits_dataset_is_data(void) {
  char *path = NULL;
  gs_trace_model *m = record_digits(&path);
  guint64 made = find_event(m, 0, GS_TRACE_COMPOSITE_CREATE, NULL);
  g_assert_cmpuint(made, !=, G_MAXUINT64);
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, made, &e));
  g_assert_cmpuint(e.object_kind, ==, GS_OBJECT_DATASET);
  g_assert_cmpuint(e.n_parts, ==, 2); /* pixels and labels of the training rows */
  guint64 dataset = e.object, parts[2] = {e.parts[0], e.parts[1]};

  /* The dataset reads views of the standardised matrix and of the labels: their storages,
   * the whole matrix (1797 rows of 64 f32: 449 KiB) and the labels (i64), are data. */
  const gs_replay *r = gs_trace_model_seek(m, made);
  guint64 data_bytes = storage_bytes(r, parts, 2);
  g_assert_cmpuint(data_bytes, ==, DIGITS_ROWS * DIGITS_PIXELS * 4 + DIGITS_ROWS * 8);
  guint64 cats[GS_MEM_N_CATEGORIES];
  categories_at(m, made, cats);
  g_assert_cmpuint(cats[GS_MEM_DATA], ==, data_bytes);
  for (guint i = 0; i < 2; i++)
    g_assert_cmpint(gs_trace_model_category(m, r, gs_replay_object_get(r, parts[i])), ==,
                    GS_MEM_DATA);
  /* The alive list's group words say what the chart counts them as: not plainly "held by the
   * program", which is another category's name. */
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  g_autoptr(GPtrArray) groups = gs_object_groups(r, alive, gs_trace_model_sites(m));
  guint read = 0;
  for (guint i = 0; i < groups->len; i++) {
    const gs_object_group *g = groups->pdata[i];
    for (guint k = 0; k < g->members->len; k++) {
      const gs_replay_object *o = g->members->pdata[k];
      if (o->id == parts[0] || o->id == parts[1]) {
        g_assert_cmpstr(g->holder, ==, "held by the program, read by a dataset");
        read++;
      }
    }
  }
  g_assert_cmpuint(read, ==, 2);

  /* Between steps: parameters, optimizer state and data, nothing held by the program or a
   * scope, nothing saved, nothing unexplained. */
  guint64 epoch = mark(m, "epoch 10");
  categories_at(m, epoch, cats);
  g_assert_cmpuint(cats[GS_MEM_DATA], ==, data_bytes);
  g_assert_cmpuint(cats[GS_MEM_PARAMETERS], ==, (64 * 128 + 128 + 128 * 10 + 10) * 4);
  g_assert_cmpuint(cats[GS_MEM_OPTIMIZER_STATE], ==, 2 * (64 * 128 + 128 + 128 * 10 + 10) * 4);
  g_assert_cmpuint(cats[GS_MEM_PROGRAM], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_TEMPORARIES], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_OTHER], ==, 0);

  /* Inside a step the step's tensors are scope temporaries and the graph's saved tensors
   * saved for backward; the data stays data. */
  guint64 backward = find_event(m, epoch, GS_TRACE_BACKWARD_BEGIN, NULL);
  g_assert_cmpuint(backward, !=, G_MAXUINT64);
  categories_at(m, backward, cats);
  g_assert_cmpuint(cats[GS_MEM_DATA], ==, data_bytes);
  g_assert_cmpuint(cats[GS_MEM_TEMPORARIES], >, 0);
  g_assert_cmpuint(cats[GS_MEM_SAVED], >, 0);
  g_assert_cmpuint(cats[GS_MEM_PROGRAM], ==, 0);

  /* Once released, the dataset reads nothing: the same bytes are the program's, until it
   * disposes them. */
  guint64 released = G_MAXUINT64;
  for (guint64 i = backward; i < gs_trace_model_n_events(m) && released == G_MAXUINT64; i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_TENSOR_DISPOSE &&
        gs_trace_model_event(m, i, &e) && e.tensor == dataset)
      released = i;
  g_assert_cmpuint(released, !=, G_MAXUINT64);
  g_assert_cmpstr(gs_trace_model_string(m, e.name), ==, "gs_dataset_release");
  categories_at(m, released, cats);
  g_assert_cmpuint(cats[GS_MEM_DATA], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_PROGRAM], ==, data_bytes);

  /* The series equals the bytes counted from scratch all along (a sample of moments). */
  guint64 n = gs_trace_model_n_events(m);
  for (guint64 i = 0; i < n; i += n / 200)
    categories_at(m, i, cats);
  gs_trace_model_free(m);
  remove_log(path);
}

/* ---- a leak loop -------------------------------------------------------------------------- */

#define LEAKS 5
static guint64 leaked_ids[LEAKS], softmax_ids[LEAKS], kept_softmax_id;

/* A loop that forgets to dispose what it makes (4x8 f32: 128 bytes each), then softmax
 * outputs kept past their graph: first with a graph that can still run (the loss alive), then
 * with the loss gone before backward, then after a backward that freed the saved tensors. */
static void leak_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  const int64_t shape[] = {4, 8};
  for (int i = 0; i < LEAKS; i++) {
    gs_tensor x = gs_randn(GS_F32, shape, 2, &rng);
    leaked_ids[i] = gs_mul_scalar(x, 2.0).id; /* never disposed */
    gs_dispose(x);
  }
  gs_trace_mark("leaked");
  gs_tensor w = gs_parameter_new(gs_randn(GS_F32, (int64_t[]){8, 8}, 2, &rng), true);
  for (int i = 0; i < LEAKS; i++) {
    gs_tensor x = gs_randn(GS_F32, shape, 2, &rng);
    gs_tensor h = gs_matmul(x, w);
    gs_tensor p = gs_softmax(h, 1); /* SoftmaxBackward saves p itself */
    gs_tensor pp = gs_mul(p, p);
    gs_tensor loss = gs_sum(pp, NULL, 0, false);
    if (i == 0)
      gs_trace_mark("graph alive");
    if (i == LEAKS - 1)
      gs_backward(loss); /* frees every saved tensor of the graph */
    gs_dispose(loss), gs_dispose(pp);
    gs_dispose(h), gs_dispose(x);
    softmax_ids[i] = p.id; /* leaked with its SoftmaxBackward and what leads to it */
  }
  gs_trace_mark("graphs gone");
  /* A softmax output still on its way to a loss: its graph can run, so it is saved. */
  gs_tensor x = gs_randn(GS_F32, shape, 2, &rng);
  gs_tensor h = gs_matmul(x, w);
  gs_tensor p = gs_softmax(h, 1);
  kept_softmax_id = p.id;
  gs_dispose(h);
  gs_tensor loss = gs_sum(p, NULL, 0, false);
  gs_trace_mark("pending");
  gs_dispose(loss);
  gs_trace_mark("pending gone");
}

static void test_leaks_are_held_by_the_program(void) {
  char *path = record_log(leak_work);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 23);
  g_assert_null(gs_trace_model_problem(m));
  guint64 cats[GS_MEM_N_CATEGORIES];

  guint64 at = mark(m, "leaked");
  categories_at(m, at, cats);
  g_assert_cmpuint(cats[GS_MEM_PROGRAM], ==, LEAKS * 4 * 8 * 4);
  g_assert_cmpuint(cats[GS_MEM_TEMPORARIES], ==, 0);
  const gs_replay *r = gs_trace_model_seek(m, at);
  for (int i = 0; i < LEAKS; i++) {
    const gs_replay_object *o = gs_replay_object_get(r, leaked_ids[i]);
    g_assert_cmpint(gs_trace_model_category(m, r, o), ==, GS_MEM_PROGRAM);
  }

  /* While the loss lives, backward can still reach the softmax: its output is saved. */
  at = mark(m, "graph alive");
  r = gs_trace_model_seek(m, at);
  const gs_replay_object *o = gs_replay_object_get(r, softmax_ids[0]);
  g_assert_cmpint(gs_trace_model_category(m, r, o), ==, GS_MEM_SAVED);
  g_autofree char *label = gs_trace_model_owner_label(m, r, o);
  g_assert_nonnull(strstr(label, "; saved by SoftmaxBackward #"));

  /* With the losses gone, each leaked output keeps its SoftmaxBackward alive in the engine,
   * but nothing can run it: the outputs are the program's, not backward's. */
  at = mark(m, "graphs gone");
  r = gs_trace_model_seek(m, at);
  guint alive_nodes = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *n = value;
    alive_nodes += strcmp(n->kind, "SoftmaxBackward") == 0;
    if (strcmp(n->kind, "AccumulateGrad") != 0) /* w's own, held by w */
      g_assert_false(n->runnable);
  }
  g_assert_cmpuint(alive_nodes, ==, LEAKS);
  for (int i = 0; i < LEAKS; i++) {
    o = gs_replay_object_get(r, softmax_ids[i]);
    g_assert_cmpint(gs_trace_model_category(m, r, o), ==, GS_MEM_PROGRAM);
    g_autofree char *held = gs_trace_model_owner_label(m, r, o);
    g_assert_cmpstr(held, ==, "the program");
  }
  categories_at(m, at, cats);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_PROGRAM], ==, 2 * LEAKS * 4 * 8 * 4);
  g_assert_cmpuint(cats[GS_MEM_PARAMETERS], ==, 8 * 8 * 4);
  /* The matmul inputs the unreachable graphs still keep (disposed by the program, freed
   * by none of the four graphs that never ran backward) are the only other bytes. */
  g_assert_cmpuint(cats[GS_MEM_OTHER], ==, (LEAKS - 1) * 4 * 8 * 4);

  /* A new graph on its way to a loss: saved; its loss gone: the program's again. */
  at = mark(m, "pending");
  r = gs_trace_model_seek(m, at);
  g_assert_cmpint(gs_trace_model_category(m, r, gs_replay_object_get(r, kept_softmax_id)), ==,
                  GS_MEM_SAVED);
  categories_at(m, at, cats);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, 2 * 4 * 8 * 4); /* p, and x saved by MmBackward */
  at = mark(m, "pending gone");
  r = gs_trace_model_seek(m, at);
  g_assert_cmpint(gs_trace_model_category(m, r, gs_replay_object_get(r, kept_softmax_id)), ==,
                  GS_MEM_PROGRAM);
  categories_at(m, at, cats);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, 0);

  /* Every event: the series equals a count from scratch, every seek a fresh replay. */
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    categories_at(m, i, cats);
  assert_seeks_equal_fresh_replay(m, bytes, 400, 100, 50, 7);
  gs_trace_model_free(m);
  remove_log(path);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/memory-categories/digits-dataset-is-data", test_digits_dataset_is_data);
  g_test_add_func("/memory-categories/leaks-are-held-by-the-program",
                  test_leaks_are_held_by_the_program);
  return g_test_run();
}
