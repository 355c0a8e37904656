/* test-trace-model-state.c: the trace model's moments on logs the engine records here: alive
 * sets and bytes at chosen events (hand-checked), scope statistics equal to the engine's own
 * counters, categories and owners in words, every seek equal to a fresh replay of the events
 * up to it (forward, backward, random), and memory columns equal to exact sums. */
#include <string.h>

#include "model-test-util.h"

/* ---- a small run whose every byte is accounted for by hand --------------------------------- */

/* An object that must be alive (the test stops if it is not). */
static const gs_replay_object *alive_object(const gs_replay *r, guint64 id) {
  const gs_replay_object *o = gs_replay_object_find(r, id);
  if (!o)
    g_error("object #%" G_GUINT64_FORMAT " is not alive", id);
  return o;
}

static gs_scope_info step_info; /* the engine's own account of "step", just before it ends */
static guint64 w_id, x_id, v_id, c_id, y_id;

/* 4x4 f32 = 64 bytes each. */
static void lifecycle_work(void) {
  const int64_t shape[] = {4, 4};
  gs_module lin = gs_module_new("Linear");
  gs_tensor w = gs_parameter_new(gs_ones(GS_F32, shape, 2), true); /* 64: parameters */
  gs_module_register_parameter(lin, "weight", w);
  w_id = w.id;
  gs_trace_mark("start");
  gs_scope s = gs_scope_begin("step");
  gs_tensor x = gs_full(GS_F32, shape, 2, 2.0); /* 64: temporaries */
  gs_trace_name(x, "x");
  gs_tensor v = gs_t(x);     /* a view: no bytes */
  gs_tensor c = gs_clone(x); /* copy-on-write: no bytes yet */
  gs_tensor y = gs_mul(w, x); /* 64; MulBackward saves w and x */
  gs_trace_mark("after mul");
  gs_fill_(c, 3.0); /* c materialises: 64 */
  gs_trace_mark("after fill");
  x_id = x.id, v_id = v.id, c_id = c.id, y_id = y.id;
  gs_tensor loss = gs_sum(y, NULL, 0, false);
  gs_backward(loss); /* w's grad: 64, gradients */
  gs_trace_mark("after backward");
  step_info = gs_scope_get_info(s);
  gs_scope_end(s);
  gs_module_dispose(lin);
}

typedef recorded_model fixture;

/* Keyframes every 37 events: seeks restore from many keyframes, borrowing ended scopes. */
static void fixture_init(fixture *f, workload_fn body) {
  recorded_model_init(f, body, 37);
  g_assert_cmpuint(gs_trace_model_n_events(f->m), >, 0);
}

static guint64 mark(gs_trace_model *m, const char *label) {
  guint64 at = find_event(m, 0, GS_TRACE_MARK, label);
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  return at;
}

static void assert_categories(gs_trace_model *m, guint64 at, guint64 params, guint64 grads,
                              guint64 saved, guint64 temps) {
  const gs_replay *r = gs_trace_model_seek(m, at);
  guint64 cats[GS_MEM_N_CATEGORIES];
  gs_trace_model_category_bytes(m, r, cats);
  g_assert_cmpuint(cats[GS_MEM_PARAMETERS], ==, params);
  g_assert_cmpuint(cats[GS_MEM_GRADIENTS], ==, grads);
  g_assert_cmpuint(cats[GS_MEM_OPTIMIZER_STATE], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_BATCH], ==, 0);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, saved);
  g_assert_cmpuint(cats[GS_MEM_TEMPORARIES], ==, temps);
  /* The series the timeline draws holds the same values at that event. */
  gs_memory_column col;
  gs_trace_model_memory_columns(m, at, at, 1, FALSE, &col);
  g_assert_cmpuint(col.max_total, ==, r->live_bytes);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    g_assert_cmpuint(col.stack[c], ==, cats[c]);
}

static void test_alive_and_bytes_at_chosen_events(void) {
  fixture f;
  fixture_init(&f, lifecycle_work);
  gs_trace_model *m = f.m;

  /* At "start": only the parameter, held by its module. */
  const gs_replay *r = gs_trace_model_seek(m, mark(m, "start"));
  g_assert_cmpuint(r->live_bytes, ==, 64);
  g_assert_cmpuint(gs_replay_n_objects(r), ==, 1);
  const gs_replay_object *w = alive_object(r, w_id);
  g_assert_nonnull(w);
  g_assert_cmpuint(w->holder, ==, GS_TRACE_HELD_BY_MODULE);
  g_assert_true(w->parameter);
  g_assert_cmpint(gs_trace_model_category(m, r, w), ==, GS_MEM_PARAMETERS);
  g_autofree char *wl = gs_trace_model_owner_label(m, r, w);
  g_assert_true(g_str_has_prefix(wl, "module Linear #"));
  assert_categories(m, mark(m, "start"), 64, 0, 0, 0);

  /* After the product: w, x (saved by MulBackward), v (view of x), c (shares x's bytes), y. */
  r = gs_trace_model_seek(m, mark(m, "after mul"));
  g_assert_cmpuint(r->live_bytes, ==, 64 * 3);
  const gs_replay_object *x = alive_object(r, x_id);
  const gs_replay_object *v = alive_object(r, v_id);
  const gs_replay_object *c = alive_object(r, c_id);
  const gs_replay_object *y = alive_object(r, y_id);
  g_assert_nonnull(x);
  g_assert_nonnull(v);
  g_assert_nonnull(c);
  g_assert_nonnull(y);
  g_assert_cmpuint(x->saved_refs, ==, 1);
  g_assert_cmpint(gs_trace_model_category(m, r, x), ==, GS_MEM_SAVED);
  g_assert_cmpint(gs_trace_model_category(m, r, y), ==, GS_MEM_TEMPORARIES);
  g_autofree char *xl = gs_trace_model_owner_label(m, r, x);
  g_assert_true(g_str_has_prefix(xl, "scope step #"));
  g_assert_nonnull(strstr(xl, "; saved by MulBackward #"));
  g_assert_true(g_str_has_suffix(xl, " for backward"));
  /* x's storage is saved (64), y is a temporary (64), the parameter (64). */
  assert_categories(m, mark(m, "after mul"), 64, 0, 64, 64);

  /* The clone materialised its own 64 bytes: a temporary. */
  r = gs_trace_model_seek(m, mark(m, "after fill"));
  g_assert_cmpuint(r->live_bytes, ==, 64 * 4);
  assert_categories(m, mark(m, "after fill"), 64, 0, 64, 128);

  /* After backward: w's gradient (64) exists; backward freed the saved tensors, so x is a
   * temporary again; loss and its grad are small scalars (temporaries). */
  r = gs_trace_model_seek(m, mark(m, "after backward"));
  guint64 cats[GS_MEM_N_CATEGORIES];
  gs_trace_model_category_bytes(m, r, cats);
  g_assert_cmpuint(cats[GS_MEM_PARAMETERS], ==, 64);
  g_assert_cmpuint(cats[GS_MEM_GRADIENTS], ==, 64);
  g_assert_cmpuint(cats[GS_MEM_SAVED], ==, 0);
  g_assert_cmpuint(r->live_bytes, ==, cats[GS_MEM_PARAMETERS] + cats[GS_MEM_GRADIENTS] +
                                          cats[GS_MEM_TEMPORARIES]);
  x = alive_object(r, x_id);
  g_assert_cmpuint(x->saved_refs, ==, 0);

  /* At the end everything is gone. */
  r = gs_trace_model_seek(m, gs_trace_model_n_events(m) - 1);
  g_assert_cmpuint(r->live_bytes, ==, 0);
  g_assert_cmpuint(gs_replay_n_objects(r), ==, 0);
  g_assert_cmpuint(gs_trace_model_bytes_at(m, gs_trace_model_n_events(m) - 1), ==, 0);
  recorded_model_clear(&f);
}

static void test_scope_statistics_equal_the_engine(void) {
  fixture f;
  fixture_init(&f, lifecycle_work);
  g_assert_cmpuint(gs_trace_model_n_scopes(f.m), ==, 1);
  const gs_replay_scope *s = gs_trace_model_scope_at(f.m, 0);
  g_assert_cmpstr(s->name, ==, "step");
  g_assert_true(s->ended);
  g_assert_cmpuint(s->created, ==, step_info.created);
  g_assert_cmpuint(s->peak_bytes, ==, step_info.peak_bytes);
  g_assert_cmpuint(s->disposed, ==, step_info.disposed + step_info.alive);
  /* Just before its end, the state at that moment has the engine's numbers exactly. */
  guint64 end = find_event(f.m, 0, GS_TRACE_SCOPE_END, NULL);
  guint64 before_disposals = mark(f.m, "after backward");
  const gs_replay *r = gs_trace_model_seek(f.m, before_disposals);
  const gs_replay_scope *then = g_hash_table_lookup(r->scopes, &s->id);
  g_assert_cmpuint(then->created, ==, step_info.created);
  g_assert_cmpuint(then->disposed, ==, step_info.disposed);
  g_assert_cmpuint(then->alive, ==, step_info.alive);
  g_assert_cmpuint(then->bytes, ==, step_info.bytes);
  g_assert_cmpuint(then->peak_bytes, ==, step_info.peak_bytes);
  g_assert_false(then->ended);
  r = gs_trace_model_seek(f.m, end);
  g_assert_true(((const gs_replay_scope *)g_hash_table_lookup(r->scopes, &s->id))->ended);
  /* The tree: one root, no children. */
  const GArray *roots = gs_trace_model_scope_children(f.m, 0);
  g_assert_nonnull(roots);
  g_assert_cmpuint(roots->len, ==, 1);
  g_assert_null(gs_trace_model_scope_children(f.m, s->id));
  recorded_model_clear(&f);
}

/* ---- a longer run: nested scopes over many steps, for seeks and columns -------------------- */

#define STEPS 40

static void training_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  const int64_t w_shape[] = {6, 5}, x_shape[] = {7, 6};
  gs_module lin = gs_module_new("Linear");
  gs_tensor w = gs_parameter_new(gs_randn(GS_F32, w_shape, 2, &rng), true);
  gs_module_register_parameter(lin, "weight", w);
  gs_optimizer opt = gs_sgd_new(&w, 1, &(gs_sgd_options){.lr = 0.1, .momentum = 0.9});
  gs_scope epoch = gs_scope_begin("epoch");
  for (int step = 0; step < STEPS; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng);
    gs_tensor h = gs_relu(gs_matmul(x, w));
    gs_tensor loss = gs_mean(gs_mul(h, h), NULL, 0, false);
    gs_backward(loss);
    gs_scope inner = gs_scope_begin("update");
    gs_optimizer_step(opt);
    gs_scope_end(inner);
    gs_optimizer_zero_grad(opt);
    if (step % 7 == 0)
      gs_move_to_outer(gs_clone(x)); /* kept by the epoch */
    gs_scope_end(s);
    if (step % 10 == 9)
      gs_trace_flush(); /* several chunks */
  }
  gs_scope_end(epoch);
  gs_optimizer_dispose(opt);
  gs_module_dispose(lin);
}

static void test_seek_equals_fresh_replay(void) {
  fixture f;
  fixture_init(&f, training_work);
  gs_trace_model *m = f.m;
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(n, >, 2000);
  /* Forward one by one over a stretch, then backward, then random jumps; then the head. */
  assert_seeks_equal_fresh_replay(m, f.bytes, 300, 199, 60, 11);
  /* Scope tree: the epoch is the root, its steps its children, updates theirs. */
  const GArray *roots = gs_trace_model_scope_children(m, 0);
  g_assert_cmpuint(roots->len, ==, 1);
  const gs_replay_scope *epoch = gs_trace_model_scope_at(m, g_array_index(roots, guint, 0));
  g_assert_cmpstr(epoch->name, ==, "epoch");
  const GArray *steps = gs_trace_model_scope_children(m, epoch->id);
  g_assert_cmpuint(steps->len, ==, STEPS);
  for (guint i = 0; i < steps->len; i++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(m, g_array_index(steps, guint, i));
    g_assert_cmpstr(s->name, ==, "step");
    const GArray *kids = gs_trace_model_scope_children(m, s->id);
    g_assert_cmpuint(kids->len, ==, 1);
    g_assert_cmpstr(gs_trace_model_scope_at(m, g_array_index(kids, guint, 0))->name, ==,
                    "update");
  }
  recorded_model_clear(&f);
}

/* Every column's min, max and stacks equal sums computed from fresh replays. */
static void check_columns(fixture *f, guint64 first, guint64 last, guint columns,
                          gboolean by_scope, GArray *totals, GPtrArray *states) {
  gs_trace_model *m = f->m;
  g_autofree gs_memory_column *cols = g_new0(gs_memory_column, columns);
  gs_trace_model_memory_columns(m, first, last, columns, by_scope, cols);
  guint64 covered = 0;
  for (guint c = 0; c < columns; c++) {
    const gs_memory_column *col = &cols[c];
    if (col->first > col->last)
      continue;
    covered += col->last - col->first + 1;
    guint64 lo = G_MAXUINT64, hi = 0, hi_at = col->first;
    for (guint64 i = col->first; i <= col->last; i++) {
      guint64 v = g_array_index(totals, guint64, i);
      lo = MIN(lo, v);
      if (v > hi) { /* the first event where the largest total is reached */
        hi = v;
        hi_at = i;
      }
    }
    g_assert_cmpuint(col->min_total, ==, lo);
    g_assert_cmpuint(col->max_total, ==, hi);
    g_assert_cmpuint(col->max_index, ==, hi_at);
    const gs_replay *r = states->pdata[col->max_index];
    guint64 sum = 0;
    for (guint s = 0; s < col->n_stacks; s++)
      sum += col->stack[s];
    g_assert_cmpuint(sum, ==, hi);
    if (!by_scope) {
      guint64 cats[GS_MEM_N_CATEGORIES];
      gs_trace_model_category_bytes(m, r, cats);
      for (int k = 0; k < GS_MEM_N_CATEGORIES; k++)
        g_assert_cmpuint(col->stack[k], ==, cats[k]);
    } else {
      guint64 in_scopes = 0;
      for (guint g = 0; g < r->scope_group_list->len; g++) {
        const gs_replay_scope_name *group = r->scope_group_list->pdata[g];
        g_assert_cmpuint(col->stack[1 + g], ==, group->bytes);
        in_scopes += group->bytes;
      }
      g_assert_cmpuint(col->stack[0], ==, r->live_bytes - in_scopes);
    }
  }
  g_assert_cmpuint(covered, ==, last - first + 1);
}

/* The reference's bytes alive and state at each event so far. */
typedef struct exact_sums {
  GArray *totals;
  GPtrArray *states;
} exact_sums;

static gboolean record_exact_sums(const gs_replay *r, const gs_trace_event *e,
                                  gboolean joins_previous, gpointer data) {
  (void)e;
  exact_sums *sums = data;
  if (joins_previous) { /* one step with the event before: its result shows there too */
    guint last = sums->totals->len - 1;
    g_array_index(sums->totals, guint64, last) = r->live_bytes;
    gs_replay_free(sums->states->pdata[last]);
    sums->states->pdata[last] = gs_replay_copy(r, FALSE);
  }
  g_array_append_val(sums->totals, r->live_bytes);
  g_ptr_array_add(sums->states, gs_replay_copy(r, FALSE));
  return TRUE;
}

static void test_memory_columns_equal_exact_sums(void) {
  fixture f;
  fixture_init(&f, training_work);
  gs_trace_model *m = f.m;
  guint64 n = gs_trace_model_n_events(m);
  /* The reference: a fresh replay applied event by event, its state copied at each event. */
  g_autoptr(GArray) totals = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autoptr(GPtrArray) states = g_ptr_array_new_with_free_func((GDestroyNotify)gs_replay_free);
  exact_sums sums = {totals, states};
  gs_replay_free(replay_each(f.bytes, record_exact_sums, &sums));
  g_assert_cmpuint(totals->len, ==, n);
  for (guint64 i = 0; i < n; i++)
    g_assert_cmpuint(gs_trace_model_bytes_at(m, i), ==, g_array_index(totals, guint64, i));
  /* The scope groups are epoch, step, update: three stacks after "outside any scope". */
  g_assert_cmpuint(gs_trace_model_n_stacks(m, TRUE), ==, 4);
  g_assert_cmpstr(gs_trace_model_stack_name(m, TRUE, 2), ==, "step");
  g_assert_cmpstr(gs_trace_model_stack_name(m, FALSE, GS_MEM_SAVED), ==, "saved for backward");
  check_columns(&f, 0, n - 1, 97, FALSE, totals, states);
  check_columns(&f, 0, n - 1, 97, TRUE, totals, states);
  check_columns(&f, n / 3, n / 2, 13, FALSE, totals, states);
  check_columns(&f, n / 3, n / 3 + 5, 20, TRUE, totals, states); /* more columns than events */
  /* Optimizer momentum buffers are held outside scopes; gradients are counted somewhere. */
  guint64 grads = 0;
  for (guint64 i = 0; i < n; i++)
    grads = MAX(grads, gs_trace_model_bytes_at(m, i));
  g_assert_cmpuint(grads, >, 0);
  recorded_model_clear(&f);
}

/* ---- batch data: the parts of a PackedSequence ------------------------------------------- */

static void packed_work(void) {
  const int64_t a_shape[] = {3, 2}, b_shape[] = {2, 2}; /* 24 and 16 bytes */
  gs_scope s = gs_scope_begin("batch");
  gs_tensor seqs[] = {gs_ones(GS_F32, a_shape, 2), gs_ones(GS_F32, b_shape, 2)};
  gs_packed_sequence ps = gs_pack_sequence(seqs, 2, true);
  gs_trace_mark("packed");
  (void)ps;
  gs_scope_end(s);
}

static void test_batch_category(void) {
  fixture f;
  fixture_init(&f, packed_work);
  const gs_replay *r = gs_trace_model_seek(f.m, mark(f.m, "packed"));
  guint64 cats[GS_MEM_N_CATEGORIES], batch_objects = 0, parts_bytes = 0;
  gs_trace_model_category_bytes(f.m, r, cats);
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  for (guint i = 0; i < alive->len; i++) {
    const gs_replay_object *o = alive->pdata[i];
    if (o->composite || gs_trace_model_category(f.m, r, o) != GS_MEM_BATCH)
      continue;
    batch_objects++;
    g_assert_cmpuint(o->holder, ==, GS_TRACE_HELD_BY_COMPOSITE);
    g_autofree char *label = gs_trace_model_owner_label(f.m, r, o);
    g_assert_true(g_str_has_prefix(label, "packed sequence #"));
    guint64 own = 0;
    if (gs_replay_storage(r, o->storage, &own, NULL))
      parts_bytes += own;
  }
  /* data, batch_sizes (and any index tensors) belong to the sequence */
  g_assert_cmpuint(batch_objects, >=, 2);
  g_assert_cmpuint(cats[GS_MEM_BATCH], ==, parts_bytes);
  g_assert_cmpuint(cats[GS_MEM_BATCH], >=, 40); /* the packed data: 5 rows of 2 f32 */
  g_autofree char *made = gs_trace_model_explain(f.m, find_event(f.m, 0, GS_TRACE_COMPOSITE_CREATE,
                                                                NULL));
  g_assert_true(g_str_has_prefix(made, "packed sequence #"));
  g_assert_true(g_str_has_suffix(made, " tensors; scopes own and dispose them as one"));
  /* The incremental series agrees. */
  gs_memory_column col;
  gs_trace_model_memory_columns(f.m, mark(f.m, "packed"), mark(f.m, "packed"), 1, FALSE, &col);
  g_assert_cmpuint(col.stack[GS_MEM_BATCH], ==, cats[GS_MEM_BATCH]);
  recorded_model_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  g_test_add_func("/trace-model/alive-and-bytes-at-chosen-events",
                  test_alive_and_bytes_at_chosen_events);
  g_test_add_func("/trace-model/scope-statistics-equal-the-engine",
                  test_scope_statistics_equal_the_engine);
  g_test_add_func("/trace-model/seek-equals-fresh-replay", test_seek_equals_fresh_replay);
  g_test_add_func("/trace-model/memory-columns-equal-exact-sums",
                  test_memory_columns_equal_exact_sums);
  g_test_add_func("/trace-model/batch-category", test_batch_category);
  return g_test_run();
}
