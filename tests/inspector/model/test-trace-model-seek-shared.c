/* test-trace-model-seek-shared.c: seeks in a log with many objects alive, whose keyframes keep
 * shared records (model-seek.c, replay-records.c): a seek's cursor reads its keyframe's
 * records in place and copies only those it changes (so no write may reach a record other
 * keyframes share), and a keyframe compares only what the head changed since the last one.
 * Every moment sought must equal a replay of the log from its start, whatever the seeks
 * before it (forward, backward, random jumps across keyframes, between the parts of the log
 * where the kept tensors are made and where they are disposed). */
#include <gradscope/gradscope.h>

#include "model-private.h"
#include "model-test-util.h"

/* 6,000 tensors and their storages: more records than MODEL_KEYFRAME_SHARE_MIN, so the
 * model's own spacing keeps them shared too. */
#define KEPT 6000
#define STEPS 3000

static void many_alive_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  const int64_t shape[] = {4}, x_shape[] = {3, 4}, w_shape[] = {4, 4};
  gs_tensor *kept = g_new(gs_tensor, KEPT);
  for (guint i = 0; i < KEPT; i++) {
    kept[i] = gs_ones(GS_F32, shape, 1);
    if (i % 97 == 0)
      gs_trace_name(kept[i], "kept");
  }
  /* Not gs_parameter_new, whose parameter shares its bytes with the tensor it came from. */
  gs_tensor w = gs_randn(GS_F32, w_shape, 2, &rng);
  gs_set_requires_grad(w, true);
  gs_tensor clone = {0}; /* a kept tensor's clone, sharing its bytes for a few steps */
  for (guint step = 0; step < STEPS; step++) {
    guint j = (step * 7919u) % KEPT;
    if (step % 12 == 0) { /* the alive set changes: one kept tensor replaced */
      gs_dispose(kept[j]);
      kept[j] = gs_randn(GS_F32, shape, 1, &rng);
    }
    if (step % 20 == 1) /* an in-place write: the storage's version */
      gs_fill_(kept[j], (double)step);
    /* A shared buffer for a quarter of the later steps: such a state's keyframe is copied
     * whole (the first ones, which the model's budget spaces widely, are not). */
    if (step >= 600 && step % 97 == 5) {
      clone = gs_clone(kept[j]);
    } else if (step % 97 == 30) {
      gs_dispose(clone);
      clone = (gs_tensor){0};
    }
    if (step % 131 == 7) { /* the source goes first: the clone inherits its bytes */
      gs_tensor c = gs_clone(kept[j]);
      gs_dispose(kept[j]);
      kept[j] = c;
    }
    /* A graph: nodes and their saved tensors, released with the scope. (No backward: an
     * accumulated gradient shares its bytes with what it was cloned from for good, and such
     * a state's keyframes are all copied whole.) */
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng);
    gs_tensor h = gs_relu(gs_matmul(x, w));
    gs_mean(gs_mul(h, h), NULL, 0, false);
    gs_scope_end(s);
    if (step % 400 == 399)
      gs_trace_flush();
  }
  for (guint i = 0; i < KEPT; i++)
    if (i % 2) /* half of them go before the end, in an order unlike their making */
      gs_dispose(kept[(i * 7919u) % KEPT]);
  gs_dispose(clone); /* an empty handle does nothing */
  gs_dispose(w);
  g_free(kept);
}

static guint keyframes_with_records(const gs_trace_model *m) {
  guint n = 0;
  for (guint i = 0; i < m->keyframes->len; i++)
    n += g_array_index(m->keyframes, model_keyframe, i).records != NULL;
  return n;
}

static void check(guint keyframe_interval, guint32 seed) {
  recorded_model f;
  recorded_model_init(&f, many_alive_work, keyframe_interval);
  gs_trace_model *m = f.m;
  /* The paths under test are taken: keyframes with shared records, the later ones taken
   * from the head's tracked changes, and some copied whole (a shared buffer was alive). */
  g_assert_cmpuint(keyframes_with_records(m), >=, keyframe_interval ? 10 : 2);
  if (keyframe_interval) /* (the model's own spacing may or may not meet a shared buffer) */
    g_assert_cmpuint(keyframes_with_records(m), <, m->keyframes->len - 1);
  assert_seeks_equal_fresh_replay(m, f.bytes, 40, 60, 50, seed);
  recorded_model_clear(&f);
}

/* The model's own spacing (shared records from MODEL_KEYFRAME_SHARE_MIN alive). */
static void test_default_keyframes(void) { check(0, 5); }

/* Keyframes every 3,000 events: many of them, each taken from the head's tracked changes. */
static void test_dense_keyframes(void) { check(3000, 6); }

/* A log in three parts, as bench-seek's: MADE tensors made in a scope (some named, some
 * written in place or handed from the scope to the caller and back while the rest are still
 * being made), steps that make and dispose tensors in an inner scope while made ones change
 * hands, then every made tensor disposed in an order unlike their making, the next to go
 * changing hands meanwhile. Marks where the steps begin and where the disposing does. */
#define MADE 3000
#define MIDDLE_STEPS 400

/* A made tensor changes hands: the scope's to the caller's, or back (an owner change of a
 * record that keyframes share). */
static void change_hands(gs_scope kept, gs_tensor t, gboolean *with_caller) {
  if (*with_caller)
    gs_scope_attach(kept, t);
  else
    gs_detach_from_scopes(t);
  *with_caller = !*with_caller;
}

static void make_steps_dispose_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 11);
  const int64_t shape[] = {4}, x_shape[] = {2, 4}, w_shape[] = {4, 4};
  gs_tensor *made = g_new(gs_tensor, MADE);
  gboolean *with_caller = g_new0(gboolean, MADE);
  gs_scope kept = gs_scope_begin("kept");
  for (guint i = 0; i < MADE; i++) {
    made[i] = gs_ones(GS_F32, shape, 1);
    if (i % 50 == 0)
      gs_trace_name(made[i], "made");
    if (i % 7 == 3) { /* one made earlier changes */
      gs_fill_(made[i / 2], (double)i);
      change_hands(kept, made[i / 2], &with_caller[i / 2]);
    }
  }
  gs_tensor w = gs_randn(GS_F32, w_shape, 2, &rng);
  gs_set_requires_grad(w, true);
  gs_trace_mark("steps");
  for (guint step = 0; step < MIDDLE_STEPS; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng);
    gs_mean(gs_relu(gs_matmul(x, w)), NULL, 0, false);
    if (step % 5 == 0) {
      guint j = (step * 37u) % MADE;
      change_hands(kept, made[j], &with_caller[j]);
    }
    if (step % 40 == 0) { /* one made tensor replaced now and then */
      guint j = (step * 131u) % MADE;
      gs_dispose(made[j]);
      made[j] = gs_move_to_outer(gs_randn(GS_F32, shape, 1, &rng));
      with_caller[j] = FALSE;
    }
    gs_scope_end(s);
  }
  gs_trace_mark("disposing");
  for (guint i = 0; i < MADE; i++) {
    guint j = (i * 1777u) % MADE;     /* 1777 is prime to MADE: each once */
    if (i % 9 == 4 && i + 1 < MADE) { /* the next to go changes meanwhile */
      guint next = ((i + 1) * 1777u) % MADE;
      gs_fill_(made[next], 1.0);
      change_hands(kept, made[next], &with_caller[next]);
    }
    gs_dispose(made[j]);
  }
  gs_dispose(w);
  gs_scope_end(kept);
  g_free(with_caller);
  g_free(made);
}

/* Jumps between the parts where the made tensors are made and where they are disposed, and
 * the steps between, in both directions (a jump lands far from the cursor, which then holds
 * another keyframe's records: each must come back right), with short hops forward and back
 * from where the last jump landed (the cursor read on, or rebuilt, within one keyframe's
 * span). Each moment must equal a replay of the log from its start. */
#define JUMP_KEYFRAMES 750

static void test_jumps_across_make_and_dispose(void) {
  recorded_model f;
  recorded_model_init(&f, make_steps_dispose_work, JUMP_KEYFRAMES);
  gs_trace_model *m = f.m;
  g_assert_cmpuint(keyframes_with_records(m), >=, 20);
  guint64 n = gs_trace_model_n_events(m);
  guint64 made_end = find_event(m, 0, GS_TRACE_MARK, "steps");
  guint64 dispose_start = find_event(m, 0, GS_TRACE_MARK, "disposing");
  g_assert_cmpuint(dispose_start, <, n);
  /* The three parts are each many keyframes long. */
  g_assert_cmpuint(made_end, >, 6 * JUMP_KEYFRAMES);
  g_assert_cmpuint(n - dispose_start, >, 6 * JUMP_KEYFRAMES);
  GRand *rand = g_rand_new_with_seed(21);
  guint64 at = 0;
  for (guint k = 0; k < 36; k++) {
    guint kind = k % 6;
    if (kind == 0 || kind == 3) /* into the making */
      at = (guint64)g_rand_int_range(rand, 0, (gint32)made_end);
    else if (kind == 1 || kind == 4) /* into the disposing */
      at = (guint64)g_rand_int_range(rand, (gint32)dispose_start, (gint32)n);
    else if (kind == 2) /* a hop back */
      at -= MIN(at, (guint64)g_rand_int_range(rand, 1, 3 * JUMP_KEYFRAMES));
    else if (k % 12 == 5) /* into the steps */
      at = (guint64)g_rand_int_range(rand, (gint32)made_end, (gint32)dispose_start);
    else /* a hop forward */
      at = MIN(n - 1, at + (guint64)g_rand_int_range(rand, 1, 3 * JUMP_KEYFRAMES));
    g_autoptr(gs_replay) want = replay_prefix(f.bytes, at + 1);
    assert_replay_equal(want, gs_trace_model_seek(m, at));
  }
  g_rand_free(rand);
  recorded_model_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-model/seek-shared/default-keyframes", test_default_keyframes);
  g_test_add_func("/trace-model/seek-shared/dense-keyframes", test_dense_keyframes);
  g_test_add_func("/trace-model/seek-shared/jumps-across-make-and-dispose",
                  test_jumps_across_make_and_dispose);
  return g_test_run();
}
