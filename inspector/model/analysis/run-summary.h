/* run-summary.h: one run's numbers as `gradscope diff` and the inspector's Compare view set
 * them against another run's: per scope name, per call site, per event kind, the memory peak
 * and where it happened, what was alive at the end, the step and epoch marks, and for each
 * backward pass the graph it walked with a signature per node, so that the same node can be
 * recognised in a run whose ids differ (run-diff.h compares two summaries).
 *
 * A node's signature is its kind and its path from the pass's root (the consumer's signature
 * and the input slot it fills): cutting a graph with detach removes exactly the nodes above
 * the cut, and the nodes below keep their signatures. GLib only. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

#include "replay.h"

G_BEGIN_DECLS

/* Every instance of one scope name. */
typedef struct gs_run_scope {
  char *name;
  guint64 instances;
  guint64 created, disposed; /* objects created in its instances, disposed while owned */
  guint64 peak_bytes;        /* the largest peak of one instance */
  guint64 mean_bytes;        /* instances' peaks, averaged */
  guint64 peak_seq;          /* where the instance with that peak began */
} gs_run_scope;

/* One call site, by its text ("make_batch (train.c:41)"): ids differ between runs. */
typedef struct gs_run_site {
  char *where;
  guint64 created;   /* tensors and composites made there */
  guint64 alive;     /* of those, alive at the end of the log */
  guint64 first_seq; /* the first object made there (the first still alive, if any is) */
} gs_run_site;

typedef struct gs_run_node {
  guint64 id;
  guint64 signature;
  const char *kind; /* interned in the summary */
} gs_run_node;

/* One backward pass, as it began. */
typedef struct gs_run_pass {
  guint number;      /* from 1, in log order */
  guint64 seq;       /* its backward_begin */
  char *step;        /* the last step or epoch mark before it, or NULL */
  guint in_step;     /* its place among the passes after that mark, from 1 */
  GArray *nodes;     /* gs_run_node: the graph it walks, from its root */
} gs_run_pass;

/* A mark whose label starts with "step" or "epoch" (any case): what runs are aligned by. */
typedef struct gs_run_mark {
  char *label;
  guint64 seq;
} gs_run_mark;

typedef struct gs_run_summary {
  guint64 events;
  guint64 by_kind[GS_TRACE_KIND_COUNT];
  guint64 last_seq;
  guint64 peak_bytes, peak_seq;
  char *peak_scope; /* the innermost scope open on the peak event's thread, or NULL */
  char *peak_site;  /* where the program called the engine for it, or NULL */
  guint64 live_objects, live_bytes; /* at the end */
  GPtrArray *scopes; /* gs_run_scope*, in order of first begin */
  GPtrArray *sites;  /* gs_run_site*, by first creation */
  GPtrArray *passes; /* gs_run_pass* */
  GArray *marks;     /* gs_run_mark */
  gboolean has_sites; /* the log records call sites (format 1.3 on) */
  char *problem;     /* the log is damaged or cut short: the model's sentence, else NULL */
  GStringChunk *strings;
} gs_run_summary;

/* Reads the log at path. NULL with error if the file cannot be read or holds no log (the
 * message names the file); a damaged log gives the summary of its valid part and a problem. */
gs_run_summary *gs_run_summary_read(const char *path, GError **error);
void gs_run_summary_free(gs_run_summary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_run_summary, gs_run_summary_free)

/* The graph a backward pass walks from node root of replay (the state at its backward_begin),
 * each node once with its signature, appended to out (gs_run_node; kinds interned in
 * strings), breadth first from the root. */
void gs_run_pass_nodes(const gs_replay *replay, guint64 root, GStringChunk *strings,
                       GArray *out);

G_END_DECLS
