/* replay.c: the traced program's state, one event at a time (see replay.h). Each event kind
 * is one small transition; ownership transitions mirror engine/scope/ownership.c so the
 * scope numbers here equal the engine's own gs_scope_info. */
#include "replay.h"

#include <gradscope/scope.h>

#include "event-fields.h"

#include <string.h>

/* A storage points at the bytes it reads: its own buffer, or (copy-on-write) its source's
 * until it materialises. Bytes are alive while any storage points at them. */
typedef struct buffer {
  guint64 nbytes;
  guint refs;
} buffer;

/* A storage record: its own size, and the bytes it reads now. Keyed by its id. */
typedef struct storage_entry {
  guint64 id;
  guint64 nbytes;
  buffer *bytes;
} storage_entry;

static gboolean key_equal(gconstpointer a, gconstpointer b) {
  return *(const guint64 *)a == *(const guint64 *)b;
}
static guint key_hash(gconstpointer a) {
  guint64 v = *(const guint64 *)a;
  return (guint)(v ^ (v >> 32));
}
/* Each record starts with its 64-bit id, which serves as its own key. */
static GHashTable *id_table(GDestroyNotify free_value) {
  return g_hash_table_new_full(key_hash, key_equal, NULL, free_value);
}

static void node_free(gpointer p) {
  gs_replay_node *n = p;
  g_free(n->inputs);
  g_free(n->saved);
  g_free(n);
}

static void storage_entry_free(gpointer p) {
  storage_entry *e = p;
  if (e->bytes && --e->bytes->refs == 0)
    g_free(e->bytes);
  g_free(e);
}

static void array_free(gpointer p) { g_array_unref(p); }

static void optimizer_free(gpointer p) {
  gs_replay_optimizer *o = p;
  g_array_unref(o->params);
  g_free(o);
}

/* A parameter's place: the module that registered it and its name there. */
typedef struct parameter_entry {
  guint64 tensor;
  guint64 module;
  const char *name;
} parameter_entry;

gs_replay *gs_replay_new(void) {
  gs_replay *r = g_new0(gs_replay, 1);
  r->strings = g_string_chunk_new(4096);
  r->storages = id_table(storage_entry_free);
  r->objects = id_table(g_free);
  r->scopes = id_table(NULL); /* owned by scope_list */
  r->scope_list = g_ptr_array_new_with_free_func(g_free);
  r->scope_groups = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->scope_group_list = g_ptr_array_new_with_free_func(g_free);
  r->thread_scopes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, array_free);
  r->nodes = id_table(node_free);
  r->names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  r->modules = id_table(g_free);
  r->parameters = id_table(g_free);
  r->optimizers = id_table(optimizer_free);
  r->changed_groups = g_ptr_array_new();
  return r;
}

void gs_replay_free(gs_replay *r) {
  if (!r)
    return;
  g_hash_table_destroy(r->storages);
  g_hash_table_destroy(r->objects);
  g_hash_table_destroy(r->scopes);
  g_ptr_array_free(r->scope_list, TRUE);
  g_hash_table_destroy(r->scope_groups);
  g_ptr_array_free(r->scope_group_list, TRUE);
  g_hash_table_destroy(r->thread_scopes);
  g_hash_table_destroy(r->nodes);
  g_hash_table_destroy(r->names);
  g_hash_table_destroy(r->modules);
  g_hash_table_destroy(r->parameters);
  g_hash_table_destroy(r->optimizers);
  g_ptr_array_free(r->changed_groups, TRUE);
  g_string_chunk_free(r->strings);
  g_free(r);
}

const char *gs_replay_intern(gs_replay *r, const char *text) {
  return g_string_chunk_insert_const(r->strings, text ? text : "");
}

static const char *intern_id(gs_replay *r, const gs_trace_reader *reader, guint32 id) {
  return gs_replay_intern(r, id ? gs_trace_reader_string(reader, id) : "");
}

static void set_u64_name(GHashTable *table, guint64 id, const char *name) {
  guint64 *key = g_new(guint64, 1);
  *key = id;
  g_hash_table_replace(table, key, (gpointer)name);
}

static gs_replay_module *module_get(const gs_replay *r, guint64 id) {
  return id ? g_hash_table_lookup(r->modules, &id) : NULL;
}

const char *gs_replay_tensor_name(const gs_replay *r, guint64 tensor) {
  const char *name = g_hash_table_lookup(r->names, &tensor);
  const parameter_entry *p = name ? NULL : g_hash_table_lookup(r->parameters, &tensor);
  if (!p)
    return name;
  /* The dotted path from the root of the tree, built from the child links up; a module that
   * is no one's child prefixes its type instead. */
  const gs_replay_module *m = module_get(r, p->module);
  GString *path = g_string_new(p->name);
  if (m && !m->parent && m->type && *m->type) {
    g_string_prepend_c(path, '.');
    g_string_prepend(path, m->type);
  }
  for (int depth = 0; m && m->parent && depth < 1000; depth++) {
    g_string_prepend_c(path, '.');
    g_string_prepend(path, m->name ? m->name : "?");
    m = module_get(r, m->parent);
  }
  const char *interned = g_string_chunk_insert_const(r->strings, path->str);
  g_string_free(path, TRUE);
  return interned;
}

/* ---- memory -------------------------------------------------------------------------- */

static void memory_add(gs_replay *r, const gs_trace_event *e, gint64 delta) {
  if (!delta)
    return;
  r->live_bytes = (guint64)((gint64)r->live_bytes + delta);
  r->memory_changed = TRUE;
  if (r->live_bytes > r->peak_bytes) {
    r->peak_bytes = r->live_bytes;
    r->peak_seq = e->seq;
    r->peak_ns = e->time_ns;
  }
}

static void buffer_drop(gs_replay *r, const gs_trace_event *e, buffer *b) {
  if (b && --b->refs == 0) {
    memory_add(r, e, -(gint64)b->nbytes);
    g_free(b);
  }
}

static buffer *buffer_new(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  buffer *b = g_new(buffer, 1);
  b->nbytes = nbytes;
  b->refs = 1;
  memory_add(r, e, (gint64)nbytes);
  return b;
}

static storage_entry *storage_get(gs_replay *r, guint64 id) {
  return g_hash_table_lookup(r->storages, &id);
}

static storage_entry *storage_add(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  storage_entry *old = storage_get(r, e->storage);
  if (old) { /* a reused id without a free: the old one is gone now */
    buffer_drop(r, e, old->bytes);
    old->bytes = NULL;
    g_hash_table_remove(r->storages, &e->storage);
    r->live_storages--;
  }
  storage_entry *s = g_new0(storage_entry, 1);
  s->id = e->storage;
  s->nbytes = nbytes;
  g_hash_table_insert(r->storages, &s->id, s);
  r->live_storages++;
  return s;
}

static void on_storage(gs_replay *r, const gs_trace_event *e) {
  storage_entry *s;
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
    s = storage_add(r, e, e->nbytes);
    s->bytes = buffer_new(r, e, e->nbytes);
    break;
  case GS_TRACE_STORAGE_SHARE: {
    storage_entry *src = storage_get(r, e->source);
    s = storage_add(r, e, e->nbytes);
    if (src && src->bytes) {
      s->bytes = src->bytes;
      s->bytes->refs++;
    } else { /* its source is unknown to us: count the bytes as its own */
      s->bytes = buffer_new(r, e, e->nbytes);
    }
    break;
  }
  case GS_TRACE_STORAGE_MATERIALISE:
    s = storage_get(r, e->storage);
    if (!s)
      s = storage_add(r, e, e->nbytes);
    buffer_drop(r, e, s->bytes);
    s->nbytes = e->nbytes;
    s->bytes = buffer_new(r, e, e->nbytes);
    break;
  case GS_TRACE_STORAGE_FREE:
    s = storage_get(r, e->storage);
    if (s) {
      buffer_drop(r, e, s->bytes);
      s->bytes = NULL;
      g_hash_table_remove(r->storages, &e->storage);
      r->live_storages--;
    }
    break;
  default:
    break;
  }
}

/* ---- ownership (as engine/scope/ownership.c) ------------------------------------------ */

static gs_replay_scope *scope_get(gs_replay *r, guint64 id) {
  return id ? g_hash_table_lookup(r->scopes, &id) : NULL;
}

static void group_bytes_changed(gs_replay *r, gs_replay_scope_name *g) {
  if (!g->changed) {
    g->changed = TRUE;
    g_ptr_array_add(r->changed_groups, g);
  }
}

static void unlink_from_scope(gs_replay *r, gs_replay_object *o) {
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  if (!s)
    return;
  s->alive--;
  s->bytes -= MIN(s->bytes, o->bytes);
  s->group->bytes -= MIN(s->group->bytes, o->bytes);
  if (o->bytes)
    group_bytes_changed(r, s->group);
}

static void link_into_scope(gs_replay *r, gs_replay_object *o) {
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  if (!s)
    return;
  s->alive++;
  s->bytes += o->bytes;
  s->peak_bytes = MAX(s->peak_bytes, s->bytes);
  s->group->bytes += o->bytes;
  s->group->peak_bytes = MAX(s->group->peak_bytes, s->peak_bytes);
  if (o->bytes)
    group_bytes_changed(r, s->group);
}

static void set_holder(gs_replay *r, gs_replay_object *o, guint32 holder, guint64 owner) {
  if (o->holder == holder && o->owner == owner)
    return;
  unlink_from_scope(r, o);
  o->holder = holder;
  o->owner = owner;
  link_into_scope(r, o);
}

static gs_replay_object *object_get(gs_replay *r, guint64 id) {
  return id ? g_hash_table_lookup(r->objects, &id) : NULL;
}

/* An object the engine built for itself (while ownership was suspended) and then handed to
 * user code counts, as in the engine's gs__own_adopt, as created in the scope it goes to. */
static void on_owner_change(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = object_get(r, e->object);
  if (!o)
    return;
  gboolean adopted = e->previous_holder == GS_TRACE_HELD_BY_ENGINE &&
                     o->holder == GS_TRACE_HELD_BY_ENGINE && e->holder == GS_TRACE_HELD_BY_SCOPE;
  set_holder(r, o, e->holder, e->owner);
  gs_replay_scope *s = adopted ? scope_get(r, e->owner) : NULL;
  if (s) {
    s->created++;
    s->group->created++;
    o->scope_at_create = s->name;
  }
}

/* A new object counts as created in the scope that owns it from the start. */
static void object_add(gs_replay *r, gs_replay_object *o) {
  gs_replay_object *old = object_get(r, o->id);
  gboolean replaced = old != NULL;
  if (old) { /* recorded twice (or a reused id without a dispose): replace, count once */
    unlink_from_scope(r, old);
    g_hash_table_remove(r->objects, &o->id);
  }
  g_hash_table_insert(r->objects, &o->id, o);
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  if (s && !replaced) {
    s->created++;
    s->group->created++;
    o->scope_at_create = s->name;
  }
  link_into_scope(r, o);
}

static guint64 storage_bytes(gs_replay *r, guint64 storage) {
  storage_entry *s = storage_get(r, storage);
  return s ? s->nbytes : 0;
}

static void on_tensor_create(gs_replay *r, const gs_trace_event *e,
                             const gs_trace_reader *reader) {
  gs_replay_object *o = g_new0(gs_replay_object, 1);
  o->id = e->tensor;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->storage = e->storage;
  o->bytes = e->origin == 0 ? storage_bytes(r, e->storage) : 0;
  o->op = intern_id(r, reader, e->op);
  o->holder = e->holder;
  o->owner = e->owner;
  o->dtype = e->dtype;
  o->origin = e->origin;
  o->source = e->source;
  o->requires_grad = e->requires_grad;
  o->ndim = CLAMP(e->ndim, 0, GS_MAX_DIMS);
  memcpy(o->shape, e->shape, sizeof o->shape);
  object_add(r, o);
}

static guint64 current_scope(gs_replay *r, guint32 thread) {
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(thread));
  return open && open->len ? g_array_index(open, guint64, open->len - 1) : 0;
}

/* A composite has no owner field: the engine gives it to the thread's current scope, and any
 * later change arrives as an owner_change. */
static void on_composite_create(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = g_new0(gs_replay_object, 1);
  o->id = e->object;
  o->composite = TRUE;
  o->object_kind = e->object_kind;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->op = gs_replay_intern(r, "composite");
  for (guint32 i = 0; i < e->n_parts; i++) {
    gs_replay_object *part = object_get(r, e->parts[i]);
    if (part)
      o->bytes += storage_bytes(r, part->storage);
  }
  guint64 scope = current_scope(r, e->thread);
  o->holder = scope ? GS_TRACE_HELD_BY_SCOPE : GS_TRACE_HELD_BY_CALLER;
  o->owner = scope;
  object_add(r, o);
}

static void on_dispose(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = object_get(r, e->tensor);
  if (!o)
    return;
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  if (s) {
    s->disposed++;
    s->group->disposed++;
  }
  unlink_from_scope(r, o);
  g_hash_table_remove(r->objects, &e->tensor);
}

/* A parameter takes over a tensor's handle: the same object under a new id, counted once. */
static void on_tensor_move(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = object_get(r, e->tensor);
  if (o && e->target && e->target != e->tensor) {
    g_hash_table_steal(r->objects, &e->tensor);
    gs_replay_object *existing = object_get(r, e->target);
    if (existing) { /* the new handle was recorded too: keep that record, drop this one */
      unlink_from_scope(r, o);
      g_free(o);
    } else {
      o->id = e->target;
      g_hash_table_insert(r->objects, &o->id, o);
    }
  }
  const char *name = gs_replay_tensor_name(r, e->tensor);
  if (name && !gs_replay_tensor_name(r, e->target))
    set_u64_name(r->names, e->target, name);
  /* The leaf's AccumulateGrad node follows the handle, as in engine/core/handles.c. */
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_node *n = value;
    if (n->tensor == e->tensor)
      n->tensor = e->target;
  }
}

/* ---- scopes --------------------------------------------------------------------------- */

static void on_scope_begin(gs_replay *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  gs_replay_scope *s = g_new0(gs_replay_scope, 1);
  s->id = e->scope;
  s->outer = e->outer;
  s->thread = e->thread;
  s->name = intern_id(r, reader, e->name);
  s->begin_seq = e->seq;
  s->begin_ns = e->time_ns;
  gs_replay_scope_name *g = g_hash_table_lookup(r->scope_groups, s->name);
  if (!g) {
    g = g_new0(gs_replay_scope_name, 1);
    g->name = s->name;
    g_hash_table_insert(r->scope_groups, (gpointer)s->name, g);
    g_ptr_array_add(r->scope_group_list, g);
  }
  g->instances++;
  s->group = g;
  g_ptr_array_add(r->scope_list, s);
  g_hash_table_replace(r->scopes, &s->id, s);
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(e->thread));
  if (!open) {
    open = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_insert(r->thread_scopes, GUINT_TO_POINTER(e->thread), open);
  }
  g_array_append_val(open, s->id);
}

static void on_scope_end(gs_replay *r, const gs_trace_event *e) {
  gs_replay_scope *s = scope_get(r, e->scope);
  if (!s || s->ended)
    return;
  s->ended = TRUE;
  s->end_seq = e->seq;
  s->end_ns = e->time_ns;
  s->group->total_ns += e->time_ns >= s->begin_ns ? e->time_ns - s->begin_ns : 0;
  /* A scope in the middle of the stack may end: remove it wherever it is. */
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(s->thread));
  for (guint i = open ? open->len : 0; i-- > 0;)
    if (g_array_index(open, guint64, i) == s->id) {
      g_array_remove_index(open, i);
      break;
    }
}

/* ---- graph ---------------------------------------------------------------------------- */

static void on_node_create(gs_replay *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  gs_replay_node *n = g_new0(gs_replay_node, 1);
  n->id = e->node;
  n->kind = intern_id(r, reader, e->name);
  n->tensor = e->tensor;
  n->create_seq = e->seq;
  n->n_inputs = e->n_inputs;
  n->n_saved = e->n_saved;
  n->inputs = g_memdup2(e->inputs, sizeof(guint64) * e->n_inputs);
  n->saved = g_memdup2(e->saved, sizeof(guint64) * e->n_saved);
  g_hash_table_replace(r->nodes, &n->id, n);
}

static void on_node_free_saved(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = g_hash_table_lookup(r->nodes, &e->node);
  if (n)
    n->saved_freed = TRUE;
}

/* ---- modules and optimizers ------------------------------------------------------------ */

static void on_module_create(gs_replay *r, const gs_trace_event *e,
                             const gs_trace_reader *reader) {
  gs_replay_module *m = g_new0(gs_replay_module, 1);
  m->id = e->module;
  m->type = intern_id(r, reader, e->name);
  g_hash_table_replace(r->modules, &m->id, m);
}

/* Where a parameter sits; its name is built on demand (gs_replay_tensor_name), so a module
 * that becomes a child later renames its parameters with it. */
static void on_module_parameter(gs_replay *r, const gs_trace_event *e,
                                const gs_trace_reader *reader) {
  parameter_entry *p = g_new(parameter_entry, 1);
  p->tensor = e->tensor;
  p->module = e->module;
  p->name = intern_id(r, reader, e->name);
  g_hash_table_replace(r->parameters, &p->tensor, p);
}

static void on_module_child(gs_replay *r, const gs_trace_event *e,
                            const gs_trace_reader *reader) {
  gs_replay_module *child = module_get(r, e->child);
  if (!child) { /* its creation was not in the log (a log started late): still place it */
    child = g_new0(gs_replay_module, 1);
    child->id = e->child;
    child->type = gs_replay_intern(r, "");
    g_hash_table_replace(r->modules, &child->id, child);
  }
  child->parent = e->module;
  child->name = intern_id(r, reader, e->name);
}

static void on_optimizer_create(gs_replay *r, const gs_trace_event *e,
                                const gs_trace_reader *reader) {
  gs_replay_optimizer *o = g_hash_table_lookup(r->optimizers, &e->optimizer);
  if (!o) { /* a repeated id continues the parameter list of a large optimizer */
    o = g_new0(gs_replay_optimizer, 1);
    o->id = e->optimizer;
    o->type = intern_id(r, reader, e->name);
    o->params = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_replace(r->optimizers, &o->id, o);
  }
  if (e->n_params)
    g_array_append_vals(o->params, e->params, e->n_params);
}

char *gs_replay_describe_owner(const gs_replay *r, const gs_replay_object *o) {
  char handle[32];
  guint index = (guint)(o->owner & 0x7fffffffu);
  switch (o->holder) {
  case GS_TRACE_HELD_BY_CALLER: return g_strdup("the caller");
  case GS_TRACE_HELD_BY_SCOPE: {
    gs_replay_scope *s = scope_get((gs_replay *)r, o->owner);
    return s ? g_strdup_printf("scope '%s'", s->name) : g_strdup("a scope");
  }
  case GS_TRACE_HELD_BY_MODULE: {
    const gs_replay_module *m = module_get(r, o->owner);
    return g_strdup_printf("module %s #%u", m && *m->type ? m->type : "?", index);
  }
  case GS_TRACE_HELD_BY_OPTIMIZER: {
    const gs_replay_optimizer *opt = g_hash_table_lookup(r->optimizers, &o->owner);
    return g_strdup_printf("optimizer %s #%u", opt ? opt->type : "?", index);
  }
  case GS_TRACE_HELD_BY_COMPOSITE: {
    const gs_replay_object *c = g_hash_table_lookup(r->objects, &o->owner);
    return g_strdup_printf("%s %s", c ? gs_trace_object_kind_name(c->object_kind) : "composite",
                           gs_format_handle(o->owner & ~(guint64)0x80000000u, handle,
                                            sizeof handle));
  }
  case GS_TRACE_HELD_BY_TENSOR:
    return g_strdup_printf("tensor %s", gs_format_handle(o->owner, handle, sizeof handle));
  case GS_TRACE_HELD_BY_ENGINE: return g_strdup("the engine");
  default: return g_strdup_printf("holder %u", o->holder);
  }
}

gs_replay_category gs_replay_object_category(const gs_replay *r, const gs_replay_object *o) {
  switch (o->holder) {
  case GS_TRACE_HELD_BY_MODULE: return GS_REPLAY_CATEGORY_PARAMETER;
  case GS_TRACE_HELD_BY_TENSOR: return GS_REPLAY_CATEGORY_GRADIENT;
  case GS_TRACE_HELD_BY_OPTIMIZER: return GS_REPLAY_CATEGORY_OPTIMIZER_STATE;
  case GS_TRACE_HELD_BY_COMPOSITE: {
    const gs_replay_object *c = g_hash_table_lookup(r->objects, &o->owner);
    return c && c->object_kind == GS_OBJECT_BATCH ? GS_REPLAY_CATEGORY_BATCH_DATA
                                                  : GS_REPLAY_CATEGORY_OTHER;
  }
  default:
    break;
  }
  if (o->composite && o->object_kind == GS_OBJECT_BATCH)
    return GS_REPLAY_CATEGORY_BATCH_DATA;
  return GS_REPLAY_CATEGORY_OTHER;
}

const char *gs_replay_category_name(gs_replay_category category) {
  static const char *const names[] = {"other", "parameter", "gradient", "optimizer state",
                                      "batch data"};
  return (guint)category < G_N_ELEMENTS(names) ? names[category] : "unknown";
}

void gs_replay_apply(gs_replay *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  for (guint i = 0; i < r->changed_groups->len; i++)
    ((gs_replay_scope_name *)r->changed_groups->pdata[i])->changed = FALSE;
  g_ptr_array_set_size(r->changed_groups, 0);
  r->memory_changed = FALSE;
  r->events++;
  r->last_seq = MAX(r->last_seq, e->seq);
  r->last_ns = MAX(r->last_ns, e->time_ns);

  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_SHARE:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE: on_storage(r, e); break;
  case GS_TRACE_TENSOR_CREATE: on_tensor_create(r, e, reader); break;
  case GS_TRACE_TENSOR_DISPOSE: on_dispose(r, e); break;
  case GS_TRACE_TENSOR_MOVE: on_tensor_move(r, e); break;
  case GS_TRACE_TENSOR_NAME:
    set_u64_name(r->names, e->tensor, intern_id(r, reader, e->name));
    break;
  case GS_TRACE_OWNER_CHANGE: on_owner_change(r, e); break;
  case GS_TRACE_SCOPE_BEGIN: on_scope_begin(r, e, reader); break;
  case GS_TRACE_SCOPE_END: on_scope_end(r, e); break;
  case GS_TRACE_NODE_CREATE: on_node_create(r, e, reader); break;
  case GS_TRACE_NODE_FREE_SAVED: on_node_free_saved(r, e); break;
  case GS_TRACE_NODE_RELEASE: g_hash_table_remove(r->nodes, &e->node); break;
  case GS_TRACE_MODULE_CREATE: on_module_create(r, e, reader); break;
  case GS_TRACE_MODULE_PARAMETER: on_module_parameter(r, e, reader); break;
  case GS_TRACE_MODULE_CHILD: on_module_child(r, e, reader); break;
  case GS_TRACE_OPTIMIZER_CREATE: on_optimizer_create(r, e, reader); break;
  case GS_TRACE_COMPOSITE_CREATE: on_composite_create(r, e); break;
  default: break;
  }
}

static gint by_create_seq(gconstpointer a, gconstpointer b) {
  const gs_replay_object *x = *(gs_replay_object *const *)a, *y = *(gs_replay_object *const *)b;
  return x->create_seq < y->create_seq ? -1 : x->create_seq > y->create_seq;
}

GPtrArray *gs_replay_alive_objects(const gs_replay *r) {
  GPtrArray *all = g_ptr_array_new();
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->objects);
  while (g_hash_table_iter_next(&it, NULL, &value))
    g_ptr_array_add(all, value);
  g_ptr_array_sort(all, by_create_seq);
  return all;
}
