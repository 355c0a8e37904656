/* object-groups.h: live objects grouped as a reader wants them: those made at the same call
 * site by the same op, with the same shape and dtype, held by the same kind of holder, form
 * one group: "200 × randn [64, 32] f32 (1.6 MiB) at leak.c:17 in main, held by the program".
 * `gradscope stats` and the Memory page's alive list show these; each group keeps its
 * members so that a count can be opened to the objects behind it. GLib only. */
#pragma once

#include <glib.h>

#include "replay.h"
#include "site-table.h"

G_BEGIN_DECLS

typedef struct gs_object_group {
  guint32 site;        /* where the program made them (0: not recorded) */
  char *holder;        /* who holds them, translated ("held by the program") */
  guint64 bytes;       /* their elements' bytes, summed (views count what they show) */
  GPtrArray *members;  /* const gs_replay_object *, in creation order */
} gs_object_group;

/* The groups of objects (const gs_replay_object * of state), the most bytes first. sites may
 * be NULL (no call sites known). Free with g_ptr_array_unref. */
GPtrArray *gs_object_groups(const gs_replay *state, GPtrArray *objects, gs_site_table *sites);

/* One group in words, translated: "200 × randn [64, 32] f32 (1.6 MiB) at leak.c:17 in main,
 * held by the program". */
char *gs_object_group_text(const gs_object_group *g, gs_site_table *sites);
/* The part that names what they are: "randn [64, 32] f32", "packed sequence". */
char *gs_object_group_what(const gs_object_group *g);

/* What an object's elements take: numel times its dtype's size (0 for composites). */
guint64 gs_object_logical_bytes(const gs_replay_object *o);

G_END_DECLS
