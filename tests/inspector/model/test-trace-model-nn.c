/* test-trace-model-nn.c: the trace model on a training run with a module tree, an Adam
 * optimizer and DataLoader batches (events of log format 1.1): parameters named by their
 * dotted paths, optimizer-held tensors as optimizer state ("optimizer Adam #..."), batches and
 * their fields as batch data, the dataset's tensors as data, the sentences for module_child and optimizer_create, a
 * parameter's life including the events that renamed it and listed it, and every seek equal
 * to a fresh replay of the events up to it. */
#include <string.h>

#include "model-test-util.h"

#define STEPS 6

static guint64 bias_id, enc_weight_id, opt_id, kept_batch_id, kept_fields[2], data_ids[2];
static int n_params;

/* Net { encoder: Sequential(Linear(3, 4), ReLU), fc2: Linear(4, 2) }, Adam over its 4
 * parameters, batches of 4 from a prefetching loader over 12 samples. */
static void nn_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_module net = gs_module_new("Net");
  gs_module enc = gs_sequential_new((gs_module[]){gs_linear_new(3, 4, true, &rng), gs_relu_new()},
                                    2);
  gs_module fc2 = gs_linear_new(4, 2, true, &rng); /* its parameters are "bias" until it joins */
  gs_module_register_child(net, "encoder", enc);
  gs_module_register_child(net, "fc2", fc2);
  bias_id = gs_module_parameter(net, "fc2.bias").id;
  enc_weight_id = gs_module_parameter(net, "encoder.0.weight").id;
  gs_tensor params[8];
  n_params = gs_module_named_parameters(net, params, NULL, 8);
  gs_optimizer adam = gs_adam_new(params, n_params, NULL);
  opt_id = adam.id;
  gs_tensor xy[2] = {gs_ones(GS_F32, (int64_t[]){12, 3}, 2), gs_zeros(GS_I64, (int64_t[]){12}, 1)};
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  data_ids[0] = xy[0].id, data_ids[1] = xy[1].id;
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4,
                                                                   .prefetch = 1});
  gs_batch kept = GS_NO_BATCH;
  for (int step = 0; step < STEPS; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_batch b = gs_data_loader_next_batch(l);
    if (!b.id) { /* the epoch ended: the next one */
      gs_data_loader_reset(l);
      b = gs_data_loader_next_batch(l);
    }
    g_assert_true(gs_batch_is_alive(b));
    gs_tensor out = gs_module_forward(fc2, gs_module_forward(enc, gs_batch_field(b, 0)));
    gs_backward(gs_sum(out, NULL, 0, false));
    gs_optimizer_step(adam);
    gs_optimizer_zero_grad(adam);
    if (step == 3) { /* one batch outlives its step, held by the caller */
      kept = gs_batch_detach_from_scopes(b);
      kept_batch_id = kept.id;
      kept_fields[0] = gs_batch_field(kept, 0).id;
      kept_fields[1] = gs_batch_field(kept, 1).id;
    }
    gs_scope_end(s);
    if (step % 2 == 1)
      gs_trace_flush(); /* several chunks */
  }
  gs_trace_mark("trained");
  gs_batch_dispose(kept);
  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
  gs_optimizer_dispose(adam);
  gs_module_dispose(net);
}

typedef recorded_model fixture;

/* Keyframes every 37 events: they copy module trees and optimizers. */
static void fixture_init(fixture *f) { recorded_model_init(f, nn_work, 37); }

static guint64 own_bytes(const gs_replay *r, const gs_replay_object *o) {
  guint64 bytes = 0;
  g_assert_true(gs_replay_storage(r, o->storage, &bytes, NULL));
  return bytes;
}

static void test_categories_and_owners(void) {
  fixture f;
  fixture_init(&f);
  gs_trace_model *m = f.m;
  guint64 at = find_event(m, 0, GS_TRACE_MARK, "trained");
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  const gs_replay *r = gs_trace_model_seek(m, at);
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  guint state = 0, params = 0, batch = 0, prefetched = 0, data = 0;
  guint64 state_bytes = 0, batch_bytes = 0, data_bytes = 0;
  for (guint i = 0; i < alive->len; i++) {
    const gs_replay_object *o = alive->pdata[i];
    gs_mem_category c = gs_trace_model_category(m, r, o);
    g_autofree char *label = gs_trace_model_owner_label(m, r, o);
    if (o->holder == GS_TRACE_HELD_BY_OPTIMIZER) {
      g_assert_cmpint(c, ==, GS_MEM_OPTIMIZER_STATE);
      g_assert_true(g_str_has_prefix(label, "optimizer Adam #"));
      g_assert_cmpuint(o->owner, ==, opt_id);
      state++;
      state_bytes += own_bytes(r, o);
    } else if (o->holder == GS_TRACE_HELD_BY_MODULE) {
      g_assert_cmpint(c, ==, GS_MEM_PARAMETERS);
      g_assert_true(g_str_has_prefix(label, "module Linear #"));
      params++;
    } else if (o->id == kept_batch_id) {
      g_assert_true(o->composite);
      g_assert_cmpint(c, ==, GS_MEM_BATCH);
      g_assert_cmpstr(label, ==, "the program");
      batch++;
    } else if (o->id == kept_fields[0] || o->id == kept_fields[1]) {
      g_assert_cmpint(c, ==, GS_MEM_BATCH);
      g_assert_cmpuint(o->owner, ==, kept_batch_id);
      g_assert_true(g_str_has_prefix(label, "batch #"));
      batch++;
      batch_bytes += own_bytes(r, o);
    } else if (o->composite && o->object_kind == GS_OBJECT_DATASET) {
      /* the dataset reads its tensors; the caller holds it, and them */
      g_assert_cmpint(c, ==, GS_MEM_DATA);
      g_assert_cmpstr(label, ==, "the program");
      data++;
    } else if (o->id == data_ids[0] || o->id == data_ids[1]) {
      g_assert_cmpint(c, ==, GS_MEM_DATA);
      g_assert_cmpstr(label, ==, "the program");
      data++;
      data_bytes += own_bytes(r, o);
    } else if (o->composite || o->holder == GS_TRACE_HELD_BY_COMPOSITE) {
      /* the batch the loader prefetched, still held by the engine, and its fields */
      const gs_replay_object *b = o->composite ? o : gs_replay_object_find(r, o->owner);
      g_assert_nonnull(b);
      if (!b)
        continue;
      g_assert_cmpuint(b->object_kind, ==, GS_OBJECT_BATCH);
      g_assert_cmpuint(b->holder, ==, GS_TRACE_HELD_BY_ENGINE);
      g_assert_cmpint(c, ==, GS_MEM_BATCH);
      prefetched++;
      batch_bytes += o->composite ? 0 : own_bytes(r, o);
    } else {
      g_assert_cmpint(c, !=, GS_MEM_OPTIMIZER_STATE);
      g_assert_cmpint(c, !=, GS_MEM_BATCH);
    }
  }
  g_assert_cmpuint(state, ==, 2 * n_params); /* exp_avg and exp_avg_sq per parameter */
  g_assert_cmpuint(params, ==, 4);
  g_assert_cmpuint(batch, ==, 3);
  g_assert_cmpuint(data, ==, 3);
  g_assert_cmpuint(data_bytes, ==, 12 * 3 * 4 + 12 * 8);
  g_assert_cmpuint(prefetched % 3, ==, 0);
  /* x [4, 3] f32, y [4] i64 per batch */
  g_assert_cmpuint(batch_bytes, ==, (1 + prefetched / 3) * (4 * 3 * 4 + 4 * 8));
  /* Bytes per category, from scratch and from the series the timeline draws. */
  guint64 cats[GS_MEM_N_CATEGORIES];
  gs_trace_model_category_bytes(m, r, cats);
  g_assert_cmpuint(cats[GS_MEM_OPTIMIZER_STATE], ==, state_bytes);
  g_assert_cmpuint(state_bytes, ==, 2 * 4 * (3 * 4 + 4 + 4 * 2 + 2)); /* f32, 26 weights */
  g_assert_cmpuint(cats[GS_MEM_BATCH], ==, batch_bytes);
  g_assert_cmpuint(cats[GS_MEM_DATA], ==, data_bytes);
  gs_memory_column col;
  gs_trace_model_memory_columns(m, at, at, 1, FALSE, &col);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    g_assert_cmpuint(col.stack[c], ==, cats[c]);
  recorded_model_clear(&f);
}

static void test_dotted_names_and_sentences(void) {
  fixture f;
  fixture_init(&f);
  gs_trace_model *m = f.m;
  const gs_replay *head = gs_trace_model_head(m);
  g_assert_cmpstr(gs_replay_tensor_name(head, bias_id), ==, "fc2.bias");
  g_assert_cmpstr(gs_replay_tensor_name(head, enc_weight_id), ==, "encoder.0.weight");
  /* Before fc2 joins the tree its bias is "Linear.bias"; after, "fc2.bias". */
  guint64 joined = find_event(m, 0, GS_TRACE_MODULE_CHILD, "fc2");
  g_assert_cmpuint(joined, !=, G_MAXUINT64);
  g_assert_cmpstr(gs_replay_tensor_name(gs_trace_model_seek(m, joined - 1), bias_id), ==,
                  "Linear.bias");
  g_assert_cmpstr(gs_replay_tensor_name(gs_trace_model_seek(m, joined), bias_id), ==,
                  "fc2.bias");
  g_autofree char *child = gs_trace_model_explain(m, joined);
  g_assert_true(g_str_has_prefix(child, "module Linear #"));
  g_assert_nonnull(strstr(child, " became the child \"fc2\" of module Net #"));
  g_assert_nonnull(strstr(child, "its parameters are named \"fc2.…\""));
  guint64 created = find_event(m, 0, GS_TRACE_OPTIMIZER_CREATE, "Adam");
  g_assert_cmpuint(created, !=, G_MAXUINT64);
  g_autofree char *opt = gs_trace_model_explain(m, created);
  g_assert_true(g_str_has_prefix(opt, "optimizer Adam #"));
  g_assert_nonnull(strstr(opt, " was created to update 4 parameters; the state it keeps for "
                               "them (momentum, running averages) is optimizer state"));
  /* A sentence about the bias names it by its path. */
  guint64 registered = find_event(m, 0, GS_TRACE_MODULE_PARAMETER, "bias");
  g_autofree char *reg = NULL;
  for (; registered != G_MAXUINT64; registered = find_event(m, registered + 1,
                                                            GS_TRACE_MODULE_PARAMETER, "bias")) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, registered, &e));
    if (e.tensor == bias_id)
      break;
  }
  g_assert_cmpuint(registered, !=, G_MAXUINT64);
  g_assert_cmpuint(registered, <, joined);
  reg = gs_trace_model_explain(m, registered);
  g_assert_nonnull(strstr(reg, "registered tensor "));
  g_assert_nonnull(strstr(reg, " \"Linear.bias\" as its parameter \"bias\""));
  recorded_model_clear(&f);
}

static gboolean life_has(const guint64 *life, guint n, guint64 index) {
  for (guint i = 0; i < n; i++)
    if (life[i] == index)
      return TRUE;
  return FALSE;
}

static void test_parameter_life(void) {
  fixture f;
  fixture_init(&f);
  gs_trace_model *m = f.m;
  guint64 fc2_joined = find_event(m, 0, GS_TRACE_MODULE_CHILD, "fc2");
  guint64 enc_joined = find_event(m, 0, GS_TRACE_MODULE_CHILD, "encoder");
  guint64 linear_joined = find_event(m, 0, GS_TRACE_MODULE_CHILD, "0"); /* into the Sequential */
  guint64 created = find_event(m, 0, GS_TRACE_OPTIMIZER_CREATE, "Adam");
  g_autofree guint64 *bias = NULL, *weight = NULL, *field = NULL;
  guint n_bias, n_weight, n_field;
  bias = life_indices(m, bias_id, &n_bias);
  weight = life_indices(m, enc_weight_id, &n_weight);
  field = life_indices(m, kept_fields[0], &n_field);
  g_assert_true(life_has(bias, n_bias, fc2_joined));
  g_assert_false(life_has(bias, n_bias, enc_joined));
  g_assert_false(life_has(bias, n_bias, linear_joined));
  g_assert_true(life_has(bias, n_bias, created));
  g_assert_true(life_has(weight, n_weight, linear_joined));
  g_assert_true(life_has(weight, n_weight, enc_joined));
  g_assert_false(life_has(weight, n_weight, fc2_joined));
  g_assert_true(life_has(weight, n_weight, created));
  g_assert_false(life_has(field, n_field, created));
  g_assert_false(life_has(field, n_field, fc2_joined));
  recorded_model_clear(&f);
}

static void test_seek_equals_fresh_replay(void) {
  fixture f;
  fixture_init(&f);
  gs_trace_model *m = f.m;
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(n, >, 500);
  /* The first 200 events build the tree and the optimizer. */
  assert_seeks_equal_fresh_replay(m, f.bytes, 200, 99, 60, 17);
  const gs_replay *all = gs_trace_model_head(m);
  g_assert_cmpuint(g_hash_table_size(all->optimizers), ==, 1);
  g_assert_cmpuint(g_hash_table_size(all->modules), >=, 5); /* Net, Sequential, 2 Linear, ReLU */
  recorded_model_clear(&f);
}

/* A shared module: Sequential(lin, relu, lin), then head = seq[0:1], then del seq[0] (slot
 * "0" emptied, "1".."2" renamed down), then seq disposed while head still holds lin. */
static guint64 shared_lin, shared_seq, shared_head, shared_weight;

static void sharing_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 9);
  gs_module lin = gs_linear_new(2, 2, true, &rng);
  gs_module seq = gs_sequential_new((gs_module[]){gs_module_retain(lin), gs_relu_new(), lin}, 3);
  gs_module head = gs_sequential_slice(seq, 0, 1, 1);
  shared_lin = lin.id, shared_seq = seq.id, shared_head = head.id;
  shared_weight = gs_module_parameter(lin, "weight").id;
  gs_trace_mark("shared");
  gs_sequential_remove(seq, 0);
  gs_trace_mark("removed");
  gs_module_dispose(seq);
  gs_trace_mark("seq gone");
  gs_module_dispose(head);
}

static void test_shared_module_tree(void) {
  recorded_model f;
  recorded_model_init(&f, sharing_work, 5);
  gs_trace_model *m = f.m;
  guint64 shared = find_event(m, 0, GS_TRACE_MARK, "shared");
  guint64 removed = find_event(m, 0, GS_TRACE_MARK, "removed");
  guint64 gone = find_event(m, 0, GS_TRACE_MARK, "seq gone");
  g_assert_cmpuint(gone, !=, G_MAXUINT64);
  const gs_replay *r = gs_trace_model_seek(m, shared);
  const gs_replay_module *lin = gs_replay_module_get(r, shared_lin);
  g_assert_cmpuint(lin->n_parents, ==, 3); /* seq "0", seq "2", head "0" */
  g_assert_cmpuint(lin->parent, ==, shared_seq);
  g_assert_cmpstr(lin->name, ==, "0");
  g_assert_cmpstr(gs_replay_tensor_name(r, shared_weight), ==, "0.weight");
  /* The second slot's sentence says the module is shared. */
  guint64 second = find_event(m, 0, GS_TRACE_MODULE_CHILD, "2");
  g_autofree char *says = gs_trace_model_explain(m, second);
  g_assert_nonnull(strstr(says, " as well: it is shared (2 places)"));
  /* After del seq[0]: lin's slot "0" went, its other slot in seq was renamed "1". */
  r = gs_trace_model_seek(m, removed);
  lin = gs_replay_module_get(r, shared_lin);
  g_assert_cmpuint(lin->n_parents, ==, 2);
  g_assert_cmpuint(lin->parent, ==, shared_head); /* head's slot is now the oldest */
  guint64 emptied = G_MAXUINT64;
  for (guint64 i = shared; i < removed; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (e.kind == GS_TRACE_MODULE_CHILD && e.child == 0 && emptied == G_MAXUINT64)
      emptied = i;
  }
  g_assert_cmpuint(emptied, !=, G_MAXUINT64);
  g_autofree char *empty_says = gs_trace_model_explain(m, emptied);
  g_assert_nonnull(strstr(empty_says, "no longer has a child \"0\": the slot was emptied"));
  /* seq's disposal let go of lin's last slot there: the log said so, head keeps it. */
  r = gs_trace_model_seek(m, gone);
  lin = gs_replay_module_get(r, shared_lin);
  g_assert_cmpuint(lin->n_parents, ==, 1);
  g_assert_cmpuint(lin->parent, ==, shared_head);
  assert_seeks_equal_fresh_replay(m, f.bytes, gs_trace_model_n_events(m), 20, 10, 7);
  recorded_model_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  g_test_add_func("/trace-model-nn/optimizer-state-and-batches-by-category-and-owner",
                  test_categories_and_owners);
  g_test_add_func("/trace-model-nn/dotted-names-and-sentences", test_dotted_names_and_sentences);
  g_test_add_func("/trace-model-nn/parameter-life-includes-tree-and-optimizer",
                  test_parameter_life);
  g_test_add_func("/trace-model-nn/seek-equals-fresh-replay", test_seek_equals_fresh_replay);
  g_test_add_func("/trace-model-nn/shared-module-tree", test_shared_module_tree);
  return g_test_run();
}
