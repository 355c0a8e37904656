/* replay-modules.c: module trees, where each parameter sits in one, and optimizers with the
 * parameters they update: what lets a parameter be named by its dotted path ("fc2.bias") and
 * the trace model file an optimizer's tensors as its state. */
#include "replay-private.h"

/* A parameter's place: the module that registered it and its name there. */
typedef struct parameter_entry {
  guint64 tensor;
  guint64 module;
  const char *name;
} parameter_entry;

void replay_optimizer_free(gpointer p) {
  gs_replay_optimizer *o = p;
  g_array_unref(o->params);
  g_free(o);
}

static gs_replay_module *module_get(const gs_replay *r, guint64 id) {
  return id ? g_hash_table_lookup(r->modules, &id) : NULL;
}

const char *replay_parameter_path(const gs_replay *r, guint64 tensor) {
  const parameter_entry *p = g_hash_table_lookup(r->parameters, &tensor);
  if (!p)
    return NULL;
  /* The dotted path from the root of the tree, built from the child links up; a module that
   * is no one's child prefixes its type instead. */
  const gs_replay_module *m = module_get(r, p->module);
  GString *path = g_string_new(p->name);
  if (m && !m->parent && m->type && *m->type) {
    g_string_prepend_c(path, '.');
    g_string_prepend(path, m->type);
  }
  /* Bounded in depth (a damaged log may loop) and in bytes: a thousand levels of 64 KB names
   * made one parameter's name 65 MB, and every prepend moved all of it. A real path is a few
   * dozen bytes; past PATH_MAX_BYTES the outer levels are shown as "…". */
  enum { PATH_MAX_BYTES = 1024 };
  for (int depth = 0; m && m->parent && depth < 1000; depth++) {
    const char *name = m->name ? m->name : "?";
    if (path->len + strlen(name) + 1 > PATH_MAX_BYTES) {
      g_string_prepend(path, "\u2026.");
      break;
    }
    g_string_prepend_c(path, '.');
    g_string_prepend(path, name);
    m = module_get(r, m->parent);
  }
  const char *interned = gs_replay_intern((gs_replay *)r, path->str);
  g_string_free(path, TRUE);
  return interned;
}

void replay_on_module_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  gs_replay_module *m = g_new0(gs_replay_module, 1);
  m->id = e->module;
  m->type = replay_intern_id(r, st, e->name);
  g_hash_table_replace(r->modules, &m->id, m);
}

/* Where a parameter sits; its name is built on demand (gs_replay_tensor_name), so a module
 * that becomes a child later renames its parameters with it. */
void replay_on_module_parameter(gs_replay *r, const gs_trace_event *e,
                                const replay_strings *st) {
  gs_replay_object *o = replay_object_w(r, e->tensor);
  if (o)
    o->parameter = TRUE;
  if (g_hash_table_contains(r->parameters, &e->tensor))
    return; /* a shared parameter (tied weights) keeps the name of its first place */
  parameter_entry *p = g_new(parameter_entry, 1);
  p->tensor = e->tensor;
  p->module = e->module;
  p->name = replay_intern_id(r, st, e->name);
  g_hash_table_replace(r->parameters, &p->tensor, p);
}

void replay_module_free(gpointer p) {
  gs_replay_module *m = p;
  if (m->links)
    g_array_unref(m->links);
  if (m->slots)
    g_array_unref(m->slots);
  g_free(m);
}

static GArray *links_copy(const GArray *from) {
  if (!from)
    return NULL;
  GArray *to = g_array_sized_new(FALSE, FALSE, sizeof(gs_replay_module_link), from->len);
  g_array_append_vals(to, from->data, from->len);
  return to;
}

/* parent and name follow the first slot naming the module (torch's first path). */
static void module_relink(gs_replay_module *m) {
  m->n_parents = m->links ? m->links->len : 0;
  const gs_replay_module_link *first =
      m->n_parents ? &g_array_index(m->links, gs_replay_module_link, 0) : NULL;
  m->parent = first ? first->id : 0;
  m->name = first ? first->name : NULL;
}

static void links_add(GArray **links, guint64 id, const char *name) {
  if (!*links)
    *links = g_array_new(FALSE, FALSE, sizeof(gs_replay_module_link));
  gs_replay_module_link l = {id, name};
  g_array_append_val(*links, l);
}

/* Removes the entry (id, name) from links; its position, or -1. */
static int links_remove(GArray *links, guint64 id, const char *name) {
  for (guint i = 0; links && i < links->len; i++) {
    const gs_replay_module_link *l = &g_array_index(links, gs_replay_module_link, i);
    if (l->id == id && l->name == name) { /* names are interned */
      g_array_remove_index(links, i);
      return (int)i;
    }
  }
  return -1;
}

/* A module_child event says what slot name of module holds now: child, or nothing (child 0:
 * the slot was emptied: a removal, a rename's old name, or a shared child outliving a parent).
 * A module may be in several slots (shared): its parameters keep the names of its first. */
void replay_on_module_child(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  const char *name = replay_intern_id(r, st, e->name);
  gs_replay_module *parent = module_get(r, e->module);
  /* The slot's previous child, if the log showed it, lets go of this slot. */
  for (guint i = 0; parent && parent->slots && i < parent->slots->len; i++) {
    gs_replay_module_link *slot = &g_array_index(parent->slots, gs_replay_module_link, i);
    if (slot->name != name)
      continue;
    gs_replay_module *old = module_get(r, slot->id);
    if (old) {
      links_remove(old->links, e->module, name);
      module_relink(old);
    }
    g_array_remove_index(parent->slots, i);
    break;
  }
  if (!e->child)
    return;
  gs_replay_module *child = module_get(r, e->child);
  if (!child) { /* its creation was not in the log (a log started late): still place it */
    child = g_new0(gs_replay_module, 1);
    child->id = e->child;
    child->type = gs_replay_intern(r, "");
    g_hash_table_replace(r->modules, &child->id, child);
  }
  links_add(&child->links, e->module, name);
  module_relink(child);
  if (parent)
    links_add(&parent->slots, e->child, name);
}

void replay_on_optimizer_create(gs_replay *r, const gs_trace_event *e,
                                const replay_strings *st) {
  gs_replay_optimizer *o = g_hash_table_lookup(r->optimizers, &e->optimizer);
  if (!o) { /* a repeated id continues the parameter list of a large optimizer */
    o = g_new0(gs_replay_optimizer, 1);
    o->id = e->optimizer;
    o->type = replay_intern_id(r, st, e->name);
    o->params = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_replace(r->optimizers, &o->id, o);
  }
  if (e->n_params)
    g_array_append_vals(o->params, e->params, e->n_params);
}

/* ---- queries -------------------------------------------------------------------------- */

const gs_replay_module *gs_replay_module_get(const gs_replay *r, guint64 module) {
  return module_get(r, module);
}

const gs_replay_optimizer *gs_replay_optimizer_get(const gs_replay *r, guint64 optimizer) {
  return optimizer ? g_hash_table_lookup(r->optimizers, &optimizer) : NULL;
}

static gboolean entry_under(const gs_replay *r, const parameter_entry *p, guint64 module) {
  guint64 at = p->module;
  for (int depth = 0; at && depth < 1000; depth++) { /* bounded: a damaged log may loop */
    if (at == module)
      return TRUE;
    const gs_replay_module *m = module_get(r, at);
    at = m ? m->parent : 0;
  }
  return FALSE;
}

gboolean gs_replay_parameter_under(const gs_replay *r, guint64 tensor, guint64 module) {
  const parameter_entry *p = g_hash_table_lookup(r->parameters, &tensor);
  return p && module && entry_under(r, p, module);
}

void gs_replay_subtree_parameters(const gs_replay *r, guint64 module, GArray *out) {
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->parameters);
  while (g_hash_table_iter_next(&it, NULL, &value))
    if (module && entry_under(r, value, module))
      g_array_append_val(out, ((const parameter_entry *)value)->tensor);
}

/* Their strings are the shared pool's: the records are copied as they are. */
void replay_copy_modules(gs_replay *r, const gs_replay *src) {
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, src->modules);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_module *mod = g_memdup2(value, sizeof(gs_replay_module));
    mod->links = links_copy(mod->links);
    mod->slots = links_copy(mod->slots);
    g_hash_table_insert(r->modules, &mod->id, mod);
  }
  g_hash_table_iter_init(&it, src->parameters);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    parameter_entry *p = g_memdup2(value, sizeof(parameter_entry));
    g_hash_table_insert(r->parameters, &p->tensor, p);
  }
  g_hash_table_iter_init(&it, src->optimizers);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_optimizer *from = value;
    gs_replay_optimizer *opt = g_memdup2(from, sizeof *from);
    opt->params = g_array_sized_new(FALSE, FALSE, sizeof(guint64), from->params->len);
    g_array_append_vals(opt->params, from->params->data, from->params->len);
    g_hash_table_insert(r->optimizers, &opt->id, opt);
  }
}
