/* object-groups.c: see object-groups.h. */
#include "object-groups.h"

#include <glib/gi18n.h>
#include <gradscope/scope.h>
#include <gradscope/types.h>

guint64 gs_object_logical_bytes(const gs_replay_object *o) {
  if (o->composite)
    return 0;
  return gs_replay_object_numel(o) * gs_dtype_size((gs_dtype)o->dtype);
}

/* Who holds it, in words that do not name one instance: the group's "held by". */
static char *holder_words(const gs_replay *state, const gs_replay_object *o) {
  switch (o->holder) {
  case GS_TRACE_HELD_BY_CALLER:
    /* A dataset's tensors are the chart's "data", not "held by the program": say both. */
    return g_strdup(o->dataset_refs ? _("held by the program, read by a dataset")
                                    : _("held by the program"));
  case GS_TRACE_HELD_BY_SCOPE: {
    const gs_replay_scope *scope = g_hash_table_lookup(state->scopes, &o->owner);
    return g_strdup_printf(_("held by scope “%s”"), scope && scope->name ? scope->name : "?");
  }
  case GS_TRACE_HELD_BY_MODULE: {
    const gs_replay_module *mod = gs_replay_module_get(state, o->owner);
    return g_strdup_printf(_("parameters of a %s module"), mod && *mod->type ? mod->type : "?");
  }
  case GS_TRACE_HELD_BY_OPTIMIZER: {
    const gs_replay_optimizer *opt = gs_replay_optimizer_get(state, o->owner);
    return g_strdup_printf(_("state of the %s optimizer"), opt ? opt->type : "?");
  }
  case GS_TRACE_HELD_BY_COMPOSITE: {
    const gs_replay_object *c = gs_replay_object_find(state, o->owner);
    if (c && c->object_kind == GS_OBJECT_PACKED_SEQUENCE)
      return g_strdup(_("parts of a packed sequence"));
    if (c && c->object_kind == GS_OBJECT_BATCH)
      return g_strdup(_("fields of a batch"));
    return g_strdup(_("parts of a composite"));
  }
  case GS_TRACE_HELD_BY_TENSOR: return g_strdup(_("gradients held by their tensors"));
  case GS_TRACE_HELD_BY_ENGINE: return g_strdup(_("held by the engine"));
  default: return g_strdup_printf(_("holder %u"), o->holder);
  }
}

/* The key objects are grouped by: everything a reader tells them apart by. */
static char *group_key(const gs_replay_object *o, const char *holder) {
  GString *k = g_string_new(NULL);
  g_string_append_printf(k, "%u|%p|%d|%u|%u|%d", o->site, (const void *)o->op, o->composite,
                         o->object_kind, o->dtype, o->ndim);
  for (int d = 0; d < o->ndim; d++)
    g_string_append_printf(k, ",%" G_GINT64_FORMAT, o->shape[d]);
  g_string_append_printf(k, "|%s", holder);
  return g_string_free(k, FALSE);
}

static void group_free(gpointer p) {
  gs_object_group *g = p;
  g_free(g->holder);
  g_ptr_array_unref(g->members);
  g_free(g);
}

/* In the order the program made them (the handle breaks ties: objects a snapshot re-created
 * share its number): a group's "first members" are the first made. */
static gint by_creation(gconstpointer a, gconstpointer b) {
  const gs_replay_object *x = *(const gs_replay_object *const *)a;
  const gs_replay_object *y = *(const gs_replay_object *const *)b;
  if (x->create_seq != y->create_seq)
    return x->create_seq < y->create_seq ? -1 : 1;
  guint64 i = x->id & 0xffffffffu, j = y->id & 0xffffffffu;
  return (i > j) - (i < j);
}

static gint by_bytes(gconstpointer a, gconstpointer b) {
  const gs_object_group *x = *(const gs_object_group *const *)a;
  const gs_object_group *y = *(const gs_object_group *const *)b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->members->len != y->members->len)
    return x->members->len > y->members->len ? -1 : 1;
  return by_creation(&x->members->pdata[0], &y->members->pdata[0]);
}

GPtrArray *gs_object_groups(const gs_replay *state, GPtrArray *objects, gs_site_table *sites) {
  (void)sites;
  GPtrArray *groups = g_ptr_array_new_with_free_func(group_free);
  g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < objects->len; i++) {
    const gs_replay_object *o = objects->pdata[i];
    char *holder = holder_words(state, o);
    char *key = group_key(o, holder);
    gs_object_group *g = g_hash_table_lookup(by_key, key);
    if (!g) {
      g = g_new0(gs_object_group, 1);
      g->site = o->site;
      g->holder = holder;
      g->members = g_ptr_array_new();
      g_hash_table_insert(by_key, key, g);
      g_ptr_array_add(groups, g);
    } else {
      g_free(holder);
      g_free(key);
    }
    g->bytes += o->composite ? o->bytes : gs_object_logical_bytes(o);
    g_ptr_array_add(g->members, (gpointer)o);
  }
  for (guint i = 0; i < groups->len; i++)
    g_ptr_array_sort(((gs_object_group *)groups->pdata[i])->members, by_creation);
  g_ptr_array_sort(groups, by_bytes);
  return groups;
}

char *gs_object_group_what(const gs_object_group *g) {
  const gs_replay_object *o = g->members->pdata[0];
  if (o->composite) {
    switch (o->object_kind) {
    case GS_OBJECT_PACKED_SEQUENCE: return g_strdup(_("packed sequence"));
    case GS_OBJECT_BATCH: return g_strdup(_("batch"));
    case GS_OBJECT_DATASET: return g_strdup(_("dataset"));
    default: return g_strdup(_("composite"));
    }
  }
  GString *s = g_string_new(o->op && *o->op ? o->op : "?");
  g_string_append(s, " [");
  for (int d = 0; d < o->ndim; d++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", o->shape[d]);
  g_string_append_printf(s, "] %s", gs_dtype_name((gs_dtype)o->dtype));
  return g_string_free(s, FALSE);
}

char *gs_object_group_text(const gs_object_group *g, gs_site_table *sites) {
  g_autofree char *what = gs_object_group_what(g);
  g_autofree char *size = g_format_size_full(g->bytes, G_FORMAT_SIZE_IEC_UNITS);
  const char *where = sites ? gs_site_table_where(sites, g->site) : NULL;
  if (where)
    /* TRANSLATORS: "200 × randn [64, 32] f32 (1.6 MiB) at leak.c:17 in main, held by the
     * program": a count, what they are, their size, where the program made them, who holds
     * them */
    return g_strdup_printf(_("%u × %s (%s) at %s, %s"), g->members->len, what, size, where,
                           g->holder);
  /* TRANSLATORS: as "200 × randn [64, 32] f32 (1.6 MiB) at leak.c:17 in main, held by the
   * program", for a log that did not record where */
  return g_strdup_printf(_("%u × %s (%s), %s"), g->members->len, what, size, g->holder);
}
