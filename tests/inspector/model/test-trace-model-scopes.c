/* test-trace-model-scopes.c: the model's scope accounting and sibling groups
 * (inspector/model/replay/replay-scopes.c, index/model-scope-groups.c) on logs the engine
 * records here:
 * objects moved in and out of each scope, so that at every event
 * created + moved in = disposed + moved out + alive, on a small program using every kind of
 * move and on the digits example (GS_DIGITS_EXAMPLE); sibling scopes grouped by name, the
 * same whether the log arrives whole or in small pieces; a group's totals at any event equal
 * the sum over its instances; and 100 k scopes grouped and queried quickly. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <string.h>

#include "model-test-util.h"
#include "trace-model.h"

#define N_STEPS 5

static const int64_t shape[] = {2, 3};

/* An epoch of steps; each step makes a tensor in an inner scope and moves it out to the
 * step, which moves one result out to the epoch; then objects are detached, attached and
 * moved between two sibling scopes, and a module takes a parameter out of a scope. */
static void moves_workload(void) {
  gs_scope epoch = gs_scope_begin("epoch");
  gs_tensor kept[N_STEPS];
  for (int i = 0; i < N_STEPS; i++) {
    gs_scope step = gs_scope_begin("step");
    gs_scope inner = gs_scope_begin("inner");
    gs_tensor a = gs_move_to_outer(gs_ones(GS_F32, shape, 2)); /* inner -> step */
    gs_ones(GS_F32, shape, 2);                                 /* disposed by inner's end */
    gs_scope_end(inner);
    gs_tensor b = gs_mul_scalar(a, 2.0);
    kept[i] = gs_move_to_outer(b); /* step -> epoch */
    gs_scope_end(step);            /* disposes a */
  }
  for (int i = 0; i < N_STEPS - 1; i++)
    gs_dispose(kept[i]);
  gs_scope left = gs_scope_begin("left");
  gs_tensor free_agent = gs_detach_from_scopes(gs_zeros(GS_F32, shape, 2)); /* left -> caller */
  gs_tensor moved = gs_zeros(GS_F32, shape, 2);
  gs_scope right = gs_scope_begin("right");
  gs_scope_move_to(left, right, moved);     /* left -> right, though right is inner */
  gs_scope_attach(right, kept[N_STEPS - 1]); /* epoch -> right */
  gs_module m = gs_module_new(NULL);
  gs_module_register_parameter(m, "w", gs_parameter_new(gs_ones(GS_F32, shape, 2), true));
  gs_scope_end(right);
  gs_scope_end(left);
  gs_scope_end(epoch);
  gs_dispose(free_agent);
  gs_module_dispose(m);
}

/* The scope named name (the nth such) at the end of the log. */
static const gs_replay_scope *scope_named(gs_trace_model *m, const char *name, int nth) {
  for (guint i = 0; i < gs_trace_model_n_scopes(m); i++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(m, i);
    if (g_strcmp0(s->name, name) == 0 && nth-- == 0)
      return s;
  }
  g_assert_not_reached();
}

/* Every scope begun by each of `checks` events spread over the log balances there. */
static void assert_every_scope_balances(gs_trace_model *m, guint checks) {
  guint64 n = gs_trace_model_n_events(m);
  guint64 stride = MAX(1, n / checks);
  guint64 moved = 0;
  for (guint64 i = 0; i < n; i += stride) {
    const gs_replay *state = gs_trace_model_seek(m, i);
    for (guint p = 0; p < state->scope_list->len; p++) {
      const gs_replay_scope *s = state->scope_list->pdata[p];
      g_assert_cmpuint(s->created + s->moved_in, ==, s->disposed + s->moved_out + s->alive);
    }
  }
  for (guint p = 0; p < gs_trace_model_n_scopes(m); p++) {
    const gs_replay_scope *s = gs_trace_model_scope_at(m, p);
    g_assert_cmpuint(s->created + s->moved_in, ==, s->disposed + s->moved_out + s->alive);
    moved += s->moved_in + s->moved_out;
  }
  g_assert_cmpuint(moved, >, 0); /* the equation was not trivially 0 = 0 */
}

static void test_moves_balance(void) {
  g_autofree char *path = record_log(moves_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 64);
  remove_log(g_steal_pointer(&path));

  const gs_replay_scope *epoch = scope_named(m, "epoch", 0);
  g_assert_cmpuint(epoch->moved_in, ==, N_STEPS);  /* one result from each step */
  g_assert_cmpuint(epoch->moved_out, ==, 1);       /* attached to "right" */
  g_assert_cmpuint(epoch->disposed, ==, N_STEPS - 1);
  for (int i = 0; i < N_STEPS; i++) {
    const gs_replay_scope *step = scope_named(m, "step", i);
    const gs_replay_scope *inner = scope_named(m, "inner", i);
    g_assert_cmpuint(step->moved_in, ==, 1);
    g_assert_cmpuint(step->moved_out, ==, 1);
    g_assert_cmpuint(step->created, ==, 1);
    g_assert_cmpuint(step->disposed, ==, 1);
    g_assert_cmpuint(inner->created, ==, 2);
    g_assert_cmpuint(inner->moved_out, ==, 1);
    g_assert_cmpuint(inner->disposed, ==, 1);
  }
  const gs_replay_scope *left = scope_named(m, "left", 0);
  const gs_replay_scope *right = scope_named(m, "right", 0);
  g_assert_cmpuint(left->created, ==, 2);
  g_assert_cmpuint(left->moved_out, ==, 2); /* detached, and moved to right */
  g_assert_cmpuint(right->moved_in, ==, 2); /* from left, and the attach */
  g_assert_cmpuint(right->created, ==, 1);  /* the parameter's tensor... */
  g_assert_cmpuint(right->moved_out, ==, 1); /* ...taken by the module */
  assert_every_scope_balances(m, G_MAXUINT);
  /* The keyframed moments say what a fresh replay says. */
  assert_seeks_equal_fresh_replay(m, bytes, 200, 50, 50, 7);
}

/* A real training run: 2,700 "train step" scopes, batches adopted from the loader. */
static void test_digits_balance(void) {
  const char *digits = g_getenv("GS_DIGITS_EXAMPLE");
  if (!digits) {
    g_test_skip("GS_DIGITS_EXAMPLE is not set");
    return;
  }
  g_autofree char *dir = g_dir_make_tmp("gradscope-scopes-XXXXXX", NULL);
  g_autofree char *log = g_build_filename(dir, "digits.gstrace", NULL);
  g_autofree char *env = g_strconcat("GS_TRACE=", log, NULL);
  const char *argv[] = {"env", env, digits, NULL};
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH |
                             G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_autoptr(gs_trace_model) m = gs_trace_model_load_file(log, NULL, NULL, NULL, &error);
  g_assert_no_error(error);
  g_remove(log);
  g_rmdir(dir);
  assert_every_scope_balances(m, 400);
  /* The steps are one group of 2,700 under no scope; its totals balance too. */
  const GArray *roots = gs_trace_model_scope_groups(m, 0);
  g_assert_nonnull(roots);
  gboolean found = FALSE;
  guint64 last = gs_trace_model_n_events(m) - 1;
  for (guint i = 0; i < roots->len; i++) {
    guint g = g_array_index(roots, guint, i);
    if (g_strcmp0(gs_trace_model_scope_group_name(m, g), "train step") != 0)
      continue;
    found = TRUE;
    gs_scope_group_stats st;
    gs_trace_model_scope_group_stats(m, g, gs_trace_model_head(m), last, &st);
    g_assert_cmpuint(st.instances, ==, 2700);
    g_assert_cmpuint(st.created + st.moved_in, ==, st.disposed + st.moved_out + st.alive);
    g_assert_cmpuint(st.moved_out, >, 0);
    g_assert_cmpuint(st.leaked, ==, 0);
  }
  g_assert_true(found);
}

/* Instances of a group, summed one by one at the state of index. */
static void sum_instances(gs_trace_model *m, guint group, guint64 index,
                          gs_scope_group_stats *out) {
  memset(out, 0, sizeof *out);
  const gs_replay *state = gs_trace_model_seek(m, index);
  const GArray *inst = gs_trace_model_scope_group_instances(m, group);
  guint64 peak_sum = 0;
  out->peak_min = G_MAXUINT64;
  for (guint i = 0; i < inst->len; i++) {
    const gs_replay_scope *head = gs_trace_model_scope_at(m, g_array_index(inst, guint, i));
    const gs_replay_scope *s = gs_trace_model_scope_in(m, state, head->id);
    if (!s)
      continue;
    out->instances++;
    out->open += !s->ended;
    out->created += s->created;
    out->disposed += s->disposed;
    out->moved_in += s->moved_in;
    out->moved_out += s->moved_out;
    out->alive += s->alive;
    out->bytes += s->bytes;
    peak_sum += s->peak_bytes;
    out->peak_min = MIN(out->peak_min, s->peak_bytes);
    out->peak_max = MAX(out->peak_max, s->peak_bytes);
  }
  out->peak_mean = out->instances ? peak_sum / out->instances : 0;
  if (!out->instances)
    out->peak_min = 0;
}

static void test_groups(void) {
  g_autofree char *path = record_log(moves_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 64);
  remove_log(g_steal_pointer(&path));
  const GArray *roots = gs_trace_model_scope_groups(m, 0);
  g_assert_cmpuint(roots->len, ==, 1);
  guint epoch_group = g_array_index(roots, guint, 0);
  g_assert_cmpstr(gs_trace_model_scope_group_name(m, epoch_group), ==, "epoch");
  const gs_replay_scope *epoch = scope_named(m, "epoch", 0);
  const GArray *under = gs_trace_model_scope_groups(m, epoch->id);
  g_assert_cmpuint(under->len, ==, 2); /* step x5, left */
  guint step_group = g_array_index(under, guint, 0);
  g_assert_cmpstr(gs_trace_model_scope_group_name(m, step_group), ==, "step");
  g_assert_cmpuint(gs_trace_model_scope_group_index(m, step_group), ==, 0);
  g_assert_cmpuint(gs_trace_model_scope_group_parent(m, step_group), ==, epoch->id);
  g_assert_cmpuint(gs_trace_model_scope_group_instances(m, step_group)->len, ==, N_STEPS);
  const GArray *grown = gs_trace_model_scope_groups_grown(m, epoch->id);
  g_assert_cmpuint(grown->len, ==, 1);
  g_assert_cmpuint(g_array_index(grown, guint, 0), ==, step_group);
  /* Each "inner" is alone under its step: a group of one. */
  const gs_replay_scope *step3 = scope_named(m, "step", 3);
  guint group, instance;
  g_assert_true(gs_trace_model_scope_group_of(
      m, gs_trace_model_scope_position(m, step3->id), &group, &instance));
  g_assert_cmpuint(group, ==, step_group);
  g_assert_cmpuint(instance, ==, 3);
  g_assert_cmpuint(gs_trace_model_scope_groups(m, step3->id)->len, ==, 1);
  g_assert_false(gs_trace_model_scope_group_of(m, 9999, NULL, NULL));
  g_assert_cmpuint(gs_trace_model_scope_position(m, 999999), ==, G_MAXUINT);

  /* Totals at every event equal the instances summed one by one. */
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    for (guint g = 0; g < gs_trace_model_n_scope_groups(m); g++) {
      gs_scope_group_stats want, got;
      sum_instances(m, g, i, &want);
      gs_trace_model_scope_group_stats(m, g, gs_trace_model_seek(m, i), i, &got);
      g_assert_cmpuint(got.instances, ==, want.instances);
      g_assert_cmpuint(got.open, ==, want.open);
      g_assert_cmpuint(got.created, ==, want.created);
      g_assert_cmpuint(got.disposed, ==, want.disposed);
      g_assert_cmpuint(got.moved_in, ==, want.moved_in);
      g_assert_cmpuint(got.moved_out, ==, want.moved_out);
      g_assert_cmpuint(got.alive, ==, want.alive);
      g_assert_cmpuint(got.bytes, ==, want.bytes);
      g_assert_cmpuint(got.peak_min, ==, want.peak_min);
      g_assert_cmpuint(got.peak_mean, ==, want.peak_mean);
      g_assert_cmpuint(got.peak_max, ==, want.peak_max);
      g_assert_cmpuint(got.leaked, ==, 0);
    }
  }
}

/* A log fed in small pieces (a live run) groups as the whole log does. */
static void test_groups_live(void) {
  g_autofree char *path = record_log(moves_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  g_autoptr(gs_trace_model) whole = model_from_bytes(bytes, 0);
  remove_log(g_steal_pointer(&path));
  g_autoptr(gs_trace_model) live = gs_trace_model_new();
  gsize n;
  const guint8 *data = g_bytes_get_data(bytes, &n);
  for (gsize at = 0; at < n; at += 97)
    gs_trace_model_feed(live, data + at, MIN(97, n - at));
  g_assert_false(gs_trace_model_finished(live));
  gs_trace_model_finish(live);
  g_assert_true(gs_trace_model_finished(live));
  g_assert_cmpuint(gs_trace_model_n_scope_groups(live), ==, gs_trace_model_n_scope_groups(whole));
  for (guint g = 0; g < gs_trace_model_n_scope_groups(whole); g++) {
    g_assert_cmpstr(gs_trace_model_scope_group_name(live, g), ==,
                    gs_trace_model_scope_group_name(whole, g));
    const GArray *a = gs_trace_model_scope_group_instances(live, g);
    const GArray *b = gs_trace_model_scope_group_instances(whole, g);
    g_assert_cmpuint(a->len, ==, b->len);
    g_assert_cmpmem(a->data, a->len * sizeof(guint), b->data, b->len * sizeof(guint));
  }
}

/* A scope left open when the program stops holds its objects for good: leaked. */
static void leaky_workload(void) {
  for (int i = 0; i < 3; i++) {
    gs_scope s = gs_scope_begin("job");
    gs_ones(GS_F32, shape, 2);
    if (i < 2)
      gs_scope_end(s);
  }
}

static void test_leaked(void) {
  g_autofree char *path = record_log(leaky_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  remove_log(g_steal_pointer(&path));
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  gs_trace_model_feed(m, g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
  guint job = g_array_index(gs_trace_model_scope_groups(m, 0), guint, 0);
  guint64 last = gs_trace_model_n_events(m) - 1;
  gs_scope_group_stats st;
  /* Still arriving: the open job may yet end. */
  gs_trace_model_scope_group_stats(m, job, gs_trace_model_head(m), last, &st);
  g_assert_cmpuint(st.instances, ==, 3);
  g_assert_cmpuint(st.open, ==, 1);
  g_assert_cmpuint(st.alive, ==, 1);
  g_assert_cmpuint(st.leaked, ==, 0);
  gs_trace_model_finish(m);
  gs_trace_model_scope_group_stats(m, job, gs_trace_model_head(m), last, &st);
  g_assert_cmpuint(st.leaked, ==, 1);
  g_assert_cmpuint(st.created + st.moved_in, ==, st.disposed + st.moved_out + st.alive);
}

/* 100 k step scopes under one epoch: grouping keeps indexing linear, and a group's totals at
 * any event cost a binary search, not a walk over the instances. */
#define MANY 100000

/* Every look-up of a scope's begin or end by position, counted: its meson.build links this
 * test with --wrap for both, so a group's totals can be held to a binary search's number of
 * them instead of a time. */
guint64 __real_gs_trace_model_scope_begin_index(const gs_trace_model *m, guint position);
guint64 __real_gs_trace_model_scope_end_index(const gs_trace_model *m, guint position);
guint64 __wrap_gs_trace_model_scope_begin_index(const gs_trace_model *m, guint position);
guint64 __wrap_gs_trace_model_scope_end_index(const gs_trace_model *m, guint position);
static guint64 scope_lookups;
guint64 __wrap_gs_trace_model_scope_begin_index(const gs_trace_model *m, guint position) {
  scope_lookups++;
  return __real_gs_trace_model_scope_begin_index(m, position);
}
guint64 __wrap_gs_trace_model_scope_end_index(const gs_trace_model *m, guint position) {
  scope_lookups++;
  return __real_gs_trace_model_scope_end_index(m, position);
}

static void many_workload(void) {
  gs_scope epoch = gs_scope_begin("epoch");
  for (int i = 0; i < MANY; i++) {
    gs_scope s = gs_scope_begin(i % 1000 == 0 ? "checkpoint" : "train step");
    gs_tensor t = gs_ones(GS_F32, shape, 2);
    if (i % 2)
      gs_move_to_outer(t);
    gs_scope_end(s);
  }
  gs_scope_end(epoch);
}

static void test_many_scopes(void) {
  g_autofree char *path = record_log(many_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  remove_log(g_steal_pointer(&path));
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  /* The log opens with a snapshot of what earlier tests left alive (test_leaked's open job
   * scope, which epoch begins inside): its scopes come first. */
  guint first = 0;
  guint64 snapshot_end = 0;
  if (gs_trace_model_snapshot(m, NULL, NULL, &snapshot_end))
    while (gs_trace_model_scope_begin_index(m, first) < snapshot_end)
      first++;
  g_assert_cmpuint(gs_trace_model_n_scopes(m), ==, first + MANY + 1);
  const gs_replay_scope *epoch = gs_trace_model_scope_at(m, first);
  g_assert_cmpstr(epoch->name, ==, "epoch");
  const GArray *under = gs_trace_model_scope_groups(m, epoch->id);
  g_assert_cmpuint(under->len, ==, 2);
  guint steps = g_array_index(under, guint, 1); /* "checkpoint" began first */
  g_assert_cmpuint(gs_trace_model_scope_group_instances(m, steps)->len, ==, MANY - MANY / 1000);
  guint64 n = gs_trace_model_n_events(m);
  /* Ascending events, so that seeking (not what is measured) moves forward. */
  guint queries = 2000;
  guint64 most_lookups = 0;
  for (guint q = 0; q < queries; q++) {
    guint64 index = n * q / queries + q % 7;
    const gs_replay *state = gs_trace_model_seek(m, index);
    gs_scope_group_stats st;
    scope_lookups = 0;
    gs_trace_model_scope_group_stats(m, steps, state, index, &st);
    most_lookups = MAX(most_lookups, scope_lookups);
    g_assert_cmpuint(st.created + st.moved_in, ==, st.disposed + st.moved_out + st.alive);
    g_assert_cmpuint(st.open, <=, 1);
  }
  gs_scope_group_stats st;
  gs_trace_model_scope_group_stats(m, steps, gs_trace_model_head(m), n - 1, &st);
  g_assert_cmpuint(st.moved_out, ==, MANY / 2);
  g_test_message("%d scopes, %" G_GUINT64_FORMAT " events: %u group totals, at most %"
                 G_GUINT64_FORMAT " scope look-ups each", MANY + 1, n, queries, most_lookups);
  /* A binary search over the ~99,900 instances is 17 look-ups, the walk back over the open
   * ones a step or two: 2 log2(n) + 8 leaves room; a walk over the instances is 100 k. (The
   * time these take is bench-model's.) */
  g_assert_cmpuint(most_lookups, <=, 2 * 17 + 8);
}

/* A seek reuses the last cursor's scope list and writes only what differs from the head's
 * (model-seek.c): seeks far forward, far back and near, in that order, give the scopes a
 * model that never sought before gives at the same event, open ones included. */
static void test_seek_scope_list(void) {
  g_autofree char *path = record_log(moves_workload);
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  remove_log(g_steal_pointer(&path));
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 8);
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(n, >, 100);
  const guint64 at[] = {n / 2, n - 3, 9, n / 3, n / 3 + 20, 2, n - 30, n / 2 + 1, n / 4, n - 2};
  guint open_seen = 0;
  for (guint i = 0; i < G_N_ELEMENTS(at); i++) {
    const gs_replay *state = gs_trace_model_seek(m, at[i]);
    g_autoptr(gs_trace_model) fresh = model_from_bytes(bytes, 8);
    const gs_replay *want = gs_trace_model_seek(fresh, at[i]);
    assert_replay_equal(state, want); /* scope_list among the rest, entry by entry */
    for (guint p = 0; p < want->scope_list->len; p++)
      open_seen += !((const gs_replay_scope *)want->scope_list->pdata[p])->ended;
  }
  g_assert_cmpuint(open_seen, >, G_N_ELEMENTS(at)); /* open scopes' own copies were compared */
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-model/scopes/moves-balance", test_moves_balance);
  g_test_add_func("/trace-model/scopes/digits-balance", test_digits_balance);
  g_test_add_func("/trace-model/scopes/groups", test_groups);
  g_test_add_func("/trace-model/scopes/groups-live", test_groups_live);
  g_test_add_func("/trace-model/scopes/leaked", test_leaked);
  g_test_add_func("/trace-model/scopes/many-scopes", test_many_scopes);
  g_test_add_func("/trace-model/scopes/seek-scope-list", test_seek_scope_list);
  return g_test_run();
}
