/* id-table.c: the replay's open-addressing id map (see id-table.h). */
#include "id-table.h"

/* The smallest table has 16 slots; tables are kept at most half full (grow() in
 * gs_id_table_replace), so probe runs stay short. */
#define ID_TABLE_MIN_BITS 4

guint64 gs_id_key_value;

guint64 gs_id_key_init(void) {
  static gsize once;
  if (g_once_init_enter(&once)) {
    guint64 k = 0;
    while (!k) /* 0 means "not drawn yet" */
      k = (guint64)g_random_int() << 32 | g_random_int();
    gs_id_key_value = k; /* published by g_once_init_leave's barrier */
    g_once_init_leave(&once, 1);
  }
  return gs_id_key_value;
}

static void alloc_slots(gs_id_table *t, guint bits) {
  t->slots = g_new0(gs_id_slot, (gsize)1 << bits);
  t->mask = (1u << bits) - 1;
  t->shift = 64 - bits;
}

gs_id_table *gs_id_table_new(GDestroyNotify free_value) {
  gs_id_table *t = g_new0(gs_id_table, 1);
  t->free_value = free_value;
  alloc_slots(t, ID_TABLE_MIN_BITS);
  return t;
}

void gs_id_table_free(gs_id_table *t) {
  if (!t)
    return;
  if (t->free_value)
    for (guint i = 0; i <= t->mask; i++)
      if (t->slots[i].value)
        t->free_value(t->slots[i].value);
  g_free(t->slots);
  g_free(t);
}

static void put(gs_id_table *t, guint64 id, gpointer value) {
  guint i = gs_id_table_home(t, id);
  while (t->slots[i].value)
    i = (i + 1) & t->mask;
  t->slots[i].id = id;
  t->slots[i].value = value;
}

static void grow(gs_id_table *t) {
  gs_id_slot *old = t->slots;
  guint old_cap = t->mask + 1, bits = 64 - t->shift + 1;
  alloc_slots(t, bits);
  for (guint i = 0; i < old_cap; i++)
    if (old[i].value)
      put(t, old[i].id, old[i].value);
  g_free(old);
}

void gs_id_table_reserve(gs_id_table *t, guint n) {
  while ((guint64)n * 2 > (guint64)t->mask + 1)
    grow(t);
}

void gs_id_table_replace(gs_id_table *t, guint64 id, gpointer value) {
  g_return_if_fail(value != NULL);
  guint i = gs_id_table_home(t, id);
  for (; t->slots[i].value; i = (i + 1) & t->mask)
    if (t->slots[i].id == id) {
      gpointer old = t->slots[i].value;
      t->slots[i].value = value;
      if (t->free_value && old != value)
        t->free_value(old);
      return;
    }
  t->slots[i].id = id;
  t->slots[i].value = value;
  if (++t->len * 2 > t->mask + 1)
    grow(t);
}

gpointer gs_id_table_steal(gs_id_table *t, guint64 id) {
  guint i = gs_id_table_home(t, id);
  while (t->slots[i].value && t->slots[i].id != id)
    i = (i + 1) & t->mask;
  if (!t->slots[i].value)
    return NULL;
  gpointer value = t->slots[i].value;
  /* Backward shift: pull later entries of the run into the hole unless that would move one
   * before its home slot, so every probe run stays unbroken without tombstones. */
  for (guint j = (i + 1) & t->mask; t->slots[j].value; j = (j + 1) & t->mask) {
    guint home = gs_id_table_home(t, t->slots[j].id);
    if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
      t->slots[i] = t->slots[j];
      i = j;
    }
  }
  t->slots[i].value = NULL;
  t->len--;
  return value;
}

gboolean gs_id_table_remove(gs_id_table *t, guint64 id) {
  gpointer value = gs_id_table_steal(t, id);
  if (value && t->free_value)
    t->free_value(value);
  return value != NULL;
}
