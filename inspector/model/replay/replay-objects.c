/* replay-objects.c: the objects scopes own, tensors and composites (PackedSequence...): their
 * creation, disposal and moves into parameters' handles, the names user code gives tensors,
 * the tensors datasets read, and the records' recycling (a training step creates and
 * disposes dozens, and the allocator was a tenth of indexing a log). How a scope counts them
 * is replay-scopes.c's. */
#include "replay-private.h"

#include <gradscope/scope.h>
#include <string.h>

/* Puts a record in the state's own table, under an id not alive (object_remove first). */
static void object_put(gs_replay *r, gs_replay_object *o) {
  gs_replay_mark_object(r, o->id);
  gs_id_table_replace(r->object_table, o->id, o);
  r->n_objects++;
}

#define MAX_SPARE_OBJECTS 1024

gs_replay_object *replay_object_new(gs_replay *r) {
  if (!r->n_spare_objects)
    return g_new0(gs_replay_object, 1);
  gs_replay_object *o = r->spare_objects[--r->n_spare_objects];
  memset(o, 0, sizeof *o);
  return o;
}

static void object_recycle(gs_replay *r, gs_replay_object *o) {
  if (!r->spare_objects)
    r->spare_objects = g_new(gs_replay_object *, MAX_SPARE_OBJECTS);
  if (r->n_spare_objects < MAX_SPARE_OBJECTS)
    r->spare_objects[r->n_spare_objects++] = o;
  else
    g_free(o);
}

/* Takes the object out of the state (its own record recycled unless keep; a base's is marked
 * gone, never freed). */
static void object_remove(gs_replay *r, guint64 id, gboolean keep) {
  gs_replay_mark_object(r, id);
  gpointer own = gs_id_table_lookup(r->object_table, id);
  if (own == GS_REPLAY_GONE)
    return;
  gboolean in_base = r->base && gs_replay_base_object(r->base, id);
  if (!own && !in_base)
    return;
  if (in_base)
    gs_id_table_replace(r->object_table, id, GS_REPLAY_GONE); /* (frees nothing) */
  else
    gs_id_table_remove(r->object_table, id);
  r->n_objects--;
  if (own && !keep)
    object_recycle(r, own);
}

/* A new object counts as created in the scope that owns it from the start. */
static void object_add(gs_replay *r, gs_replay_object *o) {
  /* Not gs_replay_object_get, which says nothing of id 0: a log may give an object id 0 twice,
   * and a second insert under a key already there frees the record the key lives in. */
  gs_replay_object *old = gs_replay_object_find(r, o->id);
  gs_replay_scope *old_scope = old ? replay_owning_scope(r, old) : NULL;
  gboolean replaced = old != NULL;
  if (old) { /* recorded twice (or a reused id without a dispose): replace, count once */
    replay_warn(r, o->create_seq, GS_REPLAY_WARN_OBJECT_TWICE, o->id);
    replay_scope_unlink(r, old);
    object_remove(r, o->id, FALSE);
  }
  object_put(r, o);
  gs_replay_scope *s = replay_owning_scope(r, o);
  if (s && !replaced)
    replay_scope_count_created(r, s, o);
  else if (replaced) /* the same object, perhaps with another owner: a move, as the scopes see it */
    replay_scope_count_moved(old_scope, s);
  replay_scope_link(r, o);
}

void replay_on_tensor_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  gs_replay_object *o = replay_object_new(r);
  o->id = e->tensor;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->site = e->site;
  o->storage = e->storage;
  replay_storage *s = replay_storage_get(r, e->storage);
  o->bytes = e->origin == 0 && s ? s->nbytes : 0;
  o->op = replay_intern_id(r, st, e->op);
  o->holder = e->holder;
  o->owner = e->owner;
  o->dtype = e->dtype;
  o->origin = e->origin;
  o->source = e->source;
  o->requires_grad = e->requires_grad;
  o->ndim = CLAMP(e->ndim, 0, GS_MAX_DIMS);
  memcpy(o->shape, e->shape, sizeof o->shape);
  memcpy(o->strides, e->strides, sizeof o->strides);
  o->offset = e->offset;
  o->before_recording = r->in_snapshot;
  object_add(r, o);
  replay_memo_object(r, o->id, o);
  replay_memo_storage(r, e->storage, s);
}

/* Each tensor a dataset reads counts it (a tensor may be in several datasets). */
static void dataset_reads(gs_replay *r, const GArray *parts, int delta) {
  for (guint i = 0; i < parts->len; i++) {
    guint64 id = g_array_index(parts, guint64, i);
    gs_replay_object *part = replay_object_w(r, id);
    if (!part || (delta < 0 && part->dataset_refs == 0))
      continue;
    part->dataset_refs += delta;
    replay_recounted(r->recounted_objects, id);
  }
}

/* A composite has no owner field: the engine gives it to the thread's current scope, and any
 * later change arrives as an owner_change. A dataset is the exception: it reads its parts
 * without holding them, no scope ever owns it, and the caller releases it. */
void replay_on_composite_create(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = replay_object_new(r);
  o->id = e->object;
  o->composite = TRUE;
  o->object_kind = e->object_kind;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->site = e->site;
  o->before_recording = r->in_snapshot;
  o->op = gs_replay_intern(r, "composite");
  for (guint32 i = 0; i < e->n_parts; i++) {
    gs_replay_object *part = gs_replay_object_get(r, e->parts[i]);
    if (part)
      o->bytes += replay_storage_nbytes(r, part->storage);
  }
  if (e->object_kind == GS_OBJECT_DATASET) {
    o->holder = GS_TRACE_HELD_BY_CALLER;
    object_add(r, o);
    GArray *parts = g_array_sized_new(FALSE, FALSE, sizeof(guint64), e->n_parts);
    for (guint32 i = 0; i < e->n_parts; i++)
      if (e->parts[i])
        g_array_append_val(parts, e->parts[i]);
    guint64 *key = g_memdup2(&o->id, sizeof o->id);
    GArray *old = g_hash_table_lookup(r->datasets, key);
    if (old) /* recorded twice: count its tensors once */
      dataset_reads(r, old, -1);
    g_hash_table_replace(r->datasets, key, parts);
    dataset_reads(r, parts, +1);
    return;
  }
  guint64 scope = replay_current_scope(r, e->thread);
  o->holder = scope ? GS_TRACE_HELD_BY_SCOPE : GS_TRACE_HELD_BY_CALLER;
  o->owner = scope;
  object_add(r, o);
}

const GArray *gs_replay_dataset_parts(const gs_replay *r, guint64 dataset) {
  return g_hash_table_lookup(r->datasets, &dataset);
}

void replay_on_tensor_dispose(gs_replay *r, const gs_trace_event *e) {
  /* Read only: a base's record that goes is not copied first (a seek through the disposal
   * of 200,000 tensors copied each). */
  gs_replay_mark_object(r, e->tensor);
  const gs_replay_object *o = gs_replay_object_get(r, e->tensor);
  if (!o) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_OBJECT, e->tensor);
    return;
  }
  if (o->composite && o->object_kind == GS_OBJECT_DATASET) {
    const GArray *parts = gs_replay_dataset_parts(r, o->id);
    if (parts)
      dataset_reads(r, parts, -1);
    g_hash_table_remove(r->datasets, &o->id);
  }
  replay_nodes_on_dispose(r, o);
  replay_scope_count_disposed(r, o);
  replay_scope_unlink(r, o);
  object_remove(r, e->tensor, FALSE);
  replay_memo_object(r, e->tensor, NULL);
}

/* A tensor's data replaced (a module's double()): the same object, now over another storage
 * with another dtype and layout. The bytes its scope counted stay as they were counted when it
 * was made, as the engine's statistics keep them. */
void replay_on_tensor_set_data(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = replay_object_w(r, e->tensor);
  if (!o || o->composite) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_OBJECT, e->tensor);
    return;
  }
  o->storage = e->storage;
  o->dtype = e->dtype;
  o->ndim = CLAMP(e->ndim, 0, GS_MAX_DIMS);
  memcpy(o->shape, e->shape, sizeof o->shape);
  memcpy(o->strides, e->strides, sizeof o->strides);
  o->offset = e->offset;
}

/* A parameter takes over a tensor's handle: the same object under a new id, counted once. */
void replay_on_tensor_move(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = replay_object_w(r, e->tensor);
  if (!o)
    replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_OBJECT, e->tensor);
  if (o && e->target && e->target != e->tensor) {
    object_remove(r, e->tensor, TRUE);
    gs_replay_object *existing = replay_object_w(r, e->target);
    if (existing) { /* the new handle was recorded too: keep that record, drop this one */
      replay_scope_count_moved(replay_owning_scope(r, o), NULL); /* it left under another id */
      replay_scope_unlink(r, o);
      object_recycle(r, o);
    } else {
      o->id = e->target;
      o->parameter = TRUE;
      object_put(r, o);
    }
  }
  const char *name = gs_replay_tensor_name(r, e->tensor);
  if (name && !gs_replay_tensor_name(r, e->target))
    replay_set_u64_name(r->names, e->target, name);
  replay_nodes_follow_move(r, e->tensor, e->target);
  /* A dataset that reads the tensor reads its new handle (datasets are few). */
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->datasets);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    GArray *parts = value;
    for (guint i = 0; i < parts->len; i++)
      if (g_array_index(parts, guint64, i) == e->tensor)
        g_array_index(parts, guint64, i) = e->target;
  }
}

void replay_on_tensor_name(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  replay_set_u64_name(r->names, e->tensor, replay_intern_id(r, st, e->name));
}

const char *gs_replay_tensor_name(const gs_replay *r, guint64 tensor) {
  const char *name = g_hash_table_lookup(r->names, &tensor);
  return name ? name : replay_parameter_path(r, tensor);
}

static gint by_create_seq(gconstpointer a, gconstpointer b) {
  const gs_replay_object *x = *(gs_replay_object *const *)a, *y = *(gs_replay_object *const *)b;
  return x->create_seq < y->create_seq ? -1 : x->create_seq > y->create_seq;
}

GPtrArray *gs_replay_alive_objects(const gs_replay *r) {
  GPtrArray *all = g_ptr_array_sized_new(r->n_objects);
  gs_replay_iter it = {0};
  for (gs_replay_object *o; gs_replay_objects_next(r, &it, &o);)
    g_ptr_array_add(all, o);
  g_ptr_array_sort(all, by_create_seq);
  return all;
}

GArray *gs_replay_tensors_on_storage(const gs_replay *r, guint64 storage, guint64 except) {
  g_autoptr(GPtrArray) on = g_ptr_array_new();
  gs_replay_iter it = {0};
  gs_replay_object *o;
  while (storage && gs_replay_objects_next(r, &it, &o))
    if (!o->composite && o->storage == storage && o->id != except)
      g_ptr_array_add(on, o);
  g_ptr_array_sort(on, by_create_seq);
  GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(guint64), on->len);
  for (guint i = 0; i < on->len; i++)
    g_array_append_val(ids, ((const gs_replay_object *)on->pdata[i])->id);
  return ids;
}

void replay_copy_objects(gs_replay *r, const gs_replay *src, gboolean objects) {
  GHashTableIter it;
  gpointer key, value;
  if (objects) {
    gs_id_table_reserve(r->object_table, src->n_objects);
    gs_replay_iter at = {0};
    for (gs_replay_object *o; gs_replay_objects_next(src, &at, &o);)
      object_put(r, g_memdup2(o, sizeof(gs_replay_object)));
  }
  g_hash_table_iter_init(&it, src->names);
  while (g_hash_table_iter_next(&it, &key, &value))
    replay_set_u64_name(r->names, *(guint64 *)key, value);
  g_hash_table_iter_init(&it, src->datasets);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const GArray *parts = value;
    GArray *copy = g_array_sized_new(FALSE, FALSE, sizeof(guint64), parts->len);
    g_array_append_vals(copy, parts->data, parts->len);
    g_hash_table_insert(r->datasets, g_memdup2(key, sizeof(guint64)), copy);
  }
}
