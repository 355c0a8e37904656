/* model-test-util.c: recording, reference replays and state comparison for the trace model
 * tests (see model-test-util.h). */
#include "model-test-util.h"

#include <glib/gstdio.h>
#include <string.h>

char *record_log(workload_fn body) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-model-XXXXXX", NULL);
  g_assert_nonnull(dir);
  char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  body();
  gs_trace_close();
  return path;
}

void remove_log(char *path) {
  g_autofree char *dir = g_path_get_dirname(path);
  g_remove(path);
  g_rmdir(dir);
  g_free(path);
}

GBytes *read_log_bytes(const char *path) {
  char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &data, &len, &error));
  return g_bytes_new_take(data, len);
}

gs_trace_model *model_from_bytes(GBytes *bytes, guint keyframe_interval) {
  gs_trace_model *m = gs_trace_model_new();
  if (keyframe_interval)
    gs_trace_model_set_keyframe_interval(m, keyframe_interval);
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(bytes, &len);
  gs_trace_model_feed(m, data, len);
  gs_trace_model_finish(m);
  if (g_getenv("GS_MODEL_TEST_DUMP")) /* every event explained, when a test needs a look */
    for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
      g_autofree char *text = gs_trace_model_explain(m, i);
      g_printerr("%4" G_GUINT64_FORMAT " %-20s %8" G_GUINT64_FORMAT " B  %s\n", i,
                 gs_trace_kind_name(gs_trace_model_kind_at(m, i)),
                 gs_trace_model_bytes_at(m, i), text);
    }
  return m;
}

void recorded_model_init(recorded_model *f, workload_fn body, guint keyframe_interval) {
  f->path = record_log(body);
  f->bytes = read_log_bytes(f->path);
  f->m = model_from_bytes(f->bytes, keyframe_interval);
  g_assert_null(gs_trace_model_problem(f->m));
}

void recorded_model_clear(recorded_model *f) {
  gs_trace_model_free(f->m);
  g_bytes_unref(f->bytes);
  remove_log(f->path);
}

gs_trace_reader *reader_of_bytes(GBytes *bytes) {
  gs_trace_reader *reader = gs_trace_reader_new();
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(bytes, &len);
  gs_trace_reader_feed(reader, data, len);
  return reader;
}

gs_replay *replay_each(GBytes *bytes, replay_step_fn step, gpointer data) {
  gs_replay *r = gs_replay_new();
  gs_trace_reader *reader = reader_of_bytes(bytes);
  gboolean in_pair = FALSE, more = TRUE;
  gs_trace_event e;
  while (more && gs_trace_reader_next(reader, &e) == GS_TRACE_EVENT) {
    if (gs_trace_kind_is_table(e.kind))
      continue;
    gs_replay_apply(r, &e, reader);
    more = step(r, &e, in_pair, data);
    in_pair = event_opens_pair(&e);
  }
  gs_trace_reader_free(reader);
  return r;
}

typedef struct prefix_count {
  guint64 n, applied;
} prefix_count;

static gboolean count_to_n(const gs_replay *r, const gs_trace_event *e, gboolean joins_previous,
                           gpointer data) {
  (void)r, (void)e, (void)joins_previous;
  prefix_count *c = data;
  return ++c->applied < c->n;
}

gs_replay *replay_prefix(GBytes *bytes, guint64 n) {
  prefix_count count = {n, 0};
  gs_replay *r = n ? replay_each(bytes, count_to_n, &count) : gs_replay_new();
  g_assert_cmpuint(count.applied, ==, n);
  return r;
}

gboolean event_opens_pair(const gs_trace_event *e) {
  return (e->derived && e->kind == GS_TRACE_STORAGE_ALLOC) ||
         (e->kind == GS_TRACE_TENSOR_DISPOSE && e->freed);
}

static void assert_object_equal(const gs_replay_object *a, const gs_replay_object *b) {
  g_assert_cmpuint(a->id, ==, b->id);
  g_assert_cmpint(a->composite, ==, b->composite);
  g_assert_cmpuint(a->storage, ==, b->storage);
  g_assert_cmpuint(a->bytes, ==, b->bytes);
  g_assert_cmpuint(a->holder, ==, b->holder);
  g_assert_cmpuint(a->owner, ==, b->owner);
  g_assert_cmpuint(a->create_seq, ==, b->create_seq);
  g_assert_cmpuint(a->thread, ==, b->thread);
  g_assert_cmpuint(a->site, ==, b->site);
  g_assert_cmpuint(a->dtype, ==, b->dtype);
  g_assert_cmpuint(a->origin, ==, b->origin);
  g_assert_cmpuint(a->source, ==, b->source);
  g_assert_cmpint(a->requires_grad, ==, b->requires_grad);
  g_assert_cmpint(a->ndim, ==, b->ndim);
  g_assert_cmpmem(a->shape, sizeof a->shape, b->shape, sizeof b->shape);
  g_assert_cmpmem(a->strides, sizeof a->strides, b->strides, sizeof b->strides);
  g_assert_cmpint(a->offset, ==, b->offset);
  g_assert_cmpint(a->before_recording, ==, b->before_recording);
  g_assert_cmpuint(a->object_kind, ==, b->object_kind);
  g_assert_cmpint(a->parameter, ==, b->parameter);
  g_assert_cmpuint(a->saved_refs, ==, b->saved_refs);
  g_assert_cmpuint(a->dataset_refs, ==, b->dataset_refs);
  g_assert_cmpuint(a->grad_fn, ==, b->grad_fn);
  g_assert_cmpstr(a->op, ==, b->op);
}

static void assert_scope_equal(const gs_replay_scope *a, const gs_replay_scope *b) {
  g_assert_cmpuint(a->id, ==, b->id);
  g_assert_cmpuint(a->outer, ==, b->outer);
  g_assert_cmpstr(a->name, ==, b->name);
  g_assert_cmpint(a->ended, ==, b->ended);
  g_assert_cmpuint(a->end_seq, ==, b->end_seq);
  g_assert_cmpuint(a->created, ==, b->created);
  g_assert_cmpuint(a->disposed, ==, b->disposed);
  g_assert_cmpuint(a->moved_in, ==, b->moved_in);
  g_assert_cmpuint(a->moved_out, ==, b->moved_out);
  g_assert_cmpuint(a->alive, ==, b->alive);
  g_assert_cmpuint(a->bytes, ==, b->bytes);
  g_assert_cmpuint(a->peak_bytes, ==, b->peak_bytes);
  g_assert_cmpuint(a->group, ==, b->group);
}

/* Each alive storage of one state, as its queries tell it, found alike in another. */
typedef struct storage_facts {
  guint64 id, own_bytes, version, shares_with;
  guint saved_refs, memory, peer;
  gboolean version_known;
} storage_facts;

static void collect_storage(guint64 id, guint64 own_bytes, guint saved_refs, gpointer data) {
  g_array_append_val(data,
                     ((storage_facts){.id = id, .own_bytes = own_bytes, .saved_refs = saved_refs}));
}

static void assert_storages_equal(const gs_replay *a, const gs_replay *b) {
  g_autoptr(GArray) xa = g_array_new(FALSE, TRUE, sizeof(storage_facts));
  g_autoptr(GArray) xb = g_array_new(FALSE, TRUE, sizeof(storage_facts));
  gs_replay_foreach_storage(a, collect_storage, xa);
  gs_replay_foreach_storage(b, collect_storage, xb);
  g_assert_cmpuint(xa->len, ==, xb->len);
  g_assert_cmpuint(xa->len, ==, a->live_storages);
  for (guint i = 0; i < xa->len; i++) {
    const storage_facts *s = &g_array_index(xa, storage_facts, i);
    guint64 own = 0, va = 0, vb = 0;
    guint saved = 0, ma = 0, pa = 0, mb = 0, pb = 0;
    g_assert_true(gs_replay_storage(b, s->id, &own, &saved));
    g_assert_cmpuint(own, ==, s->own_bytes);
    g_assert_cmpuint(saved, ==, s->saved_refs);
    gboolean ka = gs_replay_storage_version(a, s->id, &va);
    g_assert_cmpint(ka, ==, gs_replay_storage_version(b, s->id, &vb));
    if (ka)
      g_assert_cmpuint(va, ==, vb);
    g_assert_cmpuint(gs_replay_storage_shares_bytes_with(a, s->id), ==,
                     gs_replay_storage_shares_bytes_with(b, s->id));
    gboolean has_bytes = gs_replay_storage_memory(a, s->id, &ma, &pa);
    g_assert_cmpint(has_bytes, ==, gs_replay_storage_memory(b, s->id, &mb, &pb));
    g_assert_cmpuint(ma, ==, mb);
    g_assert_cmpuint(pa, ==, pb);
  }
}

void assert_replay_equal(const gs_replay *a, const gs_replay *b) {
  g_assert_cmpuint(a->events, ==, b->events);
  g_assert_cmpuint(a->live_bytes, ==, b->live_bytes);
  g_assert_cmpuint(a->live_storages, ==, b->live_storages);
  g_assert_cmpuint(a->peak_bytes, ==, b->peak_bytes);
  g_assert_cmpuint(gs_replay_n_objects(a), ==, gs_replay_n_objects(b));
  g_autoptr(GPtrArray) xa = gs_replay_alive_objects(a);
  g_autoptr(GPtrArray) xb = gs_replay_alive_objects(b);
  for (guint i = 0; i < xa->len; i++) {
    const gs_replay_object *o = xa->pdata[i];
    const gs_replay_object *p = gs_replay_object_find(b, o->id);
    if (!p)
      g_error("object #%" G_GUINT64_FORMAT " is alive in one state, not the other", o->id);
    assert_object_equal(o, p);
  }
  /* What iterating its objects finds agrees with their count (a state reading a base). */
  g_assert_cmpuint(xb->len, ==, gs_replay_n_objects(b));
  assert_storages_equal(a, b);
  g_assert_cmpuint(a->scope_list->len, ==, b->scope_list->len);
  for (guint i = 0; i < a->scope_list->len; i++) {
    assert_scope_equal(a->scope_list->pdata[i], b->scope_list->pdata[i]);
    /* A table holds at least the open scopes (a model's moment need not hold ended ones). */
    const gs_replay_scope *s = a->scope_list->pdata[i];
    const gs_replay_scope *found = g_hash_table_lookup(b->scopes, &s->id);
    g_assert_true(found == b->scope_list->pdata[i] || (!found && s->ended));
  }
  g_assert_cmpuint(a->scope_group_list->len, ==, b->scope_group_list->len);
  for (guint i = 0; i < a->scope_group_list->len; i++) {
    const gs_replay_scope_name *g = a->scope_group_list->pdata[i], *h = b->scope_group_list->pdata[i];
    g_assert_cmpstr(g->name, ==, h->name);
    g_assert_cmpuint(g->bytes, ==, h->bytes);
    g_assert_cmpuint(g->created, ==, h->created);
    g_assert_cmpuint(g->disposed, ==, h->disposed);
    g_assert_cmpuint(g->instances, ==, h->instances);
  }
  g_assert_cmpuint(g_hash_table_size(a->nodes), ==, g_hash_table_size(b->nodes));
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, a->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *n = value;
    const gs_replay_node *o = g_hash_table_lookup(b->nodes, &n->id);
    g_assert_nonnull(o);
    g_assert_cmpstr(n->kind, ==, o->kind);
    g_assert_cmpint(n->saved_freed, ==, o->saved_freed);
    g_assert_cmpint(n->runnable, ==, o->runnable);
    g_assert_cmpuint(n->holders, ==, o->holders);
    g_assert_cmpuint(n->n_saved, ==, o->n_saved);
  }
  g_assert_cmpuint(g_hash_table_size(a->names), ==, g_hash_table_size(b->names));
  /* Module trees, parameters' places and optimizers: every alive tensor is named alike. */
  g_assert_cmpuint(g_hash_table_size(a->modules), ==, g_hash_table_size(b->modules));
  g_hash_table_iter_init(&it, a->modules);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_module *x = value, *y = gs_replay_module_get(b, x->id);
    g_assert_nonnull(y);
    g_assert_cmpstr(x->type, ==, y->type);
    g_assert_cmpuint(x->parent, ==, y->parent);
    g_assert_cmpstr(x->name, ==, y->name);
    g_assert_cmpuint(x->n_parents, ==, y->n_parents);
  }
  g_assert_cmpuint(g_hash_table_size(a->parameters), ==, g_hash_table_size(b->parameters));
  for (guint i = 0; i < xa->len; i++) {
    const gs_replay_object *o = xa->pdata[i];
    g_assert_cmpstr(gs_replay_tensor_name(a, o->id), ==, gs_replay_tensor_name(b, o->id));
  }
  g_assert_cmpuint(g_hash_table_size(a->optimizers), ==, g_hash_table_size(b->optimizers));
  g_hash_table_iter_init(&it, a->optimizers);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_optimizer *x = value, *y = gs_replay_optimizer_get(b, x->id);
    g_assert_nonnull(y);
    g_assert_cmpstr(x->type, ==, y->type);
    g_assert_cmpuint(x->params->len, ==, y->params->len);
    g_assert_cmpmem(x->params->data, x->params->len * sizeof(guint64), y->params->data,
                    y->params->len * sizeof(guint64));
  }
}

void assert_seeks_equal_fresh_replay(gs_trace_model *m, GBytes *bytes, guint64 forward,
                                     guint64 backward, guint jumps, guint32 seed) {
  guint64 n = gs_trace_model_n_events(m);
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 i = 0; i < MIN(n, forward); i++)
    g_array_append_val(order, i);
  for (guint64 i = n; i-- > 0 && n - i <= backward;)
    g_array_append_val(order, i);
  GRand *rand = g_rand_new_with_seed(seed);
  for (guint k = 0; k < jumps; k++) {
    guint64 i = (guint64)g_rand_int_range(rand, 0, (gint32)n);
    g_array_append_val(order, i);
  }
  g_rand_free(rand);
  for (guint k = 0; k < order->len; k++) {
    guint64 i = g_array_index(order, guint64, k);
    g_autoptr(gs_replay) want = replay_prefix(bytes, i + 1);
    assert_replay_equal(want, gs_trace_model_seek(m, i));
  }
  g_autoptr(gs_replay) all = replay_prefix(bytes, n);
  assert_replay_equal(all, gs_trace_model_head(m));
}

guint64 find_event(gs_trace_model *m, guint64 from, gs_trace_kind kind, const char *name) {
  for (guint64 i = from; i < gs_trace_model_n_events(m); i++) {
    if (gs_trace_model_kind_at(m, i) != kind)
      continue;
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (!name || g_strcmp0(gs_trace_model_string(m, e.name), name) == 0 ||
        g_strcmp0(gs_trace_model_string(m, e.op), name) == 0)
      return i;
  }
  return G_MAXUINT64;
}

guint64 *life_indices(const gs_trace_model *m, guint64 tensor, guint *n) {
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, tensor);
  *n = gs_tensor_life_len(life);
  guint64 *indices = g_new(guint64, *n + 1);
  for (guint i = 0; i < *n; i++)
    indices[i] = gs_tensor_life_at(life, i);
  return indices;
}
