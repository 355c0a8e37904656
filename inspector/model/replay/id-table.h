/* id-table.h: a map from 64-bit ids (handles, storage and node ids) to records, for the
 * replay's hottest tables. Open addressing with linear probing and backward-shift deletion:
 * no tombstones (a GHashTable that sees millions of inserts and removals of a few hundred
 * live keys probes long runs of them), no hash or equality call through a pointer, and the
 * key beside its value so a lookup touches one cache line. Values are never NULL.
 * Ids come from the log, which anyone can write: they are hashed with a key drawn at random
 * once per process (gs_id_key), so no log can choose ids that pile into one probe run. */
#pragma once

#include <glib.h>

typedef struct gs_id_slot {
  guint64 id;
  gpointer value; /* NULL: empty */
} gs_id_slot;

typedef struct gs_id_table {
  gs_id_slot *slots;
  guint mask;  /* capacity - 1 (a power of two) */
  guint shift; /* 64 - log2(capacity) */
  guint len;
  GDestroyNotify free_value;
} gs_id_table;

gs_id_table *gs_id_table_new(GDestroyNotify free_value);
/* Frees the table and (with free_value) its values. */
void gs_id_table_free(gs_id_table *t);

/* The process's random hash key (never 0 after the first table or gs_id_hash call). */
extern guint64 gs_id_key_value;
guint64 gs_id_key_init(void);
static inline guint64 gs_id_key(void) {
  guint64 k = gs_id_key_value;
  return G_LIKELY(k) ? k : gs_id_key_init();
}

/* A keyed mix of all 64 bits of id (murmur3's finaliser after adding the key): ids that differ
 * anywhere spread over the whole word, and where they land depends on the unknown key. */
static inline guint64 gs_id_mix(guint64 id) {
  guint64 x = id + gs_id_key();
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static inline guint gs_id_table_home(const gs_id_table *t, guint64 id) {
  return (guint)(gs_id_mix(id) >> t->shift);
}

static inline gpointer gs_id_table_lookup(const gs_id_table *t, guint64 id) {
  for (guint i = gs_id_table_home(t, id);; i = (i + 1) & t->mask) {
    const gs_id_slot *s = &t->slots[i];
    if (!s->value || s->id == id)
      return s->value;
  }
}

/* Sets id's value (value not NULL); a value it replaces is freed. */
void gs_id_table_replace(gs_id_table *t, guint64 id, gpointer value);
/* Makes room for n entries without growing. A copy reserves before it inserts: a table's
 * entries come out in slot order, which is hash order, and inserted so into a table a fraction
 * of the size they pile up into long probe runs (a seek that copied a keyframe of 200,000
 * storages and replayed 400,000 events took 1 s of CPU, 0.2 s with the room reserved). */
void gs_id_table_reserve(gs_id_table *t, guint n);
/* Takes id out, freeing its value; FALSE if it was not there. */
gboolean gs_id_table_remove(gs_id_table *t, guint64 id);
/* Takes id out without freeing its value: the value, or NULL if it was not there. */
gpointer gs_id_table_steal(gs_id_table *t, guint64 id);
static inline guint gs_id_table_size(const gs_id_table *t) { return t->len; }

/* Iterates: for (guint i = 0; gs_id_table_next(t, &i, &value);) ... (no changes meanwhile). */
static inline gboolean gs_id_table_next(const gs_id_table *t, guint *at, gpointer *value) {
  for (; *at <= t->mask; (*at)++)
    if (t->slots[*at].value) {
      *value = t->slots[(*at)++].value;
      return TRUE;
    }
  return FALSE;
}
