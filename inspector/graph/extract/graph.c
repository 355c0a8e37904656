/* graph.c: turning the replay's live nodes into items and edges (see graph.h). */
#include "graph.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

#include "escape.h"
#include "event-fields.h"

static void item_clear(gpointer p) {
  gs_graph_item *item = p;
  g_free(item->key);
  g_free(item->label);
}

static void scope_clear(gpointer p) {
  g_free(((gs_graph_scope *)p)->name);
}

gs_graph *gs_graph_new(void) {
  gs_graph *g = g_new0(gs_graph, 1);
  g->items = g_array_new(FALSE, TRUE, sizeof(gs_graph_item));
  g_array_set_clear_func(g->items, item_clear);
  g->edges = g_array_new(FALSE, FALSE, sizeof(gs_graph_edge));
  g->scopes = g_array_new(FALSE, TRUE, sizeof(gs_graph_scope));
  g_array_set_clear_func(g->scopes, scope_clear);
  return g;
}

void gs_graph_free(gs_graph *g) {
  if (!g)
    return;
  g_array_unref(g->items);
  g_array_unref(g->edges);
  g_array_unref(g->scopes);
  g_free(g->version_error);
  g_free(g->notes);
  g_free(g);
}

gint gs_graph_find(const gs_graph *g, const char *key) {
  for (guint i = 0; i < g->items->len; i++)
    if (!g_strcmp0(g_array_index(g->items, gs_graph_item, i).key, key))
      return (gint)i;
  return -1;
}

const gs_graph_scope *gs_graph_scope_find(const gs_graph *g, guint64 id) {
  for (guint i = 0; i < g->scopes->len; i++)
    if (g_array_index(g->scopes, gs_graph_scope, i).id == id)
      return &g_array_index(g->scopes, gs_graph_scope, i);
  return NULL;
}

GHashTable *gs_graph_scope_index(const gs_graph *g) {
  GHashTable *index = g_hash_table_new(gs_id_hash, gs_id_equal);
  for (guint i = 0; i < g->scopes->len; i++) {
    gs_graph_scope *s = &g_array_index(g->scopes, gs_graph_scope, i);
    g_hash_table_insert(index, &s->id, s);
  }
  return index;
}

void gs_graph_add_note(gs_graph *g, const char *note) {
  char *joined = g->notes ? g_strconcat(g->notes, "\n", note, NULL) : g_strdup(note);
  g_free(g->notes);
  g->notes = joined;
}

gs_graph_edge *gs_graph_add_edge(gs_graph *g, guint from, guint to, gs_graph_edge_kind kind) {
  gs_graph_edge edge = {from, to, kind == GS_GRAPH_EDGE_SAVED, kind, 0};
  g_array_append_val(g->edges, edge);
  return &g_array_index(g->edges, gs_graph_edge, g->edges->len - 1);
}

static gint by_depth(gconstpointer a, gconstpointer b, gpointer depth) {
  guint x = ((const guint *)depth)[*(const guint *)a], y = ((const guint *)depth)[*(const guint *)b];
  return x < y ? -1 : x > y;
}

static gint by_id(gconstpointer a, gconstpointer b) {
  const gs_replay_node *x = *(gs_replay_node *const *)a, *y = *(gs_replay_node *const *)b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* "name" or "#3.1", then the shape when the tensor is still alive: what a reader of the graph
 * needs to recognise a tensor from their code. */
char *gs_graph_tensor_text(const char *name, const gint64 *shape, int ndim) {
  GString *s = g_string_new(name);
  if (ndim >= 0) {
    g_string_append(s, "\n(");
    for (int i = 0; i < ndim; i++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", shape[i]);
    g_string_append(s, ")");
  }
  return g_string_free(s, FALSE);
}

char *gs_graph_saved_text(const char *name, const gint64 *shape, int ndim) {
  g_autofree char *plain = gs_graph_tensor_text(name, shape, ndim);
  /* TRANSLATORS: the label of a tensor saved for backward in the graph: its name or handle,
   * with its shape on a second line. */
  return g_strdup_printf(_("saved %s"), plain);
}

/* Its name or handle, and its shape if the replay still has it (a composite has none). */
static char *tensor_label_full(const gs_replay *r, guint64 tensor, gboolean saved) {
  g_autofree char *clipped = gs_text_clip(gs_replay_tensor_name(r, tensor), GS_GRAPH_MAX_NAME);
  const char *name = clipped;
  char handle[32];
  if (!*name)
    name = gs_format_handle(tensor, handle, sizeof handle);
  const gs_replay_object *o = gs_replay_object_find(r, tensor);
  int ndim = o && !o->composite ? o->ndim : -1;
  const gint64 *shape = o ? o->shape : NULL;
  return saved ? gs_graph_saved_text(name, shape, ndim) : gs_graph_tensor_text(name, shape, ndim);
}

static char *tensor_label(const gs_replay *r, guint64 tensor) {
  return tensor_label_full(r, tensor, FALSE);
}

/* A tensor saved for backward: its label says so, as torchviz's orange nodes do. */
static char *saved_label(const gs_replay *r, guint64 tensor) {
  return tensor_label_full(r, tensor, TRUE);
}

/* What the builder keeps while it works: item index by key and by tensor. */
typedef struct builder {
  gs_graph *g;
  const gs_replay *r;
  const gs_graph_versions *v;
  GHashTable *index;     /* key -> item index + 1 (keys borrowed from the items) */
  GHashTable *by_tensor; /* tensor id -> item index + 1, the first item standing for it */
  GHashTable *edge_seen; /* (from << 32 | to) of the gradient edges drawn */
} builder;

static guint64 object_scope(const gs_replay *r, guint64 tensor) {
  const gs_replay_object *o = tensor ? gs_replay_object_find(r, tensor) : NULL;
  return o && o->holder == GS_TRACE_HELD_BY_SCOPE ? o->owner : 0;
}

static guint add_item(builder *b, gs_graph_item_kind kind, guint64 id, guint64 tensor,
                      char *key, char *label, guint64 scope) {
  gpointer found = g_hash_table_lookup(b->index, key);
  if (found) {
    g_free(key);
    g_free(label);
    return GPOINTER_TO_UINT(found) - 1;
  }
  gs_graph_item item = {kind, id, tensor, key, label, scope, -1, -1, 0, 1, 0};
  const gs_replay_object *o = tensor ? gs_replay_object_find(b->r, tensor) : NULL;
  item.site = o ? o->site : 0;
  if (b->v && o && !o->composite)
    item.version = (gint64)gs_graph_versions_now(b->v, o->storage);
  g_array_append_val(b->g->items, item);
  guint at = b->g->items->len - 1;
  g_hash_table_insert(b->index, key, GUINT_TO_POINTER(at + 1));
  if (tensor && !g_hash_table_contains(b->by_tensor, &tensor))
    g_hash_table_insert(b->by_tensor, g_memdup2(&tensor, sizeof tensor), GUINT_TO_POINTER(at + 1));
  return at;
}

static gs_graph_item *item_at(builder *b, guint i) {
  return &g_array_index(b->g->items, gs_graph_item, i);
}

/* The item standing for an alive tensor, adding a plain tensor item if none does yet. */
static guint tensor_item(builder *b, guint64 tensor) {
  gpointer found = g_hash_table_lookup(b->by_tensor, &tensor);
  if (found)
    return GPOINTER_TO_UINT(found) - 1;
  return add_item(b, GS_GRAPH_TENSOR, tensor, tensor,
                  g_strdup_printf("t%" G_GUINT64_FORMAT, tensor), tensor_label(b->r, tensor),
                  object_scope(b->r, tensor));
}

/* Draws where each drawn tensor's storage came from: the alive tensor it is a view, clone or
 * detach of, and so on up the chain (sources are older, so it ends). */
static void add_storage_relations(builder *b) {
  for (guint i = 0; i < b->g->items->len; i++) {
    guint64 tensor = item_at(b, i)->tensor;
    const gs_replay_object *o = tensor ? gs_replay_object_find(b->r, tensor) : NULL;
    if (!o || o->composite || o->origin == 0 || !o->source || o->source == tensor)
      continue;
    if (!gs_replay_object_find(b->r, o->source))
      continue;
    gs_graph_edge_kind kind = GS_GRAPH_EDGE_VIEW;
    /* The engine (views.c) logs a detach's tensor_create before marking it detached: origin
     * 1 with op "detach". Both spellings mean a detach. */
    if (o->origin == 2 || (o->origin == 1 && !g_strcmp0(o->op, "detach")))
      kind = GS_GRAPH_EDGE_DETACH;
    else if (o->origin == 3) {
      guint64 own = 0;
      /* A clone owns no bytes until its first write copies them. */
      kind = gs_replay_storage(b->r, o->storage, &own, NULL) && own == 0 ? GS_GRAPH_EDGE_COW
                                                                         : GS_GRAPH_EDGE_CLONE;
    }
    guint source = tensor_item(b, o->source);
    gs_graph_add_edge(b->g, source, i, kind);
  }
}

/* The storage a drawn tensor views: its own if it is alive, else (a saved tensor whose handle
 * is gone) the one it viewed when a live node saved it. 0 if unknown. */
static guint64 item_storage(builder *b, const gs_graph_item *item) {
  const gs_replay_object *o = gs_replay_object_find(b->r, item->tensor);
  if (o)
    return o->composite ? 0 : o->storage;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, b->r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *n = value;
    for (guint k = 0; k < n->n_saved; k++)
      if (n->saved[k] == item->tensor && n->saved_storages[k])
        return n->saved_storages[k];
  }
  return 0;
}

/* When each tensor entered the graph: the first live node that saved it (saved), or that made
 * it or (a leaf) accumulates into it (made). tensor id -> seq (guint64 *, owned). */
static GHashTable *graph_entry_seqs(const gs_replay *r, gboolean saved) {
  GHashTable *since = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, g_free);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *n = value;
    for (guint k = 0; k < (saved ? n->n_saved : 1); k++) {
      guint64 tensor = saved ? n->saved[k] : n->tensor;
      guint64 *seq = tensor ? g_hash_table_lookup(since, &tensor) : NULL;
      if (seq && *seq > n->create_seq)
        *seq = n->create_seq;
      else if (tensor && !seq)
        g_hash_table_insert(since, g_memdup2(&tensor, sizeof tensor),
                            g_memdup2(&n->create_seq, sizeof n->create_seq));
    }
  }
  return since;
}

/* Draws the alive aliases (a detached tensor, a view, the tensor they came from) that wrote in
 * place into the storage of a tensor the graph draws after that tensor entered the graph, with
 * an edge "shares storage, wrote vN" to it: the write a later backward may refuse, or that
 * changed a value the forward pass already used, shown before any check fails. Writes from
 * before (an optimizer's update of a weight later viewed and saved) changed nothing the graph
 * used. One edge per writer and storage, to the first item drawn on it. */
static void add_alias_writers(builder *b) {
  guint drawn = b->g->items->len; /* the writers added here are not searched in turn */
  g_autoptr(GHashTable) done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  /* Made at the first write found: a graph whose storages were never written in place (most,
   * and every hostile one of 200,000 nodes) walks the nodes once, not three times. */
  g_autoptr(GHashTable) since_saved = NULL;
  g_autoptr(GHashTable) since_made = NULL;
  for (guint i = 0; i < drawn; i++) {
    guint64 tensor = item_at(b, i)->tensor;
    guint64 storage = tensor ? item_storage(b, item_at(b, i)) : 0;
    guint n = 0;
    const gs_graph_write *writes = storage ? gs_graph_versions_writes(b->v, storage, &n) : NULL;
    if (!n)
      continue;
    if (!since_saved) {
      since_saved = graph_entry_seqs(b->r, TRUE);
      since_made = graph_entry_seqs(b->r, FALSE);
    }
    /* A saved tensor matters from its save on; an output or a leaf from its node on. */
    GHashTable *since = item_at(b, i)->kind == GS_GRAPH_SAVED ? since_saved : since_made;
    const guint64 *entered = g_hash_table_lookup(since, &tensor);
    for (guint k = n; k-- > 0;) { /* the last write of each writer first */
      const gs_graph_write *w = &writes[k];
      if (!entered || w->seq < *entered)
        continue;
      const gs_replay_object *writer = gs_replay_object_find(b->r, w->tensor);
      if (w->tensor == tensor || !writer || writer->composite || writer->storage != storage)
        continue;
      char *key = g_strdup_printf("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, w->tensor, storage);
      if (!g_hash_table_add(done, key))
        continue;
      guint from = tensor_item(b, w->tensor);
      gs_graph_add_edge(b->g, from, i, GS_GRAPH_EDGE_WROTE)->version = w->version;
    }
  }
}

/* A saved tensor whose storage was written after it was saved: what backward will refuse.
 * Marks the saved tensor, its node and the tensor the write went through. */
static void check_saved_version(builder *b, guint node_item, guint saved_item,
                                const gs_replay_node *n, guint k) {
  guint64 storage = n->saved_storages ? n->saved_storages[k] : 0;
  const gs_replay_object *o = gs_replay_object_find(b->r, n->saved[k]);
  if (!storage && o)
    storage = o->storage;
  if (!storage)
    return;
  guint64 then = gs_graph_versions_before(b->v, storage, n->create_seq);
  guint64 now = gs_graph_versions_now(b->v, storage);
  item_at(b, saved_item)->saved_version = (gint64)then;
  item_at(b, saved_item)->version = (gint64)now;
  if (now == then)
    return;
  /* Saved by many nodes, it is told once who wrote it. */
  gboolean told = (item_at(b, saved_item)->flags & GS_GRAPH_VERSION_ERROR) != 0;
  item_at(b, saved_item)->flags |= GS_GRAPH_VERSION_ERROR;
  item_at(b, node_item)->flags |= GS_GRAPH_VERSION_ERROR;
  const gs_graph_write *w = gs_graph_versions_last_write(b->v, storage);
  if (!w)
    return;
  if (w->tensor && gs_replay_object_find(b->r, w->tensor)) {
    guint writer = tensor_item(b, w->tensor);
    item_at(b, writer)->flags |= GS_GRAPH_VERSION_ERROR;
  } else if (!told) {
    /* The writer is gone: say who it was on the saved tensor itself. */
    gs_graph_item *saved = item_at(b, saved_item);
    /* TRANSLATORS: a saved tensor's label, then the op that wrote it in place and the
     * event's number. */
    g_autofree char *op = *w->op ? gs_text_clip(w->op, 40) : g_strdup(_("a write"));
    char *label = g_strdup_printf(_("%s\nwritten by %s (event #%" PRIu64 ")"),
                                  saved->label, op, (uint64_t)w->seq);
    g_free(saved->label);
    saved->label = label;
  }
}

/* "name #handle", clipped: how a note names a scope. */
static char *scope_words(const gs_replay_scope *s) {
  char handle[32];
  if (!s)
    return g_strdup("?");
  g_autofree char *name = gs_text_clip(s->name, 40);
  return g_strdup_printf("%s %s", name, gs_format_handle(s->id, handle, sizeof handle));
}

/* Every scope an item is in, with the scopes around it, so clusters can nest. The walk out
 * through outer scopes stops at a scope already taken: one this walk took means the log's
 * outer scopes loop, and the loop is cut there (that scope becomes a root) with a note. */
static void add_scopes(gs_graph *g, gs_graph_scope_lookup lookup, gpointer data) {
  g_autoptr(GHashTable) walk_of = /* scope id -> the walk (item + 1) that took it */
      g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  for (guint i = 0; i < g->items->len; i++) {
    guint64 id = g_array_index(g->items, gs_graph_item, i).scope;
    gpointer walk = GUINT_TO_POINTER(i + 1);
    for (;;) {
      gpointer taken = id ? g_hash_table_lookup(walk_of, &id) : NULL;
      const gs_replay_scope *s = id && !taken ? lookup(data, id) : NULL;
      if (taken == walk) {
        gs_graph_scope *last = &g_array_index(g->scopes, gs_graph_scope, g->scopes->len - 1);
        g_autofree char *a = scope_words(lookup(data, last->id)), *z = scope_words(lookup(data, id));
        /* TRANSLATORS: the log says a scope is inside itself through its outer scopes; the
         * graph draws the first as outermost. */
        g_autofree char *note = g_strdup_printf(_("The log's scopes form a cycle: %s names %s "
                                                  "as its outer scope, which is already inside "
                                                  "it; the cycle is cut there."),
                                                a, z);
        gs_graph_add_note(g, note);
        last->outer = 0;
      }
      if (!s)
        break;
      gs_graph_scope gs = {s->id, s->outer,
                           gs_text_clip(s->name ? s->name : "", GS_GRAPH_MAX_NAME)};
      g_array_append_val(g->scopes, gs);
      g_hash_table_insert(walk_of, g_memdup2(&s->id, sizeof s->id), walk);
      id = s->outer;
    }
  }
}

/* Folds scopes nested deeper than GS_GRAPH_MAX_SCOPE_DEPTH into their ancestor at that depth:
 * items move up to it, it says how many levels it stands for, the deeper scopes go. The
 * scopes are a forest now (add_scopes cut the cycles), so depths are found iteratively. */
static void fold_deep_scopes(gs_graph *g) {
  guint n = g->scopes->len;
  g_autoptr(GHashTable) index = gs_graph_scope_index(g);
  g_autofree guint *depth = g_new0(guint, n); /* 0: not known yet */
  g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(guint));
  gs_graph_scope *base = (gs_graph_scope *)(void *)g->scopes->data;
  guint deepest = 0;
  for (guint i = 0; i < n; i++) {
    guint at = i;
    while (!depth[at]) { /* climb to a known depth or a root, then come back down */
      g_array_append_val(stack, at);
      const gs_graph_scope *outer = g_hash_table_lookup(index, &base[at].outer);
      if (!outer)
        break;
      at = (guint)(outer - base);
    }
    guint d = depth[at];
    while (stack->len) {
      guint k = g_array_index(stack, guint, --stack->len);
      depth[k] = ++d;
    }
    deepest = MAX(deepest, depth[i]);
  }
  if (deepest <= GS_GRAPH_MAX_SCOPE_DEPTH)
    return;
  /* Each deep scope's ancestor at the limit, in order of depth so the outer one is known. */
  g_autofree guint *keep = g_new(guint, n);
  g_autofree guint *below = g_new0(guint, n); /* levels folded into a kept scope */
  g_autofree guint *order = g_new(guint, n);
  for (guint i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data(order, (gint)n, sizeof(guint), by_depth, depth);
  for (guint k = 0; k < n; k++) {
    guint i = order[k];
    keep[i] = i;
    if (depth[i] > GS_GRAPH_MAX_SCOPE_DEPTH) {
      const gs_graph_scope *outer = g_hash_table_lookup(index, &base[i].outer);
      keep[i] = keep[outer - base];
      below[keep[i]] = MAX(below[keep[i]], depth[i] - GS_GRAPH_MAX_SCOPE_DEPTH);
    }
  }
  for (guint i = 0; i < g->items->len; i++) {
    gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    const gs_graph_scope *s = g_hash_table_lookup(index, &item->scope);
    if (s)
      item->scope = base[keep[s - base]].id;
  }
  GArray *kept = g_array_new(FALSE, TRUE, sizeof(gs_graph_scope));
  g_array_set_clear_func(kept, scope_clear);
  for (guint i = 0; i < n; i++) {
    gs_graph_scope s = base[i];
    if (depth[i] > GS_GRAPH_MAX_SCOPE_DEPTH)
      continue;
    if (below[i])
      /* TRANSLATORS: a scope's box in the graph, standing for the scopes nested inside it
       * beyond the deepest box the graph draws. */
      s.name = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%s\n\xc3\x97 %u more nested scope",
                                           "%s\n\xc3\x97 %u more nested scopes", below[i]),
                               s.name, below[i]);
    else
      s.name = g_strdup(s.name);
    g_array_append_val(kept, s);
  }
  g_array_unref(g->scopes);
  g->scopes = kept;
  g_autofree char *note = g_strdup_printf(
      /* TRANSLATORS: the graph draws scopes nested at most this deep; the log's went deeper. */
      _("Scopes are nested %u deep; boxes are drawn %u deep and the deeper ones are folded "
        "into them."),
      deepest, GS_GRAPH_MAX_SCOPE_DEPTH);
  gs_graph_add_note(g, note);
}

void gs_graph_set_scopes(gs_graph *g, gs_graph_scope_lookup lookup, gpointer data) {
  g_array_set_size(g->scopes, 0);
  g_clear_pointer(&g->notes, g_free); /* the notes are the scopes' (a second call redoes them) */
  add_scopes(g, lookup, data);
  fold_deep_scopes(g);
}

static const gs_replay_scope *replay_scope_lookup(gpointer replay, guint64 id) {
  return g_hash_table_lookup(((const gs_replay *)replay)->scopes, &id);
}

/* Gradient edges, one per pair of items: a node may list the same input thousands of times. */
static void add_grad_edge(builder *b, guint from, guint to) {
  guint64 key = (guint64)from << 32 | to;
  if (!g_hash_table_contains(b->edge_seen, &key)) {
    g_hash_table_add(b->edge_seen, g_memdup2(&key, sizeof key));
    gs_graph_add_edge(b->g, from, to, GS_GRAPH_EDGE_GRAD);
  }
}

gs_graph *gs_graph_build(const gs_replay *r) {
  return gs_graph_build_with(r, NULL);
}

gs_graph *gs_graph_build_with(const gs_replay *r, const gs_graph_versions *v) {
  gs_graph *g = gs_graph_new();
  builder b = {g, r, v, g_hash_table_new(g_str_hash, g_str_equal),
               g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL),
               g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL)};

  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  g_autoptr(GHashTable) consumed = g_hash_table_new(gs_id_hash, gs_id_equal);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_node *n = value;
    g_ptr_array_add(nodes, n);
    for (guint i = 0; i < n->n_inputs; i++)
      if (n->inputs[i])
        g_hash_table_add(consumed, &n->inputs[i]);
  }
  g_ptr_array_sort(nodes, by_id);

  for (guint i = 0; i < nodes->len; i++) {
    const gs_replay_node *n = nodes->pdata[i];
    gboolean leaf = g_strcmp0(n->kind, "AccumulateGrad") == 0;
    g_autofree char *kind = gs_text_clip(n->kind, GS_GRAPH_MAX_NAME);
    guint at = add_item(&b, leaf ? GS_GRAPH_LEAF : GS_GRAPH_OP, n->id, leaf ? n->tensor : 0,
                        g_strdup_printf("n%" G_GUINT64_FORMAT, n->id),
                        leaf ? tensor_label(r, n->tensor)
                             : g_strdup_printf("%s #%" G_GUINT64_FORMAT,
                                               *kind ? kind : "node", n->id),
                        object_scope(r, n->tensor));
    /* An op was called where the tensor it made was made. */
    const gs_replay_object *made = gs_replay_object_find(r, n->tensor);
    if (!leaf && made)
      g_array_index(b.g->items, gs_graph_item, at).site = made->site;
  }
  for (guint i = 0; i < nodes->len; i++) {
    const gs_replay_node *n = nodes->pdata[i];
    char key[32];
    g_snprintf(key, sizeof key, "n%" G_GUINT64_FORMAT, n->id);
    guint self = GPOINTER_TO_UINT(g_hash_table_lookup(b.index, key)) - 1;
    for (guint k = 0; k < n->n_inputs; k++) {
      /* An input listed again right away draws no second edge: skipped before its key is
       * formatted (a hostile node lists one input 4,096 times, 4 M lookups per graph). */
      if (k > 0 && n->inputs[k] == n->inputs[k - 1])
        continue;
      g_snprintf(key, sizeof key, "n%" G_GUINT64_FORMAT, n->inputs[k]);
      gpointer from = n->inputs[k] ? g_hash_table_lookup(b.index, key) : NULL;
      /* An input node released before now is not drawn, nor is its edge. */
      if (from)
        add_grad_edge(&b, GPOINTER_TO_UINT(from) - 1, self);
    }
    /* A tensor saved twice (mul(x, x)), or 4,096 times in a hostile log, is one edge, and
     * its version is checked once: its label says each write once. */
    g_autoptr(GHashTable) saved_seen = NULL;
    if (!n->saved_freed)
      for (guint k = 0; k < n->n_saved; k++) {
        if (!n->saved[k])
          continue;
        if (n->n_saved > 1) {
          if (!saved_seen)
            saved_seen = g_hash_table_new(gs_id_hash, gs_id_equal);
          if (!g_hash_table_add(saved_seen, &n->saved[k]))
            continue;
        }
        guint saved = add_item(&b, GS_GRAPH_SAVED, n->saved[k], n->saved[k],
                               g_strdup_printf("s%" G_GUINT64_FORMAT, n->saved[k]),
                               saved_label(r, n->saved[k]),
                               object_scope(r, n->saved[k]));
        gs_graph_add_edge(g, saved, self, GS_GRAPH_EDGE_SAVED);
        if (v)
          check_saved_version(&b, self, saved, n, k);
      }
    gboolean root = !g_hash_table_contains(consumed, &n->id);
    if (root && n->tensor && g_strcmp0(n->kind, "AccumulateGrad") != 0) {
      guint out = add_item(&b, GS_GRAPH_OUTPUT, n->tensor, n->tensor,
                           g_strdup_printf("t%" G_GUINT64_FORMAT, n->tensor),
                           tensor_label(r, n->tensor), object_scope(r, n->tensor));
      add_grad_edge(&b, self, out);
    }
  }
  if (v) {
    add_alias_writers(&b);
    add_storage_relations(&b);
  }
  gs_graph_set_scopes(g, replay_scope_lookup, (gpointer)r);
  /* The engine's message belongs to this graph if a node alive now existed when it came. */
  guint64 error_seq = 0;
  const char *error = v ? gs_graph_versions_error(v, &error_seq) : NULL;
  for (guint i = 0; error && i < nodes->len; i++)
    if (((const gs_replay_node *)nodes->pdata[i])->create_seq < error_seq) {
      g->version_error = g_strdup(error);
      break;
    }
  g_hash_table_unref(b.index);
  g_hash_table_unref(b.by_tensor);
  g_hash_table_unref(b.edge_seen);
  return g;
}
