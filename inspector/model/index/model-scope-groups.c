/* model-scope-groups.c: sibling scopes grouped by name, kept up to date as the log is indexed
 * (a training loop's 100 k "train step" scopes are one group under their epoch), and each
 * group's totals at any event without visiting its instances: when an instance ends, its
 * final statistics are added to running sums kept in end order, so the ended instances' share
 * at an event is one binary search; only the instances open then (a few) are read from the
 * state. */
#include "model-private.h"

#include <string.h>

/* Where a scope sits: its group and its place among the group's instances. */
typedef struct model_group_place {
  guint group, instance;
} model_group_place;

/* Running sums over a group's instances that had ended by `end` (an event index). */
typedef struct model_group_ended {
  guint64 end;
  guint64 created, disposed, moved_in, moved_out, alive, peak_sum, peak_min, peak_max;
} model_group_ended;

typedef struct model_scope_group {
  guint64 parent;
  const char *name;   /* interned in the head's pool: one pointer per text */
  guint index;        /* its place among its parent's groups */
  GArray *instances;  /* guint scope positions, in begin order */
  GArray *ended;      /* model_group_ended, in the order instances ended (log order) */
} model_scope_group;

/* The groups under one parent, and those that gained a second instance, in that order: a
 * list shown live turns their plain rows into group rows. */
typedef struct model_scope_parent {
  GArray *groups;   /* guint group numbers, in order of first begin */
  GArray *grown;    /* guint group numbers */
} model_scope_parent;

typedef struct model_group_key {
  guint64 parent;
  const char *name;
} model_group_key;

static guint key_hash(gconstpointer p) {
  const model_group_key *k = p;
  return (guint)(k->parent ^ (k->parent >> 32)) * 31u + g_direct_hash(k->name);
}

static gboolean key_equal(gconstpointer a, gconstpointer b) {
  const model_group_key *x = a, *y = b;
  return x->parent == y->parent && x->name == y->name;
}

static void group_free(gpointer p) {
  model_scope_group *g = p;
  g_array_unref(g->instances);
  g_array_unref(g->ended);
  g_free(g);
}

static void parent_free(gpointer p) {
  model_scope_parent *pa = p;
  g_array_unref(pa->groups);
  g_array_unref(pa->grown);
  g_free(pa);
}

void model_scope_groups_init(gs_trace_model *m) {
  m->scope_groups = g_ptr_array_new_with_free_func(group_free);
  m->scope_group_keys = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
  m->scope_parents = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, parent_free);
  m->scope_group_of = g_array_new(FALSE, FALSE, sizeof(model_group_place));
}

void model_scope_groups_clear(gs_trace_model *m) {
  g_clear_pointer(&m->scope_groups, g_ptr_array_unref);
  g_clear_pointer(&m->scope_group_keys, g_hash_table_destroy);
  g_clear_pointer(&m->scope_parents, g_hash_table_destroy);
  g_clear_pointer(&m->scope_group_of, g_array_unref);
}

static model_scope_parent *parent_get(gs_trace_model *m, guint64 parent, gboolean create) {
  model_scope_parent *pa = g_hash_table_lookup(m->scope_parents, &parent);
  if (!pa && create) {
    pa = g_new0(model_scope_parent, 1);
    pa->groups = g_array_new(FALSE, FALSE, sizeof(guint));
    pa->grown = g_array_new(FALSE, FALSE, sizeof(guint));
    g_hash_table_insert(m->scope_parents, g_memdup2(&parent, sizeof parent), pa);
  }
  return pa;
}

static model_scope_group *group_at(const gs_trace_model *m, guint group) {
  return group < m->scope_groups->len ? m->scope_groups->pdata[group] : NULL;
}

void model_scope_groups_begin(gs_trace_model *m, guint position) {
  const gs_replay_scope *s = m->head->scope_list->pdata[position];
  model_group_key key = {s->outer, s->name};
  guint number = GPOINTER_TO_UINT(g_hash_table_lookup(m->scope_group_keys, &key));
  model_scope_parent *pa = parent_get(m, s->outer, TRUE);
  model_scope_group *g;
  if (number) {
    g = m->scope_groups->pdata[--number]; /* the table only holds numbers of groups made */
  } else {
    number = m->scope_groups->len;
    g = g_new0(model_scope_group, 1);
    g->parent = s->outer;
    g->name = s->name;
    g->index = pa->groups->len;
    g->instances = g_array_new(FALSE, FALSE, sizeof(guint));
    g->ended = g_array_new(FALSE, FALSE, sizeof(model_group_ended));
    g_ptr_array_add(m->scope_groups, g);
    g_hash_table_insert(m->scope_group_keys, g_memdup2(&key, sizeof key),
                        GUINT_TO_POINTER(number + 1));
    g_array_append_val(pa->groups, number);
  }
  model_group_place place = {number, g->instances->len};
  g_array_append_val(g->instances, position);
  if (g->instances->len == 2)
    g_array_append_val(pa->grown, number);
  /* Positions arrive in order, one each: the place of position is entry position. */
  g_array_append_val(m->scope_group_of, place);
}

void model_scope_groups_end(gs_trace_model *m, guint position, guint64 index) {
  if (position >= m->scope_group_of->len)
    return;
  model_group_place place = g_array_index(m->scope_group_of, model_group_place, position);
  model_scope_group *g = m->scope_groups->pdata[place.group];
  const gs_replay_scope *s = m->head->scope_list->pdata[position]; /* final now */
  model_group_ended sum = {.peak_min = G_MAXUINT64};
  if (g->ended->len)
    sum = g_array_index(g->ended, model_group_ended, g->ended->len - 1);
  sum.end = index;
  sum.created += s->created;
  sum.disposed += s->disposed;
  sum.moved_in += s->moved_in;
  sum.moved_out += s->moved_out;
  sum.alive += s->alive;
  sum.peak_sum += s->peak_bytes;
  sum.peak_min = MIN(sum.peak_min, s->peak_bytes);
  sum.peak_max = MAX(sum.peak_max, s->peak_bytes);
  g_array_append_val(g->ended, sum);
}

/* ---- queries -------------------------------------------------------------------------- */

const GArray *gs_trace_model_scope_groups(const gs_trace_model *m, guint64 parent_id) {
  model_scope_parent *pa = parent_get((gs_trace_model *)m, parent_id, FALSE);
  return pa ? pa->groups : NULL;
}

const GArray *gs_trace_model_scope_groups_grown(const gs_trace_model *m, guint64 parent_id) {
  model_scope_parent *pa = parent_get((gs_trace_model *)m, parent_id, FALSE);
  return pa ? pa->grown : NULL;
}

guint gs_trace_model_n_scope_groups(const gs_trace_model *m) { return m->scope_groups->len; }

const char *gs_trace_model_scope_group_name(const gs_trace_model *m, guint group) {
  model_scope_group *g = group_at(m, group);
  return g ? g->name : NULL;
}

guint64 gs_trace_model_scope_group_parent(const gs_trace_model *m, guint group) {
  model_scope_group *g = group_at(m, group);
  return g ? g->parent : 0;
}

guint gs_trace_model_scope_group_index(const gs_trace_model *m, guint group) {
  model_scope_group *g = group_at(m, group);
  return g ? g->index : G_MAXUINT;
}

const GArray *gs_trace_model_scope_group_instances(const gs_trace_model *m, guint group) {
  model_scope_group *g = group_at(m, group);
  return g ? g->instances : NULL;
}

gboolean gs_trace_model_scope_group_of(const gs_trace_model *m, guint position, guint *group,
                                       guint *instance) {
  if (position >= m->scope_group_of->len)
    return FALSE;
  model_group_place place = g_array_index(m->scope_group_of, model_group_place, position);
  if (group)
    *group = place.group;
  if (instance)
    *instance = place.instance;
  return TRUE;
}

/* How many of the group's instances began at or before index. */
static guint begun_by(const gs_trace_model *m, const model_scope_group *g, guint64 index) {
  guint lo = 0, hi = g->instances->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    guint pos = g_array_index(g->instances, guint, mid);
    if (gs_trace_model_scope_begin_index(m, pos) <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* How many of the group's instances had ended at or before index. */
static guint ended_by(const model_scope_group *g, guint64 index) {
  guint lo = 0, hi = g->ended->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index(g->ended, model_group_ended, mid).end <= index)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void gs_trace_model_scope_group_stats(const gs_trace_model *m, guint group,
                                      const gs_replay *state, guint64 index,
                                      gs_scope_group_stats *out) {
  memset(out, 0, sizeof *out);
  model_scope_group *g = group_at(m, group);
  if (!g)
    return;
  guint begun = begun_by(m, g, index);
  guint ended = ended_by(g, index);
  guint64 peak_sum = 0, peak_min = G_MAXUINT64, peak_max = 0;
  if (ended) {
    const model_group_ended *sum = &g_array_index(g->ended, model_group_ended, ended - 1);
    out->created = sum->created;
    out->disposed = sum->disposed;
    out->moved_in = sum->moved_in;
    out->moved_out = sum->moved_out;
    out->alive = sum->alive;
    out->leaked = sum->alive; /* held by an instance that ended: nothing will dispose them */
    peak_sum = sum->peak_sum;
    peak_min = sum->peak_min;
    peak_max = sum->peak_max;
  }
  out->instances = begun;
  /* The rest of those begun were open at index: usually the last ones begun, so the walk
   * back from there stops after a step or two. */
  guint open = begun > ended ? begun - ended : 0;
  gboolean over = m->finished && index + 1 >= m->kinds->len;
  for (guint i = begun; open > 0 && i-- > 0;) {
    guint pos = g_array_index(g->instances, guint, i);
    if (gs_trace_model_scope_end_index(m, pos) <= index)
      continue;
    open--;
    out->open++;
    const gs_replay_scope *s =
        gs_trace_model_scope_in(m, state, ((gs_replay_scope *)m->head->scope_list->pdata[pos])->id);
    if (!s)
      continue;
    out->created += s->created;
    out->disposed += s->disposed;
    out->moved_in += s->moved_in;
    out->moved_out += s->moved_out;
    out->alive += s->alive;
    out->bytes += s->bytes;
    if (over)
      out->leaked += s->alive;
    peak_sum += s->peak_bytes;
    peak_min = MIN(peak_min, s->peak_bytes);
    peak_max = MAX(peak_max, s->peak_bytes);
  }
  if (begun) {
    out->peak_min = peak_min == G_MAXUINT64 ? 0 : peak_min;
    out->peak_max = peak_max;
    out->peak_mean = peak_sum / begun;
  }
}

gboolean gs_trace_model_finished(const gs_trace_model *m) { return m->finished; }
