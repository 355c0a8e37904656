/* test-scope.c: dispose scopes as specified by issue 4, which asks for TorchSharp's DisposeScope
 * semantics (its fixes included). Each test is one of TorchSharp's scope scenarios, ported to the
 * C API, and asserts all seven statistics of this thread (created outside, disposed outside,
 * created in scope, disposed in scope, attached, detached, live) after every step; then
 * parameters moving a handle, modules, packed sequences as one scoped object, two threads, scope
 * info and the leak report.
 *
 * Every test runs through run_scope_test: statistics are reset first, no scope may be open
 * before or after, and the process's live tensor count must be back where it started. */
#include <pthread.h>
#include <stdlib.h>

#include "test-util.h"

#define TENSORS GS_OBJECT_TENSOR
#define PACKED GS_OBJECT_PACKED_SEQUENCE

/* ---- helpers --------------------------------------------------------------------------- */

static const char *kind_name(gs_object_kind kind) {
  return kind == TENSORS ? "tensor" : kind == PACKED ? "packed-sequence" : "?";
}

/* Compares one statistics snapshot with the expected seven numbers; on a mismatch prints both,
 * formatted, and fails the test without stopping it (so one run shows every difference). */
static void check_stats(const char *file, int line, const char *what, gs_scope_stats got,
                        uint64_t created_outside, uint64_t disposed_outside,
                        uint64_t created_in, uint64_t disposed_in, uint64_t attached,
                        uint64_t detached, int64_t live) {
  gs_scope_stats want = {created_outside, disposed_outside, created_in, disposed_in,
                         attached,        detached,         live};
  if (memcmp(&got, &want, sizeof got) == 0)
    return;
  char got_text[256], want_text[256];
  gs_scope_stats_format(&got, got_text, sizeof got_text);
  gs_scope_stats_format(&want, want_text, sizeof want_text);
  g_printerr("%s:%d: %s statistics differ\n  expected: %s\n  got:      %s\n", file, line, what,
             want_text, got_text);
  g_test_fail();
}

static void assert_stats_at(const char *file, int line, gs_object_kind kind,
                            uint64_t created_outside, uint64_t disposed_outside,
                            uint64_t created_in, uint64_t disposed_in, uint64_t attached,
                            uint64_t detached, int64_t live) {
  check_stats(file, line, kind_name(kind), gs_thread_scope_stats(kind), created_outside,
              disposed_outside, created_in, disposed_in, attached, detached, live);
}

/* This thread's statistics for kind are (created outside, disposed outside, created in scope,
 * disposed in scope, attached, detached, live). */
#define assert_stats(kind, co, dout, ci, di, att, det, live)                                 \
  assert_stats_at(__FILE__, __LINE__, kind, co, dout, ci, di, att, det, live)

/* A snapshot taken on another thread, compared on the main one. */
#define assert_snapshot(snap, co, dout, ci, di, att, det, live)                              \
  check_stats(__FILE__, __LINE__, #snap, snap, co, dout, ci, di, att, det, live)

#define assert_owner(t, scope) g_assert_cmpuint(gs_owner_scope(t).id, ==, (scope).id)
#define assert_packed_owner(ps, scope)                                                       \
  g_assert_cmpuint(gs_packed_owner_scope(ps).id, ==, (scope).id)

/* The message of the error just caught by EXPECT_ERROR also mentions substring. */
#define assert_last_error_mentions(substring)                                                \
  do {                                                                                       \
    if (!strstr(gs_last_error(), substring)) {                                               \
      g_printerr("%s:%d: error \"%s\" does not mention \"%s\"\n", __FILE__, __LINE__,        \
                 gs_last_error(), substring);                                                \
      g_test_fail();                                                                         \
    }                                                                                        \
  } while (0)

#define assert_info(scope, want_created, want_disposed, want_alive, want_bytes, want_peak)    \
  do {                                                                                       \
    gs_scope_info info_ = gs_scope_get_info(scope);                                          \
    g_assert_cmpuint(info_.created, ==, want_created);                                       \
    g_assert_cmpuint(info_.disposed, ==, want_disposed);                                     \
    g_assert_cmpuint(info_.alive, ==, want_alive);                                           \
    g_assert_cmpuint(info_.bytes, ==, want_bytes);                                           \
    g_assert_cmpuint(info_.peak_bytes, ==, want_peak);                                       \
  } while (0)

/* A small tensor made by a creation call: one tensor, nothing else counted. */
static gs_tensor tensor3(void) { return gs_scalar(GS_F32, 3.0); }

/* Reads t's values without creating any tensor (gs_copy_to), so statistics stay exact. */
static void assert_f32_values(gs_tensor t, const float *expected, int64_t n) {
  g_assert_cmpint(gs_numel(t), ==, n);
  float got[64];
  g_assert_cmpint(n, <=, 64);
  g_assert_cmpint(gs_copy_to(t, got, sizeof got), ==, 0);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat(got[i], ==, expected[i]);
}

static void assert_i64_values(gs_tensor t, const int64_t *expected, int64_t n) {
  g_assert_cmpint(gs_numel(t), ==, n);
  int64_t got[64];
  g_assert_cmpint(n, <=, 64);
  g_assert_cmpint(gs_copy_to(t, got, sizeof got), ==, 0);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint(got[i], ==, expected[i]);
}

/* "#index.generation", as the engine's messages name a tensor. */
static void handle_name(uint64_t id, char *buf, size_t size) {
  g_snprintf(buf, size, "#%u.%u", (unsigned)(id & 0xffffffffu), (unsigned)(id >> 32));
}

/* ---- tensors created in a scope (TorchSharp: TestDisposeScopesStatisticsTensorScoped) -- */

static void test_create_in_scope_counts_once(void) {
  gs_scope s = gs_scope_begin("step");
  g_assert_cmpuint(gs_scope_current().id, ==, s.id);
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  assert_owner(t, s);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  g_assert_false(gs_is_alive(t));
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
}

static void test_attach_to_own_scope_counts_nothing(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  g_assert_cmpuint(gs_scope_attach(s, t).id, ==, t.id);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  assert_owner(t, s);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
}

static void test_detach_counts_once(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  g_assert_cmpuint(gs_detach_from_scopes(t).id, ==, t.id);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  assert_owner(t, GS_NO_SCOPE);
  gs_detach_from_scopes(t); /* owned by no scope now: nothing to count */
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  g_assert_true(gs_is_alive(t));
  gs_dispose(t); /* the caller owns it: a disposal outside scopes */
  assert_stats(TENSORS, 0, 1, 1, 0, 0, 1, 0);
}

static void test_dispose_in_scope_counts_once(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = tensor3();
  gs_dispose(t);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  /* No re-entry: a second dispose is a stale-handle error and counts nothing. */
  EXPECT_ERROR(gs_dispose(t), "stale");
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  assert_info(s, 1, 1, 0, 0, 4);
  gs_scope_end(s); /* it no longer owns t: nothing more disposed */
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
}

static void test_end_after_detach_keeps_tensor(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = tensor3();
  gs_detach_from_scopes(t);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  g_assert_true(gs_is_alive(t));
  g_assert_cmpfloat(gs_item(t), ==, 3.0);
  gs_dispose(t);
  assert_stats(TENSORS, 0, 1, 1, 0, 0, 1, 0);
}

/* The statistics' text form, as TorchSharp's ToString: the live count first, then the six
 * counters in order, each labelled. */
static void test_stats_format(void) {
  gs_scope_stats stats = {1, 2, 3, 4, 5, 6, -7};
  char buf[512];
  g_assert_true(gs_scope_stats_format(&stats, buf, sizeof buf) == buf);
  g_test_message("formatted: %s", buf);
  g_assert_true(g_str_has_prefix(buf, "live: -7; "));
  static const char *labels[] = {"created outside", "disposed outside", "created in scope",
                                 "disposed in scope", "attached", "detached"};
  const char *at = buf;
  for (int i = 0; i < 6; i++) {
    const char *label = strstr(at, labels[i]);
    g_assert_nonnull(label);
    char number[8];
    g_snprintf(number, sizeof number, ": %d", i + 1);
    const char *value = strstr(label, number);
    g_assert_nonnull(value);
    g_assert_cmpint(value - label, <=, (int)strlen(labels[i]) + 12); /* its own value */
    at = value;
  }
  /* And with the counts of a real scope. */
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  stats = gs_thread_scope_stats(TENSORS);
  gs_scope_stats_format(&stats, buf, sizeof buf);
  g_assert_true(g_str_has_prefix(buf, "live: 1; "));
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  (void)t;
}

/* ---- tensors created outside scopes (TorchSharp: ...StatisticsTensorUnscoped) ---------- */

static void test_create_outside_counts_outside(void) {
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  assert_owner(t, GS_NO_SCOPE);
  gs_dispose(t);
  assert_stats(TENSORS, 1, 1, 0, 0, 0, 0, 0);
  EXPECT_ERROR(gs_dispose(t), "stale"); /* no re-entry */
  assert_stats(TENSORS, 1, 1, 0, 0, 0, 0, 0);
}

static void test_attach_unowned_counts_attached(void) {
  gs_tensor t = tensor3();
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  gs_scope s = gs_scope_begin("step");
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  gs_scope_attach(s, t);
  /* An attach of an unowned tensor counts an attach and decrements nothing. */
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  assert_owner(t, s);
  gs_scope_attach(s, t); /* again, to the same scope: nothing */
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  gs_scope_end(s); /* disposed while the scope owned it: in scope */
  assert_stats(TENSORS, 1, 0, 0, 1, 1, 0, 0);
  g_assert_false(gs_is_alive(t));
}

static void test_detach_unowned_counts_nothing(void) {
  gs_tensor t = tensor3();
  gs_scope s = gs_scope_begin("step");
  gs_detach_from_scopes(t);
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  g_assert_true(gs_is_alive(t));
  gs_dispose(t);
  assert_stats(TENSORS, 1, 1, 0, 0, 0, 0, 0);
}

static void test_dispose_attached_counts_in_scope(void) {
  gs_tensor t = tensor3();
  gs_scope s = gs_scope_begin("step");
  gs_scope_attach(s, t);
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  gs_dispose(t); /* the owning scope at disposal time decides: in scope */
  assert_stats(TENSORS, 1, 0, 0, 1, 1, 0, 0);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 0, 1, 1, 0, 0);
}

static void test_detach_attached_counts_detached(void) {
  gs_tensor t = tensor3();
  gs_scope s = gs_scope_begin("step");
  gs_scope_attach(s, t);
  gs_detach_from_scopes(t);
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 1, 1);
  assert_owner(t, GS_NO_SCOPE);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 1, 1);
  g_assert_true(gs_is_alive(t));
  gs_dispose(t); /* caller-owned again: outside */
  assert_stats(TENSORS, 1, 1, 0, 0, 1, 1, 0);
}

/* An inner scope opened and ended after an attach to the outer one changes nothing. */
static void test_inner_scope_leaves_outer_attachment(void) {
  gs_tensor t = tensor3();
  gs_scope outer = gs_scope_begin("outer");
  gs_scope_attach(outer, t);
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  gs_scope inner = gs_scope_begin("inner");
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  gs_scope_end(inner);
  assert_stats(TENSORS, 1, 0, 0, 0, 1, 0, 1);
  g_assert_true(gs_is_alive(t));
  assert_owner(t, outer);
  gs_scope_end(outer);
  assert_stats(TENSORS, 1, 0, 0, 1, 1, 0, 0);
}

/* ---- the scope operations (TorchSharp: TestDisposeScopes) ------------------------------ */

/* Caught, detached, moved out (no outer scope: a detach) and manually disposed. */
static void test_minimal_scope(void) {
  gs_scope s = gs_scope_begin("minimal");
  gs_tensor a1 = gs_scalar(GS_I64, 1);
  gs_tensor a2 = gs_detach_from_scopes(gs_scalar(GS_I64, 2));
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 1, 2);
  gs_tensor a3 = gs_move_to_outer(gs_scalar(GS_I64, 3));
  assert_stats(TENSORS, 0, 0, 3, 0, 0, 2, 3);
  gs_tensor a4 = gs_scalar(GS_I64, 4);
  assert_stats(TENSORS, 0, 0, 4, 0, 0, 2, 4);
  assert_owner(a1, s);
  assert_owner(a2, GS_NO_SCOPE);
  assert_owner(a3, GS_NO_SCOPE);
  assert_owner(a4, s);
  assert_info(s, 4, 0, 2, 16, 16);
  gs_dispose(a4);
  assert_stats(TENSORS, 0, 0, 4, 1, 0, 2, 3);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 4, 2, 0, 2, 2);
  g_assert_false(gs_is_alive(a1));
  g_assert_true(gs_is_alive(a2) && gs_is_alive(a3));
  gs_dispose(a2);
  gs_dispose(a3);
  assert_stats(TENSORS, 0, 2, 4, 2, 0, 2, 0);
}

static void test_dispose_everything_but(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor a[4];
  for (int i = 0; i < 4; i++)
    a[i] = gs_scalar(GS_F64, i + 1);
  assert_stats(TENSORS, 0, 0, 4, 0, 0, 0, 4);
  gs_scope_dispose_everything_but(s, &a[3].id, 1);
  assert_stats(TENSORS, 0, 0, 4, 3, 0, 0, 1);
  for (int i = 0; i < 3; i++)
    g_assert_false(gs_is_alive(a[i]));
  g_assert_true(gs_is_alive(a[3]));
  assert_owner(a[3], s); /* kept objects stay owned by the scope */
  g_assert_cmpuint(gs_scope_get_info(s).alive, ==, 1);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 4, 4, 0, 0, 0);
  g_assert_false(gs_is_alive(a[3]));
}

/* A kept id the scope does not own is left alone: it keeps its real owner (TorchSharp put it
 * into the scope's list without changing its owner, so ending the scope disposed it). */
static void test_dispose_everything_but_keeps_foreign_owner(void) {
  gs_tensor w = gs_scalar(GS_F32, 1); /* caller-owned */
  gs_scope owner = gs_scope_begin("owner");
  gs_tensor x = gs_scalar(GS_F32, 2);
  gs_scope worker = gs_scope_begin("worker");
  gs_tensor y = gs_scalar(GS_F32, 3), z = gs_scalar(GS_F32, 4);
  assert_stats(TENSORS, 1, 0, 3, 0, 0, 0, 4);
  uint64_t keep[3] = {x.id, y.id, w.id};
  gs_scope_dispose_everything_but(worker, keep, 3);
  assert_stats(TENSORS, 1, 0, 3, 1, 0, 0, 3);
  g_assert_false(gs_is_alive(z));
  assert_owner(x, owner);
  assert_owner(y, worker);
  assert_owner(w, GS_NO_SCOPE);
  g_assert_cmpuint(gs_scope_get_info(worker).alive, ==, 1);
  g_assert_cmpuint(gs_scope_get_info(owner).alive, ==, 1);
  gs_scope_end(worker); /* disposes y only */
  assert_stats(TENSORS, 1, 0, 3, 2, 0, 0, 2);
  g_assert_false(gs_is_alive(y));
  g_assert_true(gs_is_alive(x) && gs_is_alive(w));
  assert_owner(x, owner);
  gs_scope_end(owner);
  assert_stats(TENSORS, 1, 0, 3, 3, 0, 0, 1);
  g_assert_false(gs_is_alive(x));
  g_assert_true(gs_is_alive(w));
  gs_dispose(w);
  assert_stats(TENSORS, 1, 1, 3, 3, 0, 0, 0);
}

static void test_dispose_everything(void) {
  gs_scope s = gs_scope_begin("sweep");
  gs_tensor a = tensor3(), b = tensor3(), c = gs_detach_from_scopes(tensor3());
  assert_stats(TENSORS, 0, 0, 3, 0, 0, 1, 3);
  gs_scope_dispose_everything(s);
  assert_stats(TENSORS, 0, 0, 3, 2, 0, 1, 1);
  g_assert_false(gs_is_alive(a) || gs_is_alive(b));
  g_assert_true(gs_scope_is_active(s));
  g_assert_cmpuint(gs_scope_current().id, ==, s.id);
  /* The scope goes on: new tensors are its own. */
  gs_tensor d = tensor3();
  assert_owner(d, s);
  assert_stats(TENSORS, 0, 0, 4, 2, 0, 1, 2);
  /* A handle disposed by dispose_everything names the scope. */
  EXPECT_ERROR(gs_numel(a), "stale");
  assert_last_error_mentions("sweep");
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 4, 3, 0, 1, 1);
  gs_dispose(c);
  assert_stats(TENSORS, 0, 1, 4, 3, 0, 1, 0);
}

/* Moving to the outer scope, detaching, dispose-everything-but and a manual dispose inside a
 * nested scope; the outer scope's tensors are untouched by the inner end. */
static void test_stacked_scopes(void) {
  gs_scope s1 = gs_scope_begin("outer");
  gs_tensor a1 = gs_scalar(GS_I64, 1);
  gs_scope s2 = gs_scope_begin("inner");
  g_assert_cmpuint(gs_scope_outer(s2).id, ==, s1.id);
  g_assert_cmpuint(gs_scope_outer(s1).id, ==, 0);
  gs_tensor a2 = gs_scalar(GS_F32, 2);
  assert_owner(a2, s2);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 0, 2);
  gs_scope_move_to_outer(s2, a2); /* a move between scopes counts nothing */
  assert_owner(a2, s1);
  assert_owner(a1, s1);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 0, 2);
  gs_tensor a6 = gs_scalar(GS_I64, 6);
  gs_detach_from_scopes(a6);
  assert_owner(a6, GS_NO_SCOPE);
  assert_stats(TENSORS, 0, 0, 3, 0, 0, 1, 3);
  gs_tensor a3 = gs_scalar(GS_I64, 3), a4 = gs_scalar(GS_I64, 4);
  assert_stats(TENSORS, 0, 0, 5, 0, 0, 1, 5);
  gs_scope_dispose_everything_but(s2, &a4.id, 1);
  g_assert_false(gs_is_alive(a3));
  g_assert_true(gs_is_alive(a4));
  assert_stats(TENSORS, 0, 0, 5, 1, 0, 1, 4);
  gs_tensor a5 = gs_scalar(GS_F32, 5);
  assert_owner(a5, s2);
  gs_dispose(a5);
  assert_stats(TENSORS, 0, 0, 6, 2, 0, 1, 4);
  assert_info(s2, 5, 2, 1, 8, 16);
  gs_scope_end(s2);
  assert_stats(TENSORS, 0, 0, 6, 3, 0, 1, 3);
  g_assert_true(gs_is_alive(a1) && gs_is_alive(a2));
  g_assert_false(gs_is_alive(a4));
  g_assert_cmpuint(gs_scope_current().id, ==, s1.id);
  gs_scope_end(s1);
  assert_stats(TENSORS, 0, 0, 6, 5, 0, 1, 1);
  g_assert_false(gs_is_alive(a1) || gs_is_alive(a2));
  gs_dispose(a6);
  assert_stats(TENSORS, 0, 1, 6, 5, 0, 1, 0);
}

/* Everything an expression creates in a scope is disposed with it; its inputs are not. */
static void test_op_results_are_owned(void) {
  gs_tensor data = gs_full(GS_F32, (int64_t[]){10, 10}, 2, 0.5);
  assert_stats(TENSORS, 1, 0, 0, 0, 0, 0, 1);
  gs_scope s = gs_scope_begin("expr");
  gs_tensor sq = gs_mul(data, data);
  gs_tensor value = gs_add(sq, data);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  assert_owner(sq, s);
  assert_owner(value, s);
  assert_owner(data, GS_NO_SCOPE);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 2, 2, 0, 0, 1);
  g_assert_false(gs_is_alive(sq) || gs_is_alive(value));
  g_assert_true(gs_is_alive(data));
  gs_dispose(data);
  assert_stats(TENSORS, 1, 1, 2, 2, 0, 0, 0);
}

/* A result moved out of a scope with no outer scope survives it (a detach). */
static void test_moved_result_survives(void) {
  gs_tensor data = gs_full(GS_F32, (int64_t[]){10, 10}, 2, 0.5);
  gs_scope s = gs_scope_begin("expr");
  gs_tensor sq = gs_mul(data, data);
  gs_tensor kept = gs_move_to_outer(gs_add(sq, data));
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  assert_owner(kept, GS_NO_SCOPE);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 2, 1, 0, 1, 2);
  g_assert_true(gs_is_alive(kept));
  g_assert_cmpfloat(gs_get(kept, (int64_t[]){3, 4}), ==, 0.75);
  gs_dispose(kept);
  gs_dispose(data);
  assert_stats(TENSORS, 1, 2, 2, 1, 0, 1, 0);
}

/* Dispose-everything-but in the middle of the work, then more work in the same scope. */
static void test_dispose_in_the_middle(void) {
  gs_tensor data = gs_full(GS_F32, (int64_t[]){4}, 1, 2.0);
  gs_scope s = gs_scope_begin("expr");
  gs_tensor sq = gs_mul(data, data);
  gs_tensor t1 = gs_add(sq, data);
  gs_tensor twice = gs_add(data, data);
  gs_tensor t2 = gs_sub(twice, t1);
  assert_stats(TENSORS, 1, 0, 4, 0, 0, 0, 5);
  gs_scope_dispose_everything_but(s, &t2.id, 1);
  assert_stats(TENSORS, 1, 0, 4, 3, 0, 0, 2);
  g_assert_false(gs_is_alive(t1));
  gs_tensor t3 = gs_add(t2, data);
  assert_stats(TENSORS, 1, 0, 5, 3, 0, 0, 3);
  gs_scope_end(s);
  assert_stats(TENSORS, 1, 0, 5, 5, 0, 0, 1);
  g_assert_false(gs_is_alive(t2) || gs_is_alive(t3));
  g_assert_true(gs_is_alive(data));
  gs_dispose(data);
  assert_stats(TENSORS, 1, 1, 5, 5, 0, 0, 0);
}

/* Ending the inner scope brings the live count back to what it was before it. */
static void test_nested_scopes(void) {
  gs_scope outer = gs_scope_begin("outer");
  gs_tensor data = gs_full(GS_F32, (int64_t[]){10, 10}, 2, 1.0);
  gs_tensor sq = gs_mul(data, data);
  gs_tensor t1 = gs_add(sq, data);
  assert_stats(TENSORS, 0, 0, 3, 0, 0, 0, 3);
  gs_scope inner = gs_scope_begin("inner");
  gs_tensor twice = gs_add(data, data);
  gs_tensor t2 = gs_sub(twice, t1);
  assert_owner(t2, inner);
  assert_stats(TENSORS, 0, 0, 5, 0, 0, 0, 5);
  gs_scope_end(inner);
  assert_stats(TENSORS, 0, 0, 5, 2, 0, 0, 3);
  g_assert_true(gs_is_alive(t1));
  gs_scope_end(outer);
  assert_stats(TENSORS, 0, 0, 5, 5, 0, 0, 0);
}

/* gs_move_to_outer moves from the *owning* scope, whichever scope is current. */
static void test_move_to_outer_uses_owning_scope(void) {
  gs_tensor caller = tensor3();
  gs_scope s1 = gs_scope_begin("s1");
  gs_tensor x = tensor3();
  gs_scope s2 = gs_scope_begin("s2");
  gs_tensor y = tensor3();
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  /* y: from s2 to s1, no counter changes. */
  g_assert_cmpuint(gs_move_to_outer(y).id, ==, y.id);
  assert_owner(y, s1);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  /* x is owned by s1, which has no outer scope: a detach, though s2 is current. */
  gs_move_to_outer(x);
  assert_owner(x, GS_NO_SCOPE);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  /* A caller-owned tensor: nothing. */
  gs_move_to_outer(caller);
  assert_owner(caller, GS_NO_SCOPE);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  gs_scope_end(s2);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  gs_scope_end(s1);
  assert_stats(TENSORS, 1, 0, 2, 1, 0, 1, 2);
  g_assert_false(gs_is_alive(y));
  gs_dispose(x);
  gs_dispose(caller);
  assert_stats(TENSORS, 1, 2, 2, 1, 0, 1, 0);
}

/* gs_scope_move_to_outer(scope, t) does nothing unless scope owns t. */
static void test_scope_move_to_outer_not_owned_is_noop(void) {
  gs_tensor caller = tensor3();
  gs_scope s1 = gs_scope_begin("s1");
  gs_tensor x = tensor3();
  gs_scope s2 = gs_scope_begin("s2");
  gs_tensor y = tensor3();
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  gs_scope_move_to_outer(s2, x); /* s1 owns x */
  assert_owner(x, s1);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  gs_scope_move_to_outer(s2, caller); /* nobody owns it */
  assert_owner(caller, GS_NO_SCOPE);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  gs_scope_move_to_outer(s1, y); /* s2 owns y */
  assert_owner(y, s2);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  /* And when it owns it: s2 -> s1, then s1 -> no scope (a detach). */
  gs_scope_move_to_outer(s2, y);
  assert_owner(y, s1);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 0, 3);
  gs_scope_move_to_outer(s1, y);
  assert_owner(y, GS_NO_SCOPE);
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  gs_scope_end(s2);
  gs_scope_end(s1);
  assert_stats(TENSORS, 1, 0, 2, 1, 0, 1, 2);
  gs_dispose(y);
  gs_dispose(caller);
  assert_stats(TENSORS, 1, 2, 2, 1, 0, 1, 0);
}

/* Moving to another given scope (as TorchSharp's MoveToOther) counts nothing; moving to no
 * scope is a detach. */
static void test_move_to_other_scope(void) {
  gs_scope other = gs_scope_begin("other");
  gs_scope outer = gs_scope_begin("outer");
  gs_scope inner = gs_scope_begin("inner");
  gs_tensor t = tensor3(), u = tensor3();
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 0, 2);
  gs_scope_move_to(inner, other, t);
  assert_owner(t, other);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 0, 2);
  gs_scope_move_to(inner, outer, t); /* inner no longer owns t: nothing */
  assert_owner(t, other);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 0, 2);
  gs_scope_move_to(inner, GS_NO_SCOPE, u);
  assert_owner(u, GS_NO_SCOPE);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 1, 2);
  gs_scope_end(inner);
  gs_scope_end(outer);
  assert_stats(TENSORS, 0, 0, 2, 0, 0, 1, 2);
  g_assert_true(gs_is_alive(t));
  gs_scope_end(other);
  assert_stats(TENSORS, 0, 0, 2, 1, 0, 1, 1);
  g_assert_false(gs_is_alive(t));
  gs_dispose(u);
  assert_stats(TENSORS, 0, 1, 2, 1, 0, 1, 0);
}

/* Attach takes a tensor from the scope that owned it: counted as an attach (as TorchSharp's
 * Attach: a change of owner), never as a detach. */
static void test_attach_from_another_scope(void) {
  gs_scope s1 = gs_scope_begin("s1");
  gs_tensor t = gs_zeros(GS_F32, (int64_t[]){1000}, 1);
  gs_scope s2 = gs_scope_begin("s2");
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  gs_scope_attach(s2, t);
  assert_owner(t, s2);
  assert_stats(TENSORS, 0, 0, 1, 0, 1, 0, 1);
  assert_info(s1, 1, 0, 0, 0, 4000);
  assert_info(s2, 0, 0, 1, 4000, 4000);
  gs_scope_end(s2);
  assert_stats(TENSORS, 0, 0, 1, 1, 1, 0, 0);
  g_assert_false(gs_is_alive(t));
  gs_scope_end(s1);
  assert_stats(TENSORS, 0, 0, 1, 1, 1, 0, 0);
}

/* Ending a middle scope disposes what it owns and links its inner scopes to its outer one. */
static void test_end_middle_scope(void) {
  gs_scope s1 = gs_scope_begin("outer");
  gs_tensor a = tensor3();
  gs_scope s2 = gs_scope_begin("middle");
  gs_tensor b = tensor3();
  gs_scope s3 = gs_scope_begin("inner");
  gs_tensor c = tensor3(), c2 = tensor3();
  assert_stats(TENSORS, 0, 0, 4, 0, 0, 0, 4);
  gs_scope_end(s2);
  assert_stats(TENSORS, 0, 0, 4, 1, 0, 0, 3);
  g_assert_false(gs_is_alive(b));
  g_assert_false(gs_scope_is_active(s2));
  g_assert_true(gs_scope_is_active(s1) && gs_scope_is_active(s3));
  g_assert_cmpuint(gs_scope_outer(s3).id, ==, s1.id);
  g_assert_cmpuint(gs_scope_current().id, ==, s3.id);
  /* The stack goes on from the inner scope. */
  gs_tensor d = tensor3();
  assert_owner(d, s3);
  assert_stats(TENSORS, 0, 0, 5, 1, 0, 0, 4);
  gs_scope s4 = gs_scope_begin("innermost");
  g_assert_cmpuint(gs_scope_outer(s4).id, ==, s3.id);
  gs_scope_end(s4);
  /* Moving to the outer scope from the inner one now reaches the outer-outer one. */
  gs_scope_move_to_outer(s3, c);
  assert_owner(c, s1);
  gs_move_to_outer(c2);
  assert_owner(c2, s1);
  assert_stats(TENSORS, 0, 0, 5, 1, 0, 0, 4);
  gs_scope_end(s3);
  assert_stats(TENSORS, 0, 0, 5, 2, 0, 0, 3);
  g_assert_false(gs_is_alive(d));
  g_assert_true(gs_is_alive(a) && gs_is_alive(c) && gs_is_alive(c2));
  g_assert_cmpuint(gs_scope_current().id, ==, s1.id);
  gs_scope_end(s1);
  assert_stats(TENSORS, 0, 0, 5, 5, 0, 0, 0);
}

/* Ending the outermost scope first: the inner one has no outer scope any more. */
static void test_end_outermost_scope_first(void) {
  gs_scope s1 = gs_scope_begin("outer");
  gs_tensor x = tensor3();
  gs_scope s2 = gs_scope_begin("inner");
  gs_tensor y = tensor3();
  gs_scope_end(s1);
  assert_stats(TENSORS, 0, 0, 2, 1, 0, 0, 1);
  g_assert_false(gs_is_alive(x));
  g_assert_true(gs_is_alive(y));
  g_assert_cmpuint(gs_scope_outer(s2).id, ==, 0);
  g_assert_cmpuint(gs_scope_current().id, ==, s2.id);
  gs_move_to_outer(y); /* no outer scope: a detach */
  assert_owner(y, GS_NO_SCOPE);
  assert_stats(TENSORS, 0, 0, 2, 1, 0, 1, 1);
  gs_scope_end(s2);
  assert_stats(TENSORS, 0, 0, 2, 1, 0, 1, 1);
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
  gs_dispose(y);
  assert_stats(TENSORS, 0, 1, 2, 1, 0, 1, 0);
}

static void test_end_twice_is_noop(void) {
  gs_scope s = gs_scope_begin("once");
  gs_tensor t = tensor3();
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  gs_scope_end(s); /* no error, nothing counted */
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  g_assert_false(gs_scope_is_active(s));
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
  /* Also when another scope is open: ending the old one again leaves it alone. */
  gs_scope next = gs_scope_begin("next");
  gs_tensor u = tensor3();
  gs_scope_end(s);
  g_assert_true(gs_scope_is_active(next));
  g_assert_cmpuint(gs_scope_current().id, ==, next.id);
  g_assert_true(gs_is_alive(u));
  assert_stats(TENSORS, 0, 0, 2, 1, 0, 0, 1);
  gs_scope_end(next);
  assert_stats(TENSORS, 0, 0, 2, 2, 0, 0, 0);
  (void)t;
}

/* Any use of an ended scope other than ending it again is an error naming it; nothing
 * changes. */
static void test_ended_scope_use_is_error(void) {
  gs_scope s = gs_scope_begin("finished");
  gs_scope_end(s);
  gs_tensor t = tensor3();
  gs_scope live = gs_scope_begin("live");
  gs_tensor u = tensor3();
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 0, 2);

  EXPECT_ERROR(gs_scope_attach(s, t), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_dispose_everything(s), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_dispose_everything_but(s, &t.id, 1), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_move_to_outer(s, t), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_move_to(s, GS_NO_SCOPE, t), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_move_to(live, s, u), "finished"); /* into an ended scope */
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_get_info(s), "finished");
  assert_last_error_mentions("ended");
  EXPECT_ERROR(gs_scope_outer(s), "finished");
  assert_last_error_mentions("ended");

  g_assert_false(gs_scope_is_active(s)); /* the query itself is no error */
  assert_owner(t, GS_NO_SCOPE);
  assert_owner(u, live);
  g_assert_true(gs_is_alive(t) && gs_is_alive(u));
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 0, 2);
  gs_scope_end(live);
  gs_dispose(t);
  assert_stats(TENSORS, 1, 1, 1, 1, 0, 0, 0);
}

/* A handle disposed by a scope's end is stale, and the error names the scope. */
static void test_stale_after_end_names_scope(void) {
  gs_scope s = gs_scope_begin("epoch-7");
  g_assert_cmpstr(gs_scope_name(s), ==, "epoch-7");
  gs_tensor t = tensor3();
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  EXPECT_ERROR(gs_numel(t), "stale");
  assert_last_error_mentions("epoch-7");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  EXPECT_ERROR(gs_dispose(t), "epoch-7");
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
}

/* A training loop begins and ends a scope every step, in the same slot: an old step's handle
 * still names its scope and when it ended after the slot has held 100 more scopes, and ending
 * it again is still no error. */
static void test_stale_scope_keeps_its_story_after_100_reuses(void) {
  gs_scope old = gs_scope_begin("step 0");
  gs_scope_end(old);
  uint64_t ended_at = gs_event_counter();
  for (int i = 0; i < 100; i++) {
    gs_scope s = gs_scope_begin("step n");
    g_assert_cmpuint(s.id & 0xffffffffu, ==, old.id & 0xffffffffu);
    gs_scope_end(s);
  }
  char expected[160];
  g_snprintf(expected, sizeof expected,
             "'step 0' is stale: it was ended at event %llu (its slot has held 100 scopes since)",
             (unsigned long long)ended_at);
  EXPECT_ERROR(gs_scope_get_info(old), expected);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  gs_scope_end(old);
}

/* Beyond the kept history (128 tenants of a slot) the message says plainly that the scope's
 * story is gone, rather than naming another scope. */
static void test_stale_scope_beyond_history_says_so(void) {
  gs_scope old = gs_scope_begin("step 0");
  gs_scope_end(old);
  for (int i = 0; i < 200; i++)
    gs_scope_end(gs_scope_begin("step n"));
  EXPECT_ERROR(gs_scope_name(old), "is stale: it was ended, but its slot has held 200 scopes "
                                   "since and only the last 128 disposals of a slot are "
                                   "remembered, so its name and when it was ended are no "
                                   "longer known");
  gs_scope_end(old); /* still no error */
}

/* A handle this process never made is an error even for scope_end. */
static void test_forged_scope_handle_is_error(void) {
  gs_scope forged = {((uint64_t)3 << 32) | 0xfffffu};
  EXPECT_ERROR(gs_scope_end(forged), "was never created by this process");
  EXPECT_ERROR(gs_scope_end(GS_NO_SCOPE), "scope_end: expected a scope, got the empty handle");
}

/* ---- scope info ----------------------------------------------------------------------- */

static void test_scope_info(void) {
  gs_tensor v = gs_zeros(GS_F64, (int64_t[]){250}, 1); /* 2000 bytes, caller-owned */
  gs_scope s = gs_scope_begin("info");
  assert_info(s, 0, 0, 0, 0, 0);
  gs_tensor t = gs_zeros(GS_F32, (int64_t[]){1000}, 1);
  assert_info(s, 1, 0, 1, 4000, 4000);
  gs_tensor u = gs_zeros(GS_F32, (int64_t[]){1000}, 1);
  assert_info(s, 2, 0, 2, 8000, 8000);
  gs_dispose(t);
  assert_info(s, 2, 1, 1, 4000, 8000); /* the peak stays */
  gs_scope_attach(s, v);
  assert_info(s, 2, 1, 2, 6000, 8000); /* attached: owned, not created here */
  gs_detach_from_scopes(u);
  assert_info(s, 2, 1, 1, 2000, 8000); /* detached: no longer owned, not disposed */
  gs_tensor w = gs_zeros(GS_F32, (int64_t[]){2000}, 1);
  assert_info(s, 3, 1, 2, 10000, 10000);
  assert_stats(TENSORS, 1, 0, 3, 1, 1, 1, 3);
  gs_scope_dispose_everything(s);
  assert_info(s, 3, 3, 0, 0, 10000);
  assert_stats(TENSORS, 1, 0, 3, 3, 1, 1, 1);
  g_assert_false(gs_is_alive(v) || gs_is_alive(w));
  gs_scope_end(s);
  gs_dispose(u);
  assert_stats(TENSORS, 1, 1, 3, 3, 1, 1, 0);
}

/* Moving between scopes moves the bytes; "created" stays with the scope that was current,
 * "disposed" goes to the scope that owned the tensor when it was disposed. */
static void test_scope_info_follows_moves(void) {
  gs_scope s1 = gs_scope_begin("outer");
  gs_scope s2 = gs_scope_begin("inner");
  gs_tensor t = gs_zeros(GS_F32, (int64_t[]){1000}, 1);
  assert_info(s2, 1, 0, 1, 4000, 4000);
  assert_info(s1, 0, 0, 0, 0, 0);
  gs_move_to_outer(t);
  assert_info(s2, 1, 0, 0, 0, 4000);
  assert_info(s1, 0, 0, 1, 4000, 4000);
  gs_scope_end(s2);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  gs_dispose(t);
  assert_info(s1, 0, 1, 0, 0, 4000);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  gs_scope_end(s1);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
}

/* ---- parameters and modules ----------------------------------------------------------- */

/* The sequence: a parameter made from a scoped tensor replaces it in its scope. */
static void test_parameter_moves_handle(void) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor t = gs_scalar(GS_F32, 3.0);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  gs_tensor p = gs_parameter_new(t, true);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  g_assert_cmpuint(p.id, !=, 0);
  g_assert_true(gs_is_parameter(p));
  g_assert_true(gs_requires_grad(p));
  g_assert_false(gs_is_alive(t));
  g_assert_true(gs_is_alive(p));
  assert_owner(p, s);
  g_assert_cmpfloat(gs_item(p), ==, 3.0);
  gs_dispose(t); /* a moved handle: does nothing, no error */
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  g_assert_true(gs_is_alive(p));
  /* Using the old handle is a stale-handle error naming the parameter. */
  char name[64];
  handle_name(p.id, name, sizeof name);
  EXPECT_ERROR(gs_numel(t), "parameter");
  assert_last_error_mentions(name);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  assert_info(s, 1, 0, 1, 4, 4);
  gs_scope_end(s);
  assert_stats(TENSORS, 0, 0, 1, 1, 0, 0, 0);
  g_assert_false(gs_is_alive(p));
}

/* The parameter takes the place of t in the scope that owned t, not in the current one. */
static void test_parameter_stays_with_owning_scope(void) {
  gs_tensor caller = tensor3();
  gs_scope s1 = gs_scope_begin("s1");
  gs_tensor t = tensor3();
  gs_scope s2 = gs_scope_begin("s2");
  gs_tensor p = gs_parameter_new(t, false);
  assert_owner(p, s1);
  g_assert_false(gs_requires_grad(p));
  gs_tensor q = gs_parameter_new(caller, true); /* caller-owned stays caller-owned */
  assert_owner(q, GS_NO_SCOPE);
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 0, 2);
  gs_scope_end(s2);
  g_assert_true(gs_is_alive(p));
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 0, 2);
  gs_scope_end(s1);
  assert_stats(TENSORS, 1, 0, 1, 1, 0, 0, 1);
  gs_dispose(caller); /* moved: nothing */
  assert_stats(TENSORS, 1, 0, 1, 1, 0, 0, 1);
  gs_dispose(q);
  assert_stats(TENSORS, 1, 1, 1, 1, 0, 0, 0);
}

/* A module owns its parameters outside every scope: they survive training-step scopes;
 * replacing a name disposes the old parameter; disposing the module disposes all. */
static void test_module_owns_parameters(void) {
  gs_module m = gs_module_new("Linear");
  g_assert_cmpuint(m.id, !=, 0);
  gs_scope init = gs_scope_begin("init");
  gs_tensor w = gs_parameter_new(gs_zeros(GS_F32, (int64_t[]){2, 3}, 2), true);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 0, 1);
  assert_owner(w, init);
  gs_module_register_parameter(m, "weight", w); /* out of the scope: a detach */
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  assert_owner(w, GS_NO_SCOPE);
  gs_scope_end(init);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  g_assert_true(gs_is_alive(w));
  g_assert_cmpuint(gs_module_parameter(m, "weight").id, ==, w.id);
  /* Owned by the module, not by a scope: moving it out or detaching it does nothing. */
  gs_move_to_outer(w);
  gs_detach_from_scopes(w);
  assert_stats(TENSORS, 0, 0, 1, 0, 0, 1, 1);
  g_assert_cmpuint(gs_module_parameter(m, "weight").id, ==, w.id);

  /* A parameter made outside scopes: registering it counts nothing. */
  gs_tensor b = gs_parameter_new(gs_zeros(GS_F32, (int64_t[]){2}, 1), true);
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 1, 2);
  gs_module_register_parameter(m, "bias", b);
  assert_stats(TENSORS, 1, 0, 1, 0, 0, 1, 2);
  g_assert_cmpint(gs_module_parameter_count(m), ==, 2);
  const char *name = NULL;
  g_assert_cmpuint(gs_module_parameter_at(m, 0, &name).id, ==, w.id);
  g_assert_cmpstr(name, ==, "weight");
  g_assert_cmpuint(gs_module_parameter_at(m, 1, &name).id, ==, b.id);
  g_assert_cmpstr(name, ==, "bias");

  /* Training steps: each step's temporaries go, the parameters stay. */
  for (int step = 0; step < 3; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor y = gs_mul(w, w);
    assert_owner(y, s);
    assert_stats(TENSORS, 1, 0, 2 + step, step, 0, 1, 3);
    gs_scope_end(s);
    assert_stats(TENSORS, 1, 0, 2 + step, 1 + step, 0, 1, 2);
    g_assert_true(gs_is_alive(w) && gs_is_alive(b));
  }

  /* Replacing "weight" disposes the old one (owned by the module: outside scopes). */
  gs_scope re = gs_scope_begin("reinit");
  gs_tensor w2 = gs_parameter_new(gs_ones(GS_F32, (int64_t[]){2, 3}, 2), true);
  assert_stats(TENSORS, 1, 0, 5, 3, 0, 1, 3);
  gs_module_register_parameter(m, "weight", w2);
  assert_stats(TENSORS, 1, 1, 5, 3, 0, 2, 2);
  g_assert_false(gs_is_alive(w));
  g_assert_cmpuint(gs_module_parameter(m, "weight").id, ==, w2.id);
  g_assert_cmpint(gs_module_parameter_count(m), ==, 2);
  gs_scope_end(re);
  assert_stats(TENSORS, 1, 1, 5, 3, 0, 2, 2);
  g_assert_true(gs_is_alive(w2));

  /* Only parameters can be registered. */
  gs_tensor plain = tensor3();
  assert_stats(TENSORS, 2, 1, 5, 3, 0, 2, 3);
  EXPECT_ERROR(gs_module_register_parameter(m, "plain", plain), "parameter");
  g_assert_cmpint(gs_module_parameter_count(m), ==, 2);
  gs_dispose(plain);
  assert_stats(TENSORS, 2, 2, 5, 3, 0, 2, 2);

  gs_module_dispose(m);
  assert_stats(TENSORS, 2, 4, 5, 3, 0, 2, 0);
  g_assert_false(gs_is_alive(w2) || gs_is_alive(b));
}

/* ---- two threads ---------------------------------------------------------------------- */

typedef struct {
  gs_tensor handed; /* detached on A, attached on B */
  gs_scope_stats a_created, a_detached, a_ended;
  gs_scope_stats b_start, b_attached, b_ended;
  uint64_t a_scope, b_scope, b_owner_after_attach;
  bool b_alive_after_end;
} handoff;

static void *handoff_thread_a(void *data) {
  handoff *h = data;
  gs_scope s = gs_scope_begin("thread-a");
  h->a_scope = s.id;
  h->handed = gs_zeros(GS_F32, (int64_t[]){8}, 1);
  h->a_created = gs_thread_scope_stats(TENSORS);
  gs_detach_from_scopes(h->handed);
  h->a_detached = gs_thread_scope_stats(TENSORS);
  gs_scope_end(s);
  h->a_ended = gs_thread_scope_stats(TENSORS);
  return NULL;
}

static void *handoff_thread_b(void *data) {
  handoff *h = data;
  h->b_start = gs_thread_scope_stats(TENSORS); /* a new thread starts from zero */
  gs_scope s = gs_scope_begin("thread-b");
  h->b_scope = s.id;
  gs_scope_attach(s, h->handed);
  h->b_owner_after_attach = gs_owner_scope(h->handed).id;
  h->b_attached = gs_thread_scope_stats(TENSORS);
  gs_scope_end(s);
  h->b_ended = gs_thread_scope_stats(TENSORS);
  h->b_alive_after_end = gs_is_alive(h->handed);
  return NULL;
}

/* A tensor detached from a scope on thread A and attached to a scope on thread B: A counts
 * the creation and the detach, B the attach and the disposal; the main thread nothing. */
static void test_two_threads_handoff(void) {
  handoff h = {0};
  pthread_t a, b;
  g_assert_cmpint(pthread_create(&a, NULL, handoff_thread_a, &h), ==, 0);
  g_assert_cmpint(pthread_join(a, NULL), ==, 0);
  g_assert_true(gs_is_alive(h.handed));
  g_assert_cmpuint(gs_owner_scope(h.handed).id, ==, 0);
  g_assert_cmpint(pthread_create(&b, NULL, handoff_thread_b, &h), ==, 0);
  g_assert_cmpint(pthread_join(b, NULL), ==, 0);

  assert_snapshot(h.a_created, 0, 0, 1, 0, 0, 0, 1);
  assert_snapshot(h.a_detached, 0, 0, 1, 0, 0, 1, 1);
  assert_snapshot(h.a_ended, 0, 0, 1, 0, 0, 1, 1);
  assert_snapshot(h.b_start, 0, 0, 0, 0, 0, 0, 0);
  assert_snapshot(h.b_attached, 0, 0, 0, 0, 1, 0, 0);
  assert_snapshot(h.b_ended, 0, 0, 0, 1, 1, 0, -1);
  g_assert_cmpuint(h.b_owner_after_attach, ==, h.b_scope);
  g_assert_false(h.b_alive_after_end);
  g_assert_false(gs_is_alive(h.handed));
  assert_stats(TENSORS, 0, 0, 0, 0, 0, 0, 0);
}

typedef struct {
  gs_tensor t;
  gs_scope_stats created, after_other_disposed, ended;
  gs_scope_stats disposer;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stage; /* 0: A creates; 1: B disposes; 2: A ends its scope */
} cross_dispose;

static void wait_stage(cross_dispose *c, int stage) {
  pthread_mutex_lock(&c->lock);
  while (c->stage < stage)
    pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
}

static void set_stage(cross_dispose *c, int stage) {
  pthread_mutex_lock(&c->lock);
  c->stage = stage;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->lock);
}

static void *cross_owner(void *data) {
  cross_dispose *c = data;
  gs_scope s = gs_scope_begin("owner-thread");
  c->t = tensor3();
  c->created = gs_thread_scope_stats(TENSORS);
  set_stage(c, 1);
  wait_stage(c, 2);
  c->after_other_disposed = gs_thread_scope_stats(TENSORS);
  gs_scope_end(s); /* it no longer owns t */
  c->ended = gs_thread_scope_stats(TENSORS);
  return NULL;
}

static void *cross_disposer(void *data) {
  cross_dispose *c = data;
  wait_stage(c, 1);
  gs_dispose(c->t); /* owned by a scope (of thread A) at disposal time: in scope */
  c->disposer = gs_thread_scope_stats(TENSORS);
  set_stage(c, 2);
  return NULL;
}

/* Thread B disposes a tensor that a scope of thread A owns, while that scope is open: as in
 * TorchSharp, the disposing thread counts a disposal in scope, and A's scope no longer owns it. */
static void test_two_threads_dispose_across(void) {
  cross_dispose c = {.stage = 0};
  pthread_mutex_init(&c.lock, NULL);
  pthread_cond_init(&c.cond, NULL);
  pthread_t a, b;
  g_assert_cmpint(pthread_create(&a, NULL, cross_owner, &c), ==, 0);
  g_assert_cmpint(pthread_create(&b, NULL, cross_disposer, &c), ==, 0);
  g_assert_cmpint(pthread_join(a, NULL), ==, 0);
  g_assert_cmpint(pthread_join(b, NULL), ==, 0);
  pthread_cond_destroy(&c.cond);
  pthread_mutex_destroy(&c.lock);
  assert_snapshot(c.created, 0, 0, 1, 0, 0, 0, 1);
  assert_snapshot(c.disposer, 0, 0, 0, 1, 0, 0, -1);
  assert_snapshot(c.after_other_disposed, 0, 0, 1, 0, 0, 0, 1);
  assert_snapshot(c.ended, 0, 0, 1, 0, 0, 0, 1);
  g_assert_false(gs_is_alive(c.t));
  assert_stats(TENSORS, 0, 0, 0, 0, 0, 0, 0);
}

typedef struct {
  pthread_barrier_t *barrier;
  int count;
  const char *name;
  uint64_t scope, current_while_open, outer;
  int owned;
  gs_scope_stats open, ended;
} worker;

static void *scoped_worker(void *data) {
  worker *w = data;
  gs_scope s = gs_scope_begin(w->name);
  w->scope = s.id;
  gs_tensor ts[8];
  for (int i = 0; i < w->count; i++)
    ts[i] = tensor3();
  pthread_barrier_wait(w->barrier); /* both threads have their scope open */
  w->current_while_open = gs_scope_current().id;
  w->outer = gs_scope_outer(s).id;
  w->owned = 0;
  for (int i = 0; i < w->count; i++)
    w->owned += gs_owner_scope(ts[i]).id == s.id;
  w->open = gs_thread_scope_stats(TENSORS);
  pthread_barrier_wait(w->barrier);
  gs_scope_end(s);
  w->ended = gs_thread_scope_stats(TENSORS);
  return NULL;
}

/* Two threads with scopes open at the same time: each has its own stack and statistics. */
static void test_two_threads_own_stacks(void) {
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  worker w[2] = {{&barrier, 3, "worker-a", 0, 0, 0, 0, {0}, {0}},
                 {&barrier, 5, "worker-b", 0, 0, 0, 0, {0}, {0}}};
  pthread_t threads[2];
  for (int i = 0; i < 2; i++)
    g_assert_cmpint(pthread_create(&threads[i], NULL, scoped_worker, &w[i]), ==, 0);
  for (int i = 0; i < 2; i++)
    g_assert_cmpint(pthread_join(threads[i], NULL), ==, 0);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < 2; i++) {
    g_assert_cmpuint(w[i].current_while_open, ==, w[i].scope);
    g_assert_cmpuint(w[i].outer, ==, 0);
    g_assert_cmpint(w[i].owned, ==, w[i].count);
  }
  g_assert_cmpuint(w[0].scope, !=, w[1].scope);
  assert_snapshot(w[0].open, 0, 0, 3, 0, 0, 0, 3);
  assert_snapshot(w[0].ended, 0, 0, 3, 3, 0, 0, 0);
  assert_snapshot(w[1].open, 0, 0, 5, 0, 0, 0, 5);
  assert_snapshot(w[1].ended, 0, 0, 5, 5, 0, 0, 0);
  assert_stats(TENSORS, 0, 0, 0, 0, 0, 0, 0);
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
}

/* ---- packed sequences ----------------------------------------------------------------- */

/* Three f32 sequences of lengths 3, 2, 1 (sorted by decreasing length). */
static void make_sequences(gs_tensor seqs[3]) {
  seqs[0] = gs_from_data(GS_F32, (int64_t[]){3}, 1, (float[]){1, 2, 3});
  seqs[1] = gs_from_data(GS_F32, (int64_t[]){2}, 1, (float[]){4, 5});
  seqs[2] = gs_from_data(GS_F32, (int64_t[]){1}, 1, (float[]){6});
}

static void dispose_sequences(gs_tensor seqs[3]) {
  for (int i = 0; i < 3; i++)
    gs_dispose(seqs[i]);
}

static void assert_packed_alive(gs_packed_sequence ps, bool with_indices) {
  g_assert_true(gs_packed_sequence_is_alive(ps));
  g_assert_true(gs_is_alive(gs_packed_data(ps)));
  g_assert_true(gs_is_alive(gs_packed_batch_sizes(ps)));
  if (with_indices) {
    g_assert_true(gs_is_alive(gs_packed_sorted_indices(ps)));
    g_assert_true(gs_is_alive(gs_packed_unsorted_indices(ps)));
  } else {
    g_assert_cmpuint(gs_packed_sorted_indices(ps).id, ==, 0);
    g_assert_cmpuint(gs_packed_unsorted_indices(ps).id, ==, 0);
  }
}

/* The seed's case: packed in a "collate" scope, moved out, used after the collate scope
 * ended; without the move, a stale-handle error naming "collate". */
static void test_packed_crosses_collate_scope(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);
  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3);
  assert_stats(PACKED, 0, 0, 0, 0, 0, 0, 0);
  gs_scope epoch = gs_scope_begin("epoch");
  gs_scope collate = gs_scope_begin("collate");
  gs_packed_sequence ps = gs_pack_sequence(seqs, 3, true);
  g_assert_cmpuint(ps.id, !=, 0);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3); /* its four tensors are not counted */
  assert_packed_owner(ps, collate);
  assert_packed_alive(ps, false);
  /* Its tensors are not registered on the scope one by one. */
  assert_owner(gs_packed_data(ps), GS_NO_SCOPE);
  assert_owner(gs_packed_batch_sizes(ps), GS_NO_SCOPE);
  g_assert_cmpuint(gs_packed_move_to_outer(ps).id, ==, ps.id);
  assert_packed_owner(ps, epoch);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  gs_scope_end(collate);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3);
  assert_packed_alive(ps, false);
  gs_tensor data = gs_packed_data(ps);
  assert_f32_values(data, (float[]){1, 4, 6, 2, 5, 3}, 6);
  assert_i64_values(gs_packed_batch_sizes(ps), (int64_t[]){3, 2, 1}, 3);

  gs_tensor lengths = GS_NO_TENSOR;
  gs_tensor padded = gs_pad_packed_sequence(ps, false, 0.0, -1, &lengths);
  assert_stats(TENSORS, 3, 0, 2, 0, 0, 0, 5);
  assert_owner(padded, epoch);
  int64_t shape[GS_MAX_DIMS];
  g_assert_cmpint(gs_shape(padded, shape), ==, 2);
  g_assert_cmpint(shape[0], ==, 3);
  g_assert_cmpint(shape[1], ==, 3);
  assert_f32_values(padded, (float[]){1, 4, 6, 2, 5, 0, 3, 0, 0}, 9);
  assert_i64_values(lengths, (int64_t[]){3, 2, 1}, 3);

  gs_scope_end(epoch);
  assert_stats(PACKED, 0, 0, 1, 1, 0, 0, 0);
  assert_stats(TENSORS, 3, 0, 2, 2, 0, 0, 3);
  g_assert_false(gs_packed_sequence_is_alive(ps));
  g_assert_false(gs_is_alive(data));

  /* Without the move. */
  gs_scope collate2 = gs_scope_begin("collate");
  gs_packed_sequence ps2 = gs_pack_sequence(seqs, 3, true);
  gs_tensor data2 = gs_packed_data(ps2);
  assert_stats(PACKED, 0, 0, 2, 1, 0, 0, 1);
  gs_scope_end(collate2);
  assert_stats(PACKED, 0, 0, 2, 2, 0, 0, 0);
  g_assert_false(gs_is_alive(data2));
  EXPECT_ERROR(gs_packed_data(ps2), "collate");
  assert_last_error_mentions("stale");
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  gs_tensor none = GS_NO_TENSOR;
  EXPECT_ERROR(none = gs_pad_packed_sequence(ps2, false, 0.0, -1, NULL), "collate");
  g_assert_cmpuint(none.id, ==, 0);

  assert_stats(TENSORS, 3, 0, 2, 2, 0, 0, 3);
  dispose_sequences(seqs);
  assert_stats(TENSORS, 3, 3, 2, 2, 0, 0, 0);
  assert_stats(PACKED, 0, 0, 2, 2, 0, 0, 0);
}

/* TorchSharp: TestDisposeScopesStatisticsPackedSequenceScoped, one scenario per block. */
static void test_packed_in_scope(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);

  /* Created in a scope; attaching it to that scope again counts nothing; ending disposes. */
  gs_scope s = gs_scope_begin("batch");
  gs_packed_sequence ps = gs_pack_sequence(seqs, 3, false);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  assert_packed_alive(ps, true);
  gs_scope_attach_packed(s, ps);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  assert_packed_owner(ps, s);
  g_assert_cmpuint(gs_scope_get_info(s).created, ==, 1);
  g_assert_cmpuint(gs_scope_get_info(s).alive, ==, 1);
  gs_tensor data = gs_packed_data(ps), idx = gs_packed_sorted_indices(ps);
  gs_scope_end(s);
  assert_stats(PACKED, 0, 0, 1, 1, 0, 0, 0);
  g_assert_false(gs_packed_sequence_is_alive(ps));
  g_assert_false(gs_is_alive(data) || gs_is_alive(idx)); /* all four go with it */

  /* Disposed by hand in a scope: once. */
  s = gs_scope_begin("batch");
  ps = gs_pack_sequence(seqs, 3, false);
  data = gs_packed_data(ps);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 0, 0, 2, 2, 0, 0, 0);
  g_assert_false(gs_is_alive(data));
  gs_scope_end(s);
  assert_stats(PACKED, 0, 0, 2, 2, 0, 0, 0);

  /* Detached: counted once; it and its tensors survive the scope; disposed outside. */
  s = gs_scope_begin("batch");
  ps = gs_pack_sequence(seqs, 3, false);
  g_assert_cmpuint(gs_packed_detach_from_scopes(ps).id, ==, ps.id);
  assert_stats(PACKED, 0, 0, 3, 2, 0, 1, 1);
  assert_packed_owner(ps, GS_NO_SCOPE);
  gs_packed_detach_from_scopes(ps); /* owned by no scope: nothing */
  assert_stats(PACKED, 0, 0, 3, 2, 0, 1, 1);
  gs_scope_end(s);
  assert_stats(PACKED, 0, 0, 3, 2, 0, 1, 1);
  assert_packed_alive(ps, true);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 0, 1, 3, 2, 0, 1, 0);

  /* Tensor statistics saw only the three source tensors throughout. */
  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3);
  dispose_sequences(seqs);
  assert_stats(TENSORS, 3, 3, 0, 0, 0, 0, 0);
}

/* TorchSharp: TestDisposeScopesStatisticsPackedSequenceUnscoped. */
static void test_packed_outside_scope(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);

  /* Created outside, disposed outside. */
  gs_packed_sequence ps = gs_pack_sequence(seqs, 3, true);
  assert_stats(PACKED, 1, 0, 0, 0, 0, 0, 1);
  assert_packed_owner(ps, GS_NO_SCOPE);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 1, 1, 0, 0, 0, 0, 0);

  /* Attached: counts an attach (not its tensors); detaching an unowned one counts nothing;
   * ending the scope disposes it in scope. */
  ps = gs_pack_sequence(seqs, 3, true);
  gs_scope s = gs_scope_begin("batch");
  gs_packed_detach_from_scopes(ps);
  assert_stats(PACKED, 2, 1, 0, 0, 0, 0, 1);
  g_assert_cmpuint(gs_scope_attach_packed(s, ps).id, ==, ps.id);
  assert_stats(PACKED, 2, 1, 0, 0, 1, 0, 1);
  assert_packed_owner(ps, s);
  gs_scope_end(s);
  assert_stats(PACKED, 2, 1, 0, 1, 1, 0, 0);
  g_assert_false(gs_packed_sequence_is_alive(ps));

  /* Attached, then disposed by hand: in scope. */
  ps = gs_pack_sequence(seqs, 3, true);
  s = gs_scope_begin("batch");
  gs_scope_attach_packed(s, ps);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 3, 1, 0, 2, 2, 0, 0);
  gs_scope_end(s);
  assert_stats(PACKED, 3, 1, 0, 2, 2, 0, 0);

  /* Attached, then detached: counted; ending the scope leaves it. */
  ps = gs_pack_sequence(seqs, 3, true);
  s = gs_scope_begin("batch");
  gs_scope_attach_packed(s, ps);
  gs_packed_detach_from_scopes(ps);
  assert_stats(PACKED, 4, 1, 0, 2, 3, 1, 1);
  gs_scope_end(s);
  assert_stats(PACKED, 4, 1, 0, 2, 3, 1, 1);
  assert_packed_alive(ps, false);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 4, 2, 0, 2, 3, 1, 0);

  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3);
  dispose_sequences(seqs);
  assert_stats(TENSORS, 3, 3, 0, 0, 0, 0, 0);
}

/* TorchSharp's PackSequencesMoveDisposeScope: inner -> outer (move) -> another scope (here
 * an attach, which takes it from its owner and counts an attach) -> disposed with that scope. */
static void test_packed_moves_between_scopes(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);
  gs_scope other = gs_scope_begin("other");
  gs_scope outer = gs_scope_begin("outer");
  gs_scope inner = gs_scope_begin("inner");
  gs_packed_sequence ps = gs_pack_sequence(seqs, 3, false);
  assert_packed_alive(ps, true);
  gs_packed_move_to_outer(ps);
  assert_packed_owner(ps, outer);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  gs_scope_end(inner);
  assert_packed_alive(ps, true);
  assert_stats(PACKED, 0, 0, 1, 0, 0, 0, 1);
  gs_scope_attach_packed(other, ps);
  assert_packed_owner(ps, other);
  assert_stats(PACKED, 0, 0, 1, 0, 1, 0, 1);
  gs_scope_end(outer);
  assert_packed_alive(ps, true);
  assert_stats(PACKED, 0, 0, 1, 0, 1, 0, 1);
  gs_tensor data = gs_packed_data(ps);
  gs_scope_end(other);
  assert_stats(PACKED, 0, 0, 1, 1, 1, 0, 0);
  g_assert_false(gs_packed_sequence_is_alive(ps));
  g_assert_false(gs_is_alive(data));
  EXPECT_ERROR(gs_packed_batch_sizes(ps), "other");

  /* With no outer scope, moving out is a detach. */
  gs_scope lone = gs_scope_begin("lone");
  ps = gs_pack_sequence(seqs, 3, false);
  gs_packed_move_to_outer(ps);
  assert_packed_owner(ps, GS_NO_SCOPE);
  assert_stats(PACKED, 0, 0, 2, 1, 1, 1, 1);
  gs_scope_end(lone);
  assert_packed_alive(ps, true);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 0, 1, 2, 1, 1, 1, 0);

  assert_stats(TENSORS, 3, 0, 0, 0, 0, 0, 3);
  dispose_sequences(seqs);
}

/* A packed sequence and tensors in one scope: dispose-everything-but keeps the listed packed
 * sequence (owned by the scope); each kind is counted in its own statistics. */
static void test_packed_dispose_everything_but(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);
  gs_scope s = gs_scope_begin("batch");
  gs_packed_sequence keep = gs_pack_sequence(seqs, 3, true);
  gs_packed_sequence drop = gs_pack_sequence(seqs, 3, true);
  gs_tensor t = tensor3();
  assert_stats(PACKED, 0, 0, 2, 0, 0, 0, 2);
  assert_stats(TENSORS, 3, 0, 1, 0, 0, 0, 4);
  g_assert_cmpuint(keep.id, !=, t.id);
  gs_scope_dispose_everything_but(s, &keep.id, 1);
  assert_stats(PACKED, 0, 0, 2, 1, 0, 0, 1);
  assert_stats(TENSORS, 3, 0, 1, 1, 0, 0, 3);
  assert_packed_alive(keep, false);
  assert_packed_owner(keep, s);
  g_assert_false(gs_packed_sequence_is_alive(drop));
  g_assert_false(gs_is_alive(t));
  gs_scope_end(s);
  assert_stats(PACKED, 0, 0, 2, 2, 0, 0, 0);
  g_assert_false(gs_packed_sequence_is_alive(keep));
  dispose_sequences(seqs);
  assert_stats(TENSORS, 3, 3, 1, 1, 0, 0, 0);
}

/* Attaching a packed sequence to an ended scope is an error like any other use. */
static void test_packed_ended_scope_is_error(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);
  gs_packed_sequence ps = gs_pack_sequence(seqs, 3, true);
  gs_scope s = gs_scope_begin("closed");
  gs_scope_end(s);
  EXPECT_ERROR(gs_scope_attach_packed(s, ps), "closed");
  assert_last_error_mentions("ended");
  assert_packed_owner(ps, GS_NO_SCOPE);
  assert_stats(PACKED, 1, 0, 0, 0, 0, 0, 1);
  gs_packed_sequence_dispose(ps);
  assert_stats(PACKED, 1, 1, 0, 0, 0, 0, 0);
  dispose_sequences(seqs);
}

/* A collate step packs a sequence every batch, in the same slot: an old packed sequence's
 * handle still names what disposed it and when after its slot has held 100 more. */
static void test_packed_stale_after_100_reuses(void) {
  gs_tensor seqs[3];
  make_sequences(seqs);
  gs_packed_sequence old = gs_pack_sequence(seqs, 3, true);
  uint64_t before = gs_event_counter();
  gs_packed_sequence_dispose(old);
  uint64_t disposed_at = before + 1; /* the composite goes first, then its parts */
  for (int i = 0; i < 100; i++) {
    gs_packed_sequence ps = gs_pack_sequence(seqs, 3, true);
    g_assert_cmpuint(ps.id & 0xffffffffu, ==, old.id & 0xffffffffu);
    gs_packed_sequence_dispose(ps);
  }
  char expected[200];
  g_snprintf(expected, sizeof expected,
             "packed sequence #%u.%u is stale: it was disposed by gs_packed_sequence_dispose at "
             "event %llu (its slot has held 100 packed sequences since)",
             (unsigned)(old.id & 0x7fffffffu), (unsigned)(old.id >> 32),
             (unsigned long long)disposed_at);
  EXPECT_ERROR(gs_packed_data(old), expected);
  g_assert_cmpint(gs_last_error_code(), ==, GS_ERR_STALE_HANDLE);
  dispose_sequences(seqs);
}

/* ---- leak report ---------------------------------------------------------------------- */

static int leak_report_text(char **text) {
  size_t len = 0;
  FILE *mem = open_memstream(text, &len);
  int n = gs_leak_report(mem);
  fclose(mem);
  return n;
}

/* Caller-owned tensors (created outside scopes, or detached) are listed with their op and
 * shape; scoped ones are not. */
static void test_leak_report(void) {
  char *text = NULL;
  int before = leak_report_text(&text);
  free(text);
  gs_tensor outside = gs_zeros(GS_F32, (int64_t[]){4, 5}, 2);
  gs_scope s = gs_scope_begin("leaky-step");
  gs_tensor scoped = gs_ones(GS_F32, (int64_t[]){6, 7}, 2);
  gs_tensor detached = gs_detach_from_scopes(gs_full(GS_F64, (int64_t[]){2, 3}, 2, 1.5));
  assert_stats(TENSORS, 1, 0, 2, 0, 0, 1, 3);
  int n = leak_report_text(&text);
  g_assert_cmpint(n, ==, before + 2);
  g_test_message("leak report:\n%s", text);
  g_assert_nonnull(strstr(text, "zeros"));
  g_assert_nonnull(strstr(text, "[4, 5]"));
  g_assert_nonnull(strstr(text, "full"));
  g_assert_nonnull(strstr(text, "[2, 3]"));
  g_assert_nonnull(strstr(text, "leaky-step")); /* the detached one's scope history */
  g_assert_null(strstr(text, "[6, 7]"));
  free(text);
  gs_scope_end(s);
  g_assert_false(gs_is_alive(scoped));
  gs_dispose(outside);
  gs_dispose(detached);
  assert_stats(TENSORS, 1, 2, 2, 1, 0, 1, 0);
  g_assert_cmpint(leak_report_text(&text), ==, before);
  g_assert_null(strstr(text, "[4, 5]"));
  free(text);
}

/* GS_LEAK_REPORT=1: the report is printed to stderr when the process exits, leaks made by the
 * same line grouped, with the line (this file's, where the subprocess made them). */
static void test_leak_report_at_exit(void) {
  const int line = __LINE__ + 3; /* the gs_zeros line below */
  if (g_test_subprocess()) {
    for (int i = 0; i < 3; i++)
      gs_zeros(GS_I64, (int64_t[]){3, 9}, 2); /* leaked on purpose */
    gs_ones(GS_F32, (int64_t[]){2}, 1);       /* and another, from another line */
    exit(0);
  }
  g_setenv("GS_LEAK_REPORT", "1", TRUE); /* read when the library loads in the subprocess */
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_unsetenv("GS_LEAK_REPORT");
  g_test_trap_assert_passed();
  g_autofree char *zeros = g_strdup_printf("*leak: 3 × zeros [3, 9] i64 (648 B) at test-scope.c:%d "
                                           "in *, held by the program*", line);
  g_autofree char *ones = g_strdup_printf("*leak: 1 × ones [2] f32 (8 B) at test-scope.c:%d in *",
                                          line + 1);
  g_test_trap_assert_stderr(zeros);
  g_test_trap_assert_stderr(ones);
  g_test_trap_assert_stderr("*leak: 4 tensor(s) alive and owned by the caller, in 2 group(s)*");
}

/* A group's members come in the order the program made them, not by slot: slots are reused
 * last freed first, so three leaks made after three disposals sit in descending slots. */
static void test_leak_report_members_in_creation_order(void) {
  gs_tensor freed[3], leaked[3];
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
    leaked[i] = gs_zeros(GS_I64, (int64_t[]){3, 11}, 2); /* one line, one group */
  g_assert_cmpuint(leaked[0].id & 0xffffffffu, >, leaked[2].id & 0xffffffffu); /* the premise */
  char *text = NULL;
  leak_report_text(&text);
  g_test_message("leak report:\n%s", text);
  const char *line = strstr(text, "3 × zeros [3, 11] i64");
  g_assert_nonnull(line);
  char want[64];
  const char *at = line;
  for (int i = 0; i < 3; i++) {
    snprintf(want, sizeof want, " #%u.", (unsigned)(leaked[i].id & 0xffffffffu));
    at = strstr(at, want);
    g_assert_nonnull(at); /* the i-th made is the i-th listed */
  }
  g_assert_true(at < strchr(line, '\n'));
  free(text);
  for (int i = 0; i < 3; i++)
    gs_dispose(leaked[i]);
}

/* ---- registration --------------------------------------------------------------------- */

typedef struct {
  const char *path;
  void (*fn)(void);
} scope_test;

/* Every test starts from zeroed statistics and no open scope, and must leave no scope open
 * and the process's live tensor count where it found it. */
static void run_scope_test(gconstpointer data) {
  const scope_test *test = data;
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
  gs_thread_scope_stats_reset();
  assert_stats(TENSORS, 0, 0, 0, 0, 0, 0, 0);
  assert_stats(PACKED, 0, 0, 0, 0, 0, 0, 0);
  uint64_t live_before = gs_live_tensor_count();
  test->fn();
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live_before);
}

static const scope_test tests[] = {
    {"/scope/tensor/create-in-scope-counts-once", test_create_in_scope_counts_once},
    {"/scope/tensor/attach-to-own-scope-counts-nothing", test_attach_to_own_scope_counts_nothing},
    {"/scope/tensor/detach-counts-once", test_detach_counts_once},
    {"/scope/tensor/dispose-in-scope-counts-once", test_dispose_in_scope_counts_once},
    {"/scope/tensor/end-after-detach-keeps-tensor", test_end_after_detach_keeps_tensor},
    {"/scope/tensor/stats-format", test_stats_format},
    {"/scope/tensor/create-outside-counts-outside", test_create_outside_counts_outside},
    {"/scope/tensor/attach-unowned-counts-attached", test_attach_unowned_counts_attached},
    {"/scope/tensor/detach-unowned-counts-nothing", test_detach_unowned_counts_nothing},
    {"/scope/tensor/dispose-attached-counts-in-scope", test_dispose_attached_counts_in_scope},
    {"/scope/tensor/detach-attached-counts-detached", test_detach_attached_counts_detached},
    {"/scope/tensor/inner-scope-leaves-outer-attachment",
     test_inner_scope_leaves_outer_attachment},
    {"/scope/ops/minimal", test_minimal_scope},
    {"/scope/ops/dispose-everything-but", test_dispose_everything_but},
    {"/scope/ops/dispose-everything-but-keeps-foreign-owner",
     test_dispose_everything_but_keeps_foreign_owner},
    {"/scope/ops/dispose-everything", test_dispose_everything},
    {"/scope/ops/stacked-scopes", test_stacked_scopes},
    {"/scope/ops/op-results-are-owned", test_op_results_are_owned},
    {"/scope/ops/moved-result-survives", test_moved_result_survives},
    {"/scope/ops/dispose-in-the-middle", test_dispose_in_the_middle},
    {"/scope/ops/nested-scopes", test_nested_scopes},
    {"/scope/ops/move-to-outer-uses-owning-scope", test_move_to_outer_uses_owning_scope},
    {"/scope/ops/scope-move-to-outer-not-owned-is-noop",
     test_scope_move_to_outer_not_owned_is_noop},
    {"/scope/ops/move-to-other-scope", test_move_to_other_scope},
    {"/scope/ops/attach-from-another-scope", test_attach_from_another_scope},
    {"/scope/ops/end-middle-scope", test_end_middle_scope},
    {"/scope/ops/end-outermost-scope-first", test_end_outermost_scope_first},
    {"/scope/ops/end-twice-is-noop", test_end_twice_is_noop},
    {"/scope/ops/ended-scope-use-is-error", test_ended_scope_use_is_error},
    {"/scope/ops/stale-after-end-names-scope", test_stale_after_end_names_scope},
    {"/scope/ops/stale-scope-keeps-its-story-after-100-reuses",
     test_stale_scope_keeps_its_story_after_100_reuses},
    {"/scope/ops/stale-scope-beyond-history-says-so", test_stale_scope_beyond_history_says_so},
    {"/scope/ops/forged-scope-handle-is-error", test_forged_scope_handle_is_error},
    {"/scope/info/counts-and-bytes", test_scope_info},
    {"/scope/info/follows-moves", test_scope_info_follows_moves},
    {"/scope/parameter/moves-handle", test_parameter_moves_handle},
    {"/scope/parameter/stays-with-owning-scope", test_parameter_stays_with_owning_scope},
    {"/scope/module/owns-parameters", test_module_owns_parameters},
    {"/scope/threads/handoff", test_two_threads_handoff},
    {"/scope/threads/own-stacks", test_two_threads_own_stacks},
    {"/scope/threads/dispose-across", test_two_threads_dispose_across},
    {"/scope/packed/crosses-collate-scope", test_packed_crosses_collate_scope},
    {"/scope/packed/in-scope", test_packed_in_scope},
    {"/scope/packed/outside-scope", test_packed_outside_scope},
    {"/scope/packed/moves-between-scopes", test_packed_moves_between_scopes},
    {"/scope/packed/dispose-everything-but", test_packed_dispose_everything_but},
    {"/scope/packed/ended-scope-is-error", test_packed_ended_scope_is_error},
    {"/scope/packed/stale-after-100-reuses", test_packed_stale_after_100_reuses},
    {"/scope/leaks/report", test_leak_report},
    {"/scope/leaks/report-at-exit", test_leak_report_at_exit},
    {"/scope/leaks/members-in-creation-order", test_leak_report_members_in_creation_order},
};

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  for (size_t i = 0; i < G_N_ELEMENTS(tests); i++)
    g_test_add_data_func(tests[i].path, &tests[i], run_scope_test);
  return g_test_run();
}
