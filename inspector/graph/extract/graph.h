/* graph.h: the autograd graph alive in a replayed state, in torchviz's vocabulary: op nodes,
 * leaves (AccumulateGrad, labelled with the leaf's name), tensors saved for backward, and the
 * outputs (tensors made by nodes nothing consumes). Beside the gradient edges it carries how
 * drawn tensors share storage (views, copy-on-write clones, detaches), the aliases that wrote
 * into a drawn tensor's storage in place after it entered the graph (before any version check
 * fails), versions of saved
 * tensors, failed version checks (the saved tensor, its node and the writer), and the scope
 * each item belongs to, for clusters. Drawing it is left to the writer: DOT text (graph-dot.h)
 * for the CLI, a Graphviz layout in inspector/graph/. */
#pragma once

#include <glib.h>

#include "graph-versions.h"
#include "replay.h"

G_BEGIN_DECLS

typedef enum gs_graph_item_kind {
  GS_GRAPH_OP,     /* a backward node: label is its kind and id, "MulBackward #4", as the
                    * engine's errors and `gradscope dump` name it */
  GS_GRAPH_LEAF,   /* an AccumulateGrad node: label is the leaf's name or handle */
  GS_GRAPH_SAVED,  /* a tensor some node saved for backward */
  GS_GRAPH_OUTPUT, /* the tensor a root node made */
  GS_GRAPH_TENSOR, /* an alive tensor a drawn one is a view, clone or detach of, or an alias
                    * that wrote into a drawn one's storage */
  GS_GRAPH_GROUP,  /* collapsed repeated structure (graph-collapse.h): "step ×12" */
} gs_graph_item_kind;

/* The item was part of a failed version check: a saved tensor modified in place after it was
 * saved, the node that saved it, or the tensor the write went through. */
#define GS_GRAPH_VERSION_ERROR (1u << 0)

typedef struct gs_graph_item {
  gs_graph_item_kind kind;
  guint64 id;   /* node id (op, leaf) or tensor id (saved, output, tensor); group: 0 */
  guint64 tensor; /* the tensor it stands for (leaf, saved, output, tensor), else 0 */
  char *key;    /* unique and stable: "n12", "t4294967298", "g..." */
  char *label;  /* may contain anything user code named things: escape before use */
  guint64 scope; /* innermost scope instance owning it (0: none) */
  gint64 version;       /* the tensor's storage version now, -1 if unknown or not a tensor */
  gint64 saved_version; /* saved tensors: the version when saved, else -1 */
  guint flags;  /* GS_GRAPH_VERSION_ERROR */
  guint members; /* group: items it stands for; others 1 */
  guint32 site;  /* where the program made its tensor (an op: the tensor it made), 0: unknown */
} gs_graph_item;

typedef enum gs_graph_edge_kind {
  GS_GRAPH_EDGE_GRAD,   /* input node -> consumer, node -> output */
  GS_GRAPH_EDGE_SAVED,  /* saved tensor -- its node (undirected) */
  GS_GRAPH_EDGE_VIEW,   /* source -> a view of it (shares the storage): dotted */
  GS_GRAPH_EDGE_COW,    /* source -> a clone still sharing its bytes copy-on-write: dashed */
  GS_GRAPH_EDGE_CLONE,  /* source -> a clone that materialised its own bytes */
  GS_GRAPH_EDGE_DETACH, /* source -> detached from it (shares the version counter) */
  GS_GRAPH_EDGE_WROTE,  /* an alias -> a drawn tensor on the same storage it wrote in place
                         * since that tensor entered the graph (a detached tensor, a view, the
                         * tensor they came from) */
} gs_graph_edge_kind;

typedef struct gs_graph_edge {
  guint from, to;      /* item indices */
  gboolean undirected; /* a saved tensor joined to its node */
  gs_graph_edge_kind kind;
  guint64 version;     /* GS_GRAPH_EDGE_WROTE: the storage's version after the alias's last
                        * write; else 0 */
} gs_graph_edge;

/* A scope that items (or its inner scopes) belong to: the clusters. */
typedef struct gs_graph_scope {
  guint64 id, outer;
  char *name;
} gs_graph_scope;

/* Clusters nest at most this deep: the scopes below are folded into their ancestor at this
 * depth, whose label says how many levels it holds (a recursion with a scope per level would
 * otherwise nest 100,000 clusters, which Graphviz cannot lay out). */
#define GS_GRAPH_MAX_SCOPE_DEPTH 16
/* Labels keep at most this many characters of a name. */
#define GS_GRAPH_MAX_NAME 120

typedef struct gs_graph {
  GArray *items;  /* gs_graph_item */
  GArray *edges;  /* gs_graph_edge */
  GArray *scopes; /* gs_graph_scope: every scope an item is in, with their outer scopes; a
                   * forest (a scope whose outer scopes loop back to it is a root) at most
                   * GS_GRAPH_MAX_SCOPE_DEPTH deep */
  char *version_error; /* the engine's message for a failed version check, or NULL */
  char *notes; /* what the builder changed to draw a nonsensical log (a scope cycle cut, deep
                * scopes folded), one translated sentence a line, or NULL */
} gs_graph;

/* The graph of the nodes alive in replay now, items in node-id order. versions must have seen
 * the same events as replay; NULL gives the plain autograd graph (no versions, version checks
 * or storage relations), as `export-dot` draws it. */
gs_graph *gs_graph_build_with(const gs_replay *replay, const gs_graph_versions *versions);
/* A tensor item's label: its name (or handle), then its shape on a second line when ndim >= 0;
 * and a saved tensor's, "saved " before it (translated). Newly allocated. */
char *gs_graph_tensor_text(const char *name, const gint64 *shape, int ndim);
char *gs_graph_saved_text(const char *name, const gint64 *shape, int ndim);
/* gs_graph_build_with(replay, NULL). */
gs_graph *gs_graph_build(const gs_replay *replay);
gs_graph *gs_graph_new(void);
void gs_graph_free(gs_graph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_graph, gs_graph_free)

/* The index of the item with key, or -1. */
gint gs_graph_find(const gs_graph *graph, const char *key);
/* The scope record of id, or NULL. Linear: for many lookups, gs_graph_scope_index. */
const gs_graph_scope *gs_graph_scope_find(const gs_graph *graph, guint64 id);
/* The graph's scopes by id (guint64 * -> const gs_graph_scope *), valid while graph->scopes
 * is unchanged. */
GHashTable *gs_graph_scope_index(const gs_graph *graph);
/* The scope record of id (NULL if unknown), for gs_graph_set_scopes. */
typedef const gs_replay_scope *(*gs_graph_scope_lookup)(gpointer data, guint64 id);
/* Sets graph->scopes from the items' scopes and their outer scopes through lookup: cycles in
 * the outer relation are cut and scopes deeper than GS_GRAPH_MAX_SCOPE_DEPTH folded (items
 * move up), each with a note. The builder does this with the replay's scopes. */
void gs_graph_set_scopes(gs_graph *graph, gs_graph_scope_lookup lookup, gpointer data);
/* Appends a line to graph->notes (gs_graph_set_scopes starts them afresh). */
void gs_graph_add_note(gs_graph *graph, const char *note);
/* Appends an edge (for builders: graph.c and graph-collapse.c); returns it (valid until the
 * next edge is added). */
gs_graph_edge *gs_graph_add_edge(gs_graph *graph, guint from, guint to, gs_graph_edge_kind kind);

G_END_DECLS
