/* test-trace-model-life.c: a tensor's whole life through the model (viewed, cloned, detached,
 * written in place, named, moved into a parameter, owned by a module, disposed), the event
 * list's filters (kind, thread, scope, tensor, text), the scrubber's sentences and the order
 * of live objects in their groups, on logs the engine records here. */
#include <string.h>

#include "model-test-util.h"
#include "object-groups.h"

static guint64 t_id, p_id, v_id, c_id, d_id, y_id;

static void life_work(void) {
  const int64_t shape[] = {2, 3};
  gs_module mod = gs_module_new("Bias");
  gs_scope s = gs_scope_begin("setup");
  gs_tensor t = gs_ones(GS_F32, shape, 2);
  gs_trace_name(t, "tee");
  gs_tensor v = gs_t(t);     /* a view made from it */
  gs_tensor c = gs_clone(t); /* a copy-on-write clone made from it */
  gs_tensor d = gs_detach(t); /* shares its storage and version counter */
  gs_add_scalar_(t, 1.0);    /* version 1 */
  gs_mul_scalar_(d, 2.0);    /* version 2, through the detached tensor */
  gs_tensor p = gs_parameter_new(t, true); /* the handle moves */
  gs_module_register_parameter(mod, "b", p);
  t_id = t.id, p_id = p.id, v_id = v.id, c_id = c.id, d_id = d.id;
  gs_scope_end(s);
  /* A graph that saved the parameter, then an in-place write that breaks it. */
  gs_scope g = gs_scope_begin("graph");
  gs_tensor y = gs_mul(p, p);
  y_id = y.id;
  gs_no_grad_begin();
  gs_add_scalar_(p, 1.0); /* MulBackward saved p at version 2; now 3 */
  gs_no_grad_end();
  gs_scope_end(g);
  gs_module_dispose(mod);
}

/* Does e concern one of ids, or (storage kinds, in-place writes) the storage? */
static gboolean concerns(const gs_trace_event *e, const guint64 *ids, guint n, guint64 storage) {
  for (guint k = 0; k < n; k++) {
    guint64 id = ids[k];
    if (e->tensor == id || e->target == id || e->object == id)
      return TRUE;
    if (e->kind == GS_TRACE_TENSOR_CREATE && e->origin != 0 && e->source == id)
      return TRUE;
    for (guint i = 0; i < e->n_saved; i++)
      if (e->saved[i] == id)
        return TRUE;
    for (guint i = 0; i < e->n_parts; i++)
      if (e->parts[i] == id)
        return TRUE;
  }
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE:
  case GS_TRACE_INPLACE_WRITE: return e->storage == storage;
  case GS_TRACE_STORAGE_SHARE: return e->storage == storage || e->source == storage;
  default: return FALSE;
  }
}

static void test_tensor_life(void) {
  char *path = record_log(life_work);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  guint64 n = gs_trace_model_n_events(m);

  g_autofree guint64 *life = NULL;
  guint len = 0;
  life = life_indices(m, t_id, &len);

  /* The reference: every event, decoded, tested field by field. */
  guint64 storage = 0;
  g_autoptr(GArray) want = g_array_new(FALSE, FALSE, sizeof(guint64));
  const guint64 ids[] = {t_id, p_id};
  for (guint64 i = 0; i < n; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (e.kind == GS_TRACE_TENSOR_CREATE && e.tensor == t_id)
      storage = e.storage;
  }
  g_assert_cmpuint(storage, !=, 0);
  for (guint64 i = 0; i < n; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (concerns(&e, ids, 2, storage))
      g_array_append_val(want, i);
  }
  g_assert_cmpuint(len, ==, want->len);
  for (guint i = 0; i < len; i++)
    g_assert_cmpuint(life[i], ==, g_array_index(want, guint64, i));

  /* By hand: the story in kinds, in order. */
  g_autoptr(GString) story = g_string_new(NULL);
  for (guint i = 0; i < len; i++)
    g_string_append_printf(story, "%s%s", i ? " " : "",
                           gs_trace_kind_name(gs_trace_model_kind_at(m, life[i])));
  if (g_test_verbose())
    g_test_message("life: %s", story->str);
  const char *expected[] = {
      "storage_alloc", "tensor_create", "tensor_name",
      "tensor_create",                    /* the view */
      "storage_share", "tensor_create",   /* the clone shares the storage */
      "tensor_create",                    /* the detach */
      "inplace_write",                    /* add_scalar_: version 1 */
      "inplace_write",                    /* through the detached tensor: version 2 */
      "tensor_move",                      /* into a parameter */
      "owner_change", "module_parameter", /* the module takes it */
      "node_create",                      /* MulBackward saves it */
      "inplace_write",                    /* version 3: the saved one is stale */
      "tensor_dispose", "storage_free",   /* the module's disposal */
  };
  for (gsize i = 0; i < G_N_ELEMENTS(expected); i++)
    g_assert_nonnull(strstr(story->str, expected[i]));
  g_assert_true(g_str_has_prefix(story->str, "storage_alloc tensor_create tensor_name"));
  g_assert_true(g_str_has_suffix(story->str, "storage_free"));

  /* A tensor nothing happened to but its birth and death. */
  g_autofree guint64 *none = NULL;
  guint none_len = 99;
  none = life_indices(m, G_GUINT64_CONSTANT(0xdead00000000beef), &none_len);
  g_assert_cmpuint(none_len, ==, 0);
  remove_log(path);
}

static guint count_matching(gs_trace_model *m, const gs_event_filter *f) {
  guint count = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    count += gs_trace_model_event_matches(m, i, f);
  return count;
}

static void test_filters(void) {
  char *path = record_log(life_work);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(count_matching(m, NULL), ==, n);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){0}), ==, n);

  /* By kind, against the kind column. */
  guint creates = 0, scope_events = 0;
  for (guint64 i = 0; i < n; i++) {
    creates += gs_trace_model_kind_at(m, i) == GS_TRACE_TENSOR_CREATE;
    scope_events += gs_trace_model_kind_at(m, i) == GS_TRACE_SCOPE_BEGIN ||
                    gs_trace_model_kind_at(m, i) == GS_TRACE_SCOPE_END;
  }
  g_assert_cmpuint(creates, >, 4);
  gs_event_filter f = {.kinds = 1u << GS_TRACE_TENSOR_CREATE};
  g_assert_cmpuint(count_matching(m, &f), ==, creates);
  f.kinds |= 1u << GS_TRACE_SCOPE_BEGIN | 1u << GS_TRACE_SCOPE_END;
  g_assert_cmpuint(count_matching(m, &f), ==, creates + scope_events);

  /* By thread: one thread recorded everything. */
  g_assert_cmpuint(gs_trace_model_threads(m)->len, ==, 1);
  guint32 thread = g_array_index(gs_trace_model_threads(m), guint32, 0);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.thread = thread}), ==, n);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.thread = thread + 1}), ==, 0);

  /* By scope: the events from "setup"'s begin to its end, both included. */
  const gs_replay_scope *setup = gs_trace_model_scope_at(m, 0);
  g_assert_cmpstr(setup->name, ==, "setup");
  guint64 begin = find_event(m, 0, GS_TRACE_SCOPE_BEGIN, "setup");
  guint64 end = find_event(m, 0, GS_TRACE_SCOPE_END, NULL);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.scope = setup->id}), ==,
                   end - begin + 1);
  g_assert_cmpuint(gs_trace_model_scope_of(m, 0), ==, 0); /* module_create: before any scope */

  /* By tensor: exactly its life. */
  g_autofree guint64 *life = NULL;
  guint len = 0;
  life = life_indices(m, t_id, &len);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.tensor = t_id}), ==, len);
  /* Combined with a kind: its in-place writes. */
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.tensor = t_id,
                                                        .kinds = 1u << GS_TRACE_INPLACE_WRITE}),
                   ==, 3);

  /* By text: kind names, ops, node kinds, names (any case), handles. */
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "scope_end"}), ==, 2);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "MULBACKWARD"}), >=, 1);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "mul_scalar_"}), ==, 1);
  /* The module's creation, and the disposal whose reason names it. */
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "BIAS"}), ==, 2);
  /* The tensor's name (kept by the parameter's handle): every event naming either handle. */
  guint named = 0;
  for (guint64 i = 0; i < n; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    named += e.tensor == t_id || e.tensor == p_id || e.object == p_id || e.target == p_id;
  }
  g_assert_cmpuint(named, >, 5);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "Tee"}), >=, named);
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = "no such text"}), ==, 0);
  char handle[32];
  g_snprintf(handle, sizeof handle, "#%u.%u", (unsigned)(v_id & 0xffffffffu),
             (unsigned)(v_id >> 32));
  guint by_handle = count_matching(m, &(gs_event_filter){.search = handle});
  g_assert_cmpuint(by_handle, >=, 2); /* the view's creation and its disposal */
  /* "#slot" alone matches every generation of the slot: at least as many. */
  g_snprintf(handle, sizeof handle, "#%u", (unsigned)(v_id & 0xffffffffu));
  g_assert_cmpuint(count_matching(m, &(gs_event_filter){.search = handle}), >=, by_handle);
  remove_log(path);
}

static char *explain_first(gs_trace_model *m, gs_trace_kind kind, const char *name) {
  guint64 at = find_event(m, 0, kind, name);
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  return gs_trace_model_explain(m, at);
}

static void test_explanations(void) {
  char *path = record_log(life_work);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  char h[32];

  /* A clone shares its source's storage copy-on-write. */
  guint64 clone_at = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(m) && clone_at == G_MAXUINT64; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (e.kind == GS_TRACE_TENSOR_CREATE && e.tensor == c_id)
      clone_at = i;
  }
  g_autofree char *clone = gs_trace_model_explain(m, clone_at);
  g_assert_true(g_str_has_prefix(clone, "clone: tensor #"));
  g_assert_true(g_str_has_suffix(clone, "copy-on-write; nothing was copied"));
  /* The sentence names the clone's own storage, then the source's whose bytes it shares,
   * as the log has them (it once said the clone "now shares" the source's storage). */
  gs_trace_event ce;
  g_assert_true(gs_trace_model_event(m, clone_at, &ce));
  const gs_replay *at = gs_trace_model_seek(m, clone_at);
  const gs_replay_object *src = gs_replay_object_find(at, ce.source);
  g_autofree char *own = g_strdup_printf("has storage #%" G_GUINT64_FORMAT ", which shares",
                                         ce.storage);
  g_assert_nonnull(strstr(clone, own));
  g_assert_nonnull(src);
  g_autofree char *theirs = g_strdup_printf("storage #%" G_GUINT64_FORMAT " copy-on-write",
                                            src->storage);
  g_assert_cmpuint(src->storage, !=, ce.storage);
  g_assert_nonnull(strstr(clone, theirs));

  /* The end of "setup" disposed the view, the clone and the detached tensor. */
  g_autofree char *end = explain_first(m, GS_TRACE_SCOPE_END, NULL);
  g_assert_true(g_str_has_prefix(end, "scope \"setup\" #"));
  g_assert_nonnull(strstr(end, " ended and disposed 3 tensors ("));

  /* The last in-place write makes MulBackward's saved parameter stale. */
  guint64 last_write = G_MAXUINT64;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_INPLACE_WRITE)
      last_write = i;
  g_autofree char *write = gs_trace_model_explain(m, last_write);
  gs_format_handle(p_id, h, sizeof h);
  g_autofree char *want = g_strdup_printf("in-place add_scalar_: tensor %s \"tee\" is now at "
                                          "version 3; MulBackward #", h);
  g_assert_true(g_str_has_prefix(write, want));
  /* It names what the node saved: the parameter, by the handle it had then. */
  g_autofree char *saved = g_strdup_printf(" saved tensor %s \"tee\" at version 2 and will fail "
                                           "in backward", h);
  g_assert_true(g_str_has_suffix(write, saved));

  /* The move into a parameter, a mark-free log's module, a view. */
  g_autofree char *move = explain_first(m, GS_TRACE_TENSOR_MOVE, NULL);
  g_assert_nonnull(strstr(move, "became a parameter with the new handle"));
  g_autofree char *module = explain_first(m, GS_TRACE_MODULE_CREATE, NULL);
  g_assert_true(g_str_has_prefix(module, "module Bias #"));
  g_assert_null(gs_trace_model_explain(m, gs_trace_model_n_events(m)));
  remove_log(path);
}

/* Three leaks from one line, made after three disposals: slots are reused last freed first,
 * so the first made sits in the highest slot. */
static guint64 leaked_ids[3];

static void leaks_in_reused_slots(void) {
  gs_tensor freed[3];
  for (int i = 0; i < 3; i++)
    freed[i] = gs_zeros(GS_F32, (int64_t[]){1}, 1);
  /* Freed lowest slot first, so the first taken again is the highest. */
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if ((freed[j].id & 0xffffffffu) < (freed[i].id & 0xffffffffu)) {
        gs_tensor t = freed[i];
        freed[i] = freed[j], freed[j] = t;
      }
  for (int i = 0; i < 3; i++)
    gs_dispose(freed[i]);
  for (int i = 0; i < 3; i++)
    leaked_ids[i] = gs_zeros(GS_I64, (int64_t[]){3, 11}, 2).id; /* one group */
  for (int i = 0; i < 3; i++)
    gs_dispose((gs_tensor){leaked_ids[i]}); /* alive at the recording's end, not the test's */
}

/* A group's members (the stats leak report's "first members", the memory view's lists) come
 * in the order the program made them. */
static void test_group_members_in_creation_order(void) {
  g_autofree char *path = record_log(leaks_in_reused_slots);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  /* The moment before the first of the three disposals at the end. */
  guint64 n = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (e.kind == GS_TRACE_TENSOR_DISPOSE && e.tensor == leaked_ids[0]) {
      n = i;
      break;
    }
  }
  g_assert_cmpuint(n, >, 0);
  g_assert_cmpuint(leaked_ids[0] & 0xffffffffu, >, leaked_ids[2] & 0xffffffffu); /* premise */
  g_autoptr(gs_replay) r = replay_prefix(bytes, n);
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(r);
  g_autoptr(GPtrArray) groups = gs_object_groups(r, alive, NULL);
  g_assert_cmpuint(groups->len, ==, 1);
  const gs_object_group *g = groups->pdata[0];
  g_assert_cmpuint(g->members->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpuint(((const gs_replay_object *)g->members->pdata[i])->id, ==, leaked_ids[i]);
  remove_log(g_steal_pointer(&path));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  g_test_add_func("/trace-model/tensor-life", test_tensor_life);
  g_test_add_func("/trace-model/filters", test_filters);
  g_test_add_func("/trace-model/explanations", test_explanations);
  g_test_add_func("/trace-model/group-members-in-creation-order",
                  test_group_members_in_creation_order);
  return g_test_run();
}
