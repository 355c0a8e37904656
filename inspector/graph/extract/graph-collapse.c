/* graph-collapse.c: folding repeated scope runs into "×N" items (see graph-collapse.h). */
#include "graph-collapse.h"

#include <string.h>

#include <glib/gi18n-lib.h>

/* One run of same-named scope instances under one outer scope. */
typedef struct run {
  char *key;        /* "g<outer>:<name>" */
  char *name;
  guint64 outer;
  GArray *instances; /* scope ids in graph order */
  guint items;      /* items inside all but the last instance (what collapsing hides) */
  gboolean collapsed;
  guint position;   /* 1 + its position among the groups made, 0 before */
  guint group_item; /* its item in the new graph */
} run;

static void run_free(gpointer p) {
  run *r = p;
  g_free(r->key);
  g_free(r->name);
  g_array_unref(r->instances);
  g_free(r);
}

static gint by_items_desc(gconstpointer a, gconstpointer b) {
  const run *x = *(run *const *)a, *y = *(run *const *)b;
  if (x->items != y->items)
    return x->items > y->items ? -1 : 1;
  return strcmp(x->key, y->key);
}

static gs_graph_item copy_item(const gs_graph_item *item) {
  gs_graph_item copy = *item;
  copy.key = g_strdup(item->key);
  copy.label = g_strdup(item->label);
  return copy;
}

/* The run (collapsed, not last instance) hiding scope `id` or one of its outer scopes, else
 * NULL; outermost wins. */
static run *hiding_run(const gs_graph *g, GHashTable *scope_index, GHashTable *run_of_scope,
                       guint64 id) {
  run *found = NULL;
  /* At most one step per scope: a graph whose scopes loop ends the walk all the same. */
  for (guint steps = 0; id && steps <= g->scopes->len; steps++) {
    run *r = g_hash_table_lookup(run_of_scope, &id);
    if (r && r->collapsed)
      found = r;
    const gs_graph_scope *s = g_hash_table_lookup(scope_index, &id);
    id = s ? s->outer : 0;
  }
  return found;
}

gs_graph *gs_graph_collapse(const gs_graph *g, guint limit, GHashTable *expanded) {
  /* Runs by key, and each scope instance (except a run's last) -> its run. */
  g_autoptr(GHashTable) runs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, run_free);
  g_autoptr(GPtrArray) run_list = g_ptr_array_new();
  g_autoptr(GHashTable) scope_index = gs_graph_scope_index(g);
  for (guint i = 0; i < g->scopes->len; i++) {
    const gs_graph_scope *s = &g_array_index(g->scopes, gs_graph_scope, i);
    g_autofree char *key = g_strdup_printf("g%" G_GUINT64_FORMAT ":%s", s->outer, s->name);
    run *r = g_hash_table_lookup(runs, key);
    if (!r) {
      r = g_new0(run, 1);
      r->key = g_steal_pointer(&key);
      r->name = g_strdup(s->name);
      r->outer = s->outer;
      r->instances = g_array_new(FALSE, FALSE, sizeof(guint64));
      g_hash_table_insert(runs, r->key, r);
      g_ptr_array_add(run_list, r);
    }
    g_array_append_val(r->instances, s->id);
  }
  /* Scope ids grow with time: the last instance is the most recent, the one left open. */
  g_autoptr(GHashTable) run_of_scope = g_hash_table_new(gs_id_hash, gs_id_equal);
  for (guint i = 0; i < run_list->len; i++) {
    run *r = run_list->pdata[i];
    guint64 last = 0;
    for (guint k = 0; k < r->instances->len; k++)
      last = MAX(last, g_array_index(r->instances, guint64, k));
    for (guint k = 0; k < r->instances->len; k++)
      if (g_array_index(r->instances, guint64, k) != last)
        g_hash_table_insert(run_of_scope, &g_array_index(r->instances, guint64, k), r);
  }
  for (guint i = 0; i < g->items->len; i++) {
    /* Count the item once per run it would disappear into. */
    guint64 id = g_array_index(g->items, gs_graph_item, i).scope;
    for (guint steps = 0; id && steps <= g->scopes->len; steps++) {
      run *r = g_hash_table_lookup(run_of_scope, &id);
      if (r)
        r->items++;
      const gs_graph_scope *s = g_hash_table_lookup(scope_index, &id);
      id = s ? s->outer : 0;
    }
  }
  g_ptr_array_sort(run_list, by_items_desc);
  guint visible = g->items->len;
  for (guint i = 0; i < run_list->len && visible > limit; i++) {
    run *r = run_list->pdata[i];
    if (r->items < 2 || (expanded && g_hash_table_contains(expanded, r->key)))
      continue;
    /* Inside a run already collapsed: nothing more to hide. */
    if (hiding_run(g, scope_index, run_of_scope, r->outer))
      continue;
    r->collapsed = TRUE;
    visible -= r->items - 1;
  }

  gs_graph *out = gs_graph_new();
  g_array_set_size(out->scopes, 0);
  for (guint i = 0; i < g->scopes->len; i++) {
    gs_graph_scope s = g_array_index(g->scopes, gs_graph_scope, i);
    s.name = g_strdup(s.name);
    g_array_append_val(out->scopes, s);
  }
  out->version_error = g_strdup(g->version_error);
  out->notes = g_strdup(g->notes);
  g_autofree guint *map = g_new(guint, g->items->len);
  g_autoptr(GPtrArray) groups = g_ptr_array_new();
  for (guint i = 0; i < g->items->len; i++) {
    const gs_graph_item *item = &g_array_index(g->items, gs_graph_item, i);
    run *r = hiding_run(g, scope_index, run_of_scope, item->scope);
    if (!r) {
      gs_graph_item copy = copy_item(item);
      g_array_append_val(out->items, copy);
      map[i] = out->items->len - 1;
      continue;
    }
    if (!r->position) {
      g_ptr_array_add(groups, r);
      r->position = groups->len;
    }
    map[i] = G_MAXUINT - r->position; /* a placeholder until the group items exist */
  }
  for (guint k = 0; k < groups->len; k++) {
    run *r = groups->pdata[k];
    gs_graph_item group = {GS_GRAPH_GROUP, 0, 0, g_strdup(r->key), NULL, r->outer, -1, -1, 0, 0, 0};
    g_array_append_val(out->items, group);
    r->group_item = out->items->len - 1;
  }
  for (guint i = 0; i < g->items->len; i++) {
    if (map[i] < G_MAXUINT - groups->len)
      continue;
    run *r = groups->pdata[G_MAXUINT - map[i] - 1];
    g_assert(r->position == G_MAXUINT - map[i]);
    map[i] = r->group_item;
    gs_graph_item *group = &g_array_index(out->items, gs_graph_item, r->group_item);
    group->members++;
    group->flags |= g_array_index(g->items, gs_graph_item, i).flags;
  }
  for (guint k = 0; k < groups->len; k++) {
    run *r = groups->pdata[k];
    gs_graph_item *group = &g_array_index(out->items, gs_graph_item, r->group_item);
    /* TRANSLATORS: a box standing for repeated scopes in the graph: the scope's name, how
     * many of its runs the box folds ("step ×12"), and how many nodes they hold. */
    group->label = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%s \xc3\x97%u\n(%u node)",
                                               "%s \xc3\x97%u\n(%u nodes)", group->members),
                                   r->name, r->instances->len - 1, group->members);
  }
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *e = &g_array_index(g->edges, gs_graph_edge, i);
    guint from = map[e->from], to = map[e->to];
    if (from == to)
      continue;
    char key[64];
    g_snprintf(key, sizeof key, "%u:%u:%d", from, to, (int)e->kind);
    if (!g_hash_table_add(seen, g_strdup(key)))
      continue;
    gs_graph_add_edge(out, from, to, e->kind)->version = e->version;
  }
  return out;
}

/* A use that splitting may move: a tensor's gradient or saved edge to a node. */
static gboolean hub_edge(const gs_graph *g, const gs_graph_edge *e) {
  gs_graph_item_kind kind = g_array_index(g->items, gs_graph_item, e->from).kind;
  gboolean tensor = kind == GS_GRAPH_LEAF || kind == GS_GRAPH_SAVED || kind == GS_GRAPH_TENSOR;
  return tensor && (e->kind == GS_GRAPH_EDGE_GRAD || e->kind == GS_GRAPH_EDGE_SAVED);
}

void gs_graph_split_hubs(gs_graph *g, guint limit) {
  guint n_items = g->items->len;
  g_autofree guint *uses = g_new0(guint, n_items);
  for (guint i = 0; i < g->edges->len; i++) {
    const gs_graph_edge *e = &g_array_index(g->edges, gs_graph_edge, i);
    if (hub_edge(g, e))
      uses[e->from]++;
  }
  g_autofree guint *seen = g_new0(guint, n_items);
  for (guint i = 0; i < g->edges->len; i++) {
    gs_graph_edge e = g_array_index(g->edges, gs_graph_edge, i);
    if (e.from >= n_items || uses[e.from] <= limit || !hub_edge(g, &e))
      continue;
    if (seen[e.from]++ == 0)
      continue; /* the first consumer keeps the original */
    const gs_graph_item *hub = &g_array_index(g->items, gs_graph_item, e.from);
    gs_graph_item copy = copy_item(hub);
    g_free(copy.key);
    copy.key = g_strdup_printf("%s~%u", hub->key, seen[e.from] - 1);
    copy.scope = g_array_index(g->items, gs_graph_item, e.to).scope;
    g_array_append_val(g->items, copy);
    g_array_index(g->edges, gs_graph_edge, i).from = g->items->len - 1;
  }
}
