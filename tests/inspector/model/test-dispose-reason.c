/* test-dispose-reason.c: every dispose reason the engine writes is one the inspector knows how
 * to say (inspector/model/words/dispose-reason.c), so a change of wording in the engine fails here,
 * not silently in the Chinese interface. A run disposes tensors every way the engine can:
 * gs_dispose, a scope's end, dispose_everything(_but), gs_zero_grad, a tensor taking its
 * gradient with it, a module, an optimizer, a batch, a packed sequence, backward freeing its
 * own temporaries (which the program never held, so never "the program disposed it"). */
#include <string.h>

#include <gradscope/gradscope.h>

#include "dispose-reason.h"
#include "model-test-util.h"

static void every_disposal(void) {
  const int64_t shape[] = {2, 3};
  gs_dispose(gs_ones(GS_F32, shape, 2));

  gs_scope step = gs_scope_begin("step");
  (void)gs_ones(GS_F32, shape, 2);
  gs_scope_end(step);

  gs_scope all = gs_scope_begin("all");
  gs_tensor keep = gs_ones(GS_F32, shape, 2);
  (void)gs_zeros(GS_F32, shape, 2);
  gs_scope_dispose_everything_but(all, &keep.id, 1);
  gs_scope_dispose_everything(all);
  gs_scope_end(all);

  /* A gradient cleared, then one that goes with its tensor. */
  gs_tensor w = gs_ones(GS_F32, shape, 2);
  gs_set_requires_grad(w, true);
  gs_tensor sq = gs_mul(w, w), loss = gs_sum(sq, NULL, 0, false);
  gs_backward(loss);
  gs_zero_grad(w);
  gs_tensor total = gs_sum(w, NULL, 0, false);
  gs_backward(total);
  gs_dispose(w);
  gs_dispose(sq), gs_dispose(total);

  /* A module's parameters and an optimizer's state. */
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module lin = gs_linear_new(3, 2, true, &rng);
  gs_tensor params[2];
  const char *names[2];
  int n = gs_module_named_parameters(lin, params, names, 2);
  gs_optimizer adam = gs_adam_new(params, n, NULL);
  gs_scope train = gs_scope_begin("train");
  gs_tensor x = gs_ones(GS_F32, shape, 2);
  gs_backward(gs_sum(gs_module_forward(lin, x), NULL, 0, false)); /* all of it in "train" */
  gs_optimizer_step(adam);
  gs_scope_end(train);
  gs_optimizer_dispose(adam);
  gs_module_dispose(lin);

  /* A DataLoader batch, disposed as one object. */
  gs_tensor rows = gs_arange(0, 8, 1, GS_F32);
  gs_dataset ds = gs_tensor_dataset(&rows, 1);
  gs_data_loader *loader = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4});
  gs_batch b = gs_data_loader_next_batch(loader);
  gs_batch_dispose(b);
  gs_data_loader_free(loader);
  gs_dataset_release(&ds);
  gs_dispose(rows);

  /* A packed sequence. */
  gs_tensor seqs[2] = {gs_ones(GS_F32, (int64_t[]){3, 2}, 2), gs_ones(GS_F32, (int64_t[]){2, 2}, 2)};
  gs_packed_sequence ps = gs_pack_sequence(seqs, 2, true);
  gs_packed_sequence_dispose(ps);
  gs_dispose(seqs[0]), gs_dispose(seqs[1]);
  gs_dispose(loss);
}

static void test_every_reason_is_known(void) {
  char *path = record_log(every_disposal);
  GBytes *bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 0);
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_DISPOSE)
      continue;
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    const char *reason = gs_trace_model_string(m, e.name);
    if (!gs_dispose_reason_is_known(reason))
      g_error("the engine's dispose reason \"%s\" is not one dispose-reason.c knows", reason);
    g_hash_table_add(seen, g_strdup(reason));
  }
  /* The run reached each wording it was written for. */
  static const char *const expected[] = {
      "gs_dispose", "the end of scope 'step'", "dispose_everything_but on scope 'all'",
      "gs_zero_grad", "the disposal of the tensor it was the gradient of",
      "gs_batch_dispose", "gs_packed_sequence_dispose", "gs_backward's own temporary",
  };
  for (guint i = 0; i < G_N_ELEMENTS(expected); i++)
    if (!g_hash_table_contains(seen, expected[i]))
      g_error("the run never disposed for \"%s\"", expected[i]);
  gboolean module = FALSE, optimizer = FALSE;
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, seen);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    module |= g_str_has_prefix(key, "the disposal of module Linear #");
    optimizer |= g_str_has_prefix(key, "the disposal of optimizer Adam #");
  }
  g_assert_true(module);
  g_assert_true(optimizer);
  g_hash_table_unref(seen);
  gs_trace_model_free(m);
  g_bytes_unref(bytes);
  remove_log(path);
}

/* A backward whose formulas make and free temporaries (a broadcast summed away, a cast). */
static void backward_with_temporaries(void) {
  gs_tensor w = gs_ones(GS_F32, (int64_t[]){1, 3}, 2);
  gs_set_requires_grad(w, true);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){4, 3}, 2);
  gs_tensor y = gs_mul(w, x), loss = gs_sum(y, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {w, x, y, loss};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* Backward's temporaries are the engine's (holder: the engine): their disposal is backward's,
 * never "the program disposed it"; the program's own disposals still say gs_dispose. */
static void test_engine_temporaries_are_not_the_programs(void) {
  char *path = record_log(backward_with_temporaries);
  GBytes *bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 0);
  GHashTable *holder = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  guint engine_disposals = 0, program_disposals = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    gint64 *id = g_memdup2(&e.tensor, sizeof e.tensor);
    if (e.kind == GS_TRACE_TENSOR_CREATE) {
      g_hash_table_insert(holder, id, GUINT_TO_POINTER(e.holder));
    } else if (e.kind == GS_TRACE_OWNER_CHANGE) {
      *id = (gint64)e.object;
      g_hash_table_insert(holder, id, GUINT_TO_POINTER(e.holder));
    } else if (e.kind == GS_TRACE_TENSOR_DISPOSE) {
      guint held_by = GPOINTER_TO_UINT(g_hash_table_lookup(holder, id));
      const char *reason = gs_trace_model_string(m, e.name);
      g_autofree char *said = gs_dispose_reason_text(reason);
      if (held_by == GS_TRACE_HELD_BY_ENGINE) {
        g_assert_cmpstr(reason, ==, "gs_backward's own temporary");
        g_assert_null(strstr(said, "the program disposed"));
        engine_disposals++;
      } else if (held_by == GS_TRACE_HELD_BY_CALLER) {
        g_assert_cmpstr(reason, ==, "gs_dispose");
        program_disposals++;
      }
      g_free(id);
    } else {
      g_free(id);
    }
  }
  g_assert_cmpuint(engine_disposals, >, 0);
  g_assert_cmpuint(program_disposals, ==, 4);
  g_hash_table_unref(holder);
  gs_trace_model_free(m);
  g_bytes_unref(bytes);
  remove_log(path);
}

static void test_texts(void) {
  const struct {
    const char *engine, *said;
  } cases[] = {
      {"the end of scope 'train step'", "the end of scope “train step”"},
      {"the end of scope ''", "the end of scope ''"}, /* no name: not the template */
      {"gs_zero_grad", "gs_zero_grad (the gradient was cleared)"},
      {"the disposal of module Linear #3", "the disposal of module Linear #3"},
      {"dispose_everything on scope 'x'", "dispose_everything on scope “x”"},
      {"something a newer engine says", "something a newer engine says"},
      {"", ""},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *said = gs_dispose_reason_text(cases[i].engine);
    g_assert_cmpstr(said, ==, cases[i].said);
  }
  g_assert_false(gs_dispose_reason_is_known("something a newer engine says"));
  g_autofree char *none = gs_dispose_reason_text(NULL);
  g_assert_cmpstr(none, ==, "");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dispose-reason/every-reason-is-known", test_every_reason_is_known);
  g_test_add_func("/dispose-reason/texts", test_texts);
  g_test_add_func("/dispose-reason/engine-temporaries-are-not-the-programs",
                  test_engine_temporaries_are_not_the_programs);
  return g_test_run();
}
