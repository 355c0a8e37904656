/* test-run-diff.c: the comparison of two runs (inspector/model/analysis/run-diff.c) on logs
 * the engine records in the test, for what the CLI test's before/after pair does not reach: passes
 * matched by number when a run has no step marks (a pass only one run has), alignment by the
 * fraction of each run with no shared marks, a graph that grows (nodes added), node
 * signatures that ignore ids, sizes for --fail-peak-increase, and a file that is no log. */
#include <glib/gstdio.h>
#include <string.h>

#include "model-test-util.h"
#include "run-diff.h"

static int passes_wanted;
static gboolean deeper; /* one more op in the graph: a node added */

/* passes_wanted backward passes of (x * w).sum(), or ((x * w) * w).sum() when deeper; no
 * marks. */
static void passes_workload(void) {
  const int64_t shape[] = {3};
  gs_tensor w = gs_parameter_new(gs_ones(GS_F32, shape, 1), true);
  for (int i = 0; i < passes_wanted; i++) {
    gs_scope scope = gs_scope_begin("pass");
    gs_tensor y = gs_mul(gs_ones(GS_F32, shape, 1), w);
    if (deeper)
      y = gs_mul(y, w);
    gs_backward(gs_sum(y, NULL, 0, false));
    gs_scope_end(scope);
  }
  gs_dispose(w);
}

static gs_run_summary *summary_of(int passes, gboolean deep, char **path) {
  passes_wanted = passes;
  deeper = deep;
  *path = record_log(passes_workload);
  g_autoptr(GError) error = NULL;
  gs_run_summary *s = gs_run_summary_read(*path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(s);
  return s;
}

static void test_passes_by_number(void) {
  char *pa, *pb;
  g_autoptr(gs_run_summary) a = summary_of(2, FALSE, &pa);
  g_autoptr(gs_run_summary) b = summary_of(3, TRUE, &pb);
  g_assert_cmpuint(a->passes->len, ==, 2);
  g_assert_cmpuint(b->passes->len, ==, 3);
  g_autoptr(gs_run_diff) d = gs_run_diff_new(a, b);
  g_assert_false(d->passes_by_step);
  g_assert_cmpuint(d->passes->len, ==, 3);
  for (guint i = 0; i < 2; i++) {
    const gs_run_diff_pass *p = d->passes->pdata[i];
    g_assert_nonnull(p->a);
    g_assert_nonnull(p->b);
    g_assert_cmpuint(p->a->number, ==, p->b->number);
    /* The deeper graph has one more MulBackward at the root; the old root's path changed, so
     * by signature: the MulBackward and AccumulateGrad of a are matched by the two deeper
     * ones of b only where their paths agree. Whatever moved, b has one node more. */
    g_assert_cmpuint(p->b->nodes->len, ==, p->a->nodes->len + 1);
    g_assert_cmpuint(p->added->len, ==, p->removed->len + 1);
    guint mul_a = 0, mul_b = 0;
    for (guint k = 0; k < p->kinds->len; k++) {
      const gs_run_diff_kind *kind = &g_array_index(p->kinds, gs_run_diff_kind, k);
      if (!strcmp(kind->kind, "MulBackward"))
        mul_a = kind->a, mul_b = kind->b;
    }
    g_assert_cmpuint(mul_a, ==, 1);
    g_assert_cmpuint(mul_b, ==, 2);
  }
  /* The third pass is b's alone: all its nodes are added. */
  const gs_run_diff_pass *third = d->passes->pdata[2];
  g_assert_null(third->a);
  g_assert_nonnull(third->b);
  g_assert_cmpuint(third->added->len, ==, third->b->nodes->len);
  g_assert_cmpuint(third->removed->len, ==, 0);

  /* No marks: aligned by the fraction of each run, the ends together. */
  g_assert_cmpuint(d->anchors->len / 2, ==, 2);
  g_assert_cmpfloat(gs_run_diff_align(d, b->last_seq), ==, (double)a->last_seq);
  double half = gs_run_diff_align(d, b->last_seq / 2);
  g_assert_cmpfloat(ABS(half - a->last_seq / 2.0), <, 1.0);
  g_assert_cmpfloat(ABS(gs_run_diff_unalign(d, half) - (double)(b->last_seq / 2)), <, 1e-6);

  /* The rows: the pass b alone has is listed, with no place in a. */
  g_autoptr(GPtrArray) rows = gs_run_diff_rows(d);
  gboolean found = FALSE;
  for (guint i = 0; i < rows->len; i++) {
    const gs_run_diff_row *r = rows->pdata[i];
    if (r->pass == 2) {
      found = TRUE;
      g_assert_cmpuint(r->a_seq, ==, G_MAXUINT64);
      g_assert_cmpuint(r->b_seq, ==, third->b->seq);
      g_assert_cmpstr(r->a_text, ==, "—");
    }
  }
  g_assert_true(found);
  remove_log(pa);
  remove_log(pb);
}

/* The same program twice: every node of every pass matches, though ids could differ, and no
 * row is listed but the events that differ (none here but time: none at all). */
static void test_same_program_matches(void) {
  char *pa, *pb;
  g_autoptr(gs_run_summary) a = summary_of(2, TRUE, &pa);
  g_autoptr(gs_run_summary) b = summary_of(2, TRUE, &pb);
  g_autoptr(gs_run_diff) d = gs_run_diff_new(a, b);
  for (guint i = 0; i < d->passes->len; i++) {
    const gs_run_diff_pass *p = d->passes->pdata[i];
    g_assert_cmpuint(p->added->len, ==, 0);
    g_assert_cmpuint(p->removed->len, ==, 0);
  }
  g_autoptr(GPtrArray) rows = gs_run_diff_rows(d);
  g_assert_cmpuint(rows->len, ==, 0);
  remove_log(pa);
  remove_log(pb);
}

static void test_sizes(void) {
  guint64 n = 1;
  g_assert_true(gs_run_diff_parse_size("0", &n) && n == 0);
  g_assert_true(gs_run_diff_parse_size("4096", &n) && n == 4096);
  g_assert_true(gs_run_diff_parse_size("512K", &n) && n == 512 * 1024);
  g_assert_true(gs_run_diff_parse_size("1MiB", &n) && n == 1u << 20);
  g_assert_true(gs_run_diff_parse_size("1m", &n) && n == 1u << 20);
  g_assert_true(gs_run_diff_parse_size("2 MB", &n) && n == 2000000);
  g_assert_true(gs_run_diff_parse_size("3GiB", &n) && n == 3ull << 30);
  g_assert_false(gs_run_diff_parse_size("lots", &n));
  g_assert_false(gs_run_diff_parse_size("-1", &n));
  g_assert_false(gs_run_diff_parse_size("1.5M", &n));
  g_assert_false(gs_run_diff_parse_size("", &n));
  g_assert_false(gs_run_diff_parse_size("99999999999999999999G", &n));
  g_assert_false(gs_run_diff_parse_size("20000000000G", &n)); /* past 2^64 bytes */
}

static void test_not_a_log(void) {
  g_autofree char *path = g_build_filename(g_get_tmp_dir(), "gs-run-diff-notes.txt", NULL);
  g_assert_true(g_file_set_contents(path, "notes", -1, NULL));
  g_autoptr(GError) error = NULL;
  g_assert_null(gs_run_summary_read(path, &error));
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, path));
  g_clear_error(&error);
  g_unlink(path);
  g_assert_null(gs_run_summary_read(path, &error));
  g_assert_nonnull(strstr(error->message, path));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/run-diff/passes-by-number", test_passes_by_number);
  g_test_add_func("/run-diff/same-program-matches", test_same_program_matches);
  g_test_add_func("/run-diff/sizes", test_sizes);
  g_test_add_func("/run-diff/not-a-log", test_not_a_log);
  return g_test_run();
}
