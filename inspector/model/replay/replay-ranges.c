/* replay-ranges.c: a user's named ranges (gs_trace_range_begin/end, record_function) as
 * state: each thread's stack of open ranges, so a reader can say which ranges an event falls
 * inside. The engine refuses an end that is not the innermost range's, so an end that does
 * not match is a log that began inside a range (a flight recorder's), and is left alone. */
#include "replay-private.h"

static void ptr_array_free(gpointer p) { g_ptr_array_unref(p); }

GHashTable *replay_thread_ranges_new(void) {
  return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, ptr_array_free);
}

void replay_on_range_begin(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  GPtrArray *open = g_hash_table_lookup(r->thread_ranges, GUINT_TO_POINTER(e->thread));
  if (!open) {
    open = g_ptr_array_new();
    g_hash_table_insert(r->thread_ranges, GUINT_TO_POINTER(e->thread), open);
  }
  g_ptr_array_add(open, (gpointer)replay_intern_id(r, st, e->name));
}

void replay_on_range_end(gs_replay *r, const gs_trace_event *e, const replay_strings *st) {
  GPtrArray *open = g_hash_table_lookup(r->thread_ranges, GUINT_TO_POINTER(e->thread));
  const char *name = replay_intern_id(r, st, e->name);
  if (open && open->len && g_strcmp0(open->pdata[open->len - 1], name) == 0)
    g_ptr_array_set_size(open, open->len - 1);
}

void replay_copy_ranges(gs_replay *r, const gs_replay *src) {
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, src->thread_ranges);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    GPtrArray *from = value, *to = g_ptr_array_sized_new(from->len);
    for (guint i = 0; i < from->len; i++)
      g_ptr_array_add(to, from->pdata[i]); /* the shared pool's strings */
    g_hash_table_insert(r->thread_ranges, key, to);
  }
}

guint gs_replay_ranges_open(const gs_replay *replay, guint32 thread) {
  GPtrArray *open = g_hash_table_lookup(replay->thread_ranges, GUINT_TO_POINTER(thread));
  return open ? open->len : 0;
}

const char *gs_replay_range_name(const gs_replay *replay, guint32 thread, guint i) {
  GPtrArray *open = g_hash_table_lookup(replay->thread_ranges, GUINT_TO_POINTER(thread));
  return open && i < open->len ? open->pdata[i] : NULL;
}
