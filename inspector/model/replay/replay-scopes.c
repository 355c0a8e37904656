/* replay-scopes.c: scopes and what they own, counted as engine/scope/ownership.c counts them
 * (so the numbers equal the engine's own gs_scope_info): objects created and disposed while
 * owned, objects alive and bytes owned now and at most, per scope and summed per scope name;
 * and, which the engine does not count, objects moved in from elsewhere and moved out alive,
 * so that every object a scope ever held is accounted for.
 * Also each thread's stack of open scopes, which new composites are given to. */
#include "replay-private.h"

static gs_replay_scope *scope_get(gs_replay *r, guint64 id) {
  if (!id)
    return NULL;
  gs_replay_scope **slot = &r->scope_cache[(id ^ (id >> 32)) & 15];
  if (*slot && (*slot)->id == id)
    return *slot;
  gs_replay_scope *s = g_hash_table_lookup(r->scopes, &id);
  if (s)
    *slot = s;
  return s;
}

static gs_replay_scope_name *group_of(gs_replay *r, const gs_replay_scope *s) {
  return r->scope_group_list->pdata[s->group];
}

/* An ended scope's record is final (the engine disposes what a scope owns before it records
 * its end), so nothing is counted against it. */
gs_replay_scope *replay_owning_scope(gs_replay *r, const gs_replay_object *o) {
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  return s && !s->ended ? s : NULL;
}

static void group_bytes_changed(gs_replay *r, gs_replay_scope_name *g) {
  if (!g->changed) {
    g->changed = TRUE;
    g_ptr_array_add(r->changed_groups, g);
  }
}

void replay_scope_unlink(gs_replay *r, const gs_replay_object *o) {
  gs_replay_scope *s = replay_owning_scope(r, o);
  if (!s)
    return;
  gs_replay_scope_name *g = group_of(r, s);
  s->alive--;
  s->bytes -= MIN(s->bytes, o->bytes);
  g->bytes -= MIN(g->bytes, o->bytes);
  if (o->bytes)
    group_bytes_changed(r, g);
}

void replay_scope_link(gs_replay *r, const gs_replay_object *o) {
  gs_replay_scope *s = replay_owning_scope(r, o);
  if (!s)
    return;
  gs_replay_scope_name *g = group_of(r, s);
  s->alive++;
  s->bytes += o->bytes;
  s->peak_bytes = MAX(s->peak_bytes, s->bytes);
  g->bytes += o->bytes;
  g->peak_bytes = MAX(g->peak_bytes, s->peak_bytes);
  if (o->bytes)
    group_bytes_changed(r, g);
}

void replay_scope_count_created(gs_replay *r, gs_replay_scope *s, gs_replay_object *o) {
  s->created++;
  group_of(r, s)->created++;
  o->scope_at_create = s->name;
}

void replay_scope_count_disposed(gs_replay *r, const gs_replay_object *o) {
  gs_replay_scope *s = replay_owning_scope(r, o);
  if (s) {
    s->disposed++;
    group_of(r, s)->disposed++;
  }
}

static void set_holder(gs_replay *r, gs_replay_object *o, guint32 holder, guint64 owner) {
  if (o->holder == holder && o->owner == owner)
    return;
  replay_scope_unlink(r, o);
  o->holder = holder;
  o->owner = owner;
  replay_scope_link(r, o);
}

void replay_scope_count_moved(gs_replay_scope *from, gs_replay_scope *to) {
  if (from == to)
    return;
  if (from)
    from->moved_out++;
  if (to)
    to->moved_in++;
}

/* An object the engine built for itself (while ownership was suspended) and then handed to
 * user code counts, as in the engine's gs__own_adopt, as created in the scope it goes to;
 * any other change of owner is a move out of the scope that held it and into the one that
 * takes it (either may be none). */
void replay_on_owner_change(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = replay_object_w(r, e->object);
  if (!o) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_OBJECT, e->object);
    return;
  }
  gboolean adopted = e->previous_holder == GS_TRACE_HELD_BY_ENGINE &&
                     o->holder == GS_TRACE_HELD_BY_ENGINE && e->holder == GS_TRACE_HELD_BY_SCOPE;
  gs_replay_scope *from = replay_owning_scope(r, o);
  set_holder(r, o, e->holder, e->owner);
  gs_replay_scope *to = replay_owning_scope(r, o);
  if (adopted && to)
    replay_scope_count_created(r, to, o);
  else
    replay_scope_count_moved(from, to);
}

guint64 replay_current_scope(gs_replay *r, guint32 thread) {
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(thread));
  return open && open->len ? g_array_index(open, guint64, open->len - 1) : 0;
}

/* ---- beginning and ending ------------------------------------------------------------- */

void replay_on_scope_begin(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  if (scope_get(r, e->scope))
    replay_warn(r, e->seq, GS_REPLAY_WARN_SCOPE_TWICE, e->scope);
  /* An outer scope begins before its inner ones: one that names itself, or a scope not begun,
   * is cut, and the scope stands at the top (every view then sees scopes as a forest). */
  guint64 outer = e->outer;
  if (outer && outer == e->scope) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_SCOPE_OWN_OUTER, e->scope);
    outer = 0;
  } else if (outer && !scope_get(r, outer)) {
    replay_warn(r, e->seq, GS_REPLAY_WARN_UNKNOWN_OUTER, e->scope);
    outer = 0;
  }
  gs_replay_scope *s = g_new0(gs_replay_scope, 1);
  s->id = e->scope;
  s->outer = outer;
  s->thread = e->thread;
  s->name = replay_intern_id(r, st, e->name);
  s->begin_seq = e->seq;
  s->site = e->site;
  s->begin_ns = e->time_ns;
  gs_replay_scope_name *g = g_hash_table_lookup(r->scope_groups, s->name);
  if (!g) {
    g = g_new0(gs_replay_scope_name, 1);
    g->name = s->name;
    g_hash_table_insert(r->scope_groups, (gpointer)s->name, g);
    g->index = r->scope_group_list->len;
    g_ptr_array_add(r->scope_group_list, g);
  }
  g->instances++;
  s->group = g->index; /* kept, not searched for: 200,000 names made that quadratic */
  g_ptr_array_add(r->scope_list, s);
  g_ptr_array_add(r->scope_store, s);
  g_hash_table_replace(r->scopes, &s->id, s);
  r->scope_cache[(s->id ^ (s->id >> 32)) & 15] = s;
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(e->thread));
  if (!open) {
    open = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_insert(r->thread_scopes, GUINT_TO_POINTER(e->thread), open);
  }
  g_array_append_val(open, s->id);
}

void replay_on_scope_end(gs_replay *r, const gs_trace_event *e) {
  gs_replay_scope *s = scope_get(r, e->scope);
  if (!s || s->ended) {
    replay_warn(r, e->seq, s ? GS_REPLAY_WARN_SCOPE_ENDED_TWICE : GS_REPLAY_WARN_UNKNOWN_SCOPE,
                e->scope);
    return;
  }
  s->ended = TRUE;
  s->end_seq = e->seq;
  s->end_ns = e->time_ns;
  group_of(r, s)->total_ns += e->time_ns >= s->begin_ns ? e->time_ns - s->begin_ns : 0;
  /* A scope in the middle of the stack may end: remove it wherever it is. */
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(s->thread));
  for (guint i = open ? open->len : 0; i-- > 0;)
    if (g_array_index(open, guint64, i) == s->id) {
      g_array_remove_index(open, i);
      break;
    }
}

/* ---- copies --------------------------------------------------------------------------- */

static void copy_scope(gs_replay *r, const gs_replay_scope *from) {
  gs_replay_scope *s = g_memdup2(from, sizeof *from);
  g_ptr_array_add(r->scope_list, s);
  g_ptr_array_add(r->scope_store, s);
  g_hash_table_insert(r->scopes, &s->id, s);
}

static gint by_begin_seq(gconstpointer a, gconstpointer b) {
  const gs_replay_scope *x = *(gs_replay_scope *const *)a, *y = *(gs_replay_scope *const *)b;
  return x->begin_seq < y->begin_seq ? -1 : x->begin_seq > y->begin_seq;
}

void replay_copy_scopes(gs_replay *r, const gs_replay *src, gboolean open_scopes_only) {
  for (guint i = 0; i < src->scope_group_list->len; i++) {
    const gs_replay_scope_name *from = src->scope_group_list->pdata[i];
    gs_replay_scope_name *g = g_memdup2(from, sizeof *from);
    g->changed = FALSE;
    g_ptr_array_add(r->scope_group_list, g);
    g_hash_table_insert(r->scope_groups, (gpointer)g->name, g);
  }
  if (open_scopes_only) {
    /* The open scopes are the threads' stacks: a few, however many scopes the log had. Kept
     * in begin order, as scope_list is. */
    g_autoptr(GPtrArray) open = g_ptr_array_new();
    GHashTableIter st;
    gpointer stack;
    g_hash_table_iter_init(&st, src->thread_scopes);
    while (g_hash_table_iter_next(&st, NULL, &stack))
      for (guint i = 0; i < ((GArray *)stack)->len; i++) {
        guint64 id = g_array_index((GArray *)stack, guint64, i);
        gpointer s = g_hash_table_lookup(src->scopes, &id);
        if (s)
          g_ptr_array_add(open, s);
      }
    g_ptr_array_sort(open, by_begin_seq);
    for (guint i = 0; i < open->len; i++)
      copy_scope(r, open->pdata[i]);
  } else {
    for (guint i = 0; i < src->scope_list->len; i++)
      copy_scope(r, src->scope_list->pdata[i]);
  }
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, src->thread_scopes);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    GArray *from = value, *to = g_array_sized_new(FALSE, FALSE, sizeof(guint64), from->len);
    g_array_append_vals(to, from->data, from->len);
    g_hash_table_insert(r->thread_scopes, key, to);
  }
}
