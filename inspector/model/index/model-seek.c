/* model-seek.c: the state at any event: keyframes of the head state taken as the log is
 * indexed, and a cursor rebuilt from the nearest one by applying the events after it.
 *
 * A keyframe holds the state without ended scopes (those records are final, so the cursor
 * borrows them from the head state); what it still holds (alive objects, storages, nodes,
 * open scopes, names) is small next to the events between keyframes, which is what keeps
 * keyframes to a few bytes per event.
 *
 * A huge state (200,000 tensors alive) is not: a copy of it is tens of megabytes. Its alive
 * objects and storages are then kept as records shared between keyframes (replay-records.h),
 * so a keyframe costs what changed since the one before, and taking one compares only the
 * records the head marked as changed since (gs_replay_track_changes). The budget: all
 * keyframes cost at most KEYFRAME_BYTES_PER_EVENT per event plus KEYFRAME_PEAK_COPIES copies
 * of the largest set of records ever kept. A seek to such a keyframe copies none of them:
 * its cursor reads the keyframe's records as its base (gs_replay_set_base), and copies into
 * its own tables only those that the events it applies change. */
#include "model-private.h"

#include <string.h>

/* ... unless the state is big: then a keyframe waits until it costs at most this many bytes
 * per event it covers. */
#define KEYFRAME_BYTES_PER_EVENT 2
/* ... and a keyframe of shared records waits this many events per record it compares, so
 * taking them adds a bounded share to indexing (a compare is cheaper than an event). */
#define KEYFRAME_EVENTS_PER_RECORD 1
/* Keyframes of shared records are at least this many events apart (a seek replays at most
 * about this many: 16-25 ms), and together may cost up to this many copies of the largest
 * set of records kept (beyond KEYFRAME_BYTES_PER_EVENT): while 200,000 tensors are made or
 * disposed every keyframe's buckets change, and with one copy the budget left 800,000 events
 * without a keyframe after they were made. */
#define KEYFRAME_SHARED_EVENTS 65536
#define KEYFRAME_PEAK_COPIES 2
/* A state too big for a plain copy soon is weighed again at least this often (below). */
#define KEYFRAME_REWEIGH_EVENTS 16384

/* Roughly what a copy of r costs (records, hash tables, arrays). */
static guint64 state_bytes(const gs_replay *r) {
  guint64 open = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->thread_scopes);
  while (g_hash_table_iter_next(&it, NULL, &value))
    open += ((GArray *)value)->len;
  guint64 optimizer_params = 0;
  g_hash_table_iter_init(&it, r->optimizers);
  while (g_hash_table_iter_next(&it, NULL, &value))
    optimizer_params += ((const gs_replay_optimizer *)value)->params->len;
  return gs_replay_n_objects(r) * (sizeof(gs_replay_object) + 48) + r->live_storages * 96 +
         g_hash_table_size(r->nodes) * 160 + g_hash_table_size(r->names) * 56 +
         g_hash_table_size(r->modules) * (sizeof(gs_replay_module) + 48) +
         g_hash_table_size(r->parameters) * 72 +
         g_hash_table_size(r->optimizers) * (sizeof(gs_replay_optimizer) + 96) +
         optimizer_params * sizeof(guint64) + open * 200 +
         r->scope_group_list->len * (sizeof(gs_replay_scope_name) + 48) + 512;
}

/* Of state_bytes, the alive objects and storages. */
static guint64 records_bytes(const gs_replay *r) {
  return gs_replay_n_objects(r) * (sizeof(gs_replay_object) + 48) + r->live_storages * 96;
}

/* Keeps the head's records shared with the last keyframe's into k, unless the budget says no
 * (then the next try waits for the events that pay for them). FALSE if k is not kept. */
static gboolean take_shared(gs_trace_model *m, const model_keyframe *last, model_keyframe *k) {
  guint64 bytes = 0;
  /* The head tracks its changes since last only if last kept records. */
  k->records = gs_replay_records_take(m->head, last ? last->records : NULL, &bytes);
  if (!k->records)
    return TRUE; /* a state records cannot keep: copied whole */
  m->keyframe_peak_records = MAX(m->keyframe_peak_records, gs_replay_records_cost(m->head));
  bytes += state_bytes(m->head) - records_bytes(m->head);
  guint64 allowed =
      k->applied * KEYFRAME_BYTES_PER_EVENT + KEYFRAME_PEAK_COPIES * m->keyframe_peak_records;
  if (!m->keyframe_fixed && m->keyframe_bytes + bytes > allowed) {
    gs_replay_records_free(k->records);
    m->keyframe_check_at = k->applied + (m->keyframe_bytes + bytes - allowed) /
                                            KEYFRAME_BYTES_PER_EVENT;
    return FALSE;
  }
  k->state = gs_replay_copy_without_records(m->head, TRUE);
  k->bytes = bytes;
  return TRUE;
}

void model_keyframes_after(gs_trace_model *m, guint64 applied) {
  const model_keyframe *last = NULL;
  gboolean share = gs_replay_records_count(m->head) >= m->keyframe_share_min;
  if (m->keyframes->len) {
    last = &g_array_index(m->keyframes, model_keyframe, m->keyframes->len - 1);
    guint64 since = applied - last->applied;
    if (since < m->keyframe_events || applied < m->keyframe_check_at)
      return;
    if (!m->keyframe_fixed) {
      /* Weighing the state walks every thread's open scopes: done once per event it would be
       * quadratic (100,000 threads), so the next weighing waits for the events it asks for.
       * Taking shared records compares the records that changed since the last keyframe when
       * the head tracked them (it did if that one kept records), else every alive one. */
      guint64 bytes = state_bytes(m->head);
      guint64 compared = m->head->changed_objects && last->records
                             ? gs_id_table_size(m->head->changed_objects) +
                                   gs_id_table_size(m->head->changed_storages)
                             : gs_replay_records_count(m->head);
      guint64 wait = share ? MAX((bytes - records_bytes(m->head)) / KEYFRAME_BYTES_PER_EVENT,
                                 compared * KEYFRAME_EVENTS_PER_RECORD)
                           : bytes / KEYFRAME_BYTES_PER_EVENT;
      /* Shared records need not be denser than a seek's replay needs: their directories
       * alone cost 32 KiB a keyframe. */
      if (share && last->records)
        wait = MAX(wait, KEYFRAME_SHARED_EVENTS);
      if (since < wait) {
        /* Weighed again sooner if the state may grow into shared records meanwhile: a state
         * weighed just below keyframe_share_min asked to wait for its whole copy's bytes
         * (a million events for 8,000 tensors), long after its records could be shared. */
        m->keyframe_check_at = last->applied + wait;
        if (!share)
          m->keyframe_check_at = MIN(m->keyframe_check_at, applied + KEYFRAME_REWEIGH_EVENTS);
        return;
      }
    }
  }
  model_keyframe k = {.applied = applied, .n_scopes = m->head->scope_list->len};
  if (share && !take_shared(m, last, &k))
    return;
  if (!k.state) {
    k.state = gs_replay_copy(m->head, TRUE);
    k.bytes = state_bytes(m->head);
  }
  m->keyframe_bytes += k.bytes;
  g_array_append_val(m->keyframes, k);
  /* The next keyframe compares only what changes from now on (gs_replay_records_take). */
  if (k.records)
    gs_replay_track_changes(m->head, TRUE);
  else if (m->head->changed_objects)
    gs_replay_track_changes(m->head, FALSE);
}

void gs_trace_model_set_keyframe_interval(gs_trace_model *m, guint events) {
  g_return_if_fail(m->kinds->len == 0);
  m->keyframe_events = MAX(events, 1);
  m->keyframe_fixed = TRUE;
  /* Tests fix the interval: their small states then take the shared records' path too. */
  m->keyframe_share_min = 0;
}

void model_keyframes_clear(gs_trace_model *m) {
  for (guint i = 0; i < m->keyframes->len; i++) {
    gs_replay_free(g_array_index(m->keyframes, model_keyframe, i).state);
    gs_replay_records_free(g_array_index(m->keyframes, model_keyframe, i).records);
  }
  g_array_set_size(m->keyframes, 0);
  /* The cursor may read a keyframe's records, which it holds a reference to. */
  g_clear_pointer(&m->cursor, gs_replay_free);
  m->cursor_applied = 0;
  gs_replay_track_changes(m->head, FALSE);
  m->keyframe_check_at = 0;
  m->keyframe_bytes = 0;
}

/* The last keyframe at or before applied. */
static const model_keyframe *keyframe_before(const gs_trace_model *m, guint64 applied) {
  guint lo = 0, hi = m->keyframes->len;
  while (hi - lo > 1) {
    guint mid = (lo + hi) / 2;
    if (g_array_index(m->keyframes, model_keyframe, mid).applied <= applied)
      lo = mid;
    else
      hi = mid;
  }
  return &g_array_index(m->keyframes, model_keyframe, lo);
}

/* The cursor becomes a copy of k, its scope_list the head's first n_scopes records (the
 * scopes begun by then, in begin order) with the keyframe's own copies of the open ones put
 * in their places. Its scopes table keeps only its own records: filling it with every ended
 * scope cost 88 K inserts per seek on a 10 M event log. Its alive objects and storages are
 * k's kept records, read in place: copying them cost up to 400 ms for 200,000 tensors.
 * The list itself is the last cursor's, and only what differs from the head's is written: at
 * 100 M events it is 1.3 M pointers, and a fresh copy each seek spent 60 ms faulting in and
 * zeroing 10 MB, then copying it. */
static void restore(gs_trace_model *m, const model_keyframe *k) {
  GPtrArray *list = NULL;
  guint same = 0; /* list's first entries that are the head's */
  if (m->cursor) {
    /* The cursor only appended to its list after the head's entries and its own copies. */
    list = m->cursor->scope_list;
    m->cursor->scope_list = g_ptr_array_new(); /* the list owns no records: nothing to free */
    same = m->cursor_scopes_head;
    for (guint i = 0; i < m->cursor_scopes_own->len; i++) {
      guint pos = g_array_index(m->cursor_scopes_own, guint, i);
      list->pdata[pos] = m->head->scope_list->pdata[pos];
    }
  }
  g_array_set_size(m->cursor_scopes_own, 0);
  g_clear_pointer(&m->cursor, gs_replay_free);
  gs_replay *r;
  if (k->records) {
    r = gs_replay_copy_without_records(k->state, FALSE);
    gs_replay_set_base(r, k->records);
  } else {
    r = gs_replay_copy(k->state, FALSE);
  }
  if (!list)
    list = g_ptr_array_sized_new(k->n_scopes);
  g_ptr_array_set_size(list, k->n_scopes); /* zeroes only what it adds */
  if (k->n_scopes > same)
    memcpy(list->pdata + same, m->head->scope_list->pdata + same,
           sizeof(gpointer) * (k->n_scopes - same));
  m->cursor_scopes_head = k->n_scopes;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->scopes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_scope *own = value;
    guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(m->scope_pos, &own->id));
    if (pos && pos <= k->n_scopes) {
      list->pdata[pos - 1] = value;
      guint at = pos - 1;
      g_array_append_val(m->cursor_scopes_own, at);
    }
  }
  g_ptr_array_free(r->scope_list, TRUE);
  r->scope_list = list;
  m->cursor = r;
  m->cursor_applied = k->applied;
}

const gs_replay *gs_trace_model_seek(gs_trace_model *m, guint64 index) {
  guint64 n = m->kinds->len;
  if (n == 0)
    return NULL;
  guint64 target = MIN(index, n - 1) + 1; /* events applied */
  /* The last event's state is the head, which feeding keeps current: a log opened at its end
   * (the scrubber's sentence, the graph) must not replay up to a keyframe interval, which a
   * big state stretches to hundreds of thousands of events (1.4 s for 200,000 scopes). The
   * cursor stays where it was for the next seek. */
  if (target == n && m->n_pending == 0)
    return m->head;
  const model_keyframe *k = keyframe_before(m, target);
  if (!m->cursor || m->cursor_applied > target || m->cursor_applied < k->applied)
    restore(m, k);
  while (m->cursor_applied < target) {
    gs_trace_event e;
    if (!model_decode(m, &m->seek_decoder, m->cursor_applied, &e))
      break; /* the file changed under us: the state stops at the last event still readable */
    gs_replay_apply_with(m->cursor, &e, model_string_fn, m);
    m->cursor_applied++;
  }
  return m->cursor;
}
