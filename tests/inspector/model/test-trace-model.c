/* test-trace-model.c: the trace model the CLI and the inspector share (inspector/model/):
 * escaping of names from user code, and the replayed state (memory with copy-on-write, scope
 * accounts equal to the engine's own, parameter handle moves, the autograd graph) on logs the
 * engine records here, read back through the public reader), module trees naming parameters by
 * their dotted paths, optimizers with their parameters, and who holds optimizer state and
 * batches. */
#include <glib.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

#include "escape.h"
#include "graph.h"
#include "replay.h"
#include "trace-file.h"

#define HOSTILE "a \"q\" \\ b\nc\td\x01\x1b[0m\x7f"

static void test_escape_json(void) {
  g_autoptr(GString) s = g_string_new(NULL);
  gs_escape_json(s, HOSTILE);
  g_assert_cmpstr(s->str, ==, "\"a \\\"q\\\" \\\\ b\\nc\\td\\u0001\\u001b[0m\\u007f\"");
  g_string_truncate(s, 0);
  gs_escape_json(s, "caf\xc3\xa9 \xff end \xe2\x80\xa8"); /* UTF-8 kept, a bad byte replaced */
  g_assert_cmpstr(s->str, ==, "\"caf\xc3\xa9 \xef\xbf\xbd end \\u2028\"");
  g_string_truncate(s, 0);
  gs_escape_json(s, NULL);
  g_assert_cmpstr(s->str, ==, "\"\"");
}

static void test_escape_dot(void) {
  g_autoptr(GString) s = g_string_new(NULL);
  gs_escape_dot(s, HOSTILE);
  g_assert_cmpstr(s->str, ==, "\"a \\\"q\\\" \\\\ b\\nc d  [0m \"");
}

/* Records what body does into a fresh log and replays the whole log. */
typedef void (*workload_fn)(void);

static gboolean apply(const gs_trace_event *e, const gs_trace_reader *reader, gpointer user) {
  gs_replay_apply(user, e, reader);
  return TRUE;
}

static gs_replay *record_and_replay(workload_fn body) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-model-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  body();
  gs_trace_close();
  gs_replay *r = gs_replay_new();
  gs_trace_read_result result;
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_trace_file_read(path, apply, NULL, r, &result, &error));
  g_assert_null(result.damage);
  g_assert_false(result.truncated);
  g_assert_cmpuint(result.events, >, 0);
  gs_trace_read_result_clear(&result);
  g_remove(path);
  g_rmdir(dir);
  return r;
}

/* The engine's own account of the scope, taken just before it ends. */
static gs_scope_info engine_info;

static void scoped_work(void) {
  const int64_t shape[] = {4, 4};
  gs_scope s = gs_scope_begin("work");
  gs_tensor a = gs_ones(GS_F32, shape, 2);       /* 64 bytes, owned by s */
  gs_tensor v = gs_t(a);                         /* a view: counts no bytes */
  gs_tensor c = gs_clone(a);                     /* copy-on-write: no new bytes yet */
  gs_fill_(c, 2.0);                              /* materialises 64 bytes */
  gs_tensor kept = gs_move_to_outer(gs_zeros(GS_F32, shape, 2)); /* leaves s: a detach */
  gs_dispose(v);
  engine_info = gs_scope_get_info(s);
  gs_scope_end(s);
  gs_dispose(kept);
}

static void test_scope_accounts_match_the_engine(void) {
  g_autoptr(gs_replay) r = record_and_replay(scoped_work);
  g_assert_cmpuint(r->scope_group_list->len, ==, 1);
  const gs_replay_scope *s = r->scope_list->pdata[0];
  g_assert_cmpstr(s->name, ==, "work");
  g_assert_true(s->ended);
  g_assert_cmpuint(s->created, ==, engine_info.created);
  g_assert_cmpuint(s->peak_bytes, ==, engine_info.peak_bytes);
  /* Everything it owned at the end was disposed by the end: alive then equals disposed now
   * minus what was disposed before (the view). */
  g_assert_cmpuint(s->disposed, ==, engine_info.disposed + engine_info.alive);
  g_assert_cmpuint(s->alive, ==, 0);
  g_assert_cmpuint(s->bytes, ==, 0);
  /* Memory: ones 64 + zeros 64 + the clone's own 64 after materialising, all alive at once. */
  g_assert_cmpuint(r->peak_bytes, ==, 192);
  g_assert_cmpuint(r->live_bytes, ==, 0);
  g_assert_cmpuint(r->live_storages, ==, 0);
  g_assert_cmpuint(gs_replay_n_objects(r), ==, 0);
}

static gs_tensor graph_output;

static void graph_work(void) {
  const int64_t shape[] = {3};
  gs_tensor w = gs_parameter_new(gs_ones(GS_F32, shape, 1), true); /* a handle move */
  gs_trace_name(w, "w " HOSTILE);
  gs_tensor x = gs_full(GS_F32, shape, 1, 2.0);
  gs_tensor y = gs_mul(w, x); /* MulBackward saves both */
  graph_output = gs_sum(y, NULL, 0, false);
  gs_trace_flush();
  /* Stop here (the replay then sees the graph alive), leaving the tensors to the process. */
}

static void test_graph_of_a_product(void) {
  g_autoptr(gs_replay) r = record_and_replay(graph_work);
  g_autoptr(gs_graph) g = gs_graph_build(r);
  guint ops = 0, leaves = 0, saved = 0, outputs = 0;
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    switch (item->kind) {
    case GS_GRAPH_OP: ops++; break;
    case GS_GRAPH_LEAF:
      leaves++;
      g_assert_cmpstr(item->label, ==, "w " HOSTILE "\n(3)"); /* escaping is the writer's job */
      break;
    case GS_GRAPH_SAVED: saved++; break;
    case GS_GRAPH_OUTPUT:
      outputs++;
      g_assert_cmpuint(item->tensor, ==, graph_output.id);
      break;
    case GS_GRAPH_TENSOR:
    case GS_GRAPH_GROUP: g_assert_not_reached(); /* the plain graph has neither */
    }
  }
  g_assert_cmpuint(ops, ==, 2);    /* MulBackward, SumBackward */
  g_assert_cmpuint(leaves, ==, 1); /* only w requires grad */
  g_assert_cmpuint(saved, ==, 2);  /* w and x */
  g_assert_cmpuint(outputs, ==, 1);
  guint undirected = 0;
  for (guint i = 0; i < g->edges->len; i++)
    undirected += g_array_index(g->edges, gs_graph_edge, i).undirected;
  g_assert_cmpuint(undirected, ==, 2);
  g_assert_cmpuint(g->edges->len, ==, 2 + 3); /* + leaf->mul, mul->sum, sum->output */
}

/* Kept alive past the end of the log, so the replay sees them held. */
static gs_module tree_root, tree_standalone;
static gs_optimizer tree_sgd;
static gs_tensor tree_bias, tree_lone_weight, tree_named, tree_xy[2];
static gs_batch tree_batch;
static gs_dataset tree_ds;
static gs_scope_info tree_epoch_info;

static void tree_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 4);
  tree_root = gs_module_new("Net");
  gs_module enc = gs_sequential_new((gs_module[]){gs_linear_new(3, 3, true, &rng), gs_relu_new()}, 2);
  /* The child's parameters are registered before it joins the tree: names follow it there. */
  gs_module fc2 = gs_linear_new(3, 2, true, &rng);
  gs_module_register_child(tree_root, "encoder", enc);
  gs_module_register_child(tree_root, "fc2", fc2);
  tree_bias = gs_module_parameter(tree_root, "fc2.bias");
  tree_named = gs_module_parameter(tree_root, "encoder.0.bias");
  gs_trace_name(tree_named, "my bias"); /* a user's name wins */
  tree_standalone = gs_linear_new(2, 2, false, &rng);
  tree_lone_weight = gs_module_parameter(tree_standalone, "weight");
  gs_tensor params[4];
  gs_module_named_parameters(tree_root, params, NULL, 4);
  gs_sgd_options o = {.lr = 0.1, .momentum = 0.9};
  tree_sgd = gs_sgd_new(params, 4, &o);
  gs_scope step = gs_scope_begin("step");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){2, 3}, 2);
  gs_tensor h = gs_module_forward(enc, x);
  gs_backward(gs_sum(gs_module_forward(fc2, h), NULL, 0, false));
  gs_optimizer_step(tree_sgd); /* a momentum buffer per parameter, held by the optimizer */
  gs_scope_end(step);
  /* A batch from a prefetching loader, kept past the end of the log. */
  tree_xy[0] = gs_ones(GS_F32, (int64_t[]){6, 3}, 2);
  tree_xy[1] = gs_zeros(GS_I64, (int64_t[]){6}, 1);
  tree_ds = gs_tensor_dataset(tree_xy, 2);
  gs_data_loader *l = gs_data_loader_new(&tree_ds, &(gs_loader_options){.batch_size = 4,
                                                                        .prefetch = 1});
  gs_scope epoch = gs_scope_begin("epoch");
  tree_batch = gs_data_loader_next_batch(l);
  gs_batch_detach_from_scopes(tree_batch);
  gs_tensor rest[2]; /* handed over as two tensors of "epoch" (adopted from the worker) */
  gs_data_loader_next(l, rest);
  tree_epoch_info = gs_scope_get_info(epoch);
  gs_scope_end(epoch);
  gs_data_loader_free(l);
  gs_trace_flush();
}

static void test_module_tree_and_optimizer_state(void) {
  g_autoptr(gs_replay) r = record_and_replay(tree_work);
  g_assert_cmpstr(gs_replay_tensor_name(r, tree_bias.id), ==, "fc2.bias");
  g_assert_cmpstr(gs_replay_tensor_name(r, gs_module_parameter(tree_root, "encoder.0.weight").id),
                  ==, "encoder.0.weight");
  g_assert_cmpstr(gs_replay_tensor_name(r, tree_named.id), ==, "my bias");
  g_assert_cmpstr(gs_replay_tensor_name(r, tree_lone_weight.id), ==, "Linear.weight");
  g_assert_cmpuint(g_hash_table_size(r->optimizers), ==, 1);
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  /* Who holds what, as the replay keeps it (the trace model's categories and owner labels
   * read these: test-trace-model-state.c). */
  const gs_replay_optimizer *sgd = gs_replay_optimizer_get(r, tree_sgd.id);
  g_assert_nonnull(sgd);
  g_assert_cmpstr(sgd->type, ==, "SGD");
  g_assert_cmpuint(sgd->params->len, ==, 4);
  guint state = 0, parameters = 0;
  for (guint i = 0; i < alive->len; i++) {
    const gs_replay_object *o = alive->pdata[i];
    if (o->holder == GS_TRACE_HELD_BY_OPTIMIZER) {
      g_assert_cmpuint(o->owner, ==, tree_sgd.id);
      state++;
    } else if (o->holder == GS_TRACE_HELD_BY_MODULE) {
      const gs_replay_module *mod = gs_replay_module_get(r, o->owner);
      g_assert_nonnull(mod);
      g_assert_cmpstr(mod->type, ==, "Linear");
      parameters++;
    }
  }
  g_assert_cmpuint(state, ==, 4);
  g_assert_cmpuint(parameters, ==, 5); /* 4 in the tree, 1 in the standalone Linear */
  /* The batch: one composite and its two tensors; the caller holds it. */
  guint batch_data = 0;
  for (guint i = 0; i < alive->len; i++) {
    const gs_replay_object *o = alive->pdata[i];
    if (o->composite && o->object_kind == GS_OBJECT_BATCH) {
      batch_data++;
      g_assert_cmpuint(o->id, ==, tree_batch.id);
      g_assert_cmpuint(o->holder, ==, GS_TRACE_HELD_BY_CALLER);
      g_assert_cmpstr(o->scope_at_create, ==, "epoch");
    } else if (o->holder == GS_TRACE_HELD_BY_COMPOSITE && o->owner == tree_batch.id) {
      batch_data++;
    }
  }
  g_assert_cmpuint(batch_data, ==, 3);
  const gs_replay_scope *epoch = NULL;
  for (guint i = 0; i < r->scope_list->len; i++)
    if (strcmp(((gs_replay_scope *)r->scope_list->pdata[i])->name, "epoch") == 0)
      epoch = r->scope_list->pdata[i];
  g_assert_nonnull(epoch);
  /* The batch and the two tensors, as the engine counts them. */
  g_assert_cmpuint(tree_epoch_info.created, ==, 3);
  g_assert_cmpuint(epoch->created, ==, tree_epoch_info.created);
  g_assert_cmpuint(epoch->disposed, ==, 2);
  g_assert_cmpuint(epoch->peak_bytes, ==, tree_epoch_info.peak_bytes);
  gs_batch_dispose(tree_batch);
  gs_dataset_release(&tree_ds);
  gs_dispose(tree_xy[0]), gs_dispose(tree_xy[1]);
  gs_optimizer_dispose(tree_sgd);
  gs_module_dispose(tree_root);
  gs_module_dispose(tree_standalone);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/model/module-tree-and-optimizer-state", test_module_tree_and_optimizer_state);
  g_test_add_func("/model/escape-json", test_escape_json);
  g_test_add_func("/model/escape-dot", test_escape_dot);
  g_test_add_func("/model/scope-accounts-match-the-engine", test_scope_accounts_match_the_engine);
  g_test_add_func("/model/graph-of-a-product", test_graph_of_a_product);
  return g_test_run();
}
