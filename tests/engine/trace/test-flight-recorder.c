/* test-flight-recorder.c: the flight recorder (GS_TRACE_RING, gs_trace_open_ring) and logs
 * that begin in the middle of a run (format 1.5 snapshots).
 *
 * One training-like workload (a module tree, an optimizer, a scope per step, tensors and a
 * graph kept across many steps, copy-on-write clones, names, a packed sequence) runs in
 * forked children, each from the same untouched engine, so event numbers and handles agree
 * between runs: one records a whole log, another a small ring dumped at exit, others crash.
 * The model of the ring's dump must equal the whole log's model, at the same event number,
 * from the dump's first recorded event to its last. */
#include <glib.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model-test-util.h"
#include "trace-model.h"

#define STEPS 480 /* enough events that the whole log is over four rings (4 * RING_BYTES) */
#define KEPT 6
#define RING_BYTES (128 * 1024)

/* Runs `steps` training steps; returns with everything it made still alive (a crash test
 * crashes then; the others end the run). */
typedef struct run {
  gs_rng rng;
  gs_module net;
  gs_optimizer opt;
  gs_scope outer;
  gs_tensor kept[KEPT];    /* clones and detaches kept for several steps */
  gs_tensor graph_output;  /* an output whose graph (and saved tensors) lives across steps */
  gs_tensor backward_done; /* an output whose graph backward ran (its saved tensors freed) */
  gs_packed_sequence packed;
} run;

static void start_run(run *r) {
  gs_rng_seed(&r->rng, 7);
  r->net = gs_sequential_new((gs_module[]){gs_linear_new(8, 16, true, &r->rng), gs_relu_new(),
                                           gs_linear_new(16, 4, true, &r->rng)},
                             3);
  gs_tensor params[4];
  int n = gs_module_named_parameters(r->net, params, NULL, 4);
  gs_sgd_options o = GS_SGD_OPTIONS_DEFAULT;
  o.momentum = 0.9; /* momentum buffers: optimizer state alive from the first step on */
  r->opt = gs_sgd_new(params, n, &o);
  r->outer = gs_scope_begin("run");
}

/* Steps from..to-1 of the run (the same steps whatever the split). */
static void run_steps(run *r, int from, int to) {
  gs_rng rng = r->rng;
  for (int step = from; step < to; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, (int64_t[]){32, 8}, 2, &rng);
    gs_tensor target = gs_randn(GS_F32, (int64_t[]){32, 4}, 2, &rng);
    gs_tensor y = gs_module_forward(r->net, x);
    gs_tensor loss = gs_mse_loss(y, target, GS_REDUCTION_MEAN);
    gs_optimizer_zero_grad(r->opt);
    gs_backward(loss);
    gs_optimizer_step(r->opt);
    if (step % 5 == 0) { /* a copy-on-write clone kept in the run's scope for 30 steps */
      int k = (step / 5) % KEPT;
      if (r->kept[k].id)
        gs_dispose(r->kept[k]);
      r->kept[k] = gs_move_to_outer(step % 10 == 0 ? gs_clone(x) : gs_detach(y));
      gs_trace_name(r->kept[k], step % 10 == 0 ? "kept clone" : "kept detach");
    }
    if (step % 50 == 0) { /* a graph that outlives its step: its node keeps x and w */
      if (r->graph_output.id)
        gs_dispose(r->graph_output);
      r->graph_output = gs_move_to_outer(gs_mul(gs_module_forward(r->net, x), target));
      if (r->packed.id)
        gs_packed_sequence_dispose(r->packed);
      gs_tensor seqs[2] = {gs_randn(GS_F32, (int64_t[]){3, 2}, 2, &rng),
                           gs_randn(GS_F32, (int64_t[]){2, 2}, 2, &rng)};
      r->packed = gs_packed_move_to_outer(gs_pack_sequence(seqs, 2, true));
      gs_trace_mark("fifty steps");
    }
    if (step % 25 == 12) { /* a graph left half-run: backward freed its saved tensors */
      gs_tensor w = gs_randn(GS_F32, (int64_t[]){4}, 1, &rng);
      gs_set_requires_grad(w, true);
      gs_tensor loss2 = gs_sum(gs_mul(w, w), NULL, 0, false);
      gs_backward(loss2);
      if (r->backward_done.id)
        gs_dispose(r->backward_done);
      r->backward_done = gs_move_to_outer(loss2);
    }
    gs_scope_end(s);
  }
  r->rng = rng;
}

static void end_run(run *r) {
  gs_scope_end(r->outer);
  gs_optimizer_dispose(r->opt);
  gs_module_dispose(r->net);
}

/* ---- the logs, recorded by children ------------------------------------------------- */

typedef enum {
  WHOLE,
  RING_AT_EXIT,
  RING_SIGSEGV,
  RING_ERROR_ABORT,
  RING_DUMP_CALL,
  LATE_OPEN,
  WHOLE_HALF,    /* the first half of the run, logged whole */
  RING_DUMP_HALF /* the same half in a ring, dumped at once: chunks may wait for the applier */
} recording;

/* Forks a child that records the workload as `how` into path; returns its wait status. */
static int record_in_child(recording how, const char *path) {
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    run r = {0};
    if (how == WHOLE_HALF) {
      if (gs_trace_open(path) != 0)
        _exit(3);
      start_run(&r);
      run_steps(&r, 0, STEPS / 2);
      gs_trace_close();
      _exit(0);
    }
    if (how == WHOLE || how == LATE_OPEN) {
      if (how == WHOLE && gs_trace_open(path) != 0)
        _exit(3);
      start_run(&r);
      run_steps(&r, 0, STEPS / 2);
      if (how == LATE_OPEN && gs_trace_open(path) != 0) /* the program has been at work */
        _exit(3);
      run_steps(&r, STEPS / 2, STEPS);
      end_run(&r);
      gs_trace_close();
      _exit(0);
    }
    /* The crash is meant: the signal's own action is to end the process (a sanitizer would
     * otherwise report it after the recorder's handler has dumped and passed it on). */
    if (how == RING_SIGSEGV)
      signal(SIGSEGV, SIG_DFL);
    if (gs_trace_open_ring(path, RING_BYTES) != 0)
      _exit(3);
    start_run(&r);
    if (how == RING_DUMP_HALF) { /* dumped right after the flush that pushes a chunk out */
      run_steps(&r, 0, STEPS / 2);
      _exit(gs_trace_dump() == 0 ? 0 : 5);
    }
    run_steps(&r, 0, STEPS);
    switch (how) {
    case RING_AT_EXIT:
      end_run(&r);
      exit(0); /* no gs_trace_close: the dump is exit's */
    case RING_SIGSEGV:
      gs_trace_mark("just before the crash");
      raise(SIGSEGV);
      _exit(4);
    case RING_ERROR_ABORT: /* the default handler prints and aborts; the error dumps first */
      gs_add(r.kept[0], gs_zeros(GS_F32, (int64_t[]){5, 5, 5}, 3));
      _exit(4);
    case RING_DUMP_CALL:
      gs_trace_mark("dumped on request");
      _exit(gs_trace_dump() == 0 ? 0 : 5); /* no exit handlers: only the explicit dump */
    case WHOLE:
    case WHOLE_HALF:
    case RING_DUMP_HALF:
    case LATE_OPEN: break;
    }
    _exit(6);
  }
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  return status;
}

static char *temp_log(const char *name) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-flight-XXXXXX", NULL);
  g_assert_nonnull(dir);
  return g_build_filename(dir, name, NULL);
}

static gs_trace_model *model_of(const char *path) {
  g_autoptr(GBytes) bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));
  return m;
}

/* ---- comparing two states --------------------------------------------------------------- */

static guint open_scopes(const gs_replay *r) {
  guint open = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->scopes);
  while (g_hash_table_iter_next(&it, NULL, &value))
    open += !((gs_replay_scope *)value)->ended;
  return open;
}

/* What a log that begins late must get right: every alive object with its storage, bytes,
 * geometry and owner, storages and bytes alive, open scopes and their nesting, graph nodes
 * with their edges and saved tensors, names, modules and optimizers. (The scopes' counters
 * count only what each log saw, and creation numbers of the snapshot's objects are the
 * snapshot's: those are not compared.) */
static void assert_same_alive(const gs_replay *ring, const gs_replay *whole, gboolean names) {
  g_assert_cmpuint(ring->live_bytes, ==, whole->live_bytes);
  g_assert_cmpuint(ring->live_storages, ==, whole->live_storages);
  g_assert_cmpuint(gs_replay_n_objects(ring), ==, gs_replay_n_objects(whole));
  gs_replay_iter at = {0};
  for (gs_replay_object *w; gs_replay_objects_next(whole, &at, &w);) {
    const gs_replay_object *o = gs_replay_object_get(ring, w->id);
    if (!o)
      g_error("object #%" G_GUINT64_FORMAT " is alive in the whole log, not in the ring's", w->id);
    g_assert_cmpuint(o->storage, ==, w->storage);
    g_assert_cmpuint(o->bytes, ==, w->bytes);
    g_assert_cmpuint(o->holder, ==, w->holder);
    g_assert_cmpuint(o->owner, ==, w->owner);
    g_assert_cmpuint(o->dtype, ==, w->dtype);
    g_assert_cmpint(o->ndim, ==, w->ndim);
    g_assert_cmpmem(o->shape, sizeof o->shape, w->shape, sizeof w->shape);
    g_assert_cmpuint(o->composite, ==, w->composite);
    g_assert_cmpuint(o->grad_fn, ==, w->grad_fn);
    g_assert_cmpuint(o->saved_refs, ==, w->saved_refs);
    if (names || w->parameter) /* a name given before a late start is not the engine's */
      g_assert_cmpstr(gs_replay_tensor_name(ring, w->id), ==,
                      gs_replay_tensor_name(whole, w->id));
  }
  g_assert_cmpuint(open_scopes(ring), ==, open_scopes(whole));
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, whole->scopes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_scope *w = value;
    if (w->ended)
      continue;
    const gs_replay_scope *s = g_hash_table_lookup(ring->scopes, &w->id);
    if (!s)
      g_error("scope %" G_GUINT64_FORMAT " is open in the whole log, unknown in the ring's", w->id);
    g_assert_false(s->ended);
    g_assert_cmpuint(s->outer, ==, w->outer);
    g_assert_cmpstr(s->name, ==, w->name);
    g_assert_cmpuint(s->alive, ==, w->alive);
    g_assert_cmpuint(s->bytes, ==, w->bytes);
  }
  g_assert_cmpuint(g_hash_table_size(ring->nodes), ==, g_hash_table_size(whole->nodes));
  g_hash_table_iter_init(&it, whole->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *w = value;
    const gs_replay_node *n = g_hash_table_lookup(ring->nodes, &w->id);
    if (!n)
      g_error("node %" G_GUINT64_FORMAT " is alive in the whole log, not in the ring's", w->id);
    g_assert_cmpstr(n->kind, ==, w->kind);
    g_assert_cmpuint(n->tensor, ==, w->tensor);
    g_assert_cmpmem(n->inputs, n->n_inputs * sizeof(guint64), w->inputs,
                    w->n_inputs * sizeof(guint64));
    g_assert_cmpmem(n->saved, n->n_saved * sizeof(guint64), w->saved,
                    w->n_saved * sizeof(guint64));
    g_assert_cmpuint(n->saved_freed, ==, w->saved_freed);
    g_assert_cmpuint(n->runnable, ==, w->runnable);
  }
  g_assert_cmpuint(g_hash_table_size(ring->modules), ==, g_hash_table_size(whole->modules));
  g_assert_cmpuint(g_hash_table_size(ring->optimizers), ==, g_hash_table_size(whole->optimizers));
}

/* late's model equals whole's at the end of late's snapshot and at every 53rd event number
 * after it, and at the last; returns how many moments were compared. */
static guint assert_same_from_snapshot(gs_trace_model *late, gs_trace_model *whole,
                                       gboolean names) {
  guint64 first_seq = 0, objects = 0, end = 0;
  g_assert_false(gs_trace_model_snapshot(whole, NULL, NULL, NULL));
  g_assert_true(gs_trace_model_snapshot(late, &first_seq, &objects, &end));
  guint64 n = gs_trace_model_n_events(late);
  g_assert_cmpuint(end, <, n - 1);
  g_assert_cmpuint(gs_trace_model_seq_at(late, n - 1), ==,
                   gs_trace_model_seq_at(whole, gs_trace_model_n_events(whole) - 1));
  /* The log holds every event from first_seq on: numbers before its first event that the
   * whole log lacks too (numbers a deferred event took and never used) are all it skips. */
  g_assert_cmpuint(gs_trace_model_seq_at(late, end + 1), >=, first_seq);
  for (guint64 seq = first_seq; seq < gs_trace_model_seq_at(late, end + 1); seq++)
    g_assert_cmpuint(gs_trace_model_find_seq(whole, seq), ==, G_MAXUINT64);

  /* At the snapshot's end the objects it announced are alive, and the whole log agrees. */
  guint64 at_first = gs_trace_model_find_seq(whole, first_seq - 1);
  g_assert_cmpuint(at_first, !=, G_MAXUINT64);
  /* After the storage event the reader derives from it, if any (it shares the number). */
  while (at_first + 1 < gs_trace_model_n_events(whole) &&
         gs_trace_model_seq_at(whole, at_first + 1) == first_seq - 1)
    at_first++;
  const gs_replay *r = gs_trace_model_seek(late, end);
  g_assert_cmpuint(gs_replay_n_objects(r), ==, objects);
  g_assert_cmpuint(objects, >, 10); /* the parameters, momentum, kept tensors, the graph */
  /* Each model keeps its own moment: r stays valid while the other seeks. */
  assert_same_alive(r, gs_trace_model_seek(whole, at_first), names);

  guint compared = 1;
  for (guint64 i = end + 1;; i = MIN(i + 53, n - 1)) {
    guint64 seq = gs_trace_model_seq_at(late, i);
    guint64 j = gs_trace_model_find_seq(whole, seq);
    guint64 k = gs_trace_model_find_seq(late, seq);
    g_assert_cmpuint(j, !=, G_MAXUINT64);
    assert_same_alive(gs_trace_model_seek(late, k), gs_trace_model_seek(whole, j), names);
    compared++;
    if (i == n - 1)
      break;
  }
  return compared;
}

/* `gradscope stats` of path, in language (LANGUAGE), or NULL when GS_CLI is not set. */
static char *stats_of(const char *path, const char *language) {
  const char *cli = g_getenv("GS_CLI");
  if (!cli)
    return NULL;
  const char *argv[] = {cli, "stats", path, NULL};
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "LANGUAGE", language, TRUE);
  env = g_environ_setenv(env, "LANG", "C.UTF-8", TRUE);
  char *out = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                             &out, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  return out;
}

/* `gradscope stats` says where recording began and what was alive, as the model does, in
 * English and in Chinese. */
static void assert_stats_say_where_recording_began(const char *path, gs_trace_model *m) {
  guint64 first_seq = 0, objects = 0;
  g_assert_true(gs_trace_model_snapshot(m, &first_seq, &objects, NULL));
  g_autofree char *english = stats_of(path, "C");
  if (!english) {
    g_test_message("GS_CLI is not set: gradscope stats not checked");
    return;
  }
  g_autofree char *said = g_strdup_printf("recording began at event %" G_GUINT64_FORMAT
                                          "; %" G_GUINT64_FORMAT " objects were alive then",
                                          first_seq, objects);
  g_assert_nonnull(strstr(english, said));
  g_autofree char *chinese = stats_of(path, "zh_CN");
  g_autofree char *said_zh = g_strdup_printf("记录从事件 %" G_GUINT64_FORMAT " 开始；当时有 %"
                                             G_GUINT64_FORMAT " 个对象存活",
                                             first_seq, objects);
  g_assert_nonnull(strstr(chinese, said_zh));
}

/* (a) and (d): the ring dumped at exit holds the run's end, opens with a snapshot, and its
 * model equals the whole log's at every event number it has. */
static void test_ring_equals_whole_log(void) {
  g_autofree char *whole_path = temp_log("whole.gstrace");
  g_autofree char *ring_path = temp_log("ring.gstrace");
  int status = record_in_child(WHOLE, whole_path);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  status = record_in_child(RING_AT_EXIT, ring_path);
  g_assert_true(WIFEXITED(status));

  /* The ring kept the end of a run much longer than itself. */
  struct stat st;
  g_assert_cmpint(g_stat(whole_path, &st), ==, 0);
  g_assert_cmpint(st.st_size, >, 4 * RING_BYTES);
  g_assert_cmpint(g_stat(ring_path, &st), ==, 0);
  g_assert_cmpint(st.st_size, <, 2 * RING_BYTES);
  g_autoptr(gs_trace_model) whole = model_of(whole_path);
  g_autoptr(gs_trace_model) ring = model_of(ring_path);
  g_assert_cmpuint(assert_same_from_snapshot(ring, whole, TRUE), >, 20);
  assert_stats_say_where_recording_began(ring_path, ring);
  /* The scrubber's sentences tell the snapshot's events from the run's. */
  guint64 end = 0;
  gs_trace_model_snapshot(ring, NULL, NULL, &end);
  g_autofree char *inside = gs_trace_model_explain(ring, end - 1);
  g_autofree char *after = gs_trace_model_explain(ring, end + 1);
  g_assert_true(g_str_has_prefix(inside, "when recording began, this was alive: "));
  g_assert_false(g_str_has_prefix(after, "when recording began"));
  remove_log(g_strdup(whole_path));
  remove_log(g_strdup(ring_path));
}

/* A dump taken while dropped chunks still wait for the ring's applier thread (written after
 * the snapshot, as chunks) or while it applies one (the dump waits for it) equals the whole
 * log of the same half run. */
static void test_dump_while_applying(void) {
  g_autofree char *whole_path = temp_log("half.gstrace");
  g_autofree char *ring_path = temp_log("half-ring.gstrace");
  int status = record_in_child(WHOLE_HALF, whole_path);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int round = 0; round < 5; round++) { /* each round meets the applier at another point */
    status = record_in_child(RING_DUMP_HALF, ring_path);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_autoptr(gs_trace_model) whole = model_of(whole_path);
    g_autoptr(gs_trace_model) ring = model_of(ring_path);
    g_assert_cmpuint(assert_same_from_snapshot(ring, whole, TRUE), >, 10);
  }
  remove_log(g_strdup(whole_path));
  remove_log(g_strdup(ring_path));
}

/* (b): gs_trace_open in a program that has been at work for half its run opens with a
 * snapshot of what is alive, and from there equals the whole log of the same run. */
static void test_late_open_snapshot(void) {
  g_autofree char *whole_path = temp_log("whole.gstrace");
  g_autofree char *late_path = temp_log("late.gstrace");
  int status = record_in_child(WHOLE, whole_path);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  status = record_in_child(LATE_OPEN, late_path);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  g_autoptr(gs_trace_model) whole = model_of(whole_path);
  g_autoptr(gs_trace_model) late = model_of(late_path);
  g_assert_cmpuint(assert_same_from_snapshot(late, whole, FALSE), >, 20);
  assert_stats_say_where_recording_began(late_path, late);
  remove_log(g_strdup(whole_path));
  remove_log(g_strdup(late_path));
}

/* The last event of kind `kind` in m, its index, or G_MAXUINT64. */
static guint64 last_of(gs_trace_model *m, gs_trace_kind kind) {
  for (guint64 i = gs_trace_model_n_events(m); i-- > 0;)
    if (gs_trace_model_kind_at(m, i) == kind)
      return i;
  return G_MAXUINT64;
}

/* (c): a fatal signal dumps the ring, buffers included, as a log that opens whole. */
static void test_dump_on_fatal_signal(void) {
  g_autofree char *path = temp_log("crash.gstrace");
  int status = record_in_child(RING_SIGSEGV, path);
  g_assert_true(WIFSIGNALED(status));
  g_assert_cmpint(WTERMSIG(status), ==, SIGSEGV); /* the recorder passed the signal on */
  g_autoptr(gs_trace_model) m = model_of(path);
  g_assert_true(gs_trace_model_snapshot(m, NULL, NULL, NULL));
  guint64 mark = last_of(m, GS_TRACE_MARK);
  g_assert_cmpuint(mark, ==, gs_trace_model_n_events(m) - 1); /* nothing was lost */
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, mark, &e));
  g_assert_cmpstr(gs_trace_model_string(m, e.name), ==, "just before the crash");
  /* Everything the run held at the crash is there. */
  const gs_replay *r = gs_trace_model_seek(m, mark);
  g_assert_cmpuint(open_scopes(r), ==, 1);
  g_assert_cmpuint(g_hash_table_size(r->modules), ==, 4);
  remove_log(g_strdup(path));
}

/* An error the default handler aborts on dumps the ring with the error in it. */
static void test_dump_on_error(void) {
  g_autofree char *path = temp_log("error.gstrace");
  int status = record_in_child(RING_ERROR_ABORT, path);
  g_assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
  g_autoptr(gs_trace_model) m = model_of(path);
  g_assert_true(gs_trace_model_snapshot(m, NULL, NULL, NULL));
  guint64 error = last_of(m, GS_TRACE_ERROR);
  g_assert_cmpuint(error, !=, G_MAXUINT64);
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, error, &e));
  g_assert_nonnull(strstr(e.text, "add"));
  remove_log(g_strdup(path));
}

/* gs_trace_dump writes the ring out on request, the events up to the call included. */
static void test_dump_on_request(void) {
  g_autofree char *path = temp_log("dump.gstrace");
  int status = record_in_child(RING_DUMP_CALL, path);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
  g_autoptr(gs_trace_model) m = model_of(path);
  g_assert_true(gs_trace_model_snapshot(m, NULL, NULL, NULL));
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(m, gs_trace_model_n_events(m) - 1, &e));
  g_assert_cmpint(e.kind, ==, GS_TRACE_MARK);
  g_assert_cmpstr(gs_trace_model_string(m, e.name), ==, "dumped on request");
  remove_log(g_strdup(path));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/flight-recorder/ring-equals-whole-log", test_ring_equals_whole_log);
  g_test_add_func("/flight-recorder/late-open-snapshot", test_late_open_snapshot);
  g_test_add_func("/flight-recorder/dump-while-applying", test_dump_while_applying);
  g_test_add_func("/flight-recorder/dump-on-fatal-signal", test_dump_on_fatal_signal);
  g_test_add_func("/flight-recorder/dump-on-error", test_dump_on_error);
  g_test_add_func("/flight-recorder/dump-on-request", test_dump_on_request);
  return g_test_run();
}
