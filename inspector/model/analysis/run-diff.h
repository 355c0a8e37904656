/* run-diff.h: two runs of a program set side by side: "did my change remove the leak, lower
 * the peak, cut the graph?". Scopes are matched by name, call sites by their text, backward
 * passes by the step or epoch mark before them when both runs have such marks (else by
 * number), and the nodes of matched passes by their signatures (run-summary.h), so nodes added
 * and removed are found although ids differ between runs. `gradscope diff` prints this and the
 * inspector's Compare view shows it as a table of differences. GLib only. */
#pragma once

#include <glib.h>

#include "run-summary.h"

G_BEGIN_DECLS

typedef struct gs_run_diff_scope {
  const char *name;
  const gs_run_scope *a, *b; /* NULL: no scope of that name in the run */
} gs_run_diff_scope;

typedef struct gs_run_diff_site {
  const char *where;
  const gs_run_site *a, *b;
} gs_run_diff_site;

typedef struct gs_run_diff_kind {
  const char *kind; /* a node kind: "MulBackward" */
  guint a, b;       /* nodes of it in each run's pass */
} gs_run_diff_kind;

typedef struct gs_run_diff_pass {
  const gs_run_pass *a, *b; /* NULL: the pass has no match in that run */
  GArray *kinds;   /* gs_run_diff_kind, by kind name */
  GArray *removed; /* gs_run_node of a's pass with no match in b's */
  GArray *added;   /* gs_run_node of b's pass with no match in a's */
} gs_run_diff_pass;

typedef struct gs_run_diff {
  const gs_run_summary *a, *b; /* borrowed */
  GPtrArray *scopes;  /* gs_run_diff_scope*: a's names in order, then b's new ones */
  GPtrArray *sites;   /* gs_run_diff_site*: likewise */
  GPtrArray *passes;  /* gs_run_diff_pass*: a's passes in order, then b's unmatched ones */
  gboolean passes_by_step; /* passes were matched by step marks, not by number */
  GArray *anchors;    /* guint64 pairs (a seq, b seq): the same moment in both runs, ascending:
                       * the first and last events and each step or epoch mark both runs have
                       * (the n-th mark of one label with the n-th) */
} gs_run_diff;

/* a and b must outlive the diff. */
gs_run_diff *gs_run_diff_new(const gs_run_summary *a, const gs_run_summary *b);
void gs_run_diff_free(gs_run_diff *diff);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_run_diff, gs_run_diff_free)

/* Where b_seq of run b falls on run a's axis: between the anchors around it, in proportion. */
double gs_run_diff_align(const gs_run_diff *diff, guint64 b_seq);

/* The inverse: the seq of run b at run a's position a_pos. */
double gs_run_diff_unalign(const gs_run_diff *diff, double a_pos);

/* A pass's name for people, translated: "Backward pass 2 (step 2)". */
char *gs_run_diff_pass_name(const gs_run_diff_pass *pass);

/* One difference a reader can go to: a row of the Compare view's table. */
typedef struct gs_run_diff_row {
  char *what;    /* translated: "Peak memory", "Scope “step”: peak bytes"... */
  char *a_text, *b_text; /* the values ("—" where a run has none) */
  char *change;  /* "+1.0 MiB", "−3", "4 removed, 0 added" */
  guint64 a_seq, b_seq; /* the place in each run (G_MAXUINT64: none) */
  gint pass;     /* index in diff->passes for a pass's row, else -1 */
} gs_run_diff_row;

/* Every difference, the memory and graph ones first; rows where the runs agree are left
 * out. Free with g_ptr_array_unref. */
GPtrArray *gs_run_diff_rows(const gs_run_diff *diff);

/* "1MiB", "512k", "2 MB", "0", "4096": bytes (k/K/KiB = 1024, KB = 1000, M, G likewise).
 * FALSE if text is not such a size. */
gboolean gs_run_diff_parse_size(const char *text, guint64 *bytes);

G_END_DECLS
